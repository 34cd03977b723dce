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

__all__ = ["REFERENCE_CORE_GFLOPS", "CorePeak", "core_peak", "core_speed", "sku_cores"]

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


def _norm_cpu(text: str) -> str:
    """A CPU name as the SKU table writes it: lower case, "-"/"_" as spaces, "2690v4" as "2690 v4", "hx370" as
    "hx 370", no "i7 " before an Intel model number."""
    t = re.sub(r"[-_]+", " ", text.lower())
    t = re.sub(r"(\d)v(\d)\b", r"\1 v\2", t)
    t = re.sub(r"\bhx(\d)", r"hx \1", t)
    return re.sub(r"\bi[3579]\s+(?=\d)", "", t)


@lru_cache(maxsize=1)
def _skus() -> tuple[tuple[str, re.Pattern[str], int, str], ...]:
    from knowledge.seed import read_csv

    rows = []
    for r in read_csv("cpu_skus.csv"):
        key = _norm_cpu(r["sku"])
        rows.append((key, re.compile(rf"(?<![a-z0-9]){re.escape(key)}(?![a-z0-9+])"), int(r["cores"]), r["source_url"]))
    return tuple(sorted(rows, key=lambda x: -len(x[0])))  # the longest first: "e5 2690 v4" before "e5 2690"


def sku_cores(text: str | None) -> tuple[int, str, str] | None:
    """Cores of the CPU model number in ``text`` ("Threadripper PRO 7995WX" → 96; "Xeon E5-2690 v4" → 14) per
    socket, with the model number as found and its source (``seed/cpu_skus.csv``: the vendors' spec pages);
    None when no listed model number is in the text."""
    if not text:
        return None
    # "DDR5-5600", "6000 MT/s": a memory speed, not a CPU's model number (the Ryzen 5 5600)
    text = re.sub(r"\b(?:l?p?ddr\d[a-z]?)[\s-]*\d{4}\b|\b\d{4}\s*(?:mt/s|mhz)\b", " ", text, flags=re.I)
    t = _norm_cpu(text)
    for key, rx, cores, src in _skus():
        if rx.search(t):
            return cores, key, src
    return None
