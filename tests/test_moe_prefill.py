"""MoE prefill (tokens per expert per step), micro-batch-aware pipelining, generic attention shapes.

Values are hand-computed from the formulas in advisor/calibration/_model.py and advisor/perf/moe.py.
"""

from __future__ import annotations

import math

import pytest

from advisor import service
from advisor.calibration import CalibrationModel, m0_for, pipeline_speedup, prefill_work
from advisor.models import ModelSpec, Scenario
from advisor.perf.fit import _UBATCH
from advisor.perf.moe import moe_prefill_terms, with_moe
from knowledge import catalog
from knowledge.store import Store


@pytest.fixture(scope="module")
def store() -> Store:
    return Store(":memory:")


def test_tokens_per_expert_and_expert_share_qwen3_coder(store):
    m = with_moe(catalog.all_models(store)["Qwen/Qwen3-Coder-30B-A3B-Instruct"])
    share, tokens = moe_prefill_terms(m, 512, "llama.cpp")
    # routed = (30.53 − 3.3) / (1 − 8/128) = 29.045 B; active routed = 29.045 × 8/128 = 1.8153 B; ÷ 3.3
    assert share == pytest.approx(1.8153 / 3.3, rel=1e-3)
    assert tokens == pytest.approx(512 * 8 / 128)  # 32
    assert moe_prefill_terms(m, 4096, "mlx")[1] == pytest.approx(2048 * 8 / 128)  # mlx-lm prefill step 2048
    assert moe_prefill_terms(m, 4096, "llama.cpp", step=2048)[1] == pytest.approx(128)  # -ub 2048
    assert moe_prefill_terms(m, 100, "llama.cpp")[1] == pytest.approx(100 * 8 / 128)  # a short prompt: one step


def test_gpt_oss_120b_has_fewer_tokens_per_expert_than_20b(store):
    ms = catalog.all_models(store)
    big = moe_prefill_terms(with_moe(ms["openai/gpt-oss-120b"]), 512, "llama.cpp")[1]
    small = moe_prefill_terms(with_moe(ms["openai/gpt-oss-20b"]), 512, "llama.cpp")[1]
    assert (big, small) == (pytest.approx(512 * 4 / 128), pytest.approx(512 * 4 / 32))  # 16 and 64


def test_dense_model_has_no_expert_terms(store):
    assert moe_prefill_terms(catalog.all_models(store)["meta-llama/Llama-3.1-8B"], 512, "llama.cpp") == (0.0, 0.0)


def test_moe_without_routing_assumes_8_of_128():
    m = ModelSpec(id="x-35b-a3b", params_b=35.0, active_params_b=3.0)
    share, tokens = moe_prefill_terms(m, 512, "llama.cpp")
    assert tokens == pytest.approx(32)
    assert share == pytest.approx((35 - 3) / (1 - 1 / 16) / 16 / 3)  # 0.7111


def test_prefill_work_adds_the_expert_tile_cost():
    g = {"prefill_flops": 6.6e9, "params_active_b": 3.3, "expert_tokens": 32.0, "expert_flop_share": 0.5,
         "prompt_tokens": 512, "engine": "llama.cpp"}
    assert prefill_work(g, 1.0, 0.0) == pytest.approx(6.6e9)
    # 6.6e9 + 0.5 × 2 × 3.3e9 × 32 / 32
    assert prefill_work(g, 1.0, 32.0) == pytest.approx(6.6e9 + 3.3e9)
    assert prefill_work({**g, "expert_tokens": 128.0}, 1.0, 32.0) == pytest.approx(6.6e9 + 3.3e9 / 4)


def test_m0_own_key_else_pooled_for_gpu_apis():
    m0s = {"gpu:llama.cpp": 96.0, "rocm": 16.0}
    assert m0_for(m0s, {"engine": "llama.cpp", "accel": "rocm"}) == 16.0
    assert m0_for(m0s, {"engine": "llama.cpp", "accel": "cuda"}) == 96.0  # CUDA: no MoE rows of its own
    assert m0_for(m0s, {"engine": "llama.cpp", "accel": "metal"}) == 0.0
    assert m0_for(m0s, {"engine": "mlx", "accel": "metal"}) == 0.0
    assert m0_for(m0s, {"engine": "vllm", "accel": "cuda"}) == 0.0
    cal = CalibrationModel({}, {}, {}, {}, {}, moe_m0=m0s)
    assert cal.expert_m0({"engine": "ik_llama.cpp", "accel": "vulkan"}) == 96.0


def test_layer_split_pipelines_only_whole_micro_batches():
    assert pipeline_speedup(2, 2048) == pytest.approx(4 * 2 / (4 + 2 - 1))  # four 512-token micro-batches
    assert pipeline_speedup(2, 2048, ubatch=2048) == 1.0  # llama-bench -ub 2048: one micro-batch
    assert pipeline_speedup(2, 2048, ubatch=1024) == pytest.approx(2 * 2 / 3)


@pytest.mark.parametrize("notes, ub", [
    ("pp2048/tg32; measured at context depth d16384, -ub 2048, 1 rep", "2048"),
    ("-fa, f16 KV, n_ubatch 1024. A Vulkan developer replied", "1024"),
    ("llama-server --ubatch-size 4096 -c 32768", "4096"),
    ("n_ubatch = 256", "256"),
])
def test_micro_batch_read_from_the_command(notes, ub):
    assert _UBATCH.search(notes).group(1) == ub


def test_no_micro_batch_in_plain_notes():
    assert _UBATCH.search("llama-bench -ngl 99 -fa 1 -p 512 -n 128") is None


def test_generic_model_has_query_heads_so_attention_counts(store):
    m = catalog.generic_model(store, "ministral-8b", 8.49)
    assert m.n_heads == 32 and m.n_layers == 32 and m.head_dim == 128  # borrowed from an 8B Llama 3
    # 4 × 32 layers × 32 heads × 128 × 4096 context tokens
    from advisor import roofline
    assert roofline.attention_flops_per_token(m, 4096) == pytest.approx(4 * 32 * 32 * 128 * 4096)


def test_generic_moe_borrows_attention_at_geometric_size(store):
    m = catalog.generic_model(store, "foo-30b-a3b", 30.0, 3.0)
    assert f"{math.sqrt(90):.3g}B" in m.notes  # √(30 × 3) = 9.49
    assert m.n_layers == 32  # an 8B's shape, not a 32B's (64 layers)


def test_moe_prediction_names_the_expert_term(store):
    p = service.predict_scenario(store, Scenario(hardware="Radeon AI PRO R9700", model="qwen3 coder 30b a3b",
                                                 quant="Q4_K_M", prompt_tokens=512))
    text = " ".join(p.assumptions)
    assert "MoE prefill: each routed expert multiplies about 32 tokens per step" in text
    dense = service.predict_scenario(store, Scenario(hardware="Radeon AI PRO R9700", model="llama 3.1 8b",
                                                     quant="Q4_K_M", prompt_tokens=512))
    assert not any("MoE prefill" in a for a in dense.assumptions)


def test_moe_prefill_on_cuda_is_not_above_dense_equivalent(store):
    """DGX Spark (CUDA; no MoE rows of its own): the pooled m0 keeps a 30B-A3B's prefill from being read off
    m0-corrected efficiencies uncorrected (without the pooled value it came out 2.4× the 8B dense model's)."""
    moe = service.predict_scenario(store, Scenario(hardware="DGX Spark", model="qwen3 coder 30b a3b",
                                                   quant="Q4_K_M", prompt_tokens=512)).prefill_tps
    dense = service.predict_scenario(store, Scenario(hardware="DGX Spark", model="llama 3.1 8b",
                                                     quant="Q4_K_M", prompt_tokens=512)).prefill_tps
    assert moe < 1.5 * dense


def test_bf16_experts_have_their_own_tile_constant_else_the_quantized_one():
    m0s = {"rocm": 96.0, "rocm:float": 256.0, "gpu:llama.cpp": 64.0}
    assert m0_for(m0s, {"engine": "llama.cpp", "accel": "rocm", "quant": "BF16"}) == 256.0
    assert m0_for(m0s, {"engine": "llama.cpp", "accel": "rocm", "quant": "Q4_K_M"}) == 96.0
    # no float fit anywhere: at least the quantized experts' cost of the same API
    assert m0_for({"rocm": 96.0}, {"engine": "llama.cpp", "accel": "rocm", "quant": "F16"}) == 96.0
    assert m0_for({"gpu:llama.cpp": 64.0, "gpu:llama.cpp:float": 384.0},
                  {"engine": "llama.cpp", "accel": "cuda", "quant": "bf16"}) == 384.0
    # CPUs multiply every format through one path: no float split
    assert m0_for({"cpu": 8.0}, {"engine": "llama.cpp", "accel": "cpu", "quant": "BF16"}) == 8.0


def _pre_row(i: int, hw: str, *, moe: bool, tps: float, quant: str = "Q4_K_M"):
    from advisor.calibration import CalRow

    # dense 8 B: 16 GFLOP per token; MoE 3 B active: 6 GFLOP, half of it in routed experts, 32 tokens per expert
    return CalRow(result_id=f"m{i}", hw_id=hw, kind="discrete_gpu", family="F", accel="rocm", engine="llama.cpp",
                  quant=quant, multi=False, bandwidth_gbs=600.0, tflops=100.0, decode_bytes=4e9,
                  prefill_flops=6e9 if moe else 16e9, decode_tps=None, prefill_tps=tps,
                  params_active_b=3.0 if moe else 8.0, source_set="s", moe=moe,
                  expert_tokens=32.0 if moe else 0.0, expert_flop_share=0.5 if moe else 0.0)


def test_tile_constant_is_read_against_the_dense_rows_of_the_same_machines():
    from advisor.calibration._terms import _fit_moe_m0

    # Each machine: dense at efficiency e (tps = e × 1e14 / 16e9); its MoE rows at the same e with m0 = 64:
    # work = 6e9 + 0.5 × 2 × 3e9 × 64 / 32 = 12e9 FLOPs per token. The MoE rows alone span no m, so only the
    # dense anchor can tell m0 from a lower MoE efficiency.
    rows = []
    for k, e in enumerate((0.3, 0.5, 0.7)):
        hw = f"gpu{k}"
        rows += [_pre_row(10 * k + j, hw, moe=False, tps=e * 1e14 / 16e9) for j in range(3)]
        rows += [_pre_row(10 * k + 5 + j, hw, moe=True, tps=e * 1e14 / 12e9) for j in range(2)]
    assert _fit_moe_m0(rows, {})["rocm"] == 64.0
