"""Finding JSON in a paste and reading it leniently.

People paste JSON with a shell prompt before it, chatter after it, ``...`` where they cut a long
part, trailing commas, a missing closing brace, Python ``repr`` quotes, or one object per line
(streaming chunks, JSONL). :func:`find_json` returns every JSON value it can recover, with the
lines it covers.
"""

from __future__ import annotations

import bisect
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from advisor.importers._util import line_starts, lines_matching, to_float, to_int

__all__ = ["JsonSpan", "find_json", "loads_lenient", "scrape_pairs"]

# Bounds that keep hostile input linear: how many starts are tried, how many get the slow path.
_MAX_STARTS = 5000
_MAX_LENIENT = 40
_MAX_SPAN_CHARS = 1_000_000
_LENIENT_BUDGET = 8_000_000  # characters the slow path may read in one paste, at most
_LENIENT_PER_CHAR = 40  # ... and at most this many per character of the paste
_LENIENT_BASE = 1_000_000  # ... plus this many
_LENIENT_PASSES = 40  # passes of loads_lenient and scrape_pairs over a snippet, about
_MAX_UNCLOSED_LINES = 5000

_START_PREFIX = re.compile(r"^\s*(?:(?:data|[\w.\-]+|\"[^\"]{0,60}\"|'[^']{0,60}')\s*[:=]\s*|[$#>]+\s*)?$")
_OPENER = re.compile(r"[{\[]")
_JSONISH_LINE = re.compile(r"""^\s*(?:["'{}\[\]\d\-]|[A-Za-z_]\w*\s*:|true\b|false\b|null\b|\.\.\.|…)""")
_JSON_NEXT = re.compile(r"""\s*(?:["'{}\[\]\d\-]|[A-Za-z_]\w*\s*:|\.\.\.|…|$)""")
# A string ends at its closing quote or, unclosed (a truncated paste, an unescaped quote), at the end of
# its line: no token is longer than a line, so a scan never restarts inside a long string.
_TOKEN = re.compile(r'"(?:[^"\\\n]|\\.)*+(?:"|\\?(?=\n|\Z))|[{}\[\]]')
_ELLIPSIS = r"(?:\.\.\.|…)"
_CLEANUPS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(rf"(?m)^[ \t]*{_ELLIPSIS}[ \t]*,?[ \t]*(?:\n|$)"), ""),
    (re.compile(rf"\[\s*{_ELLIPSIS}\s*\]"), "[]"),
    (re.compile(rf"\{{\s*{_ELLIPSIS}\s*\}}"), "{}"),
    (re.compile(rf":\s*{_ELLIPSIS}"), ": null"),
    (re.compile(rf",\s*{_ELLIPSIS}(?=\s*[\]}},])"), ""),
    (re.compile(rf"(?<=[\[{{])\s*{_ELLIPSIS}\s*,"), ""),
    (re.compile(r"(?m)^[ \t]*//.*$"), ""),
    (re.compile(r",(\s*[}\]])"), r"\1"),
)
# A key starts a word (never inside one) and a quoted value ends on its line: one pass, linear.
_PAIR = re.compile(
    r"""(?<![\w\-])["']?([A-Za-z_][\w\-]{0,100})["']?[ \t]*[:=][ \t]*"""
    r"""(-?\d{1,40}(?:\.\d{1,40})?(?:[eE][-+]?\d{1,4})?(?![\w.])|"(?:[^"\\\n]|\\.)*+"|'[^'\n]*+'"""
    r"""|true|false|null|True|False|None)"""
)
# A "key": "value" line whose value holds quotes that were not escaped (a published response).
_QUOTED_LINE = re.compile(r'(?m)^([ \t]*"[^"\n]{1,100}"[ \t]*:[ \t]*")(.*)("[ \t]*,?[ \t]*)$')
_BARE_QUOTE = re.compile(r'(?<!\\)"')
_LITERALS: dict[str, Any] = {
    "true": True,
    "false": False,
    "null": None,
    "True": True,
    "False": False,
    "None": None,
}


@dataclass
class JsonSpan:
    """One JSON value found in the text.

    Attributes:
        first_line, last_line: line indexes the value covers (inclusive).
        value: a dict, or a list of dicts.
        one_line: the value sat on a single line (JSONL, streaming chunks).
        repaired: the value needed cleaning (elisions, trailing commas, truncation, scraping).
    """

    first_line: int
    last_line: int
    value: Any
    one_line: bool
    repaired: bool


def _start_column(line: str) -> int | None:
    """Column of the ``{``/``[`` that may open a JSON value on this line, if the prefix allows it."""
    cols = [c for c in (line.find("{"), line.find("[")) if c >= 0]
    if not cols:
        return None
    col = min(cols)
    return col if _START_PREFIX.match(line[:col]) else None


def _usable(value: Any) -> bool:
    if isinstance(value, dict):
        return bool(value)
    return isinstance(value, list) and any(isinstance(v, dict) for v in value)


def _balanced_end(text: str, pos: int, max_chars: int) -> tuple[int, list[str]]:
    """End offset of the bracketed value opening at ``pos``; the open brackets left if unterminated."""
    stack: list[str] = []
    limit = min(len(text), pos + max_chars)
    for m in _TOKEN.finditer(text, pos, limit):
        tok = m.group(0)
        if tok in "{[":
            stack.append(tok)
        elif tok in "}]":
            if stack:
                stack.pop()
            if not stack:
                return m.end(), []
    return limit, stack


def _closers(text: str) -> str:
    stack: list[str] = []
    for m in _TOKEN.finditer(text):
        tok = m.group(0)
        if tok in "{[":
            stack.append(tok)
        elif tok in "}]" and stack:
            stack.pop()
    return "".join("}" if b == "{" else "]" for b in reversed(stack))


def _escape_inner_quotes(text: str) -> str:
    """Escape the quotes inside ``"key": "value",`` string values that were published unescaped."""
    return _QUOTED_LINE.sub(lambda m: m.group(1) + _BARE_QUOTE.sub(r'\\"', m.group(2)) + m.group(3), text)


def loads_lenient(snippet: str) -> Any:
    """Parse JSON that may be elided (``...``), have trailing commas, unescaped quotes inside string
    values (one ``"key": "value"`` per line) or be cut short.

    Returns:
        The value, or None when even the repaired text is not JSON.
    """
    variants = [snippet, _escape_inner_quotes(snippet)] if '"' in snippet else [snippet]
    for cuts in (0, 3):
        for variant in variants:
            value = _loads_repaired(variant, cuts)
            if value is not None:
                return value
    return None


def _loads_repaired(snippet: str, cuts: int) -> Any:
    """The value of the cleaned snippet, closed where it was cut; with ``cuts`` > 0 also of the
    snippet without its last 1..``cuts`` lines (a line cut in the middle)."""
    cleaned = snippet
    for pattern, repl in _CLEANUPS:
        cleaned = pattern.sub(repl, cleaned)
    for _ in range(cuts + 1):
        candidate = cleaned.rstrip().rstrip(",")
        candidate = re.sub(r",(\s*)$", r"\1", candidate) + _closers(candidate)
        candidate = re.sub(r",(\s*[}\]])", r"\1", candidate)
        try:
            return json.loads(candidate, strict=False)
        except (ValueError, RecursionError):
            cut = cleaned.rstrip().rfind("\n")
            if cut <= 0:
                return None
            cleaned = cleaned[:cut]
    return None


def scrape_pairs(snippet: str) -> list[dict[str, Any]]:
    """Last resort: flat ``key: scalar`` pairs, a new dict each time a key repeats."""
    objs: list[dict[str, Any]] = [{}]
    for m in _PAIR.finditer(snippet):
        key, raw = m.group(1), m.group(2)
        if raw in _LITERALS:
            val: Any = _LITERALS[raw]
        elif raw[0] in "\"'":
            val = raw[1:-1]
        else:
            val = to_float(raw) if any(c in raw for c in ".eE") else to_int(raw)
        if key in objs[-1]:
            objs.append({})
        objs[-1][key] = val
    return [o for o in objs if len(o) >= 2]


class _Finder:
    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        self.text = "\n".join(lines)
        self.offsets = line_starts(lines)
        self.decoder = json.JSONDecoder(strict=False)
        self.lenient_left = _MAX_LENIENT
        # Work the slow path may do, in characters read: bounded, and small for a small paste.
        self.budget = min(_LENIENT_BUDGET, _LENIENT_PER_CHAR * len(self.text) + _LENIENT_BASE)
        # Characters strict decoding may read in starts that fail: a few times the text, so that many
        # unclosed values, each read to the end of the paste, cannot make the search quadratic.
        self.failed_left = 4 * len(self.text) + 100_000

    def line_of(self, offset: int) -> int:
        return max(0, bisect.bisect_right(self.offsets, offset) - 1)

    def jsonish_end(self, first: int) -> int:
        """End offset of the run of JSON-looking lines that starts at line ``first``."""
        j, stop = first + 1, min(len(self.lines), first + _MAX_UNCLOSED_LINES)
        while j < stop and _JSONISH_LINE.match(self.lines[j]):
            j += 1
        return self.offsets[j - 1] + len(self.lines[j - 1])

    def decode(self, line: int, col: int) -> tuple[Any, int, bool]:
        pos = self.offsets[line] + col
        if self.failed_left <= 0:
            return None, pos, False
        try:
            value, end = self.decoder.raw_decode(self.text, pos)
            return value, end, False
        except json.JSONDecodeError as exc:
            self.failed_left -= max(exc.pos - pos, 1)
        except (ValueError, RecursionError):
            self.failed_left -= len(self.text) - pos
        if self.lenient_left <= 0 or self.budget <= 0 or not _JSON_NEXT.match(self.text, pos + 1):
            return None, pos, False
        self.lenient_left -= 1
        end, unclosed = _balanced_end(self.text, pos, min(_MAX_SPAN_CHARS, self.budget))
        self.budget -= end - pos
        if unclosed:
            end = min(end, self.jsonish_end(line))
        value = self.repair(pos, end)
        if not _usable(value) and not unclosed:
            # A bracket inside a broken string closed the value early: read on over the lines that
            # still look like JSON (at least to the end of this line).
            wider = max(end, self.jsonish_end(line))
            if wider > end:
                value, end = self.repair(pos, wider), wider
        return value, end, True

    def repair(self, pos: int, end: int) -> Any:
        """The value of ``text[pos:end]`` repaired, or its flat pairs, or None."""
        snippet = self.text[pos:end]
        self.budget -= _LENIENT_PASSES * len(snippet)
        value = loads_lenient(snippet)
        if value is None:
            scraped = scrape_pairs(snippet)
            value = scraped[0] if len(scraped) == 1 else scraped or None
        return value


def find_json(lines: list[str], accept: Callable[[Any, bool], bool] | None = None) -> list[JsonSpan]:
    """Every JSON value (a dict, or a list holding dicts) that starts a line or follows a short prefix.

    Args:
        lines: the cleaned lines of the paste (claimed lines may be blank).
        accept: ``accept(value, one_line)`` is true for a value of a known format. A strict value it
            refuses that ends before its line does (``{"response": ""}", "eval_count": 25, ...}``: an
            unescaped quote and brace closed it early) is read again leniently over the whole line.

    Returns:
        Spans in text order; lines inside a span are not searched again.
    """
    finder = _Finder(lines)
    spans: list[JsonSpan] = []
    next_free, starts = 0, 0
    for i in lines_matching(lines, _OPENER):
        if i < next_free:
            continue
        col = _start_column(lines[i])
        if col is None:
            continue
        starts += 1
        if starts > _MAX_STARTS:
            break
        value, end, repaired = finder.decode(i, col)
        if accept is not None and _usable(value) and not accept(value, True):
            last = finder.line_of(max(end - 1, 0))
            line_end = finder.offsets[last] + len(lines[last])
            if end < line_end and finder.text[end:line_end].strip() and finder.budget > 0:
                stop = max(line_end, finder.jsonish_end(i))
                wider = finder.repair(finder.offsets[i] + col, stop)
                if _usable(wider) and accept(wider, last == i and stop == line_end):
                    value, end, repaired = wider, stop, True
        if _usable(value):
            last = max(i, finder.line_of(max(end - 1, 0)))
            spans.append(JsonSpan(i, last, value, last == i, repaired))
            next_free = last + 1
    return spans
