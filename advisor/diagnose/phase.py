"""The workload's phase: which of prefill (TTFT) and decode (streaming) sets the wait, when no rule fired."""

from __future__ import annotations

from advisor.diagnose.context import FAR_BELOW, Ctx
from advisor.diagnose.rules import Finding
from advisor.roofline import prompt_load, served_share

__all__ = ["phase"]


def phase(c: Ctx) -> Finding:
    """Which phase dominates this workload's wait (TTFT vs streaming), and the remedies for it."""
    w, p, s = c.sit.workload, c.pred, c.sit.symptoms
    pp = c.pp if (c.pp and not c.cache_hit) else (p.prefill_tps if p else None)
    tg = c.tg or (c.expected_tg if p else None)
    asked_prefill = "prefill" in s.asks_about
    prompt_stated = "prompt_tokens" in w.stated
    if c.tg and not c.pp and not prompt_stated and not asked_prefill:
        return Finding("decode", f"Decode measured at {c.tg:g} tok/s: one token at a time, each reading every weight, "
                       "so memory bandwidth sets the speed.", _decode_remedies(c), rule="phase")
    if c.pp and not c.tg and w.prompt_tokens >= 500:
        why = (f"{w.prompt_tokens:,} prompt tokens at {pp:,.0f} tok/s: {w.prompt_tokens / pp:.1f} s before the first "
               "token; prefill is the wait that was measured.") if pp else "Prefill was measured."
        return Finding("prefill", why, _prefill_remedies(c), rule="phase")
    loaded = _prompt_load(c, pp)
    if loaded is not None and not asked_prefill and not c.tg:
        return loaded
    if pp and tg:
        ttft, stream = w.prompt_tokens / pp, w.gen_tokens / tg
        if asked_prefill:
            return Finding("prefill", f"Time to first token {ttft:.1f} s vs {stream:.1f} s of streaming; the question is "
                           "about prompt processing, which is compute-bound.", _prefill_remedies(c), rule="phase")
        if ttft >= stream:
            return Finding("prefill", f"Time to first token {ttft:.1f} s ({w.prompt_tokens:,} tokens at {pp:,.0f} tok/s) "
                           f"is longer than streaming the answer ({stream:.1f} s at {tg:.1f} tok/s).",
                           _prefill_remedies(c), rule="phase")
        return Finding("decode", f"Streaming the answer takes {stream:.1f} s ({w.gen_tokens} tokens at {tg:.1f} tok/s) vs "
                       f"{ttft:.1f} s to the first token: decode, which is memory-bandwidth-bound, sets the wait.",
                       _decode_remedies(c), rule="phase")
    if asked_prefill or (c.pp and not c.tg):
        return Finding("prefill", "The question is about prompt processing (time to first token).", _prefill_remedies(c),
                       rule="phase")
    return Finding("decode", "Decode (one token at a time, memory-bandwidth-bound) sets the streaming speed.",
                   _decode_remedies(c), rule="phase")


def _prompt_load(c: Ctx, pp: float | None) -> Finding | None:
    """Several users whose prompts take most of the machine's time: prefill, not decode, is the bottleneck.

    Every request's prompt is read at the full prefill rate while the batch's decode serves all running users, so one
    request costs ``P / prefill`` seconds of prompt reading and ``G / aggregate decode`` of decoding; the streams keep
    :func:`advisor.roofline.served_share` of their decode rate (None: one user, or decode takes most of the time).
    """
    w, p = c.sit.workload, c.pred
    if p is None or w.users <= 1 or p.concurrency <= 1 or (split := prompt_load(p.decode_tps, pp, w.prompt_tokens,
                                                                                   w.gen_tokens)) is None:
        return None
    read_s, decode_s = split
    share = served_share(p.decode_tps, pp, w.prompt_tokens, w.gen_tokens)
    per_user = (p.decode_tps_per_seq or p.decode_tps) * share
    running = p.running or p.concurrency
    why = (f"With {w.users} users, each request's {w.prompt_tokens:,}-token prompt takes {read_s:.1f} s to read "
           f"({pp:,.0f} tok/s, compute-bound) against {decode_s:.1f} s of the shared decode for its {w.gen_tokens:,}-token "
           f"answer ({p.decode_tps:,.0f} tok/s over {running} streams): reading prompts is "
           f"{read_s / (read_s + decode_s):.0%} of the machine's time. While it reads other users' prompts the answers "
           f"stall, so each streams at about {per_user:.1f} tok/s on average, not {p.decode_tps_per_seq or p.decode_tps:.1f}; "
           f"if all {w.users} send at once, the last first token comes after about {w.users * read_s:.0f} s.")
    rem = ["kv_cache_quantization"] if running < w.users else []  # room for more streams first
    # retrieved documents differ from request to request: a prefix cache holds only the fixed instructions
    rem += ["chunked_prefill", "more_compute", "shorter_prompt"] if w.use == "rag" else [
        "prefix_caching", "chunked_prefill", "more_compute", "shorter_prompt"]
    return Finding("prefill", why, rem, rule="phase")


def _prefill_remedies(c: Ctx) -> list[str]:
    from advisor.diagnose.status import phase_status

    if c.pp and c.pred is not None and c.pred.prefill_tps and not c.cache_hit \
            and phase_status(c, "prefill")[0] == "below_expected":
        # measured below what this machine reaches: the prompt path's settings first, then the workload levers
        return ["setup:prefill", *[r for r in _workload_prefill(c) if r != "setup:prefill"]]
    return _workload_prefill(c)


def _workload_prefill(c: Ctx) -> list[str]:
    s, w = c.sit.symptoms, c.sit.workload
    if s.flash_attention is False and w.depth + w.prompt_tokens >= 8000:
        # flash attention stated off at long context: the setting that is off comes before a workload change
        return ["flash_attention", "prefix_caching", "shorter_prompt", "more_compute"]
    if s.prefix_reuse or w.shared_prefix_tokens or w.prompt_tokens >= 2000:
        return ["prefix_caching", "shorter_prompt", "more_compute", "flash_attention"]
    return []  # the ordering by predicted effect decides


def _decode_remedies(c: Ctx) -> list[str]:
    s, w = c.sit.symptoms, c.sit.workload
    out: list[str] = []
    if s.thermal:
        out.append("setup:thermal")
    if c.ratio_tg is not None and c.ratio_tg < 0.7 and not s.thermal:
        if c.server_engine and w.users > 1:
            # a serving engine keeps every layer on the GPU: many users below the expectation wait on its scheduler
            # (an old version's host work, the queue, KV-cache preemption), as the far-below rule says
            out += ["setup:scheduler", "vllm_v1", "batching"]
        elif c.server_engine:  # one stream on a serving engine: its own path (CUDA graphs, attention), never the CPU
            out += ["setup:cuda_graphs", "setup:attention", "vllm_v1"]
        else:
            out.append("setup:numa" if s.numa else "setup:cpu_tuning" if c.kind == "cpu" else "setup:check_placement")
    if w.depth > 8000 or (s.long_context and "decode" in s.asks_about):
        out += ["flash_attention", "kv_cache_quantization"]
    if c.ratio_tg is not None and c.ratio_tg >= FAR_BELOW and s.numa:
        out.insert(0, "quantization")
    return out
