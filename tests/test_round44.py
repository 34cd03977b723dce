"""Round 44: a CPU's tier digit is no GPU count; the multi-GPU split's efficiency from the single card's."""

from __future__ import annotations

import pytest

from knowledge import catalog


@pytest.mark.parametrize(("text", "hw_id"), [
    ("NVIDIA GeForce GTX 1070 (8.0 GB reported, host CPU AMD Ryzen 5 3600, linux)", "nvidia-gtx-1070"),
    ("RTX 3060 12GB, host CPU AMD Ryzen 7 3700, windows", "nvidia-rtx-3060"),
    ("RTX 4090 with a Ryzen 9 7950X", "nvidia-rtx-4090"),
    ("RTX 4070 in a laptop with a Core Ultra 7 155H", None),
    ("2x RTX 3090, Ryzen 5 5600", "nvidia-rtx-3090x2"),
    ("8x H100 SXM", "nvidia-h100-sxmx8"),
])
def test_a_cpu_tier_digit_is_no_gpu_count(store, text, hw_id):
    from knowledge.catalog._gpus import device_count

    n = device_count(text)
    assert n == (int(hw_id.rsplit("x", 1)[1]) if hw_id and hw_id[-2] == "x" else 1)
    if hw_id:
        assert catalog.resolve_hardware(store, text).value.id == hw_id


def test_moe_split_factor_is_the_one_card_moe_to_dense_ratio():
    """Hand value: root log(0.5); one card's MoE level (w 2) at log(0.25) → MoE walk log(√(0.25 × 0.5)), dense
    walk log(0.5): the factor is √0.5 = 0.7071."""
    import math

    from advisor.calibration._model import _Group, moe_split_log

    groups = {("all",): _Group(n=10, log_eff=math.log(0.5), sources=set()),
              ("gpu", "discrete_gpu", "llama.cpp/moe"): _Group(n=2, log_eff=math.log(0.25), sources=set())}
    g = {"accel": "cuda", "kind": "discrete_gpu", "multi": True, "engine": "llama.cpp", "moe": True,
         "quant": "Q4_K_M", "bandwidth_gbs": 936.0, "family": "NVIDIA Ampere", "hw_id": "nvidia-rtx-3090",
         "params_active_b": 13.0, "n_devices": 2}
    assert math.exp(moe_split_log(groups, g)) == pytest.approx(0.7071, abs=1e-4)


def test_a_moe_on_two_cards_decodes_about_as_fast_as_on_one(store):
    """A layer split keeps each card's MoE rate: 2× RTX A6000 with Mixtral 8x7B Q4_K_M was predicted at 17.6 tok/s
    (six 2× R9700 rows of hybrid Mamba MoEs set every multi-GPU MoE group) against ~66 on one card."""
    from advisor.perf import predict

    m = catalog.resolve_model(store, "mixtral 8x7b").value
    q = catalog.resolve_quant(store, "Q4_K_M").value
    one = predict(store, hardware=catalog.get_hardware(store, "nvidia-rtx-a6000"), model=m, quant=q).decode_tps
    two = predict(store, hardware=catalog.resolve_hardware(store, "2x RTX A6000").value, model=m, quant=q).decode_tps
    assert 50 < one < 90
    assert 0.85 * one < two <= 1.05 * one
