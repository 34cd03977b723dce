"""First messages for the gaps of the stop-11 closing note (``understand_gaps_table.py``), run through
``intake.update`` (what ``advisor ask --json`` uses) and ``understand``, checking every stated fact.

``python tests/test_understand_gaps.py [--held-out]`` prints the figures: facts right and messages with every fact
right (``--held-out``: only the set written after the fixes).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import pytest

from advisor import intake
from advisor.understand import understand
from knowledge.store import Store

sys.path.insert(0, str(Path(__file__).parent))
from test_understand_eval import wrong  # noqa: E402
from understand_gaps_table import BROAD, GAPS, HELD_OUT  # noqa: E402

ALL = GAPS + HELD_OUT + BROAD


@pytest.fixture(scope="module")
def store() -> Store:
    return Store(":memory:")


def run(store: Store, text: str) -> dict[str, Any]:
    """The facts of one first message, plus the machine as resolved: ``n_devices``, ``vram_total_gb``, ``mixed``."""
    facts = intake.update(None, text, store).facts
    sit = understand(store, facts)
    got = facts.model_dump()
    got["hw"] = re.sub(r"x\d+$", "", sit.hardware.id) if sit.hardware is not None else None  # as got_facts does
    got["model_id"] = sit.model.id if sit.model is not None else None
    got["quant_name"] = sit.quant.name if sit.quant is not None else None
    hw = sit.hardware
    got["n_devices"] = hw.n_devices if hw is not None else None
    got["vram_total_gb"] = round((hw.memory_gb or 0) * hw.n_devices, 1) if hw is not None else None
    m = sit.machine
    got["mixed"] = None
    if m is not None and m.mixed:
        got["mixed"] = [i for h in m.mixed for i in [h.id.rsplit("x", 1)[0] if h.n_devices > 1 else h.id]
                        * h.n_devices]
    return got


def test_the_set_is_big_enough() -> None:
    assert len(ALL) >= 130


@pytest.mark.parametrize(("text", "want"), ALL, ids=[p[0][:50] for p in ALL])
def test_gap_message(store: Store, text: str, want: dict[str, Any]) -> None:
    assert not wrong(want, run(store, text))


if __name__ == "__main__":  # pragma: no cover - the figures, by hand
    st = Store(":memory:")
    n_f = ok_f = ok_m = 0
    rows = HELD_OUT if "--held-out" in sys.argv else BROAD if "--broad" in sys.argv else ALL
    for text, want in rows:
        bad = wrong(want, run(st, text))
        n_f += len(want)
        ok_f += len(want) - len(bad)
        ok_m += not bad
        if bad:
            print(f"MISS {text!r}: " + ", ".join(f"{k}: want {want[k]!r} got {v!r}" for k, v in bad.items()))
    print(f"facts right {ok_f}/{n_f} = {100 * ok_f / max(1, n_f):.1f} %; messages fully right {ok_m}/{len(rows)}")
