"""People named one by one share the machine: "me and my kid", "my wife and I", "me, my partner and our 2 kids".

A chain of people joined by "and", "&", "+", "plus", "with" or commas counts its members: the speaker
("me", "I", "myself") is one, a singular relation ("my wife", "a friend") one, a counted plural ("our 2 kids",
"my three sons") its count. A plural said without a count ("my kids") is read as two and said back, so the
person can correct it. A chain must hold at least two people and name the speaker or start with "my"/"our",
so "kids and adults" in passing is no count.
"""

from __future__ import annotations

import re

from advisor.intake._schema import Extraction
from advisor.intake._text import WORDNUM, Msg, word_number

_ONE = (r"wife|husband|partner|spouse|girlfriend|boyfriend|fianc[ée]e?|kid|child|son|daughter|friend|buddy|mate|"
        r"roommate|room-mate|flatmate|housemate|brother|sister|sibling|mom|mum|mother|dad|father|parent|grandma|"
        r"grandpa|grandmother|grandfather|aunt|uncle|cousin|nephew|niece|colleague|co-?worker|co-?founder|teammate|"
        r"boss|manager|intern|assistant|student|teen(?:ager)?|toddler|baby|significant\s+other|other\s+half|"
        r"better\s+half|family\s+member"
        # German, Spanish, French
        r"|frau|mann|partnerin|kind|sohn|tochter|freund|freundin|kollege|kollegin|esposa|esposo|marido|mujer|hijo|hija|"
        r"amigo|amiga|pareja|novia|novio|femme|mari|fils|fille|ami|amie|copine|copain|coll[èe]gue|conjoint|conjointe")
_MANY = (r"kids|children|sons|daughters|friends|buddies|mates|roommates|flatmates|housemates|brothers|sisters|siblings|"
         r"parents|grandparents|cousins|nephews|nieces|colleagues|co-?workers|co-?founders|teammates|interns|"
         r"students|teens|teenagers|toddlers|twins"
         r"|kinder|söhne|töchter|freunde|kollegen|hijos|hijas|amigos|amigas|enfants|amis|amies|coll[èe]gues")
_OTHER_NUM = {"zwei": 2, "drei": 3, "vier": 4, "fünf": 5, "dos": 2, "tres": 3, "cuatro": 4, "cinco": 5,
              "deux": 2, "trois": 3, "quatre": 4, "cinq": 5}
_ADJ = r"(?:(?:little|young|younger|older|elder|eldest|youngest|teenage|adult|grown(?:-up)?|best|new)\s+)?"
_PERSON = re.compile(
    rf"\b(?P<self>me|myself|i|ich|yo|moi)\b(?!['’]\w)"
    rf"|\b(?P<oneof>(?:one|a\s+couple)\s+of\s+(?:my|our)\s+(?:{_MANY}))\b"
    rf"|\b(?:(?P<det>my|our|a|one|meine?|unsere?|mi|mis|nuestr[oa]s?|ma|mon|mes|notre|nos)\s+)?"
    rf"(?:(?P<n>\d{{1,3}}|{WORDNUM}|{'|'.join(_OTHER_NUM)})\s+)?{_ADJ}"
    rf"(?:(?P<many>{_MANY})|(?P<one>{_ONE}))\b",
    re.I,
)
_JOIN = re.compile(r"\s*(?:,|&|\+|\b(?:and|plus|with|und|mit|y|con|et|avec)\b|,\s*(?:and|plus|und|y|et)\b)\s*(?:also\s+)?(?:the\b\s*)?",
                   re.I)
_OWNED = ("my", "our", "mein", "meine", "unser", "unsere", "mi", "mis", "nuestro", "nuestra", "nuestros", "nuestras",
          "ma", "mon", "mes", "notre", "nos")
ASSUMED_MANY = 2  # a plural said without a count ("my kids"): read as two, and said back


def _members(m: re.Match[str]) -> tuple[int, bool] | None:
    """(people, assumed) one person phrase stands for; None when it is no person."""
    if m.group("self"):
        return 1, False
    if m.group("oneof"):
        return (1 if m.group("oneof").lower().startswith("one") else 2), False
    if m.group("many"):
        if m.group("n"):
            n = _number(m.group("n"))
            return (n, False) if n else None
        return ASSUMED_MANY, True
    if m.group("one"):
        if m.group("n") and _number(m.group("n")) != 1:
            return None  # "2 friend" is no phrase we read
        return 1, False
    return None


def _number(raw: str) -> int | None:
    raw = raw.strip().lower()
    return int(raw) if raw.isdigit() else _OTHER_NUM.get(raw) or word_number(raw)


def extract_people(msg: Msg, ext: Extraction) -> bool:
    """Set ``ext.concurrency`` from a chain of people named one by one; True when one was read.

    ``"me and my kid"`` → 2, ``"my wife and I"`` → 2, ``"me, my wife and our 3 kids"`` → 5, ``"me and my
    kids"`` → 3 (the plural read as :data:`ASSUMED_MANY`, said in the notes). Claims the chain's span.
    """
    found = [m for m in msg.finditer(_PERSON) if m.group(0).strip()]
    chain: list[re.Match[str]] = []
    best: list[re.Match[str]] | None = None
    for m in found:
        if chain and _JOIN.fullmatch(msg.orig[chain[-1].end():m.start()]):
            chain.append(m)
            continue
        if _valid(chain):
            best = chain
            break
        chain = [m]
    if best is None and _valid(chain):
        best = chain
    if best is None:
        return False
    total, assumed = 0, False
    for m in best:
        got = _members(m)
        if got is None:
            return False
        total += got[0]
        assumed = assumed or got[1]
    if total < 2:
        return False
    msg.claim(best[0].start(), best[-1].end())
    ext.concurrency = total
    said = msg.orig[best[0].start():best[-1].end()].strip()
    if assumed:
        ext.note(f"'{said}': counted as {total} people (a plural without a number read as {ASSUMED_MANY}); "
                 "say how many if there are more.")
    return True


def _valid(chain: list[re.Match[str]]) -> bool:
    """At least two people, one of them the speaker or the first said as "my"/"our"."""
    if len(chain) < 2:
        return False
    has_self = any(m.group("self") for m in chain)
    owned = (chain[0].group("det") or "").lower() in _OWNED or bool(chain[0].group("oneof"))
    return has_self or owned
