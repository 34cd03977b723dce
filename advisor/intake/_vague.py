"""Workload facts said loosely: context windows, TTFT, "400 out", "a paragraph or two", "short questions".

Conventions (DESIGN.md, Interfaces — every use is stated in the notes):

* words → tokens × 4/3; a sentence ≈ 20 words; a paragraph ≈ 100–150 words (125 used); a page ≈ 500 words;
* a short question ≈ 50 tokens; "long answers" ≈ 1,000 tokens; a stated range is kept and its middle used;
* a context window ("4k ctx", ``num_ctx 32768``, ``-c 16384``) sizes the KV cache: it is NOT a prompt length.
  "Nk" for a window is N × 1024 when N is a power of two (the sizes engines allocate: 4k = 4096).
"""

from __future__ import annotations

import re

from advisor.intake._schema import Extraction
from advisor.intake._text import NUM, Msg, fmt, fmt_s, nearest_kind, parse_num
from advisor.intake._workload import _RATE_UNIT, LONG_ANSWER_TOKENS, WORDS_PER_PAGE, WORDS_PER_TOKEN
from advisor.models import MAX_TOKENS

WORDS_PER_SENTENCE = 20
WORDS_PER_PARAGRAPH = 125  # DESIGN.md: a paragraph ≈ 100–150 words
SHORT_QUESTION_TOKENS = 50

_CTX_KEY = (r"num_ctx|n_ctx|ctx[-_]size|--ctx-size|(?<![\w-])-c(?=\s+\d)|max[-_]model[-_]len|--max-model-len|"
            r"context\s+(?:window|length|size|len)|ctx\s+(?:window|length|size)|context|ctx|kontext|contexto|contexte")
_CTX_AFTER = re.compile(rf"(?:{_CTX_KEY})(?:\s*(?:of|de|von|is|=|:|to|set|at|was|now|currently|=|usually|mostly|often|typically|"
                        rf"normally|generally|ist|meistens|es|suele\s+ser|est))*\s*(?:about\s+|around\s+|~|ca\.?\s*)?(?P<a>{NUM})\b"
                        r"(?!\s*(?:tokens?\s+of|words|pages|lines|t/s|tok/s))", re.I)
_CTX_BEFORE = re.compile(rf"(?<![\w.,])(?P<a>{NUM})\s*(?:-\s*)?(?:(?:tokens?[\s-]+)?(?:context|ctx)\s+(?:window|length|size)|"
                         r"token[\s-]+(?:context|ctx)|"  # "a 128k token context": the window (singular, an adjective)
                         r"(?:context|contex|contxt|cntx|ctx))\b"
                         r"(?!\s+(?:so\s+far|already|in\s+the|deep))", re.I)
_DEEP = re.compile(rf"(?<![\w.,])(?P<a>{NUM})\s*(?:tokens?\s+)?deep\b", re.I)
_POW2 = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024}

_DURATION = re.compile(
    rf"(?<![\w.])(?:(?P<lo>{NUM})\s*(?:-|–|to|or)\s*)?(?P<n>{NUM}|an?|half\s+a)\+?\s*(?:-\s*)?(?P<u>ms|milliseconds?|s|secs?|seconds?|mins?|minutes?|h|hrs?|hours?)\b"
    r"(?!\s*(?:/|per)\s*tok)", re.I)
TTFT_WORDS = re.compile(
    r"ttft|time[\s-]+to[\s-]+first|first[\s-]+(?:token|word|output|response|character|reply|answer|message|request|prompt|question)|before\s+(?:the\s+first|it\s+(?:(?:even|actually|finally|ever)\s+)?(?:starts|"
    r"begins|responds|answers|says|writes|types|outputs|prints)|(?:writing|typing|saying|printing|outputting|showing|"
    r"answering|responding|generating|replying)\b|anything|any\s+(?:output|text|token)|i\s+(?:see|get)\s+(?:any\s+)?"
    r"(?:text|output|words?|tokens?|anything|an?\s+answer|a\s+reply)\b|the\s+(?:answer|"
    r"response|reply)\s+starts)|to\s+start\s+(?:answering|responding|generating|writing|typing|talking)|"
    r"until\s+(?:it\s+starts|the\s+first|anything)|(?:starts|begins)\s+(?:answering|responding|typing|writing)\s+after|"
    r"prompt\s+processing\b(?![^.;!?]{0,20}\btok)|processing\s+(?:the\s+|my\s+)?prompts?\b|wait(?:s|ing)?\b|\bto\s+(?:start|begin|respond|kick\s+in)\b|"
    r"\bto\s+(?:process|prefill|ingest|digest|read|chew\s+through)\b|\bprefill\b|\bprompts?\s+takes?\b|"
    r"\b(?:starts?|begins?|responds?)\s+(?:after|in)\b|\blatency\s+(?:to|before)\b", re.I)
_TTFT_TARGET = re.compile(r"\b(?:under|below|less\s+than|within|at\s+most|max(?:imum)?|target|goal|need|needs|want|"
                          r"require[sd]?|should|must|sla|no\s+more\s+than|<|(?:goes|go|gets|get|stays?|rises?|climbs?|"
                          r"is)\s+(?:over|above|past|beyond|under|below))\s*(?:(?:be|of|to|is|a|the|ttft|first\s+token|"
                          r"about|around|~)\s*)*$", re.I)
_SENTENCE = re.compile(r"[.!?\n]\s|[!?\n]")
_FILLER = re.compile(r"\W*(?:like|about|around|maybe|roughly|approx\w*|easily|at\s+least|over|almost|nearly|"
                     r"sometimes|often|usually)?\W*", re.I)
_LOAD_WORDS = re.compile(r"\bload(?:s|ing|ed)?\b|\bboot|\bdownload|\bper\s+(?:request|answer|reply)\s+in\s+total|"
                         r"\btotal\b|\bwhole\s+(?:answer|reply)|\bfull\s+(?:answer|reply)", re.I)

_VAGUE = re.compile(
    r"(?P<q>\d{1,2}\s*(?:-|to|or)\s*\d{1,2}|(?:a|one|1)\s+or\s+(?:two|2)|(?:two|2)\s+or\s+(?:three|3)|(?:one|1)\s*(?:-|to)\s*(?:two|2)|"
    r"(?:two|2)\s*(?:-|to)\s*(?:three|3)|half\s+a|a\s+couple(?:\s+of)?|a\s+few|an?|one|two|three|four|five|\d{1,2})\s+"
    r"(?:(?:short|long|full|single|whole)\s+)?(?P<u>sentences?|paragraphs?|pages?)(?P<or2>\s+or\s+(?:two|2|so))?\b",
    re.I)
_SHORT_Q = re.compile(r"\b(?:short|quick|simple|brief|small)\s+(?:questions?|prompts?|queries|messages)\b", re.I)
_LONG_A = re.compile(r"\b(?:long|lengthy|detailed|big)\s+(?:answers?|responses?|repl(?:y|ies)|outputs?)\b", re.I)
_IN_OUT = re.compile(rf"(?<![\w.,])(?P<a>{NUM})\s*(?:tokens?\s*|toks?\s*)?(?:(?P<o>out(?:put)?)\b(?!\s+of\b)|"
                     r"(?:in|input)\b(?=\s*(?:/|,|;|&|\+|and\b|$|\)|\.|tokens?\b)|\s+\d[\d.,]*\s?[kK]?\s*(?:tokens?\s*)?out\b))",
                     re.I | re.M)
_LABEL_LEN = re.compile(
    rf"(?<!system )\b(?P<k>prompts?|inputs?|input\s+length|prompt\s+(?:length|size)|answers?|outputs?|responses?|repl(?:y|ies)|"
    rf"completions?|output\s+length)\s*(?:(?:is|are|of|=|:|~|around|about|usually|typically|like|roughly|maybe|"
    rf"mostly|approx\.?|approximately|at|only|just|generally|normally|often|up\s+to|max(?:imum)?|under|"
    rf"below|at\s+most|actually|really|now|more\s+like|closer\s+to|instead)\s*)*(?P<a>{NUM})(?![\dkK]|[.,]\d)(?P<plus>\+)?(?!\s*(?:-|to|t/s|tokens?\b|toks?\b|tok/s|tokens?\s*/|tokens?\s+(?:a|per)"
    rf"\s+s|ms|s\b|sec|seconds?|minutes?|%|gb|users|people|x\b|b\b|words|pages|lines))", re.I)
# A labelled range without a unit: "answers 200-600", "outputs of 300 to 500" (tokens; its middle is used).
_LABEL_RANGE = re.compile(
    rf"(?<!system )\b(?P<k>prompts?|inputs?|answers?|outputs?|responses?|repl(?:y|ies)|completions?)\s*"
    rf"(?:(?:are|is|of|=|:|~|around|about|usually|typically|roughly|mostly|between)\s*)*(?P<a>{NUM})\s*(?:-|–|to)\s*"
    rf"(?P<b>{NUM})(?![\d])(?![.,]\d)(?!\s*(?:t/s|tok/s|tokens?\s*/|tokens?\s+(?:a|per)\s+s|ms|s\b|sec|seconds?|minutes?|%|gb|"
    r"users|people|x\b|b\b|words|pages|lines|paragraphs|sentences))", re.I)
_NUM_KIND = re.compile(
    rf"(?<![\w.,])(?P<a>{NUM})\s*(?:-\s*)?(?:tokens?\s+)?(?P<k>completions?|answers?|outputs?|responses?|repl(?:y|ies)|"
    r"generations?|prompts?|inputs?)\b(?!\s*(?:per|/|a\s+(?:day|minute|hour|second)|an\s+hour|each\s+(?:day|hour)|"
    r"every|an?\s+min))", re.I)
# Two lengths said in one style: label first ("input 2048 output 256", "in 2048 out 256") or number first
# ("2048 in / 256 out", "3000 prompt 400 answer"). Read as pairs first, so a number between two labels ("input 2048
# output 256") is not given to the label after it.
_LEN_WORD = r"(?:prompts?|inputs?|in|outputs?|out|answers?|responses?|completions?|gen(?:eration)?)"
_SEP = r"\s*(?:tokens?|toks?)?\s*(?:[,;/&+|]|\band\b)?\s*"
_PAIR_LABEL_FIRST = re.compile(rf"(?<![\w.])(?P<k1>{_LEN_WORD})\s*[:=]?\s*(?P<a>{NUM}){_SEP}(?P<k2>{_LEN_WORD})\s*[:=]?\s*"
                               rf"(?P<b>{NUM})(?![\w.]|\s*(?:t/s|tok/s|tokens?\s*/))", re.I)
_PAIR_NUMBER_FIRST = re.compile(rf"(?<![\w.,])(?P<a>{NUM})\s*(?:tokens?\s+)?(?P<k1>{_LEN_WORD})\b{_SEP}(?P<b>{NUM})\s*"
                                rf"(?:tokens?\s+)?(?P<k2>{_LEN_WORD})\b", re.I)


def _len_kind(word: str) -> str:
    return "prompt" if word.lower().startswith(("prompt", "in")) else "gen"


_BETWEEN = re.compile(rf"\bbetween\s+(?P<a>{NUM})\s+and\s+(?P<b>{NUM})\s*(?P<unit>tokens?|words?)\b", re.I)
_AGGREGATE = re.compile(r"\baggregate\b|\btotal\s+(?:throughput|output|generation|decode|tok|tokens?)|\bin\s+total\b|"
                        r"\bcombined\b|\boverall\s+throughput|\bsummed\b|\bacross\s+(?:all\s+)?(?:the\s+)?\d+\s+"
                        r"(?:streams|users|requests|sequences)|\bover\s+\d+\s+(?:streams|sequences|concurrent)", re.I)
_KINDS_LEN = {
    "gen": re.compile(r"answer|response|repl(?:y|ies)|output|generat\w*|completion|\bwrit\w*|\bgen\b|summary|essay", re.I),
    "prompt": re.compile(r"prompt|context|\binput|document|\bdocs?\b|\bfiles?\b|pdf|question|query|quer(?:y|ies)|"
                         r"message|\bask|\bpaste|\bfeed|\bsend|\btext\b", re.I),
}


def _tok(v: float) -> int:
    return int(round(v))


def _window(raw: str) -> int | None:
    v = parse_num(raw)
    if v is None:
        return None
    m = re.fullmatch(r"\s*(\d+)\s?[kK]\s*", raw)
    if m and int(m.group(1)) in _POW2:
        return int(m.group(1)) * 1024
    return _tok(v)


_RATE_AT = re.compile(rf"{_RATE_UNIT}\s*(?:on|at|with|for|over)\s*(?:an?\s+|the\s+)?(?:~|about\s+)?$", re.I)


_PASTED_DOCS = re.compile(r"\b(?:past(?:e|es|ing|ed)|feed(?:ing)?|drop(?:ping)?|upload(?:ing)?)\b[^.?!]{0,30}\b(?:docs?|"
                          r"documents?|files?|pdfs?|articles?|papers?|reports?|code|transcripts?|chapters?)\b[^.?!]{0,20}$",
                          re.I)


# "when the context reaches 30k", "once the chat gets to 20k tokens": how deep the conversation is when the rate is said
_CTX_REACHES = re.compile(r"\b(?:context|ctx|conversation|chat|history)\s+(?:reaches|hits|gets\s+to|grows\s+to|is\s+at|"
                          r"passes|goes\s+(?:past|over|above)|gets\s+(?:past|over|above)|fills\s+(?:up\s+)?to)\s+"
                          r"(?:about\s+|around\s+|~)?(?P<a>\d+(?:\.\d+)?\s?[kK])(?:\s*tokens?)?\b", re.I)


def extract_context_window(msg: Msg, ext: Extraction) -> None:
    """Read the allocated context (``num_ctx 32768``, "4k ctx is plenty"): KV-cache size, not the prompt."""
    for m in msg.finditer(_CTX_REACHES):
        v = _window(m.group("a"))
        msg.claim(m.start(), m.end())
        if v is not None and 256 <= v <= MAX_TOKENS and ext.depth is None:
            ext.depth = _tok(v)
            ext.note(f"'{m.group(0).strip()}': judged with {fmt(_tok(v))} tokens already in the context.")
    for pat in (_CTX_AFTER, _CTX_BEFORE):
        for m in msg.finditer(pat):
            before = msg.orig[max(0, m.start() - 12):m.start()].lower()
            if pat is _CTX_BEFORE and re.search(r"\bof\s*$|\btokens?\s+of\s*$", before):
                continue
            if re.match(r"(?:context|ctx)\b", m.group(0), re.I) and re.search(
                    r"\b(?:codebase|code|repo|repository|project|document|doc|file|retrieved|rag|search)\s*$", before):
                continue  # "the codebase context is 40k tokens": what is sent (a prompt), not the window allocated
            if pat is _CTX_AFTER and re.match(r"(?:context|ctx)\s*(?:of)?\s*$", m.group(0)[:m.start("a") - m.start()],
                                              re.I) and re.search(r"tokens?\s+of\s*$", before):
                continue
            v = _window(m.group("a"))
            if v is not None and v > MAX_TOKENS:
                msg.claim(m.start(), m.end())
                ext.reject(f"'{m.group(0).strip()}' is no context window a model has (at most {fmt(MAX_TOKENS)} "
                           "tokens); I ignored it.")
                continue
            if v is None or not 256 <= v <= MAX_TOKENS:
                continue
            msg.claim(m.start(), m.end())
            if _PASTED_DOCS.search(msg.orig[max(0, m.start() - 50):m.start()]) and ext.prompt_tokens is None:
                # "pasting in long docs like 8k context": the documents pasted are the prompt, at that length
                ext.prompt_tokens = _tok(v)
                ext.note(f"{m.group(0).strip()} of pasted documents: read as the prompt ({fmt(v)} tokens).")
                continue
            if _RATE_AT.search(msg.orig[max(0, m.start() - 40):m.start()]):
                # "~300 tok/s on 10k context": the prompt the rate was measured at, not a window
                if ext.prompt_tokens is None:
                    ext.prompt_tokens = _tok(v)
                    ext.note(f"{m.group(0).strip()}: the prompt length the rate was measured at ({fmt(v)} tokens).")
                continue
            if ext.context_window is None:
                ext.context_window = v
                ext.note(f"Context window {fmt(v)} tokens: it sizes the KV cache; it is not the prompt length.")


def extract_depth(msg: Msg, ext: Extraction) -> None:
    """Tokens already in the context: "my chats are maybe 5k deep"."""
    for m in msg.finditer(_DEEP, limit=1):
        v = parse_num(m.group("a"))
        msg.claim(m.start(), m.end())
        if v is not None and 1 <= v <= MAX_TOKENS and ext.depth is None:
            ext.depth = _tok(v)
            ext.note(f"'{m.group(0).strip()}': {fmt(_tok(v))} tokens already in the context (depth).")


def extract_ttft(msg: Msg, ext: Extraction, *, after_wait: bool = False) -> None:
    """Read a measured time to first token ("40 seconds before the first word", "TTFT 2.5 s"). ``after_wait``: the
    conversation already complains of that wait, so a short follow-up's bare duration ("like 20 seconds after a
    break") is it."""
    bare = after_wait and len(msg.orig) <= 160 and not re.search(
        r"\btok|token|words?\b|answer|response|repl|output|prompt|context|generat|writ|stream|load|download", msg.orig, re.I)
    for m in msg.finditer(_DURATION):
        before = msg.before(m.start(), 80)
        if _FILLER.fullmatch(before):  # "first token takes forever, like 30 seconds": the clause before says what
            start = m.start() - len(before)
            while start > 0 and msg.orig[start - 1] in " ,;:-–—(":
                start -= 1
            before = msg.before(start, 160, _SENTENCE) + " " + before  # the whole sentence before says what
        clause = before + " " + msg.after(m.end(), 80)
        if not (TTFT_WORDS.search(clause) or bare) or _LOAD_WORDS.search(msg.before(m.start(), 30)
                                                                          + msg.after(m.end(), 30)):
            continue
        raw, unit = m.group("n").lower(), m.group("u").lower()
        n = 1.0 if raw in ("a", "an") else 0.5 if raw.startswith("half") else parse_num(raw)
        if n is None:
            continue
        lo = parse_num(m.group("lo")) if m.group("lo") else None
        if lo is not None and 0 < lo <= n:
            n = (lo + n) / 2  # "5 to 7 seconds": a stated range keeps its middle
        secs = n / 1000 if unit.startswith("m") and unit not in ("min", "mins", "minute", "minutes") else \
            n * 60 if unit.startswith("min") else n * 3600 if unit.startswith("h") else n
        msg.claim(m.start(), m.end())
        if re.search(r"(?:^|[\s(:=~])[-−]\s*$", msg.orig[max(0, m.start() - 3):m.start()]) and not m.group("lo"):
            ext.reject(f"'-{m.group(0).strip()}' is a negative wait; I ignored it.")
            continue
        if _TTFT_TARGET.search(msg.before(m.start(), 40)):
            if 0 < secs <= 1e5 and ext.target_ttft_s is None:
                ext.target_ttft_s = round(secs, 3)
                ext.note(f"Time to first token of {fmt_s(secs)} is a target, not a measurement.")
            continue
        if 0 < secs <= 1e5 and ext.measured_ttft_s is None:
            ext.measured_ttft_s = round(secs, 3)
            ext.note(f"Time to first token measured: {fmt_s(secs)}.")


def _set_len(ext: Extraction, kind: str, tokens: float, note: str) -> None:
    field = "gen_tokens" if kind == "gen" else "prompt_tokens"
    if getattr(ext, field) is None and 1 <= tokens <= MAX_TOKENS:
        setattr(ext, field, _tok(tokens))
        if note:
            ext.note(note)


_SMALL = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5}


def _vague_count(q: str, or_more: bool) -> tuple[float, float]:
    """How many sentences/paragraphs/pages: "a" → 1, "one or two" → (1, 2), "half a" → 0.5, "a few" → 3."""
    q = re.sub(r"\s+", " ", q.lower())
    if q.startswith("half"):
        return 0.5, 0.5
    if q.startswith("a couple"):
        return 2.0, 2.0
    if q.startswith("a few"):
        return 3.0, 3.0
    vals = [float(_SMALL[w]) if w in _SMALL else float(w) for w in re.findall(r"\d+|[a-z]+", q) if w in _SMALL or w.isdigit()]
    lo, hi = (min(vals), max(vals)) if vals else (1.0, 1.0)
    if or_more:
        hi = max(hi, lo + 1)
    return lo, hi


def extract_vague_lengths(msg: Msg, ext: Extraction) -> None:
    """Sentences, paragraphs, pages, "short questions", "long answers", "400 out", "prompt 2k", ranges."""
    for m in msg.finditer(_BETWEEN):
        a, b = parse_num(m.group("a")) or 0, parse_num(m.group("b")) or 0
        if not 0 < a <= b:
            continue
        f = 4 / 3 if m.group("unit").lower().startswith("word") else 1
        kind = nearest_kind(msg, m.start(), m.end(), _KINDS_LEN) or "prompt"
        msg.claim(m.start(), m.end())
        mid = (a + b) / 2 * f
        if kind == "prompt" and ext.prompt_tokens is None:
            ext.prompt_range = (_tok(a * f), _tok(b * f))
        _set_len(ext, kind, mid, f"A range of {fmt(a)}–{fmt(b)} {m.group('unit')}: kept, using its middle "
                                 f"({fmt(_tok(mid))} tokens).")
    for m in msg.finditer(_LABEL_RANGE):
        a, b = parse_num(m.group("a")) or 0, parse_num(m.group("b")) or 0
        if re.search(r"\d\s?[kK]$", m.group("b").strip()) and not re.search(r"[kK]", m.group("a")) and a * 1000 <= b:
            a *= 1000  # "2-4k": the k belongs to both ends
        if not (0 < a <= b and b >= 20):
            continue
        k = m.group("k").lower()
        kind = "prompt" if k.startswith(("prompt", "input")) else "gen"
        msg.claim(m.start("a"), m.end())
        if kind == "prompt" and ext.prompt_tokens is None:
            ext.prompt_range = (_tok(a), _tok(b))
        _set_len(ext, kind, (a + b) / 2, f"A range of {fmt(a)}–{fmt(b)} tokens: kept, using its middle "
                                         f"({fmt(_tok((a + b) / 2))} tokens).")
    for pat in (_PAIR_NUMBER_FIRST, _PAIR_LABEL_FIRST):
        for m in msg.finditer(pat):
            k1, k2 = _len_kind(m.group("k1")), _len_kind(m.group("k2"))
            pa, pb = parse_num(m.group("a")), parse_num(m.group("b"))
            if k1 == k2 or pa is None or pb is None or pa < 10 or pb < 10:
                continue
            if pat is _PAIR_NUMBER_FIRST and any(  # "50 prompts and 20 answers" are counts: a plural needs a k
                    re.search(r"(?:s|ies)$", m.group(k), re.I) and not re.search(r"[kK]", m.group(n))
                    for k, n in (("k1", "a"), ("k2", "b"))):
                continue
            msg.claim(m.start(), m.end())
            _set_len(ext, k1, pa, "")
            _set_len(ext, k2, pb, "")
    for m in msg.finditer(_IN_OUT):
        v = parse_num(m.group("a"))
        if v is None or v < 10:
            continue
        kind = "gen" if m.group("o") else "prompt"
        msg.claim(m.start(), m.end())
        _set_len(ext, kind, v, "")
    for m in msg.finditer(_VAGUE):
        lo, hi = _vague_count(m.group("q"), bool(m.group("or2")) and "so" not in (m.group("or2") or ""))
        unit = m.group("u").lower().rstrip("s")
        words = {"sentence": WORDS_PER_SENTENCE, "paragraph": WORDS_PER_PARAGRAPH, "page": WORDS_PER_PAGE}[unit]
        kind = nearest_kind(msg, m.start(), m.end(), _KINDS_LEN) or ("gen" if unit != "page" else "prompt")
        if re.search(r"\b(?:into|as|down\s+to|(?<!up\s)to)\s*$", msg.orig[max(0, m.start() - 12):m.start()], re.I):
            kind = "gen"  # "summarise PDFs into one paragraph": what comes out
        msg.claim(m.start(), m.end())
        mid_words = (lo + hi) / 2 * words
        tokens = mid_words / WORDS_PER_TOKEN
        rng = f"{fmt(lo)}–{fmt(hi)} {unit}s" if hi != lo else f"{fmt(lo)} {unit}{'s' if lo > 1 else ''}"
        said = m.group(0).strip()
        # "a few pages ≈ 2–4 pages ≈ …", but "20 pages ≈ 10,000 words" (the range said once when it is what was written)
        head = said if re.sub(r"[\s–-]+", "", said.lower()) == re.sub(r"[\s–-]+", "", rng.lower()) else f"{said} ≈ {rng}"
        _set_len(ext, kind, tokens, f"{head} ≈ {fmt(round(mid_words))} words ≈ {fmt(_tok(tokens))} "
                                   f"tokens (a sentence ≈ {WORDS_PER_SENTENCE} words, a paragraph ≈ 100–150, a page ≈ "
                                   f"{WORDS_PER_PAGE}; 0.75 words per token).")
    for m in msg.finditer(_NUM_KIND):
        v = parse_num(m.group("a"))
        k = m.group("k").lower()
        # "3k prompt", "400 completion" are lengths; "50 prompts" may be a count, so a plural needs the k.
        if v is None or not (re.search(r"[kK]", m.group("a")) or (v >= 50 and not k.endswith(("s", "ies")))):
            continue
        kind = "prompt" if k.startswith(("prompt", "input")) else "gen"
        msg.claim(m.start(), m.end())
        _set_len(ext, kind, v, "")
    for m in msg.finditer(_LABEL_LEN):
        v = parse_num(m.group("a"))
        if v is None or (v < 100 and not re.search(r"[kK]", m.group("a"))):
            continue
        k = m.group("k").lower()
        kind = "prompt" if k.startswith(("prompt", "input")) else "gen"
        msg.claim(m.start("a"), m.end())
        _set_len(ext, kind, v, f"'{m.group(0).strip()}' read as {fmt(_tok(v))} tokens" + (" (at least)." if m.group("plus")
                                                                                        else "."))
    if ext.prompt_tokens is None and (q := _SHORT_Q.search(msg.s)):
        _set_len(ext, "prompt", SHORT_QUESTION_TOKENS, f"'{q.group(0)}' taken as about {SHORT_QUESTION_TOKENS} tokens "
                                                        "each (a short question).")
    if ext.gen_tokens is None and (la := _LONG_A.search(msg.s)):
        _set_len(ext, "gen", LONG_ANSWER_TOKENS, f"'{la.group(0)}' taken as about {LONG_ANSWER_TOKENS:,} tokens each.")


_SERVING = re.compile(r"\bthroughput\b|\bat\s+(?:a\s+)?concurrency\b|\bwith\s+\d+\s+(?:concurrent|parallel)\b", re.I)


# A rate said to be one stream's: "each user gets 25 tok/s", "25 tok/s per user", "every request streams at 30 t/s".
_PER_STREAM = re.compile(r"\b(?:each|every|per|a\s+single)\s+(?:users?|requests?|streams?|sequences?|persons?|people|"
                         r"clients?|sessions?|conversations?|chats?)\b|\b(?:per|each)[\s-]user\b", re.I)


def mark_aggregate(msg: Msg, ext: Extraction) -> None:
    """A measured rate summed over several streams ("1200 tok/s aggregate over 32 streams"); serving words alone
    ("with 20 concurrent users") do not make it one when the rate is said to be each user's."""
    several = (ext.concurrency or 1) > 1 and _SERVING.search(msg.orig) and not _PER_STREAM.search(msg.orig)
    if ext.measured_decode_tps is not None and (_AGGREGATE.search(msg.orig) or several):
        ext.measured_is_aggregate = True
        ext.note("The generation rate is a total over all streams (aggregate), not one stream's speed.")
