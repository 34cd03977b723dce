"""A CPU's batch-1 decode can be compute-bound (codebook formats), not only bandwidth-bound (round 26)."""

from __future__ import annotations

import pytest

from advisor import service
from advisor.models import Scenario
from advisor.perf.prediction import CPU_DECODE_COMPUTE_SHARE
from advisor.perf.step import StepModel
from knowledge.store import Store


def _step(share: float) -> StepModel:
    # 4 GB of weights at 100 GB/s achieved = 40 ms; 16 GFLOP per token at 0.2 TFLOP/s achieved prefill compute.
    return StepModel(dense_bytes=4e9, routed_bytes=0.0, expert_fraction=0.0, kv_bytes_per_seq=0.0,
                     bw_bytes_per_s=100e9, t0_s=0.0, flops_per_seq=16e9, flops_per_s=0.2e12, b1_compute_share=share)


def test_batch_one_compute_bound_by_hand():
    # without the share (a GPU): the bandwidth term alone, 40 ms → 25 tok/s
    assert _step(0.0).per_seq_tps(1) == pytest.approx(25.0)
    # a CPU at share 0.4: 16e9 / 0.2e12 / 0.4 = 200 ms > 40 ms → 5 tok/s
    assert _step(0.4).per_seq_tps(1) == pytest.approx(5.0)
    # a batch keeps the matrix-matrix rate: 8 × 16e9 / 0.2e12 = 640 ms vs 40 ms → 12.5 tok/s aggregate
    assert _step(0.4).aggregate_tps(8) == pytest.approx(12.5)
    assert CPU_DECODE_COMPUTE_SHARE == pytest.approx(0.4)


@pytest.fixture(scope="module")
def store() -> Store:
    return Store(":memory:")


def _decode(store: Store, quant: str) -> float:
    sc = Scenario(hardware="M2-Max (CPU only, ARM_NEON build)", model="llama-3.1-8b-instruct", params_b=8.03,
                  quant=quant, backend="llama.cpp-cpu (ARM_NEON)", prompt_tokens=512, gen_tokens=128)
    return service.predict_scenario(store, sc).decode_tps


def test_codebook_format_on_cpu_is_compute_bound(store: Store):
    # Measured (ik_llama.cpp discussion, mainline llama.cpp CPU-only on an M2 Max): IQ3_S 5.34 tok/s, Q4_0 23.89.
    iq3, q40 = _decode(store, "IQ3_S"), _decode(store, "Q4_0")
    assert 0.7 < iq3 / 5.34 < 1.5  # was 38 tok/s (7×) from bandwidth alone
    assert 0.7 < q40 / 23.89 < 1.5
    assert iq3 < q40 / 2.5  # the smaller file decodes slower: its kernel, not its bytes, sets the rate


def test_gpu_batch_one_unchanged(store: Store):
    # A GPU's batch-1 step stays the bandwidth term: the compute figure would allow far more.
    p = service.predict_scenario(store, Scenario(hardware="RTX 4090", model="llama 3.1 8b", quant="IQ3_S"))
    assert p.decode_tps > 100


def test_server_offload_is_not_a_default(store: Store):
    # vLLM refuses to start when the weights do not fit (no spill to system RAM unless --cpu-offload-gb).
    p = service.predict_scenario(store, Scenario(hardware="A100 40GB", model="llama 3.1 70b", quant="F16", backend="vLLM"))
    assert any("vLLM does not put weights in system RAM by default" in a for a in p.assumptions)
    q = service.predict_scenario(store, Scenario(hardware="RTX 4090", model="llama 3.1 70b", quant="Q4_K_M", backend="llama.cpp"))
    assert not any("does not put weights in system RAM" in a for a in q.assumptions)


def test_a_laptop_family_is_not_read_at_its_smallest_part(store: Store):
    # "i5-1335U" matches the 12th–13th gen mobile family (parts of 4, 10, 12, 14 cores) and is not in the model-number
    # table: the middle part, said. "i7-12700H" is in it: its own 14 cores.
    p = service.predict_scenario(store, Scenario(hardware="Intel Core i5-1335U", model="llama 3.1 8b", quant="Q4_K_M",
                                                 backend="llama.cpp-cpu"))
    note = next(a for a in p.assumptions if "cores" in a)
    assert "10 cores (the middle of the family's 4, 10, 12, 14 cores; say how many it has)" in note
    assert 7 < p.decode_tps < 14  # bandwidth-bound at ~77 GB/s DDR5-4800 (the smallest part, 4 cores, had been assumed)
    p = service.predict_scenario(store, Scenario(hardware="Intel Core i7-12700H", model="llama 3.1 8b", quant="Q4_K_M",
                                                 backend="llama.cpp-cpu"))
    assert any("14 CPU cores: the 12700H's 14 (vendor spec)" in a for a in p.assumptions)


def test_cpu_codebook_format_fix_is_a_block_format(store: Store):
    # On CPU cores IQ3_S is compute-bound: the format fix is Q4_0 (more bits, faster), never "more compressed".
    v = service.diagnose_scenario(store, Scenario(hardware="Intel Core i7-12700H", model="llama 3.1 8b", quant="IQ3_S",
                                                  backend="llama.cpp-cpu"))
    fx = next(f for f in v.fixes if f.id == "quantization")
    assert fx.title.startswith("Switch to a Q4_0 build: more bits, but faster on a CPU"), fx.title
    assert fx.speedup is not None and fx.speedup >= 1.2 and "IQ3_S → Q4_0" in fx.predicted_effect
    # the same format on a GPU is bandwidth-bound: no such advice
    g = service.diagnose_scenario(store, Scenario(hardware="RTX 4090", model="llama 3.1 8b", quant="IQ3_S"))
    assert not any(f.title.startswith("Switch to") for f in g.fixes)


def test_compute_bound_cpu_decode_is_said(store: Store):
    sc = Scenario(hardware="M2-Max (CPU only, ARM_NEON build)", model="llama-3.1-8b-instruct", params_b=8.03,
                  quant="IQ3_S", backend="llama.cpp-cpu (ARM_NEON)")
    notes = [a for a in service.predict_scenario(store, sc).assumptions if "compute-bound here" in a]
    assert len(notes) == 1 and "IQ3_S decodes each weight through a codebook lookup" in notes[0]
    q40 = service.predict_scenario(store, sc.model_copy(update={"quant": "Q4_0"}))
    assert not any("compute-bound here" in a for a in q40.assumptions)


PASTE_IQ3 = """| model                          |       size |     params | backend    | threads |            test |                  t/s |
| ------------------------------ | ---------: | ---------: | ---------- | ------: | --------------: | -------------------: |
| llama 8B IQ3_S mix - 3.66 bpw  |   3.43 GiB |     8.03 B | CPU        |      10 |           pp512 |         21.40 ± 0.30 |
| llama 8B IQ3_S mix - 3.66 bpw  |   3.43 GiB |     8.03 B | CPU        |      10 |           tg128 |          4.90 ± 0.05 |
"""


def test_a_pasted_run_is_judged_in_its_own_format(store: Store):
    # The conversation had asked "what if Q4_K_M?"; the pasted run loaded an IQ3_M file: its rates are IQ3_M's.
    said = Scenario(hardware="Intel Core i7-12700H", model="llama 3.1 8b", quant="Q4_K_M", backend="llama.cpp")
    out = service.import_output(store, PASTE_IQ3, scenario=said, save=False)
    assert out.facts is not None and out.facts.quant == "IQ3_M"
    assert out.verdict is not None and out.verdict.prediction.quant == "IQ3_M"
