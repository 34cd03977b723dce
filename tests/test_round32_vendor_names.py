"""A name that spells out its vendor resolves within that vendor: NVIDIA's laptop GTX/GeForce parts share model
numbers with AMD's Radeon iGPUs (860M, 840M), and an "MX 450" is never AMD's Radeon Pro 450."""

from __future__ import annotations

import pytest

from advisor import intake
from advisor.errors import NotFoundError
from knowledge import catalog
from knowledge.catalog._gpus import VariantsError, gpu_brand


@pytest.mark.parametrize("text, hw_id", [
    ("gtx 860m", "nvidia-gtx-860m"),
    ("GeForce GTX 860M", "nvidia-gtx-860m"),
    ("geforce 840m", "nvidia-840m"),
    ("radeon 860m", "amd-radeon-860m-igpu"),
    ("860m", "amd-radeon-860m-igpu"),  # bare: today's iGPU
    ("780m", "amd-radeon-780m-igpu"),
    ("RX 6800M", "amd-rx-6800m"),
    ("radeon pro 450", "amd-radeon-pro-450"),
])
def test_catalog_names_resolve_within_their_vendor(store, text, hw_id):
    assert catalog.resolve_hardware(store, text).value.id == hw_id


@pytest.mark.parametrize("text", ["MX 450", "MX450", "mx450 laptop", "GeForce MX450"])
def test_a_chip_named_without_its_power_version_is_those_versions(store, text):
    # The catalog has the MX450 only as 12 W / 30.5 W 8 Gbps / 30.5 W 10 Gbps boards: the bare name is a question
    # about which, with the slowest (64 GB/s) as the default, never AMD's Radeon Pro 450
    with pytest.raises(VariantsError) as e:
        catalog.resolve_hardware(store, text)
    assert e.value.candidates and all("MX450" in c for c in e.value.candidates)
    assert e.value.default.value.id == "nvidia-mx450-30-5w-8gbps" and e.value.default.value.bandwidth_gbs == 64.0


def test_a_power_version_said_picks_that_board(store):
    assert catalog.resolve_hardware(store, "MX450 12W").value.id == "nvidia-mx450-12w"


def test_the_closest_names_of_an_unknown_card_keep_its_vendor(store):
    with pytest.raises(NotFoundError) as e:
        catalog.resolve_hardware(store, "GTX 99999M")
    assert e.value.candidates and all(c.startswith("NVIDIA") for c in e.value.candidates)


@pytest.mark.parametrize("text, vendor", [
    ("geforce 840m", "NVIDIA"), ("mx 450", "NVIDIA"), ("gtx 860m", "NVIDIA"), ("radeon 780m", "AMD"),
    ("intel arc a770", "Intel"), ("780m", None), ("nvidia or amd 860m", None),
])
def test_gpu_brand(text, vendor):
    assert gpu_brand(text) == vendor


@pytest.mark.parametrize("message, hw_id", [
    ("my gtx 860m runs llama 3.1 8b at 5 tok/s, normal?", "nvidia-gtx-860m"),
    ("laptop with a geforce 840m, can it run qwen 7b?", "nvidia-840m"),
    ("nvidia 840m is slow with a 3b model", "nvidia-840m"),
    ("GeForce GTX 860M 2GB, llama 8b q4", "nvidia-gtx-860m"),
    ("rx 6800m laptop, is 30 tok/s ok for llama 8b?", "amd-rx-6800m"),
    ("I have a 780m and 32gb ram", "amd-radeon-780m-igpu"),
    ("Radeon 860M, llama 8b q4", "amd-radeon-860m-igpu"),
    ("the 890M igpu on my laptop", "amd-radeon-890m-igpu"),
    ("RTX 4070 laptop with llama 3.1 8b", "nvidia-rtx-4070-laptop"),
])
def test_first_message_reads_the_vendor_named_laptop_part(store, message, hw_id):
    f = intake.update(None, message, store).facts
    assert f.hardware, message
    assert catalog.resolve_hardware(store, f.hardware, memory_gb=f.memory_gb).value.id == hw_id
