"""Setup rules about the engine and the machine's state (split from :mod:`advisor.diagnose.rules`).

Same contract as the rules there: each reads ``Ctx`` (never text) and returns a Finding or None; they are
tried in the order of ``rules.RULES``.
"""

from __future__ import annotations

from advisor.diagnose.context import Ctx, predict_for
from advisor.diagnose.remedies import CONVERSATION_DEPTH
from advisor.diagnose.rules import Finding, _below, _far, _suspect
from advisor.diagnose.tools import OLLAMA_IDLE_UNLOAD_MIN
from advisor.render.markdown import fmt_s

__all__ = ["kv_cache_full", "slow_prefill_backend", "slow_prefill_only", "power_limited", "plain_framework", "gpu_slowed", "felt_slow", "PLAIN_FRAMEWORKS",
           "FELT_SLOW_RULE"]

PLAIN_FRAMEWORKS = ("transformers",)  # eager PyTorch generate(): no CUDA graphs, no fused decode kernels
PLAIN_BELOW = 0.6  # decode under this share of the prediction on a plain framework: the framework's overhead

FELT_SLOW_RULE = "felt_slow"
LONG_PROMPTS = (8_000, 32_000)  # prompt lengths a chat history, a pasted document or RAG context reach (tokens)
# A first-token wait whose implied prefill rate is under this share of the prediction is not prompt processing
# (a GPU does not read a prompt 10× slower than its kernels): the model loading or layers on the CPU.
LOAD_NOT_PREFILL = 0.1
CLEARLY_FAST = 2.0  # × the comfortable reading rate: a stream this fast that "feels slow" points at the setup
PP_FAR_BELOW = 0.35  # measured prefill under this share of the prediction: a setup cause, not the GPU's compute


def slow_prefill_backend(c: Ctx) -> Finding | None:
    """Prefill far below a discrete GPU's prediction on a portable backend (Vulkan, OpenCL) while decode is not:
    the backend's matrix kernels, not the GPU's compute, set the prompt speed (the vendor backend runs them)."""
    b, p = c.sit.symptoms.gpu_backend, c.pred
    if p is None or not c.discrete or not c.pp or not p.prefill_tps or b not in ("vulkan", "opencl", "clblast"):
        return None
    if c.pp >= PP_FAR_BELOW * p.prefill_tps or (c.ratio_tg is not None and c.ratio_tg < 0.5):
        return None
    return Finding("misconfiguration", f"Prefill {c.pp:,.0f} tok/s is {c.pp / p.prefill_tps:.0%} of the ≈ "
                   f"{p.prefill_tps:,.0f} tok/s this GPU reaches with its native backend, while decode is in range: the "
                   f"{b} build's prompt-processing kernels, not the GPU's compute, are the limit.",
                   ["setup:native_backend", "prefix_caching"], status="below_expected", rule="slow_prefill_backend")


def slow_prefill_only(c: Ctx) -> Finding | None:
    """Both phases measured, prefill below this machine's expectation while decode is in range: the slow phase is
    what the verdict is about, whichever of the two sets more of the wait (a setting of the prompt path, not the
    hardware, when the bandwidth-bound phase runs as it should)."""
    from advisor.diagnose.status import phase_status

    p = c.pred
    if p is None or not (c.pp and c.tg and p.prefill_tps) or c.cache_hit:
        return None
    if phase_status(c, "prefill")[0] != "below_expected" or phase_status(c, "decode")[0] not in ("normal",
                                                                                                 "above_expected"):
        return None
    return Finding("prefill", f"Prefill {c.pp:,.0f} tok/s is {c.pp / p.prefill_tps:.0%} of the ≈ {p.prefill_tps:,.0f} "
                   f"tok/s this machine reaches with this model, while decode ({c.tg:g} tok/s) is in range: the memory "
                   "is fine, and the prompt path (a build or engine setting) holds back the compute-bound phase.",
                   ["setup:prefill", "prefix_caching"], status="below_expected", rule="slow_prefill_only")


def power_limited(c: Ctx) -> Finding | None:
    """On battery, in a power-saving mode or under a lowered power limit: the clocks are capped."""
    if not (c.sit.symptoms.power_limited and _suspect(c)):
        return None
    return Finding("misconfiguration", (_far(c) if c.tg else "Decode") + ": the machine runs on battery or in a "
                   "power-saving mode, which caps the GPU's core and memory clocks; plugged in, in the performance "
                   "mode, the same model runs at its normal speed.", ["setup:power"], status="below_expected",
                   rule="power_limited")


def plain_framework(c: Ctx) -> Finding | None:
    """Plain transformers generate() on a GPU: Python and per-kernel launch overhead, not bandwidth, sets decode."""
    if c.sit.engine not in PLAIN_FRAMEWORKS or not c.has_gpu or c.ratio_tg is None or c.ratio_tg >= PLAIN_BELOW:
        return None
    return Finding("misconfiguration", _far(c) + ": plain transformers generate() runs each decode step as many "
                   "small eager PyTorch kernels (no CUDA graphs, no fused attention or quantized kernels), so the "
                   "framework's overhead, not the memory bandwidth, sets the speed.", ["setup:engine"],
                   status="below_expected", rule="plain_framework")


def gpu_slowed(c: Ctx) -> Finding | None:
    """Every layer on the GPU (as the person's own output shows), the model fits, decode still well below: the GPU
    itself runs below its speed (power/clock limit or heat, another program, a mobile variant, memory clock or
    PCIe link, the build) — not the placement, which a fix must not propose again."""
    if not (c.has_gpu and c.all_on_gpu and c.tg) or c.fits is False:
        return None
    if not (c.far_below or (c.pred is not None and not c.tg_lower_bound and _below(c))):
        return None
    p = c.pred
    pp = ""
    if c.pp and p is not None and p.prefill_tps and c.pp >= 0.5 * p.prefill_tps:
        pp = f" and prompt reading at a normal {c.pp:,.0f} tok/s"
    return Finding("misconfiguration", _far(c) + f", with every layer already on the GPU{pp}: the GPU runs below its "
                   "speed (a power or clock limit, heat, another program on it, a mobile variant of the card, the memory "
                   "clock or PCIe link trained down, or an old or wrong build), not the placement.",
                   ["setup:gpu_state"], status="below_expected", rule="gpu_slowed")


def felt_slow(c: Ctx) -> Finding | None:
    """The person says it is slow but gives no number (or only a wait), answered against the prediction.

    Prefill (the wait before the first word): at the assumed prompt the first token comes in under a second, so a
    wait they notice comes from what the prediction does not see — a much longer prompt than assumed (history,
    documents: the TTFT at :data:`LONG_PROMPTS` is stated), the model loading before the request, or part of it on
    the CPU. Decode: the machine should stream faster than reading, so a slow stream is a setup cause. The finding
    asks for the number that settles it (status ``not_measured``). When the prediction itself is slow (a wait of a
    second or more, or a stream under twice reading speed), that is what the machine does with the model: said, with
    the fixes ranked as usual. A measured wait far beyond the prediction: :func:`_long_wait`.
    """
    from advisor.render.markdown import COMFORTABLE_TPS, TTFT_INSTANT_S

    s, p = c.sit.symptoms, c.pred
    if p is None or c.tg or c.fits is False:
        return None
    waited = c.sit.measured.ttft_s
    if (waited and p.ttft_s is not None and p.prefill_tps and waited > max(3 * p.ttft_s, TTFT_INSTANT_S)
            and (not c.pp or c.pp < LOAD_NOT_PREFILL * p.prefill_tps)):
        return _long_wait(c, waited)
    if not s.complaint or waited or c.pp:
        return None
    per_user = p.decode_tps_per_seq or p.decode_tps
    prefill_ok = p.ttft_s is not None and p.ttft_s < TTFT_INSTANT_S
    depth = c.sit.workload.depth
    if "prefill" in s.asks_about and p.prefill_tps and depth >= CONVERSATION_DEPTH and not s.after_idle:
        # a long chat whose first word feels slow: the conversation read again on every turn is the usual cause
        reread = (depth + p.prompt_tokens) / p.prefill_tps
        return Finding("prefill", f"With {depth:,} tokens of conversation already in the context, the first word comes "
                       f"after ≈ {fmt_s(p.ttft_s or 0)} when the app keeps the conversation cached and reads only the new "
                       f"{p.prompt_tokens:,} tokens, but after ≈ {fmt_s(reread)} or more when it reads all of it again "
                       "on every turn (its context window smaller than the conversation, or its start changed). How long "
                       "is the wait?", ["prefix_caching", "setup:model_load", "shorter_prompt"],
                       status="not_measured", rule=FELT_SLOW_RULE)
    if "prefill" in s.asks_about and prefill_ok and p.prefill_tps:
        waits = []
        for n in (n for n in LONG_PROMPTS if n > 2 * p.prompt_tokens):
            q = predict_for(c.store, c.sit, prompt_tokens=n)  # the same prediction at that length (it fits or not)
            if q is not None and q.ttft_s and q.memory.fits:
                waits.append(f"{n // 1000}k tokens ≈ {fmt_s(q.ttft_s)}")
        at = "; ".join(waits)
        return Finding("prefill", f"At a {p.prompt_tokens:,}-token prompt the first token should come after ≈ "
                       f"{fmt_s(p.ttft_s or 0)} here (prefill ≈ {p.prefill_tps:,.0f} tok/s), so a wait you notice is not "
                       "the hardware's compute. It grows with the prompt the app really sends (chat history, system "
                       f"prompt, documents){': ' + at if at else ''}; {_other_ttft_causes(c)}. How long are your "
                       "prompts, and how long is the wait?",
                       ["setup:model_load", "prefix_caching", "shorter_prompt", "setup:check_placement"],
                       status="not_measured", rule=FELT_SLOW_RULE)
    if "prefill" not in s.asks_about and per_user >= CLEARLY_FAST * COMFORTABLE_TPS and prefill_ok:
        mac = c.kind == "apple_soc"
        causes = ("many requests sharing the GPU at once (each stream gets a share of the batch), long prompts "
                  "prefilled between decode steps, CUDA graphs off (--enforce-eager), or a client that does not stream"
                  if c.server_engine else
                  "memory pressure (other apps, swapping), the model reloading for each request, Low Power Mode or "
                  "heat" if mac else "part of the model on the CPU, the model reloading for each request, a "
                  "power-saving mode, or another program on the GPU")
        return Finding("decode", f"This setup should stream at ≈ {per_user:.0f} tok/s, faster than you read, and start "
                       f"in ≈ {fmt_s(p.ttft_s or 0)}, so if it feels slow something in the setup is off. The usual "
                       f"causes: {causes}. What tok/s does your tool print?",
                       ["setup:check_placement", "setup:model_load", "setup:thermal" if mac else "setup:power"],
                       status="not_measured", rule=FELT_SLOW_RULE)
    if p.ttft_s is not None:
        # it feels slow and the prediction agrees: this is what this machine does with this model
        wait = not prefill_ok and "decode" not in s.asks_about  # the first word's wait (compute), not the stream
        how = ("The first word's wait is prompt reading, which is compute-bound: a smaller model or shorter or cached "
               "prompts shorten it." if wait else "Each token reads every weight, so memory bandwidth sets the "
               "stream: a smaller model or format, or a machine with more bandwidth, is what makes it faster.")
        rate = f"{per_user:.0f}" if per_user >= 10 else f"{per_user:.1f}"
        return Finding("prefill" if wait else "decode", f"A wait of ≈ {fmt_s(p.ttft_s)} before the first word and ≈ "
                       f"{rate} tok/s after it is what this machine does with this model at a "
                       f"{p.prompt_tokens:,}-token prompt, so nothing is broken. {how}",
                       [], status="not_measured", rule=FELT_SLOW_RULE)
    return None


def _other_ttft_causes(c: Ctx) -> str:
    """Causes of a slow first token besides the prompt's length, for this engine and platform."""
    if c.server_engine:
        return ("other causes are requests queueing behind others (the server's batch is full) and long prompts "
                "of other users prefilled first (chunked prefill spreads them)")
    if c.kind == "apple_soc":
        return "other causes are the model loading before the answer and memory pressure (swapping)"
    return "other causes are the model loading before the answer and part of the model running on the CPU"


def _long_wait(c: Ctx, waited: float) -> Finding:
    """A measured wait for the first word, no prompt length: far longer than this machine needs at the usual
    prompt. After an idle pause it is the model loading again; otherwise a prompt of about ``waited × prefill``
    tokens (chat history, documents) or the model loading."""
    p = c.pred
    assert p is not None and p.prefill_tps and p.ttft_s is not None
    tokens = float(f"{waited * p.prefill_tps:.2g}")  # an upper bound: prefill slows as the prompt grows (attention)
    ctx_max = c.sit.model.max_context if c.sit.model is not None else None
    ollama = c.sit.engine == "ollama"
    unload = f"Ollama unloads an idle model after {OLLAMA_IDLE_UNLOAD_MIN} minutes" if ollama else "apps unload an idle model to free memory"
    first = (f"You wait ≈ {fmt_s(waited)} for the first word; at a {p.prompt_tokens:,}-token prompt this machine needs ≈ "
             f"{fmt_s(p.ttft_s)} (prefill ≈ {p.prefill_tps:,.0f} tok/s), so the wait is not prompt processing at usual lengths.")
    stated = "prompt_tokens" in c.sit.workload.stated
    depth = c.sit.workload.depth
    if depth >= 2000 and not c.sit.symptoms.after_idle:
        # a long conversation: re-reading it on every turn takes about (depth + prompt) / prefill (an under-estimate:
        # attention grows with the context read), the usual cause when the app's context window is smaller than the
        # conversation (it shifts or cuts it) or its start changes
        reread = (depth + p.prompt_tokens) / p.prefill_tps
        if reread >= 0.25 * waited:
            return Finding("prefill", first + f" Reading the whole {depth + p.prompt_tokens:,}-token conversation again "
                           f"takes ≈ {fmt_s(reread)} or more: the app is re-reading it on every turn instead of keeping "
                           "it cached — its context window is smaller than the conversation (so it is shifted or cut), "
                           "or something rewrites its start.", ["prefix_caching", "setup:model_load"],
                           status="below_expected", rule=FELT_SLOW_RULE)
    if c.sit.symptoms.after_idle or stated or (ctx_max and tokens > ctx_max):
        why = (f"Slow only after a pause: the model is loaded again before it answers ({unload})" if c.sit.symptoms.after_idle
               else "At the prompt you send, the model is loaded before it answers, or part of it runs on the CPU"
               if stated else
               f"No prompt this model accepts ({ctx_max:,} tokens at most) takes that long: the model is loaded before "
               "it answers, or part of it runs on the CPU")
        return Finding("prefill", first + f" {why}. Only a prompt of up to about {tokens:,.0f} tokens "
                       "would take that long to read.", ["setup:model_load", "setup:check_placement"],
                       status="below_expected" if stated else None, rule=FELT_SLOW_RULE)
    return Finding("prefill", first + f" Either the app sends a prompt of up to about {tokens:,.0f} tokens (chat history, "
                   "system prompt, documents: trim or cache them), or the model is loaded before it answers. How long is "
                   "the prompt your app sends?", ["setup:model_load", "prefix_caching", "shorter_prompt"], rule=FELT_SLOW_RULE)


def kv_cache_full(c: Ctx) -> Finding | None:
    """The engine ran out of KV cache (vLLM's preemption warning, or its log's cache at ≥ 95 % with requests waiting):
    it runs as many requests as the cache holds, throws out (preempts) some to make room and recomputes their prompts
    when they resume, and the rest wait. More cache per request is the fix, not a faster step."""
    if not c.sit.symptoms.kv_cache_full:
        return None
    p, w = c.pred, c.sit.workload
    streams = c.sit.facts.measured_streams or c.sit.measured.streams
    users = w.users
    ran = (f"it ran {streams} requests at once" + (f" of the {users} sent" if users and users > streams else "")
           if streams else "requests wait their turn")
    sig = (f"The KV cache is full: the engine preempts requests to make room (vLLM recomputes a preempted request's "
           f"whole prompt when it resumes) and queues the rest, so {ran}.")
    each = _tokens_each(c, streams)
    if each and each > 1.5 * (w.depth + w.prompt_tokens + w.gen_tokens):
        sig += (f" With {streams} requests filling it, each holds about {each:,} tokens (an estimate: {VLLM_GPU_SHARE:.0%} "
                "of the memory, vLLM's default --gpu-memory-utilization, less the weights, over the requests running): "
                f"longer than the {w.prompt_tokens:,}-token prompts assumed below — say your prompt length for exact "
                "figures.")
    if p is not None and p.running and p.concurrency > p.running:
        sig += (f" At {w.depth + w.prompt_tokens + w.gen_tokens:,} tokens a conversation, the memory beside the weights "
                f"holds about {p.running} of the {p.concurrency}.")
    return Finding("decode", sig, ["kv_cache_quantization", "setup:kv_pool", "add_gpu", "quantization",
                                       "smaller_model"],
                   status="below_expected" if streams and users and users > streams else None, rule="kv_cache_full")


VLLM_GPU_SHARE = 0.9  # vLLM's default --gpu-memory-utilization: the share of the card its weights and KV pool take


def _tokens_each(c: Ctx, streams: int | None) -> int | None:
    """Tokens each running request holds when a paged KV pool is full (vLLM), ESTIMATE: (the card's memory ×
    :data:`VLLM_GPU_SHARE` − weights − overhead) ÷ the KV bytes of a token ÷ the requests running; None off a server
    engine or without a machine and model."""
    from advisor import roofline
    from advisor.diagnose.context import SERVER_ENGINES

    p, model = c.pred, c.sit.model
    if not streams or p is None or model is None or c.sit.engine not in SERVER_ENGINES or not p.memory.total_gb:
        return None
    pool = p.memory.total_gb * VLLM_GPU_SHARE - p.memory.weights_gb - p.memory.overhead_gb
    per = roofline.kv_bytes_per_token(model, c.kv_bpe) / roofline.GB
    return int(round(pool / per / streams, -2)) if pool > 0 and per > 0 else None
