"""Round 43: one engine table for settings and names; the calibration fit warmed at app start."""

from __future__ import annotations

import time

import pytest

from advisor.diagnose.context import build_ctx
from advisor.models import Scenario
from advisor.understand import understand


def _ctx(store, **kw):
    return build_ctx(store, understand(store, Scenario(**kw)))


@pytest.mark.parametrize(("engine", "knob"), [
    ("koboldcpp", "llama-server -np"), ("kobold", "llama-server -np"), ("LM Studio", "llama-server -np"),
    ("ik_llama.cpp", "llama-server -np"), ("TensorRT-LLM", "--max_batch_size"), ("vllm 0.6.3", "--max-num-seqs"),
    ("exllamav2", "max batch size"),
])
def test_batching_setting_follows_the_classified_engine(store, engine, knob):
    from advisor.diagnose.remedies import batch_knob

    assert batch_knob(_ctx(store, hardware="RTX 4090", model="llama 3.1 8b", backend=engine)).startswith(knob)


@pytest.mark.parametrize(("engine", "where"), [
    ("ollama", "`ollama ps`"), ("LM Studio", "LM Studio's GPU offload setting"), ("kobold", "KoboldCpp's --gpulayers"),
    ("llama.cpp CUDA", "the load log's"), ("ik_llama.cpp", "the load log's"), ("vllm", "your tool's GPU offload"),
])
def test_offload_check_follows_the_classified_engine(store, engine, where):
    from advisor.diagnose.tools import offload_check

    assert offload_check(_ctx(store, hardware="RTX 4090", model="llama 3.1 8b", backend=engine)).startswith(where)


def test_a_model_named_llama_does_not_make_the_engine_llama_cpp(store):
    # The engine comes from the engine words, never from "llama" in a model name.
    from advisor.diagnose.tools import offload_check

    c = _ctx(store, hardware="RTX 4090", model="llama 3.1 8b", backend="vllm")
    assert c.sit.engine == "vllm" and "load log" not in offload_check(c).split(" or ")[0]


def test_warm_up_builds_the_fit_the_first_verdict_uses(tmp_path):
    from advisor import service
    from advisor.perf.fit import calibration_model
    from knowledge.store import Store

    st = Store(str(tmp_path / "s.duckdb"))
    service.warm_up(st)
    t = time.perf_counter()
    cal = calibration_model(st)
    assert time.perf_counter() - t < 0.5 and cal is calibration_model(st)  # cached, not rebuilt


def test_row_hardware_resolves_a_family_id_and_refuses_an_unknown_one(store):
    from advisor.errors import NotFoundError
    from advisor.perf.fit import row_hardware

    hw = row_hardware(store, {"hw_id": None, "base_hw_id": "apple-m1-ultra", "fp16_tflops": 20.0})
    assert hw.id.startswith("apple-m1-ultra-") and hw.fp16_tflops == 20.0
    with pytest.raises(NotFoundError):
        row_hardware(store, {"hw_id": "no-such-chip-9000", "base_hw_id": "no-such-chip-9000", "fp16_tflops": None})
