"""A GPU that spills to system RAM spills to the RAM of its era: a 2014 GTX 860M laptop has DDR3, not DDR5."""

from __future__ import annotations

import pytest

from advisor.perf import predict
from advisor.perf.prediction import DEFAULT_HOST_BW_GBS, default_host_bandwidth
from knowledge import catalog


@pytest.mark.parametrize("hw_id, gbs, ram", [
    ("nvidia-gtx-860m", 25.6, "DDR3-1600"),      # 2014: 1600 MT/s × 8 B × 2 channels
    ("nvidia-gtx-1080-ti", 51.2, "DDR4-3200"),   # 2017
    ("nvidia-rtx-4090", DEFAULT_HOST_BW_GBS, "DDR5"),
])
def test_host_ram_follows_the_gpus_year(store, hw_id, gbs, ram):
    got, label = default_host_bandwidth(catalog.get_hardware(store, hw_id))
    assert got == pytest.approx(gbs) and ram in label


def test_an_old_laptop_gpu_that_spills_decodes_at_its_ddr3_speed(store):
    hw = catalog.get_hardware(store, "nvidia-gtx-860m").model_copy(update={"memory_gb": 2.0})
    m = catalog.resolve_model(store, "llama 3.2 3b").value
    q = catalog.resolve_quant(store, "Q4_K_M").value
    p = predict(store, hardware=hw, model=m, quant=q, prompt_tokens=512, gen_tokens=128)
    said = [a for a in p.assumptions if "system RAM" in a]
    assert said and "25.6 GB/s" in said[0] and "DDR3-1600" in said[0]
    fast = predict(store, hardware=hw, model=m, quant=q, prompt_tokens=512, gen_tokens=128, host_bandwidth_gbs=89.6)
    assert p.decode_tps < 0.7 * fast.decode_tps  # the CPU share read at 25.6 instead of 89.6 GB/s
