"""Remedies: a registry; each says when it applies and computes its effect with :func:`what_if`.

A remedy's effect comes from the same prediction code as the expectation (:func:`what_if` →
:func:`advisor.diagnose.context.predict_for`). A remedy whose effect is nil, or that the person
already uses at the level it proposes, is not offered (``applies`` False or ``build`` None).

Tiers order fixes by cost (DESIGN.md: "a setting before a purchase"): 0 a setting, 1 another format
(or a draft model) for the same model, 2 another model, 3 a purchase. The weights remedies (format,
model, context, the Mac GPU limit) live in :mod:`advisor.diagnose.weights`, the setup causes in
:mod:`advisor.diagnose.setup`, a model split between a card and system RAM in :mod:`advisor.diagnose.split`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from advisor import roofline
from advisor.diagnose.context import Ctx, predict_for, streams_for
from advisor.diagnose.fit import roomy
from advisor.models import Fix, Prediction
from advisor.perf.load import loaded_tps
from advisor.render.markdown import fmt_s
from advisor.understand.engine import ENGINE_NAMES, LLAMA_SERVER_ENGINES

__all__ = ["Remedy", "REGISTRY", "register", "what_if", "build", "works_first", "GENERAL_DECODE", "GENERAL_PREFILL",
           "NO_PURCHASE", "PURCHASE_TIER"]

SPEC_ACCEPT, SPEC_GAMMA, SPEC_DRAFT_COST = 0.7, 4, 0.1  # Leviathan et al. 2023 (arXiv:2211.17192), typical values
SPEC_COMPUTE_SAID = 1.3  # a verify pass costing over this × one step is said to eat the gain (compute_verify_cost)
def macos_reserve_gb(total_gb: float) -> float:
    """GB left to macOS when the GPU limit is raised: 15 % of the RAM, at least 3 GB (a 16 GB Mac gives the GPU about
    13) and at most 16 (a 512 GB one keeps 16, not 4). An ESTIMATE from common practice; Apple states none."""
    return min(max(3.0, 0.15 * total_gb), 16.0)
MIN_GAIN = 1.05  # an effect below +5 % is nil
CONVERSATION_DEPTH = 2000  # tokens already in the context from which a chat's own cache is what a prompt cache means


@dataclass(frozen=True)
class Remedy:
    """One remedy: its fix id, tier, when it applies, and how its Fix (with the effect) is made."""

    key: str
    fix_id: str
    tier: int
    applies: Callable[[Ctx], bool]
    make: Callable[[Ctx], Fix | None]


REGISTRY: dict[str, Remedy] = {}


def register(key: str, fix_id: str, tier: int, applies: Callable[[Ctx], bool] | None = None
             ) -> Callable[[Callable[[Ctx], Fix | None]], Callable[[Ctx], Fix | None]]:
    """Decorator: add a remedy to the registry under ``key``."""
    def deco(fn: Callable[[Ctx], Fix | None]) -> Callable[[Ctx], Fix | None]:
        REGISTRY[key] = Remedy(key, fix_id, tier, applies or (lambda c: True), fn)
        return fn
    return deco


def what_if(c: Ctx, **change: Any) -> Prediction | None:
    """The prediction for this situation with ``change`` applied (same code as the expectation)."""
    return predict_for(c.store, c.sit, **change)


def build(c: Ctx, key: str) -> Fix | None:
    """The Fix of remedy ``key`` for this situation, or None when it does not apply or changes nothing."""
    r = REGISTRY.get(key)
    if r is None or not r.applies(c):
        return None
    out = r.make(c)
    setup = key.startswith("setup:") or key == "offload_all"
    makes_it_fit = bool(out is not None and out.fits_with_margin and c.pred is not None and not c.pred.memory.fits)
    if out is None or (out.speedup is not None and out.speedup < MIN_GAIN and not setup and not makes_it_fit):
        return None  # nil effect; a fix that makes a model fit counts even when its speed is not higher
    return out.model_copy(update={"remedy": key})


def fix(id: str, title: str, effect: str, why: str, speedup: float | None = None, **kw: Any) -> Fix:
    return Fix(id=id, title=title, predicted_effect=effect, why=why, speedup=speedup, **kw)


def today_tg(c: Ctx) -> float | None:
    """The decode a weights remedy improves on: the expectation, or the measured rate when the model spills
    (never above the expectation: a rate above it is not what a smaller format is measured against)."""
    e = c.expected_tg
    if c.tg and c.fits is False:
        return min(c.tg, e) if e else c.tg
    return e


def current_tg(c: Ctx) -> float | None:
    """Decode today: measured when measured, else the prediction (per stream)."""
    return c.tg or c.expected_tg


# --- decode: cache, drafts, batching, hardware -------------------------------------------------------------

def _kv_applies(c: Ctx) -> bool:
    return c.pred is not None and c.sit.symptoms.kv_cache_quant is None


@register("kv_cache_quantization", "kv_cache_quantization", 0, _kv_applies)
def _kv_quant(c: Ctx) -> Fix | None:
    p, w = c.pred, c.sit.workload
    assert p is not None
    kv = p.memory.kv_cache_gb
    ctx_t = w.depth + w.prompt_tokens + w.gen_tokens
    cw = w.context_window or c.sit.facts.context_window
    if cw and cw > ctx_t and ctx_t > 0:
        # The engine reserves the cache for the allocated context (num_ctx / -c / max_model_len) up front.
        kv, ctx_t = kv * cw / ctx_t, cw
    if kv < 0.05 or (kv < 0.1 * p.memory.required_gb and w.depth + w.prompt_tokens < 4000 and ctx_t < 4000):
        return None  # a small share of the memory at a short context: halving it changes nothing
    wb = p.weight_bytes_per_token_gb
    kvb = p.kv_bytes_per_token_gb * (w.depth + w.prompt_tokens)
    # At long context the cache is a share of the bytes read per token; otherwise the gain is memory, not speed.
    sp = (wb + kvb) / (wb + kvb / 2) if (wb and w.depth + w.prompt_tokens >= 4000) else None
    m = p.memory
    room: dict[str, Any] = {}
    if not m.fits and m.total_gb is not None:  # a memory fix here: does half the cache make it fit with room?
        need = m.required_gb - m.kv_cache_gb / 2
        room = {"margin_gb": round(m.usable_gb - need, 2), "fits_with_margin": roomy(need, m.usable_gb)}
    streams = c.sit.facts.measured_streams
    if c.sit.symptoms.kv_cache_full and streams and streams > 1:  # a full pool, measured: twice the tokens in flight
        from advisor.diagnose.kv_asked import kv_setting

        return fix("kv_cache_quantization", f"Keep the KV cache in 8 bits: {kv_setting(c.sit.engine)}",
                   f"the same memory holds twice the tokens: ≈ {2 * streams} requests of today's length at once instead "
                   f"of {streams}, and fewer preemptions",
                   "Each request's KV cache takes half the memory, so twice as many fit beside the weights.",
                   speedup=2.0)
    if p.running is not None and p.running < w.users and (more := _more_served(c, kv_bytes_per_element=1.0)):
        served, per = more
        server = c.sit.engine in ("vllm", "sglang", "tensorrt-llm")
        return fix("kv_cache_quantization", "Keep the KV cache in 8 bits: " + (
            "--kv-cache-dtype fp8 (vLLM, SGLang)" if server else "-ctk q8_0 -ctv q8_0 with flash attention (llama.cpp)"),
            f"{_served(served, w.users)} at once instead of {p.running}, at ≈ {per:.3g} tok/s each"
            + (" on average" if loaded_tps(p) else ""),
            "Each user's KV cache (the model's memory of their prompt) takes half the memory, so twice as many fit "
            "beside the weights and fewer wait their turn.", speedup=served / p.running)
    from advisor.diagnose.kv_asked import kv_setting  # the engine's own words (vLLM: --kv-cache-dtype fp8)

    return fix("kv_cache_quantization", f"Keep the KV cache in 8 bits: {kv_setting(c.sit.engine)}",
               f"KV cache at {ctx_t:,} tokens × {w.users}: {kv:.1f} → {kv / 2:.1f} GB; bytes read per token "
               f"{wb + kvb:.2f} → {wb + kvb / 2:.2f} GB",
               "Halves the memory the context takes and the bytes decode reads at long context.", speedup=sp, **room)


def _more_served(c: Ctx, **changes: Any) -> tuple[int, float] | None:
    """(users served at once, tok/s each) with ``changes`` (a smaller KV cache or format) when not every user fits
    now and more would; None when no more would."""
    p = c.pred
    if p is None or p.running is None:
        return None
    new = what_if(c, **changes)
    if new is None:
        return None
    served = new.running if new.running is not None else c.sit.workload.users
    per = loaded_tps(new) or new.decode_tps_per_seq or new.decode_tps  # on average when prompts stall the streams
    return (served, per) if served > p.running and per else None


def _served(n: int, users: int) -> str:
    return f"all {users} users" if n >= users else f"{n} of the {users} users"


@register("kv_cache_off", "kv_cache_quantization", 0, lambda c: c.sit.symptoms.kv_cache_quant is not None)
def _kv_off(c: Ctx) -> Fix | None:
    return fix("kv_cache_quantization", "Turn KV-cache quantization off (f16 cache) for this model",
               "avoids the CPU fallback of attention", "Quantized KV caches need matching flash-attention kernels; when a "
               "model has none, attention runs on the CPU every token.")


@register("flash_attention", "flash_attention", 0, lambda c: c.sit.symptoms.flash_attention is not True)
def _flash(c: Ctx) -> Fix | None:
    """Flash attention for the llama.cpp family (llama.cpp, Ollama, LM Studio, KoboldCpp), where it is a switch;
    vLLM, SGLang, TensorRT-LLM and MLX run fused attention kernels already. Not when the run already used it (a
    llama-bench ``fa`` column of 1, ``-fa on``)."""
    from advisor.calibration import engine_family

    w = c.sit.workload
    if w.depth + w.prompt_tokens < 8000 and not c.sit.symptoms.long_context:
        return None
    if c.server_engine or engine_family(c.sit.engine_text or c.sit.engine) == "mlx" or _ran_with_flash(c):
        return None
    title = "Enable flash attention (-fa on / OLLAMA_FLASH_ATTENTION=1)"
    why = ("Attention over a long KV cache dominates at depth; fused kernels read it once instead of writing "
           "the full attention matrix.")
    on = what_if(c, flash_attn=True) if c.sit.symptoms.flash_attention is False and c.pred is not None else None
    if on is not None and on.prefill_tps and c.pred is not None and c.pred.prefill_tps:
        sp = on.prefill_tps / c.pred.prefill_tps  # stated off: the same model with the fitted attention factor of -fa
        return fix("flash_attention", title, f"≈ {sp:.1f}× prefill ({c.pred.prefill_tps:,.0f} → {on.prefill_tps:,.0f} "
                   f"tok/s at {w.depth + w.prompt_tokens:,} tokens of context)", why, speedup=sp)
    return fix("flash_attention", title,
               f"less slowdown of prefill and decode at {w.depth + w.prompt_tokens:,} tokens of context", why)


def _ran_with_flash(c: Ctx) -> bool:
    """A pasted llama-bench run whose ``fa`` column says flash attention was on."""
    raw = getattr(c.sit.facts, "raw_output", None)
    if not raw or "flash" not in raw.lower() and "| fa" not in raw.lower():
        return False
    from advisor.importers import parse_output

    try:
        return any(n in ("fa=1", "flash_attn=1") for m in parse_output(raw).measurements for n in m.notes)
    except Exception:  # a paste the importer cannot read says nothing either way
        return False


# Engines without draft-model speculative decoding a user can switch on (Ollama's API and Modelfile have no draft
# model option as of its 0.12 releases): the fix would send them to another engine, which is not what it says.
NO_DRAFT_ENGINES = ("ollama",)


def _spec_applies(c: Ctx) -> bool:
    """Single stream, no drafts in use, nothing broken first (far below, spilling), not a batched server, and an
    engine that has draft models."""
    return (c.sit.symptoms.speculative is None and c.sit.workload.users <= 1 and current_tg(c) is not None
            and not c.far_below and c.fits is not False and not c.looks_aggregate and not c.server_engine
            and (c.sit.engine or "") not in NO_DRAFT_ENGINES)


def compute_verify_cost(c: Ctx) -> float:
    """The target model's pass over the γ + 1 drafted tokens ÷ one decode step: the step's weight read plus the
    arithmetic of γ + 1 tokens, ``1 + (γ + 1) × decode / prefill`` (the machine's prompt-reading rate is its compute
    for this model). ESTIMATE: the arithmetic is counted on top of the read, not hidden under it, as small batches
    in llama.cpp's kernels are neither purely bandwidth- nor compute-bound. About 1.1 on a GPU (thousands of prompt
    tokens a second); 1.5–2 on a CPU or a small board, where checking the guesses costs most of what they save."""
    p = c.pred
    if p is None or not p.prefill_tps or not (p.decode_tps_per_seq or p.decode_tps):
        return 1.0
    return 1.0 + (SPEC_GAMMA + 1) / p.prefill_tps * (p.decode_tps_per_seq or p.decode_tps)


def spec_verify_cost(c: Ctx) -> float:
    """The target's pass over γ + 1 drafted tokens ÷ one step: a MoE's extra expert reads
    (:func:`moe_verify_cost`) plus the tokens' arithmetic (:func:`compute_verify_cost`)."""
    return moe_verify_cost(c) + compute_verify_cost(c) - 1.0


@register("speculative_decoding", "speculative_decoding", 1, _spec_applies)
def _speculative(c: Ctx) -> Fix | None:
    verify = spec_verify_cost(c)
    sp = roofline.speculative_speedup(SPEC_ACCEPT, SPEC_GAMMA, SPEC_DRAFT_COST, verify)
    if sp < MIN_GAIN:
        return None  # a MoE's check of the guesses reads so many more experts that nothing is gained
    # from what the person sees now when they measured it with the model in memory (52 tok/s measured, 40 expected:
    # "52 → 103", not "40 → 80"), else from the expectation
    base = (c.tg if c.tg and c.fits is not False and not c.looks_aggregate else None) or c.expected_tg or current_tg(c)
    assert base is not None
    return fix("speculative_decoding", "Let a small helper model guess ahead (speculative decoding with a draft model)",
               f"≈ {sp:.1f}× decode ({base:.3g} → {base * sp:.3g} tok/s)",
               f"A draft model ~10× smaller guesses {SPEC_GAMMA} words at a time and the big model checks them all in "
               f"one pass, so it keeps the ones it agrees with; assumes {SPEC_ACCEPT:.0%} of guesses are accepted "
               "(Leviathan et al. 2023). Gains are largest on code and repetitive text."
               + (f" Checking {SPEC_GAMMA + 1} tokens at once costs about {verify:.1f}× one token's step here (this "
                  "machine's compute reads prompts at only a few times its decode rate), which eats much of the gain."
                  if compute_verify_cost(c) > max(SPEC_COMPUTE_SAID, moe_verify_cost(c)) else
                  f" This is a mixture of experts: checking {SPEC_GAMMA + 1} tokens at once reads about "
                  f"{moe_verify_cost(c):.1f}× "
                  "the expert weights one token does, which eats most of the gain." if moe_verify_cost(c) > 1.05 else ""),
               speedup=sp, new_decode_tps=base * sp)


def moe_verify_cost(c: Ctx) -> float:
    """The target model's pass over the γ + 1 drafted tokens ÷ its pass over one: 1 for a dense model; for a MoE,
    whose γ + 1 tokens each pick their own experts, the step's weight reads grow by the bytes they touch
    (:func:`advisor.perf.step.weight_bytes_step`) while its fixed part (kernel launches, attention, sync) does not.

    One token's step ``t1 = 1 / decode``; its reads take the roofline time at the share of bandwidth engines reach
    (:data:`advisor.diagnose.status.ROOFLINE_SHARE_ACHIEVABLE`), the rest is fixed:
    ``v = (t1 − t_read + t_read × bytes(γ+1) / bytes(1)) / t1``."""
    from advisor.diagnose.status import ROOFLINE_SHARE_ACHIEVABLE
    from advisor.perf.step import weight_bytes_step

    m, q, p = c.sit.model, c.sit.quant, c.pred
    if m is None or q is None:
        return 1.0
    one = weight_bytes_step(m, q.bits_per_weight, 1)
    grow = weight_bytes_step(m, q.bits_per_weight, SPEC_GAMMA + 1) / one if one else 1.0
    if grow <= 1.0:
        return 1.0
    if p is None or not p.decode_tps or not p.decode_ceiling_tps:
        return grow
    t1 = 1.0 / (p.decode_tps_per_seq or p.decode_tps)
    t_read = min(t1, 1.0 / p.decode_ceiling_tps / ROOFLINE_SHARE_ACHIEVABLE)
    return max(1.0, (t1 - t_read + t_read * grow) / t1)


def _streams_now(c: Ctx) -> int:
    s, ms, w = c.sit.symptoms, c.sit.measured, c.sit.workload
    return max(1, s.batching or ms.streams or (w.users if s.batching is None and w.users > 1 else 1))


def batch_knob(c: Ctx) -> str:
    """The setting that sets how many sequences the person's engine batches, in its words."""
    return BATCH_KNOBS.get(c.sit.engine or "other", "max batch size / --max-num-seqs")


# The setting that sets the number of sequences batched, per engine (advisor.understand.situation.Engine).
BATCH_KNOBS: dict[str, str] = {
    "ollama": "OLLAMA_NUM_PARALLEL",
    "sglang": "--max-running-requests",
    "vllm": "--max-num-seqs",
    "tensorrt-llm": "--max_batch_size",
    **{e: "llama-server -np, with -c that many times the context" for e in LLAMA_SERVER_ENGINES},
}


def _batching_applies(c: Ctx) -> bool:
    p, w = c.pred, c.sit.workload
    aggregate = c.looks_aggregate if p is None else bool(c.tg_raw and c.tg_raw > 1.15 * p.decode_ceiling_tps)
    if w.users == 1 and "concurrency" in w.stated and not (aggregate or c.sit.measured.decode_is_aggregate
                                                           or (c.sit.symptoms.batching or 0) > 1):
        return False  # one user said so: a larger batch raises a server's total, never this one stream
    if p is None:
        return aggregate or c.server_engine
    return w.users > 1 or c.server_engine or aggregate or c.sit.measured.decode_is_aggregate


@register("batching", "batching", 0, _batching_applies)
def _batching(c: Ctx) -> Fix | None:
    w, s = c.sit.workload, c.sit.symptoms
    if c.pred is None:
        return fix("batching", f"Batch more requests together (raise the server's batch: {batch_knob(c)})",
                   "aggregate tok/s grows with the batch until the decode step becomes compute-bound",
                   "Each decode step reads the weights once for the whole batch; published server figures are "
                   "aggregates at large batch.")
    if w.users > 1 and (s.batching is None or s.batching < w.users) and not c.server_engine:
        one = what_if(c, concurrency=1)
        many = what_if(c, concurrency=w.users)
        if one is None or many is None or many.decode_tps < MIN_GAIN * one.decode_tps:
            return None
        how = (f"OLLAMA_NUM_PARALLEL={w.users}" if batch_knob(c) == "OLLAMA_NUM_PARALLEL"
               else f"llama-server -np {w.users}" if c.kind in ("apple_soc", "cpu", "apu")  # no vLLM on these GPUs
               else f"llama-server -np {w.users}, vLLM")
        return fix("batching", f"Serve the {w.users} users from one batched server ({how})",
                   f"aggregate decode ≈ {many.decode_tps:.0f} tok/s ({many.decode_tps_per_seq or 0:.1f} each) instead of "
                   f"{one.decode_tps:.0f} tok/s shared one request at a time",
                   "Batched decode reads the weights once per step for every sequence in the batch.",
                   speedup=many.decode_tps / one.decode_tps, new_decode_tps=many.decode_tps)
    now = _streams_now(c)
    if c.looks_aggregate and c.tg_raw and now <= 1:
        est = streams_for(c.store, c.sit, c.tg_raw)
        if est is None:
            return None  # more than batching reaches here: not a batching question
        now = est
    before = what_if(c, concurrency=now)
    if before is None:
        return None
    # a measured rate with several streams: the aggregate as said, or one stream's rate × the streams
    per_stream = not (c.sit.measured.decode_is_aggregate or c.looks_aggregate)
    base = (c.tg_raw * (now if per_stream else 1)) if c.tg_raw else before.decode_tps
    new_b, after = 0, None
    # a measured rate under (or over) the model's at this batch scales its larger batches alike, so a batch never
    # promises each stream more than the person gets now (15 tok/s measured alone: not "20 tok/s each at 8")
    # (an aggregate too: a server far below its expectation at its own batch stays as far below at a larger one)
    scale = base / before.decode_tps if (c.tg_raw and before.decode_tps and (per_stream or c.sit.measured.streams)) else 1.0
    # stated users and nothing measured: a batch holds at most the users' requests (more sequences do not exist)
    cap = w.users if (not c.tg_raw and w.users > 1 and "concurrency" in w.stated) else 4096
    steps = (max(2 * now, 8), 4 * now, 8 * now, 256) if cap == 4096 else (cap,)
    for b in steps:  # the first batch step that gains something
        if b <= now or b > cap:
            continue
        p = what_if(c, concurrency=b)
        # against what the person measured when there is a measured aggregate (a larger batch gains on THAT)
        if p is not None and p.decode_tps * scale >= MIN_GAIN * (base if c.tg_raw else before.decode_tps):
            new_b, after = b, p
            break
    if after is None:
        return None
    title = f"Batch more requests together (≈ {new_b} concurrent sequences: {batch_knob(c)})"
    if c.sit.engine in ("vllm", "sglang", "tensorrt-llm"):  # batches what arrives together; its setting only caps it
        title = (f"Send requests concurrently (≈ {new_b} at a time): "
                 f"{ENGINE_NAMES.get(c.sit.engine or '', c.sit.engine)} batches them on its own, "
                 f"{batch_knob(c)} only caps how many")
    alone = now <= 1 and w.users <= 1 and per_stream  # one stream of one person: a batch raises only a total
    effect = (f"aggregate decode ≈ {after.decode_tps * scale:,.0f} tok/s at {new_b} sequences vs ≈ {base:,.0f} now "
              f"({(after.decode_tps_per_seq or 0) * scale:.1f} tok/s each)")
    if alone:
        title = "If you have several requests to run (agents, batch jobs, other users): " + title[0].lower() + title[1:]
        effect += "; one conversation by itself stays as fast as it is"
    return fix("batching", title, effect,
               "Each decode step reads the weights once for the whole batch, so throughput grows with the batch "
               "until the step becomes compute-bound (the ridge point).",
               # one person's single stream gains nothing: ranked after the fixes that speed it up
               speedup=None if alone else (after.decode_tps * scale / base if base else None),
               new_decode_tps=after.decode_tps * scale)


@register("batching_generic", "batching", 0)
def _batching_generic(c: Ctx) -> Fix | None:
    return fix("batching", f"Batch more requests together (raise the server's batch: {batch_knob(c)})",
               "aggregate tok/s grows with the batch until the decode step becomes compute-bound",
               "Each decode step reads the weights once for the whole batch; published server figures are "
               "aggregates at large batch.")


@register("chunked_prefill", "chunked_prefill", 0, lambda c: c.sit.workload.users > 1 and c.sit.workload.prompt_tokens >= 1000)
def _chunked(c: Ctx) -> Fix | None:
    """Chunked prefill in the engine's own words: turned on where it is off by default, its chunk budget
    tuned where it is already on (vLLM ≥ 0.8's V1 engine and SGLang chunk prompts by default; llama-server fills
    each step's batch (-b) with the decoding slots' tokens first, then prompt tokens)."""
    from advisor.perf.fit import vllm_v0

    engine, text = c.sit.engine, (c.sit.engine_text or "").lower()
    why = ("Splitting a long prompt into chunks interleaved with decode steps trades a slightly slower prefill for "
           "far less latency variance.")
    effect = "long prompts no longer stall the streams already decoding"
    if engine == "vllm":
        if vllm_v0(text):
            return fix("chunked_prefill", "Chunked prefill: start vLLM with --enable-chunked-prefill (off by default "
                       "before 0.8)", effect, why)
        return fix("chunked_prefill", "Tune chunked prefill: it is on by default in vLLM 0.8 and later; a smaller chunk "
                   "budget (--max-num-batched-tokens 2048) stalls the decoding streams less, a larger one reads prompts "
                   "faster", "shorter stalls for the streams already decoding while a long prompt is read", why)
    if engine == "sglang":
        return fix("chunked_prefill", "Tune chunked prefill: SGLang chunks prompts by default; a smaller "
                   "--chunked-prefill-size (e.g. 2048) stalls the decoding streams less, a larger one reads prompts faster",
                   "shorter stalls for the streams already decoding while a long prompt is read", why)
    if engine == "ollama":
        return None  # Ollama reads prompts in num_batch chunks (default 512) beside the decoding requests already
    if engine in LLAMA_SERVER_ENGINES:
        return fix("chunked_prefill", "Smaller prompt chunks: llama-server fills each step with the decoding slots' "
                   "tokens first, then up to -b (--batch-size, default 2048) prompt tokens; -b 512 stalls the other "
                   "streams less", "shorter stalls for the streams already decoding while a long prompt is read", why)
    return fix("chunked_prefill", "Chunked prefill", effect, why)


# --- prefill ---------------------------------------------------------------------------------------------

def _prefill_rate(c: Ctx) -> float | None:
    p = c.pred
    if c.pp and not c.cache_hit:
        return c.pp
    return p.prefill_tps if p else None


@register("prefix_caching", "prefix_caching", 0, lambda c: c.sit.workload.prompt_tokens >= 200)
def _prefix(c: Ctx) -> Fix | None:
    pp, w = _prefill_rate(c), c.sit.workload
    if not pp:
        return None
    if w.depth >= CONVERSATION_DEPTH and not w.shared_prefix_tokens:
        # A conversation already in the context: its turns are cached when the app keeps the KV cache between
        # turns and the context window holds them all; otherwise every turn reads the whole conversation again.
        after = w.prompt_tokens / pp
        before = (w.depth + w.prompt_tokens) / pp
        return fix("prefix_caching", "Let the app remember the start of the conversation between turns: the context "
                   "length set in the app (Ollama num_ctx, LM Studio's Context Length, llama-server -c) must hold all of "
                   "it, and nothing may rewrite its start",
                   f"first word ≈ {fmt_s(before)} when every turn re-reads the {w.depth + w.prompt_tokens:,} tokens → "
                   f"{fmt_s(after)} with only the new {w.prompt_tokens:,} read",
                   "Chat apps keep the KV cache of the turns so far and read only the new message (llama.cpp cache_prompt, "
                   "Ollama while the model stays loaded, mlx-lm's prompt cache). Once the conversation outgrows the "
                   "context length, or a system prompt or history edit changes its start, the app cuts or shifts it and "
                   "reads it all again on every turn: the usual reason a long chat 'gets slow'.",
                   speedup=before / after if after > 0 else None, new_ttft_s=after)
    cached = min(w.shared_prefix_tokens or int(w.prompt_tokens * 0.9), w.prompt_tokens - 1)
    before, after = w.prompt_tokens / pp, (w.prompt_tokens - cached) / pp
    how = "stated shared prefix" if w.shared_prefix_tokens else "assumed: 90 % of each prompt repeats (history, system prompt, files)"
    default_on = PREFIX_CACHE_DEFAULT_ON.get(c.sit.engine or "")
    on = c.sit.symptoms.prefix_caching is True or (default_on is not None and c.sit.symptoms.prefix_caching is not False)
    title = ("Make the prompt cache actually hit (keep the prefix byte-identical; one slot per conversation)" if on else
             "Reuse the KV cache of the repeated prompt prefix (prompt caching)")
    if c.sit.symptoms.cache_discarded:
        title = (f"Make the prompt cache hit: your log's `kv cache rm [0, end)` says the server kept none of the "
                 f"cached conversation and read all {w.prompt_tokens:,} tokens again; the start of the prompt changed "
                 "between turns (a chat template that drops earlier <think> blocks, a timestamp or changing system "
                 "prompt, an edited earlier turn) or the request went to another slot")
    elif default_on and c.sit.symptoms.prefix_caching is not False:
        title = (f"Make the prefix cache actually hit ({ENGINE_NAMES.get(c.sit.engine or '', c.sit.engine)} caches "
                 "repeated prefixes by default): put the shared part first and keep it byte-identical in every request")
    why = ("A prefix that repeats across requests is prefilled once; only the new tokens are processed "
           "(llama.cpp cache_prompt / --cache-reuse, Ollama keeps it while the model stays loaded, mlx-lm prompt "
           "cache, vLLM --enable-prefix-caching).")
    if default_on and c.sit.symptoms.prefix_caching is not False:
        why = (f"{default_on} A hit needs the repeated part first and byte-identical in every request (no "
               "timestamp or changing instruction before it); the server's log or /metrics shows the prefix-cache "
               "hit rate.")
    return fix("prefix_caching", title, f"TTFT {fmt_s(before)} → {fmt_s(after)} for {cached:,} cached tokens ({how})",
               why, speedup=before / after if after > 0 else None, new_ttft_s=after)


# Engines whose prefix cache is on unless switched off: the fix is making it hit, not turning it on.
# vLLM: automatic prefix caching is on by default in the V1 engine (vLLM 0.8+, --no-enable-prefix-caching
# turns it off; docs.vllm.ai "Automatic Prefix Caching"); SGLang: RadixAttention reuses prefixes unless
# --disable-radix-cache (docs.sglang.ai server arguments).
PREFIX_CACHE_DEFAULT_ON = {
    "vllm": "vLLM (0.8 and later) caches repeated prefixes by default; --no-enable-prefix-caching is the only way "
            "it is off.",
    "sglang": "SGLang's RadixAttention caches repeated prefixes by default unless started with --disable-radix-cache.",
}


@register("shorter_prompt", "shorter_prompt", 0, lambda c: c.sit.workload.prompt_tokens >= 200)
def _shorter(c: Ctx) -> Fix | None:
    pp, w = _prefill_rate(c), c.sit.workload
    if not pp:
        return None
    before = w.prompt_tokens / pp
    return fix("shorter_prompt", "Send a shorter prompt (trim history, retrieve less, summarise files)",
               f"half the prompt: TTFT {fmt_s(before)} → {fmt_s(before / 2)}",
               "Prefill time grows with every prompt token (faster than linearly at long context).",
               speedup=2.0, new_ttft_s=before / 2)


def works_first(fixes: list[Fix], tiers: dict[int, int]) -> list[Fix]:
    """Memory fixes ranked by whether they really work, then by cost (``tiers``: ``id(fix)`` → tier).

    A fix works when what has to fit then fits with the headroom of :mod:`advisor.diagnose.fit`
    (``fits_with_margin``). Working fixes come first, cheapest first (a setting, a format, a model, a
    purchase); the others keep their order after them (a format with 0.1 GB to spare is not the top fix).
    """
    order = {id(fx): i for i, fx in enumerate(fixes)}
    return sorted(fixes, key=lambda fx: (0, tiers.get(id(fx), 1), order[id(fx)]) if fx.fits_with_margin
                  else (1, 0, order[id(fx)]))


PURCHASE_TIER = 3
# Without buying: the changes a reply names beside a purchase when that is the top fix.
NO_PURCHASE = ("smaller_model", "quantization")

def _tp_applies(c: Ctx) -> bool:
    p = c.pred
    return bool(p is not None and (p.hardware.get("n_devices") or 1) > 1 and p.hardware.get("layout") == "layer_split"
                and p.memory.fits is not False and c.kind != "cpu")  # two CPU sockets are not two GPUs


@register("tensor_parallel", "fix_configuration", 1, _tp_applies)
def _tensor_parallel(c: Ctx) -> Fix | None:
    """Several GPUs in a layer split (llama.cpp's and Ollama's default) run their layers in turn; tensor parallelism
    has them read their share of every layer at once (two all-reduces per layer over the link, modelled in
    :mod:`advisor.perf`)."""
    p = c.pred
    assert p is not None
    n = int(p.hardware.get("n_devices") or 1)
    heads = c.sit.model.n_heads if c.sit.model is not None else None
    if heads and heads % n:
        return None  # vLLM and SGLang split the attention heads evenly: 64 heads do not split 3 ways (it refuses)
    tp = what_if(c, layout="tensor_parallel", backend="vllm")
    base = current_tg(c)
    if tp is None or not base:
        return None
    new = tp.decode_tps_per_seq or tp.decode_tps
    if new <= 1.1 * base:
        return None
    return fix("fix_configuration", f"Run the {n} GPUs at once instead of in turn: tensor parallelism (vLLM or SGLang "
               f"with --tensor-parallel-size {n}, with an AWQ/GPTQ build of the model)",
               f"decode ≈ {new:.3g} tok/s vs ≈ {base:.3g} now (the same GPUs)",
               "A layer split puts part of the layers on each GPU and runs them one after the other, so each GPU waits "
               "for the others (about 1/N busy each) and decode runs at one card's bandwidth; tensor parallelism splits "
               "every layer, so all of them read their share of each weight at the same time, at the cost of two "
               "all-reduces per layer over the link between them.", speedup=new / base, new_decode_tps=new)


GENERAL_DECODE = ("quantization", "speculative_decoding", "smaller_model", "batching", "more_bandwidth", "tensor_parallel")
GENERAL_PREFILL = ("prefix_caching", "shorter_prompt", "more_compute", "flash_attention", "chunked_prefill")

from advisor.diagnose import engines as _engines  # noqa: E402,F401  (registers the engine switch)
from advisor.diagnose import purchases as _purchases  # noqa: E402,F401  (registers the purchase remedies)
from advisor.diagnose import setup as _setup  # noqa: E402,F401  (registers the setup remedies)
from advisor.diagnose import split as _split  # noqa: E402,F401  (registers the card + system RAM remedies)
from advisor.diagnose import weights as _weights  # noqa: E402,F401  (registers the format/model/fit remedies)
from advisor.diagnose.purchases import _with_memory  # noqa: E402,F401  (its name here before purchases held it)
from advisor.diagnose.split import deliberate_split, experts_on_cpu  # noqa: E402,F401  (one home: split.py)
