"""Fixtures for the UI tests: offline Gradio, an in-memory store, a fake probe, a launched app."""

from __future__ import annotations

import os
import socket
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

os.environ["GRADIO_ANALYTICS_ENABLED"] = "False"
os.environ.setdefault("GRADIO_TEMP_DIR", tempfile.mkdtemp(prefix="advisor-ui-tests-"))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import pytest  # noqa: E402

from advisor.models import Fix, MemoryFit, Prediction, ProbeResult, Verdict  # noqa: E402

ARTIFACTS = Path(__file__).parent / "artifacts"


@pytest.fixture(scope="session")
def store():
    from knowledge.store import Store

    return Store(":memory:")


def fake_probe(store, progress: Callable[[float, str], None]) -> ProbeResult:
    """A probe that takes about a second and reports progress like the real one."""
    for frac, desc in ((0.1, "Detecting the machine"), (0.4, "Measuring memory bandwidth"),
                       (0.8, "Measuring matrix multiply")):
        progress(frac, desc)
        time.sleep(0.3)
    progress(1.0, "Done")
    return ProbeResult(backend="numpy", device="Fake CPU (test)", bandwidth_gbs=42.5, matmul_tflops=0.75,
                       matmul_dtype="float32", duration_s=1.0, engine_version="fake 1.0")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def app_url(store, tmp_path_factory) -> Iterator[str]:
    """The app launched on a free loopback port with the fake probe; yields its URL."""
    from ui.app import build_app, theme_kwargs

    demo = build_app(store, probe_fn=fake_probe, export_dir=str(tmp_path_factory.mktemp("export")))
    _, url, _ = demo.launch(prevent_thread_lock=True, server_name="127.0.0.1", server_port=free_port(),
                            quiet=True, show_error=False, enable_monitoring=False, max_file_size="5mb",
                            **theme_kwargs())
    try:
        yield url
    finally:
        demo.close()


def make_prediction(**over) -> Prediction:
    """A hand-made prediction: 100 GB/s, 3.6 TFLOP/s, an 8B model at ~4.9 bits per weight."""
    base = dict(
        prefill_tps=133.0, decode_tps=16.4, prefill_ceiling_tps=216.0, decode_ceiling_tps=20.6,
        prefill_tps_range=(113.0, 162.0), decode_tps_range=(13.4, 19.9), ttft_s=15.0, decode_s=18.2,
        total_s=33.2, decode_tps_per_seq=16.4, concurrency=1, prompt_tokens=2000, gen_tokens=300,
        bits_per_weight=4.89, quant="Q4_K_M", weight_bytes_per_token_gb=4.57, kv_bytes_per_token_gb=0.00013,
        flops_per_token_g=16.5, ridge_point_flop_per_byte=35.8, bandwidth_gbs=100.0, tflops=3.58,
        memory=MemoryFit(weights_gb=4.9, kv_cache_gb=0.3, overhead_gb=0.65, required_gb=5.85, usable_gb=10.7,
                         total_gb=16.0, fits=True),
        hardware={"id": "apple-m2-10gpu", "name": "Apple M2 (10-core GPU)", "kind": "apple_soc"},
        model={"id": "meta-llama/Llama-3.1-8B", "params_b": 8.0}, backend="llama.cpp-metal",
    )
    base.update(over)
    return Prediction(**base)


def make_verdict(p: Prediction | None = None, **over) -> Verdict:
    p = p or make_prediction()
    base = dict(
        bottleneck="decode", status="below_expected", prediction=p,
        explanation="Decode sets the wait.", headline="Decode is the bottleneck.",
        measured={"prefill_tps": None, "decode_tps": 12.0},
        expected_range={"prefill_tps": (113.0, 162.0), "decode_tps": (13.4, 19.9)},
        fixes=[
            Fix(id="speculative_decoding", title="Speculative decoding with a small draft model",
                predicted_effect="≈ 2.0× decode (16 → 33 tok/s)", why="draft", speedup=2.0, new_decode_tps=32.8),
            Fix(id="prefix_caching", title="Cache the repeated prompt prefix", predicted_effect="TTFT 15 → 5 s",
                why="prefix", new_ttft_s=5.0),
            Fix(id="more_compute", title="A faster GPU", predicted_effect="2× prefill", why="compute", speedup=2.0),
        ],
    )
    base.update(over)
    return Verdict(**base)


@pytest.fixture
def prediction() -> Prediction:
    return make_prediction()


@pytest.fixture
def verdict() -> Verdict:
    return make_verdict()


@pytest.fixture
def prediction_factory() -> Callable[..., Prediction]:
    return make_prediction


@pytest.fixture
def verdict_factory() -> Callable[..., Verdict]:
    return make_verdict


LLAMA_BENCH_MD = """\
| model                          |       size |     params | backend    | ngl |          test |                  t/s |
| ------------------------------ | ---------: | ---------: | ---------- | --: | ------------: | -------------------: |
| llama 8B Q4_K - Medium         |   4.58 GiB |     8.03 B | Metal,BLAS |  99 |         pp512 |        190.52 ± 0.31 |
| llama 8B Q4_K - Medium         |   4.58 GiB |     8.03 B | Metal,BLAS |  99 |         tg128 |         17.21 ± 0.05 |

build: 1d36b367 (4542)
"""


@pytest.fixture
def llama_bench_md() -> str:
    return LLAMA_BENCH_MD
