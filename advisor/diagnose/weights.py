"""Weights remedies: a smaller format, a smaller (real, named) model, a shorter context, the Mac GPU limit.

Each memory fix says how much room it leaves (``Fix.margin_gb``) and whether that is enough by the
headroom rule of :mod:`advisor.diagnose.fit` (``Fix.fits_with_margin``): a fix that fits with 0.1 GB
to spare says so and is not ranked as one that works (:func:`advisor.diagnose.rank_fixes`).
A smaller model is always a real catalog model with its size and speed ("Gemma 3 12B or Qwen3.5 9B
at Q4_K_M" — Gemma 3 12B needs 8.5 GB …), never "a ~13.7B model".
"""

from __future__ import annotations

from advisor import roofline
from advisor.calibration import cpu_qclass
from advisor.diagnose.context import SERVER_ENGINES, Ctx, stated_total_gb
from advisor.diagnose.fit import fitting_models, margin_needed, roomy, thin_words
from advisor.diagnose.remedies import fix, macos_reserve_gb, register, today_tg, what_if
from advisor.diagnose.tools import offload_check
from advisor.models import Fix, QuantFormat
from advisor.perf.moe import kept_experts, weights_bpw
from advisor.render.markdown import fmt_gb_apart, fmt_s
from knowledge import catalog

__all__ = ["four_bit", "targets"]


def _a(word: str) -> str:
    """The indefinite article for a format name ("an AWQ", "a Q4_K_M", "an MLX", "an F16")."""
    return "an" if word[:1].upper() in "AEIOFHLMNRSX" and not word.upper().startswith(("Q", "U")) else "a"


def targets(c: Ctx) -> list[str]:
    """The formats a smaller download of this model comes in, for its engine (best first)."""
    q = c.sit.quant
    eco = q.ecosystem if q else ""
    if eco == "mlx" or c.sit.engine == "mlx" or (c.kind == "apple_soc" and c.sit.engine in ("vllm", "sglang")):
        return ["MLX 4-bit g64", "MLX 8-bit g64"]  # (vLLM on a Mac runs MLX kernels: no FP8 on Apple GPUs)
    if eco in ("vllm", "gptq", "awq") or c.sit.engine in ("vllm", "sglang", "tensorrt-llm"):
        return ["AWQ 4-bit g128", "FP8 (E4M3)"]
    # the largest models are run below 4 bits (:data:`LOW_BIT_FLOORS`): a 2-bit build of a 671B, 3-bit of a 120B
    params = c.sit.model.params_b if c.sit.model is not None else 0.0
    # (on CPU cores a block format: a codebook one, IQ2_XXS, decodes through a table lookup per weight there)
    two_bit = "Q2_K" if _on_cpu(c) else "IQ2_XXS"
    low = [two_bit] if params >= LOW_BIT_FLOORS[0][0] else ["Q3_K_M"] if params >= LOW_BIT_FLOORS[1][0] else []
    return ["Q4_K_M", "Q8_0", *low]


def four_bit(c: Ctx) -> QuantFormat | None:
    """The common 4-bit format of this engine (Q4_K_M, MLX 4-bit, AWQ 4-bit)."""
    return catalog.all_quants(c.store).get(targets(c)[0])


def _room(required_gb: float, usable_gb: float) -> dict[str, float | bool]:
    return {"margin_gb": round(usable_gb - required_gb, 2), "fits_with_margin": roomy(required_gb, usable_gb)}


def _ctx_tokens(c: Ctx) -> int:
    w = c.sit.workload
    return w.depth + w.prompt_tokens + w.gen_tokens


@register("quantization", "quantization", 1, lambda c: c.sit.quant is not None and c.sit.model is not None)
def _quantization(c: Ctx) -> Fix | None:
    cur = c.sit.quant
    assert cur is not None
    quants = catalog.all_quants(c.store)
    block = _cpu_block_format(c, cur, quants)
    if block is not None:
        return block
    for name in targets(c):
        q = quants.get(name)
        if q is None or kept_experts(c.sit.model, q) or weights_bpw(c.sit.model, q) >= weights_bpw(c.sit.model, cur) - 0.5:
            continue  # (a gpt-oss GGUF keeps its MXFP4 experts whatever the format: no smaller build)
        delta = f" (+{q.ppl_delta_7b:.2f} perplexity on a 7–8B model)" if q.ppl_delta_7b else ""
        why = f"Decode reads every weight once per token: fewer bits per weight, fewer bytes, more tok/s{delta}."
        new = what_if(c, quant=q)
        if new is None or c.pred is None:
            ratio = weights_bpw(c.sit.model, cur) / weights_bpw(c.sit.model, q)
            return fix("quantization", f"Use {_a(q.name)} {q.name} build", f"{cur.name} → {q.name}: {ratio:.1f}× fewer "
                       f"bytes per token, so decode ≈ {ratio:.1f}× faster where the weights fit", why, speedup=ratio)
        p = c.pred
        base = today_tg(c)
        sp = new.decode_tps_per_seq / base if (base and new.decode_tps_per_seq) else None
        m = new.memory
        room = _room(m.required_gb, m.usable_gb) if m.total_gb is not None else {}
        fit = ("; still does not fit" if not m.fits else
               f"; fits, but {thin_words(m.required_gb, m.usable_gb)}" if room and not room["fits_with_margin"] else "")
        eff = (f"{cur.name} → {q.name}: weights {p.memory.weights_gb:.1f} → {m.weights_gb:.1f} GB; decode ≈ "
               f"{new.decode_tps_per_seq or new.decode_tps:.1f} tok/s (from {base or 0:.3g}){fit}")
        if q.bits_per_weight < 3:
            why += (f" At {q.bits_per_weight:.3g} bits a weight answers get visibly worse; the largest models hold up "
                    "best (DeepSeek's 2-bit dynamic GGUFs are widely run).")
        users = c.sit.workload.users
        if p.running is not None and p.running < users and (new.running is None or new.running > p.running):
            # not every user fits now: the smaller weights leave room for more users' KV caches
            served = new.running if new.running is not None else users
            eff += f"; {'all' if served >= users else served} of the {users} users at once instead of {p.running}"
            sp = max(sp or 0.0, served / p.running)
        return fix("quantization", f"Use {_a(q.name)} {q.name} build", eff, why, speedup=sp, new_decode_tps=new.decode_tps,
                   new_ttft_s=new.ttft_s, **room)  # type: ignore[arg-type]
    return None


def _on_cpu(c: Ctx) -> bool:
    """The run decodes on CPU cores (no GPU, or a CPU backend on a machine with one)."""
    return not c.has_gpu or (c.pred is not None and "cpu" in (c.pred.backend or "").lower())


def _cpu_block_format(c: Ctx, cur: QuantFormat, quants: dict[str, QuantFormat]) -> Fix | None:
    """On a CPU, a codebook format (IQ1–IQ3, IQ4_XS) decodes through a table lookup per weight and is
    compute-bound (:data:`advisor.perf.prediction.CPU_DECODE_COMPUTE_SHARE`): a block format of more bits
    (Q4_0, Q4_K_M) decodes faster. Offered when the prediction says so by at least 1.2× and it fits."""
    if cpu_qclass(cur.name) != "iq" or not _on_cpu(c) or c.pred is None:
        return None
    base = today_tg(c)
    for name in ("Q4_0", "Q4_K_M"):
        q = quants.get(name)
        new = what_if(c, quant=q) if q is not None else None
        if q is None or new is None or not new.memory.fits or not base:
            continue
        per = new.decode_tps_per_seq or new.decode_tps
        if per < 1.2 * base:
            continue
        m = new.memory
        room = _room(m.required_gb, m.usable_gb) if m.total_gb is not None else {}
        return fix("quantization", f"Switch to {_a(q.name)} {q.name} build: more bits, but faster on a CPU",
                   f"{cur.name} → {q.name}: weights {c.pred.memory.weights_gb:.1f} → {m.weights_gb:.1f} GB; decode ≈ "
                   f"{per:.1f} tok/s (from {base:.3g})",
                   f"On CPU cores {cur.name} decodes each weight through a codebook lookup, so decode is limited by "
                   f"arithmetic, not memory; {q.name}'s simple blocks (int8 dot products) decode faster despite "
                   "the larger file.", speedup=per / base, new_decode_tps=new.decode_tps, new_ttft_s=new.ttft_s,
                   **room)  # type: ignore[arg-type]
    return None


@register("fit_in_memory", "fit_in_memory", 1)
def _fit_in_memory(c: Ctx) -> Fix | None:
    """The best format of THIS model that fits with room to spare (else the roomiest that fits, said thin).

    When no format of the model fits at all this returns None: :func:`_smaller_model` names real models.
    """
    p, sit = c.pred, c.sit
    if sit.model is None:
        return None
    if p is None:
        total = stated_total_gb(c.store, sit)
        if not total or sit.quant is None:
            return None
        need = roofline.weight_bytes_total(sit.model, sit.quant.bits_per_weight) / 1e9
        if need <= total:
            return None
        return fix("fit_in_memory", "Make the whole model fit in fast memory (a smaller format or model)",
                   f"the weights need {need:.1f} GB at {sit.quant.name}; {total:g} GB holds about "
                   f"{total / need:.0%} of them",
                   "What does not fit runs from system RAM or swap at a fraction of the speed.", fits_with_margin=False)
    if p.memory.fits:
        return None
    hw = sit.hardware
    assert hw is not None
    eco = "mlx" if sit.engine == "mlx" else (sit.quant.ecosystem if sit.quant else "gguf")
    # the formats the engine loads: GGUF for the llama.cpp family, MLX's own, and for vLLM/SGLang/TensorRT-LLM the
    # checkpoints they serve (AWQ/GPTQ 4-bit, FP8, W4A16), never a GGUF file
    server = sit.engine in ("vllm", "sglang", "tensorrt-llm")
    ecos = (SERVER_ECOSYSTEMS if server else (eco if eco in ("gguf", "mlx") else "gguf",))
    quants = sorted((q for q in catalog.all_quants(c.store).values()
                     if q.ecosystem in ecos and q.bits_per_weight >= min_fit_bits(sit.model.params_b)
                     and not (sit.quant and weights_bpw(sit.model, q) >= SMALLER * weights_bpw(sit.model, sit.quant))
                     and not kept_experts(sit.model, q)),  # a gpt-oss "Q3_K_S" is its MXFP4 experts again
                    key=lambda q: (-q.bits_per_weight, q.name not in targets(c), q.name))  # ties: the usual one
    thin = None
    for q in quants:
        fm = roofline.memory_fit(hw, sit.model, weights_bpw(sit.model, q), context_tokens=_ctx_tokens(c),
                                 concurrency=sit.workload.users, kv_bytes_per_element=c.kv_bpe)
        if fm.fits and roomy(fm.required_gb, fm.usable_gb):
            return _format_fix(c, q, fm.required_gb, fm.usable_gb)
        if fm.fits:  # none roomy so far: the one with the most room (the smallest that fits) is said, as thin
            thin = (q, fm.required_gb, fm.usable_gb)
    return _format_fix(c, *thin) if thin is not None else None


SPEED_GAIN = 1.2  # a smaller model offered for speed alone decodes at least this much faster
SMALLER = 0.95  # a format offered to make a model fit stores it in at most this share of today's bytes
SERVER_ECOSYSTEMS = ("vllm", "awq", "gptq", "compressed-tensors")  # what vLLM, SGLang and TensorRT-LLM load
# The fewest bits per weight a fit fix offers, by total parameters: under ~3.5 bits a model of tens of billions of
# parameters loses visibly, while the largest (hundreds of billions, mostly MoE) are run at 2 bits and below (the
# 1.58-bit and 2-bit dynamic GGUFs of DeepSeek R1 671B, 131–212 GB), and a 70B's 3-bit i-quants (IQ3_XXS–IQ3_M) are what
# a 24–32 GB card runs it at (its quality cost is said with the format: IQ3_XXS's perplexity on Llama-3-70B in
# knowledge/seed/quant_formats.csv): (at least this many billions, floor).
LOW_BIT_FLOORS = ((300.0, 1.5), (100.0, 2.0), (60.0, 3.0))
DEFAULT_BIT_FLOOR = 3.5


def min_fit_bits(params_b: float | None) -> float:
    """The lowest bits per weight offered to make a model of ``params_b`` billion parameters fit
    (:data:`LOW_BIT_FLOORS`, else :data:`DEFAULT_BIT_FLOOR`)."""
    for at_least, floor in LOW_BIT_FLOORS:
        if (params_b or 0) >= at_least:
            return floor
    return DEFAULT_BIT_FLOOR


def _format_fix(c: Ctx, q: QuantFormat, need: float, usable: float) -> Fix | None:
    p = c.pred
    assert p is not None
    new = what_if(c, quant=q)
    if new is None:
        return None
    base = today_tg(c)
    tight = thin_words(need, usable)
    was, room, now = fmt_gb_apart(p.memory.required_gb, p.memory.usable_gb, need, least=1)
    low = (f" ({q.bits_per_weight:.3g} bits a weight: answers get visibly worse below about 3 bits; the largest models "
           "hold up best)") if q.bits_per_weight < 3 else ""
    return fix("fit_in_memory", f"Make it fit: {q.name}, or a shorter context{low}",
               f"needs {was} GB, {room} GB usable; at {q.name} it needs "
               f"{now} GB and decodes at ≈ {new.decode_tps_per_seq or new.decode_tps:.1f} tok/s"
               + (f" — but {tight}" if tight else ""),
               "Whatever does not fit runs from system RAM or swap, at a fraction of the speed.",
               speedup=(new.decode_tps / base) if base else None, new_decode_tps=new.decode_tps, **_room(need, usable))


def _names(labels: list[str]) -> str:
    return " or ".join(labels)


# A MoE that does not fit is swapped for a model that fits and reads not much more per token: a dense 123B that fits
# beside a 196B-A11B that does not would decode at a tenth of its speed (Step-3.5-Flash on a 128 GB Mac: Mistral
# Large 2 at 6.8 tok/s), so candidates keep at most this multiple of its active parameters.
MOE_SWAP_ACTIVE = 1.5


@register("smaller_model", "smaller_model", 2, lambda c: c.sit.model is not None)
def _smaller_model(c: Ctx) -> Fix | None:
    """Real catalog models that fit (with room) when this one does not; about half the size when it does."""
    m, p, hw = c.sit.model, c.pred, c.sit.hardware
    assert m is not None
    spills = p is not None and not p.memory.fits
    total = stated_total_gb(c.store, c.sit) if p is None else None
    if hw is None and total and c.bounds is not None:
        # The machine is not pinned down but its memory is: size against the slowest plausible one of it.
        hw = c.bounds.slow.model_copy(update={"memory_gb": total})
        spills = spills or (c.sit.quant is not None and roofline.weight_bytes_total(
            m, c.sit.quant.bits_per_weight) / 1e9 > total)
    q = c.sit.quant
    q4 = four_bit(c)
    if q is None or (spills and q4 is not None and q.bits_per_weight > q4.bits_per_weight) or (
            q4 is not None and (kept_experts(m, q) or q.name == catalog.release_format(m.id))):
        q = q4  # (other models come in the engine's common format, not gpt-oss's MXFP4 or its mislabelled GGUFs)
    if q is None or hw is None:
        return None
    # To fit: fewer parameters in all. For speed: fewer read per token (a MoE's active ones; gpt-oss-120b reads
    # 5.1B, so a dense 72B is no faster), no more memory than now, and not a quarter of the model or less (a
    # 30B-A3B's speed fix is not a 1.7B).
    cands = fitting_models(c.store, hw, q.bits_per_weight, context_tokens=_ctx_tokens(c), users=c.sit.workload.users,
                           like=m, below_b=m.params_b if spills else m.params_b * 1.0001,
                           below_active_b=(MOE_SWAP_ACTIVE * m.active_b if m.is_moe else None) if spills
                           else 0.7 * m.active_b,
                           at_least_b=None if spills else 0.25 * m.params_b)
    if not cands:
        return None
    best = cands[0]
    new = what_if(c, model=best.model, quant=q)
    base = today_tg(c)
    # The size is said once, in the effect ("Gemma 3 12B needs 8.3 GB of 10.7 GB usable"), not in the title too.
    title = (f"Use a smaller model that fits: {_names([x.label for x in cands])} at {q.name}"
             if spills else f"Use a smaller model: {_names([x.label for x in cands])} at {q.name}")
    why = (f"These models fit this machine's memory at {q.name} with at least "
           f"{margin_needed(best.usable_gb):.1f} GB to spare for the conversation and other apps."
           if spills else "Fewer parameters: fewer bytes read per token and fewer FLOPs per prompt token.")
    known = (p is not None and p.memory.total_gb is not None) or bool(total)
    room = _room(best.required_gb, best.usable_gb) if known else {}
    also = f"; {cands[1].label} needs {cands[1].required_gb:.1f} GB" if len(cands) > 1 else ""
    needs, usable = fmt_gb_apart(best.required_gb, best.usable_gb, least=1)
    if new is None:
        return fix("smaller_model", title, f"{best.label} needs {needs} GB"
                   + (f" of about {usable} GB usable" if room else "") + also, why, **room)  # type: ignore[arg-type]
    per = new.decode_tps_per_seq or new.decode_tps
    if not spills and base and per < SPEED_GAIN * base and not c.looks_aggregate:
        return None  # for speed only: a MoE with fewer active parameters can be barely faster (fixed costs per token)
    eff = (f"{best.label} needs {needs} GB" + (f" of {usable} GB usable" if room else "")
           + f" and decodes at ≈ {per:.1f} tok/s, first word ≈ {fmt_s(new.ttft_s)}{also}")
    return fix("smaller_model", title, eff, why, speedup=per / base if base else None, new_decode_tps=new.decode_tps,
               new_ttft_s=new.ttft_s, **room)  # type: ignore[arg-type]


@register("shrink_context", "fit_in_memory", 0, lambda c: c.pred is not None and c.sit.model is not None)
def _shrink_context(c: Ctx) -> Fix | None:
    """A smaller allocated context: works when the context actually used fits with the margin."""
    p, sit = c.pred, c.sit
    assert p is not None and sit.model is not None
    kv_tok = roofline.kv_bytes_per_token(sit.model, c.kv_bpe) / 1e9 * max(1, sit.workload.users)
    room = p.memory.usable_gb - p.memory.weights_gb - p.memory.overhead_gb
    exp = c.expected_tg
    if kv_tok <= 0 or not 0 < room < float("inf"):  # memory not known (usable = inf): no context to size
        return None
    max_ctx = int(room / kv_tok)
    used = _ctx_tokens(c)
    works = max_ctx >= used and roomy(p.memory.required_gb, p.memory.usable_gb)
    back = (f"decode back to ≈ {exp:.0f} tok/s" + (f" from {c.tg:g}" if c.tg else "")) if exp else "back to full GPU speed"
    keep = (f"; at the ≈ {used:,} tokens you use, {p.memory.usable_gb - p.memory.required_gb:.1f} GB stay free"
            if works else "")
    return fix("fit_in_memory", "Shrink the context (num_ctx / -c) until model + KV cache fit in GPU memory",
               f"up to ≈ {max_ctx:,} tokens of context fit beside the weights{keep}; {back}",
               "The KV cache grows with the context you allocate, not the one you use; Ollama, LM Studio and "
               f"llama.cpp's automatic fit put what does not fit on the CPU (check {offload_check(c)}).",
               speedup=(exp / c.tg) if (exp and c.tg) else None, new_decode_tps=exp,
               margin_gb=round(p.memory.usable_gb - p.memory.required_gb, 2), fits_with_margin=works)


def _allocated_need_gb(c: Ctx) -> float | None:
    """GB the allocated context (num_ctx / -c) needs with the weights, when it is larger than the workload's."""
    p, sit = c.pred, c.sit
    cw = sit.workload.context_window or sit.facts.context_window
    if p is None or not cw or sit.model is None or sit.quant is None or sit.hardware is None:
        return None
    if sit.engine in SERVER_ENGINES:  # a paged KV cache (vLLM --max-model-len) caps a request; it reserves nothing per user
        return None
    fm = roofline.memory_fit(sit.hardware, sit.model, sit.quant.bits_per_weight, context_tokens=cw,
                             concurrency=max(1, sit.workload.users), kv_bytes_per_element=c.kv_bpe, memory_gb=p.memory.total_gb
                             if sit.hardware.kind not in ("discrete_gpu", "datacenter_gpu") else None)
    return fm.required_gb if fm.required_gb > p.memory.required_gb else None


@register("raise_gpu_limit", "fix_configuration", 0,
          lambda c: c.kind == "apple_soc" and c.pred is not None
          and (not c.pred.memory.fits or (_allocated_need_gb(c) or 0) > c.pred.memory.usable_gb))
def _raise_gpu_limit(c: Ctx) -> Fix | None:
    """macOS's default GPU limit is what stands in the way (the model, or the context allocated for it, fits the
    RAM but not the default wired share): raise it."""
    p = c.pred
    assert p is not None
    total = p.memory.total_gb
    need = p.memory.required_gb if not p.memory.fits else (_allocated_need_gb(c) or p.memory.required_gb)
    keep = macos_reserve_gb(total or 0)
    if not total or need > total - keep:
        return None  # larger than what the whole machine can give the GPU: no setting makes it fit
    gpu = total - keep
    limit_mb = int(gpu * 1024)
    full = what_if(c, gpu_share=1.0)
    rate = f"; decode ≈ {full.decode_tps_per_seq or full.decode_tps:.1f} tok/s" if full else ""
    tight = thin_words(need, gpu)
    return fix("fix_configuration", f"Raise the GPU memory limit (`sudo sysctl iogpu.wired_limit_mb={limit_mb}` in Terminal)",
               f"the GPU may then use ≈ {gpu:.0f} of {total:g} GB and the {need:.1f} GB "
               f"fit{rate}" + (f" — but {tight}" if tight else f", {gpu - need:.1f} GB to spare")
               + "; the setting resets when the Mac restarts",
               f"macOS lets the GPU wire about 2/3–3/4 of RAM by default; raising it (leaving ~{keep:.0f} GB, an "
               "estimate, for macOS) lets a model that fits in RAM stay on the GPU.",
               speedup=(full.decode_tps / c.tg) if (full and c.tg) else None, **_room(need, gpu))
