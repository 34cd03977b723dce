"""A message that corrects itself ("rtx 3090 with exllama… jk, I mean 2x 3090 in llama.cpp", "Q8 — scratch that,
Q4_K_M"): read as the first part, then the rest as a follow-up that corrects it (:func:`advisor.intake.update`)."""

from __future__ import annotations

import re

__all__ = ["self_corrected"]

# Markers that take back what came before them. "I mean" alone is filler as often as not ("I mean, it works"), so it
# counts only after a marker of its own ("jk, I mean", "sorry, I mean"); "I meant" is always a correction.
_MARK = re.compile(r"(?:^|(?<=[\s.,;:!?…(\-]))(?:jk|j/k|just\s+kidding|scratch\s+that|no\s+wait|wait,?\s+no|"
                   r"correction\s*:|(?:sorry|oops|whoops|my\s+bad|err?|erm)[,.!]*\s+(?:i\s+mean|i\s+meant|make\s+that)|"
                   r"i\s+meant|(?:actually,?\s+)?make\s+that|(?<=[.!?;,]\s)actually(?=,?\s+(?:an?|on|the|it'?s|with|in)\b))"
                   r"\b[,.:!]*(?:\s+i\s+mean\b[,.:]*)?", re.I)
MIN_PART = 8  # characters before a marker: one at the very start corrects nothing in this message
MIN_AFTER = 5  # characters after it ("Actually a 4090.")


def self_corrected(text: str) -> tuple[str, str] | None:
    """(what came before the first correction marker, what follows it), or None when the message has none.

    >>> self_corrected("rtx 3090, llama 70b with exllamav2... jk, I mean can 2x 3090 run 70b in llama.cpp?")
    ('rtx 3090, llama 70b with exllamav2... ', ' can 2x 3090 run 70b in llama.cpp?')
    >>> self_corrected("I mean, it works but it is slow on my 3060") is None
    True
    >>> self_corrected("sorry, I meant the 14B") is None
    True
    """
    m = _MARK.search(text or "")
    if m is None or len(text[:m.start()].strip(" ,.;:-…")) < MIN_PART or len(text[m.end():].strip()) < MIN_AFTER:
        return None
    return text[:m.start()], text[m.end():]
