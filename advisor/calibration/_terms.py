"""Prefill terms fitted on measured rows: attention factor β, MoE tile constant m0, API factor, compute tier γ."""

from __future__ import annotations

import math
import statistics
from collections import defaultdict

from advisor.calibration._groups import _fit_groups
from advisor.calibration._model import (
    _OWN_M0,
    SHRINK_K,
    TIER_ENGINES,
    CalibrationModel,
    CalRow,
    accel_class,
    beta_for,
    beta_key,
    engine_family,
    group_keys,
    m0_key,
    pooled_m0_key,
    prefill_work,
    tier_of,
)

BETA_GRID = (1.0, 1.5, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0)
GAMMA_GRID = (-0.6, -0.5, -0.4, -0.3, -0.2, -0.1, 0.0)
# MoE prefill: a routed expert multiplies only the m tokens routed to it in a step, m = step × k / E, and its
# grouped matmul reaches m / (m + m0) of a dense one's efficiency (tile-filling; matmul tiles are 32–128 tokens,
# so m0 is searched up to 128). m0 is fitted per accelerator API (llama.cpp family) or engine family on MoE rows.
MOE_MIN_ROWS = 4  # MoE rows (empty cache) a key needs for an m0 of its own
MOE_M0_GRID = (0.0, 8.0, 16.0, 24.0, 32.0, 48.0, 64.0, 96.0, 128.0)  # up to the largest matmul tile (128 rows)
MOE_M0_FLOAT_GRID = MOE_M0_GRID + (192.0, 256.0, 384.0, 512.0)  # BF16/F16 experts: one BLAS call per expert


def _fit_beta(rows: list[CalRow]) -> dict[str, float]:
    """β per accelerator API and flash-attention state (:func:`beta_key`) on the grid: the value at which
    prefill at different prompt lengths and depths agrees best (median absolute error), on dense
    llama.cpp-family rows of catalog models. Keys whose rows have a single prompt length and depth get none."""
    beta: dict[str, float] = {}
    for key in sorted({beta_key(r.__dict__) for r in rows}):
        # Dense models only: MoE prefill runs grouped expert matmuls at their own efficiency, which would
        # masquerade as attention cost (a hybrid MoE with 6 attention layers of 52 moved ROCm's β from 6 to 2).
        # Catalog shapes only: a generic model's attention is borrowed from another model of its size.
        sub = [r for r in rows if beta_key(r.__dict__) == key and engine_family(r.engine) in TIER_ENGINES
               and not r.moe and not r.extra.get("generic")]
        if len({(r.prompt_tokens, r.extra.get("depth") or 0) for r in sub}) < 2:
            continue
        scores = []
        for b in BETA_GRID:
            effs = [r.prefill_tps * prefill_work(r.__dict__, b) / (r.tflops * 1e12) for r in sub]  # type: ignore[operator]
            groups = _fit_groups("prefill", sub, effs)
            m = CalibrationModel({}, {"prefill": groups}, {"prefill": {}}, {}, {"prefill": len(sub)}, {key: b})
            scores.append((statistics.median(abs(m.prefill_tps(r) / r.prefill_tps - 1) for r in sub), b))  # type: ignore[operator]
        beta[key] = min(scores)[1]
    return beta


def _fit_moe_m0(rows: list[CalRow], beta: dict[str, float]) -> dict[str, float]:
    """m0 per :func:`m0_key` on the grid (BF16/F16 experts up to :data:`MOE_M0_FLOAT_GRID`): the value at
    which MoE rows' prefill agrees best (median absolute error) with the dense rows of the same groups, on
    runs from an empty cache (llama.cpp family: :func:`_anchored_m0`); keys with under MOE_MIN_ROWS MoE
    rows get none (GPU APIs: the pooled value, :func:`m0_for`)."""
    out: dict[str, float] = {}
    by: dict[str, list[CalRow]] = defaultdict(list)
    for r in rows:
        if not r.extra.get("depth"):  # at depth the attention cost (β) would be confounded with the expert term
            key = m0_key(r.__dict__)
            by[key].append(r)
            if key.split(":")[0] not in _OWN_M0:
                by[pooled_m0_key(r.__dict__)].append(r)
    for key, sub in sorted(by.items()):
        moe = [r for r in sub if r.moe and r.expert_tokens]
        dense = [r for r in sub if not r.moe]
        if len(moe) < MOE_MIN_ROWS or not dense:
            continue
        grid = MOE_M0_FLOAT_GRID if key.endswith(":float") else MOE_M0_GRID
        if engine_family(moe[0].engine) in TIER_ENGINES:
            out[key] = _anchored_m0(moe, dense, beta, grid, {key, pooled_m0_key(moe[0].__dict__)})
            continue
        # Other kernels (MLX gather_qmm, servers' fused MoE): the MoE rows' own groups carry the level and m0
        # only the spread with m (M2 Max, MLX: 512- and 2048-token prompts run at the same rate).
        scores = []
        bs = [beta_for(beta, r.__dict__) for r in sub]
        for m0 in grid:
            effs = [r.prefill_tps * prefill_work(r.__dict__, b, m0) / (r.tflops * 1e12) for r, b in zip(sub, bs, strict=True)]  # type: ignore[operator]
            m = CalibrationModel({}, {"prefill": _fit_groups("prefill", sub, effs)}, {"prefill": {}}, {},
                                 {"prefill": len(sub)}, beta, moe_m0={key: m0})
            scores.append((statistics.median(abs(m.prefill_tps(r) / r.prefill_tps - 1) for r in moe), m0))  # type: ignore[operator]
        out[key] = min(scores)[1]
    return out


def _anchored_m0(moe: list[CalRow], dense: list[CalRow], beta: dict[str, float], grid: tuple[float, ...],
                 keys: set[str]) -> float:
    """m0 at which the llama.cpp family's MoE rows are best predicted from the DENSE rows' efficiencies of
    their groups (same machine, API, format class) plus the tile cost. Fitted with MoE groups of their own,
    the MoE level would be absorbed there and m0 read only off the spread of m between MoE models; a
    machine measured on no MoE model gets its dense efficiency plus this m0 (R9700 and Strix Halo, ROCm,
    each held out: 96 from the other)."""
    bs = [beta_for(beta, r.__dict__) for r in dense]
    effs = [r.prefill_tps * prefill_work(r.__dict__, b) / (r.tflops * 1e12) for r, b in zip(dense, bs, strict=True)]  # type: ignore[operator]
    groups = {"prefill": _fit_groups("prefill", dense, effs)}
    as_dense = [{**r.__dict__, "moe": False, "extra": {}} for r in moe]
    scores = []
    for m0 in grid:
        m = CalibrationModel({}, groups, {"prefill": {}}, {}, {"prefill": len(dense)}, beta,
                             moe_m0=dict.fromkeys(keys, m0))
        scores.append((statistics.median(abs(m.prefill_tps(g) / g["prefill_tps"] - 1) for g in as_dense), m0))  # type: ignore[operator]
    return min(scores)[1]

NATIVE_APIS = ("cuda", "rocm", "metal")  # the vendor's own compute API on its GPUs


def _fit_api_factor(rows: list[CalRow], effs: list[float]) -> dict[str, float]:
    """Prefill efficiency of a portable GPU API (Vulkan, SYCL) relative to the vendor's own (CUDA, ROCm,
    Metal) on the SAME machine: the median over machines measured with both of their median-efficiency
    ratio (paired, so the machine's own speed cancels). Needs two such machines; else no factor."""
    per: dict[tuple[str, str], list[float]] = defaultdict(list)
    for r, e in zip(rows, effs, strict=True):
        if accel_class(r.accel) == "gpu" and not r.multi:
            per[(r.hw_id, r.accel)].append(e)
    out: dict[str, float] = {}
    for api in sorted({a for _, a in per} - set(NATIVE_APIS)):
        ratios = []
        for (hw, a), v in per.items():
            if a != api:
                continue
            native = [x for (h2, a2), vv in per.items() if h2 == hw and a2 in NATIVE_APIS for x in vv]
            if native:
                ratios.append(statistics.median(v) / statistics.median(native))
        if len(ratios) >= 2:
            out[api] = statistics.median(ratios)
    return out

def _fit_gamma(rows: list[CalRow], effs: list[float]) -> dict[str, float]:
    """Compute-tier exponent per hardware kind (:data:`GAMMA_GRID`), scored on the kind's rows by the
    median error of the shared levels of the group chain (the machine's own level left out, so the tier
    term is judged on what it says about machines the fit has not seen)."""
    out: dict[str, float] = {}
    for kind in sorted({r.kind for r in rows}):
        idx = [i for i, r in enumerate(rows) if r.kind == kind and engine_family(r.engine) in TIER_ENGINES]
        if len({rows[i].hw_id for i in idx}) < 4:
            continue
        sub, sub_e = [rows[i] for i in idx], [effs[i] for i in idx]
        scores = []
        for gm in GAMMA_GRID:
            g = {kind: gm}
            groups = _fit_groups("prefill", sub, [e / tier_of(g, r.__dict__) for r, e in zip(sub, sub_e, strict=True)])
            errs = []
            for r, e in zip(sub, sub_e, strict=True):
                keys = group_keys("prefill", r)
                log_e = groups[keys[0]].log_eff if keys[0] in groups else 0.0
                for key in keys[1:5]:  # all → … → engine / format: no size, family or machine level
                    grp = groups.get(key)
                    if grp is not None:
                        log_e = (grp.n * grp.log_eff + SHRINK_K * log_e) / (grp.n + SHRINK_K)
                errs.append(abs(math.exp(log_e) * tier_of(g, r.__dict__) / e - 1))
            scores.append((statistics.median(errs), abs(gm), gm))
        out[kind] = min(scores)[2]
    return out
