"""Each diagnosis rule on its own: it fires on its signature and stays quiet without it."""

from __future__ import annotations

import pytest

from advisor.diagnose import phase as phase_mod
from advisor.diagnose import rules
from advisor.diagnose.context import build_ctx
from advisor.models import Scenario
from advisor.understand import understand


def ctx(store, **kw):
    return build_ctx(store, understand(store, Scenario(**kw)))


GPU8B = dict(hardware="RTX 4090", model="llama 3.1 8b", quant="q4_k_m")

# (rule, scenario where it fires, scenario where it must not, expected bottleneck)
CASES = [
    (rules.aggregate_rate, dict(GPU8B, backend="vllm", measured_decode_tps=2000),
     dict(GPU8B, backend="vllm", measured_decode_tps=100), "decode"),
    (rules.does_not_fit, dict(hardware="RTX 3060 12GB", model="qwen2.5 32b", quant="q4_k_m", measured_decode_tps=3),
     dict(GPU8B, measured_decode_tps=3), "memory_fit"),
    (rules.reported_split, dict(GPU8B, gpu_fraction=0.6, measured_decode_tps=20),
     dict(GPU8B, gpu_fraction=1.0, measured_decode_tps=20), "memory_fit"),
    (rules.output_layer_on_cpu, dict(GPU8B, backend="llama.cpp -ngl 32", measured_decode_tps=60),
     dict(GPU8B, backend="llama.cpp -ngl 33", measured_decode_tps=60), "misconfiguration"),
    (rules.partial_offload, dict(GPU8B, backend="llama.cpp -ngl 10", measured_decode_tps=20),
     dict(GPU8B, backend="llama.cpp -ngl 99", measured_decode_tps=20), "misconfiguration"),
    (rules.gpu_not_used, dict(GPU8B, question="GPU utilization is 0 while generating", measured_decode_tps=8),
     dict(hardware="ddr5-5600 dual channel", model="llama 3.1 8b", quant="q4_k_m", backend="-ngl 0",
          measured_decode_tps=8), "misconfiguration"),
    (rules.container, dict(hardware="MacBook Pro M3 Max 64GB", model="llama 3.1 8b", quant="q4_k_m",
                           backend="ollama in docker", measured_decode_tps=4),
     dict(hardware="MacBook Pro M3 Max 64GB", model="llama 3.1 8b", quant="q4_k_m", backend="ollama in docker",
          measured_decode_tps=45), "misconfiguration"),
    (rules.slow_fp16_gpu, dict(hardware="Tesla P40 24GB", model="llama 3.1 8b", quant="gptq 4-bit", backend="exllamav2",
                               measured_decode_tps=2),
     dict(hardware="Tesla P40 24GB", model="llama 3.1 8b", quant="q4_k_m", backend="llama.cpp",
          measured_decode_tps=30), "misconfiguration"),
    (rules.slow_gpu_backend, dict(GPU8B, backend="llama.cpp CLBlast", measured_decode_tps=6),
     dict(GPU8B, backend="llama.cpp CUDA", measured_decode_tps=6), "misconfiguration"),
    (rules.kv_quant_fallback, dict(GPU8B, backend="ollama OLLAMA_KV_CACHE_TYPE=q8_0", measured_decode_tps=12),
     dict(GPU8B, backend="ollama OLLAMA_KV_CACHE_TYPE=q8_0", measured_decode_tps=110), "misconfiguration"),
    (rules.cpu_sampling, dict(GPU8B, backend="llama-server --top-k 0", measured_decode_tps=30),
     dict(GPU8B, backend="llama-server --top-k 40", measured_decode_tps=30), "misconfiguration"),
    (rules.eager_mode, dict(GPU8B, quant="fp16", backend="vllm --enforce-eager", measured_decode_tps=15),
     dict(GPU8B, quant="fp16", backend="vllm --enforce-eager", measured_decode_tps=50), "misconfiguration"),
    (rules.attention_backend, dict(GPU8B, quant="fp16", backend="vllm VLLM_ATTENTION_BACKEND=XFORMERS",
                                   measured_decode_tps=10),
     dict(GPU8B, quant="fp16", backend="vllm VLLM_ATTENTION_BACKEND=FLASHINFER", measured_decode_tps=10),
     "misconfiguration"),
    (rules.tensor_parallel_pcie, dict(hardware="2x RTX 3090", interconnect="pcie3", backend="vllm -tp 2",
                                      model="qwen2.5 32b", quant="awq 4-bit", measured_decode_tps=30),
     dict(hardware="2x RTX 3090", interconnect="nvlink", backend="vllm -tp 2", model="qwen2.5 32b", quant="awq 4-bit",
          measured_decode_tps=30), "decode"),
    (rules.carveout, dict(hardware="Ryzen AI Max+ 395 128GB, 8GB VRAM carve-out (BIOS)", model="qwen2.5 32b",
                          quant="q4_k_m", measured_decode_tps=2),
     dict(hardware="Ryzen AI Max+ 395 128GB, 96GB VRAM carve-out (BIOS)", model="qwen2.5 32b", quant="q4_k_m",
          measured_decode_tps=2), "misconfiguration"),
    (rules.rocm_unsupported_igpu, dict(hardware="Radeon 780M laptop", memory_gb=32, backend="ollama rocm",
                                       model="llama3.2:3b", measured_decode_tps=1),
     dict(hardware="Radeon 780M laptop", memory_gb=32, backend="ollama rocm", model="llama3.2:3b",
          measured_decode_tps=20), "misconfiguration"),
    (rules.runtime_regression, dict(GPU8B, question="it became slower after the upgrade", measured_decode_tps=20),
     dict(GPU8B, question="it became slower after the upgrade", measured_decode_tps=115), "misconfiguration"),
    (rules.threads_oversubscribed, dict(hardware="Raspberry Pi 5", model="llama3.2:1b", quant="q4_k_m",
                                        backend="llama.cpp -t 16", measured_decode_tps=2),
     dict(hardware="Raspberry Pi 5", model="llama3.2:1b", quant="q4_k_m", backend="llama.cpp -t 4",
          measured_decode_tps=2), "misconfiguration"),
    (rules.near_limit_spill, dict(hardware="RTX 3060 12GB", model="qwen2.5 14b", quant="q4_k_m", measured_decode_tps=4),
     dict(hardware="RTX 3060 12GB", model="qwen2.5 14b", quant="q4_k_m", backend="-ngl 99", measured_decode_tps=4),
     "memory_fit"),
    (rules.far_below, dict(GPU8B, measured_decode_tps=5), dict(GPU8B, measured_decode_tps=100), "misconfiguration"),
    (rules.slow_prefill_backend, dict(hardware="Radeon RX 7900 XTX", model="llama 3.1 8b", quant="q4_k_m",
                                      backend="llama.cpp vulkan", measured_prefill_tps=400, measured_decode_tps=85),
     dict(hardware="Radeon RX 7900 XTX", model="llama 3.1 8b", quant="q4_k_m", backend="llama.cpp rocm",
          measured_prefill_tps=400, measured_decode_tps=85), "misconfiguration"),
    (rules.power_limited, dict(hardware="RTX 4060 Laptop", model="llama 3.1 8b", quant="q4_k_m", measured_decode_tps=18,
                               question="only this slow on battery"),
     dict(hardware="RTX 4060 Laptop", model="llama 3.1 8b", quant="q4_k_m", measured_decode_tps=18,
          question="only this slow"), "misconfiguration"),
    (rules.plain_framework, dict(hardware="RTX 4090", model="mistral 7b", quant="fp16", backend="transformers generate()",
                                 measured_decode_tps=22),
     dict(hardware="RTX 4090", model="mistral 7b", quant="fp16", backend="transformers generate()",
          measured_decode_tps=48), "misconfiguration"),
]


def test_ngl_below_a_fitting_model_is_setup_even_when_the_tool_reports_the_split(store):
    # "offloaded 10/33 layers" gives the GPU share; the model fits, so the person's -ngl is the cause.
    c = ctx(store, hardware="RTX 3060 12GB", model="mistral 7b", quant="q4_k_m", n_gpu_layers=10,
            raw_output="llm_load_tensors: offloaded 10/33 layers to GPU", measured_decode_tps=12)
    assert rules.reported_split(c) is None
    f = rules.first_finding(c)
    assert (f.rule, f.bottleneck) == ("partial_offload", "misconfiguration")
    assert "23 of 33 layers run from system RAM" in f.signal


def test_in_memory_speed_overrides_a_cautious_kv_estimate(store):
    # 32B Q4_K_M + a 25k prompt's f16 cache "needs" ~28 GB of a 4090's 24, but 36 tok/s is the in-VRAM speed
    # (spilled it would be ~8): the cache evidently fits (quantized, or a smaller allocation).
    fits = ctx(store, hardware="RTX 4090", model="qwen2.5 32b", quant="q4_k_m", prompt_tokens=25000,
               measured_decode_tps=36)
    assert rules.does_not_fit(fits) is None
    spilled = ctx(store, hardware="RTX 4090", model="qwen2.5 32b", quant="q4_k_m", prompt_tokens=25000,
                  measured_decode_tps=9)
    assert rules.does_not_fit(spilled) is not None


def test_vulkan_on_an_igpu_is_not_a_bad_backend(store):
    c = ctx(store, hardware="AMD Ryzen 7 7840HS with Radeon 780M", model="llama 3.1 8b", quant="q4_k_m",
            backend="LM Studio Vulkan", measured_decode_tps=12)
    assert rules.slow_gpu_backend(c) is None
    mac = ctx(store, hardware="MacBook Pro 2019 Intel Core i9", model="llama 3.2 3b", quant="q4_k_m",
              backend="llama.cpp vulkan (MoltenVK)", measured_decode_tps=0.5)
    assert rules.slow_gpu_backend(mac) is not None


@pytest.mark.parametrize("rule,fires,quiet,bottleneck", CASES, ids=[c[0].__name__ for c in CASES])
def test_rule_fires_on_its_signature(store, rule, fires, quiet, bottleneck):
    f = rule(ctx(store, **fires))
    assert f is not None and f.bottleneck == bottleneck and f.signal and f.remedies
    assert rule(ctx(store, **quiet)) is None


def test_rules_are_ordered_fit_before_setup_causes(store):
    # A model that does not fit explains the speed even when a setup symptom is present.
    c = ctx(store, hardware="RTX 3060 12GB", model="qwen2.5 32b", quant="q4_k_m", backend="--top-k 0",
            measured_decode_tps=2)
    assert rules.first_finding(c).rule == "does_not_fit"


def test_numa_below_is_decode_with_the_numa_setting(store):
    c = ctx(store, hardware="dual-socket EPYC 9654", model="llama 3.1 70b", quant="q8_0",
            backend="llama.cpp --numa distribute", measured_decode_tps=1.0)
    f = rules.numa(c)
    if c.ratio_tg is not None and c.ratio_tg < 0.7:
        assert f is not None and f.remedies[0] == "setup:numa"
    else:
        assert f is None


@pytest.mark.parametrize("kw,phase", [
    (dict(GPU8B, measured_decode_tps=100), "decode"),
    (dict(GPU8B, prompt_tokens=30000, gen_tokens=50), "prefill"),
    (dict(GPU8B, prompt_tokens=200, gen_tokens=500), "decode"),
    (dict(GPU8B, prompt_tokens=809, measured_prefill_tps=900), "prefill"),
    (dict(GPU8B, question="time to first token is long"), "prefill"),
])
def test_phase(store, kw, phase):
    assert phase_mod.phase(ctx(store, **kw)).bottleneck == phase


def test_phase_prefers_prefix_caching_when_the_prompt_repeats(store):
    f = phase_mod.phase(ctx(store, **GPU8B, prompt_tokens=6000, question="the agent resends the whole history"))
    assert f.bottleneck == "prefill" and f.remedies[0] == "prefix_caching"


def test_aggregate_with_drafts_is_not_an_aggregate(store):
    # One stream with MTP drafts can beat the plain ceiling by the draft speed-up.
    c = ctx(store, **GPU8B, backend="vllm with MTP", measured_decode_tps=260)
    assert rules.aggregate_rate(c) is None


def test_allocated_context_that_does_not_fit(store):
    big = ctx(store, hardware="RTX 3060 12GB", backend="ollama", model="qwen2.5 14b", quant="q4_k_m",
              context_window=32768, measured_decode_tps=5)
    f = rules.allocated_context(big)
    assert f is not None and f.bottleneck == "memory_fit" and "32,768" in f.signal
    small = ctx(store, hardware="RTX 3060 12GB", backend="ollama", model="qwen2.5 14b", quant="q4_k_m",
                context_window=4096, measured_decode_tps=5)
    assert rules.allocated_context(small) is None


def test_unknown_mac_whose_memory_cannot_hold_the_model(store):
    c = ctx(store, hardware="MacBook Air 8GB", model="llama 3.1 8b", quant="q8_0", measured_decode_tps=0.3)
    f = rules.does_not_fit(c)
    assert f is not None and f.bottleneck == "memory_fit"
    c2 = ctx(store, hardware="MacBook Air 8GB", model="llama 3.1 8b", quant="q4_k_m", measured_decode_tps=0.3)
    f2 = rules.does_not_fit(c2)
    assert f2 is not None and "usable" in f2.signal  # 4.9 GB of weights, ~5.4 GB usable on an 8 GB Mac: too tight


def test_a_paged_kv_server_queues_rather_than_spilling_the_kv_cache(store):
    # 40 users x 60k-token prompts need ~316 GB of KV cache for Llama 3.1 8B: vLLM holds what its KV pool fits and
    # queues the rest (no spill to system RAM), so "does not fit" is not the finding; llama.cpp's slots would spill.
    from advisor.diagnose import diagnose
    from advisor.models import Scenario

    base = dict(hardware="H100 SXM", memory_gb=80, model="Llama 3.1 8B Instruct", quant="bf16", concurrency=40,
                prompt_tokens=60000, gen_tokens=300)
    v = diagnose(store, Scenario(**base, backend="vLLM"))
    assert v.bottleneck != "memory_fit"
    w = diagnose(store, Scenario(**base, backend="llama.cpp"))
    assert w.bottleneck == "memory_fit"
