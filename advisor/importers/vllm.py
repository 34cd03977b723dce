"""vLLM ``vllm bench serve`` / ``benchmark_serving.py``: the console result block and the saved JSON;
also the one-line summary of ``vllm bench throughput`` (offline batch, output tokens/s).

A serving benchmark measures a loaded server, not one request. The measurement holds aggregate
figures: ``decode_tps`` = output token throughput (tok/s over all concurrent requests),
``prompt_tokens``/``gen_tokens`` = total input/generated tokens of the run, ``ttft_s`` = mean TTFT,
``batch`` = the maximum request concurrency when the run set one. No prefill rate is reported.
The per-request decode rate (1000 ÷ mean TPOT in ms) goes into ``notes``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any

from advisor.importers._registry import Example, Importer, signature
from advisor.importers._util import NUM, Outcome, parse_number, to_float, to_int

__all__ = ["IMPORTERS", "from_json", "parse_console", "parse_serving_blocks"]

_HEADER = re.compile(r"^\s*=*\s*Serving Benchmark Result\s*=*\s*$", re.I)
_RULE = re.compile(r"^\s*={5,}\s*$")
_SECTION = re.compile(r"^\s*-{3,}[^-].*?-{3,}\s*$")
_KV = re.compile(rf"^\s*(?P<key>[A-Za-z][^:]{{1,80}}?)\s*:\s*(?P<val>{NUM})\s*$", re.I)
_METRIC = re.compile(r"^(?:mean|median|std|p\d+(?:\.\d+)?) (?:ttft|tpot|itl|e2el) \(ms\)$")
_KNOWN = {
    "successful requests",
    "failed requests",
    "maximum request concurrency",
    "max request concurrency",
    "max reqeuest concurrency",
    "input token throughput (tok/s)",
    "total generated tokens (retokenized)",
    "concurrency",
    "request rate configured (rps)",
    "benchmark duration (s)",
    "total input tokens",
    "total generated tokens",
    "request throughput (req/s)",
    "request goodput (req/s)",
    "output token throughput (tok/s)",
    "peak output token throughput (tok/s)",
    "peak concurrent requests",
    "total token throughput (tok/s)",
    "traffic request rate",
    "total num prompt tokens",
    "total num output tokens",
}
# console key -> saved-JSON key
_CANON = {
    "output token throughput (tok/s)": "output_throughput",
    "total input tokens": "total_input_tokens",
    "total num prompt tokens": "total_input_tokens",
    "total num output tokens": "total_output_tokens",
    "total generated tokens": "total_output_tokens",
    "mean ttft (ms)": "mean_ttft_ms",
    "mean tpot (ms)": "mean_tpot_ms",
    "mean itl (ms)": "mean_itl_ms",
    "maximum request concurrency": "max_concurrency",
    "max request concurrency": "max_concurrency",
    "max reqeuest concurrency": "max_concurrency",  # sic, SGLang bench_serving
    "successful requests": "completed",
    "request throughput (req/s)": "request_throughput",
}


def _fields(d: dict[str, Any]) -> dict[str, Any]:
    """Measurement fields from saved-JSON style keys (``output_throughput``, ``mean_tpot_ms``...)."""
    tpot, ttft = to_float(d.get("mean_tpot_ms")), to_float(d.get("mean_ttft_ms"))
    itl = to_float(d.get("mean_itl_ms"))
    if not (tpot and math.isfinite(tpot) and tpot > 0) and itl and math.isfinite(itl) and itl > 0:
        tpot = itl  # the mean gap between a request's tokens: TPOT's own measure when TPOT is not printed
    bad_ttft = ttft is not None and not (math.isfinite(ttft) and ttft >= 0)
    batch = to_int(d.get("max_concurrency"))
    notes = [
        "vllm bench throughput (offline batch): decode_tps is output tokens/s over the whole batch"
        if d.get("offline")
        else "serving benchmark: decode_tps is the output throughput summed over all concurrent requests"
    ]
    if tpot and math.isfinite(tpot) and tpot > 0:
        notes.append(f"per-request decode ≈ {1000 / tpot:.2f} tok/s (1000 / mean TPOT {tpot:g} ms)")
    if bad_ttft:
        notes.append(f"mean TTFT {ttft:g} ms is not a time; ignored")
    for key, label in (
        ("completed", "successful requests"),
        ("request_throughput", "request throughput, req/s"),
    ):
        if d.get(key) is not None:
            notes.append(f"{label}: {d[key]:g}" if isinstance(d[key], float) else f"{label}: {d[key]}")
    model = d.get("model_id")
    return {
        "decode_tps": to_float(d.get("output_throughput")),
        "prompt_tokens": to_int(d.get("total_input_tokens")),
        "gen_tokens": to_int(d.get("total_output_tokens")),
        "ttft_s": round(ttft / 1000, 6) if ttft is not None and not bad_ttft else None,
        "tpot_s": round(tpot / 1000, 6) if tpot and math.isfinite(tpot) and tpot > 0 else None,
        "requests": completed if (completed := to_int(d.get("completed"))) and completed > 0 else None,
        "batch": batch if batch and batch > 0 else None,
        "model": model if isinstance(model, str) else None,
        "notes": notes,
    }


# ``vllm bench throughput`` (offline batch): one summary line.
_THROUGHPUT = re.compile(
    rf"^\s*Throughput:\s*(?P<req>{NUM})\s*requests/s,\s*(?P<total>{NUM})\s*total tokens/s,\s*(?P<out>{NUM})\s*output tokens/s",
    re.I,
)


def from_json(obj: dict[str, Any], out: Outcome, line: int) -> bool:
    """Add the measurement of a saved ``--save-result`` JSON."""
    return out.add(line, _fields(obj), f"vLLM result at line {line + 1}")


# Keys only SGLang's bench_serving prints (its typo included): a block with one is SGLang's.
_SGLANG_KEYS = {
    "max reqeuest concurrency",
    "input token throughput (tok/s)",
    "total generated tokens (retokenized)",
}
_BACKEND = re.compile(r"^\s*Backend\s*:\s*(?P<name>[\w.\-]+)\s*$", re.I)
_ENGINES = (("sglang", "sglang"), ("vllm", "vllm"), ("lmdeploy", "lmdeploy"), ("trt", "tensorrt"))


def parse_serving_blocks(lines: Sequence[str], *, sglang: bool) -> Outcome:
    """Read ``============ Serving Benchmark Result ============`` blocks (header optional).

    vLLM's ``vllm bench serve`` and SGLang's ``bench_serving`` print the same block; SGLang's has
    ``Max reqeuest concurrency`` (sic) and a few keys of its own. Only the blocks of the tool asked for
    (``sglang``) are read, so each is reported under its own format. A ``Backend:`` line names the
    server that was measured (``engine``).
    """
    out = Outcome("sglang-bench" if sglang else "vllm-bench")
    block: dict[str, Any] = {}
    first: int | None = None
    in_block = False
    block_lines: list[int] = []
    server: str | None = None

    def flush() -> None:
        nonlocal block, first, block_lines, server
        is_sglang = bool(_SGLANG_KEYS & block.keys()) or (server or "").startswith("sglang")
        if first is not None and block and is_sglang == sglang:
            fields = _fields({k: v for k, v in block.items() if k not in _SGLANG_KEYS})
            fields["engine"] = next(
                (e for key, e in _ENGINES if (server or "").lower().startswith(key)), None
            )
            if out.add(first, fields, f"serving benchmark result at line {first + 1}"):
                out.consumed.update(block_lines)
        block, first, block_lines, server = {}, None, [], None

    for i, line in enumerate(lines):
        kv = _KV.match(line)
        key = re.sub(r"\s+", " ", kv.group("key").strip().lower()) if kv else ""
        backend = _BACKEND.match(line) if in_block or _HEADER.match(lines[i - 1] if i else "") else None
        if offline := _THROUGHPUT.match(line):
            flush()
            block = {
                "output_throughput": parse_number(offline.group("out")),
                "offline": True,
                "request_throughput": parse_number(offline.group("req")),
            }
            in_block, first = True, i
        elif _HEADER.match(line):
            flush()
            in_block, first = True, i
        elif backend:
            server = backend.group("name")
        elif in_block and _RULE.match(line):
            block_lines.append(i)
            flush()
            in_block = False
            continue
        elif in_block and _SECTION.match(line):
            pass
        elif kv and (in_block or key in _KNOWN or _METRIC.match(key)):
            value = parse_number(kv.group("val"))
            block[key if key in _SGLANG_KEYS else _CANON.get(key, key)] = (
                int(value) if value is not None and value.is_integer() else value
            )
            if key == "max reqeuest concurrency":
                block["max_concurrency"] = block[key]
            first = i if first is None else first
            in_block = True
        else:
            continue
        block_lines.append(i)
    flush()
    return out


def parse_console(lines: Sequence[str]) -> Outcome:
    """Read vLLM's serving benchmark blocks and ``vllm bench throughput`` lines."""
    return parse_serving_blocks(lines, sglang=False)


def _is_result(obj: dict[str, Any]) -> bool:
    return any(k in obj for k in ("output_throughput", "mean_tpot_ms", "total_output_tokens", "mean_ttft_ms"))


IMPORTERS = (
    Importer(
        name="vllm-bench",
        engine="vllm",
        describe="vllm bench serve block or saved JSON, vllm bench throughput line (batch = max concurrency)",
        signature=signature(
            r"Serving Benchmark Result|^\s*Output token throughput \(tok/s\)\s*:|^\s*Throughput:.*output tokens/s"
        ),
        parse_text=parse_console,
        json_test=_is_result,
        from_json=from_json,
        order=50,
        examples=(
            Example(
                "============ Serving Benchmark Result ============\n"
                "Successful requests:                     772\n"
                "Maximum request concurrency:             16\n"
                "Total input tokens:                      130743\n"
                "Total generated tokens:                  174589\n"
                "Output token throughput (tok/s):         529.33\n"
                "==================================================",
                ({"decode_tps": 529.33, "batch": 16, "gen_tokens": 174589, "engine": "vllm"},),
            ),
        ),
    ),
)
