"""Predictions through the names people write (round 29): unstated memory and Ollama's accelerator.

A machine sold in several memory sizes, named without one, is predicted on the smallest size that holds the
model (a run that was measured fitted), not on the smallest size with the model paged in from the SSD. Ollama
on a GPU that only Vulkan would drive (Intel iGPUs, AMD iGPUs off ROCm's list) runs on the CPU cores.
"""

from __future__ import annotations

import pytest

from advisor import service
from advisor.models import Hardware, Scenario
from advisor.understand.engine import engine_accel, ollama_accel
from knowledge.store import Store


@pytest.fixture(scope="module")
def store() -> Store:
    return Store(":memory:")


def _predict(store: Store, **kw):
    return service.predict_scenario(store, Scenario(**kw))


def _memory_note(p) -> str:
    return next(a for a in p.assumptions if a.startswith("Memory not stated"))


@pytest.mark.parametrize("hardware", ["AMD Ryzen AI Max+ 395", "Strix Halo", "Ryzen AI Max+ 395 mini PC"])
def test_unstated_memory_takes_the_smallest_size_that_holds_the_model(store: Store, hardware: str) -> None:
    # llama 3.1 70B at Q4_K_M needs about 45 GB: the 32 GB Strix Halo cannot hold it, the 64 GB one can.
    p = _predict(store, hardware=hardware, model="llama 3.1 70b", quant="Q4_K_M")
    assert p.memory.total_gb == 64
    assert p.memory.fits
    assert "32 GB version cannot" in _memory_note(p)
    # 256 GB/s × efficiency over ~43 GB of weights: about 4–6 tok/s, not the 0.1 tok/s of SSD paging
    assert 3.5 < p.decode_tps < 6.5


def test_unstated_memory_a_small_model_keeps_the_smallest_size(store: Store) -> None:
    p = _predict(store, hardware="AMD Ryzen AI Max+ 395", model="llama 3.1 8b", quant="Q4_K_M")
    assert p.memory.total_gb == 32
    assert "the smallest" in _memory_note(p) and "cannot" not in _memory_note(p)


def test_unstated_memory_nothing_holds_it_takes_the_largest_and_says_so(store: Store) -> None:
    p = _predict(store, hardware="Mac mini M4", model="llama 3.1 405b", quant="Q4_K_M")
    assert p.memory.total_gb == 32  # the M4 Mac mini's largest option
    assert not p.memory.fits
    assert "even that cannot hold" in _memory_note(p)


@pytest.mark.parametrize("memory", [32, 64])
def test_stated_memory_is_kept(store: Store, memory: int) -> None:
    p = _predict(store, hardware="AMD Ryzen AI Max+ 395", memory_gb=memory, model="llama 3.1 70b", quant="Q4_K_M")
    assert p.memory.total_gb == memory
    assert p.memory.fits is (memory == 64)
    assert not any(a.startswith("Memory not stated") for a in p.assumptions)


def test_the_users_count_decides_the_size(store: Store) -> None:
    # 32 users × 8k tokens of llama 3.1 8B KV cache (~1 GB each at f16) do not fit next to the weights in 32 GB.
    one = _predict(store, hardware="AMD Ryzen AI Max+ 395", model="llama 3.1 8b", quant="Q4_K_M",
                   prompt_tokens=8000, gen_tokens=300)
    many = _predict(store, hardware="AMD Ryzen AI Max+ 395", model="llama 3.1 8b", quant="Q4_K_M",
                    prompt_tokens=8000, gen_tokens=300, concurrency=32)
    assert one.memory.total_gb == 32
    assert many.memory.total_gb > 32 and many.memory.fits


def _hw(kind: str, vendor: str, family: str = "") -> Hardware:
    return Hardware(id="x", name="X", kind=kind, vendor=vendor, family=family, bandwidth_gbs=100)


@pytest.mark.parametrize("hw,api", [
    (_hw("apu", "Intel", "Intel Xe-LPG"), "cpu"),  # an Intel iGPU: Vulkan only, off by default
    (_hw("discrete_gpu", "Intel", "Intel Xe-HPG (Alchemist)"), "cpu"),  # an Arc card: the same
    (_hw("apu", "AMD", "AMD RDNA 3.5 (Krackan)"), "cpu"),  # an AMD iGPU off ROCm's list
    (_hw("apu", "AMD", "AMD Strix Halo"), "rocm"),  # gfx1151 is on ROCm's list
    (_hw("discrete_gpu", "NVIDIA", "NVIDIA Ada"), "cuda"),
    (_hw("discrete_gpu", "AMD", "AMD RDNA3"), "rocm"),
    (_hw("apple_soc", "Apple", "Apple M4"), "metal"),
])
def test_ollama_runs_where_its_backends_reach(hw: Hardware, api: str) -> None:
    assert engine_accel("ollama", hw)[1] == api
    assert engine_accel("llama.cpp", hw)[1] != "cpu"  # llama.cpp itself drives every one of these GPUs


def test_a_label_that_names_vulkan_keeps_the_gpu() -> None:
    hw = _hw("apu", "Intel", "Intel Xe-LPG")
    assert engine_accel("ollama with vulkan", hw)[1] == "vulkan"
    assert engine_accel("ollama -ngl 0", _hw("discrete_gpu", "NVIDIA"))[1] == "cpu"
    assert ollama_accel(hw, "cuda") == "cuda"


def test_ollama_on_an_intel_igpu_is_predicted_on_the_cpu_and_says_so(store: Store) -> None:
    p = _predict(store, hardware="Intel Iris Xe laptop", model="gemma 3 4b", backend="ollama")
    gpu = _predict(store, hardware="Intel Iris Xe laptop", model="gemma 3 4b", backend="ollama vulkan")
    assert p.calibration[0].group.startswith("cpu")
    assert gpu.calibration[0].group.startswith("gpu")
    assert p.decode_tps < 0.75 * gpu.decode_tps  # CPU cores reach less of the shared memory's bandwidth
    assert any("OLLAMA_VULKAN=1" in a for a in p.assumptions)
    assert not any("OLLAMA_VULKAN" in a for a in gpu.assumptions)


def test_ollama_on_an_nvidia_card_is_unchanged(store: Store) -> None:
    p = _predict(store, hardware="RTX 4090", model="llama 3.1 8b", quant="Q4_K_M", backend="ollama")
    assert p.calibration[0].group.startswith("gpu")
    assert not any("OLLAMA_VULKAN" in a for a in p.assumptions)
