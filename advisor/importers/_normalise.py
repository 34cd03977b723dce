"""The normalising pass every paste goes through before detection and parsing.

People paste tool output with things around each line that are no part of the format: a process id
and a timestamp (``[42027] 1.35.716.244 I ``), a log level (``INFO 10-10 22:30:30 file.py:13] ``,
``12:34:56-123456 INFO     ``), a comment marker from a notebook (``# ``), a quote marker from a post
(``> ``), Windows line endings, ANSI colours, and lines a terminal wrapped. :func:`normalise_lines`
removes them. Line ``i`` of its result is line ``i`` of :func:`split_lines`: a wrapped line is
re-joined onto its first part and the continuation is left blank, so warnings and the lines not
understood still point at the pasted text.

Every step is a bounded, anchored regular expression or a string method per line: linear in the
size of the paste.
"""

from __future__ import annotations

import re

__all__ = ["MAX_LINE", "normalise_lines", "split_lines", "strip_prefixes"]

#: Longer lines are not searched by the line-oriented parsers (JSON values may still span them).
MAX_LINE = 4000

_ANSI = re.compile(
    r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07\n\r]{0,200}\x07|[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ufeff]"
)
_LEVEL = r"(?:INFO|WARNING|WARN|ERROR|DEBUG|TRACE|NOTICE|CRITICAL|VERB)"
# One prefix each; they are removed repeatedly (a pid, then a timestamp, then a level...).
_PREFIXES = re.compile(
    "|".join(
        (
            r"[ \t]{0,3}(?:>(?:[ \t]|$))+",  # quote markers, "> > " nested
            r"[ \t]{0,3}#{1,6}[ \t]+",  # comment markers of notebooks and posts
            r"[ \t]{0,3}//[ \t]+",  # comment markers of JavaScript snippets
            r"\[\d{1,10}\][ \t]+",  # [42027] process id
            r"\((?:[\w\-]{1,40}[ \t]+)?pid=\d{1,10}\)[ \t]+",  # (APIServer pid=123) of vLLM
            r"\d{1,6}\.\d{2}\.\d{3}\.\d{3}[ \t]+[IWEDT][ \t]+",  # llama.cpp log: 1.35.716.244 I
            r"[IWEF]\d{4}[ \t]+\d{2}:\d{2}:\d{2}\.\d{1,9}[ \t]+\d{1,10}[ \t]+[\w.\-]{1,80}:\d{1,6}\][ \t]*",  # glog
            rf"{_LEVEL}[ \t]+\d{{2}}-\d{{2}}[ \t]+\d{{2}}:\d{{2}}:\d{{2}}(?:\.\d{{1,9}})?[ \t]+\[?[\w.\-]{{1,80}}:\d{{1,6}}\][ \t]*",
            r"\[\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(?:[.,]\d{1,9})?(?:[ \t]+[\w\-]{1,20}){0,2}\][ \t]*",
            r"\[\d{2}:\d{2}:\d{2}(?:[.,]\d{1,9})?(?:[ \t]+[\w\-]{1,20}){0,2}\][ \t]*",  # [22:30:32 TP0]
            # an ISO timestamp and its separator ("| " only when no table row follows: "…Z | model | … |")
            r"\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(?:[.,]\d{1,9})?(?:Z|[+-]\d{2}:?\d{2})?[ \t]*"
            r"(?:(?:[-:]|\|(?![^\n]*\|[ \t]*$))[ \t]+)?",
            r"\d{2}:\d{2}:\d{2}(?:[.,\-]\d{1,9})?[ \t]+(?=" + _LEVEL + r"\b)",  # 12:34:56-123456 INFO
            rf"\[?{_LEVEL}\]?(?:[ \t]*[:\-][ \t]*|[ \t]+)(?:[\w.]{{1,60}}[ \t]+-[ \t]+)?(?=\S)",  # INFO: / INFO - x -
            rf"\[{_LEVEL}\][ \t]*",
            r"\[[ \t]{0,40}\w{1,60}\][ \t]+(?=(?:prompt eval|generation eval|eval|total|load|sample) time\b)",  # [ print_timings]
            r"[\w.\-]{1,60}[-_]\d{1,3}[ \t]+\|[ \t]",  # docker compose: llama-server-1  |
            r"[A-Z][a-z]{2}[ \t]+\d{1,2}[ \t]+\d{2}:\d{2}:\d{2}[ \t]+[\w.\-]{1,64}[ \t]+[\w.\-/]{1,64}(?:\[\d{1,10}\])?:[ \t]+",  # journalctl
            r"(?:In|Out)[ \t]?\[\d{0,6}\]:[ \t]*",  # Jupyter
        )
    )
)
_MAX_PREFIXES = 6
# The first characters a prefix can start with (a docker compose name is found by its " | " instead).
_PREFIX_STARTS = frozenset(" \t>#/[(0123456789IWEFDTNCVOJMASN")  # + month names of journalctl
# Terminal widths people paste from (columns): a line exactly this long, the longest of the paste,
# was wrapped by the terminal when more text follows.
_TERMINAL_WIDTHS = frozenset(
    {80, 90, 100, 110, 120, 128, 130, 132, 140, 150, 160, 180, 200, 220, 240, 250, 256}
)


def split_lines(text: str) -> list[str]:
    """The paste's lines, with ``\\r\\n`` and lone ``\\r`` (progress output) as line breaks."""
    return text.replace("\r\n", "\n").replace("\r", "\n").split("\n")


def strip_prefixes(line: str) -> str:
    """``line`` without the log prefixes, comment and quote markers in front of it."""
    for _ in range(_MAX_PREFIXES):
        m = _PREFIXES.match(line)
        if m is None or m.end() == 0:
            break
        line = line[m.end() :]
    return line


_LINE_ENDS = (")", "]", "}", ".", "!", "?", ":", "|")


def _starts_record(line: str) -> bool:
    """True when ``line`` alone is a line some format reads (it is no continuation)."""
    from advisor.importers._registry import importers

    return any(r.signature is not None and r.signature.search(line) for r in importers())


def _opens_paren(line: str) -> bool:
    return line.count("(") > line.count(")")


def _closes_paren(line: str) -> bool:
    close = line.find(")")
    if close < 0:
        return False
    opening = line.find("(")
    return opening < 0 or opening > close


def _wrapped(line: str, nxt: str, raw_len: int, width: int) -> str | None:
    """The separator to re-join ``nxt`` onto ``line`` with, or None when ``nxt`` is a line of its own.

    A terminal wraps at its width without adding or dropping a character (join with nothing); an
    editor wraps at a space it drops (join with one). Two cases are recognised: a parenthesis left
    open and closed on the next line, and a line exactly as long as the longest line of the paste,
    that length a usual terminal width, not ending like a sentence or a record, followed by more text
    that is not a table row, does not start like the line itself and is no format's line.
    """
    if not nxt.strip() or len(line) + len(nxt) > MAX_LINE:
        return None
    first_word = line.split(maxsplit=1)[0] if line.strip() else ""
    at_width = (
        width in _TERMINAL_WIDTHS
        and raw_len == width
        and len(nxt) <= width
        and not nxt.startswith(first_word)
        and not _starts_record(nxt)
    )
    table = line.rstrip().endswith("|") or nxt.lstrip().startswith("|")
    if _opens_paren(line) and _closes_paren(nxt):
        return "" if at_width or line[-1:].isspace() or nxt[:1].isspace() else " "
    if at_width and not table and not line.rstrip().endswith(_LINE_ENDS):
        return ""
    return None


# A table row or header pasted on the same line as the words before it: "Here is my result on an M2 Max: | model | size |
# ..." (group 1 the words, group 2 the table from its first pipe, three cells or more).
PROSE_BEFORE_TABLE = re.compile(r"^([^|]*[A-Za-z]{2}[^|]*?[:.!?]\s*)(\|(?:[^|\n]*\|){3,}\s*)$")


def normalise_lines(text: str) -> list[str]:
    """The lines every parser reads: no ANSI colours, control characters, log prefixes, comment or
    quote markers; wrapped lines re-joined (the continuation line left blank).

    Args:
        text: the paste as given.

    Returns:
        As many lines as :func:`split_lines` gives for ``text``.
    """
    raw = [PROSE_BEFORE_TABLE.sub(r"\2", ln) if "|" in ln else ln for ln in split_lines(_ANSI.sub("", text))]
    lines = [
        strip_prefixes(line) if line and (line[0] in _PREFIX_STARTS or "|" in line[:64]) else line
        for line in raw
    ]
    lengths = list(map(len, raw))
    width = max(filter(MAX_LINE.__ge__, lengths), default=0)
    terminal = width in _TERMINAL_WIDTHS
    candidates = [
        i
        for i, line in enumerate(lines)
        if (terminal and lengths[i] == width) or ("(" in line and _opens_paren(line))
    ]
    done = -1  # lines up to here were joined onto an earlier one
    for i in candidates:
        if i <= done or not lines[i].strip():
            continue
        j = i + 1
        while j < len(lines):
            sep = _wrapped(lines[i], lines[j], lengths[j - 1], width)
            if sep is None:
                break
            lines[i] = lines[i] + sep + (lines[j] if sep == "" else lines[j].lstrip())
            lines[j] = ""
            j += 1
        done = j - 1
    return lines
