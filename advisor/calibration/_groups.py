"""Group fitting: robust centres per group of the chain, and the bounded row sample the fits use."""

from __future__ import annotations

import math
import statistics
from collections import defaultdict

from advisor.calibration._model import CalRow, _Group, group_keys, moe_split_log, multi_moe_key


def _weighted_median(pairs: list[tuple[float, float]]) -> float:
    """Median of values under weights (the value where the cumulative weight reaches half)."""
    pairs = sorted(pairs)
    half, acc = sum(w for _, w in pairs) / 2.0, 0.0
    for x, w in pairs:
        acc += w
        if acc >= half:
            return x
    return pairs[-1][0]

ROBUST_SCALE = 0.5  # log units (a factor of 1.65) at which a disagreeing source's rows count half
# Weight of a source's rows relative to logs posted with their command lines (1.0). From the data notes
# (shared/data/README.md, "Quality differs by source_set"): user-submitted collections, where decode is
# often total output ÷ wall time of a short prompt and set-ups vary, and unverified community comments.
SOURCE_QUALITY = {"llmfit-community": 0.5, "localmaxxing-leaderboard": 0.5, "accelmark": 0.5, "community": 0.5}


def robust_center(vals: list[tuple[float, str]] | list[tuple[float, str, str]], scale: float = ROBUST_SCALE) -> float:
    """Robust centre of log-efficiencies tagged with their source (and machine): a weighted median over rows.

    Each machine counts once: a row's weight is divided by the rows its machine has in the group, so a
    40-model sweep on one card counts as much as one run on another (the held-out question is "a
    machine the fit has not seen", and machines differ more than the models run on one). The starting
    consensus is the median of the machines' medians; each source's median is compared with it and
    every row of a source that disagrees by ``d`` (log units) counts ``q / (1 + (d / scale)^2)``
    (Cauchy weights, two reweighting steps; ``q`` the source's quality weight, :data:`SOURCE_QUALITY`),
    so a source of slow or odd runs that disagrees with the others cannot drag a group. Items without a
    machine tag count as one machine per source; one source: the machine-weighted median of its rows.
    """
    items = [(v[0], v[1], v[2] if len(v) > 2 else "source:" + v[1]) for v in vals]  # type: ignore[misc]
    per_hw: dict[str, list[float]] = defaultdict(list)
    by_src: dict[str, list[float]] = defaultdict(list)
    for x, s, h in items:
        per_hw[h].append(x)
        by_src[s].append(x)
    n_hw = {h: len(v) for h, v in per_hw.items()}
    if len(by_src) == 1:
        return _weighted_median([(x, 1.0 / n_hw[h]) for x, _, h in items])
    center = statistics.median(statistics.median(v) for v in per_hw.values())  # one vote per machine
    for _ in range(2):
        w = {s: SOURCE_QUALITY.get(s, 1.0) / (1.0 + ((statistics.median(v) - center) / scale) ** 2)
             for s, v in by_src.items()}
        center = _weighted_median([(x, w[s] / n_hw[h]) for x, s, h in items])
    return center

def _fit_groups(phase: str, rows: list[CalRow], effs: list[float], *, robust: bool = True) -> dict[tuple[str, ...], _Group]:
    """Groups of log efficiencies along :func:`group_keys`.

    Decode: a multi-GPU MoE row enters its (dense) multi-GPU groups at its dense-equivalent efficiency, its own
    ÷ the one-card MoE factor (:func:`moe_split_log`) from a first fit on the one-card rows, and its machine's own
    multi-GPU MoE group (:func:`multi_moe_key`) as measured."""
    if phase == "decode" and any(r.multi and r.moe for r in rows):
        first = _chain_groups(phase, [r for r in rows if not r.multi], [e for r, e in zip(rows, effs, strict=True) if not r.multi],
                              robust=robust)
        raw = effs
        effs = [e / math.exp(moe_split_log(first, r.__dict__)) if r.multi and r.moe else e
                for r, e in zip(rows, effs, strict=True)]
        groups = _chain_groups(phase, rows, effs, robust=robust)
        own: dict[tuple[str, ...], list[tuple[float, str, str]]] = defaultdict(list)
        for r, e in zip(rows, raw, strict=True):
            if r.multi and r.moe:
                own[multi_moe_key(r.__dict__)].append((math.log(e), r.source_set, r.hw_id))
        center = robust_center if robust else (lambda v: statistics.median(x for x, *_ in v))
        groups.update({k: _Group(n=len(v), log_eff=center(v), sources={s for _, s, _ in v},
                                 weight=_weight(phase, k, v)) for k, v in own.items()})
        return groups
    return _chain_groups(phase, rows, effs, robust=robust)


def _chain_groups(phase: str, rows: list[CalRow], effs: list[float], *, robust: bool = True) -> dict[tuple[str, ...], _Group]:
    acc: dict[tuple[str, ...], list[tuple[float, str, str]]] = defaultdict(list)
    one_card: dict[tuple[str, ...], int] = defaultdict(int)
    for r, e in zip(rows, effs, strict=True):
        for key in group_keys(phase, r):
            acc[key].append((math.log(e), r.source_set, r.hw_id))
            one_card[key] += not r.multi
    # Decode: user collections often read decode low (total output / wall time), so sources are
    # reweighted; prefill rates depend on prompt length and build more than on the source, and the
    # reweighting costs accuracy there (bench/accuracy.py): plain medians.
    center = robust_center if phase == "decode" and robust else (lambda v: statistics.median(x for x, *_ in v))
    return {k: _Group(n=len(v), log_eff=center(v), sources={s for _, s, _ in v}, weight=_weight(phase, k, v),
                      one_card=one_card[k]) for k, v in acc.items()}


# Decode: a level above the machine (kind, engine, format, bandwidth tier, family) is evidence about machines, and a
# 40-model sweep of one card says how that card runs, not how its family does. Its shrinkage weight is capped at
# this many rows per machine in it. Fitted on the hold-out (bench/accuracy.py, new-row decode held out by
# hardware: no cap 12.2 %, 2: 13.3, 3: 12.0, 4 and 5: 11.6, 8: 12.1; older rows 9.9 → 9.8 %). Prefill keeps row
# counts: there a cap gained nothing (25.9 → 26.0 %).
ROWS_PER_MACHINE_CAP = 5
# Decode, GPUs: a level above the machine that only one machine's rows fill (a chip family, a format on a kind) says
# how that machine runs, not its family: one RX 7900 XTX run at 41 % of its roofline set every RDNA3 card's K-quant
# decode (the RX 7900 XT's 50 llmfit rows, measured at ~72 %, were predicted 13 % low). Such a group weighs this
# share of its capped rows. Fitted on the hold-out (bench/accuracy.py, held out by hardware; new-row decode
# MdAPE / older-row decode MdAPE): 1 (none) 11.6 / 10.1 %, 0.5: 11.5 / 9.6, 0.3: 11.0 / 9.6, 0.2: 10.8 / 9.1,
# 0.1: 10.8 / 9.2, 0: 11.0 / 9.1; batched decode held out by hardware 23.3 → 24.6 % at 0.2 (the Strix Halo's
# batched rows lose the 3400G iGPU's APU levels). CPU groups keep full weight (few CPUs measured; there one machine's level is
# most of the evidence: new CPU decode 11.0 → 21.1 % at 0); prefill too (new-row prefill 25.9 → 30.6 % at 0.2).
ONE_MACHINE_WEIGHT = 0.2


def _weight(phase: str, key: tuple[str, ...], v: list[tuple[float, str, str]]) -> float:
    """Shrinkage weight of a decode group: its rows × their source's quality (:data:`SOURCE_QUALITY`), at most
    :data:`ROWS_PER_MACHINE_CAP` per distinct machine unless the key is that one machine's own level.
    Prefill: -1 (the weight is the row count)."""
    if phase != "decode":
        return -1.0
    w = sum(SOURCE_QUALITY.get(s, 1.0) for _, s, _ in v)
    machines = {h for *_, h in v}
    if len(machines) == 1 and next(iter(machines)) in key:
        return w
    if len(machines) == 1 and key[0] == "gpu":
        return min(w, ROWS_PER_MACHINE_CAP) * ONE_MACHINE_WEIGHT
    return min(w, ROWS_PER_MACHINE_CAP * len(machines))


def bounded(rows: list[CalRow], *, per_cell: int = 6, total: int = 6000) -> list[CalRow]:
    """At most ``per_cell`` rows per (source, hardware, engine, model, format) cell and ``total`` in all.

    Keeps the fit's cost bounded whatever the store holds (a sweep of 500 prompt lengths on one
    machine says no more about its efficiency than a handful): rows are taken evenly spaced in
    ``result_id`` order, so the sample is deterministic.
    """
    cells: dict[tuple[str, ...], list[CalRow]] = defaultdict(list)
    for r in rows:
        cells[(r.source_set, r.hw_id, r.engine, str(r.extra.get("model")), r.quant)].append(r)
    out: list[CalRow] = []
    for v in cells.values():
        v.sort(key=lambda r: r.result_id)
        step = max(1.0, len(v) / per_cell)
        out.extend(v[int(i * step)] for i in range(min(per_cell, len(v))))
    if len(out) > total:
        out.sort(key=lambda r: r.result_id)
        step = len(out) / total
        out = [out[int(i * step)] for i in range(total)]
    return out
