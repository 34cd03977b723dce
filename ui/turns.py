"""What one browser turn shows: the chat answer beside the verdict card, pasted output in the chat.

The chat answer and the verdict card never repeat each other: the card holds the numbers and every
fix (:func:`ui.handlers.verdict_card`), so the chat keeps the short answer and folds only the why
and the assumptions (:func:`for_chat`). Charts are built by :func:`verdict_figures`, which the app
runs after the reply (``.then()``) so a reply never waits on Plotly. Exports are written only when
asked (:func:`export_now`). No Gradio here.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import Any

import plotly.graph_objects as go
from pydantic import ValidationError

from advisor.models import Scenario, Verdict
from advisor.render.markdown import name_tools
from advisor.render.options import has_options
from advisor.render.reply import answer_markdown
from knowledge.store import Store
from ui import charts, handlers
from ui.handlers import ChatView

__all__ = ["CARD_BLOCKS", "chat_turn", "compare_offer", "export_now", "for_chat", "paste_turn", "verdict_figures"]

log = logging.getLogger("advisor.ui")

#: Folded blocks of a reply that the verdict card shows in full (dropped from the chat in the app).
CARD_BLOCKS = ("The numbers", "Other fixes")
_BLOCK = re.compile(r"\n*<details><summary>(?P<title>[^<]+)</summary>.*?</details>", re.S)


def for_chat(md: str) -> str:
    """A reply as the browser chat shows it: without the folded blocks the verdict card holds."""
    return _BLOCK.sub(lambda m: "" if m.group("title").strip() in CARD_BLOCKS else m.group(0), md).strip()


def _with_last_reply(view: ChatView) -> ChatView:
    if view.history and view.history[-1]["role"] == "assistant" and view.verdict is not None:
        view.history[-1] = {"role": "assistant", "content": for_chat(view.history[-1]["content"])}
    return view


def chat_turn(store: Store, message: str | None, history: Any, facts: dict[str, Any] | None) -> ChatView:
    """:func:`ui.handlers.chat_turn`, with the reply trimmed of what the verdict card shows."""
    return _with_last_reply(handlers.chat_turn(store, message, history, facts))


def compare_offer(facts: dict[str, Any] | None) -> bool:
    """True when the chat named several machines (the Compare tab weighs machines): offer "Open in Compare"."""
    try:
        sc = Scenario.model_validate(facts or {})
    except ValidationError:
        return False
    return has_options(sc.model_copy(update={"compare_models": None}))


def _paste_label(text: str, file_path: str | None) -> str:
    if file_path:
        return f"(uploaded {Path(file_path).name})"
    lines = [ln for ln in (text or "").splitlines() if ln.strip()]
    first = " ".join(lines[0].split())[:60] if lines else ""
    return f"(pasted {len(lines)} line{'s' if len(lines) != 1 else ''} of tool output: `{first.replace('`', '')}`…)"


def paste_turn(store: Store, text: str | None, file_path: str | None, hardware: str | None, history: Any,
               facts: dict[str, Any] | None) -> tuple[ChatView, str]:
    """Pasted or uploaded tool output answered in the chat.

    Returns the chat view (history with the paste and its answer, merged facts, verdict) and a one-line
    note for under the paste box that points at the chat.
    """
    hist = handlers.normalize_history(history)
    message, verdict, new_facts = handlers.import_paste_with_facts(store, text, file_path, hardware, facts)
    message = name_tools(message)
    merged = {**(facts or {}), **(new_facts or {})}
    reply = message
    if verdict is not None:
        try:
            sc = Scenario.model_validate(merged) if merged else None
        except ValidationError:
            sc = None
        reply = message + "\n\n" + handlers.safe_markdown(for_chat(answer_markdown(verdict, facts=sc)))
    if not (text or "").strip() and not file_path:
        return ChatView(history=hist, facts=dict(facts or {})), message
    hist += [{"role": "user", "content": _paste_label(text or "", file_path)},
             {"role": "assistant", "content": reply}]
    note = "Answered in the chat." if verdict is not None or new_facts else message.split("\n")[0]
    return ChatView(history=hist, facts=merged, verdict=verdict,
                    stale=handlers.verdict_stale(facts, merged, verdict)), note


def verdict_figures(store: Store, verdict: dict[str, Any] | Verdict | None) -> tuple[go.Figure, go.Figure, go.Figure]:
    """Roofline, time line and peers figures for a verdict (its JSON form as kept in the page state)."""
    try:
        v = Verdict.model_validate(verdict) if isinstance(verdict, dict) else verdict
    except ValidationError:
        v = None
    if v is None:
        e = charts.empty_figure()
        return e, e, e
    _, roof, tl, pe = handlers.verdict_view(store, v)
    return roof, tl, pe


def export_now(verdict: dict[str, Any] | None, facts: dict[str, Any] | None, out_dir: str) -> tuple[str, str] | None:
    """Write the verdict (.md, .json) under ``out_dir`` now; None when there is no verdict or it fails."""
    if not verdict:
        return None
    try:
        return handlers.export_files(Verdict.model_validate(verdict), facts, out_dir)
    except (OSError, ValidationError, ValueError) as e:
        log.warning("export failed: %s", e)
        return None
