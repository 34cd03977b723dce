"""An engine named as an alternative, not as the one in use: "should I switch to MLX?", "would vLLM be faster than
ollama?", "is exllama worth trying?", "llama.cpp instead?".

The intake leaves such a mention out when it reads the engine in use (:func:`alternative_spans`), and the Situation
records the engine asked about (:func:`engine_asked`), which diagnosis answers with the same prediction code
(:mod:`advisor.diagnose.engines`). "instead of X" and "than X" name the engine in use.

>>> engine_asked("M3 Max with llama.cpp, qwen2.5 32b, 12 tok/s. Should I switch to MLX?")
'mlx'
>>> engine_asked("RTX 4090, would vLLM be faster than ollama for 10 users?")
'vllm'
>>> engine_asked("I use ollama on my 3090") is None
True
"""

from __future__ import annotations

import re

from advisor.understand.engine import classify_engine, engine_mentions

__all__ = ["API_MENTION", "alternative_spans", "api_asked", "api_spans", "engine_asked", "refused_spans"]

# llama.cpp's GPU APIs as people write them ("the ROCm build", "Vulkan", "HIP", "SYCL"): the API an engine of the
# llama.cpp family runs on is a choice of its own ("Vulkan or ROCm?", "would CUDA be faster than Vulkan?").
API_MENTION = re.compile(r"(?<![A-Za-z])(?P<a>cuda|vulkan|rocm|hip|sycl|metal|opencl)\b(?!\s*=\s*(?:0|false|off)\b)",
                         re.I)
_API_KEY = {"cuda": "cuda", "vulkan": "vulkan", "rocm": "rocm", "hip": "rocm", "sycl": "sycl", "metal": "metal",
            "opencl": "opencl"}

# Engine names as people write them (the intake's own table reads the engine in use).
# Words before an engine that make it the one asked about ("switch to X", "should I try X", "what about X").
_BEFORE = re.compile(
    r"(?:\b(?:switch(?:ing)?|mov(?:e|ing)|migrat(?:e|ing)|chang(?:e|ing)|go|going|port(?:ing)?|jump(?:ing)?)\s+"
    r"(?:over\s+|back\s+)?to\s+(?:using\s+)?"
    r"|\b(?:switch(?:ing)?|mov(?:e|ing)|migrat(?:e|ing)|chang(?:e|ing)|go|going|port(?:ing)?)\s+(?:over\s+)?from\s+"
    r"[\w.+-]+(?:\s+[\w.+-]+)?\s+to\s+(?:using\s+)?"
    r"|\b(?:thinking|wondering)\s+(?:about|of)\s+(?:using\s+|trying\s+|switching\s+to\s+|moving\s+to\s+)?"
    r"|\blooking\s+(?:at|into)\s+"
    r"|\b(?:should|would|could|shall|do)\s+(?:i|we)\s+(?:rather\s+|instead\s+|just\s+)?(?:use|try|run\s+it\s+(?:in|on|with)|"
    r"go\s+with|pick|choose)\s+"
    r"|\b(?:worth\s+(?:trying|switching\s+to|using|moving\s+to)|try(?:ing)?\s+(?:out\s+)?|what\s+about|how\s+about|"
    r"consider\w*|rather\s+use|better\s+off\s+(?:with|on|using))\s+"
    r"|\b(?:would|will|is|are|does|could|can)\s+(?:a\s+|the\s+)?"
    r"|\b(?:turn(?:ing)?\s+on|enabl(?:e|ing)|(?:build|compil)(?:e|ing)?\s+(?:it\s+)?(?:with|for))\s+"
    r"|\b(?:or|vs\.?|versus)\s+(?:with\s+|in\s+|on\s+)?)(?:the\s+|a\s+)?$", re.I)  # "vllm or llama.cpp?": the second is weighed
# Words after an engine that make it the one asked about ("X instead?", "would X be faster").
_AFTER = re.compile(r"^\s*(?:instead\b(?!\s+of)|(?:\w+\s+){0,2}?(?:be\s+)?(?:faster|quicker|better|worth\s+it|help)\b)", re.I)
# "I would never switch to X", "not going to use X": not asked about. "I moved away from X", "was on X", "used to run
# X": an engine left behind, not the one in use.
_REFUSED = re.compile(r"(?:\b(?:never|not|no\s+way|won'?t|wouldn'?t|don'?t\s+want(?:\s+to)?)\b|n't\b)[^,;]{0,30}$"
                      r"|\b(?:(?:moved|switched|migrated|came|went)\s+(?:away\s+)?from|(?:was|were)\s+(?:on|using|running)|"
                      r"used\s+to\s+(?:use|run|be\s+on)|(?:ditched|dropped|left|quit|abandoned)|gave\s+up\s+on)\s+"
                      r"(?:using\s+|running\s+)?$", re.I)
# "instead of X", "than X", "from X": the engine in use.
_CURRENT_BEFORE = re.compile(r"\b(?:instead\s+of|than|from|over)\s+(?:using\s+)?$", re.I)


def refused_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of each engine mention the person rules out ("I'd never use MLX", "I don't want llama.cpp")."""
    out = []
    for m, _ in engine_mentions(text):
        before = re.split(r"[.!?](?=\s)|[\n;]", text[max(0, m.start() - 50):m.start()])[-1]
        if _REFUSED.search(before):
            out.append((m.start(), m.end()))
    return out


def alternative_spans(text: str) -> list[tuple[int, int, str]]:
    """(start, end, engine) of each engine mention that names an alternative to the one in use. Of "X or Y?" the
    second is weighed against the first, which stays the engine in use."""
    return _or_second(text, _alternatives(text, [(m, classify_engine(m.group(0))[0]) for m, _ in engine_mentions(text)]))


def api_spans(text: str) -> list[tuple[int, int, str]]:
    """(start, end, API) of each GPU API named as an alternative to the one in use, like :func:`alternative_spans`.

    >>> [a for *_, a in api_spans("RX 7900 XTX, Qwen2.5 32B in llama.cpp. Should I use Vulkan or ROCm?")]
    ['rocm']
    >>> [a for *_, a in api_spans("I'm on the Vulkan build; would ROCm be faster?")]
    ['rocm']
    >>> api_spans("llama.cpp with ROCm on my 7900 XTX, 20 tok/s")
    []
    """
    found = [(m, _API_KEY[m.group("a").lower()]) for m in API_MENTION.finditer(text or "")]
    return _or_second(text, _alternatives(text, found))


def api_asked(text: str) -> str | None:
    """The GPU API the person asks about running on ("rocm", "vulkan", "cuda", ...), or None."""
    spans = api_spans(text)
    return spans[0][2] if spans else None


def _or_second(text: str, out: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    for a in list(out):
        if re.search(r"\b(?:or|vs\.?|versus)\s+(?:with\s+|in\s+|on\s+)?$", text[max(0, a[0] - 12):a[0]], re.I):
            prev = [b for b in out if b[1] <= a[0] and re.fullmatch(r"[\s,]*(?:or|vs\.?|versus)\s+(?:with\s+|in\s+|on\s+)?",
                                                                   text[b[1]:a[0]], re.I)]
            out = [b for b in out if b not in prev]  # "vLLM or Ollama?": vLLM is the baseline, Ollama the one weighed
    return out


def _alternatives(text: str, mentions: list[tuple[re.Match[str], str]]) -> list[tuple[int, int, str]]:
    out = []
    for m, engine in mentions:
        before = text[max(0, m.start() - 50):m.start()]
        before = re.split(r"[.!?](?=\s)|[\n;]", before)[-1]  # the same sentence
        if _CURRENT_BEFORE.search(before) or _REFUSED.search(before):
            continue
        if (_BEFORE.search(before) or _AFTER.search(text[m.end():m.end() + 40])) and _asking(text, m.start()):
            if engine:
                out.append((m.start(), m.end(), engine))
    return out


_STOP = re.compile(r"[.!?](?=\s|$)|\n")  # a sentence's end ("qwen2.5", "llama.cpp" keep their points)
_ASKING = re.compile(r"\b(?:should|would|could|shall|worth|what\s+about|how\s+about|thinking|considering|wondering|"
                     r"better|faster)\b", re.I)


def _asking(text: str, at: int) -> bool:
    """The sentence around ``at`` asks (a question mark, or "should/would/worth/thinking of…"): "switch to ollama" said
    as an instruction in a follow-up changes the engine, it does not ask about it."""
    starts = [m.end() for m in _STOP.finditer(text, 0, at)]
    start = starts[-1] if starts else 0
    end_m = _STOP.search(text, at)
    sentence = text[start:end_m.end() if end_m else len(text)]
    return sentence.rstrip().endswith("?") or bool(_ASKING.search(sentence))


def engine_asked(text: str) -> str | None:
    """The engine the person asks about switching to (its :func:`classify_engine` name), or None."""
    spans = alternative_spans(text)
    return spans[0][2] if spans else None
