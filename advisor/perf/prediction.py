"""Predictions per phase: roofline ceilings × calibrated efficiency, memory fit, placement.

``predict()`` is the one function the CLI, the chat, diagnosis and comparison call.
"""

from __future__ import annotations

import math
from typing import Any

from advisor import roofline
from advisor.calibration import (
    TIER_ENGINES,
    V0_HOST_KEY,
    CalibrationModel,
    accel_class,
    attention_flops,
    beta_for,
    cpu_qclass,
    engine_family,
    features,
    moe_t0,
    moe_t0_applies,
    moe_t0_key,
    pipeline_speedup,
    row_t0,
)
from advisor.errors import InputError
from advisor.models import Hardware, ModelSpec, Prediction, QuantFormat
from advisor.perf.fit import (
    achieved_read_share,
    build_cal_rows,
    calibration_model,
    label_flash_attn,
    own_machine_factors,
    vllm_v0,
)
from advisor.perf.machine import (  # re-exported: callers import them from here
    CPU_DECODE_COMPUTE_SHARE,
    DEFAULT_HOST_BW_GBS,
    PREFILL_EFF_CAP,
    SERVER_ENGINE_USERS,
    SWAP_READ_GBS,
    SYSTEM_RESERVE_SHARE,
    TEAM_USERS,
    assumed_engine,
    default_backend,
    default_host_bandwidth,
    fp8_tensor_prefill,
    int8_tensor_prefill,
    paged_share,
    resolve_compute,
)
from advisor.perf.moe import (
    active_bpw,
    expert_dense_bits,
    kept_experts,
    kernel_format,
    moe_prefill_terms,
    weights_bpw,
    with_moe,
)
from advisor.perf.step import (
    DEFAULT_UBATCH,
    HOST_COPY_EFFICIENCY,
    LINK_GBS,
    StepModel,
    default_interconnect,
    host_link_gbs,
    interconnect_gbs,
    moe_split_bytes,
    offload_prefill_tps,
    tp_comm_s,
)
from advisor.understand.engine import (  # the one engine classifier
    engine_accel,
    engine_mismatch,
    ollama_gpu_fallback,
)
from knowledge.catalog import release_format
from knowledge.seed import split_hw_id
from knowledge.store import Store

__all__ = ["CPU_DECODE_COMPUTE_SHARE", "DEFAULT_HOST_BW_GBS", "SERVER_ENGINE_USERS", "SWAP_READ_GBS", "SYSTEM_RESERVE_SHARE",
           "TEAM_USERS", "assumed_engine", "build_cal_rows", "calibration_model", "default_backend",
           "default_host_bandwidth", "engine_accel", "predict", "predict_situation", "predict_step", "resolve_compute"]

def _layout(hw: Hardware, engine: str, layout: str | None) -> str:
    """How the weights are spread: ``single``, ``layer_split`` (llama.cpp default) or ``tensor_parallel``
    (vLLM/SGLang/TensorRT-LLM with ``-tp N``, their way of using several GPUs)."""
    if hw.n_devices <= 1:
        return "single"
    if layout in ("layer_split", "tensor_parallel", "pipeline_parallel"):
        return "layer_split" if layout == "pipeline_parallel" else layout
    return "tensor_parallel" if engine in ("vllm", "sglang", "tensorrt-llm") else "layer_split"


# ESTIMATE: what the operating system and other programs keep of a PC's RAM beside a graphics card (a desktop idles
# at 3–6 GB), at most SYSTEM_RESERVE_SHARE of it.
HOST_RAM_RESERVE_GB = 6.0
# The most of its step roofline (weights + every sequence's KV cache read once per step, or the tensor rate) a GPU's
# batched decode is predicted to reach: the highest share measured on the store's GPU batches is 0.85 (an L4 on
# vLLM 0.23 at 32 streams, results_more.csv; an RTX 4090 on vLLM 0.74 at 4, Strix Halo on llama-server 0.61 at 8);
# launches, scheduling and sampling per step keep every engine below the roofline. A CPU's measured batches reach it.
BATCH_ROOF_SHARE = 0.85


def predict(store: Store, **kw: Any) -> Prediction:
    """Predict prefill and decode rates, TTFT, answer time and memory fit (see :func:`predict_step`)."""
    return predict_step(store, **kw)[0]


def predict_step(
    store: Store,
    *,
    hardware: Hardware,
    model: ModelSpec,
    quant: QuantFormat,
    backend: str | None = None,
    prompt_tokens: int = 512,
    gen_tokens: int = 128,
    depth: int = 0,
    concurrency: int = 1,
    gpu_share: float | None = None,
    host_bandwidth_gbs: float | None = None,
    cal: CalibrationModel | None = None,
    kv_bytes_per_element: float = roofline.KV_BYTES_F16,
    layout: str | None = None,
    interconnect: str | None = None,
    pcie_lanes: int | None = None,
    own_results: bool = False,
    flash_attn: bool | None = None,
    ubatch: int | None = None,
    host_weights_gb: float | None = None,
    system_ram_gb: float | None = None,
) -> tuple[Prediction, StepModel]:
    """Predict one scenario and return the step model behind it (compare's simulator uses the same).

    Args:
        prompt_tokens, gen_tokens, depth: tokens [count]; depth = tokens already in the KV cache.
        concurrency: sequences decoding together; ``decode_tps`` is then the aggregate over all of them
            (llama-batched-bench convention), ``decode_tps_per_seq`` what each stream sees.
        gpu_share: share of the weights on the GPU (partial offload); default from the memory fit.
        host_bandwidth_gbs: system-RAM bandwidth for offloaded layers (default dual-channel DDR5-5600).
        kv_bytes_per_element: KV-cache element size (2 = f16; q8_0 34/32, q4_0 18/32).
        layout: ``layer_split`` or ``tensor_parallel`` for several GPUs (default by engine: llama.cpp
            splits layers; vLLM/SGLang/TensorRT-LLM run tensor parallel).
        interconnect, pcie_lanes: the link between GPUs for tensor parallel (default PCIe 4.0 x16).
        own_results: scale by the person's own results on this machine (:func:`own_machine_factors`).
        flash_attn: llama.cpp-family flash attention (default: as the backend label says, else on, the default of
            current builds): off, long prompts pay the unfused attention (the fitted β of rows run without it).
        ubatch: prompt tokens per micro-batch (llama.cpp ``-ub``; default 512, a server engine's 2048): with weights in
            system RAM each micro-batch copies them to the GPU once (:func:`advisor.perf.step.offload_prefill_tps`).
        host_weights_gb: weights held in system RAM, GB, when ``gpu_share`` is a share of each token's bytes rather
            than of all weights (a MoE's experts in system RAM: :func:`advisor.perf.step.expert_layers_share`);
            default ``(1 − gpu_share)`` of the weights (a layer split).
        system_ram_gb: the RAM beside a graphics card, when stated: weights held in system RAM beyond what it holds
            (less what the system keeps, :data:`SYSTEM_RESERVE_SHARE`) are paged in from the SSD every token
            (:data:`SWAP_READ_GBS`).

    Returns:
        (Prediction with ceilings, calibrated rates, 10–90 % ranges and the calibration used, StepModel).

    Raises:
        InputError: figures that give no usable speed.
    """
    cal = cal or calibration_model(store)
    model = with_moe(model)
    assumptions: list[str] = []
    b = max(1, concurrency)
    if backend is None:
        backend, why = assumed_engine(hardware, b, quant=quant.name)
        if why:
            assumptions.append(why)
    engine, accel, label = engine_accel(backend, hardware)
    if label.startswith("ExLlamaV2"):
        assumptions.append("ExLlamaV2: no measured runs in the store, so predicted with llama.cpp's fitted efficiency on "
                           "the same API (an ESTIMATE: both read the quantized weights once per token through fused "
                           "CUDA kernels; ExLlamaV2 is often a little faster at batch 1).")
    if mismatch := engine_mismatch(backend, hardware):
        assumptions.insert(0, mismatch)  # first: the stated engine is not what the figures are for
    fallback = ollama_gpu_fallback(backend, hardware)
    if fallback == "cpu":
        assumptions.append(f"Ollama runs this on the CPU cores, not the {hardware.name}: it uses CUDA, ROCm (the GPUs "
                           "on ROCm's list) or Metal, and its Vulkan backend is off unless OLLAMA_VULKAN=1. Say "
                           "'Ollama with Vulkan' if you turned it on.")
    elif fallback == "opt_in":
        assumptions.append(f"Figures for Ollama on the {hardware.name} itself: Ollama drives it only with "
                           "OLLAMA_VULKAN=1 (or Intel's IPEX-LLM build); without that it runs on the CPU cores.")
    bw = hardware.bandwidth_gbs
    tflops, tf_source = resolve_compute(hardware, accel, cal, quant=quant.name, engine=engine)
    probe_used = hardware.measured
    read_share = 1.0
    if probe_used:
        # Efficiencies are fitted against spec sheets; a probe measures what the memory really delivers.
        # Divide by the achieved/spec read share of the lab machines (knowledge: lab_machines) so the
        # measured bandwidth is not discounted twice.
        read_share = achieved_read_share(store)
        tf_source = "probe"
        assumptions.append(
            f"Using this machine's probe: {bw:.0f} GB/s read, {tflops or 0:.2f} TFLOP/s matmul; decode efficiency "
            f"rescaled by the lab machines' achieved/spec read share ({read_share:.0%}); prefill keeps the spec-fitted "
            "efficiency on the measured matmul rate (a conservative estimate).")
    if ("ESTIMATE" in tf_source or "FITTED" in tf_source) and tflops:
        assumptions.append(f"Compute {tflops:.1f} TFLOP/s: {tf_source}.")
    bpw = weights_bpw(model, quant)  # the file's bits (memory), and those of the bytes a token reads (decode)
    abpw = active_bpw(model, quant)
    e_bits, d_bits = expert_dense_bits(model, quant)
    if kept_experts(model, quant):
        assumptions.append(
            f"{model.id.split('/')[-1]} keeps its routed experts in {release_format(model.id)} in every GGUF build (only "
            f"attention, embeddings and output are re-quantized): {quant.name} is {bpw:.2f} bits per weight over the "
            "whole model, about the size of the released file.")
    elif e_bits != d_bits:
        assumptions.append(
            f"This {quant.name} build of a MoE quantizes its routed experts to {quant.name} and keeps attention, shared "
            f"experts and dense layers at 4–6 bits (ESTIMATE: {d_bits:g}; unsloth's dynamic low-bit GGUFs and "
            f"llama-quantize's own recipes): {bpw:.2f} bits per weight over the file, {abpw:.2f} over what a token reads.")
    ctx = depth + prompt_tokens + gen_tokens
    fitm = roofline.memory_fit(hardware, model, bpw, context_tokens=ctx, concurrency=b,
                               kv_bytes_per_element=kv_bytes_per_element)
    wbytes = roofline.weight_bytes_read_per_token(model, abpw)
    if model.max_context and ctx > model.max_context:
        assumptions.append(
            f"{ctx:,} tokens of context (cache, prompt and answer) is more than {model.id.split('/')[-1]} was trained "
            f"for ({model.max_context:,}): engines cut or refuse such a prompt, and the quality falls apart beyond it. "
            "Predicted as if it held them.")
    if model.generic:
        assumptions.append(f"{model.id}: {model.notes}.")
    if model.is_moe and not model.experts:
        assumptions.append(f"{model.id}: MoE routing not in the catalog; assumed 8 of 128 experts per token "
                           "(Qwen3-style) for the experts a batch touches.")
    dbytes, flops = features(model=model, bits_per_weight=abpw, prompt_tokens=prompt_tokens or 1,
                             gen_tokens=gen_tokens, depth=depth, kv_bytes_per_element=kv_bytes_per_element)
    n = hardware.n_devices
    lay = _layout(hardware, engine, layout)
    tp = lay == "tensor_parallel"
    base_id = split_hw_id(hardware.id)[0] if n > 1 else hardware.id  # the one home of the "...xN" id rule
    scen = {"kind": hardware.kind, "multi": n > 1 and not tp, "accel": accel, "engine": engine,
            "family": hardware.family, "hw_id": base_id, "quant": kernel_format(model, quant), "bandwidth_gbs": bw, "tflops": tflops,
            "decode_bytes": dbytes, "prefill_flops": flops, "n_devices": 1 if tp else n,
            "params_active_b": model.active_b, "prompt_tokens": prompt_tokens or 1,
            "prefill_attn_flops": attention_flops(model, prompt_tokens or 1, depth), "old_build": False,
            "moe": model.is_moe, "flash_attn": True, "n_layers": model.n_layers or 0}
    if flash_attn is None:
        flash_attn = label_flash_attn(backend)
    if flash_attn is False and engine_family(engine) in TIER_ENGINES:
        scen["flash_attn"] = False
        assumptions.append("Flash attention off, as stated: prompt processing pays the unfused attention, more so "
                           "the longer the context (-fa on is the setting that removes it).")
    moe_share, moe_tokens = moe_prefill_terms(model, prompt_tokens or 1, engine)
    scen["expert_flop_share"], scen["expert_tokens"] = moe_share, moe_tokens
    dec_cal = cal.efficiency("decode", scen)
    pre_cal = cal.efficiency("prefill", scen)
    eff_d = min(1.0, dec_cal.efficiency / read_share)
    # A compute figure estimated from achieved rates (bandwidth × achieved compute per GB/s) already
    # includes the efficiency.
    # The fitted share may exceed 1 of the FP16 figure: llama.cpp's quantized kernels multiply in INT8 on
    # tensor cores (twice the FP16 dense rate), so it is capped at PREFILL_EFF_CAP, not at 1.
    eff_p = 1.0 if tf_source.startswith(("FITTED", "ESTIMATE: no FLOPS")) else min(PREFILL_EFF_CAP, pre_cal.efficiency)
    t0 = row_t0(cal.t0_s, scen)
    if moe_t0_applies(scen) and (moe_ms := moe_t0(cal.t0_s, scen) * 1000):
        api_own = moe_t0_key(scen) in cal.t0_s
        assumptions.append(
            f"Mixture of experts: each token also pays ~{moe_ms:.1f} ms of routing and expert-gather "
            "kernels that do not shrink with the bytes read (fitted on machines measured with both MoE and dense "
            f"models{' on ' + str(scen.get('accel')) if api_own else ', pooled over APIs'}), so MoE decode reaches a "
            "smaller share of the memory roofline than a dense model's.")
    # Placement: partial offload runs the CPU share of the weights at system-RAM speed.
    share = gpu_share if gpu_share is not None else fitm.gpu_share
    b_run = b  # sequences decoding together in a step
    kv_seq_gb = fitm.kv_cache_gb / b
    if (gpu_share is None and b > 1 and share < 1.0 and hardware.kind in ("discrete_gpu", "datacenter_gpu")
            and fitm.weights_gb + fitm.overhead_gb + kv_seq_gb <= fitm.usable_gb):
        # The weights fit; the KV caches of all b sequences do not. A server (vLLM's paged KV, llama-server's
        # slots) runs as many sequences as their caches fit and queues the rest: no weights leave the GPU.
        b_run = max(1, int((fitm.usable_gb - fitm.weights_gb - fitm.overhead_gb) // kv_seq_gb))
        share = 1.0
        assumptions.append(
            f"The KV caches of {b} sequences at this context ({fitm.kv_cache_gb:.1f} GB) do not fit next to the "
            f"weights: about {b_run} run at once and the other {b - b_run} wait their turn; the rates are for "
            f"{b_run} together.")
    host_bw = host_bandwidth_gbs or hardware.host_bandwidth_gbs
    host_said = "from the RAM or host CPU you named"
    if not host_bw:
        host_bw, ram = default_host_bandwidth(hardware)
        host_said = f"assumed {ram} for a GPU of its year unless stated"
    host_eff = 1.0
    paged = gpu_share is None and paged_share(hardware, fitm)
    if paged:
        # Unified memory (Mac, APU, CPU) holding less than the weights: the rest is paged in from disk every token.
        share, host_bw = 1.0 - paged, SWAP_READ_GBS
        assumptions.append(
            f"The model needs {fitm.required_gb:.1f} GB but the machine has {fitm.total_gb:g} GB in all: about "
            f"{paged:.0%} of the weights would be paged in from the SSD for every token (ESTIMATE: ~{SWAP_READ_GBS:g} "
            "GB/s swap reads), so it barely runs.")
    elif share < 1.0 and engine_family(engine) == "server" and hardware.kind in ("discrete_gpu", "datacenter_gpu"):
        from advisor.probe.server_engines import ENGINE_LABELS  # how people name the engine (one home)

        # vLLM's --cpu-offload-gb keeps those weights in pinned system RAM and copies them to the GPU for every
        # forward pass (vLLM engine arguments: "weights ... loaded from CPU memory to GPU memory on the fly in each
        # model forward pass"), so every decode step reads them over PCIe, not from the RAM by the CPU.
        pcie, link_words = host_link_gbs(hardware.release_year)
        host_bw, host_eff = pcie * HOST_COPY_EFFICIENCY, 1.0
        assumptions.append(
            f"{ENGINE_LABELS.get(engine, engine)} does not put weights in system RAM by default: it stops at load with an "
            f"out-of-memory error. These figures assume --cpu-offload-gb, which copies the {1 - share:.0%} of the weights "
            f"held in system RAM to the GPU over {link_words} for every step (~{host_bw:.0f} GB/s), slower than "
            "llama.cpp's CPU reading them from RAM; more GPUs (tensor parallel) or a smaller format is the usual way.")
    elif share < 1.0:
        host_eff = cal.efficiency("decode", {**scen, "kind": "cpu", "accel": "cpu", "multi": False}).efficiency
        assumptions.append(
            f"Only {share:.0%} of the weights fit in GPU memory; the rest run from system RAM at ~{host_bw:g} GB/s "
            f"({host_said})."
        )
        held = host_weights_gb if host_weights_gb is not None else fitm.weights_gb * (1.0 - share)
        room = (system_ram_gb or 0.0) - min(HOST_RAM_RESERVE_GB, SYSTEM_RESERVE_SHARE * (system_ram_gb or 0.0))
        if system_ram_gb and held > room and hardware.kind in ("discrete_gpu", "datacenter_gpu"):
            # more than the RAM holds: the rest is paged in from the SSD for every token (time per byte adds up)
            in_ram = room / held
            host_bw = 1.0 / (in_ram / (host_bw * host_eff) + (1.0 - in_ram) / SWAP_READ_GBS)
            host_eff = 1.0
            assumptions.append(
                f"{held:.0f} GB of weights would sit in system RAM, but the computer's {system_ram_gb:g} GB hold about "
                f"{room:.0f} GB of them: the rest is paged in from the SSD for every token (ESTIMATE: ~{SWAP_READ_GBS:g} "
                "GB/s swap reads), so it barely runs.")
    dense, routed, ke = moe_split_bytes(model, abpw, expert_bits=e_bits)
    x_bw = bw * roofline.GB * eff_d * (n if tp else 1)
    c_fl = (tflops * 1e12 * eff_p * (n if tp else 1)) if tflops else 0.0
    comm_step = comm_seq = 0.0
    if interconnect is None and n > 1 and (link := default_interconnect(hardware.id, hardware.name, hardware.family)):
        interconnect = link
        assumptions.append(f"Interconnect not stated: {hardware.name} GPUs sit on an SXM board joined by NVLink "
                           f"({LINK_GBS[link]:g} GB/s per direction); say PCIe if they are PCIe cards.")
    link_gbs, link_desc = interconnect_gbs(interconnect, pcie_lanes)
    nvlink = "nvlink" in (interconnect or "").lower()
    if tp:
        comm_step = tp_comm_s(model, 0, n, link_gbs, nvlink=nvlink)
        comm_seq = tp_comm_s(model, 1, n, link_gbs, nvlink=nvlink) - comm_step
        assumptions.append(
            f"{n} GPUs in tensor parallel ({engine}): every layer split over the GPUs, two all-reduces of the "
            f"activations per layer over {link_desc}; each GPU reads 1/{n} of the weights per step.")
    elif n > 1 and hardware.kind != "cpu":  # a CPU's devices are its sockets (said with the bandwidth)
        assumptions.append(
            f"{n} GPUs with the layers split between them (llama.cpp default): capacity adds up, single-stream "
            "speed does not. Tensor parallel (vLLM -tp) splits every layer instead; it pays two all-reduces per "
            "layer, so over consumer PCIe it can lose to the layer split, most of all in prefill.")
    slope, factor_note = cal.batched_slope(scen)
    step = StepModel(
        dense_bytes=dense, routed_bytes=routed, expert_fraction=ke, kv_bytes_per_seq=max(0.0, dbytes - wbytes),
        bw_bytes_per_s=x_bw, t0_s=t0, flops_per_seq=2.0 * model.active_b * 1e9, flops_per_s=c_fl,
        host_share=1.0 - share, host_bw_bytes_per_s=host_bw * roofline.GB * host_eff,
        comm_s_per_step=comm_step, comm_s_per_seq=comm_seq, batched_slope=slope,
        batched_max_batch=cal.batched_max_batch(scen), b1_compute_share=CPU_DECODE_COMPUTE_SHARE if accel == "cpu" and cpu_qclass(quant.name) == "iq" else 0.0,
        host_s_per_seq=(host := cal.t0_s.get(V0_HOST_KEY, 0.0) if vllm_v0(backend) else 0.0))
    if host:
        assumptions.append(
            f"vLLM before 0.8 (its V0 engine) does ~{host * 1000:.2g} ms of host work per sequence per step while the GPU "
            "waits (fitted on measured V0 batches); vLLM 0.8 and later (V1) overlap it, so upgrading helps most with "
            "many users of a small model.")
    if step.b1_compute_s() > step.bandwidth_s(1):
        assumptions.append(
            f"On CPU cores {quant.name} decodes each weight through a codebook lookup: one token's arithmetic "
            f"({step.b1_compute_s() * 1000:.0f} ms) takes longer than reading its weights "
            f"({step.bandwidth_s(1) * 1000:.0f} ms), so decode is compute-bound here, not bandwidth-bound; a block "
            "format (Q4_0) reads more bytes but decodes faster.")
    own = own_machine_factors(store, base_id, cal) if own_results else {}
    f_dec = own.get("decode", (1.0, 0))[0]
    f_pre = own.get("prefill", (1.0, 0))[0]
    if own:
        assumptions.append("Scaled by your own results on this machine: " + ", ".join(
            f"{ph} × {f:.2f} ({k} run{'s' if k > 1 else ''})" for ph, (f, k) in own.items()) + ".")
    per_seq = step.per_seq_tps(b_run) * f_dec
    decode_tps = step.aggregate_tps(b_run) * f_dec
    # Prefill: layer split pipelines micro-batches (llama.cpp); tensor parallel adds compute and all-reduces.
    pipe = pipeline_speedup(n, prompt_tokens or 1, engine=engine) if lay == "layer_split" else 1.0
    prefill_ceiling = roofline.prefill_ceiling_tps(tflops, flops) * (n if tp else pipe) if tflops else None
    fp8 = fp8_tensor_prefill(hardware, engine, quant.name)
    if prefill_ceiling and (eff_p > 1.0 or fp8 or int8_tensor_prefill(hardware, accel, engine, quant.name)):
        # the fitted rows beat the FP16 figure, or llama.cpp's CUDA kernels multiply quantized weights in INT8 on
        # tensor cores (MMQ), or a serving engine FP8 weights on FP8 tensor cores: that rate is the bound
        prefill_ceiling *= PREFILL_EFF_CAP
        if fp8:
            assumptions.append(f"Prefill ceiling from the FP8 tensor-core rate ({PREFILL_EFF_CAP:g}× the {tflops:g} "
                               "TFLOPS FP16 figure): the engine multiplies FP8 weights and activations on the tensor "
                               "cores.")
        elif int8_tensor_prefill(hardware, accel, engine, quant.name):
            assumptions.append(f"Prefill ceiling from the INT8 tensor-core rate ({PREFILL_EFF_CAP:g}× the FP16 figure): "
                               "llama.cpp's quantized kernels multiply in INT8 on the tensor cores.")
        else:  # no INT8 tensor cores (Pascal, a Mac, a Radeon): the fitted rows beat the figure by other means
            assumptions.append(f"Prefill ceiling at {PREFILL_EFF_CAP:g}× the {tflops:g} TFLOPS figure: measured runs of "
                               "this setup reach more than it (integer dot-product kernels on quantized weights).")
    prefill1 = cal.prefill_tps({**scen, "tflops": tflops}, eff=eff_p) if tflops else None
    m0 = cal.expert_m0(scen)
    if prefill1 and m0 and moe_tokens:
        assumptions.append(
            f"MoE prefill: each routed expert multiplies about {moe_tokens:.0f} tokens per step, so its grouped matmuls "
            f"run at about {moe_tokens / (moe_tokens + m0):.0%} of a dense matmul's efficiency (m / (m + m0), m0 = "
            f"{m0:g} tokens fitted on measured MoE prefill rows); a larger micro-batch (llama.cpp -ub 2048) raises it.")
    b_attn = beta_for(cal.beta, scen)
    attn, dense_flops = attention_flops(model, prompt_tokens or 1, depth), flops
    if prefill1 and b_attn > 1 and attn > 0.1 * dense_flops:
        assumptions.append(
            f"Attention is {attn / dense_flops:.0%} of the prefill FLOPs at this context; llama.cpp runs it "
            f"at about 1/{b_attn:g} of its matmul efficiency (fitted with flash attention on, the default since "
            "September 2025; -fa 0 is slower at long context).")
    if prefill1 and tp:
        p_tok = max(1, prompt_tokens or 1)
        prefill1 = p_tok / (p_tok / (prefill1 * n) + tp_comm_s(model, p_tok, n, link_gbs, nvlink=nvlink))
    if prefill1 and share < 1.0 and not paged and hardware.kind in ("discrete_gpu", "datacenter_gpu"):
        # the weights in system RAM cross PCIe to the GPU once per micro-batch of the prompt
        host_link, link_words = host_link_gbs(hardware.release_year)
        ub = ubatch or DEFAULT_UBATCH["server" if engine_family(engine) == "server" else "llama"]
        host_gb = host_weights_gb if host_weights_gb is not None else fitm.weights_gb * (1.0 - share)
        prefill1 = offload_prefill_tps(prefill1, host_gb * 1e9, host_link * 1e9 * HOST_COPY_EFFICIENCY, ub)
        assumptions.append(
            f"Prompt reading with {host_gb:.1f} GB of weights in system RAM: each micro-batch of {ub:,} prompt tokens "
            f"copies them to the GPU over {link_words} at about {HOST_COPY_EFFICIENCY:.0%} of its rate, so the copy, not "
            "the GPU's compute, sets the prefill speed; a larger micro-batch (-ub 2048 or 4096) spreads it over more "
            "tokens.")
    elif prefill1 and paged:
        # the weights beyond memory are read from the SSD again for every micro-batch of the prompt (a model larger
        # than memory evicts its own pages as each pass streams through it): the same law as a copy over PCIe
        ub = ubatch or DEFAULT_UBATCH["server" if engine_family(engine) == "server" else "llama"]
        ssd_gb = fitm.weights_gb * paged
        prefill1 = offload_prefill_tps(prefill1, ssd_gb * 1e9, SWAP_READ_GBS * 1e9, ub)
        assumptions.append(
            f"Prompt reading with {ssd_gb:.0f} GB of weights paged in from the SSD: each micro-batch of {ub:,} prompt "
            f"tokens reads them again (ESTIMATE: ~{SWAP_READ_GBS:g} GB/s), so the SSD, not the compute, sets the wait "
            "for the first word.")
    elif prefill1 and share < 1.0:
        prefill1 *= 0.5 + 0.5 * share  # unified memory paging part of the weights in (rough)
    if prefill1:
        prefill1 *= f_pre
    if not fitm.fits and hardware.kind not in ("discrete_gpu", "datacenter_gpu"):
        assumptions.append(
            f"The model needs {fitm.required_gb:.1f} GB but only {fitm.usable_gb:.1f} GB is usable: "
            "the numbers assume it runs anyway, which it will not do well (swapping)."
        )
    if not (math.isfinite(per_seq) and per_seq > 0 and math.isfinite(decode_tps)):
        raise InputError("These numbers give no usable speed (bandwidth, compute or size out of any real range).")
    ttft = (prompt_tokens / prefill1) if prefill1 and prompt_tokens else (0.0 if not prompt_tokens else None)
    if ttft and per_seq > 0:
        ttft = max(ttft, 1.0 / per_seq)  # a pass over the prompt reads every weight once: never faster than a decode step
    dec_s = gen_tokens / per_seq if gen_tokens else 0.0
    bw_spec = bw * roofline.GB * (n if tp else 1)
    decode_ceiling = step.ceiling_tps(b_run, bw_spec, (tflops * 1e12 * (n if tp else 1)) if tflops and b_run > 1 else None)
    if b > 1 and model.is_moe:
        assumptions.append(
            f"MoE batch: {b} tokens touch about {1 - (1 - ke) ** b:.0%} of the routed experts per layer "
            f"(1 − (1 − k/E)^b with k/E = {ke:.3g}), not {ke:.1%}: {step.weight_bytes(b) / 1e9:.1f} GB of weights "
            f"per step instead of {step.weight_bytes(1) / 1e9:.1f} GB.")
    if b_run <= 1 and decode_tps > decode_ceiling > 0:  # figures out of any real range: never above the roofline
        per_seq *= decode_ceiling / decode_tps
        decode_tps = decode_ceiling
    top = decode_ceiling * (BATCH_ROOF_SHARE if accel_class(accel) == "gpu" else 1.0)
    if b_run > 1 and decode_tps > top > 0:
        # The batched fit extrapolates past what a batch reaches on this machine (a CPU's cores run out of arithmetic
        # first; a GPU's step keeps launch, scheduling and sampling time no batch hides).
        per_seq *= top / decode_tps
        decode_tps = top
        share_words = f"about {BATCH_ROOF_SHARE:.0%} of " if top < decode_ceiling else ""
        assumptions.append(f"{b_run} users at once reach {share_words}this machine's roofline ({decode_tps:.0f} tok/s in "
                           f"all{' of ' + format(decode_ceiling, '.0f') if share_words else ''}): more users share it, each "
                           "one slower.")
    # Ranges come from the fit's residuals; nothing is predicted above the roofline.
    hi_d = min(decode_tps * dec_cal.p90_ratio, decode_ceiling)
    rng_d = (min(decode_tps * dec_cal.p10_ratio, hi_d), hi_d)
    rng_p = ((prefill1 * pre_cal.p10_ratio,
              min(prefill1 * pre_cal.p90_ratio, prefill_ceiling or float("inf")))
             if prefill1 else None)
    calib = [dec_cal, pre_cal]
    if b > 1:
        calib = [dec_cal.model_copy(update={"note": dec_cal.note + "; " + factor_note}), pre_cal]
    pred = Prediction(
        prefill_tps=prefill1, decode_tps=decode_tps, prefill_ceiling_tps=prefill_ceiling,
        decode_ceiling_tps=decode_ceiling, prefill_tps_range=rng_p, decode_tps_range=rng_d, ttft_s=ttft,
        decode_s=dec_s, total_s=(ttft or 0.0) + dec_s, decode_tps_per_seq=per_seq, concurrency=b,
        running=b_run if b_run < b else None,
        prompt_tokens=prompt_tokens, gen_tokens=gen_tokens, depth=depth, bits_per_weight=bpw, quant=quant.name,
        weight_bytes_per_token_gb=wbytes / roofline.GB, kv_bytes_per_token_gb=roofline.kv_bytes_per_token(model, kv_bytes_per_element) / roofline.GB,
        flops_per_token_g=flops / 1e9, ridge_point_flop_per_byte=roofline.ridge_point(tflops, bw) if tflops else None,
        bandwidth_gbs=bw, tflops=tflops,
        tflops_is_estimate="ESTIMATE" in tf_source or "estimate" in tf_source or "FITTED" in tf_source, memory=fitm,
        hardware={"id": hardware.id, "name": hardware.name, "kind": hardware.kind,
                  "memory_gb": roofline.stated_total_gb(hardware, fitm.total_gb),
                  "n_devices": n, "source_url": hardware.source_url, "layout": lay},
        model={"id": model.id, "params_b": model.params_b, "active_params_b": model.active_params_b,
               "generic": model.generic, "experts": model.experts, "experts_per_token": model.experts_per_token},
        backend=label, calibration=calib, assumptions=[a for a in assumptions if a],
        probe_used=probe_used,
    )
    return pred, step


def predict_situation(store: Store, situation: Any, **changes: Any) -> Prediction:
    """Predict from a :class:`~advisor.understand.situation.Situation` (machine count, interconnect,
    PCIe lanes, layout, tensor-parallel degree, workload, engine), with keyword ``changes`` on top
    (any :func:`predict_step` argument, e.g. ``concurrency=8`` or ``layout="tensor_parallel"``).

    Raises:
        InputError: the situation lacks a resolved machine, model or format.
    """
    if not situation.ready:
        raise InputError("Need a resolved machine, model and weight format to predict.")
    m = situation.machine
    hw = situation.hardware
    count = max(m.count, m.tensor_parallel or 1)
    if count > 1 and hw.n_devices == 1:
        hw = hw.model_copy(update={"id": f"{hw.id}x{count}", "name": f"{count}× {hw.name}", "n_devices": count})
    if m.system_ram_gb and not hw.host_bandwidth_gbs:
        pass  # RAM size does not say its bandwidth: the default host bandwidth stays
    w = situation.workload
    kw: dict[str, Any] = dict(
        hardware=hw, model=situation.model, quant=situation.quant,
        backend=situation.engine_text or situation.engine, prompt_tokens=w.prompt_tokens,
        gen_tokens=w.gen_tokens, depth=w.depth, concurrency=w.users,
        layout=("tensor_parallel" if (m.tensor_parallel or 0) > 1 else m.layout),
        interconnect=m.interconnect, pcie_lanes=m.pcie_lanes, flash_attn=situation.symptoms.flash_attention,
    )
    kw.update(changes)
    return predict(store, **kw)
