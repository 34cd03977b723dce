"""koboldcpp: the per-reply ``CtxLimit`` line and the ``--benchmark`` summary.

``CtxLimit: 1754/8192, Process:25.05s (14.9ms/T = 66.89T/s), Generate:59.05s (152.6ms/T = 6.55T/s),
Total:84.11s (4.60T/s)`` follows ``Processing Prompt [BLAS] (1676 / 1676 tokens)`` and
``Generating (78 / 387 tokens)``. ``Process`` is prefill, ``Generate`` decode. Newer builds print
``Amt:78/387`` (generated / asked) and the rates without ``ms/T``; older ones print
``Time Taken - Processing:25.1s (15ms/T), Generation:59.1s (153ms/T)``, where the rate is
1000 ÷ ms per token (or tokens ÷ seconds when the counts are known, which is more precise).
``prompt_tokens`` = the tokens processed (else the context used minus the generated tokens);
``depth`` = context tokens reused from the cache. The ``--benchmark`` summary (``ProcessingSpeed``,
``GenerationSpeed``, ``MaxCtx``, ``GenAmount``, ``Layers``, ``Model``) describes the run just before
it, or is a measurement of its own when that run's line is not in the paste.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from advisor.importers._registry import Example, Importer, signature
from advisor.importers._util import NUM, Outcome, derive_rate, is_rate, parse_number, to_int

__all__ = ["IMPORTERS", "parse_text"]

_PROMPT = re.compile(r"^\s*Processing Prompt(?:\s*\[\w+\])?\s*\(\s*(\d+)\s*/\s*(\d+)\s*tokens?\s*\)", re.I)
_GEN = re.compile(r"^\s*Generating\s*\(\s*(\d+)\s*/\s*(\d+)\s*tokens?\s*\)", re.I)
_CTX = re.compile(r"\b(?:CtxLimit|ContextLimit)\s*:\s*(\d+)\s*/\s*(\d+)", re.I)
_AMT = re.compile(r"\bAmt\s*:\s*(\d+)\s*/\s*(\d+)", re.I)
_PHASE = (
    r"\s*:\s*(?P<secs>{n})\s*s\s*\(\s*(?:(?P<mspt>{n})\s*ms\s*/\s*T\s*)?(?:=\s*)?(?:(?P<tps>{n})\s*T/s)?\s*\)"
)
_PROCESS = re.compile(r"\b(?:Process|Processing)" + _PHASE.format(n=NUM), re.I)
_GENERATE = re.compile(r"\b(?:Generate|Generation)" + _PHASE.format(n=NUM), re.I)
_PROCESS_WORD = re.compile(r"\b(?:Process|Processing)\s*:", re.I)
_GENERATE_WORD = re.compile(r"\b(?:Generate|Generation)\s*:", re.I)
# The phases without the CtxLimit in front (a line copied from its middle, or quoted in a post): both timed phases.
_BARE_PHASES = r"\bProcess(?:ing)?\s*:\s*[\d.,]+\s*s\s*\([^)]*\)\s*,\s*Generat(?:e|ion)\s*:\s*[\d.,]+\s*s\s*\("
_STATS_LINE = re.compile(r"\bCtxLimit\s*:|\bContextLimit\s*:|\bTime Taken\s*-\s*Processing\s*:|" + _BARE_PHASES, re.I)
_SUMMARY = re.compile(
    r"^\s*(?P<key>ProcessingSpeed|GenerationSpeed|ProcessingTime|GenerationTime|TotalTime|MaxCtx|GenAmount"
    r"|Layers|Model|Backend|Flags|Timestamp|Output|Coherent)\s*:\s*(?P<value>.*?)\s*$"
)
_BENCH_DONE = re.compile(r"^\s*(?:Benchmark Completed\b.*|Running benchmark\b.*|=+|-+)\s*$", re.I)
_NUMBER = re.compile(rf"^\s*({NUM})")


def _rate(m: re.Match[str] | None, count: int | None) -> float | None:
    """The printed T/s, else tokens ÷ seconds, else 1000 ÷ ms per token."""
    if m is None:
        return None
    secs = parse_number(m.group("secs"))
    if not secs or not is_rate(secs):
        return None  # nothing was timed (the whole prompt came from the cache)
    tps = parse_number(m.group("tps")) if m.group("tps") else None
    if is_rate(tps):
        return tps or None
    derived = derive_rate(count, parse_number(m.group("secs"))) if count else None
    if derived is not None:
        return derived
    mspt = parse_number(m.group("mspt")) if m.group("mspt") else None
    return round(1000 / mspt, 2) if mspt and is_rate(mspt) and mspt > 0 else None


def _value(text: str) -> float | None:
    m = _NUMBER.match(text)
    return parse_number(m.group(1)) if m else None


class _Reader:
    def __init__(self) -> None:
        self.out = Outcome("koboldcpp")
        self.processed: int | None = None
        self.generated: int | None = None
        self.runs: list[tuple[int, dict[str, Any]]] = []  # (line, fields) kept so far
        self.summary: dict[str, str] = {}
        self.summary_lines: list[int] = []
        self.summarised = 0  # runs a summary already described

    def stats_line(self, i: int, line: str) -> None:
        ctx, amt = _CTX.search(line), _AMT.search(line)
        process, generate = _PROCESS.search(line), _GENERATE.search(line)
        gen = to_int(amt.group(1)) if amt else self.generated
        used = to_int(ctx.group(1)) if ctx else None
        prompt = self.processed
        if prompt is None and used is not None and gen is not None and used >= gen:
            prompt = used - gen
        depth = used - gen - prompt if used is not None and gen is not None and prompt is not None else None
        fields = {
            "prefill_tps": _rate(process, prompt),
            "decode_tps": _rate(generate, gen),
            "prompt_tokens": prompt,
            "gen_tokens": gen,
            "depth": depth if depth is not None and depth >= 0 else None,
        }
        broken = [
            name
            for name, found, word in (
                ("Process", process, _PROCESS_WORD),
                ("Generate", generate, _GENERATE_WORD),
            )
            if found is None and word.search(line)
        ]
        if broken:
            self.out.warnings.append(
                f"line {i + 1}: koboldcpp {' and '.join(broken)} time not readable (cut or garbled); line skipped"
            )
        elif process is None and generate is None:
            self.out.warnings.append(f"line {i + 1}: koboldcpp statistics without Process or Generate times")
        elif self.out.add(i, fields, f"line {i + 1}"):
            self.out.consumed.add(i)
            self.runs.append((i, fields))
        self.processed = self.generated = None

    def flush_summary(self) -> None:
        s, lines = self.summary, self.summary_lines
        self.summary, self.summary_lines = {}, []
        if "ProcessingSpeed" not in s and "GenerationSpeed" not in s:
            return
        self.out.consumed.update(lines)
        max_ctx, gen = to_int(_value(s.get("MaxCtx", ""))), to_int(_value(s.get("GenAmount", "")))
        extra = {
            "model": s.get("Model") or None,
            "n_gpu_layers": to_int(_value(s.get("Layers", ""))),
        }
        if len(self.runs) > self.summarised:
            # The summary repeats the run printed just before it: add what only the summary says.
            n = len(self.out.measurements) - 1
            line, m = self.out.measurements[n]
            update = {k: v for k, v in extra.items() if v is not None and getattr(m, k) is None}
            self.out.measurements[n] = (line, m.model_copy(update=update))
        else:
            fields = {
                "prefill_tps": _value(s.get("ProcessingSpeed", "")),
                "decode_tps": _value(s.get("GenerationSpeed", "")),
                "prompt_tokens": max_ctx - gen
                if max_ctx is not None and gen is not None and max_ctx >= gen
                else None,
                "gen_tokens": gen,
                **extra,
            }
            self.out.add(lines[0], fields, f"koboldcpp benchmark at line {lines[0] + 1}")
        self.summarised = len(self.runs)


def parse_text(lines: Sequence[str]) -> Outcome:
    """Read koboldcpp's progress, ``CtxLimit`` statistics and ``--benchmark`` summary lines."""
    r = _Reader()
    for i, line in enumerate(lines):
        summary = _SUMMARY.match(line)
        if summary:
            r.summary[summary.group("key")] = summary.group("value")
            r.summary_lines.append(i)
            continue
        if r.summary and not _BENCH_DONE.match(line):
            r.flush_summary()
        if m := _PROMPT.match(line):
            r.processed = to_int(m.group(2))
            r.out.consumed.add(i)
        elif m := _GEN.match(line):
            r.generated = to_int(m.group(1))
            r.out.consumed.add(i)
        elif _STATS_LINE.search(line):
            r.stats_line(i, line)
        elif _BENCH_DONE.match(line) and line.strip() and (r.summary or r.runs):
            r.out.consumed.add(i)
    r.flush_summary()
    return r.out


_BENCH = """Running benchmark (Not Saved)...
Processing Prompt [BLAS] (8092 / 8092 tokens)
Generating (100 / 100 tokens)
[20:02:22] CtxLimit:8192/8192, Amt:100/100, Init:0.01s, Process:15.06s (1.9ms/T = 537.34T/s), Generate:5.11s (51.1ms/T = 19.56T/s), Total:20.17s (4.96T/s)
Benchmark Completed - v1.64 Results:
======
Backend: koboldcpp_cublas.dll
Layers: 33
Model: Meta-Llama-3-8B-Instruct.Q8_0
MaxCtx: 8192
GenAmount: 100
-----
ProcessingTime: 15.06s
ProcessingSpeed: 537.34T/s
GenerationTime: 5.11s
GenerationSpeed: 19.56T/s
TotalTime: 20.17s
-----"""

IMPORTERS = (
    Importer(
        name="koboldcpp",
        engine="koboldcpp",
        describe="koboldcpp CtxLimit … Process:…(…T/s), Generate:…(…T/s) lines and the --benchmark summary",
        signature=signature(
            r"\b(?:CtxLimit|ContextLimit)\s*:\s*\d+\s*/\s*\d+.*\b(?:Process|Processing|Generate|Generation)\s*:"
            r"|\bTime Taken\s*-\s*Processing\s*:|^\s*(?:ProcessingSpeed|GenerationSpeed)\s*:|" + _BARE_PHASES,
            re.I,
        ),
        parse_text=parse_text,
        order=61,
        examples=(
            Example(
                "Processing Prompt [BLAS] (1676 / 1676 tokens)\nGenerating (78 / 387 tokens)\n(EOS token triggered!)\n"
                "CtxLimit: 1754/8192, Process:25.05s (14.9ms/T = 66.89T/s), Generate:59.05s (152.6ms/T = 6.55T/s), "
                "Total:84.11s (4.60T/s)",
                (
                    {
                        "prefill_tps": 66.89,
                        "decode_tps": 6.55,
                        "prompt_tokens": 1676,
                        "gen_tokens": 78,
                        "depth": 0,
                    },
                ),
            ),
            Example(
                "CtxLimit:2048/4096, Amt:48/48, Init:0.02s, Process:1.00s (2000.00T/s), Generate:2.00s (24.00T/s), "
                "Total:3.00s",
                ({"prefill_tps": 2000.0, "decode_tps": 24.0, "prompt_tokens": 2000, "gen_tokens": 48},),
                "newer line: Amt, no ms/T",
            ),
            Example(
                "Processing Prompt [BLAS] (14000 / 14000 tokens)\nGenerating (200 / 512 tokens)\n"
                "Process:48.31s (3.45ms/T = 289.81T/s), Generate:14.06s (70.3ms/T = 14.22T/s), Total:62.37s (3.21T/s)",
                ({"prefill_tps": 289.81, "decode_tps": 14.22, "prompt_tokens": 14000, "gen_tokens": 200},),
                "the phases without CtxLimit in front",
            ),
            Example(
                "Processing Prompt (400 / 400 tokens)\nGenerating (120 / 120 tokens)\n"
                "Time Taken - Processing:8.0s (20ms/T), Generation:6.0s (50ms/T), Total:14.0s (8.6T/s)",
                ({"prefill_tps": 50.0, "decode_tps": 20.0, "prompt_tokens": 400, "gen_tokens": 120},),
                "oldest line: ms/T only",
            ),
            Example(
                "Processing Prompt (1 / 1 tokens)\nGenerating (120 / 120 tokens)\n"
                "CtxLimit:3121/8192, Amt:120/120, Init:0.00s, Process:0.00s (0.0ms/T = 0.00T/s), "
                "Generate:4.10s (34.2ms/T = 29.27T/s), Total:4.10s (29.27T/s)\n"
                "CtxLimit:3400/8192, Amt:150/150, Init:0.00s, Process:0.31s (3.2ms/T = 312.5",
                (
                    {
                        "prefill_tps": None,
                        "decode_tps": 29.27,
                        "prompt_tokens": 1,
                        "gen_tokens": 120,
                        "depth": 3000,
                    },
                ),
                "cached prompt (nothing timed), then a line cut short (skipped)",
            ),
            Example(
                _BENCH,
                (
                    {
                        "prefill_tps": 537.34,
                        "decode_tps": 19.56,
                        "prompt_tokens": 8092,
                        "gen_tokens": 100,
                        "n_gpu_layers": 33,
                        "model": "Meta-Llama-3-8B-Instruct.Q8_0",
                        "engine": "koboldcpp",
                    },
                ),
                "--benchmark: the run and its summary are one measurement",
            ),
        ),
    ),
)
