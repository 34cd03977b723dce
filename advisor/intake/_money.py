"""A budget in a message ("budget 15k", "best GPU under $1000", "I can spend about 2000 euros"): read, said back.

The catalog holds no prices (DESIGN.md: every figure has a source, and street prices move weekly), so a budget
cannot filter the options; it is said back with how to rank on cost (prices given in Compare), and its words are
claimed so "15k" is not read as a prompt length. Prices of one option ("$700 each"), hourly rents ("$2/hr") and
per-token prices are no budget.
"""

from __future__ import annotations

import re

from advisor.intake._schema import Extraction
from advisor.intake._text import Msg, fmt

_CUR_BEFORE = r"(?P<cb>[$€£]|us\$|usd|eur|gbp|chf|cad|aud)\s?"
_CUR_AFTER = r"\s?(?P<ca>[$€£]|(?:dollars?|bucks|euros?|eur|usd|pounds?|gbp|chf|quid)\b)"
_AMOUNT = r"(?P<a>\d{1,3}(?:[,.]\d{3})+|\d+(?:\.\d+)?)\s?(?P<k>[kK]\b|grand\b)?"
_MONEY = (re.compile(rf"(?<![\w.,]){_CUR_BEFORE}{_AMOUNT}", re.I),
          re.compile(rf"(?<![\w.,$€£]){_AMOUNT}{_CUR_AFTER}", re.I),
          re.compile(r"(?<![\w.,$€£])(?P<a>\d+(?:\.\d+)?)\s?(?P<k>grand)\b", re.I))
_BARE = (re.compile(rf"\bbudget\b\s*(?:is|of|:|=|around|about|roughly|~|≈|max|maximum|at\s+most)?\s*(?:is\s+)?"
                    rf"(?:~|about\s+|around\s+|roughly\s+)?(?:{_CUR_BEFORE})?(?<![\w.,]){_AMOUNT}"
                    rf"(?:{_CUR_AFTER})?(?!\s*(?:tok|ctx|context|words|gb|users|people))", re.I),
         re.compile(rf"(?<![\w.,]){_AMOUNT}\s*(?:budget)\b", re.I))
_UNDER_K = re.compile(rf"\b(?:under|below|less\s+than|up\s+to|max(?:imum)?|at\s+most)\s+(?<![\w.,]){_AMOUNT}"
                      r"(?!\s*(?:tok|ctx|context|words|gb|users|people|ms|s\b|sec|tokens))", re.I)
_BUY_WORDS = re.compile(r"\b(?:buy|purchas\w*|spend\w*|budget|afford\w*|cost\w*|price\w*|cheap\w*|money|invest\w*)\b", re.I)
_NOT_BUDGET_AFTER = re.compile(r"^\s*(?:/|per\b|an?\s+(?:hour|month|year|day)|each\b|apiece\b|a\s+piece\b|"
                               r"(?:an?\s+)?(?:hr|hour|mo|month|yr|year|day|token|m\s+tokens|million))", re.I)
_SYMBOL = {"$": "$", "us$": "$", "usd": "$", "dollar": "$", "dollars": "$", "bucks": "$", "€": "€", "eur": "€",
           "euro": "€", "euros": "€", "£": "£", "gbp": "£", "pound": "£", "pounds": "£", "quid": "£"}


def _value(m: re.Match[str]) -> float | None:
    raw = m.group("a")
    if re.fullmatch(r"\d{1,3}(?:[,.]\d{3})+", raw):
        raw = re.sub(r"[,.]", "", raw)  # "15,000" and "1.500" (a thousands point) are whole amounts
    try:
        v = float(raw)
    except ValueError:
        return None
    k = (m.group("k") or "").lower()
    return v * 1000 if k in ("k", "grand") else v


def extract_budget(msg: Msg, ext: Extraction) -> None:
    """Read one budget and say it back (:mod:`advisor.intake._money`); claims its words."""
    cands: list[tuple[re.Match[str], bool]] = []
    cands += [(m, True) for pat in _MONEY for m in msg.finditer(pat)]
    cands += [(m, False) for pat in _BARE for m in msg.finditer(pat)]
    if _BUY_WORDS.search(msg.orig):
        for m in msg.finditer(_UNDER_K):
            if m.group("k"):
                cands.append((m, False))
    for m, money in sorted(cands, key=lambda c: c[0].start()):
        if _NOT_BUDGET_AFTER.match(msg.orig[m.end():m.end() + 20]):
            msg.claim(m.start(), m.end())  # "$700 each", "$2/hr": a price, not what they can spend
            continue
        before = msg.orig[max(0, m.start() - 40):m.start()]
        if money and not re.search(r"\b(?:budget|spend|afford|under|below|less\s+than|up\s+to|max(?:imum)?|around|about|"
                                   r"at\s+most|no\s+more\s+than|for|with|have|got)\b[^.?!]*$|~\s*$", before, re.I) \
                and not re.match(r"\s*(?:budget|max|tops|or\s+less)\b", msg.orig[m.end():m.end() + 12], re.I):
            continue
        v = _value(m)
        negative = re.search(r"-\s*(?:[$€£]\s*)?$", msg.orig[max(0, m.start("a") - 4):m.start("a")])  # "-5000", "-$5000"
        if v is None or negative or not 50 <= v <= 100_000_000:
            msg.claim(m.start(), m.end())
            ext.reject(f"'{m.group(0).strip()}' is no budget I can use (50 to 100,000,000); I ignored it.")
            return
        cur = (m.groupdict().get("cb") or m.groupdict().get("ca") or "$").lower().rstrip(" ")
        sym = _SYMBOL.get(cur, cur.upper() + " ")
        msg.claim(m.start(), m.end())
        ext.note(f"Budget about {sym}{fmt(round(v))}: I have no prices for machines, so the options are not filtered "
                 "by it; give each option's price in the Compare tab's Prices box (or `advisor compare --price`) to rank "
                 "them on cost.")
        return
