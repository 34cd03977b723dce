"""From a server-probe measurement to the advisor's usual inputs and outputs.

- :func:`scenario_of` turns a :class:`~advisor.probe.server.ServerProbeResult` into a
  :class:`~advisor.models.Scenario` (measured rates, model, engine as backend, GPU share), so the
  verdict comes from the same diagnose path as every other measurement;
- :func:`stored_rows` gives the results rows the store keeps (one per run, plus the batching pass
  as an aggregate ``batch`` > 1 row, as llama-batched-bench reports);
- :func:`summary_line` and :func:`result_markdown` say it in words.
"""

from __future__ import annotations

import re
import statistics
from typing import Any

from advisor.models import Scenario, Verdict
from advisor.probe.server import ServerProbeResult, ServerRun

__all__ = ["params_from_text", "result_markdown", "scenario_of", "stored_rows", "summary_line"]

#: How each engine's own setting for "more of the model on the GPU" is named.
_GPU_SETTING = {"ollama": "set num_gpu (or lower num_ctx so the KV cache fits)",
                "llama.cpp": "raise -ngl (--n-gpu-layers) or lower -c",
                "lm-studio": "raise GPU offload or lower the context length"}


def params_from_text(text: str | None) -> float | None:
    """Ollama's ``parameter_size`` ("8.0B", "494.03M") → billions of parameters; None if unreadable."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([BMK])\s*", text or "", re.I)
    if not m:
        return None
    scale = {"b": 1.0, "m": 1e-3, "k": 1e-6}[m.group(2).lower()]
    v = float(m.group(1)) * scale
    return v if v >= 0.001 else None


def _sound(runs: list[ServerRun]) -> list[ServerRun]:
    return [r for r in runs if r.prefill_tps > 0 and r.decode_tps]


def scenario_of(result: ServerProbeResult, *, hardware: str | None = None, memory_gb: float | None = None,
                system_ram_gb: float | None = None, gpu_count: int | None = None) -> Scenario:
    """The scenario a server measurement describes (longest prompt for prefill, median decode).

    Args:
        hardware: catalog id or name of this machine (None: unknown; physics bounds only).
        memory_gb: its accelerator memory, GB; system_ram_gb: RAM beside a discrete GPU, GB.
        gpu_count: accelerators in the machine.

    The allocated context (Ollama ``/api/ps`` ``context_length``, llama-server ``n_ctx``) becomes
    ``context_window``; the longest run's TTFT ``measured_ttft_s``.
    """
    runs = _sound(result.server_runs) or result.server_runs
    if not runs:
        return Scenario(model=result.model, backend=result.engine)
    longest = max(runs, key=lambda r: r.prompt_tokens)
    decodes = [r.decode_tps for r in runs if r.decode_tps]
    tags = (result.details.get("tags") or {}).get(result.model or "", {}) if isinstance(result.details.get("tags"), dict) else {}
    running = result.details.get("running") or {}
    det = running.get("details") if isinstance(running.get("details"), dict) else tags
    quant = (det or {}).get("quantization_level") or None
    params = params_from_text((det or {}).get("parameter_size"))
    lms = [m for m in result.details.get("lmstudio_models") or [] if isinstance(m, dict) and m.get("id") == result.model]
    if lms and not quant:
        quant = str(lms[0].get("quantization") or "") or None
    ctx = running.get("context_length") or result.details.get("n_ctx")
    return Scenario(
        hardware=hardware, memory_gb=memory_gb, backend=result.engine, model=(result.model or "")[:300] or None,
        params_b=params, quant=quant, prompt_tokens=longest.prompt_tokens, gen_tokens=longest.gen_tokens,
        measured_prefill_tps=longest.prefill_tps,
        measured_decode_tps=round(statistics.median(decodes), 2) if decodes else None,
        measured_ttft_s=longest.ttft_s if longest.ttft_s > 0 else None,
        gpu_fraction=result.gpu_share, system_ram_gb=system_ram_gb, gpu_count=gpu_count,
        context_window=int(ctx) if isinstance(ctx, int | float) and ctx >= 1 else None,
    )


def stored_rows(result: ServerProbeResult) -> list[dict[str, Any]]:
    """Results rows for :meth:`knowledge.store.Store.save_import` (measured by the stream, batch 1)."""
    scen = scenario_of(result)
    rows = [{"prefill_tps": r.prefill_tps, "decode_tps": r.decode_tps, "prompt_tokens": r.prompt_tokens,
             "gen_tokens": r.gen_tokens, "depth": 0, "batch": 1, "backend": result.engine, "model": result.model,
             "quant": scen.quant, "params_b": scen.params_b} for r in result.server_runs if r.prefill_tps > 0]
    b = result.batching
    if b is not None and result.server_runs:
        r0 = result.server_runs[0]
        rows.append({"prefill_tps": None, "decode_tps": b.aggregate_decode_tps, "prompt_tokens": r0.prompt_tokens,
                     "gen_tokens": r0.gen_tokens, "depth": 0, "batch": b.streams, "backend": result.engine,
                     "model": result.model, "quant": scen.quant, "params_b": scen.params_b})
    return rows


def summary_line(result: ServerProbeResult, verdict: Verdict | None) -> str:
    """One sentence: what runs where and how fast, against what this machine should give."""
    runs = _sound(result.server_runs)
    label, model = result.engine_label, result.model or "the model"
    if not runs:
        return f"{label} at {result.url} answered, but no run gave a decode rate to judge."
    dec = statistics.median([r.decode_tps for r in runs if r.decode_tps])
    pred = verdict.prediction if verdict else None
    if result.gpu_share is not None and result.gpu_share < 0.98:
        s = f"{label} runs {1 - result.gpu_share:.0%} of {model} on the CPU: decode {dec:.1f} tok/s"
        if pred:
            s += f", this machine gives about {pred.decode_tps:.0f} with every layer on the GPU"
        return s + f"; {_GPU_SETTING.get(result.engine, 'move more layers to the GPU or shorten the context')}."
    longest = max(runs, key=lambda r: r.prompt_tokens)
    s = (f"{label} serves {model}: decode {dec:.1f} tok/s, prefill {longest.prefill_tps:,.0f} tok/s at "
         f"{longest.prompt_tokens} prompt tokens (TTFT {longest.ttft_s:.2f} s)")
    if pred:
        s += f"; expected here about {pred.decode_tps:.0f} tok/s decode"
        if pred.prefill_tps:
            s += f" and {pred.prefill_tps:,.0f} tok/s prefill"
    return s + "."


def _ms(v: float) -> str:
    return f"{v:.2f}" if v < 10 else f"{v:.1f}"


def _rate(v: float | None) -> str:
    return "–" if not v else f"{v:,.1f}"


def result_markdown(result: ServerProbeResult, verdict: Verdict | None = None) -> str:
    """The measurement as markdown: a table of runs (stream vs server), batching, notes, verdict headline."""
    lines = [f"**{result.engine_label}** at `{result.url}`, model **{result.model or '?'}**", ""]
    lines += ["| prompt | gen | TTFT s | prefill tok/s | decode tok/s | ITL p50 / p95 ms | server: prefill / decode |",
              "|---:|---:|---:|---:|---:|---:|---:|"]
    for r in result.server_runs:
        said = (f"{_rate(r.server_prefill_tps)} / {_rate(r.server_decode_tps)}"
                if r.server_prefill_tps or r.server_decode_tps else "–")
        itl = (f"{_ms(r.itl_p50_ms)} / {_ms(r.itl_p95_ms)}" if r.itl_p50_ms is not None and r.itl_p95_ms is not None
               else "–")
        lines.append(f"| {r.prompt_tokens}{'≈' if r.prompt_tokens_estimated else ''} | {r.gen_tokens} | {r.ttft_s:.3f} | "
                     f"{r.prefill_tps:,.1f} | {_rate(r.decode_tps)} | {itl} | {said} |")
    if result.gpu_share is not None:
        lines += ["", f"On the GPU: {result.gpu_share:.0%} of the model (server's size_vram / size)."]
    if result.batching:
        lines += ["", result.batching.note]
    extra = result.disagreements + result.notes
    if extra:
        lines += [""] + [f"- {x}" for x in extra]
    pred = verdict.prediction if verdict is not None else None
    if pred is not None:
        rng = pred.decode_tps_range
        lines += ["", f"Prediction for this machine ({pred.hardware.get('name') or pred.hardware.get('id')}, "
                      f"{pred.quant}, {pred.prompt_tokens} prompt tokens): prefill ≈ "
                      + (f"{pred.prefill_tps:,.0f}" if pred.prefill_tps else "?")
                      + f" tok/s, decode ≈ {pred.decode_tps:,.1f} tok/s"
                      + (f" (usual range {rng[0]:,.1f}–{rng[1]:,.1f})" if rng else "") + "."]
    lines += ["", summary_line(result, verdict)]
    if verdict is not None and verdict.headline:
        lines += ["", verdict.headline]
        if verdict.fixes:
            f = verdict.fixes[0]
            lines.append(f"Best fix: **{f.title}** — {f.predicted_effect}")
    return "\n".join(lines)
