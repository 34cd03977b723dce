"""Rank hardware for a multi-user workload (teams choosing what to buy).

Per candidate (units in the names: ``_s`` seconds, ``_tps`` tokens/s, ``_gb`` 10^9 bytes):

* **Memory at concurrency** — weights + KV cache per active sequence × sequences + overhead
  (:func:`advisor.roofline.memory_fit`); the largest concurrency that fits is found by binary search
  (:func:`max_concurrency`). ``kv_quant`` (llama.cpp ``--cache-type-k/-v``) shrinks the KV bytes:
  q8_0 stores 34 bytes per 32 elements (1.0625 B, about half of f16), q4_0 18 bytes per 32
  (``block_q8_0`` / ``block_q4_0`` in ggml-common.h).
* **Batched decode** — one decode step reads the weights once plus every sequence's KV cache, and
  does ``2 × P_active`` FLOPs per sequence; the step is the slower of the two (roofline, DESIGN.md):
  ``t(b) = max((W + b·K) / (BW·e_d) + t0, b · 2·P_active / (FLOPS·e_p))``, the same model as
  :func:`advisor.perf.predict` with ``concurrency=b`` (efficiencies ``e_d``, ``e_p`` and the fixed
  per-step cost ``t0`` come from its single-stream calibration; see :class:`StepModel`).
  Aggregate tok/s ``= b / t(b)``, per user ``1 / t(b)``. Adding users is free while the step is
  bandwidth-bound: up to the ridge point, ``b* = ridge × bpw / 16`` (decode intensity
  ``2b / (bpw/8)`` FLOP per weight byte = ``FLOPS / BW``).
* **TTFT under load** — Poisson arrivals at ``users × requests_per_minute / 60`` per second, FIFO
  prefill, decode steps of all running streams interleaved: a small deterministic discrete-event
  simulation (:func:`simulate_load`, a few thousand arrivals with a fixed seed), run twice — without
  chunked prefill (a prompt runs whole; every running stream stalls meanwhile) and with chunked
  prefill (each iteration carries one decode step plus a prompt chunk: prefill slightly slower,
  streams keep flowing). The unchunked case is an M/D/1 queue of prefill work; its mean is checked
  against Pollaczek–Khinchine (:func:`pk_mean_wait_s`) and its p95 against the exact M/D/1
  waiting-time distribution (Erlang 1909 / Crommelin 1932, :func:`md1_wait_cdf`).
* **Prefix caching** — a prefix shared by every request is prefilled once; each request prefills
  only the rest (attending to the cached prefix), so TTFT falls by about ``cached / pp``.
* **Cost** — only from prices the user gives, amortised over a stated period at a stated
  utilisation; no electricity figure.
"""

from __future__ import annotations

import heapq
import math
import random
import statistics
from collections import deque
from dataclasses import dataclass, field
from decimal import Decimal, localcontext
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator

from advisor import roofline
from advisor.calibration import CalibrationModel
from advisor.errors import AdvisorError, InputError
from advisor.models import Hardware, ModelSpec, Prediction, QuantFormat
from advisor.perf import calibration_model, predict_step
from advisor.perf.step import StepModel
from advisor.report import json_safe
from advisor.understand.text import parse_prices, split_stated_memory  # names are read by understanding
from knowledge import catalog
from knowledge.store import Store

__all__ = [
    "KV_BYTES_PER_ELEMENT",
    "Candidate",
    "CompareRequest",
    "LoadResult",
    "compare",
    "compare_request",
    "compare_situation",
    "cost_per_million",
    "max_concurrency",
    "md1_wait_cdf",
    "md1_wait_quantile",
    "parse_prices",
    "pk_mean_wait_s",
    "kv_knee_batch",
    "saturation_batch",
    "saturation_concurrency",
    "simulate_load",
    "notes_markdown",
    "summary_lines",
    "table_markdown",
    "table_rows",
]

# Bytes per KV element: f16; q8_0 = 34 B / 32, q4_0 = 18 B / 32 (ggml-common.h block structs).
KV_BYTES_PER_ELEMENT = {"f16": 2.0, "q8_0": 34 / 32, "q4_0": 18 / 32}
SECONDS_PER_YEAR = 365.25 * 86400
MAX_CONCURRENCY_CAP = 4096
SIM_ARRIVALS = 3000
SIM_WARMUP = 300
SIM_SEED = 20240601
DEFAULT_CHUNK_TOKENS = 512  # llama.cpp n_ubatch default; vLLM chunked prefill uses a similar token budget
TABLE_HEADERS = ["#", "hardware", "fits all users", "max users", "TTFT median / p95 (s)", "p95 unchunked (s)",
                 "tok/s per user", "aggregate tok/s", "saturates at", "meets targets", "$ / M tokens"]


# ----------------------------------------------------------------------------------- request
class CompareRequest(BaseModel):
    """What a team asks: the workload, the targets, the candidates, optional prices.

    ``prices`` maps a hardware id or name to a purchase price in USD; nothing is priced otherwise.
    """

    model_config = ConfigDict(extra="forbid")  # a misspelt field must not be ignored silently

    model: str
    quant: str | None = None
    backend: str | None = None
    prompt_tokens: int = Field(2000, ge=1, le=1_000_000)
    gen_tokens: int = Field(300, ge=1, le=1_000_000)
    concurrency: int = Field(1, ge=1, le=MAX_CONCURRENCY_CAP)
    requests_per_minute: float | None = Field(None, ge=0, le=10_000)
    ttft_target_s: float | None = Field(None, gt=0, le=1e6)
    tps_per_user: float | None = Field(None, gt=0, le=1e6)
    candidates: list[str] | None = None
    prices: dict[str, float] = Field(default_factory=dict)
    shared_prefix_tokens: int = Field(0, ge=0, le=1_000_000)
    kv_quant: Literal["f16", "q8_0", "q4_0"] = "f16"
    chunk_tokens: int = Field(DEFAULT_CHUNK_TOKENS, ge=16, le=65_536)
    amortisation_years: float = Field(3.0, gt=0, le=30)
    utilisation: float = Field(0.25, gt=0, le=1)
    limit: int = Field(15, ge=1, le=200)

    @field_validator("prices")
    @classmethod
    def _positive_prices(cls, v: dict[str, float]) -> dict[str, float]:
        bad = [k for k, usd in v.items() if not (isinstance(usd, (int, float)) and 0 < usd < 1e9)]
        if bad:
            raise ValueError(f"prices must be positive USD amounts (check {', '.join(bad[:3])})")
        return v

    @field_validator("shared_prefix_tokens")
    @classmethod
    def _prefix_below_prompt(cls, v: int, info: ValidationInfo) -> int:
        p = info.data.get("prompt_tokens")
        if p is not None and v >= p:
            raise ValueError(f"the shared prefix ({v}) must be shorter than the prompt ({p})")
        return v


# ----------------------------------------------------------------------------------- memory
def max_concurrency(hw: Hardware, model: ModelSpec, bits_per_weight: float, context_tokens: int,
                    kv_bytes_per_element: float = 2.0, cap: int = MAX_CONCURRENCY_CAP) -> int:
    """Largest number of sequences of ``context_tokens`` whose KV cache fits next to the weights.

    Binary search on :func:`advisor.roofline.memory_fit` (fit is monotone in concurrency).
    Returns 0 when not even one sequence fits, ``cap`` when ``cap`` fits.
    """
    def fits(n: int) -> bool:
        return roofline.memory_fit(hw, model, bits_per_weight, context_tokens=context_tokens, concurrency=n,
                                   kv_bytes_per_element=kv_bytes_per_element).fits

    if not fits(1):
        return 0
    if fits(cap):
        return cap
    lo, hi = 1, cap  # invariant: fits(lo), not fits(hi)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if fits(mid) else (lo, mid)
    return lo


# ----------------------------------------------------------------------------------- batched decode
def saturation_batch(tflops: float, bandwidth_gbs: float, bits_per_weight: float) -> float:
    """Batch at which decode's arithmetic intensity reaches the ridge point [sequences].

    Intensity ``2b / (bpw/8)`` FLOP per weight byte equals ``FLOPS / BW`` at
    ``b* = ridge × bpw / 16``. Example: RTX 4090 165.2 TFLOP/s / 1008 GB/s = 163.9 FLOP/B; at 4.5 bpw
    b* ≈ 46.
    """
    return roofline.ridge_point(tflops, bandwidth_gbs) * bits_per_weight / 16.0


def kv_knee_batch(weight_bytes: float, kv_bytes_per_seq: float) -> float:
    """Batch at which the KV-cache reads of all sequences equal the weight reads, ``W / K``.

    Past it each added user slows every stream about as much as it adds: at 8k context a 70B model's
    KV cache (≈ 2.7 GB per sequence in f16) outweighs its 43 GB of 4-bit weights beyond ~16 users.
    """
    return weight_bytes / kv_bytes_per_seq if kv_bytes_per_seq > 0 else math.inf


def saturation_concurrency(tflops: float | None, bandwidth_gbs: float, bits_per_weight: float,
                           weight_bytes: float, kv_bytes_per_seq: float) -> tuple[int | None, str]:
    """Where adding users stops being free (spec-sheet roofline), and which limit binds.

    The smaller of the ridge-point batch (compute-bound past it) and the KV knee (bandwidth taken by
    the sequences' KV caches past it), floored to whole sequences (at least 1); None when neither
    is known (no compute figure and no attention shape).
    """
    ridge = saturation_batch(tflops, bandwidth_gbs, bits_per_weight) if tflops else math.inf
    kv = kv_knee_batch(weight_bytes, kv_bytes_per_seq)
    b, why = (ridge, "compute (ridge point)") if ridge <= kv else (kv, "KV-cache reads")
    return (max(1, math.floor(b)) if math.isfinite(b) else None), why


def curve_points(max_b: int, users: int, extra: tuple[float | None, ...] = ()) -> list[int]:
    """Concurrencies to draw: 1, 2, 3, 4, 6, 8, 12, 16 … up to a bound, plus the users and knees."""
    top = min(max_b, max(2 * users, 16, *(2 * int(x) for x in extra if x)))
    pts = {1, min(users, max_b)} | {int(x) for x in extra if x and 1 <= x <= top}
    k = 2
    while k <= top:
        pts |= {k, min(top, k * 3 // 2)}
        k *= 2
    pts.add(top)
    return sorted(p for p in pts if 1 <= p <= top)


# ----------------------------------------------------------------------------------- queueing
def pk_mean_wait_s(rate_per_s: float, service_s: float) -> float:
    """Mean wait in an M/D/1 queue, s (Pollaczek–Khinchine): ``ρ·D / (2(1 − ρ))``, ``ρ = λD``."""
    rho = rate_per_s * service_s
    return math.inf if rho >= 1 else rho * service_s / (2 * (1 - rho))


def md1_wait_cdf(t: float, rate_per_s: float, service_s: float) -> float:
    """P(wait ≤ t) in an M/D/1 queue (Erlang 1909; Crommelin 1932).

    ``(1 − ρ) Σ_{k=0}^{⌊t/D⌋} [λ(kD − t)]^k / k! · e^{−λ(kD − t)}``. The alternating sum is
    evaluated in 80-digit decimal arithmetic; ``t/D`` is limited to 400.
    """
    lam, d = rate_per_s, service_s
    rho = lam * d
    if rho >= 1 or t < 0:
        return 0.0
    if t / d > 400:
        raise ValueError("t/D > 400: use the simulation")
    with localcontext() as dc:
        dc.prec = 80
        total, lam_d, t_d = Decimal(0), Decimal(lam), Decimal(t)
        for k in range(int(t / d) + 1):
            x = lam_d * (Decimal(k) * Decimal(d) - t_d)
            total += (x ** k if k else Decimal(1)) / math.factorial(k) * (-x).exp()
        return float(min(Decimal(1), (1 - Decimal(rho)) * total))


def md1_wait_quantile(q: float, rate_per_s: float, service_s: float) -> float | None:
    """Wait not exceeded with probability ``q`` in an M/D/1 queue, s (bisection on the CDF)."""
    if rate_per_s * service_s >= 1:
        return None
    if md1_wait_cdf(0.0, rate_per_s, service_s) >= q:
        return 0.0
    lo, hi = 0.0, service_s
    while md1_wait_cdf(hi, rate_per_s, service_s) < q:
        lo, hi = hi, hi * 2
        if hi / service_s > 400:
            return None
    for _ in range(50):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if md1_wait_cdf(mid, rate_per_s, service_s) < q else (lo, mid)
    return hi


@dataclass
class LoadResult:
    """What users see under load (one simulation): TTFT, inter-token latency, per-user decode."""

    ttft_median_s: float
    ttft_p95_s: float
    ttft_mean_s: float
    itl_p95_s: float
    itl_p99_s: float
    itl_max_s: float
    per_user_tps_median: float
    busy_fraction: float
    mean_active: float


@dataclass
class _Sim:
    """Mutable state of one run of :func:`simulate_load`."""

    arrivals: list[float]
    t: float = 0.0
    g: int = 0  # decode steps taken so far (every running stream gains one token per step)
    nxt: int = 0
    queue: deque[int] = field(default_factory=deque)
    active: list[tuple[int, int]] = field(default_factory=list)  # (step at which it finishes, request)
    first: dict[int, float] = field(default_factory=dict)
    done: dict[int, float] = field(default_factory=dict)
    itl: list[tuple[float, int]] = field(default_factory=list)  # (gap s, tokens that saw it)
    busy: float = 0.0
    active_time: float = 0.0
    stall: float = 0.0
    stall_n: int = 0  # streams that were running during the stall

    def admit(self) -> None:
        while self.nxt < len(self.arrivals) and self.arrivals[self.nxt] <= self.t:
            self.queue.append(self.nxt)
            self.nxt += 1

    def advance(self, dt: float, steps: int = 0) -> None:
        self.busy += dt
        self.active_time += dt * len(self.active)
        self.t += dt
        self.g += steps

    def start_stream(self, i: int, gen_tokens: int) -> None:
        self.first[i] = self.t
        if gen_tokens > 1:
            heapq.heappush(self.active, (self.g + gen_tokens - 1, i))
        else:
            self.done[i] = self.t

    def retire(self) -> None:
        while self.active and self.active[0][0] <= self.g:
            self.done[heapq.heappop(self.active)[1]] = self.t

    def decode(self, bm: StepModel, slots: int) -> None:
        """Decode steps until a stream ends or (with a free slot) the next arrival."""
        b = len(self.active)
        step = bm.step_s(b)
        n = self.active[0][0] - self.g
        if b < slots and self.nxt < len(self.arrivals):
            n = min(n, max(1, math.ceil((self.arrivals[self.nxt] - self.t) / step)))
        self.itl += [(step + self.stall, self.stall_n), (step, b - self.stall_n), (step, (n - 1) * b)]
        self.stall, self.stall_n = 0.0, 0
        self.advance(n * step, n)

    def idle(self) -> None:
        self.t = max(self.t, self.arrivals[self.nxt])


def _run_unchunked(s: _Sim, bm: StepModel, prefill_s: float, gen: int, slots: int) -> None:
    """Prefill has priority and runs whole: running streams stall for it."""
    n = len(s.arrivals)
    while len(s.done) < n:
        s.admit()
        if s.queue and len(s.active) < slots:
            i = s.queue.popleft()
            if s.active:
                s.stall += prefill_s
                s.stall_n = s.stall_n or len(s.active)
            s.advance(prefill_s)
            s.start_stream(i, gen)
        elif s.active:
            s.decode(bm, slots)
        else:
            s.idle()
        s.retire()


def _run_chunked(s: _Sim, bm: StepModel, prompt: int, pp: float, gen: int, slots: int, chunk: int) -> None:
    """Each iteration: one decode step for the running streams plus one prompt chunk (FIFO)."""
    n = len(s.arrivals)
    pf: int | None = None
    rem = 0
    while len(s.done) < n:
        s.admit()
        if pf is None and s.queue and len(s.active) < slots:
            pf, rem = s.queue.popleft(), prompt
        b = len(s.active)
        if pf is not None:
            c = min(chunk, rem)
            it = bm.mixed_s(b, c, pp)
            reps = max(1, rem // chunk if rem >= chunk else 1)
            if b:
                reps = min(reps, s.active[0][0] - s.g)
                s.itl.append((it, reps * b))
            s.advance(reps * it, reps if b else 0)
            rem -= reps * c
            if rem <= 0:
                s.start_stream(pf, gen)
                pf = None
        elif b:
            s.decode(bm, slots)
        else:
            s.idle()
        s.retire()


def _weighted_quantile(pairs: list[tuple[float, int]], q: float) -> float:
    pairs = sorted(p for p in pairs if p[1] > 0)
    total = sum(w for _, w in pairs)
    if not total:
        return 0.0
    acc = 0
    for x, w in pairs:
        acc += w
        if acc >= q * total:
            return x
    return pairs[-1][0]


def simulate_load(bm: StepModel, *, rate_per_s: float, prompt_tokens: int, prefill_tps: float, gen_tokens: int,
                  slots: int, chunk_tokens: int | None = None, n_arrivals: int = SIM_ARRIVALS,
                  warmup: int = SIM_WARMUP, seed: int = SIM_SEED) -> LoadResult:
    """Discrete-event simulation of a server under Poisson arrivals (fixed seed: deterministic).

    Args:
        bm: decode step model of the machine.
        rate_per_s: arrivals per second (λ).
        prompt_tokens: tokens each request must prefill (after any cached prefix).
        prefill_tps: prefill rate on an otherwise idle machine, tok/s.
        gen_tokens: tokens each answer streams.
        slots: sequences that may be in flight at once (KV memory; llama.cpp ``-np``).
        chunk_tokens: None: a prompt runs whole (streams stall); else chunked prefill.
        n_arrivals, warmup, seed: arrivals simulated, first ones left out of the statistics, RNG seed.

    Returns:
        LoadResult. TTFT runs from arrival to the end of the request's prefill (first token).
    """
    rng = random.Random(seed)
    t, arr = 0.0, []
    for _ in range(n_arrivals):
        t += rng.expovariate(rate_per_s)
        arr.append(t)
    s = _Sim(arrivals=arr)
    if chunk_tokens is None:
        _run_unchunked(s, bm, prompt_tokens / prefill_tps, gen_tokens, slots)
    else:
        _run_chunked(s, bm, prompt_tokens, prefill_tps, gen_tokens, slots, chunk_tokens)
    keep = range(min(warmup, n_arrivals - 1), n_arrivals)
    ttft = sorted(s.first[i] - arr[i] for i in keep)
    rates = [(gen_tokens - 1) / (s.done[i] - s.first[i]) for i in keep if s.done[i] > s.first[i]]
    return LoadResult(
        ttft_median_s=statistics.median(ttft), ttft_p95_s=ttft[min(len(ttft) - 1, int(0.95 * len(ttft)))],
        ttft_mean_s=statistics.fmean(ttft), itl_p95_s=_weighted_quantile(s.itl, 0.95),
        itl_p99_s=_weighted_quantile(s.itl, 0.99),
        itl_max_s=max((x for x, w in s.itl if w), default=0.0),
        per_user_tps_median=statistics.median(rates) if rates else 0.0,
        busy_fraction=s.busy / s.t if s.t else 0.0, mean_active=s.active_time / s.t if s.t else 0.0)


def load_utilisation(bm: StepModel, rate_per_s: float, prefill_s: float, gen_tokens: int, slots: int) -> float:
    """Lower bound on the machine's busy fraction: prefill time plus decode at the fullest batch."""
    return rate_per_s * (prefill_s + gen_tokens * bm.step_s(slots) / slots)


# ----------------------------------------------------------------------------------- cost
def cost_per_million(price_usd: float, tokens_per_s: float, *, years: float, utilisation: float,
                     users: int) -> dict[str, Any]:
    """Purchase price amortised over ``years`` at ``utilisation`` (share of the time generating).

    ``USD per million tokens = price / (tokens/s × utilisation × years × 31 557 600 s) × 10^6``;
    ``USD per user-month = price / users / (12 × years)``. Hardware only: no electricity, no staff.
    """
    tokens = tokens_per_s * utilisation * years * SECONDS_PER_YEAR
    return {"price_usd": price_usd, "amortisation_years": years, "utilisation": utilisation,
            "tokens_per_s": tokens_per_s, "usd_per_million_tokens": price_usd / tokens * 1e6 if tokens else None,
            "usd_per_user_month": price_usd / users / (12 * years),
            "assumption": (f"price amortised over {years:g} years, generating at {tokens_per_s:,.0f} tok/s "
                           f"{utilisation:.0%} of the time; generated tokens only; no electricity or staff")}


# ----------------------------------------------------------------------------------- candidates
class Candidate(BaseModel):
    """One hardware option evaluated for the workload (JSON field units in the names)."""

    rank: int = 0
    hardware: dict[str, Any]
    fits: bool
    max_concurrency: int
    effective_concurrency: int
    ttft_s: dict[str, float | None]
    ttft_no_chunking_s: dict[str, float | None]
    decode_tps_per_user: float | None
    aggregate_decode_tps: float | None
    prefill_tps: float | None
    saturation_concurrency: int | None
    meets_targets: bool
    headroom: float | None
    memory: dict[str, Any]
    batch: dict[str, Any]
    load: dict[str, Any] | None = None
    cost: dict[str, Any] | None = None
    notes: list[str] = Field(default_factory=list)
    calibration: list[dict[str, Any]] = Field(default_factory=list)


@dataclass
class _Ctx:
    """Resolved workload shared by every candidate."""

    req: CompareRequest
    model: ModelSpec
    quant: QuantFormat
    cal: CalibrationModel
    kv_bpe: float
    rate_per_s: float
    prices: dict[str, float]


def _resolve_candidates(store: Store, names: list[str] | None) -> list[tuple[Hardware, list[str]]]:
    if not names:
        return [(h.model_copy(update={"memory_gb": max(h.memory_gb_options)}), [])
                for h in catalog.all_hardware(store).values() if h.memory_gb_options and h.kind != "cpu"]
    out = []
    for name in names:
        # "apple-m3-ultra-80gpu 96GB": the memory a person stated stays (never the largest option).
        bare, mem_gb = split_stated_memory(name)
        m = catalog.resolve_hardware(store, bare, memory_gb=mem_gb)
        hw, notes = m.value, list(m.assumptions)
        if hw.memory_gb is None and hw.memory_gb_options:
            hw = hw.model_copy(update={"memory_gb": max(hw.memory_gb_options)})
            notes.append(f"Memory not stated: assumed the largest option, {hw.memory_gb:g} GB.")
        out.append((hw, notes))
    return out


def _resolve_prices(store: Store, prices: dict[str, float]) -> dict[str, float]:
    out = {}
    for key, usd in prices.items():
        try:
            out[catalog.resolve_hardware(store, key).value.id] = float(usd)
        except AdvisorError:
            out[key.strip().lower()] = float(usd)  # an exact id the resolver does not know stays as written
    return out


def _notes(ctx: _Ctx, hw: Hardware, maxc: int) -> list[str]:
    req, notes = ctx.req, []
    if req.kv_quant != "f16":
        notes.append(f"KV cache in {req.kv_quant} ({KV_BYTES_PER_ELEMENT[req.kv_quant]:.3g} B per element vs 2 "
                     "for f16); llama.cpp needs flash attention (-fa) for a quantized V cache.")
    if req.shared_prefix_tokens:
        notes.append(f"Prefix caching: the shared {req.shared_prefix_tokens:,}-token prefix is prefilled once; "
                     "each request prefills the rest. Memory is counted per sequence (no block sharing).")
    if 0 < maxc < req.concurrency:
        notes.append(f"Only {maxc} of {req.concurrency} sequences fit in memory: the other users wait for a slot; "
                     f"rates are at {maxc}.")
    return notes


def _predict_notes(p: Prediction, hw: Hardware, maxc: int) -> list[str]:
    """predict()'s assumptions, less those this module restates (layer split) or that a fit voids."""
    skip = ["The model needs", "Only "] if maxc else []
    return [a for a in p.assumptions if not any(a.startswith(x) for x in skip)]


def _ttft(ctx: _Ctx, bm: StepModel, pp: float, slots: int) -> tuple[dict, dict, dict | None, list[str]]:
    """(chunked TTFT, unchunked TTFT, load details, notes) for the arrival rate."""
    req = ctx.req
    prompt = req.prompt_tokens - req.shared_prefix_tokens
    svc = prompt / pp
    idle = {"median": svc, "p95": svc, "mean": svc}
    if not ctx.rate_per_s:
        return idle, dict(idle), None, ["No arrival rate given: TTFT is a request on an idle machine "
                                        "(give requests per minute for queueing)."]
    util = load_utilisation(bm, ctx.rate_per_s, svc, req.gen_tokens, slots)
    load: dict[str, Any] = {"arrival_rate_per_s": ctx.rate_per_s, "utilisation_lower_bound": util,
                            "overloaded": util >= 0.98, "prefill_service_s": svc,
                            "method": (f"discrete-event simulation: {SIM_ARRIVALS} Poisson arrivals (seed {SIM_SEED}), "
                                       f"first {SIM_WARMUP} discarded; {slots} slots; chunk {req.chunk_tokens} tokens")}
    if util >= 0.98:
        none: dict[str, float | None] = {"median": None, "p95": None, "mean": None}
        return none, dict(none), load, [f"Overloaded: prefill and decode demand ≈ {util:.1f}× what the machine "
                                        "can do; queues grow without bound."]
    out: dict[str, Any] = {}
    for key, chunk in (("chunked", req.chunk_tokens), ("unchunked", None)):
        r = simulate_load(bm, rate_per_s=ctx.rate_per_s, prompt_tokens=prompt, prefill_tps=pp,
                          gen_tokens=req.gen_tokens, slots=slots, chunk_tokens=chunk)
        out[key] = {"ttft_median_s": r.ttft_median_s, "ttft_p95_s": r.ttft_p95_s, "ttft_mean_s": r.ttft_mean_s,
                    "itl_p95_s": r.itl_p95_s, "itl_p99_s": r.itl_p99_s, "itl_max_s": r.itl_max_s,
                    "decode_tps_per_user_median": r.per_user_tps_median, "busy_fraction": r.busy_fraction,
                    "mean_active_streams": r.mean_active}
    rho = ctx.rate_per_s * svc
    out["unchunked"]["md1_check"] = {"pk_mean_ttft_s": svc + pk_mean_wait_s(ctx.rate_per_s, svc),
                                     "exact_p95_ttft_s": _md1_p95(ctx.rate_per_s, svc), "prefill_rho": rho}
    load.update(out)
    c, u = out["chunked"], out["unchunked"]
    note = (f"Chunked prefill: TTFT p95 {c['ttft_p95_s']:.1f} s, running streams pause ≤ {c['itl_max_s']:.2f} s "
            f"per token. Without chunking: TTFT p95 {u['ttft_p95_s']:.1f} s, but each prompt stalls every running "
            f"stream for {svc:.1f} s (worst simulated gap {u['itl_max_s']:.0f} s when prompts queue).")
    return _pick(c), _pick(u), load, [note]


def _pick(d: dict[str, Any]) -> dict[str, float | None]:
    return {"median": d["ttft_median_s"], "p95": d["ttft_p95_s"], "mean": d["ttft_mean_s"]}


def _md1_p95(rate: float, svc: float) -> float | None:
    try:
        w = md1_wait_quantile(0.95, rate, svc)
    except ValueError:
        return None
    return None if w is None else svc + w


def _targets(ctx: _Ctx, maxc: int, ttft_p95: float | None, per_user: float | None) -> tuple[bool, float | None]:
    """(meets every target, headroom); None headroom without TTFT or tok/s targets.

    Headroom is the tightest margin: ``min(max_concurrency / users, TTFT target / TTFT p95,
    per-user tok/s / target)``; below 1 a target is missed, an overloaded machine scores 0.
    """
    req = ctx.req
    ratios = [maxc / req.concurrency]
    if req.ttft_target_s is not None:
        ratios.append(req.ttft_target_s / ttft_p95 if ttft_p95 else 0.0)
    if req.tps_per_user is not None:
        ratios.append((per_user or 0.0) / req.tps_per_user)
    ok = ttft_p95 is not None and per_user is not None and min(ratios) >= 1.0
    return ok, (min(ratios) if len(ratios) > 1 else None)


def _memory(ctx: _Ctx, hw: Hardware) -> tuple[int, Any, dict[str, Any]]:
    """(max concurrency, MemoryFit at the users, memory summary in GB)."""
    req, bpw = ctx.req, ctx.quant.bits_per_weight
    tokens = req.prompt_tokens + req.gen_tokens
    maxc = max_concurrency(hw, ctx.model, bpw, tokens, ctx.kv_bpe)
    fit = roofline.memory_fit(hw, ctx.model, bpw, context_tokens=tokens, concurrency=req.concurrency,
                              kv_bytes_per_element=ctx.kv_bpe)
    summary = {"weights_gb": fit.weights_gb, "kv_per_user_gb": roofline.kv_bytes(ctx.model, tokens, ctx.kv_bpe) / roofline.GB,
               "overhead_gb": fit.overhead_gb, "required_gb": fit.required_gb, "usable_gb": fit.usable_gb,
               "kv_quant": req.kv_quant, "note": fit.note}
    return maxc, fit, summary


def _saturation(ctx: _Ctx, p: Prediction) -> dict[str, Any]:
    """Spec-sheet saturation: ridge-point batch, KV knee, the binding one (see :func:`saturation_concurrency`)."""
    req, bpw = ctx.req, ctx.quant.bits_per_weight
    w = roofline.weight_bytes_read_per_token(ctx.model, bpw)
    kv = roofline.kv_bytes(ctx.model, req.prompt_tokens + req.gen_tokens / 2, ctx.kv_bpe)  # mean decode context
    sat, why = saturation_concurrency(p.tflops, p.bandwidth_gbs, bpw, w, kv)
    return {"ridge_point_flop_per_byte": p.ridge_point_flop_per_byte,
            "saturation_batch": saturation_batch(p.tflops, p.bandwidth_gbs, bpw) if p.tflops else None,
            "kv_knee_batch": kv_knee_batch(w, kv), "saturation_concurrency": sat, "saturation_limit": why}


def _unevaluated(base: dict[str, Any], batch: dict[str, Any], notes: list[str], why: str) -> Candidate:
    none = {"median": None, "p95": None, "mean": None}
    return Candidate(**{**base, "saturation_concurrency": None}, effective_concurrency=0, ttft_s=none,
                     ttft_no_chunking_s=dict(none), decode_tps_per_user=None, aggregate_decode_tps=None,
                     meets_targets=False, headroom=None, batch={**batch, "curve": []},
                     notes=notes + [f"Not evaluated under load: {why}."])


def _evaluate(store: Store, ctx: _Ctx, hw: Hardware, extra_notes: list[str]) -> Candidate:
    """Memory, batched decode, TTFT under load, targets and cost of one candidate."""
    req = ctx.req
    maxc, fit, memory = _memory(ctx, hw)
    # When one sequence fits (with this KV type) all the weights sit on the accelerator. The same
    # predict_step the chat calls, at the users that fit: one step model, one answer.
    n_eff = max(1, min(req.concurrency, maxc))
    p, bm = predict_step(store, hardware=hw, model=ctx.model, quant=ctx.quant, backend=req.backend,
                         prompt_tokens=req.prompt_tokens - req.shared_prefix_tokens, gen_tokens=req.gen_tokens,
                         depth=req.shared_prefix_tokens, concurrency=n_eff, gpu_share=1.0 if maxc else None,
                         cal=ctx.cal, kv_bytes_per_element=ctx.kv_bpe)
    notes = extra_notes + _predict_notes(p, hw, maxc) + _notes(ctx, hw, maxc)
    batch = _saturation(ctx, p)
    base = dict(hardware={"id": hw.id, "name": hw.name, "kind": hw.kind, "memory_gb": hw.memory_gb,
                          "bandwidth_gbs": hw.bandwidth_gbs, "tflops": p.tflops, "n_devices": hw.n_devices},
                fits=fit.fits, max_concurrency=maxc, prefill_tps=p.prefill_tps,
                saturation_concurrency=batch.pop("saturation_concurrency"), memory=memory,
                calibration=[c.model_dump(mode="json") for c in p.calibration])
    if maxc == 0 or not p.prefill_tps:
        why = "the model and one sequence's KV cache do not fit" if maxc == 0 else "no compute figure for prefill"
        return _unevaluated(base, batch, notes, why)
    ttft, ttft_u, load, load_notes = _ttft(ctx, bm, p.prefill_tps, n_eff)
    per_user, agg = p.decode_tps_per_seq, p.decode_tps
    meets, head = _targets(ctx, maxc, ttft["p95"], per_user)
    knee = bm.knee() if math.isfinite(bm.knee()) else None
    batch.update(calibrated_knee_concurrency=knee, batched_factor=bm.batched_factor(n_eff), curve=[
        {"concurrency": b, "aggregate_tps": bm.aggregate_tps(b), "per_user_tps": bm.per_seq_tps(b)}
        for b in curve_points(maxc, req.concurrency, (base["saturation_concurrency"], knee))])
    cost = None
    if hw.id in ctx.prices:
        cost = cost_per_million(ctx.prices[hw.id], agg, years=req.amortisation_years, utilisation=req.utilisation,
                                users=req.concurrency)
    return Candidate(**base, effective_concurrency=n_eff, ttft_s=ttft, ttft_no_chunking_s=ttft_u,
                     decode_tps_per_user=per_user, aggregate_decode_tps=agg, meets_targets=meets, headroom=head,
                     batch=batch, load=load, cost=cost, notes=notes + load_notes)


def _rank_key(users: int) -> Any:
    """Sort key: meets the targets, then holds every stated user in memory (a machine that cannot is
    never ranked above one that can), then headroom, tok/s per user, TTFT p95."""
    def key(c: Candidate) -> tuple:
        return (not c.meets_targets, c.max_concurrency < users, c.max_concurrency == 0, -(c.headroom or 0.0),
                -(c.decode_tps_per_user or 0.0), c.ttft_s.get("p95") or math.inf)
    return key


def _unmatched_prices(ctx: _Ctx, out: list[Candidate]) -> list[str]:
    ids = {c.hardware["id"] for c in out}
    return [f"Price for {k!r} matched no candidate (use its id, e.g. {next(iter(ids), 'nvidia-h200')})."
            for k in ctx.prices if k not in ids]


def _assumptions(req: CompareRequest) -> list[str]:
    out = ["Engine: llama.cpp unless a backend is given, except datacenter GPUs serving 4 or more users, which "
           "are assumed to run vLLM (continuous batching); multi-GPU entries use a layer split with llama.cpp and "
           "tensor parallel with vLLM/SGLang/TensorRT-LLM (two all-reduces per layer over the interconnect).",
           "Decode step = max(weights + every sequence's KV cache read at the calibrated bandwidth, "
           "2 × active parameters FLOPs per sequence at the calibrated compute). Adding users stops being free "
           "at the smaller of the ridge-point batch (FLOPS / BW × bpw / 16, spec sheet: compute-bound beyond) "
           "and the KV knee (weights ÷ KV bytes per sequence: the users' KV reads outweigh the weights beyond).",
           f"TTFT under load: Poisson arrivals, users × requests per minute; a deterministic discrete-event "
           f"simulation ({SIM_ARRIVALS} arrivals, seed {SIM_SEED}); primary figures use chunked prefill "
           f"({req.chunk_tokens}-token chunks), 'no chunking' lets a prompt run whole while streams stall. The "
           "unchunked mean is checked against Pollaczek–Khinchine and its p95 against the exact M/D/1 "
           "distribution (Erlang/Crommelin).",
           f"Memory: weights + KV per sequence ({req.kv_quant}) × sequences + 0.5 GB + 3 % of the weights.",
           "Meets targets: every user fits in memory, TTFT p95 ≤ target, per-user tok/s ≥ target (with all "
           "users streaming at once); headroom = the tightest margin, min(max users / users, TTFT target / "
           "p95, tok/s per user / target). Ranked: meets the targets, then headroom, then tok/s per user."]
    if req.prices:
        out.append(f"Cost: only the prices given; amortised over {req.amortisation_years:g} years at "
                   f"{req.utilisation:.0%} utilisation; hardware only (no electricity, no staff).")
    return out


def compare_request(store: Store, req: CompareRequest, *, hardware: list[Hardware] | None = None,
                    model_spec: ModelSpec | None = None, quant_format: QuantFormat | None = None) -> dict[str, Any]:
    """Candidates ranked by meeting the targets, then holding every user, then headroom (JSON-ready dict).

    ``hardware``, ``model_spec``, ``quant_format``: already-resolved machines (with their stated memory),
    model and format (from a Situation); they take the place of ``req.candidates``/``model``/``quant``.
    """
    model = model_spec or catalog.resolve_model(store, req.model).value
    quant = quant_format or (catalog.resolve_quant(store, req.quant, backend=req.backend).value if req.quant
                             else catalog.all_quants(store)["Q4_K_M"])
    hws = [(h, []) for h in hardware] if hardware else _resolve_candidates(store, req.candidates)
    ctx = _Ctx(req=req, model=model, quant=quant, cal=calibration_model(store), kv_bpe=KV_BYTES_PER_ELEMENT[req.kv_quant],
               rate_per_s=(req.requests_per_minute or 0.0) * req.concurrency / 60.0,
               prices=_resolve_prices(store, req.prices))
    out: list[Candidate] = []
    excluded = []
    for hw, hw_notes in hws:
        try:
            c = _evaluate(store, ctx, hw, hw_notes)
        except (AdvisorError, ValueError):
            continue
        if req.candidates or hardware or c.max_concurrency > 0:
            out.append(c)
        else:
            excluded.append(hw.id)
    out.sort(key=_rank_key(req.concurrency))
    for i, c in enumerate(out, 1):
        c.rank = i
    result = {"model": model.id, "quant": quant.name, "bits_per_weight": quant.bits_per_weight,
            "kv_quant": req.kv_quant, "backend": req.backend, "prompt_tokens": req.prompt_tokens,
            "gen_tokens": req.gen_tokens, "shared_prefix_tokens": req.shared_prefix_tokens,
            "concurrency": req.concurrency, "requests_per_minute": req.requests_per_minute,
            "targets": {"ttft_p95_s": req.ttft_target_s, "tps_per_user": req.tps_per_user},
            "assumptions": _assumptions(req) + _unmatched_prices(ctx, out), "excluded_do_not_fit": excluded,
            "candidates": [c.model_dump(mode="json") for c in out[:req.limit]]}
    result["summary"] = summary_lines(result)
    return json_safe(result)


def compare(store: Store, *, model: str, **kw: Any) -> dict[str, Any]:
    """Keyword front-end of :func:`compare_request` (same fields as :class:`CompareRequest`)."""
    try:
        req = CompareRequest(model=model, **{k: v for k, v in kw.items() if v is not None})
    except ValueError as e:  # pydantic ValidationError
        raise InputError(_validation_message(e)) from e
    return compare_request(store, req)


def compare_situation(store: Store, situation: Any, **changes: Any) -> dict[str, Any]:
    """Compare from the chat's :class:`~advisor.understand.situation.Situation`: its model, format,
    engine, lengths, users and request rate, over the machine asked about plus ``compare_hardware``
    (each with its stated memory and GPU count). ``changes``: :class:`CompareRequest` fields on top.

    Raises:
        InputError: no model resolved, or a field out of range.
    """
    if situation.model is None:
        raise InputError("Need a resolved model to compare machines.")
    machines = [m for m in [situation.machine, *situation.compare_hardware] if m is not None and m.hardware is not None]
    hws = []
    for m in machines:
        hw = m.hardware
        if m.count > 1 and hw.n_devices == 1:
            hw = hw.model_copy(update={"id": f"{hw.id}x{m.count}", "name": f"{m.count}× {hw.name}", "n_devices": m.count})
        hws.append(hw)
    w = situation.workload
    fields: dict[str, Any] = dict(
        model=situation.model.id, quant=situation.quant.name if situation.quant else None,
        backend=situation.engine_text or situation.engine, prompt_tokens=max(1, w.prompt_tokens),
        gen_tokens=max(1, w.gen_tokens), concurrency=max(1, w.users), requests_per_minute=w.requests_per_minute,
        shared_prefix_tokens=w.shared_prefix_tokens if w.shared_prefix_tokens < w.prompt_tokens else 0)
    fields.update(changes)
    try:
        req = CompareRequest(**{k: v for k, v in fields.items() if v is not None})
    except ValueError as e:  # pydantic ValidationError
        raise InputError(_validation_message(e)) from e
    return compare_request(store, req, hardware=hws or None, model_spec=situation.model, quant_format=situation.quant)


def _validation_message(e: Exception) -> str:
    errs: list[Any] = getattr(e, "errors", list)()
    parts = [f"{'.'.join(str(x) for x in err['loc'])}: {str(err['msg']).removeprefix('Value error, ')}"
             for err in errs[:5]]
    return "invalid input: " + ("; ".join(parts) if parts else str(e))


# ----------------------------------------------------------------------------------- output
def _num(x: float | None, fmt: str = "{:.1f}") -> str:
    return "—" if x is None else fmt.format(x)


def table_rows(result: dict[str, Any]) -> list[list[Any]]:
    """One row per candidate, in :data:`TABLE_HEADERS` order (strings, for tables)."""
    rows = []
    for c in result["candidates"]:
        t, tu = c["ttft_s"], c["ttft_no_chunking_s"]
        ttft = "overloaded" if c.get("load") and c["load"].get("overloaded") else (
            f"{_num(t['median'])} / {_num(t['p95'])}")
        cost = c.get("cost") or {}
        rows.append([c["rank"], c["hardware"]["name"], "yes" if c["fits"] else "no", c["max_concurrency"], ttft,
                     _num(tu["p95"]), _num(c["decode_tps_per_user"]), _num(c["aggregate_decode_tps"], "{:,.0f}"),
                     c["saturation_concurrency"] or "—", "yes" if c["meets_targets"] else "no",
                     _num(cost.get("usd_per_million_tokens"), "{:,.2f}")])
    return rows


def table_markdown(result: dict[str, Any]) -> str:
    """The ranked comparison as a markdown table with a one-line header."""
    head = "| " + " | ".join(TABLE_HEADERS) + " |"
    sep = "|" + "|".join("---:" if i not in (1, 2, 9) else "---" for i in range(len(TABLE_HEADERS))) + "|"
    body = ["| " + " | ".join(str(x) for x in r) + " |" for r in table_rows(result)]
    rpm = result.get("requests_per_minute")
    load = f", {rpm:g} requests/min each" if rpm else ""
    title = (f"{result['model']} at {result['quant']}, {result['concurrency']} users{load}, "
             f"{result['prompt_tokens']:,}-token prompts, {result['gen_tokens']:,}-token answers")
    return title + "\n\n" + "\n".join([head, sep, *body])


def summary_lines(result: dict[str, Any]) -> list[str]:
    """One sentence per top candidate: targets, TTFT p95, per-user speed, where users stop being free."""
    out = []
    for c in result["candidates"][:5]:
        name = c["hardware"]["name"]
        if not c["max_concurrency"]:
            out.append(f"{name}: does not hold the model with one {result['prompt_tokens'] + result['gen_tokens']:,}"
                       f"-token sequence ({c['memory']['weights_gb']:.0f} GB of weights, "
                       f"{c['memory']['usable_gb']:.0f} GB usable).")
            continue
        verdict = "meets the targets" if c["meets_targets"] else "misses"
        p95 = c["ttft_s"]["p95"]
        ttft = "overloaded" if p95 is None else f"TTFT p95 {p95:.1f} s"
        sat, why = c["saturation_concurrency"], c["batch"].get("saturation_limit", "")
        then = ("compute-bound, aggregate tok/s flattens" if why.startswith("compute")
                else "every user's KV-cache reads outweigh the weights")
        free = f"; adding users is nearly free up to ~{sat} ({then} beyond)" if sat else ""
        n = c["effective_concurrency"]
        out.append(f"{name} {verdict}: {ttft}, {c['decode_tps_per_user']:.1f} tok/s per user at "
                   f"{n} user{'s' if n != 1 else ''}, {c['max_concurrency']} fit in memory{free}.")
    return out


def notes_markdown(result: dict[str, Any]) -> str:
    """Summary, per-candidate notes (top five) and the assumptions, as markdown."""
    summary = summary_lines(result) or [
        f"No candidate holds {result['model']} at {result['quant']} with a "
        f"{result['prompt_tokens'] + result['gen_tokens']:,}-token context (excluded: "
        f"{', '.join(result.get('excluded_do_not_fit', [])[:8]) or 'none'})."]
    lines = ["**Summary**", *[f"- {s}" for s in summary], "", "**Notes**"]
    for c in result["candidates"][:5]:
        lines += [f"- *{c['hardware']['name']}*: " + " ".join(c["notes"])]
    lines += ["", "**Assumptions**", *[f"- {a}" for a in result["assumptions"]]]
    return "\n".join(lines)
