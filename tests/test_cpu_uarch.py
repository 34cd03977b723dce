"""A CPU core's FP32 peak by microarchitecture (knowledge/seed/cpu_uarch.csv): FMA width × an all-core clock."""

import pytest

from knowledge.cpu_uarch import REFERENCE_CORE_GFLOPS, core_peak, core_speed


@pytest.mark.parametrize("family, hw_id, flops, ghz", [
    ("AMD Zen+ (Picasso)", "amd-ryzen-5-3400g", 16, 3.6),          # 2 x 128-bit FMA
    ("AMD Zen/Zen+ (AM4)", "amd-ryzen-desktop-am4-zen1", 16, 3.6),
    ("AMD EPYC 7001 (Zen 1)", "amd-epyc-7001-naples", 16, 2.7),
    ("AMD Zen 2/3 (AM4)", "amd-ryzen-desktop-am4", 32, 4.2),          # 2 x 256-bit FMA
    ("AMD Zen 4 (Raphael)", "amd-ryzen-9-7950x", 32, 5.0),            # AVX-512 on 256-bit datapaths
    ("AMD Zen 4 (Phoenix)", "amd-ryzen-7-7840hs", 32, 4.0),
    ("AMD Zen 5 (sTR5)", "amd-threadripper-9000", 64, 4.0),           # full 512-bit datapath
    ("AMD Zen 5 (Strix Point)", "amd-ryzen-ai-9-hx-370", 32, 4.0),    # mobile Zen 5: 256-bit
    ("AMD Strix Halo", "amd-ryzen-ai-max-395", 64, 4.5),
    ("Intel Xeon E5 (Sandy Bridge-EP)", "x", 16, 2.8),               # AVX, no FMA
    ("Intel Xeon E5 v3 (Haswell-EP)", "x", 32, 2.5),
    ("Intel Xeon E5 v4 (Broadwell-EP)", "intel-xeon-e5-2683-v4", 32, 2.5),
    ("Intel Xeon W (Sapphire Rapids WS)", "intel-xeon-w-2400", 64, 3.3),  # not the Xeon Scalable row
    ("Intel Xeon Scalable 4th gen (Sapphire Rapids)", "x", 64, 2.4),
    ("Intel Alder Lake-N", "intel-n100-alder-lake-n", 16, 2.9),      # E-cores only
    ("Apple M2", "apple-m2-max-38gpu", 28, 3.2),
    ("Arm Neoverse N1 (Ampere Altra)", "ampere-altra", 16, 3.0),
    ("Broadcom BCM2712 (Cortex-A76)", "raspberry-pi-5", 16, 2.4),
    ("Rockchip RK3588 (Cortex-A76/A55)", "rk3588", 12, 2.1),
    ("NVIDIA Ampere", "nvidia-jetson-orin-nano-8gb", 16, 2.0),       # matched by id
])
def test_core_peak_by_family(family, hw_id, flops, ghz):
    p = core_peak(family, hw_id)
    assert p is not None and (p.flops_per_cycle, p.ghz) == (flops, ghz)
    assert p.gflops == pytest.approx(flops * ghz) and p.source_url.startswith("https://")


def test_core_speed_is_relative_to_the_reference_core():
    assert REFERENCE_CORE_GFLOPS == 96.0  # 32 FLOP/cycle × 3.0 GHz
    assert core_speed("AMD Zen 4 (Raphael)") == pytest.approx(160 / 96)
    assert core_speed("AMD Zen+ (Picasso)") == pytest.approx(0.6)
    assert core_speed("DDR5 desktop", "cpu-ddr5-6000-2ch") == 1.0 and core_peak("DDR5 desktop") is None


def test_every_catalog_cpu_with_a_named_core_has_a_peak(store):
    # Generic memory-system entries ("DDR5 desktop") and GPUs name no core; every other CPU family does.
    rows = store.query("select hw_id, family from hardware where kind = 'cpu' and family not like 'DDR%'")
    assert rows and [r["hw_id"] for r in rows if core_peak(r["family"], r["hw_id"]) is None] == []


def test_an_unseen_zen5_threadripper_gets_its_wider_cores(store):
    # 64 Zen 5 cores (2 x 512-bit FMA at ~4.0 GHz = 256 GFLOP/s each) against 64 Zen 2 cores (32 at ~3.8 = 121.6):
    # the same core count, 2.1x the prefill compute.
    from advisor.perf import calibration_model
    from advisor.perf.prediction import resolve_compute
    from knowledge import catalog

    cal = calibration_model(store)
    z5 = catalog.get_hardware(store, "amd-threadripper-9000").model_copy(update={"cpu_cores": "64"})
    z2 = catalog.get_hardware(store, "amd-threadripper-3000").model_copy(update={"cpu_cores": "64"})
    tf5, why = resolve_compute(z5, "cpu", cal, quant="Q4_K_M", engine="llama.cpp")
    tf2, _ = resolve_compute(z2, "cpu", cal, quant="Q4_K_M", engine="llama.cpp")
    assert tf5 / tf2 == pytest.approx(256 / 121.6) and "64 FP32 FLOP/cycle × ~4 GHz" in why
