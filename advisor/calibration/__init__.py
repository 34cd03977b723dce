"""Achieved efficiency per phase, fitted on measured results with hierarchical shrinkage.

A prediction is ceiling × efficiency (DESIGN.md). Decode time per token is modelled as
``B_tok / (BW × e_bw) + t0`` — bytes over achieved bandwidth plus a fixed per-token cost ``t0``
(kernel launches, sampling, synchronisation) that dominates for small models; on a GPU ``t0`` is fitted per
32 layers and scales with the model's layer count (:func:`._model.layer_scale`). Prefill time per
token is ``FLOPs_tok / (FLOPS × e_c)``.

Efficiencies are fitted in log space per group, from coarse (all rows of an accelerator class) to
fine (one hardware id with one engine); each level is shrunk toward its parent with weight
``k / (n + k)`` so thin groups borrow strength from broader ones. Prediction intervals are the
10th/90th percentiles of the fit's residual ratios (measured / predicted) in the prediction's
hardware kind.

The pieces: :mod:`._model` (rows, group keys, prefill work, the fitted model), :mod:`._groups` (robust
group centres, bounded samples), :mod:`._terms` (β, m0, API factor, γ), :mod:`._cpu` (CPU compute);
here the decode fit, :func:`fit` and :func:`fit_batched`.
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from typing import Any

from advisor import roofline
from advisor.calibration._cpu import _fit_cpu_per_core, _machine_ratio, cpu_compute_factor, cpu_qclass
from advisor.calibration._groups import (
    ROBUST_SCALE,
    SOURCE_QUALITY,
    _fit_groups,
    _weighted_median,
    bounded,
    robust_center,
)
from advisor.calibration._model import (
    _OWN_M0,
    GRAPH_APIS,
    MOE_T0_KEY,
    POOLED_M0,
    PREFILL_TF_REF,
    SHRINK_K,
    TIER_ENGINES,
    UBATCH,
    V0_HOST_KEY,
    CalibrationModel,
    CalRow,
    _Group,
    _group_keys,
    accel_class,
    attention_flops,
    batched_keys,
    beta_for,
    bw_tier,
    engine_family,
    features,
    group_keys,
    layer_scale,
    m0_for,
    m0_key,
    moe_t0,
    moe_t0_applies,
    moe_t0_key,
    pipeline_speedup,
    prefill_work,
    qclass,
    row_t0,
    t0_key,
    tier_of,
)
from advisor.calibration._terms import (
    BETA_GRID,
    GAMMA_GRID,
    MOE_M0_GRID,
    MOE_MIN_ROWS,
    NATIVE_APIS,
    _fit_api_factor,
    _fit_beta,
    _fit_gamma,
    _fit_moe_m0,
)

__all__ = [
    "BETA_GRID", "GAMMA_GRID", "MOE_M0_GRID", "MOE_MIN_ROWS", "NATIVE_APIS", "POOLED_M0", "PREFILL_TF_REF",
    "ROBUST_SCALE", "SHRINK_K", "SOURCE_QUALITY", "TIER_ENGINES", "UBATCH", "_OWN_M0",
    "CalRow", "CalibrationModel", "_Group", "_fit_api_factor", "_fit_beta", "_fit_cpu_per_core", "_fit_gamma",
    "_fit_groups", "_fit_moe_m0", "_group_keys", "_machine_ratio", "_weighted_median",
    "accel_class", "attention_flops", "batched_keys", "beta_for", "bounded", "bw_tier", "cpu_compute_factor",
    "cpu_qclass", "engine_family", "features", "fit", "fit_batched", "group_keys", "m0_for", "m0_key",
    "min_decode_eff", "GRAPH_APIS", "MOE_T0_KEY", "moe_t0", "moe_t0_key", "V0_HOST_KEY", "moe_t0_applies", "layer_scale", "row_t0", "pipeline_speedup", "prefill_work", "qclass", "robust_center", "t0_key", "tier_of",
]

T0_GRID_MS = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0)


def _decode_eff(r: CalRow, t0: float) -> float | None:
    if not r.decode_tps or r.decode_tps <= 0:
        return None
    t = 1.0 / r.decode_tps - t0
    if t <= 1e-6:
        return None
    return r.decode_bytes / (r.bandwidth_gbs * roofline.GB * t)

def _best_t0(sub: list[CalRow], key: str) -> float | None:
    scores = []
    for t0_ms in T0_GRID_MS:
        t0 = t0_ms / 1000
        pairs: list[tuple[CalRow, float]] = []
        for r in sub:
            e = _decode_eff(r, t0)
            if e and 0.01 < e < 3:
                pairs.append((r, e))
        if len(pairs) < max(3, len(sub) // 2):
            continue
        # Plain medians while searching the grid (cheap); the final fit is the robust one.
        groups = _fit_groups("decode", [r for r, _ in pairs], [e for _, e in pairs], robust=False)
        model = CalibrationModel({key: t0}, {"decode": groups}, {"decode": {}}, {}, {"decode": len(pairs)})
        errs = [abs(model.decode_tps(r) / r.decode_tps - 1) for r in sub if r.decode_tps]
        scores.append((statistics.median(errs), t0))
    return min(scores)[1] if scores else None


GPU_MIN_DECODE_EFF = 0.12  # below this a GPU row is not the GPU's speed (see min_decode_eff)


def min_decode_eff(r: CalRow) -> float:
    """Lowest decode efficiency a row may show and still say what its machine does.

    A GPU decoding at under an eighth of its memory roofline is not running the model from its own
    memory (weights spilled to system RAM, a CPU fallback, a context far larger than recorded): a
    rule from the roofline, not a fit. CPUs and unknown set-ups keep the wide 1 % floor.
    """
    return GPU_MIN_DECODE_EFF if accel_class(r.accel) == "gpu" and r.kind != "cpu" else 0.01


def _fit_decode(rows: list[CalRow]) -> tuple[dict[str, float], dict[tuple[str, ...], _Group], list[CalRow]]:
    best: dict[str, float] = {}
    # a card's rows its host's memory could have served (advisor.perf.fit.host_bound) say nothing of the card's decode
    measured = [r for r in rows if r.decode_tps and not r.extra.get("host_bound")]
    # The per-kind fixed cost on the rows the MoE cost does not touch; then the MoE cost on top (paired).
    plain = [r for r in measured if not moe_t0_applies(r.__dict__)]
    for ac in ("gpu", "cpu"):
        sub = [r for r in plain if accel_class(r.accel) == ac]
        t = _best_t0(sub, ac) if sub else None
        best[ac] = t if t is not None else 0.0
    for key in sorted({t0_key(r) for r in plain}):
        sub = [r for r in plain if t0_key(r) == key]
        if len(sub) >= 10:
            t = _best_t0(sub, key)
            if t is not None:
                best[key] = t
    best.update(_fit_moe_t0s(measured, best))
    kept, effs = [], []
    for r in measured:
        e = _decode_eff(r, row_t0(best, r.__dict__))
        if e and min_decode_eff(r) < e < 3:
            kept.append(r)
            effs.append(e)
    return best, _fit_groups("decode", kept, effs), kept


MOE_T0_GRID_MS = (0.0, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0, 5.0, 6.0, 8.0)


def _fit_moe_t0s(rows: list[CalRow], best: dict[str, float]) -> dict[str, float]:
    """The MoE fixed cost pooled over every paired machine (:data:`MOE_T0_KEY`), and that of each API that
    replays a decode step as a graph (:data:`GRAPH_APIS`, :func:`moe_t0_key`) where it has a paired machine.

    The kernels a MoE layer adds (router, top-k, expert gathers, the weighted sum) cost a launch each where
    the API launches them one at a time (ROCm/HIP, whose graphs llama.cpp leaves off by default, Vulkan,
    Metal), but little where a step is captured once and replayed (llama.cpp's CUDA graphs for batch-1
    decode, llama.cpp PR #6766, 2024). Paired fits: an RTX 3060 on CUDA ~0.75 ms; pooled over R9700, Strix
    Halo, RX 7900 XT, Apple M-series and the 3060 ~3 ms. Pooling the launch-by-launch APIs without the 3060
    lost accuracy held out by hardware (bench/accuracy.py: the R9700's MoE rows), so the pool keeps it.
    """
    out = {MOE_T0_KEY: _fit_moe_t0(rows, best) or 0.0}
    for api in GRAPH_APIS:
        t = _fit_moe_t0([r for r in rows if r.accel == api], best, min_pairs=1)
        if t is not None:
            out[moe_t0_key({"accel": api})] = t
    return out


def _fit_moe_t0(rows: list[CalRow], best: dict[str, float], *, min_pairs: int = 3) -> float | None:
    """Extra fixed time per decoded token of a MoE model on a GPU, s (:data:`MOE_T0_GRID_MS`).

    A MoE layer runs more kernels per token than a dense one (router, top-k, expert gathers, the grouped
    expert matmul, the weighted sum), a cost that does not shrink with the bytes read, so it weighs most on
    fast memory (an R9700 at 645 GB/s lost a quarter of its MoE decode rate to it, a 256 GB/s Strix Halo
    far less). Fitted on machines measured with both MoE and dense models on the same engine and API
    (paired, so the machine's own efficiency cancels): the grid value at which the median over machines of
    log(MoE efficiency ÷ dense efficiency) is closest to 0; under 3 such machines, 0. Applied to the
    llama.cpp family and MLX (:func:`advisor.calibration.moe_t0_applies`); server engines' fused MoE kernels
    are not in the pairs.
    """
    per: dict[str, dict[bool, list[CalRow]]] = defaultdict(lambda: defaultdict(list))
    for r in rows:
        if moe_t0_applies(r.__dict__, moe_only=False) and r.decode_tps:
            per[r.hw_id + "|" + r.engine + "|" + r.accel][bool(r.moe)].append(r)
    pairs = [v for v in per.values() if v[True] and v[False]]
    if len(pairs) < min_pairs:
        return 0.0 if min_pairs >= 3 else None
    scores = []
    for ms in MOE_T0_GRID_MS:
        lr = []
        for v in pairs:
            # each row's own fixed cost (its layers), plus the MoE kernels' per 32 layers on the MoE rows
            ed = [e for r in v[False] if (e := _decode_eff(r, row_t0(best, r.__dict__)))]
            em = [e for r in v[True] if (e := _decode_eff(r, row_t0(best, {**r.__dict__, "moe": False})
                                                          + ms / 1000))]
            if ed and em:
                lr.append(math.log(statistics.median(em) / statistics.median(ed)))
        if lr:
            scores.append((abs(statistics.median(lr)), ms))
    return min(scores)[1] / 1000 if scores else 0.0

def fit(rows: list[CalRow]) -> CalibrationModel:
    """Fit decode and prefill efficiencies on measured rows (pure; no store access).

    Rows without a hardware compute figure inform the compute-per-bandwidth ratio used to
    estimate it for hardware with no FLOPS spec (labelled as an estimate by the caller). Rows marked
    ``extra["spilled"]`` (weights and KV larger than the machine's memory) do not calibrate.
    """
    rows = [r for r in rows if not r.extra.get("spilled")]
    t0, dec_groups, dec_rows = _fit_decode(rows)
    pre_all = [r for r in rows if r.prefill_tps and r.tflops]
    beta = _fit_beta(pre_all)
    m0s = _fit_moe_m0(pre_all, beta)
    pre_rows, pre_effs = [], []
    for r in pre_all:
        e = r.prefill_tps * prefill_work(r.__dict__, beta_for(beta, r.__dict__), m0_for(m0s, r.__dict__)) / (r.tflops * 1e12)  # type: ignore[operator]
        if 0.001 < e < 3:
            pre_rows.append(r)
            pre_effs.append(e)
    api = _fit_api_factor(pre_rows, pre_effs)
    pre_effs = [e / api.get(r.accel, 1.0) for r, e in zip(pre_rows, pre_effs, strict=True)]
    gamma = _fit_gamma(pre_rows, pre_effs)
    pre_groups = _fit_groups("prefill", pre_rows, [e / tier_of(gamma, r.__dict__) for r, e in zip(pre_rows, pre_effs, strict=True)])
    # Achieved compute per unit of bandwidth by kind, for hardware lacking a FLOPS spec.
    ratio: dict[str, list[float]] = defaultdict(list)
    for r in rows:
        if r.prefill_tps and not r.multi:
            x = r.prefill_tps * r.prefill_flops / 1e12 / r.bandwidth_gbs
            ratio[r.kind + ":" + accel_class(r.accel)].append(x)
            if r.family and not r.tflops:
                # Chips without a FLOPS spec (Apple M5: GPU matrix units) learn from their own family's rows.
                ratio["family:" + r.family + ":" + accel_class(r.accel)].append(x)
    cpb = {k: statistics.median(v) for k, v in ratio.items()}
    cpb.update(_fit_cpu_per_core([r for r in rows if r.prefill_tps and not r.multi and r.accel == "cpu"
                                  and r.cpu_cores and not r.tflops]))
    model = CalibrationModel(t0, {"decode": dec_groups, "prefill": pre_groups}, {"decode": {}, "prefill": {}},
                             cpb, {"decode": len(dec_rows), "prefill": len(pre_rows)}, beta, prefill_gamma=gamma, api_factor=api,
                             moe_m0=m0s)
    for phase, prow in (("decode", dec_rows), ("prefill", pre_rows)):
        res: dict[str, list[float]] = defaultdict(list)
        for r in prow:
            pred = model.decode_tps(r) if phase == "decode" else model.prefill_tps(r)
            meas = r.decode_tps if phase == "decode" else r.prefill_tps
            if pred and meas:
                ratio_v = meas / pred
                ac = accel_class(r.accel)
                res[f"{ac}:{r.kind}{'-multi' if r.multi else ''}"].append(ratio_v)
                res[ac].append(ratio_v)
        for k, v in res.items():
            if len(v) >= 4:
                q = statistics.quantiles(v, n=10)
                # Widen in-sample residuals a little: they understate out-of-sample error.
                model.residuals[phase][k] = (min(q[0], 1.0) ** 1.25, max(q[-1], 1.0) ** 1.25)
    return model

def fit_batched(items: list[tuple[dict[str, Any], int, float, str]]) -> dict[tuple[str, ...], _Group]:
    """Fit the batched slope ``s = ln(measured / modelled) / ln(batch)`` per group (robust centre).

    ``items``: (scenario fields as in :func:`batched_keys`, batch, measured ÷ modelled aggregate
    decode, source set). Rows with a ratio outside 0.1–10 are left out (not the same workload).
    """
    acc: dict[tuple[str, ...], list[tuple[float, str, str]]] = defaultdict(list)
    top: dict[tuple[str, ...], int] = defaultdict(int)
    for g, b, ratio, src in items:
        if b <= 1 or not (0.1 < ratio < 10):
            continue
        s = math.log(ratio) / math.log(b)
        for key in batched_keys(g):
            acc[key].append((s, src, str(g.get("hw_id"))))
            top[key] = max(top[key], b)
    # Shrinkage weight: independent (source, machine) sweeps, not rows: one sweep's rows share its set-up
    # (the engine version, its flags, the run's noise), so 15 rows of one benchmark on one A100 are one vote.
    return {k: _Group(n=len(v), log_eff=robust_center(v), sources={s for _, s, _ in v}, max_batch=top[k],
                      weight=float(len({(s, h) for _, s, h in v})))
            for k, v in acc.items()}
