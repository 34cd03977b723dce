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


def _pre(i: int, hw: str, accel: str, tflops: float, eff: float, kind: str = "datacenter_gpu") -> CalRow:
    """A prefill row whose achieved share of ``tflops`` is ``eff`` (16 GFLOP per token, no attention)."""
    return CalRow(result_id=f"p{i}", hw_id=hw, kind=kind, family="F", accel=accel, engine="llama.cpp",
                  quant="Q4_K_M", multi=False, bandwidth_gbs=1000, tflops=tflops, decode_bytes=4e9,
                  prefill_flops=16e9, decode_tps=None, prefill_tps=tflops * 1e12 * eff / 16e9,
                  params_active_b=8.0, source_set="synthetic")


def test_api_factor_is_the_paired_ratio_on_the_same_machines():
    # Two machines measured with CUDA and Vulkan: Vulkan reaches 0.5 and 0.7 of CUDA's share → median 0.6.
    rows = [_pre(1, "a", "cuda", 100, 0.8), _pre(2, "a", "vulkan", 100, 0.4),
            _pre(3, "b", "cuda", 200, 0.5), _pre(4, "b", "vulkan", 200, 0.35),
            _pre(5, "c", "vulkan", 50, 0.9)]  # a Vulkan-only machine says nothing about the ratio
    f = cal._fit_api_factor(rows, [r.prefill_tps * 16e9 / (r.tflops * 1e12) for r in rows])
    assert f == {"vulkan": pytest.approx(0.6)}
    # One paired machine is not enough evidence: no factor.
    assert cal._fit_api_factor(rows[:2], [0.8, 0.4]) == {}


def test_prefill_compute_tier_is_fitted_per_kind():
    # Six datacenter cards whose share of peak falls as (TFLOPS / 100) ** -0.4 (H100-class lower than A40-class).
    rows = [_pre(i, f"dc{i}", "cuda", tf, 0.4 * (tf / 100) ** -0.4) for i, tf in enumerate((50, 100, 150, 300, 700, 1000))]
    model = fit(rows)
    assert model.prefill_gamma["datacenter_gpu"] == pytest.approx(-0.4)
    scen = {"kind": "datacenter_gpu", "multi": False, "accel": "cuda", "engine": "llama.cpp", "quant": "Q4_K_M",
            "family": "F", "hw_id": "new", "tflops": 400.0, "params_active_b": 8.0}
    # A card the fit has not seen at 400 TFLOPS: 0.4 × 4 ** -0.4 = 0.2297.
    assert model.efficiency("prefill", scen).efficiency == pytest.approx(0.4 * 4 ** -0.4, rel=1e-6)
    assert model.tier_factor({**scen, "kind": "apple_soc"}) == 1.0  # no fit for that kind: no tier term
    assert model.tier_factor({**scen, "engine": "vllm"}) == 1.0  # fitted on llama.cpp kernels: not vLLM's


def test_cpu_format_classes_follow_the_kernels():
    assert [cal.cpu_qclass(q) for q in ("Q4_0", "IQ4_NL", "Q8_0", "Q5_1")] == ["legacy"] * 4
    assert [cal.cpu_qclass(q) for q in ("Q4_K_M", "Q6_K", "UD-Q2_K_XL", "Q3_K_S")] == ["kquant"] * 4
    assert [cal.cpu_qclass(q) for q in ("IQ2_XXS", "IQ3_S", "IQ4_XS", "IQ4_XS_R4")] == ["iq"] * 4
    assert cal.cpu_qclass("BF16") == "float" and cal.cpu_qclass("MLX 4-bit") == "other"


def _cpu(i: int, hw: str, engine: str, quant: str, gflops_per_core: float) -> CalRow:
    return CalRow(result_id=f"c{i}", hw_id=hw, kind="cpu", family="F", accel="cpu", engine=engine, quant=quant,
                  multi=False, bandwidth_gbs=100, tflops=None, decode_bytes=4e9, prefill_flops=16e9,
                  decode_tps=None, prefill_tps=gflops_per_core * 16 / 16, params_active_b=8.0,
                  source_set="synthetic", cpu_cores=16)


def test_cpu_per_core_factors_are_paired_within_machines():
    # Machine a: Q4_0 runs 2x and IQ3 0.5x its K-quant rate; ik_llama.cpp 3x mainline on the same format.
    # Machine b is twice as fast per core with the same ratios: the factors must not see its speed.
    rows = []
    for hw, s in (("a", 1.0), ("b", 2.0)):
        rows += [_cpu(len(rows), hw, "llama.cpp", "Q4_0", 100 * s), _cpu(len(rows) + 1, hw, "llama.cpp", "Q4_K_M", 50 * s),
                 _cpu(len(rows) + 2, hw, "llama.cpp", "IQ3_XXS", 25 * s), _cpu(len(rows) + 3, hw, "ik_llama.cpp", "Q4_K_M", 150 * s)]
    out = cal._fit_cpu_per_core(rows)
    assert out["cpu-per-core:q:legacy"] / out["cpu-per-core:q:kquant"] == pytest.approx(2.0)
    assert out["cpu-per-core:q:iq"] / out["cpu-per-core:q:kquant"] == pytest.approx(0.5)
    assert out["cpu-per-core:e:ik_llama.cpp"] == pytest.approx(3.0)
    # Base × factors gives each machine's own rates back (TFLOP/s per core: 16 GFLOP/token × rate / 16 cores).
    base = out["cpu-per-core:base"]
    m = fit(rows)
    # Q4_0 mainline: 0.1 TFLOP/s per core on a, 0.2 on b; the base is the median of the two machines.
    assert base * cal.cpu_compute_factor(m, "Q4_0", "llama.cpp") == pytest.approx(0.15, rel=1e-6)
    assert cal.cpu_compute_factor(m, "IQ3_XXS", "ik_llama.cpp") == pytest.approx(
        out["cpu-per-core:q:iq"] * 3.0, rel=1e-6)
    # A measured machine keeps its own rate, shrunk toward the base with weight n / (n + 2): machine a (4 rows)
    # runs at 2/3 of the base (b is twice a), so 1.5 ** (-4/6) of it.
    assert out["cpu-per-core:hw:a"] / base == pytest.approx(1.5 ** (-4 / 6), rel=1e-6)


def test_cpu_per_core_rate_is_counted_in_reference_cores():
    # Machine a's cores have the reference peak (speed 1), machine b's twice it (speed 2) and b measures twice a's
    # rate: per reference core they are the same machine, so the base is a's rate and neither is shrunk away.
    rows = [_cpu(0, "a", "llama.cpp", "Q4_K_M", 50), _cpu(1, "a", "llama.cpp", "Q4_K_M", 50),
            CalRow(**{**_cpu(2, "b", "llama.cpp", "Q4_K_M", 100).__dict__, "cpu_core_speed": 2.0}),
            CalRow(**{**_cpu(3, "b", "llama.cpp", "Q4_K_M", 100).__dict__, "cpu_core_speed": 2.0})]
    out = cal._fit_cpu_per_core(rows)
    assert out["cpu-per-core:base"] == pytest.approx(0.05)  # 16 GFLOP/token × 50 tok/s ÷ 16 cores = 50 GFLOP/s
    assert out["cpu-per-core:hw:a"] == pytest.approx(0.05) and out["cpu-per-core:hw:b"] == pytest.approx(0.05)


def test_an_engine_no_machine_pairs_takes_its_published_factor():
    # Machine c ran only ik_llama.cpp and no machine ran both engines: ik's factor is the published 2.1x
    # (ik_llama.cpp PR #533), so c's rate counts toward the base as 150 / 2.1 mainline-equivalent GFLOP/s.
    rows = [_cpu(0, "a", "llama.cpp", "Q4_K_M", 50), _cpu(1, "c", "ik_llama.cpp", "Q4_K_M", 150)]
    out = cal._fit_cpu_per_core(rows)
    assert out["cpu-per-core:e:ik_llama.cpp"] == 2.1
    assert out["cpu-per-core:base"] == pytest.approx((0.05 + 0.15 / 2.1) / 2)
    # Only such rows: the base is their rate with the published factor divided out, and a prediction for
    # the same engine gives the measured rate back.
    only = cal._fit_cpu_per_core([rows[1]])
    assert only["cpu-per-core:base"] * only["cpu-per-core:e:ik_llama.cpp"] == pytest.approx(0.15)
    # A measured pair replaces the published figure (3x here).
    paired = cal._fit_cpu_per_core(rows + [_cpu(2, "a", "ik_llama.cpp", "Q4_K_M", 150)])
    assert paired["cpu-per-core:e:ik_llama.cpp"] == pytest.approx(3.0)


def test_fused_attention_engines_pay_no_attention_factor():
    # β (attention at a fraction of matmul speed) is fitted on llama.cpp rows; vLLM/SGLang run FlashAttention.
    m = cal.CalibrationModel({}, {"prefill": {}}, {"prefill": {}}, {}, {"prefill": 0}, {"cuda": 8.0})
    assert m.attention_beta({"accel": "cuda", "engine": "llama.cpp"}) == 8.0
    assert m.attention_beta({"accel": "cuda", "engine": "ik_llama.cpp"}) == 8.0
    assert m.attention_beta({"accel": "cuda", "engine": "vllm"}) == 1.0
    assert m.attention_beta({"accel": "metal", "engine": "mlx"}) == 1.0


def test_decode_groups_of_user_collections_weigh_half_in_shrinkage():
    # Two leaderboard rows (quality 0.5 each) pull a group toward its parent like one log-backed row would.
    rows = [_row(i, 1000, 4.0, 100.0) for i in range(2)]
    rows = [CalRow(**{**r.__dict__, "source_set": "localmaxxing-leaderboard"}) for r in rows]
    groups = cal._fit_groups("decode", rows, [0.5, 0.5])
    g = groups[("gpu",)]
    assert (g.n, g.w) == (2, pytest.approx(1.0))
    assert cal._fit_groups("prefill", rows, [0.5, 0.5])[("gpu",)].w == 2  # prefill: rows count as rows
