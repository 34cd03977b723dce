"""Diagnosis: which phase is the bottleneck, are the numbers normal, which fix helps and how much.

Flow (DESIGN.md): a :class:`~advisor.understand.situation.Situation` → :func:`context.build_ctx` (the
expected Prediction, physics bounds for an unresolved machine, per-stream rates) → the ordered rules of
:mod:`.rules` (the first finding names the bottleneck) → the remedies of :mod:`.remedies`, each effect a
``what_if`` through the same prediction code → status (:mod:`.status`) and words (:mod:`.explain`).

Nothing here reads text: rules read the Situation's typed fields.

>>> from knowledge.store import Store
>>> from advisor.models import Scenario
>>> v = diagnose(Store(":memory:"), Scenario(hardware="RTX 4090", model="llama 3.1 8b", quant="Q4_K_M",
...                                          backend="llama.cpp -ngl 20", measured_decode_tps=30))
>>> v.bottleneck, v.fixes[0].id
('misconfiguration', 'gpu_offload')
"""

from __future__ import annotations

from advisor.diagnose import remedies as _remedies
from advisor.diagnose.apis import api_answer
from advisor.diagnose.batch_asked import batch_answer
from advisor.diagnose.context import Ctx, build_ctx, predict_for
from advisor.diagnose.context_fit import context_answer
from advisor.diagnose.engines import engine_answer
from advisor.diagnose.explain import explanation, headline, household_fix
from advisor.diagnose.formats import format_answer
from advisor.diagnose.kv_asked import kv_answer
from advisor.diagnose.npu import npu_answer
from advisor.diagnose.rules import PLANNED_SPLIT_RULE, Finding, first_finding
from advisor.diagnose.rules_engine import FELT_SLOW_RULE
from advisor.diagnose.spec import spec_answer
from advisor.diagnose.status import (
    REQUEST_FIXED_S,
    overall_status,
    phase_status,
    spec_factor,
    too_short_to_judge,
)
from advisor.diagnose.weights import _allocated_need_gb
from advisor.errors import ImpossibleRateError
from advisor.intake._text import fmt_s
from advisor.models import FIX_IDS, Fix, Scenario, Verdict
from advisor.resolve import Resolved, resolve_scenario
from advisor.understand import situation_from_resolved
from advisor.understand.situation import Situation
from knowledge.store import Store

__all__ = ["FOREIGN_X", "IMPOSSIBLE_X", "diagnose", "diagnose_resolved", "diagnose_situation", "predict_for", "rank_fixes"]


def diagnose(store: Store, scenario: Scenario, *, question: str | None = None) -> Verdict:
    """Resolve a scenario and diagnose it. See :func:`diagnose_situation`."""
    return diagnose_resolved(store, resolve_scenario(store, scenario), question=question)


def diagnose_resolved(store: Store, res: Resolved, *, question: str | None = None) -> Verdict:
    """The verdict for an already resolved scenario. See :func:`diagnose_situation`."""
    return diagnose_situation(store, situation_from_resolved(res, question=question))


def rank_fixes(c: Ctx, f: Finding) -> list[Fix]:
    """The finding's remedies in its order, then the best applicable remedies for the workload's phase.

    The general remedies are ordered by tier (a setting, then a model/format change, then a purchase) and,
    within a tier, by predicted speedup. For a household question a jargon-heavy remedy (speculative
    decoding) goes last. Never empty: without any applicable remedy the placement check is offered.
    """
    out: list[Fix] = []
    seen: set[str] = set()
    tiers: dict[int, int] = {}

    def add(key: str) -> None:
        r = _remedies.REGISTRY.get(key)
        if r is None or r.fix_id in seen or key in {fx.remedy for fx in out}:
            return
        fx = _remedies.build(c, key)
        if fx is not None:
            seen.add(fx.id)
            out.append(fx)
            tiers[id(fx)] = r.tier

    for key in f.remedies:
        add(key)
    if c.sit.symptoms.flash_attention is False:
        add("flash_attention")  # a setting the person turned off (it applies only at long context)
    add("ollama_vulkan")  # Ollama on the CPU beside a GPU only its opt-in Vulkan backend drives
    add("igpu_vulkan")  # a llama.cpp-family engine on the CPU cores of a CPU with an integrated GPU
    add("vllm_v1")  # vLLM before 0.8 (its V0 engine's host work per sequence)
    add("switch_engine")  # the engine the person asks about, when it is faster here
    add("more_experts_on_gpu")  # --cpu-moe / --n-cpu-moe N on a card with room for more of the experts
    general = _remedies.GENERAL_PREFILL if f.bottleneck == "prefill" else _remedies.GENERAL_DECODE
    extra = list(general)
    w = c.sit.workload
    if w.depth + w.prompt_tokens > 16000 or c.sit.symptoms.kv_quant_asked:
        extra.append("kv_cache_quantization")
    if c.pred is not None and c.pred.running is not None and c.pred.running < w.users:
        # not every user's KV cache fits beside the weights (the rest queue): what makes room for more comes first
        extra = ["kv_cache_quantization", "quantization", "add_gpu", *extra]
    if f.bottleneck == "memory_fit":
        extra = ["fit_in_memory", "quantization", "smaller_model", *extra]
    cands: list[tuple[int, float, int, Fix]] = []
    for key in extra:
        r = _remedies.REGISTRY.get(key)
        if r is None or r.fix_id in seen:
            continue
        fx = _remedies.build(c, key)
        if fx is not None and not _below_measured(c, fx):
            cands.append((r.tier, -(fx.speedup or 1.0), len(cands), fx))
            tiers[id(fx)] = r.tier
    for *_, fx in sorted(cands, key=lambda t: t[:3]):
        if fx.id not in seen:
            seen.add(fx.id)
            out.append(fx)
    if c.sit.symptoms.kv_cache_full:  # a full KV cache admits no more requests: a bigger batch is not the fix
        out = [fx for fx in out if not str(fx.remedy or fx.id).startswith("batching")]
    if w.users <= 1:  # a batch raises a server's total, not one person's stream (_batching leaves its speedup out)
        out.sort(key=lambda fx: fx.remedy == "batching" and fx.speedup is None and c.pred is not None)
    if f.bottleneck == "memory_fit" and not _remedies.deliberate_split(c):
        out = _remedies.works_first(out, tiers)
        # a MoE larger than the card keeps its model: only its experts move to system RAM (a setting, first) —
        # unless a format of the same model (at least the quality floor of weights.min_fit_bits) fits the card whole
        # and writes at least twice as fast (Mixtral 8x7B on 24 GB: IQ3_M ≈ 77 tok/s against ≈ 24 with the experts
        # in RAM)
        out.sort(key=lambda fx: fx.id != "moe_expert_offload")
        offload = next((fx for fx in out if fx.remedy == "moe_expert_offload"), None)
        whole = next((fx for fx in out if fx.remedy == "fit_in_memory" and fx.fits_with_margin), None)
        if (offload is not None and whole is not None and offload.new_decode_tps and whole.new_decode_tps
                and whole.new_decode_tps >= FORMAT_OVER_OFFLOAD * offload.new_decode_tps):
            out.remove(whole)
            out.insert(0, whole)
    from advisor.diagnose.setup import cpu_build

    if cpu_build(c) is not None:  # a CPU-only build on a machine with a GPU: rebuilding comes before anything else
        if "gpu_offload" not in seen:
            add("offload_all")
        out.sort(key=lambda fx: fx.id != "gpu_offload")
    if out and tiers.get(id(out[0])) == _remedies.PURCHASE_TIER:
        for key in _remedies.NO_PURCHASE:  # a reply says what works without buying (advisor.render.reply)
            add(key)
    if c.sit.symptoms.household or c.sit.audience == "household":
        out.sort(key=lambda fx: fx.id == "speculative_decoding")
        out = [household_fix(fx) for fx in out]
    if not out:
        for key in ("setup:check_placement" if c.has_gpu else "setup:cpu_tuning", "quantization", "smaller_model"):
            add(key)
    return [_contract_id(fx) for fx in _said_once(c, f, out)]


FORMAT_OVER_OFFLOAD = 2.0  # a whole-card format leads over the expert offload when it decodes this many times faster


def _contract_id(fx: Fix) -> Fix:
    """A fix under its contract id (DESIGN.md's fix ids, :data:`advisor.models.FIX_IDS`), the remedy that made it kept
    in ``remedy`` ("moe_expert_offload" is a ``fit_in_memory`` fix, "micro_batch" a ``chunked_prefill`` one)."""
    if fx.id in FIX_IDS:
        return fx
    r = _remedies.REGISTRY.get(fx.remedy or fx.id)
    return fx.model_copy(update={"id": r.fix_id if r is not None else "fix_configuration", "remedy": fx.remedy or fx.id})


def _below_measured(c: Ctx, fx: Fix) -> bool:
    """A general decode remedy whose predicted decode is no faster than what the person measures now (one stream,
    the model in memory): offering it would slow them down (a GTX 1070 measured at 32 tok/s, 19 expected: a
    Q4_K_M build predicted at 22 is not a fix)."""
    return bool(c.tg and fx.new_decode_tps and c.fits is not False and not c.looks_aggregate
                and c.sit.workload.users <= 1 and fx.new_decode_tps <= c.tg)


_SETUP_IDS = ("fix_configuration", "gpu_offload")
_PURCHASE_IDS = ("more_bandwidth", "more_compute")


def _said_once(c: Ctx, f: Finding, out: list[Fix]) -> list[Fix]:
    """Each effect said once, and no purchase offered as if it cured a setup fault.

    * A later setup fix whose effect is word for word an earlier one's (two causes restoring the same
      expectation) says "the same gain, if this is the cause" instead of repeating the numbers.
    * For a setup fault on a known machine (the machine itself would reach the expectation once set up
      right) a purchase goes last and says it is only for more than this machine does then.
    """
    said: set[str] = set()
    res: list[Fix] = []
    for fx in out:
        if fx.id in _SETUP_IDS and fx.predicted_effect in said:
            fx = fx.model_copy(update={"predicted_effect": "the same gain, if this is the cause"})
        said.add(fx.predicted_effect)
        res.append(fx)
    if f.bottleneck != "misconfiguration" or c.pred is None:
        return res
    thing = "card" if c.discrete else "Mac" if c.kind == "apple_soc" else "machine"
    buy = [fx.model_copy(update={"title": f"Only if you want more than this {thing} does once set up right — "
                                          f"{fx.title[:1].lower()}{fx.title[1:]}"})
           for fx in res if fx.id in _PURCHASE_IDS]
    return [fx for fx in res if fx.id not in _PURCHASE_IDS] + buy


IMPOSSIBLE_X = 100.0  # a single stream 100× its roofline ceiling is a typo or another unit (drafts give a few ×)
# a pasted single stream this many × the named machine's roofline ceiling ran on another machine (drafts give 2–3× at
# most): kept without that machine (advisor.service._foreign_rate)
FOREIGN_X = 2.5


def _check_possible(c: Ctx) -> None:
    """Raise on a measured single-stream decode no machine could reach: over :data:`IMPOSSIBLE_X` × the
    roofline ceiling (bandwidth ÷ bytes per token; speculative decoding gains at most a few times that).

    Raises:
        ImpossibleRateError: the rate, the ceiling, and what to check.
    """
    p = c.pred
    if p is None or c.server_engine:
        return  # a batching server's rate is a total over streams of a batch nobody stated
    # not prefill: a prompt-cache hit "reads" 9,000 tokens in 0.05 s; several users: each at most one ceiling
    rate, top = c.tg, p.decode_ceiling_tps * max(1, p.concurrency)
    if rate and top and rate > IMPOSSIBLE_X * top:
        raise ImpossibleRateError(f"A measured decode of {rate:,.0f} tok/s is {rate / top:,.0f}× the most this machine can "
                         f"do for this model ({top:,.0f} tok/s): check the number (tokens per second, one "
                         "stream), the model and the hardware.")


def diagnose_situation(store: Store, situation: Situation) -> Verdict:
    """The verdict for a Situation (with or without measured rates).

    Returns:
        Verdict: ``bottleneck`` from the first rule that fires (else the workload's phase); ``status`` only
        ``normal``/``below_expected``/``above_expected`` against a stated expectation (a prediction, or the
        physics bounds of an unresolved machine), ``no_expectation`` for an unresolved machine the bounds do
        not settle, ``not_measured`` without measurements; ``fixes`` never empty, best first.
    """
    c = build_ctx(store, situation)
    _check_possible(c)
    st_tg, dev_tg = phase_status(c, "decode")
    st_pp, dev_pp = phase_status(c, "prefill")
    f = first_finding(c)
    extra: list[str] = []
    p = c.pred
    if c.cache_hit and p is not None and p.prefill_ceiling_tps:
        extra.append(f"The prefill rate {c.pp:,.0f} tok/s is above what this machine can compute (ceiling ≈ "
                     f"{p.prefill_ceiling_tps:,.0f} tok/s): most of the prompt came from a prompt cache, so it is not a "
                     "measure of the machine.")
    elif c.pp and p and p.prefill_ceiling_tps and c.pp > 1.05 * p.prefill_ceiling_tps and c.sit.measured.alone:
        why = ("the card's integer matrix units (llama.cpp's quantized kernels multiply in INT8) outrun the FP16 figure"
               if c.discrete and c.sit.engine not in ("mlx",) else
               "this chip computes faster than the FP16 figure used for it (often an estimate for integrated GPUs)")
        extra.append(f"The measured prefill {c.pp:,.0f} tok/s is above the FP16 spec figure used here "
                     f"({p.prefill_ceiling_tps:,.0f} tok/s): a benchmark run reads the whole prompt, so {why}.")
    elif c.pp and p and p.prefill_ceiling_tps and c.pp > 1.05 * p.prefill_ceiling_tps:
        extra.append(f"The measured prefill {c.pp:,.0f} tok/s is above the compute ceiling ({p.prefill_ceiling_tps:,.0f} "
                     "tok/s from the FP16 spec): part of the prompt was probably cached, or the card's matrix units "
                     "outrun the spec figure used here.")
    if p is not None and too_short_to_judge(c):
        n = c.sit.workload.prompt_tokens
        extra.append(f"A {n:,}-token prompt takes this machine ≈ {fmt_s(n / (p.prefill_tps or 1))} to read, less than a "
                     f"request's fixed costs (≈ {fmt_s(REQUEST_FIXED_S)}: tokenising, scheduling, the first kernel launches), "
                     f"so {c.pp:,.0f} tok/s measures those, not prefill: time a prompt of 512 tokens or more.")
    if f.rule != "aggregate_rate" and c.tg and p is not None and c.tg > 1.15 * p.decode_ceiling_tps:
        extra.append(f"{c.tg:g} tok/s of decode is more than the memory can deliver for this model: check the model "
                     "size and format, or whether the figure is an aggregate over several streams or includes "
                     "speculative drafts.")
    if f.bottleneck == "decode" and (c.sit.workload.depth > 8000 or c.sit.symptoms.long_context):
        extra.append("Each new token also reads the whole KV cache: the longer the context, the more bytes per token, "
                     "so decode slows as the conversation grows.")
    if c.sit.symptoms.speculative and c.tg and c.expected_tg and c.tg > 1.3 * c.expected_tg:
        extra.append(f"Speculative decoding ({c.sit.symptoms.speculative}) is in use: accepted drafts give several tokens "
                     f"per pass of the model, up to ≈ {spec_factor():.1f}× the plain decode of ≈ {c.expected_tg:.0f} tok/s.")
    # a rate summed over streams (a loaded server's log or benchmark): not one stream's, so no deviation from one
    summed = f.rule == "aggregate_rate" or (f.rule == "kv_cache_full" and c.sit.measured.decode_is_aggregate)
    if f.rule == "aggregate_rate":
        st_tg = f.status or st_tg
    if summed or p is None:
        dev_tg = None  # an aggregate is not a deviation from one stream; bounds are not a middle
    status = overall_status(c, f.bottleneck, st_tg, st_pp, forced=f.status if f.rule != "phase" else None)
    fixes = rank_fixes(c, f)
    dec_rng = p.decode_tps_range if p else None
    if dec_rng and p is not None and p.concurrency > 1 and p.decode_tps_per_seq and not (
            c.looks_aggregate or c.sit.measured.decode_is_aggregate):
        # a single stream's rate is judged against one stream's share of the batch, not the batch's total
        k = p.decode_tps_per_seq / p.decode_tps
        dec_rng = (dec_rng[0] * k, dec_rng[1] * k)
    exp_range = {"prefill_tps": p.prefill_tps_range if p else None, "decode_tps": f.expected or dec_rng}
    if p is None and c.bounds is not None:
        exp_range["decode_tps"] = (c.bounds.lo_tps, c.bounds.hi_tps)
    return Verdict(
        bottleneck=f.bottleneck, status=status, fixes=fixes, prediction=p,
        explanation=explanation(c, f, status, extra), headline=headline(c, f.bottleneck, status, prefill=st_pp, decode=st_tg),
        measured={"prefill_tps": c.pp, "decode_tps": c.tg_raw},
        expected_range=exp_range, deviation_pct={"prefill_tps": dev_pp, "decode_tps": dev_tg},
        phase_status={"prefill_tps": st_pp, "decode_tps": st_tg},
        signals=[f.signal, *extra], assumptions=situation.assumption_texts() + (p.assumptions if p else []),
        felt_slow=f.rule == FELT_SLOW_RULE,
        measured_ttft_s=c.sit.measured.ttft_s or c.sit.facts.measured_ttft_s,
        allocated_gb=(alloc := _allocated_need_gb(c)),
        target_tps=c.sit.workload.decode_target_tps, benchmark_run=c.sit.measured.alone,
        asks_speed=c.sit.symptoms.asks_speed, asks_memory=c.sit.symptoms.asks_memory,
        planned_split=f.rule == PLANNED_SPLIT_RULE,
        engine_answer=context_answer(c) or (spec_answer(c) if c.sit.symptoms.speculative_asked else None)
        or engine_answer(c) or api_answer(c) or kv_answer(c) or batch_answer(c)
        or npu_answer(c), format_answer=format_answer(c),
        allocated_tokens=(c.sit.workload.context_window or c.sit.facts.context_window) if alloc else None,
        measured_streams=(streams := c.sit.measured.streams if summed and p is not None
                          and c.sit.measured.streams and p.concurrency == c.sit.measured.streams else None),
        measured_stream_tps=(round(1000.0 / c.sit.measured.itl_ms, 2) if streams and c.sit.measured.itl_ms else None),
    )
