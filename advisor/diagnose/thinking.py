"""Reasoning ("thinking") models: they write their reasoning before the answer, so the wait for the answer is that
many more decode steps, not prompt processing. Said beside a complaint about waiting.

The length of the reasoning is an ESTIMATE (a few hundred to a few thousand tokens for everyday questions; it depends
on the question and the model's reasoning setting); the switches are the engines' and models' documented ones:
Qwen3 ``/no_think`` (Qwen3 model cards), gpt-oss ``Reasoning: low`` in the system prompt (OpenAI gpt-oss model card),
Ollama ``--think=false`` / ``"think": false`` (Ollama 0.9 thinking support).
"""

from __future__ import annotations

import re

from advisor.models import Prediction

__all__ = ["THINK_TOKENS", "reasoning_model", "thinking_note"]

# Models that reason before answering by default (Qwen3's hybrids think unless told not to; the 2507 Instruct builds
# do not think at all).
_REASONING = re.compile(r"deepseek[-_ ]?r1|\br1[-_ ]distill|\bqwq\b|qwen3(?![\w.-]*instruct)(?!\.5)|gpt[-_ ]?oss|"
                        r"phi[-_ ]?4[-_ ]?(?:mini[-_ ])?reasoning|magistral|exaone[-_ ]?deep|openthinker|"
                        r"skywork[-_ ]?or1|[-_ ]thinking\b|\bo[13]\b", re.I)
_WAITING = re.compile(r"\bthink(?:s|ing)?\b|\breason(?:s|ing)\b|\bforever\b|\bages\b|\btakes? (?:so |too |very |really )?long\b|"
                      r"\bbefore (?:it|the answer|anything|any\s+(?:output|text|answer)|i see)\b|\bshows? up\b|"
                      r"\bfirst (?:word|token)\b|\bto start\b|\bslow\b", re.I)
THINK_TOKENS = (500, 2000)  # reasoning written before an everyday answer (ESTIMATE; see the module docstring)


def reasoning_model(model_id: str | None) -> bool:
    """Whether the model (catalog id or name) reasons before its answer by default."""
    return bool(model_id and _REASONING.search(model_id))


def thinking_note(model_id: str | None, text: str | None, p: Prediction | None) -> str | None:
    """The sentence about reasoning before the answer, for a reasoning model and a message about waiting; else None."""
    if p is None or not reasoning_model(model_id) or not _WAITING.search(text or ""):
        return None
    tps = p.decode_tps_per_seq or p.decode_tps
    if not tps:
        return None
    lo, hi = (n / tps for n in THINK_TOKENS)
    name = (model_id or "").split("/")[-1]
    low = (model_id or "").lower()
    switch = ("add `/no_think` to the message (Ollama: `/set nothink`)" if "qwen3" in low else
              "put 'Reasoning: low' in the system prompt" if re.search(r"gpt[-_ ]?oss", low) else
              "in Ollama run it with `--think=false`, or take a model that does not reason")
    return (f"{name} thinks before it answers: it writes its reasoning first, often {THINK_TOKENS[0]:,}–"
            f"{THINK_TOKENS[1]:,} tokens (an estimate; it depends on the question), which at ≈ {tps:.0f} tok/s is "
            f"≈ {_dur(lo)}–{_dur(hi)} before the answer starts. To shorten it, {switch}.")


def _dur(s: float) -> str:
    return f"{s:.0f} s" if s < 90 else f"{s / 60:.0f} min"
