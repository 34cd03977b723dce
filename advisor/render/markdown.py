"""Verdicts and predictions as Markdown: plain answer first, then numbers, then why, then fixes.

This is the long form (``advisor diagnose``, the exported verdict). The chat's short answer is
:mod:`advisor.render.reply`; the terminal renders either with :mod:`advisor.render.terminal`.

Household thresholds (one home: here; stated in the answers that use them):

* reading speed: adults read about 238 words a minute silently (Brysbaert 2019, meta-analysis of
  190 studies) ≈ 4 words/s ≈ 5.3 tok/s at 0.75 words per token; 5–8 tok/s reads like a person
  reading along, faster than :data:`COMFORTABLE_TPS` streams faster than you read;
* first token: under 1 s feels instant, over 10 s feels broken (the 0.1 s / 1 s / 10 s
  response-time limits of Nielsen 1993); in between is a noticeable pause;
* the whole answer: when the stream is slower than :data:`COMFORTABLE_TPS` (the reader waits on the
  text, not the other way round) and the answer takes longer than the 10 s limit of attention
  (Nielsen 1993), its whole time is what a person feels, so the first lines say it
  (:func:`answer_time`).
"""

from __future__ import annotations

import math
import re
from typing import Any

from advisor.intake._text import (
    fmt_s,  # one home for durations said to people (the intake's notes use it too)
)
from advisor.models import Prediction, ProbeResult, Scenario, Verdict
from advisor.perf.load import loaded_tps, queue_wait_s
from advisor.understand.engine import API_NAMES, ENGINE_NAMES

__all__ = ["loaded_tps", "COMFORTABLE_TPS", "READING_TPS", "TTFT_BROKEN_S", "TTFT_INSTANT_S", "WORDS_PER_TOKEN",
           "answer_time", "calibration_note", "facts_summary", "feel_speed", "feel_wait", "name_tools", "fmt_bpw", "fmt_gb_apart", "fmt_rate", "fmt_s", "json_safe", "plain_answer",
           "prediction_markdown", "probe_markdown", "quote_line", "skipped_lines", "tidy", "use_label",
           "verdict_markdown"]

WORDS_PER_TOKEN = 0.75
READING_WPM = 238
READING_TPS = READING_WPM / 60 / WORDS_PER_TOKEN  # ≈ 5.3 tok/s
COMFORTABLE_TPS = 8.0  # upper end of "reads like reading along" (5–8 tok/s)
TTFT_INSTANT_S, TTFT_PAUSE_S, TTFT_BROKEN_S = 1.0, 5.0, 10.0
USE_LABELS = {"chat": "chat", "coding_agent": "a coding agent", "coding": "coding", "rag": "questions over documents",
              "summarising": "summarising", "batch": "batch jobs"}


def gap_words(expected: float, measured: float) -> str:
    """How far ``measured`` falls short of ``expected``, as people say it: "≈ 3×" from twice on, else "about 33%"
    (never "≈ 1×", which reads as no gap; a 1.5× gap is not "≈ 2×")."""
    return f"≈ {expected / measured:.0f}×" if expected >= 2 * measured else f"about {1 - measured / expected:.0%}"


def fmt_rate(x: float | None) -> str:
    """A rate (tok/s) for people: ``1,234``, ``45.2``, ``3.1``; below 0.1 two significant figures (``0.012``,
    never ``0.0``); ``?`` when unknown.

    >>> fmt_rate(1234.5), fmt_rate(3.14), fmt_rate(0.0123), fmt_rate(0.000456)
    ('1,234', '3.1', '0.012', '0.00046')
    """
    if x is None:
        return "?"
    if 0 < x < 0.1:
        return f"{x:.{1 - math.floor(math.log10(x))}f}"
    return f"{x:,.0f}" if x >= 100 else f"{x:.1f}"


def fmt_gb_apart(*sizes: float, least: int = 0) -> list[str]:
    """Sizes (GB) compared in one sentence, each with as few decimals as keep it apart from the others: whole GB for a
    size a fifth or more from every other, else one decimal, two when that still reads the same; a whole size (a
    machine's 16 GB) keeps no decimals unless another size reads the same. ``least``: decimals always shown.

    >>> fmt_gb_apart(45.2, 30.0), fmt_gb_apart(16.2, 13.6, 16.0), fmt_gb_apart(256.7, 7.5, 8.0), fmt_gb_apart(16.04, 16.0)
    (['45', '30'], ['16.2', '13.6', '16'], ['257', '7.5', '8'], ['16.04', '16'])
    """
    def close(i: int) -> bool:
        return any(j != i and sizes[j] and max(sizes[i], sizes[j]) < 1.2 * min(sizes[i], sizes[j]) for j in range(len(sizes)))

    digits = [max(least, 1 if close(i) else 0) for i in range(len(sizes))]

    def show(i: int) -> str:
        v = sizes[i]
        return f"{v:g}" if digits[i] and not least and v == int(v) else f"{v:.{digits[i]}f}"

    for _ in range(3):
        out = [show(i) for i in range(len(sizes))]
        same = {i for i in range(len(sizes)) for j in range(len(sizes))
                if i != j and sizes[i] != sizes[j] and float(out[i]) == float(out[j])}
        if not same:
            return out
        for i in same:
            digits[i] = min(digits[i] + 1, max(2, least))
    return [show(i) for i in range(len(sizes))]


LOW_END = 0.75  # a rate inside the usual range but under this share of the expected one is "at its low end"


def low_end(expected: float | None, measured: float | None) -> bool:
    """A measured rate inside the usual range yet more than a quarter under the expected one (:data:`LOW_END`):
    "normal" alone would contradict the "about 43 % below" its fix says, so it is called the low end."""
    return bool(expected and measured and measured < LOW_END * expected)


def above_range(rng: tuple[float, float] | None, measured: float) -> bool:
    """A measured rate clearly above the fitted 10–90 % range (by more than 2 %, so a rounded top is not above)."""
    return rng is not None and measured > rng[1] * 1.02


def fmt_bpw(bpw: float) -> str:
    """Bits per weight to one decimal (``4.8944`` → ``4.9``)."""
    return f"{bpw:.0f}" if abs(bpw - round(bpw)) < 0.05 else f"{bpw:.1f}"


_LONG_DECIMAL = re.compile(r"(?<![\w.])(\d+\.\d{3,})(?=\s*(?:bits|GB|tok|s\b|TFLOP|%))")


def tidy(text: str) -> str:
    """A sentence from the engine made fit for people: long decimals rounded (``4.8944 bits`` → ``4.9 bits``),
    ``TTFT`` said as "first word"."""
    text = _LONG_DECIMAL.sub(lambda m: f"{float(m.group(1)):.1f}", text)
    return _TTFT.sub("first word", text)


_TTFT = re.compile(r"\bTTFT\b(?! \()")  # jargon in the engine's sentences; "TTFT (time to first token)" stays


_MD_SPECIAL = re.compile(r"([\\*_\[\]|#~])")
QUOTED_CHARS = 60  # a skipped line is shown up to this many characters
QUOTED_LINES = 3  # and this many of them


def quote_line(line: str, limit: int = QUOTED_CHARS) -> str:
    """A line of someone else's text, shortened and made inert for Markdown: “llama_model_load: …”.

    Markdown marks are backslash-escaped, ``<``/``>`` become ‹ › and backticks ', so nothing renders as
    a tag, a link or code; whitespace runs are one space.
    """
    t = " ".join(line.split())
    t = t if len(t) <= limit else t[: limit - 1].rstrip() + "…"
    t = t.replace("<", "‹").replace(">", "›").replace("`", "'")
    t = _MD_SPECIAL.sub(r"\\\1", t)
    return f"“{t}”"


def skipped_lines(lines: list[str], *, limit: int = QUOTED_LINES) -> str:
    """"2 lines were not understood and were ignored: “…”; “…”." — the lines quoted (:func:`quote_line`)."""
    counts = [re.fullmatch(r"(\d+) more lines not understood are not listed", x) for x in lines]
    real = [x for x, c in zip(lines, counts, strict=True) if x.strip() and c is None]
    more = sum(int(c.group(1)) for c in counts if c is not None)
    n = len(real) + more
    if not n:
        return ""
    shown = "; ".join(quote_line(x) for x in real[:limit])
    rest = n - min(len(real), limit)
    what = "1 line was" if n == 1 else f"{n} lines were"
    return f"{what} not understood and ignored: {shown}" + (f" (and {rest} more)" if rest else "") + "."


def use_label(use: str | None) -> str:
    """``coding_agent`` → ``a coding agent`` (never an internal id in a reply)."""
    return USE_LABELS.get(use or "", (use or "").replace("_", " "))


_fmt_rate, _fmt_s = fmt_rate, fmt_s

# Importer format ids as people know the tools ("from llama-bench-md output" → "from llama-bench output").
TOOL_NAMES = {"llama-bench-md": "llama-bench", "llama-bench-csv": "llama-bench", "llama-bench-json": "llama-bench",
              "llama-bench-jsonl": "llama-bench", "llama-cpp-timings": "llama.cpp", "ollama-verbose": "ollama",
              "ollama-api": "ollama", "lmstudio": "LM Studio", "vllm-bench": "vLLM",
              "llama-server-timings": "llama-server", "llama-print-timings": "llama.cpp",
              "batched-bench": "llama-batched-bench"}
_TOOL_OUTPUT = re.compile(r"from ([\w.+-]+) output")




def engine_label(backend: str | None) -> str:
    """An engine id as people write it: ``vllm`` → ``vLLM``, ``llama.cpp-cuda`` → ``llama.cpp (CUDA)``."""
    b = (backend or "").strip()
    if b.lower() in ENGINE_NAMES:
        return ENGINE_NAMES[b.lower()]
    eng, _, api = b.rpartition("-")
    if eng and api.lower() in API_NAMES:
        return f"{ENGINE_NAMES.get(eng.lower(), eng)} ({API_NAMES[api.lower()]})"
    return b or "the engine"


def name_tools(text: str) -> str:
    """Importer format ids in a sentence replaced by the tool's name."""
    return _TOOL_OUTPUT.sub(lambda m: f"from {TOOL_NAMES.get(m.group(1), m.group(1))} output", text)


def feel_speed(tps: float | None) -> str:
    """What a streaming speed feels like, against reading speed (5–8 tok/s)."""
    if tps is None:
        return "speed unknown"
    words = tps * WORDS_PER_TOKEN
    if tps >= 2 * COMFORTABLE_TPS:
        return f"≈ {words:.0f} words a second, much faster than you read"
    if tps >= COMFORTABLE_TPS:
        return f"≈ {words:.0f} words a second, faster than you read"
    if tps >= READING_TPS:
        return f"≈ {words:.0f} words a second, about reading speed"
    if tps >= 0.5 * READING_TPS:
        return f"≈ {words:.1f} words a second, slower than you read"
    if words < 0.1:  # "≈ 0.0 words a second" says nothing: per minute
        return f"≈ {fmt_rate(words * 60)} words a minute, painfully slow"
    return f"≈ {words:.1f} words a second, painfully slow"


def answer_time(p: Prediction, tps: float | None = None) -> str:
    """"a 300-token answer takes about a minute" when the whole answer is a wait (module docstring), else ''.

    ``tps``: the decode rate per stream to use (a measured one), tok/s; the prediction's otherwise.
    The time is the first word plus ``gen_tokens / tps`` (seconds), said the way a person would.
    """
    rate = tps or p.decode_tps_per_seq or p.decode_tps
    if not rate or not p.gen_tokens or rate >= COMFORTABLE_TPS:
        return ""
    total = (p.ttft_s or 0.0) + p.gen_tokens / rate
    if total < TTFT_BROKEN_S:
        return ""
    if total < 50:
        said = f"about {5 * round(total / 5):.0f} s"
    elif total < 90:
        said = "about a minute"
    elif total < 3000:
        said = f"about {round(total / 60)} minutes"
    elif total < 48 * 3600:
        said = f"about {total / 3600:.1f} hours".replace("about 1.0 hours", "about an hour")
    else:
        said = f"about {total / 86400:.0f} days"
    return f"a {p.gen_tokens:,}-token answer takes {said}"


def feel_wait(ttft: float | None) -> str:
    """What the wait for the first word feels like (instant < 1 s, broken > 10 s)."""
    if ttft is None:
        return "unknown (no compute figure for this hardware)"
    if ttft < TTFT_INSTANT_S:
        return "feels instant"
    if ttft <= TTFT_BROKEN_S:
        return "a noticeable pause"
    return "long enough to feel broken"


def plain_answer(p: Prediction, target_tps: float | None = None, *, how_fast: bool = False,
                 allocated_gb: float | None = None) -> str:
    """One sentence a person who knows nothing about prefill understands (thresholds: module docstring); with a
    per-user speed the person needs (``target_tps``) that the prediction misses, a "No" that says by how much; for a
    question for the speed itself (``how_fast``: "how fast will it run?") the number, not a yes or no."""
    tps = p.decode_tps_per_seq or p.decode_tps or 0
    avg, on_avg = "", ""
    if (loaded := loaded_tps(p)) is not None:  # the streams stall while other users' prompts are read
        avg = (", since the answers pause while other users' prompts are read ("
               + _prompt_load_said(p).removeprefix("; ") + ")")
        on_avg = " on average"
        tps = loaded
    if not p.memory.fits and p.running:
        # the weights fit; the users' KV caches do not all fit beside them: a server queues the rest, it does not spill
        q = queue_wait_s(p)
        turn = f" (when all {p.concurrency} send at once, the last start after ≈ {fmt_s(q)})" if q else ""
        return (f"**Not all at once: about {p.running} of the {p.concurrency} users are served together and the others "
                f"wait their turn{turn}; each of those {p.running} gets about {fmt_rate(tps)} tok/s{on_avg}** "
                f"({feel_speed(tps).removeprefix('≈ ')}){avg}. The weights fit; the conversations' KV caches "
                f"({p.memory.kv_cache_gb:.1f} GB for all {p.concurrency}) do not fit beside them.")
    m = p.memory
    if not m.fits and m.kv_cache_gb and m.weights_gb + m.overhead_gb <= m.usable_gb:
        # the weights fit; the context does not: one conversation's KV cache is what is too big
        one = m.kv_cache_gb / max(1, p.concurrency)
        ctx = p.depth + p.prompt_tokens + p.gen_tokens
        who = "even one conversation's" if p.concurrency > 1 else "the conversation's"
        return (f"**No: the weights fit ({m.weights_gb:.0f} of {m.usable_gb:.0f} GB usable), but {who} KV cache at "
                f"{ctx:,} tokens ({one:.1f} GB) does not fit beside them.** A serving engine refuses such a context "
                "(vLLM's max-model-len check); llama.cpp-style engines spill to system RAM and crawl. The fixes below "
                "make room: a smaller KV cache or weights, or a shorter context.")
    if not p.memory.fits:
        return (f"**No, not comfortably: it needs about {p.memory.required_gb:.0f} GB but only "
                f"{p.memory.usable_gb:.0f} GB is usable here.** It would spill out of fast memory and crawl.")
    if target_tps and tps < 0.95 * target_tps:
        each = " for each user" if p.concurrency > 1 else ""
        return (f"**No: about {fmt_rate(tps)} tok/s{each}, under the {target_tps:g} tok/s you want** "
                f"({feel_speed(tps).removeprefix('≈ ')}); the fixes below say what closes the gap.")
    if target_tps and tps < target_tps:  # within 5 %: inside the prediction's own error, so neither yes nor no
        each = " for each user" if p.concurrency > 1 else ""
        return (f"**Just about: ≈ {fmt_rate(tps)} tok/s{each}, a little under the {target_tps:g} tok/s you want** "
                f"(within the prediction's error); the fixes below give a margin.")
    verdict = ("Yes, comfortably" if tps >= COMFORTABLE_TPS else "Yes" if tps >= READING_TPS else
               "Yes, but slowly" if tps >= 0.5 * READING_TPS else "Technically yes, but it will feel broken")
    from advisor.diagnose.fit import roomy  # here: advisor.diagnose imports this module

    m = p.memory
    need = max(m.required_gb, allocated_gb or 0.0)  # the context window set (num_ctx, -c) reserves its cache up front
    if m.usable_gb and need and not roomy(need, m.usable_gb):
        # it fits, with less free than a longer conversation or another app takes: never "comfortably"
        verdict = {"Yes, comfortably": "Yes, but only just (memory is tight)", "Yes": "Yes, but only just (memory is tight)",
                   "Yes, but slowly": "Only just, and slowly"}.get(verdict, verdict)
    ttft = p.ttft_s
    if ttft is None:
        first = "the first word's delay is unknown (no compute figure for this hardware)"
    elif ttft < TTFT_INSTANT_S:
        first = f"the first word comes almost instantly ({_fmt_s(ttft)})"
    elif ttft <= TTFT_PAUSE_S:
        first = f"the first word after about {_fmt_s(ttft)}"
    elif ttft <= TTFT_BROKEN_S:
        first = f"but you wait about {_fmt_s(ttft)} for the first word"
        verdict = verdict.replace("comfortably", "with a noticeable wait")
    else:
        first = f"but the first word takes about {_fmt_s(ttft)}, which feels broken"
        verdict = "Only with patience"
    if loaded is not None and ttft is not None:  # an idle server's first word is not what a loaded one gives
        burst = p.concurrency * p.prompt_tokens / (p.prefill_tps or 1)
        first = (f"the first word after {_fmt_s(ttft)} when the machine is free, up to ≈ {_fmt_s(burst)} when all "
                 f"{p.concurrency} send at once")
        verdict = verdict.replace("comfortably", "with waits under load") if burst > TTFT_BROKEN_S else verdict
    if how_fast and not target_tps:
        each = " for each user" if p.concurrency > 1 else ""
        return f"**About {fmt_rate(tps)} tok/s{each}{on_avg}: {feel_speed(tps).removeprefix('≈ ')}{avg}; {first}.**"
    if loaded is not None:
        return f"**{verdict}: about {fmt_rate(tps)} tok/s each{on_avg} ({feel_speed(tps).removeprefix('≈ ')}){avg}; {first}.**"
    return f"**{verdict}: {feel_speed(tps).removeprefix('≈ ')}; {first}.**"


def _prompt_load_said(p: Prediction) -> str:
    """A clause for several users whose prompts take more of the machine's time than their answers: the share of time
    spent reading prompts and the requests an hour that leaves ("" for one user, or when decoding takes longer)
    (:func:`advisor.roofline.prompt_load`)."""
    from advisor.roofline import prompt_load

    split = prompt_load(p.decode_tps, p.prefill_tps, p.prompt_tokens, p.gen_tokens) if p.concurrency > 1 else None
    if split is None:
        return ""
    read_s, decode_s = split
    per_hour = 3600 / (read_s + decode_s)
    n = f"{per_hour:,.0f}" if per_hour >= 10 else f"{per_hour:.1f}"
    return (f"; reading everyone's {p.prompt_tokens:,}-token prompts takes {read_s / (read_s + decode_s):.0%} of the "
            f"machine's time; about {n} requests an hour in all")


def json_safe(x: Any) -> Any:
    """``x`` with every non-finite float replaced by None (strict JSON has no Infinity or NaN)."""
    if isinstance(x, dict):
        return {k: json_safe(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [json_safe(v) for v in x]
    return None if isinstance(x, float) and not math.isfinite(x) else x


def _fmt_gb(x: float) -> str:
    return f"{x:.0f}" if x >= 10 else f"{x:.1f}"


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
        (f"| decode, {p.running} of {p.concurrency} users together (the rest wait) | " if p.running else
         f"| decode, all {p.concurrency} users together | " if p.concurrency > 1 else "| decode (generation) | ")
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
        need, usable = fmt_gb_apart(m.required_gb, m.usable_gb, least=1)
        mem = (f"**Memory:** weights {m.weights_gb:.1f} GB + KV cache {m.kv_cache_gb:.2f} GB + overhead {m.overhead_gb:.1f} GB "
               f"= {need} GB of {usable} GB usable"
               + (f" ({m.note})" if m.note else "")
               + (" → **fits**." if m.fits else
                  f" → the weights and {p.running} users' caches fit; **the other {p.concurrency - p.running} wait**."
                  if p.running else " → **does not fit**."))
    # a CPU's sockets are counted together (its cores, its channels); a CPU backend's figures are the CPU's, not a GPU's
    cpu = p.hardware.get("kind") == "cpu" or "cpu" in str(p.backend).lower()
    each = " per GPU" if (p.hardware.get("n_devices") or 1) > 1 and not cpu else ""
    hw = (f"{p.hardware['name']}: {p.bandwidth_gbs:g} GB/s"
          + (f", {p.tflops:.1f} TFLOPS FP16" + (" (estimate)" if p.tflops_is_estimate else "") if p.tflops else "")
          + each
          + f"; {p.model['id']} at {p.quant} ({fmt_bpw(p.bits_per_weight)} bits per weight, "
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
    from advisor.render.verdict_line import plain_verdict

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
                   + "\n".join(f"- {tidy(a)}" for a in dict.fromkeys(v.assumptions)) + "\n</details>")
    if p is not None and p.calibration:
        out.append(f"<sub>{calibration_note(p)}</sub>")
    return "\n\n".join(out)


def calibration_note(p: Prediction) -> str:
    """How the prediction was tuned to real runs, in words ("tuned on 4 measured runs …")."""
    parts = []
    for c in p.calibration:
        decode = c.phase == "decode"
        what = "generation" if decode else "prompt reading"
        runs = "one measured run" if c.n_rows == 1 else f"{c.n_rows} measured runs"
        # the share shown is the table's own (predicted ÷ ceiling), not the fitted factor (which can pass 100 %: it
        # also carries fixed per-token costs, INT8 kernels above the FP16 figure, the compute tier)
        # (several users: the batch's total against the batch's ceiling, not one user's share of it)
        got, top = ((p.decode_tps if p.concurrency > 1 else p.decode_tps_per_seq or p.decode_tps), p.decode_ceiling_tps) \
            if decode else (p.prefill_tps, p.prefill_ceiling_tps)
        limit = "memory-bandwidth limit" if decode else "compute limit"
        share = (f"{got / top:.0%} of the {limit}" if got and top and got <= top
                 else f"above the {limit} from the spec figure" if got and top else f"set from the {limit}")
        parts.append(f"{what} predicted at {share}, tuned on {runs} of similar setups")
    return ("How sure: " + "; ".join(parts) + f". Reading speed {READING_WPM} words a minute (Brysbaert 2019)."
            if parts else "")


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
            elif key == "use":
                val = use_label(val)
            parts.append(f"{label}: {val}")
    return ("So far: " + "; ".join(parts) + ".") if parts else ""


def _flops(tflops: float) -> str:
    return f"{tflops * 1000:.1f} GFLOP/s" if tflops < 0.1 else f"{tflops:.2f} TFLOP/s"


def probe_markdown(probe: ProbeResult, store: Any = None) -> str:
    """Probe result next to the catalog figure of the matched hardware."""
    lines = [f"**This machine** ({probe.device}, {probe.backend}, {probe.engine_version}) — measured in {probe.duration_s:.1f} s:",
             f"- memory read (sets the generation speed): **{probe.bandwidth_gbs:.1f} GB/s** "
             f"(median {probe.bandwidth_median_gbs or probe.bandwidth_gbs:.1f})",
             f"- matrix multiply (sets how fast a prompt is read): **{_flops(probe.matmul_tflops)}** "
             f"({probe.matmul_dtype or 'fp'})"]
    for k, v in (probe.matvec_gbs or {}).items():
        if v and v >= 0.05:  # a kernel that did not run reports 0: not a measurement
            lines.append(f"- reading weights the way generation does ({k} weights): {v:.1f} GB/s")
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
