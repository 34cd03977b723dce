"""Status from expectation only: normal / below / above need a stated expectation.

* resolved machine: the measured rate against the prediction's 10–90 % range (widened to 0.7–1.3 ×);
* unresolved machine: ``no_expectation`` unless the physics bounds of what is known (kind, memory
  size; the slowest and fastest plausible machine of that kind) put the measurement far outside them;
* nothing measured: ``not_measured``.
"""

from __future__ import annotations

from advisor import roofline
from advisor.diagnose.context import FAR_OUTSIDE, Ctx
from advisor.models import Status

__all__ = ["BELOW", "ABOVE", "rate_status", "phase_status", "overall_status"]

BELOW = 0.7
ABOVE = 1.3
# Single-stream decode up to this share of the spec roofline (bandwidth ÷ bytes per token) is reached by
# well-tuned llama.cpp/MLX builds on GPUs and CPUs alike (the seed's best rows: 75–90 % on discrete GPUs and
# Apple, 60–80 % on CPUs), so a rate below it is never "suspiciously fast", only faster than the fit.
ROOFLINE_SHARE_ACHIEVABLE = 0.75


def spec_factor() -> float:
    """The decode speed-up drafts give at the typical acceptance (see :mod:`advisor.diagnose.remedies`)."""
    from advisor.diagnose.remedies import SPEC_ACCEPT, SPEC_DRAFT_COST, SPEC_GAMMA

    return roofline.speculative_speedup(SPEC_ACCEPT, SPEC_GAMMA, SPEC_DRAFT_COST)


def rate_status(measured: float | None, expected: float | None,
                rng: tuple[float, float] | None) -> tuple[Status, float | None]:
    """(status, deviation in %) of one measured rate against its prediction.

    >>> rate_status(50, 100, (80, 120))
    ('below_expected', -50.0)
    >>> rate_status(95, 100, (80, 120))
    ('normal', -5.0)
    >>> rate_status(None, 100, None)
    ('not_measured', None)
    """
    if not measured or not expected:
        return "not_measured", None
    ratio = measured / expected
    lo = min(rng[0] / expected, BELOW) if rng else BELOW
    hi = max(rng[1] / expected, ABOVE) if rng else ABOVE
    status: Status = "normal"
    if ratio < lo:
        status = "below_expected"
    elif ratio > hi:
        status = "above_expected"
    return status, (ratio - 1) * 100


def phase_status(c: Ctx, phase: str) -> tuple[Status, float | None]:
    """Status of one phase ("decode" or "prefill") from the prediction or, without one, the physics bounds."""
    p = c.pred
    if phase == "decode":
        if not c.tg:
            return "not_measured", None
        if p is not None:
            st, dev = rate_status(c.tg, c.expected_tg, _per_seq_range(c))
            if st == "below_expected" and c.tg_lower_bound:
                whole = _whole_call_status(c)
                # a lower bound below the range says nothing by itself, unless the whole call (prompt read at the
                # predicted prefill rate, then the answer) is still too slow
                return (whole if whole is not None else "normal"), dev
            if st == "above_expected" and c.sit.symptoms.speculative and c.expected_tg:
                if c.tg <= ABOVE * spec_factor() * c.expected_tg:
                    return "normal", dev  # accepted drafts: several tokens per pass of the big model
            if (st == "above_expected" and p.concurrency <= 1 and p.decode_ceiling_tps and p.memory.fits is not False
                    and c.tg <= ROOFLINE_SHARE_ACHIEVABLE * p.decode_ceiling_tps):
                return "normal", dev  # faster than the fit, yet a share of the roofline engines do reach
            return st, dev
        b = c.bounds
        if b is None:
            return "no_expectation", None
        if c.tg < FAR_OUTSIDE * b.lo_tps and not c.tg_lower_bound:
            return "below_expected", (c.tg / b.lo_tps - 1) * 100
        if c.tg > 1.15 * b.hi_tps:
            return "above_expected", (c.tg / b.hi_tps - 1) * 100
        return "no_expectation", None
    if not c.pp:
        return "not_measured", None
    if p is None or not p.prefill_tps:
        return ("no_expectation" if c.sit.machine is not None else "not_measured"), None
    if c.cache_hit:
        return "normal", None  # a prompt-cache hit: not a measure of the machine
    st, dev = rate_status(c.pp, p.prefill_tps, p.prefill_tps_range)
    if p.prefill_ceiling_tps and c.pp > 1.05 * p.prefill_ceiling_tps:
        st = "above_expected"
    if st == "below_expected" and too_short_to_judge(c):
        return "no_expectation", None
    return st, dev


# A request's fixed costs before and around prefill (tokenising, scheduling, the first kernel launches, the HTTP round
# trip): tens of milliseconds in llama.cpp, Ollama and vLLM alike. ESTIMATE: Ollama's prompt_eval_duration for 10-30
# token prompts on GPUs is 20-100 ms whatever the GPU (the shared imports' short-prompt rows), where the GPU would
# need under 5 ms.
REQUEST_FIXED_S = 0.05


def too_short_to_judge(c: Ctx) -> bool:
    """A measured prefill of a prompt the machine would read in less than :data:`REQUEST_FIXED_S`: its rate is the
    request's fixed costs, not prompt processing."""
    p, n = c.pred, c.sit.workload.prompt_tokens
    return bool(p and p.prefill_tps and c.pp and n and n / p.prefill_tps < REQUEST_FIXED_S and n / c.pp < 10 * REQUEST_FIXED_S)


def _whole_call_status(c: Ctx) -> Status | None:
    """A rate over the whole call (text-generation-webui: generated tokens ÷ prompt and answer time) judged as one:
    the expected whole-call rate is gen ÷ (prompt ÷ predicted prefill + gen ÷ predicted decode), its range the
    decode range scaled alike. None without the prompt and answer lengths the run used."""
    p, ms = c.pred, c.sit.measured
    w = c.sit.workload
    prompt = ms.prompt_tokens or (w.prompt_tokens if "prompt_tokens" in w.stated else None)
    gen = ms.gen_tokens or w.gen_tokens
    rng = _per_seq_range(c)
    if p is None or not (prompt and gen and p.prefill_tps and c.expected_tg and rng and c.tg):
        return None
    share = (gen / c.expected_tg) / (prompt / p.prefill_tps + gen / c.expected_tg)
    st, _ = rate_status(c.tg, c.expected_tg * share, (rng[0] * share, rng[1] * share))
    return "below_expected" if st == "below_expected" else None


def _per_seq_range(c: Ctx) -> tuple[float, float] | None:
    p = c.pred
    if p is None or p.decode_tps_range is None:
        return None
    if p.concurrency > 1 and p.decode_tps and p.decode_tps_per_seq:
        k = p.decode_tps_per_seq / p.decode_tps
        # a served run's output throughput: the prompts are read in that time too (the low end; the top stays decode's)
        return p.decode_tps_range[0] * k * c.served_share, p.decode_tps_range[1] * k
    return p.decode_tps_range


def overall_status(c: Ctx, bottleneck: str, st_tg: Status, st_pp: Status, forced: Status | None = None) -> Status:
    """The verdict's status: a rule's own (only with an expectation), else the bottleneck phase's, else any."""
    has_expectation = c.pred is not None or c.far_below or forced in ("normal", "above_expected")
    if forced == "below_expected" and c.pred is None and not c.far_below:
        forced = None  # a named cause without numbers outside the bounds: the rates decide
    if forced is not None and (has_expectation or forced in ("not_measured", "no_expectation")):
        if forced in ("normal", "below_expected", "above_expected") and not (c.tg or c.pp):
            return "not_measured"
        return forced
    order = (st_pp, st_tg) if bottleneck == "prefill" else (st_tg, st_pp)
    if "below_expected" in order:
        return "below_expected"  # one phase slow, the other fast: the slow one is what needs saying
    for st in order:
        if st in ("below_expected", "above_expected"):
            return st
    if "normal" in order:
        return "normal"
    if "no_expectation" in order:
        return "no_expectation"
    return "not_measured"
