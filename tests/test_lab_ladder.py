"""The founding lab ladder, as stored: two phases, different machines."""

from __future__ import annotations

import pytest


def _rate(store, alias_hw, model):
    rows = store.query(
        "SELECT prefill_tps, decode_tps FROM results WHERE source_set = 'lab-ladder' AND hardware LIKE ? AND model = ?",
        [f"%{alias_hw}%", model],
    )
    assert len(rows) == 1
    return rows[0]["prefill_tps"], rows[0]["decode_tps"]


def test_prefill_decode_ratio_9b_on_office(store):
    pp, tg = _rate(store, "'office'", "qwen3.5-9b")
    assert pp / tg == pytest.approx(11.0, abs=0.05)


def test_prefill_decode_ratio_27b_on_pro2023(store):
    pp, tg = _rate(store, "'pro2023'", "qwen3.5-27b")
    assert pp / tg == pytest.approx(8.5, abs=0.05)


def test_m3_max_to_m3_ultra_moves_prefill_more_than_decode(store):
    pp_max, tg_max = _rate(store, "'pro2023'", "qwen3.5-27b")
    pp_ultra, tg_ultra = _rate(store, "'office'", "qwen3.5-27b")
    assert pp_ultra / pp_max - 1 == pytest.approx(0.615, abs=0.01)  # 195 -> 315
    assert 0.40 <= tg_ultra / tg_max - 1 <= 0.44  # 23 -> 33 (41-43 % with the unrounded 32.6)


def test_lab_machines_keep_their_source(store):
    rows = store.query("SELECT alias, hw_id, achieved_bandwidth_gbs, source FROM lab_machines ORDER BY alias")
    by = {r["alias"]: r for r in rows}
    assert by["office"]["hw_id"] == "apple-m3-ultra-80gpu" and by["office"]["achieved_bandwidth_gbs"] == 638
    assert all(r["source"] for r in rows)
