"""A batch setting asked about for one stream ("should I increase max-num-seqs?", "would -np 4 speed it up?"): one
sentence saying that it sets how many requests run together, not how fast one of them runs.

Batched decode reads the weights once per step for every sequence in the batch (DESIGN.md's step model): the total
grows with the batch, one stream's speed does not (it falls a little as the step grows).
"""

from __future__ import annotations

import re

from advisor.diagnose.context import Ctx
from advisor.diagnose.remedies import batch_knob

__all__ = ["batch_answer"]

_KNOB = re.compile(r"max[-_ ]num[-_ ]seqs|max[-_ ]running[-_ ]requests|max[-_ ]batch[-_ ]size|\bbatch\s+size\b|"
                   r"OLLAMA_NUM_PARALLEL|--parallel\b|(?<![\w-])-np\s*\d*|\bnum[-_ ]parallel\b|\bparallel\s+slots?\b", re.I)
_ASKED = re.compile(r"\b(?:should|would|could|will|does|do|can|is|worth|help|increas\w*|rais\w*|bump\w*|more)\b", re.I)


def batch_answer(c: Ctx) -> str | None:
    """"Batch size: …" for one person's stream when a batch setting is asked about; None otherwise."""
    text = c.sit.question or ""
    m = _KNOB.search(text)
    if m is None or c.sit.workload.users > 1 or c.pred is None:
        return None
    clause = re.split(r"[.!?\n]", text[max(0, m.start() - 60):m.end() + 60])
    if not any(_ASKED.search(part) for part in clause):
        return None
    p = c.pred
    now = (f"the {c.tg:g} tok/s you get" if c.tg else f"≈ {p.decode_tps_per_seq or p.decode_tps:.1f} tok/s")
    return (f"{m.group(0).strip()}: no help for one stream — it sets how many requests run together "
            f"({batch_knob(c)}), not how fast one of them is written; one conversation stays at {now}. It pays when "
            "several requests run at once.")
