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

__all__ = ["COMFORTABLE_TPS", "READING_TPS", "TTFT_BROKEN_S", "TTFT_INSTANT_S", "WORDS_PER_TOKEN",
           "answer_time", "calibration_note", "facts_summary", "feel_speed", "feel_wait", "name_tools", "fmt_bpw", "fmt_gb_apart", "fmt_rate", "fmt_s", "json_safe", "plain_answer",
           "plain_verdict", "prediction_markdown", "probe_markdown", "quote_line", "skipped_lines", "tidy", "use_label",
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


_ENGINE_NAMES = {"vllm": "vLLM", "sglang": "SGLang", "tensorrt-llm": "TensorRT-LLM", "mlx": "MLX", "mlx-lm": "MLX",
                 "ollama": "Ollama", "lmstudio": "LM Studio", "llama.cpp": "llama.cpp", "ik_llama.cpp": "ik_llama.cpp"}
_API_NAMES = {"cuda": "CUDA", "rocm": "ROCm", "metal": "Metal", "vulkan": "Vulkan", "sycl": "SYCL", "cpu": "CPU"}


def engine_label(backend: str | None) -> str:
    """An engine id as people write it: ``vllm`` → ``vLLM``, ``llama.cpp-cuda`` → ``llama.cpp (CUDA)``."""
    b = (backend or "").strip()
    if b.lower() in _ENGINE_NAMES:
        return _ENGINE_NAMES[b.lower()]
    eng, _, api = b.rpartition("-")
    if eng and api.lower() in _API_NAMES:
        return f"{_ENGINE_NAMES.get(eng.lower(), eng)} ({_API_NAMES[api.lower()]})"
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


def plain_answer(p: Prediction, target_tps: float | None = None) -> str:
    """One sentence a person who knows nothing about prefill understands (thresholds: module docstring); with a
    per-user speed the person needs (``target_tps``) that the prediction misses, a "No" that says by how much."""
    tps = p.decode_tps_per_seq or p.decode_tps or 0
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
    return f"**{verdict}: {feel_speed(tps).removeprefix('≈ ')}; {first}.**"


def json_safe(x: Any) -> Any:
    """``x`` with every non-finite float replaced by None (strict JSON has no Infinity or NaN)."""
    if isinstance(x, dict):
        return {k: json_safe(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [json_safe(v) for v in x]
    return None if isinstance(x, float) and not math.isfinite(x) else x


def _fmt_gb(x: float) -> str:
    return f"{x:.0f}" if x >= 10 else f"{x:.1f}"


def limit_raise_fits(v: Verdict) -> bool:
    """The first fix raises a Mac's GPU memory limit and the model then fits with room to spare: the default
    limit, not the machine, is what stands in the way."""
    f = v.fixes[0] if v.fixes else None
    return f is not None and "GPU memory limit" in f.title and bool(f.fits_with_margin)


def over_roofline(v: Verdict) -> bool:
    """A single-stream decode over what the machine's memory can deliver for the model (bandwidth ÷ bytes per
    token) by more than 15 % for a benchmark's own run, or :data:`advisor.diagnose.FOREIGN_X` × for a rate said in
    words (drafts give 2–3× at most): another machine, model or format, or a total, not a result to improve."""
    from advisor.diagnose import FOREIGN_X

    p, mt = v.prediction, v.measured.get("decode_tps")
    if not (mt and p is not None and p.concurrency <= 1 and p.decode_ceiling_tps and not v.measured_streams):
        return False
    return mt > (1.15 if v.benchmark_run else FOREIGN_X) * p.decode_ceiling_tps


def plain_verdict(v: Verdict, *, with_fix: bool = True) -> str:
    """The first sentence of an answer: about the user's own numbers when there are any.

    ``with_fix=False`` leaves out the "First fix" tail (the chat answer has its own "Best fix" line).
    """
    p = v.prediction
    mt, mp = v.measured.get("decode_tps"), v.measured.get("prefill_tps")
    exp = (p.decode_tps if v.measured_streams else (p.decode_tps_per_seq or p.decode_tps)) if p else None
    if v.bottleneck == "misconfiguration":
        lo = (v.expected_range.get("decode_tps") or (None,))[0] if p is None else None
        # Only the prompt is read slowly (decode judged fine): the sentence names prefill, not the decode rate.
        pre_only = (v.phase_status.get("prefill_tps") == "below_expected"
                    and v.phase_status.get("decode_tps") != "below_expected" and mp and p is not None and p.prefill_tps)
        if pre_only and p is not None:
            got = f"prompts are read at {mp:,.0f} tok/s where this hardware normally does about {_fmt_rate(p.prefill_tps)}"
        elif mt and exp:
            got = f"you get {mt:g} tok/s where this hardware normally does about {_fmt_rate(exp)}"
        elif mt and lo:
            got = f"you get {mt:g} tok/s where any machine of this kind does at least {_fmt_rate(lo)} tok/s"
        else:
            got = "the numbers point at the setup, not the hardware"
        fix = f" First fix: {v.fixes[0].title.lower()}." if v.fixes and with_fix else ""
        return f"**Something in the setup is holding it back: {got}.**{fix}"
    if v.bottleneck == "memory_fit":
        if p is not None and not p.memory.fits:
            total, need, usable = p.memory.total_gb, p.memory.required_gb, p.memory.usable_gb
            # close calls keep a decimal (24.7 vs 23.5), and sizes that would read the same are told apart (16.2 vs 16)
            shown = fmt_gb_apart(need, usable, *([total] if total and need > total else []))
            card = p.hardware.get("kind") in ("discrete_gpu", "datacenter_gpu")
            one = (p.hardware.get("n_devices") or 1) == 1
            whole = (f" — more than the {'card' + chr(39) + 's' if one else 'cards' + chr(39)} {shown[2]} GB" if card
                     else f" — more than this machine's whole {shown[2]} GB") if len(shown) > 2 else ""
            if not mt and limit_raise_fits(v):
                # a Mac whose default GPU limit (about 2/3–3/4 of memory) is all that stands in the way: one setting
                return (f"**Not as macOS is set by default, but one setting makes it fit: it needs about {shown[0]} GB "
                        f"and macOS lets the GPU use about {shown[1]} GB until you raise that limit (below).**")
            # "No:" answers "can I run it?"; beside a measured rate the question is "what is wrong?"
            head = (f"**{'It does not fit' if mt else 'No: it does not fit'}. It needs about {shown[0]} GB{whole}, and about "
                    f"{shown[1]} GB is usable for the model here,** so part of it runs from slow memory")
            top = (v.expected_range.get("decode_tps") or (0.0, 0.0))[1]
            if mt and v.phase_status.get("decode_tps") == "above_expected" and p.hardware.get("kind") != "apple_soc" \
                    and mt > 2 * top:  # a little above a spill's estimate is ordinary (how much spills is uncertain)
                # (a Mac past its GPU limit pages to its SSD, at a speed no one can predict well: not doubted)
                # spilling makes a run slower, never faster: a rate above the range was measured elsewhere
                return (head + f". Yet {mt:g} tok/s is far more than this machine can do with this model while part "
                        "of it is read from system RAM: those numbers were probably measured on another machine, with a "
                        "smaller model or a smaller format. Which machine and model ran them?")
            return head + (f" — that is why you see {mt:g} tok/s." if mt else ".")
        if p is not None and not mt and limit_raise_fits(v):
            return ("**Not as macOS is set by default, but one setting makes it fit: the model with the context you "
                    f"allocate needs more than the {_fmt_gb(p.memory.usable_gb)} GB or so macOS lets the GPU use until "
                    "you raise that limit (below).**")
        if p is not None and p.memory.fits and v.allocated_gb and v.allocated_tokens and p.memory.usable_gb \
                and v.allocated_gb > p.memory.usable_gb:
            # the allocated context (num_ctx / -c) is what does not fit; the conversation itself would
            return (f"**Not with the {v.allocated_tokens:,}-token context you allocate: with the weights it needs "
                    f"{v.allocated_gb:.1f} GB of {p.memory.usable_gb:.1f} GB usable, so part of it goes to system RAM and "
                    f"runs slower. With a context that fits (below) it runs at about {_fmt_rate(exp or p.decode_tps)} "
                    "tok/s.**")
        if p is not None and p.memory.fits and mt and exp:
            # fits at the workload's size, near the limit: a larger context, or layers left off the GPU
            return (f"**Probably spilling out of GPU memory: {mt:g} tok/s instead of about {_fmt_rate(exp)}, with the "
                    f"model at {p.memory.required_gb:.1f} of {p.memory.usable_gb:.1f} GB usable, close to "
                    "the limit: a larger allocated context, or layers not on the GPU, put part of it in system RAM.**")
        return ("**It no longer fits in fast memory: part of the model or its KV cache has spilled to system RAM"
                + (f", so it runs at {mt:g} tok/s instead of about {_fmt_rate(exp)}." if (mt and exp) else ".") + "**")
    if mt or mp:
        what = (decode_words(v, mt) if mt else f"prefill {mp:,.0f} tok/s")
        if v.status == "no_expectation" and p is not None and mp and not mt:
            # the one way to no expectation with a prediction: a prompt too short to time prefill on
            return (f"**Prefill {mp:,.0f} tok/s measured on a prompt too short to judge (a request's fixed costs "
                    f"dominate); on a prompt of 512 tokens or more expect about {_fmt_rate(p.prefill_tps)} tok/s.**")
        if v.status == "no_expectation":
            return f"**{what[0].upper()}{what[1:]} measured; whether that is normal depends on the exact machine: say which one.**"
        rng = v.expected_range.get("decode_tps")
        if v.status == "below_expected" and p is None and mt and rng:
            return f"**Far slower than any machine of this kind: {what} measured, at least {_fmt_rate(rng[0])} tok/s expected.**"
        if v.status == "below_expected":
            return f"**Slower than it should be: {_slow_phases(v, exp)}.**"
        if v.status == "above_expected":
            if p is not None and mt and over_roofline(v):
                # a benchmark's single stream above the memory's roofline: not this machine, model or format
                return (f"**{mt:g} tok/s of decode is more than the {p.hardware['name']}'s memory can deliver for this "
                        f"model (≈ {_fmt_rate(p.decode_ceiling_tps)} tok/s at most): those numbers were measured on "
                        "another machine, or with a smaller model or format"
                        + ("" if v.benchmark_run else ", or are a total over several requests") +
                        ". Which machine and model ran them?**")
            if mt and mp and v.phase_status.get("decode_tps") != "above_expected":  # prefill is the fast one
                what = f"prefill {mp:,.0f} tok/s; decode {mt:g} tok/s is " + (
                    "normal" if not rng or mt >= rng[0] else f"at the low end (usual {_fmt_rate(rng[0])}–{_fmt_rate(rng[1])})")
            how = ("a cached prompt reads fast" if not (mt and v.phase_status.get("decode_tps") == "above_expected")
                   else "a very short answer, a draft model, or a rate summed over several requests")
            if v.benchmark_run and v.phase_status.get("decode_tps") != "above_expected":
                return (f"**Faster than usual for this hardware ({what}):** a good result. A benchmark's own run reads "
                        "the whole prompt (no cache), so recent builds' kernels beat the older runs this is calibrated on.")
            return f"**Faster than usual for this hardware ({what}):** worth checking how it was measured ({how})."
        phase = "prompt processing (prefill)" if v.bottleneck == "prefill" else "generation (decode)"
        if mp and p is not None and p.prefill_ceiling_tps and mp > 1.05 * p.prefill_ceiling_tps:
            # more than the machine can compute: a prompt cache served the prompt, not a measure of the hardware
            rest = f"; decode {mt:g} tok/s is normal" if mt and v.phase_status.get("decode_tps") == "normal" else ""
            return (f"**Prefill {mp:,.0f} tok/s is more than this machine can compute (≈ {p.prefill_ceiling_tps:,.0f} "
                    f"at most): a prompt cache served most of the prompt, so it says nothing about the hardware{rest}.**")
        if mt and rng and above_range(rng, mt) and (p is None or p.memory.fits is not False):
            return (f"**That is a good result for this hardware ({what}, above the usual {_fmt_rate(rng[0])}–"
                    f"{_fmt_rate(rng[1])} and within what its memory allows); {phase} is what limits you.**")
        if mt and v.status == "normal" and v.phase_status.get("decode_tps") == "normal" and low_end(exp, mt):
            usual = f", usual {_fmt_rate(rng[0])}–{_fmt_rate(rng[1])}" if rng else ""
            return (f"**Within the usual range for this hardware, but at its low end ({what}, about {_fmt_rate(exp)} "
                    f"expected{usual}); {phase} is what limits you.**")
        return f"**That is normal for this hardware ({what}); {phase} is what limits you.**"
    return plain_answer(p, v.target_tps) if p is not None else ""


def decode_words(v: Verdict, mt: float) -> str:
    """"decode 42 tok/s", or for a rate summed over streams "decode 602.6 tok/s in all (9.4 each over 64 streams)"."""
    n = v.measured_streams
    return f"decode {mt:g} tok/s in all ({mt / n:.1f} each over {n} streams)" if n else f"decode {mt:g} tok/s"


def _slow_phases(v: Verdict, exp_decode: float | None) -> str:
    """"prefill 120 tok/s measured, about 520 expected; decode 55 tok/s is normal": the phase(s) judged below what the
    hardware does named first, with what was expected (tok/s), and a measured phase that is normal said so. A verdict
    below expected for another reason (a setup rule, no phase judged low) names the decode rate, else the prefill."""
    p = v.prediction
    mt, mp = v.measured.get("decode_tps"), v.measured.get("prefill_tps")
    exp = {"decode_tps": exp_decode, "prefill_tps": p.prefill_tps if p else None}
    said = {"decode_tps": decode_words(v, mt) if mt else "", "prefill_tps": f"prefill {mp:,.0f} tok/s" if mp else ""}
    slow = [k for k in ("decode_tps", "prefill_tps") if said[k] and v.phase_status.get(k) == "below_expected"]
    if not slow:
        slow = ["decode_tps" if mt else "prefill_tps"]
    parts = [f"{said[k]} measured, about {_fmt_rate(exp[k])} expected" for k in slow]
    parts += [f"{said[k]} is normal" for k in ("decode_tps", "prefill_tps")
              if k not in slow and said[k] and v.phase_status.get(k) == "normal"]
    return "; ".join(parts)


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
        need, usable = fmt_gb_apart(m.required_gb, m.usable_gb, least=1)
        mem = (f"**Memory:** weights {m.weights_gb:.1f} GB + KV cache {m.kv_cache_gb:.2f} GB + overhead {m.overhead_gb:.1f} GB "
               f"= {need} GB of {usable} GB usable"
               + (f" ({m.note})" if m.note else "") + (" → **fits**." if m.fits else " → **does not fit**."))
    each = " per GPU" if (p.hardware.get("n_devices") or 1) > 1 else ""
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
