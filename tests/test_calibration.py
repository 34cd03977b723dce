"""Each term of the performance model, with hand-computed values."""

from __future__ import annotations

import pytest

from advisor import calibration as cal
from advisor.calibration import CalRow, fit, pipeline_speedup, prefill_work


def test_pipeline_speedup_gpipe_formula():
    # 4 GPUs, 4096-token prompt = 8 micro-batches of 512: 8*4/(8+4-1) = 2.909
    assert pipeline_speedup(4, 4096) == pytest.approx(32 / 11)
    assert pipeline_speedup(4, 512) == 1.0  # one micro-batch: nothing to overlap
    assert pipeline_speedup(2, 1024) == pytest.approx(4 / 3)
    assert pipeline_speedup(4, 4096, old_build=True) == 1.0  # 2023 builds did not pipeline
    assert pipeline_speedup(1, 8192) == 1.0


def test_prefill_work_attention_cost_factor():
    g = {"prefill_flops": 18e9, "prefill_attn_flops": 2e9, "n_devices": 1, "prompt_tokens": 4096,
         "engine": "llama.cpp"}
    assert prefill_work(g, 1.0) == pytest.approx(18e9)
    assert prefill_work(g, 6.0) == pytest.approx(18e9 + 5 * 2e9)
    g4 = {**g, "n_devices": 4}
    assert prefill_work(g4, 1.0) == pytest.approx(18e9 / (32 / 11))


def test_bandwidth_tier_and_qclass():
    assert cal.bw_tier(3350) == "hbm" and cal.bw_tier(1008) == "dram"
    assert cal.qclass("F16") == "float" and cal.qclass("Q4_K_M") == "kquant"
    assert cal.qclass("Q4_0") == "legacy" and cal.qclass("MLX 4-bit g64") == "mlx"


def _row(i: int, bw: float, bytes_gb: float, tps: float, kind: str = "discrete_gpu") -> CalRow:
    return CalRow(result_id=str(i), hw_id=f"hw{i % 3}", kind=kind, family="F", accel="cuda", engine="llama.cpp",
                  quant="Q4_K_M", multi=False, bandwidth_gbs=bw, tflops=100.0, decode_bytes=bytes_gb * 1e9,
                  prefill_flops=16e9, decode_tps=tps, prefill_tps=None, params_active_b=8.0, source_set="synthetic")


def test_decode_time_is_bytes_over_bandwidth_plus_fixed_cost():
    # Synthetic rows generated from e = 0.8 and t0 = 2 ms: t = B / (BW * 0.8) + 0.002
    rows = []
    for i, (bw, b) in enumerate([(1000, 4.0), (1000, 16.0), (500, 4.0), (500, 8.0), (300, 2.0), (300, 1.0)] * 3):
        t = b * 1e9 / (bw * 1e9 * 0.8) + 0.002
        rows.append(_row(i, bw, b, 1 / t))
    model = fit(rows)
    assert model.t0_s["gpu"] == pytest.approx(0.002)
    eff = model.efficiency("decode", {"kind": "discrete_gpu", "multi": False, "accel": "cuda", "engine": "llama.cpp",
                                       "quant": "Q4_K_M", "family": "F", "hw_id": "new", "bandwidth_gbs": 800})
    assert eff.efficiency == pytest.approx(0.8, rel=1e-6)
    pred = model.decode_tps({"accel": "cuda", "kind": "discrete_gpu", "decode_bytes": 4e9, "bandwidth_gbs": 800,
                             "multi": False, "engine": "llama.cpp", "quant": "Q4_K_M", "family": "F", "hw_id": "new"})
    assert pred == pytest.approx(1 / (4e9 / (800e9 * 0.8) + 0.002))


def test_shrinkage_pulls_thin_groups_toward_parent():
    # One hardware id with a single row at efficiency 0.4; its parents sit at 0.8.
    rows = [_row(i, 1000, 4.0, 1 / (4.0 / (1000 * 0.8))) for i in range(12)]
    odd = _row(99, 1000, 4.0, 1 / (4.0 / (1000 * 0.4)))
    odd.hw_id = "odd"
    model = fit(rows + [odd])
    e = model.efficiency("decode", {"kind": "discrete_gpu", "multi": False, "accel": "cuda", "engine": "llama.cpp",
                                     "quant": "Q4_K_M", "family": "F", "hw_id": "odd", "bandwidth_gbs": 1000}).efficiency
    assert 0.4 < e < 0.8  # shrunk: one row does not set the machine's efficiency on its own


def test_calibration_says_where_it_came_from(store):
    from advisor.perf import calibration_model

    c = calibration_model(store).efficiency("decode", {
        "kind": "apple_soc", "multi": False, "accel": "metal", "engine": "llama.cpp", "quant": "Q4_0",
        "family": "Apple M2", "hw_id": "apple-m2-max-38gpu", "bandwidth_gbs": 400})
    assert c.n_rows > 0 and c.source_sets and "apple" in c.group
    assert c.p10_ratio < 1 < c.p90_ratio
