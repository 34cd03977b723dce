"""Rank hardware for a multi-user workload (teams choosing what to buy).

Per candidate: memory fit at the requested concurrency, the largest concurrency that fits,
aggregate and per-user decode tok/s from the batched-decode model in :func:`advisor.perf.predict`,
the concurrency where adding users stops being free (decode's arithmetic intensity reaches the
ridge point), and TTFT under load from an M/D/1 queue of prefill work (Pollaczek–Khinchine mean
wait ``ρ / (2 μ (1 − ρ))`` for deterministic service; the 95th percentile is taken as 3× the mean
wait, an approximation stated in the notes).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from advisor import roofline
from advisor.errors import AdvisorError
from advisor.models import Hardware
from advisor.perf import calibration_model, predict
from knowledge import catalog
from knowledge.store import Store

__all__ = ["Candidate", "compare", "table_markdown"]


class Candidate(BaseModel):
    hardware: dict[str, Any]
    fits: bool
    max_concurrency: int
    ttft_s: dict[str, float | None]
    decode_tps_per_user: float
    aggregate_decode_tps: float
    prefill_tps: float | None
    saturation_concurrency: int | None
    meets_targets: bool
    headroom: float
    notes: list[str] = Field(default_factory=list)
    calibration: list[dict[str, Any]] = Field(default_factory=list)


def _max_conc(hw: Hardware, model: Any, bpw: float, ctx: int) -> int:
    lo = 0
    for n in (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024):
        if roofline.memory_fit(hw, model, bpw, context_tokens=ctx, concurrency=n).fits:
            lo = n
        else:
            break
    return lo


def compare(
    store: Store, *, model: str, quant: str | None = None, prompt_tokens: int = 2000, gen_tokens: int = 300,
    concurrency: int = 1, requests_per_minute: float | None = None, ttft_target_s: float | None = None,
    tps_per_user: float | None = None, candidates: list[str] | None = None, limit: int = 15,
) -> dict[str, Any]:
    """Candidates ranked by meeting the targets, then headroom. Returns a JSON-ready dict."""
    m = catalog.resolve_model(store, model).value
    q = catalog.resolve_quant(store, quant).value if quant else catalog.all_quants(store)["Q4_K_M"]
    if candidates:
        hws = []
        for c in candidates:
            mt = catalog.resolve_hardware(store, c)
            hw = mt.value
            if hw.memory_gb is None and hw.memory_gb_options:
                hw = hw.model_copy(update={"memory_gb": max(hw.memory_gb_options)})
            hws.append(hw)
    else:
        hws = [h.model_copy(update={"memory_gb": max(h.memory_gb_options)}) for h in catalog.all_hardware(store).values()
               if h.memory_gb_options and h.kind != "cpu"]
    cal = calibration_model(store)
    ctx = prompt_tokens + gen_tokens
    out: list[Candidate] = []
    rate_per_s = (requests_per_minute or 0) * concurrency / 60.0
    for hw in hws:
        try:
            p = predict(store, hardware=hw, model=m, quant=q, prompt_tokens=prompt_tokens, gen_tokens=gen_tokens,
                        concurrency=concurrency, cal=cal)
        except (AdvisorError, ValueError):
            continue
        if not p.memory.fits and not candidates:
            continue
        notes = list(p.assumptions)
        svc = prompt_tokens / p.prefill_tps if p.prefill_tps else None
        ttft_med = ttft_p95 = svc
        if svc and rate_per_s:
            rho = rate_per_s * svc
            if rho >= 1:
                ttft_med = ttft_p95 = float("inf")
                notes.append(f"Prefill demand {rho:.1f}× capacity: queues grow without bound.")
            else:
                wait = rho * svc / (2 * (1 - rho))
                ttft_med, ttft_p95 = svc + wait, svc + 3 * wait
        sat = None
        if p.tflops and p.ridge_point_flop_per_byte:
            sat = max(1, int(p.ridge_point_flop_per_byte * q.bits_per_weight / 8 / 2))
        maxc = _max_conc(hw, m, q.bits_per_weight, ctx)
        meets = p.memory.fits and (ttft_target_s is None or (ttft_p95 or 1e9) <= ttft_target_s) and (
            tps_per_user is None or (p.decode_tps_per_seq or 0) >= tps_per_user)
        head = min((ttft_target_s / ttft_p95) if (ttft_target_s and ttft_p95) else 1e3,
                   ((p.decode_tps_per_seq or 0) / tps_per_user) if tps_per_user else 1e3,
                   (p.decode_tps_per_seq or 0))
        out.append(Candidate(
            hardware={"id": hw.id, "name": hw.name, "memory_gb": hw.memory_gb, "bandwidth_gbs": hw.bandwidth_gbs},
            fits=p.memory.fits, max_concurrency=maxc, ttft_s={"median": ttft_med, "p95": ttft_p95},
            decode_tps_per_user=p.decode_tps_per_seq or 0.0, aggregate_decode_tps=p.decode_tps or 0.0,
            prefill_tps=p.prefill_tps, saturation_concurrency=sat, meets_targets=meets, headroom=head,
            notes=notes + ["TTFT p95 ≈ service time + 3 × mean M/D/1 wait (approximation)."],
            calibration=[c.model_dump() for c in p.calibration],
        ))
    out.sort(key=lambda c: (not c.meets_targets, not c.fits, -c.headroom))
    return {"model": m.id, "quant": q.name, "prompt_tokens": prompt_tokens, "gen_tokens": gen_tokens,
            "concurrency": concurrency, "candidates": [c.model_dump(mode="json") for c in out[:limit]]}


def table_markdown(result: dict[str, Any]) -> str:
    rows = ["| hardware | fits | max users | TTFT median / p95 (s) | tok/s per user | aggregate tok/s | saturates at |",
            "|---|---|---:|---:|---:|---:|---:|"]
    for c in result["candidates"]:
        t = c["ttft_s"]
        rows.append(f"| {c['hardware']['name']} | {'yes' if c['fits'] else 'no'} | {c['max_concurrency']} | "
                    f"{(t['median'] or 0):.1f} / {(t['p95'] or 0):.1f} | {c['decode_tps_per_user']:.1f} | "
                    f"{c['aggregate_decode_tps']:.0f} | {c['saturation_concurrency'] or '?'} |")
    return f"{result['model']} at {result['quant']}, {result['concurrency']} users\n\n" + "\n".join(rows)
