"""Every fixture in ``fixtures/``: real tool outputs (``imp-*``, with their published expected values)
and hand-made ones (``own-*``, values worked out by hand from the text).

A fixture holds ``text``, ``format`` and ``expected`` (the measurements in order); ``checks`` may add
the exact ``unparsed`` lines, substrings the warnings or notes must contain, and ``machine`` entries.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from advisor.importers import detect_format, parse_output

FIXTURES = sorted((Path(__file__).parent / "fixtures").glob("*.json"))
# Expected nulls for these mean "not checked" (the source does not say), as in the shared data set.
_NULL_MEANS_UNCHECKED = {"depth", "batch"}


def _load(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


def _assert_field(key: str, got: Any, want: Any, where: str) -> None:
    if want is None:
        if key not in _NULL_MEANS_UNCHECKED:
            assert got is None, f"{where}: {key} = {got!r}, expected none"
    elif isinstance(want, float) or isinstance(got, float):
        assert got == pytest.approx(want, rel=1e-6), f"{where}: {key}"
    else:
        assert got == want, f"{where}: {key}"


def test_fixtures_are_present() -> None:
    names = {p.stem for p in FIXTURES}
    assert {
        f"imp-{n:02d}" for n in (1, 2, 10, 14, 18, 21, 24, 29, 31, 34, 36, 38, 108, 110, 121, 122, 124)
    } <= names
    assert sum(n.startswith("own-") for n in names) >= 20


@pytest.mark.parametrize("path", FIXTURES, ids=[p.stem for p in FIXTURES])
def test_fixture_measurements(path: Path) -> None:
    case = _load(path)
    result = parse_output(case["text"])
    assert result.format == case["format"]
    assert len(result.measurements) == len(case["expected"]), result.warnings
    for n, (got, want) in enumerate(zip(result.measurements, case["expected"], strict=True)):
        for key, value in want.items():
            _assert_field(key, getattr(got, key), value, f"{case['id']} measurement {n}")


@pytest.mark.parametrize("path", FIXTURES, ids=[p.stem for p in FIXTURES])
def test_fixture_checks(path: Path) -> None:
    case = _load(path)
    checks = case.get("checks", {})
    result = parse_output(case["text"])
    if "unparsed" in checks:
        assert result.unparsed == checks["unparsed"]
    for part in checks.get("warnings_contain", []):
        assert any(part in w for w in result.warnings), (part, result.warnings)
    if checks and "warnings_contain" not in checks:
        assert result.warnings == []
    notes = [note for m in result.measurements for note in m.notes]
    for part in checks.get("notes_contain", []):
        assert any(part in note for note in notes), (part, notes)
    for key, value in checks.get("machine", {}).items():
        assert result.machine.get(key) == value


@pytest.mark.parametrize("path", FIXTURES, ids=[p.stem for p in FIXTURES])
def test_detect_format_agrees_with_parse(path: Path) -> None:
    case = _load(path)
    assert detect_format(case["text"]) == case["format"]


@pytest.mark.parametrize("path", FIXTURES, ids=[p.stem for p in FIXTURES])
def test_fixture_survives_chatter_around_it(path: Path) -> None:
    """The same output pasted between a question and a thank-you still gives the same numbers."""
    case = _load(path)
    text = "Here is what I get on my machine, any idea?\n\n" + case["text"] + "\n\nThanks in advance!"
    result = parse_output(text)
    assert result.format == case["format"]
    assert len(result.measurements) == len(case["expected"])
    assert "Here is what I get on my machine, any idea?" in result.unparsed
    assert "Thanks in advance!" in result.unparsed
