"""Hardware names as people write them: GPUs, laptops, CPUs/APUs/boards, Macs, GPU counts, identity."""

from __future__ import annotations

import csv
import time
from pathlib import Path

import pytest

from advisor.errors import AmbiguousError, NotFoundError
from knowledge import catalog
from knowledge.queries import calibration_set
from knowledge.seed import SEED_DIR, split_hw_id
from knowledge.store import Store


def _id(store, text, **kw):
    return catalog.resolve_hardware(store, text, **kw).value.id


@pytest.mark.parametrize(
    "text,hw_id",
    [
        ("RTX 4060", "nvidia-rtx-4060"), ("my 4060", "nvidia-rtx-4060"), ("RTX 4060 8GB", "nvidia-rtx-4060"),
        ("nvidia geforce rtx 4060 ti 16gb", "nvidia-rtx-4060-ti"), ("GTX 1080 Ti", "nvidia-gtx-1080-ti"),
        ("RTX 2060", "nvidia-rtx-2060"), ("RTX 3060 Ti", "nvidia-rtx-3060-ti"), ("rtx3060ti", "nvidia-rtx-3060-ti"),
        ("L4", "nvidia-l4"), ("NVIDIA L4", "nvidia-l4"), ("T4", "nvidia-tesla-t4"), ("Tesla T4", "nvidia-tesla-t4"),
        ("B200", "nvidia-b200"), ("Arc B580", "intel-arc-b580"), ("AMD MI100", "amd-mi100"), ("MI100", "amd-mi100"),
        ("V100", "nvidia-tesla-v100"), ("A800-SXM4-80GB", "nvidia-a800-80gb-sxm"),
        ("Radeon AI PRO R9700", "amd-radeon-ai-pro-r9700"), ("RX 7900 XT", "amd-rx-7900-xt"),
        ("7900 XTX", "amd-rx-7900-xtx"), ("GTX 1050 Ti", "nvidia-gtx-1050-ti"), ("RTX 2080", "nvidia-rtx-2080"),
        ("RTX 2080 Ti", "nvidia-rtx-2080-ti"), ("Arc A310", "intel-arc-a310"), ("Arc Pro B50", "intel-arc-pro-b50"),
        ("Arc Pro B70", "intel-arc-pro-b70"), ("H100 SXM5 80GB", "nvidia-h100-sxm"), ("H100 SXM", "nvidia-h100-sxm"),
        ("4070 Ti Super", "nvidia-rtx-4070-ti-super"), ("RTX 4070 Ti", "nvidia-rtx-4070-ti"),
        ("RTX 4070 SUPER", "nvidia-rtx-4070-super"), ("RTX 4080 Super", "nvidia-rtx-4080-super"),
        ("RTX 4070 Laptop", "nvidia-rtx-4070-laptop"), ("RTX 4070 laptop GPU", "nvidia-rtx-4070-laptop"),
        ("RTX 4070 Max-Q", "nvidia-rtx-4070-maxq"), ("4090 laptop", "nvidia-rtx-4090-laptop"),
        ("A100 40GB PCIe", "nvidia-a100-40gb"), ("NVIDIA A100-SXM4-40GB (40 GB reported)", "nvidia-a100-40gb"),
        ("A100 80GB SXM4", "nvidia-a100-80gb-sxm"), ("RTX 6000 Ada", "nvidia-rtx-6000-ada"),
        ("RTX PRO 6000", "nvidia-rtx-pro-6000-blackwell"), ("RTX A6000", "nvidia-rtx-a6000"), ("A6000", "nvidia-rtx-a6000"),
        ("H20", "nvidia-h20"), ("H20-3e", "nvidia-h20-3e"), ("RTX 4090 D", "nvidia-rtx-4090d"), ("4090D", "nvidia-rtx-4090d"),
        ("RTX 3060", "nvidia-rtx-3060"), ("RTX 3060 12GB", "nvidia-rtx-3060"), ("RTX 3060 8GB", "nvidia-rtx-3060-8gb"),
        ("Jetson Orin Nano Super", "nvidia-jetson-orin-nano-super"), ("AGX Orin", "nvidia-jetson-agx-orin-64gb"),
        ("Titan RTX", "nvidia-titan-rtx"), ("Tesla P40", "nvidia-tesla-p40"), ("RX 9070 XT", "amd-rx-9070-xt"),
        ("RTX-4080 16GB", "nvidia-rtx-4080"), ("NVIDIA RTX 3060 (on Raspberry Pi CM5 host)", "nvidia-rtx-3060"),
        ("Intel Arc Pro B50 (on Raspberry Pi 500+ host)", "intel-arc-pro-b50"),
        ("NVIDIA GeForce GTX 1050 Ti (4.0 GB reported, host CPU Intel(R) Xeon(R) CPU E5-2680 v4 @ 2.40GHz, linux)",
         "nvidia-gtx-1050-ti"),
        ("AMD Radeon AI PRO R9700 32GB (gfx1201), host Ryzen 9 9900X3D", "amd-radeon-ai-pro-r9700"),
        ("MI300X", "amd-mi300x"), ("H200", "nvidia-h200"), ("L40S", "nvidia-l40s"),
    ],
)
def test_gpu_names(store, text, hw_id):
    assert _id(store, text) == hw_id


@pytest.mark.parametrize(
    "text,hw_id,n",
    [
        ("8x H100", "nvidia-h100-sxmx8", 8), ("2 x 3090", "nvidia-rtx-3090x2", 2), ("dual 4090", "nvidia-rtx-4090x2", 2),
        ("two 3090s", "nvidia-rtx-3090x2", 2), ("3090 x2", "nvidia-rtx-3090x2", 2), ("4 GPUs RTX 3090", "nvidia-rtx-3090x4", 4),
        ("2x NVIDIA RTX 3090 24GB, PCIe Gen3", "nvidia-rtx-3090x2", 2), ("a pair of 3090s", "nvidia-rtx-3090x2", 2),
        ("2x AMD Radeon AI PRO R9700 32GB (gfx1201)", "amd-radeon-ai-pro-r9700x2", 2),
        ("quad 3090 rig", "nvidia-rtx-3090x4", 4), ("RTX 3060 12GB", "nvidia-rtx-3060", 1),
        ("2x3090", "nvidia-rtx-3090x2", 2), ("dual RTX 3090 Ti", "nvidia-rtx-3090-tix2", 2),
        ("4 x A100 40GB", "nvidia-a100-40gbx4", 4), ("eight H100s", "nvidia-h100-sxmx8", 8),
        ("2× RTX 4090", "nvidia-rtx-4090x2", 2), ("a single 4090", "nvidia-rtx-4090", 1), ("3 3090s", "nvidia-rtx-3090x3", 3),
        ("triple 3090", "nvidia-rtx-3090x3", 3), ("6x MI300X", "amd-mi300xx6", 6), ("RTX 3090 (x2)", "nvidia-rtx-3090x2", 2),
        ("2 x Radeon RX 7900 XTX", "amd-rx-7900-xtxx2", 2), ("two 4060 Ti 16GB", "nvidia-rtx-4060-tix2", 2),
    ],
)
def test_gpu_counts(store, text, hw_id, n):
    hw = catalog.resolve_hardware(store, text).value
    assert (hw.id, hw.n_devices) == (hw_id, n)


def test_four_a100s_are_four_sxm_cards_with_the_assumption_stated(store):
    m = catalog.resolve_hardware(store, "four A100s")
    assert m.value.n_devices == 4 and m.value.id.startswith("nvidia-a100") and "SXM" in m.assumptions[0]


@pytest.mark.parametrize(
    "text,candidates",
    [
        ("H100", {"nvidia-h100-pcie", "nvidia-h100-sxm"}),
        ("A100", {"nvidia-a100-40gb", "nvidia-a100-80gb-pcie", "nvidia-a100-80gb-sxm"}),
        ("7900", {"amd-rx-7900-xt", "amd-rx-7900-xtx"}),
        ("RTX 6000", {"nvidia-rtx-6000-ada", "nvidia-rtx-pro-6000-blackwell"}),
        ("Jetson Orin", {"nvidia-jetson-agx-orin-64gb"}),
        ("Orin Nano", {"nvidia-jetson-orin-nano-8gb"}),
    ],
)
def test_distinct_products_are_a_question(store, text, candidates):
    with pytest.raises(AmbiguousError) as e:
        catalog.resolve_hardware(store, text)
    ids = {c.rsplit("(", 1)[-1].rstrip(")") for c in e.value.candidates}
    assert candidates <= ids


def test_variants_are_never_swapped(store):
    assert _id(store, "4070 Ti Super") != _id(store, "4070 Ti")
    laptop = catalog.resolve_hardware(store, "RTX 4070 Laptop").value
    assert laptop.memory_gb_options == [8.0] and laptop.bandwidth_gbs == pytest.approx(256, abs=1)
    assert _id(store, "RTX 4070") == "nvidia-rtx-4070"
    assert _id(store, "A100 40GB PCIe") != _id(store, "A100 80GB SXM")
    assert _id(store, "Orin Nano Super") != _id(store, "AGX Orin")
    with pytest.raises(NotFoundError):
        catalog.resolve_hardware(store, "RTX 4090 Ti")  # no such card: not silently a 4090


def test_an_unstated_variant_is_an_assumption(store):
    m = catalog.resolve_hardware(store, "RTX 3060")
    assert m.value.bandwidth_gbs == 360 and "8 GB" in m.assumptions[0]


@pytest.mark.parametrize(
    "text,hw_id,bw",
    [
        ("Ryzen 7 7840HS laptop", "amd-ryzen-7-7840hs", 89.6), ("Ryzen 9 7940HS", "amd-ryzen-7040-phoenix", 89.6),
        ("Radeon 780M", "amd-radeon-780m-igpu", 89.6), ("780M", "amd-radeon-780m-igpu", 89.6),
        ("Radeon 890M", "amd-radeon-890m-igpu", 120.0), ("Ryzen AI 9 HX 370", "amd-ryzen-ai-9-hx-370", 120.0),
        ("Ryzen AI 7 350 w/ Radeon 860M", "amd-ryzen-ai-7-350", 89.6),
        ("Radeon 840M / 860M Graphics (0.5 GB reported, host CPU AMD Ryzen AI 7 350 w/ Radeon 860M, linux)",
         "amd-radeon-860m-igpu", 89.6),
        ("Core Ultra 7 155H", "intel-core-ultra-7-155h", 89.6), ("Core Ultra 7 258V", "intel-core-ultra-200v-lunar-lake", 136.5),
        ("Arc 140V", "intel-arc-140v-igpu", 136.5), ("i7-1270P", "intel-core-mobile-12-13-p", 76.8),
        ("Intel Alder Lake-P GT2 [Iris Xe Graphics] (integrated) (host CPU 12th Gen Intel(R) Core(TM) i7-1270P)",
         "intel-iris-xe-i7-1270p-igpu", 76.8),
        ("Ryzen 9 7950X", "amd-ryzen-9-7950x", 96.0), ("Ryzen-7950X (CPU only, 16 threads)", "amd-ryzen-9-7950x", 96.0),
        ("Ryzen 5 3400G (CPU only, AVX2, no AVX512)", "amd-ryzen-5-3400g", 46.9),
        ("Ryzen 5 3400G APU, Radeon Vega 11 iGPU via Vulkan (-ngl 99)", "amd-ryzen-5-3400g-vega11-igpu", 46.9),
        ("Xeon E5-2683 v4 (32 cores, quad-channel Broadwell), CPU only", "intel-xeon-e5-2683-v4", 76.8),
        ("Xeon E5-2690 v4", "intel-xeon-e5-v4-broadwell", 76.8), ("EPYC 9654", "amd-epyc-9004-genoa", 460.8),
        ("EPYC 7763", "amd-epyc-7003-milan", 204.8), ("Xeon Platinum 8480+", "intel-xeon-sapphire-rapids", 307.2),
        ("Snapdragon X Elite", "qualcomm-snapdragon-x-elite", 135.2), ("X1E-78-100", "qualcomm-snapdragon-x-elite", 135.2),
        ("Raspberry Pi 5", "raspberry-pi-5", 17.07), ("Radxa Dragon Q8B (CPU only)", "radxa-dragon-q8b", 68.3),
        ("DGX Spark", "nvidia-dgx-spark-gb10", 273), ("Strix Halo", "amd-ryzen-ai-max-plus-395", 256),
        ("Ryzen AI Max+ 395", "amd-ryzen-ai-max-plus-395", 256), ("Ryzen AI Max 390", "amd-ryzen-ai-max-385", 256),
        ("amd ryzen 7 8745h w/ radeon 780m (CPU Only preset)", "amd-ryzen-7-8745h", 89.6),
        ("i9-13900K", "intel-core-desktop-12-14", 89.6), ("Threadripper 7980X", "amd-threadripper-7000", 166.4),
    ],
)
def test_cpu_apu_board_names(store, text, hw_id, bw):
    hw = catalog.resolve_hardware(store, text).value
    assert hw.id == hw_id and hw.bandwidth_gbs == pytest.approx(bw, abs=0.1)


def test_unstated_memory_system_is_assumed_and_said(store):
    m = catalog.resolve_hardware(store, "Ryzen 7 7840HS laptop")
    assert m.value.kind == "cpu" and "DDR5-5600" in m.assumptions[0] and "LPDDR5X-7500" in m.assumptions[0]
    halo = catalog.resolve_hardware(store, "Strix Halo")
    assert "carve-out" in halo.assumptions[0]


def test_stated_ram_sets_the_bandwidth(store):
    m = catalog.resolve_hardware(store, "Ryzen 9 7950X with DDR5-5200")
    assert m.value.id == "amd-ryzen-9-7950x" and m.value.bandwidth_gbs == pytest.approx(83.2) and not m.assumptions


@pytest.mark.parametrize(
    "text,hw_id",
    [
        ("Mac mini M4", "apple-m4-10gpu"), ("MacBook Air M3", "apple-m3-10gpu"), ("Mac Studio M3 Ultra", "apple-m3-ultra-80gpu"),
        ("M4 Pro", "apple-m4-pro-20gpu"), ("Mac mini M4 Pro", "apple-m4-pro-20gpu"), ("apple-m4-pro", "apple-m4-pro-20gpu"),
        ("apple-m1-max", "apple-m1-max-32gpu"), ("M2 Pro 19-core", "apple-m2-pro-19gpu"),
        ("MacBook Pro M4 Max 128GB", "apple-m4-max-40gpu"), ("M4 Max 32-core GPU", "apple-m4-max-32gpu"),
        ("M5", "apple-m5-10gpu"), ("M5 Max", "apple-m5-max-40gpu"),
    ],
)
def test_apple_names(store, text, hw_id):
    assert _id(store, text) == hw_id


def test_family_level_apple_ids_state_the_bin(store):
    m = catalog.resolve_hardware(store, "apple-m4-pro")
    assert "GPU core count not stated" in m.assumptions[0]
    assert catalog.resolve_hardware(store, "MacBook Pro M4 Max 128GB").value.memory_gb == 128


def test_m5_compute_is_a_labelled_estimate_from_apples_4x(store):
    m4, m5 = (catalog.get_hardware(store, i) for i in ("apple-m4-10gpu", "apple-m5-10gpu"))
    assert m5.fp16_tflops_is_estimate and m5.fp16_tflops == pytest.approx(4 * m4.fp16_tflops, rel=0.01)
    assert "4x" in m5.notes and m5.bandwidth_gbs / m4.bandwidth_gbs < 1.4  # decode gains far less than prefill


def _results_more_ids() -> list[str]:
    with open(Path(SEED_DIR) / "results_more.csv", newline="", encoding="utf-8") as f:
        return sorted({r["hw_id"] for r in csv.DictReader(f) if r["hw_id"]})


def test_every_results_more_hw_id_maps_onto_a_catalog_entry(store):
    known = catalog.all_known_hardware(store)
    missing = []
    for hid in _results_more_ids():
        base, _ = split_hw_id(hid)
        if base in known:
            continue
        bins = [h for h in known.values() if h.id.startswith(base + "-")]
        # A family-level id (apple-m4-pro) calibrates when its bins share a bandwidth (queries.calibration_set).
        if not bins or len({h.bandwidth_gbs for h in bins}) != 1:
            missing.append(hid)
        catalog.resolve_hardware(store, hid)  # and a person typing the id gets an entry
    assert not missing


def test_results_more_rows_calibrate(store):
    """Rows naming these machines join the hardware table (the calibration set keeps them)."""
    rows = calibration_set(store)
    joined = {r["base_hw_id"] for r in rows}
    assert {"nvidia-rtx-4090", "amd-ryzen-ai-max-plus-395"} <= joined
    hws = catalog.all_known_hardware(store)
    for hid in ("nvidia-tesla-t4", "nvidia-l4", "nvidia-gtx-1050-ti", "intel-xeon-e5-2683-v4", "amd-radeon-860m-igpu"):
        assert hws[hid].bandwidth_gbs > 0


def test_resolution_is_fast(store):
    catalog.resolve_hardware(store, "RTX 4060")  # builds the indexes once
    names = ["my 4060", "8x H100", "Ryzen 7 7840HS laptop", "Mac mini M4 Pro", "RTX 4070 Ti Super", "Radeon 780M",
             "Quantum Toaster 9000 Hyper"] * 5
    t0 = time.perf_counter()
    for n in names:
        try:
            catalog.resolve_hardware(store, n)
        except (NotFoundError, AmbiguousError):
            pass
    assert (time.perf_counter() - t0) / len(names) < 0.05


def test_unknown_hardware_lists_candidates(store):
    with pytest.raises(NotFoundError) as e:
        catalog.resolve_hardware(store, "Quantum Toaster 9000 Hyper")
    assert e.value.candidates


def test_catalog_stats_counts_by_kind_and_source(store):
    s = catalog.catalog_stats(store)
    assert s["machines"] > 1000 and s["by_source"]["spec database"] > 900 and s["by_source"]["seed"] > 80
    assert s["by_source"]["memory systems"] > 30 and s["by_kind_and_source"]["cpu"]["memory systems"] > 20
    assert sum(s["by_kind"].values()) == s["machines"]
    assert s["by_kind_and_source"]["apple_soc"] == {"seed": s["by_kind"]["apple_soc"]}


def test_curated_list_stays_curated(store):
    curated = catalog.all_hardware(store)
    assert "nvidia-rtx-4090" in curated and "nvidia-rtx-4060" not in curated
    assert catalog.get_hardware(store, "nvidia-rtx-4060").bandwidth_gbs == 272


@pytest.mark.parametrize(
    "text,hw_id",
    [
        ("3090 24GB * 4", "nvidia-rtx-3090x4"), ("A100 PCIe 80GB * 4", "nvidia-a100-80gb-pciex4"),
        ("M1 (Apple M1 Max (64 GB) preset; CPU Apple M1 Max; macOS 15.7.7)", "apple-m1-max-32gpu"),
        ("M2 Mini Pro (12/19/32GB) GPU", "apple-m2-pro-19gpu"),
        ("RTX 5080 (RTX 5080 (16 GB) preset; CPU AMD Ryzen 7 9800X3D 8-Core Processor; Ubuntu 26.04)", "nvidia-rtx-5080"),
        ("Tesla V100-PCIE-32GB (32.0 GB reported)", "nvidia-tesla-v100-pcie-32gb"),
        ("NVIDIA H100 80GB HBM3", "nvidia-h100-sxm"), ("Radeon VII", "amd-radeon-vii"), ("Vega 64", "amd-rx-vega-64"),
        ("8xH100", "nvidia-h100-sxmx8"), ("H100x8", "nvidia-h100-sxmx8"), ("rtx4090x2", "nvidia-rtx-4090x2"),
        ("my laptop has a 4060", "nvidia-rtx-4060-laptop"), ("gaming laptop with rtx 3070", "nvidia-rtx-3070-laptop"),
        ("a pair of A6000s", "nvidia-rtx-a6000x2"), ("A100 80GB SXM x8", "nvidia-a100-80gb-sxmx8"),
        ("Intel N100 mini PC", "intel-n100-alder-lake-n"), ("Steam Deck", "valve-steam-deck"), ("ROG Ally", "asus-rog-ally"),
        ("dual Xeon 8480", "intel-xeon-sapphire-rapids"), ("EPYC 7B13", "amd-epyc-7003-milan"),
        ("Xeon Gold 6338", "intel-xeon-ice-lake-sp"), ("i7-12700H laptop", "intel-core-mobile-12-13-p"),
        ("Ryzen 5 5600G", "amd-ryzen-desktop-am4"), ("Mac Studio with M2 Ultra 192GB", "apple-m2-ultra-76gpu"),
        ("MBP M3 Max 36GB", "apple-m3-max-30gpu"), ("Radeon RX 7900 GRE", "amd-rx-7900-gre"),
    ],
)
def test_tool_and_table_spellings(store, text, hw_id):
    assert _id(store, text) == hw_id


def test_published_hardware_names_resolve(store):
    """The hardware column of the seed's published rows, as their authors wrote it, maps onto the row's hw_id."""
    pairs = set()
    for name in ("results.csv", "results_more.csv"):
        with open(Path(SEED_DIR) / name, newline="", encoding="utf-8") as f:
            pairs |= {(r["hardware"], r["hw_id"]) for r in csv.DictReader(f) if r["hardware"] and r["hw_id"]}
    wrong = []
    for text, hid in sorted(pairs):
        base, n = split_hw_id(hid)
        try:
            got_base, got_n = split_hw_id(catalog.resolve_hardware(store, text).value.id)
        except (NotFoundError, AmbiguousError):
            got_base, got_n = "", 0
        if not ((got_base == base or got_base.startswith(base + "-")) and got_n == n):
            wrong.append((text, hid, got_base))
    assert len(wrong) <= 0.02 * len(pairs), wrong


def test_system_ram_is_not_the_cards_memory(store):
    assert catalog.resolve_hardware(store, "I have an RTX 3090 and 64GB RAM").value.memory_gb == 24
    assert catalog.resolve_hardware(store, "RTX 4090 48GB").value.memory_gb == 48  # a modded card keeps what was said


@pytest.mark.parametrize("text, card, host_bw", [
    ("Intel Arc A770 + Core i5-12600KF (64GB, Windows)", "intel-arc-a770", 89.6),
    ("RTX 4070 + Ryzen 5 5600X", "nvidia-rtx-4070", 51.2),
    ("RTX 3090 + i9-13900K 64GB", "nvidia-rtx-3090", 89.6),
])
def test_a_cpu_named_next_to_the_card_is_its_host_not_a_second_gpu(text, card, host_bw):
    # The CPU's memory (64 GB) is system RAM, not the card's; offloaded layers read at the CPU's bandwidth.
    from advisor import service
    from advisor.models import Scenario

    store = Store(":memory:")
    m = catalog.resolve_hardware(store, text)
    assert (m.value.id, m.value.host_bandwidth_gbs) == (card, host_bw)
    assert m.value.memory_gb != 64
    p = service.predict_scenario(store, Scenario(hardware=text, model="llama 3.1 8b", quant="Q4_K_M"))
    assert p.hardware["id"] == card and p.hardware["n_devices"] == 1
    assert any("is the host CPU" in a for a in p.assumptions)


@pytest.mark.parametrize("text, card", [
    ("RTX 3050 Ti", "nvidia-rtx-3050-ti-laptop"), ("Dell XPS 15 with RTX 3050 Ti", "nvidia-rtx-3050-ti-laptop"),
    ("GTX 1650 Ti", "nvidia-gtx-1650-ti-laptop"), ("RTX 2050", "nvidia-rtx-2050-laptop"),
])
def test_a_card_that_exists_only_as_a_laptop_gpu_is_that_one(text, card):
    m = catalog.resolve_hardware(Store(":memory:"), text)
    assert m.value.id == card and any("laptop GPU" in a for a in m.assumptions)


@pytest.mark.parametrize("text", ["Dell XPS 13", "Dell XPS 13 (DX13260) CPU"])
def test_a_laptop_line_is_not_a_titan_xp(text):
    # "XPS" once read as the plural of TITAN "Xp"; plurals are read only for model numbers ("3090s").
    with pytest.raises(NotFoundError):
        catalog.resolve_hardware(Store(":memory:"), text)
    assert catalog.resolve_hardware(Store(":memory:"), "two 3090s").value.id == "nvidia-rtx-3090x2"


@pytest.mark.parametrize("text, hw_id", [("HGX H100", "nvidia-h100-sxmx8"), ("DGX H100", "nvidia-h100-sxmx8"),
                                         ("HGX B200", "nvidia-b200x8"), ("DGX Spark", "nvidia-dgx-spark-gb10")])
def test_hgx_and_dgx_boards_carry_eight_sxm_gpus(text, hw_id):
    assert catalog.resolve_hardware(Store(":memory:"), text).value.id == hw_id


def test_leaderboard_rows_record_the_depth_their_command_ran_at():
    # localmaxxing rows ran llama-bench -d N while the leaderboard's depth field read 0: the seed keeps N.
    import re

    for r in csv.DictReader(open(SEED_DIR / "results_more.csv", newline="")):
        m = re.search(r"llama-bench .*?(?:^|\s)-d\s+(\d+)", r["notes"])
        if r["source_set"] == "localmaxxing-leaderboard" and m:
            assert r["depth"] == m.group(1), r["notes"][:80]


@pytest.mark.parametrize("text, card, mem", [
    ("Ryzen 9 7950X with 192GB RAM and RTX 3060", "nvidia-rtx-3060", 12.0),
    ("PC: Ryzen 7 5800X3D, 64GB RAM, RTX 3080", "nvidia-rtx-3080", 10.0),
    ("RTX 3080 64GB", "nvidia-rtx-3080", 10.0),
    ("NVIDIA A10G", "nvidia-a10g", 24.0),
    ("RTX 4090 48GB", "nvidia-rtx-4090", 48.0),  # a modded card: within twice the largest version, kept
])
def test_the_hosts_ram_is_not_the_cards_memory(text, card, mem):
    from advisor import service
    from advisor.models import Scenario

    p = service.predict_scenario(Store(":memory:"), Scenario(hardware=text, model="llama 3.1 8b", quant="Q4_K_M"))
    # the card's memory as stated (GiB), counted in decimal GB by the fit (advisor.roofline.STATED_GB)
    assert p.hardware["id"] == card and p.hardware["memory_gb"] == pytest.approx(mem)
    assert p.memory.total_gb == pytest.approx(mem * 2**30 / 1e9)


def test_vllm_without_a_format_serves_16_bit_weights():
    from advisor import service
    from advisor.models import Scenario

    p = service.predict_scenario(Store(":memory:"), Scenario(hardware="8x H100", model="llama 3.3 70b", backend="vllm"))
    assert p.quant == "BF16" and any("vLLM/SGLang serve" in a for a in p.assumptions)


def test_strix_halo_assumptions_say_one_memory_size():
    from advisor import service
    from advisor.models import Scenario

    p = service.predict_scenario(Store(":memory:"), Scenario(hardware="Strix Halo", model="Qwen3-30B-A3B"))
    said = [a for a in p.assumptions if "GB" in a and ("assumed" in a or "every size" in a)]
    assert not any("assumed 128 GB" in a or "assumed 64 GB unified" in a for a in said)
    assert any("assumed 32 GB" in a for a in said) and p.memory.total_gb == 32


@pytest.mark.parametrize("text, card", [
    ("RTX 4070 (RTX 4070 Ti (12 GB) preset; CPU Ryzen 5 5600X; Kubuntu)", "nvidia-rtx-4070"),
    ("RTX 3080 (RTX 3080 Ti (12 GB) preset; CPU i7)", "nvidia-rtx-3080"),
    ("RX 7900 XTX (RX 7900 XTX (24 GB) preset; CPU Ryzen 9)", "amd-rx-7900-xtx"),
])
def test_a_leaderboards_preset_is_not_the_card(text, card):
    # localmaxxing's hardware field: the card, then "(<the preset it chose> preset; CPU …; OS)".
    from advisor import service
    from advisor.models import Scenario

    assert catalog.resolve_hardware(Store(":memory:"), text).value.id == card
    p = service.predict_scenario(Store(":memory:"), Scenario(hardware=text, model="llama 3.1 8b", quant="Q4_K_M"))
    assert p.hardware["id"] == card


def test_gpt_oss_without_a_format_is_its_native_mxfp4():
    from advisor import service
    from advisor.models import Scenario

    p = service.predict_scenario(Store(":memory:"), Scenario(hardware="DGX Spark", model="gpt-oss 120b"))
    assert p.quant == "MXFP4"


@pytest.mark.parametrize("text, hw_id", [
    ("RTX 4090 and a Tesla P40", "nvidia-rtx-4090+nvidia-tesla-p40"),
    ("RTX 4090 and an RTX 3090", "nvidia-rtx-4090+nvidia-rtx-3090"),
    ("Ryzen 9 7950X and RTX 4090", "nvidia-rtx-4090"),  # the CPU is the host
    ("RTX 3090 and 64GB of RAM", "nvidia-rtx-3090"),
])
def test_cards_joined_by_and(text, hw_id):
    assert catalog.resolve_hardware(Store(":memory:"), text).value.id == hw_id


@pytest.mark.parametrize("text", ["and", "and and and", "the and", "+ + +"])
def test_filler_words_name_no_machine(text):
    with pytest.raises(NotFoundError):
        catalog.resolve_hardware(Store(":memory:"), text)
