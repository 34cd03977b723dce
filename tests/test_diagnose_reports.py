"""Reports written the way people post them (long machine descriptions, logs, questions), one per kind of
mistake in issue 14; our own scenarios, not copies of public ones."""

from __future__ import annotations

import pytest

from advisor.diagnose import diagnose
from advisor.models import Scenario

REPORTS = [
    pytest.param(dict(hardware="MacBook Air (8GB unified memory, chip not stated)", memory_gb=8, backend="Ollama 0.3", model="llama3.2:3b", params_b=3.2, quant=None, measured_decode_tps=0.05, question="Why does llama3.2 3b generate 0.05 tokens per second on my 8GB Mac?"), "misconfiguration", {"gpu_offload","fix_configuration"}, id="8gb-mac"),
    pytest.param(dict(hardware="MacBook Pro 13-inch 2020, Intel Core i5, Intel Iris Plus Graphics, 16GB", memory_gb=16, backend="llama.cpp built with Metal (LLAMA_METAL=1), -ngl 1", model="llama-2-7b-chat", params_b=7, quant="Q4_0", measured_decode_tps=0.9, question="Metal build on my Intel MacBook is slower than CPU"), "misconfiguration", {"fix_configuration","gpu_offload"}, id="intel-macbook"),
    pytest.param(dict(hardware="Laptop with AMD Ryzen 7 7840U and Radeon 780M integrated graphics, 32GB LPDDR5", memory_gb=32, backend="LM Studio (Vulkan llama.cpp runtime)", model="Mistral 7B Instruct", params_b=7.2, quant="Q4_K_M", measured_decode_tps=1.5, question="GPU offload enabled but it is very slow"), "misconfiguration", {"gpu_offload","fix_configuration"}, id="780m"),
    pytest.param(dict(hardware="AMD Instinct MI100 32GB (ROCm 6.0)", memory_gb=32, backend="llama.cpp HIP build", model="Llama-2-13B", params_b=13, quant="Q4_K_M", measured_decode_tps=4, question="Only 4 t/s on an MI100?"), "misconfiguration", {"gpu_offload","fix_configuration"}, id="mi100"),
    pytest.param(dict(hardware="RTX 3090 24GB", memory_gb=24, backend="llama.cpp server via SillyTavern, all layers offloaded", model="Mistral-Nemo-12B", params_b=12.2, quant="Q6_K", measured_decode_tps=9, raw_output="sampler params: repeat_last_n = 64, repeat_penalty = 1.100, top_k = 0, top_p = 1.000, min_p = 0.050, temp = 1.000"), "misconfiguration", {"fix_configuration"}, id="topk0"),
    pytest.param(dict(hardware="NVIDIA L4 24GB", memory_gb=24, backend="vLLM 0.5.3 --enforce-eager", model="Llama-3-8B-Instruct", params_b=8, quant="bf16", measured_decode_tps=9, question="single request decoding is very slow"), "misconfiguration", {"fix_configuration"}, id="eager"),
    pytest.param(dict(hardware="RTX 4090 24GB", memory_gb=24, backend="vLLM 0.6 (log: Cannot use FlashAttention-2 backend for head size 256. Using XFormers backend.)", model="gemma-2-9b-it", params_b=9.2, quant="bf16", measured_decode_tps=12), "misconfiguration", {"fix_configuration"}, id="attn"),
    pytest.param(dict(hardware="RTX 4070 12GB", memory_gb=12, backend="Ollama 0.5.8", model="qwen2.5:7b", params_b=7.6, quant="Q4_K_M", measured_decode_tps=8, question="After upgrading from 0.5.7 to 0.5.8 generation dropped from 60 to 8 tok/s"), "misconfiguration", {"fix_configuration"}, id="regression"),
    pytest.param(dict(hardware="GMKtec EVO-X2, AMD Ryzen AI Max+ 395, 128GB LPDDR5X, BIOS UMA frame buffer 512MB", memory_gb=128, backend="llama.cpp Vulkan", model="Llama-3.3-70B", params_b=70, quant="Q4_K_M", measured_decode_tps=1.1, question="70B crawls although the machine has 128GB"), "misconfiguration", {"fix_configuration"}, id="strix"),
    pytest.param(dict(hardware="GTX 1080 8GB", memory_gb=8, backend="text-generation-webui ExLlamaV2 loader", model="Mistral 7B", params_b=7.2, quant="EXL2 4.0bpw", measured_decode_tps=3), "misconfiguration", {"fix_configuration","more_compute"}, id="pascal-1080"),
    pytest.param(dict(hardware="MacBook Air M2 16GB", memory_gb=16, backend="Ollama", model="gemma2:27b", params_b=27, quant="Q4_0", measured_decode_tps=0.8, question="We bought a Mac for the family; gemma 27b is unusable, what should we do?"), "memory_fit", {"smaller_model","fit_in_memory","quantization"}, id="family-mac"),
    pytest.param(dict(hardware="RTX 3060 12GB", memory_gb=12, backend="llama.cpp -ngl 20", model="Llama-2-13B", params_b=13, quant="Q4_K_M", measured_decode_tps=6), "misconfiguration", {"gpu_offload"}, id="ngl20"),
    pytest.param(dict(hardware="Intel Core i7-12700, 64GB DDR5-4800 (no GPU)", backend="llama.cpp CPU", model="Llama-3-8B", params_b=8, quant="Q4_K_M", measured_decode_tps=9), "decode", {"quantization","smaller_model","more_bandwidth","speculative_decoding"}, id="cpu-only-box"),
    pytest.param(dict(hardware="RTX 3090 24GB", memory_gb=24, backend="oobabooga text-generation-webui, llama.cpp loader", model="Llama-3-8B", params_b=8, quant="Q8_0", prompt_tokens=3000, measured_decode_tps=35, question="Output generated in 8.6 seconds (35 tokens/s, 300 tokens, context 3000)"), "decode", {"quantization","prefix_caching","speculative_decoding","smaller_model"}, id="tgwui"),
    pytest.param(dict(hardware="4x NVIDIA A100 80GB SXM (DGX)", memory_gb=320, backend="vLLM 0.4, tensor parallel 4",
                      model="Llama-2-70B", params_b=70, quant="fp16", measured_decode_tps=1800,
                      question="Benchmark throughput 1800 tok/s - is that good?"), "decode", {"batching"},
                 id="tp4-aggregate"),
]


@pytest.mark.parametrize("scenario,bottleneck,fixes", REPORTS)
def test_report(store, scenario, bottleneck, fixes):
    v = diagnose(store, Scenario(**scenario))
    assert v.bottleneck == bottleneck, v.explanation
    assert {f.id for f in v.fixes[:3]} & fixes, [f.id for f in v.fixes]
    assert v.status not in ("normal", "below_expected", "above_expected") or any(v.expected_range.values())
