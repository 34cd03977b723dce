"""The registry of formats: every record's own examples, the engine each format implies, and the
engine that reaches the store."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import advisor.importers.detect as detect
from advisor.importers import FORMATS, engine_for_format, parse_output
from advisor.importers._registry import Example, Importer, get_importer, importers

FIXTURES = sorted((Path(__file__).parent / "fixtures").glob("*.json"))
_EXAMPLES = [(r, ex) for r in importers() for ex in r.examples]


def _check(got: Any, want: dict[str, Any], where: str) -> None:
    for key, value in want.items():
        actual = getattr(got, key)
        if isinstance(value, float) and actual is not None:
            assert actual == pytest.approx(value, rel=1e-6), f"{where}: {key}"
        else:
            assert actual == value, f"{where}: {key} = {actual!r}, expected {value!r}"


@pytest.mark.parametrize(
    ("record", "example"), _EXAMPLES, ids=[f"{r.name}:{e.what or 'basic'}" for r, e in _EXAMPLES]
)
def test_every_record_reads_its_own_examples(record: Importer, example: Example) -> None:
    result = parse_output(example.text)
    assert result.format == record.name, result.warnings
    assert len(result.measurements) == len(example.expected), result.warnings
    for n, (got, want) in enumerate(zip(result.measurements, example.expected, strict=True)):
        _check(got, want, f"{record.name} example {example.what!r} measurement {n}")
        assert got.engine == record.engine or "engine" in want


def test_every_format_has_a_record_with_examples() -> None:
    names = [r.name for r in importers()]
    assert tuple(names) == FORMATS and len(set(names)) == len(names)
    for record in importers():
        if record.name != "unknown":
            assert record.examples, f"{record.name} has no example"
            assert record.signature is not None or record.json_test is not None
            assert (record.signature is None) == (record.parse_text is None)
            assert (record.json_test is None) == (record.from_json is None)


def test_detection_lives_in_the_records() -> None:
    """No second list of signatures or JSON keys outside the registry."""
    assert not hasattr(detect, "_SIGNATURES") and not hasattr(detect, "_classify_dict")


@pytest.mark.parametrize(
    ("fmt", "engine"),
    [
        ("llama-bench-md", "llama.cpp"),
        ("llama-bench-json", "llama.cpp"),
        ("batched-bench", "llama.cpp"),
        ("llama-server-log", "llama.cpp"),
        ("llama-perf", "llama.cpp"),
        ("ollama-verbose", "ollama"),
        ("ollama-api", "ollama"),
        ("mlx-generate", "mlx"),
        ("mlx-lm-benchmark", "mlx"),
        ("lmstudio", "lm-studio"),
        ("vllm-bench", "vllm"),
        ("sglang-bench", "sglang"),
        ("textgen-webui", "text-generation-webui"),
        ("koboldcpp", "koboldcpp"),
        ("exllamav2", "exllamav2"),
        ("unknown", "other"),
        ("no-such-format", "other"),
    ],
)
def test_engine_for_format(fmt: str, engine: str) -> None:
    assert engine_for_format(fmt) == engine


def test_engine_names_are_the_classifier_vocabulary() -> None:
    from advisor.understand.situation import ENGINES

    assert {r.engine for r in importers()} <= set(ENGINES)


@pytest.mark.parametrize("path", FIXTURES, ids=[p.stem for p in FIXTURES])
def test_every_measurement_carries_its_formats_engine(path: Path) -> None:
    case = json.loads(path.read_text(encoding="utf-8"))
    result = parse_output(case["text"])
    for m in result.measurements:
        assert m.engine == get_importer(result.format).engine
        assert m.backend is not None and m.backend.startswith(m.engine)


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """A store of this module's own: imports here must not change the shared session store's counts."""
    from knowledge.store import Store

    return Store(str(tmp_path_factory.mktemp("imports") / "advisor.duckdb"))


RTX_4090_TABLE = (
    "ggml_cuda_init: found 1 CUDA devices:\n"
    "  Device 0: NVIDIA GeForce RTX 4090, compute capability 8.9, VMM: yes\n"
    "| model                          |       size |     params | backend    | ngl |          test |                  t/s |\n"
    "| ------------------------------ | ---------: | ---------: | ---------- | --: | ------------: | -------------------: |\n"
    "| llama 8B Q4_K - Medium         |   4.58 GiB |     8.03 B | CUDA       |  99 |         pp512 |     11034.22 ± 30.10 |\n"
    "| llama 8B Q4_K - Medium         |   4.58 GiB |     8.03 B | CUDA       |  99 |         tg128 |        127.47 ± 0.31 |\n"
    "| llama 8B Q4_K - Medium         |   4.58 GiB |     8.03 B | CUDA       | 99999999999 |         tg128 |        1.0 ± 0.1 |\n"
)


def _imported(store: Any, saved_id: str) -> list[tuple[Any, ...]]:
    with store.cursor() as cur:
        return cur.execute(
            "SELECT engine, accel, backend, decode_tps, prefill_tps, n_gpu_layers FROM results "
            "WHERE parent_id = ? ORDER BY coalesce(decode_tps, 0)",
            [saved_id],
        ).fetchall()


def test_a_pasted_rtx_4090_table_is_stored_under_llama_cpp(store: Any) -> None:
    """The engine is the format's (llama.cpp), not ``other``; the overflowing row is reported and
    skipped, the two sound rows of the same paste are stored."""
    from advisor.service import import_output

    outcome = import_output(store, RTX_4090_TABLE)
    assert outcome.format == "llama-bench-md" and outcome.saved_id
    assert [(m.prefill_tps, m.decode_tps) for m in outcome.measurements] == [(11034.22, None), (None, 127.47)]
    assert any("99999999999" in line for line in outcome.unparsed)
    assert "n_gpu_layers 99999999999 does not fit a 32-bit integer" in outcome.message
    assert any("does not fit a 32-bit integer" in w for w in outcome.warnings)
    rows = _imported(store, outcome.saved_id)
    assert [(r[0], r[1], r[2]) for r in rows] == [("llama.cpp", "cuda", "llama.cpp-cuda")] * 2
    assert [(r[3], r[4], r[5]) for r in rows] == [(None, 11034.22, 99), (127.47, None, 99)]


@pytest.mark.parametrize(
    ("text", "engine"),
    [
        (
            "Output generated in 15.34 seconds (33.24 tokens/s, 510 tokens, context 3200, seed 925476152)",
            "text-generation-webui",
        ),
        (
            "CtxLimit: 1754/8192, Process:25.05s (14.9ms/T = 66.89T/s), Generate:59.05s (152.6ms/T = 6.55T/s), "
            "Total:84.11s (4.60T/s)",
            "koboldcpp",
        ),
        (" ** Length   512 tokens:    359.8361 t/s", "exllamav2"),
        ("prompt eval rate:     0.66 tokens/s\neval rate:            8.87 tokens/s", "ollama"),
    ],
)
def test_new_engines_reach_the_store(store: Any, text: str, engine: str) -> None:
    from advisor.service import import_output

    outcome = import_output(store, text)
    assert outcome.saved_id
    assert {r[0] for r in _imported(store, outcome.saved_id)} == {engine}


@pytest.mark.parametrize(
    "command",
    ["./llama-cli -m x.gguf -ngl 99999999999 -t 8", "./llama-cli -m x.gguf -ngl 99 -t 99999999999"],
)
def test_absurd_flags_in_the_command_are_reported_not_stored(store: Any, command: str) -> None:
    from advisor.service import import_output

    text = (
        command
        + "\nllama_perf_context_print:        eval time =   14085.85 ms /   178 runs   (   79.13 ms per token,    12.64 tokens per second)"
    )
    result = parse_output(text)
    (m,) = result.measurements
    assert m.decode_tps == 12.64 and (m.n_gpu_layers, m.threads) in ((None, 8), (99, None))
    assert any("not used" in w for w in result.warnings)
    outcome = import_output(store, text)
    assert outcome.saved_id and [r[3] for r in _imported(store, outcome.saved_id)] == [12.64]
