"""Real public reports (paraphrased) and the diagnosis an expert reached.

Each case states the situation in our own words, the scenario as the reporter gave it, and what the
advisor must conclude: the bottleneck, the status when it is clear, and fixes of which at least one
must be among the top three. ``/work/shared/cases`` holds the originals; these are rewritten.
"""

from __future__ import annotations

import pytest

from advisor.diagnose import diagnose
from advisor.models import Scenario

CASES = [
    # A CUDA build run without -ngl: every layer on the host CPU of an A100 server.
    pytest.param(
        dict(hardware="NVIDIA A100-SXM4-80GB server", memory_gb=80, backend="llama.cpp cuBLAS build, 2023",
             model="LLaMA-7B", params_b=7, quant="Q4_1", gen_tokens=128, measured_decode_tps=11.3),
        "misconfiguration", "below_expected", {"gpu_offload"}, id="cuda-build-without-offload",
    ),
    # One layer of a 7B Q8 model on a 2 GB card: decode runs at system-RAM speed.
    pytest.param(
        dict(hardware="NVIDIA GPU with 2GB VRAM plus host CPU", memory_gb=2, backend="llama.cpp CUDA, n-gpu-layers = 1",
             model="dolphin-2.2-mistral-7B", params_b=7.2, quant="Q8_0 GGUF", measured_prefill_tps=28.6,
             measured_decode_tps=2.0),
        "memory_fit", None, {"fit_in_memory", "quantization", "gpu_offload", "smaller_model"}, id="tiny-vram-one-layer",
    ),
    # Gemma 3 with a q8_0 KV cache under Ollama: attention fell back to the CPU.
    pytest.param(
        dict(hardware="RTX 4090 24GB desktop", memory_gb=24,
             backend="Ollama with OLLAMA_FLASH_ATTENTION=1 and OLLAMA_KV_CACHE_TYPE=q8_0", model="gemma3:4b",
             params_b=4.3, prompt_tokens=36, gen_tokens=70, measured_prefill_tps=92.07, measured_decode_tps=16.29),
        "misconfiguration", "below_expected", {"fix_configuration", "kv_cache_quantization"}, id="kv-quant-cpu-fallback",
    ),
    # Prompt processing on a Mac vs two 3090s: compute-bound, mostly hardware.
    pytest.param(
        dict(hardware="MacBook Pro M3 Max 64GB", memory_gb=64, backend="mlx-lm", model="Qwen3-30B-A3B",
             params_b=30.5, quant="4-bit", prompt_tokens=681, gen_tokens=939, measured_prefill_tps=1160.6,
             measured_decode_tps=68.0,
             question="Dual 3090s chew through prompts far faster than my M3 Max; can MLX close the prompt-processing gap?"),
        "prefill", None, {"prefix_caching", "more_compute"}, id="mac-vs-3090-prompt-processing",
    ),
    # A 70B in Docker on an M2 Max: no Metal inside the container.
    pytest.param(
        dict(hardware="MacBook Pro M2 Max 96GB", memory_gb=96, backend="llama-cpp-python inside Docker",
             model="Llama 2 70B chat", params_b=70, quant="4-bit", prompt_tokens=11, gen_tokens=30,
             measured_prefill_tps=1.05, measured_decode_tps=0.6),
        "misconfiguration", "below_expected", {"gpu_offload", "fix_configuration"}, id="docker-on-mac-no-metal",
    ),
    # Dual-socket EPYC: pages on one NUMA node.
    pytest.param(
        dict(hardware="Dual-socket AMD EPYC Turin, DDR5-6400", backend="llama.cpp CPU backend, --numa distribute",
             model="Llama-3.1-70B-Instruct", params_b=70.6, quant="f16", measured_decode_tps=2.4),
        "decode", "below_expected", {"quantization", "fix_configuration"}, id="numa-dual-socket",
    ),
    # A client resending a growing prompt to llama.cpp server.
    pytest.param(
        dict(hardware="Mac running llama.cpp server", backend="llama.cpp server chat endpoint",
             model="zephyr-7b-beta", params_b=7.2, quant="Q4_K_M", prompt_tokens=809, measured_prefill_tps=101,
             question="Can the server reuse the cached prompt so a client resending a growing prompt is not re-processed?"),
        "prefill", None, {"prefix_caching"}, id="growing-prompt-resent",
    ),
    # An agent on a MacBook slows as its 9.7k-token prompt grows.
    pytest.param(
        dict(hardware="MacBook with Apple Silicon", backend="Ollama /api/generate", model="gemma4:e4b",
             quant="Ollama default", prompt_tokens=9700, gen_tokens=64, measured_prefill_tps=176),
        "prefill", None, {"prefix_caching", "shorter_prompt"}, id="agent-slower-as-context-grows",
    ),
    # A 14B on a 12 GB card after num_ctx grew: the cache spilled to system RAM.
    pytest.param(
        dict(hardware="NVIDIA RTX 3060 12GB", memory_gb=12, backend="Ollama", model="DeepSeek-R1 14B",
             params_b=14.8, measured_decode_tps=4.8),
        "memory_fit", None, {"fit_in_memory", "kv_cache_quantization", "quantization"}, id="num-ctx-spill-12gb",
    ),
    # An unquantized 8B on a 16 GB Air: swapping.
    pytest.param(
        dict(hardware="MacBook Air M2, 16GB", memory_gb=16, backend="MLX chat app", model="Llama-3-8B-Instruct",
             params_b=8, quant="unquantized (16-bit)", measured_decode_tps=0.02),
        "memory_fit", None, {"quantization", "fit_in_memory", "smaller_model"}, id="f16-8b-on-16gb-air-swaps",
    ),
    # A quantization sweep on a Pi 5: file size × tok/s constant, a bandwidth wall.
    pytest.param(
        dict(hardware="Raspberry Pi 5, CPU only", backend="llama.cpp CPU, -ngl 0, 4 threads",
             model="small dense model", quant="Q2_K to Q8_0 sweep", gen_tokens=256, measured_decode_tps=25.77,
             raw_output="| quant | file GB | tok/s |\n|---|---:|---:|\n| Q2_K | 0.339 | 30.39 |\n"
                        "| Q4_K_M | 0.398 | 25.77 |\n| Q8_0 | 0.531 | 19.87 |"),
        "decode", "normal", {"quantization", "smaller_model", "more_bandwidth"}, id="pi5-bandwidth-wall",
    ),
    # -ngl equal to the 48 blocks leaves the output layer on the CPU.
    pytest.param(
        dict(hardware="AMD Radeon RX 7900 XT 20GB, Windows", memory_gb=20, backend="llama.cpp HIP build",
             model="DeepSeek-R1-Distill-Qwen-14B", params_b=14.8, measured_prefill_tps=106.8,
             measured_decode_tps=37.2,
             raw_output="llamacpp (ngl 48) 106.8 t/s 37.2 t/s\nllamacpp (ngl 99) 134.0 t/s 57.1 t/s"),
        "misconfiguration", "below_expected", {"gpu_offload"}, id="ngl-equals-layer-count",
    ),
    # A Pascal Tesla card with an engine whose kernels compute in FP16.
    pytest.param(
        dict(hardware="Tesla P40 24GB (Pascal)", memory_gb=24, backend="ExLlamaV2 test_inference",
             model="CodeLlama 34B instruct", params_b=34, quant="EXL2 4.0 bpw", gen_tokens=128,
             measured_decode_tps=1.2, question="34B at 4 bpw gives 1.2 t/s on my P40 and the card draws ~80 W; why?"),
        "misconfiguration", "below_expected", {"fix_configuration", "more_compute"}, id="pascal-fp16-kernels",
    ),
    # ROCm did not accept a Radeon 780M iGPU and fell back to the CPU without a word.
    pytest.param(
        dict(hardware="Ryzen 7 8700GE server with Radeon 780M iGPU", memory_gb=32, backend="Ollama ROCm build",
             model="llama3.2:3b", params_b=3.2, measured_decode_tps=1.0,
             question="about 1 token per second and the iGPU sits idle; no error"),
        "misconfiguration", "below_expected", {"gpu_offload", "fix_configuration"}, id="rocm-igpu-cpu-fallback",
    ),
    # A 12k-token agent prompt re-prefilled every turn on an M3 Ultra.
    pytest.param(
        dict(hardware="Mac Studio M3 Ultra 512GB", memory_gb=512, backend="MLX server behind an agent proxy",
             model="Qwen3.5-397B-A17B", params_b=397, quant="6-bit", prompt_tokens=12000, measured_prefill_tps=545,
             question="Each agent turn waits ~22 s before the first token although only the end of the prompt changes"),
        "prefill", None, {"prefix_caching"}, id="agent-prefix-not-cached",
    ),
    # Tensor parallel over PCIe Gen3 without P2P: about what that layout does.
    pytest.param(
        dict(hardware="2x RTX 3090 24GB", memory_gb=48, interconnect="pcie3",
             backend="vLLM tensor parallel 2, NCCL_P2P_DISABLE=1, MTP 3 draft tokens",
             model="Qwen3 32B", quant="INT4 AutoRound", measured_decode_tps=50,
             question="Two 3090s on an old X99 board get ~50 tok/s; the published figures are 66-71"),
        "decode", "normal", {"fix_configuration", "more_bandwidth"}, id="tp-over-pcie-no-p2p",
    ),
    # A MoE model 10× slower in one runtime than in another on the same card: a runtime bug.
    pytest.param(
        dict(hardware="RTX 4090 24GB", memory_gb=24, backend="KoboldCpp 1.89, all layers on the GPU",
             model="Qwen3-30B-A3B", params_b=30.5, measured_decode_tps=20,
             question="Only 20 t/s fully offloaded, while LM Studio gets over 120 t/s with the same quant"),
        "misconfiguration", "below_expected", {"fix_configuration"}, id="runtime-regression-moe",
    ),
    # A published server figure is an aggregate at large batch.
    pytest.param(
        dict(hardware="A100 80GB SXM", memory_gb=80, backend="TensorRT-LLM fp16 engine", model="Llama 3 8B",
             params_b=8, quant="fp16", prompt_tokens=35, gen_tokens=250, measured_decode_tps=2000,
             question="2000 tokens/s but the performance overview lists 6500"),
        "decode", "normal", {"batching"}, id="server-aggregate-batch",
    ),
]


@pytest.mark.parametrize("scenario,bottleneck,status,fixes", CASES)
def test_case(store, scenario, bottleneck, status, fixes):
    v = diagnose(store, Scenario(**scenario))
    assert v.bottleneck == bottleneck, v.explanation
    if status is not None:
        assert v.status == status, v.explanation
    top3 = {f.id for f in v.fixes[:3]}
    assert top3 & fixes, f"top fixes {[f.id for f in v.fixes[:3]]}, wanted one of {fixes}"
    for f in v.fixes:
        assert f.predicted_effect and f.why


def test_prompt_cache_hit_is_not_called_fast(store):
    # 9,000 tokens "processed" in 0.05 s on an M2 Air: a cache hit, not a machine rate.
    v = diagnose(store, Scenario(hardware="MacBook Air M2 16GB", model="llama 3.1 8b", quant="q4_k_m",
                                 prompt_tokens=9000, gen_tokens=200, measured_prefill_tps=180000))
    assert v.status != "above_expected"
    assert any("cache" in s for s in v.signals)


def test_prediction_only_verdict_has_numbers(store):
    v = diagnose(store, Scenario(hardware="MacBook Air M2", memory_gb=16, model="llama 3.1 8b", quant="4-bit",
                                 prompt_tokens=667, use="chat"))
    assert v.status == "not_measured"
    assert v.bottleneck == "decode"
    assert v.prediction and v.prediction.memory.fits and v.prediction.decode_tps > 5


# Signatures experts use, in scenarios we wrote ourselves (not public reports).
SIGNATURES = [
    pytest.param(dict(hardware="MacBook Pro M1 Pro 16GB", model="qwen2.5 14b", quant="q8_0", measured_decode_tps=1.2,
                      question="it is swapping like crazy"), "memory_fit", {"fit_in_memory", "quantization"}, id="swap"),
    pytest.param(dict(hardware="RTX 3080", model="llama 3.1 8b", quant="q4_k_m", measured_decode_tps=9,
                      question="GPU usage stays at 0% while it generates"), "misconfiguration", {"gpu_offload"},
                 id="gpu-idle"),
    pytest.param(dict(hardware="RTX 4060 Ti", memory_gb=16, model="llama 3.1 8b", quant="q4_k_m", gpu_fraction=0.52,
                      measured_decode_tps=9), "memory_fit", {"fit_in_memory", "quantization"}, id="ollama-ps-split"),
    pytest.param(dict(hardware="MacBook Air M3 16GB", model="llama 3.1 8b", quant="q4_k_m", measured_decode_tps=11,
                      question="starts fast but gets slower after a few minutes; it's fanless"), "decode",
                 {"fix_configuration"}, id="thermal"),
    pytest.param(dict(hardware="RTX 4090", model="llama 3.1 8b", quant="q4_k_m", depth=60000, measured_decode_tps=70,
                      question="generation tok/s drops a lot in a long conversation"), "decode",
                 {"flash_attention", "kv_cache_quantization"}, id="long-context-decode"),
    pytest.param(dict(hardware="RTX 4090", model="qwen2.5 32b", quant="q4_k_m", depth=30000, measured_decode_tps=22),
                 "memory_fit", {"kv_cache_quantization", "fit_in_memory"}, id="kv-cache-overflows-vram"),
    pytest.param(dict(hardware="ddr5-5600 dual channel", model="llama 3.1 8b", quant="q4_k_m", measured_decode_tps=3,
                      backend="llama.cpp cpu -t 64"), "misconfiguration", {"fix_configuration"}, id="threads"),
]


@pytest.mark.parametrize("scenario,bottleneck,fixes", SIGNATURES)
def test_signature(store, scenario, bottleneck, fixes):
    v = diagnose(store, Scenario(**scenario))
    assert v.bottleneck == bottleneck, v.explanation
    top3 = {f.id for f in v.fixes[:3]}
    assert top3 & fixes, [f.id for f in v.fixes]
