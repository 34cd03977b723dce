"""A decode level above the machine weighs machines, not rows: one card's 40-model sweep cannot set its family."""

import math

from advisor.calibration import SOURCE_QUALITY
from advisor.calibration._groups import ONE_MACHINE_WEIGHT, ROWS_PER_MACHINE_CAP, _weight


def test_one_machines_sweep_is_capped_at_a_family_level():
    rows = [(math.log(0.4), "xsrc", "nvidia-gtx-1050-ti")] * 40
    fam = ("gpu", "discrete_gpu", "llama.cpp", "kquant", "dram", "NVIDIA Pascal")
    # capped at 5 rows, and a GPU level only one machine fills weighs a fifth of that (round 46)
    assert ROWS_PER_MACHINE_CAP == 5 and ONE_MACHINE_WEIGHT == 0.2
    assert _weight("decode", fam, rows) == 1.0
    # a second machine in the group: full weight, capped at 5 rows x 2 machines
    two = rows + [(math.log(0.5), "xsrc", "nvidia-gtx-1070")] * 3
    assert _weight("decode", fam, two) == 10.0
    # the machine's own level keeps all its rows
    assert _weight("decode", ("gpu", "nvidia-gtx-1050-ti", "llama.cpp"), rows) == 40.0


def test_cap_counts_machines_and_source_quality():
    q = SOURCE_QUALITY["llmfit-community"]  # 0.5
    rows = [(0.0, "llmfit-community", "a")] * 12 + [(0.0, "llmfit-community", "b")] * 2
    key = ("gpu", "apple_soc", "llama.cpp")
    assert _weight("decode", key, rows) == min(14 * q, 5 * 2) == 7.0
    rows += [(0.0, "logs", "b")] * 20  # quality 1.0: 7 + 20 = 27, capped at 5 x 2 machines
    assert _weight("decode", key, rows) == 10.0


def test_prefill_weight_is_the_row_count():
    assert _weight("prefill", ("gpu",), [(0.0, "s", "a")] * 9) == -1.0


def test_a_cards_runs_its_host_memory_could_serve_do_not_calibrate(store):
    from advisor.perf import build_cal_rows
    from advisor.perf.fit import host_bound

    flagged = {r.hw_id for r in build_cal_rows(store) if r.extra.get("host_bound")}
    # the llmfit GTX 1050 Ti sweep (E5-2680 v4 host): 45 GB/s achieved, below 0.8 x 76.8 and 0.5 x 112
    assert flagged == {"nvidia-gtx-1050-ti"}
    r = {"kind": "discrete_gpu", "decode_tps": 20.0, "bandwidth_gbs": 112.0, "n_devices": 1}
    assert host_bound(r, 2.4e9, 76.8)  # 48 GB/s: a CPU's pace
    assert not host_bound({**r, "decode_tps": 28.0}, 2.4e9, 76.8)  # 67 GB/s: above what the host serves (61)
    assert not host_bound(r, 2.4e9, None)  # no host named
    assert not host_bound({**r, "kind": "apple_soc"}, 2.4e9, 76.8)  # unified memory: the host's memory is the GPU's
