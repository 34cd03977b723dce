"""Peak FP32 compute of one CPU core, by microarchitecture (``seed/cpu_uarch.csv``).

A CPU's prefill is matrix multiplication on its SIMD units, so its ceiling per core is
``FMA pipes × SIMD lanes × 2 FLOP × clock``: a Zen 4 core (2 × 256-bit FMA = 32 FP32 FLOP/cycle at
~5.0 GHz) has 2.6× the ceiling of a Zen+ core (2 × 128-bit = 16 at ~3.6 GHz). Counting cores alone put a
16-core Ryzen 9 7950X's prefill at half what it measures and a 4-core Ryzen 5 3400G's at 3×. Each row of
the table gives the FLOP/cycle (from the microarchitecture's documented FMA width) and an ESTIMATED
sustained all-core clock for the family's segment (between its base and boost clocks), with its source.
Hybrid parts (P- and E-cores) give the average over their usual core mix.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

__all__ = ["REFERENCE_CORE_GFLOPS", "CorePeak", "core_peak", "core_speed"]

REFERENCE_CORE_GFLOPS = 96.0
"""GFLOP/s of the reference core the fitted per-core compute is counted in: 32 FP32 FLOP/cycle (2 × 256-bit
FMA, a Haswell-to-Zen 3 class core) at 3.0 GHz."""


@dataclass(frozen=True)
class CorePeak:
    """One core's FP32 peak: ``gflops`` = ``flops_per_cycle`` × ``ghz``; ``uarch`` names the row,
    ``basis`` says how the figures were made, ``source_url`` where they come from."""

    uarch: str
    flops_per_cycle: float
    ghz: float
    basis: str
    source_url: str

    @property
    def gflops(self) -> float:
        return self.flops_per_cycle * self.ghz


@lru_cache(maxsize=1)
def _table() -> tuple[tuple[re.Pattern[str], CorePeak], ...]:
    from knowledge.seed import read_csv

    return tuple((re.compile(r["family_match"], re.I),
                  CorePeak(r["uarch"], float(r["fp32_flops_per_cycle"]), float(r["allcore_ghz"]), r["basis"],
                           r["source_url"]))
                 for r in read_csv("cpu_uarch.csv"))


def core_peak(family: str | None, hw_id: str = "") -> CorePeak | None:
    """The first ``cpu_uarch.csv`` row whose pattern is found in ``"<family> | <hw_id>"`` (case-insensitive),
    None when no row matches (a generic "DDR5 desktop" entry, a GPU)."""
    text = f"{family or ''} | {hw_id}"
    return next((p for rx, p in _table() if rx.search(text)), None)


def core_speed(family: str | None, hw_id: str = "") -> float:
    """A core's FP32 peak relative to :data:`REFERENCE_CORE_GFLOPS` (1.0 when the microarchitecture is not known)."""
    p = core_peak(family, hw_id)
    return p.gflops / REFERENCE_CORE_GFLOPS if p else 1.0
