"""One chat turn's reply: a first answer, a follow-up that says what changed, or options side by side.

:func:`turn_reply` is what :func:`advisor.service.ask` calls once it has the facts (and a verdict
when they are complete). The previous turn's verdict is recomputed from the previous facts (the
facts are the whole state a client carries), so a follow-up can say "17 → 17 tok/s".
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence

from advisor.errors import AdvisorError
from advisor.models import Scenario, Verdict
from advisor.render.options import has_options, options_for, options_markdown
from advisor.render.reply import answer_markdown, changes, followup_markdown, said_changes
from knowledge.store import Store

__all__ = ["previous_verdict", "turn_reply"]

log = logging.getLogger("advisor")


def _complete(s: Scenario | None) -> bool:
    return bool(s is not None and s.hardware and (s.model or s.params_b))


def previous_verdict(store: Store, before: Scenario | None) -> Verdict | None:
    """The verdict the previous facts gave (None when they were incomplete or fail now)."""
    if not _complete(before):
        return None
    from advisor import service

    try:
        return service.diagnose_scenario(store, before)  # type: ignore[arg-type]
    except (AdvisorError, ValueError) as e:
        log.info("previous verdict not available: %s", e)
        return None


# A follow-up that asks only "why?" ("how come?", "explain", "why is that") or how to switch a model's reasoning off:
# answered by itself, not by the whole answer again.
_WHY = re.compile(r"^\W*(?:why(?:\s+(?:is\s+that|so|not))?|how\s+come|explain(?:\s+(?:that|why|please))?|"
                  r"what\s+do\s+you\s+mean|wdym|warum|pourquoi|por\s+qu[eé])\W*$", re.I)
_THINK_OFF = re.compile(r"\b(?:think(?:ing)?|reason(?:ing)?)\b.{0,30}\b(?:off|disable|stop|skip|shorter|less|without)\b|"
                        r"\b(?:turn|switch|shut)\s+(?:off\s+)?(?:the\s+)?(?:think|reason)|\b(?:disable|stop|skip|no)\s+"
                        r"(?:the\s+)?(?:think|reason)", re.I)


def _short_follow_up(v: Verdict, message: str | None) -> str | None:
    """The answer to a "why?" or a "can I turn the thinking off?" follow-up about the same set-up (None otherwise)."""
    from advisor.diagnose.thinking import reasoning_model, thinking_note
    from advisor.render.reply import why_text

    text = (message or "").strip()
    if not text or len(text) > 120 or v.prediction is None:
        return None
    if _WHY.match(text):
        return "**Why:** " + why_text(v)
    if _THINK_OFF.search(text):
        model = v.prediction.model.get("id")
        if not reasoning_model(model):
            return (f"{str(model).split('/')[-1]} does not reason before it answers: there is no thinking to turn off, "
                    "and its wait is the prompt and the answer.")
        note = thinking_note(model, "thinking", v.prediction)
        return f"**Yes.** {note}" if note else None
    return None


def turn_reply(store: Store, verdict: Verdict | None, *, facts: Scenario, before: Scenario | None = None,
               notes: Sequence[str] = (), message: str | None = None) -> str | None:
    """The reply for a turn, or None when there is nothing to answer yet (the caller asks a question).

    * several machines or models named → the options side by side (:mod:`advisor.render.options`);
    * a verdict and an earlier complete setup that differs → a follow-up (:func:`followup_markdown`);
    * a verdict → the first answer (:func:`answer_markdown`).
    """
    if has_options(facts):
        opt = options_for(store, facts)
        if opt is not None:
            ch = changes(before, facts) if has_options(before) else []
            head = f"**Changed:** {said_changes(ch)}.\n\n" if ch else ""
            return head + options_markdown(opt)
    if verdict is None:
        return None
    # Nothing changed ("is it normal?", "why?"): the answer from what is known, not "Same setup as before".
    changed = changes(before, facts)
    if not changed and _complete(before) and (short := _short_follow_up(verdict, message)) is not None:
        return short
    prev = previous_verdict(store, before) if changed else None
    if prev is not None:
        return followup_markdown(verdict, prev, facts=facts, before_facts=before, notes=notes)
    return answer_markdown(verdict, facts=facts, notes=notes)
