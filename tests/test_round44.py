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
