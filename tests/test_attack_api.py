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
