"""Invariants over many scenarios: a status needs a stated expectation, fixes are never empty, advice fits."""

from __future__ import annotations

import itertools

import pytest

from advisor.diagnose import diagnose
from advisor.errors import InputError
from advisor.models import Scenario

MACHINES = ["RTX 4090", "RTX 3060 12GB", "MacBook Air M2 16GB", "Mac Studio M2 Ultra 192GB", "H100 SXM",
            "ddr5-5600 dual channel", "Raspberry Pi 5", "Ryzen AI Max+ 395 128GB", "MacBook Air 8GB",
            "laptop with Radeon 780M", "AMD Instinct MI100", "some old PC"]
MODELS = [("llama3.2:1b", "q4_k_m"), ("llama 3.1 8b", "q8_0"), ("llama 3.1 70b", "q4_k_m"), ("qwen3 30b a3b", "q4_k_m")]
RATES = [None, 0.05, 8.0, 60.0, 3000.0]
ENGINES = ["ollama", "vllm", "llama.cpp -ngl 99"]
GRID = list(itertools.product(MACHINES, MODELS, RATES, ENGINES))


REFUSED: list[tuple[Scenario, str]] = []  # impossible single-stream rates: a clear error, not a verdict


@pytest.fixture(scope="module")
def verdicts(store):
    out = []
    for hw, (model, quant), rate, engine in GRID:
        sc = Scenario(hardware=hw, model=model, quant=quant, backend=engine, measured_decode_tps=rate)
        try:
            out.append((sc, diagnose(store, sc)))
        except InputError as e:
            REFUSED.append((sc, str(e)))
    return out


def test_grid_is_large(verdicts):
    assert len(verdicts) + len(REFUSED) == len(MACHINES) * len(MODELS) * len(RATES) * len(ENGINES) >= 500
    assert len(verdicts) >= 500


def test_only_impossible_rates_are_refused(verdicts):
    # 3,000 (or even 60) tok/s of one stream of a 70B on a Raspberry Pi is over 100x what its memory can deliver
    assert REFUSED and all((sc.measured_decode_tps or 0) >= 60 and "the most this machine can do" in why
                           for sc, why in REFUSED)
    assert not any(sc.hardware == "RTX 4090" and sc.model == "llama 3.1 8b" for sc, _ in REFUSED)
    assert all(sc.backend != "vllm" for sc, _ in REFUSED)  # a batching server's rate is a total


def test_no_verdict_without_fixes(verdicts):
    empty = [(sc.hardware, sc.model, sc.measured_decode_tps) for sc, v in verdicts if not v.fixes]
    assert not empty, empty[:5]


def test_judged_status_states_its_expectation(verdicts):
    for sc, v in verdicts:
        if v.status in ("normal", "below_expected", "above_expected"):
            phase = "prefill_tps" if v.bottleneck == "prefill" else "decode_tps"
            assert v.expected_range.get(phase) or v.expected_range.get("decode_tps"), (sc, v.status)
            assert "Expected" in v.explanation or "expectation" in v.explanation, (sc, v.explanation)


def test_unresolved_machine_is_never_normal(verdicts):
    for sc, v in verdicts:
        if v.prediction is None:
            assert v.status != "normal", (sc.hardware, sc.measured_decode_tps, v.explanation)


def test_no_measurement_no_judgement(verdicts):
    for sc, v in verdicts:
        if sc.measured_decode_tps is None:
            assert v.status in ("not_measured", "no_expectation"), (sc.hardware, v.status)


def test_fixes_are_unique_and_described(verdicts):
    for _, v in verdicts:
        # each remedy once (two remedies may share a contract id: keeping only a MoE's experts in system RAM and a
        # smaller format are both ``fit_in_memory`` fixes)
        ids = [f.remedy for f in v.fixes]
        assert all(ids) and len(ids) == len(set(ids))
        assert all(f.title and f.predicted_effect and f.why for f in v.fixes)


def test_no_gpu_advice_on_a_cpu(verdicts):
    for sc, v in verdicts:
        if v.prediction is not None and v.prediction.hardware["kind"] == "cpu":
            assert "gpu_offload" not in [f.id for f in v.fixes], sc.hardware


def test_no_percent_above_for_an_aggregate(verdicts):
    for sc, v in verdicts:
        if "aggregate over a batch" in v.explanation:
            assert "%" not in v.explanation.split("aggregate over a batch")[0]
            if v.status == "normal" and "compute limit" not in v.explanation:  # a larger batch is the lever
                assert v.fixes[0].id == "batching", (sc.hardware, [f.id for f in v.fixes])
            assert "more_bandwidth" != v.fixes[0].id


def test_no_memory_limit_tweak_for_a_model_larger_than_the_machine(verdicts):
    for sc, v in verdicts:
        p = v.prediction
        if p is not None and p.memory.total_gb and p.memory.required_gb > p.memory.total_gb:
            assert not any("GPU memory limit" in f.title for f in v.fixes), sc
            # a card keeps the rest in system RAM: a MoE there first keeps only its experts in RAM (a setting)
            split = ("moe_expert_offload", "micro_batch") if p.hardware.get("kind") in ("discrete_gpu", "datacenter_gpu") else ()
            assert v.fixes[0].id in ("fit_in_memory", "smaller_model", "quantization", "chunked_prefill"
                                     ) or v.fixes[0].remedy in split, (sc, [f.id for f in v.fixes])
