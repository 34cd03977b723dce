"""The one step model: MoE expert coverage, KV reads, tensor parallel, batched calibration, robust fit.

Hand-computed values are worked out in the comments next to each assertion.
"""

from __future__ import annotations

import math
import time

import pytest

from advisor.calibration import CalibrationModel, CalRow, _Group, bounded, fit, fit_batched, robust_center
from advisor.models import ModelSpec
from advisor.perf import (
    StepModel,
    expert_coverage,
    predict,
    predict_situation,
    predict_step,
    tp_comm_s,
    weight_bytes_step,
    with_moe,
)
from advisor.perf.step import interconnect_gbs, moe_split_bytes
from knowledge import catalog

GPT_OSS_20B = ModelSpec(id="t/gpt-oss-20b", params_b=20.91, active_params_b=3.6, experts=32, experts_per_token=4,
                        n_layers=24, hidden_size=2880)
DENSE_8B = ModelSpec(id="t/dense-8b", params_b=8.0, n_layers=32, hidden_size=4096, vocab_size=128256)


# ----------------------------------------------------------------------------- expert coverage
def test_expert_coverage_by_hand():
    # 1 − (1 − 4/32)^8 = 1 − 0.875^8 = 1 − 0.343609 = 0.656391
    assert expert_coverage(32, 4, 8) == pytest.approx(0.656391, abs=1e-6)
    # batch 1 touches exactly k/E: 8 of 128 = 0.0625
    assert expert_coverage(128, 8, 1) == pytest.approx(0.0625)
    # 32 tokens, 8 of 128: 1 − 0.9375^32 = 1 − e^(32 ln 0.9375) = 1 − 0.12679 = 0.87321
    assert expert_coverage(128, 8, 32) == pytest.approx(0.87321, abs=1e-5)
    with pytest.raises(ValueError):
        expert_coverage(8, 9, 1)


def test_moe_split_and_step_bytes_by_hand():
    # gpt-oss-20b at 8 bpw (1 byte per weight): routed R = (20.91 − 3.6) / (1 − 4/32) = 19.782857 B params,
    # dense D = 3.6 − 19.782857 × 0.125 = 1.127143 B params.
    dense, routed, ke = moe_split_bytes(GPT_OSS_20B, 8.0)
    assert (dense, routed, ke) == (pytest.approx(1.127143e9, rel=1e-6), pytest.approx(19.782857e9, rel=1e-6), 0.125)
    # batch 1 reads the active parameters only: 3.6 GB
    assert weight_bytes_step(GPT_OSS_20B, 8.0, 1) == pytest.approx(3.6e9)
    # batch 8: D + R × 0.656391 = 1.127143 + 12.985292 = 14.112435 GB (3.9× batch 1, not 1×)
    assert weight_bytes_step(GPT_OSS_20B, 8.0, 8) == pytest.approx(14.112435e9, rel=1e-6)
    # a huge batch reads every weight: the total 20.91 GB
    assert weight_bytes_step(GPT_OSS_20B, 8.0, 10_000) == pytest.approx(20.91e9, rel=1e-6)
    # a dense model reads the same bytes at any batch
    assert weight_bytes_step(DENSE_8B, 8.0, 1) == weight_bytes_step(DENSE_8B, 8.0, 64)


def test_moe_batches_stop_being_cheap_sooner():
    # MoE: dense 1 GB + routed 16 GB with k/E = 1/8, X = 100 GB/s, no KV, no fixed cost.
    moe = StepModel(dense_bytes=1e9, routed_bytes=16e9, expert_fraction=0.125, kv_bytes_per_seq=0.0,
                    bw_bytes_per_s=100e9, t0_s=0.0, flops_per_seq=0.0, flops_per_s=0.0)
    # batch 1: (1 + 16/8) GB / 100 GB/s = 30 ms → 33.3 tok/s
    assert moe.step_s(1) == pytest.approx(0.03)
    # batch 8: (1 + 16 × 0.656391) / 100 = 115.02 ms → 69.55 tok/s aggregate
    assert moe.step_s(8) == pytest.approx(0.1150226, rel=1e-6)
    assert moe.aggregate_tps(8) == pytest.approx(8 / 0.1150226, rel=1e-6)
    # a dense model with the same 3 GB per token would give 8 / 0.03 = 266.7 tok/s at batch 8
    dense = StepModel(dense_bytes=3e9, routed_bytes=0.0, expert_fraction=0.0, kv_bytes_per_seq=0.0,
                      bw_bytes_per_s=100e9, t0_s=0.0, flops_per_seq=0.0, flops_per_s=0.0)
    assert dense.aggregate_tps(8) == pytest.approx(266.666667)
    assert moe.aggregate_tps(8) < 0.3 * dense.aggregate_tps(8)
    # knee: shared 1 GB / 100 GB/s = 10 ms; per extra token 16 × 1/8 GB / 100 = 20 ms → 0.5 (MoE) vs inf (dense)
    assert moe.knee() == pytest.approx(0.5)
    assert math.isinf(dense.knee())


def test_kv_reads_and_batched_factor():
    # 4 GB weights, 0.5 GB KV per sequence, 200 GB/s, 1 ms fixed: b = 4 → (4 + 2)/200 + 0.001 = 31 ms
    s = StepModel(dense_bytes=4e9, routed_bytes=0.0, expert_fraction=0.0, kv_bytes_per_seq=0.5e9,
                  bw_bytes_per_s=200e9, t0_s=0.001, flops_per_seq=16e9, flops_per_s=50e12, batched_slope=-0.1)
    assert s.physics_s(4) == pytest.approx(0.031)
    # calibrated factor 4^−0.1 = 0.870551: step 31 / 0.870551 = 35.6096 ms; batch 1 is never scaled
    assert s.batched_factor(4) == pytest.approx(4 ** -0.1)
    assert s.step_s(4) == pytest.approx(0.031 / 4 ** -0.1)
    assert s.step_s(1) == pytest.approx((4e9 + 0.5e9) / 200e9 + 0.001)
    # compute-bound far out: b = 4096 → bandwidth (4 + 2048)/200 = 10.26 s vs compute 4096 × 16e9 / 50e12 = 1.31 s
    assert s.physics_s(4096) == pytest.approx((4e9 + 4096 * 0.5e9) / 200e9 + 0.001)


# ----------------------------------------------------------------------------- tensor parallel
def test_tensor_parallel_all_reduce_by_hand():
    m = ModelSpec(id="t/70b", params_b=70.0, n_layers=80, hidden_size=8192)
    link, desc = interconnect_gbs("pcie4", 16)
    assert link == pytest.approx(31.504) and "x16" in desc
    # 512 tokens × 8192 × 2 B × 2(N−1)/N (N = 2) = 8.388608 MB over 31.504 × 0.7 GB/s = 380.39 µs, + 15 µs latency;
    # 2 all-reduces × 80 layers = 160 × 395.39 µs = 63.26 ms
    assert tp_comm_s(m, 512, 2, link) == pytest.approx(160 * (15e-6 + 8388608 / (31.504e9 * 0.7)), rel=1e-9)
    assert tp_comm_s(m, 512, 2, link) == pytest.approx(0.06326, abs=1e-4)
    assert tp_comm_s(m, 512, 1, link) == 0.0
    assert interconnect_gbs("pcie3", 4)[0] == pytest.approx(3.94)  # 4 lanes × 0.985 GB/s


def test_tensor_parallel_beats_layer_split_on_decode_but_pcie_x4_hurts_prefill(store):
    hw = catalog.resolve_hardware(store, "2x RTX 4090").value
    m = catalog.resolve_model(store, "qwen2.5 32b").value
    q = catalog.resolve_quant(store, "Q4_K_M").value
    kw = dict(hardware=hw, model=m, quant=q, prompt_tokens=4000, gen_tokens=200)
    split = predict(store, layout="layer_split", **kw)
    tp_nv = predict(store, layout="tensor_parallel", interconnect="nvlink-3090", **kw)
    tp_x4 = predict(store, layout="tensor_parallel", interconnect="pcie3", pcie_lanes=4, **kw)
    assert split.hardware["layout"] == "layer_split" and tp_x4.hardware["layout"] == "tensor_parallel"
    assert tp_nv.decode_tps > 1.3 * split.decode_tps  # each GPU reads half the weights per step
    assert tp_x4.prefill_tps < tp_nv.prefill_tps  # the all-reduces of 4000 tokens over 3.9 GB/s cost
    assert any("all-reduces" in a and "PCIe 3.0 x4" in a for a in tp_x4.assumptions)


# ----------------------------------------------------------------------------- predict
def test_catalog_moe_fields_come_from_the_seed(store):
    m = with_moe(catalog.resolve_model(store, "qwen3 30b a3b").value)
    assert (m.experts, m.experts_per_token, m.shared_experts) == (128, 8, 0)
    assert "config.json" in m.moe_source_url
    nxt = with_moe(catalog.resolve_model(store, "qwen3-next-80b-a3b").value)
    assert (nxt.experts, nxt.experts_per_token, nxt.shared_experts) == (512, 10, 1)
    # share of weights in routed experts: (80 − 3) / (1 − 10/512) / 80 = 0.98167
    assert nxt.expert_share == pytest.approx(77 / (1 - 10 / 512) / 80)
    assert with_moe(catalog.resolve_model(store, "llama 3.1 8b").value).experts is None


def test_predict_moe_batch_reads_more_experts(store):
    hw = catalog.resolve_hardware(store, "M2 Ultra 76-core").value
    m = catalog.resolve_model(store, "qwen3 30b a3b").value
    q = catalog.resolve_quant(store, "Q4_K_M").value
    p1, s1 = predict_step(store, hardware=hw, model=m, quant=q, concurrency=1)
    p16, s16 = predict_step(store, hardware=hw, model=m, quant=q, concurrency=16)
    # 16 tokens touch 1 − (1 − 1/16)^16 = 64.4 % of the experts: the step reads several times the batch-1 weights
    assert s16.weight_bytes(16) / s16.weight_bytes(1) > 4
    assert p16.decode_tps < 16 * p1.decode_tps * 0.5
    assert any("touch about 64%" in a for a in p16.assumptions)
    assert p16.decode_tps <= p16.decode_ceiling_tps


def test_many_users_on_a_datacenter_gpu_assume_vllm(store):
    hw = catalog.resolve_hardware(store, "H100 PCIe").value
    m = catalog.resolve_model(store, "llama 3.1 8b").value
    q = catalog.resolve_quant(store, "Q4_K_M").value
    many = predict(store, hardware=hw, model=m, quant=q, concurrency=16)
    assert many.backend == "vllm" and any("assumed to be served by vLLM" in a for a in many.assumptions)
    one = predict(store, hardware=hw, model=m, quant=q, concurrency=1)
    assert one.backend.startswith("llama.cpp")
    stated = predict(store, hardware=hw, model=m, quant=q, concurrency=16, backend="llama.cpp")
    assert stated.backend.startswith("llama.cpp")


def test_predict_is_fast(store):
    hw = catalog.resolve_hardware(store, "RTX 4090").value
    m = catalog.resolve_model(store, "llama 3.1 8b").value
    q = catalog.resolve_quant(store, "Q4_K_M").value
    predict(store, hardware=hw, model=m, quant=q)
    t = time.perf_counter()
    for b in range(1, 21):
        predict(store, hardware=hw, model=m, quant=q, concurrency=b)
    assert (time.perf_counter() - t) / 20 < 0.05


# ----------------------------------------------------------------------------- fit
def test_robust_center_down_weights_a_source_that_disagrees_with_many():
    # source c: 10 rows at −2 (slow runs); a and b, 3 rows each, agree near 0.
    vals = [(0.0, "a")] * 3 + [(0.1, "b")] * 3 + [(-2.0, "c")] * 10
    # plain median of the 16 rows is −2; one vote per source gives 0, and c's rows then count 1/17 each:
    # weights a 3, b 3/1.04, c 10/17 → the weighted median is 0.
    assert robust_center(vals) == pytest.approx(0.0)
    assert robust_center([(0.3, "a"), (0.5, "a"), (0.4, "a")]) == pytest.approx(0.4)  # one source: its median


def test_robust_center_counts_each_machine_once():
    # One source, one card swept over 40 models at log-eff −1.0; five other cards, one run each, near 0.
    # Per row the sweep wins (median −1.0); per machine the five cards do: weights 40 × 1/40 vs 5 × 1.
    vals = [(-1.0, "s", "sweep")] * 40 + [(x, "s", f"m{i}") for i, x in enumerate((-0.1, 0.0, 0.05, 0.1, 0.2))]
    assert robust_center(vals) == pytest.approx(0.0)
    # Within one machine all its rows count alike: a 1-row source does not outvote a 17-row one.
    one = [(math.log(0.95), "big", "r9700")] * 17 + [(math.log(0.21), "odd", "r9700")]
    assert math.exp(robust_center(one)) == pytest.approx(0.95)


def test_gpu_rows_far_below_the_roofline_do_not_calibrate():
    from advisor.calibration import GPU_MIN_DECODE_EFF, min_decode_eff

    assert GPU_MIN_DECODE_EFF == pytest.approx(0.12)
    assert min_decode_eff(_row(1)) == pytest.approx(0.12)  # a CUDA card at < 12 % of its roofline: spilled
    cpu = _row(2)
    cpu.accel, cpu.kind = "cpu", "cpu"
    assert min_decode_eff(cpu) == pytest.approx(0.01)
    # A fit over a good card plus a row at 5 % of the roofline keeps the good card's efficiency.
    good = [_row(i, hw="a") for i in range(6)]
    slow = _row(99, hw="b")
    slow.decode_tps = 10.0  # 5 GB per token at 1000 GB/s: roofline 200 tok/s; 10 tok/s is 5 % of it
    cal = fit(good + [slow])
    assert cal.n_rows["decode"] == 6


def _row(i: int, hw: str = "h", src: str = "s") -> CalRow:
    return CalRow(result_id=f"r{i:05d}", hw_id=hw, kind="discrete_gpu", family="", accel="cuda", engine="llama.cpp",
                  quant="Q4_K_M", multi=False, bandwidth_gbs=1000.0, tflops=100.0, decode_bytes=5e9,
                  prefill_flops=16e9, decode_tps=100.0, prefill_tps=3000.0, params_active_b=8.0, source_set=src,
                  extra={"model": "m"})


def test_bounded_keeps_a_few_rows_per_cell():
    rows = [_row(i) for i in range(500)] + [_row(1000 + i, hw="g") for i in range(3)]
    kept = bounded(rows, per_cell=6, total=100)
    assert len(kept) == 9  # 6 of the 500-row sweep, all 3 of the small cell
    assert sum(r.hw_id == "g" for r in kept) == 3
    assert len(bounded([_row(i, hw=f"h{i}") for i in range(300)], per_cell=6, total=100)) == 100


def test_batched_slope_by_hand():
    # One batch measured 1.2× the step model at b = 16: slope ln 1.2 / ln 16 = 0.065757.
    items = [({"engine": "llama.cpp", "accel": "cuda", "kind": "datacenter_gpu", "hw_id": "x"}, 16, 1.2, "s")]
    groups = fit_batched(items)
    assert groups[("llama.cpp", "gpu", "x")].log_eff == pytest.approx(math.log(1.2) / math.log(16))
    cal = CalibrationModel({}, {"decode": {}, "prefill": {}}, {"decode": {}, "prefill": {}}, {}, {}, batched=groups)
    slope, note = cal.batched_slope({"engine": "llama.cpp", "accel": "cuda", "kind": "datacenter_gpu", "hw_id": "x"})
    # One sweep on x: x's own level needs MACHINE_SWEEPS = 2, so four levels (all, llama.cpp, llama.cpp/gpu,
    # kind), each one sweep (w = 1) shrunk with k = 2: s × (1 − (2/3)^4) = s × 0.802469
    assert slope == pytest.approx(math.log(1.2) / math.log(16) * (1 - (2 / 3) ** 4))
    assert "llama.cpp / gpu / datacenter_gpu" in note
    # Three rows of the same sweep are still one vote (w = 1); a second source on x makes two (w = 2), and
    # x's own level counts: five levels, each w = 2: s × (1 − (1/2)^5) = s × 0.96875
    same = fit_batched(items * 3)
    assert same[("llama.cpp", "gpu", "x")].n == 3
    assert same[("llama.cpp", "gpu", "x")].w == 1
    two = fit_batched(items + [(items[0][0], 16, 1.2, "t")])
    assert two[("llama.cpp", "gpu", "x")].w == 2
    cal2 = CalibrationModel({}, {"decode": {}, "prefill": {}}, {"decode": {}, "prefill": {}}, {}, {}, batched=two)
    slope2, note2 = cal2.batched_slope({"engine": "llama.cpp", "accel": "cuda", "kind": "datacenter_gpu", "hw_id": "x"})
    assert slope2 == pytest.approx(math.log(1.2) / math.log(16) * (1 - 0.5 ** 5))
    assert "llama.cpp / gpu / x" in note2
    none = CalibrationModel({}, {"decode": {}, "prefill": {}}, {"decode": {}, "prefill": {}}, {}, {})
    assert none.batched_slope({"engine": "mlx", "accel": "metal", "kind": "apple_soc", "hw_id": "y"})[0] == 0.0
    assert isinstance(groups[("all",)], _Group)


def test_predict_situation_reads_count_interconnect_and_tensor_parallel(store):
    from advisor.understand.situation import Machine, Situation, Workload

    one = catalog.resolve_hardware(store, "RTX 4090").value
    m = catalog.resolve_model(store, "qwen2.5 32b").value
    q = catalog.resolve_quant(store, "Q4_K_M").value
    wl = Workload(prompt_tokens=2000, gen_tokens=300, users=2)
    tp = Situation(machine=Machine(hardware=one, count=2, interconnect="pcie3", pcie_lanes=4, tensor_parallel=2),
                   model=m, quant=q, workload=wl, engine="vllm")
    split = Situation(machine=Machine(hardware=one, count=2, layout="layer_split"), model=m, quant=q, workload=wl)
    p_tp, p_split = predict_situation(store, tp), predict_situation(store, split)
    assert p_tp.hardware["n_devices"] == 2 and p_tp.hardware["layout"] == "tensor_parallel"
    assert p_split.hardware["layout"] == "layer_split" and p_split.concurrency == 2
    assert any("PCIe 3.0 x4" in a for a in p_tp.assumptions)
    # the keyword predict gives the same numbers for the same inputs
    hw2 = catalog.resolve_hardware(store, "2x RTX 4090").value
    kw = predict(store, hardware=hw2, model=m, quant=q, prompt_tokens=2000, gen_tokens=300, concurrency=2,
                 layout="layer_split")
    assert kw.decode_tps == pytest.approx(p_split.decode_tps) and kw.prefill_tps == pytest.approx(p_split.prefill_tps)
    # changes on top of the situation
    assert predict_situation(store, split, concurrency=8).concurrency == 8


def test_fit_rows_are_bounded_whatever_the_store_holds():
    from advisor.perf.fit import MAX_FIT_ROWS, bounded_rows

    def row(i: int, src: str, prompt: int) -> dict:
        return {"result_id": f"r{i:06d}", "source_set": src, "base_hw_id": "h", "backend": "llama.cpp-cuda",
                "model": "m", "quant": "Q4_K_M", "prompt_tokens": prompt, "depth": 0}

    # a 500-point prompt sweep (64 … 32,000 tokens) keeps at most 8 rows per octave (2^6 … 2^14): octaves 6-8
    # hold 1, 2 and 4 points, 9-14 hold 8 or more → 1 + 2 + 4 + 6 × 8 = 55 rows, every octave kept
    sweep = [row(i, "s", 64 + i * 64) for i in range(500)]
    kept = bounded_rows(sweep, per_cell=8, total=MAX_FIT_ROWS)
    assert len(kept) == 55 and len({int(math.log2(r["prompt_tokens"])) for r in kept}) == 9
    # 20,000 distinct cells are capped at the total
    many = [row(i, f"s{i}", 512) for i in range(20_000)]
    assert len(bounded_rows(many, per_cell=8, total=MAX_FIT_ROWS)) == MAX_FIT_ROWS


def test_rows_whose_backend_names_no_api_calibrate_on_the_hardware_default(store):
    # "llama.cpp (llama-server, via llmfit bench)" names no GPU API: on a GeForce it is CUDA, on a Mac Metal,
    # on a Radeon ROCm (as advisor.understand.engine.engine_accel reads it when predicting).
    from advisor.perf import build_cal_rows

    accels = {(r.hw_id, r.engine): r.accel for r in build_cal_rows(store) if r.source_set == "llmfit-community"}
    assert accels[("nvidia-gtx-1050-ti", "llama.cpp")] == "cuda"
    assert accels[("apple-m4-pro", "llama.cpp")] == "metal"
    assert accels[("amd-rx-7900-xt", "llama.cpp")] == "rocm"
    assert "other" not in set(accels.values())


def test_cpu_compute_without_a_flops_spec_scales_with_cores_and_their_simd_peak(store):
    # A CPU has no FLOPS spec: its prefill compute is fitted per reference core (32 FP32 FLOP/cycle at 3.0 GHz =
    # 96 GFLOP/s), not per GB/s of memory. A Zen+ core (2 x 128-bit FMA = 16 FLOP/cycle at ~3.6 GHz = 57.6 GFLOP/s)
    # is 0.6 reference cores; a Zen 4 desktop core (32 FLOP/cycle at ~5.0 GHz = 160 GFLOP/s) is 1.667.
    from advisor.perf import calibration_model
    from advisor.perf.prediction import resolve_compute
    from knowledge import catalog

    cal = calibration_model(store)
    per_core = cal.compute_per_bw["cpu-per-core"]
    four = catalog.get_hardware(store, "amd-ryzen-5-3400g")  # 4 Zen+ cores
    sixteen = catalog.get_hardware(store, "amd-ryzen-9-7950x")  # 16 Zen 4 cores
    tf4, why = resolve_compute(four, "cpu", cal)
    tf16, why16 = resolve_compute(sixteen, "cpu", cal)
    assert tf4 == pytest.approx(4 * 0.6 * per_core) and tf16 == pytest.approx(16 * 160 / 96 * per_core)
    assert why.startswith("FITTED") and "4 cores" in why and "16 FP32 FLOP/cycle × ~3.6 GHz" in why
    assert "1.67× the reference core" in why16
    assert 0.005 < per_core < 0.2  # TFLOP/s per core achieved in llama.cpp prefill (5–200 GFLOP/s)


def test_server_batches_fit_quantized_formats_apart_from_bf16():
    # vLLM at batch 8: BF16 measured 1.0× the step model, W4A16 0.6× (its Marlin GEMMs do not speed up by the byte
    # ratio). Server keys split by format class below the accelerator: six levels, each n = 1 shrunk with k = 2.
    scen = {"engine": "vllm", "accel": "cuda", "kind": "datacenter_gpu", "hw_id": "a100"}
    items = [({**scen, "quant": "BF16"}, 8, 1.0, "s"), ({**scen, "quant": "W4A16"}, 8, 0.6, "s")]
    groups = fit_batched(items)
    s_q = math.log(0.6) / math.log(8)
    assert groups[("server", "gpu", "q:quant", "a100")].log_eff == pytest.approx(s_q)
    assert groups[("server", "gpu", "q:float", "a100")].log_eff == pytest.approx(0.0)
    cal = CalibrationModel({}, {"decode": {}, "prefill": {}}, {"decode": {}, "prefill": {}}, {}, {}, batched=groups)
    # all and server and server/gpu pool both rows (n = 2, centre: the weighted median, s_q); then n = 1 levels.
    slope_q, note = cal.batched_slope({**scen, "quant": "W4A16"})
    slope_f, _ = cal.batched_slope({**scen, "quant": "BF16"})
    assert "q:quant" in note
    assert slope_q < slope_f <= 0.0
    assert slope_q == pytest.approx(s_q, rel=0.2)
    # llama.cpp keeps one chain for every format (its batched rows are GGUF formats only).
    assert fit_batched([({"engine": "llama.cpp", "accel": "cuda", "kind": "discrete_gpu", "hw_id": "g", "quant": "Q4_K_M"},
                         4, 0.9, "s")]).keys() == {("all",), ("llama.cpp",), ("llama.cpp", "gpu"),
                                                  ("llama.cpp", "gpu", "discrete_gpu"), ("llama.cpp", "gpu", "g")}


def test_rows_that_cannot_fit_their_machine_do_not_calibrate(store):
    # A 27B at ~2 bits on a 12 GB RTX 4070 at 131k tokens of context: 7 GB of weights + 8.6 GB of f16 KV
    # (16 full-attention layers × 4 KV heads × 256 × 2 × 2 B = 64 KiB per token) > 12 GiB: the run spilled.
    from advisor.perf.fit import _spilled, population_rows, row_model

    rows = [r for r in population_rows(store) if r["hw_id"] == "nvidia-rtx-4070" and r["model"] == "qwen3.6-27b"]
    by_depth = {}
    for r in rows:
        q = catalog.resolve_quant(store, r["quant"]).value
        by_depth.setdefault(r["depth"], []).append(
            _spilled(store, r, row_model(store, r), q.bits_per_weight, r["depth"] + r["prompt_tokens"] + (r["gen_tokens"] or 128)))
    assert by_depth[131072] == [True] * len(by_depth[131072])
    assert by_depth[32768] == [False] * len(by_depth[32768])  # ~2.7-bit weights + 2.1 GB of KV: fits in 12 GiB
    from advisor.perf import build_cal_rows

    cal_rows = build_cal_rows(store, rows)  # still scored by bench/accuracy.py; fit() leaves them out
    assert sorted(r.extra["spilled"] for r in cal_rows) == sorted(sum(by_depth.values(), []))
    assert fit(cal_rows).n_rows["decode"] == sum(1 for r in cal_rows if not r.extra["spilled"] and r.decode_tps)
    # 70B Q4_K_M over two 24 GB cards at 8k: 43 GB + 2.7 GB < 2 × 24 GiB, kept (memory is GiB, not 10^9 B).
    r2 = [r for r in population_rows(store) if r["hw_id"] == "nvidia-rtx-3090x2" and r["model"] == "llama-3-70b"
          and r["quant"] == "Q4_K_M" and r["prompt_tokens"] == 8192]
    q = catalog.resolve_quant(store, "Q4_K_M").value
    assert r2 and not _spilled(store, r2[0], row_model(store, r2[0]), q.bits_per_weight, 8192 + 512)


def test_batches_of_a_2023_build_do_not_calibrate_todays_batched_factor(store):
    # llama.cpp PR #3545's V100 table (Oct 2023 build, before the batched-attention kernels): B=2 is slower
    # than B=1. Predictions assume a current build, so those rows stay out of the batched fit.
    from advisor.perf.fit import _batched_items, calibration_model, population_rows, row_old_build

    rows = [r for r in population_rows(store) if r["source_set"] == "llama.cpp-pr-batched-bench"]
    assert rows and all(row_old_build(r) for r in rows)
    assert _batched_items(store, rows, calibration_model(store)) == []
    assert not row_old_build({"backend": "llama.cpp-cuda (b6700)", "notes": "2025 build"})


def test_batched_factor_is_held_beyond_the_largest_measured_batch():
    from advisor.perf.step import StepModel

    s = StepModel(dense_bytes=16e9, routed_bytes=0, expert_fraction=0, kv_bytes_per_seq=1e6, bw_bytes_per_s=1.7e12,
                  t0_s=0.003, flops_per_seq=16e9, flops_per_s=9e13, batched_slope=-0.1, batched_max_batch=32)
    assert s.batched_factor(1) == 1.0
    assert s.batched_factor(16) == pytest.approx(16 ** -0.1)
    assert s.batched_factor(256) == pytest.approx(32 ** -0.1)  # held at b = 32, not 256 ** -0.1 = 0.574
    free = StepModel(dense_bytes=16e9, routed_bytes=0, expert_fraction=0, kv_bytes_per_seq=1e6, bw_bytes_per_s=1.7e12,
                     t0_s=0.003, flops_per_seq=16e9, flops_per_s=9e13, batched_slope=-0.1)
    assert free.batched_factor(256) == pytest.approx(256 ** -0.1)


def test_a_model_larger_than_a_macs_whole_memory_pages_from_disk(store):
    # Gemma 3 27B at Q4_K_M needs ~18 GB. A 24 GB Air holds it in RAM (unified bandwidth, ~4 tok/s); a 16 GB or
    # 8 GB one pages the rest from the SSD every token: the speed collapses and the prediction says why.
    from advisor.perf.prediction import SWAP_READ_GBS
    from knowledge import catalog

    m = catalog.resolve_model(store, "gemma 3 27b").value
    q = catalog.resolve_quant(store, "q4_k_m").value
    air = catalog.resolve_hardware(store, "MacBook Air M2").value
    speed = {}
    for gb in (24, 16, 8):
        p = predict(store, hardware=air.model_copy(update={"memory_gb": gb}), model=m, quant=q)
        speed[gb] = p.decode_tps
        assert any("paged in from the SSD" in a for a in p.assumptions) == (gb < 24)
    assert 3 < speed[24] < 6
    assert speed[16] < 0.2 * speed[24] and speed[8] < speed[16]
    assert SWAP_READ_GBS == pytest.approx(2.0)


def test_generic_model_borrows_a_stable_reference_on_ties():
    # Several 8B catalog models (Llama 3.1 8B, Qwen3 8B) tie on size: the reference is the first by id,
    # whatever order the catalog was built in (the fit used to change between runs).
    from knowledge import catalog
    from knowledge.store import Store

    store = Store(":memory:")
    a = catalog.generic_model(store, "aya-expanse-8b", 8.0)
    dense = sorted((m for m in catalog.all_models(store).values() if m.params_b == 8.0 and not m.active_params_b
                    and m.n_layers and m.n_kv_heads and m.head_dim and m.kv_layers is None
                    and any(t in m.id.lower() for t in ("llama-3", "qwen2.5", "qwen3-"))), key=lambda m: m.id)
    assert dense, "the catalog should hold an 8B Llama 3 / Qwen model"
    assert f"attention shape of {dense[0].id} " in a.notes
    assert (a.n_layers, a.n_kv_heads, a.head_dim) == (dense[0].n_layers, dense[0].n_kv_heads, dense[0].head_dim)


def test_batched_bench_rows_without_s_pp_are_pure_decode():
    # A llama-batched-bench row whose source did not tabulate S_PP still reports S_TG (pure decode);
    # a server row with only output tok/s counts the interleaved prefills.
    from types import SimpleNamespace

    from advisor.perf.fit import modelled_batch_tps

    p = SimpleNamespace(decode_tps=20.0, prefill_tps=10.0)
    bench = {"prefill_tps": None, "prompt_tokens": 128, "gen_tokens": 128,
             "notes": "llama-batched-bench, MAINLINE llama.cpp; decode_tps = S_TG, AGGREGATE over B=2"}
    server = {"prefill_tps": None, "prompt_tokens": 128, "gen_tokens": 128, "notes": "vllm bench serve, output tok/s"}
    assert modelled_batch_tps(p, bench) == 20.0
    assert modelled_batch_tps(p, server) == pytest.approx(1 / (1 / 20 + 1 / 10))


def test_sxm_boards_default_to_their_nvlink_and_pcie_cards_do_not():
    from advisor.perf.step import LINK_GBS, default_interconnect

    assert default_interconnect("nvidia-h100-sxmx8", "8× H100 SXM5 80GB", "NVIDIA Hopper") == "nvlink-h100"
    assert default_interconnect("nvidia-a100-80gb-sxm", "A100 80GB SXM4", "NVIDIA Ampere") == "nvlink-a100"
    assert default_interconnect("nvidia-b200x8", "8× NVIDIA B200 (HGX/DGX)", "NVIDIA Blackwell") == "nvlink-b200"
    assert default_interconnect("nvidia-h100-pciex2", "2× H100 PCIe 80GB", "NVIDIA Hopper") is None
    assert default_interconnect("nvidia-rtx-4090x2", "2× RTX 4090", "NVIDIA Ada") is None
    assert LINK_GBS["nvlink-h100"] == 450.0 and LINK_GBS["nvlink-b200"] == 900.0


def test_eight_h100_sxm_prefill_scales_over_nvlink():
    # 8 H100 SXM in tensor parallel (vLLM) on NVLink: the all-reduces no longer cap prefill at ~1.7× one GPU.
    from knowledge import catalog
    from knowledge.store import Store

    store = Store(":memory:")
    m = catalog.resolve_model(store, "llama 3.3 70b").value
    q = catalog.resolve_quant(store, "FP8").value
    one = predict(store, hardware=catalog.get_hardware(store, "nvidia-h100-sxm"), model=m, quant=q, backend="vllm",
                  prompt_tokens=2000)
    eight = predict(store, hardware=catalog.get_hardware(store, "nvidia-h100-sxmx8"), model=m, quant=q,
                    backend="vllm", prompt_tokens=2000)
    assert eight.prefill_tps > 4 * one.prefill_tps
    assert any("NVLink" in a for a in eight.assumptions)
    assert eight.prefill_tps <= eight.prefill_ceiling_tps and one.prefill_tps <= one.prefill_ceiling_tps


def test_a_server_cpu_family_range_is_read_at_its_middle():
    from advisor.models import Hardware
    from advisor.perf.fit import cpu_core_count

    def hw(cores: str) -> Hardware:
        return Hardware(id="x", name="x", kind="cpu", bandwidth_gbs=100, cpu_cores=cores)

    assert cpu_core_count(hw("8-60")) == 34 and cpu_core_count(hw("6;8;12;16")) == 8  # bins: the middle (lower of two), not the smallest part
    assert cpu_core_count(hw("16")) == 16 and cpu_core_count(hw("")) == 0


def test_kv_caches_that_do_not_fit_queue_sequences_instead_of_spilling_weights():
    # 8B FP16 on one H100 with vLLM at a 32k context: 32 caches (~141 GB) do not fit next to 16 GB of weights.
    # The server runs as many as fit and queues the rest; the weights never leave the GPU.
    from knowledge import catalog
    from knowledge.store import Store

    store = Store(":memory:")
    kw = dict(hardware=catalog.get_hardware(store, "nvidia-h100-sxm"), model=catalog.resolve_model(store, "llama 3.1 8b").value,
              quant=catalog.resolve_quant(store, "FP16").value, backend="vllm", depth=32768)
    one, eight, many = (predict(store, concurrency=c, **kw) for c in (1, 8, 32))
    assert many.decode_tps >= eight.decode_tps > one.decode_tps
    assert any("wait their turn" in a for a in many.assumptions)
    assert not any("run from system RAM" in a for a in many.assumptions)


def test_moe_fixed_cost_is_fitted_paired_within_machines():
    # Three machines, each at 70 % of its roofline on a dense 5 GB/token model; its MoE model (2 GB/token
    # active) takes the same 70 % on its bytes plus 2 ms per token. Paired within machines, the fit finds 2 ms.
    from advisor.calibration import MOE_T0_KEY, _fit_moe_t0, moe_t0_applies, row_t0

    rows = []
    for i, bw in enumerate((256.0, 645.0, 1000.0)):
        d = _row(10 * i, hw=f"m{i}")
        d.bandwidth_gbs, d.decode_bytes = bw, 5e9
        d.decode_tps = 1.0 / (5e9 / (bw * 1e9 * 0.7))
        m = _row(10 * i + 1, hw=f"m{i}")
        m.bandwidth_gbs, m.decode_bytes, m.moe = bw, 2e9, True
        m.decode_tps = 1.0 / (2e9 / (bw * 1e9 * 0.7) + 0.002)  # e.g. 645 GB/s: 4.43 ms + 2 ms → 155.5 tok/s
        rows += [d, m]
    assert _fit_moe_t0(rows, {"gpu": 0.0}) == pytest.approx(0.002)
    assert _fit_moe_t0(rows[:4], {"gpu": 0.0}) == 0.0  # two machines with both: too few pairs
    t0s = {"gpu": 0.001, MOE_T0_KEY: 0.002}
    assert row_t0(t0s, {"accel": "rocm", "kind": "discrete_gpu", "moe": True, "engine": "llama.cpp"}) == pytest.approx(0.003)
    assert row_t0(t0s, {"accel": "rocm", "kind": "discrete_gpu", "moe": False, "engine": "llama.cpp"}) == pytest.approx(0.001)
    assert not moe_t0_applies({"accel": "cuda", "moe": True, "engine": "vllm"})  # fused-MoE servers: not fitted
    assert not moe_t0_applies({"accel": "cpu", "moe": True, "engine": "llama.cpp"})
    # The fit applies it: a MoE row's predicted rate includes the 2 ms.
    cal = fit(rows * 3)
    assert cal.t0_s[MOE_T0_KEY] == pytest.approx(0.002)
    moe = rows[3]
    assert cal.decode_tps(moe) == pytest.approx(moe.decode_tps, rel=0.05)


# ----------------------------------------------------------------------------- vLLM V0 host work
@pytest.mark.parametrize(("label", "v0"), [
    ("vllm 0.7.3", True), ("vLLM v0.6.1", True), ("vllm==0.5.4", True), ("vllm 0.20.1+transformers-5.8.1", False),
    ("vllm v0.23.0", False), ("vllm 0.8.0", False), ("VLLM 0.10.2", False), ("vllm (version not stated)", False),
    ("vllm", False), ("sglang 0.5.6", False), ("llama.cpp b4000", False)])
def test_vllm_v0_is_read_from_the_engine_label(label, v0):
    from advisor.perf.fit import vllm_v0

    assert vllm_v0(label) is v0


def test_host_work_per_sequence_adds_to_every_step_by_hand():
    # 1 GB of weights at 1 TB/s: 1 ms, no fixed cost; 0.4 ms of host work per sequence: b = 32 → 1 + 12.8 ms
    s = StepModel(dense_bytes=1e9, routed_bytes=0.0, expert_fraction=0.0, kv_bytes_per_seq=0.0,
                  bw_bytes_per_s=1e12, t0_s=0.0, flops_per_seq=1e9, flops_per_s=300e12, host_s_per_seq=0.0004)
    assert s.physics_s(32) == pytest.approx(0.001 + 32 * 0.0004)
    assert s.aggregate_tps(32) == pytest.approx(32 / 0.0138)
    assert s.physics_s(1) == pytest.approx(0.0014)


def test_vllm_v0_host_cost_is_fitted_on_the_stores_v0_batches_and_said(store):
    from advisor.calibration import V0_HOST_KEY
    from advisor.perf import calibration_model

    host = calibration_model(store).t0_s[V0_HOST_KEY]
    # AccelMark's vLLM 0.7.3 runs: a 0.5B model at 32 users runs at a third of its weight-read rate (A6000
    # 1,917 tok/s), an 8B at 8 users near it; 0.3 ms per sequence per step fits both best (grid 0–1 ms; the
    # 24-layer 0.5B's own fixed cost is 24/32 of the kind's, advisor.calibration.layer_scale); 0.25 ms since the
    # round-46 decode calibration (an Apple tier level, one-machine GPU groups weighing a fifth)
    assert host == pytest.approx(0.00025)
    hw = catalog.resolve_hardware(store, "A100 80GB SXM").value
    m = catalog.resolve_model(store, "qwen2.5 0.5b").value
    q = catalog.resolve_quant(store, "BF16").value
    old = predict(store, hardware=hw, model=m, quant=q, concurrency=32, backend="vllm 0.7.3")
    new = predict(store, hardware=hw, model=m, quant=q, concurrency=32, backend="vllm")
    assert any("V0 engine" in a and "~0.25 ms" in a for a in old.assumptions)
    assert not any("V0 engine" in a for a in new.assumptions)
    # AccelMark on this machine: vLLM 0.7.3 2,387 tok/s, vLLM 0.20.1 11,576 tok/s (the same 32 users)
    assert old.decode_tps < 0.5 * new.decode_tps


def test_moe_fixed_cost_of_a_graph_replay_api_is_its_own():
    # Three ROCm machines pay 3 ms per MoE token; one CUDA machine (llama.cpp replays the decode step as a CUDA
    # graph) pays 0.5 ms. The pooled value is 3 ms; CUDA gets its own 0.5 ms; an API with no pair of its own
    # (Vulkan) takes the pooled value.
    from advisor.calibration import GRAPH_APIS, MOE_T0_KEY, _fit_moe_t0s, moe_t0, moe_t0_key, row_t0

    assert GRAPH_APIS == ("cuda",)
    rows = []
    for i, (bw, api, ms) in enumerate(((256.0, "rocm", 3.0), (645.0, "rocm", 3.0), (960.0, "rocm", 3.0), (360.0, "cuda", 0.5))):
        d = _row(10 * i, hw=f"m{i}")
        d.accel, d.bandwidth_gbs, d.decode_bytes = api, bw, 5e9
        d.decode_tps = 1.0 / (5e9 / (bw * 1e9 * 0.7))
        m = _row(10 * i + 1, hw=f"m{i}")
        m.accel, m.bandwidth_gbs, m.decode_bytes, m.moe = api, bw, 2e9, True
        m.decode_tps = 1.0 / (2e9 / (bw * 1e9 * 0.7) + ms / 1000)  # 360 GB/s, CUDA: 7.94 ms + 0.5 ms → 118.5 tok/s
        rows += [d, m]
    t0s = {"gpu": 0.0, **_fit_moe_t0s(rows, {"gpu": 0.0})}
    assert t0s[MOE_T0_KEY] == pytest.approx(0.003)
    assert t0s[moe_t0_key({"accel": "cuda"})] == pytest.approx(0.0005)
    assert moe_t0(t0s, {"accel": "cuda"}) == pytest.approx(0.0005)
    assert moe_t0(t0s, {"accel": "vulkan"}) == pytest.approx(0.003)
    scen = {"accel": "cuda", "kind": "discrete_gpu", "moe": True, "engine": "llama.cpp"}
    assert row_t0(t0s, scen) == pytest.approx(0.0005)
    assert row_t0(t0s, {**scen, "accel": "rocm"}) == pytest.approx(0.003)
    # No CUDA pair: no CUDA key, and CUDA takes the pooled value.
    no_cuda = _fit_moe_t0s(rows[:6], {"gpu": 0.0})
    assert moe_t0_key({"accel": "cuda"}) not in no_cuda
    assert moe_t0(no_cuda, {"accel": "cuda"}) == pytest.approx(0.003)
