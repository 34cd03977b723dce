"""Moved to :mod:`advisor.understand.resolve` (understanding is one package); kept importable for callers."""

from advisor.understand.resolve import (
    DEFAULTS,
    Resolved,
    custom_hardware,
    parse_ngl,
    require,
    resolve_scenario,
)

__all__ = ["DEFAULTS", "Resolved", "custom_hardware", "parse_ngl", "require", "resolve_scenario"]
