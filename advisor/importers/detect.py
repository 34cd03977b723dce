"""Which tool printed a paste: line signatures for text formats, key sets for JSON.

:func:`detect_format` is cheap (regular expressions plus one JSON scan) and names the format that
:func:`advisor.importers.parse_output` reports for the same text whenever that text holds a
measurement. The parsers use :func:`text_formats` to skip work on formats that are absent.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from advisor.importers._json import JsonSpan, find_json

__all__ = [
    "DETECT_CHARS",
    "FORMATS",
    "MAX_LINE",
    "PLACEMENT_FORMATS",
    "choose_format",
    "classify_json",
    "clean_text",
    "detect_format",
    "normalise_text",
    "split_lines",
    "text_formats",
]

#: Every format name an :class:`~advisor.models.ImportResult` can carry.
FORMATS: tuple[str, ...] = (
    "llama-bench-md",
    "llama-bench-csv",
    "llama-bench-json",
    "llama-bench-jsonl",
    "llama-bench-sql",
    "batched-bench",
    "llama-server-timings",
    "llama-print-timings",
    "llama-perf",
    "ollama-verbose",
    "ollama-api",
    "ollama-ps",
    "mlx-generate",
    "mlx-lm-benchmark",
    "lmstudio",
    "vllm-bench",
    "unknown",
)

#: Formats whose records place a model on devices but carry no rate.
PLACEMENT_FORMATS = frozenset({"ollama-ps"})

_I = re.I | re.M


def _sig(pattern: str, flags: int = re.M) -> re.Pattern[str]:
    """A line signature; ``\\s`` is confined to one line because signatures search the whole paste."""
    return re.compile(pattern.replace(r"\s", r"[ \t]"), flags | re.M)


_SIGNATURES: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "llama-bench-md",
        _sig(r"^(?=.*[|\t]\s*test\s*(?:[|\t]|$)).*[|\t]\s*(?:t/s|tok/s|tokens/s)\s*(?:[|\t]|$)", _I),
    ),
    ("batched-bench", _sig(r"^\s*\|?\s*PP\s*[|\t]\s*TG\s*[|\t]\s*B\s*[|\t]", _I)),
    ("llama-bench-csv", _sig(r"^\"?[a-z_]+\"?(?:,\"?[a-z_]+\"?)*,\"?avg_ts\"?(?:,|$)", re.M)),
    (
        "llama-bench-sql",
        _sig(
            r"\bCREATE\s+TABLE(?:\s+IF\s+NOT\s+EXISTS)?\s+(?:llama_bench|test)\b|\bINSERT\s+INTO\s+\S+\s*\([^)]*\bavg_ts\b",
            _I,
        ),
    ),
    ("llama-print-timings", _sig(r"^\s*llama_print_timings:", re.M)),
    (
        "llama-perf",
        _sig(
            r"^\s*(?:llama|common)_perf_\w+_print:|\[\s*Prompt:\s*[\d.,]+\s*t/s\s*\|\s*Generation:\s*[\d.,]+\s*t/s\s*\]"
        ),
    ),
    (
        "llama-server-timings",
        _sig(
            r"^\s*(?:print_timings?:\s*)?(?:prompt eval|eval) time\s*=.*tokens per second|\"function\":\s*\"print_timings\"",
            re.M,
        ),
    ),
    (
        "ollama-verbose",
        _sig(r"^\s*(?:prompt eval rate|eval rate|eval count|eval duration|prompt eval count)\s*:", _I),
    ),
    (
        "ollama-api",
        _sig(
            r"\beval_count['\"]?\s*[=:]\s*\d.*\beval_duration|\beval_duration['\"]?\s*[=:]\s*\d.*\beval_count"
        ),
    ),
    ("ollama-ps", _sig(r"^\s*NAME\s+ID\s+SIZE\s+PROCESSOR\b", re.M)),
    (
        "mlx-generate",
        _sig(
            r"^\s*(?:\[batch_generate\]\s*)?(?:Prompt|Generation):\s*(?:\d+\s*tokens,\s*)?[\d.,]+\s*tokens[- ]per[- ]sec",
            re.M,
        ),
    ),
    ("mlx-lm-benchmark", _sig(r"^\s*(?:Trial\s+\d+|Averages):\s*prompt_tps\s*=", re.M)),
    ("lmstudio", _sig(r"tok/sec\s*[•·|,]\s*\d+\s*tokens\b|^\s*Tokens/Second\s*:", re.I)),
    (
        "vllm-bench",
        _sig(
            r"Serving Benchmark Result|^\s*Output token throughput \(tok/s\)\s*:|^\s*Throughput:.*output tokens/s",
            re.M,
        ),
    ),
)


_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ufeff]")
_QUOTE = re.compile(r"^(?:>[ \t])+", re.M)
#: How much of a text :func:`detect_format` looks at (the importer's default size limit).
DETECT_CHARS = 5_000_000
#: Longer lines are not searched by the line-oriented parsers (JSON values may still span them).
MAX_LINE = 4000


def split_lines(text: str) -> list[str]:
    """The paste's lines, with ``\\r\\n`` and lone ``\\r`` (progress output) as line breaks."""
    return text.replace("\r\n", "\n").replace("\r", "\n").split("\n")


def clean_text(text: str) -> str:
    """The paste as the parsers read it: no BOM, ANSI colours, control characters or ``> `` quote
    marks; line breaks are kept, so line ``i`` here is line ``i`` of :func:`split_lines`."""
    return _QUOTE.sub("", _ANSI.sub("", text.replace("\r\n", "\n").replace("\r", "\n")))


def normalise_text(text: str) -> list[str]:
    """The lines every parser reads (:func:`clean_text`, split into lines)."""
    return clean_text(text).split("\n")


def text_formats(lines: Sequence[str]) -> dict[str, int]:
    """Text formats whose signature appears, mapped to the first line index where it does.

    Lines longer than :data:`MAX_LINE` are ignored.
    """
    text = "\n".join("" if len(line) > MAX_LINE else line for line in lines)
    found: dict[str, int] = {}
    for fmt, pattern in _SIGNATURES:
        m = pattern.search(text)
        if m:
            found[fmt] = text.count("\n", 0, m.start())
    return found


def _has(obj: dict[str, Any], *keys: str) -> bool:
    return any(k in obj for k in keys)


def _classify_dict(obj: dict[str, Any]) -> str | None:
    timings = obj.get("timings")
    if isinstance(timings, dict) and _has(timings, "prompt_n", "predicted_n", "predicted_per_second"):
        return "llama-server-timings"
    if _has(obj, "prompt_per_second", "predicted_per_second") and _has(obj, "prompt_n", "predicted_n"):
        return "llama-server-timings"
    if _has(obj, "eval_count", "eval_duration", "prompt_eval_count", "prompt_eval_duration"):
        return "ollama-api"
    if "done" in obj and _has(obj, "response", "message") and "created_at" in obj:
        return "ollama-api"
    models = obj.get("models")
    if isinstance(models, list) and any(
        isinstance(m, dict) and _has(m, "size_vram", "digest") for m in models
    ):
        return "ollama-ps"
    stats = obj.get("stats")
    if _has(obj, "tokensPerSecond", "timeToFirstTokenSec") or (
        isinstance(stats, dict) and _has(stats, "tokensPerSecond", "tokens_per_second", "timeToFirstTokenSec")
    ):
        return "lmstudio"
    if _has(obj, "output_throughput", "mean_tpot_ms", "total_output_tokens", "mean_ttft_ms"):
        return "vllm-bench"
    if "avg_ts" in obj or ("n_prompt" in obj and "n_gen" in obj):
        return "llama-bench-json"
    if _has(obj, "speed_pp", "speed_tg") or ("pl" in obj and "pp" in obj and "tg" in obj):
        return "batched-bench"
    return None


def classify_json(value: Any, one_line: bool = False) -> str | None:
    """The format of a JSON value found in a paste, or None when it is no known tool's output.

    Args:
        value: a dict, or a list of dicts.
        one_line: the value sat on one line (llama-bench objects then count as JSONL).
    """
    items = value if isinstance(value, list) else [value]
    kinds = [_classify_dict(v) for v in items if isinstance(v, dict)]
    fmt = next((k for k in kinds if k), None)
    if fmt == "llama-bench-json" and one_line and isinstance(value, dict):
        return "llama-bench-jsonl"
    return fmt


def json_formats(spans: list[JsonSpan]) -> list[tuple[int, str]]:
    """``(first line, format)`` of every recognised JSON span."""
    out = []
    for span in spans:
        fmt = classify_json(span.value, span.one_line)
        if fmt:
            out.append((span.first_line, fmt))
    return out


def choose_format(candidates: Iterable[tuple[int, str]]) -> str:
    """The format to report: the earliest one that carries rates, else a placement format, else unknown."""
    ordered = sorted(candidates)
    for _, fmt in ordered:
        if fmt not in PLACEMENT_FORMATS:
            return fmt
    return ordered[0][1] if ordered else "unknown"


def detect_format(text: str) -> str:
    """Name the tool output in ``text`` (one of :data:`FORMATS`), ``unknown`` when none is recognised.

    Args:
        text: the pasted output; it may hold chatter, a shell prompt or several tools' output. Only
            the first :data:`DETECT_CHARS` characters are looked at.
    """
    if not isinstance(text, str) or not text.strip():
        return "unknown"
    lines = normalise_text(text[:DETECT_CHARS])
    spans = [s for s in find_json(lines) if classify_json(s.value, s.one_line)]
    covered = {i for s in spans for i in range(s.first_line, s.last_line + 1)}
    rest = ["" if i in covered else line for i, line in enumerate(lines)]
    found = [(i, fmt) for fmt, i in text_formats(rest).items()]
    return choose_format(found + json_formats(spans))
