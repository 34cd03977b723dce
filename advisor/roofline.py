"""Roofline arithmetic: bytes and FLOPs per token, ceilings, KV cache, memory fit.

Pure functions, units in the names. Formulas are those of DESIGN.md ("The physics"):

* bytes read per decoded token ``B_tok = P_read × bpw / 8 + KV_bytes(context)``;
* ``KV_bytes(ctx) = 2 × kv_layers × n_kv_heads × head_dim × ctx × bytes_per_element``
  (K and V; GQA-aware; hybrid or sliding-window layers hold less);
* decode ceiling ``BW / B_tok``; prefill ceiling ``FLOPS / FLOPs_per_token`` with
  ``FLOPs_per_token = 2 × P_active + 4 × full_layers × n_heads × head_dim × ctx_avg`` (QKᵀ and AV,
  2 FLOP per multiply-add; Kaplan et al. 2020, "Scaling Laws", Table 1 counts the same terms);
* arithmetic intensity of batch-b decode ≈ ``2 × b / (bpw / 8)`` FLOP per weight byte; ridge point
  ``FLOPS / BW``.
"""

from __future__ import annotations

import math

from advisor.models import Hardware, MemoryFit, ModelSpec

__all__ = [
    "GB",
    "attention_flops_per_token",
    "decode_arithmetic_intensity",
    "decode_ceiling_tps",
    "default_usable_fraction",
    "kv_bytes",
    "kv_bytes_per_token",
    "memory_fit",
    "prefill_ceiling_tps",
    "prefill_flops_per_token",
    "ridge_point",
    "speculative_speedup",
    "weight_bytes_read_per_token",
    "weight_bytes_total",
]

GB = 1e9
# GPU memory as the catalog and people state it ("24 GB" VRAM, "--memory-gb 48" for two cards) is binary: a 24 GB
# card holds 24 GiB = 25.8e9 bytes (GDDR/HBM capacities are powers of two; nvidia-smi reports MiB). Weights and KV
# caches are counted in decimal GB (what GGUF/Hugging Face file sizes state), so memory_fit turns a GPU's stated
# size into decimal GB before comparing them. Unified memory and system RAM keep their stated size: the shares the
# OS leaves a model there (default_usable_fraction) are estimates made on it.
STATED_GB = 2**30 / GB
KV_BYTES_F16 = 2.0
# Bytes per KV-cache element by cache type: f16; q8_0 = 34 B / 32, q4_0 = 18 B / 32, q5_0 = 22 B / 32, q5_1 = 24 B / 32,
# q4_1 = 20 B / 32 (ggml-common.h block structs); fp8 / int8 (vLLM --kv-cache-dtype fp8, MLX 8-bit) one byte.
KV_BYTES_PER_ELEMENT = {"f16": 2.0, "bf16": 2.0, "q8_0": 34 / 32, "q5_1": 24 / 32, "q5_0": 22 / 32, "q4_1": 20 / 32,
                        "q4_0": 18 / 32, "fp8": 1.0, "int8": 1.0, "q8": 34 / 32, "q4": 18 / 32, "int4": 18 / 32}


def served_share(decode_agg_tps: float | None, prefill_tps: float | None, prompt_tokens: int | None,
                 gen_tokens: int | None) -> float:
    """The share of a batch's aggregate decode rate that a loaded server's output throughput keeps when every request's
    prompt is read in the same GPU time (``vllm bench serve``, SGLang ``bench_serving``): ``out / agg`` with
    ``1/out = 1/agg + P / (G × prefill)`` (P, G: one request's prompt and answer tokens; rates tok/s). 1 when a figure
    is missing."""
    if not (decode_agg_tps and prefill_tps and prompt_tokens and gen_tokens):
        return 1.0
    return 1.0 / (1.0 + decode_agg_tps * prompt_tokens / (gen_tokens * prefill_tps))


def prompt_load(decode_agg_tps: float | None, prefill_tps: float | None, prompt_tokens: int | None,
                gen_tokens: int | None) -> tuple[float, float] | None:
    """(s reading one request's prompt, s of the batch's decode for its answer) when reading takes at least as long:
    a load of several users whose prompts take most of the machine's time (prefill-bound). Each prompt is read at the
    full prefill rate (``P / prefill``) while one decode step serves every running stream (``G / aggregate decode``).
    None when a figure is missing or decoding takes longer."""
    if not (decode_agg_tps and prefill_tps and prompt_tokens and gen_tokens):
        return None
    read_s, decode_s = prompt_tokens / prefill_tps, gen_tokens / decode_agg_tps
    return (read_s, decode_s) if read_s >= decode_s else None


def kv_element_bytes(cache_type: str | None) -> float:
    """Bytes per KV-cache element of a cache type as said (``q8_0``, ``Q4_0``, ``fp8_e4m3``, ``"quantized"``); f16 when
    unknown or None. A quantized cache of no stated type is taken as q8_0 (the usual choice: ``-ctk q8_0``,
    ``OLLAMA_KV_CACHE_TYPE=q8_0``)."""
    t = (cache_type or "f16").lower()
    if t == "quantized":
        return KV_BYTES_PER_ELEMENT["q8_0"]
    if t.startswith("fp8"):
        return 1.0
    return KV_BYTES_PER_ELEMENT.get(t, KV_BYTES_F16)


def _embedding_params(model: ModelSpec) -> float:
    """Parameters of the input embedding table that decode does not read in full (untied models).

    Engines look up one embedding row per token; the LM head (vocab × hidden) is read in full. When
    input and output embeddings are tied the matrix is counted once in ``params_b`` and read as the
    LM head, so nothing is subtracted. Tied: Gemma and models under 5B (Llama 3.2 1B/3B, small Qwen).
    """
    if not (model.vocab_size and model.hidden_size):
        return 0.0
    tied = model.params_b < 5 or "gemma" in model.id.lower()
    return 0.0 if tied else float(model.vocab_size * model.hidden_size)


def weight_bytes_read_per_token(model: ModelSpec, bits_per_weight: float) -> float:
    """Bytes of weights read to decode one token, B: active parameters × bpw / 8.

    MoE models read their active parameters only; the input-embedding table of untied models is a
    row lookup and is left out (see :func:`_embedding_params`).
    """
    active = model.active_b * 1e9
    emb = _embedding_params(model)
    if model.active_params_b is None:
        active -= emb
    return max(active, 0.05 * model.active_b * 1e9) * bits_per_weight / 8


def weight_bytes_total(model: ModelSpec, bits_per_weight: float) -> float:
    """Bytes of all weights in memory (every expert of a MoE), B."""
    return model.params_b * 1e9 * bits_per_weight / 8


def kv_bytes_per_token(model: ModelSpec, bytes_per_element: float = KV_BYTES_F16) -> float:
    """KV-cache bytes added per token of context on full-attention layers, B/token.

    Unknown attention shape: 0.0 (callers state the assumption).
    """
    if not (model.n_layers and model.n_kv_heads and model.head_dim):
        return 0.0
    layers = model.kv_layers if model.kv_layers is not None else model.n_layers
    if model.kv_layers is None and model.sliding_layers:
        layers = model.n_layers - model.sliding_layers
    return 2.0 * layers * model.n_kv_heads * model.head_dim * bytes_per_element


def kv_bytes(model: ModelSpec, context_tokens: float, bytes_per_element: float = KV_BYTES_F16) -> float:
    """KV-cache bytes held (and read by one decode step) at ``context_tokens``, B.

    ``2 × kv_layers × n_kv_heads × head_dim × ctx × bytes_per_element``, plus sliding-window layers
    capped at their window.
    """
    ctx = max(0.0, float(context_tokens))
    total = kv_bytes_per_token(model, bytes_per_element) * ctx
    if model.sliding_layers and model.sliding_window and model.n_kv_heads and model.head_dim:
        total += 2.0 * model.sliding_layers * model.n_kv_heads * model.head_dim * min(ctx, model.sliding_window) * bytes_per_element
    return total


def decode_ceiling_tps(bandwidth_gbs: float, bytes_per_token: float) -> float:
    """Decode roofline, tok/s: ``bandwidth [B/s] / bytes per token [B]``.

    Example: 900 GB/s and 4.9 GB per token → ≈ 183.7 tok/s.

    Raises:
        ValueError: non-positive bandwidth or bytes.
    """
    if bandwidth_gbs <= 0 or bytes_per_token <= 0:
        raise ValueError(f"bandwidth ({bandwidth_gbs}) and bytes per token ({bytes_per_token}) must be > 0")
    return bandwidth_gbs * GB / bytes_per_token


def attention_flops_per_token(model: ModelSpec, context_tokens: float) -> float:
    """Attention FLOPs for one token attending to ``context_tokens``: 4 × layers × heads × head_dim × ctx."""
    if not (model.n_layers and model.n_heads and model.head_dim):
        return 0.0
    full = model.kv_layers if model.kv_layers is not None else model.n_layers - (model.sliding_layers or 0)
    flops = 4.0 * full * model.n_heads * model.head_dim * max(0.0, context_tokens)
    if model.sliding_layers and model.sliding_window:
        flops += 4.0 * model.sliding_layers * model.n_heads * model.head_dim * min(context_tokens, model.sliding_window)
    return flops


def prefill_flops_per_token(model: ModelSpec, prompt_tokens: int, depth: int = 0) -> float:
    """Average FLOPs per prefilled token: ``2 × P_active`` + attention at mean context ``depth + P/2``."""
    return 2.0 * model.active_b * 1e9 + attention_flops_per_token(model, depth + prompt_tokens / 2.0)


def prefill_ceiling_tps(tflops: float, flops_per_token: float) -> float:
    """Prefill roofline, tok/s: ``FLOP/s / FLOPs per token``."""
    if tflops <= 0 or flops_per_token <= 0:
        raise ValueError(f"tflops ({tflops}) and flops per token ({flops_per_token}) must be > 0")
    return tflops * 1e12 / flops_per_token


def ridge_point(tflops: float, bandwidth_gbs: float) -> float:
    """Machine balance, FLOP per byte: ``FLOPS / BW``. Work above it is compute-bound."""
    return tflops * 1e12 / (bandwidth_gbs * GB)


def decode_arithmetic_intensity(batch: int, bits_per_weight: float) -> float:
    """FLOP per byte of weights for batch-``batch`` decode: ``2 × b / (bpw / 8)``."""
    return 2.0 * batch / (bits_per_weight / 8.0)


def speculative_speedup(acceptance: float, draft_tokens: int, draft_cost: float, verify_cost: float = 1.0) -> float:
    """Expected speed-up of speculative decoding (Leviathan et al., 2023, eq. for walltime).

    ``(1 − α^(γ+1)) / ((1 − α) × (γ × c + v))`` with acceptance α, γ draft tokens, draft cost c
    (draft step time / target step time) and verify cost v (the target's pass over γ + 1 tokens / its pass over
    one: 1 for a dense model whose step is bandwidth-bound; more for a MoE, whose γ + 1 tokens touch more experts,
    :func:`advisor.perf.step.weight_bytes_step`).
    """
    a, g, c, v = acceptance, draft_tokens, draft_cost, verify_cost
    if not (0 <= a < 1) or g < 1 or c < 0 or v < 1:
        raise ValueError(f"need 0 <= acceptance < 1, draft_tokens >= 1, draft_cost >= 0, verify_cost >= 1 "
                         f"(got {a}, {g}, {c}, {v})")
    return (1 - a ** (g + 1)) / ((1 - a) * (g * c + v))


# NVIDIA's GDDR data-centre cards ship with ECC on, which keeps 1/16 of the memory for check bits: nvidia-smi
# totals T4 15360 MiB of 16 GiB, L4 23034 MiB of 24 GiB (shared/data/new_hardware_notes.md: "15" and "22.5"
# GB reported by the benchmark harnesses), A10/A10G 23028 MiB, A40/L40S 46068 MiB. HBM cards (A100, H100)
# and the RTX workstation cards (ECC off by default) keep their full size.
ECC_SHARE = 1 / 16
ECC_ON_GDDR = frozenset({"nvidia-tesla-t4", "nvidia-l4", "nvidia-a2", "nvidia-a2-pcie", "nvidia-a10-pcie",
                         "nvidia-a10g", "nvidia-a16-pcie", "nvidia-a40", "nvidia-l40", "nvidia-l40s", "nvidia-l20"})


def default_usable_fraction(hw: Hardware, memory_gb: float) -> tuple[float, str]:
    """Share of memory a model may use on this hardware, and why.

    macOS lets the GPU wire about two thirds of unified memory on machines up to 36 GB and about
    three quarters above (``recommendedMaxWorkingSetSize``; raise it with ``sysctl
    iogpu.wired_limit_mb``). Discrete GPUs: their VRAM less ~0.5 GB for the driver/context. APUs and
    CPU systems: the OS keeps some memory for itself (estimates).
    """
    if hw.kind == "apple_soc":
        frac = 2 / 3 if memory_gb <= 36 else 0.75
        return frac, f"macOS lets the GPU use about {frac:.0%} of unified memory by default (iogpu.wired_limit_mb)"
    if hw.kind in ("discrete_gpu", "datacenter_gpu"):
        if hw.id in ECC_ON_GDDR:
            return max(0.5, 1 - ECC_SHARE - 0.5 / memory_gb), (
                f"VRAM ({memory_gb:g} GiB a card; ECC, on by default on this card, holds 1/16 of it, so nvidia-smi "
                f"shows {memory_gb * (1 - ECC_SHARE):.1f} GiB) less about 0.5 GB for the driver and CUDA context")
        return max(0.5, 1 - 0.5 / memory_gb), (f"VRAM ({memory_gb:g} GiB = {memory_gb * STATED_GB:.1f} GB a card) less "
                                                "about 0.5 GB for the driver and CUDA/ROCm context")
    if hw.kind == "apu":
        return 0.85, "unified memory less what the OS keeps (ESTIMATE: 85 %)"
    return 0.85, "system RAM less what the OS keeps (ESTIMATE: 85 %)"


def counts_binary_memory(hw: Hardware) -> bool:
    """Whether memory_fit turns this machine's stated memory into decimal GB (GPU VRAM: :data:`STATED_GB`)."""
    return hw.kind in ("discrete_gpu", "datacenter_gpu")


def stated_total_gb(hw: Hardware, total_gb: float | None) -> float | None:
    """A :class:`MemoryFit` ``total_gb`` back in the units the machine's memory is stated in ("2 × 24 GB" → 48)."""
    if total_gb is None or not counts_binary_memory(hw):
        return total_gb
    return round(total_gb / STATED_GB, 6)


def memory_fit(
    hw: Hardware,
    model: ModelSpec,
    bits_per_weight: float,
    *,
    context_tokens: int,
    concurrency: int = 1,
    kv_bytes_per_element: float = KV_BYTES_F16,
    memory_gb: float | None = None,
) -> MemoryFit:
    """Do weights + KV cache + runtime overhead fit the memory the accelerator may use?

    Overhead (ESTIMATE): 0.5 GB of compute buffers and context plus 3 % of the weights.
    On a discrete GPU ``gpu_share`` is the share of weights that fits in VRAM (the rest is run from
    system memory: partial offload).
    """
    mem = memory_gb or hw.memory_gb or (max(hw.memory_gb_options) if hw.memory_gb_options else None)
    weights = weight_bytes_total(model, bits_per_weight) / GB
    kv = kv_bytes(model, context_tokens, kv_bytes_per_element) * concurrency / GB
    overhead = 0.5 + 0.03 * weights
    required = weights + kv + overhead
    if mem is None:
        return MemoryFit(weights_gb=weights, kv_cache_gb=kv, overhead_gb=overhead, required_gb=required,
                         usable_gb=math.inf, total_gb=None, fits=True, note="memory size unknown: fit not checked")
    total = mem * STATED_GB * hw.n_devices if counts_binary_memory(hw) else mem
    frac, why = default_usable_fraction(hw, mem)
    usable = total * frac
    fits = required <= usable
    share = 1.0
    if not fits and hw.kind in ("discrete_gpu", "datacenter_gpu"):
        share = max(0.0, min(1.0, (usable - kv - overhead) / weights)) if weights > 0 else 1.0
    return MemoryFit(weights_gb=weights, kv_cache_gb=kv, overhead_gb=overhead, required_gb=required,
                     usable_gb=usable, total_gb=total, fits=fits, gpu_share=share, note=why)
