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
import re
import statistics
from collections import defaultdict
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from advisor import roofline
from advisor.models import Calibration, ModelSpec

__all__ = [
    "CalRow", "CalibrationModel", "accel_class", "batched_keys", "bounded", "cpu_compute_factor", "cpu_qclass",
    "engine_family", "fit", "fit_batched",
    "group_keys", "qclass", "robust_center",
]

SHRINK_K = 2.0
BETA_GRID = (1.0, 1.5, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0)
# Prefill compute tier: the share of a GPU's FP16 peak llama.cpp-class kernels reach falls with the peak
# (H100 ~0.2, A100 ~0.4, A40 ~0.45 of spec on the same builds): efficiency × (TFLOPS / REF) ** gamma,
# gamma fitted per hardware kind on the grid below (0 = no tier effect), bench/accuracy.py.
PREFILL_TF_REF = 100.0
TIER_ENGINES = ("llama.cpp", "ik_llama.cpp")  # the engines the tier is fitted on and applied to
GAMMA_GRID = (-0.6, -0.5, -0.4, -0.3, -0.2, -0.1, 0.0)
UBATCH = 512  # llama.cpp's default micro-batch (n_ubatch)
# MoE prefill: a routed expert multiplies only the m tokens routed to it in a step, m = step × k / E, and its
# grouped matmul reaches m / (m + m0) of a dense one's efficiency (tile-filling; matmul tiles are 32–128 tokens, so m0 is searched up to 128).
# m0 is fitted per accelerator API (llama.cpp family) or engine family on MoE rows (bench/accuracy.py).
MOE_MIN_ROWS = 5  # MoE rows (empty cache) a key needs for an m0 of its own
POOLED_M0 = "gpu:llama.cpp"  # the m0 key pooled over the llama.cpp family's GPU APIs
MOE_M0_GRID = (0.0, 8.0, 16.0, 24.0, 32.0, 48.0, 64.0, 96.0, 128.0)  # up to the largest matmul tile (128 rows)


def pipeline_speedup(n_devices: int, prompt_tokens: int, *, engine: str = "llama.cpp", old_build: bool = False,
                     ubatch: int = 0) -> float:
    """Prefill speed-up of a layer split over ``n_devices`` GPUs from pipelining micro-batches.

    llama.cpp (2024 builds on) overlaps the ``m = ceil(P / n_ubatch)`` micro-batches of a prompt across
    the GPUs of a layer split: ideal speed-up ``m × N / (m + N − 1)`` (GPipe, Huang et al. 2019). A
    single micro-batch (P ≤ n_ubatch: ``ubatch``, default 512) gets none; 2023 builds had no pipelining.
    """
    if n_devices <= 1 or old_build or engine != "llama.cpp":
        return 1.0
    m = max(1, -(-int(prompt_tokens) // (ubatch or UBATCH)))
    return m * n_devices / (m + n_devices - 1)


def prefill_work(g: dict[str, Any], beta: float, m0: float = 0.0) -> float:
    """Effective FLOPs per prompt token: dense + β × attention + the MoE tile cost, over the pipeline speed-up.

    β > 1 says attention (softmax, KV reads; no fused kernel) runs at a fraction of matmul efficiency.
    MoE: the routed experts' share ``s`` of the active matmul FLOPs runs at ``m / (m + m0)`` of dense
    efficiency, ``m`` the tokens each expert multiplies per step (``g["expert_tokens"]``), so it costs
    ``s × 2 × P_active × m0 / m`` FLOPs more (:data:`MOE_M0_GRID`).
    """
    pipe = pipeline_speedup(g.get("n_devices", 1), g.get("prompt_tokens", 512), engine=g.get("engine", ""),
                            old_build=g.get("old_build", False), ubatch=g.get("ubatch") or 0)
    work = g["prefill_flops"] + (beta - 1.0) * g.get("prefill_attn_flops", 0.0)
    m, share = g.get("expert_tokens") or 0.0, g.get("expert_flop_share") or 0.0
    if m0 and m > 0 and share > 0:
        work += share * 2e9 * g["params_active_b"] * m0 / m
    return work / pipe
T0_GRID_MS = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0)


@lru_cache(maxsize=1024)
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


def bw_tier(bandwidth_gbs: float | None) -> str:
    """Memory-bandwidth class: ``hbm`` above 1.5 TB/s (datacenter HBM), else ``dram``."""
    return "hbm" if (bandwidth_gbs or 0) > 1500 else "dram"


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
    n_devices: int = 1
    old_build: bool = False
    prefill_attn_flops: float = 0.0
    prompt_tokens: int = 512
    moe: bool = False
    cpu_cores: int = 0
    expert_tokens: float = 0.0  # MoE: tokens each routed expert multiplies per prefill step (m)
    expert_flop_share: float = 0.0  # MoE: share of the active matmul FLOPs in routed experts (s)
    ubatch: int = 0  # the run's prefill micro-batch when its command gives one (llama.cpp -ub); 0: engine default
    extra: dict[str, Any] = field(default_factory=dict)


def group_keys(phase: str, r: CalRow | dict[str, Any]) -> list[tuple[str, ...]]:
    """Group keys from coarse to fine for a row (or a scenario with the same fields).

    A row's keys are kept in its ``extra`` (the fit asks for them many times).
    """
    g = r if isinstance(r, dict) else r.__dict__
    extra = g.get("extra")
    memo = ("_keys", phase)
    if isinstance(extra, dict) and memo in extra:
        return extra[memo]  # type: ignore[no-any-return]
    keys = _group_keys(phase, g)
    if isinstance(extra, dict):
        extra[memo] = keys
    return keys


def _group_keys(phase: str, g: dict[str, Any]) -> list[tuple[str, ...]]:
    ac = accel_class(g["accel"])
    kind = g["kind"] + ("-multi" if g["multi"] else "")
    size = "small" if g.get("params_active_b", 8) < 3 else ("large" if g.get("params_active_b", 8) > 30 else "mid")
    # MoE decode and prefill gather expert weights (scattered reads, grouped matmuls): below the share of the
    # roofline dense models reach on the same machine, so below the engine level they are fitted apart.
    eng = g["engine"] + ("/moe" if g.get("moe") else "")
    keys: list[tuple[str, ...]] = [("all",), (ac,), (ac, kind), (ac, kind, g["engine"])]
    if g.get("moe"):
        keys.append((ac, kind, eng))
    if g["multi"]:
        # llama.cpp's multi-GPU split was much slower in 2023 builds; predictions assume a current build.
        keys.append((ac, kind, eng, "era:" + ("2023" if g.get("old_build") else "current")))
    if phase == "prefill":
        keys.append((ac, kind, eng, qclass(g["quant"])))
        keys.append((ac, kind, eng, qclass(g["quant"]), size))
        keys.append((ac, kind, eng, qclass(g["quant"]), size, g["family"]))
        keys.append((ac, g["hw_id"], eng, qclass(g["quant"])))
    else:
        keys.append((ac, kind, eng, qclass(g["quant"])))
        # HBM-class bandwidth (> 1.5 TB/s) is much harder for single-stream kernels to saturate.
        keys.append((ac, kind, eng, qclass(g["quant"]), bw_tier(g["bandwidth_gbs"])))
        keys.append((ac, kind, eng, qclass(g["quant"]), bw_tier(g["bandwidth_gbs"]), g["family"]))
        keys.append((ac, g["hw_id"], eng))
    return keys


@dataclass
class _Group:
    n: int
    log_eff: float
    sources: set[str]
    max_batch: int = 0  # batched groups: the largest batch measured in the group
    weight: float = -1.0  # shrinkage weight: rows × their source's quality (SOURCE_QUALITY); -1: = n

    @property
    def w(self) -> float:
        return self.n if self.weight < 0 else self.weight


@dataclass
class CalibrationModel:
    """Fitted efficiencies; ``efficiency()`` walks the groups of a scenario from coarse to fine."""

    t0_s: dict[str, float]
    groups: dict[str, dict[tuple[str, ...], _Group]]
    residuals: dict[str, dict[str, tuple[float, float]]]
    compute_per_bw: dict[str, float]
    n_rows: dict[str, int]
    beta: dict[str, float] = field(default_factory=dict)
    batched: dict[tuple[str, ...], _Group] = field(default_factory=dict)
    prefill_gamma: dict[str, float] = field(default_factory=dict)
    api_factor: dict[str, float] = field(default_factory=dict)
    moe_m0: dict[str, float] = field(default_factory=dict)

    def expert_m0(self, g: dict[str, Any]) -> float:
        """Fitted MoE tile constant m0 of a scenario (tokens; 0 = expert matmuls as efficient as dense)."""
        return m0_for(self.moe_m0, g)

    def tier_factor(self, scenario: dict[str, Any]) -> float:
        """Prefill compute-tier factor ``(TFLOPS / PREFILL_TF_REF) ** gamma[kind]`` for the llama.cpp family
        (1 without a fit or a figure, and for vLLM/SGLang/MLX, whose kernels the fitted rows do not show)."""
        gamma = self.prefill_gamma.get(str(scenario.get("kind")), 0.0)
        tf = scenario.get("tflops")
        if not (gamma and tf) or engine_family(scenario.get("engine")) not in TIER_ENGINES:
            return 1.0
        return float((tf / PREFILL_TF_REF) ** gamma)

    def batched_max_batch(self, scenario: dict[str, Any]) -> int:
        """Largest batch measured in the finest batched group of ``scenario`` (0: none): the calibrated
        factor is held at its value there instead of being extrapolated to batches nobody measured."""
        top = 0
        for key in batched_keys(scenario):
            g = self.batched.get(key)
            if g is not None and g.max_batch:
                top = g.max_batch
        return top

    def batched_slope(self, scenario: dict[str, Any]) -> tuple[float, str]:
        """Slope ``s`` of the batched factor ``b ** s`` (measured ÷ step-model aggregate decode) and its source.

        Fitted per engine family and hardware on measured batches (:func:`fit_batched`), each level
        shrunk toward its parent and the root toward 0 (physics alone) with weight ``k / (n + k)``.
        """
        slope, used, n_used = 0.0, "", 0
        for key in batched_keys(scenario):
            g = self.batched.get(key)
            if g is None:
                continue
            slope = (g.n * g.log_eff + SHRINK_K * slope) / (g.n + SHRINK_K)
            used, n_used = " / ".join(key), g.n
        if not n_used:
            return 0.0, "batch > 1: step model only (no measured batches to calibrate on)"
        return slope, (f"batch > 1: step model × batch^{slope:+.3f}, fitted on measured batches "
                       f"(group {used}, {n_used} rows)")

    def efficiency(self, phase: str, scenario: dict[str, Any]) -> Calibration:
        """Shrunk efficiency for ``phase`` ("decode" | "prefill") and where it came from."""
        groups = self.groups[phase]
        log_e = groups[("all",)].log_eff if ("all",) in groups else math.log(0.5)
        used: tuple[str, ...] = ("all",)
        n_used = groups[("all",)].n if ("all",) in groups else 0
        sources: set[str] = set()
        for key in group_keys(phase, scenario)[1:]:
            g = groups.get(key)
            if g is None:
                continue
            log_e = (g.w * g.log_eff + SHRINK_K * log_e) / (g.w + SHRINK_K)
            used, n_used, sources = key, g.n, g.sources
        kind = scenario["kind"] + ("-multi" if scenario["multi"] else "")
        ac = accel_class(scenario["accel"])
        lo, hi = self.residuals[phase].get(f"{ac}:{kind}") or (0.6, 1.6)
        # Prefill only: decode fitted with an API factor lost accuracy on the hold-out (bench/accuracy.py).
        tier = (self.tier_factor(scenario) * self.api_factor.get(str(scenario.get("accel")), 1.0)
                if phase == "prefill" else 1.0)
        return Calibration(
            phase="decode" if phase == "decode" else "prefill", efficiency=math.exp(log_e) * tier, group=" / ".join(used), n_rows=n_used,
            source_sets=sorted(sources), p10_ratio=lo, p90_ratio=hi,
            note=f"fitted on {self.n_rows[phase]} measured rows; this group has {n_used}",
        )

    def decode_tps(self, r: dict[str, Any] | CalRow, eff: float | None = None) -> float:
        g = r if isinstance(r, dict) else r.__dict__
        e = eff if eff is not None else self.efficiency("decode", g).efficiency
        t0 = self.t0_s.get(t0_key(g), self.t0_s.get(accel_class(g["accel"]), 0.0))
        return 1.0 / (g["decode_bytes"] / (g["bandwidth_gbs"] * roofline.GB * e) + t0)

    def prefill_tps(self, r: dict[str, Any] | CalRow, eff: float | None = None) -> float | None:
        g = r if isinstance(r, dict) else r.__dict__
        tf = g["tflops"]
        if not tf:
            return None
        e = eff if eff is not None else self.efficiency("prefill", g).efficiency
        return tf * 1e12 * e / prefill_work(g, self.attention_beta(g), self.expert_m0(g))

    def attention_beta(self, g: dict[str, Any]) -> float:
        """Attention cost factor β of a scenario: fitted per API on llama.cpp-family rows; 1 for engines
        with fused attention kernels (vLLM/SGLang/TensorRT-LLM FlashAttention, MLX SDPA)."""
        return self.beta.get(g["accel"], 1.0) if engine_family(g.get("engine")) in TIER_ENGINES else 1.0


def _decode_eff(r: CalRow, t0: float) -> float | None:
    if not r.decode_tps or r.decode_tps <= 0:
        return None
    t = 1.0 / r.decode_tps - t0
    if t <= 1e-6:
        return None
    return r.decode_bytes / (r.bandwidth_gbs * roofline.GB * t)


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
    acc: dict[tuple[str, ...], list[tuple[float, str, str]]] = defaultdict(list)
    for r, e in zip(rows, effs, strict=True):
        for key in group_keys(phase, r):
            acc[key].append((math.log(e), r.source_set, r.hw_id))
    # Decode: user collections often read decode low (total output / wall time), so sources are
    # reweighted; prefill rates depend on prompt length and build more than on the source, and the
    # reweighting costs accuracy there (bench/accuracy.py): plain medians.
    center = robust_center if phase == "decode" and robust else (lambda v: statistics.median(x for x, *_ in v))
    return {k: _Group(n=len(v), log_eff=center(v), sources={s for _, s, _ in v},
                      weight=sum(SOURCE_QUALITY.get(s, 1.0) for _, s, _ in v) if phase == "decode" else -1.0)
            for k, v in acc.items()}


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


def t0_key(g: dict[str, Any] | CalRow) -> str:
    """Key of the fixed per-token cost: accelerator class and hardware kind."""
    d = g if isinstance(g, dict) else g.__dict__
    return f"{accel_class(d['accel'])}:{d['kind']}"


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
    measured = [r for r in rows if r.decode_tps]
    for ac in ("gpu", "cpu"):
        sub = [r for r in measured if accel_class(r.accel) == ac]
        t = _best_t0(sub, ac) if sub else None
        best[ac] = t if t is not None else 0.0
    for key in sorted({t0_key(r) for r in measured}):
        sub = [r for r in measured if t0_key(r) == key]
        if len(sub) >= 10:
            t = _best_t0(sub, key)
            if t is not None:
                best[key] = t
    kept, effs = [], []
    for r in rows:
        e = _decode_eff(r, best.get(t0_key(r), best[accel_class(r.accel)]))
        if e and min_decode_eff(r) < e < 3:
            kept.append(r)
            effs.append(e)
    return best, _fit_groups("decode", kept, effs), kept


def m0_key(g: dict[str, Any]) -> str:
    """Key of the MoE tile constant: the accelerator API for the llama.cpp family (its kernels per API),
    else the engine family (vLLM/SGLang fused-MoE kernels, MLX gather_qmm)."""
    fam = engine_family(g.get("engine"))
    return str(g.get("accel")) if fam in TIER_ENGINES else fam


# Keys never given the pooled GPU value: CPUs, MLX and servers (other kernels), and Metal, whose llama.cpp MoE
# rows (M1 Max, M4 Pro) run as fast relative to dense as MLX's do (no tile penalty seen; too few for a fit).
_OWN_M0 = ("cpu", "mlx", "server", "metal")


def m0_for(m0s: dict[str, float], g: dict[str, Any]) -> float:
    """m0 of a scenario from fitted values: its own key's, else (a GPU API without enough MoE rows of its
    own, CUDA on a DGX Spark) the value pooled over the llama.cpp family's GPU APIs, so its MoE rate is not
    read off m0-corrected (dense-equivalent) efficiencies uncorrected; :data:`_OWN_M0` keys: 0 unless fitted."""
    key = m0_key(g)
    if key in m0s or key in _OWN_M0:
        return m0s.get(key, 0.0)
    return m0s.get(POOLED_M0, 0.0)


def _fit_moe_m0(rows: list[CalRow], beta: dict[str, float]) -> dict[str, float]:
    """m0 per :func:`m0_key` on the grid: the value at which MoE rows' prefill agrees best with the dense
    rows of the same groups (median absolute error of the MoE rows), on runs from an empty cache; keys with
    under MOE_MIN_ROWS MoE rows get none (GPU APIs: the pooled value, :func:`m0_for`)."""
    out: dict[str, float] = {}
    by: dict[str, list[CalRow]] = defaultdict(list)
    for r in rows:
        if not r.extra.get("depth"):  # at depth the attention cost (β) would be confounded with the expert term
            key = m0_key(r.__dict__)
            by[key].append(r)
            if key not in _OWN_M0:
                by[POOLED_M0].append(r)
    for key, sub in sorted(by.items()):
        moe = [r for r in sub if r.moe and r.expert_tokens]
        if len(moe) < MOE_MIN_ROWS or len(sub) == len(moe):
            continue
        scores = []
        for m0 in MOE_M0_GRID:
            bs = [beta.get(r.accel, 1.0) if engine_family(r.engine) in TIER_ENGINES else 1.0 for r in sub]
            effs = [r.prefill_tps * prefill_work(r.__dict__, b, m0) / (r.tflops * 1e12) for r, b in zip(sub, bs, strict=True)]  # type: ignore[operator]
            m = CalibrationModel({}, {"prefill": _fit_groups("prefill", sub, effs)}, {"prefill": {}}, {},
                                 {"prefill": len(sub)}, beta, moe_m0={key: m0})
            scores.append((statistics.median(abs(m.prefill_tps(r) / r.prefill_tps - 1) for r in moe), m0))  # type: ignore[operator]
        out[key] = min(scores)[1]
    return out


def fit(rows: list[CalRow]) -> CalibrationModel:
    """Fit decode and prefill efficiencies on measured rows (pure; no store access).

    Rows without a hardware compute figure inform the compute-per-bandwidth ratio used to
    estimate it for hardware with no FLOPS spec (labelled as an estimate by the caller).
    """
    t0, dec_groups, dec_rows = _fit_decode(rows)
    beta: dict[str, float] = {}
    pre_all = [r for r in rows if r.prefill_tps and r.tflops]
    for accel in sorted({r.accel for r in pre_all}):
        # Dense models only: MoE prefill runs grouped expert matmuls at their own efficiency, which would
        # masquerade as attention cost (a hybrid MoE with 6 attention layers of 52 moved ROCm's β from 6 to 2).
        # Catalog shapes only: a generic model's attention is borrowed from another model of its size.
        sub = [r for r in pre_all if r.accel == accel and engine_family(r.engine) in TIER_ENGINES and not r.moe
               and not r.extra.get("generic")]
        if len({r.prompt_tokens for r in sub}) < 2:
            continue
        scores = []
        for b in BETA_GRID:
            effs = [r.prefill_tps * prefill_work(r.__dict__, b) / (r.tflops * 1e12) for r in sub]  # type: ignore[operator]
            groups = _fit_groups("prefill", sub, effs)
            m = CalibrationModel({}, {"prefill": groups}, {"prefill": {}}, {}, {"prefill": len(sub)}, {accel: b})
            scores.append((statistics.median(abs(m.prefill_tps(r) / r.prefill_tps - 1) for r in sub), b))  # type: ignore[operator]
        beta[accel] = min(scores)[1]
    m0s = _fit_moe_m0(pre_all, beta)
    pre_rows, pre_effs = [], []
    for r in pre_all:
        b = beta.get(r.accel, 1.0) if engine_family(r.engine) in TIER_ENGINES else 1.0
        e = r.prefill_tps * prefill_work(r.__dict__, b, m0_for(m0s, r.__dict__)) / (r.tflops * 1e12)  # type: ignore[operator]
        if 0.001 < e < 3:
            pre_rows.append(r)
            pre_effs.append(e)
    api = _fit_api_factor(pre_rows, pre_effs)
    pre_effs = [e / api.get(r.accel, 1.0) for r, e in zip(pre_rows, pre_effs, strict=True)]
    gamma = _fit_gamma(pre_rows, pre_effs)
    pre_groups = _fit_groups("prefill", pre_rows, [e / _tier(r, gamma) for r, e in zip(pre_rows, pre_effs, strict=True)])
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


def cpu_qclass(quant: str | None) -> str:
    """Weight-format class by CPU matmul kernel speed: ``legacy`` (Q4_0/Q4_1/Q5_x/Q8_0/IQ4_NL: simple
    blocks, repacked int8 paths), ``kquant`` (Q2_K…Q6_K), ``iq`` (IQ1…IQ3, IQ4_XS: codebook lookups),
    ``float`` (F16/BF16/F32), ``other``. ik_llama.cpp's repacked ``_R4``/``_R8`` count as their base."""
    q = re.sub(r"_r\d+$", "", (quant or "").lower().removeprefix("ud-"))
    if q in ("f16", "bf16", "f32", "fp16"):
        return "float"
    if re.fullmatch(r"q[458]_[01]|iq4_nl", q):
        return "legacy"
    if re.fullmatch(r"q[2-6]_k(_[sml]|_xl)?", q):
        return "kquant"
    if re.fullmatch(r"iq[1-3]_\w+|iq4_xs", q):
        return "iq"
    return "other"


def _machine_ratio(items: list[tuple[str, str, float]]) -> dict[str, float]:
    """Per label, the median over machines of (machine's median rate with that label ÷ machine's median
    rate over all its labels): paired within machines, so each machine's own speed cancels.
    ``items``: (machine, label, rate)."""
    per: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for hw, lab, x in items:
        per[hw][lab].append(x)
    ratios: dict[str, list[float]] = defaultdict(list)
    for labs in per.values():
        if len(labs) < 2:
            continue
        centre = statistics.median(statistics.median(v) for v in labs.values())
        for lab, v in labs.items():
            ratios[lab].append(statistics.median(v) / centre)
    return {lab: statistics.median(v) for lab, v in ratios.items()}


def _fit_cpu_per_core(rows: list[CalRow]) -> dict[str, float]:
    """Achieved prefill compute per CPU core (TFLOP/s) and its factors by engine and weight format.

    CPU matmul throughput scales with cores (SIMD units), not with memory bandwidth, and depends on the
    format's kernel (Q4_0 and IQ4_NL have repacked int8 paths; IQ2/IQ3 decode codebooks) and on the
    engine (ik_llama.cpp's CPU kernels run several times mainline's). Factors are paired within
    machines (:func:`_machine_ratio`); the base (``cpu-per-core:base``) is the median over machines of
    each machine's median rate with the factors divided out; a prediction uses base × factors for prefill
    and for the compute of a decode step alike. ``cpu-per-core`` (the median of all rows pooled) is the
    figure when format and engine are not known. Factor keys: ``cpu-per-core:q:<class>``,
    ``cpu-per-core:e:<engine family>``.
    """
    if not rows:
        return {}
    rate = [r.prefill_tps * r.prefill_flops / 1e12 / r.cpu_cores for r in rows]  # type: ignore[operator]
    main = [(r.hw_id, cpu_qclass(r.quant), x) for r, x in zip(rows, rate, strict=True)
            if engine_family(r.engine) == "llama.cpp"]
    fq = _machine_ratio(main)
    eng = [(r.hw_id + "|" + cpu_qclass(r.quant), engine_family(r.engine), x) for r, x in zip(rows, rate, strict=True)]
    fe_raw = _machine_ratio(eng)
    base_e = fe_raw.get("llama.cpp", 1.0)
    fe = {e: v / base_e for e, v in fe_raw.items() if e != "llama.cpp"}
    per_hw: dict[str, list[float]] = defaultdict(list)
    for r, x in zip(rows, rate, strict=True):
        per_hw[r.hw_id].append(x / fq.get(cpu_qclass(r.quant), 1.0) / fe.get(engine_family(r.engine), 1.0))
    out = {"cpu-per-core": statistics.median(rate),  # all rows pooled: format and engine unknown
           "cpu-per-core:base": statistics.median(statistics.median(v) for v in per_hw.values())}
    base = out["cpu-per-core:base"]
    for hw, v in per_hw.items():  # a measured machine's own rate, shrunk toward the base like a group level
        n = len(v)
        out[f"cpu-per-core:hw:{hw}"] = math.exp((n * math.log(statistics.median(v)) + SHRINK_K * math.log(base))
                                                / (n + SHRINK_K))
    out.update({f"cpu-per-core:q:{k}": v for k, v in fq.items()})
    out.update({f"cpu-per-core:e:{k}": v for k, v in fe.items()})
    return out


def cpu_compute_factor(cal: CalibrationModel, quant: str | None, engine: str | None) -> float:
    """Format × engine factor on the fitted per-core CPU compute (1 where the fit has none)."""
    c = cal.compute_per_bw
    return c.get(f"cpu-per-core:q:{cpu_qclass(quant)}", 1.0) * c.get(f"cpu-per-core:e:{engine_family(engine)}", 1.0)


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


def _tier(r: CalRow, gamma: dict[str, float]) -> float:
    g = gamma.get(r.kind, 0.0)
    if not (g and r.tflops) or engine_family(r.engine) not in TIER_ENGINES:
        return 1.0
    return float((r.tflops / PREFILL_TF_REF) ** g)


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
            groups = _fit_groups("prefill", sub, [e / _tier(r, g) for r, e in zip(sub, sub_e, strict=True)])
            errs = []
            for r, e in zip(sub, sub_e, strict=True):
                keys = group_keys("prefill", r)
                log_e = groups[keys[0]].log_eff if keys[0] in groups else 0.0
                for key in keys[1:5]:  # all → … → engine / format: no size, family or machine level
                    grp = groups.get(key)
                    if grp is not None:
                        log_e = (grp.n * grp.log_eff + SHRINK_K * log_e) / (grp.n + SHRINK_K)
                errs.append(abs(math.exp(log_e) * _tier(r, g) / e - 1))
            scores.append((statistics.median(errs), abs(gm), gm))
        out[kind] = min(scores)[2]
    return out


def engine_family(engine: str | None) -> str:
    """``server`` (vLLM, SGLang, TensorRT-LLM: continuous batching, paged KV), ``mlx``, ``ik_llama.cpp``
    (the fork batches through other kernels) or ``llama.cpp`` (Ollama, LM Studio, llama-server)."""
    e = (engine or "").lower()
    if any(x in e for x in ("vllm", "sglang", "tensorrt", "trt")):
        return "server"
    if "mlx" in e:
        return "mlx"
    return "ik_llama.cpp" if "ik_llama" in e else "llama.cpp"


def batched_keys(g: dict[str, Any]) -> list[tuple[str, ...]]:
    """Group keys of the batched factor, coarse to fine: engine family, accelerator, kind, hardware."""
    ef, ac = engine_family(g.get("engine")), accel_class(g.get("accel"))
    return [("all",), (ef,), (ef, ac), (ef, ac, str(g.get("kind"))), (ef, ac, str(g.get("hw_id")))]


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
    return {k: _Group(n=len(v), log_eff=robust_center(v), sources={s for _, s, _ in v}, max_batch=top[k])
            for k, v in acc.items()}


def attention_flops(model: ModelSpec, prompt_tokens: int, depth: int) -> float:
    """Attention FLOPs per prompt token at the mean context ``depth + P/2``."""
    return roofline.attention_flops_per_token(model, depth + (prompt_tokens or 512) / 2.0)


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
