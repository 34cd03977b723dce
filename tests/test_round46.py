"""Round 46: decode calibration: an Apple chip's tier, and GPU levels only one machine fills."""

import pytest

from advisor.calibration._model import group_keys, soc_tier
from advisor.perf import predict
from knowledge import catalog


@pytest.mark.parametrize("hw_id, tier", [
    ("apple-m3-ultra-80gpu", "ultra"), ("apple-m1-max-32gpu", "max"), ("apple-m4-pro", "pro"),
    ("apple-m5-pro-20gpu", "pro"), ("apple-m4-10gpu", "base"), ("apple-m1-7gpu", "base"), (None, "base"),
])
def test_soc_tier_reads_the_catalog_id(hw_id, tier):
    assert soc_tier(hw_id) == tier


def _row(hw_id, kind="apple_soc", multi=False, quant="Q4_K_M"):
    return {"accel": "metal", "kind": kind, "multi": multi, "engine": "llama.cpp", "quant": quant, "hw_id": hw_id,
            "family": "Apple M4", "bandwidth_gbs": 273.0, "params_active_b": 8.0, "moe": False}


def test_apple_decode_groups_split_by_tier_before_the_format():
    keys = group_keys("decode", _row("apple-m4-pro-20gpu"))
    assert keys[4] == ("gpu", "apple_soc", "llama.cpp", "tier:pro")
    assert keys[5] == ("gpu", "apple_soc", "llama.cpp", "tier:pro", "kquant")
    assert keys[-1] == ("gpu", "apple-m4-pro-20gpu", "llama.cpp")
    # other kinds keep the format, then the bandwidth class
    gpu = group_keys("decode", {**_row("nvidia-rtx-4090", kind="discrete_gpu"), "accel": "cuda"})
    assert gpu[4] == ("gpu", "discrete_gpu", "llama.cpp", "kquant")
    assert not any(str(k[-1]).startswith("tier:") for k in gpu)
    # prefill is not split by tier (it lost accuracy on the hold-out)
    assert not any("tier:pro" in k for k in group_keys("prefill", _row("apple-m4-pro-20gpu")))


def _predict(store, name: str):
    hw = catalog.resolve_hardware(store, name).value
    m = catalog.resolve_model(store, "llama 3.1 8b").value
    q = catalog.resolve_quant(store, "Q4_K_M").value
    return predict(store, hardware=hw, model=m, quant=q, backend="llama.cpp")


def _share(store, name: str) -> float:
    p = _predict(store, name)
    return p.decode_tps / p.decode_ceiling_tps


def test_an_m4_pro_runs_an_8b_k_quant_as_measured(store):
    # llmfit community runs on an M4 Pro (llama-server, 8B Q4_K_M models): 45.8-47.3 tok/s, output over wall
    # time. Without the tier level the Pro took the Max and Ultra chips' K-quant share: 38.5 tok/s.
    assert 41 < _predict(store, "M4 Pro 20-core GPU 48GB").decode_tps < 52


def test_an_ultra_reaches_a_smaller_share_of_its_bandwidth_than_a_pro(store):
    # llama.cpp's Apple table (discussion #4167): Q4_0 7B decode reaches ~71 % of the bandwidth on a Pro,
    # ~60 % on a Max and ~40 % on an Ultra (two dies); the prediction keeps that order.
    pro, mx, ultra = (_share(store, n) for n in ("M4 Pro 20-core GPU 48GB", "M4 Max 40-core GPU 128GB",
                                                 "M3 Ultra 80-core GPU 256GB"))
    assert ultra < mx < pro
    assert 0.65 < pro < 0.9 and ultra < 0.6


# One list of engine words (advisor.understand.engine.ENGINE_MENTIONS) serves the intake and the engine question.
@pytest.mark.parametrize("text, names", [
    ("ollama or vllm?", ["ollama", "vllm"]),
    ("ik_llama.cpp beats llama.cpp here", ["ik_llama.cpp", "llama.cpp"]),
    ("llama-server -ngl 99 vs TRT-LLM", ["llama.cpp", "TensorRT-LLM"]),
    ("LM Studio with mlx-community weights", ["LM Studio", "mlx"]),
    ("exl2 in tabbyAPI", ["exllamav2", "exllamav2"]),
    ("a llama in a field", []),
])
def test_engine_mentions_are_read_once(text, names):
    from advisor.understand.engine import engine_mentions

    assert [n for _, n in engine_mentions(text)] == names


@pytest.mark.parametrize("text, engine", [
    ("4090, llama 3.1 8b in ollama. would TRT-LLM be faster?", "tensorrt-llm"),
    ("RTX 3090 with ollama, should I switch to llama-server?", "llama.cpp"),
    ("M2 Max in ollama, should I switch to mlx-lm?", "mlx"),
])
def test_engine_asked_uses_the_same_words(text, engine):
    from advisor.understand.engine_question import engine_asked

    assert engine_asked(text) == engine
