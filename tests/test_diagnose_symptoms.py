"""The symptoms and machine facts diagnosis added to advisor.understand (kind of an unknown machine, counts,
layout, carve-out, old GPUs, offload, drafts, engine logs)."""

from __future__ import annotations

import pytest

from advisor.models import Scenario
from advisor.understand import understand
from advisor.understand.symptoms import guess_kind, read_machine_facts, read_symptoms


@pytest.mark.parametrize("text,kind", [
    ("MacBook Air 8GB", "apple_soc"), ("Mac mini", "apple_soc"), ("MacBook Pro M3 2023", "apple_soc"),
    ("Mac Studio 2023", "apple_soc"), ("Intel MacBook Pro", "cpu"), ("MacBook Pro 2015 (Intel)", "cpu"),
    ("iMac 2017 Intel i5", "cpu"), ("Mac mini 2018 i7 32GB", "cpu"), ("MacBook Air 2019", "cpu"),
    ("laptop with Radeon 780M", "apu"), ("mini PC, Radeon 680M iGPU", "apu"), ("Strix Halo box", "apu"),
    ("AMD Instinct MI100", "datacenter_gpu"), ("4x A100 80GB", "datacenter_gpu"), ("Tesla P40", "datacenter_gpu"),
    ("GTX 1080 Ti", "discrete_gpu"), ("some Nvidia card", "discrete_gpu"), ("dual Xeon server", "cpu"),
    ("Raspberry Pi 4", "cpu"), ("my computer", None),
])
def test_guess_kind(text, kind):
    assert guess_kind(text) == kind


@pytest.mark.parametrize("text,facts", [
    ("2x RTX 3090, PCIe Gen3 x16, vLLM TP=2", dict(count=2, interconnect="pcie3", pcie_lanes=16, layout="tensor_parallel",
                                                  tensor_parallel=2)),
    ("4x A100 SXM with NVLink", dict(count=4, interconnect="nvlink")),
    ("two 4090s, no NVLink, PCIe 4.0 x8", dict(count=2, interconnect="pcie4", pcie_lanes=8)),
    ("vllm --tensor-parallel-size 4", dict(layout="tensor_parallel", tensor_parallel=4)),
    ("Ryzen AI Max+ 395 128GB, 16GB VRAM carve-out in the BIOS", dict(vram_carveout_gb=16.0)),
    ("Framework Desktop (Strix Halo) 128GB, 96GB VRAM in BIOS", dict(vram_carveout_gb=96.0)),
    ("UMA frame buffer set to 512MB", dict(vram_carveout_gb=0.5)),
])
def test_machine_facts(text, facts):
    got = read_machine_facts(text)
    for k, v in facts.items():
        assert got.get(k) == v, (k, got)


@pytest.mark.parametrize("text,field,value", [
    ("vllm serve --enforce-eager", "eager_mode", True),
    ("engine config: enforce_eager=False, cuda graphs captured", "eager_mode", False),
    ("INFO Using XFormers backend.", "attention_backend", "xformers"),
    ("Using Torch SDPA backend", "attention_backend", "torch_sdpa"),
    ("VLLM_ATTENTION_BACKEND=FLASHINFER", "attention_backend", "flashinfer"),
    ("llama-server --top-k 0 --temp 0.8", "cpu_sampling", True),
    ("sampler params: top_k = 0, top_p = 0.95", "cpu_sampling", True),
    ("top_k = 40", "cpu_sampling", False),
    ("Tesla P40 24GB", "gpu_arch", "pascal"), ("GTX 1070", "gpu_arch", "pascal"),
    ("Tesla P100 (Pascal)", "gpu_arch", None), ("RTX 3090", "gpu_arch", None),
    ("fully offloaded to the 4090", "full_offload", True), ("-ngl 99", "full_offload", True),
    ("offloaded 33/33 layers to GPU", "full_offload", True), ("offloaded 20/33 layers to GPU", "full_offload", False),
    ("NCCL_P2P_DISABLE=1", "p2p_disabled", True),
    ("LM Studio gets over 120 t/s with the same model", "faster_elsewhere", True),
    ("it is faster in ollama", "faster_elsewhere", True),
    ("after upgrading to 0.5.7 it is slow", "regression", True), ("used to get 40 t/s", "regression", True),
    ("llama-server --model-draft qwen-0.5b.gguf", "speculative", "draft"), ("MTP n=3", "speculative", "mtp"),
    ("our family uses it for homework", "household", True), ("team of 12 developers", "household", False),
    ("The GPU sits idle at 2% while it generates", "gpu_not_used", True), ("nvidia-smi shows 0% usage", "gpu_not_used", True),
    ("the GPU shows no load in intel_gpu_top", "gpu_not_used", True), ("the GPU is at 98%", "gpu_not_used", False),
    ("45 tok/s plugged in but only 19 on battery", "power_limited", True), ("Windows power saver plan", "power_limited", True),
    ("power limit set to 100W", "power_limited", True), ("the battery of my phone", "power_limited", False),
])
def test_symptom_fields(text, field, value):
    assert getattr(read_symptoms(text), field) == value


def test_tgwui_is_noted_even_with_a_loader_named():
    assert "text-generation-webui" in read_symptoms("text-generation-webui (llama.cpp loader)").mentions


def test_unresolved_machine_keeps_kind_and_gpu_count(store):
    sit = understand(store, Scenario(hardware="4x AMD Instinct cards", model="llama 3.1 70b"))
    assert sit.hardware is None and sit.machine.kind == "datacenter_gpu" and sit.machine.count == 4
    cpu = understand(store, Scenario(hardware="Dell server, 2x Xeon Gold 6248", model="llama 3.1 8b"))
    assert cpu.machine.count == 1  # sockets are not accelerators


@pytest.mark.parametrize("text,share", [("NAME  ID  SIZE  PROCESSOR\nqwen2.5:14b  abc  11 GB  48%/52% CPU/GPU", 0.52),
                                        ("llama3.2:3b  a80c4f17acd5  3.5 GB  100% CPU  4 minutes", 0.0),
                                        ("llama3.2:3b  a80c4f17acd5  3.5 GB  100% GPU", 1.0), ("no ps output", None)])
def test_ollama_ps_split(text, share):
    assert read_symptoms(text).gpu_fraction == share


@pytest.mark.parametrize("text,kv", [("AutoRound INT4, fp8 KV cache, MTP n=3", "fp8"), ("-ctk q8_0", "q8_0"),
                                     ("OLLAMA_KV_CACHE_TYPE=q4_0", "q4_0"), ("--kv-cache-dtype fp8", "fp8"),
                                     ("f16 cache, -fa on", None)])
def test_kv_cache_type(text, kv):
    assert read_symptoms(text).kv_cache_quant == kv


def test_intel_mac_named_with_a_year_is_not_the_apple_silicon_model_of_that_year(store):
    # "MacBook Air 2020" alone is the M1 model; with "Intel Core i5" it is the Intel one (a CPU machine).
    sit = understand(store, Scenario(hardware="MacBook Air 2020 Intel Core i5, 8GB", model="llama 3.2 3b",
                                     quant="q4_k_m"))
    assert sit.hardware is None and sit.machine is not None and sit.machine.kind == "cpu"
    assert sit.symptoms.intel_mac
    m1 = understand(store, Scenario(hardware="MacBook Air M1 2020", model="llama 3.2 3b", quant="q4_k_m"))
    assert m1.hardware is not None and m1.hardware.kind == "apple_soc"
