"""A batch setting asked about for one stream ("should I increase max-num-seqs?", "would -np 4 speed it up?"): one
sentence saying that it sets how many requests run together, not how fast one of them runs.

Batched decode reads the weights once per step for every sequence in the batch (DESIGN.md's step model): the total
grows with the batch, one stream's speed does not (it falls a little as the step grows).
"""

from __future__ import annotations

from advisor.diagnose.context import Ctx
from advisor.diagnose.remedies import batch_knob

__all__ = ["batch_answer"]

def batch_answer(c: Ctx) -> str | None:
    """"Batch size: …" for one person's stream when a batch setting is asked about; None otherwise."""
    knob = c.sit.symptoms.batch_setting_asked
    if knob is None or c.sit.workload.users > 1 or c.pred is None:
        return None
    p = c.pred
    now = (f"the {c.tg:g} tok/s you get" if c.tg else f"≈ {p.decode_tps_per_seq or p.decode_tps:.1f} tok/s")
    return (f"{knob}: no help for one stream — it sets how many requests run together "
            f"({batch_knob(c)}), not how fast one of them is written; one conversation stays at {now}. It pays when "
            "several requests run at once.")
