"""The terminal as a conversation: answers rendered with ``rich`` (Markdown, tables, progress).

The chat's Markdown carries two bits of HTML the browser renders: ``<details><summary>T</summary>
… </details>`` (folded detail) and ``<sub>…</sub>`` (small print). :func:`to_terminal_markdown`
turns them into a heading and dim italics so the same answer reads well in a terminal;
:func:`print_markdown` renders it (tables drawn, bold kept, wrapped to the terminal width, plain
text when the output is not a terminal). :func:`progress_bar` is a ``(fraction, description)``
callback for the probe, drawn on stderr only when it is a terminal.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import IO

from rich.console import Console
from rich.markdown import Markdown
from rich.progress import BarColumn, Progress, TaskProgressColumn, TextColumn, TimeElapsedColumn

__all__ = ["console", "print_markdown", "progress_bar", "to_terminal_markdown"]

_SUMMARY = re.compile(r"<details>\s*<summary>(.*?)</summary>", re.S)
_SUB = re.compile(r"<sub>(.*?)</sub>", re.S)
_BR = re.compile(r"<br\s*/?>")
_TAGS = re.compile(r"</?(?:details|summary|sub|br)\s*/?>")
# Wide enough for the answers' tables when the output is a pipe or a file (no terminal width to read).
PIPE_WIDTH = 160


def to_terminal_markdown(md: str) -> str:
    """Chat Markdown → terminal Markdown: folded blocks become ``#### title`` sections, small print italics."""
    md = _SUMMARY.sub(lambda m: f"\n#### {m.group(1).strip()}\n", md)
    md = _SUB.sub(lambda m: f"_{m.group(1).strip()}_", md)
    md = _BR.sub("\n\n", md)  # "<sub>a</sub><br><sub>b</sub>": two lines of small print, not "_a__b_"
    return _TAGS.sub("", md)


def console(file: IO[str] | None = None, *, stderr: bool = False) -> Console:
    """A console on ``file`` (default stdout, or stderr); colours only on a terminal, honours NO_COLOR."""
    f = file if file is not None else (sys.stderr if stderr else sys.stdout)
    tty = bool(getattr(f, "isatty", lambda: False)())
    return Console(file=f, width=None if tty else PIPE_WIDTH, force_terminal=tty or None, soft_wrap=False,
                   highlight=False, emoji=False)


def print_markdown(md: str, *, file: IO[str] | None = None) -> None:
    """Render an answer's Markdown in the terminal (see :func:`to_terminal_markdown`).

    Into a pipe or a file the text is plain, without the padding rich adds to fill the width.
    """
    con = console(file)
    doc = Markdown(to_terminal_markdown(md), hyperlinks=False)
    if con.is_terminal:
        con.print(doc)
        return
    with con.capture() as cap:
        con.print(doc)
    out = "\n".join(line.rstrip() for line in cap.get().splitlines()).strip("\n")
    f = file if file is not None else sys.stdout
    f.write(out + "\n")


@contextmanager
def progress_bar(enabled: bool = True) -> Iterator[Callable[[float, str], None]]:
    """A ``progress(fraction, description)`` callback drawing a bar on stderr (a no-op when not a terminal).

    Use as ``with progress_bar() as progress: run_probe(..., progress=progress)``.
    """
    err = console(stderr=True)
    if not enabled or not err.is_terminal:
        yield lambda fraction, desc: None
        return
    with Progress(TextColumn("[bold]{task.description:<40}"), BarColumn(), TaskProgressColumn(),
                  TimeElapsedColumn(), console=err, transient=True) as bar:
        task = bar.add_task("Starting…", total=1.0)

        def update(fraction: float, desc: str) -> None:
            bar.update(task, completed=max(0.0, min(1.0, float(fraction))), description=(desc or "Probing…")[:40])

        yield update
