"""Predictions through the names people write (round 29): unstated memory and Ollama's accelerator.

A machine sold in several memory sizes, named without one, is predicted on the smallest size that holds the
model (a run that was measured fitted), not on the smallest size with the model paged in from the SSD. Ollama
on a GPU that only Vulkan would drive (Intel iGPUs, AMD iGPUs off ROCm's list) runs on the CPU cores.
"""

from __future__ import annotations

import math

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


# ----------------------------------------------------------------------------- CPU compute from the cores' vector peak
def test_core_peak_by_hand() -> None:
    from knowledge.catalog import core_peak

    assert core_peak("AMD Zen 4 (Raphael)").gflops == pytest.approx(32 * 5.0)  # two 256-bit FMA × 8 lanes × 2
    assert core_peak("Intel Xeon E5 v4 (Broadwell-EP)").gflops == pytest.approx(32 * 2.4)
    assert core_peak("AMD Zen+ (Picasso)").flops_per_cycle == 16  # 128-bit pipes
    assert core_peak("AMD EPYC 9005 (Zen 5, SP5)").flops_per_cycle == 64  # full 512-bit datapath
    assert core_peak("AMD Zen 5 (Strix Point)").flops_per_cycle == 32  # the laptop part's 256-bit datapath
    assert core_peak("Intel Xeon W (Cascade Lake)").clock_ghz == pytest.approx(3.5)  # not the Xeon SP row
    assert core_peak("Intel Meteor Lake").flops_per_cycle == 22  # 6 P-cores at 32, 10 E-cores at 16
    assert core_peak("DDR5 desktop") is None and core_peak(None) is None


def _peak_row(i: int, hw: str, family: str, gflops_per_core: float) -> "CalRow":
    from advisor.calibration import CalRow

    return CalRow(result_id=f"p{i}", hw_id=hw, kind="cpu", family=family, accel="cpu", engine="llama.cpp",
                  quant="Q4_K_M", multi=False, bandwidth_gbs=100, tflops=None, decode_bytes=4e9, prefill_flops=16e9,
                  decode_tps=None, prefill_tps=gflops_per_core, params_active_b=8.0, source_set="synthetic",
                  cpu_cores=16)


def test_the_peak_share_is_fitted_per_machine_and_pooled() -> None:
    from advisor.calibration import _fit_cpu_per_core

    # Zen 4 at 160 GFLOP/s peak reaching 80 (0.5); Broadwell at 76.8 reaching 30.72 (0.4); a family the table
    # lacks does not count. Rates in GFLOP/s per core: prefill_tps × 16 GFLOP / 16 cores.
    rows = [_peak_row(k, "zen4", "AMD Zen 4 (Raphael)", 80.0) for k in range(3)]
    rows += [_peak_row(3 + k, "bdw", "Intel Xeon E5 v4 (Broadwell-EP)", 30.72) for k in range(3)]
    rows += [_peak_row(6, "other", "DDR5 desktop", 500.0)]
    out = _fit_cpu_per_core(rows)
    assert out["cpu-peak-share:base"] == pytest.approx(0.45)  # median of 0.5 and 0.4
    # each machine's own share shrunk toward the base with weight n / (n + 2): 3 rows
    assert out["cpu-peak-share:hw:zen4"] == pytest.approx(math.exp((3 * math.log(0.5) + 2 * math.log(0.45)) / 5))
    assert "cpu-peak-share:hw:other" not in out


def test_an_unmeasured_cpu_is_predicted_from_its_own_peak(store: Store) -> None:
    from advisor.perf import calibration_model
    from advisor.perf.prediction import resolve_compute
    from knowledge import catalog

    cal = calibration_model(store)
    share = cal.compute_per_bw["cpu-peak-share:base"]
    assert 0.3 < share < 0.6
    laptop = catalog.get_hardware(store, "amd-ryzen-7-7840hs")  # Zen 4 laptop, 8 cores, no rows in the store
    server = catalog.get_hardware(store, "intel-xeon-e5-v3-haswell")  # Haswell-EP, no rows either
    tf_l, why = resolve_compute(laptop, "cpu", cal)
    tf_s, _ = resolve_compute(server, "cpu", cal)
    assert tf_l == pytest.approx(8 * 32 * 4.3 / 1000 * share)  # cores × FLOP/cycle × GHz × share, TFLOP/s
    assert "32 FLOP/cycle × 4.3 GHz" in why and "ESTIMATE" in why
    # per core, a 4.3 GHz Zen 4 does 4.3 / 2.4 of a 2.4 GHz Haswell-EP core's work (same vector width)
    from advisor.perf.fit import cpu_core_count

    per_core = (tf_l / cpu_core_count(laptop)) / (tf_s / cpu_core_count(server))
    assert per_core == pytest.approx(4.3 / 2.4)


def test_cpu_prefill_of_a_zen4_laptop_is_not_the_slow_machines_median(store: Store) -> None:
    # 8 Zen 4 cores at ~4.3 GHz: about 0.5 TFLOP/s achieved, ~30 tok/s for an 8B model's 16 GFLOP per token
    # (the per-core median of the measured CPUs alone gave 19 tok/s, a Broadwell core's rate).
    p = _predict(store, hardware="AMD Ryzen 7 7840HS", model="llama 3.1 8b", quant="Q4_K_M", backend="llama.cpp")
    assert 25 < p.prefill_tps < 40
