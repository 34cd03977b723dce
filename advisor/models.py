"""Pydantic models shared by every part of the advisor.

The data flows one way (see DESIGN.md): free text, flags or pasted tool output become a
:class:`Scenario`; the probe yields a :class:`ProbeResult`; the performance model turns a resolved
scenario into a :class:`Prediction`; diagnosis turns both into a :class:`Verdict`.

Units are in the field names: ``_tps`` tokens per second, ``_gbs`` GB/s (10^9 bytes/s), ``_gb``
gigabytes (10^9 bytes), ``_s`` seconds, ``_tflops`` 10^12 FLOP/s.
"""

from __future__ import annotations

import math
import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

__all__ = [
    "SCENARIO_KEYS",
    "parse_scenario",
    "Bottleneck",
    "Calibration",
    "Fix",
    "FIX_IDS",
    "Hardware",
    "ImportResult",
    "Measurement",
    "MemoryFit",
    "ModelRun",
    "ModelSpec",
    "Prediction",
    "ProbeResult",
    "QuantFormat",
    "Scenario",
    "Status",
    "Verdict",
]

Bottleneck = Literal["prefill", "decode", "memory_fit", "misconfiguration"]
Status = Literal["normal", "below_expected", "above_expected", "not_measured", "no_expectation"]
HardwareKind = Literal["apple_soc", "discrete_gpu", "datacenter_gpu", "apu", "cpu"]

FIX_IDS: tuple[str, ...] = (
    "prefix_caching",
    "shorter_prompt",
    "gpu_offload",
    "more_compute",
    "quantization",
    "smaller_model",
    "speculative_decoding",
    "more_bandwidth",
    "batching",
    "chunked_prefill",
    "kv_cache_quantization",
    "flash_attention",
    "fit_in_memory",
    "fix_configuration",
)

# Upper bounds that no real machine or workload reaches; they only reject absurd input.
MAX_TOKENS = 10_000_000
MAX_PARAMS_B = 10_000.0  # 10 trillion parameters: beyond any model published (the largest are about 1-2 T)
MAX_MEMORY_GB = 100_000.0
MAX_TPS = 10_000_000.0
MAX_NAME_CHARS = 300  # hardware/model/format names; longer text is a paste, not a name


def _finite_nonneg(v: float | None, name: str, upper: float) -> float | None:
    if v is None:
        return None
    if isinstance(v, float) and not math.isfinite(v):
        raise ValueError(f"{name} must be a finite number, got {v}")
    if v < 0:
        raise ValueError(f"{name} cannot be negative (got {_short(v)})")
    if v > upper:
        raise ValueError(f"{name} = {_short(v)} is beyond anything real (limit {upper:g})")
    return v


def _short(v: Any) -> str:
    """A number for a one-line message: ``1e+400`` rather than 401 digits."""
    if isinstance(v, int) and abs(v) >= 10**15:
        return f"about {'-' if v < 0 else ''}1e{len(str(abs(v))) - 1}"
    return f"{v}"


class Hardware(BaseModel):
    """One machine or accelerator from the catalog (or described by the user).

    Attributes:
        id (str): catalog id, e.g. ``apple-m2-max-38gpu``; ``...xN`` for N identical GPUs.
        bandwidth_gbs (float): spec peak memory bandwidth of the accelerator memory, GB/s.
        fp16_tflops (float | None): dense FP16 matrix throughput, TFLOP/s (estimate for Apple GPUs).
        memory_gb_options (list[float]): memory sizes the product ships with, GB.
        memory_gb (float | None): the memory of this particular machine, when known.
        n_devices (int): number of identical GPUs (layer split unless said otherwise).
        host_bandwidth_gbs (float | None): system RAM bandwidth for layers left on the CPU.
    """

    model_config = ConfigDict(frozen=True)

    id: str
    name: str
    vendor: str = ""
    family: str = ""
    kind: HardwareKind = "cpu"
    gpu_cores: int | None = None
    cpu_cores: str | None = None
    bandwidth_gbs: float
    memory_gb_options: list[float] = Field(default_factory=list)
    memory_gb: float | None = None
    fp16_tflops: float | None = None
    fp16_tflops_is_estimate: bool = False
    release_year: int | None = None
    n_devices: int = 1
    host_bandwidth_gbs: float | None = None
    source_url: str = ""
    notes: str = ""
    custom: bool = False
    measured: bool = False  # bandwidth_gbs / fp16_tflops were measured on the machine (probe), not spec


class ModelSpec(BaseModel):
    """Architecture of a language model, enough to size weights and the KV cache.

    Attributes:
        params_b (float): total parameters, billions.
        active_params_b (float | None): parameters used per token for MoE models, billions.
        n_kv_heads, head_dim, n_layers: attention shape for KV-cache sizing.
        kv_layers (int | None): layers that keep a KV cache (hybrid/sliding models keep fewer).
        generic (bool): True when the architecture was assumed from the size alone.
        experts (int | None): routed experts per MoE layer (E), from the model's config.
        experts_per_token (int | None): routed experts each token picks (k).
        shared_experts (int | None): always-active shared experts per MoE layer (counted in the active params).
        moe_source_url (str): where the MoE figures come from.
    """

    model_config = ConfigDict(frozen=True)

    id: str
    family: str = ""
    params_b: float
    active_params_b: float | None = None
    n_layers: int | None = None
    hidden_size: int | None = None
    n_heads: int | None = None
    n_kv_heads: int | None = None
    head_dim: int | None = None
    vocab_size: int | None = None
    max_context: int | None = None
    kv_layers: int | None = None
    sliding_layers: int | None = None
    sliding_window: int | None = None
    aliases: list[str] = Field(default_factory=list)
    source_url: str = ""
    notes: str = ""
    generic: bool = False
    experts: int | None = None
    experts_per_token: int | None = None
    shared_experts: int | None = None
    moe_source_url: str = ""

    @property
    def is_moe(self) -> bool:
        """True for a mixture-of-experts model (fewer active than total parameters)."""
        return bool(self.active_params_b and self.active_params_b < self.params_b)

    @property
    def expert_share(self) -> float | None:
        """Share of all weights in the routed experts, ``(P − A) / (1 − k/E) / P``; None unless E and k are known."""
        if not (self.is_moe and self.experts and self.experts_per_token) or self.experts_per_token >= self.experts:
            return None
        return (self.params_b - self.active_b) / (1 - self.experts_per_token / self.experts) / self.params_b

    @property
    def active_b(self) -> float:
        """Parameters read per decoded token, billions (MoE: active experts only)."""
        return self.active_params_b or self.params_b


class QuantFormat(BaseModel):
    """A weight format and its storage cost in bits per weight."""

    model_config = ConfigDict(frozen=True)

    name: str
    ecosystem: str = ""
    bits_per_weight: float
    ppl_delta_7b: float | None = None
    source_url: str = ""
    notes: str = ""
    estimated: bool = False


class Measurement(BaseModel):
    """One measured rate, parsed from a tool's output or given by the user.

    A llama-bench ``pp`` row has ``gen_tokens`` 0 and only ``prefill_tps``; a ``tg`` row has
    ``prompt_tokens`` 0 and only ``decode_tps``; ``pp512+tg128`` has only ``blended_tps``.
    With ``batch`` > 1 the rates are aggregate over all sequences.
    """

    model_config = ConfigDict(extra="ignore")

    prefill_tps: float | None = None
    decode_tps: float | None = None
    blended_tps: float | None = None
    prompt_tokens: int | None = None
    gen_tokens: int | None = None
    depth: int | None = None
    batch: int | None = None
    backend: str | None = None
    model: str | None = None
    quant: str | None = None
    n_gpu_layers: int | None = None
    threads: int | None = None
    # Extras some formats carry.
    hardware: str | None = None
    params_b: float | None = None
    model_size_gb: float | None = None
    ttft_s: float | None = None
    tpot_s: float | None = None  # serving benchmarks: mean time per output token of a request, s (its own decode)
    requests: int | None = None  # serving benchmarks: requests completed (totals ÷ requests = one request's lengths)
    load_s: float | None = None
    cached_tokens: int | None = None
    peak_memory_gb: float | None = None
    gpu_fraction: float | None = None
    stddev_tps: float | None = None
    # The engine the tool implies (``llama.cpp``, ``ollama``, ``mlx``, ``vllm``, ``sglang``, ``koboldcpp``...);
    # ``backend`` then reads ``<engine>-<accelerator>`` (``llama.cpp-cuda``) or the engine alone.
    engine: str | None = None
    # True when ``decode_tps`` is generated tokens over the whole call, prompt processing included
    # (text-generation-webui): a lower bound on the decode rate, not the decode rate itself.
    decode_includes_prompt: bool | None = None
    notes: list[str] = Field(default_factory=list)

    @field_validator("prefill_tps", "decode_tps", "blended_tps", "stddev_tps")
    @classmethod
    def _rate(cls, v: float | None, info: Any) -> float | None:
        v = _finite_nonneg(v, info.field_name, MAX_TPS)
        if v is not None and 0 < v < 1e-4 and info.field_name != "stddev_tps":
            raise ValueError(f"{info.field_name} = {v:g} is too small to be a measured rate")  # as Scenario's floor
        return v


class ImportResult(BaseModel):
    """What an importer made of a pasted text."""

    format: str
    measurements: list[Measurement] = Field(default_factory=list)
    unparsed: list[str] = Field(default_factory=list)
    machine: dict[str, Any] = Field(default_factory=dict)
    warnings: list[str] = Field(default_factory=list)


class Scenario(BaseModel):
    """What the user runs and on what: the input of predict and diagnose.

    Every field may be null. Text fields hold what the user wrote; resolution against the catalog
    happens later. Numbers are validated: negative, NaN or absurd values are rejected.
    """

    model_config = ConfigDict(extra="ignore", str_max_length=200_000)

    hardware: str | None = None
    memory_gb: float | None = None
    backend: str | None = None
    model: str | None = None
    params_b: float | None = None
    # MoE: parameters used per token, billions ("30B with 3B active"); sizes a model the catalog lacks as a MoE.
    active_params_b: float | None = None
    quant: str | None = None
    prompt_tokens: int | None = None
    gen_tokens: int | None = None
    depth: int | None = None
    concurrency: int | None = None
    measured_prefill_tps: float | None = None
    measured_decode_tps: float | None = None
    raw_output: str | None = None
    use: str | None = None
    requests_per_minute: float | None = None
    n_gpu_layers: int | None = None
    gpu_cores: int | None = None
    cpu_cores: int | None = Field(default=None, ge=1, le=1024)  # CPU cores said ("a 64-core Threadripper")
    bandwidth_gbs: float | None = None
    tflops: float | None = None
    shared_prefix_tokens: int | None = None
    question: str | None = None
    hardware_measured: bool = False  # bandwidth_gbs / tflops come from a probe of the machine, not a spec sheet
    gpu_fraction: float | None = Field(default=None, ge=0, le=1)
    # Understood in input and in ``ask --json`` facts (DESIGN.md, Interfaces):
    gpu_count: int | None = Field(default=None, ge=1, le=4096)  # accelerators in the machine ("8x H100")
    interconnect: str | None = None  # "pcie3", "pcie4", "pcie5", "nvlink" (optionally with lanes: "pcie4 x8")
    system_ram_gb: float | None = Field(default=None, gt=0, le=MAX_MEMORY_GB)  # RAM beside a discrete GPU
    # The bandwidth of that RAM when stated ("+ 128GB DDR5-6000", an EPYC host): where offloaded weights are read, GB/s
    host_bandwidth_gbs: float | None = Field(default=None, gt=0, le=100_000)
    # Layers whose MoE experts the run keeps in system RAM (--n-cpu-moe N; 10,000 = all: --cpu-moe), carried across turns
    cpu_moe_layers: int | None = Field(default=None, ge=1, le=10_000)
    context_window: int | None = Field(default=None, ge=1, le=MAX_TOKENS)  # n_ctx / num_ctx (not the prompt)
    # The KV-cache type in use ("q8_0", "q4_0", "fp8"; "f16" when said so), carried across turns like cpu_moe_layers
    kv_cache_type: str | None = Field(default=None, max_length=24)
    measured_ttft_s: float | None = Field(default=None, gt=0, le=1e6)  # time to first token as measured
    # A serving benchmark's mean time per output token (TPOT), ms: the speed each stream writes at (1000 ÷ it)
    measured_tpot_ms: float | None = Field(default=None, gt=0, le=1e6)
    # The engine's log says its KV cache ran out (vLLM: requests preempted, or the cache full with requests waiting)
    kv_cache_full: bool | None = None
    compare_hardware: list[str] | None = None  # machines the person asks to compare, as written
    compare_models: list[str] | None = None  # models the person asks to compare, as written
    compare_quants: list[str] | None = None  # weight formats the person weighs ("Q4_K_M or IQ1_S?"), as written
    # Also emitted by ``ask --json`` (added with issue 12; optional everywhere):
    prompt_range: tuple[int, int] | None = None  # a stated range of prompt lengths ("5–10k"); prompt_tokens = middle
    hardware_kind: HardwareKind | None = None  # what kind of machine, when the name is not known yet ("my Mac")
    tensor_parallel: int | None = Field(default=None, ge=1, le=4096)  # tensor-parallel degree ("-tp 2"): a layout
    measured_is_aggregate: bool | None = None  # measured_decode_tps is summed over ``concurrency`` streams
    # Streams that ran while the rates were measured, when the output says (1: a benchmark tool's single run,
    # llama-bench or mlx_lm.generate): the rates are judged against that many, whatever the users stated.
    measured_streams: int | None = Field(default=None, ge=1, le=100000)
    target_ttft_s: float | None = Field(default=None, gt=0, le=1e6)  # a TTFT the person needs ("under 2 s")
    target_decode_tps: float | None = Field(default=None, gt=0, le=MAX_TPS)  # a per-user speed they need
    # The model the advisor chose because none was named (a comparison needs one); a default while model equals it.
    default_model: str | None = None

    @field_validator("compare_hardware", "compare_models", "compare_quants", mode="before")
    @classmethod
    def _names_list(cls, v: Any) -> Any:
        # A list as a form shows it ("['M3 Ultra', 'H100']" or "M3 Ultra; H100") is read back as the list.
        if isinstance(v, str):
            quoted = re.findall(r"'([^']+)'|\"([^\"]+)\"", v)
            items = [a or b for a, b in quoted] if quoted else [x.strip(" []") for x in re.split(r"[;,]", v)]
            return [x.strip() for x in items if x.strip()] or None
        return v

    @field_validator("prompt_range", mode="before")
    @classmethod
    def _range(cls, v: Any) -> Any:
        if isinstance(v, str):  # "(5000, 10000)", "5000-10000", "5000 10000"
            nums = [int(float(x)) if len(x) < 40 else MAX_TOKENS + 1 for x in re.findall(r"\d+(?:\.\d+)?", v)]
            return tuple(nums[:2]) if len(nums) >= 2 else None
        return v

    @field_validator("prompt_range")
    @classmethod
    def _range_order(cls, v: tuple[int, int] | None) -> tuple[int, int] | None:
        if v is not None and not 0 < v[0] <= v[1] <= MAX_TOKENS:
            raise ValueError(f"prompt_range must be (low, high) tokens with 0 < low <= high (got {_short(v)})")
        return v

    @field_validator("hardware", "model", "quant", "backend", "use")
    @classmethod
    def _name(cls, v: str | None, info: Any) -> str | None:
        if v is not None and not any(c.isalnum() for c in v):  # " ", " + ", "-": names nothing, as if not given
            return None
        if v is not None and not v.isascii():
            import unicodedata

            v = unicodedata.normalize("NFKC", v)  # fullwidth "ｌｌａｍａ ８ｂ" (a CJK input method) is "llama 8b"
        if v is not None and len(v) > MAX_NAME_CHARS:
            raise ValueError(f"{info.field_name} is {len(v):,} characters long; a name has at most {MAX_NAME_CHARS}")
        return v

    @field_validator("memory_gb")
    @classmethod
    def _mem(cls, v: float | None) -> float | None:
        v = _finite_nonneg(v, "memory_gb", MAX_MEMORY_GB)
        if v is not None and v < 0.1:
            raise ValueError(f"memory_gb = {v:g} is too small (minimum 0.1 GB)")
        return v

    @field_validator("params_b", "active_params_b")
    @classmethod
    def _params(cls, v: float | None, info: Any) -> float | None:
        v = _finite_nonneg(v, info.field_name, MAX_PARAMS_B)
        if v is not None and v < 0.001:
            raise ValueError(f"{info.field_name} = {v:g} is too small (minimum 0.001, i.e. one million parameters)")
        return v

    @model_validator(mode="after")
    def _active_within_total(self) -> Scenario:
        if self.active_params_b and self.params_b and self.active_params_b > self.params_b:
            raise ValueError(f"active_params_b = {self.active_params_b:g} is more than params_b = {self.params_b:g}: "
                             "a MoE uses a part of its parameters per token, never more than all of them")
        return self

    @field_validator("prompt_tokens", "gen_tokens", "depth", "shared_prefix_tokens")
    @classmethod
    def _tokens(cls, v: int | None, info: Any) -> int | None:
        return None if v is None else int(_finite_nonneg(v, info.field_name, MAX_TOKENS))  # type: ignore[arg-type]

    @field_validator("prompt_tokens", "gen_tokens", "n_gpu_layers", "gpu_cores", mode="after")
    @classmethod
    def _counts(cls, v: int | None, info: Any) -> int | None:
        """A prompt and an answer have at least one token; GPU layers and cores are not negative."""
        if v is None:
            return None
        low = 0 if info.field_name == "n_gpu_layers" else 1
        if v < low:
            hint = {"prompt_tokens": " (a prompt has at least one token)", "gen_tokens": " (an answer has at least "
                    "one token)", "n_gpu_layers": " (0 = CPU only, 99 = every layer on the GPU)"}.get(info.field_name, "")
            raise ValueError(f"{info.field_name} must be at least {low} (got {_short(v)}){hint}")
        if v > 2**31 - 1:
            raise ValueError(f"{info.field_name} = {_short(v)} is too large")
        return v

    @field_validator("concurrency")
    @classmethod
    def _conc(cls, v: int | None) -> int | None:
        if v is None:
            return None
        if v < 1 or v > 100_000:
            raise ValueError(f"concurrency must be between 1 and 100000 (got {_short(v)})")
        return v

    @field_validator("bandwidth_gbs", "tflops")
    @classmethod
    def _hw_numbers(cls, v: float | None, info: Any) -> float | None:
        # The fastest accelerators in the catalog: ~5,300 GB/s and ~1,300 FP16 TFLOPS per device.
        limit = 50_000.0 if info.field_name == "bandwidth_gbs" else 100_000.0
        floor = 0.1 if info.field_name == "bandwidth_gbs" else 1e-4  # a microcontroller is slower than nothing here
        v = _finite_nonneg(v, info.field_name, limit)
        if v is not None and v < floor:
            raise ValueError(f"{info.field_name} = {v:g} is too small to describe a computer (minimum {floor:g})")
        return v

    @field_validator("measured_prefill_tps", "measured_decode_tps", "requests_per_minute")
    @classmethod
    def _nonneg(cls, v: float | None, info: Any) -> float | None:
        v = _finite_nonneg(v, info.field_name, MAX_TPS)
        if v is not None and 0 < v < 1e-4:
            raise ValueError(f"{info.field_name} = {v:g} is too small to be a measured rate")
        if v == 0 and info.field_name != "requests_per_minute":
            raise ValueError(f"{info.field_name} = 0 is no measured rate (leave it out when nothing was measured)")
        return v


class MemoryFit(BaseModel):
    """Whether weights + KV cache + overhead fit the memory the accelerator may use (GB)."""

    weights_gb: float
    kv_cache_gb: float
    overhead_gb: float
    required_gb: float
    usable_gb: float
    total_gb: float | None
    fits: bool
    gpu_share: float = 1.0
    note: str = ""


class Calibration(BaseModel):
    """Where an achieved-efficiency factor came from."""

    phase: Literal["prefill", "decode"]
    efficiency: float
    group: str
    n_rows: int
    source_sets: list[str] = Field(default_factory=list)
    p10_ratio: float = 1.0
    p90_ratio: float = 1.0
    note: str = ""


class Prediction(BaseModel):
    """Predicted rates and times for one scenario (batch 1 unless ``concurrency`` > 1).

    ``prefill_tps``/``decode_tps`` are aggregate over all sequences when ``concurrency`` > 1.
    """

    prefill_tps: float | None
    decode_tps: float
    prefill_ceiling_tps: float | None
    decode_ceiling_tps: float
    prefill_tps_range: tuple[float, float] | None = None
    decode_tps_range: tuple[float, float] | None = None
    ttft_s: float | None
    decode_s: float | None
    total_s: float | None = None
    decode_tps_per_seq: float | None = None
    concurrency: int = 1
    # sequences that decode together when the KV caches of all ``concurrency`` do not fit beside the weights (the
    # others wait their turn; the rates are for these); None: all of them run at once
    running: int | None = None
    prompt_tokens: int
    gen_tokens: int
    depth: int = 0
    bits_per_weight: float
    quant: str
    weight_bytes_per_token_gb: float
    kv_bytes_per_token_gb: float
    flops_per_token_g: float
    ridge_point_flop_per_byte: float | None = None
    bandwidth_gbs: float
    tflops: float | None
    tflops_is_estimate: bool = False
    memory: MemoryFit
    hardware: dict[str, Any]
    model: dict[str, Any]
    backend: str
    calibration: list[Calibration] = Field(default_factory=list)
    assumptions: list[str] = Field(default_factory=list)
    probe_used: bool = False


class Fix(BaseModel):
    """One remedy with its predicted effect.

    ``margin_gb``: GB of usable memory left after a fix that changes what has to fit (None: not a memory
    change, or the memory is unknown); ``fits_with_margin``: that room is enough by the headroom rule of
    :mod:`advisor.diagnose.fit` (False: it does not fit, or only with too thin a margin).
    """

    id: str
    title: str
    predicted_effect: str
    why: str
    speedup: float | None = None
    new_ttft_s: float | None = None
    new_decode_tps: float | None = None
    margin_gb: float | None = None
    fits_with_margin: bool | None = None
    # The remedy that made it (advisor.diagnose.remedies.REGISTRY key, e.g. "moe_expert_offload" under the contract id
    # "fit_in_memory"): which of several remedies of one id this is.
    remedy: str | None = None


class Verdict(BaseModel):
    """The advisor's answer for a scenario."""

    bottleneck: Bottleneck
    status: Status
    fixes: list[Fix]
    prediction: Prediction | None
    explanation: str
    headline: str = ""
    measured: dict[str, float | None] = Field(default_factory=dict)
    expected_range: dict[str, tuple[float, float] | None] = Field(default_factory=dict)
    deviation_pct: dict[str, float | None] = Field(default_factory=dict)
    # Each measured phase judged on its own (``prefill_tps`` / ``decode_tps`` → a Status): which one is off.
    phase_status: dict[str, Status] = Field(default_factory=dict)
    signals: list[str] = Field(default_factory=list)
    assumptions: list[str] = Field(default_factory=list)
    # The person says it is slow and gave no rate: the first signal says what the hardware does with the model, and
    # (when that should feel fast) what usually causes the slowness, with a question for the number.
    felt_slow: bool = False
    # The measured decode in ``measured`` is summed over this many streams (a serving benchmark, the users named)
    # and judged against the prediction at that batch: ``expected_range["decode_tps"]`` is then aggregate too.
    measured_streams: int | None = None
    measured_ttft_s: float | None = None  # the time to first token measured (queueing included), s
    # Each stream's own writing speed in a serving run, tok/s (1000 ÷ its mean TPOT in ms), when the run printed it
    measured_stream_tps: float | None = None
    # GB the context window the person allocates needs with the weights, when more than the workload's own (None else)
    allocated_gb: float | None = None
    allocated_tokens: int | None = None
    target_tps: float | None = None  # the per-user decode speed the person needs (a target, not a measurement)
    benchmark_run: bool = False  # the rates are a benchmark tool's own run (llama-bench): no prompt cache in them
    asks_speed: bool = False  # the person asked for the speed itself ("how fast…?"): the headline leads with the number
    asks_memory: bool = False  # the person asked for the memory it takes ("how much VRAM…?"): the headline says it
    # The run keeps part of the weights in system RAM on purpose (a MoE's experts, --n-cpu-moe) and both hold them:
    # the split is judged, not the fit (advisor.diagnose.rules.PLANNED_SPLIT_RULE).
    planned_split: bool = False
    # The answer to "should I switch to X?" (advisor.diagnose.engines.engine_answer): both predictions and whether it pays.
    engine_answer: str | None = None
    # The formats the person weighs, each with its memory and decode, and the pick (advisor.diagnose.formats).
    format_answer: str | None = None


class ModelRun(BaseModel):
    """One model-probe trial (mlx-lm), like one llama-bench pp/tg pair."""

    prompt_tokens: int
    prefill_tps: float
    gen_tokens: int
    decode_tps: float
    peak_memory_gb: float | None = None
    ttft_s: float | None = None


class ProbeResult(BaseModel):
    """What the probe measured on this machine.

    Attributes:
        backend: ``mlx-gpu``, ``mlx-cpu``, ``torch-cuda`` or ``numpy``.
        bandwidth_gbs: best-of-N achieved streaming-read bandwidth, GB/s.
        matmul_tflops: best achieved FP16/BF16 (FP32 on NumPy) matrix-matrix rate, TFLOP/s.
    """

    backend: Literal["mlx-gpu", "mlx-cpu", "torch-cuda", "numpy"]
    device: str
    bandwidth_gbs: float
    bandwidth_median_gbs: float | None = None
    matmul_tflops: float
    matmul_dtype: str = ""
    matvec_gbs: dict[str, float] = Field(default_factory=dict)
    duration_s: float
    machine: dict[str, Any] = Field(default_factory=dict)
    model_runs: list[ModelRun] = Field(default_factory=list)
    engine_version: str = ""
    hw_id: str | None = None
    created_at: str | None = None
    notes: list[str] = Field(default_factory=list)


SCENARIO_KEYS: frozenset[str] = frozenset(Scenario.model_fields)


def parse_scenario(data: Any, *, what: str = "scenario") -> Scenario:
    """A Scenario from JSON data at an API edge, strictly: an unknown key is an error that names it.

    Every key that ``Scenario`` (and so ``ask --json`` ``facts``) emits is accepted back, so facts
    round-trip. Used by ``predict/diagnose --input``, ``ask --facts`` and the HTTP API.

    Args:
        data: a dict (the JSON object); None gives an empty Scenario.
        what: how to name the object in the message ("scenario", "facts", "row 3").

    Raises:
        InputError: ``data`` is not an object, or it has keys no Scenario has (each named, with the closest
            known key when one is close).
        pydantic.ValidationError: a known key has a bad value (negative, absurd, wrong type).
    """
    import difflib

    from advisor.errors import InputError

    if data is None:
        return Scenario()
    if not isinstance(data, dict):
        raise InputError(f"The {what} must be a JSON object, e.g. {{\"hardware\": \"M2 Max\", \"model\": \"llama 3.1 8b\"}}.")
    unknown = [str(k) for k in data if k not in SCENARIO_KEYS]
    if not unknown:
        _refuse_booleans_as_numbers(data, what)
    if unknown:
        parts = []
        for k in unknown[:5]:
            close = difflib.get_close_matches(k, sorted(SCENARIO_KEYS), n=1, cutoff=0.6)
            parts.append(f"'{k}'" + (f" (did you mean '{close[0]}'?)" if close else ""))
        raise InputError(f"Unknown key{'s' if len(unknown) > 1 else ''} in the {what}: {', '.join(parts)}. "
                         f"Known keys: {', '.join(sorted(SCENARIO_KEYS))}.")
    return Scenario.model_validate(data)


def _numeric_keys() -> frozenset[str]:
    """Scenario fields that hold numbers (int, float or a tuple of them), not flags."""
    out = set()
    for name, f in Scenario.model_fields.items():
        text = str(f.annotation)
        if "bool" not in text and ("int" in text or "float" in text):
            out.add(name)
    return frozenset(out)


def _refuse_booleans_as_numbers(data: dict[str, Any], what: str) -> None:
    """JSON ``true``/``false`` where a number goes is a mistake, not 1/0 (pydantic would read it so).

    Raises:
        InputError: one line naming the key, e.g. ``gen_tokens is true; it takes a number``.
    """
    import json

    from advisor.errors import InputError

    for k in sorted(_NUMERIC_KEYS & set(data)):
        v = data[k]
        if isinstance(v, bool) or (isinstance(v, (list, tuple)) and any(isinstance(x, bool) for x in v)):
            raise InputError(f"{k} in the {what} is {json.dumps(v)}; it takes a number (JSON true/false is not "
                             "read as 1/0).")


_NUMERIC_KEYS: frozenset[str] = _numeric_keys()
