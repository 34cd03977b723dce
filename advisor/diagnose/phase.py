"""The workload's phase: which of prefill (TTFT) and decode (streaming) sets the wait, when no rule fired."""

from __future__ import annotations

from advisor.diagnose.context import FAR_BELOW, Ctx
from advisor.diagnose.rules import Finding

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


def _prefill_remedies(c: Ctx) -> list[str]:
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
        else:
            out.append("setup:numa" if s.numa else "setup:cpu_tuning" if c.kind == "cpu" else "setup:check_placement")
    if w.depth > 8000 or (s.long_context and "decode" in s.asks_about):
        out += ["flash_attention", "kv_cache_quantization"]
    if c.ratio_tg is not None and c.ratio_tg >= FAR_BELOW and s.numa:
        out.insert(0, "quantization")
    return out
