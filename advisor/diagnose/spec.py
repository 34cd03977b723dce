"""Speculative decoding asked about ("would a draft model help?", "what about -md qwen2.5-0.5b?"): one sentence with
the predicted effect, or why it gains little here (:attr:`Symptoms.speculative_asked`).

The effect is the ``speculative_decoding`` remedy's own (:func:`advisor.diagnose.remedies._speculative`: Leviathan et
al. 2023's expected tokens per step with the acceptance, draft length and draft cost in
:data:`advisor.diagnose.remedies.SPEC_ACCEPT` …, and a MoE's cost of checking several tokens at once).
"""

from __future__ import annotations

from advisor.diagnose.context import Ctx
from advisor.diagnose.remedies import (
    NO_DRAFT_ENGINES,
    SPEC_ACCEPT,
    SPEC_COMPUTE_SAID,
    SPEC_DRAFT_COST,
    SPEC_GAMMA,
    build,
    compute_verify_cost,
    moe_verify_cost,
    spec_verify_cost,
)
from advisor.roofline import speculative_speedup
from advisor.understand.engine import ENGINE_NAMES

__all__ = ["spec_answer"]


def spec_answer(c: Ctx) -> str | None:
    """"Speculative decoding: …" answering the question, or None when none was asked. An engine asked about ("does LM
    Studio support speculative decoding?") is the one answered for: whether it has a draft-model option, then the gain."""
    if not c.sit.symptoms.speculative_asked or c.pred is None:
        return None
    asked = c.sit.symptoms.engine_asked
    ans = _spec_answer(c, asked or c.sit.engine or "")
    if asked and asked not in NO_DRAFT_ENGINES and ans.startswith("Speculative decoding: "):
        ans = ans.replace("Speculative decoding: ", f"Speculative decoding: {ENGINE_NAMES.get(asked, asked)} has it (a "
                          "draft model of the same family, set beside the main one). ", 1)
    return ans


def _spec_answer(c: Ctx, engine: str) -> str:
    assert c.pred is not None
    if engine in NO_DRAFT_ENGINES:
        return (f"Speculative decoding: {ENGINE_NAMES.get(engine, engine)} has no draft-model option; llama-server "
                "(-md small.gguf) and LM Studio do, with the same GGUF files.")
    if c.sit.workload.users > 1 or c.server_engine:
        return ("Speculative decoding: little to gain with several users — batching already fills the spare compute "
                "a draft model would use; it pays for one stream at a time.")
    if c.fits is False:
        return ("Speculative decoding: not first — the model does not fit in fast memory, and a draft model needs room "
                "too; make it fit first (below).")
    f = build(c, "speculative_decoding")
    if f is not None:
        return (f"Speculative decoding: {f.predicted_effect}, if about {SPEC_ACCEPT:.0%} of the draft's guesses are "
                "accepted (code and repetitive text more, creative writing less); the draft must share the model's "
                "tokenizer (same family, ~10× smaller).")
    verify = spec_verify_cost(c)
    sp = speculative_speedup(SPEC_ACCEPT, SPEC_GAMMA, SPEC_DRAFT_COST, verify)
    if compute_verify_cost(c) > max(SPEC_COMPUTE_SAID, moe_verify_cost(c)):
        return (f"Speculative decoding: little to gain here (≈ {sp:.2f}×) — this machine reads prompts at only "
                f"{c.pred.prefill_tps:,.0f} tok/s, so checking {SPEC_GAMMA + 1} guessed tokens at once costs about "
                f"{verify:.1f}× one token's step, which eats the gain.")
    if moe_verify_cost(c) > 1.05:
        return (f"Speculative decoding: little to gain here (≈ {sp:.2f}×) — this mixture of experts reads only a few "
                f"billion parameters per token, and checking {SPEC_GAMMA + 1} guessed tokens at once reads about "
                f"{moe_verify_cost(c):.1f}× the expert weights one token does, which eats the gain.")
    return f"Speculative decoding: little to gain here (≈ {sp:.2f}×)."
