"""The Gradio front end of the advisor: ``build_app()`` builds it, ``launch()`` serves it.

Imports are lazy so that ``import ui`` does not load Gradio until it is needed.
"""

from __future__ import annotations

from typing import Any

__all__ = ["build_app", "launch"]


def __getattr__(name: str) -> Any:
    if name == "build_app":
        from ui.app import build_app

        return build_app
    if name == "launch":
        from ui.server import launch

        return launch
    raise AttributeError(f"module 'ui' has no attribute {name!r}")
