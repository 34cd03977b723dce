"""Vector peak of a CPU core by microarchitecture family: FP32 FMA FLOP per cycle × a sustained clock.

CPU matmul (prefill, and decode in codebook formats) scales with the cores' vector units and clock, not with
memory bandwidth: a 5 GHz Zen 4 core does about twice a 2.4 GHz Broadwell core's work. The table
(``seed/cpu_microarch.csv``) gives per family the FP32 FMA FLOP/cycle of a core (vendor optimization manuals,
as tabulated on WikiChip) and an ESTIMATE of the all-core clock under vector load; for hybrid chips the
FLOP/cycle is the mean over the listed cores (P- and E-cores). The calibration fits the share of this peak
that llama.cpp-class kernels reach (:func:`advisor.calibration._cpu._fit_cpu_per_core`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from knowledge.seed import read_csv

__all__ = ["CorePeak", "core_peak"]


@dataclass(frozen=True)
class CorePeak:
    """Vector peak of one core: ``gflops`` = ``flops_per_cycle`` × ``clock_ghz`` (GFLOP/s, FP32 FMA)."""

    flops_per_cycle: float
    clock_ghz: float
    example: str

    @property
    def gflops(self) -> float:
        return self.flops_per_cycle * self.clock_ghz


@lru_cache(maxsize=1)
def _table() -> tuple[tuple[re.Pattern[str], CorePeak], ...]:
    return tuple((re.compile(r["family_pattern"]), CorePeak(float(r["flops_per_cycle"]), float(r["clock_ghz"]),
                                                           r["example"]))
                 for r in read_csv("cpu_microarch.csv"))


@lru_cache(maxsize=256)
def core_peak(family: str | None) -> CorePeak | None:
    """The vector peak of a core of this hardware family (catalog ``family``), None when the table lacks it.

    >>> core_peak("AMD Zen 4 (Raphael)").gflops
    160.0
    >>> core_peak("DDR5 desktop") is None
    True
    """
    if not family:
        return None
    return next((p for pat, p in _table() if pat.search(family)), None)
