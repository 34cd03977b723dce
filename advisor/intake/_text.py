"""Text helpers for intake: cleaning hostile input, numbers written by people, claimed spans.

Extractors run one after another over the same message. Each one *claims* the characters it used
(they are blanked in :attr:`Msg.s`), so "8k-token prompts" is not read again as a GPU number or a
memory size by a later extractor. The original text stays in :attr:`Msg.orig` for context windows.
"""

from __future__ import annotations

import itertools
import math
import re
import unicodedata
from collections.abc import Iterable

LONG_NOTE = "That message is long: I read only its first"  # the note that says a message was cut
MAX_CHARS = 20_000  # only this much of a message is read; chat messages are far shorter
MAX_MATCHES = 64  # mentions read per pattern; more is junk, not a description of a machine

# A number as people write it: 8000, 8,000, 1.5, 8k, 32K, 1M, 1e6. ``k``/``m`` only glued to or one space after digits.
NUM = r"(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][+-]?\d{1,3}(?![\d.]))?(?:\s?[kKmM](?![A-Za-z]))?"

_UNITS = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15,
    "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19,
}
_TENS = {"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80,
         "ninety": 90}
_UNIT_RE = "|".join(sorted(_UNITS, key=len, reverse=True))
_TENS_RE = "|".join(_TENS)
# "twenty-five", "a dozen", "a hundred", "a couple of" ...
WORDNUM = (
    rf"(?:(?:{_TENS_RE})(?:[\s-](?:{_UNIT_RE}))?|{_UNIT_RE}|half\s+a\s+dozen|(?:a\s+)?dozen|(?:a|one)\s+hundred|"
    r"a\s+couple(?:\s+of)?|a\s+pair\s+of)"
)

_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[@-_]")
_CTRL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff\u200b-\u200f\u2028\u2029\ufeff]")
_TAGS = re.compile(r"<[^<>]{0,200}>")
_HF_URL = re.compile(r"https?://(?:www\.)?(?:huggingface\.co|hf\.co)/", re.I)
_DASHES = str.maketrans({"\u2010": "-", "\u2011": "-", "\u2012": "-", "\u2013": "-", "\u2014": "-",
                         "\u2212": "-", "\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"'})
# Clause boundaries limit the words that may describe a number ("8k-token prompts, 500-token answers").
SENTENCE = re.compile(r"[.;!?\n](?:\s|$)|[;!?\n]|\s-\s")
_BOUNDARY = re.compile(r"[.;!?\n]\s|[;!?\n]|,(?!\d)\s*|\s(?:and|but|while|whereas|plus|then)\s", re.I)


_CJK = r"\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uff0c\u3001\u3002"
_CJK_EDGE = re.compile(rf"(?<=[{_CJK}])(?=[A-Za-z0-9])|(?<=[A-Za-z0-9])(?=[{_CJK}])")
# Rate and memory units in other languages, as the English the readers know: "20 Token pro Sekunde" (de),
# "20 tokens por segundo" (es, pt), "20 tokens par seconde" (fr), "20 tok/sek", "64 Go" (fr: gigaoctets).
_FOREIGN_UNITS = (
    (re.compile(r"\btok(?:en|ens)?\s*(?:pro|por|par|al|a)\s+(?:sekunde|segundo|seconde|secondo)\b", re.I), "tok/s"),
    (re.compile(r"\btok(?:en|ens)?\s*/\s*sek\b", re.I), "tok/s"),
    # Russian: "20 токенов в секунду", "20 ток/с"
    (re.compile(r"\bток(?:ен(?:ов|а)?)?\s*(?:в|/)\s*(?:секунду|сек|с)\b", re.I), "tok/s"),
    (re.compile(r"(?<=\d)\s?Go\b"), " GB"),
    # Chinese, Japanese, Korean: "每秒 35 tokens", "35 token/秒", "毎秒35トークン", "초당 35 토큰"
    (re.compile(r"(?:每秒钟?|毎秒|초당)\s*(\d+(?:\.\d+)?)\s*(?:个|個|개)?\s*(?:tokens?|词元|トークン|토큰)?", re.I), r" \1 tok/s "),
    (re.compile(r"(?<![\d.])(\d+(?:\.\d+)?)\s*(?:个|個|개)?\s*(?:tokens?|词元|トークン|토큰)\s*(?:/|每|毎)\s*(?:秒|초)", re.I),
     r"\1 tok/s "),
)


# Misspellings of the words the reading keys on, as people type them ("on a 8k promt", "wich gpu shoud i by").
_TYPO_FIX = {"promt": "prompt", "promts": "prompts", "propmt": "prompt", "propmts": "prompts", "prmopt": "prompt",
             "reponse": "response", "responce": "response", "reponses": "responses", "contex": "context",
             "tokes": "tokens", "tokns": "tokens", "wich": "which", "shoud": "should", "quantisized": "quantized",
             "memmory": "memory", "modle": "model", "modles": "models", "shud": "should", "wat": "what"}
_TYPOS = re.compile(r"\b(?:" + "|".join(_TYPO_FIX) + r")\b", re.I)


_BLANKS = re.compile(r"[ \t\u00a0]{3,}")
_BLANK_LINES = re.compile(r"(?:[ \t\u00a0]*\n){3,}")


def sanitize(text: object) -> tuple[str, list[str]]:
    """Make any input safe to scan: cap its length, normalise unicode, drop controls and markup.

    Args:
        text (object): the message; anything that is not a ``str`` reads as empty.

    Returns:
        tuple[str, list[str]]: the cleaned text and notes about what was done to it.
    """
    if not isinstance(text, str):
        return "", []
    notes: list[str] = []
    if len(text) > MAX_CHARS:
        notes.append(f"{LONG_NOTE} {MAX_CHARS:,} characters: say the machine and the model near the start.")
        text = text[:MAX_CHARS]
    text = _ANSI.sub(" ", text)
    text = _CTRL.sub(" ", text)
    try:
        text = unicodedata.normalize("NFKC", text)[: MAX_CHARS * 2]
    except ValueError:  # pragma: no cover - normalize rejects nothing after the filtering above
        pass
    text = _TAGS.sub(" ", text.translate(_DASHES))
    # runs of blanks carry no meaning to read, and a run of thousands made the patterns' \s* and \W* backtrack
    text = _BLANK_LINES.sub("\n\n", _BLANKS.sub("  ", text))
    text = _CJK_EDGE.sub(" ", text)  # "一张4090，运行llama": CJK characters are word characters, so no \b at the edge
    for pat, unit in _FOREIGN_UNITS:
        text = pat.sub(unit, text)
    text = _TYPOS.sub(lambda m: _TYPO_FIX[m.group(0).lower()], text)
    if _FRACTION_RATE.search(text):  # "1/3 tok/s": a third of a token a second, not 3
        said_f = [m.group(0).strip() for m in _FRACTION_RATE.finditer(text)][:2]
        text = _FRACTION_RATE.sub(lambda m: f"{1 / int(m.group(1)):.3g}", text)
        notes.append("Read " + ", ".join(f"'{x}' as {1 / int(x.split('/')[1]):.3g}" for x in said_f) + " (a fraction).")
    text, grouped = _thousands(text)
    if grouped:
        notes.append("Read " + ", ".join(f"'{a}' as {b}" for a, b in grouped[:3]) + " (thousands separators).")
    if _DECIMAL_COMMA.search(text):
        said = [m.group(0) for m in _DECIMAL_COMMA.finditer(text)][:3]
        text = _DECIMAL_COMMA.sub(r"\1.\2", text)
        notes.append("Read " + ", ".join(f"'{x}' as {x.replace(',', '.')}" for x in said) + " (a decimal comma).")
    return _HF_URL.sub(" ", text), notes


# A rate written as a fraction of one ("1/3 tok/s", "1/2 t/s"): slow CPU runs are said that way.
_FRACTION_RATE = re.compile(r"(?<![\w./])1\s*/\s*([2-9]|1\d)(?=\s*(?:tok(?:en)?s?\s*/\s*s|t/s|tk/s|tps\b|"
                            r"tokens?\s+(?:per|a)\s+sec))", re.I)
# Thousands written with dots, apostrophes or spaces ("1.500 users", "32.000 tokens", "12'000 tokens", "12 000 tokens",
# "2.500,5 tok/s"): unambiguous with a decimal comma after or two separators or more ("1.234.567"); with one dot only
# before a count that cannot be fractional (users, tokens, requests): "1.5 users" is no reading.
_COUNT_UNIT = (r"(?=\s*(?:k\b)?\s*(?:(?:concurrent|simultaneous|active|daily)\s+)?(?:users?|people|persons?|employees|"
               r"seats|customers|students|staff|devs|developers|engineers|agents|requests?|reqs?|sessions|"
               r"conversations|chats|(?:tokens?|toks?)\b(?!\s*/|-?\s*per\b)|Leute|Personen|Nutzer|Mitarbeiter|usuarios|personas|"
               r"utilisateurs|personnes|utenti|persone|gebruikers|mensen|użytkowników|osób)\b)")
_GROUPED = re.compile(r"(?<![\d.,'])(\d{1,3}(?:\.\d{3})+,\d+|\d{1,3}(?:\.\d{3}){2,}(?![\d,])|"
                      r"\d{1,3}(?:'\d{3})+(?![\d'])|"
                      r"\d{1,3}(?:\.\d{3}|[ \u00a0\u202f]\d{3})(?![\d.,])" + _COUNT_UNIT + ")", re.I)


def _thousands(text: str) -> tuple[str, list[tuple[str, str]]]:
    """``text`` with thousands separators other than commas read (:data:`_GROUPED`), and (written, read) pairs."""
    said: list[tuple[str, str]] = []

    def plain(m: re.Match[str]) -> str:
        raw = m.group(1)
        whole, _, frac = raw.partition(",") if "," in raw else (raw, "", "")
        digits = re.sub(r"[.' \u00a0\u202f]", "", whole)
        out = digits + (f".{frac}" if frac else "")
        said.append((raw, f"{int(digits):,}" + (f".{frac}" if frac else "")))
        return out

    return _GROUPED.sub(plain, text), said


# A decimal comma before a unit: "12,5 tok/s", "0,8 s", "7,5 GB" (one or two digits after the comma; "8,000" and
# "1,2,4,8" keep their commas).
_DECIMAL_COMMA = re.compile(r"(?<![\d,.])(\d{1,4}),(\d{1,2})(?=\s*(?:tok(?:en)?s?\s*/\s*s|t/s|tk/s|tps\b|"
                            r"tokens?\s+(?:per|a)\s+sec|ms\b|s\b|secs?\b|seconds?\b|gb\b|gib\b|%))", re.I)


_WORDISH = re.compile(r"[\W_]{0,3}[^\W_]+(?:[-'./:_,+][^\W_]+)*[\W_]{0,3}")


def looks_like_junk(text: str) -> bool:
    """True for long text that is mostly not words (random bytes, base64, keyboard mashing)."""
    tokens = text.split()
    if len(text) < 500 and len(tokens) < 20:
        return False
    wordish = sum(1 for t in tokens if len(t) <= 40 and _WORDISH.fullmatch(t))
    return wordish < 0.5 * max(len(tokens), len(text) / 40)


def word_number(word: str) -> int | None:
    """``"twenty-five"`` → 25, ``"a dozen"`` → 12; None when it is not a number word."""
    w = re.sub(r"\s+", " ", word.strip().lower().replace("-", " "))
    w = re.sub(r"^(?:a|one) ", "", w)
    if w in ("dozen",):
        return 12
    if w == "half a dozen":
        return 6
    if w in ("hundred",):
        return 100
    if w.startswith(("couple", "pair")):
        return 2
    parts = w.split(" ")
    if len(parts) == 1:
        return _UNITS.get(w, _TENS.get(w))
    if len(parts) == 2 and parts[0] in _TENS and parts[1] in _UNITS:
        return _TENS[parts[0]] + _UNITS[parts[1]]
    return None


def parse_num(raw: str) -> float | None:
    """``"8,000"`` → 8000, ``"8k"`` → 8000, ``"1.5M"`` → 1.5e6, ``"twelve"`` → 12. None if unreadable."""
    s = raw.strip().replace(",", "").replace(" ", "")
    if not s:
        return None
    mult = 1.0
    if s[-1] in "kK":
        mult, s = 1e3, s[:-1]
    elif s[-1] in "mM":
        mult, s = 1e6, s[:-1]
    try:
        v = float(s) * mult
    except ValueError:
        n = word_number(raw)
        return float(n) if n is not None else None
    return v if math.isfinite(v) else math.inf


def fmt(v: float) -> str:
    """A number for a sentence: ``8000`` → ``"8,000"``, ``1.5`` → ``"1.5"``."""
    return f"{v:,.0f}" if float(v).is_integer() else f"{v:,.3g}"


def fmt_s(x: float | None) -> str:
    """A duration for people: ``40 ms``, ``0.42 s``, ``12.3 s``, ``2.5 min``; ``?`` when unknown."""
    if x is None:
        return "?"
    if x < 0.1:
        return f"{max(1, round(x * 1000))} ms"
    if x < 1:
        return f"{x:.2f} s"
    if x < 120:
        return f"{x:.1f} s"
    return f"{x / 60:.1f} min"


class Msg:
    """A message being read: ``orig`` as cleaned, ``s`` with claimed spans blanked out.

    Attributes:
        orig (str): the cleaned message.
        s (str): the same text where spans already used by an extractor are spaces.
    """

    def __init__(self, text: str) -> None:
        self.orig = text
        self.s = text

    def claim(self, start: int, end: int) -> None:
        """Blank ``[start, end)`` so later extractors do not read it again."""
        if end > start:
            self.s = self.s[:start] + " " * (end - start) + self.s[end:]

    def finditer(self, pattern: re.Pattern[str], limit: int = MAX_MATCHES) -> Iterable[re.Match[str]]:
        """The first ``limit`` matches of ``pattern`` in the unclaimed text (bounds the work on junk)."""
        return itertools.islice(pattern.finditer(self.s), limit)

    def before(self, pos: int, width: int = 60, bounds: re.Pattern[str] | None = None) -> str:
        """The clause that ends at ``pos`` (at most ``width`` characters; ``bounds``: what ends a clause)."""
        seg = self.orig[max(0, pos - width):pos]
        cuts = list((bounds or _BOUNDARY).finditer(seg))
        return seg[cuts[-1].end():] if cuts else seg

    def after(self, pos: int, width: int = 60, bounds: re.Pattern[str] | None = None) -> str:
        """The clause that starts at ``pos`` (at most ``width`` characters)."""
        seg = self.orig[pos:pos + width]
        cut = (bounds or _BOUNDARY).search(seg)
        return seg[:cut.start()] if cut else seg


def nearest_kind(msg: Msg, start: int, end: int, kinds: dict[str, re.Pattern[str]], *,
                 wide: bool = False) -> str | None:
    """Which kind of keyword sits closest to the span ``[start, end)`` within its clause.

    Args:
        msg (Msg): the message.
        start (int): where the number starts.
        end (int): where it (and its unit) ends.
        kinds (dict[str, re.Pattern[str]]): keyword pattern per kind, in priority order for ties.

    Returns:
        str | None: the kind whose keyword is nearest, or None when no keyword is in the clause (with
        ``wide``: in the sentence, for "short stories, around 1,000 words each").
    """
    before, after = (msg.before(start, 100, SENTENCE), "") if wide else (msg.before(start), msg.after(end))
    # (distance, tie-break, rank, kind): a keyword as near after the number as one before it labels whichever number
    # it touches — "decode 120 t/s prefill 3000 t/s": "prefill" is 3000's, so 120 is decode; "120 t/s decode, 3000 t/s
    # prefill": "decode" follows 120 and 3000 is prefill
    best: tuple[int, int, int, str] | None = None
    for rank, (kind, pat) in enumerate(kinds.items()):
        for m in pat.finditer(before):
            owned = 1 if _NUM_BEFORE.search(before[:m.start()]) and not _NUM_AFTER.match(before[m.end():]) else 0
            cand = (len(before) - m.end(), owned, rank, kind)
            best = cand if best is None or cand < best else best
        m2 = pat.search(after)
        if m2:
            cand = (m2.start(), 1 if _NUM_AFTER.match(after[m2.end():]) else 0, rank, kind)
            best = cand if best is None or cand < best else best
    return best[3] if best else None


# A keyword directly followed by a number ("prefill 3000", "pp: 512") labels that number; one directly after a number
# and its unit ("120 t/s decode") labels that one (nearest_kind's tie-break).
_NUM_AFTER = re.compile(r"\s*(?:[:=]|is|was|at|of|~|≈|about|around)?\s*\d", re.I)
_NUM_BEFORE = re.compile(r"\d[\d.,]*\s*(?:[a-z/]+(?:/s|ps)?)?\s*$", re.I)


_NEGATED = re.compile(
    r"(?:(?:\bnot|n't|\bdont|\bdoesnt)(?:\s+(?:actually\s+|even\s+|really\s+)?(?:have|own|use|run|got))?|\bno|\bnever\s+(?:had|owned)|"
    r"\bno\s+longer\s+(?:have|own|use)|\binstead\s+of|\brather\s+than|\bthan|\breplac\w*|"
    # done ("I upgraded from my 3060 to a 4090": the 4090 is theirs); a plan ("thinking about an upgrade from my M1 Pro
    # to an M4 Max") names both, compared (advisor.intake._several)
    r"\b(?:switched|upgraded|coming|came|moved|migrated|went)\s+from)"
    r"\s+(?:an?\s+|the\s+|my\s+|our\s+|that\s+)?$",
    re.I,
)


def negated(msg: Msg, start: int) -> bool:
    """True when the mention at ``start`` is what the user does *not* mean ("not the 8B", "than a 3090")."""
    return _NEGATED.search(msg.orig[max(0, start - 24):start]) is not None


_SCALES = {"hundred": 100, "thousand": 1000, "million": 1_000_000}
_SPELLED = re.compile(
    r"\ba\s+couple(?:\s+of)?\s+(?:hundred|thousand)\b|\ba\s+few\s+(?:hundred|thousand)\b|"
    rf"\b(?:(?:{_TENS_RE})(?:[\s-](?:{_UNIT_RE}))?|{_UNIT_RE}|a(?=\s+(?:hundred|thousand|couple)))"
    rf"(?:[\s-]+(?:and[\s-]+)?(?:hundred|thousand|million|(?:{_TENS_RE})(?:[\s-](?:{_UNIT_RE}))?|{_UNIT_RE}))*\b"
    ,
    re.I,
)
# A spelled number becomes digits only before a word that says what it counts (or with a scale word),
# so "the 16GB one" or "one of them" are left alone.
_COUNTED = re.compile(
    r"\s*(?:-\s*)?(?:tokens?|toks?|words?|pages?|lines?|sentences?|paragraphs?|t/s|tok/s|tps|seconds?|secs?|minutes?|"
    r"mins?|ms|milliseconds?|gb|gigs?|gigabytes?|tb|users?|people|engineers?|developers?|devs|requests?|queries|"
    r"streams?|sessions?|gpus?|cards?|layers?|tokens?\s+(?:a|per)\s+second)\b", re.I)


def _spelled_value(words: str) -> int | None:
    w = re.sub(r"[\s-]+", " ", words.strip().lower()).replace(" and ", " ")
    if re.match(r"a couple(?: of)? ", w):
        w = "two " + w.split()[-1]
    elif re.match(r"a few ", w):
        w = "three " + w.split()[-1]
    elif w.startswith("a "):
        w = "one " + w[2:]
    total, current = 0, 0
    for part in w.split():
        if part in _UNITS:
            current += _UNITS[part]
        elif part in _TENS:
            current += _TENS[part]
        elif part in _SCALES:
            current = max(current, 1) * _SCALES[part]
            if _SCALES[part] >= 1000:
                total, current = total + current, 0
        else:
            return None
    return total + current


def spell_numbers(text: str) -> str:
    """Spelled-out numbers that count something as digits: "two thousand words" → "2000 words".

    Only numbers followed by what they count (tokens, words, seconds, users, GB ...) or containing a scale
    word (hundred, thousand) are rewritten; "one of them" and "the 16GB one" stay as written.
    """
    def sub(m: re.Match[str]) -> str:
        raw = m.group(0)
        scaled = re.search(r"hundred|thousand|million", raw, re.I)
        if not scaled and not _COUNTED.match(text, m.end()):
            return raw
        v = _spelled_value(raw)
        return raw if v is None else str(v)

    return _SPELLED.sub(sub, text)
