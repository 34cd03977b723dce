"""Hardware comparison: batched decode, ridge points, memory at concurrency, queueing, ranking, cost.

Hand-computed values are worked out in the comments next to each assertion.
"""

from __future__ import annotations

import importlib.util
import json
import math
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from advisor import compare as cmp
from advisor import roofline
from advisor.cli import app
from advisor.errors import InputError
from advisor.perf import predict
from advisor.perf.step import StepModel
from knowledge import catalog
from knowledge.store import Store

runner = CliRunner()


def _hw(store, name):
    return catalog.resolve_hardware(store, name).value


# ----------------------------------------------------------------------------- ridge point, saturation
def test_ridge_points_and_saturation_batch_by_hand(store):
    rtx, m2u = _hw(store, "nvidia-rtx-4090"), _hw(store, "apple-m2-ultra-76gpu")
    # RTX 4090: 165.2 TFLOP/s / 1008 GB/s = 165.2e12 / 1.008e12 = 163.89 FLOP/B
    assert roofline.ridge_point(rtx.fp16_tflops, rtx.bandwidth_gbs) == pytest.approx(163.89, abs=0.01)
    # M2 Ultra 76-core: 27.2 / 800 GB/s = 34.0 FLOP/B
    assert roofline.ridge_point(m2u.fp16_tflops, m2u.bandwidth_gbs) == pytest.approx(34.0)
    # Decode intensity 2b/(bpw/8) reaches the ridge at b = ridge × bpw / 16; at 4.5 bpw:
    assert cmp.saturation_batch(165.2, 1008, 4.5) == pytest.approx(163.89 * 4.5 / 16, abs=0.01)  # 46.1
    assert cmp.saturation_batch(27.2, 800, 4.5) == pytest.approx(9.5625)  # 34 × 4.5 / 16
    # There, decode's intensity equals the ridge point.
    b = cmp.saturation_batch(27.2, 800, 4.5)
    assert roofline.decode_arithmetic_intensity(b, 4.5) == pytest.approx(34.0)


def test_saturation_concurrency_picks_the_binding_limit():
    # Short context: KV reads negligible, the ridge point binds: floor(46.09) = 46.
    n, why = cmp.saturation_concurrency(165.2, 1008, 4.5, weight_bytes=40e9, kv_bytes_per_seq=1e6)
    assert (n, why) == (46, "compute (ridge point)")
    # Long context: 43.2 GB of weights, 2.7 GB of KV per sequence → W/K = 16.0 sequences.
    n, why = cmp.saturation_concurrency(165.2, 1008, 4.5, weight_bytes=43.2e9, kv_bytes_per_seq=2.7e9)
    assert (n, why) == (16, "KV-cache reads")


# ----------------------------------------------------------------------------- batch curve
BM = StepModel(dense_bytes=40e9, routed_bytes=0.0, expert_fraction=0.0, kv_bytes_per_seq=1e9, bw_bytes_per_s=800e9,
               t0_s=0.002, flops_per_seq=140e9, flops_per_s=100e12)


def test_batch_curve_by_hand():
    # b = 1: (40 + 1) GB / 800 GB/s + 2 ms = 51.25 + 2 = 53.25 ms → 18.78 tok/s
    assert BM.step_s(1) == pytest.approx(0.05325)
    assert BM.aggregate_tps(1) == pytest.approx(1 / 0.05325)
    # b = 8: bandwidth (40 + 8)/800 + 0.002 = 62 ms; compute 8 × 140e9 / 100e12 = 11.2 ms → 62 ms
    assert BM.step_s(8) == pytest.approx(0.062)
    assert BM.aggregate_tps(8) == pytest.approx(8 / 0.062)  # 129.0 tok/s
    assert BM.per_seq_tps(8) == pytest.approx(1 / 0.062)  # 16.1 tok/s per user
    # b = 64: bandwidth (40 + 64)/800 + 0.002 = 132 ms; compute 64 × 1.4 ms = 89.6 ms → 132 ms
    assert BM.aggregate_tps(64) == pytest.approx(64 / 0.132)  # 484.8


def test_batch_curve_flattens_past_the_ridge():
    short = StepModel(dense_bytes=40e9, routed_bytes=0.0, expert_fraction=0.0, kv_bytes_per_seq=0.0,
                      bw_bytes_per_s=800e9, t0_s=0.002, flops_per_seq=140e9, flops_per_s=100e12)
    # Bandwidth-bound: 52 ms per step whatever b; compute 1.4 ms × b → crossover at 52/1.4 = 37.1.
    assert short.knee() == pytest.approx(0.052 / 0.0014)
    assert short.aggregate_tps(32) == pytest.approx(32 / 0.052)  # still linear: adding users is free
    # Past the knee the step is compute-bound: aggregate = FLOP/s ÷ FLOPs per token = 714.3 tok/s.
    for b in (64, 256):
        assert short.aggregate_tps(b) == pytest.approx(100e12 / 140e9)
    assert short.per_seq_tps(256) == pytest.approx(100e12 / 140e9 / 256)  # 2.8 tok/s each, was 19.2 at 32


def test_mixed_iteration_adds_chunk_compute():
    # 512-token chunk at 1000 tok/s = 0.512 s, plus 8 decode tokens of compute (11.2 ms).
    assert BM.mixed_s(8, 512, 1000.0) == pytest.approx(0.512 + 0.0112)
    # A tiny chunk rides along with the bandwidth-bound step.
    assert BM.mixed_s(8, 1, 1e6) == pytest.approx(0.062)
    assert BM.mixed_s(0, 512, 1000.0) == pytest.approx(0.512)


def test_compare_gives_the_chat_numbers_for_the_same_team(store):
    """One step model: compare's per-user and aggregate tok/s are predict(concurrency=users)'s (the chat)."""
    m = catalog.resolve_model(store, "llama 3.1 8b").value
    q = catalog.resolve_quant(store, "Q4_K_M").value
    for hw_name, users in (("nvidia-h100-pcie", 8), ("nvidia-rtx-4090", 4), ("apple-m2-ultra-76gpu", 6)):
        hw = _hw(store, hw_name)
        chat = predict(store, hardware=hw, model=m, quant=q, prompt_tokens=4000, gen_tokens=500, concurrency=users)
        res = cmp.compare(store, model="llama 3.1 8b", quant="Q4_K_M", prompt_tokens=4000, gen_tokens=500,
                          concurrency=users, candidates=[hw_name])
        c = res["candidates"][0]
        assert c["effective_concurrency"] == users
        assert c["decode_tps_per_user"] == pytest.approx(chat.decode_tps_per_seq, rel=1e-9)
        assert c["aggregate_decode_tps"] == pytest.approx(chat.decode_tps, rel=1e-9)
        assert c["aggregate_decode_tps"] == pytest.approx(users * c["decode_tps_per_user"], rel=1e-9)


def test_compare_never_ranks_a_machine_short_of_memory_above_one_that_holds_the_users(store):
    # 20 users × 16k tokens of a 70B model: an RTX 4090 (24 GB) holds none, an H200 (141 GB) holds them.
    res = cmp.compare(store, model="llama 3.3 70b", quant="Q4_K_M", prompt_tokens=16000, gen_tokens=500,
                      concurrency=20, candidates=["nvidia-rtx-4090", "apple-m2-ultra-76gpu", "nvidia-h200"])
    holds = [c["max_concurrency"] >= 20 for c in res["candidates"]]
    assert holds == sorted(holds, reverse=True), [(c["hardware"]["id"], c["max_concurrency"]) for c in res["candidates"]]
    assert res["candidates"][0]["hardware"]["id"] == "nvidia-h200"


def test_curve_points_cover_users_and_saturation():
    pts = cmp.curve_points(max_b=100, users=20, extra=(37.1,))
    assert pts[0] == 1 and 20 in pts and 37 in pts and max(pts) == 74
    assert cmp.curve_points(max_b=5, users=20) == [1, 2, 3, 4, 5]


# ----------------------------------------------------------------------------- memory
def test_max_concurrency_binary_search_by_hand(store):
    hw, m = _hw(store, "nvidia-h100-pcie"), catalog.resolve_model(store, "llama 3.1 8b").value
    bpw = catalog.resolve_quant(store, "Q4_K_M").value.bits_per_weight  # 4.8944
    assert m.params_b == 8 and (m.n_layers, m.n_kv_heads, m.head_dim) == (32, 8, 128)
    # usable = 80 GiB = 85.899346 GB × (1 − 0.5/80) = 85.362475 GB; weights = 8e9 × 4.8944 / 8 = 4.8944 GB;
    # overhead = 0.5 + 0.03 × 4.8944 = 0.646832 GB; left for KV = 79.821243 GB.
    # KV per sequence (f16) = 2 × 32 × 8 × 128 × 2 B × 8500 tokens = 1.114112 GB → 71.65 → 71.
    assert cmp.max_concurrency(hw, m, bpw, 8500) == 71
    # q8_0 = 34 B per 32 elements = 1.0625 B: 0.591872 GB per sequence → 134.86 → 134.
    assert cmp.max_concurrency(hw, m, bpw, 8500, cmp.KV_BYTES_PER_ELEMENT["q8_0"]) == 134
    # The search agrees with memory_fit on both sides of the boundary.
    assert roofline.memory_fit(hw, m, bpw, context_tokens=8500, concurrency=71).fits
    assert not roofline.memory_fit(hw, m, bpw, context_tokens=8500, concurrency=72).fits


def test_max_concurrency_edges(store):
    m = catalog.resolve_model(store, "llama 3.3 70b").value
    # 70B at Q4_K_M (43.2 GB) on one RTX 4090 (24 GB): not even one sequence.
    assert cmp.max_concurrency(_hw(store, "nvidia-rtx-4090"), m, 4.8944, 8500) == 0
    assert cmp.max_concurrency(_hw(store, "nvidia-h200"), m, 4.8944, 10, cap=64) == 64


# ----------------------------------------------------------------------------- queueing
def test_md1_formulas():
    # Pollaczek–Khinchine, M/D/1: Wq = ρD / (2(1 − ρ)); ρ = 0.5, D = 1 s → 0.5 s.
    assert cmp.pk_mean_wait_s(0.5, 1.0) == pytest.approx(0.5)
    assert cmp.pk_mean_wait_s(1.0, 1.0) == math.inf
    # P(W = 0) = 1 − ρ; for t < D, P(W ≤ t) = (1 − ρ) e^{λt}.
    assert cmp.md1_wait_cdf(0.0, 0.5, 1.0) == pytest.approx(0.5)
    assert cmp.md1_wait_cdf(0.5, 0.5, 1.0) == pytest.approx(0.5 * math.exp(0.25))
    assert 0.9999 < cmp.md1_wait_cdf(60.0, 0.9, 1.0) <= 1.0
    w95 = cmp.md1_wait_quantile(0.95, 0.5, 1.0)
    assert cmp.md1_wait_cdf(w95, 0.5, 1.0) == pytest.approx(0.95, abs=1e-6)
    assert cmp.md1_wait_quantile(0.95, 1.2, 1.0) is None


TINY = StepModel(dense_bytes=1e3, routed_bytes=0.0, expert_fraction=0.0, kv_bytes_per_seq=0.0, bw_bytes_per_s=1e12,
                 t0_s=0.0, flops_per_seq=1.0, flops_per_s=1e15)


def test_simulation_reproduces_md1_when_decode_is_free():
    """Prefill of 1000 tokens at 1000 tok/s (D = 1 s), λ = 0.5/s, negligible decode: an M/D/1 queue."""
    r = cmp.simulate_load(TINY, rate_per_s=0.5, prompt_tokens=1000, prefill_tps=1000.0, gen_tokens=2,
                          slots=1000, n_arrivals=20_000, warmup=1000)
    assert r.ttft_mean_s == pytest.approx(1.0 + cmp.pk_mean_wait_s(0.5, 1.0), rel=0.05)  # 1.5 s
    assert r.ttft_p95_s == pytest.approx(1.0 + cmp.md1_wait_quantile(0.95, 0.5, 1.0), rel=0.05)  # 3.05 s
    again = cmp.simulate_load(TINY, rate_per_s=0.5, prompt_tokens=1000, prefill_tps=1000.0, gen_tokens=2,
                              slots=1000, n_arrivals=20_000, warmup=1000)
    assert again == r  # fixed seed: deterministic


def test_chunked_prefill_trades_ttft_for_smooth_streams():
    kw = dict(rate_per_s=0.05, prompt_tokens=8000, prefill_tps=1000.0, gen_tokens=500, slots=20)
    whole = cmp.simulate_load(BM, **kw)
    chunked = cmp.simulate_load(BM, chunk_tokens=512, **kw)
    # Without chunking every running stream stalls for a whole 8 s prompt; with chunks ≤ one chunk.
    assert whole.itl_max_s >= 8.0
    assert chunked.itl_max_s < 0.6
    # The prompt itself gets slightly slower: it shares iterations with decode tokens.
    assert whole.ttft_median_s <= chunked.ttft_median_s < 1.3 * whole.ttft_median_s


def test_slots_bound_the_batch():
    r = cmp.simulate_load(BM, rate_per_s=0.3, prompt_tokens=100, prefill_tps=10_000.0, gen_tokens=300, slots=2)
    assert r.mean_active <= 2.0


# ----------------------------------------------------------------------------- cost
def test_cost_per_million_by_hand():
    c = cmp.cost_per_million(36_000, 1000.0, years=3, utilisation=0.5, users=20)
    # 1000 tok/s × 0.5 × 3 × 31 557 600 s = 47 336 400 000 tokens → 36 000 / 47 336.4 = $0.7605 per million
    assert c["usd_per_million_tokens"] == pytest.approx(0.76052, rel=1e-4)
    # 36 000 / 20 users / 36 months = $50 per user-month
    assert c["usd_per_user_month"] == pytest.approx(50.0)
    assert "no electricity" in c["assumption"]


def test_parse_prices():
    assert cmp.parse_prices("nvidia-h200=32,000, apple-m3-ultra-80gpu=$9,499") == {
        "nvidia-h200": 32000.0, "apple-m3-ultra-80gpu": 9499.0}
    assert cmp.parse_prices("2x 4090 = 3800; H100 PCIe=30000.50\n") == {"2x 4090": 3800.0, "H100 PCIe": 30000.5}
    assert cmp.parse_prices("") == {} and cmp.parse_prices(None) == {}
    for bad in ("nvidia-h200", "nvidia-h200=lots", "=5", "h200=5 dollars"):
        with pytest.raises(InputError, match="ID=USD"):
            cmp.parse_prices(bad)


# ----------------------------------------------------------------------------- compare()
WORKLOAD = dict(model="llama 3.3 70b", quant="Q4_K_M", prompt_tokens=8000, gen_tokens=500, concurrency=20)


def test_ranking_puts_a_candidate_meeting_the_targets_first(store):
    out = cmp.compare(store, **WORKLOAD, requests_per_minute=0.2, ttft_target_s=30, tps_per_user=10,
                      candidates=["apple-m3-ultra-80gpu", "nvidia-h200"])
    ids = [c["hardware"]["id"] for c in out["candidates"]]
    assert ids == ["nvidia-h200", "apple-m3-ultra-80gpu"]
    h200, m3 = out["candidates"]
    assert h200["meets_targets"] and not m3["meets_targets"]
    assert h200["headroom"] >= 1 > (m3["headroom"] or 0)
    assert h200["ttft_s"]["p95"] <= 30 and h200["decode_tps_per_user"] >= 10
    assert [c["rank"] for c in out["candidates"]] == [1, 2]


def test_candidate_fields_and_calibration_notes(store):
    out = cmp.compare(store, **WORKLOAD, requests_per_minute=0.2, candidates=["nvidia-h200"])
    c = out["candidates"][0]
    for key in ("fits", "max_concurrency", "ttft_s", "decode_tps_per_user", "aggregate_decode_tps",
                "saturation_concurrency", "notes", "calibration", "memory", "batch", "load"):
        assert key in c
    assert set(c["ttft_s"]) >= {"median", "p95"}
    assert c["aggregate_decode_tps"] == pytest.approx(20 * c["decode_tps_per_user"])
    # 20 users on an H200 with no engine named: vLLM is assumed, and the batched decode is calibrated on
    # the measured vLLM/SGLang batches of the seed (server engine family); the notes say both.
    assert any("fitted on measured batches (group server" in (x.get("note") or "") for x in c["calibration"])
    assert any("assumed to be served by vLLM" in n for n in c["notes"])
    # Simulated M/D/1 prefill queue against the exact distribution (ρ ≈ 0.5 here).
    chk = c["load"]["unchunked"]["md1_check"]
    assert c["load"]["unchunked"]["ttft_p95_s"] == pytest.approx(chk["exact_p95_ttft_s"], rel=0.15)
    assert c["load"]["unchunked"]["ttft_mean_s"] == pytest.approx(chk["pk_mean_ttft_s"], rel=0.15)
    json.dumps(out, allow_nan=False)  # strict JSON: no inf or NaN anywhere


def test_overloaded_machine_has_no_ttft(store):
    out = cmp.compare(store, **WORKLOAD, requests_per_minute=1.0, candidates=["apple-m3-ultra-80gpu"])
    c = out["candidates"][0]
    assert c["load"]["overloaded"] and c["ttft_s"]["p95"] is None and not c["meets_targets"]
    assert any("Overloaded" in n for n in c["notes"])
    json.dumps(out, allow_nan=False)


# 2× RTX 4090 (2 × 24 GiB = 51.5 GB, 50.5 usable) holds Llama 3.3 70B Q4_K_M (43.2 GB + 1.8 overhead) with one
# 8,500-token f16 KV cache (2.8 GB), but not with one of 24,250 tokens (7.9 GB); q8_0 (4.2 GB) holds it.
LONG = {**WORKLOAD, "prompt_tokens": 24000}


def test_model_that_does_not_fit_is_reported_when_asked_and_excluded_otherwise(store):
    held = cmp.compare(store, **WORKLOAD, candidates=["2x 4090"])["candidates"][0]
    assert held["max_concurrency"] == 1
    out = cmp.compare(store, **LONG, candidates=["2x 4090", "nvidia-h200"])
    two = next(c for c in out["candidates"] if c["hardware"]["id"] == "nvidia-rtx-4090x2")
    assert two["max_concurrency"] == 0 and not two["fits"] and two["decode_tps_per_user"] is None
    assert out["candidates"][-1]["hardware"]["id"] == "nvidia-rtx-4090x2"
    assert any("layer split" in n and "PCIe" in n for n in two["notes"])
    auto = cmp.compare(store, **WORKLOAD)
    assert all(c["max_concurrency"] > 0 for c in auto["candidates"])
    assert "nvidia-rtx-4090" in auto["excluded_do_not_fit"]


def test_kv_quant_lets_more_users_fit(store):
    f16 = cmp.compare(store, **LONG, candidates=["2x 4090"])["candidates"][0]
    q8 = cmp.compare(store, **LONG, candidates=["2x 4090"], kv_quant="q8_0")["candidates"][0]
    assert f16["max_concurrency"] == 0 and q8["max_concurrency"] >= 1
    assert q8["memory"]["kv_per_user_gb"] == pytest.approx(f16["memory"]["kv_per_user_gb"] * 1.0625 / 2)


def test_prefix_caching_cuts_ttft_by_cached_over_pp(store):
    base = cmp.compare(store, **WORKLOAD, candidates=["nvidia-h100-pcie"])["candidates"][0]
    cached = cmp.compare(store, **WORKLOAD, candidates=["nvidia-h100-pcie"],
                         shared_prefix_tokens=6000)["candidates"][0]
    saved = base["ttft_s"]["median"] - cached["ttft_s"]["median"]
    # TTFT falls by about cached / pp (the rest attends to the cached prefix, so a bit less).
    assert saved == pytest.approx(6000 / base["prefill_tps"], rel=0.2)
    with pytest.raises(InputError, match="shorter than the prompt"):
        cmp.compare(store, **WORKLOAD, shared_prefix_tokens=8000)


def test_prices_give_cost_per_million_by_hand(store):
    out = cmp.compare(store, **WORKLOAD, candidates=["nvidia-h200", "nvidia-h100-pcie"],
                      prices={"H200": 32_000})
    h200 = next(c for c in out["candidates"] if c["hardware"]["id"] == "nvidia-h200")
    other = next(c for c in out["candidates"] if c["hardware"]["id"] != "nvidia-h200")
    agg = h200["aggregate_decode_tps"]
    assert h200["cost"]["usd_per_million_tokens"] == pytest.approx(32_000 / (agg * 0.25 * 3 * 31_557_600) * 1e6)
    assert h200["cost"]["usd_per_user_month"] == pytest.approx(32_000 / 20 / 36)
    assert other["cost"] is None  # never invented
    assert any("amortised over 3 years" in a for a in out["assumptions"])
    out = cmp.compare(store, **WORKLOAD, candidates=["nvidia-h200"], prices={"H100": 30_000})
    assert out["candidates"][0]["cost"] is None
    assert out["price_notes"] and out["price_notes"][0].startswith("The price 'H100' matched none")


def test_a_persons_imported_batch_does_not_move_everyones_comparison():
    """SYNTHETIC: one made-up llama-batched-bench row 3x the model, imported by a person (issue 17):
    the population fit (what everyone's comparison uses) stays as it was."""
    st = Store(":memory:")
    hw, m = catalog.get_hardware(st, "nvidia-h100-pcie"), catalog.resolve_model(st, "llama 3.1 8b").value
    q = catalog.resolve_quant(st, "Q4_K_M").value
    p = predict(st, hardware=hw, model=m, quant=q, prompt_tokens=512, gen_tokens=128, concurrency=16)
    args = dict(model="llama 3.1 8b", quant="Q4_K_M", prompt_tokens=512, gen_tokens=128, concurrency=16,
                candidates=["nvidia-h100-pcie"])
    before = cmp.compare(st, **args)["candidates"][0]
    st.save_import(fmt="batched-bench", raw_text="SYNTHETIC test row", hw_id="nvidia-h100-pcie",
                   measurements=[{"model": "llama-3.1-8b", "params_b": 8.0, "quant": "Q4_K_M",
                                  "backend": "llama.cpp-cuda", "prompt_tokens": 512, "gen_tokens": 128, "batch": 16,
                                  "decode_tps": 3 * p.decode_tps, "notes": "SYNTHETIC"}])
    after = cmp.compare(st, **args)["candidates"][0]
    assert after["aggregate_decode_tps"] == pytest.approx(before["aggregate_decode_tps"], rel=1e-9)
    assert after["batch"]["batched_factor"] == pytest.approx(before["batch"]["batched_factor"], rel=1e-9)


def test_bad_requests_are_input_errors(store):
    with pytest.raises(InputError, match="kv_quant"):
        cmp.compare(store, **WORKLOAD, kv_quant="q3")
    with pytest.raises(InputError, match="concurrency"):
        cmp.compare(store, **{**WORKLOAD, "concurrency": 0})
    with pytest.raises(InputError, match="prices"):
        cmp.compare(store, **WORKLOAD, prices={"nvidia-h200": -5})


def test_table_markdown(store):
    out = cmp.compare(store, **WORKLOAD, requests_per_minute=1.0, candidates=["apple-m3-ultra-80gpu", "nvidia-h200"])
    md = cmp.table_markdown(out)
    assert md.count("\n|") == 4 and "overloaded" in md and "H200" in md
    assert "Summary" in cmp.notes_markdown(out) and "Pollaczek" in cmp.notes_markdown(out)


# ----------------------------------------------------------------------------- CLI
def test_cli_compare_json_with_the_original_flags():
    r = runner.invoke(app, ["compare", "--model", "llama 3.3 70b", "--quant", "Q4_K_M", "--prompt-tokens", "8000",
                            "--gen-tokens", "500", "--concurrency", "20", "--requests-per-minute", "0.2",
                            "--ttft-target", "30", "--tps-per-user", "10", "--candidates",
                            "M3 Ultra,2x 4090,H100 PCIe,DGX Spark", "--json"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert len(out["candidates"]) == 4 and out["concurrency"] == 20
    assert {c["hardware"]["id"] for c in out["candidates"]} >= {"nvidia-rtx-4090x2", "nvidia-dgx-spark-gb10"}


def test_cli_compare_new_flags_and_text():
    r = runner.invoke(app, ["compare", "--model", "llama 3.1 8b", "--concurrency", "8", "--candidates", "4090",
                            "--price", "nvidia-rtx-4090=1800", "--kv-quant", "q8_0", "--shared-prefix-tokens", "500",
                            "--json"])
    assert r.exit_code == 0, r.output
    c = json.loads(r.stdout)["candidates"][0]
    assert c["cost"]["price_usd"] == 1800 and c["memory"]["kv_quant"] == "q8_0"
    r = runner.invoke(app, ["compare", "--model", "llama 3.1 8b", "--candidates", "4090"])
    assert r.exit_code == 0 and re.search(r"^ *1 +GeForce", r.stdout, re.M) and "Assumptions" in r.stdout


@pytest.mark.parametrize("args, msg", [(["--price", "4090"], "ID=USD"), (["--kv-quant", "q3"], "kv_quant"),
                                       (["--candidates", "potato"], "hardware")])
def test_cli_compare_errors_are_clear(args, msg):
    r = runner.invoke(app, ["compare", "--model", "llama 3.1 8b", *args, "--json"])
    assert r.exit_code == 2
    assert msg in json.loads(r.stdout)["error"]


def test_cli_predict_concurrency_reports_aggregate_and_per_sequence():
    r = runner.invoke(app, ["predict", "--hardware", "4090", "--model", "llama 3.1 8b", "--quant", "Q4_K_M",
                            "--concurrency", "8", "--json"])
    assert r.exit_code == 0, r.output
    p = json.loads(r.stdout)
    assert p["concurrency"] == 8 and p["prefill_tps"] > 0
    assert p["decode_tps"] == pytest.approx(8 * p["decode_tps_per_seq"])
    one = json.loads(runner.invoke(app, ["predict", "--hardware", "4090", "--model", "llama 3.1 8b", "--quant",
                                         "Q4_K_M", "--json"]).stdout)
    assert one["decode_tps"] < p["decode_tps"] < 8 * one["decode_tps"]


# ----------------------------------------------------------------------------- bench/accuracy.py batched section
def _bench():
    path = Path(__file__).resolve().parents[1] / "bench" / "accuracy.py"
    spec = importlib.util.spec_from_file_location("bench_accuracy", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_bench_batched_section_reports_the_seed_batches(store, capsys):
    _bench().print_batched(store, hold_outs=(None,))  # the hold-outs refit per machine: run by the bench itself
    out = capsys.readouterr().out
    assert "Batched rows" in out and "no batched measurements in the store" not in out
    assert "| none | 173 | 173 |" in out  # every batched seed row resolves (machine, model, format)


def test_bench_batched_section_on_synthetic_rows(store, capsys):
    """SYNTHETIC rows (not measurements): 'measured' = 1.1 × our batched model, so our APE is
    |1/1.1 − 1| = 9.09 % and batch × single-stream is off by |b·d1 / (1.1·d_b) − 1|."""
    bench = _bench()
    hw, m = catalog.get_hardware(store, "nvidia-rtx-4090"), catalog.resolve_model(store, "llama 3.1 8b").value
    q = catalog.resolve_quant(store, "Q4_K_M").value
    rows, naive = [], []
    for b in (4, 16, 64):
        pb = predict(store, hardware=hw, model=m, quant=q, prompt_tokens=512, gen_tokens=128, concurrency=b)
        p1 = predict(store, hardware=hw, model=m, quant=q, prompt_tokens=512, gen_tokens=128)
        rows.append({"hw_id": "nvidia-rtx-4090", "base_hw_id": "nvidia-rtx-4090", "model_id": m.id, "model": m.id,
                     "params_b": 8.0, "quant": "Q4_K_M", "backend": None, "prompt_tokens": 512, "gen_tokens": 128,
                     "depth": 0, "batch": b, "decode_tps": 1.1 * pb.decode_tps, "origin": "synthetic",
                     "prefill_tps": 1000.0})  # reported apart (S_PP), so decode is pure decode (S_TG)
        naive.append(abs(b * p1.decode_tps / (1.1 * pb.decode_tps) - 1) * 100)
    errs = bench.evaluate_batched(store, rows, hold_out=None)
    assert [a for a, _, _ in errs] == pytest.approx([100 * (1 - 1 / 1.1)] * 3)
    assert [b for _, b, _ in errs] == pytest.approx(naive)
    assert naive[-1] > 50  # b × single-stream ignores the compute roof at batch 64
    bench.print_batched(store, rows, hold_outs=(None,))
    out = capsys.readouterr().out
    assert "| none | 3 | 3 | 9.1 | 9.1 |" in out


def test_compare_takes_the_chats_situation(store):
    """compare_situation fills the form from the Situation: model, lengths, users, stated memory."""
    from advisor.understand.situation import Machine, Situation, Workload

    m = catalog.resolve_model(store, "llama 3.1 8b").value
    q = catalog.resolve_quant(store, "Q4_K_M").value
    mac = catalog.resolve_hardware(store, "M3 Max 40-core").value.model_copy(update={"memory_gb": 48.0})
    h100 = _hw(store, "nvidia-h100-pcie")
    sit = Situation(machine=Machine(hardware=mac, memory_stated_gb=48.0), model=m, quant=q,
                    workload=Workload(prompt_tokens=3000, gen_tokens=400, users=6),
                    compare_hardware=[Machine(hardware=h100)])
    res = cmp.compare_situation(store, sit)
    assert (res["prompt_tokens"], res["gen_tokens"], res["concurrency"], res["model"]) == (3000, 400, 6, m.id)
    ids = {c["hardware"]["id"]: c for c in res["candidates"]}
    assert set(ids) == {mac.id, h100.id}
    assert ids[mac.id]["hardware"]["memory_gb"] == 48.0  # the stated memory, not the largest option
    chat = predict(store, hardware=mac, model=m, quant=q, prompt_tokens=3000, gen_tokens=400, concurrency=6)
    assert ids[mac.id]["aggregate_decode_tps"] == pytest.approx(chat.decode_tps, rel=1e-9)
    with pytest.raises(InputError):
        cmp.compare_situation(store, Situation())


def test_a_candidate_named_without_its_version_is_its_smallest_version_said_so(store):
    # "an H100" fits the PCIe and SXM cards: compared as the PCIe one (not optimistic), with the assumption stated.
    out = cmp.compare(store, model="llama 3.1 8b", candidates=["an H100", "RTX 4090"], concurrency=4)
    by_id = {c["hardware"]["id"]: c for c in out["candidates"]}
    assert set(by_id) == {"nvidia-h100-pcie", "nvidia-rtx-4090"}
    assert any("smallest and slowest" in n for n in by_id["nvidia-h100-pcie"]["notes"])
