"""The registry of importers: one :class:`Importer` record per format.

A record says everything about one format: its name, how to recognise it (a line signature for
text, a key test for JSON), how to parse it, which engine it implies, and its own examples (texts
with the measurements they must give; the test suite runs every one). A format module lists its
records in a module-level ``IMPORTERS`` tuple; :func:`importers` finds every module of the package
that has one, so adding a format touches one file.

Example:
    >>> engine_for_format("llama-bench-md")
    'llama.cpp'
    >>> engine_for_format("koboldcpp")
    'koboldcpp'
"""

from __future__ import annotations

import functools
import importlib
import pkgutil
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from advisor.importers._util import Outcome

__all__ = [
    "Example",
    "Importer",
    "JsonHandler",
    "TextParser",
    "engine_for_format",
    "get_importer",
    "importers",
    "signature",
]

TextParser = Callable[[Sequence[str]], Outcome]
JsonHandler = Callable[[dict[str, Any], Outcome, int], bool]
JsonTest = Callable[[dict[str, Any]], bool]


def signature(pattern: str, flags: int = 0) -> re.Pattern[str]:
    """A line signature: multiline, with ``\\s`` confined to one line (signatures search the whole paste)."""
    return re.compile(pattern.replace(r"\s", r"[ \t]"), flags | re.M)


@dataclass(frozen=True)
class Example:
    """A text of the format and what it must give.

    Attributes:
        text: the output as a tool prints it (or as people paste it).
        expected: one mapping per measurement, in order: the fields to check (rates to within
            1e-6 relative, other fields exactly; a key set to None must be None).
        what: one line saying which variant this is.
    """

    text: str
    expected: tuple[dict[str, Any], ...]
    what: str = ""


@dataclass(frozen=True)
class Importer:
    """One format.

    Attributes:
        name: the format name an :class:`~advisor.models.ImportResult` reports.
        engine: the inference engine the format implies (``llama.cpp``, ``ollama``, ``mlx``...); every
            measurement read in this format carries it (``Measurement.engine``).
        describe: one line for the documentation.
        signature: a multiline pattern that finds the format in (normalised) text; None for JSON-only.
        parse_text: reads the text lines (claimed lines blank) into an :class:`Outcome`. Several records
            may share one parser (llama.cpp's timing lines): it then runs once.
        json_test: true for a JSON object of this format.
        from_json: adds the measurements of one such object to an :class:`Outcome`.
        json_one_line: the JSON test applies only to one object alone on one line (JSONL).
        order: lower runs (and classifies JSON) first.
        placement: records of this format place a model on devices but carry no rate.
        examples: texts of the format and the measurements they give.
    """

    name: str
    engine: str
    describe: str = ""
    signature: re.Pattern[str] | None = None
    parse_text: TextParser | None = None
    json_test: JsonTest | None = None
    from_json: JsonHandler | None = None
    json_one_line: bool = False
    order: int = 100
    placement: bool = False
    examples: tuple[Example, ...] = field(default_factory=tuple)


_UNKNOWN = Importer(name="unknown", engine="other", describe="nothing recognised", order=10_000)


@functools.cache
def importers() -> tuple[Importer, ...]:
    """Every importer record of the package, in the order they run (``order``, then module, then position)."""
    import advisor.importers as package

    found: list[tuple[int, str, int, Importer]] = []
    for info in pkgutil.iter_modules(package.__path__):
        if info.name.startswith("_") or info.ispkg:
            continue
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        for n, record in enumerate(getattr(module, "IMPORTERS", ())):
            found.append((record.order, info.name, n, record))
    names = [r.name for *_, r in found]
    duplicates = {n for n in names if names.count(n) > 1}
    if duplicates:
        raise RuntimeError(f"importer formats registered twice: {sorted(duplicates)}")
    return tuple(r for *_, r in sorted(found, key=lambda t: t[:3])) + (_UNKNOWN,)


@functools.cache
def _by_name() -> dict[str, Importer]:
    return {r.name: r for r in importers()}


def get_importer(name: str) -> Importer:
    """The record of format ``name``; the ``unknown`` record for a name no importer has."""
    return _by_name().get(name, _UNKNOWN)


def engine_for_format(format_name: str) -> str:
    """The engine a format implies: ``llama-bench-md`` → ``llama.cpp``, ``ollama-api`` → ``ollama``,
    ``mlx-generate`` → ``mlx``, ``vllm-bench`` → ``vllm``, ``sglang-bench`` → ``sglang``; ``other`` for
    ``unknown`` or a name no importer has."""
    return get_importer(format_name).engine
