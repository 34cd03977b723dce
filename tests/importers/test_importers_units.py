"""Unit tests of the importers' helpers and of behaviours the fixtures do not pin down."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import advisor.importers as importers
from advisor.errors import InputError
from advisor.importers import FORMATS, detect_format, parse_output
from advisor.importers._json import loads_lenient
from advisor.importers._util import (
    backend_name,
    derive_rate,
    guess_decimal_comma,
    is_decoration,
    normalise_quant,
    parse_go_duration,
    parse_number,
    parse_params_b,
    parse_size_gb,
    split_model_type,
)
from advisor.importers.ollama import gpu_fraction

CASES = Path(__file__).parent / "fixtures" / "cases"


def test_exported_members() -> None:
    assert sorted(importers.__all__) == ["FORMATS", "detect_format", "engine_for_format", "parse_output"]
    assert "unknown" in FORMATS and len(set(FORMATS)) == len(FORMATS)


# --- numbers, durations, units -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("2m27.989997625s", 147.989997625),
        ("2m27.98s", 147.98),
        ("850ms", 0.85),
        ("97.885315ms", 0.097885315),
        ("1.346030951s", 1.346030951),
        ("2m43.589481292s", 163.589481292),
        ("12m56.225656006s", 776.225656006),
        ("1h2m3s", 3723.0),
        ("12µs", 12e-6),
        ("12μs", 12e-6),
        ("40us", 40e-6),
        ("500ns", 5e-7),
        ("0s", 0.0),
    ],
)
def test_go_durations(text: str, seconds: float) -> None:
    assert parse_go_duration(text) == pytest.approx(seconds)


@pytest.mark.parametrize("text", ["", "s", "12", "2x", "1m 2q", "ms12", "1.2.3s"])
def test_bad_go_durations(text: str) -> None:
    assert parse_go_duration(text) is None


@pytest.mark.parametrize(
    ("text", "comma", "value"),
    [
        ("629.07", False, 629.07),
        ("1,234.5", False, 1234.5),
        ("1.234,5", False, 1234.5),
        ("12,34", False, 12.34),
        ("0,660", False, 0.66),
        ("1,234", False, 1234.0),
        ("1,234", True, 1.234),
        ("1,234,567", False, 1234567.0),
        ("1.234", True, 1234.0),
        ("2e3", False, 2000.0),
        ("-3.5", False, -3.5),
    ],
)
def test_numbers(text: str, comma: bool, value: float) -> None:
    assert parse_number(text, comma) == pytest.approx(value)


def test_numbers_special() -> None:
    assert parse_number("inf") == float("inf")
    assert parse_number("+Inf") == float("inf")
    nan = parse_number("NaN")
    assert nan is not None and nan != nan
    assert parse_number("abc") is None
    assert parse_number("") is None


def test_decimal_comma_guess() -> None:
    assert guess_decimal_comma(["599,83", "19", "31,57"])
    assert not guess_decimal_comma(["599.83", "1,234"])
    assert not guess_decimal_comma(["1,234"])  # ambiguous alone: thousands
    assert guess_decimal_comma(["0,108", "3,079"])


def test_derived_rates_are_rounded_like_the_cli() -> None:
    assert derive_rate(29, 0.516695792) == 56.13
    assert derive_rate(1, 1000) == 0.001
    assert derive_rate(3, 0) is None
    assert derive_rate(3, None) is None


def test_sizes_and_params() -> None:
    assert parse_size_gb("3.56 GiB") == pytest.approx(3.56 * 1.073741824)
    assert parse_size_gb("397.57 MiB") == pytest.approx(397.57 * 1.048576 / 1000)
    assert parse_size_gb("4.0 GB") == 4.0
    assert parse_size_gb("3,56 GiB", decimal_comma=True) == pytest.approx(3.56 * 1.073741824)
    assert parse_size_gb("big") is None
    assert parse_params_b("6.74 B") == 6.74
    assert parse_params_b("494.03 M") == pytest.approx(0.49403)


@pytest.mark.parametrize(
    ("text", "quant"),
    [
        ("Q4_K - Medium", "Q4_K_M"),
        ("mostly Q4_0", "Q4_0"),
        ("Q3_K - Large", "Q3_K_L"),
        ("Q2_K - Medium", "Q2_K"),
        ("Q2_K - Small", "Q2_K_S"),
        ("Q5_K - Small", "Q5_K_S"),
        ("IQ4_XS - 4.25 bpw", "IQ4_XS"),
        ("IQ3_S mix - 3.66 bpw", "IQ3_M"),
        ("MXFP4 MoE", "MXFP4"),
        ("all F32", "F32"),
        ("BF16", "BF16"),
        ("Meta-Llama-3.1-8B-Instruct-Q4_K_M.gguf", "Q4_K_M"),
        ("ggml-model-q4_0.gguf", "Q4_0"),
        ("some exotic thing", "some exotic thing"),
    ],
)
def test_quant_names(text: str, quant: str) -> None:
    assert normalise_quant(text) == quant


def test_model_type_split() -> None:
    assert split_model_type("qwen2 7B Q4_K - Medium") == ("qwen2 7B", "Q4_K_M")
    assert split_model_type("LLaMA 7B mostly Q8_0") == ("LLaMA 7B", "Q8_0")
    assert split_model_type("gpt-oss 20B MXFP4 MoE") == ("gpt-oss 20B", "MXFP4")
    assert split_model_type("mystery 3B") == ("mystery 3B", None)


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("Metal,BLAS", "Metal"),
        ("MTL,BLAS", "Metal"),
        ("CUDA", "CUDA"),
        ("BLAS", "CPU"),
        ("CPU", "CPU"),
        ("ROCm", "ROCm"),
        ("Vulkan,RPC", "Vulkan"),
        ("", None),
    ],
)
def test_backend_names(text: str, name: str | None) -> None:
    assert backend_name(text) == name


@pytest.mark.parametrize(
    ("processor", "fraction"),
    [("100% GPU", 1.0), ("100% CPU", 0.0), ("48%/52% CPU/GPU", 0.52), ("25% GPU", 0.25), ("?", None)],
)
def test_ollama_processor_column(processor: str, fraction: float | None) -> None:
    assert gpu_fraction(processor) == fraction


def test_decoration() -> None:
    for line in ["", "   ", "|---|---:|", "==========", "-----", "```", "```text", "...", "[...]", "…"]:
        assert is_decoration(line), line
    for line in ["thanks", "| a | b |", "Prompt: 3 tokens"]:
        assert not is_decoration(line), line


def test_lenient_json() -> None:
    assert loads_lenient('{"a": 1, ..., "b": 2}') == {"a": 1, "b": 2}
    assert loads_lenient('{"a": [1, 2, ...], "b": {...}}') == {"a": [1, 2], "b": {}}
    assert loads_lenient('{"a": 1,\n "b": 2,\n') == {"a": 1, "b": 2}
    assert loads_lenient('{"a": 1, "b": 2,}') == {"a": 1, "b": 2}
    assert loads_lenient("not json") is None


# --- parse_output behaviour ----------------------------------------------------------------------


def test_empty_and_chatter_give_unknown() -> None:
    assert parse_output("").format == "unknown"
    result = parse_output("hello\nmy model is slow, 5 tok/s, why?\n\n----\n")
    assert result.format == "unknown"
    assert result.measurements == []
    assert result.unparsed == ["hello", "my model is slow, 5 tok/s, why?"]
    assert result.warnings


def test_over_size_raises_input_error_with_the_size() -> None:
    with pytest.raises(InputError, match=r"1,001 bytes.*1,000 bytes"):
        parse_output("x" * 1001, max_bytes=1000)
    with pytest.raises(InputError, match="bytes"):
        parse_output("é" * 600, max_bytes=1000)  # 1200 bytes of UTF-8
    assert parse_output("x" * 1000, max_bytes=1000).format == "unknown"


def test_ten_megabytes_is_refused_quickly() -> None:
    with pytest.raises(InputError, match="10,000,000 bytes"):
        parse_output("a" * 10_000_000)


def test_detect_format_looks_at_the_start_of_huge_texts() -> None:
    head = json.loads((CASES.parent / "imp-14.json").read_text(encoding="utf-8"))["text"]
    assert detect_format(head + "\n" + "x" * 6_000_000) == "ollama-verbose"


def test_not_a_string_is_an_input_error() -> None:
    with pytest.raises(InputError):
        parse_output(b"bytes")  # type: ignore[arg-type]
    assert detect_format(None) == "unknown"  # type: ignore[arg-type]


def test_row_with_missing_rate_is_not_a_measurement() -> None:
    text = (
        "| model | size | params | backend | ngl | test | t/s |\n"
        "| --- | --: | --: | --- | --: | --- | --: |\n"
        "| llama 7B Q4_0 | 3.56 GiB | 6.74 B | CUDA | 99 | pp512 |  |\n"
        "| llama 7B Q4_0 | 3.56 GiB | 6.74 B | CUDA | 99 | tg128 | n/a |\n"
        "| llama 7B Q4_0 | 3.56 GiB | 6.74 B | CUDA | 99 | tg128 | 131.66 ± 0.49 |\n"
        "| llama 7B Q4_0 | 3.56 GiB | CUDA | 99 | tg128 | 99.00 ± 0.49 |\n"
    )
    result = parse_output(text)
    assert result.format == "llama-bench-md"
    assert [m.decode_tps for m in result.measurements] == [131.66]
    assert len(result.unparsed) == 3
    assert len(result.warnings) == 3


def test_markdown_columns_are_read_by_name() -> None:
    """A fork that puts extra columns anywhere and reorders others still reads right."""
    text = (
        "| test | backend | warm_skip | model | ngl | t/s | params | size |\n"
        "|---|---|---|---|---|---|---|---|\n"
        "| tg128 @ d8192 | CUDA | 1 | llama 8B Q6_K | 99 | 101.10 ± 0.30 | 8.03 B | 6.14 GiB |\n"
    )
    (m,) = parse_output(text).measurements
    assert (m.decode_tps, m.gen_tokens, m.prompt_tokens, m.depth) == (101.1, 128, 0, 8192)
    assert (m.quant, m.backend, m.n_gpu_layers, m.params_b) == ("Q6_K", "llama.cpp-cuda", 99, 8.03)
    assert "warm_skip=1" in m.notes


def test_markdown_with_decimal_commas() -> None:
    text = (
        "| model | size | params | backend | ngl | test | t/s |\n"
        "| --- | ---: | ---: | --- | --: | --- | ---: |\n"
        "| llama 7B Q4_0 | 3,56 GiB | 6,74 B | Vulkan | 99 | pp512 | 1234,56 ± 2,25 |\n"
    )
    (m,) = parse_output(text).measurements
    assert m.prefill_tps == pytest.approx(1234.56)
    assert m.stddev_tps == pytest.approx(2.25)
    assert m.params_b == pytest.approx(6.74)


def test_csv_row_with_missing_avg_ts() -> None:
    text = 'n_prompt,n_gen,avg_ts,stddev_ts\n"512","0","","1.0"\n"0","128","88.5","0.2"\n"0","128"\n'
    result = parse_output(text)
    assert result.format == "llama-bench-csv"
    assert [m.decode_tps for m in result.measurements] == [88.5]
    assert result.unparsed == ['"512","0","","1.0"', '"0","128"']
    assert len(result.warnings) == 2


def test_sql_values_with_quotes_and_null() -> None:
    text = (
        "INSERT INTO test (cpu_info, model_type, n_prompt, n_gen, avg_ts, stddev_ts) "
        "VALUES ('Bob''s PC', 'llama 7B Q4_0', 512, 0, 100.5, NULL);"
    )
    result = parse_output(text)
    assert result.format == "llama-bench-sql"
    (m,) = result.measurements
    assert (m.prefill_tps, m.stddev_tps, m.hardware) == (100.5, None, "Bob's PC")


def test_json_with_inf_and_nan_rates() -> None:
    text = json.dumps(
        [
            {"n_prompt": 512, "n_gen": 0, "avg_ts": "inf"},
            {"n_prompt": 0, "n_gen": 128, "avg_ts": "nan"},
            {"n_prompt": 0, "n_gen": 128, "avg_ts": 55.5},
        ]
    )
    result = parse_output(text)
    assert [m.decode_tps for m in result.measurements] == [55.5]
    assert len(result.warnings) == 2


def test_ollama_verbose_go_inf() -> None:
    text = "eval count:           5 token(s)\neval duration:        0s\neval rate:            +Inf tokens/s"
    result = parse_output(text)
    assert result.format == "ollama-verbose"
    assert result.measurements == []
    assert any("+Inf" in w for w in result.warnings)
    assert "eval rate:            +Inf tokens/s" in result.unparsed


def test_ollama_verbose_several_runs() -> None:
    block = "prompt eval count:    10 token(s)\nprompt eval rate:     {p} tokens/s\neval count:           20 token(s)\neval rate:            {d} tokens/s\n"
    result = parse_output(
        block.format(p="100.00", d="10.00") + ">>> again\n" + block.format(p="200.00", d="20.00")
    )
    assert [(m.prefill_tps, m.decode_tps) for m in result.measurements] == [(100.0, 10.0), (200.0, 20.0)]
    assert result.unparsed == [">>> again"]


def test_ollama_api_missing_prompt_eval_count() -> None:
    text = '{"model": "m", "done": true, "eval_count": 50, "eval_duration": 1000000000, "total_duration": 1100000000}'
    (m,) = parse_output(text).measurements
    assert (m.prefill_tps, m.decode_tps, m.prompt_tokens, m.gen_tokens) == (None, 50.0, 0, 50)


def test_ollama_ps_folds_into_ollama_rates() -> None:
    text = (
        "total duration:       10s\neval count:           100 token(s)\neval duration:        10s\neval rate:            10.00 tokens/s\n"
        "NAME          ID              SIZE     PROCESSOR          UNTIL\n"
        "qwen2.5:32b   9f13ba1299af    23 GB    48%/52% CPU/GPU    4 minutes from now\n"
    )
    result = parse_output(text)
    assert result.format == "ollama-verbose"
    (m,) = result.measurements
    assert (m.decode_tps, m.gpu_fraction) == (10.0, 0.52)
    assert result.machine["ollama_ps"][0]["name"] == "qwen2.5:32b"


def test_ollama_ps_json() -> None:
    text = json.dumps(
        {
            "models": [
                {
                    "name": "llama3:8b",
                    "model": "llama3:8b",
                    "size": 6_000_000_000,
                    "size_vram": 4_500_000_000,
                    "digest": "abc",
                    "details": {"quantization_level": "Q4_0"},
                }
            ]
        }
    )
    result = parse_output(text)
    assert result.format == "ollama-ps"
    (m,) = result.measurements
    assert (m.model, m.gpu_fraction, m.quant, m.decode_tps) == ("llama3:8b", 0.75, "Q4_0", None)


def test_llama_server_timings_alone_and_streamed() -> None:
    timings = {
        "prompt_n": 100,
        "prompt_ms": 50.0,
        "prompt_per_second": 2000.0,
        "predicted_n": 10,
        "predicted_ms": 200.0,
        "predicted_per_second": 50.0,
    }
    assert parse_output(json.dumps(timings)).measurements[0].prefill_tps == 2000.0
    stream = 'data: {"choices":[{"delta":{"content":"hi"}}]}\n\ndata: ' + json.dumps(
        {"choices": [], "timings": timings}
    )
    result = parse_output(stream + "\n\ndata: [DONE]")
    assert result.format == "llama-server-timings"
    assert [m.decode_tps for m in result.measurements] == [50.0]


def test_llama_server_fully_cached_prompt() -> None:
    text = json.dumps(
        {
            "timings": {
                "cache_n": 500,
                "prompt_n": 0,
                "prompt_ms": 0.0,
                "prompt_per_second": 1e30,
                "predicted_n": 20,
                "predicted_per_second": 40.0,
            }
        }
    )
    (m,) = parse_output(text).measurements
    assert (m.prefill_tps, m.decode_tps, m.cached_tokens, m.depth) == (None, 40.0, 500, 500)


def test_batched_bench_jsonl() -> None:
    row = {
        "n_kv_max": 4096,
        "n_batch": 2048,
        "n_ubatch": 512,
        "flash_attn": 0,
        "is_pp_shared": 0,
        "n_gpu_layers": 99,
        "n_threads": 8,
        "n_threads_batch": 8,
        "pp": 128,
        "tg": 128,
        "pl": 4,
        "n_kv": 1024,
        "t_pp": 0.373,
        "speed_pp": 1373.96,
        "t_tg": 6.878,
        "speed_tg": 74.44,
        "t": 7.251,
        "speed": 141.23,
    }
    result = parse_output(json.dumps(row))
    assert result.format == "batched-bench"
    (m,) = result.measurements
    assert (m.prefill_tps, m.decode_tps, m.batch, m.n_gpu_layers) == (1373.96, 74.44, 4, 99)


def test_mlx_generate_old_format_without_counts() -> None:
    text = "==========\nPrompt: 261.786 tokens-per-sec\nGeneration: 23.146 tokens-per-sec\n=========="
    (m,) = parse_output(text).measurements
    assert (m.prefill_tps, m.decode_tps, m.prompt_tokens) == (261.786, 23.146, None)


def test_context_lines_fill_print_timings() -> None:
    text = (
        "$ ./llama-cli -m models/Mistral-7B-Instruct-v0.3-Q4_K_M.gguf -ngl 20 -t 6 -p hi\n"
        "print_info: file type   = Q4_K - Medium\n"
        "print_info: model params = 7.25 B\n"
        "load_tensors: offloaded 20/33 layers to GPU\n"
        "llama_perf_context_print: prompt eval time =     927.17 ms /    49 tokens (   18.92 ms per token,    52.85 tokens per second)\n"
        "llama_perf_context_print:        eval time =   14085.85 ms /   178 runs   (   79.13 ms per token,    12.64 tokens per second)\n"
    )
    result = parse_output(text)
    assert result.format == "llama-perf"
    (m,) = result.measurements
    assert (m.quant, m.params_b, m.n_gpu_layers, m.threads) == ("Q4_K_M", 7.25, 20, 6)
    assert m.gpu_fraction == pytest.approx(20 / 33, abs=1e-4)
    assert m.model == "Mistral-7B-Instruct-v0.3-Q4_K_M"
    assert result.unparsed == []


def test_two_tools_in_one_paste() -> None:
    text = (
        "eval count:           100 token(s)\neval rate:            10.00 tokens/s\n\n"
        "Prompt: 50 tokens, 500.000 tokens-per-sec\nGeneration: 100 tokens, 30.000 tokens-per-sec\n"
    )
    result = parse_output(text)
    assert result.format == "ollama-verbose"
    assert [m.decode_tps for m in result.measurements] == [10.0, 30.0]
    assert any("mlx-generate" in w for w in result.warnings)


def test_github_quote_markers_and_crlf() -> None:
    text = "> prompt eval rate:     0.66 tokens/s\r\n> eval rate:            8.87 tokens/s\r\n"
    result = parse_output(text)
    assert [(m.prefill_tps, m.decode_tps) for m in result.measurements] == [(0.66, 8.87)]


@pytest.mark.parametrize("case_id", ["case-05", "case-08"])
def test_user_report_pastes_give_their_numbers(case_id: str) -> None:
    """Two user reports whose pasted output carries the numbers the report quotes."""
    scenario = json.loads((CASES / f"{case_id}.json").read_text(encoding="utf-8"))["scenario"]
    (m,) = parse_output(scenario["raw_output"]).measurements
    assert m.prefill_tps == scenario["measured_prefill_tps"]
    assert m.decode_tps == scenario["measured_decode_tps"]
    assert m.prompt_tokens == scenario["prompt_tokens"]
    assert m.gen_tokens == scenario["gen_tokens"]


@pytest.mark.parametrize("case_id", ["case-01", "case-07", "case-22", "case-28"])
def test_user_report_tables_that_are_no_tool_output(case_id: str) -> None:
    """Hand-made tables and prose are not tool output: unknown, every line listed, no exception."""
    raw = json.loads((CASES / f"{case_id}.json").read_text(encoding="utf-8"))["scenario"]["raw_output"]
    result = parse_output(raw)
    assert result.format == "unknown"
    assert result.measurements == []
    assert len(result.unparsed) == sum(
        1 for line in raw.splitlines() if line.strip() and not is_decoration(line)
    )
