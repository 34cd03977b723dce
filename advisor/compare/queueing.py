"""TTFT under load: M/D/1 formulas and a small deterministic discrete-event simulation.

Poisson arrivals at ``users x requests_per_minute / 60`` per second, FIFO prefill, decode steps of all
running streams interleaved (:func:`simulate_load`, a few thousand arrivals with a fixed seed), run
without chunked prefill (a prompt runs whole; every running stream stalls meanwhile) and with it
(each iteration carries one decode step plus a prompt chunk). The unchunked case is an M/D/1 queue of
prefill work: its mean is checked against Pollaczek-Khinchine (:func:`pk_mean_wait_s`) and its p95
against the exact M/D/1 waiting-time distribution (Erlang 1909 / Crommelin 1932, :func:`md1_wait_cdf`).
"""

from __future__ import annotations

import heapq
import math
import random
import statistics
from collections import deque
from dataclasses import dataclass, field
from decimal import Decimal, localcontext

from advisor.compare.request import SIM_ARRIVALS, SIM_SEED, SIM_WARMUP
from advisor.perf.step import StepModel

__all__ = ["LoadResult", "load_utilisation", "md1_wait_cdf", "md1_wait_quantile", "pk_mean_wait_s", "simulate_load"]


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
