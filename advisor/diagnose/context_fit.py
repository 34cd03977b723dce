"""How much context fits, and how much memory a context needs.

Two questions people ask before anything else about long context:

- "How much context can I fit on my 3090 with Llama 3.1 8B?" (:attr:`Symptoms.context_asked`, :data:`advisor.understand.symptoms.CONTEXT_ASKED`): what the memory
  left after the weights and overhead holds in KV cache, at 16 and at 8 bits, against the model's own window
  (:func:`context_answer`, one line beside the verdict).
- "How much RAM do I need for 128k context on an 8B?" with no machine named yet (:func:`needs_line`): weights + KV
  cache + overhead for that context, and the smallest usual card and Mac that hold it, said before the advisor
  asks which machine it is.

Every figure comes from :func:`advisor.roofline.memory_fit` and :func:`advisor.roofline.kv_bytes_per_token` (the
KV cache of every layer's K and V for one token: ``2 × layers × KV heads × head dim × bytes per element``, sliding
windows and attention-free layers as the model's spec says).
"""

from __future__ import annotations

from advisor import roofline
from advisor.diagnose.context import Ctx, predict_for
from advisor.diagnose.kv_asked import kv_setting
from advisor.errors import AdvisorError
from advisor.models import Hardware, ModelSpec, Scenario
from advisor.perf.moe import active_bpw, with_moe
from knowledge import catalog
from knowledge.store import Store

__all__ = ["CONTEXT_FITS", "KV_8BIT", "context_answer", "context_capacity", "needs_line", "window_setting"]

CONTEXT_FITS = "Context that fits"  # the answer's name (the reply puts it first)
KV_8BIT = "q8_0"  # the 8-bit cache type every llama.cpp-family engine offers (vLLM's fp8 is the same size)
# How each engine sets the context window (llama.cpp -c; Ollama num_ctx or OLLAMA_CONTEXT_LENGTH; LM Studio's
# "Context Length" load setting; vLLM --max-model-len; SGLang --context-length).
_WINDOW = {"ollama": "num_ctx (or OLLAMA_CONTEXT_LENGTH)", "lm-studio": "the Context Length load setting",
           "vllm": "--max-model-len", "sglang": "--context-length", "koboldcpp": "--contextsize"}


def window_setting(engine: str | None) -> str:
    """The engine's own setting for the context window (llama.cpp's ``-c`` when the engine is not known)."""
    return _WINDOW.get(engine or "", "-c (--ctx-size)")


def _per_token(model: ModelSpec, bpe: float) -> float:
    """KV cache per token, GB."""
    return roofline.kv_bytes_per_token(model, bpe) / roofline.GB


def _size(gb: float) -> str:
    """"128 KB" / "1.2 MB" for a per-token size given in GB."""
    kb = gb * 1e6
    return f"{kb:,.0f} KB" if kb < 1000 else f"{kb / 1000:.2g} MB"


def _tokens(n: float) -> str:
    """A token count to 2 significant figures ("≈ 150,000"), thousands kept readable."""
    if n >= 1000:
        digits = len(str(int(n))) - 2
        return f"{round(n, -digits):,.0f}"
    return f"{n:,.0f}"


def context_capacity(free_gb: float, model: ModelSpec, bpe: float, users: int = 1) -> int:
    """Tokens of context each of ``users`` conversations gets in ``free_gb`` of KV cache at ``bpe`` bytes per
    element (0 when nothing is free). Not capped by the model's window."""
    per = _per_token(model, bpe)
    if free_gb <= 0 or per <= 0:
        return 0
    return int(free_gb / per / max(1, users))


def context_answer(c: Ctx) -> str | None:
    """"Context that fits: …" for a capacity question, or None when none was asked (or no machine is known)."""
    if not c.sit.symptoms.context_asked or c.pred is None or c.sit.model is None:
        return None
    p, model = c.pred, c.sit.model
    m = p.memory
    if not m.usable_gb or m.usable_gb == float("inf"):
        return None
    users = max(1, p.concurrency)
    free = m.usable_gb - m.weights_gb - m.overhead_gb
    name = model.id.split("/")[-1]
    engine = c.sit.engine or ""
    setting = window_setting(engine)
    if free <= 0.05:
        return (f"{CONTEXT_FITS}: none — the weights ({m.weights_gb:.1f} GB) and overhead ({m.overhead_gb:.1f} GB) "
                f"already take the {m.usable_gb:.1f} GB usable here, so {name} at {p.quant} does not run from this "
                "memory with any context; a smaller format or model comes first")
    said = c.sit.symptoms.kv_cache_quant
    bpe = c.kv_bpe
    kind = said if said and said != "quantized" else ("q8_0" if said else "F16")
    n = context_capacity(free, model, bpe, users)
    window = model.max_context
    who = f" for each of {users} conversations" if users > 1 else ""
    head = (f"{CONTEXT_FITS}: after the weights ({m.weights_gb:.1f} GB) and overhead ({m.overhead_gb:.1f} GB), "
            f"{free:.1f} GB of the {m.usable_gb:.1f} GB usable is left for the KV cache (the model's memory of the "
            f"conversation), at {_size(_per_token(model, bpe))} a token in {kind}")
    if window and n >= window:
        full = window * _per_token(model, bpe) * users
        out = (f"{head} — room for ≈ {_tokens(n)} tokens{who}, more than {name}'s {window:,}-token window, so the "
               f"whole window fits ({full:.1f} GB); set it with {setting} {window}")
        n_used = window
    else:
        out = f"{head} — room for ≈ {_tokens(n)} tokens{who}"
        if window:
            out += f" of its {window:,}-token window"
        out += f"; set {setting} to about {_round_down(n)}"
        n_used = n
        if bpe > roofline.kv_element_bytes(KV_8BIT) + 1e-9:
            n8 = context_capacity(free, model, roofline.kv_element_bytes(KV_8BIT), users)
            n8_txt = (f"the whole {window:,}-token window" if window and n8 >= window else f"≈ {_tokens(n8)} tokens")
            out += (f". An 8-bit cache ({kv_setting(engine)}) halves each token's size: {n8_txt}{who}, with little "
                    "loss in quality")
    slow = _decode_at(c, n_used)
    if slow:
        out += f". Deep into that context decode slows to ≈ {slow}: every token reads the whole cache"
    return out


def _round_down(n: int) -> str:
    """A window setting a little under ``n``: to the thousand (or hundred) below."""
    step = 1000 if n >= 10_000 else 100
    return f"{max(step, n // step * step):,}"


def _decode_at(c: Ctx, tokens: int) -> str | None:
    """Decode tok/s per conversation with ``tokens`` already in the cache, worded; None when it barely differs."""
    p = c.pred
    w = c.sit.workload
    if p is None or tokens <= w.prompt_tokens + w.gen_tokens:
        return None
    deep = predict_for(c.store, c.sit, depth=max(0, tokens - w.prompt_tokens - w.gen_tokens))
    if deep is None:
        return None
    now, then = p.decode_tps_per_seq or p.decode_tps, deep.decode_tps_per_seq or deep.decode_tps
    if not (now and then) or then > 0.9 * now:
        return None
    return f"{then:.3g} tok/s, from {now:.3g} at a short prompt"


# The smallest usual memory of a graphics card (GB, as sold) and of a Mac (GB of unified memory).
_CARDS = (8, 12, 16, 24, 32, 48, 80, 96, 141)
_MACS = (16, 24, 32, 36, 48, 64, 96, 128, 192, 256, 512)


def _smallest(kind: str, sizes: tuple[int, ...], need_gb: float) -> int | None:
    """The smallest of ``sizes`` whose usable share (:func:`advisor.roofline.default_usable_fraction`) holds
    ``need_gb`` on a machine of ``kind``."""
    hw = Hardware(id="sizing", name="sizing", kind=kind, bandwidth_gbs=100.0)  # type: ignore[arg-type]
    for s in sizes:
        total = s * roofline.STATED_GB if roofline.counts_binary_memory(hw) else s
        if total * roofline.default_usable_fraction(hw, s)[0] >= need_gb:
            return s
    return None


def needs_line(store: Store, facts: Scenario, asked: bool) -> str | None:
    """Memory a model needs at the context stated (or a short chat and its full window), said before the advisor
    asks for the machine; None without a model, with a machine already known, or when memory was not asked about."""
    if not asked or not facts.model or facts.hardware or facts.bandwidth_gbs:
        return None
    try:
        model = with_moe(catalog.resolve_model(store, facts.model).value)
        quant = catalog.resolve_quant(store, facts.quant or "Q4_K_M", backend=facts.backend).value
    except AdvisorError:
        return None
    bpw = active_bpw(model, quant)
    hw = Hardware(id="sizing", name="sizing", kind="discrete_gpu", bandwidth_gbs=100.0)  # type: ignore[arg-type]
    users = max(1, facts.concurrency or 1)
    ctx = facts.context_window or ((facts.prompt_tokens or 500) + (facts.gen_tokens or 300))
    m = roofline.memory_fit(hw, model, bpw, context_tokens=ctx, concurrency=users)
    m8 = roofline.memory_fit(hw, model, bpw, context_tokens=ctx, concurrency=users,
                             kv_bytes_per_element=roofline.kv_element_bytes(KV_8BIT))
    name = model.id.split("/")[-1]
    who = f" for {users} conversations" if users > 1 else ""
    what = f"a {ctx:,}-token context{who}" if facts.context_window else f"a conversation of {ctx:,} tokens{who}"
    out = (f"**Memory for {name} at {quant.name} with {what}:** weights {m.weights_gb:.1f} GB + KV cache "
           f"{m.kv_cache_gb:.1f} GB (F16) + overhead {m.overhead_gb:.1f} GB ≈ **{m.required_gb:.1f} GB**")
    if m.kv_cache_gb >= 1.0:
        out += f"; with an 8-bit KV cache ≈ {m8.required_gb:.1f} GB"
    elif model.max_context and not facts.context_window:
        full = roofline.kv_bytes(model, model.max_context) * users / roofline.GB
        out += f"; its full {model.max_context:,}-token window would add {full:.1f} GB of KV cache"
    card, mac = _smallest("discrete_gpu", _CARDS, m.required_gb), _smallest("apple_soc", _MACS, m.required_gb)
    fits = [f"a {card} GB graphics card" if card else "", f"a Mac with {mac} GB" if mac else ""]
    fits = [x for x in fits if x]
    if fits:
        out += f". That fits {' or '.join(fits)} (macOS lets the GPU use about ⅔–¾ of unified memory)."
    else:
        out += ". That is more than one card or Mac holds: it needs several GPUs or a smaller format."
    return out
