"""Compare: resolve the candidates, evaluate each, rank them (JSON-ready result)."""

from __future__ import annotations

import math
from typing import Any

from advisor.compare.cost import resolve_prices
from advisor.compare.evaluate import Candidate, Ctx, evaluate
from advisor.compare.output import summary_lines
from advisor.compare.request import (
    KV_BYTES_PER_ELEMENT,
    SIM_ARRIVALS,
    SIM_SEED,
    CompareRequest,
    validation_message,
)
from advisor.errors import AdvisorError, InputError
from advisor.models import Hardware, ModelSpec, QuantFormat
from advisor.perf import calibration_model
from advisor.report import json_safe
from advisor.understand.text import split_stated_memory  # names are read by understanding
from knowledge import catalog
from knowledge.store import Store

__all__ = ["compare", "compare_request", "compare_situation"]


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



def _rank_key(users: int) -> Any:
    """Sort key: meets the targets, then holds every stated user in memory (a machine that cannot is
    never ranked above one that can), then headroom, tok/s per user, TTFT p95."""
    def key(c: Candidate) -> tuple:
        return (not c.meets_targets, c.max_concurrency < users, c.max_concurrency == 0, -(c.headroom or 0.0),
                -(c.decode_tps_per_user or 0.0), c.ttft_s.get("p95") or math.inf)
    return key


def _unmatched_prices(ctx: Ctx, out: list[Candidate]) -> list[str]:
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
    ctx = Ctx(req=req, model=model, quant=quant, cal=calibration_model(store), kv_bpe=KV_BYTES_PER_ELEMENT[req.kv_quant],
               rate_per_s=(req.requests_per_minute or 0.0) * req.concurrency / 60.0,
               prices=resolve_prices(store, req.prices))
    out: list[Candidate] = []
    excluded = []
    for hw, hw_notes in hws:
        try:
            c = evaluate(store, ctx, hw, hw_notes)
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
    fields: dict[str, Any] = dict(
        model=situation.model.id, quant=situation.quant.name if situation.quant else None,
        backend=situation.engine_text or situation.engine, prompt_tokens=max(1, w.prompt_tokens),
        gen_tokens=max(1, w.gen_tokens), concurrency=max(1, w.users), requests_per_minute=w.requests_per_minute,
        shared_prefix_tokens=w.shared_prefix_tokens if w.shared_prefix_tokens < w.prompt_tokens else 0)
    fields.update(changes)
    try:
        req = CompareRequest(**{k: v for k, v in fields.items() if v is not None})
    except ValueError as e:  # pydantic ValidationError
        raise InputError(validation_message(e)) from e
    return compare_request(store, req, hardware=hws or None, model_spec=situation.model, quant_format=situation.quant)
