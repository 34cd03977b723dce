"""'Which model can I run on it?': the question, and the models it is answered on.

A machine named and no model: the reply compares a shortlist of current open models across sizes on that
machine (:func:`advisor.render.options.model_options`), so the person sees which fit and how fast each runs,
instead of being asked which model they want.
"""

from __future__ import annotations

import re

__all__ = ["CODING_MODELS", "GENERAL_MODELS", "WHICH_MODEL", "model_shortlist"]

WHICH_MODEL = re.compile(
    r"\b(?:which|what)(?:'s|\s+is)?\s+(?:\w+\s+){0,3}?(?:models?|llms?|ais?)\b"
    r"|\b(?:biggest|largest|best|fastest|smartest|strongest)\s+(?:\w+\s+){0,2}?(?:models?|llms?)\b"
    r"|\bwhat\s+(?:can|could|will|would)\s+(?:i|we|it|this|that|my\s+\w+)\s+(?:\w+\s+){0,2}?run\b"
    r"|\bwhat\s+runs\b|\bwhat\s+(?:size|sizes)\b"
    r"|\b(?:will|would|does|can)\s+(?:it|that|this)\s+(?:work|be\s+enough|do)\b"
    r"|\bwelche[sn]?\s+(?:\w+\s+)?(?:modell|llm)|\bqu[eé]\s+modelos?\b|\bquels?\s+mod[eè]les?\b",
    re.I,
)
# Current open models from small to large, dense and MoE (every name resolves in the catalog; tests check it).
# Current open models from small to large, dense and MoE, the newest of each line the catalog holds (every name
# resolves in the catalog; tests check it): what a person picks from today.
GENERAL_MODELS = ["Llama 3.2 3B", "Qwen3.5 9B", "Gemma 3 12B", "Qwen3 14B", "gpt-oss 20b", "Qwen3.6 27B",
                  "Qwen3.6 35B A3B", "Llama 3.3 70B", "gpt-oss 120b", "Qwen3 235B A22B", "DeepSeek V3", "Kimi K2"]
CODING_MODELS = ["Qwen2.5 Coder 7B", "Qwen2.5 Coder 14B", "gpt-oss 20b", "Qwen2.5 Coder 32B", "Qwen3 Coder Next",
                 "GLM 4.5 Air", "gpt-oss 120b", "Qwen3 Coder 480B A35B"]
_CODING = re.compile(r"\bcod(?:e|ing|er)\b|\bprogramm\w*|\bdevelop\w*|\bagentic\b", re.I)


def model_shortlist(use: str | None, text: str = "") -> tuple[list[str], str]:
    """The models a 'which model?' question is answered on (coding models when the use is code), and the
    sentence that says so."""
    coding = (use or "").startswith("coding") or bool(_CODING.search(text))
    picks = CODING_MODELS if coding else GENERAL_MODELS
    what = "coding models" if coding else "current open models"
    return list(picks), (f"You asked which model: compared {len(picks)} {what} from small to large on your machine; "
                         "name one to go deeper.")
