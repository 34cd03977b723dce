"""What the machine brings to a prediction besides its spec sheet: the system RAM behind a GPU, the compute of a
machine with no FLOPS figure, the engine people run on it, and the memory a unified-memory machine keeps back.

Part of :mod:`advisor.perf` (the step model that uses these is :mod:`advisor.perf.prediction`).
"""

from __future__ import annotations

import re

from advisor.calibration import CalibrationModel, accel_class, cpu_compute_factor
from advisor.models import Hardware, MemoryFit
from advisor.perf.fit import cpu_core_count
from advisor.understand.engine import default_accel
from knowledge.cpu_uarch import REFERENCE_CORE_GFLOPS, core_peak
from knowledge.seed import split_hw_id

__all__ = ["CPU_DECODE_COMPUTE_SHARE", "fp8_tensor_prefill", "DEFAULT_HOST_BW_GBS", "PREFILL_EFF_CAP", "SERVER_ENGINE_USERS", "SWAP_READ_GBS",
           "SYSTEM_RESERVE_SHARE", "TEAM_USERS", "assumed_engine", "default_backend", "default_host_bandwidth",
           "int8_tensor_prefill", "paged_share", "resolve_compute"]

DEFAULT_HOST_BW_GBS = 89.6  # dual-channel DDR5-5600, catalog id cpu-ddr5-5600-2ch
# System RAM a GPU's host most likely has, by the GPU's release year (ESTIMATE: the mainstream desktop/laptop memory
# of its era; peak = MT/s × 8 B × 2 channels, JEDEC): DDR3-1600 before 2016, DDR4-3200 (cpu-ddr4-3200-2ch) until
# consumer DDR5 (late 2021), then DDR5-5600. A 2014 GTX 860M laptop does not spill to DDR5.
_HOST_RAM_BY_ERA = ((2016, 25.6, "dual-channel DDR3-1600"), (2022, 51.2, "dual-channel DDR4-3200"))


# NVIDIA generations whose tensor cores multiply INT8 (Turing and later; NVIDIA architecture whitepapers): Pascal
# has none, Volta's are FP16 only.
INT8_TENSOR_FAMILIES = ("Turing", "Ampere", "Ada", "Hopper", "Blackwell")


def int8_tensor_prefill(hw: Hardware, accel: str, engine: str, quant: str) -> bool:
    """Whether prefill runs quantized weights through INT8 tensor-core kernels (llama.cpp's CUDA MMQ on Turing and
    later), so its compute bound is the INT8 rate (:data:`PREFILL_EFF_CAP` × the FP16 figure), not the FP16 one."""
    from advisor.calibration._model import TIER_ENGINES, engine_family, qclass

    return (accel == "cuda" and hw.vendor == "NVIDIA" and engine_family(engine) in TIER_ENGINES
            and qclass(quant) != "float" and any(f in (hw.family or "") for f in INT8_TENSOR_FAMILIES))


def fp8_tensor_prefill(hw: Hardware, engine: str, quant: str) -> bool:
    """Whether a serving engine (vLLM, SGLang, TensorRT-LLM) multiplies FP8 weights and activations on FP8 tensor cores
    (:data:`advisor.understand.formats.FP8_FAMILIES`: Ada, Hopper, Blackwell, CDNA3), so the prompt's compute bound is
    the FP8 rate, :data:`PREFILL_EFF_CAP` × the FP16 figure (H100 SXM 1,979 vs 989 dense TFLOPS, NVIDIA H100 datasheet;
    MI300X 2,615 vs 1,307, AMD CDNA3 whitepaper)."""
    from advisor.calibration._model import engine_family
    from advisor.understand.formats import FP8_FAMILIES

    return (engine_family(engine) == "server" and "fp8" in (quant or "").lower()
            and any(f in (hw.family or "") for f in FP8_FAMILIES))


def default_host_bandwidth(hardware: Hardware) -> tuple[float, str]:
    """(GB/s, what it assumes) of the system RAM behind a GPU whose host memory is not stated (:data:`_HOST_RAM_BY_ERA`)."""
    year = hardware.release_year or 0
    for before, gbs, label in _HOST_RAM_BY_ERA:
        if year and year < before:
            return gbs, label
    return DEFAULT_HOST_BW_GBS, "dual-channel DDR5"
# ESTIMATES (no single source): page-in rate when weights exceed physical memory and are read back from an NVMe
# or Apple SSD every token (sequential reads reach 3–7 GB/s, the 4–16 KB page faults of a memory-mapped model
# much less), and the share of physical memory the system and other apps keep.
SWAP_READ_GBS = 2.0
SYSTEM_RESERVE_SHARE = 0.15


PREFILL_EFF_CAP = 2.0  # INT8 : FP16 dense tensor-core rate on NVIDIA Turing and later (NVIDIA architecture whitepapers)


# A CPU's matrix-vector decode step in a codebook format (IQ1–IQ3, IQ4_XS: a table lookup per weight) reaches about
# this share of the compute its prefill reaches for the same format, so those formats are compute-bound on CPUs
# (an M2 Max's CPU decodes Llama-3.1-8B IQ3_S at 5.3 tok/s, Q4_0 at 23.9). Fitted on the CPU quant sweeps of
# ../shared/data/results_more.csv (llama.cpp CPU on an M2 Max and a Ryzen 9 7950X): held out by hardware through
# predict, 0.33–0.4 fit best. Block formats (Q4_0, K-quants, Q8_0, F16) are left bandwidth-bound: the per-core
# compute estimate of an unmeasured CPU is too rough (3–5× between CPUs) to cap them with.
CPU_DECODE_COMPUTE_SHARE = 0.4


def paged_share(hw: Hardware, fitm: MemoryFit) -> float:
    """Share of the weights a unified-memory machine (Mac, APU, CPU) cannot hold in physical memory at all
    (beyond what the system keeps: :data:`SYSTEM_RESERVE_SHARE`), 0 when they fit in RAM; discrete GPUs offload
    to system RAM instead (``gpu_share``)."""
    if fitm.fits or hw.kind in ("discrete_gpu", "datacenter_gpu") or not fitm.total_gb or fitm.weights_gb <= 0:
        return 0.0
    room = fitm.total_gb * (1.0 - SYSTEM_RESERVE_SHARE) - fitm.kv_cache_gb - fitm.overhead_gb
    return max(0.0, min(1.0, 1.0 - room / fitm.weights_gb))
SERVER_ENGINE_USERS = 4  # from this many users on a datacenter GPU with no engine stated, assume vLLM
TEAM_USERS = 16  # from this many users on several consumer GPUs too: a team's server, not a desktop app


# Weight formats only GPU serving engines load (vLLM, SGLang, TensorRT-LLM; llama.cpp reads GGUF, MLX its own)
_SERVER_FORMAT = re.compile(r"\b(?:awq|gptq|fp8|w4a16|w8a8|w8a16|nvfp4|marlin|compressed[-_ ]tensors)\b", re.I)
SERVICE_RPM = 10.0  # requests a minute, all users together, from which a stated request rate is a service's


def assumed_engine(hw: Hardware, users: int, *, quant: str | None = None,
                   requests_per_minute: float | None = None) -> tuple[str | None, str]:
    """The engine assumed when none is stated, and the words that say so: vLLM for
    :data:`SERVER_ENGINE_USERS` or more users on a datacenter GPU (what teams serve with there), or for
    :data:`TEAM_USERS` or more on several consumer GPUs (a team serving many people from 8× RTX 5090 runs vLLM's tensor
    parallel and continuous batching, not a desktop app's llama.cpp); for a GPU-serving weight format on a GPU
    (AWQ, GPTQ, FP8: llama.cpp does not load them); for a service's request rate (``requests_per_minute``, all users
    together, :data:`SERVICE_RPM` or more) on a datacenter GPU; else None (the hardware's usual llama.cpp build,
    :func:`default_backend`)."""
    gpu = hw.kind in ("discrete_gpu", "datacenter_gpu") and any(v in (hw.vendor or "") for v in ("NVIDIA", "AMD"))
    if quant and _SERVER_FORMAT.search(quant) and gpu:
        return "vllm", (f"Engine not stated: {quant} weights are served by vLLM (or SGLang); llama.cpp does not load "
                        "them. Name the engine to change it.")
    if requests_per_minute and requests_per_minute >= SERVICE_RPM and hw.kind == "datacenter_gpu":
        return "vllm", (f"Engine not stated: a service of {requests_per_minute / 60:.2g} requests a second on a "
                        "datacenter GPU is assumed to be served by vLLM (continuous batching, paged KV cache); name the "
                        "engine to change it.")
    if users >= SERVER_ENGINE_USERS and hw.kind == "datacenter_gpu":
        return "vllm", (f"Engine not stated: {users} users on a datacenter GPU are assumed to be served by vLLM "
                        "(continuous batching, paged KV cache); name the engine to change it.")
    if (users >= TEAM_USERS and hw.kind == "discrete_gpu" and hw.n_devices > 1
            and "nvidia" in (hw.vendor or "").lower()):
        return "vllm", (f"Engine not stated: {users} users are assumed to be served by vLLM (continuous batching, "
                        "paged KV cache), as teams do; name the engine to change it.")
    return None, ""


def default_backend(hw: Hardware) -> str:
    """The engine most people run on this hardware (llama.cpp via Ollama/LM Studio)."""
    return f"llama.cpp-{default_accel(hw)}"


def resolve_compute(hw: Hardware, accel: str, cal: CalibrationModel, *, quant: str | None = None,
                    engine: str | None = None) -> tuple[float | None, str]:
    """FP16 TFLOP/s to use for the prefill ceiling, and where it came from.

    The spec (or the catalog's labelled estimate) when the hardware has one; otherwise an ESTIMATE
    from the memory bandwidth × the median achieved-compute-per-bandwidth of measured machines of
    the same kind (the prefill efficiency is then ~1 by construction).
    """
    if hw.fp16_tflops and not (accel == "cpu" and hw.kind != "cpu"):  # a CPU backend does not get the GPU's FLOPS
        return hw.fp16_tflops, "spec estimate" if hw.fp16_tflops_is_estimate else "spec"
    per_core = cal.compute_per_bw.get("cpu-per-core") if accel == "cpu" else None
    cores = cpu_core_count(hw)
    if per_core and cores:
        f = 1.0
        if quant or engine:  # prefill: the machine's own (or the machine-balanced base) × format × engine factors
            per_core = cal.compute_per_bw.get(f"cpu-per-core:hw:{split_hw_id(hw.id)[0]}",
                                              cal.compute_per_bw.get("cpu-per-core:base", per_core))
            f = cpu_compute_factor(cal, quant, engine)
        how = f" × {f:.2f} for {quant or 'the format'} with {engine or 'the engine'}" if abs(f - 1) > 0.01 else ""
        span = (f" (the middle of the family's {str(hw.cpu_cores).replace(';', ', ')} cores; say how many it has)"
                if any(c in str(hw.cpu_cores) for c in "-;") else "")
        peak = core_peak(hw.family, hw.id)
        speed = peak.gflops / REFERENCE_CORE_GFLOPS if peak else 1.0
        core = (f"{peak.uarch} cores: {peak.flops_per_cycle:g} FP32 FLOP/cycle × ~{peak.ghz:g} GHz = "
                f"{speed:.2f}× the reference core" if peak else "core type not known: counted as reference cores")
        return per_core * cores * speed * f, (
            f"FITTED: no FLOPS spec; {cores} cores{span} ({core}) × median achieved prefill compute per reference "
            f"core of measured CPUs ({per_core * 1000:.0f} GFLOP/s{how}; achieved, not peak)")
    fam = cal.compute_per_bw.get(f"family:{hw.family}:{accel_class(accel)}") if hw.family else None
    if fam:
        return fam * hw.bandwidth_gbs, (
            f"FITTED: no FLOPS spec; bandwidth × median achieved prefill compute per GB/s of measured {hw.family} "
            "machines (achieved, not peak)")
    key = f"{hw.kind}:{accel_class(accel)}"
    ratio = cal.compute_per_bw.get(key)
    if ratio:
        return ratio * hw.bandwidth_gbs, (
            f"ESTIMATE: no FLOPS spec; bandwidth × median achieved compute per GB/s of measured {hw.kind} machines"
        )
    return None, "no compute figure"
