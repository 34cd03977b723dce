"""Machines and engines named the way people write them: an unknown card is said to be unknown (never silently
dropped), NVIDIA's laptop-only MX parts, a Core Ultra without its tier digit, and Intel's IPEX-LLM."""

from __future__ import annotations

import pytest

from advisor import intake, service
from knowledge import catalog


@pytest.mark.parametrize("message, name", [
    ("my gtx 99999m runs qwen 7b", "GTX 99999M"),
    ("rtx 59090 with llama 3 8b, slow?", "RTX 59090"),
    ("I have an RX 79000 XTX and qwen 14b", "RX 79000 XTX"),
    ("rtx 999999999 with llama 8b", "RTX 999999999"),
])
def test_an_unknown_card_is_said_to_be_unknown(store, message, name):
    r = service.ask(store, message)
    assert r.verdict is None
    assert f"I don't know the hardware '{name}'" in r.reply, r.reply
    # what was understood is kept
    assert r.facts.model


@pytest.mark.parametrize("message", [
    "I have an MX450 laptop, can it run llama 3.2 3b q4?",
    "mx 450 with llama 3.2 3b",
    "laptop with a GeForce MX450, llama 3.2 3b",
])
def test_a_laptop_only_mx_part_is_its_slowest_version_said(store, message):
    r = service.ask(store, message)
    assert r.verdict is not None, r.reply
    hw = r.verdict.prediction.hardware
    assert hw["id"] == "nvidia-mx450-30-5w-8gbps" and r.verdict.prediction.bandwidth_gbs == 64.0
    # no "Laptop" glued to a part that only exists in laptops
    assert "laptop" not in (r.facts.hardware or "").lower()
    assert "2 GB" in r.reply  # the card's whole memory: a 3B at 4-bit does not fit


@pytest.mark.parametrize("message, hw_id", [
    ("core ultra 155h, qwen2.5 7b", "intel-core-ultra-7-155h"),
    ("my Intel Core Ultra 155H laptop runs llama 8b slowly", "intel-core-ultra-7-155h"),
    ("Core Ultra 7 155H with 32gb, qwen 7b", "intel-core-ultra-7-155h"),
    ("core ultra 258v and gemma 3 4b", "intel-core-ultra-200v-lunar-lake"),
])
def test_a_core_ultra_named_without_its_tier(store, message, hw_id):
    f = intake.update(None, message, store).facts
    assert f.hardware, message
    assert catalog.resolve_hardware(store, f.hardware).value.id == hw_id


def test_an_m2_ultra_with_its_memory_is_no_core_ultra(store):
    f = intake.update(None, "Mac Studio M2 Ultra 192GB with llama 70b", store).facts
    assert catalog.resolve_hardware(store, f.hardware, memory_gb=f.memory_gb).value.id.startswith("apple-m2-ultra")


@pytest.mark.parametrize("message, backend", [
    ("ipex llm on a core ultra 155h with qwen2.5 7b", "llama.cpp (SYCL)"),
    ("ipex-llm on my arc a770 16gb, llama 3 8b", "llama.cpp (SYCL)"),
    ("ollama ipex-llm on my arc a770 16gb, llama 3 8b", "ollama (SYCL)"),
])
def test_ipex_llm_is_intels_sycl_build_of_llama_cpp(store, message, backend):
    f = intake.update(None, message, store).facts
    assert f.backend == backend


def test_ipex_llm_on_a_core_ultra_runs_on_its_arc_igpu(store):
    r = service.ask(store, "ipex llm on a core ultra 155h with qwen2.5 7b")
    assert r.verdict is not None
    p = r.verdict.prediction
    assert p.backend == "llama.cpp-sycl"
    assert "llama.cpp-sycl" in r.reply
