"""``parse_output``: run every importer that the paste calls for and merge what they read.

Order of work: JSON values first (they claim their lines), then the line-oriented parsers whose
signature appears, then the context lines (command, GPU, model-loading log). A line read by one
parser is hidden from the next, so nothing is counted twice.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from typing import Any

from advisor.errors import InputError
from advisor.importers._context import parse_context
from advisor.importers._json import find_json
from advisor.importers._registry import JsonHandler, TextParser, get_importer, importers
from advisor.importers._util import Outcome, backend_label, is_decoration
from advisor.importers.detect import (
    MAX_LINE,
    PLACEMENT_FORMATS,
    choose_format,
    classify_json,
    normalise_text,
    split_lines,
    text_formats,
)
from advisor.models import ImportResult, Measurement

__all__ = ["parse_output"]

MAX_UNPARSED = 1000
_SHOWN_CHARS = 300


@functools.cache
def _text_parsers() -> tuple[tuple[frozenset[str], TextParser], ...]:
    """Each distinct text parser once, with the formats whose signature calls for it, in run order."""
    names: dict[TextParser, set[str]] = {}
    for record in importers():
        if record.parse_text is not None and record.signature is not None:
            names.setdefault(record.parse_text, set()).add(record.name)
    return tuple((frozenset(v), k) for k, v in names.items())


def _json_handler(fmt: str) -> JsonHandler | None:
    return get_importer(fmt).from_json


def _check_size(text: Any, max_bytes: int) -> None:
    if not isinstance(text, str):
        raise InputError(f"Expected the pasted tool output as text, got {type(text).__name__}.")
    size = len(text) if len(text) > max_bytes else len(text.encode("utf-8", "surrogatepass"))
    if size > max_bytes:
        raise InputError(
            f"The pasted text is {size:,} bytes, more than the {max_bytes:,} bytes the importer reads. "
            "Paste only the part with the results (the table, the timing lines or the JSON)."
        )


class _Run:
    """The state of one parse: the lines, what each format made of them, the lines claimed."""

    def __init__(self, text: str) -> None:
        self.raw = split_lines(text)
        self.clean = normalise_text(text)
        self.outcomes: dict[str, Outcome] = {}
        self.claimed: set[int] = set()
        self._view: tuple[int, list[str]] = (-1, [])

    def view(self) -> list[str]:
        """The clean lines with claimed and overlong lines blanked (cached until more lines are claimed)."""
        if self._view[0] != len(self.claimed):
            lines = [
                "" if len(line) > MAX_LINE or (self.claimed and i in self.claimed) else line
                for i, line in enumerate(self.clean)
            ]
            self._view = (len(self.claimed), lines)
        return self._view[1]

    def merge(self, out: Outcome) -> None:
        into = self.outcomes.setdefault(out.fmt, Outcome(out.fmt))
        into.measurements += out.measurements
        into.consumed |= out.consumed
        into.warnings += out.warnings
        into.machine.update(out.machine)
        self.claimed |= out.consumed

    def read_json(self) -> None:
        for span in find_json(self.clean, lambda value, one_line: classify_json(value, one_line) is not None):
            fmt = classify_json(span.value, span.one_line)
            if fmt is None:
                continue
            out = Outcome(fmt)
            lines = set(range(span.first_line, span.last_line + 1))
            handler = _json_handler(fmt)
            items = span.value if isinstance(span.value, list) else [span.value]
            understood = handler is not None and any(
                [handler(v, out, span.first_line) for v in items if isinstance(v, dict)]
            )
            if understood:
                out.consumed |= lines
            if understood and span.repaired:
                where = f"lines {span.first_line + 1}-{span.last_line + 1}"
                out.warnings.append(
                    f"{where}: not strict JSON (cut, elided or JavaScript-style); read what was there"
                )
            self.merge(out)
            self.claimed |= lines

    def read_text(self) -> None:
        present = text_formats(self.view())
        for formats, parser in _text_parsers():
            if formats & present.keys():
                self.merge(parser(self.view()))


def _stamped(m: Measurement, fmt: str) -> Measurement:
    """The measurement with the engine its format implies (unless its parser named one) and the
    matching ``backend`` label (``llama.cpp-cuda``)."""
    engine = m.engine or get_importer(fmt).engine
    return m.model_copy(update={"engine": engine, "backend": backend_label(engine, m.backend)})


def _ordered(outcomes: dict[str, Outcome]) -> list[Measurement]:
    keyed = [
        (line, n, _stamped(m, fmt))
        for fmt, out in outcomes.items()
        for n, (line, m) in enumerate(out.measurements)
    ]
    return [m for _, _, m in sorted(keyed, key=lambda t: (t[0], t[1]))]


def _pick_format(outcomes: dict[str, Outcome]) -> str:
    with_data = [(min(line for line, _ in o.measurements), f) for f, o in outcomes.items() if o.measurements]
    if with_data:
        return choose_format(with_data)
    recognised = [(min(o.consumed), f) for f, o in outcomes.items() if o.consumed]
    return choose_format(recognised)


def _fold_placements(measurements: list[Measurement], machine: dict[str, Any]) -> list[Measurement]:
    """Drop placement-only records when rates exist; copy ``gpu_fraction`` onto matching ollama runs."""
    rated = [
        m for m in measurements if any(r is not None for r in (m.prefill_tps, m.decode_tps, m.blended_tps))
    ]
    if not rated:
        return measurements
    placements = {p["name"]: p.get("gpu_fraction") for p in machine.get("ollama_ps", []) if p.get("name")}
    only = next(iter(placements.values())) if len(placements) == 1 else None
    folded = []
    for m in rated:
        frac = placements.get(m.model or "", only)
        folded.append(
            m.model_copy(update={"gpu_fraction": frac}) if m.gpu_fraction is None and frac is not None else m
        )
    return folded


def _fill(measurements: list[Measurement], fields: dict[str, Any]) -> list[Measurement]:
    """Fill empty fields of every measurement from the context lines."""
    out = []
    for m in measurements:
        update = {k: v for k, v in fields.items() if getattr(m, k, "absent") is None}
        out.append(m.model_copy(update=update) if update else m)
    return out


def _unparsed(run: _Run, consumed: set[int], everything: bool) -> tuple[list[str], list[str]]:
    # Control characters ("\r\x08\n") can make the raw and the normalised text split into different line
    # counts: then the normalised lines are shown (never a crash on odd bytes).
    raws = run.raw if len(run.raw) == len(run.clean) else run.clean
    lines = [
        raw.rstrip()
        for i, (raw, clean) in enumerate(zip(raws, run.clean, strict=True))
        if clean.strip() and (everything or i not in consumed) and not is_decoration(clean)
    ]
    shown = [
        line if len(line) <= _SHOWN_CHARS else line[:_SHOWN_CHARS] + "…" for line in lines[:MAX_UNPARSED]
    ]
    more = (
        [f"{len(lines) - MAX_UNPARSED} more lines not understood are not listed"]
        if len(lines) > MAX_UNPARSED
        else []
    )
    return shown, more


# A line between two runs that says the next one ran elsewhere: "and on my other box (RTX 3060):", "same thing on my
# laptop:", "RTX 3060:" as a heading (a card or Mac chip named alone). The first run's own heading sits before its rows.
_OTHER_BOX = re.compile(r"\b(?:on|from|with)\s+(?:my|the|our|a|his|her|their)\s+(?:other|second|2nd|old|older|new|newer|"
                        r"friend'?s|work|home|office|spare)\s+(?:box|machine|pc|computer|rig|server|laptop|desktop|mac|"
                        r"card|gpu|system)\b|\b(?:same|second)\s+(?:run|test|thing|bench(?:mark)?)\s+on\b", re.I)
_CARD_HEADING = re.compile(r"^\W*(?:(?:nvidia|amd|apple|intel)\s+)?(?:(?:geforce\s+)?rtx\s*\d{4}\w*(?:\s+ti|\s+super)?|"
                           r"gtx\s*\d{3,4}\w*|rx\s*\d{4}\s*\w*|radeon\s+\w+(?:\s+\w+)?|[ahlbv]\d{2,3}\w*|"
                           r"m[1-5](?:\s+(?:pro|max|ultra))?)(?:\s+\d{1,3}\s*gb)?\s*[:)-]?\s*$", re.I)


def _other_machine_said(lines: Sequence[str], outcomes: dict[str, Any]) -> tuple[int, str] | None:
    """(line, its text) of the first line between two measured rows that names another machine (:data:`_OTHER_BOX`,
    :data:`_CARD_HEADING`), else None."""
    rows = sorted(i for o in outcomes.values() for i, _ in o.measurements)
    if len(rows) < 2:
        return None
    for i in range(rows[0] + 1, rows[-1]):
        line = lines[i].strip()
        if line and "|" not in line and (_OTHER_BOX.search(line) or _CARD_HEADING.match(line)) and \
                any(r > i for r in rows):
            return i, line[:80]
    return None


def parse_output(text: str, *, max_bytes: int = 5_000_000) -> ImportResult:
    """Read what a benchmark or inference tool printed and return its measurements.

    Args:
        text: the pasted output (any of :data:`advisor.importers.FORMATS`); chatter, a shell prompt,
            several tools' output and elided parts are tolerated.
        max_bytes: the largest input accepted, in bytes of UTF-8.

    Returns:
        The detected format (``unknown`` when none), the measurements in text order, the non-empty
        lines not understood, facts about the machine (``hardware`` when the text names the GPU or
        CPU, ``gpu_info``/``cpu_info``, ``build``, ``command``, ``ollama_ps``...), and warnings (rows
        skipped and why). ``ollama ps`` rows are placement records (``model``, ``gpu_fraction``, no
        rate); when the paste also has rates they are folded into them and not listed.

    Raises:
        InputError: ``text`` is not a string or is larger than ``max_bytes``.
    """
    _check_size(text, max_bytes)
    run = _Run(text)
    run.read_json()
    run.read_text()
    fmt = _pick_format(run.outcomes)
    context = parse_context(run.view())
    if context.cut is None and (said := _other_machine_said(run.view(), run.outcomes)) is not None:
        context.cut = said[0]
        context.warnings.append(f"the output holds runs on more than one machine (“{said[1]}” between them): the run "
                                "after it is not used (paste it on its own to judge it)")
    if context.cut is not None:  # a second run on another machine: its rows are not the first machine's
        for out in run.outcomes.values():
            out.measurements = [(i, m) for i, m in out.measurements if i < context.cut]
    machine: dict[str, Any] = {}
    for out in run.outcomes.values():
        machine.update(out.machine)
    machine.update({k: v for k, v in context.machine.items() if k not in machine})
    measurements = _fill(_fold_placements(_ordered(run.outcomes), machine), context.fields)
    hardware = next((m.hardware for m in measurements if m.hardware), None)
    if hardware and "hardware" not in machine:
        machine["hardware"] = hardware
    consumed = set().union(context.consumed, *(o.consumed for o in run.outcomes.values()))
    unparsed, more = _unparsed(run, consumed, everything=fmt == "unknown")
    warnings = [w for o in run.outcomes.values() for w in o.warnings] + context.warnings + more
    others = sorted(
        {f for f, o in run.outcomes.items() if o.measurements and f != fmt and f not in PLACEMENT_FORMATS}
    )
    warnings += [f"the text also holds {f} output; its measurements are included" for f in others]
    if fmt == "unknown":
        warnings.append(
            "no known tool output found (llama-bench, llama.cpp timings, ollama, mlx-lm, LM Studio, vLLM, "
            "SGLang, text-generation-webui, koboldcpp, exllamav2)"
        )
    return ImportResult(
        format=fmt, measurements=measurements, unparsed=unparsed, machine=machine, warnings=warnings
    )
