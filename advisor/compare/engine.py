"""Compare: resolve the candidates, evaluate each, rank them (JSON-ready result)."""

from __future__ import annotations

import difflib
import math
from dataclasses import replace
from typing import Any

from advisor.compare.cost import match_prices
from advisor.compare.evaluate import STATUSES, Candidate, Ctx, evaluate
from advisor.compare.output import summary_lines
from advisor.compare.request import (
    KV_BYTES_PER_ELEMENT,
    MAX_CONCURRENCY_CAP,
    SIM_ARRIVALS,
    SIM_SEED,
    CompareRequest,
    validation_message,
)
from advisor.errors import AdvisorError, InputError
from advisor.models import Hardware, ModelSpec, QuantFormat
from advisor.perf import calibration_model
from advisor.perf.moe import weights_bpw
from advisor.report import json_safe
from advisor.understand.engine import classify_engine
from advisor.understand.formats import serving_builds
from advisor.understand.resolve import resolve_default
from advisor.understand.text import split_stated_memory  # names are read by understanding
from knowledge import catalog
from knowledge.store import Store

__all__ = ["compare", "compare_request", "compare_situation"]



IN_FLIGHT_TPS = 10.0  # tok/s per stream an open service is sized at when no target is said (the Compare tab's default)


def open_arrivals(rpm_total: float, gen_tokens: int, tps: float | None = None) -> tuple[int, float]:
    """A request rate said without a head-count ("3 requests a second"): the streams in flight and each one's rate.

    By Little's law the requests in flight are the arrival rate × the time each one takes to stream its answer,
    ``λ × gen_tokens / tps`` (``tps`` the per-stream target, else :data:`IN_FLIGHT_TPS`), so the service is sized
    as that many users each sending ``rpm_total / users`` a minute (at least one; the total rate is unchanged)."""
    users = max(1, min(MAX_CONCURRENCY_CAP, math.ceil(rpm_total / 60.0 * max(1, gen_tokens) / (tps or IN_FLIGHT_TPS))))
    return users, rpm_total / users

def _resolve_candidates(store: Store, names: list[str] | None) -> list[tuple[Hardware, list[str]]]:
    if not names:
        return [(h.model_copy(update={"memory_gb": max(h.memory_gb_options)}), [])
                for h in catalog.all_hardware(store).values() if h.memory_gb_options and h.kind != "cpu"]
    out = []
    seen: set[tuple[str, float | None]] = set()
    for name in names:
        # "apple-m3-ultra-80gpu 96GB": the memory a person stated stays (never the largest option).
        bare, mem_gb = split_stated_memory(name)
        m = resolve_default(store, bare, memory_gb=mem_gb)  # "an H100": its smallest version, said so
        hw, notes = m.value, list(m.assumptions)
        if hw.memory_gb is None and hw.memory_gb_options:
            hw = hw.model_copy(update={"memory_gb": max(hw.memory_gb_options)})
            notes.append(f"Memory not stated: assumed the largest option, {hw.memory_gb:g} GB.")
        if (hw.id, hw.memory_gb) in seen:
            continue  # "RTX 4090, rtx 4090, nvidia-rtx-4090": one machine, compared once
        seen.add((hw.id, hw.memory_gb))
        out.append((hw, notes))
    return out



def _rank_key(c: Candidate) -> tuple:
    """Sort key: what the machine can do for the stated users (:data:`~advisor.compare.evaluate.STATUSES`
    order: meets the targets, holds every user, holds some (the rest wait for a slot), overloaded, does not
    fit), then for overloaded machines the load they are asked to carry (least over first), then price (the cheaper first when prices are given; a priced machine before an unpriced one),
    then headroom, tok/s per user, TTFT p95. A machine that cannot hold the users (overloaded, or the
    model does not fit) is never ranked above one that can, whatever its speed."""
    price = (c.cost or {}).get("price_usd")
    # overloaded machines: the one that carries the most of the load first (≈ 124× over before ≈ 177× over)
    over = float((c.load or {}).get("utilisation_lower_bound") or 0.0) if c.status == "overloaded" else 0.0
    return (STATUSES.index(c.status), over, math.inf if price is None else price, -(c.headroom or 0.0),
            -(c.decode_tps_per_user or 0.0), c.ttft_s.get("p95") or math.inf)


def _unmatched_prices(unmatched: list[str], prices: dict[str, float], out: list[Candidate]) -> list[str]:
    """One sentence per price name that matched no candidate: the machines compared, and the closest name
    written with the price as given ("H200=32000" → "e.g. H100 PCIe 80GB=32000 if that is its price")."""
    names = [c.hardware["name"] for c in out]
    notes = []
    for k in unmatched:
        near = max(names, key=lambda n: difflib.SequenceMatcher(None, k.lower(), n.lower()).ratio(), default=None)
        eg = f": write it as a machine is named, e.g. {near}={prices[k]:g} if that is its price" if near else ""
        notes.append(f"The price {k!r} matched none of the machines compared ({', '.join(names[:4])}), "
                     f"so it is left out{eg}.")
    return notes


def _assumptions(req: CompareRequest) -> list[str]:
    """How the numbers are worked out, plain words first and the field terms in brackets."""
    rate = (f"Requests arrive at random, {req.requests_per_minute:g} per minute from each user (Poisson arrivals); "
            "the busier the machine, the longer the wait for a first word grows, and once requests come faster "
            "than it can answer the queue grows without bound (overloaded). " if req.requests_per_minute else
            "No request rate given: every request finds the machine idle, so each waits only for its own prompt "
            "to be read and the median equals the 95th percentile; give requests per minute to see queueing. ")
    from advisor.understand.engine import ENGINE_NAMES, classify_engine

    named = classify_engine(req.backend)[0] if req.backend else None
    engine = (f"Engine: {ENGINE_NAMES.get(named, req.backend)}, as you named it." if named and named != "other" else
              "Engine: llama.cpp unless you name one; for 4 or more users on a datacenter GPU, vLLM (it batches "
              "users continuously).")
    out = [engine + " Several GPUs: llama.cpp splits the layers between them; vLLM, SGLang and "
           "TensorRT-LLM split every layer (tensor parallel: two exchanges of activations per layer over the link "
           "between the GPUs).",
           "Each step of an answer reads the whole model once plus every user's conversation memory (KV cache), "
           "and computes for every user; the step takes the longer of the two (roofline, with the bandwidth and "
           "compute shares calibrated on measurements). Adding users is nearly free until the chip's compute "
           "becomes the limit (ridge point: FLOP/s ÷ bandwidth × bits per weight ÷ 16) or until the users' "
           "conversation memory outweighs the model (KV knee: weights ÷ KV bytes per user).",
           rate + f"Worked out by simulating {SIM_ARRIVALS} requests (the same random draws every time, seed "
           f"{SIM_SEED}). Long prompts are read {req.chunk_tokens} tokens at a time so other answers keep streaming "
           "(chunked prefill); 'unchunked' reads each prompt whole while the other answers pause. The unchunked "
           "case is a queue with a fixed service time, checked against its textbook formulas (M/D/1: "
           "Pollaczek–Khinchine mean, Erlang/Crommelin 95th percentile).",
           f"Memory: the model's weights, plus each user's conversation memory (KV cache in {req.kv_quant}) for the "
           "prompt and the answer, plus 0.5 GB and 3 % of the weights for the engine.",
           "Meets the targets: every user fits in memory, 95 % of first words come within the target, and each "
           "user's answer streams at least at the target speed with everyone streaming at once. Ranked: meets "
           "the targets, then holds every user, then holds some (the others wait for a slot), then overloaded, "
           "then does not fit, so a machine that cannot hold the users is never above one that can; within each, "
           "the cheaper first when prices are given, then by the tightest margin (headroom: users that fit ÷ users, TTFT target ÷ p95, tok/s ÷ target), then by "
           "tok/s per user."]
    if req.prices:
        out.append(f"Cost: only the prices given; amortised over {req.amortisation_years:g} years at "
                   f"{req.utilisation:.0%} utilisation; hardware only (no electricity, no staff).")
    return out


def _serving_build(store: Store, ctx: Ctx, hw: Hardware, notes: list[str]) -> Candidate | None:
    """The option at the smaller build people serve on such a card when the 16-bit checkpoint does not fit it (no format
    stated, a serving engine or none named): FP8 on GPUs with FP8 tensor cores when it holds every user, else the one
    of FP8 and AWQ 4-bit that holds the most. None when the comparison's format is not a 16-bit one, the engine is not
    a serving engine, or neither fits."""
    engine = classify_engine(ctx.req.backend)[0] if ctx.req.backend else None  # none named: the format sets it
    if ctx.quant.bits_per_weight < 16 or engine not in (None, "vllm", "sglang", "tensorrt-llm"):
        return None
    best: Candidate | None = None
    for name in serving_builds(hw.family):
        q = catalog.resolve_quant(store, name).value
        c = evaluate(store, replace(ctx, quant=q), hw, [*notes, (
            f"The {ctx.quant.name} weights do not fit: evaluated at {q.name}, the build served on such cards"
            + (" (its tensor cores multiply FP8)." if name.startswith("FP8") else "."))])
        if c.max_concurrency > (best.max_concurrency if best else 0):
            best = c.model_copy(update={"quant": q.name})
        if best is not None and best.max_concurrency >= ctx.req.concurrency:
            break  # the larger build that holds every user
    return best


def compare_request(store: Store, req: CompareRequest, *, hardware: list[Hardware] | None = None,
                    model_spec: ModelSpec | None = None, quant_format: QuantFormat | None = None,
                    quant_stated: bool | None = None) -> dict[str, Any]:
    """Candidates ranked by meeting the targets, then holding every user, then headroom (JSON-ready dict).

    ``hardware``, ``model_spec``, ``quant_format``: already-resolved machines (with their stated memory),
    model and format (from a Situation); they take the place of ``req.candidates``/``model``/``quant``.
    ``quant_stated``: False when the format is the chat's assumption (default: whether ``req.quant`` is set); an option
    the 16-bit weights do not fit is then evaluated at the serving build that fits it (:func:`_serving_build`;
    ``candidates[].quant`` says which).
    """
    model = model_spec or catalog.resolve_model(store, req.model).value
    if quant_format is None and not req.quant:  # the chat's rule: gpt-oss → MXFP4, mlx → 4-bit, vLLM → BF16
        from advisor.intake._dialog import default_quant

        name, _why = default_quant(req.backend, model.id)
        quant_format = catalog.resolve_quant(store, name).value
    quant = quant_format or catalog.resolve_quant(store, req.quant, backend=req.backend).value
    hws = [(h, []) for h in hardware] if hardware else _resolve_candidates(store, req.candidates)
    prices, unmatched = match_prices(store, req.prices, [h.id for h, _ in hws])
    ctx = Ctx(req=req, model=model, quant=quant, cal=calibration_model(store), kv_bpe=KV_BYTES_PER_ELEMENT[req.kv_quant],
               rate_per_s=(req.requests_per_minute or 0.0) * req.concurrency / 60.0,
               prices=prices)
    out: list[Candidate] = []
    excluded = []
    stated = quant_stated if quant_stated is not None else bool(req.quant)
    for hw, hw_notes in hws:
        try:
            c = evaluate(store, ctx, hw, hw_notes)
            if c.max_concurrency == 0 and not stated:
                c = _serving_build(store, ctx, hw, hw_notes) or c
        except (AdvisorError, ValueError):
            continue
        if req.candidates or hardware or c.max_concurrency > 0:
            out.append(c)
        else:
            excluded.append(hw.id)
    out.sort(key=_rank_key)
    for i, c in enumerate(out, 1):
        c.rank = i
    result = {"model": model.id, "quant": quant.name, "bits_per_weight": weights_bpw(model, quant),
            "kv_quant": req.kv_quant, "backend": req.backend, "prompt_tokens": req.prompt_tokens,
            "gen_tokens": req.gen_tokens, "shared_prefix_tokens": req.shared_prefix_tokens,
            "concurrency": req.concurrency, "requests_per_minute": req.requests_per_minute,
            "targets": {"ttft_p95_s": req.ttft_target_s, "tps_per_user": req.tps_per_user},
            "assumptions": _assumptions(req), "price_notes": _unmatched_prices(unmatched, req.prices, out),
            "excluded_do_not_fit": excluded,
            "candidates": [c.model_dump(mode="json") for c in out[:req.limit]]}
    result["summary"] = summary_lines(result)
    return json_safe(result)


def compare(store: Store, *, model: str, **kw: Any) -> dict[str, Any]:
    """Keyword front-end of :func:`compare_request` (same fields as :class:`CompareRequest`)."""
    try:
        req = CompareRequest(model=model, **{k: v for k, v in kw.items() if v is not None})
    except ValueError as e:  # pydantic ValidationError
        raise InputError(validation_message(e)) from e
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
    users, rpm = max(1, w.users), w.requests_per_minute
    if rpm and "concurrency" not in w.stated:
        users, rpm = open_arrivals(rpm * users, w.gen_tokens, w.decode_target_tps)
    fields: dict[str, Any] = dict(
        model=situation.model.id, quant=situation.quant.name if situation.quant else None,
        backend=situation.engine_text or situation.engine, prompt_tokens=max(1, w.prompt_tokens),
        gen_tokens=max(1, w.gen_tokens), concurrency=users, requests_per_minute=rpm,
        shared_prefix_tokens=w.shared_prefix_tokens if w.shared_prefix_tokens < w.prompt_tokens else 0)
    fields.update(changes)
    try:
        req = CompareRequest(**{k: v for k, v in fields.items() if v is not None})
    except ValueError as e:  # pydantic ValidationError
        raise InputError(validation_message(e)) from e
    return compare_request(store, req, hardware=hws or None, model_spec=situation.model, quant_format=situation.quant,
                           quant_stated=situation.facts.quant is not None)
