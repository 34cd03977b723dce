"""A GPU's fixed per-token decode cost scales with the model's layers (advisor.calibration.layer_scale).

Values are hand-computed from ``decode_tps = 1 / (B / (BW × e) + t0 × layers / 32)``.
"""

from __future__ import annotations

import pytest

from advisor.calibration import MOE_T0_KEY, CalibrationModel, layer_scale, row_t0
from advisor.perf import build_cal_rows, calibration_model, predict
from knowledge import catalog
from knowledge.store import Store


@pytest.fixture(scope="module")
def store() -> Store:
    return Store(":memory:")


def _scen(**kw):
    g = {"accel": "cuda", "kind": "discrete_gpu", "multi": False, "engine": "llama.cpp", "moe": False,
         "decode_bytes": 1e9, "bandwidth_gbs": 1000.0}
    g.update(kw)
    return g


@pytest.mark.parametrize(("accel", "layers", "want"), [
    ("cuda", 16, 0.5), ("rocm", 80, 2.5), ("metal", 32, 1.0), ("vulkan", 24, 0.75),
    ("cuda", 0, 1.0), ("cuda", None, 1.0),  # layer count not known: the reference 32
    ("cpu", 16, 1.0), ("cpu", 80, 1.0),  # CPUs: per-step synchronisation, not scaled
])
def test_layer_scale(accel, layers, want):
    assert layer_scale({"accel": accel, "n_layers": layers}) == pytest.approx(want)


def test_row_t0_scales_the_kind_cost_not_the_moe_cost():
    t0s = {"gpu:discrete_gpu": 0.004, MOE_T0_KEY: 0.002}
    assert row_t0(t0s, _scen(n_layers=16)) == pytest.approx(0.002)
    assert row_t0(t0s, _scen(n_layers=80)) == pytest.approx(0.010)
    # MoE: 0.004 × 48/32 + 0.002 (the routing cost is fitted per token, not per layer)
    assert row_t0(t0s, _scen(n_layers=48, moe=True)) == pytest.approx(0.008)
    assert row_t0({"cpu:cpu": 0.01}, _scen(accel="cpu", kind="cpu", n_layers=16)) == pytest.approx(0.01)


def test_decode_rate_with_the_layer_scaled_fixed_cost():
    cal = CalibrationModel({"gpu:discrete_gpu": 0.004}, {"decode": {}}, {"decode": {}}, {}, {"decode": 0})
    # 1 GB at 1000 GB/s × 0.5 = 2 ms, + 4 ms × 16/32 = 2 ms: 250 tok/s (32 layers: 1 / 6 ms = 166.7)
    assert cal.decode_tps(_scen(n_layers=16), eff=0.5) == pytest.approx(250.0)
    assert cal.decode_tps(_scen(n_layers=32), eff=0.5) == pytest.approx(1000 / 6)


def test_calibration_rows_carry_the_layer_count(store):
    rows = build_cal_rows(store)
    by_model = {r.extra["model"]: r.n_layers for r in rows}
    assert by_model.get("llama-3.1-8b-instruct") == 32
    assert by_model.get("llama-3.2-1b-instruct", 16) == 16
    assert any(n == 80 for n in by_model.values())  # a 70B


def test_prediction_uses_the_model_layers(store):
    """Llama 3.2 1B (16 layers) on an RTX 4090: the time per token above the bytes term is half the
    32-layer fixed cost the fit gives the kind."""
    cal = calibration_model(store)
    hw = catalog.resolve_hardware(store, "RTX 4090").value
    ms = catalog.all_models(store)
    m = next(v for k, v in ms.items() if "Llama-3.2-1B" in k)
    assert m.n_layers == 16
    q = catalog.resolve_quant(store, "Q4_K_M").value
    p = predict(store, hardware=hw, model=m, quant=q, backend="llama.cpp", prompt_tokens=512, gen_tokens=128, cal=cal)
    scen = _scen(n_layers=16, kind=hw.kind, family=hw.family, hw_id=hw.id, quant=q.name,
                 bandwidth_gbs=hw.bandwidth_gbs, params_active_b=m.active_b)
    eff = min(1.0, cal.efficiency("decode", scen).efficiency)
    bytes_s = (p.weight_bytes_per_token_gb + p.kv_bytes_per_token_gb) / (hw.bandwidth_gbs * eff)
    fixed = 1.0 / p.decode_tps - bytes_s
    assert fixed == pytest.approx(cal.t0_s["gpu:discrete_gpu"] / 2, rel=0.05)
