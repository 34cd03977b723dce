"""A decode level above the machine weighs machines, not rows: one card's 40-model sweep cannot set its family."""

import math

from advisor.calibration import SOURCE_QUALITY
from advisor.calibration._groups import ROWS_PER_MACHINE_CAP, _weight


def test_one_machines_sweep_is_capped_at_a_family_level():
    rows = [(math.log(0.4), "xsrc", "nvidia-gtx-1050-ti")] * 40
    fam = ("gpu", "discrete_gpu", "llama.cpp", "kquant", "dram", "NVIDIA Pascal")
    assert _weight("decode", fam, rows) == ROWS_PER_MACHINE_CAP == 5
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
