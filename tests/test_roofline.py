"""Ceilings, bytes, FLOPs and memory fit with hand-computed values."""

from __future__ import annotations

import pytest

from advisor import roofline
from advisor.models import Hardware, ModelSpec
from knowledge import catalog


def test_decode_ceiling_900gbs_4_9gb():
    # 900e9 B/s / 4.9e9 B = 183.67 tok/s
    assert roofline.decode_ceiling_tps(900, 4.9e9) == pytest.approx(183.67, abs=0.01)


def test_ttft_2000_tokens_at_40_tps_is_50_s(store):
    from advisor.perf import predict

    hw = Hardware(id="custom", name="slow box", kind="cpu", bandwidth_gbs=50, fp16_tflops=1.0, memory_gb=64)
    m = catalog.resolve_model(store, "llama 3.1 8b").value
    q = catalog.resolve_quant(store, "Q4_K_M").value
    p = predict(store, hardware=hw, model=m, quant=q, prompt_tokens=2000, gen_tokens=100)
    assert p.ttft_s == pytest.approx(2000 / p.prefill_tps)
    # And the arithmetic itself: 2000 tokens / 40 tok/s.
    assert 2000 / 40 == 50


def test_kv_bytes_llama31_8b_gqa():
    m = ModelSpec(id="x", params_b=8, n_layers=32, n_kv_heads=8, head_dim=128)
    # 2 (K,V) x 32 layers x 8 heads x 128 dims x 2 bytes = 131072 B per token
    assert roofline.kv_bytes_per_token(m) == 131072
    assert roofline.kv_bytes(m, 8192) == pytest.approx(131072 * 8192)


def test_kv_hybrid_model_counts_only_full_attention_layers(store):
    m = catalog.resolve_model(store, "qwen3.5 27b").value
    # 16 full-attention layers x 4 KV heads x 256 dims x 2 x 2 bytes = 65536 B per token
    assert roofline.kv_bytes_per_token(m) == 2 * 16 * 4 * 256 * 2


def test_sliding_window_layers_cap_at_window():
    m = ModelSpec(id="g", params_b=20, n_layers=24, n_kv_heads=8, head_dim=64, kv_layers=12, sliding_layers=12,
                  sliding_window=128)
    full = 2 * 12 * 8 * 64 * 2
    assert roofline.kv_bytes(m, 10_000) == pytest.approx(full * 10_000 + full * 128)


def test_weight_bytes_moe_uses_active_params():
    m = ModelSpec(id="moe", params_b=30.5, active_params_b=3.0)
    assert roofline.weight_bytes_read_per_token(m, 4.5) == pytest.approx(3.0e9 * 4.5 / 8)
    assert roofline.weight_bytes_total(m, 4.5) == pytest.approx(30.5e9 * 4.5 / 8)


def test_untied_embedding_not_read_per_token():
    m = ModelSpec(id="m", params_b=8.0, vocab_size=128256, hidden_size=4096)
    expected = (8.0e9 - 128256 * 4096) * 8 / 8
    assert roofline.weight_bytes_read_per_token(m, 8) == pytest.approx(expected)


def test_prefill_flops_grow_with_prompt():
    m = ModelSpec(id="m", params_b=8, n_layers=32, n_heads=32, head_dim=128)
    short = roofline.prefill_flops_per_token(m, 512)
    long = roofline.prefill_flops_per_token(m, 32768)
    assert short == pytest.approx(16e9 + 4 * 32 * 32 * 128 * 256)
    assert long > short * 1.2


def test_ridge_point_and_intensity():
    # RTX 4090: 165.2 TFLOPS / 1008 GB/s = 163.9 FLOP/B
    assert roofline.ridge_point(165.2, 1008) == pytest.approx(163.89, abs=0.01)
    assert roofline.decode_arithmetic_intensity(1, 8) == pytest.approx(2.0)
    assert roofline.decode_arithmetic_intensity(16, 4) == pytest.approx(64.0)


def test_speculative_speedup_leviathan():
    # alpha 0.8, gamma 4, c 0: (1 - 0.8^5) / (0.2 * 1) = 3.3616
    assert roofline.speculative_speedup(0.8, 4, 0.0) == pytest.approx(3.3616)
    with pytest.raises(ValueError):
        roofline.speculative_speedup(1.0, 4, 0.1)


def test_memory_fit_16gb_mac(store):
    hw = catalog.resolve_hardware(store, "MacBook Air M2", memory_gb=16).value
    q4 = catalog.resolve_quant(store, "Q4_K_M").value
    big = catalog.resolve_model(store, "llama 3.1 70b").value
    small = catalog.resolve_model(store, "llama 3.1 8b").value
    assert not roofline.memory_fit(hw, big, q4.bits_per_weight, context_tokens=4096).fits
    fit8 = roofline.memory_fit(hw, small, q4.bits_per_weight, context_tokens=4096)
    assert fit8.fits
    assert fit8.usable_gb == pytest.approx(16 * 2 / 3)


def test_partial_offload_decodes_slower(store):
    from advisor.perf import predict

    hw = catalog.resolve_hardware(store, "RTX 3060").value
    m = catalog.resolve_model(store, "qwen2.5 32b").value
    q = catalog.resolve_quant(store, "Q4_K_M").value
    p = predict(store, hardware=hw, model=m, quant=q)
    assert not p.memory.fits and 0 < p.memory.gpu_share < 1
    full = predict(store, hardware=hw, model=m, quant=q, gpu_share=1.0)
    assert p.decode_tps < 0.6 * full.decode_tps


def test_multi_gpu_layer_split_does_not_speed_up_decode(store):
    from advisor.perf import predict

    m = catalog.resolve_model(store, "llama 3.1 8b").value
    q = catalog.resolve_quant(store, "Q4_K_M").value
    one = predict(store, hardware=catalog.resolve_hardware(store, "RTX 4090").value, model=m, quant=q)
    two = predict(store, hardware=catalog.resolve_hardware(store, "2x RTX 4090").value, model=m, quant=q)
    assert two.decode_tps <= one.decode_tps * 1.05
    assert two.memory.usable_gb > 1.9 * one.memory.usable_gb
