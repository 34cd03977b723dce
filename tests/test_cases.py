"""Real public reports (paraphrased) and the diagnosis an expert reached.

Each case states the situation in our own words, the scenario as the reporter gave it, and what the
advisor must conclude: the bottleneck, the status when it is clear, and fixes of which at least one
must be among the top three.
"""

from __future__ import annotations

import pytest

from advisor.diagnose import diagnose
from advisor.models import Scenario

CASES = [
    pytest.param(
        dict(hardware="NVIDIA A100-SXM4-80GB server", memory_gb=80, backend="llama.cpp cuBLAS build, 2023",
             model="LLaMA-7B", params_b=7, quant="Q4_1", gen_tokens=128, measured_decode_tps=11.3),
        "misconfiguration", "below_expected", {"gpu_offload"}, id="cuda-build-without-offload",
    ),
    pytest.param(
        dict(hardware="NVIDIA GPU with 2GB VRAM plus host CPU", memory_gb=2, backend="llama.cpp CUDA, n-gpu-layers = 1",
             model="dolphin-2.2-mistral-7B", params_b=7.2, quant="Q8_0 GGUF", measured_prefill_tps=28.6,
             measured_decode_tps=2.0),
        "memory_fit", None, {"fit_in_memory", "quantization", "gpu_offload", "smaller_model"}, id="tiny-vram-one-layer",
    ),
    pytest.param(
        dict(hardware="RTX 4090 24GB desktop", memory_gb=24,
             backend="Ollama with OLLAMA_FLASH_ATTENTION=1 and OLLAMA_KV_CACHE_TYPE=q8_0", model="gemma3:4b",
             params_b=4.3, prompt_tokens=36, gen_tokens=70, measured_prefill_tps=92.07, measured_decode_tps=16.29),
        "misconfiguration", "below_expected", {"fix_configuration", "kv_cache_quantization"}, id="kv-quant-cpu-fallback",
    ),
    pytest.param(
        dict(hardware="MacBook Pro M3 Max 64GB", memory_gb=64, backend="mlx-lm", model="Qwen3-30B-A3B",
             params_b=30.5, quant="4-bit", prompt_tokens=681, gen_tokens=939, measured_prefill_tps=1160.6,
             measured_decode_tps=68.0,
             question="Dual 3090s chew through prompts far faster than my M3 Max; can MLX close the prompt-processing gap?"),
        "prefill", None, {"prefix_caching", "more_compute"}, id="mac-vs-3090-prompt-processing",
    ),
    pytest.param(
        dict(hardware="MacBook Pro M2 Max 96GB", memory_gb=96, backend="llama-cpp-python inside Docker",
             model="Llama 2 70B chat", params_b=70, quant="4-bit", prompt_tokens=11, gen_tokens=30,
             measured_prefill_tps=1.05, measured_decode_tps=0.6),
        "misconfiguration", "below_expected", {"gpu_offload", "fix_configuration"}, id="docker-on-mac-no-metal",
    ),
    pytest.param(
        dict(hardware="Dual-socket AMD EPYC Turin, DDR5-6400", backend="llama.cpp CPU backend, --numa distribute",
             model="Llama-3.1-70B-Instruct", params_b=70.6, quant="f16", measured_decode_tps=2.4),
        "decode", "below_expected", {"quantization", "fix_configuration"}, id="numa-dual-socket",
    ),
    pytest.param(
        dict(hardware="Mac running llama.cpp server", backend="llama.cpp server chat endpoint",
             model="zephyr-7b-beta", params_b=7.2, quant="Q4_K_M", prompt_tokens=809, measured_prefill_tps=101,
             question="Can the server reuse the cached prompt so a client resending a growing prompt is not re-processed?"),
        "prefill", None, {"prefix_caching"}, id="growing-prompt-resent",
    ),
    pytest.param(
        dict(hardware="MacBook with Apple Silicon", backend="Ollama /api/generate", model="gemma4:e4b",
             quant="Ollama default", prompt_tokens=9700, gen_tokens=64, measured_prefill_tps=176),
        "prefill", None, {"prefix_caching", "shorter_prompt"}, id="agent-slower-as-context-grows",
    ),
    pytest.param(
        dict(hardware="NVIDIA RTX 3060 12GB", memory_gb=12, backend="Ollama", model="DeepSeek-R1 14B",
             params_b=14.8, measured_decode_tps=4.8),
        "memory_fit", None, {"fit_in_memory", "kv_cache_quantization", "quantization"}, id="num-ctx-spill-12gb",
    ),
    pytest.param(
        dict(hardware="MacBook Air M2, 16GB", memory_gb=16, backend="MLX chat app", model="Llama-3-8B-Instruct",
             params_b=8, quant="unquantized (16-bit)", measured_decode_tps=0.02),
        "memory_fit", None, {"quantization", "fit_in_memory", "smaller_model"}, id="f16-8b-on-16gb-air-swaps",
    ),
    pytest.param(
        dict(hardware="Raspberry Pi 5, CPU only", backend="llama.cpp CPU, -ngl 0, 4 threads",
             model="small dense model", quant="Q2_K to Q8_0 sweep", gen_tokens=256, measured_decode_tps=25.77,
             raw_output="| quant | file GB | tok/s |\n|---|---:|---:|\n| Q2_K | 0.339 | 30.39 |\n"
                        "| Q4_K_M | 0.398 | 25.77 |\n| Q8_0 | 0.531 | 19.87 |"),
        "decode", "normal", {"quantization", "smaller_model", "more_bandwidth"}, id="pi5-bandwidth-wall",
    ),
    pytest.param(
        dict(hardware="AMD Radeon RX 7900 XT 20GB, Windows", memory_gb=20, backend="llama.cpp HIP build",
             model="DeepSeek-R1-Distill-Qwen-14B", params_b=14.8, measured_prefill_tps=106.8,
             measured_decode_tps=37.2,
             raw_output="llamacpp (ngl 48) 106.8 t/s 37.2 t/s\nllamacpp (ngl 99) 134.0 t/s 57.1 t/s"),
        "misconfiguration", "below_expected", {"gpu_offload"}, id="ngl-equals-layer-count",
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
