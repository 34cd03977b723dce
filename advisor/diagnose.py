"""Diagnosis: which phase is the bottleneck, are the numbers normal, which fix helps and how much.

Rules follow the signatures experts use in public threads (see tests/test_cases.py):

* the model + KV cache does not fit the usable memory → ``memory_fit`` (spill to CPU or swap);
* decode far below the bandwidth expectation while the model fits → ``misconfiguration``
  (layers on the CPU, a container without GPU access, the output layer left on the CPU with
  ``-ngl`` = layer count, a quantized KV cache falling back to CPU attention, NUMA);
* otherwise the phase that takes longer for this workload (TTFT vs streaming time), unless the
  user's measurements or question single out one phase.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal

from advisor import roofline
from advisor.errors import AdvisorError
from advisor.models import Bottleneck, Fix, Prediction, Scenario, Status, Verdict
from advisor.perf import predict
from advisor.resolve import Resolved, resolve_scenario
from knowledge import catalog
from knowledge.store import Store

__all__ = ["diagnose", "diagnose_resolved"]

FAR_BELOW = 0.35  # measured / expected below this: something is wrong, not just slow
BELOW = 0.7
CACHE_HIT = 1.6  # measured prefill above the ceiling × this: a prompt-cache hit, not a rate
SPEC_ACCEPT, SPEC_GAMMA, SPEC_DRAFT_COST = 0.7, 4, 0.1

_PREFILL_WORDS = re.compile(
    r"prompt[- ]processing|prefill|time to first token|ttft|first token|before (?:it|the model) (?:starts|answers)|"
    r"takes? (?:long|forever|a minute|minutes) to start|re-?process|resend|cache[_ ]prompt|prompt cache|"
    r"conversation grows|growing prompt|long prompts?",
    re.I,
)
_PREFIX_WORDS = re.compile(r"resend|re-?process|growing|conversation grows|cache[_ ]prompt|prompt cache|reuse|agent|history", re.I)
_CONTAINER = re.compile(r"docker|container|podman|\bwsl\b|virtualbox|\bvm\b|llamagpt", re.I)
_KV_QUANT = re.compile(r"kv[_ ]cache[_ ]type\s*=?\s*q\d|-ctk\s+q\d|cache-type-k\s+q\d|kv[- ]cache quantization|q8_0 kv|kv.{0,12}q[48]_0", re.I)
_NUMA = re.compile(r"numa|dual[- ]socket|2 sockets", re.I)
_SWAP = re.compile(r"\bswap(?:ping|s)?\b|memory pressure|page ?file|paging|shared gpu memory|out of memory|\boom\b", re.I)
_NO_GPU = re.compile(
    r"no (?:cuda|gpu|metal|rocm|vulkan)[- ]?(?:capable )?(?:device|gpu)?s? (?:found|detected|available)|"
    r"(?:cuda|gpu|metal|rocm) (?:is )?not (?:found|detected|available|used)|not using (?:the )?gpu|"
    r"gpu (?:usage|utili[sz]ation|load) (?:is |stays |at )?(?:0|zero|idle|low)|runs? on (?:the )?cpu(?! only)|"
    r"using (?:the )?cpu instead|cpu[- ]only (?:build|wheel|version)|offloaded 0/\d+ layers",
    re.I,
)
_THERMAL = re.compile(r"throttl|fanless|gets? (?:slower|hot)|after (?:a few|some|\d+) minutes|thermal|overheat", re.I)
_LONG_CTX = re.compile(
    r"(?:long|large|growing|bigger|full) (?:context|conversation|chat|history)|as the (?:context|conversation|chat) grows|"
    r"\d+k (?:context|tokens of context)|deeper into|context fills", re.I)
_DECODE_WORDS = re.compile(r"generation|generat(?:es|ing)|tokens? per second|tok/s|t/s|streaming|decode|eval rate", re.I)
_THREADS = re.compile(r"(?:-t|--threads|threads?\s*[=:]?)\s*(\d{1,3})\b", re.I)
_CPU_ONLY = re.compile(r"cpu[- ]only|-ngl 0\b|ngl 0\b|cpu backend|n[_-]gpu[_-]layers\s*=\s*0", re.I)


@dataclass
class _Ctx:
    res: Resolved
    pred: Prediction | None
    measured_pp: float | None
    measured_tg: float | None
    text: str


def _fix(id: str, title: str, effect: str, why: str, speedup: float | None = None, **kw: float | None) -> Fix:
    return Fix(id=id, title=title, predicted_effect=effect, why=why, speedup=speedup, **kw)


def _speed_of(store: Store, c: _Ctx, **changes: object) -> Prediction | None:
    r = c.res
    if r.hardware is None or r.model is None or r.quant is None:
        return None
    args: dict[str, Any] = dict(hardware=r.hardware, model=r.model, quant=r.quant, backend=r.backend, prompt_tokens=r.prompt_tokens,
                gen_tokens=r.gen_tokens, depth=r.depth, concurrency=r.concurrency)
    args.update(changes)
    try:
        return predict(store, **args)  # type: ignore[arg-type]
    except (AdvisorError, ValueError):
        return None


def _quant_fix(store: Store, c: _Ctx) -> Fix | None:
    r, p = c.res, c.pred
    if r.quant is None or p is None or r.model is None:
        return None
    quants = catalog.all_quants(store)
    mlx = "mlx" in (r.backend or "").lower()
    for name in (["MLX 4-bit g64"] if mlx else ["Q4_K_M"]) + (["MLX 8-bit g64"] if mlx else ["Q8_0"]):
        q = quants.get(name)
        if q and q.bits_per_weight < r.quant.bits_per_weight - 0.5:
            new = _speed_of(store, c, quant=q)
            if new and p.decode_tps:
                sp = new.decode_tps / p.decode_tps if p.memory.fits else None
                ttft_new = new.ttft_s
                base = c.measured_tg if (c.measured_tg and not p.memory.fits) else p.decode_tps
                eff = (f"{r.quant.name} → {q.name}: weights {p.memory.weights_gb:.1f} → {new.memory.weights_gb:.1f} GB; "
                       f"decode ≈ {new.decode_tps:.1f} tok/s (from {base:.1f})"
                       + ("" if new.memory.fits else "; still does not fit"))
                delta = f" (+{q.ppl_delta_7b:.2f} perplexity on a 7–8B model)" if q.ppl_delta_7b else ""
                return _fix("quantization", f"Use a {q.name} build", eff,
                            f"Decode reads every weight once per token: fewer bits per weight, fewer bytes, more tok/s{delta}.",
                            speedup=(new.decode_tps / base) if base else sp, new_decode_tps=new.decode_tps,
                            new_ttft_s=ttft_new)
    return None


def _fit_fix(store: Store, c: _Ctx) -> Fix | None:
    p, r = c.pred, c.res
    if p is None or r.model is None or p.memory.fits:
        return None
    quants = sorted(catalog.all_quants(store).values(), key=lambda q: -q.bits_per_weight)
    for q in quants:
        if q.ecosystem not in ("gguf", "mlx") or q.bits_per_weight < 3.5:
            continue
        fitm = roofline.memory_fit(r.hardware, r.model, q.bits_per_weight,  # type: ignore[arg-type]
                                   context_tokens=r.depth + r.prompt_tokens + r.gen_tokens, concurrency=r.concurrency)
        if fitm.fits:
            new = _speed_of(store, c, quant=q)
            return _fix(
                "fit_in_memory", f"Make it fit: {q.name} or a shorter context",
                f"needs {p.memory.required_gb:.1f} GB, {p.memory.usable_gb:.1f} GB usable; at {q.name} it needs "
                f"{fitm.required_gb:.1f} GB and decodes at ≈ {new.decode_tps:.1f} tok/s" if new else "fits",
                "Whatever does not fit runs from system RAM or swap, at a fraction of the speed.",
                speedup=(new.decode_tps / c.measured_tg) if (new and c.measured_tg) else None,
                new_decode_tps=new.decode_tps if new else None,
            )
    return _fix("fit_in_memory", "Use a smaller model or more memory",
                f"needs {p.memory.required_gb:.1f} GB, only {p.memory.usable_gb:.1f} GB usable even at 4 bits",
                "The model does not fit at any usable quantization on this machine.")


def _smaller_fix(store: Store, c: _Ctx) -> Fix | None:
    r = c.res
    if r.model is None or r.quant is None or c.pred is None:
        return None
    half = catalog.generic_model(store, f"a {r.model.params_b / 2:.3g}B model", r.model.params_b / 2,
                                 (r.model.active_params_b or 0) / 2 or None)
    new = _speed_of(store, c, model=half)
    if not new:
        return None
    return _fix("smaller_model", f"A model half the size (~{r.model.params_b / 2:.3g}B)",
                f"decode ≈ {new.decode_tps:.1f} tok/s, TTFT ≈ {new.ttft_s or 0:.1f} s, {new.memory.required_gb:.1f} GB",
                "Half the parameters: half the bytes per token and half the FLOPs per prompt token.",
                speedup=new.decode_tps / c.pred.decode_tps if c.pred.decode_tps else None, new_decode_tps=new.decode_tps,
                new_ttft_s=new.ttft_s)


def _spec_fix(c: _Ctx) -> Fix | None:
    if c.pred is None or not c.pred.decode_tps:
        return None
    if c.res.concurrency > 1:
        return None  # a busy batched server has no idle compute for drafts to use
    sp = roofline.speculative_speedup(SPEC_ACCEPT, SPEC_GAMMA, SPEC_DRAFT_COST)
    base = c.measured_tg or c.pred.decode_tps
    return _fix("speculative_decoding", "Speculative decoding with a small draft model",
                f"≈ {sp:.1f}× decode ({base:.0f} → {base * sp:.0f} tok/s)",
                f"A draft ~10× smaller proposes {SPEC_GAMMA} tokens, the big model checks them in one pass; assumes "
                f"{SPEC_ACCEPT:.0%} acceptance (Leviathan et al. 2023). Gains are largest on code and repetitive text.",
                speedup=sp, new_decode_tps=base * sp)


def _bandwidth_fix(store: Store, c: _Ctx) -> Fix | None:
    r, p = c.res, c.pred
    if r.hardware is None or p is None:
        return None
    hws = catalog.all_hardware(store).values()
    fam = [h for h in hws if h.kind == r.hardware.kind and h.bandwidth_gbs >= 1.8 * p.bandwidth_gbs
           and (not p.memory.total_gb or max(h.memory_gb_options or [0]) >= p.memory.required_gb)]
    if not fam:
        return None
    same = [h for h in fam if h.family == r.hardware.family]
    # Prefer a bigger chip of the same generation, then the newest, then the smallest step up.
    pick = min(same or fam, key=lambda h: (-(h.release_year or 0), h.bandwidth_gbs))
    new = _speed_of(store, c, hardware=pick.model_copy(update={"memory_gb": max(pick.memory_gb_options or [0]) or None}))
    if not new:
        return None
    return _fix("more_bandwidth", f"More memory bandwidth, e.g. {pick.name} ({pick.bandwidth_gbs:g} GB/s)",
                f"decode ≈ {new.decode_tps:.1f} tok/s (from {p.decode_tps:.1f})",
                "Decode is bandwidth-bound: tok/s scales with GB/s for the same bytes per token.",
                speedup=new.decode_tps / p.decode_tps, new_decode_tps=new.decode_tps)


def _compute_fix(store: Store, c: _Ctx) -> Fix | None:
    r, p = c.res, c.pred
    if r.hardware is None or p is None or not p.prefill_tps:
        return None
    hws = [h for h in catalog.all_hardware(store).values() if h.fp16_tflops and p.tflops
           and h.fp16_tflops >= 2.5 * p.tflops and (max(h.memory_gb_options or [0]) >= p.memory.required_gb)]
    if not hws:
        return None
    pick = min(hws, key=lambda h: h.fp16_tflops or 0)
    new = _speed_of(store, c, hardware=pick.model_copy(update={"memory_gb": max(pick.memory_gb_options)}))
    if not new or not new.prefill_tps:
        return None
    return _fix("more_compute", f"More compute for prefill, e.g. {pick.name} ({pick.fp16_tflops:g} TFLOPS)",
                f"prefill ≈ {new.prefill_tps:,.0f} tok/s, TTFT {p.ttft_s or 0:.1f} → {new.ttft_s or 0:.1f} s",
                "Prefill is compute-bound: TTFT falls with FLOP/s (GPU cores, matrix units).",
                speedup=new.prefill_tps / p.prefill_tps, new_ttft_s=new.ttft_s)


def _prefix_fix(c: _Ctx) -> Fix | None:
    r, p = c.res, c.pred
    pp = c.measured_pp if c.measured_pp and (p is None or not p.prefill_ceiling_tps or c.measured_pp < p.prefill_ceiling_tps) else (p.prefill_tps if p else None)
    if not pp or r.prompt_tokens < 200:
        return None
    cached = r.scenario.shared_prefix_tokens or int(r.prompt_tokens * 0.9)
    cached = min(cached, r.prompt_tokens - 1)
    before = r.prompt_tokens / pp
    after = (r.prompt_tokens - cached) / pp
    how = "stated shared prefix" if r.scenario.shared_prefix_tokens else "assumed: 90 % of each prompt repeats (history, system prompt, files)"
    return _fix("prefix_caching", "Reuse the KV cache of the repeated prompt prefix (prompt caching)",
                f"TTFT {before:.1f} s → {after:.1f} s for {cached:,} cached tokens ({how})",
                "A prefix that repeats across requests is prefilled once; only the new tokens are processed "
                "(llama.cpp cache_prompt / --cache-reuse, Ollama keeps it while the model stays loaded, mlx-lm prompt cache).",
                speedup=before / after if after > 0 else None, new_ttft_s=after)


def _shorter_fix(c: _Ctx) -> Fix | None:
    r, p = c.res, c.pred
    pp = c.measured_pp or (p.prefill_tps if p else None)
    if not pp or r.prompt_tokens < 200:
        return None
    before = r.prompt_tokens / pp
    return _fix("shorter_prompt", "Send a shorter prompt (trim history, retrieve less, summarise files)",
                f"half the prompt: TTFT {before:.1f} s → {before / 2:.1f} s",
                "Prefill time grows with every prompt token (faster than linearly at long context).",
                speedup=2.0, new_ttft_s=before / 2)


def _gpu_offload_fix(c: _Ctx, why: str) -> Fix:
    p = c.pred
    eff = "restores the expected speed"
    sp = None
    if p and p.decode_tps and c.measured_tg:
        sp = p.decode_tps / c.measured_tg
        eff = f"decode ≈ {p.decode_tps:.0f} tok/s instead of {c.measured_tg:g} (≈ {sp:.0f}×)"
    return _fix("gpu_offload", "Put every layer on the GPU (-ngl 99 / num_gpu 999; GPU-enabled build or runtime)",
                eff, why, speedup=sp, new_decode_tps=p.decode_tps if p else None)


def _config_fix(c: _Ctx, what: str, why: str) -> Fix:
    p = c.pred
    eff = "back to the expected speed"
    sp = None
    if p and p.decode_tps and c.measured_tg:
        sp = p.decode_tps / c.measured_tg
        eff = f"decode ≈ {p.decode_tps:.0f} tok/s expected vs {c.measured_tg:g} measured"
    return _fix("fix_configuration", what, eff, why, speedup=sp, new_decode_tps=p.decode_tps if p else None)


def _kvq_fix(c: _Ctx, flip: bool = False, force: bool = False) -> Fix | None:
    r, p = c.res, c.pred
    if p is None or r.model is None:
        return None
    ctx = r.depth + r.prompt_tokens + r.gen_tokens
    kv = p.memory.kv_cache_gb
    if flip:
        return _fix("kv_cache_quantization", "Turn KV-cache quantization off (f16 cache) for this model",
                    "avoids the CPU fallback of attention", "Quantized KV caches need matching flash-attention kernels; "
                    "when a model has none, attention runs on the CPU every token.")
    if kv < 0.05 and not force:
        return None
    return _fix("kv_cache_quantization", "Quantize the KV cache to q8_0 (needs flash attention)",
                f"KV cache at {ctx:,} tokens × {r.concurrency}: {kv:.1f} → {kv / 2:.1f} GB",
                "Halves the memory the context takes and the bytes decode reads at long context.")


def _flash_fix(c: _Ctx, force: bool = False) -> Fix | None:
    r = c.res
    if r.depth + r.prompt_tokens < 8000 and not force:
        return None
    return _fix("flash_attention", "Enable flash attention (-fa on / OLLAMA_FLASH_ATTENTION=1)",
                "less slowdown of prefill and decode at long context",
                "Attention over a long KV cache dominates at depth; fused kernels read it once.")


def _batch_fixes(c: _Ctx) -> list[Fix]:
    r, p = c.res, c.pred
    if r.concurrency <= 1 or p is None:
        return []
    return [
        _fix("batching", "Serve all users from one batched server (llama-server -np, vLLM)",
             f"aggregate decode ≈ {p.decode_tps:.0f} tok/s for {r.concurrency} streams ({p.decode_tps_per_seq or 0:.1f} each)",
             "Batched decode reads the weights once for every sequence in the batch."),
        _fix("chunked_prefill", "Chunked prefill", "long prompts no longer stall running streams",
             "Splitting a long prompt into chunks interleaved with decode steps trades a slightly slower prefill "
             "for far less latency variance."),
    ]


def _status(measured: float | None, expected: float | None, rng: tuple[float, float] | None) -> tuple[Status, float | None]:
    if not measured or not expected:
        return "not_measured", None
    ratio = measured / expected
    lo = min(rng[0] / expected, BELOW) if rng else BELOW
    hi = max(rng[1] / expected, 1.3) if rng else 1.3
    status: Status = "normal"
    if ratio < lo:
        status = "below_expected"
    elif ratio > hi:
        status = "above_expected"
    return status, (ratio - 1) * 100


def diagnose(store: Store, scenario: Scenario, *, question: str | None = None) -> Verdict:
    """Resolve a scenario and diagnose it. See :func:`diagnose_resolved`."""
    return diagnose_resolved(store, resolve_scenario(store, scenario), question=question)


def diagnose_resolved(store: Store, res: Resolved, *, question: str | None = None) -> Verdict:
    """The verdict for a resolved scenario (with or without measured rates).

    Raises:
        InputError: neither the model nor any measurement is known (nothing to reason about).
    """
    s = res.scenario
    text = " ".join(filter(None, [question or s.question, s.backend, s.hardware, s.raw_output, s.quant, s.use]))
    pred = None
    if res.hardware is not None and res.model is not None and res.quant is not None:
        pred = predict(store, hardware=res.hardware, model=res.model, quant=res.quant, backend=res.backend,
                       prompt_tokens=res.prompt_tokens, gen_tokens=res.gen_tokens, depth=res.depth,
                       concurrency=res.concurrency)
        if pred and res.hardware.kind in ("discrete_gpu", "datacenter_gpu") and not pred.memory.fits:
            pred = predict(store, hardware=res.hardware, model=res.model, quant=res.quant, backend=res.backend,
                           prompt_tokens=res.prompt_tokens, gen_tokens=res.gen_tokens, depth=res.depth,
                           concurrency=res.concurrency)
    c = _Ctx(res, pred, s.measured_prefill_tps, s.measured_decode_tps, text)
    signals: list[str] = []
    fixes: list[Fix] = []
    bottleneck: Bottleneck | None = None
    # Expected values (a fully-on-GPU, fitting configuration) for the status.
    exp_tg = pred.decode_tps if pred else None
    exp_pp = pred.prefill_tps if pred else None
    st_tg, dev_tg = _status(c.measured_tg, exp_tg, pred.decode_tps_range if pred else None)
    st_pp, dev_pp = _status(c.measured_pp, exp_pp, pred.prefill_tps_range if pred else None)
    cache_hit = bool(c.measured_pp and pred and pred.prefill_ceiling_tps and c.measured_pp > CACHE_HIT * pred.prefill_ceiling_tps)
    if cache_hit:
        st_pp = "normal"
        signals.append(f"The prefill rate {c.measured_pp:,.0f} tok/s is above what this machine can compute "
                       f"(ceiling ≈ {pred.prefill_ceiling_tps:,.0f} tok/s): most of the prompt came from a prompt cache, "  # type: ignore[union-attr]
                       "so it is not a measure of the machine.")
    if pred and c.measured_tg and c.measured_tg > 1.15 * pred.decode_ceiling_tps and res.concurrency <= 1:
        st_tg = "above_expected"
        signals.append(f"{c.measured_tg:g} tok/s of decode is more than the memory can deliver for this model "
                       f"(ceiling ≈ {pred.decode_ceiling_tps:.0f} tok/s): check the model size and format, or whether "
                       "the figure is an aggregate over several streams or includes speculative drafts.")
    if (pred and pred.prefill_ceiling_tps and c.measured_pp and not cache_hit
            and c.measured_pp > 1.05 * pred.prefill_ceiling_tps):
        st_pp = "above_expected"
        signals.append(f"The measured prefill {c.measured_pp:,.0f} tok/s is above the compute ceiling "
                       f"({pred.prefill_ceiling_tps:,.0f} tok/s from the FP16 spec): part of the prompt was probably "
                       "cached, or the card's matrix units outrun the spec figure used here.")
    ratio_tg = (c.measured_tg / exp_tg) if (c.measured_tg and exp_tg) else None
    fits = pred.memory.fits if pred else True
    near_limit = bool(pred and pred.memory.usable_gb and pred.memory.required_gb / pred.memory.usable_gb > 0.8)
    is_gpu = bool(res.hardware and res.hardware.kind in ("discrete_gpu", "datacenter_gpu"))
    ngl = res.n_gpu_layers
    n_layers = res.model.n_layers if res.model else None
    mem_stated_small = bool(s.memory_gb and res.model and res.quant
                            and roofline.weight_bytes_total(res.model, res.quant.bits_per_weight) / 1e9 > s.memory_gb)
    # 1. Memory fit.
    if (pred and not fits) or (pred is None and mem_stated_small):
        bottleneck = "memory_fit"
        if pred:
            signals.append(f"Needs {pred.memory.required_gb:.1f} GB (weights {pred.memory.weights_gb:.1f} + KV cache "
                           f"{pred.memory.kv_cache_gb:.1f} + overhead {pred.memory.overhead_gb:.1f}) but only "
                           f"{pred.memory.usable_gb:.1f} GB is usable ({pred.memory.note}).")
        fixes += [f for f in (_fit_fix(store, c), _quant_fix(store, c), _smaller_fix(store, c)) if f]
        if pred and pred.memory.kv_cache_gb > 0.2 * pred.memory.required_gb:
            kvf = _kvq_fix(c)
            if kvf:
                signals.append(f"The KV cache alone takes {pred.memory.kv_cache_gb:.1f} GB at this context length.")
                fixes.insert(1, kvf)
        if pred is None and res.model is not None and res.quant is not None and s.memory_gb:
            need = roofline.weight_bytes_total(res.model, res.quant.bits_per_weight) / 1e9
            signals.append(f"The weights alone take {need:.1f} GB at {res.quant.name}; the {s.memory_gb:g} GB "
                           "of accelerator memory holds only part of them, so most layers run from system RAM.")
            fixes += [
                _fix("fit_in_memory", "Make the whole model fit in GPU memory", f"needs ≥ {need:.1f} GB for the weights",
                     "Layers left in system RAM decode at RAM speed; the GPU then idles during generation."),
                _fix("quantization", "A smaller quantization (e.g. Q4_K_M)", "about half the bytes of 8-bit",
                     "Fewer bytes per weight: more layers fit on the GPU and each token reads less."),
                _fix("smaller_model", "A smaller model", "a 3–4B model at 4 bits fits in about 2–3 GB",
                     "Only a model that fits in VRAM runs at GPU speed."),
            ]
            is_gpu = is_gpu or bool(re.search(r"gpu|cuda|nvidia|vram", text, re.I))
        if is_gpu:
            fixes.append(_gpu_offload_fix(c, "Each layer left in system RAM decodes at RAM speed; every layer that "
                                             "moves to VRAM helps, which only happens if it fits."))
        if res.hardware and res.hardware.kind == "apple_soc":
            fixes.append(_config_fix(c, "Raise the GPU memory limit (sudo sysctl iogpu.wired_limit_mb=…)",
                                     "macOS caps GPU memory at about 2/3–3/4 of RAM by default; raising it lets a "
                                     "model that fits in RAM stay on the GPU."))
    # 1b. Spill on a discrete GPU near its limit: far below with everything "fitting" on paper.
    elif is_gpu and ratio_tg is not None and ratio_tg < FAR_BELOW and near_limit and not _CONTAINER.search(text):
        bottleneck = "memory_fit"
        signals.append(f"Decode is {ratio_tg:.0%} of the expected rate while model + KV cache take "
                       f"{pred.memory.required_gb:.1f} of {pred.memory.usable_gb:.1f} GB: part of the model or cache "  # type: ignore[union-attr]
                       "has most likely spilled to system RAM (a larger context raises the KV cache).")
        fixes += [f for f in (_fit_fix(store, c), _kvq_fix(c), _quant_fix(store, c)) if f]
        if not any(f.id == "fit_in_memory" for f in fixes):
            fixes.insert(0, _fix("fit_in_memory", "Shrink the context (num_ctx / -c) until model + cache fit in VRAM",
                                 f"back to ≈ {exp_tg:.0f} tok/s" if exp_tg else "back to full GPU speed",
                                 "The KV cache grows with the context size you allocate, not the one you use."))
    # 1c. Placement reported by the tool (ollama ps "48%/52% CPU/GPU") or swapping named by the user.
    gpu_frac = getattr(res, "gpu_fraction", None)
    if bottleneck is None and ((gpu_frac is not None and gpu_frac < 0.98) or (_SWAP.search(text) and not _NO_GPU.search(text))):
        bottleneck = "memory_fit"
        signals.append(
            f"Only {gpu_frac:.0%} of the model is on the GPU; the rest decodes from system RAM." if gpu_frac is not None
            else "Swapping / memory pressure: part of the model is being paged out, which stalls every token.")
        fixes += [f for f in (_fit_fix(store, c), _quant_fix(store, c), _kvq_fix(c), _smaller_fix(store, c)) if f]
        if not any(f.id == "fit_in_memory" for f in fixes):
            fixes.insert(0, _fix("fit_in_memory", "Make model + KV cache fit: a smaller quantization or a shorter context",
                                 f"back to ≈ {exp_tg:.0f} tok/s" if exp_tg else "back to full speed",
                                 "Only what sits in fast memory runs at full speed."))
    # 2. Misconfiguration signatures.
    if bottleneck is None:
        mis = _misconfiguration(store, c, ratio_tg, ngl, n_layers, is_gpu)
        if mis:
            bottleneck = "misconfiguration"
            sig, mfixes = mis
            signals.append(sig)
            fixes += mfixes
    # 3. The workload's phase.
    if bottleneck is None:
        bottleneck, why = _phase(c)
        signals.append(why)
        if bottleneck == "prefill":
            prefer_prefix = bool(_PREFIX_WORDS.search(text)) or res.prompt_tokens >= 2000
            pf = [f for f in (_prefix_fix(c), _shorter_fix(c), _compute_fix(store, c), _flash_fix(c)) if f]
            if not prefer_prefix:
                pf.sort(key=lambda f: -(f.speedup or 1))
            fixes += pf
        else:
            if st_tg == "below_expected":
                fixes.append(_config_fix(
                    c, "Check the setup: threads, NUMA placement, background load, power mode, thermals",
                    "Decode is below what this hardware reaches elsewhere." + (
                        " On multi-socket servers, spread the model across NUMA nodes (--numa distribute, drop the page "
                        "cache first)." if _NUMA.search(text) else "")))
            long_ctx = res.depth > 8000 or bool(_LONG_CTX.search(text) and _DECODE_WORDS.search(text))
            df = [f for f in (_quant_fix(store, c), _spec_fix(c), _smaller_fix(store, c), _bandwidth_fix(store, c)) if f]
            df.sort(key=lambda f: -(f.speedup or 1))
            if long_ctx:
                signals.append("Each new token also reads the whole KV cache: the longer the context, the more bytes "
                               "per token, so decode slows as the conversation grows.")
                df = [f for f in (_flash_fix(c, force=True), _kvq_fix(c, force=True)) if f] + df
            if _THERMAL.search(text):
                df.insert(0, _config_fix(c, "Keep it cool and on full power (no Low Power Mode, on a hard surface or "
                                            "a stand; a fan for fanless laptops)",
                                         "Fanless and thin machines lower their clocks when hot; sustained decode drops."))
            fixes += df
            if st_tg == "below_expected" and _NUMA.search(text):
                fixes.sort(key=lambda f: 0 if f.id in ("quantization", "fix_configuration") else 1)
    fixes += _batch_fixes(c)
    if res.depth + res.prompt_tokens > 16000 and not any(f.id == "kv_cache_quantization" for f in fixes):
        f = _kvq_fix(c)
        if f:
            fixes.append(f)
    seen: set[str] = set()
    fixes = [f for f in fixes if not (f.id in seen or seen.add(f.id))]  # type: ignore[func-returns-value]
    status = _overall_status(bottleneck, st_tg, st_pp, c)
    explanation = _explain(c, bottleneck, status, signals)
    return Verdict(
        bottleneck=bottleneck, status=status, fixes=fixes, prediction=pred, explanation=explanation,
        headline=_headline(c, bottleneck, status),
        measured={"prefill_tps": c.measured_pp, "decode_tps": c.measured_tg},
        expected_range={"prefill_tps": pred.prefill_tps_range if pred else None,
                        "decode_tps": pred.decode_tps_range if pred else None},
        deviation_pct={"prefill_tps": dev_pp, "decode_tps": dev_tg}, signals=signals,
        assumptions=res.assumptions + (pred.assumptions if pred else []),
    )


def _misconfiguration(store: Store, c: _Ctx, ratio_tg: float | None, ngl: int | None, n_layers: int | None,
                      is_gpu: bool) -> tuple[str, list[Fix]] | None:
    res, text = c.res, c.text
    hw = res.hardware
    kind = hw.kind if hw else None
    if ngl is not None and n_layers and ngl == n_layers and (is_gpu or kind in ("apu", "apple_soc")):
        return (f"-ngl {ngl} equals the model's {n_layers} repeating layers, so the output layer (the LM head, "
                "one of the largest matrices) stays on the CPU and is read from system RAM for every token.",
                [_gpu_offload_fix(c, "Offload all layers including the output layer: use -ngl 99 (any number above "
                                     "the layer count)."),
                 _config_fix(c, "Set -ngl to 99 / 999 rather than the layer count", "Same cause, same fix in LM Studio "
                             "and Ollama (num_gpu).")])
    if _NO_GPU.search(text) and (is_gpu or kind in ("apu", "apple_soc")):
        return ("The output says the GPU is not being used, so every layer runs on the CPU.",
                [_gpu_offload_fix(c, "Install the GPU build/runtime (CUDA, ROCm, Metal) and offload all layers."),
                 _config_fix(c, "Check drivers and that the engine sees the GPU (its startup log lists the device)",
                             "A missing driver or a CPU-only wheel silently falls back to the CPU.")])
    threads = _THREADS.search(text)
    cores = _physical_cores(res)
    if threads and cores and int(threads.group(1)) > cores and (ratio_tg is None or ratio_tg < BELOW):
        return (f"{threads.group(1)} threads on {cores} cores: oversubscribed threads fight for the cores and the "
                "memory bus, and decode slows down.",
                [_config_fix(c, f"Use {cores} threads (the physical core count) or fewer",
                             "Decode on the CPU is bandwidth-bound; extra threads only add contention.")])
    if ratio_tg is None or ratio_tg >= FAR_BELOW:
        if not (ratio_tg is None and kind == "apple_soc" and _CONTAINER.search(text) and c.measured_tg):
            return None
    exp = c.pred.decode_tps if c.pred else None
    far = f"Decode {c.measured_tg:g} tok/s is {ratio_tg:.0%} of the ≈ {exp:.0f} tok/s this hardware reaches with the model in memory" if (ratio_tg and exp) else "Decode is far below expectation"
    if _CONTAINER.search(text) and kind == "apple_soc":
        return (far + ": containers on macOS cannot use the Apple GPU (no Metal in Docker), so everything runs on the CPU.",
                [_gpu_offload_fix(c, "Run the engine natively on macOS (Ollama app, llama.cpp with Metal, LM Studio, "
                                     "mlx-lm) so the GPU does the work."),
                 _config_fix(c, "Run outside the container", "Docker on macOS has no GPU access.")])
    if _KV_QUANT.search(text):
        kvf = _kvq_fix(c, flip=True)
        return (far + ": a quantized KV cache with flash attention has no GPU kernel for some models, so attention "
                "falls back to the CPU every step.",
                [f for f in (_config_fix(c, "Use an f16 KV cache (unset OLLAMA_KV_CACHE_TYPE / drop -ctk q8_0), or "
                                         "update the engine", "The CPU fallback moves data between GPU and CPU each token."),
                             kvf, _gpu_offload_fix(c, "Check that every layer is on the GPU.")) if f])
    if _CONTAINER.search(text) and is_gpu:
        return (far + ": the container may not see the GPU (needs --gpus all / the NVIDIA container toolkit).",
                [_gpu_offload_fix(c, "Give the container the GPU (--gpus all) and offload every layer."),
                 _config_fix(c, "Check the container's GPU access", "Without it, everything runs on the CPU.")])
    if kind == "cpu" or _CPU_ONLY.search(text):
        if _NUMA.search(text):
            return None  # handled as a below-expected decode with a NUMA fix
        return (far + ": for a CPU this points at threads (use the physical core count), background load or memory "
                "running below its rated speed.",
                [_config_fix(c, "Set threads to the physical core count; close background load; check memory speed",
                             "CPU decode is bandwidth-bound; oversubscribed threads or slow DIMMs waste it.")])
    if is_gpu or kind in ("apu", "apple_soc"):
        eff_bw = (c.measured_tg or 0) * (c.pred.weight_bytes_per_token_gb if c.pred else 0)
        return (far + (f" (≈ {eff_bw:.0f} GB/s effective, system-RAM speed)" if eff_bw else "")
                + ": the layers are most likely running on the CPU (no GPU offload, a CPU-only build or runtime).",
                [_gpu_offload_fix(c, "A GPU build without layer offload runs every layer on the CPU."),
                 _config_fix(c, "Check the build and runtime see the GPU (CUDA/Metal/ROCm in the startup log)",
                             "The startup log says which device each layer is on.")])
    return None


def _physical_cores(res: Resolved) -> int | None:
    hw = res.hardware
    if hw is None or not hw.cpu_cores:
        return None
    nums = [int(x) for x in re.findall(r"\d+", hw.cpu_cores)]
    return max(nums) if nums else None


def _phase(c: _Ctx) -> tuple[Literal["prefill", "decode"], str]:
    """Which phase dominates this workload's wait, and why (in words)."""
    r, p = c.res, c.pred
    pp = c.measured_pp if (c.measured_pp and not (p and p.prefill_ceiling_tps and c.measured_pp > CACHE_HIT * p.prefill_ceiling_tps)) else (p.prefill_tps if p else None)
    tg = c.measured_tg or ((p.decode_tps_per_seq or p.decode_tps) if p else None)
    asked_prefill = bool(_PREFILL_WORDS.search(c.text))
    if c.measured_tg and not c.measured_pp and r.scenario.prompt_tokens is None and not asked_prefill:
        return "decode", (f"Decode measured at {c.measured_tg:g} tok/s: one token at a time, each reading every weight, "
                          "so memory bandwidth sets the speed.")
    if c.measured_pp and not c.measured_tg and r.prompt_tokens >= 500:
        if not pp:
            return "prefill", "Prefill was measured."
        return "prefill", (f"{r.prompt_tokens:,} prompt tokens at {pp:,.0f} tok/s: {r.prompt_tokens / pp:.1f} s before "
                           "the first token; prefill is the wait that was measured.")
    if pp and tg:
        ttft = r.prompt_tokens / pp
        stream = r.gen_tokens / tg
        if asked_prefill:
            return "prefill", (f"Time to first token {ttft:.1f} s vs {stream:.1f} s of streaming; the question is about "
                               "prompt processing, which is compute-bound.")
        if ttft >= stream:
            return "prefill", (f"Time to first token {ttft:.1f} s ({r.prompt_tokens:,} tokens at {pp:,.0f} tok/s) is "
                               f"longer than streaming the answer ({stream:.1f} s at {tg:.1f} tok/s).")
        return "decode", (f"Streaming the answer takes {stream:.1f} s ({r.gen_tokens} tokens at {tg:.1f} tok/s) vs "
                          f"{ttft:.1f} s to the first token: decode, which is memory-bandwidth-bound, sets the wait.")
    if asked_prefill:
        return "prefill", "The question is about prompt processing (time to first token)."
    return "decode", "Decode (one token at a time, memory-bandwidth-bound) sets the streaming speed."


def _overall_status(bottleneck: str, st_tg: Status, st_pp: Status, c: _Ctx) -> Status:
    if bottleneck == "misconfiguration":
        return "below_expected"
    for st in (st_tg if bottleneck != "prefill" else st_pp, st_tg, st_pp):
        if st == "below_expected" or st == "above_expected":
            return st
    if c.measured_pp or c.measured_tg:
        if "normal" in (st_tg, st_pp):
            return "normal"
    return "not_measured"


def _headline(c: _Ctx, bottleneck: str, status: str) -> str:
    phase = {"prefill": "Bottleneck: prefill (reading the prompt, compute-bound)",
             "decode": "Bottleneck: decode (generating tokens, bandwidth-bound)",
             "memory_fit": "Bottleneck: memory (model + KV cache do not fit the fast memory)",
             "misconfiguration": "Bottleneck: the setup (a configuration problem)"}[bottleneck]
    st = {"normal": "your numbers are normal for this hardware",
          "below_expected": "your numbers are below what this hardware does",
          "above_expected": "your numbers are above the usual range", "not_measured": "predicted, not measured"}[status]
    return f"{phase} — {st}."


def _explain(c: _Ctx, bottleneck: str, status: str, signals: list[str]) -> str:
    p = c.pred
    parts = list(signals)
    if p is not None:
        parts.append(
            f"Expected on {p.hardware['name']} with {p.model['id']} at {p.quant}: prefill ≈ "
            + (f"{p.prefill_tps:,.0f}" if p.prefill_tps else "?")
            + f" tok/s, decode ≈ {p.decode_tps:.1f} tok/s (ceiling {p.decode_ceiling_tps:.0f})."
        )
    return " ".join(parts)
