"""Catalog look-up by the names people write."""

from __future__ import annotations

import pytest

from advisor.errors import AmbiguousError, NotFoundError
from knowledge import catalog


@pytest.mark.parametrize(
    "text,hw_id,n",
    [
        ("M2 Max 38-core", "apple-m2-max-38gpu", 1),
        ("MacBook Air 2022", "apple-m2-10gpu", 1),
        ("RTX 4090", "nvidia-rtx-4090", 1),
        ("a 3090", "nvidia-rtx-3090", 1),
        ("two RTX 4090s", "nvidia-rtx-4090x2", 2),
        ("4 x RTX 3090", "nvidia-rtx-3090x4", 4),
        ("H100 SXM", "nvidia-h100-sxm", 1),
        ("NVIDIA A100-SXM4-80GB", "nvidia-a100-80gb-sxm", 1),
        ("7900 XT", "amd-rx-7900-xt", 1),
        ("7900 XTX", "amd-rx-7900-xtx", 1),
        ("Strix Halo", "amd-ryzen-ai-max-plus-395", 1),
        ("DGX Spark", "nvidia-dgx-spark-gb10", 1),
        ("Raspberry Pi 5", "raspberry-pi-5", 1),
        ("nvidia-rtx-3090x4", "nvidia-rtx-3090x4", 4),
    ],
)
def test_hardware_names(store, text, hw_id, n):
    hw = catalog.resolve_hardware(store, text).value
    assert hw.id == hw_id and hw.n_devices == n


def test_memory_picks_the_bin(store):
    assert catalog.resolve_hardware(store, "M3 Max", memory_gb=36).value.id == "apple-m3-max-30gpu"
    m = catalog.resolve_hardware(store, "M3 Max", memory_gb=64)
    assert m.value.id == "apple-m3-max-40gpu" and m.value.memory_gb == 64
    assert "GPU core count not stated" in m.assumptions[0]


def test_ambiguous_and_unknown_hardware(store):
    with pytest.raises(AmbiguousError) as e:
        catalog.resolve_hardware(store, "H100")
    assert len(e.value.candidates) == 2
    with pytest.raises(NotFoundError) as e2:
        catalog.resolve_hardware(store, "Quantum Toaster 9000 Hyper")
    assert e2.value.candidates


@pytest.mark.parametrize(
    "text,model_id",
    [
        ("llama 3.1 8b", "meta-llama/Llama-3.1-8B"),
        ("qwen3 30b a3b", "Qwen/Qwen3-30B-A3B"),
        ("mlx-community/Qwen3.5-9B-4bit", "Qwen/Qwen3.5-9B"),
        ("Llama 3.3 70B", "meta-llama/Llama-3.3-70B-Instruct"),
        ("gemma3:27b", "google/gemma-3-27b-it"),
        ("qwen3-coder:30b", "Qwen/Qwen3-Coder-30B-A3B-Instruct"),
        ("deepseek r1 32b", "deepseek-ai/DeepSeek-R1-Distill-Qwen-32B"),
        ("qwen 7b", "Qwen/Qwen2.5-7B"),
    ],
)
def test_model_names(store, text, model_id):
    assert catalog.resolve_model(store, text).value.id == model_id


def test_unknown_model_with_size_is_generic(store):
    m = catalog.resolve_model(store, "dolphin-2.2-mistral-7B").value
    assert m.generic and m.params_b == 7 and m.n_layers


def test_unknown_model_without_size(store):
    with pytest.raises(NotFoundError):
        catalog.resolve_model(store, "totally-unknown-model")


@pytest.mark.parametrize(
    "text,fmt",
    [("q4_k_m", "Q4_K_M"), ("Q4_K - Medium", "Q4_K_M"), ("fp16", "F16"), ("8-bit", "Q8_0"), ("mlx 8bit", "MLX 8-bit g64"),
     ("mostly Q4_1", "Q4_1"), ("UD-Q4_K_XL", "Q4_K_M"), ("mxfp4", "MXFP4"), ("bf16", "BF16")],
)
def test_quant_names(store, text, fmt):
    assert catalog.resolve_quant(store, text).value.name == fmt


def test_bare_bits_follow_the_engine(store):
    assert catalog.resolve_quant(store, "4-bit", backend="mlx").value.name == "MLX 4-bit g64"
    assert catalog.resolve_quant(store, "4-bit", backend="ollama").value.name == "Q4_K_M"
