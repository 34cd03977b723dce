"""Unknown sizes of known model lines borrow the line's attention layout; flash attention as a β state.

Hand-computed values: Qwen3.5-9B keeps a KV cache on 8 of its 32 layers (Gated DeltaNet elsewhere), so a
Qwen3.5-4B sized on Qwen3-4B's 36 layers keeps one on round(36 × 8 / 32) = 9; Gemma 4 31B has 50 of 60 layers
sliding (window 1024), so a 4B on 36 layers has 30 sliding and 6 global ones.
"""

from __future__ import annotations

import pytest

from advisor import roofline
from advisor.calibration import beta_for
from advisor.perf.fit import row_flash_attn
from knowledge import catalog
from knowledge.catalog._models import family_key


@pytest.mark.parametrize(("name", "key"), [
    ("qwen3.5-4b", "qwen3.5"),
    ("Qwen/Qwen3.5-9B", "qwen3.5"),
    ("gemma-4-e4b", "gemma-4"),
    ("google/gemma-4-31B-it", "gemma-4"),
    ("nvidia-nemotron-3-super-120b-a12b", "nemotron-3"),
    ("NVIDIA-Nemotron-3-Nano-30B-A3B", "nemotron-3"),
    ("meta-llama/Llama-3.1-8B", "llama-3.1"),
    ("ministral-8b", ""),  # no version word before the size
    ("smollm2-135m", "smollm2"),
])
def test_family_key(name, key):
    assert family_key(name) == key


def test_unknown_qwen35_size_keeps_the_lines_hybrid_layout(store):
    m = catalog.resolve_model(store, "qwen3.5-4b").value
    assert m.generic and m.n_layers == 36 and m.kv_layers == 9 and not m.sliding_layers
    assert "Qwen3.5-9B" in m.notes
    dense = catalog.generic_model(store, "foo-4b", 4.0)  # the same shape without the line's layout
    assert dense.kv_layers is None and dense.n_layers == 36
    assert roofline.kv_bytes(m, 32768) == pytest.approx(roofline.kv_bytes(dense, 32768) * 9 / 36)


def test_unknown_gemma4_size_keeps_sliding_window_layers(store):
    m = catalog.resolve_model(store, "gemma-4-e4b").value
    assert (m.n_layers, m.kv_layers, m.sliding_layers, m.sliding_window) == (36, 6, 30, 1024)


def test_a_near_sibling_lends_its_whole_shape(store):
    # 14 / 9 = 1.6: within 2x, so the shape is Qwen3.5-9B's own (32 layers, 8 full-attention)
    m = catalog.generic_model(store, "qwen3.5-14b", 14.0)
    nine = catalog.resolve_model(store, "Qwen/Qwen3.5-9B").value
    assert (m.n_layers, m.kv_layers, m.n_kv_heads, m.head_dim) == (nine.n_layers, 8, nine.n_kv_heads, nine.head_dim)
    assert "same model line (qwen3.5)" in m.notes


def test_unknown_nemotron3_is_a_mamba_hybrid(store):
    m = catalog.resolve_model(store, "nvidia-nemotron-3-super-120b-a12b").value
    # Nano: 6 attention layers of 52; on a 64-layer borrowed shape: round(64 × 6 / 52) = 7
    assert m.generic and m.is_moe and m.n_layers == 64 and m.kv_layers == 7


def test_sizes_in_millions_and_versioned_names(store):
    assert catalog.resolve_model(store, "gemma-3-270m").value.params_b == pytest.approx(0.27)
    assert catalog.resolve_model(store, "smollm2-135m").value.params_b == pytest.approx(0.135)
    # "tinyllama-1.1b": the "1" of "1.1b" is a size, not a Llama version
    assert catalog.resolve_model(store, "tinyllama-1.1b-v1.0.i1").value.id == "TinyLlama/TinyLlama-1.1B-Chat-v1.0"


@pytest.mark.parametrize(("row", "fa"), [
    ({"notes": "llama-bench -ngl 99 -fa 1"}, True),
    ({"notes": "sweep-bench ... -fa, f16 KV"}, True),
    ({"notes": "llama-batched-bench, FA off: `-m /models/x`"}, False),
    ({"notes": "llama-bench -fa 0 -p 512"}, False),
    ({"notes": "llama-bench -p 512 -n 512; snapshot May 2024"}, False),  # before -fa auto became the default
    ({"notes": "mainline llama.cpp (Apr 29 2025), no -fa"}, False),
    ({"notes": "", "source_url": "https://x/y__rocm-7_2_3__fa1.log"}, True),
    ({"notes": "localmaxxing leaderboard result"}, True),  # a current build: -fa auto
])
def test_row_flash_attention_state(row, fa):
    assert row_flash_attn(row) is fa


def test_beta_by_flash_attention_state():
    beta = {"cuda": 2.0, "cuda:nofa": 8.0, "metal": 3.0}
    g = {"accel": "cuda", "engine": "llama.cpp"}
    assert beta_for(beta, g) == 2.0
    assert beta_for(beta, {**g, "flash_attn": False}) == 8.0
    assert beta_for(beta, {"accel": "metal", "engine": "llama.cpp", "flash_attn": False}) == 3.0  # no nofa fit
    assert beta_for(beta, {**g, "engine": "vllm"}) == 1.0  # fused attention


def test_long_prompt_prediction_states_the_attention_cost(store):
    from advisor import service
    from advisor.models import Scenario

    long = service.predict_scenario(store, Scenario(hardware="RTX 4090", model="llama 3.1 8b", quant="Q4_K_M",
                                                    prompt_tokens=16000))
    assert any("flash attention on" in a and "of the prefill FLOPs" in a for a in long.assumptions)
    short = service.predict_scenario(store, Scenario(hardware="RTX 4090", model="llama 3.1 8b", quant="Q4_K_M",
                                                     prompt_tokens=512))
    assert not any("of the prefill FLOPs" in a for a in short.assumptions)


def test_prefill_above_the_fp16_figure_is_bounded_by_the_int8_rate(store):
    from advisor import service
    from advisor.models import Scenario

    p = service.predict_scenario(store, Scenario(hardware="RTX 3060", model="llama 3.1 8b", quant="Q4_K_M",
                                                 prompt_tokens=512))
    fp16 = 25.5e12 / (2 * 8.03e9 + 4 * 32 * 32 * 128 * 256)  # spec ÷ FLOPs per token at mean context 256
    assert p.prefill_tps > fp16  # the 3060's fitted share of its FP16 figure is above 1
    assert p.prefill_ceiling_tps == pytest.approx(2 * fp16, rel=0.02) and p.prefill_tps <= p.prefill_ceiling_tps
    assert any(a.startswith("Prefill ceiling from the INT8 tensor-core rate") for a in p.assumptions)
    # 16-bit weights multiply in FP16/BF16 on the tensor cores: no INT8 bound for them
    h = service.predict_scenario(store, Scenario(hardware="H100 PCIe", model="llama 3.1 70b", quant="BF16"))
    assert not any("INT8 tensor-core" in a for a in h.assumptions)
    # quantized weights through llama.cpp's CUDA kernels (MMQ, INT8 on Turing and later) are bounded by the INT8 rate
    q = service.predict_scenario(store, Scenario(hardware="H100 PCIe", model="llama 3.1 70b", quant="Q4_K_M"))
    assert any("INT8 tensor-core" in a for a in q.assumptions)
