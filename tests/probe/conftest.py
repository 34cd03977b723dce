"""Fixtures of the probe tests: a tiny mlx-lm model directory built once per session."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A real mlx-lm model directory (random llama, hidden 64, 2 layers, vocab 512); needs mlx."""
    pytest.importorskip("mlx.core")
    pytest.importorskip("mlx_lm")
    from .tiny_model import build_tiny_model

    return build_tiny_model(tmp_path_factory.mktemp("tiny-llama"))
