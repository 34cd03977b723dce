"""Verdicts and predictions in words: plain answer first, then numbers, then why, then fixes.

Household thresholds (stated in every answer that uses them):

* reading speed: adults read about 238 words a minute silently (Brysbaert 2019, meta-analysis of
  190 studies) ≈ 4 words/s ≈ 5.3 tok/s at 0.75 words per token; streaming faster than that is
  "faster than you read";
* first token: under 1 s feels instant, up to 5 s is a noticeable pause, over 15 s feels broken
  (the usual 0.1 s / 1 s / 10 s response-time limits of Nielsen 1993, widened for chat).
"""

from __future__ import annotations

import math
from typing import Any

from advisor.models import Prediction, ProbeResult, Scenario, Verdict

__all__ = ["json_safe", "facts_summary", "plain_answer", "plain_verdict", "prediction_markdown", "probe_markdown", "verdict_markdown", "WORDS_PER_TOKEN", "READING_TPS"]

WORDS_PER_TOKEN = 0.75
READING_WPM = 238
READING_TPS = READING_WPM / 60 / WORDS_PER_TOKEN
TTFT_INSTANT_S, TTFT_PAUSE_S, TTFT_BROKEN_S = 1.0, 5.0, 15.0


def _fmt_rate(x: float | None) -> str:
    if x is None:
        return "?"
    return f"{x:,.0f}" if x >= 100 else f"{x:.1f}"


def _fmt_s(x: float | None) -> str:
    if x is None:
        return "?"
    if x < 1:
        return f"{x:.2f} s"
    if x < 120:
        return f"{x:.1f} s"
    return f"{x / 60:.1f} min"


def plain_answer(p: Prediction) -> str:
    """One or two sentences a person who knows nothing about prefill understands."""
    words_s = (p.decode_tps_per_seq or p.decode_tps or 0) * WORDS_PER_TOKEN
    tps = p.decode_tps_per_seq or p.decode_tps or 0
    if not p.memory.fits:
        return (f"**No, not comfortably: it needs about {p.memory.required_gb:.0f} GB but only "
                f"{p.memory.usable_gb:.0f} GB is usable here.** It would spill out of fast memory and crawl.")
    if tps >= 2 * READING_TPS:
        speed = f"about {words_s:.0f} words a second, much faster than you read"
        verdict = "Yes, comfortably"
    elif tps >= READING_TPS:
        speed = f"about {words_s:.0f} words a second, a bit faster than you read"
        verdict = "Yes"
    elif tps >= 0.5 * READING_TPS:
        speed = f"about {words_s:.1f} words a second, slower than you read"
        verdict = "Yes, but slowly"
    else:
        speed = f"about {words_s:.1f} words a second, painfully slow"
        verdict = "Technically yes, but it will feel broken"
    ttft = p.ttft_s
    if ttft is None:
        first = "the first word's delay is unknown (no compute figure for this hardware)"
    elif ttft <= TTFT_INSTANT_S:
        first = f"the first word comes almost instantly ({_fmt_s(ttft)})"
    elif ttft <= TTFT_PAUSE_S:
        first = f"the first word after about {_fmt_s(ttft)}"
    elif ttft <= TTFT_BROKEN_S:
        first = f"but you wait about {_fmt_s(ttft)} for the first word"
        verdict = verdict.replace("comfortably", "with a noticeable wait")
    else:
        first = f"but the first word takes about {_fmt_s(ttft)}, which feels broken"
        verdict = "Only with patience"
    return f"**{verdict}: {speed}; {first}.**"


def json_safe(x: Any) -> Any:
    """``x`` with every non-finite float replaced by None (strict JSON has no Infinity or NaN)."""
    if isinstance(x, dict):
        return {k: json_safe(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [json_safe(v) for v in x]
    return None if isinstance(x, float) and not math.isfinite(x) else x


def plain_verdict(v: Verdict) -> str:
    """The first sentence of an answer: about the user's own numbers when there are any."""
    p = v.prediction
    mt, mp = v.measured.get("decode_tps"), v.measured.get("prefill_tps")
    exp = (p.decode_tps_per_seq or p.decode_tps) if p else None
    if v.bottleneck == "misconfiguration":
        lo = (v.expected_range.get("decode_tps") or (None,))[0] if p is None else None
        got = f"you get {mt:g} tok/s where this hardware normally does about {_fmt_rate(exp)}" if (mt and exp) else \
            (f"you get {mt:g} tok/s where any machine of this kind does at least {_fmt_rate(lo)} tok/s" if (mt and lo) else
             "the numbers point at the setup, not the hardware")
        fix = f" First fix: {v.fixes[0].title.lower()}." if v.fixes else ""
        return f"**Something in the setup is holding it back: {got}.**{fix}"
    if v.bottleneck == "memory_fit":
        if p is not None and not p.memory.fits:
            return (f"**It does not fit: it needs about {p.memory.required_gb:.0f} GB but only "
                    f"{p.memory.usable_gb:.0f} GB is usable here,** so part of it runs from slow memory"
                    + (f" — that is why you see {mt:g} tok/s." if mt else "."))
        return ("**It no longer fits in fast memory: part of the model or its KV cache has spilled to system RAM"
                + (f", so it runs at {mt:g} tok/s instead of about {_fmt_rate(exp)}." if (mt and exp) else ".") + "**")
    if mt or mp:
        what = f"decode {mt:g} tok/s" if mt else f"prefill {mp:,.0f} tok/s"
        if v.status == "no_expectation":
            return f"**{what[0].upper()}{what[1:]} measured; whether that is normal depends on the exact machine: say which one.**"
        rng = v.expected_range.get("decode_tps")
        if v.status == "below_expected" and p is None and mt and rng:
            return f"**Far slower than any machine of this kind: {what} measured, at least {_fmt_rate(rng[0])} tok/s expected.**"
        if v.status == "below_expected":
            return f"**Slower than it should be: {what} measured, about {_fmt_rate(exp if mt else (p.prefill_tps if p else None))} expected.**"
        if v.status == "above_expected":
            return f"**Faster than usual for this hardware ({what}): see the note below before trusting it.**"
        phase = "prompt processing (prefill)" if v.bottleneck == "prefill" else "generation (decode)"
        return f"**That is normal for this hardware ({what}); {phase} is what limits you.**"
    return plain_answer(p) if p is not None else ""


def prediction_markdown(p: Prediction) -> str:
    """The numbers table of a prediction, with ranges and the memory fit."""
    rp = p.prefill_tps_range
    rd = p.decode_tps_range
    m = p.memory
    rows = [
        "| | predicted | 10–90 % range | ceiling |",
        "|---|---:|---:|---:|",
        f"| prefill (prompt processing) | {_fmt_rate(p.prefill_tps)} tok/s | "
        + (f"{_fmt_rate(rp[0])}–{_fmt_rate(rp[1])}" if rp else "–") + f" | {_fmt_rate(p.prefill_ceiling_tps)} tok/s |",
        (f"| decode, all {p.concurrency} users together | " if p.concurrency > 1 else "| decode (generation) | ")
        + f"{_fmt_rate(p.decode_tps)} tok/s | "
        + (f"{_fmt_rate(rd[0])}–{_fmt_rate(rd[1])}" if rd else "–") + f" | {_fmt_rate(p.decode_ceiling_tps)} tok/s |",
        f"| time to first token ({p.prompt_tokens:,} tokens) | {_fmt_s(p.ttft_s)} | | |",
        f"| streaming the answer ({p.gen_tokens:,} tokens) | {_fmt_s(p.decode_s)} | | |",
    ]
    if p.concurrency > 1:
        rows.insert(4, f"| decode per user | {_fmt_rate(p.decode_tps_per_seq)} tok/s | | |")
    if m.total_gb is None:
        mem = (f"**Memory:** needs about {m.required_gb:.1f} GB (weights {m.weights_gb:.1f} + KV cache "
               f"{m.kv_cache_gb:.2f} + overhead {m.overhead_gb:.1f}); the machine's memory is not known, so the fit "
               "is not checked — say how much it has.")
    else:
        mem = (f"**Memory:** weights {m.weights_gb:.1f} GB + KV cache {m.kv_cache_gb:.2f} GB + overhead {m.overhead_gb:.1f} GB "
               f"= {m.required_gb:.1f} GB of {m.usable_gb:.1f} GB usable"
               + (f" ({m.note})" if m.note else "") + (" → **fits**." if m.fits else " → **does not fit**."))
    hw = (f"{p.hardware['name']}: {p.bandwidth_gbs:g} GB/s"
          + (f", {p.tflops:.1f} TFLOPS FP16" + (" (estimate)" if p.tflops_is_estimate else "") if p.tflops else "")
          + f"; {p.model['id']} at {p.quant} ({p.bits_per_weight:g} bits per weight, "
          f"{p.weight_bytes_per_token_gb:.2f} GB read per token); {p.backend}.")
    return "\n".join(rows) + "\n\n" + mem + "\n\n" + hw


def _why(p: Prediction, v: Verdict | None) -> str:
    ttft = p.ttft_s or 0
    stream = p.decode_s or 0
    txt = (f"Predicted for this setup: a request runs in two phases. **Prefill** reads your {p.prompt_tokens:,}-token prompt in one go; it is "
           f"limited by compute (FLOP/s) and sets the wait before the first word ({_fmt_s(p.ttft_s)}). **Decode** then "
           f"writes the answer one token at a time, reading all {p.weight_bytes_per_token_gb:.1f} GB of weights for every "
           f"token; it is limited by memory bandwidth and sets the streaming speed ({_fmt_s(stream)} for "
           f"{p.gen_tokens} tokens). ")
    if v is None:
        txt += ("For this workload the longer part is " + ("prefill." if ttft > stream else "decode."))
    return txt


def verdict_markdown(v: Verdict, *, facts: Scenario | None = None) -> str:
    """The full answer: plain words, numbers, why, fixes, assumptions, calibration."""
    out: list[str] = []
    p = v.prediction
    first = plain_verdict(v)
    if first:
        out.append(first)
    out.append(f"### {v.headline}")
    if v.measured.get("prefill_tps") or v.measured.get("decode_tps"):
        meas = []
        for k, label in (("prefill_tps", "prefill"), ("decode_tps", "decode")):
            mv = v.measured.get(k)
            if mv:
                dev = v.deviation_pct.get(k)
                rng = v.expected_range.get(k)
                meas.append(f"{label} {mv:,.1f} tok/s measured" + (f", expected {_fmt_rate(rng[0])}–{_fmt_rate(rng[1])}" if rng else "")
                            + (f" ({dev:+.0f} % vs the middle)" if dev is not None else ""))
        out.append("**Your numbers:** " + "; ".join(meas) + ".")
    if p is not None:
        out.append(prediction_markdown(p))
    out.append("**Why:** " + (_why(p, v) if p else "") + " ".join(v.signals))
    if v.fixes:
        out.append("**What to do, best first:**")
        out.append("\n".join(f"{i}. **{f.title}** — {f.predicted_effect}. _{f.why}_" for i, f in enumerate(v.fixes[:5], 1)))
    if v.assumptions:
        out.append("<details><summary>Assumptions (say so to refine)</summary>\n\n"
                   + "\n".join(f"- {a}" for a in dict.fromkeys(v.assumptions)) + "\n</details>")
    if p is not None and p.calibration:
        cal = "; ".join(f"{c.phase}: achieved-efficiency factor {c.efficiency:.2f} fitted on {c.n_rows} measured rows "
                        f"({c.group})" for c in p.calibration)
        out.append(f"<sub>Calibration — {cal}. Reading speed {READING_WPM} words/min (Brysbaert 2019).</sub>")
    return "\n\n".join(out)


def facts_summary(facts: Scenario) -> str:
    """What the advisor has understood so far, in one line."""
    parts = []
    d: dict[str, Any] = facts.model_dump(exclude_none=True)
    labels = [("hardware", "hardware"), ("memory_gb", "memory"), ("model", "model"), ("params_b", "size"),
              ("quant", "format"), ("backend", "engine"), ("prompt_tokens", "prompt"), ("gen_tokens", "answer"),
              ("concurrency", "users"), ("use", "use")]
    for key, label in labels:
        if key in d:
            val = d[key]
            if key == "memory_gb":
                val = f"{val:g} GB"
            elif key in ("prompt_tokens", "gen_tokens"):
                val = f"{val:,} tokens"
            elif key == "params_b":
                val = f"{val:g}B"
            parts.append(f"{label}: {val}")
    return ("So far: " + "; ".join(parts) + ".") if parts else ""


def probe_markdown(probe: ProbeResult, store: Any = None) -> str:
    """Probe result next to the catalog figure of the matched hardware."""
    lines = [f"**This machine** ({probe.device}, {probe.backend}, {probe.engine_version}) — measured in {probe.duration_s:.1f} s:",
             f"- memory read: **{probe.bandwidth_gbs:.1f} GB/s** (median {probe.bandwidth_median_gbs or probe.bandwidth_gbs:.1f})",
             f"- matrix multiply: **{probe.matmul_tflops:.2f} TFLOP/s** ({probe.matmul_dtype or 'fp'})"]
    for k, v in (probe.matvec_gbs or {}).items():
        lines.append(f"- decode-shaped mat-vec ({k}): {v:.1f} GB/s of weights")
    if store is not None and probe.hw_id:
        try:
            from knowledge import catalog

            hw = catalog.get_hardware(store, probe.hw_id)
            lines.append(f"- matched to **{hw.name}**: {probe.bandwidth_gbs / hw.bandwidth_gbs:.0%} of its "
                         f"{hw.bandwidth_gbs:g} GB/s spec")
        except Exception:  # noqa: BLE001 - the match is a nicety
            pass
    for r in probe.model_runs:
        lines.append(f"- model run: prompt {r.prompt_tokens} → prefill {r.prefill_tps:,.0f} tok/s; decode "
                     f"{r.decode_tps:.1f} tok/s over {r.gen_tokens} tokens")
    lines.append("")
    lines.append("Answers about “this machine” now use these numbers. The probe measures the computer running the "
                 "advisor; to measure your own, run `advisor probe` there.")
    return "\n".join(lines)
