"""The verdict in words: headline, explanation (with the expectation it was judged against), household wording."""

from __future__ import annotations

from advisor.diagnose.context import Ctx
from advisor.diagnose.rules import Finding
from advisor.models import Fix

__all__ = ["headline", "explanation", "expectation_sentence", "household_fix"]

# Plain titles for a household question: what to do, in words a family uses; then the specifics of the
# technical title with its own lead-in (the words the plain title already says) left out, so nothing is
# said twice ("Pick a model that fits: make it fit: IQ3_M" was).
_PLAIN: dict[str, tuple[str, tuple[str, ...]]] = {
    "quantization": ("Download a more compressed version of the same model", ("use ",)),
    "smaller_model": ("Use a smaller model", ("use a smaller model that fits: ", "use a smaller model: ")),
    "fit_in_memory": ("Download a more compressed version that fits this computer's memory", ("make it fit: ",)),
    "more_bandwidth": ("A computer with faster memory", ("more memory bandwidth, ",)),
    "more_compute": ("A computer with a faster graphics chip", ("more compute for prefill, ",)),
    "prefix_caching": ("Let the app remember the start of the conversation", ()),
    "shorter_prompt": ("Keep questions and pasted text shorter", ()),
}

_PHASE = {
    "prefill": "Bottleneck: prefill (reading the prompt, compute-bound)",
    "decode": "Bottleneck: decode (generating tokens, bandwidth-bound)",
    "memory_fit": "Bottleneck: memory (model + KV cache do not fit the fast memory)",
    "misconfiguration": "Bottleneck: the setup (a configuration problem)",
}
_PHASE_HOME = {
    "prefill": "The wait is the model reading your question before it answers",
    "decode": "The wait is the model writing its answer word by word",
    "memory_fit": "The model is too big for this computer's memory",
    "misconfiguration": "Something in the setup is slowing it down",
}
_STATUS = {
    "normal": "your numbers are normal for this hardware",
    "below_expected": "your numbers are below what this hardware does",
    "above_expected": "your numbers are above the usual range",
    "not_measured": "predicted, not measured",
    "no_expectation": "no expectation for this machine yet (say which chip or card it is)",
}


_PHASE_STATUS = {"normal": "normal", "below_expected": "below the usual range", "above_expected": "above the usual range",
                 "not_measured": "not measured", "no_expectation": "not judged"}


def headline(c: Ctx, bottleneck: str, status: str, *, prefill: str | None = None, decode: str | None = None) -> str:
    """One line: the bottleneck and whether the numbers are normal (plain words for a household question).

    ``prefill``/``decode``: each phase's own status; when the verdict is above or below the usual range and the
    two measured phases differ, the line says which ("prefill above the usual range, decode normal"), so it never
    reads as both being off when the chat says one is normal.
    """
    home = c.sit.symptoms.household or c.sit.audience == "household"
    phase = (_PHASE_HOME if home else _PHASE)[bottleneck]
    if status == "no_expectation" and c.pred is not None:
        # The machine is known; its prediction does not cover this layout or rate (tensor parallel, an aggregate).
        return f"{phase} — not judged against this machine's prediction (see below)."
    if c.cache_hit and decode in ("not_measured", None):
        return f"{phase} — the prefill measured came from a prompt cache, so it is not judged against this hardware."
    measured = {"not_measured", None}
    if (status in ("above_expected", "below_expected") and prefill not in measured and decode not in measured
            and prefill != decode and status in (prefill, decode) and prefill in _PHASE_STATUS and decode in _PHASE_STATUS):
        return f"{phase} — prefill {_PHASE_STATUS[prefill]}, decode {_PHASE_STATUS[decode]}."
    return f"{phase} — {_STATUS[status]}."


def expectation_sentence(c: Ctx, f: Finding) -> str:
    """What the numbers were judged against: the prediction, the physics bounds, or a finding's own range."""
    p = c.pred
    if f.expected and p is not None:
        return (f"Expected on {p.hardware['name']}: ≈ {f.expected[0]:.0f} tok/s for one stream, up to ≈ "
                f"{f.expected[1]:,.0f} tok/s aggregate with a large batch.")
    if p is not None:
        pre = f"{p.prefill_tps:,.0f}" if p.prefill_tps else "?"
        per = p.decode_tps_per_seq or p.decode_tps
        running = p.running if p.running is not None and p.running < p.concurrency else p.concurrency
        users = (f" per stream ({running} streams" + (f" at once of {p.concurrency}" if running < p.concurrency else "")
                 + ")") if p.concurrency > 1 else ""
        return (f"Expected on {p.hardware['name']} with {p.model['id']} at {p.quant}: prefill ≈ {pre} tok/s, decode ≈ "
                f"{per:.1f} tok/s{users} (ceiling {p.decode_ceiling_tps:.0f}).")
    b = c.bounds
    if b is not None:
        return (f"The machine is not pinned down, so the expectation is what physics allows for {b.basis}: decode "
                f"from ≥ {b.lo_tps:.1f} tok/s on the slowest ({b.slow.name}, {b.slow.bandwidth_gbs:g} GB/s) to ≤ "
                f"{b.hi_tps:.0f} tok/s on the fastest ({b.fast.name}).")
    return ""


def household_fix(fix: Fix) -> Fix:
    """The same fix with a plain title first, then the technical title's specifics, each said once.

    ``Make it fit: IQ3_M, or a shorter context`` → ``Download a more compressed version that fits this
    computer's memory: IQ3_M, or a shorter context``; a shrink-context fit (its own words) is left as is.
    """
    plain, lead = _PLAIN.get(fix.id, ("", ()))
    title = fix.title
    if not plain or title.lower().startswith(plain.lower()) or (lead and not title.lower().startswith(lead)):
        return fix
    rest = next((title[len(x):] for x in lead if title.lower().startswith(x)), None)
    if rest is None:  # the whole technical title follows, as a clause
        rest = title[0].lower() + title[1:]
    return fix.model_copy(update={"title": f"{plain}: {rest}"})


def explanation(c: Ctx, f: Finding, status: str, extra: list[str]) -> str:
    """The signals, in order, then the expectation sentence and any notes on how the rates were read."""
    parts = [f.signal] + extra
    if c.tg_lower_bound and c.tg:
        parts.append(f"This tool's {c.tg:g} tok/s divides by the whole call, prompt included: decode itself is at "
                     "least that fast.")
    exp = expectation_sentence(c, f)
    if exp:
        parts.append(exp)
    if status == "no_expectation" and c.pred is None:
        parts.append("Without knowing the exact machine the advisor cannot say whether this is normal.")
    return " ".join(p for p in parts if p)
