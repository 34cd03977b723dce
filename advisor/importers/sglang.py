"""SGLang: ``bench_latency`` / ``bench_one_batch`` (one static batch) and ``bench_serving``.

``bench_one_batch`` prints per run ``Prefill. latency: … s, throughput: … token/s``, one
``Decode.  latency: …`` line per step (newer: ``Decode 3. Batch size: 32, latency: …``), then
``Decode.  median latency: … s, median throughput: … token/s`` and ``Total. latency: …``. The rates are
aggregate over the batch: ``prefill_tps`` = the prefill throughput, ``decode_tps`` = the median decode
throughput, ``batch`` = the batch size. Runs after ``Warmup ...`` and before ``Benchmark ...`` are the
warm-up and are not kept. Batch size, input and output length come from the command
(``--batch-size 1 8 --input-len 256 --output-len 32``: one run per combination, in that order) or
from the decode lines. The ``--result-filename`` JSONL records are read too.

``bench_serving`` prints vLLM's result block (with ``Max reqeuest concurrency``, sic): see
:func:`advisor.importers.vllm.parse_serving_blocks`.
"""

from __future__ import annotations

import itertools
import re
import statistics
from collections.abc import Sequence
from typing import Any

from advisor.importers._registry import Example, Importer, signature
from advisor.importers._util import NUM, Outcome, is_rate, parse_number, to_float, to_int
from advisor.importers.vllm import parse_serving_blocks

__all__ = ["IMPORTERS", "from_json", "parse_text"]

_RATE = rf"latency\s*:\s*(?P<lat>{NUM})\s*s\s*,\s*(?:median\s+)?throughput\s*:\s*(?P<tps>{NUM})\s*tokens?/s"
_PREFILL = re.compile(rf"^\s*Prefill\.\s*{_RATE}", re.I)
_DECODE = re.compile(rf"^\s*Decode(?:\s+\d+)?\.\s*(?:Batch size\s*:\s*(?P<bs>\d+)\s*,\s*)?{_RATE}", re.I)
_MEDIAN = re.compile(rf"^\s*Decode\.\s*median\s+{_RATE}", re.I)
_TOTAL = re.compile(rf"^\s*Total\.\s*{_RATE}", re.I)
_WARMUP = re.compile(r"^\s*Warmup\s*\.*\s*$", re.I)
_BENCHMARK = re.compile(r"^\s*Benchmark\s*\.*\s*$", re.I)
_COMMAND = re.compile(r"\bsglang\.bench_(?:latency|one_batch)\b")
_FLAG = re.compile(
    r"--(?P<flag>batch(?:[-_]size)?|bs|input[-_]len|output[-_]len)(?:\s+|=)(?P<values>\d+(?:\s+\d+)*)"
)
_MAX_TOKENS_LINE = re.compile(r"^\s*max_total_num_tokens\s*=\s*\d+\s*$")


def _command_configs(lines: Sequence[str]) -> list[tuple[int | None, int | None, int | None]]:
    """(batch, input, output) of each run the command asked for, in the order SGLang runs them."""
    for line in lines:
        if not _COMMAND.search(line):
            continue
        found: dict[str, list[int | None]] = {}
        for m in _FLAG.finditer(line):
            key = m.group("flag").replace("_", "-")
            key = "batch" if key.startswith(("batch", "bs")) else key
            found[key] = [to_int(v) for v in m.group("values").split()]
        return list(
            itertools.product(
                found.get("batch", [None]), found.get("input-len", [None]), found.get("output-len", [None])
            )
        )
    return []


class _Run:
    def __init__(self, line: int, warmup: bool) -> None:
        self.line, self.warmup = line, warmup
        self.prefill: float | None = None
        self.steps: list[float] = []
        self.median: float | None = None
        self.batch: int | None = None
        self.lines: list[int] = []

    def fields(self, config: tuple[int | None, int | None, int | None] | None) -> dict[str, Any]:
        batch, n_in, n_out = config or (None, None, None)
        decode = (
            self.median
            if self.median is not None
            else (statistics.median(self.steps) if self.steps else None)
        )
        notes = ["SGLang bench_one_batch: rates are aggregate over the whole batch"]
        if self.median is None and self.steps:
            notes.append("no median line: median of the decode steps shown")
        return {
            "prefill_tps": self.prefill,
            "decode_tps": decode,
            "batch": self.batch or batch,
            "prompt_tokens": n_in,
            "gen_tokens": n_out,
            "notes": notes,
        }


def _bench_runs(lines: Sequence[str], out: Outcome) -> None:
    runs: list[_Run] = []
    current: _Run | None = None
    warmup = False
    for i, line in enumerate(lines):
        if _WARMUP.match(line) or _BENCHMARK.match(line) or _MAX_TOKENS_LINE.match(line):
            warmup = bool(_WARMUP.match(line)) or (warmup and bool(_MAX_TOKENS_LINE.match(line)))
            current = None
            out.consumed.add(i)
            continue
        prefill, median, total, decode = _PREFILL.match(line), _MEDIAN.match(line), _TOTAL.match(line), None
        if not (prefill or median or total):
            decode = _DECODE.match(line)
        if not (prefill or median or total or decode):
            continue
        if prefill or current is None:
            current = _Run(i, warmup)
            runs.append(current)
        m = prefill or median or total or decode
        assert m is not None
        tps = parse_number(m.group("tps"))
        if not is_rate(tps):
            out.warnings.append(f"line {i + 1}: throughput {m.group('tps')!r} is not a usable rate")
            continue
        if prefill:
            current.prefill = tps
        elif median:
            current.median = tps
        elif decode:
            current.steps.append(tps or 0.0)
            current.batch = to_int(decode.group("bs")) if decode.group("bs") else current.batch
        current.lines.append(i)
        if total:
            current = None
    measured = [r for r in runs if not r.warmup]
    configs = _command_configs(lines)
    for n, run in enumerate(measured):
        config = configs[n] if len(configs) == len(measured) else configs[0] if len(configs) == 1 else None
        fields = run.fields(config)
        if out.add(run.line, fields, f"SGLang run at line {run.line + 1}"):
            out.consumed.update(run.lines)
    for run in runs:
        if run.warmup:
            out.consumed.update(run.lines)


def parse_text(lines: Sequence[str]) -> Outcome:
    """Read ``bench_one_batch`` runs and ``bench_serving`` result blocks."""
    out = parse_serving_blocks(lines, sglang=True)
    _bench_runs(lines, out)
    return out


def _is_record(obj: dict[str, Any]) -> bool:
    return any(k in obj for k in ("prefill_throughput", "median_decode_throughput"))


def from_json(obj: dict[str, Any], out: Outcome, line: int) -> bool:
    """Add one ``bench_one_batch --result-filename`` record."""
    fields = {
        "prefill_tps": to_float(obj.get("prefill_throughput")),
        "decode_tps": to_float(obj.get("median_decode_throughput")),
        "batch": to_int(obj.get("batch_size")),
        "prompt_tokens": to_int(obj.get("input_len")),
        "gen_tokens": to_int(obj.get("output_len")),
        "notes": ["SGLang bench_one_batch: rates are aggregate over the whole batch"],
    }
    return out.add(line, fields, f"SGLang record at line {line + 1}")


_LATENCY_RUN = """Prefill. latency: {p_lat} s, throughput:  {p} token/s
Decode.  latency: 0.01015 s, throughput:   3151.69 token/s
Decode.  latency: 0.00984 s, throughput:   3252.58 token/s
Decode.  median latency: 0.00973 s, median throughput:   {d} token/s
Total. latency:  0.553 s, throughput:  16665.96 token/s"""

IMPORTERS = (
    Importer(
        name="sglang-bench",
        engine="sglang",
        describe="SGLang bench_latency / bench_one_batch runs (aggregate, batch = batch size) and bench_serving",
        signature=signature(
            r"^\s*Prefill\.\s*latency\s*:|^\s*Decode\.\s*median\s+latency\s*:|Max reqeuest concurrency\s*:"
            r"|Total generated tokens \(retokenized\)\s*:|^\s*Input token throughput \(tok/s\)\s*:"
            r"|^\s*Backend\s*:\s*sglang",
            re.I,
        ),
        parse_text=parse_text,
        json_test=_is_record,
        from_json=from_json,
        order=55,
        examples=(
            Example(
                "$ python -m sglang.bench_latency --model-path meta-llama/Meta-Llama-3-8B-Instruct --batch 32 "
                "--input-len 256 --output-len 32\nmax_total_num_tokens=1256440\nWarmup ...\n"
                + _LATENCY_RUN.format(p_lat="0.37333", p="21943.23", d="3280.16")
                + "\nBenchmark ...\n"
                + _LATENCY_RUN.format(p_lat="0.25074", p="32671.13", d="3289.81"),
                (
                    {
                        "prefill_tps": 32671.13,
                        "decode_tps": 3289.81,
                        "batch": 32,
                        "prompt_tokens": 256,
                        "gen_tokens": 32,
                        "engine": "sglang",
                    },
                ),
                "warm-up run skipped",
            ),
            Example(
                "python3 -m sglang.bench_one_batch --model-path m --batch-size 1 8 --input-len 512 --output-len 16\n"
                + _LATENCY_RUN.format(p_lat="0.1", p="5120.00", d="95.00")
                + "\n"
                + _LATENCY_RUN.format(p_lat="0.5", p="8192.00", d="700.00"),
                (
                    {"prefill_tps": 5120.0, "decode_tps": 95.0, "batch": 1, "prompt_tokens": 512},
                    {"prefill_tps": 8192.0, "decode_tps": 700.0, "batch": 8, "gen_tokens": 16},
                ),
                "two batch sizes",
            ),
            Example(
                "============ Serving Benchmark Result ============\n"
                "Backend:                                 sglang\n"
                "Traffic request rate:                    inf\n"
                "Max reqeuest concurrency:                64\n"
                "Successful requests:                     500\n"
                "Total input tokens:                      256000\n"
                "Total generated tokens:                  64000\n"
                "Output token throughput (tok/s):         2750.12\n"
                "==================================================",
                ({"decode_tps": 2750.12, "batch": 64, "prompt_tokens": 256000, "engine": "sglang"},),
                "bench_serving",
            ),
        ),
    ),
)
