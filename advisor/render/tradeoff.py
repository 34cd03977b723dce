"""The prefill/decode trade-off between two machines compared side by side: one writes answers faster (memory
bandwidth: decode), the other reads prompts faster (compute: prefill), so which is better depends on the work."""

from __future__ import annotations

from typing import Any

from advisor.render.markdown import fmt_rate, fmt_s

__all__ = ["trade_off"]

DECODE_EDGE = 1.2  # one option's per-user decode at least this many times the other's
PREFILL_EDGE = 1.5  # and the other's first word at least this many times sooner


def trade_off(rows: list[dict[str, Any]]) -> str:
    """One sentence when the option that streams fastest is not the one whose first word comes soonest and both
    edges are clear (:data:`DECODE_EDGE`, :data:`PREFILL_EDGE`); "" otherwise. ``rows``: compare rows (``name``,
    ``fits``, ``tps_each`` tok/s, ``first_word_s`` s)."""
    cand = [r for r in rows if r.get("fits") and r.get("tps_each") and r.get("first_word_s")]
    if len(cand) < 2:
        return ""
    dec = max(cand, key=lambda r: r["tps_each"])
    pre = min(cand, key=lambda r: r["first_word_s"])
    if dec is pre or dec["tps_each"] < DECODE_EDGE * pre["tps_each"] \
            or dec["first_word_s"] < PREFILL_EDGE * pre["first_word_s"]:
        return ""
    return (f"A trade-off, not a winner: the {dec['name']} writes answers faster ({fmt_rate(dec['tps_each'])} vs "
            f"{fmt_rate(pre['tps_each'])} tok/s — more memory bandwidth, which sets decode), the {pre['name']} reads "
            f"prompts faster (first word {fmt_s(pre['first_word_s'])} vs {fmt_s(dec['first_word_s'])} — more compute, "
            f"which sets prefill). Long prompts (documents, code, agents) favour the {pre['name']}; chat and long "
            f"answers the {dec['name']}.")
