"""Which of the machines a message names are meant: one machine, candidates to compare ("M4 Max or a 5090?"), one
mixed box ("3090 + 3060"), a host CPU beside its card, a machine named in passing ("my old 1080"), a phone's chip,
or one machine said twice ("my strix halo box (framework desktop 128gb)").

Part of :mod:`advisor.intake._hardware` (which finds the names and resolves the one meant).
"""

from __future__ import annotations

import re

from advisor.errors import AmbiguousError, NotFoundError
from advisor.intake._gpus import GPU as _GPU
from advisor.intake._machine import ASIDE, COMPARE_JOIN, MIXED_JOIN, Mention
from advisor.intake._memory import with_memory_after
from advisor.intake._ramspec import RAM_WORD
from advisor.intake._schema import Extraction
from advisor.intake._text import Msg
from knowledge import catalog
from knowledge.store import Store

__all__ = ["CPU_NAMES", "PHONE", "aside", "chip_with_its_mac", "host_cpu", "is_card", "owned_only", "phone_chip", "several"]

CPU_NAMES = re.compile(
    r"\b(?:intel\s+)?(?:core\s+)?(?:i[3579]|ultra\s+[579])(?:[\s-]\d{3,5}(?:[a-z]{1,2}\d?)?)?\b|\b(?:intel\s+)?core\s+ultra\s+\d{3}[a-z]{0,2}\b|\bryzen\s+[3579](?:\s+(?:pro\s+)?\d{4}\w*)?\b"
    r"|\bryzen\s+ai\s+(?:[3579]\s+)?(?:pro\s+)?(?:hx\s*)?\d{3}\w?\b"
    r"|\b(?:amd\s+)?(?:ryzen\s+)?threadripper(?:\s+pro)?(?:\s+\d{4}\w{0,3})?\b|\bxeon\s+w[3579]-\d{4}\w?\b"
    r"|\b(?:intel\s+)?(?:processor\s+)?(?:n[1-3]\d{2}|n9[57]|n50)\b(?=\s*(?:mini|cpu|pc|box|nuc|processor|chip|based|with|,|\)|$))"
    r"|\b(?:intel\s+)n[1-3]\d{2}\b|\bsnapdragon(?:\s+x)?(?:\s+elite)?\b|\bceleron\b|\bpentium\b"
    # bare desktop model numbers as people write them: "9950x", "7800X3D", "14900k" (a GPU is "7900 XT(X)", not "X")
    r"|(?<![\w.-])(?<!rx )(?<!radeon )[3579]\d{2}0x(?:3d)?\b|(?<![\w.-])1[2-4]\d{2}0k[fs]?\b"
    # bare laptop model numbers: "7840HS", "8845HS", "6800H", "5800U", "7940HX" (AMD mobile SKUs)
    r"|(?<![\w.-])[5-9]\d{2}[05](?:hs|hx|h|u)\b", re.I)
SERVER_CPU = re.compile(r"\b(?:xeon|epyc)\b", re.I)  # server CPUs, named by _SPECIALS (their model numbers are no cards)


def _beside_card(msg: Msg, x: Mention, cards: list[Mention]) -> bool:
    """A CPU written next to a card without an "or"/"vs" between them ("EPYC 9654 w/ 768GB + one 4090"): that card's
    host, not a second machine to compare."""
    if not cards or not host_cpu(x):
        return False
    c = min(cards, key=lambda d: abs(d.start - x.start))
    gap = msg.orig[min(x.end, c.end):max(x.start, c.start)]
    return not COMPARE_JOIN.search(gap)


def host_cpu(men: Mention) -> bool:
    """A CPU named beside a card: that PC's host ("old xeon e5-2680 v2 … and a gtx 1080 ti")."""
    return men.product == "cpu" or (not is_card(men.phrase) and bool(CPU_NAMES.search(men.phrase) or SERVER_CPU.search(men.phrase)))


PHONE = re.compile(r"\b(?:iphone|ipad|android\s+(?:phone|tablet)|pixel\s+\d+|galaxy\s+(?:s|z\s*fold|z\s*flip|tab)\s*\d+|"
                    r"snapdragon\s+8\s*(?:gen|elite)\s*\d*|dimensity\s+\d{4}|"
                    r"(?:my|a|an|the|on)\s+(?:smart)?phone)\b(?:\s+\d{1,2})?(?:\s+(?:pro\s+max|pro|max|plus|ultra|air|mini))?",
                    re.I)


def phone_chip(msg: Msg, phone: re.Match[str], men: Mention) -> bool:
    """A chip named right after a phone or tablet ("ipad pro m4", "android phone (snapdragon 8 gen 3)") is that device's,
    not a computer's ("Huawei P40 is my phone; the PC has an RTX 3060" names a PC)."""
    gap = msg.orig[phone.end():men.start]
    return 0 <= len(gap) <= 30 and not re.search(r"[;.!?]|\b(?:pc|computer|laptop|desktop|server|mac|gpu|card|and|but)\b",
                                                  gap, re.I)


def chip_with_its_mac(msg: Msg, men: list[Mention]) -> list[Mention]:
    """A Mac named by its chip and, a few words away, by its product line ("M4 Max 128gb macbook pro") is one machine:
    the bare product mention goes."""
    chips = [x for x in men if re.search(r"\bM\d", x.phrase)]
    def near(x: Mention) -> bool:
        return any(0 <= x.start - c.end <= 24 or 0 <= c.start - x.end <= 24 for c in chips)
    return [x for x in men if not (x.product and x.phrase == x.product and chips and near(x)
                                   and not COMPARE_JOIN.search(msg.orig[min(x.end, chips[0].end):max(x.start, chips[0].start)]))]


def is_card(phrase: str) -> bool:
    """A machine phrase that names a graphics card ("RTX 3060", "2x 3090"), never RAM ("DDR4-3600": its speed is
    no card number) or a CPU ("xeon e5-2680 v2": its model number is no card either)."""
    m = _GPU.search(phrase)
    return m is not None and not RAM_WORD.search(phrase) and not (
        m.group("bare") and (CPU_NAMES.search(phrase) or SERVER_CPU.search(phrase)))


def aside(msg: Msg, men: Mention) -> bool:
    """A machine named in passing: "(an RTX 3090 in the same box for comparison)", "my old 1080"."""
    opened = msg.orig.rfind("(", 0, men.start)
    if opened != -1 and msg.orig.find(")", opened) >= men.end or (opened != -1 and msg.orig.find(")", opened) == -1):
        inside = msg.orig[opened:msg.orig.find(")", opened) if msg.orig.find(")", opened) != -1 else len(msg.orig)]
        if ASIDE.search(inside):
            return True
    return bool(ASIDE.search(msg.before(men.start, 24)) and not re.search(r"\bvs|\bor\b", msg.before(men.start, 24)))


_ALSO_OWN = re.compile(r"\balso\s+(?:have|has|got|own)\b|\bi'?ve\s+also\s+got\b", re.I)


def owned_only(msg: Msg, ext: Extraction, said: list[Mention]) -> list[Mention]:
    """"My old PC has no GPU but I also have a Mac mini M4": a machine the person also owns, when no other machine is
    named, is the one to answer for (the other is only described); said so."""
    own = [x for x in said if _ALSO_OWN.search(msg.before(x.start, 24))]
    if not own:
        return []
    ext.note(f"You described two computers; I'm answering for the {own[0].phrase}, the one you named. To size the other "
             "one instead, name it (its CPU or RAM, e.g. 'DDR4-3200', for a computer without a GPU).")
    return own[:1]


_SIZES = re.compile(r"\(?\s*\b\d{1,3}\s*(?:gb|gigs?|g)\b(?:\s+(?:of\s+)?vram)?\s*\)?", re.I)  # "(24GB)" between cards


_PLUS = re.compile(r"^\s*(?:\+|&|plus)\s*(?:an?\s+|one\s+|the\s+)?$", re.I)


def _boxes(msg: Msg, cands: list[Mention]) -> list[Mention]:
    """Candidates to compare, with cards written "A + B" / "A & B" / "A plus B" merged into one mixed box."""
    out: list[Mention] = []
    for d in cands:
        prev = out[-1] if out else None
        if prev is not None and is_card(prev.phrase) and is_card(d.phrase) \
                and _PLUS.match(_SIZES.sub(" ", msg.orig[prev.end:d.start])):
            out[-1] = Mention(prev.start, d.end, f"{prev.phrase} + {d.phrase}", prev.cores, prev.product)
        else:
            out.append(d)
    return out


_GB = r"(?<![\d.])(\d{1,4})\s*(?:gb|gigs?|g)\b"
# "24GB vs 48GB", "64GB over the 24GB", "24 or 48 GB": two memory sizes weighed against each other
_SIZE_VS = re.compile(rf"{_GB}[^.?!\d]{{0,30}}?(?:\bor\b|\bvs\.?|\bversus\b|\bover\b|\binstead\s+of\b|\bcompared\s+to\b|"
                      rf"\bthan\b)[^.?!]{{0,30}}?{_GB}|"
                      # "24 or 48 gb": the unit written once, after the second size
                      r"(?<![\d.])(\d{1,3})\s*(?:or|vs\.?|/)\s*(\d{1,4})\s*(?:gb|gigs?|g)\b", re.I)


_BEFORE_SIZE = re.compile(r"[\s,(]*(?:(?:mac\s*mini|mac\s*studio|macbook(?:\s+(?:pro|air))?|imac|mini\s*pc|laptop|"
                          r"desktop|box|with|w/|in|the|a|an|either|version|model|config(?:uration)?|option|of)\W*)*",
                          re.I)


def _sizes_compared(msg: Msg, same: list[Mention]) -> list[float] | None:
    """Two memory sizes of one machine weighed against each other ("M4 Pro 64GB over the M4 Pro 24GB", "M4 Pro
    24GB vs 48GB"): the sizes in the order written, or None."""
    text = msg.orig[same[0].end:same[-1].end + 60] if same else ""
    m = _SIZE_VS.search(text)
    # the first size stands right after the machine's name, or after its case and "with" ("M4 Pro Mac mini with 48GB")
    if m is None or (m.start() > 12 and not _BEFORE_SIZE.fullmatch(text[:m.start()])):
        # or right before the name: "the 24gb or the 48gb m4 pro mac mini"
        before = msg.orig[max(0, same[0].start - 40):same[0].start] if same else ""
        m = next((x for x in _SIZE_VS.finditer(before) if re.fullmatch(r"[\s,(]*(?:the\s+|an?\s+)?(?:apple\s+)?",
                                                                          before[x.end():], re.I)), None)
        if m is None:
            return None
    a, b = (float(g) for g in (m.groups()[:2] if m.group(1) else m.groups()[2:4]))
    return [a, b] if a != b and 4 <= min(a, b) and max(a, b) <= 2048 else None


def _same_id(store: Store, a: str, b: str) -> bool:
    """Whether two phrases name the same catalog machine ("strix halo", "framework desktop")."""
    try:
        x, y = catalog.resolve_hardware(store, a).value, catalog.resolve_hardware(store, b).value
    except (AmbiguousError, NotFoundError):
        return False
    return x is not None and y is not None and x.id == y.id


def _one_machine_twice(msg: Msg, store: Store, distinct: list[Mention]) -> list[Mention]:
    """Mentions that are one machine said twice, not candidates: a second name for the same catalog machine
    ("my strix halo box (framework desktop 128gb)"), and a Mac product named without its chip right after the
    chip's sizes ("M4 Pro 24GB vs 48GB mac mini": the Mac mini is the M4 Pro's case). Keeps the first."""
    if len(distinct) < 2:
        return distinct
    ordered = sorted(distinct, key=lambda x: x.start)
    out = [ordered[0]]
    for d in ordered[1:]:
        prev = out[-1]
        if prev.end > d.start:
            out.append(d)
            continue
        gap = msg.orig[prev.end:d.start]
        bare = _SIZES.sub(" ", gap)
        chassis = bool(d.product) and d.product != "cpu" and not prev.product and \
            (_SIZE_VS.search(gap) is not None or not bare.strip()) and not COMPARE_JOIN.search(_SIZE_VS.sub(" ", gap))
        said_again = (re.fullmatch(r"[^()]{0,20}\(\s*", gap) is not None or (not COMPARE_JOIN.search(gap)
                      and not MIXED_JOIN.match(bare))) and _same_id(store, prev.phrase, d.phrase)
        if chassis or said_again:
            continue
        out.append(d)
    return out if len(out) < len(distinct) else distinct  # nothing merged: the order found is kept


# A later machine named as what the person's machine would be replaced by or joined with: a candidate to compare
# with it even in a sentence of its own ("M2 Air 16gb, 8B runs slow. should I upgrade to an M4 Max?").
UPGRADE_TO = re.compile(
    r"\b(?:upgrad\w*|switch\w*|mov\w*|go\w*|jump\w*|step\w*\s+up)\s+(?:up\s+)?to\s+(?:an?\s+|the\s+)?(?:new\s+)?\W*$"
    r"|\b(?:buy|buying|get|getting|grab|order|replace\s+it\s+with|trade\s+(?:it\s+)?in\s+for|go\s+for|worth)\s+"
    r"(?:it\s+|buying\s+|getting\s+)?(?:an?\s+|the\s+|one\s+)?(?:new\s+|used\s+|second\s*hand\s+)?\W*$"
    r"|\b(?:would|will|does|is)\s+(?:an?\s+|the\s+)(?:new\s+|used\s+)?\W*$", re.I)


def _from_to(msg: Msg, distinct: list[Mention], bare_gaps: list[str]) -> bool:
    """"An upgrade from my M1 Pro 16gb to an M4 Max 64gb", "going from a 3060 to a 4090": the first machine is theirs,
    the next what they would move to — two candidates to compare."""
    before = msg.orig[max(0, distinct[0].start - 48):distinct[0].start]
    return bool(re.search(r"\bfrom\s+(?:my\s+|an?\s+|the\s+|our\s+)?(?:current\s+|old\s+)?\W*$", before, re.I)) and any(
        re.fullmatch(r"[^.!?]{0,24}?\b(?:to|into)\s+(?:an?\s+|the\s+)?(?:new\s+|used\s+)?\W*|\s*(?:->|→)\s*", g, re.I)
        for g in bare_gaps)


def several(msg: Msg, ext: Extraction, store: Store, men: list[Mention]) -> list[Mention]:
    """Two or more machines: candidates to compare ("M4 Max or a 5090?") or one mixed box ("3090 + 3060")."""
    distinct: list[Mention] = []
    cards = sorted((x for x in men if x.product != "cpu" and is_card(x.phrase)), key=lambda d: d.start)
    for x in men:
        if x.phrase not in [d.phrase for d in distinct] and x.product not in ("cpu",) and not _beside_card(msg, x, cards):
            distinct.append(x)
    distinct = _one_machine_twice(msg, store, distinct)
    if len(distinct) == 1 and len(cards) > 1 and all(
            MIXED_JOIN.match(_SIZES.sub(" ", msg.orig[a.end:b.start])) for a, b in zip(cards, cards[1:], strict=False)):
        distinct = cards  # the same card twice in one box ("an RTX 3090 + RTX 3090"): counted, not merged
    if len(distinct) == 1 and not is_card(distinct[0].phrase) and (
            mems := _sizes_compared(msg, [x for x in men if x.phrase == distinct[0].phrase])):
        # "M4 Pro 64GB over the M4 Pro 24GB", "M4 Pro 24GB vs 48GB": one chip, two memory sizes to weigh (a unified-
        # memory machine's; a card's memory variants are one catalog entry to compare)
        ext.compare_hardware = [f"{distinct[0].phrase} {g:g}GB" for g in mems]
        ext.memory_gb = mems[0]
        ext.note(f"Comparing {', '.join(ext.compare_hardware)} side by side; the first is used for the single verdict.")
        return distinct
    if len(distinct) < 2:
        return men
    distinct.sort(key=lambda d: d.start)  # a Mac named without its chip is found last but may be written first
    gaps = [msg.orig[a.end:b.start] for a, b in zip(distinct, distinct[1:], strict=False)]
    if any(re.search(r"[.!?]\s", g) and not COMPARE_JOIN.search(g) and not UPGRADE_TO.search(g[-48:]) for g in gaps):
        return men
    gpus = [d for d in distinct if is_card(d.phrase)]
    bare_gaps = [_SIZES.sub(" ", g) for g in gaps]
    joined = any(COMPARE_JOIN.search(g) or UPGRADE_TO.search(g[-48:]) for g in gaps) or _from_to(msg, distinct, bare_gaps)
    if not joined and re.search(r"\b(?:between|deciding|decide|choose|choosing|compare|comparing)\b",
                                msg.orig[max(0, distinct[0].start - 40):distinct[0].start], re.I):
        joined = True  # "deciding between a 4090 and a 5090": two candidates, not one mixed box
    if not joined and len(gpus) == len(distinct) and all(MIXED_JOIN.match(g) for g in bare_gaps):
        # A size written right after a card is that card's ("3090 and 3060 12GB"): kept in its part of the phrase.
        sizes = [re.match(r"\s*(?:with\s+)?\(?(\d{1,3})\s*(?:gb|gigs?|g)\b", msg.orig[d.end:d.end + 16], re.I)
                 for d in distinct]
        phrase = " + ".join(d.phrase + (f" {z.group(1)}GB" if z else "") for d, z in zip(distinct, sizes, strict=True))
        first = distinct[0]
        return [Mention(first.start, distinct[-1].end, phrase, first.cores, first.product)]
    if joined or re.search(r"\b(?:which|compare|should\s+i|better|faster|worth|between|pick|choose|decide|deciding)\b",
                           msg.orig, re.I):
        distinct = _boxes(msg, distinct)  # "a 4090 + 3090 box or an M4 Max": two candidates, the first a mixed box
        # Each later candidate keeps the memory written after it (the first one's is the verdict's memory).
        ext.compare_hardware = [with_memory_after(msg, d.phrase, d.end, distinct[i + 1].start if i + 1 < len(distinct)
                                                  else None) if i else d.phrase for i, d in enumerate(distinct)]
        ext.note(f"Comparing {', '.join(ext.compare_hardware)} side by side; the first is used for the single verdict.")
        return distinct
    return men
