"""Short replies to the advisor's own question: "not sure" / "the base one" to the memory question, and a choice it
offered taken by "yes", "that one" or "the second one".

Part of the conversation (:mod:`advisor.intake._dialog`).
"""

from __future__ import annotations

import re

from advisor.errors import AmbiguousError, NotFoundError
from advisor.intake._cpu import DUNNO
from advisor.intake._schema import Extraction
from advisor.intake._text import fmt
from advisor.models import Scenario
from knowledge import catalog
from knowledge.store import Store

__all__ = ["SMALLEST_ANSWER", "picked_choice", "plain_answer", "smallest_memory"]

# An answer to "how much memory?" that names no size: the base configuration, or "I don't know".
SMALLEST_ANSWER = re.compile(rf"\b(?:base|entry[\s-]level|cheapest|smallest|lowest|minimum|{DUNNO})\b", re.I)


# Words that make "base"/"not sure" something else: another size ("more than the base", "not the base one"), an LLM's
# base model ("the base model, not the instruct one"), a format ("the default 4-bit quant").
_NOT_SMALLEST = re.compile(r"\bnot\s+(?:the\s+)?(?:base|smallest|cheapest)|\bmore\s+than\b|\bbigger\b|\blarger\b|"
                           r"\bupgrad|\bmax(?:ed)?\b|\binstruct\b|\bchat\b|\bquant|\bbits?\b|\bmodel\b(?!\s*$)", re.I)


def plain_answer(ext: Extraction, text: str) -> bool:
    """A short answer that names nothing else: no number, machine, model, format or comparison."""
    return (len(text.split()) <= 8 and not re.search(r"\d", text) and not _NOT_SMALLEST.search(text)
            and ext.hardware is None and not ext.model and not ext.quant and not ext.compare_hardware
            and not ext.compare_models)


def smallest_memory(old: Scenario, ext: Extraction, store: Store, text: str) -> None:
    """The asked-for memory size answered without a number: the machine's smallest size, said so (the slowest-fitting
    assumption: a larger one only adds room)."""
    try:
        hw = catalog.resolve_hardware(store, old.hardware).value if old.hardware else None
    except (AmbiguousError, NotFoundError):
        hw = None
    if hw is None or not hw.memory_gb_options:
        return
    ext.memory_gb = min(hw.memory_gb_options)
    base = re.search(r"\b(?:base|basic|standard|default|entry|cheapest|smallest|lowest|least|minimum|stock)", text, re.I)
    ext.note(f"{'Took the base' if base else 'Not known: assumed the smallest'} {hw.name} memory size, "
             f"{fmt(ext.memory_gb)} GB" + ("." if base else "; tell me the size if it has more."))


# A reply that takes what was offered: "yes", "yes that one", "that one", "sure", "ok, the first one", "the 2nd".
_YES = r"(?:yes|yeah|yep|yup|ya|sure|ok(?:ay)?|correct|right|exactly|indeed|y|please|that'?s\s+(?:it|right|correct))"
_ORDINALS = {"first": 1, "1st": 1, "second": 2, "2nd": 2, "third": 3, "3rd": 3, "fourth": 4, "4th": 4, "fifth": 5,
             "5th": 5, "sixth": 6, "6th": 6, "last": -1}
_TAKE = re.compile(rf"^\W*(?:{_YES}\W*)*(?:(?:that|this|the|it'?s\s+the|i\s+mean\s+the)?\s*"
                   rf"(?:(?P<ord>{'|'.join(_ORDINALS)})\s*)?(?:one|choice|option|model|machine|it)?)?\W*(?:please|thanks?|thank\s+you)?\W*$",
                   re.I)


_NOT_DISTINCT = {"the", "one", "it", "its", "is", "actually", "that", "this", "yes", "no", "sorry", "meant", "mean", "my",
                 "a", "an", "of", "gb", "nvidia", "amd", "apple", "card", "gpu", "version", "variant", "model"}


def picked_choice(old: Scenario, text: str, asked: str | None, store: Store) -> str | None:
    """The choice a reply takes from the question just asked ("yes" / "that one" when one was offered, "the second one"
    of several), or None. The choices are those of the earlier message that left ``asked`` open (re-read from the
    words kept with the facts), so the reply means the same from the chat, the CLI (``--facts``) and the API."""
    if asked not in ("model", "hardware") or getattr(old, asked) or not old.question or len(text) > 40:
        return None
    m = _TAKE.match(text)
    if not re.search(r"\w", text):
        return None
    from advisor.intake._extract import extract

    for line in reversed(old.question.splitlines()[-6:]):
        cands = [c for c in extract(line, store).ambiguous.get(asked, []) if c][:6]
        if not cands:
            continue
        # "SXM", "the PCIe one", "actually it's the 94GB": a word only one of the choices has
        words = {w for w in re.findall(r"[a-z0-9]{2,}", text.lower()) if w not in _NOT_DISTINCT}

        def has(choice: str, word: str) -> bool:  # "sxm" names "H100 SXM5 80GB"
            return any(t.startswith(word) for t in re.findall(r"[a-z0-9]+", choice.split(" (")[0].lower()))

        only = [c for c in cands if any(has(c, w) for w in words)]
        if len(only) == 1 and not any(has(o, w) for o in cands if o != only[0] for w in words if has(only[0], w)):
            return only[0].split(" (")[0]
        if 1 < len(only) < len(cands):
            # "the 80GB one" of A100 40GB / 80GB PCIe / 80GB SXM4: the words the narrowed choices share, asked again
            heads = [c.split(" (")[0].split() for c in only]
            common = [t for i, t in enumerate(heads[0]) if all(len(h) > i and h[i] == t for h in heads)]
            if common:
                return " ".join(common)
        if m is None:
            return None
        k = _ORDINALS.get((m.group("ord") or "").lower())
        if k is None:
            return cands[0] if len(cands) == 1 else None
        return cands[k] if k == -1 else (cands[k - 1] if k <= len(cands) else None)
    return None
