"""Users and request rates: counts said as users ("12 devs", "a team of 6", "two parents and three kids"), a request
rate ("a request every 2 minutes", "300 requests an hour in total"), and people named one by one ("me and my kid",
"my wife and I", "me, my partner and our 2 kids").

A chain of people joined by "and", "&", "+", "plus", "with" or commas counts its members: the speaker
("me", "I", "myself") is one, a singular relation ("my wife", "a friend") one, a counted plural ("our 2 kids",
"my three sons") its count. A plural said without a count ("my kids") is read as two and said back, so the
person can correct it. A chain must hold at least two people and name the speaker or start with "my"/"our",
so "kids and adults" in passing is no count.
"""

from __future__ import annotations

import re

from advisor.intake._schema import Extraction
from advisor.intake._text import NUM, WORDNUM, Msg, fmt, parse_num, word_number

MAX_USERS = 100_000

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
    rf"(?:(?P<many>{_MANY})|(?P<one>{_ONE}))\b"
    rf"(?:\s*\((?P<n2>\d{{1,2}}|{WORDNUM})(?:\s+of\s+them)?\))?",  # "the kids (2 of them)", "my sons (3)"
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
        if m.group("n") or m.group("n2"):
            n = _number(m.group("n") or m.group("n2"))
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


_WHO = (r"users?|people|persons?|engineers?|developers?|devs?|programmers?|coders?|colleagues?|co-?workers?|"
        r"employees?|staff|students?|researchers?|analysts?|members?|teammates?|clients?|customers?|agents?|kids|"
        r"children|seats|sessions?|streams?|lawyers?|doctors?|writers?|testers?|ppl|folks|humans|nurses|teachers|"
        r"interns|accountants|editors|translators|scientists|designers|consultants|reps|agents|bots|adults|teens|teenagers|"
        r"grown-?ups|parents|grandparents|sons|daughters|toddlers|boys|girls|"
        # the same in the languages people write to us in (German, Spanish, French, Italian, Dutch, Polish, Russian)
        r"Leute|Personen|(?:Be)?[Nn]utzer(?:innen)?|Mitarbeiter(?:innen)?|Kollegen|Entwickler|usuarios|personas|"
        r"empleados|utilisateurs|personnes|employés|utenti|persone|dipendenti|gebruikers|mensen|medewerkers|"
        r"użytkowników|osób|пользовател[ьеяй]\w*|человек|сотрудник\w*")
# Members of a household said one group after another ("2 adults 2 teens", "two parents and three kids") add up.
_HOUSEHOLD = re.compile(r"kids|children|adults|teens|teenagers|grown-?ups|parents|grandparents|sons|daughters|"
                        r"toddlers|boys|girls", re.I)
_USERS = re.compile(
    rf"(?<![\w.-])(?P<n>-?{NUM}|{WORDNUM})\s+(?:(?:concurrent|simultaneous|parallel|active|different|other|"
    rf"total|human|software|full[\s-]time|family|team|household|staff|office|lab|club|internal|daily|weekly|monthly|"
    rf"regular|paying|expected|potential|possible|heavy|light|support|sales|call[\s-]cent(?:er|re)|customer[\s-]service|"
    rf"help[\s-]?desk|data|junior|senior|software|ml|ai|backend|frontend|research|full[\s-]?stack)\s+)*(?P<who>{_WHO})\b"
    rf"|\b(?:team|family|group|household|class|office|company|lab|org(?:anization)?)\s+of\s+(?P<n2>-?{NUM}|{WORDNUM})\b"
    rf"|(?<![\w.-])(?P<n6>\d{{1,6}}|{WORDNUM})[\s-](?:person|people|man|member|user|seat|dev|developer|engineer)\s+"
    r"(?:[a-z]+\s+){0,2}?(?:team|agency|company|office|firm|shop|startup|family|household|lab|studio|group|practice|org|consultancy|"
    r"business|department|school|clinic|nonprofit|newsroom)\b"
    rf"|(?<![\w.-])(?P<n3>-?{NUM}|{WORDNUM})\s+(?:concurrent|simultaneous|parallel)(?:\s+(?:requests?|queries|calls|"
    rf"conversations|chats|users?)\b|(?=\s*(?:[.,;!?)]|$)))"  # "… sglang 500 concurrent"
    r"|\b(?:batch(?:\s+size)?|(?:max(?:imum)?[\s_-]+)?concurrency|parallel(?:ism)?|-np|--parallel|--max-concurrency)"
    r"\s*(?:of|=|:|was|is|at)?\s*(?P<n4>-?\d{1,9})\b"
    rf"|(?<![\w.-])(?P<n5>{NUM}|{WORDNUM})\s+of\s+us\b",
    re.I,
)
_EVERY = re.compile(rf"\b(?:one|a|1)?\s*(?:requests?|quer(?:y|ies)|messages?|calls?|questions?|prompts?)\s+every\s+"
                    rf"(?P<k>{NUM})\s*(?P<u>minutes?|mins?|seconds?|secs?|hours?|hrs?)\b", re.I)
# "both kids use it at the same time", "the two of us at once": two users at once
_BOTH = re.compile(r"\b(?:both(?:\s+of\s+(?:us|them))?|the\s+two\s+of\s+(?:us|them))\b[^.?!]{0,60}?"
                   r"\b(?:at\s+(?:the\s+)?same\s+time|at\s+once|simultaneously|concurrently|in\s+parallel|together)\b",
                   re.I)
_ALONE = re.compile(r"\b(?:just|only)\s+(?:me|myself|for\s+me)\b|\bsingle[\s-]user\b|\bby\s+myself\b|\bpersonal\s+use\b|"
                    r"\bme\s+alone\b|\bone\s+person\b", re.I)
_RPM = re.compile(rf"(?<![\w.,])(?P<n>{NUM}|{WORDNUM})\s*(?:requests?|reqs?|queries|prompts|calls|messages|questions|completions|"
                  r"documents|docs|files|jobs|chats|conversations|tickets|emails|articles|reports|summaries)"
                  r"\s*(?:per|a|an|/|every|each)\s*(?P<per>minute|min|hour|hr|h|second|sec|s|day)\b"
                  r"(?P<total>\s*(?:in\s+total|total|overall|altogether|across\s+(?:the\s+)?(?=team|everyone|all)))?",
                  re.I)


# ----------------------------------------------------------------------------- users and rates
def _count(raw: str) -> int | None:
    """A count of people: digits with separators, "1.5k", "1e3" or words; None when unreadable or not whole."""
    raw = raw.strip()
    if re.fullmatch(r"-?\d+", raw):
        return int(raw)
    if re.match(r"-?\d", raw):
        v = parse_num(raw.lstrip("-"))
        if v is None or v != v or v > 1e15:
            return MAX_USERS + 1 if v is not None and v == v else None  # said, but out of any range: refused with a note
        return -round(v) if raw.startswith("-") else round(v)
    return word_number(raw)


def extract_users(msg: Msg, ext: Extraction) -> None:
    """Read the number of concurrent users and the request rate (per user, as compare expects)."""
    total = _rate(msg, ext)
    found = list(msg.finditer(_USERS))
    # "me and my 2 kids": people named one by one, unless a count is said as users ("8 users")
    if not any(m.group("who") and not _HOUSEHOLD.fullmatch(m.group("who")) or not m.group("who") for m in found) \
            and extract_people(msg, ext):
        found = []
    # "2 kids, 3 cats … 8 users": a count said as users beats household members said in passing
    found.sort(key=lambda m: bool(m.group("who") and _HOUSEHOLD.fullmatch(m.group("who"))))
    if _at_once(msg, ext, found):
        return _per_user_rate(ext, total)
    for m in found:
        raw = m.group("n") or m.group("n2") or m.group("n3") or m.group("n4") or m.group("n5") or m.group("n6")
        users = _count(raw)
        msg.claim(m.start(), m.end())
        if users is None:
            continue
        if users > MAX_USERS:  # more than one comparison models: answered at the most it does, said (more is replicas)
            ext.note(f"'{m.group(0).strip()}' is more people at once than I model ({MAX_USERS:,} at most): answered for "
                     f"{MAX_USERS:,}; more is that many again, as replicas.")
            users = MAX_USERS
        elif users < 1:
            ext.reject(f"'{m.group(0).strip()}': the number of users must be between 1 and {MAX_USERS:,}; I ignored it.")
            continue
        if (who := m.group("who")) and _HOUSEHOLD.fullmatch(who):
            end = m.end()
            for m2 in msg.finditer(_USERS):
                if m2.start() < end or not re.fullmatch(r"[\s,;+&]*(?:and|plus)?\s*", msg.orig[end:m2.start()]) or \
                        not (m2.group("who") and _HOUSEHOLD.fullmatch(m2.group("who"))) or (more := _count(m2.group("n"))) is None:
                    continue
                users += more
                end = m2.end()
                msg.claim(m2.start(), m2.end())
        ext.concurrency = users
        break
    if ext.concurrency is None and _BOTH.search(msg.s):
        ext.concurrency = 2
    if ext.concurrency is None and _ALONE.search(msg.s):
        ext.concurrency = 1
    _per_user_rate(ext, total)


def _per_user_rate(ext: Extraction, total: float) -> None:
    """A request rate said for everyone, divided among the users at once (or said back when there are none)."""
    if total and ext.requests_per_minute:
        if ext.concurrency:
            ext.requests_per_minute = round(ext.requests_per_minute / ext.concurrency, 4)
            ext.note(f"{fmt(round(total, 3))} requests per minute for everyone ÷ {ext.concurrency} users = "
                     f"{fmt(ext.requests_per_minute)} per user.")
        else:
            ext.note(f"{fmt(round(total, 3))} requests per minute is for everyone; tell me how many users share it "
                     "(for now I count it as one user's rate).")


# How many are at once, said beside a head-count ("500 employees, maybe 50 concurrent at peak", "200 staff but
# only 30 at the same time", "peak concurrency 25"): the load is the number at once.
_AT_ONCE = re.compile(
    rf"(?<![\w.-])(?P<n>\d{{1,6}}|{WORDNUM})\s+(?:(?:{_WHO}|requests?|queries|chats|conversations)\s+)?(?:(?:are|being|using\s+it|"
    rf"online|active)\s+)?(?:concurrent(?:ly)?|simultaneous(?:ly)?|in\s+parallel|at\s+(?:the\s+)?same\s+time|at\s+once|"
    rf"at\s+(?:the\s+)?peak|parallel)\b"
    r"|\bpeak\s+(?:of\s+|concurrency\s*(?:of|=|:|is|~|around|about)?\s*|load\s+(?:of\s+)?)~?(?P<n2>\d{1,6})\b"
    r"|\b(?:at\s+(?:the\s+)?peak|at\s+most|max(?:imum)?)\s*,?\s*(?:about\s+|~|maybe\s+|around\s+)?(?P<n3>\d{1,6})\s+"
    rf"(?:(?:{_WHO})\s+)?(?:at\s+once|at\s+(?:the\s+)?same\s+time|concurrent(?:ly)?|simultaneous(?:ly)?)\b",
    re.I)


def _at_once(msg: Msg, ext: Extraction, counts: list[re.Match[str]]) -> bool:
    """Set ``ext.concurrency`` from a number said to be at once when a larger head-count is said beside it; True then."""
    heads = [(m, n) for m in counts if (n := _count(m.group("n") or m.group("n2") or m.group("n5") or m.group("n6") or ""))
             and not re.search(r"concurren|simultan|parallel|at\s+once|same\s+time", m.group(0), re.I)]
    for m in msg.finditer(_AT_ONCE):
        n = _count(m.group("n") or m.group("n2") or m.group("n3") or "")
        bigger = [(h, k) for h, k in heads if k is not None and n is not None and k > n]
        if n is None or not 1 <= n <= MAX_USERS or not bigger:
            continue
        msg.claim(m.start(), m.end())
        for h, _ in bigger:
            msg.claim(h.start(), h.end())
        ext.concurrency = n
        ext.note(f"'{bigger[0][0].group(0).strip()}' in all, {n} at once: worked out for the {n} at once.")
        return True
    return False


def _rate(msg: Msg, ext: Extraction) -> float:
    """Requests per minute per user; returns the rate when the user gave a total for everyone, else 0."""
    for m in msg.finditer(_EVERY, limit=1):
        k = parse_num(m.group("k")) or 0.0
        unit = m.group("u").lower()
        per_min = {"s": 1 / 60, "h": 60}.get(unit[0], 1.0) * k
        msg.claim(m.start(), m.end())
        if 0 < per_min <= 1e6:
            ext.requests_per_minute = round(1 / per_min, 4)
            ext.note(f"'{m.group(0).strip()}' = {fmt(round(1 / per_min, 4))} requests per minute.")
            return 0.0
    for m in msg.finditer(_RPM, limit=1):
        per = m.group("per").lower()
        if re.search(r"(?:^|[\s(:=~])[-−]\s*$", msg.orig[max(0, m.start() - 3):m.start()]):
            msg.claim(m.start(), m.end())
            ext.reject(f"'-{m.group(0).strip()}' is a negative request rate; I ignored it.")
            return 0.0
        rpm = (parse_num(m.group("n")) or 0.0) * {"h": 1 / 60, "d": 1 / 1440, "s": 60}.get(per[0], 1)
        msg.claim(m.start(), m.end())
        if not 0 < rpm <= 1e7:
            ext.reject(f"'{m.group(0).strip()}' is not a usable request rate; I ignored it.")
            return 0.0
        ext.requests_per_minute = round(rpm, 4)
        if per[0] != "m":
            ext.note(f"{fmt(parse_num(m.group('n')) or 0)} requests per {per} = {fmt(round(rpm, 3))} per minute.")
        return rpm if m.group("total") else 0.0
    return 0.0
