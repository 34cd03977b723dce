"""Property tests: whatever is pasted, ``parse_output`` returns a sound result or, for over-size
input only, raises :class:`InputError`."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from advisor.errors import InputError
from advisor.importers import FORMATS, detect_format, parse_output
from advisor.models import ImportResult

TEXTS = [
    json.loads(p.read_text(encoding="utf-8"))["text"]
    for p in sorted((Path(__file__).parent / "fixtures").glob("*.json"))
]
# Pieces of every format, to build pastes that reach deep into the parsers.
FRAGMENTS = [
    "| model | size | params | backend | ngl | test | t/s |",
    "|---|---:|",
    "| llama 7B Q4_0 | 3.56 GiB | 6.74 B |",
    "| pp512 | 1.0 ± 2 |",
    "| tg128 @ d4096 | inf ± nan |",
    "|    PP |     TG |    B |   N_KV | S_PP t/s | S_TG t/s |",
    "|   128 |    128 |    1 |    256 |  nan |  -4 |",
    "n_prompt,n_gen,avg_ts",
    '"512","0","1e400"',
    "INSERT INTO llama_bench (n_prompt, n_gen, avg_ts) VALUES ('1', '2', 'x');",
    "CREATE TABLE IF NOT EXISTS llama_bench (",
    "llama_print_timings: prompt eval time = 1 ms / 99999999999999999999 tokens ( 1 ms per token, 1e309 tokens per second)",
    "llama_perf_context_print:        eval time = -5 ms / 3 runs",
    "eval rate: -1 tokens/s",
    "eval duration: 1h1h1h",
    "prompt eval count: 1,5 token(s)",
    "total duration:",
    "NAME ID SIZE PROCESSOR",
    "x 0123456789ab 4 GB 200% GPU",
    "Prompt: 5 tokens, nan tokens-per-sec",
    "Generation: -1 tokens, 5 tokens-per-sec",
    "Peak memory: inf GB",
    "Timing with prompt_tokens=1, generation_tokens=2, batch_size=0.",
    "Trial 1:  prompt_tps=inf, generation_tps=1",
    "Averages: prompt_tps=1, generation_tps=nan",
    "============ Serving Benchmark Result ============",
    "Output token throughput (tok/s): inf",
    "Maximum request concurrency: -3",
    "Mean TPOT (ms): 0",
    "=" * 50,
    '{"timings": {"prompt_n": -1, "prompt_per_second": "inf"}',
    '{"eval_count": 1e999, "eval_duration": 0}',
    '"stats": {"tokensPerSecond": -2, "timeToFirstTokenSec": 0, "promptTokensCount": 5}',
    "...",
    "{",
    "[",
    "}",
    "]",
    '{"models": [{"name": 1, "size": 0, "size_vram": 5}]}',
    '{"output_throughput": null, "max_concurrency": 1e20}',
    "5 tok/sec • 3 tokens • nans first token",
    "$ ./llama-bench -m -ngl x",
    "Device 0: , compute capability",
    "load_tensors: offloaded 5/0 layers to GPU",
    "model='m' eval_count=-5 eval_duration=0",
    "\x00\x1b[31m",
    "\r",
    "Output generated in -1 seconds (nan tokens/s, 99999999999 tokens, context -5, seed x)",
    "Output generated in 1,5 seconds (",
    "CtxLimit: 9/1, Process:0s (0ms/T = infT/s), Generate:",
    "Processing Prompt [BLAS] (5 / 0 tokens)",
    "Generating (99999999999 / 1 tokens)",
    "ProcessingSpeed: nanT/s",
    "MaxCtx: 1",
    "Time Taken - Processing:0s (0ms/T), Generation:",
    " ** Length   0 tokens:   inf t/s",
    " ** Position   -1 + 5 tokens:   1 t/s",
    "(Context: 1 tokens, response: 0 tokens, -3 tokens/second)",
    " -- Model: /",
    "Prefill. latency: 0 s, throughput: nan token/s",
    "Decode 0. Batch size: 0, latency: 1 s, throughput: 1e400 token/s",
    "Decode.  median latency: 1 s, median throughput: -1 token/s",
    "Warmup ...",
    "Benchmark ...",
    "python -m sglang.bench_one_batch --batch-size 1 2 --input-len 0",
    "Max reqeuest concurrency: 0",
    "Backend: sglang",
    "[42027] 1.35.716.244 I ",
    "INFO 10-10 22:30:30 rocm.py:13] ",
    "# ",
    "> > ",
    "common_perf_print: prompt eval time = 1 ms / 0 tokens",
    '{"prefill_throughput": "x", "median_decode_throughput": -1}',
    '"content": "a "b" c",',
    "| 99999999999 |",
]


def assert_sound(result: ImportResult) -> None:
    """The invariants every result keeps, whatever the input."""
    assert isinstance(result, ImportResult)
    assert result.format in FORMATS
    if result.format == "unknown":
        assert result.measurements == []
    for m in result.measurements:
        rates = [m.prefill_tps, m.decode_tps, m.blended_tps]
        for v in [*rates, m.stddev_tps, m.ttft_s, m.load_s, m.peak_memory_gb, m.gpu_fraction, m.params_b]:
            assert v is None or (math.isfinite(v) and v >= 0)
        for n in (m.prompt_tokens, m.gen_tokens, m.depth, m.batch, m.cached_tokens, m.threads):
            assert n is None or n >= 0
        assert any(v is not None for v in rates) or result.format == "ollama-ps"
        assert m.engine and m.backend and m.engine in m.backend or m.backend == m.engine
        assert m.n_gpu_layers is None or 0 <= m.n_gpu_layers < 2**31
    assert all(isinstance(line, str) for line in result.unparsed)


_SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@_SETTINGS
@given(st.text())
def test_any_text(text: str) -> None:
    assert_sound(parse_output(text))
    assert detect_format(text) in FORMATS


@_SETTINGS
@given(
    st.lists(st.sampled_from(FRAGMENTS) | st.text(max_size=20), max_size=25),
    st.sampled_from(["\n", "\r\n", " ", ""]),
)
def test_pieces_of_every_format(pieces: list[str], sep: str) -> None:
    assert_sound(parse_output(sep.join(pieces)))


@st.composite
def mutated_fixture(draw: st.DrawFn) -> str:
    """A real output with a few random cuts, insertions, replacements and swapped lines."""
    text = draw(st.sampled_from(TEXTS))
    for _ in range(draw(st.integers(1, 6))):
        n = len(text)
        kind = draw(st.sampled_from(["cut", "insert", "replace", "truncate", "swap", "duplicate"]))
        i = draw(st.integers(0, n))
        j = draw(st.integers(i, min(n, i + 40)))
        if kind == "cut":
            text = text[:i] + text[j:]
        elif kind == "insert":
            text = text[:i] + draw(st.text(max_size=12) | st.sampled_from(FRAGMENTS)) + text[i:]
        elif kind == "replace":
            text = (
                text[:i]
                + draw(st.sampled_from(["inf", "nan", "-1", ",", "|", "...", "{", "\n", "1e999", "±"]))
                + text[j:]
            )
        elif kind == "truncate":
            text = text[:i]
        else:
            lines = text.split("\n")
            a, b = draw(st.integers(0, len(lines) - 1)), draw(st.integers(0, len(lines) - 1))
            if kind == "swap":
                lines[a], lines[b] = lines[b], lines[a]
            else:
                lines.insert(b, lines[a])
            text = "\n".join(lines)
    return text


@_SETTINGS
@given(mutated_fixture())
def test_mutated_fixtures(text: str) -> None:
    assert_sound(parse_output(text))


@settings(max_examples=60, deadline=None)
@given(st.text(min_size=1, max_size=50), st.integers(0, 100))
def test_over_size_is_the_only_error(text: str, extra: int) -> None:
    limit = len(text.encode("utf-8")) - 1
    if limit >= 0:
        with pytest.raises(InputError):
            parse_output(text + "x" * extra, max_bytes=limit)
    assert_sound(parse_output(text, max_bytes=len(text.encode("utf-8"))))


def test_ten_megabytes_of_tool_output_is_refused() -> None:
    big = ("\n".join(TEXTS) + "\n") * (10_000_000 // len("\n".join(TEXTS)) + 1)
    with pytest.raises(InputError, match="bytes"):
        parse_output(big)


def test_large_paste_under_the_limit_parses() -> None:
    """About 2 MB of real outputs and chatter: every copy of every fixture is read."""
    # CUDA "Device 0:" lines left out: a second machine's run in one paste is not read as the first machine's
    # (test_round48), and these fixtures come from many machines
    block = "\n\nsome chatter between pastes\n\n".join(re.sub(r"(?m)^\s*Device \d+:.*$", "", t) for t in TEXTS)
    copies = 2_000_000 // len(block)
    result = parse_output("\n\n".join([block] * copies))
    assert_sound(result)
    assert len(result.measurements) > copies * 20
    assert len(result.unparsed) <= 1000
