"""One candidate machine evaluated for a workload: memory, batched decode, TTFT under load, targets, cost.

Batched decode uses the one step model (:func:`advisor.perf.predict_step`, the same call the chat
makes): a decode step reads the weights once plus every sequence's KV cache and computes for every
sequence; aggregate tok/s ``= b / t(b)``, per user ``1 / t(b)``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, Field

from advisor import roofline
from advisor.calibration import CalibrationModel
from advisor.compare.capacity import (
    curve_points,
    kv_knee_batch,
    max_concurrency,
    saturation_batch,
    saturation_concurrency,
)
from advisor.compare.cost import cost_per_million
from advisor.compare.queueing import load_utilisation, md1_wait_quantile, pk_mean_wait_s, simulate_load
from advisor.compare.request import KV_BYTES_PER_ELEMENT, SIM_ARRIVALS, SIM_SEED, SIM_WARMUP, CompareRequest
from advisor.models import Hardware, ModelSpec, Prediction, QuantFormat
from advisor.perf import predict_step
from advisor.perf.moe import active_bpw, weights_bpw
from advisor.perf.step import StepModel
from knowledge.store import Store

__all__ = ["STATUSES", "Candidate", "Ctx", "candidate_status", "evaluate"]


# What a candidate can do for the stated users, best first (the first key of the ranking):
#   meets       every target met (all users fit in memory, TTFT p95 and tok/s per user within target);
#   holds       every user fits in memory and the queue stays finite, but a target is missed;
#   partial     fewer sequences fit than there are users: the others wait for a slot, the queue stays finite;
#   overloaded  requests arrive faster than the machine serves them: the queue grows without bound;
#   no_fit      the weights and one sequence's KV cache do not fit (or nothing to compute prefill with).
STATUSES = ("meets", "holds", "partial", "overloaded", "no_fit")


def candidate_status(maxc: int, users: int, overloaded: bool, meets: bool, evaluated: bool = True) -> str:
    """One of :data:`STATUSES` for a candidate (see there); ``maxc`` = sequences that fit in memory.

    >>> candidate_status(12, 20, overloaded=False, meets=False)
    'partial'
    >>> candidate_status(121, 20, overloaded=True, meets=False)
    'overloaded'
    """
    if maxc == 0 or not evaluated:
        return "no_fit"
    if overloaded:
        return "overloaded"
    if meets:
        return "meets"
    return "holds" if maxc >= users else "partial"


class Candidate(BaseModel):
    """One hardware option evaluated for the workload (JSON field units in the names).

    ``status`` is one of :data:`STATUSES`; ``holds_users`` is True for ``meets``/``holds``/``partial``
    (the machine serves every stated user with a finite wait), False when it is overloaded or the
    model does not fit: such a machine is never ranked above one that holds the users.
    """

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
    status: str = "no_fit"
    holds_users: bool = False
    memory: dict[str, Any]
    batch: dict[str, Any]
    load: dict[str, Any] | None = None
    cost: dict[str, Any] | None = None
    notes: list[str] = Field(default_factory=list)
    calibration: list[dict[str, Any]] = Field(default_factory=list)
    quant: str | None = None  # the weight format this option was evaluated at, when not the comparison's own


@dataclass
class Ctx:
    """Resolved workload shared by every candidate."""

    req: CompareRequest
    model: ModelSpec
    quant: QuantFormat
    cal: CalibrationModel
    kv_bpe: float
    rate_per_s: float
    prices: dict[str, float]



def _notes(ctx: Ctx, hw: Hardware, maxc: int) -> list[str]:
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


def _ttft(ctx: Ctx, bm: StepModel, pp: float, slots: int) -> tuple[dict, dict, dict | None, list[str]]:
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


def _targets(ctx: Ctx, maxc: int, ttft_p95: float | None, per_user: float | None) -> tuple[bool, float | None]:
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


def _memory(ctx: Ctx, hw: Hardware) -> tuple[int, Any, dict[str, Any]]:
    """(max concurrency, MemoryFit at the users, memory summary in GB)."""
    req, bpw = ctx.req, weights_bpw(ctx.model, ctx.quant)
    tokens = max(req.prompt_tokens + req.gen_tokens, req.context_tokens or 0)  # the context each user reserves
    maxc = max_concurrency(hw, ctx.model, bpw, tokens, ctx.kv_bpe)
    fit = roofline.memory_fit(hw, ctx.model, bpw, context_tokens=tokens, concurrency=req.concurrency,
                              kv_bytes_per_element=ctx.kv_bpe)
    summary = {"weights_gb": fit.weights_gb, "kv_per_user_gb": roofline.kv_bytes(ctx.model, tokens, ctx.kv_bpe) / roofline.GB,
               "overhead_gb": fit.overhead_gb, "required_gb": fit.required_gb, "usable_gb": fit.usable_gb,
               "kv_quant": req.kv_quant, "note": fit.note}
    return maxc, fit, summary


def _saturation(ctx: Ctx, p: Prediction) -> dict[str, Any]:
    """Spec-sheet saturation: ridge-point batch, KV knee, the binding one (see :func:`saturation_concurrency`)."""
    req, bpw = ctx.req, weights_bpw(ctx.model, ctx.quant)
    w = roofline.weight_bytes_read_per_token(ctx.model, active_bpw(ctx.model, ctx.quant))
    kv = roofline.kv_bytes(ctx.model, req.prompt_tokens + req.gen_tokens / 2, ctx.kv_bpe)  # mean decode context
    sat, why = saturation_concurrency(p.tflops, p.bandwidth_gbs, bpw, w, kv)
    return {"ridge_point_flop_per_byte": p.ridge_point_flop_per_byte,
            "saturation_batch": saturation_batch(p.tflops, p.bandwidth_gbs, bpw) if p.tflops else None,
            "kv_knee_batch": kv_knee_batch(w, kv), "saturation_concurrency": sat, "saturation_limit": why}


def _unevaluated(base: dict[str, Any], batch: dict[str, Any], notes: list[str], why: str) -> Candidate:
    none = {"median": None, "p95": None, "mean": None}
    return Candidate(**{**base, "saturation_concurrency": None}, effective_concurrency=0, ttft_s=none,
                     ttft_no_chunking_s=dict(none), decode_tps_per_user=None, aggregate_decode_tps=None,
                     meets_targets=False, headroom=None, status="no_fit", holds_users=False,
                     batch={**batch, "curve": []},
                     notes=notes + [f"Not evaluated under load: {why}."])


def evaluate(store: Store, ctx: Ctx, hw: Hardware, extra_notes: list[str]) -> Candidate:
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
    status = candidate_status(maxc, req.concurrency, bool(load and load.get("overloaded")), meets)
    return Candidate(**base, effective_concurrency=n_eff, ttft_s=ttft, ttft_no_chunking_s=ttft_u,
                     decode_tps_per_user=per_user, aggregate_decode_tps=agg, meets_targets=meets, headroom=head,
                     status=status, holds_users=status in ("meets", "holds", "partial"),
                     batch=batch, load=load, cost=cost, notes=notes + load_notes)
