"""Attack: hostile or careless JSON sent to the app's HTTP API functions."""

from __future__ import annotations

import json

import pytest

from knowledge.store import Store
from ui.app import api_compare


@pytest.mark.parametrize("key", ["hardware", "users", "zzz"])
def test_compare_unknown_key_is_refused_not_ignored(tmp_path, key: str) -> None:
    store = Store(str(tmp_path / "s.duckdb"))
    out = json.loads(api_compare(store, json.dumps({"model": "llama 3.3 70b", "concurrency": 20, key: ["x"]})))
    assert "error" in out and key in out["error"]


def test_compare_sound_request_still_answers(tmp_path) -> None:
    store = Store(str(tmp_path / "s.duckdb"))
    out = json.loads(api_compare(store, '{"model": "llama 3.3 70b", "concurrency": 4, "limit": 2}'))
    assert "error" not in out and out["concurrency"] == 4


def test_import_zero_rate_is_not_stored_as_a_measurement(tmp_path) -> None:
    from ui.api import api_import

    store = Store(str(tmp_path / "s.duckdb"))
    text = ("| model | size | params | backend | ngl | test | t/s |\n|---|---|---|---|---|---|---|\n"
            "| llama 8B Q4_K_M | 4.58 GiB | 8.03 B | CUDA | 99 | pp512 | 0.000 ± 0 |\n"
            "| llama 8B Q4_K_M | 4.58 GiB | 8.03 B | CUDA | 99 | tg128 | 130.5 ± 0.1 |")
    out = json.loads(api_import(store, text, "RTX 4090"))
    assert [m["decode_tps"] for m in out["measurements"]] == [130.5]
    assert all(m["prefill_tps"] != 0 for m in out["measurements"])
