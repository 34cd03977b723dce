"""Property tests of the newer parsers (text-generation-webui, koboldcpp, exllamav2, SGLang), the
normalising pass and the JSON repairs: whatever numbers a tool prints, behind whatever prefix, in
whatever chatter, the same rates come out."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from advisor.importers import parse_output
from advisor.importers._normalise import normalise_lines, split_lines, strip_prefixes

_SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])

rates = st.floats(min_value=0.01, max_value=50_000, allow_nan=False).map(lambda v: round(v, 2))
counts = st.integers(min_value=1, max_value=200_000)
PREFIXES = [
    "",
    "[42027] ",
    "[42027] 1.35.716.244 I ",
    "0.01.234.567 I ",
    "INFO 10-10 22:30:30 rocm.py:13] ",
    "(APIServer pid=4711) INFO 01-15 10:20:30 [api_server.py:1024] ",
    "[22:30:32 TP0] ",
    "[2025-02-11 09:12:01 TP0] ",
    "2024-05-02 18:02:22,366 - INFO - ",
    "12:01:33-417237 INFO     ",
    "INFO:     ",
    "# ",
    "> ",
    "> > ",
    "llama-server-1  | ",
    "Jan 15 10:20:30 gpu-box llama-server[1234]: ",
    "2025-01-15T10:20:30.123456789Z ",
]
prefixes = st.sampled_from(PREFIXES)
endings = st.sampled_from(["\n", "\r\n"])
CHATTER = [
    "Here is my run, is this normal?",
    "The answer: prefill is compute-bound; decode reads every weight once per token.",
    "I tried 512 tokens per second but got 12.",
    "User: what is the capital of France?",
    "Assistant: Paris. It has 2.1 million people (2023).",
    "",
    "```",
]


def _paste(lines: list[str], prefix: str, ending: str) -> str:
    return ending.join(prefix + line for line in lines)


@_SETTINGS
@given(
    st.lists(
        st.tuples(rates, rates, counts, st.one_of(st.none(), counts), st.booleans()), min_size=1, max_size=5
    ),
    prefixes,
    endings,
)
def test_textgen_lines(rows: list, prefix: str, ending: str) -> None:
    lines = []
    for secs, tps, n, ctx, seed in rows:
        tail = (f", context {ctx}" if ctx is not None else "") + (", seed 925476152" if seed else "")
        lines.append(f"Output generated in {secs:.2f} seconds ({tps:.2f} tokens/s, {n} tokens{tail})")
    result = parse_output(_paste(lines, prefix, ending))
    assert result.format == "textgen-webui"
    got = [
        (m.decode_tps, m.gen_tokens, m.prompt_tokens, m.decode_includes_prompt) for m in result.measurements
    ]
    assert got == [(tps, n, ctx, True) for _, tps, n, ctx, _ in rows]
    assert all(m.prefill_tps is None for m in result.measurements)


@_SETTINGS
@given(counts, counts, rates, rates, rates, rates, st.sampled_from(["classic", "amt", "oldest"]), prefixes)
def test_koboldcpp_line(
    prompt: int, gen: int, p_secs: float, g_secs: float, p_tps: float, g_tps: float, kind: str, prefix: str
) -> None:
    used = prompt + gen
    progress = [
        f"Processing Prompt [BLAS] ({prompt} / {prompt} tokens)",
        f"Generating ({gen} / {gen + 10} tokens)",
    ]
    if kind == "classic":
        stats = (
            f"CtxLimit: {used}/{used + 100}, Process:{p_secs:.2f}s ({1000 / p_tps:.1f}ms/T = {p_tps:.2f}T/s), "
            f"Generate:{g_secs:.2f}s ({1000 / g_tps:.1f}ms/T = {g_tps:.2f}T/s), Total:{p_secs + g_secs:.2f}s (1.00T/s)"
        )
        want = (p_tps, g_tps)
    elif kind == "amt":
        progress = progress[:1]  # the newer line says how many tokens were generated itself
        stats = (
            f"[17:44:43] CtxLimit:{used}/{used + 100}, Amt:{gen}/{gen + 10}, Init:0.01s, Process:{p_secs:.2f}s "
            f"({p_tps:.2f}T/s), Generate:{g_secs:.2f}s ({g_tps:.2f}T/s), Total:{p_secs + g_secs:.2f}s"
        )
        want = (p_tps, g_tps)
    else:
        stats = f"Time Taken - Processing:{p_secs:.2f}s (15ms/T), Generation:{g_secs:.2f}s (40ms/T), Total:9.0s (1.0T/s)"
        want = (pytest.approx(prompt / p_secs, rel=0.01), pytest.approx(gen / g_secs, rel=0.01))
    result = parse_output("\n".join(prefix + line for line in [*progress, stats]))
    assert result.format == "koboldcpp"
    if kind == "oldest":
        # Rates under 1e-4 tok/s (a token every 10,000 s and more) are refused by the Measurement model: a rate
        # that is refused is left out; a line with neither rate gives no measurement.
        slow = (prompt / p_secs < 1e-4, gen / g_secs < 1e-4)
        if all(slow):
            assert not result.measurements
            return
        want = (None if slow[0] else want[0], None if slow[1] else want[1])
    (m,) = result.measurements
    if kind == "oldest" and prompt / p_secs > 1e7:  # beyond anything real: that rate is dropped, decode kept
        want = (None, want[1])
        assert any("kept the decode rate only" in w for w in result.warnings)
    assert (m.prefill_tps, m.decode_tps) == want
    assert (m.prompt_tokens, m.gen_tokens) == (prompt, gen)


@_SETTINGS
@given(
    st.lists(st.tuples(st.integers(1, 65_536), rates), min_size=1, max_size=8),
    st.lists(st.tuples(st.integers(1, 65_536), st.integers(1, 512), rates), max_size=6),
    prefixes,
)
def test_exllamav2_speed_tests(prompt_rows: list, gen_rows: list, prefix: str) -> None:
    lines = [" -- Measuring prompt speed..."] + [
        f" ** Length {n:>5} tokens: {tps:>11.4f} t/s" for n, tps in prompt_rows
    ]
    lines += [" -- Measuring token speed..."]
    lines += [f" ** Position {pos:>5} + {n:>3} tokens: {tps:>9.4f} t/s" for pos, n, tps in gen_rows]
    result = parse_output("\n".join(prefix + line for line in lines))
    assert result.format == "exllamav2"
    want = [(tps, None, n, 0, None) for n, tps in prompt_rows] + [
        (None, tps, 0, n, pos) for pos, n, tps in gen_rows
    ]
    got = [(m.prefill_tps, m.decode_tps, m.prompt_tokens, m.gen_tokens, m.depth) for m in result.measurements]
    assert [g[:4] for g in got] == [w[:4] for w in want]
    assert [g[4] for g in got[len(prompt_rows) :]] == [w[4] for w in want[len(prompt_rows) :]]


@_SETTINGS
@given(
    st.lists(st.integers(1, 256), min_size=1, max_size=3, unique=True),
    st.integers(16, 8192),
    st.integers(1, 1024),
    st.lists(st.tuples(rates, st.lists(rates, min_size=1, max_size=4), rates), min_size=4, max_size=4),
    st.booleans(),
    prefixes,
)
def test_sglang_one_batch_runs(
    batches: list[int], n_in: int, n_out: int, runs: list, warmup: bool, prefix: str
) -> None:
    command = (
        f"$ python -m sglang.bench_one_batch --model-path m --batch-size {' '.join(map(str, batches))} "
        f"--input-len {n_in} --output-len {n_out}"
    )
    lines = [command, "max_total_num_tokens=1256440"]
    runs = runs[: len(batches)]
    if warmup:
        lines += [
            "Warmup ...",
            "Prefill. latency: 0.5 s, throughput: 1.00 token/s",
            "Decode.  median latency: 0.5 s, median throughput: 1.00 token/s",
            "Total. latency: 1 s, throughput: 1 token/s",
            "Benchmark ...",
        ]
    for prefill, steps, median in runs:
        lines.append(f"Prefill. latency: 0.25074 s, throughput: {prefill:10.2f} token/s")
        lines += [f"Decode.  latency: 0.01 s, throughput: {s:10.2f} token/s" for s in steps]
        lines.append(f"Decode.  median latency: 0.00973 s, median throughput: {median:10.2f} token/s")
        lines.append("Total. latency:  0.553 s, throughput:  16665.96 token/s")
    result = parse_output("\n".join(prefix + line for line in lines))
    assert result.format == "sglang-bench"
    got = [(m.prefill_tps, m.decode_tps, m.batch, m.prompt_tokens, m.gen_tokens) for m in result.measurements]
    assert got == [(p, d, b, n_in, n_out) for (p, _, d), b in zip(runs, batches, strict=True)]


@_SETTINGS
@given(rates, st.integers(1, 512), counts, counts, prefixes)
def test_sglang_serving_block(out_tps: float, concurrency: int, n_in: int, n_out: int, prefix: str) -> None:
    block = [
        "============ Serving Benchmark Result ============",
        "Backend:                                 sglang",
        f"Max reqeuest concurrency:                {concurrency}",
        "Successful requests:                     100",
        f"Total input tokens:                      {n_in}",
        f"Total generated tokens:                  {n_out}",
        f"Output token throughput (tok/s):         {out_tps:.2f}",
        "==================================================",
    ]
    result = parse_output("\n".join(prefix + line for line in block))
    assert result.format == "sglang-bench"
    (m,) = result.measurements
    assert (m.decode_tps, m.batch, m.prompt_tokens, m.gen_tokens, m.engine) == (
        out_tps,
        concurrency,
        n_in,
        n_out,
        "sglang",
    )


# --- the normalising pass --------------------------------------------------------------------------

CONTENT = [
    "prompt eval time =     789.03 ms /    27 tokens (   29.22 ms per token,    34.22 tokens per second)",
    "Output generated in 15.34 seconds (33.24 tokens/s, 510 tokens, context 3200, seed 925476152)",
    "eval rate:            8.87 tokens/s",
    "| llama 7B Q4_0 | 3.56 GiB | 6.74 B | CUDA | 99 | tg128 | 131.66 ± 0.49 |",
    "Prefill. latency: 0.25074 s, throughput:  32671.13 token/s",
    '"eval_count": 25,',
]


@_SETTINGS
@given(st.lists(prefixes, min_size=1, max_size=3), st.sampled_from(CONTENT))
def test_prefixes_are_stripped(stack: list[str], content: str) -> None:
    assert strip_prefixes("".join(stack) + content) == content


@_SETTINGS
@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=300))
def test_normalising_keeps_the_line_count(text: str) -> None:
    assert len(normalise_lines(text)) == len(split_lines(text))


@_SETTINGS
@given(st.sampled_from([80, 100, 120, 132]), rates, rates, counts, counts, prefixes)
def test_wrapped_lines_are_rejoined(
    width: int, pp: float, tg: float, n_p: int, n_g: int, prefix: str
) -> None:
    lines = [
        # the times agree with the counts and rates, as the tool prints them (an edited line's rate is not kept)
        f"llama_perf_context_print: prompt eval time = {n_p / pp * 1000:10.2f} ms / {n_p:5d} tokens (   18.92 ms per "
        f"token, {pp:10.2f} tokens per second)",
        f"llama_perf_context_print:        eval time = {n_g / tg * 1000:10.2f} ms / {n_g:5d} runs   (   79.13 ms per "
        f"token, {tg:10.2f} tokens per second)",
        f"Output generated in 12.00 seconds ({tg:.2f} tokens/s, {n_g} tokens, context {n_p}, seed 925476152)",
    ]
    lines = [prefix + line for line in lines]
    wrapped = "\n".join(line[i : i + width] for line in lines for i in range(0, len(line), width))
    if max(len(line) for line in lines) < width:
        return
    result = parse_output(wrapped)
    got = sorted((m.prefill_tps or 0, m.decode_tps or 0) for m in result.measurements)
    assert got == sorted([(pp, tg), (0, tg)]), result.unparsed


@_SETTINGS
@given(st.lists(st.sampled_from(CHATTER), min_size=1, max_size=6), st.randoms(use_true_random=False))
def test_answer_text_between_log_lines_changes_nothing(chatter: list[str], rnd) -> None:
    """A paste that mixes an engine's log with the model's answer still yields its measurements."""
    log = [
        "[42027] 1.37.495.377 I slot print_timing: id  0 | task 388 | ",
        "[42027] prompt eval time =     789.03 ms /    27 tokens (   29.22 ms per token,    34.22 tokens per second)",
        "[42027]        eval time =   16112.50 ms /   192 tokens (   83.92 ms per token,    11.92 tokens per second)",
        "[42027]       total time =   16901.53 ms /   219 tokens",
        "Output generated in 15.34 seconds (33.24 tokens/s, 510 tokens, context 3200, seed 925476152)",
        "CtxLimit: 1754/8192, Process:25.05s (14.9ms/T = 66.89T/s), Generate:59.05s (152.6ms/T = 6.55T/s), "
        "Total:84.11s (4.60T/s)",
    ]
    mixed = list(log)
    for line in chatter:
        mixed.insert(rnd.randint(0, len(mixed)), line)
    got = [(m.prefill_tps, m.decode_tps) for m in parse_output("\n".join(mixed)).measurements]
    assert sorted(got, key=str) == sorted([(34.22, 11.92), (None, 33.24), (66.89, 6.55)], key=str)


# --- damaged JSON ----------------------------------------------------------------------------------


@_SETTINGS
@given(
    st.text(alphabet='ab "\\:{}[],', max_size=40),
    st.integers(1, 10_000),
    st.integers(20_000, 10**9),
    st.integers(1, 10_000),
    st.integers(20_000, 10**9),
    st.booleans(),
)
def test_ollama_response_with_unescaped_quotes(
    answer: str, n_p: int, ns_p: int, n_g: int, ns_g: int, pretty: bool
) -> None:
    d_p, d_g = n_p * ns_p, n_g * ns_g  # durations in ns: 1 to 50,000 tok/s
    fields = {
        "model": "llama3.1:8b",
        "created_at": "2024-08-01T10:00:00Z",
        "done": True,
        "prompt_eval_count": n_p,
        "prompt_eval_duration": d_p,
        "eval_count": n_g,
        "eval_duration": d_g,
    }
    body = json.dumps(fields, indent=2 if pretty else None)
    sep = "\n  " if pretty else " "
    text = body.replace(
        "{", "{" + sep + f'"response": "{answer}",', 1
    )  # the answer pasted as it was, unescaped
    (m,) = parse_output(text).measurements
    assert m.decode_tps == pytest.approx(
        round(n_g / (d_g / 1e9), 2) if n_g / (d_g / 1e9) >= 1 else n_g / (d_g / 1e9), rel=0.01
    )
    assert (m.prompt_tokens, m.gen_tokens) == (n_p, n_g)


@_SETTINGS
@given(st.integers(20, 400))
def test_truncated_server_json_reads_the_whole_fields(cut: int) -> None:
    text = json.dumps(
        {
            "timings": {
                "cache_n": 0,
                "prompt_n": 412,
                "prompt_ms": 180.2,
                "prompt_per_second": 2286.35,
                "predicted_n": 96,
                "predicted_ms": 1101.5,
                "predicted_per_second": 87.15,
            },
            "content": "x" * 500,
        },
        indent=2,
    )[: 300 + cut]
    (m,) = parse_output(text).measurements
    assert (m.prefill_tps, m.decode_tps, m.prompt_tokens, m.gen_tokens) == (2286.35, 87.15, 412, 96)


def test_an_impossible_prefill_rate_keeps_the_decode_rate():
    # 100,001 tokens "in 0.01 s" is 10 M tok/s: that rate is dropped with a warning, the 12 tok/s decode is kept.
    text = ("Processing Prompt [BLAS] (100001 / 100001 tokens)\nGenerating (12 / 22 tokens)\n"
            "Time Taken - Processing:0.01s (15ms/T), Generation:1.00s (40ms/T), Total:9.0s (1.0T/s)")
    result = parse_output(text)
    (m,) = result.measurements
    assert m.prefill_tps is None and m.decode_tps == pytest.approx(12.0)
    assert any("beyond anything real" in w and "kept the decode rate only" in w for w in result.warnings)
