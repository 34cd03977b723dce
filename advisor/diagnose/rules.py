"""Diagnosis rules: small ordered functions over the Situation (never over text).

Each rule reads ``Ctx`` (the Situation's machine, workload, measured rates and typed symptoms, the
expected Prediction and, for an unresolved machine, physics bounds) and returns a :class:`Finding` or
None. :data:`RULES` is tried in order; the first finding names the bottleneck; when none fires,
:func:`advisor.diagnose.phase.phase` answers, so every situation gets a verdict.

Order, and why: a model that does not fit, or an allocated context that does not, explains everything
after it; an aggregate rate is not a single-stream one; a split the tool reports; placement stated in
the facts (-ngl); setup causes named by symptoms, each with the check that confirms it; a spill near
the memory limit only when no setup cause is named; then the generic far-below.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from advisor import roofline
from advisor.diagnose.context import SERVER_ENGINES, Ctx, predict_for, stated_total_gb, streams_for
from advisor.diagnose.status import spec_factor
from advisor.models import Bottleneck, Status

__all__ = ["Finding", "RULES", "first_finding", "SLOW_FP16_ENGINES", "BAD_ATTENTION", "NEAR_LIMIT", "PLANNED_SPLIT_RULE"]

SLOW_FP16_ENGINES = ("exllamav2", "vllm", "sglang", "tensorrt-llm", "transformers", "text-generation-webui")
BAD_ATTENTION = ("xformers", "torch_sdpa", "sdpa", "torch", "torch_native", "naive", "eager")
BATCH_PROBE = 256  # the batch at which "what batching reaches on this machine" is computed


@dataclass
class Finding:
    """What one rule concluded.

    Attributes:
        bottleneck: the phase or cause at fault.
        signal: the reason in words, with the numbers that support it.
        remedies: registry keys (:mod:`advisor.diagnose.remedies`), best first.
        status: the status this finding implies (None: from the measured rates).
        expected: an expectation the finding states itself (decode tok/s range), e.g. for an aggregate.
        rule: the rule's name (tests and explanations).
    """

    bottleneck: Bottleneck
    signal: str
    remedies: list[str] = field(default_factory=list)
    status: Status | None = None
    expected: tuple[float, float] | None = None
    rule: str = ""


def _below(c: Ctx) -> bool:
    """Decode measured and below the expectation (or the bounds), or not measured at all."""
    r = c.ratio_tg
    if r is not None:
        return r < 0.7
    return c.far_below or not c.tg


def _suspect(c: Ctx) -> bool:
    """A named setup symptom is worth naming: below the prediction, or, without one, not contradicted by it
    (the rate is not in the upper half of what the machine's kind allows)."""
    if c.pred is not None or c.far_below:
        return _below(c)
    b = c.bounds
    return not c.tg or b is None or c.tg < 0.5 * b.hi_tps


def _far(c: Ctx) -> str:
    e = c.expectation
    if not (c.tg and e):
        return "Decode is far below expectation"
    if c.pred is not None:
        return (f"Decode {c.tg:g} tok/s is {c.tg / e:.0%} of the ≈ {e:.0f} tok/s this machine reaches with "
                "the model in memory")
    b = c.bounds
    assert b is not None
    if not c.far_below:
        return (f"Decode {c.tg:g} tok/s (the slowest {b.basis.removeprefix('any ')}, {b.slow.name}, reaches ≈ "
                f"{b.lo_tps:.0f} tok/s with this model in memory)")
    return (f"Decode {c.tg:g} tok/s is far below the ≥ {b.lo_tps:.0f} tok/s that {b.basis} would reach with this model "
            f"in memory (the slowest, {b.slow.name} at {b.slow.bandwidth_gbs:g} GB/s)")


# A serving run's streams each writing under this share of the per-stream rate expected at their batch (1000 ÷ TPOT):
# the step itself is slow, which more concurrency cannot fix (a rule from the step model, not a fit).
SLOW_STEP = 0.5


def aggregate_rate(c: Ctx) -> Finding | None:
    """A rate above the single-stream ceiling from a server engine (or several users) is an aggregate."""
    if not c.tg_raw:
        return None
    single = predict_for(c.store, c.sit, concurrency=1) if c.pred is not None else None
    ceiling = single.decode_ceiling_tps if single else (c.bounds.hi_tps if c.bounds else None)
    if not ceiling or c.tg_raw <= 1.15 * ceiling:
        return None
    if c.sit.symptoms.speculative and c.sit.workload.users <= 1 and c.tg_raw <= 1.15 * spec_factor() * ceiling:
        return None  # drafts accepted: more than one token per pass of one stream
    if not (c.server_engine or c.sit.workload.users > 1 or c.sit.measured.decode_is_aggregate):
        return None
    w = c.sit.workload
    if "concurrency" in w.stated and w.users <= 1 and not c.sit.measured.decode_is_aggregate:
        return None  # "single user, 95 tok/s" on a server: one stream, so above its ceiling it is not these weights'

    ms = c.sit.measured
    streams = ms.streams or (c.sit.workload.users if c.sit.workload.users > 1 else None)
    if single is None:
        return Finding("decode", f"{c.tg_raw:g} tok/s is above what one stream can reach on {c.bounds.basis}"  # type: ignore[union-attr]
                       f" (≤ {ceiling:.0f} tok/s): it is an aggregate over several streams of a batched server.",
                       ["batching"], status="no_expectation", rule="aggregate_rate")
    best = predict_for(c.store, c.sit, concurrency=BATCH_PROBE)
    top = best.decode_tps if best else ceiling
    est = streams or streams_for(c.store, c.sit, c.tg_raw) or max(2, math.ceil(c.tg_raw / (single.decode_tps or 1)))
    per = f"; {c.tg_raw / streams:.1f} tok/s per stream over {streams} streams" if streams else (
        f": at least ≈ {est} streams decoding together (one stream reaches ≈ {single.decode_tps:.0f} tok/s)")
    status: Status = "normal" if c.tg_raw <= top else "above_expected"
    limit = (" This batch already reaches the compute limit (the ridge point): more sequences add no throughput."
             if c.tg_raw >= 0.9 * top else "")
    p = c.pred
    if ms.streams and p is not None and p.concurrency == ms.streams and p.decode_tps and c.tg_raw < top:
        # The streams are known (a serving benchmark's concurrency, the users named): judged at that batch, not
        # against anything from one stream to the machine's best batch.
        k = c.served_share  # a serving benchmark's output throughput: every request's prompt is read in that time too
        # (the top stays decode's own: the prompts' share is an estimate that must not call a fast server suspect)
        agg, hi = p.decode_tps * k, (p.decode_tps_range[1] if p.decode_tps_range else p.decode_tps)
        lo = (p.decode_tps_range[0] if p.decode_tps_range else 0.8 * p.decode_tps) * k
        rem = ["batching", "chunked_prefill"]
        served = (f", prompts included (≈ {p.decode_tps:,.0f} tok/s of decode alone, less the time the "
                  f"{c.sit.workload.prompt_tokens:,}-token prompts take at ≈ {p.prefill_tps:,.0f} tok/s)" if k < 0.97
                  and p.prefill_tps else "")
        limit = (f" At {ms.streams} streams about {agg:,.0f} tok/s in all ({agg / ms.streams:.1f} "
                 f"each){served} is expected: this is in line with it.")
        if c.tg_raw > hi:
            status = "above_expected"
            limit = limit.replace("this is in line with it", "this is above it")
        if c.tg_raw < lo:
            status = "below_expected"
            limit = (f" At {ms.streams} streams about {agg:,.0f} tok/s in all ({agg / ms.streams:.1f} "
                     f"each){served} is expected: this is {100 * (1 - c.tg_raw / agg):.0f} % below.")
            queued = bool(ms.ttft_s and p.ttft_s and ms.ttft_s > 3 * p.ttft_s)
            slow = bool(ms.itl_ms and p.decode_tps_per_seq and 1000 / ms.itl_ms < SLOW_STEP * p.decode_tps_per_seq)
            if slow and ms.itl_ms and not (queued and (ms.ttft_s or 0) >= 1.0):
                # (a first token seconds late says other prompts' prefill shares the steps: that slows them too)
                # each stream's own step is slow (its TPOT), not its wait: more requests at once cannot fix that
                limit += (f" Each stream writes at {1000 / ms.itl_ms:.1f} tok/s (a token every {ms.itl_ms:.0f} ms) where "
                          f"≈ {p.decode_tps_per_seq:.0f} is expected at {ms.streams} streams: the decode step itself is "
                          "slow (CUDA graphs off with --enforce-eager, a fallback attention backend, KV-cache preemption, "
                          "an old version's host work), not the queue.")
                rem = ["setup:cuda_graphs", "setup:attention", "setup:scheduler", "vllm_v1"]
            elif queued and ms.ttft_s and p.ttft_s:
                limit += (f" With a first token after {ms.ttft_s:.3g} s on average (≈ {p.ttft_s:.2g} s expected), "
                          "requests wait and other prompts' prefill runs between the decode steps: the server's "
                          "batch is capped (max-num-seqs) or long prompts stall it (chunked prefill, "
                          "--max-num-batched-tokens).")
                rem = ["chunked_prefill", "setup:scheduler", "batching"]
            else:
                rem = ["chunked_prefill", "setup:scheduler", "batching"]
        return Finding(
            "decode",
            f"{c.tg_raw:g} tok/s is above the single-stream ceiling (≈ {ceiling:.0f} tok/s for these weights at "
            f"{single.bandwidth_gbs:g} GB/s), so it is an aggregate over a batch{per}.{limit}",
            rem, status=status, expected=(lo, hi), rule="aggregate_rate")
    m = c.sit.machine
    rem = ["batching", "chunked_prefill"]
    tp = m is not None and m.count > 1 and (m.layout == "tensor_parallel" or c.sit.engine in SERVER_ENGINES)
    if c.tg_raw >= 0.9 * top and m is not None and tp:
        # At or above the layer-split limit: the prediction splits layers; tensor parallel adds the cards'
        # bandwidth and compute, so the batch has not reached a limit the prediction can name.
        status = "no_expectation"
        limit = (f" The prediction splits the layers between the {m.count} GPUs; tensor parallel adds up their bandwidth "
                 "and compute per step, so it reaches more than that, and this rate is not judged against it.")
        rem = ["batching", "batching_generic", "chunked_prefill"]
    return Finding(
        "decode",
        f"{c.tg_raw:g} tok/s is above the single-stream ceiling (≈ {ceiling:.0f} tok/s for these weights at "
        f"{single.bandwidth_gbs:g} GB/s), so it is an aggregate over a batch{per}. Batched decode reads the weights "
        f"once per step for every sequence; this machine reaches up to ≈ {top:,.0f} tok/s aggregate at batch "
        f"{BATCH_PROBE}.{limit}",
        rem, status=status, expected=(single.decode_tps, top), rule="aggregate_rate")


def does_not_fit(c: Ctx) -> Finding | None:
    """Weights + KV cache need more than the usable memory: the overflow runs from system RAM or swap."""
    p, sit = c.pred, c.sit
    if p is not None:
        if p.memory.fits:
            return None
        mem = p.memory
        if c.server_engine and mem.weights_gb + mem.overhead_gb <= mem.usable_gb and sit.workload.users > 1:
            # A paged-KV server (vLLM, SGLang, TensorRT-LLM) does not spill a full cache to system RAM: it runs as
            # many sequences as its KV pool holds and queues (or preempts) the rest, which the other rules judge.
            return None
        full = predict_for(c.store, sit, gpu_share=1.0) if c.tg else None
        in_mem = (full.decode_tps_per_seq or full.decode_tps) if full is not None else None
        if in_mem and c.tg and (c.tg >= 0.7 * in_mem and mem.required_gb <= 1.1 * (mem.total_gb or 0)
                                or c.tg >= 0.9 * in_mem and mem.weights_gb <= 0.95 * mem.usable_gb):
            # The measured rate is the in-memory speed: it evidently fits (the estimate was cautious, or the
            # weights fit and the cache is smaller than assumed: a quantized cache or a shorter allocated context).
            return None
        if (planned := _planned_split(c)) is not None:
            return planned
        layers = _layers_phrase(c)
        sig = (f"Needs {mem.required_gb:.1f} GB (weights {mem.weights_gb:.1f} + KV cache {mem.kv_cache_gb:.1f} + "
               f"overhead {mem.overhead_gb:.1f}) but only {mem.usable_gb:.1f} GB is usable ({mem.note}).")
        if layers:
            sig += " " + layers
        if mem.total_gb and mem.required_gb > mem.total_gb:
            sig += (f" The model is larger than the machine's whole {mem.total_gb:g} GB: no memory setting makes "
                    "it fit; a smaller model or format does.")
            rem = ["fit_in_memory", "smaller_model", "quantization", "kv_cache_quantization", "add_gpu"]
        else:
            rem = ["fit_in_memory", "quantization", "raise_gpu_limit", "kv_cache_quantization", "smaller_model",
                   "offload_all", "add_gpu"]
            if mem.kv_cache_gb > 0.2 * mem.required_gb:
                sig += f" The KV cache alone takes {mem.kv_cache_gb:.1f} GB at this context length."
                rem = ["shrink_context", "kv_cache_quantization", "fit_in_memory", "quantization"]
        # A card with the rest in system RAM: how the model is split, and how the prompt crosses PCIe, first.
        return Finding("memory_fit", sig, ["moe_expert_offload", "micro_batch", *rem], rule="does_not_fit")
    total = stated_total_gb(c.store, sit)
    if not total or sit.model is None or sit.quant is None:
        return None
    need = roofline.weight_bytes_total(sit.model, sit.quant.bits_per_weight) / 1e9
    b = c.bounds
    if need <= total and b is not None and not b.fits_any and (not c.tg or c.tg < b.lo_tps):
        mem = b.slow_pred.memory
        return Finding("memory_fit", f"On {b.basis} the model needs {mem.required_gb:.1f} GB (weights {mem.weights_gb:.1f} "
                       f"+ KV cache {mem.kv_cache_gb:.1f} + overhead {mem.overhead_gb:.1f}) but only about "
                       f"{mem.usable_gb:.1f} GB is usable ({mem.note}): the rest is swapped or runs from system RAM.",
                       ["fit_in_memory", "quantization", "smaller_model"], rule="does_not_fit")
    if need <= total:
        return None
    return Finding("memory_fit", f"The weights alone take {need:.1f} GB at {sit.quant.name}; the {total:g} GB "
                   "of fast memory holds only part of them, so the rest runs from system RAM (or swap).",
                   ["fit_in_memory", "quantization", "smaller_model", "offload_all"], rule="does_not_fit")


def allocated_context(c: Ctx) -> Finding | None:
    """The allocated context (num_ctx / -c) sizes the KV cache up front: too large, and layers leave the GPU."""
    sit, p = c.sit, c.pred
    cw = sit.workload.context_window or sit.facts.context_window
    hw = sit.hardware
    if not cw or p is None or hw is None or sit.model is None or sit.quant is None or not p.memory.fits:
        return None
    if not c.has_gpu or cw <= sit.workload.depth + sit.workload.prompt_tokens + sit.workload.gen_tokens:
        return None
    fm = roofline.memory_fit(hw, sit.model, sit.quant.bits_per_weight, context_tokens=cw, concurrency=sit.workload.users,
                             kv_bytes_per_element=c.kv_bpe)
    if fm.fits or (c.tg and not _below(c)):
        return None
    return Finding("memory_fit", f"The allocated context of {cw:,} tokens reserves a {fm.kv_cache_gb:.1f} GB KV cache up "
                   f"front: model + cache need {fm.required_gb:.1f} GB of {fm.usable_gb:.1f} GB usable, so part of the "
                   "model leaves the GPU (check `ollama ps` or the engine's offload log).",
                   (["raise_gpu_limit"] if hw.kind == "apple_soc" else []) + ["shrink_context", "kv_cache_quantization",
                                                                               "fit_in_memory"], rule="allocated_context")


def container(c: Ctx) -> Finding | None:
    """A container without GPU access (no Metal in Docker on macOS; no --gpus on Linux)."""
    if not (c.sit.symptoms.container and c.has_gpu and (c.far_below or not c.tg)):
        return None
    if c.kind == "apple_soc":
        return Finding("misconfiguration", _far(c) + ": containers on macOS cannot use the Apple GPU (no Metal in "
                       "Docker), so everything runs on the CPU.", ["offload_all", "setup:container_mac"],
                       status="below_expected", rule="container")
    return Finding("misconfiguration", _far(c) + ": the container may not see the GPU (needs --gpus all and the "
                   "NVIDIA container toolkit, or /dev/kfd for ROCm).", ["setup:container_gpu", "offload_all"],
                   status="below_expected", rule="container")


def slow_fp16_gpu(c: Ctx) -> Finding | None:
    """Pascal (and older) cards run FP16 kernels at a small fraction of FP32: engines that compute in FP16 crawl."""
    s = c.sit.symptoms
    if s.gpu_arch is None or not (c.far_below or (c.sit.engine in SLOW_FP16_ENGINES and _suspect(c))):
        return None
    return Finding("misconfiguration", _far(c) + f": {s.gpu_arch.title()} GPUs (P40, P4, GTX 10xx; not the P100) run "
                   "FP16 math at about 1/64 of their FP32 rate, and this engine's kernels compute in FP16, so the card "
                   "is starved for compute rather than bandwidth.", ["setup:fp16_kernels", "more_compute"],
                   status="below_expected", rule="slow_fp16_gpu")


def slow_gpu_backend(c: Ctx) -> Finding | None:
    """A GPU backend the machine runs badly: Metal on an Intel Mac's GPU, CLBlast/OpenCL anywhere."""
    b = c.sit.symptoms.gpu_backend
    # Vulkan is the usual, sound backend of AMD/Intel iGPUs (a Ryzen's Radeon 780M resolves as its CPU): only an
    # Intel Mac's GPU is named bad for it.
    bad = b in ("clblast", "opencl") or (b == "metal" and c.kind == "cpu") or (
        b in ("metal", "vulkan") and c.sit.symptoms.intel_mac)
    if not bad or not _suspect(c):
        return None
    return Finding("misconfiguration", _far(c) + f": the {b} backend runs poorly on this GPU (Intel Macs' GPUs and "
                   "CLBlast/OpenCL offload are often slower than the CPU itself).", ["setup:gpu_backend"],
                   status="below_expected", rule="slow_gpu_backend")


def kv_quant_fallback(c: Ctx) -> Finding | None:
    """A quantized KV cache without a matching GPU flash-attention kernel: attention falls back to the CPU."""
    if not (c.sit.symptoms.kv_cache_quant and c.has_gpu and c.far_below):
        return None
    return Finding("misconfiguration", _far(c) + ": a quantized KV cache with flash attention has no GPU kernel for "
                   "some models, so attention falls back to the CPU every step.",
                   ["setup:kv_f16", "kv_cache_off", "offload_all"], status="below_expected", rule="kv_quant_fallback")


def cpu_sampling(c: Ctx) -> Finding | None:
    """top_k 0 makes the sampler sort the whole vocabulary on the CPU for every token."""
    if not (c.sit.symptoms.cpu_sampling and _suspect(c)):
        return None
    return Finding("misconfiguration", (_far(c) if c.tg else "Decode") + ": top_k 0 disables the top-k cut, so every "
                   "token's sampler sorts the whole vocabulary (~150k entries) on the CPU, which costs more than the "
                   "GPU's forward pass for small and mid-size models.", ["setup:sampler"],
                   status="below_expected", rule="cpu_sampling")


def eager_mode(c: Ctx) -> Finding | None:
    """vLLM --enforce-eager: no CUDA graphs, so every decode step pays the kernel-launch overhead."""
    if not (c.sit.symptoms.eager_mode and _suspect(c)):
        return None
    return Finding("misconfiguration", (_far(c) if c.tg else "Decode") + ": --enforce-eager turns CUDA graphs off, so "
                   "each decode step launches hundreds of small kernels from Python; at batch 1 that overhead, not "
                   "bandwidth, sets the speed.", ["setup:cuda_graphs"], status="below_expected", rule="eager_mode")


def attention_backend(c: Ctx) -> Finding | None:
    """A slow attention backend (xformers / torch SDPA fallback) or flash attention off at long context."""
    s = c.sit.symptoms
    bad = s.attention_backend in BAD_ATTENTION
    if not (bad and _suspect(c)):
        return None
    return Finding("misconfiguration", (_far(c) if c.tg else "Decode") + f": the {s.attention_backend} attention "
                   "backend is a slow fallback for this GPU and engine.", ["setup:attention"],
                   status="below_expected", rule="attention_backend")


def tensor_parallel_pcie(c: Ctx) -> Finding | None:
    """Tensor parallel over PCIe without P2P: every layer's all-reduce waits on the bus."""
    m = c.sit.machine
    if m is None or m.count < 2:
        return None
    tp = m.layout == "tensor_parallel" or (m.tensor_parallel or 0) > 1
    # Consumer cards talk over PCIe unless a bridge is named (RTX 40/50 have no NVLink at all).
    pcie = ((m.interconnect or "").startswith("pcie") or c.sit.symptoms.p2p_disabled
            or (m.interconnect is None and c.kind == "discrete_gpu"))
    if not (tp and pcie):
        return None
    bus = m.interconnect.upper().replace("PCIE", "PCIe Gen") if m.interconnect else "PCIe"
    p2p = " with peer-to-peer disabled (NCCL stages every transfer through host memory)" if c.sit.symptoms.p2p_disabled else ""
    sig = (f"Tensor parallel over {bus}{p2p}: each layer ends in an all-reduce across the cards, and on PCIe that "
           "synchronisation, not memory bandwidth, takes a large share of every token.")
    if c.far_below:
        return Finding("misconfiguration", _far(c) + ". " + sig, ["setup:tp_interconnect", "more_bandwidth"],
                       status="below_expected", rule="tensor_parallel_pcie")
    return Finding("decode", sig, ["setup:tp_interconnect", "more_bandwidth"], rule="tensor_parallel_pcie")


def carveout(c: Ctx) -> Finding | None:
    """A BIOS VRAM carve-out on an APU taken as the whole memory: the rest of the model runs on the CPU."""
    m, p = c.sit.machine, c.pred
    if m is None or c.kind != "apu" or not m.vram_carveout_gb or p is None:
        return None
    if p.memory.required_gb <= m.vram_carveout_gb or not _below(c):
        return None
    return Finding("misconfiguration", (_far(c) + ". " if c.tg else "") + f"The model needs {p.memory.required_gb:.1f} GB "
                   f"but the BIOS carve-out gives the GPU only {m.vram_carveout_gb:g} GB; the engine then keeps the rest "
                   "on the CPU instead of using the shared (GTT) memory.", ["setup:carveout"],
                   status="below_expected", rule="carveout")


def rocm_unsupported_igpu(c: Ctx) -> Finding | None:
    """ROCm on an integrated or consumer GPU it does not list (gfx1103...) silently falls back to the CPU."""
    if not (c.kind == "apu" and c.sit.symptoms.gpu_backend == "rocm" and c.far_below):
        return None
    return Finding("misconfiguration", _far(c) + ": ROCm does not officially support this integrated GPU, so the engine "
                   "found no usable GPU and silently ran on the CPU.", ["setup:rocm_igpu", "offload_all"],
                   status="below_expected", rule="rocm_unsupported_igpu")


# Radeon cards ROCm does not list (RDNA2 below the 6800, RDNA1): Ollama's and llama.cpp's ROCm builds skip them
# unless HSA_OVERRIDE_GFX_VERSION is set (AMD ROCm system requirements; Ollama docs/gpu.md "Overrides on Linux").
_ROCM_UNLISTED = re.compile(r"\b(?:rx\s*)?(?:6[0-7][05]0(?:\s*xt)?m?|5[5-7]00(?:\s*xt)?m?)\b", re.I)


def rocm_unsupported_card(c: Ctx) -> Finding | None:
    """A Radeon card ROCm does not list, with the run on the CPU (``ollama ps`` 100% CPU, "not used")."""
    hw, s = c.sit.hardware, c.sit.symptoms
    if c.kind != "discrete_gpu" or hw is None or "amd" not in (hw.vendor or "").lower():
        return None
    refused = s.rocm_refused  # the engine's own log: "amdgpu is not supported … gpu_type=gfx1032"
    on_cpu = s.gpu_not_used or s.gpu_fraction == 0.0 or s.cpu_only or refused
    slow = c.far_below or (c.ratio_tg is not None and c.ratio_tg < 0.4)
    if not (on_cpu and slow) or not (refused or _ROCM_UNLISTED.search(hw.name)):
        return None
    return Finding("misconfiguration", _far(c) + f": ROCm does not list the {hw.name}, so the engine found no usable "
                   "GPU and ran on the CPU.", ["setup:rocm_card", "offload_all"], status="below_expected",
                   rule="rocm_unsupported_card")


def runtime_regression(c: Ctx) -> Finding | None:
    """Slower than another engine or an earlier version on the same machine: a runtime bug or regression."""
    s = c.sit.symptoms
    if not ((s.regression or s.faster_elsewhere) and (c.far_below or (c.ratio_tg is not None and c.ratio_tg < 0.7))):
        return None
    if c.fits is False or (not s.faster_elsewhere and near_limit_spill(c) is not None):
        return None  # "slower than before" close to the memory limit is a spill (a larger context), not the runtime
    return Finding("misconfiguration", _far(c) + ": the same model runs much faster elsewhere on this machine, so the "
                   "hardware is not the limit; this engine build is (a known regression or missing kernel).",
                   ["setup:runtime"], status="below_expected", rule="runtime_regression")


def threads_oversubscribed(c: Ctx) -> Finding | None:
    """More CPU threads than physical cores: they fight for cores and the memory bus."""
    t, hw = c.sit.symptoms.threads, c.sit.hardware
    cores = _physical_cores(hw.cpu_cores if hw else None)
    if not t or c.kind != "cpu" and cores is None:
        return None
    if cores is not None and t > cores and (c.ratio_tg is None or c.ratio_tg < 0.7):
        return Finding("misconfiguration", f"{t} threads on {cores} cores: oversubscribed threads fight for the cores "
                       "and the memory bus, and decode slows down.", ["setup:threads"], status="below_expected",
                       rule="threads_oversubscribed")
    if cores is None and c.ratio_tg is not None and c.ratio_tg < 0.7:
        return Finding("misconfiguration", f"CPU decode below expectation with -t {t} set: more threads than physical "
                       "cores (or threads on efficiency cores) fight for the memory bus; check -t against the physical "
                       "core count.", ["setup:threads"], status="below_expected", rule="threads_oversubscribed")
    return None


def _physical_cores(spec: str | None) -> int | None:
    if not spec:
        return None
    nums = [int(x) for x in spec.replace("-", " ").replace("/", " ").split() if x.isdigit()]
    return max(nums) if nums else None


def numa(c: Ctx) -> Finding | None:
    """A multi-socket CPU below expectation: the weights sit on one NUMA node."""
    if not (c.sit.symptoms.numa and c.kind == "cpu" and c.ratio_tg is not None and c.ratio_tg < 0.7):
        return None
    return Finding("decode", "Decode is below what this hardware reaches elsewhere; on multi-socket servers the "
                   "weights must be spread across the NUMA nodes.", ["setup:numa", "quantization"],
                   rule="numa")


def far_below(c: Ctx) -> Finding | None:
    """Far below with no named cause: on a GPU machine the layers most likely run on the CPU."""
    if not c.far_below:
        return None
    if c.server_engine and c.sit.workload.users > 1:
        return Finding("misconfiguration", _far(c) + f" at {c.sit.workload.users} users: a serving engine keeps "
                       "every layer on the GPU, so the requests wait (the queue, KV-cache preemption, other users' "
                       "prompts) rather than the GPU being slow.", ["vllm_v1", "setup:scheduler", "batching", "chunked_prefill"],
                       status="below_expected", rule="far_below")
    if c.server_engine:
        # vLLM, SGLang and TensorRT-LLM never run layers on the CPU unless told to: one stream far below is the
        # engine's own path (eager mode, the attention backend, tensor parallel over PCIe, an old version)
        return Finding("misconfiguration", _far(c) + ": a serving engine keeps every layer on the GPU, so one stream "
                       "this slow points at its settings (CUDA graphs off with --enforce-eager, the attention backend, "
                       "tensor parallel over PCIe, an old version) rather than the GPU.",
                       ["setup:cuda_graphs", "setup:attention", "vllm_v1", "setup:engine"], status="below_expected",
                       rule="far_below")
    if c.has_gpu:
        eff_bw = (c.tg or 0) * (c.pred.weight_bytes_per_token_gb if c.pred else 0)
        return Finding("misconfiguration", _far(c) + (f" (≈ {eff_bw:.0f} GB/s effective, system-RAM speed)" if eff_bw else "")
                       + ": the layers are most likely running on the CPU (no GPU offload, a CPU-only build or runtime).",
                       ["offload_all", "setup:check_placement"], status="below_expected", rule="far_below")
    if c.kind == "cpu":
        return Finding("misconfiguration", _far(c) + ": for a CPU this points at threads (use the physical core count), "
                       "background load or memory running below its rated speed.", ["setup:cpu_tuning"],
                       status="below_expected", rule="far_below")
    return None


from advisor.diagnose.rules_engine import (  # noqa: E402
    felt_slow,
    gpu_slowed,
    kv_cache_full,
    plain_framework,
    power_limited,
    slow_prefill_backend,
    slow_prefill_only,
)
from advisor.diagnose.rules_placement import (  # noqa: E402
    NEAR_LIMIT,
    PLANNED_SPLIT_RULE,
    _layers_phrase,
    _planned_split,
    experts_off_the_card,
    gpu_not_used,
    near_limit_spill,
    output_layer_on_cpu,
    partial_offload,
    reported_split,
)

RULES: tuple[Callable[[Ctx], Finding | None], ...] = (
    does_not_fit, kv_cache_full, allocated_context, aggregate_rate, rocm_unsupported_card, reported_split, experts_off_the_card, output_layer_on_cpu, partial_offload, gpu_not_used, container,
    slow_fp16_gpu, slow_gpu_backend, slow_prefill_backend, power_limited, plain_framework, kv_quant_fallback, cpu_sampling, eager_mode, attention_backend,
    tensor_parallel_pcie, carveout, rocm_unsupported_igpu, runtime_regression, threads_oversubscribed, numa,
    near_limit_spill, felt_slow, gpu_slowed, far_below, slow_prefill_only,
)


def first_finding(c: Ctx) -> Finding:
    """The first rule that fires, else the workload's phase."""
    from advisor.diagnose.phase import phase

    for rule in RULES:
        f = rule(c)
        if f is not None:
            return f
    return phase(c)
