"""Workload facts in chat text: prompt and answer lengths, use, measured speeds (users and request rates:
:mod:`advisor.intake._people`; the words around a paste: :mod:`advisor.intake._paste`).

Lengths given in words, pages or lines of code are converted to tokens, and every conversion is
written to the notes:

* words → tokens: × 4/3 (OpenAI's rule of thumb: about 0.75 English words per token);
* pages → words: × 500 (a page of prose), then as words;
* lines of code → tokens: × 10 (an ESTIMATE; real code runs 7–15 tokens per line).
"""

from __future__ import annotations

import math
import re

from advisor.intake._schema import Extraction
from advisor.intake._text import NUM, Msg, fmt, nearest_kind, parse_num
from advisor.models import MAX_TOKENS

WORDS_PER_TOKEN = 0.75
WORDS_PER_PAGE = 500
TOKENS_PER_LINE_OF_CODE = 10
SHORT_ANSWER_TOKENS = 150
LONG_ANSWER_TOKENS = 1_000
MAX_RATE_TPS = 1_000_000.0

_TOKENS = re.compile(
    rf"(?P<neg>(?<![\w.,)-])-\s?)?(?:~|about\s+|around\s+|roughly\s+)?(?<![\w.,])(?P<a>{NUM})"
    rf"(?:\s*(?:-|to)\s*(?P<b>{NUM}))?\+?\s*(?:-\s*)?"
    r"(?P<unit>tokens?|toks?|words?|pages?|lines?(?:\s+of\s+code)?|loc|context|ctx)\b(?!\s*/\s*s|\s+per\s+s)",
    re.I,
)
_CONTEXT_OF = re.compile(rf"\b(?:depth)\s*(?:of|is|=|:)?"
                         rf"\s*(?:about|around|~)?\s*(?P<a>{NUM})\b(?!\s*(?:tok|words|lines|pages))", re.I)
_K_PROMPT = re.compile(r"(?<![\w.])(?P<a>\d+(?:\.\d+)?\s?[kK])\s*-?\s*(?P<w>system\s+prompts?|prompts?|inputs?|documents?)\b",
                       re.I)
# Token counts in Chinese, Japanese or Korean text ("プロンプトは8000トークンです", "输入 8000 个 token", "8000 토큰"): CJK
# characters are word characters, so the unit has no \b after it.
_CJK_TOKENS = re.compile(rf"(?<![\d.,])(?P<a>{NUM})\s*(?:個|个)?\s*(?:トークン|토큰|tokens?(?![a-z]))", re.I)
# "if i paste 32k?", "feed it 100k": a bare thousands count after a verb that hands the model text is a prompt length
_PASTE_K = re.compile(r"\b(?:paste|pasting|feed|feeding|send|sending|upload|uploading|dump|dumping|throw|give\s+it|"
                      r"hand\s+it)\s+(?:it\s+|in\s+|it\s+in\s+)?(?:a\s+|an\s+)?(?:about\s+|around\s+|~)?"
                      r"(?P<a>\d+(?:\.\d+)?\s?[kK])\b(?!\s*(?:t/s|tok|/s|words|lines|pages|requests?|reqs?|queries|calls|messages|"
                      r"users?|people|emails|documents|docs|files|times|per\b|a\s+(?:day|month|week|hour)|each))", re.I)
_GEN_FLAG = re.compile(rf"(?:\bmax[_\s]tokens|\bnum_predict|(?<![\w-])-n|--n-predict)\s*[=:]?\s*(?P<a>{NUM})\b", re.I)
_KINDS = {
    "shared": re.compile(r"system\s+prompt|\bshared\b|\bprefix\b|every\s+request|all\s+requests|\bcached\b|preamble", re.I),
    "gen": re.compile(r"answer|response|repl(?:y|ies)|output|generat\w*|completion|\bwrit\w*|max[_\s]tokens|\bgen\b|"
                      r"\bantwort\w*|\brespuestas?\b|\br[ée]ponses?\b|\brispost\w*|\bответ\w*|回答|回复|输出|出力|応答|답변|출력|"
                      r"\bessays?\b|\bsummar(?:y|ies)\b|\bstor(?:y|ies)\b|\barticles?\b",
                      re.I),
    "depth": re.compile(r"\bdepth\b|\bdeep\b|already\s+(?:in|has|have|holds|contains|at|is\s+at|sits\s+at)\b|history|"
                       r"so\s+far|into\s+the\s+(?:chat|conversation)|\bconversations?\b|\bchats?\s+(?:run|grow|get)s?\b|"
                       r"\b(?:chat|thread)s?\b(?!\s+(?:messages?|prompts?|questions?|apps?|ui|bots?|models?|templates?|"
                       r"interface|use))",
                       re.I),
    "prompt": re.compile(r"prompt|context|\binput|document|\bdocs?\b|\bfiles?\b|pdf|codebase|repo|question|query|"
                         r"\beingabe\w*|\bentrada\b|\bentr[ée]e\b|プロンプト|提示词|输入|入力|프롬프트|"
                         r"message|\bask|\bturns?\b|transcripts?", re.I),
}
_WIDE_KINDS = {k: _KINDS[k] for k in ("gen", "prompt")}  # a whole sentence may say which; a shared part is said close
_LABELS = {"prompt": "Prompt length", "gen": "Answer length", "shared": "Shared prefix (prompt part every request "
           "repeats)", "depth": "Context depth (conversation already in the context)"}
_TOTAL = re.compile(r"\b(?:in\s+total|total|in\s+all|including|includes|altogether)\b", re.I)
_QUALITATIVE = re.compile(r"\b(?P<len>short|brief|quick|concise|long|detailed|lengthy)\s+(?:answers?|responses?|"
                          r"repl(?:y|ies)|outputs?)\b"
                          # the other way round: "answers are long", "replies tend to be pretty short"
                          r"|\b(?:answers?|responses?|repl(?:y|ies)|outputs?)\s+(?:are|is|will\s+be|can\s+be|tend\s+to\s+be|"
                          r"should\s+be)\s+(?:usually\s+|often\s+|mostly\s+|pretty\s+|quite\s+|fairly\s+|very\s+|really\s+|"
                          r"rather\s+)*(?P<len2>short|brief|concise|long|detailed|lengthy)\b", re.I)

_USES = (
    ("coding_agent", re.compile(r"\bcod(?:ing|e)[\s-]+(?:agent|assistant|completion|autocomplete)|\bagentic\b|"
                                r"(?<!mouse )\bcursor\b|\bcontinue\.dev\b|\bcontinue\s+(?:extension|plugin)|\baider\b|"
                                r"\bcline\b|\broo\s?code\b|\b(?:using|with|via|in|w/)\s*Continue\b|\bvs\s?code\b|\bneovim\b|\bjetbrains\b|\bzed\b|\bwindsurf\b|\bcopilot\b|\bclaude\s+code\b|\bopencode\b|\bcodex\b", re.I)),
    ("rag", re.compile(r"\brag\b|\bretrieval\b|\bknowledge\s+base\b|\b(?:over|with|across)\s+(?:my|our|the|all\s+(?:my|our|the))\s+(?:[\w-]+\s+){0,2}?(?:documents|docs|"
                       r"pdfs|notes|files|wiki|manuals|papers|contracts|tickets)\b|\bquestion[\s-]answering\b|\bdocument\s+q\s?&\s?a\b|\bsearch\s+(?:over|through)\b", re.I)),
    ("summarising", re.compile(r"\bsummar(?:i[sz]\w*|y|ies)\b|\btl;?dr\b", re.I)),
    ("batch", re.compile(r"\bbatch\s+(?:jobs?|processing|inference|mode|work)\b|\bbulk\b|\boffline\s+(?:jobs?|"
                         r"processing)\b|\bovernight\b|\bnightly\b|\b(?:a|in|as)\s+batch\b(?!\s*(?:size|of|=|:|\d))|\bclassify\s+(?:thousands|millions|\d)", re.I)),
    ("coding_agent", re.compile(r"\bfor\s+(?:coding|programming)\b|\bcoding\b", re.I)),
)
_CHAT = re.compile(r"\bchat\w*\b|\bconversation\w*\b|\bassistant\b|\btalk(?:ing)?\s+to\b", re.I)

_RATE_UNIT = (r"(?:tok(?:en)?s?\s*/\s*s(?:ec(?:ond)?)?\b|t/s\b|tk/s\b|tps\b|tokens?[\s-]+(?:per|a|each)[\s-]+sec(?:ond)?\b|"
              r"tokens?\s+per\s+s\b)")  # "tokens-per-sec": mlx_lm.generate's own words
_RATE = re.compile(rf"(?<![\w.])(?:(?:between\s+)?(?P<lo>{NUM})\s*(?:-|to|and)\s*)?(?P<n>-?{NUM})\s*(?:±\s*{NUM}\s*)?"
                   rf"{_RATE_UNIT}", re.I)
# A rate that is no number ("NaN tok/s", "∞ t/s", "0x10 tok/s"): said back as ignored, never read silently as nothing.
_NOT_A_RATE = re.compile(rf"(?<![\w.])(?P<v>nan|[+-]?inf(?:inity)?|[+-]?∞|0x[0-9a-f]+|-?{NUM}\s*/\s*0(?![\d.]))\s*{_RATE_UNIT}",
                         re.I)
# A rate someone needs is a target, not a measurement ("we need at least 20 tok/s per user").
_TARGET = re.compile(r"\b(?:need|needs|want|wants|require[sd]?|target|goal|at\s+least|minimum|min\.?|sla|must|aim\w*|"
                     r"hoping\s+for|looking\s+for|should\s+(?:get|be|hit|reach)|acceptable|ok\s+with|fine\s+with)\b"
                     r"|\b(?:expect(?:ed|ing)?|supposed\s+to|spec(?:s|ed)?\s+say)\b"
                     # German, Spanish, French: "ich brauche etwa 20 Token pro Sekunde", "necesito 10", "il me faut 15"
                     r"|\b(?:brauche[n]?|benötige[n]?|möchte[n]?|wollen|mindestens|necesit[oa]|necesitamos|quiero|"
                     r"queremos|al\s+menos|como\s+m[ií]nimo|besoin|veux|voudrais|voulons|il\s+(?:me|nous)\s+faut|"
                     r"au\s+moins|"
                     # Russian: "нужно хотя бы 20 токенов в секунду", "минимум 15"
                     r"нужн[оа]|надо|хотя\s+бы|минимум|как\s+минимум|хоч[уе]|хотим|требуется)\b", re.I)
# A question whether the machine can reach a rate ("can an H100 serve 30 users at 20 tok/s each?", "will an L4 give
# 15 tok/s per user?"): the rate is what they want, not what they measured. The sentence opens with the modal
# (within two words) and ends with "?"; words of a measurement ("I get", "only", "normal?") keep it a measurement.
_ABILITY_Q = re.compile(r"^\s*(?:\W*[\w']+\W+){0,2}?(?:can|could|will|would|does|do|is\s+it\s+possible\s+to|"
                        r"are\s+we\s+able\s+to|am\s+i\s+able\s+to)\b.*\b(?:serve|run|give|get|reach|hit|do|deliver|"
                        r"manage|handle|sustain|keep|hold|stream|generate|support|achieve|push|make|provide)\b", re.I | re.S)
_MEASURED_Q = re.compile(r"\b(?:i|we)\s+(?:only\s+)?(?:get|got|see|saw|measured?|am\s+getting|are\s+getting)\b|"
                         r"\b(?:i'm|we're)\s+getting\b|\bonly\b|\bcurrently\b|\bnormal\b|\bexpected\b|\bright\b|\bwhy\b",
                         re.I)
# The same question in German, Spanish and French (the sentence opens with the modal), or asking whether a rate is
# possible, or how many users get it.
_ABILITY_OTHER = re.compile(r"^\W*(?:[\w']+\W+){0,2}?(?:schafft|schaffen|kann|k[öo]nnen|k[öo]nnte|packt|puede|pueden|"
                            r"podr[ií]a|podr[aá]|puedo|podemos|peut|peuvent|pourrait|pourra|est-ce\s+qu)", re.I)
_POSSIBLE = re.compile(r"\b(?:possible|achievable|realistic|doable|feasible|m[öo]glich|posible|r[ée]aliste)\b", re.I)
# ... and in Chinese, Japanese, Korean, where the question follows the rate ("每秒 35 tokens 能达到吗？")
_POSSIBLE_CJK = re.compile(r"能达到|能不能|可以达到|达得到|能跑到|能否|能做到|可以吗|できますか|可能ですか|出せますか|가능|될까")
_HOW_MANY_Q = re.compile(r"\bhow\s+many\b|\bwie\s+viele\b|\bcu[aá]ntos\b|\bcombien\b", re.I)
_SENTENCE_END = re.compile(r"[.!?](?=\s|$)|\n")  # not the dot of "3.1" or "2.5"


def _asks_for_rate(msg: Msg, start: int, end: int) -> bool:
    """The rate at ``[start, end)`` sits in a question whether the machine can reach it (:data:`_ABILITY_Q`)."""
    head = msg.orig[max(0, start - 200):start]
    cuts = list(_SENTENCE_END.finditer(head))
    head = head[cuts[-1].end():] if cuts else head
    tail = msg.orig[end:end + 120]
    stop = _SENTENCE_END.search(tail)
    asked = stop.group(0) == "?" if stop else msg.orig.rstrip().endswith("?")
    sentence = head + " " + (tail[:stop.start()] if stop else tail)
    if _MEASURED_Q.search(sentence) is not None:
        return False
    if asked and (_ABILITY_OTHER.search(head) or _POSSIBLE.search(sentence) or _POSSIBLE_CJK.search(sentence)
                  or _HOW_MANY_Q.search(head)):
        return True  # "is 20 tok/s possible…?", "Schafft eine 4070 20 Token pro Sekunde?", "how many users … 25 tok/s each?"
    if _HOW_MANY_Q.match(head.lstrip()):
        return True  # "how many H100s do we need for 100 users at 20 tok/s each" (no "?" typed)
    # The question may open after the machine, past a comma: "Jetson Orin Nano 8GB, can it run llama 3.2 3b at 10 tok/s?"
    clause = re.split(r"[,;:]\s+|\s[-–—]\s", head)[-1]
    if _ABILITY_Q.search(clause) is not None and asked:
        return True
    if _ABILITY_Q.search(head) is None:
        return False
    # without its "?", only a sentence that opens with the modal ("will a 5090 get 100 tok/s"), not "I can get …"
    return asked or re.match(r"\s*(?:can|could|will|would|does|do|is\s+it\s+possible)\b", head, re.I) is not None


def _wanted(msg: Msg, start: int, end: int) -> re.Match[str] | str | None:
    """A rate someone wants, not one they measured: a target word before it (:data:`_TARGET`; its match), or a
    question whether the machine can reach it (:func:`_asks_for_rate`; ``"asked"``)."""
    t = _TARGET.search(msg.before(start, 40))
    if t is not None:
        return t
    return "asked" if _asks_for_rate(msg, start, end) else None


_WORD_RATE = re.compile(
    rf"\b(?P<lab>prompt|prefill|processing|input|predicted|prediction|generation|generating|gen|decode|decoding|output|"
    rf"eval)\s*(?:[:=]|is|was|at|of|~|≈|speed|rate|tps)?\s*(?:about\s+|around\s+|roughly\s+|like\s+|~)?"
    rf"(?P<n>{NUM})\s*{_RATE_UNIT}", re.I)
_RATE_THEN_LABEL = re.compile(rf"(?<![\w.])(?P<n>{NUM})\s*(?:{_RATE_UNIT}\s*)?(?:for\s+|on\s+|of\s+)?(?:the\s+)?"
                              r"(?P<lab>prompt[\s_]eval(?:uation)?|prompt\s+processing|prefill|pp)\b", re.I)
# The phase written between the number and the unit: "180 prompt tok/s", "14 generation t/s", "900 pp tok/s".
_NUM_LABEL_RATE = re.compile(rf"(?<![\w.])(?P<n>{NUM})\s*(?P<lab>prompt(?:\s+processing)?|prefill|pp|input|generation|gen|"
                             rf"decode|decoding|output|tg)\s+{_RATE_UNIT}", re.I)
_WPS = re.compile(rf"(?<![\w.])(?P<n>{NUM})\s*words?\s*(?:per|a|/)\s*s(?:ec(?:ond)?)?\b", re.I)
_MS_PER_TOKEN = re.compile(rf"(?<![\w.])(?P<n>{NUM})\s*(?P<u>ms|milliseconds?|s|sec|seconds?)\s*(?:/|per)\s*tok(?:en)?\b",
                           re.I)
_LABELLED = re.compile(rf"\b(?P<lab>pp|tg|prompt[\s_]eval(?:[\s_]rate)?|(?<!prompt )(?<!prompt_)eval(?:[\s_]rate)?)\s?(?P<len>(?<=p|g)\d+)?(?:\s*(?:[:=]|is|was|at|of|@|~|≈)\s*|\s+)(?:about\s+|around\s+|~)?"
                       rf"(?P<n>{NUM})(?:\s*±\s*{NUM})?(?:\s*{_RATE_UNIT})?", re.I)
# A phase word right before a number, and a number right after a label: the "label number unit" style of writing
_PHASE_BEFORE = re.compile(r"\b(?:prompt|prefill|processing|input|generation|generating|gen|decode|decoding|output|"
                           r"eval)\s*(?:[:=]|is|was|at|of|~|≈|speed|rate)?\s*(?:about\s+|around\s+|~)?$", re.I)
_NUM_NEXT = re.compile(r"\s*(?:[:=]|is|was|at|of|~|≈)?\s*(?:about\s+|around\s+|~)?\d", re.I)
_RATE_KINDS = {
    "prefill": re.compile(r"prompt\s*(?:is\s+|being\s+|gets\s+)?(?:process\w*|eval\w*|ingest\w*|speed|rate|read\w*)|"
                          r"^\s*(?:for\s+(?:the\s+)?)?prompts?\b(?!\s+(?:of|is|are|with|length|size))|"
                          r"prefill|pre-fill|\bpp\b|"
                          r"processing|\binput\b|reading", re.I),
    "decode": re.compile(r"generation|generat\w*|\btg\b|decod\w*|(?<!prompt )eval\s+rate|output|writ\w*|stream\w*|"
                         r"tokens?\s+out|\bgen\b|typing|response", re.I),
}
# ----------------------------------------------------------------------------- lengths
def _token_value(ext: Extraction, m: re.Match[str]) -> tuple[int, str, tuple[int, int] | None] | None:
    """Tokens for one mention, with how they were converted; None when the value is rejected."""
    a = parse_num(m.group("a")) or 0.0
    b = parse_num(m.group("b")) if m.group("b") else None
    if b is not None and re.search(r"\d\s?[kK]$", m.group("b").strip()) and not re.search(r"[kKmM]", m.group("a")) \
            and a * 1000 <= b:
        a *= 1000  # "5–10k tokens": the k belongs to both ends
    unit = m.group("unit").lower()
    raw = m.group(0).strip()
    if m.group("neg"):
        ext.reject(f"'{raw}' is a negative length; I ignored it.")
        return None
    how = []
    rng: tuple[float, float] | None = None
    if b is not None and b >= a:
        how.append(f"kept the range {fmt(a)}–{fmt(b)} and used its middle, {fmt((a + b) / 2)}")
        rng = (a, b)
        a = (a + b) / 2
    if unit.startswith("word"):
        tokens = a / WORDS_PER_TOKEN
        how.append(f"{fmt(a)} words ≈ {fmt(round(tokens))} tokens (about 0.75 English words per token)")
    elif unit.startswith("page"):
        tokens = a * WORDS_PER_PAGE / WORDS_PER_TOKEN
        how.append(f"{fmt(a)} pages ≈ {fmt(a * WORDS_PER_PAGE)} words ≈ {fmt(round(tokens))} tokens (about "
                   f"{WORDS_PER_PAGE} words per page, 0.75 words per token)")
    elif unit.startswith(("line", "loc")):
        tokens = a * TOKENS_PER_LINE_OF_CODE
        how.append(f"{fmt(a)} lines of code ≈ {fmt(round(tokens))} tokens (an estimate: about "
                   f"{TOKENS_PER_LINE_OF_CODE} tokens per line; real code varies from 7 to 15)")
    else:
        tokens = a
        if re.search(r"\d\s?[kKmM]", m.group("b") or m.group("a")):
            how.append(f"{(m.group('b') or m.group('a')).strip()} read as {fmt(a)} tokens")
    span = (round(rng[0] * tokens / a), round(rng[1] * tokens / a)) if rng is not None and tokens and a else None
    if not math.isfinite(tokens) or tokens < 1 or tokens > MAX_TOKENS:
        ext.reject(f"'{raw}' is not a usable length (it must be between 1 and {fmt(MAX_TOKENS)} tokens); I ignored it.")
        return None
    return round(tokens), "; ".join(how), span


# A count right after a rate in a tool's status line is the tokens written: LM Studio's "7.12 tok/sec • 612 tokens •
# 38.40s to first token", text-generation-webui's "(33.24 tokens/s, 510 tokens, context 3200" (FORMATS.md §7, §8).
_AFTER_RATE = re.compile(r"(?:tok/sec|tok/s|t/s|tokens?/s(?:ec)?)\s*[•·|,]\s*$", re.I)


def extract_lengths(msg: Msg, ext: Extraction) -> None:
    """Read prompt, answer, shared-prefix and depth lengths (tokens, words, pages, lines of code)."""
    seen: dict[str, tuple[int, str]] = {}
    for m in msg.finditer(_TOKENS):
        msg.claim(m.start(), m.end())
        val = _token_value(ext, m)
        if val is None:
            continue
        unit = m.group("unit").lower()
        kind = "prompt" if unit in ("context", "ctx") else "gen" if _AFTER_RATE.search(msg.before(m.start(), 24)) else \
            nearest_kind(msg, m.start(), m.end(), _KINDS) or nearest_kind(msg, m.start(), m.end(), _WIDE_KINDS, wide=True) \
            or "prompt"
        if kind == "prompt" and val[2] and "prompt" not in seen:
            ext.prompt_range = val[2]  # a range of answer lengths: only its middle is kept
        if kind not in seen:
            seen[kind] = val[:2]
    for m in msg.finditer(_CJK_TOKENS):  # after _TOKENS: only what it left (CJK text around the count)
        v = parse_num(m.group("a"))
        kind = nearest_kind(msg, m.start(), m.end(), _KINDS) or "prompt"
        msg.claim(m.start(), m.end())
        if v is not None and v > MAX_TOKENS:
            ext.reject(f"'{m.group(0).strip()}' is not a usable length (at most {fmt(MAX_TOKENS)} tokens); I ignored it.")
        elif v is not None and 1 <= v <= MAX_TOKENS and kind not in seen:
            seen[kind] = (round(v), "")
    for pat, fixed in ((_CONTEXT_OF, "depth"), (_GEN_FLAG, "gen"), (_K_PROMPT, "prompt"), (_PASTE_K, "prompt")):
        for m in msg.finditer(pat):
            k = "shared" if pat is _K_PROMPT and m.group("w").lower().startswith("system") else fixed
            v = parse_num(m.group("a"))
            msg.claim(m.start(), m.end())
            if v is not None and v > MAX_TOKENS:
                ext.reject(f"'{m.group(0).strip()}' is not a usable length (at most {fmt(MAX_TOKENS)} tokens); I "
                           "ignored it.")
            if v is not None and 1 <= v <= MAX_TOKENS and k not in seen:
                seen[k] = (round(v), f"{m.group(0).strip()} read as {fmt(round(v))} tokens of {k}" if k != "gen" else "")
    if "shared" in seen and "prompt" in seen and not _TOTAL.search(msg.orig):
        total = seen["shared"][0] + seen["prompt"][0]
        seen["prompt"] = (total, f"the shared {fmt(seen['shared'][0])} plus {fmt(seen['prompt'][0])} per request = "
                                 f"{fmt(total)} tokens per prompt")
    fields = {"prompt": "prompt_tokens", "gen": "gen_tokens", "shared": "shared_prefix_tokens", "depth": "depth"}
    for kind, (tokens, how) in seen.items():
        setattr(ext, fields[kind], tokens)
        if how:
            ext.note(f"{_LABELS[kind]}: {how}.")
    if ext.gen_tokens is None and (q := _QUALITATIVE.search(msg.s)):
        short = (q.group("len") or q.group("len2")).lower() in ("short", "brief", "quick", "concise")
        ext.gen_tokens = SHORT_ANSWER_TOKENS if short else LONG_ANSWER_TOKENS
        ext.note(f"'{q.group(0)}' taken as about {ext.gen_tokens:,} tokens per answer.")


def extract_use(msg: Msg, ext: Extraction) -> None:
    """Read what the model is for: chat, coding_agent, rag, summarising or batch."""
    specific = [(m.start(), use) for use, pat in _USES[:-1] if (m := pat.search(msg.orig))]
    if specific:
        ext.use = min(specific)[1]
    elif _USES[-1][1].search(msg.orig):
        ext.use = _USES[-1][0]
    elif _CHAT.search(msg.orig):
        ext.use = "chat"


MIN_RATE_TPS = 0.001  # a token in over 16 minutes: no rate a run reports (below it, said back as ignored)


def _set_rate(ext: Extraction, kind: str, v: float, raw: str) -> None:
    if not MIN_RATE_TPS <= v <= MAX_RATE_TPS:
        ext.reject(f"'{raw}' is not a usable speed; I ignored it.")
        return
    field = "measured_prefill_tps" if kind == "prefill" else "measured_decode_tps"
    if getattr(ext, field) is None:
        setattr(ext, field, round(v, 3) if v >= 0.1 else float(f"{v:.3g}"))  # 0.0015 stays 0.0015, never 0.002 or 0
    elif abs(v - getattr(ext, field)) > 0.1 * getattr(ext, field):
        # "30 tok/s, sometimes 110", "120 on my 4090 and 10 on my 3060": one is judged, and the other is said
        phase = "prompt-processing (prefill)" if kind == "prefill" else "generation (decode)"
        ext.note(f"'{raw}' is a second {phase} speed; I judged the first, {fmt(getattr(ext, field))} tok/s — tell me "
                 "if the other is the one to look at.")


_SECS = r"(?P<u>ms|msec|milliseconds?|s|secs?|seconds?)\b"
# Speeds written as the time a token takes: "1 token every 2 seconds", "a word every 0.5 s", "ITL 35 ms",
# "inter-token latency is 80ms", "each token takes about 100 milliseconds", "300 tokens in 20 seconds".
_INTERVALS = (
    re.compile(rf"(?<![\w.])(?:(?P<k>{NUM}|an?|one)\s+)?(?P<w>tokens?|toks?|words?)\s+(?P<c>every|each|per|in)\s+"
               rf"(?:about\s+|around\s+|roughly\s+|~)?(?P<n>{NUM}|an?|one)?\s*{_SECS}", re.I),
    re.compile(rf"\b(?:itl|inter[-\s]?token(?:\s+latency)?|time\s+between\s+tokens|tpot|time\s+per\s+(?:output\s+)?token|"
               rf"latency\s+per\s+token|per[-\s]token\s+latency|token\s+latency)"
               rf"\s*(?:\(\w+\))?\s*(?:is|was|of|=|:|~|≈|at|about|around|averages?|avg|mean|median|p50|\s)*\s*"
               rf"(?P<n>{NUM})\s*{_SECS}", re.I),
    re.compile(rf"\b(?:each|every|one|a)\s+token\s+(?:takes|took|needs|is)\s+(?:about\s+|around\s+|roughly\s+|~)?"
               rf"(?P<n>{NUM})\s*{_SECS}", re.I),
)


_MLX_LINE = re.compile(rf"\b(?P<lab>prompt|generation)\s*:\s*{NUM}\s+tokens?,\s*(?P<n>{NUM})\s*tokens?-per-sec\b", re.I)


# A phase's time with its token count: "prompt processing took 12 seconds for 8000 tokens" (prefill), Ollama's
# verbose fields written in one line, "eval count 300 tokens, eval duration 20s" (decode; "prompt eval ..." prefill).
_TIMED = (
    re.compile(rf"\b(?P<lab>prompt\s+processing|prompt\s+eval(?:uation)?|prefill|processing\s+the\s+prompt|"
               rf"reading\s+the\s+prompt|generation|generating|decod(?:e|ing))\s+(?:took|takes|is|was|lasted)\s+"
               rf"(?:about\s+|around\s+|~)?(?P<n>{NUM})\s*{_SECS}\s+(?:for|on)\s+(?:a\s+|the\s+)?(?P<k>{NUM})[\s-]*"
               rf"(?:tokens?|toks?)\b", re.I),
    re.compile(rf"(?P<lab>\bprompt\s+eval|(?<!prompt )\beval)[\s_]+count\s*[:=]?\s*(?P<k>{NUM})\s*(?:tokens?|token\(s\))?"
               rf"[,;\s]+(?P=lab)[\s_]+duration\s*[:=]?\s*(?P<n>{NUM})\s*{_SECS}", re.I),
)


def _how_many(raw: str | None) -> float | None:
    """ "a"/"an"/"one"/None → 1; a number → itself (the count or seconds of an interval)."""
    if raw is None or raw.lower() in ("a", "an", "one"):
        return 1.0
    return parse_num(raw)


def _interval_rates(msg: Msg, ext: Extraction) -> None:
    """Speeds written as the time a token takes (see ``_INTERVALS``): tok/s = tokens / seconds; words × 4/3."""
    for m in msg.finditer(_MLX_LINE):  # one pasted mlx_lm line: its label is the phase, not the nearest word
        msg.claim(m.start(), m.end())
        _set_rate(ext, "prefill" if m.group("lab").lower() == "prompt" else "decode", parse_num(m.group("n")) or 0.0,
                  m.group(0).strip())
    for pat in _TIMED:
        for m in msg.finditer(pat):
            secs, k = parse_num(m.group("n")), parse_num(m.group("k"))
            if not secs or not k:
                continue
            secs = secs / 1000 if m.group("u").lower().startswith("m") else secs
            lab = m.group("lab").lower()
            kind = "prefill" if lab.startswith(("prompt", "prefill", "processing", "reading")) else "decode"
            msg.claim(m.start(), m.end())
            ext.note(f"{m.group(0).strip()} = {fmt(round(k / secs, 3))} tokens/s ({kind}).")
            _set_rate(ext, kind, k / secs, m.group(0).strip())
            length = "prompt_tokens" if kind == "prefill" else "gen_tokens"
            if getattr(ext, length) is None and 1 <= k <= MAX_TOKENS:
                setattr(ext, length, int(k))  # the measured run's own length
    for pat in _INTERVALS:
        for m in msg.finditer(pat):
            if m.groupdict().get("c") in ("per", "in") and not m.group("n"):
                continue  # "tokens per second" is a rate unit (read below), "tokens in seconds" no figure
            secs = _how_many(m.group("n"))
            if secs is None or secs <= 0:
                continue
            secs = secs / 1000 if m.group("u").lower().startswith("m") else secs
            k = _how_many(m.groupdict().get("k")) if "k" in m.groupdict() else 1.0
            words = (m.groupdict().get("w") or "").lower().startswith("word")
            if k is None:
                continue
            v = k / secs / (WORDS_PER_TOKEN if words else 1.0)
            if (t := _wanted(msg, m.start(), m.end())) is not None:
                msg.claim(m.start(), m.end())
                said = t if isinstance(t, str) else t.group(0)
                if not said.lower().startswith(("expect", "supposed", "spec")) and ext.target_decode_tps is None \
                        and 0 < v <= MAX_RATE_TPS:
                    ext.target_decode_tps = round(v, 3)
                    ext.note(f"{m.group(0).strip()} ({fmt(round(v, 3))} tok/s) is a target, not a measured speed.")
                continue
            phase = nearest_kind(msg, m.start(), m.end(), _RATE_KINDS) if k > 1 else None
            msg.claim(m.start(), m.end())
            ext.note(f"{m.group(0).strip()} = {fmt(round(v, 3))} tokens/s"
                     + (" (about 0.75 words per token)." if words else "."))
            _set_rate(ext, phase or "decode", v, m.group(0).strip())


# Token throughput over minutes, hours or days: "20000 prompt tokens per minute", "2M output tokens a day". A load
# on the whole service, not a prompt length and not one stream's speed (per second is read by ``_RATE``).
_TOKEN_LOAD = re.compile(rf"(?<![\w.])(?P<n>{NUM})\s*(?P<lab>(?:prompt|input|context|output|generated|generation|"
                         r"completion|response)\s+)?(?:tokens?|toks?)\s*(?:per|a|an|/|every|each)\s*"
                         r"(?P<per>minute|min|hour|hr|h|day)\b", re.I)


_SPEED_BEFORE = re.compile(r"\b(?:decode|decoding|generation|generat(?:es|ing)|speed|rate|prefill|at|gets?|getting|got|"
                           r"only|runs?|running|crawls?|crawling|does|doing|produces?|outputs?|spits?\s+out|manages?|"
                           r"tg|pp)\s*(?:is\s+|of\s+|about\s+|around\s+|~|only\s+|like\s+|roughly\s+|maybe\s+)*$", re.I)


def _token_loads(msg: Msg, ext: Extraction) -> None:
    """Throughputs in tokens per minute/hour/day (:data:`_TOKEN_LOAD`): claimed, so they are not read as lengths,
    and said back per second."""
    for m in msg.finditer(_TOKEN_LOAD):
        msg.claim(m.start(), m.end())
        n = parse_num(m.group("n")) or 0.0
        per = m.group("per").lower()
        secs = {"h": 3600.0, "d": 86400.0}.get(per[0], 60.0)
        lab = (m.group("lab") or "").strip().lower()
        what = ("prompt processing (prefill)" if lab.startswith(("prompt", "input", "context"))
                else "generation (decode)" if lab else "tokens")
        rate = n / secs
        if not 0 < rate <= MAX_RATE_TPS * 1000:
            ext.reject(f"'{m.group(0).strip()}' is not a usable token rate; I ignored it.")
            continue
        if _SPEED_BEFORE.search(msg.before(m.start(), 30)):  # "decode 2 tokens per minute", "it gets 30 tokens a minute"
            ext.note(f"'{m.group(0).strip()}' = {fmt(float(f'{rate:.3g}'))} tokens/s.")
            _set_rate(ext, "prefill" if what.startswith("prompt") else "decode", rate, m.group(0).strip())
            continue
        ext.note(f"'{m.group(0).strip()}' is a load on the whole service: {fmt(float(f'{rate:.3g}'))} tokens a second "
                 f"of {what} in all, not a prompt length; the numbers below are per request and per user.")


# A number with no unit after a verb of what one sees ("currently getting 8", "it only does 12, is that normal?"):
# the speed, when the message talks about speed and no rate was read with its unit.
_BARE_MEASURED = re.compile(
    rf"\b(?:getting|get|gets|got|seeing|see|does|doing|manages?|hits?|reaches|gives?(?:\s+me)?)\s+(?:only\s+|just\s+|"
    rf"about\s+|around\s+|roughly\s+|like\s+|~\s*)?(?P<n>{NUM})(?=\s*(?:$|[;!?)]|[.,](?=\s|$)|\s+(?:and|but|right|now|currently|atm|"
    r"at\s+the\s+moment|so|which|though|on|with|in|using|from|when|if|max|tops|or\s+so)\b))", re.I)
_SPEED_TALK = re.compile(r"\btok(?:en)?s?\b|t/s|\bspeeds?\b|\bslow\w*|\bfast\w*|\bnormal\b|\bexpected\b|\bsluggish\b|"
                         r"\bcrawl\w*", re.I)


def _bare_measured(msg: Msg, ext: Extraction) -> None:
    if ext.measured_decode_tps is not None or ext.measured_prefill_tps is not None:
        return
    talk = _SPEED_TALK.search(msg.orig) is not None
    for m in msg.finditer(_BARE_MEASURED):
        v = parse_num(m.group("n")) or 0.0
        if _wanted(msg, m.start(), m.end()) is not None:
            continue
        if v <= 0:
            if talk:  # "currently getting 0": nothing decodes at 0 tok/s; said, not read
                msg.claim(m.start("n"), m.end("n"))
                ext.reject(f"'{m.group(0).strip()}' is not a usable token rate; I ignored it.")
                return
            continue
        if not talk and not re.match(r"\s*(?:[!?]|\.(?=\s|$)|$)", msg.orig[m.end():]):
            continue  # without talk of speed, only a sentence of its own: "… (ngl 20 of 33). getting 8. Second GPU?"
        msg.claim(m.start("n"), m.end("n"))
        if v > MAX_RATE_TPS:  # "currently getting 99999999999." — said, like every other rate path
            ext.reject(f"'{m.group(0).strip()}' is not a usable token rate; I ignored it.")
            return
        ext.note(f"'{m.group(0).strip()}' taken as the generation (decode) speed, in tokens a second.")
        _set_rate(ext, "decode", v, m.group(0).strip())
        return


# A speed that fell ("from 30 tok/s down to 12", "drops from 40 to 15 t/s", "starts at 50 tok/s, then 20 tok/s"):
# the slow one is what is judged; the first is how it started.
_FELL = re.compile(rf"\b(?:from|starts?\s+(?:at|with|out\s+at)|begins?\s+at|was)\s+(?:about\s+|around\s+|like\s+|~)?"
                   rf"(?P<a>{NUM})\s*(?:{_RATE_UNIT})?\s*,?\s*(?:(?:and|but)\s+)?(?:(?:then|now|later)\s+)?(?:(?:it\s+)?(?:goes|going|"
                   rf"drops?|dropping|falls?|falling|slows?|slowing|gets|getting|degrades?|sinks?)\s+)?(?:all\s+the\s+way\s+)?"
                   rf"(?:down\s+)?(?:to|at)\s+(?:about\s+|around\s+|like\s+|only\s+|~)?(?P<b>{NUM})(?!\w|\.\d)\s*(?:{_RATE_UNIT})?", re.I)
# "starts at 45 tok/s but after an hour of chatting it's down to 15": words between the two rates, the fall said by
# its verb ("down to", "drops to", "only").
_FELL_LATER = re.compile(rf"\b(?:starts?|started|starting|begins?|began|was|is)\s+(?:at|with|out\s+at|around|about|like)\s+"
                         rf"(?:about\s+|around\s+|like\s+|~)?(?P<a>{NUM})\s*(?:{_RATE_UNIT})?[^?!;]{{0,100}}?"
                         rf"\b(?:down\s+to|drops?\s+to|dropped\s+to|falls?\s+to|fell\s+to|slows?\s+(?:down\s+)?to|"
                         rf"slowed\s+(?:down\s+)?to|crawls?\s+at|only|just)\s+(?:about\s+|around\s+|like\s+|~)?"
                         rf"(?P<b>{NUM})(?!\w|\.\d)\s*(?:{_RATE_UNIT})?", re.I)
# Long conversations named as when it is slow: the slow rate is read at a deep context.
_LONG_CHAT = re.compile(r"\b(?:long|longer|growing|long-running)\s+(?:conversation|chat|session|context|thread)s?\b|"
                        r"\bas\s+the\s+(?:conversation|chat|context)\s+(?:grows|gets\s+longer|fills)|"
                        r"\bafter\s+(?:a\s+while|many\s+(?:turns|messages)|a\s+few\s+(?:turns|messages))|"
                        r"\bafter\s+(?:an?|one|\d+|a\s+few|several|some)\s+(?:hours?|turns|messages|minutes)\s+of\s+"
                        r"(?:chat(?:ting)?|talking|conversation|use|using\s+it)", re.I)
# A length said in tokens ("about 30k tokens in the context"): it sizes the conversation, not the half-window guess.
_TOKENS_SAID = re.compile(r"\b\d[\d,.]*\s*k?\s*tokens?\b(?!\s*(?:/|per\b|an?\s+sec|each\s+sec))", re.I)
LONG_CHAT_SHARE = 0.5  # of the context window taken as filled when "after a long conversation" is all that is said


def _slowed(msg: Msg, ext: Extraction) -> None:
    """A fall in speed: the later, slower rate is the measured decode; said as happening over a long conversation
    with a context window known, the depth is taken as half that window (said back)."""
    for m in [*msg.finditer(_FELL, limit=1), *msg.finditer(_FELL_LATER, limit=1)][:1]:
        a, b = parse_num(m.group("a")), parse_num(m.group("b"))
        if a is None or b is None or not b < a or not re.search(_RATE_UNIT, m.group(0), re.I):
            continue
        for g in ("a", "b"):  # the two rates (words between them, "about 30k tokens in the context", are read on)
            unit = re.match(rf"\s*(?:{_RATE_UNIT})?", m.string[m.end(g):])
            msg.claim(m.start(g), m.end(g) + (len(unit.group(0)) if unit else 0))
        # "prompt processing drops from 2000 t/s to 300 t/s": the phase named with the fall (decode when none is)
        phase = nearest_kind(msg, m.start(), m.end(), _RATE_KINDS) or "decode"
        _set_rate(ext, phase, b, m.group(0).strip())
        ext.note(f"'{m.group(0).strip()}': the slower {fmt(b)} tok/s is judged; {fmt(a)} is how it started.")
        if phase == "prefill":
            return
        if _LONG_CHAT.search(msg.orig) and ext.context_window and ext.depth is None and not _TOKENS_SAID.search(msg.orig):
            ext.depth = int(ext.context_window * LONG_CHAT_SHARE)
            ext.note(f"Slow after a long conversation: judged with {fmt(ext.depth)} tokens already in the context "
                     f"(assumed: half the {fmt(ext.context_window)}-token window; say how long it gets).")


def extract_rates(msg: Msg, ext: Extraction) -> None:
    """Read measured speeds: "pp512 45, tg128 6", "300 t/s prompt processing", "I get 6 tok/s", and the time a
    token takes ("1 token every 2 seconds", "ITL 35 ms": see ``_INTERVALS``)."""
    _token_loads(msg, ext)
    _interval_rates(msg, ext)
    _slowed(msg, ext)
    for m in msg.finditer(_NOT_A_RATE):
        msg.claim(m.start(), m.end())
        ext.reject(f"'{m.group(0).strip()}' is not a number of tokens a second; I ignored it.")
    for m in msg.finditer(_LABELLED):
        v = parse_num(m.group("n")) or 0.0
        bare = m.group("len") is None and not re.search(r"[:=@~≈]|\b(?:is|was|at|of)\b|/s|per", m.group(0), re.I)
        if bare and v >= 64 and v.is_integer() and int(v) & (int(v) - 1) == 0:
            continue  # "pp 2048" is a llama-bench prompt size, not a speed
        msg.claim(m.start(), m.end())
        _set_rate(ext, "prefill" if m.group("lab").lower().startswith(("pp", "prompt")) else "decode", v,
                  m.group(0).strip())
    for m in msg.finditer(_RATE_THEN_LABEL):
        if _PHASE_BEFORE.search(msg.orig[max(0, m.start() - 24):m.start()]) and _NUM_NEXT.match(msg.orig[m.end():]):
            continue  # "decode 120 t/s prefill 3000 t/s": each label before its number (_WORD_RATE reads both)
        msg.claim(m.start(), m.end())
        if _wanted(msg, m.start(), m.end()) is not None:  # "at least 1200 prefill tok/s": wanted
            ext.note(f"{m.group(0).strip()} is a target, not a measured speed.")
            continue
        _set_rate(ext, "prefill", parse_num(m.group("n")) or 0.0, m.group(0).strip())
    for m in msg.finditer(_NUM_LABEL_RATE):
        msg.claim(m.start(), m.end())
        lab = m.group("lab").lower()
        phase = "prefill" if lab.startswith(("prompt", "prefill", "pp", "input")) else "decode"
        v = parse_num(m.group("n")) or 0.0
        if _wanted(msg, m.start(), m.end()) is not None:  # "we need 30 generation tok/s": a target
            if phase == "decode" and ext.target_decode_tps is None and 0 < v <= MAX_RATE_TPS:
                ext.target_decode_tps = round(v, 3)
            ext.note(f"{m.group(0).strip()} is a target, not a measured speed.")
            continue
        _set_rate(ext, phase, v, m.group(0).strip())
    for m in msg.finditer(_WORD_RATE):
        v = parse_num(m.group("n")) or 0.0
        msg.claim(m.start(), m.end())
        lab = m.group("lab").lower()
        _set_rate(ext, "prefill" if lab.startswith(("prompt", "prefill", "pp", "input", "process")) else "decode", v,
                  m.group(0).strip())
    for m in msg.finditer(_WPS):
        v = (parse_num(m.group("n")) or 0.0) / WORDS_PER_TOKEN
        msg.claim(m.start(), m.end())
        ext.note(f"{m.group(0).strip()} ≈ {fmt(round(v, 2))} tokens/s (about 0.75 words per token).")
        _set_rate(ext, nearest_kind(msg, m.start(), m.end(), _RATE_KINDS) or "decode", v, m.group(0).strip())
    for pat in (_RATE, _MS_PER_TOKEN):
        for m in msg.finditer(pat):
            v = parse_num(m.group("n").lstrip("-")) or 0.0
            lo = parse_num(m.group("lo")) if pat is _RATE and m.group("lo") else None
            if lo is not None and 0 < lo < v:
                ext.note(f"{m.group(0).strip()}: a range; using its middle, {fmt((lo + v) / 2)} tokens/s.")
                v = (lo + v) / 2
            elif lo is not None:  # "on my RTX 4090 and 10 tok/s": no range, and the number before is another thing's
                m = pat.search(msg.s, m.start("n"), m.end()) or m
                lo = None
            if (t := _wanted(msg, m.start(), m.end())) is not None:
                msg.claim(m.start(), m.end())
                said = t if isinstance(t, str) else t.group(0)
                if m.group("n").startswith("-") or not v or v > MAX_RATE_TPS:
                    ext.reject(f"'{m.group(0).strip()}' is no speed to aim for (between 0 and {MAX_RATE_TPS:,.0f} "
                               "tok/s); I ignored it.")
                    continue
                if not said.lower().startswith(("expect", "supposed", "spec")) and ext.target_decode_tps is None \
                        and pat is _RATE and 0 < v <= MAX_RATE_TPS:
                    ext.target_decode_tps = round(v, 3)
                    ext.note(f"{fmt(round(v, 3))} tok/s is a target, not a measured speed.")
                continue
            if pat is _MS_PER_TOKEN:
                secs = v / 1000 if m.group("u").lower().startswith("m") else v
                v = 1 / secs if secs > 0 else 0.0
                ext.note(f"{m.group(0).strip()} = {fmt(round(v, 2))} tokens/s.")
            if m.group("n").startswith("-") and lo is None:
                v = -v
            kind = nearest_kind(msg, m.start(), m.end(), _RATE_KINDS) or \
                nearest_kind(msg, m.start(), m.end(), _RATE_KINDS, wide=True)
            msg.claim(m.start(), m.end())
            if kind is None:
                kind = "decode"
                if MIN_RATE_TPS <= v <= MAX_RATE_TPS and ext.measured_decode_tps is None:  # (unusable: _set_rate says)
                    ext.note(f"'{m.group(0).strip()}' taken as the generation (decode) speed.")
            elif kind == "prefill" and ext.measured_prefill_tps is not None and ext.measured_decode_tps is None:
                # "prefill 850 tok/s and 7 t/s": the label belongs to the first rate; the second is the other phase
                kind = "decode"
            _set_rate(ext, kind, v, m.group(0).strip())
    _bare_measured(msg, ext)

