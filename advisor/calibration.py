"""Achieved efficiency per phase, fitted on measured results with hierarchical shrinkage.

A prediction is ceiling × efficiency (DESIGN.md). Decode time per token is modelled as
``B_tok / (BW × e_bw) + t0`` — bytes over achieved bandwidth plus a fixed per-token cost ``t0``
(kernel launches, sampling, synchronisation) that dominates for small models. Prefill time per
token is ``FLOPs_tok / (FLOPS × e_c)``.

Efficiencies are fitted in log space per group, from coarse (all rows of an accelerator class) to
fine (one hardware id with one engine); each level is shrunk toward its parent with weight
``k / (n + k)`` so thin groups borrow strength from broader ones. Prediction intervals are the
10th/90th percentiles of the fit's residual ratios (measured / predicted) in the prediction's
hardware kind.
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from advisor import roofline
from advisor.models import Calibration, ModelSpec

__all__ = ["CalRow", "CalibrationModel", "fit", "group_keys", "qclass", "accel_class"]

SHRINK_K = 2.0
T0_GRID_MS = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0)


def qclass(quant: str | None) -> str:
    """Coarse weight-format class that changes compute efficiency (dequantisation cost)."""
    q = (quant or "").lower()
    if any(x in q for x in ("f16", "bf16", "fp16", "f32")):
        return "float"
    if "mlx" in q or "bit" in q:
        return "mlx"
    if "_k" in q or "iq" in q or "xl" in q:
        return "kquant"
    return "legacy"


def accel_class(accel: str | None) -> str:
    return "cpu" if accel == "cpu" else "gpu"


@dataclass
class CalRow:
    """One measured result with its roofline features (bytes, FLOPs, spec rates)."""

    result_id: str
    hw_id: str
    kind: str
    family: str
    accel: str
    engine: str
    quant: str
    multi: bool
    bandwidth_gbs: float
    tflops: float | None
    decode_bytes: float
    prefill_flops: float
    decode_tps: float | None
    prefill_tps: float | None
    params_active_b: float
    source_set: str
    extra: dict[str, Any] = field(default_factory=dict)


def group_keys(phase: str, r: CalRow | dict[str, Any]) -> list[tuple[str, ...]]:
    """Group keys from coarse to fine for a row (or a scenario with the same fields)."""
    g = r if isinstance(r, dict) else r.__dict__
    ac = accel_class(g["accel"])
    kind = g["kind"] + ("-multi" if g["multi"] else "")
    keys: list[tuple[str, ...]] = [("all",), (ac,), (ac, kind), (ac, kind, g["engine"])]
    if phase == "prefill":
        keys.append((ac, kind, g["engine"], qclass(g["quant"])))
        keys.append((ac, kind, g["engine"], qclass(g["quant"]), g["family"]))
        keys.append((ac, g["hw_id"], g["engine"], qclass(g["quant"])))
    else:
        keys.append((ac, kind, g["engine"], g["family"]))
        keys.append((ac, g["hw_id"], g["engine"]))
    return keys


@dataclass
class _Group:
    n: int
    log_eff: float
    sources: set[str]


@dataclass
class CalibrationModel:
    """Fitted efficiencies; ``efficiency()`` walks the groups of a scenario from coarse to fine."""

    t0_s: dict[str, float]
    groups: dict[str, dict[tuple[str, ...], _Group]]
    residuals: dict[str, dict[str, tuple[float, float]]]
    compute_per_bw: dict[str, float]
    n_rows: dict[str, int]

    def efficiency(self, phase: str, scenario: dict[str, Any]) -> Calibration:
        """Shrunk efficiency for ``phase`` ("decode" | "prefill") and where it came from."""
        groups = self.groups[phase]
        log_e = groups[("all",)].log_eff if ("all",) in groups else math.log(0.5)
        used = ("all",)
        n_used = groups[("all",)].n if ("all",) in groups else 0
        sources: set[str] = set()
        for key in group_keys(phase, scenario)[1:]:
            g = groups.get(key)
            if g is None:
                continue
            log_e = (g.n * g.log_eff + SHRINK_K * log_e) / (g.n + SHRINK_K)
            used, n_used, sources = key, g.n, g.sources
        kind = scenario["kind"] + ("-multi" if scenario["multi"] else "")
        ac = accel_class(scenario["accel"])
        lo, hi = self.residuals[phase].get(f"{ac}:{kind}") or (0.6, 1.6)
        return Calibration(
            phase=phase, efficiency=math.exp(log_e), group=" / ".join(used), n_rows=n_used,
            source_sets=sorted(sources), p10_ratio=lo, p90_ratio=hi,
            note=f"fitted on {self.n_rows[phase]} measured rows; this group has {n_used}",
        )

    def decode_tps(self, r: dict[str, Any] | CalRow, eff: float | None = None) -> float:
        g = r if isinstance(r, dict) else r.__dict__
        e = eff if eff is not None else self.efficiency("decode", g).efficiency
        t0 = self.t0_s.get(accel_class(g["accel"]), 0.0)
        return 1.0 / (g["decode_bytes"] / (g["bandwidth_gbs"] * roofline.GB * e) + t0)

    def prefill_tps(self, r: dict[str, Any] | CalRow, eff: float | None = None) -> float | None:
        g = r if isinstance(r, dict) else r.__dict__
        tf = g["tflops"]
        if not tf:
            return None
        e = eff if eff is not None else self.efficiency("prefill", g).efficiency
        return tf * 1e12 * e / g["prefill_flops"]


def _decode_eff(r: CalRow, t0: float) -> float | None:
    if not r.decode_tps or r.decode_tps <= 0:
        return None
    t = 1.0 / r.decode_tps - t0
    if t <= 1e-6:
        return None
    return r.decode_bytes / (r.bandwidth_gbs * roofline.GB * t)


def _fit_groups(phase: str, rows: list[CalRow], effs: list[float]) -> dict[tuple[str, ...], _Group]:
    acc: dict[tuple[str, ...], list[tuple[float, str]]] = defaultdict(list)
    for r, e in zip(rows, effs, strict=True):
        for key in group_keys(phase, r):
            acc[key].append((math.log(e), r.source_set))
    return {
        k: _Group(n=len(v), log_eff=statistics.median(x for x, _ in v), sources={s for _, s in v})
        for k, v in acc.items()
    }


def _fit_decode(rows: list[CalRow]) -> tuple[dict[str, float], dict[tuple[str, ...], _Group], list[CalRow]]:
    best: dict[str, float] = {}
    for ac in ("gpu", "cpu"):
        sub = [r for r in rows if accel_class(r.accel) == ac and r.decode_tps]
        if not sub:
            best[ac] = 0.0
            continue
        scores = []
        for t0_ms in T0_GRID_MS:
            t0 = t0_ms / 1000
            pairs = [(r, _decode_eff(r, t0)) for r in sub]
            pairs = [(r, e) for r, e in pairs if e and 0.01 < e < 3]
            if len(pairs) < max(3, len(sub) // 2):
                continue
            groups = _fit_groups("decode", [r for r, _ in pairs], [e for _, e in pairs])
            model = CalibrationModel({ac: t0}, {"decode": groups}, {"decode": {}}, {}, {"decode": len(pairs)})
            errs = [abs(model.decode_tps(r) / r.decode_tps - 1) for r in sub]  # type: ignore[operator]
            scores.append((statistics.median(errs), t0))
        best[ac] = min(scores)[1] if scores else 0.0
    kept, effs = [], []
    for r in rows:
        e = _decode_eff(r, best[accel_class(r.accel)])
        if e and 0.01 < e < 3:
            kept.append(r)
            effs.append(e)
    return best, _fit_groups("decode", kept, effs), kept


def fit(rows: list[CalRow]) -> CalibrationModel:
    """Fit decode and prefill efficiencies on measured rows (pure; no store access).

    Rows without a hardware compute figure inform the compute-per-bandwidth ratio used to
    estimate it for hardware with no FLOPS spec (labelled as an estimate by the caller).
    """
    t0, dec_groups, dec_rows = _fit_decode(rows)
    pre_rows, pre_effs = [], []
    for r in rows:
        if r.prefill_tps and r.tflops:
            e = r.prefill_tps * r.prefill_flops / (r.tflops * 1e12)
            if 0.001 < e < 3:
                pre_rows.append(r)
                pre_effs.append(e)
    pre_groups = _fit_groups("prefill", pre_rows, pre_effs)
    # Achieved compute per unit of bandwidth by kind, for hardware lacking a FLOPS spec.
    ratio: dict[str, list[float]] = defaultdict(list)
    for r in rows:
        if r.prefill_tps and not r.multi:
            ratio[r.kind + ":" + accel_class(r.accel)].append(r.prefill_tps * r.prefill_flops / 1e12 / r.bandwidth_gbs)
    cpb = {k: statistics.median(v) for k, v in ratio.items()}
    model = CalibrationModel(t0, {"decode": dec_groups, "prefill": pre_groups}, {"decode": {}, "prefill": {}},
                             cpb, {"decode": len(dec_rows), "prefill": len(pre_rows)})
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


def features(
    *, model: ModelSpec, bits_per_weight: float, prompt_tokens: int, gen_tokens: int, depth: int,
    kv_bytes_per_element: float = roofline.KV_BYTES_F16,
) -> tuple[float, float]:
    """(bytes per decoded token at mean decode context, FLOPs per prefilled token)."""
    ctx = depth + prompt_tokens + gen_tokens / 2.0
    dbytes = roofline.weight_bytes_read_per_token(model, bits_per_weight) + roofline.kv_bytes(
        model, ctx, kv_bytes_per_element
    )
    flops = roofline.prefill_flops_per_token(model, prompt_tokens or 512, depth)
    return dbytes, flops
