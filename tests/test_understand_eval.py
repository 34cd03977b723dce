"""A blind evaluation of understanding (issue 12): fresh first messages and two-turn exchanges, each with the
facts it states, run through ``intake.update`` (what ``advisor ask --json`` uses) and ``understand``.

``python tests/test_understand_eval.py`` prints the figures: facts right and messages with every fact right.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import pytest

from advisor import intake
from advisor.models import Scenario
from advisor.understand import understand
from knowledge.store import Store

sys.path.insert(0, str(Path(__file__).parent))
from understand_eval_table import FIRST, TWO  # noqa: E402


@pytest.fixture(scope="module")
def store() -> Store:
    return Store(":memory:")


def got_facts(store: Store, facts: Scenario) -> dict[str, Any]:
    """The facts as ``ask --json`` gives them, plus the resolved ids (``hw``, ``model_id``, ``quant_name``)."""
    sit = understand(store, facts)
    d = facts.model_dump()
    d["hw"] = re.sub(r"x\d+$", "", sit.hardware.id) if sit.hardware is not None else None
    d["model_id"] = sit.model.id if sit.model is not None else None
    d["quant_name"] = sit.quant.name if sit.quant is not None else None
    return d


def wrong(want: dict[str, Any], got: dict[str, Any]) -> dict[str, Any]:
    """The wanted facts that came out otherwise: {field: what came out}; numbers within 1 %."""
    bad: dict[str, Any] = {}
    for k, v in want.items():
        g = got.get(k, "<no such field>")
        if isinstance(v, float) and isinstance(g, (int, float)):
            if abs(g - v) > 0.01 * max(1.0, abs(v)):
                bad[k] = g
        elif g != v:
            bad[k] = g
    return bad


def run_first(store: Store, text: str) -> dict[str, Any]:
    return got_facts(store, intake.update(None, text, store).facts)


def run_two(store: Store, first: str, second: str) -> dict[str, Any]:
    r1 = intake.update(None, first, store)
    return got_facts(store, intake.update(r1.facts, second, store).facts)


def test_the_set_is_big_enough() -> None:
    assert len(FIRST) >= 120 and len(TWO) >= 20


@pytest.mark.parametrize(("text", "want"), FIRST, ids=[p[0][:50] for p in FIRST])
def test_first_message(store: Store, text: str, want: dict[str, Any]) -> None:
    assert not wrong(want, run_first(store, text))


@pytest.mark.parametrize(("first", "second", "want"), TWO, ids=[t[1][:40] for t in TWO])
def test_two_turns(store: Store, first: str, second: str, want: dict[str, Any]) -> None:
    assert not wrong(want, run_two(store, first, second))


if __name__ == "__main__":  # pragma: no cover - the figures, by hand
    st = Store(":memory:")
    n_f = ok_f = n_m = ok_m = 0
    rows = [(t, w, run_first(st, t)) for t, w in FIRST] + [(f"{a} || {b}", w, run_two(st, a, b)) for a, b, w in TWO]
    for text, want, got in rows:
        bad = wrong(want, got)
        n_f += len(want)
        ok_f += len(want) - len(bad)
        n_m += 1
        ok_m += not bad
        if bad:
            print(f"MISS {text!r}: " + ", ".join(f"{k}: want {want[k]!r} got {v!r}" for k, v in bad.items()))
    print(f"facts right {ok_f}/{n_f} = {100 * ok_f / max(1, n_f):.1f} %; messages fully right {ok_m}/{n_m}")
