"""The fitted efficiency model and the features it reads: rows, group keys, prefill work, engine families.

A prediction is ceiling × efficiency (DESIGN.md); :class:`CalibrationModel` holds the fitted efficiencies
and the prefill terms (attention factor β, compute tier γ, API factor, MoE tile constant m0) and turns a
scenario's features into tok/s. The fits live in :mod:`advisor.calibration` (groups, decode, prefill
terms, CPU compute).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from advisor import roofline
from advisor.models import Calibration, ModelSpec

SHRINK_K = 2.0
MACHINE_SWEEPS = 2  # independent (source, machine) sweeps a machine's own batched factor needs (batched_slope)
# Prefill compute tier: the share of a GPU's FP16 peak llama.cpp-class kernels reach falls with the peak
# (H100 ~0.2, A100 ~0.4, A40 ~0.45 of spec on the same builds): efficiency × (TFLOPS / REF) ** gamma,
# gamma fitted per hardware kind (advisor.calibration._terms.GAMMA_GRID; 0 = no tier effect), bench/accuracy.py.
PREFILL_TF_REF = 100.0
TIER_ENGINES = ("llama.cpp", "ik_llama.cpp")  # the engines the tier (and β) is fitted on and applied to
UBATCH = 512  # llama.cpp's default micro-batch (n_ubatch)
POOLED_M0 = "gpu:llama.cpp"  # the MoE tile-constant key pooled over the llama.cpp family's GPU APIs
# Keys never given the pooled GPU value: CPUs, MLX and servers (other kernels), and Metal, whose llama.cpp MoE
# rows (M1 Max, M4 Pro) run as fast relative to dense as MLX's do (a small fitted m0 of their own, no pooled one).
_OWN_M0 = ("cpu", "mlx", "server", "metal")


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


def soc_tier(hw_id: str | None) -> str:
    """An Apple chip's tier from its catalog id (``apple-m3-ultra-80gpu`` → ``ultra``; ``pro``, ``max``, else
    ``base``): how much of the memory system one GPU reaches at decode depends on it (bench/accuracy.py)."""
    h = str(hw_id or "").lower()
    return next((t for t in ("ultra", "max", "pro") if f"-{t}" in h), "base")


def accel_class(accel: str | None) -> str:
    return "cpu" if accel == "cpu" else "gpu"


def engine_family(engine: str | None) -> str:
    """``server`` (vLLM, SGLang, TensorRT-LLM: continuous batching, paged KV), ``mlx``, ``ik_llama.cpp``
    (the fork batches through other kernels) or ``llama.cpp`` (Ollama, LM Studio, llama-server)."""
    e = (engine or "").lower()
    if any(x in e for x in ("vllm", "sglang", "tensorrt", "trt")):
        return "server"
    if "mlx" in e:
        return "mlx"
    return "ik_llama.cpp" if "ik_llama" in e else "llama.cpp"


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
    flash_attn: bool = True  # llama.cpp family: the run used flash attention (advisor.perf.fit.row_flash_attn)
    cpu_cores: int = 0
    cpu_core_speed: float = 1.0  # a core's FP32 peak ÷ the reference core's (knowledge.cpu_uarch.core_speed)
    expert_tokens: float = 0.0  # MoE: tokens each routed expert multiplies per prefill step (m)
    expert_flop_share: float = 0.0  # MoE: share of the active matmul FLOPs in routed experts (s)
    ubatch: int = 0  # the run's prefill micro-batch when its command gives one (llama.cpp -ub); 0: engine default
    n_layers: int = 0  # the model's transformer layers (0: not known); a GPU's fixed per-token cost scales with them
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
    # A multi-GPU decode's MoE-ness is carried by its one card's chain (CalibrationModel.efficiency, split_cost_log;
    # the fit enters multi-GPU MoE rows dense-equivalent, moe_split_log), not by multi-GPU MoE keys of its own.
    moe = bool(g.get("moe")) and not (phase == "decode" and g["multi"])
    eng = g["engine"] + ("/moe" if moe else "")
    keys: list[tuple[str, ...]] = [("all",), (ac,), (ac, kind), (ac, kind, g["engine"])]
    if moe:
        keys.append((ac, kind, eng))
    if g["multi"]:
        # llama.cpp's multi-GPU split was much slower in 2023 builds; predictions assume a current build.
        keys.append((ac, kind, eng, "era:" + ("2023" if g.get("old_build") else "current")))
    if phase == "prefill":
        keys.append((ac, kind, eng, qclass(g["quant"])))
        keys.append((ac, kind, eng, qclass(g["quant"]), size))
        keys.append((ac, kind, eng, qclass(g["quant"]), size, g["family"]))
        keys.append((ac, g["hw_id"], eng, qclass(g["quant"])))
    elif g["kind"] == "apple_soc" and not g["multi"]:
        tier = soc_tier(g["hw_id"])
        keys.append((ac, kind, eng, "tier:" + tier))
        keys.append((ac, kind, eng, "tier:" + tier, qclass(g["quant"])))
        keys.append((ac, kind, eng, "tier:" + tier, qclass(g["quant"]), g["family"]))
        keys.append((ac, g["hw_id"], eng))
    else:
        # a layer split's finer levels keep its build era: 2023 builds' slow splits do not set a current one's format level
        era = ("era:" + ("2023" if g.get("old_build") else "current"),) if g["multi"] else ()
        keys.append((ac, kind, eng, *era, qclass(g["quant"])))
        # HBM-class bandwidth (> 1.5 TB/s) is much harder for single-stream kernels to saturate.
        keys.append((ac, kind, eng, *era, qclass(g["quant"]), bw_tier(g["bandwidth_gbs"])))
        keys.append((ac, kind, eng, *era, qclass(g["quant"]), bw_tier(g["bandwidth_gbs"]), g["family"]))
        keys.append((ac, g["hw_id"], eng))
    return keys


def walk(groups: dict[tuple[str, ...], _Group], keys: list[tuple[str, ...]], start: float,
         ) -> tuple[float, tuple[str, ...], int, set[str]]:
    """Shrink ``start`` (log) through ``keys``' groups, coarse to fine (weight ``w / (w + SHRINK_K)`` each):
    (log value, finest group used (``("",)``: none), its rows, its sources)."""
    log_e: float = start
    used: tuple[str, ...] = ("",)
    n_used, sources = 0, set()
    for key in keys:
        g = groups.get(key)
        if g is None:
            continue
        log_e = (g.w * g.log_eff + SHRINK_K * log_e) / (g.w + SHRINK_K)
        used, n_used, sources = key, g.n, g.sources
    return log_e, used, n_used, sources


def moe_split_log(groups: dict[tuple[str, ...], "_Group"], g: dict[str, Any]) -> float:
    """log(MoE ÷ dense decode efficiency) of one of a multi-GPU scenario's cards, from the one-card groups.

    A layer split runs each card's layers as the card alone would, so a MoE on several cards keeps the
    MoE-to-dense ratio the same card shows alone (hundreds of one-card MoE rows over many machines): the fit divides
    a multi-GPU MoE row by it to enter the (dense) multi-GPU groups; a prediction composes the card's MoE chain with
    :func:`split_cost_log` instead. Fitting MoE multi-GPU groups of their own let six
    2× R9700 rows of hybrid Mamba MoEs set every multi-GPU MoE prediction (a 2× RTX A6000 with Mixtral 8x7B
    was predicted at 17.6 tok/s against ~66 on one card)."""
    root = groups[("all",)].log_eff if ("all",) in groups else 0.0
    one = {**g, "multi": False, "n_devices": 1, "extra": None}
    moe = walk(groups, _group_keys("decode", {**one, "moe": True})[1:], root)[0]
    dense = walk(groups, _group_keys("decode", {**one, "moe": False})[1:], root)[0]
    return moe - dense


def multi_moe_key(g: dict[str, Any]) -> tuple[str, ...]:
    """The machine's own multi-GPU MoE decode group (its measured MoE runs on this many cards), walked last."""
    return (accel_class(g["accel"]), str(g["hw_id"]), f"x{int(g.get('n_devices') or 1)}", str(g["engine"]) + "/moe")


def split_cost_log(groups: dict[tuple[str, ...], "_Group"], g: dict[str, Any]) -> float:
    """log(multi-GPU ÷ one-card dense decode efficiency) at the engine and build-era level: what a layer split of this
    engine costs, from the multi-GPU groups (no format or family level: MXFP4 is a "legacy" block format there, whose
    multi-GPU rows are 2023 builds' Q4_0)."""
    root = groups[("all",)].log_eff if ("all",) in groups else 0.0
    dense = {**g, "moe": False, "extra": None}
    multi = _group_keys("decode", {**dense, "multi": True})[1:5]  # (ac), (ac, kind-multi), (… engine), (… era)
    one = _group_keys("decode", {**dense, "multi": False, "n_devices": 1})[1:4]  # (ac), (ac, kind), (… engine)
    return walk(groups, multi, root)[0] - walk(groups, one, root)[0]


@dataclass
class _Group:
    n: int
    log_eff: float
    sources: set[str]
    max_batch: int = 0  # batched groups: the largest batch measured in the group
    weight: float = -1.0  # shrinkage weight: rows × their source's quality (SOURCE_QUALITY); -1: = n
    one_card: int = -1  # rows run on one card (-1: not counted)

    @property
    def w(self) -> float:
        return self.n if self.weight < 0 else self.weight

def m0_key(g: dict[str, Any]) -> str:
    """Key of the MoE tile constant: the accelerator API for the llama.cpp family (its kernels per API),
    else the engine family (vLLM/SGLang fused-MoE kernels, MLX gather_qmm)."""
    fam = engine_family(g.get("engine"))
    if fam not in TIER_ENGINES:
        return fam
    return str(g.get("accel")) + _float_suffix(g)


def _float_suffix(g: dict[str, Any]) -> str:
    """``:float`` for a GPU run of BF16/F16 weights: llama.cpp multiplies quantized experts in one grouped
    kernel (MMQ ``mul_mat_id``) but unquantized ones expert by expert through the BLAS path, so their tile
    cost is its own (Qwen3-Coder-30B-A3B, 512-token prompt, one R9700 on ROCm: BF16 1,623 tok/s, Q8_0 3,013; kyuz0
    r9700 toolboxes, in the store)."""
    return ":float" if accel_class(g.get("accel")) == "gpu" and qclass(g.get("quant")) == "float" else ""


def pooled_m0_key(g: dict[str, Any]) -> str:
    """The pooled GPU key a scenario falls back to (:data:`POOLED_M0`, split by :func:`_float_suffix`)."""
    return POOLED_M0 + _float_suffix(g)


def m0_for(m0s: dict[str, float], g: dict[str, Any]) -> float:
    """m0 of a scenario from fitted values: its own key's, else (a GPU API without enough MoE rows of its
    own, CUDA on a DGX Spark) the value pooled over the llama.cpp family's GPU APIs, so its MoE rate is not
    read off m0-corrected (dense-equivalent) efficiencies uncorrected; :data:`_OWN_M0` keys: 0 unless fitted."""
    key = m0_key(g)
    if key in m0s or key.split(":")[0] in _OWN_M0:
        return m0s.get(key, 0.0)
    if pooled_m0_key(g) in m0s:
        return m0s[pooled_m0_key(g)]
    # BF16/F16 experts with no float fit of their own: at least the quantized experts' tile cost
    quant = {**g, "quant": "q8_0"}
    return m0_for(m0s, quant) if _float_suffix(g) else 0.0


def beta_key(g: dict[str, Any]) -> str:
    """The β key of a row or scenario: its API, with ``:nofa`` when it ran without flash attention."""
    return str(g["accel"]) + ("" if g.get("flash_attn", True) else ":nofa")


def beta_for(beta: dict[str, float], g: dict[str, Any]) -> float:
    """Attention cost factor β of a scenario: fitted per API and flash-attention state on llama.cpp-family
    rows (an API without a fit for the state takes the other state's); 1 for engines with fused attention
    kernels (vLLM/SGLang/TensorRT-LLM FlashAttention, MLX SDPA)."""
    if engine_family(g.get("engine")) not in TIER_ENGINES:
        return 1.0
    key = beta_key(g)
    return beta.get(key, beta.get(str(g["accel"]), beta.get(str(g["accel"]) + ":nofa", 1.0)))


def tier_of(gamma: dict[str, float], g: dict[str, Any]) -> float:
    """Prefill compute-tier factor ``(TFLOPS / PREFILL_TF_REF) ** gamma[kind]`` for the llama.cpp family
    (1 without a fit or a figure, and for vLLM/SGLang/MLX, whose kernels the fitted rows do not show)."""
    gm, tf = gamma.get(str(g.get("kind")), 0.0), g.get("tflops")
    if not (gm and tf) or engine_family(g.get("engine")) not in TIER_ENGINES:
        return 1.0
    return float((tf / PREFILL_TF_REF) ** gm)


# t0_s key of vLLM's V0 engine's host work per sequence per step, s (advisor.perf.fit.fit_v0_host): before 0.8
# the scheduler, input preparation, sampling and detokenisation ran in the GPU's loop, one sequence at a time
# (vLLM V1, the default from 0.8, moved them out of it; vLLM blog "vLLM V1", Jan 2025).
V0_HOST_KEY = "server:vllm-v0"
MOE_T0_KEY = "gpu:moe"  # t0_s key of the extra fixed time per MoE token (advisor.calibration._fit_moe_t0)


def moe_t0_applies(g: dict[str, Any], *, moe_only: bool = True) -> bool:
    """Whether the MoE fixed cost applies to a row or scenario: a MoE model (unless ``moe_only`` is off) on a GPU
    API with a llama.cpp-family or MLX engine (vLLM/SGLang fused-MoE kernels are not in the fit)."""
    return ((bool(g.get("moe")) or not moe_only) and accel_class(g.get("accel")) == "gpu"
            and engine_family(g.get("engine")) != "server")


def row_t0(t0s: dict[str, float], g: dict[str, Any]) -> float:
    """Fixed per-token decode cost of a row or scenario, s: its kind's ``t0`` (else its accelerator class's)
    × :func:`layer_scale`, plus the MoE cost where :func:`moe_t0_applies`."""
    t = t0s.get(t0_key(g), t0s.get(accel_class(g["accel"]), 0.0)) * layer_scale(g)
    # (the MoE cost per layer count was tried: it lost accuracy held out by hardware, bench/accuracy.py; the R9700's
    # 48-layer MoEs run at the unscaled cost)
    return t + (moe_t0(t0s, g) if moe_t0_applies(g) else 0.0)


GRAPH_APIS = ("cuda",)  # APIs whose llama.cpp builds replay a batch-1 decode step as one graph (CUDA graphs)


def moe_t0_key(g: dict[str, Any]) -> str:
    """Key of the MoE fixed cost of one accelerator API (``gpu:moe:cuda``)."""
    return f"{MOE_T0_KEY}:{g.get('accel')}"


def moe_t0(t0s: dict[str, float], g: dict[str, Any]) -> float:
    """Extra fixed time per MoE token of a scenario's API, s: its API's own fitted value (:func:`moe_t0_key`,
    graph-replay APIs), else the value pooled over every API (:data:`MOE_T0_KEY`)."""
    return t0s.get(moe_t0_key(g), t0s.get(MOE_T0_KEY, 0.0))


T0_REF_LAYERS = 32  # the fitted per-kind ``t0`` is the fixed cost of a token through this many layers


def layer_scale(g: dict[str, Any]) -> float:
    """Factor on a GPU's fixed per-token cost: the model's layers ÷ :data:`T0_REF_LAYERS` (1 off the GPU and
    when the layer count is not known).

    On a GPU the time a decode step spends that does not shrink with the bytes read is kernel launches and
    their tails, a dozen or so kernels per transformer layer (norms, QKV, RoPE, attention, output, the MLP),
    so it grows with the number of layers: a 16-layer Llama 3.2 1B pays half the fixed time of a 32-layer
    Llama 3.1 8B, an 80-layer 70B two and a half times. Held out by hardware this took batch-1 decode on the
    newly collected rows from 12.2 to 11.9 % MdAPE (bench/accuracy.py); on CPUs, where the fixed cost is
    thread synchronisation per step more than per layer, scaling it lost accuracy, so it is not scaled there.
    """
    if accel_class(g.get("accel")) != "gpu":
        return 1.0
    return float(g.get("n_layers") or T0_REF_LAYERS) / T0_REF_LAYERS


def t0_key(g: dict[str, Any] | CalRow) -> str:
    """Key of the fixed per-token cost: accelerator class and hardware kind."""
    d = g if isinstance(g, dict) else g.__dict__
    return f"{accel_class(d['accel'])}:{d['kind']}"

def _one_card_keys(groups: dict[tuple[str, ...], _Group], g: dict[str, Any], keys: list[tuple[str, ...]]) -> list[tuple[str, ...]]:
    """A one-card scenario's keys without its machine's own level when only runs on several of its cards filled it:
    those say how the machine runs split (an A100 SXM4 measured only in 4- and 8-card boxes would be predicted 22 %
    below the one PCIe card, and ranked under the slower card)."""
    if g.get("multi"):
        return keys
    hw = g.get("hw_id")
    return [k for k in keys if not (len(k) > 1 and k[1] == hw and (grp := groups.get(k)) is not None and grp.one_card == 0)]


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
        """Prefill compute-tier factor of a scenario (:func:`tier_of` with the fitted γ)."""
        return tier_of(self.prefill_gamma, scenario)

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
        shrunk toward its parent and the root toward 0 (physics alone) with weight ``k / (w + k)``, ``w`` the
        group's independent (source, machine) sweeps. A machine's own level needs :data:`MACHINE_SWEEPS` of
        them: one benchmark's sweep on one machine cannot be told from its set-up (AccelMark's A100 80GB SXM4
        batches at 8 ran from 399 to 757 tok/s for one model and format), and alone it ranked the SXM4 below
        the slower PCIe card of the same chip.
        """
        slope, used, n_used = 0.0, "", 0
        keys = batched_keys(scenario)
        for key in keys:
            g = self.batched.get(key)
            if g is None or (key == keys[-1] and g.w < MACHINE_SWEEPS):
                continue
            slope = (g.w * g.log_eff + SHRINK_K * slope) / (g.w + SHRINK_K)
            used, n_used = " / ".join(key), g.n
        if not n_used:
            return 0.0, "batch > 1: step model only (no measured batches to calibrate on)"
        return slope, (f"batch > 1: step model × batch^{slope:+.3f}, fitted on measured batches "
                       f"(group {used}, {n_used} rows)")

    def efficiency(self, phase: str, scenario: dict[str, Any]) -> Calibration:
        """Shrunk efficiency for ``phase`` ("decode" | "prefill") and where it came from."""
        groups = self.groups[phase]
        root = groups.get(("all",))
        log_e, used, n_used, sources = walk(groups, _one_card_keys(groups, scenario, group_keys(phase, scenario)[1:]),
                                            root.log_eff if root else math.log(0.5))
        if used == ("",):
            used, n_used = ("all",), root.n if root else 0
        if phase == "decode" and scenario.get("multi") and scenario.get("moe"):
            # one card's MoE efficiency × what splitting costs dense runs of this engine and era
            one = {**scenario, "multi": False, "n_devices": 1, "extra": None}
            log_e, used, n_used, sources = walk(groups, group_keys(phase, one)[1:], root.log_eff if root else 0.0)
            log_e += split_cost_log(groups, scenario)
            used = (*used, "× the multi-GPU split's cost")
            own = groups.get(multi_moe_key(scenario))
            if own is not None:  # this machine measured with MoEs on this many cards
                log_e = (own.w * own.log_eff + SHRINK_K * log_e) / (own.w + SHRINK_K)
                used, n_used, sources = multi_moe_key(scenario), own.n, own.sources
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
        return 1.0 / (g["decode_bytes"] / (g["bandwidth_gbs"] * roofline.GB * e) + row_t0(self.t0_s, g))

    def prefill_tps(self, r: dict[str, Any] | CalRow, eff: float | None = None) -> float | None:
        g = r if isinstance(r, dict) else r.__dict__
        tf = g["tflops"]
        if not tf:
            return None
        e = eff if eff is not None else self.efficiency("prefill", g).efficiency
        return tf * 1e12 * e / prefill_work(g, self.attention_beta(g), self.expert_m0(g))

    def attention_beta(self, g: dict[str, Any]) -> float:
        """Attention cost factor β of a scenario (:func:`beta_for` with the fitted values)."""
        return beta_for(self.beta, g)


def batched_keys(g: dict[str, Any]) -> list[tuple[str, ...]]:
    """Group keys of the batched factor, coarse to fine: engine family, accelerator, kind, hardware.

    Server engines (vLLM, SGLang, TensorRT-LLM) split by weight format below the accelerator: their
    quantized GEMMs (Marlin W4A16/W8A16, FP8 emulated on GPUs without FP8 units, W8A8) read fewer bytes
    than BF16 but do not get faster by the byte ratio once several sequences share a step (AccelMark, batch
    8 on an A100: W4A16 437–757 tok/s vs BF16 538–712), so their batched factor is fitted apart from BF16's.
    """
    ef, ac = engine_family(g.get("engine")), accel_class(g.get("accel"))
    if ef == "server":
        qc = "q:" + ("float" if qclass(g.get("quant")) == "float" else "quant")
        return [("all",), (ef,), (ef, ac), (ef, ac, qc), (ef, ac, qc, str(g.get("kind"))), (ef, ac, qc, str(g.get("hw_id")))]
    return [("all",), (ef,), (ef, ac), (ef, ac, str(g.get("kind"))), (ef, ac, str(g.get("hw_id")))]


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
