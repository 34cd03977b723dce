"""No jargon without a plain explanation: the glosses a first answer gives the field terms it uses.

:func:`gloss` explains, the first time each appears in the text a person sees, the field terms
(prefill, decode, TTFT, ITL, tok/s, bits per weight, KV cache, roofline, ridge point, MdAPE …) and
weight-format names (``Q4_K_M`` → ``Q4_K_M (a 4-bit format)``; with its bits per weight when known:
``Q4_K_M (about 4.9 bits per weight — a 4-bit format)``). A term already explained in brackets
("prompt processing (prefill)", "TTFT (time to first token)"), inside a ``code`` span or a table row, is
left as is.

One home for these words; the folded detail (``<details>``) keeps the plain field terms.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

__all__ = ["GLOSSES", "bit_class", "gloss", "quant_words"]

# term pattern → what it means, in household words.
GLOSSES: list[tuple[str, str]] = [
    (r"KV[ -]cache", "the model's memory of the conversation so far"),
    (r"bits per weight", "how many bits each of the model's numbers is stored in"),
    (r"prefill(?:s|ed)?", "reading your prompt"),
    (r"decode[sd]?", "writing the answer"),
    (r"TTFT", "time to the first word"),
    (r"ITL", "the gap between words as it streams"),
    (r"tok/s", "tokens a second; a token is about ¾ of a word"),
    (r"roofline", "the speed limit the chip's compute and memory set"),
    (r"ridge point", "where more users stop adding speed"),
    (r"MdAPE", "the typical error of the prediction"),
    (r"compute-bound", "limited by how fast the chip calculates"),
    (r"bandwidth-bound", "limited by how fast memory is read"),
    (r"memory bandwidth", "how fast memory is read"),
    (r"flash attention", "a faster way to compute attention"),
    (r"speculative decoding", "a small helper model guesses ahead"),
    (r"perplexity", "a measure of answer quality; lower is better"),
    (r"quantiz(?:e|ation|ed)", "storing the model's numbers in fewer bits"),
]
_QUANT = r"(?:I?Q\d_(?:K_)?[A-Z0-9]+|TQ\d_\d|MXFP4|NVFP4|BF16|F16|F32|FP8)"
_TERMS = [(re.compile(rf"(?<![\w/(`-])({p})(?![\w`-])", re.I if p[0].islower() else 0), g) for p, g in GLOSSES]
_QUANT_RE = re.compile(rf"(?<![\w(`-])({_QUANT})(?![\w`-])")
_CODE = re.compile(r"`[^`]*`")
_TABLE_ROW = re.compile(r"^\s*\|.*$", re.M)


def bit_class(name: str, bits_per_weight: float | None = None) -> str:
    """``Q4_K_M`` → ``4-bit``; ``IQ3_M`` → ``3-bit``; ``BF16`` → ``16-bit``; else from the bits per weight."""
    m = re.search(r"(?:^|I|T)Q(\d)_|(\d+)-bit|F(?:P)?(\d+)", name)
    if m:
        return f"{next(g for g in m.groups() if g)}-bit"
    if bits_per_weight:
        return f"{int(bits_per_weight)}-bit"
    return "compressed"


def quant_words(name: str, bits_per_weight: float | None = None) -> str:
    """``Q4_K_M (about 4.9 bits per weight — a 4-bit format)``; ``IQ3_M (a 3-bit format)`` without the bits."""
    cls = bit_class(name, bits_per_weight)
    if bits_per_weight:
        bpw = f"{bits_per_weight:.0f}" if abs(bits_per_weight - round(bits_per_weight)) < 0.05 else f"{bits_per_weight:.1f}"
        if cls[0].isdigit() and abs(int(cls.split("-")[0]) - bits_per_weight) > 1.5:
            # a build whose weights are not all in its named format (a gpt-oss GGUF keeps its experts in MXFP4)
            return f"{name} (about {bpw} bits per weight over the whole model)"
        return f"{name} (about {bpw} bits per weight — {_an(cls)} {cls} format)"
    return f"{name} ({_an(cls)} {cls} format)"


def _an(word: str) -> str:
    return "an" if re.match(r"(?:8|11|18)\b|8\d", word) else "a"


def _already(text: str, end: int) -> bool:
    """The term at ``text[:end]`` is followed by its own explanation in brackets."""
    if text[end:end + 5] == " — a ":
        return True
    m = re.match(r"(?:\*\*)? \((\S)", text[end:end + 6])
    return m is not None and not m.group(1).isdigit()  # "decode (120 → 237 tok/s)" is a number, not a gloss


def _in_brackets(text: str, i: int) -> bool:
    """Position ``i`` is inside a bracket already ("(decode 12 tok/s)"): a gloss there would nest."""
    return text.count("(", 0, i) > text.count(")", 0, i)


def _format_explained(text: str, end: int) -> bool:
    """A format name followed by brackets that say its bits ("Q4_K_M (4.9 bits per weight)")."""
    if text[end:end + 2] != " (":
        return False
    close = text.find(")", end)
    return "bit" in text[end:close if close > 0 else len(text)]


def gloss(text: str, seen: set[str], bits: Mapping[str, float] | None = None) -> str:
    """``text`` with the first occurrence of each field term (not yet in ``seen``) explained in brackets.

    Args:
        seen: terms already explained in this answer (updated), so each is explained once.
        bits: bits per weight of the formats named (``{"Q4_K_M": 4.8944}``), for the format glosses.
    """
    codes = [(m.start(), m.end()) for m in _CODE.finditer(text)]
    codes += [(m.start(), m.end()) for m in _TABLE_ROW.finditer(text)]  # a gloss would break a table's columns

    def in_code(i: int) -> bool:
        return any(a <= i < b for a, b in codes)

    inserts: list[tuple[int, str]] = []
    for rx, meaning in _TERMS:
        if rx.pattern in seen:
            continue
        m = next((m for m in rx.finditer(text) if not in_code(m.start()) and not _in_brackets(text, m.start())), None)
        if m is None:
            continue
        seen.add(rx.pattern)
        if re.match(r" \(\d", text[m.end():m.end() + 3]):  # "decode (4.87 → 9.65 tok/s)": one bracket
            inserts.append((m.end() + 2, f"{meaning}: "))
        elif not _already(text, m.end()):
            inserts.append((m.end(), f" ({meaning})"))
    for m in _QUANT_RE.finditer(text):
        name = m.group(1)
        if name in seen or in_code(m.start()) or _in_brackets(text, m.start()):
            continue
        seen.add(name)
        if not _format_explained(text, m.end()):
            inserts.append((m.end(), quant_words(name, (bits or {}).get(name))[len(name):]))
    for pos, words in sorted(inserts, reverse=True):
        text = text[:pos] + words + text[pos:]
    return text
