from __future__ import annotations

import os

import pytest

os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
os.environ.setdefault("HF_HUB_OFFLINE", "1")


@pytest.fixture(autouse=True)
def _isolated_store(tmp_path, monkeypatch):
    """Every test gets its own store path; nothing touches the user's data dir."""
    monkeypatch.setenv("ADVISOR_STORE", str(tmp_path / "advisor.duckdb"))


@pytest.fixture(scope="session")
def store():
    from knowledge.store import Store

    return Store(":memory:")
