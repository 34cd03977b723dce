"""Which tool printed a paste: the registry's line signatures for text, its key tests for JSON.

The parsers use :func:`text_formats` to skip work on formats that are absent. :func:`detect_format`
names the format that :func:`advisor.importers.parse_output` reports for the same text (it runs
the same pipeline, so the two cannot disagree).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from advisor.importers._json import JsonSpan
from advisor.importers._normalise import MAX_LINE, normalise_lines, split_lines
from advisor.importers._registry import importers

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
FORMATS: tuple[str, ...] = tuple(r.name for r in importers())

#: Formats whose records place a model on devices but carry no rate.
PLACEMENT_FORMATS = frozenset(r.name for r in importers() if r.placement)

#: How much of a text :func:`detect_format` looks at (the importer's default size limit).
DETECT_CHARS = 5_000_000

_SPACES = re.compile(r" {3,}")


def normalise_text(text: str) -> list[str]:
    """The lines every parser reads (see :func:`advisor.importers._normalise.normalise_lines`)."""
    return normalise_lines(text)


def clean_text(text: str) -> str:
    """The normalised paste as one string; line ``i`` here is line ``i`` of :func:`split_lines`."""
    return "\n".join(normalise_lines(text))


def text_formats(lines: Sequence[str]) -> dict[str, int]:
    """Text formats whose signature appears, mapped to the first line index where it does.

    Lines longer than :data:`MAX_LINE` are ignored; runs of spaces count as two (a signature never
    needs more), which keeps every signature search linear.
    """
    text = _SPACES.sub("  ", "\n".join("" if len(line) > MAX_LINE else line for line in lines))
    found: dict[str, int] = {}
    for record in importers():
        if record.signature is None or record.parse_text is None:
            continue
        m = record.signature.search(text)
        if m:
            found[record.name] = text.count("\n", 0, m.start())
    return found


def classify_json(value: Any, one_line: bool = False) -> str | None:
    """The format of a JSON value found in a paste, or None when it is no known tool's output.

    Args:
        value: a dict, or a list of dicts.
        one_line: the value sat on one line (a lone object then may be JSONL).
    """
    items = value if isinstance(value, list) else [value]
    alone = one_line and isinstance(value, dict)
    for item in items:
        if not isinstance(item, dict):
            continue
        for record in importers():
            if record.json_test is None or (record.json_one_line and not alone):
                continue
            if record.json_test(item):
                return record.name
    return None


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
    from advisor.importers._parse import parse_output

    if not isinstance(text, str) or not text.strip():
        return "unknown"
    return parse_output(text[:DETECT_CHARS], max_bytes=4 * DETECT_CHARS + 4).format
