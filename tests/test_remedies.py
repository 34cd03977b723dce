"""The remedy registry: when each remedy applies, and that its effect comes from the same prediction code."""

from __future__ import annotations

import re

import pytest

from advisor.diagnose import remedies
from advisor.diagnose.context import build_ctx, predict_for
from advisor.models import FIX_IDS, Scenario
from advisor.understand import understand
from knowledge import catalog


def ctx(store, **kw):
    return build_ctx(store, understand(store, Scenario(**kw)))


GPU8B = dict(hardware="RTX 4090", model="llama 3.1 8b", quant="q8_0")


def test_every_remedy_has_a_known_fix_id_and_tier():
    assert remedies.REGISTRY
    for key, r in remedies.REGISTRY.items():
        assert r.fix_id in FIX_IDS, key
        assert r.tier in (0, 1, 2, 3)  # a setting, a format, a model, a purchase


def test_what_if_is_the_prediction_code(store):
    c = ctx(store, **GPU8B)
    q4 = catalog.all_quants(store)["Q4_K_M"]
    a = remedies.what_if(c, quant=q4)
    b = predict_for(store, c.sit, quant=q4)
    assert a is not None and b is not None and a.decode_tps == pytest.approx(b.decode_tps)
    # 8.5 → 4.9 bits per weight reads 1.73× fewer bytes; the fixed per-token cost (≈ 3 ms on a discrete GPU,
    # advisor.calibration) keeps the gain below that
    assert 1.3 < a.decode_tps / c.pred.decode_tps < 1.73


def test_quantization_effect_matches_what_if(store):
    c = ctx(store, **GPU8B)
    f = remedies.build(c, "quantization")
    assert f is not None and "Q4_K_M" in f.title
    new = remedies.what_if(c, quant=catalog.all_quants(store)["Q4_K_M"])
    assert f.new_decode_tps == pytest.approx(new.decode_tps)
    assert f.speedup == pytest.approx(new.decode_tps / c.pred.decode_tps)


@pytest.mark.parametrize("quant", ["Q4_K_M", "Q3_K_M", "IQ3_XXS"])
def test_quantization_not_offered_at_or_below_the_target(store, quant):
    c = ctx(store, **dict(GPU8B, quant=quant))
    assert remedies.build(c, "quantization") is None


def test_mlx_gets_mlx_formats(store):
    c = ctx(store, hardware="MacBook Pro M3 Max 64GB", model="llama 3.1 8b", quant="8-bit", backend="mlx-lm")
    f = remedies.build(c, "quantization")
    assert f is not None and "MLX 4-bit" in f.title


@pytest.mark.parametrize("backend", ["vllm with MTP", "llama-server --model-draft small.gguf", "EAGLE speculative"])
def test_speculative_not_offered_when_drafts_are_in_use(store, backend):
    assert remedies.build(ctx(store, **GPU8B, backend=backend), "speculative_decoding") is None


def test_speculative_not_offered_to_a_batched_server_or_a_broken_setup(store):
    assert remedies.build(ctx(store, **GPU8B, concurrency=8), "speculative_decoding") is None
    assert remedies.build(ctx(store, **GPU8B, measured_decode_tps=3), "speculative_decoding") is None
    f = remedies.build(ctx(store, **GPU8B), "speculative_decoding")
    assert f is not None and f.speedup and 1.5 < f.speedup < 3


@pytest.mark.parametrize("hw", ["ddr5-5600 dual channel", "Raspberry Pi 5"])
def test_gpu_offload_needs_a_gpu(store, hw):
    assert remedies.build(ctx(store, hardware=hw, model="llama 3.1 8b", quant="q4_k_m"), "offload_all") is None


def test_gpu_offload_effect_is_the_full_gpu_prediction(store):
    c = ctx(store, **GPU8B, backend="-ngl 10", measured_decode_tps=20)
    f = remedies.build(c, "offload_all")
    full = remedies.what_if(c, gpu_share=1.0)
    assert f is not None and f.new_decode_tps == pytest.approx(full.decode_tps)
    assert "23 of 33 layers" in f.title


def test_batching_single_user_is_not_offered(store):
    assert remedies.build(ctx(store, **GPU8B), "batching") is None


def test_batching_for_users_compares_with_one_at_a_time(store):
    c = ctx(store, **GPU8B, concurrency=6)
    f = remedies.build(c, "batching")
    one = remedies.what_if(c, concurrency=1)
    assert f is not None and f.speedup == pytest.approx(f.new_decode_tps / one.decode_tps)
    assert f.speedup > 2


def test_batching_already_at_the_users_proposes_no_larger_batch(store):
    # 4 users and -np 4: every request is already in the batch; 8 sequences would need 8 requests at once
    assert remedies.build(ctx(store, **GPU8B, concurrency=4, backend="llama-server -np 4"), "batching") is None
    assert remedies.build(ctx(store, **GPU8B, concurrency=50, backend="vllm"), "batching") is None
    f = remedies.build(ctx(store, **GPU8B, concurrency=4, backend="llama-server -np 2"), "batching")
    assert f is not None and "4 concurrent" in f.title  # fewer slots than users: batch all of them


def test_batching_beyond_a_measured_batch_proposes_a_larger_one(store):
    c = ctx(store, **GPU8B, concurrency=4, backend="vllm", measured_decode_tps=400, measured_is_aggregate=True)
    f = remedies.build(c, "batching")
    assert f is not None and f.new_decode_tps > 400
    # vLLM batches what arrives together: the fix is sending more at once, its --max-num-seqs only caps it
    assert f.title.startswith("Send requests concurrently (≈ ") and "vLLM batches them on its own, --max-num-seqs only caps" in f.title


def test_kv_quantization_not_offered_when_already_quantized_or_tiny(store):
    assert remedies.build(ctx(store, **GPU8B, backend="-ctk q8_0", depth=30000), "kv_cache_quantization") is None
    assert remedies.build(ctx(store, **GPU8B, prompt_tokens=50, gen_tokens=20), "kv_cache_quantization") is None
    f = remedies.build(ctx(store, **GPU8B, depth=60000), "kv_cache_quantization")
    assert f is not None and f.speedup and f.speedup > 1.05


def test_flash_attention_not_offered_when_on(store):
    assert remedies.build(ctx(store, **GPU8B, depth=30000, backend="-fa on"), "flash_attention") is None
    assert remedies.build(ctx(store, **GPU8B, depth=30000), "flash_attention") is not None
    assert remedies.build(ctx(store, **GPU8B, prompt_tokens=300), "flash_attention") is None


def test_prefix_caching_effect(store):
    c = ctx(store, **GPU8B, prompt_tokens=10000, shared_prefix_tokens=9000, measured_prefill_tps=1000)
    f = remedies.build(c, "prefix_caching")
    assert f is not None and f.new_ttft_s == pytest.approx(1.0) and f.speedup == pytest.approx(10.0)


def test_raise_gpu_limit_only_when_the_model_fits_the_ram(store):
    fits_ram = ctx(store, hardware="MacBook Pro M3 Max 36GB", model="qwen2.5 32b", quant="q5_k_m")
    assert remedies.build(fits_ram, "raise_gpu_limit") is not None
    too_big = ctx(store, hardware="MacBook Air M2 16GB", model="gemma 2 27b", quant="q4_k_m")
    assert remedies.build(too_big, "raise_gpu_limit") is None


def test_fit_in_memory_picks_a_format_that_fits(store):
    c = ctx(store, hardware="RTX 3060 12GB", model="qwen2.5 14b", quant="q8_0")
    f = remedies.build(c, "fit_in_memory")
    assert f is not None and ("Q6_K" in f.title or "Q5" in f.title or "Q4" in f.title)


def test_no_format_fits_so_real_smaller_models_are_named(store):
    c = ctx(store, hardware="MacBook Air M2 8GB", model="llama 3.1 70b", quant="q4_k_m")
    assert remedies.build(c, "fit_in_memory") is None  # no format of a 70B fits 8 GB: no format fix
    f = remedies.build(c, "smaller_model")
    assert f is not None and f.title.startswith("Use a smaller model that fits: ") and "at Q4_K_M" in f.title
    assert "Llama 3.1 8B" in f.title or "Llama 3.2 3B" in f.title  # the person's own line first, a real model
    assert "~" not in f.title.split(" at ")[0]  # named models, never "~13.7B"
    assert f.fits_with_margin is True and f.margin_gb is not None and f.margin_gb >= 0.15 * 5.3


def test_setup_remedies_state_a_check(store):
    c = ctx(store, **GPU8B, measured_decode_tps=10)
    full = ctx(store, **GPU8B, backend="llama.cpp -ngl 99", measured_decode_tps=10)
    assert remedies.build(c, "setup:gpu_state") is None  # only once every layer is shown on the GPU
    slow_pp = ctx(store, **GPU8B, measured_decode_tps=10, measured_prefill_tps=50)
    assert remedies.build(c, "setup:prefill") is None  # only with a measured prefill below the expectation
    for key in [k for k in remedies.REGISTRY if k.startswith("setup:")]:
        f = remedies.build(full if key == "setup:gpu_state" else slow_pp if key == "setup:prefill" else c, key)
        assert f is not None and f.id == "fix_configuration" and "Check:" in f.why, key
        if key == "setup:kv_pool":  # more cache, not the expected speed back: the pool's growth, an estimate
            assert "KV pool ≈" in f.predicted_effect and "an estimate" in f.predicted_effect
        else:
            assert "expected" in f.predicted_effect


def test_setup_effect_against_bounds_for_an_unresolved_machine(store):
    c = ctx(store, hardware="MacBook Air 8GB", model="llama3.2:3b", measured_decode_tps=0.05)
    f = remedies.build(c, "setup:check_placement")
    assert f is not None and "≥" in f.predicted_effect and f.speedup and f.speedup > 100


def test_upgrades_are_sensible_steps(store):
    pi = ctx(store, hardware="Raspberry Pi 5", model="llama3.2:1b", quant="q4_k_m")
    f = remedies.build(pi, "more_bandwidth")
    # a board computer's next step is a small unified-memory machine (the smallest step up), not a workstation
    # (the M2 8-core and the M3 10-core are both that step: 8 GB at 100 GB/s; which one depends on the fit)
    assert f is not None and re.search(r"Apple M[23] \(\d+-core GPU\) with 8 GB \(100 GB/s\)", f.title), f.title
    srv = ctx(store, hardware="Xeon E5-2683 v4", model="llama3.2:1b", quant="q4_k_m")
    f = remedies.build(srv, "more_bandwidth")  # a CPU row's own kind, when it is the step: RAM one installs
    assert f is not None and "GeForce" in f.title, f.title
    mac = ctx(store, hardware="MacBook Pro M3 Max 64GB", model="llama 3.1 8b", quant="q4_k_m", prompt_tokens=4000)
    g = remedies.build(mac, "more_compute")
    assert g is not None and "Jetson" not in g.title


def test_kv_quantization_is_sized_at_the_allocated_context(store):
    # num_ctx 32768 reserves the cache up front: a short prompt does not make the cache small.
    c = ctx(store, hardware="RTX 3060 12GB", model="qwen2.5 14b", quant="q4_k_m", context_window=32768,
            measured_decode_tps=6)
    f = remedies.build(c, "kv_cache_quantization")
    assert f is not None and "32,768 tokens" in f.predicted_effect
    assert remedies.build(ctx(store, hardware="RTX 3060 12GB", model="qwen2.5 14b", quant="q4_k_m",
                              measured_decode_tps=6), "kv_cache_quantization") is None


def test_batching_is_not_offered_to_one_stated_user(store):
    one = ctx(store, hardware="NVIDIA H100 80GB SXM", model="llama 3.1 8b", quant="bf16", backend="vllm", concurrency=1,
              measured_decode_tps=48)
    assert remedies.build(one, "batching") is None
    server = ctx(store, hardware="NVIDIA H100 80GB SXM", model="llama 3.1 8b", quant="bf16", backend="vllm",
                 measured_decode_tps=48)
    assert remedies.build(server, "batching") is not None


def test_a_bigger_machine_holds_the_allocated_context(store):
    # qwen2.5 14b with num_ctx 32768 does not fit 12 GB; a "faster" 10 GB card would not hold it either.
    c = ctx(store, hardware="RTX 3060 12GB", model="qwen2.5 14b", quant="q4_k_m", context_window=32768,
            measured_decode_tps=6)
    f = remedies.build(c, "more_bandwidth")
    assert f is None or "10GB" not in f.title
    hws = {h.name: h for h in catalog.all_hardware(store).values()}
    if f is not None:
        name = f.title.split("e.g. ", 1)[1].rsplit(" (", 1)[0].split(" with ")[0]
        assert name in hws and max(hws[name].memory_gb_options or [99]) >= 16, f.title


@pytest.mark.parametrize(("hardware", "model", "kind"), [
    ("Intel Core i7-12700 desktop", "qwen2.5 14b", "discrete_gpu"),   # a desktop: a graphics card
    ("Ryzen 9 7950X", "llama 3.1 8b", "discrete_gpu"),
    ("Ryzen 7 7840U laptop", "llama 3.1 8b", "unified"),              # a laptop: a wide unified memory
    ("Core i5-8250U", "phi-3 mini", "unified"),
    ("Ryzen 9 7950X 64GB", "llama 3.3 70b", "unified"),                # no single card holds 42 GB
])
def test_a_cpu_machines_bandwidth_step_is_a_gpu_or_unified_memory(store, hardware, model, kind):
    c = ctx(store, hardware=hardware, model=model, quant="q4_k_m", measured_decode_tps=2)
    f = remedies.build(c, "more_bandwidth")
    assert f is not None, hardware
    pick = f.title.split("e.g. ", 1)[1]
    hw = catalog.resolve_hardware(store, pick.split(" with ")[0].split(" (")[0] if kind != "discrete_gpu"
                                  else pick.split(" (")[0].split(" with ")[0]).value
    assert (hw.kind in ("apple_soc", "apu") if kind == "unified" else hw.kind == kind), (hardware, f.title)
    assert "Jetson" not in f.title and "Server" not in f.title and "DDR" not in f.title
