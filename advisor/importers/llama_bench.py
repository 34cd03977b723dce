"""llama-bench output: the markdown table and the CSV, JSON, JSONL and SQL records.

Conventions (rates in tokens per second, as printed):
  * ``ppN`` (``n_prompt`` N, ``n_gen`` 0): ``prefill_tps``, ``prompt_tokens`` N, ``gen_tokens`` 0;
  * ``tgN``: ``decode_tps``, ``prompt_tokens`` 0, ``gen_tokens`` N;
  * ``ppN+tgM`` (both counts > 0): ``blended_tps`` only;
  * ``@ dD`` / ``n_depth``: ``depth`` D (0 when absent); ``± s`` / ``stddev_ts``: ``stddev_tps``.
Columns and fields are looked up by name, so narrowed tables and fork columns are fine.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Mapping, Sequence
from pathlib import PurePosixPath, PureWindowsPath
from typing import Any

from advisor.importers._registry import Example, Importer, signature
from advisor.importers._util import (
    NUM,
    Outcome,
    backend_name,
    find_quant,
    guess_decimal_comma,
    parse_number,
    parse_params_b,
    parse_size_gb,
    split_model_type,
    split_table_row,
    to_float,
    to_int,
)

__all__ = ["IMPORTERS", "from_json", "parse_csv", "parse_markdown", "parse_sql", "row_fields"]

_TEST = re.compile(r"^(pp|tg|pg)\s*(\d+)(?:\s*[+,]\s*(?:tg)?\s*(\d+))?(?:\s*@\s*d\s*(\d+))?$", re.I)
_RATE = re.compile(rf"^({NUM})\s*(?:(?:±|\+/-|\+-|Â±|�)\s*({NUM}))?$", re.I)
_RATE_COLUMNS = ("t/s", "tok/s", "tokens/s")
_CORE_COLUMNS = {"model", "size", "params", "backend", "ngl", "threads", "test", *_RATE_COLUMNS}
_SEPARATOR = re.compile(r"^:?-+:?$")
_BUILD = re.compile(r"^\s*build:\s*(\S+)\s*\((\d+)\)\s*$")
_LEGACY_BACKENDS = (
    ("cuda", "CUDA"),
    ("metal", "Metal"),
    ("vulkan", "Vulkan"),
    ("sycl", "SYCL"),
    ("opencl", "OpenCL"),
    ("kompute", "Kompute"),
)
_MACHINE_KEYS = ("cpu_info", "gpu_info", "backends", "build_commit", "build_number")


def _test_fields(kind: str, first: int, second: int | None, rate: float | None) -> dict[str, Any]:
    """Counts and the rate field for a test: pp → prefill, tg → decode, both → blended."""
    if second is not None or kind == "pg":
        return {"prompt_tokens": first, "gen_tokens": second or 0, "blended_tps": rate}
    if kind == "pp":
        return {"prompt_tokens": first, "gen_tokens": 0, "prefill_tps": rate}
    return {"prompt_tokens": 0, "gen_tokens": first, "decode_tps": rate}


def _is_header(cells: list[str]) -> bool:
    low = {c.lower() for c in cells}
    return "test" in low and any(c in low for c in _RATE_COLUMNS)


def _is_separator(cells: list[str]) -> bool:
    return any(cells) and all(_SEPARATOR.match(c) for c in cells if c)


def _md_row(row: dict[str, str]) -> tuple[dict[str, Any] | None, str]:
    """Fields of one markdown data row, or (None, why)."""
    test = _TEST.match(row.get("test", "").strip())
    rate_text = next((row[c] for c in _RATE_COLUMNS if c in row), "")
    rate = _RATE.match(rate_text.strip())
    if not test:
        return None, f"test {row.get('test', '')!r} is not ppN, tgN or ppN+tgM"
    if not rate:
        return None, f"t/s {rate_text!r} is not a number"
    comma = guess_decimal_comma(
        re.findall(NUM, " ".join(row.get(k, "") for k in ("size", "params")) + rate_text)
    )
    mean, std = parse_number(rate.group(1), comma), parse_number(rate.group(2), comma)
    first, second, depth = to_int(test.group(2)), to_int(test.group(3)), to_int(test.group(4) or 0)
    if first is None or depth is None or (test.group(3) and second is None):
        return None, f"test {row.get('test', '')!r} has a token count out of range"
    fields = _test_fields(test.group(1).lower(), first, second, mean)
    model, quant = split_model_type(row.get("model", ""))
    fields.update(
        depth=depth,
        stddev_tps=std,
        model=model,
        quant=quant,
        params_b=parse_params_b(row.get("params", ""), comma),
        model_size_gb=parse_size_gb(row.get("size", ""), comma),
        backend=backend_name(row.get("backend")),
        n_gpu_layers=to_int(row.get("ngl")),
        threads=to_int(row.get("threads")),
        notes=[f"{k}={v}" for k, v in row.items() if k not in _CORE_COLUMNS and v],
    )
    return fields, ""


_SIZE_CELL = re.compile(r"^[\d.,]+\s*(?:GiB|MiB|GB|MB)$", re.I)
_PARAMS_CELL = re.compile(r"^[\d.,]+\s*[BM]$")


def _implied_header(cells: list[str]) -> list[str] | None:
    """Column names of a llama-bench data row pasted without its header: ``model | size | params | backend | ... |
    test | t/s`` (model first, a size in GiB and a parameter count in B, the ppN/tgN test before the rate last)."""
    if len(cells) < 5 or not _RATE.match(cells[-1].strip()) or not _TEST.match(cells[-2].strip()):
        return None
    if not (_SIZE_CELL.match(cells[1].strip()) and _PARAMS_CELL.match(cells[2].strip())):
        return None
    names = ["model", "size", "params", "backend"] + [f"column {i + 1}" for i in range(4, len(cells) - 2)] + ["test", "t/s"]
    if len(cells) >= 7:  # the column after the backend: ngl on GPU builds, threads on CPU ones
        names[4] = "threads" if "cpu" in cells[3].lower() and "," not in cells[3] else "ngl"
    return names[:len(cells)]


def _cut_short(line: str, cells: list[str]) -> bool:
    """A piped row that lost its end in the copy: it opens with “|” but does not close with one, and its rate has no
    “± stdev” (llama-bench prints both), so its last number may be cut too (“| … | tg128 | 6” of 68.21)."""
    s = line.strip()
    return s.startswith("|") and not s.endswith("|") and not re.search(r"±|\+/-|\+-|Â±|�", cells[-1] if cells else "")


def parse_markdown(lines: Sequence[str]) -> Outcome:
    """Read llama-bench markdown tables (``| model | size | params | backend | ... | test | t/s |``).

    Args:
        lines: the paste's lines; blank strings for lines other parsers claimed.
    """
    out = Outcome("llama-bench-md")
    header: list[str] | None = None
    rows = [split_table_row(line) if line.strip() else None for line in lines]
    for i, (line, cells) in enumerate(zip(lines, rows, strict=True)):
        build = _BUILD.match(line)
        if build and header is not None:
            out.machine.update(build=build.group(1), build_number=to_int(build.group(2)))
            out.consumed.add(i)
        if cells is None:
            continue
        if _is_header(cells):
            header = [c.lower() for c in cells]
            out.consumed.add(i)
        elif _is_separator(cells):
            if header is not None:
                out.consumed.add(i)
        elif i + 1 < len(rows) and rows[i + 1] is not None and _is_separator(rows[i + 1] or []):
            header = None  # the header of some other table: its rows are not llama-bench rows
        elif header is not None or _implied_header(cells) is not None:
            if header is None:
                out.warnings.append(f"line {i + 1}: no header line; read as llama-bench's model | size | params | "
                                    "backend | ... | test | t/s")
                header = _implied_header(cells)
            assert header is not None
            if len(cells) != len(header):
                out.warnings.append(f"line {i + 1}: {len(cells)} cells under a {len(header)}-column header")
                continue
            if _cut_short(line, cells):
                out.warnings.append(f"line {i + 1}: cut short (no closing “|” and no “±”): not kept")
                continue
            fields, why = _md_row(dict(zip(header, cells, strict=True)))
            if fields is None:
                out.warnings.append(f"line {i + 1}: {why}")
            elif out.add(i, fields, f"line {i + 1}"):
                out.consumed.add(i)
    return out


def _model_name(row: Mapping[str, Any], from_type: str | None) -> str | None:
    """The GGUF file name without folders and extension, unless it is a generic ``ggml-model-*``."""
    raw = str(row.get("model_filename") or "").strip()
    if raw:
        name = PureWindowsPath(raw).name if "\\" in raw else PurePosixPath(raw).name
        stem = re.sub(r"\.(gguf|bin|ggml)$", "", name, flags=re.I)
        if stem and not re.match(r"^(ggml-)?model\b", stem, re.I):
            return stem
    return from_type


def _legacy_backend(row: Mapping[str, Any]) -> str | None:
    for key, name in _LEGACY_BACKENDS:
        if row.get(key) in (True, 1, "1", "true"):
            return name
    return "CPU" if any(k in row for k, _ in _LEGACY_BACKENDS) else None


def _notes(row: Mapping[str, Any]) -> list[str]:
    notes = [
        f"{k}={row[k]}" for k in ("type_k", "type_v") if str(row.get(k, "f16")).lower() not in ("f16", "")
    ]
    if str(row.get("flash_attn", "")).lower() in ("1", "true"):
        notes.append("flash_attn=1")
    if (to_int(row.get("n_cpu_moe")) or 0) > 0:
        notes.append(f"n_cpu_moe={row['n_cpu_moe']}")
    if str(row.get("no_kv_offload", "")).lower() in ("1", "true"):
        notes.append("no_kv_offload=1")
    return notes


def row_fields(row: Mapping[str, Any]) -> tuple[dict[str, Any] | None, str]:
    """Measurement fields of one llama-bench record (CSV/JSON/JSONL/SQL field names), or (None, why)."""
    n_prompt, n_gen = to_int(row.get("n_prompt")), to_int(row.get("n_gen"))
    if n_prompt is None and n_gen is None:
        return None, "no n_prompt/n_gen"
    n_prompt, n_gen = n_prompt or 0, n_gen or 0
    if n_prompt <= 0 and n_gen <= 0:
        return None, "n_prompt and n_gen are both 0"
    rate = to_float(row.get("avg_ts"))
    avg_ns = to_float(row.get("avg_ns"))
    if "avg_ts" not in row and avg_ns:
        rate = (n_prompt + n_gen) * 1e9 / avg_ns
    if rate is None:
        return None, f"avg_ts {row.get('avg_ts')!r} is not a number"
    kind = "pg" if n_prompt > 0 and n_gen > 0 else "pp" if n_prompt > 0 else "tg"
    fields = _test_fields(kind, n_prompt if kind != "tg" else n_gen, n_gen if kind == "pg" else None, rate)
    model, quant = split_model_type(str(row.get("model_type") or ""))
    params, size = to_float(row.get("model_n_params")), to_float(row.get("model_size"))
    fields.update(
        depth=to_int(row.get("n_depth")) or 0,
        stddev_tps=to_float(row.get("stddev_ts")),
        model=_model_name(row, model),
        quant=quant or find_quant(str(row.get("model_filename") or "")),
        params_b=params / 1e9 if params else None,
        model_size_gb=size / 1e9 if size else None,
        backend=backend_name(str(row.get("backends") or "")) or _legacy_backend(row),
        n_gpu_layers=to_int(row.get("n_gpu_layers")),
        threads=to_int(row.get("n_threads")),
        hardware=str(row.get("gpu_info") or row.get("cpu_info") or "").strip() or None,
        notes=_notes(row),
    )
    return fields, ""


def _add_record(out: Outcome, line: int, row: Mapping[str, Any], what: str) -> bool:
    fields, why = row_fields(row)
    if fields is None:
        out.warnings.append(f"{what}: {why}; not kept as a measurement")
        return False
    for key in _MACHINE_KEYS:
        if row.get(key) not in (None, "") and key not in out.machine:
            out.machine[key] = row[key]
    return out.add(line, fields, what)


def from_json(value: Any, out: Outcome, line: int) -> bool:
    """Add the measurements of a llama-bench JSON array or JSONL object; True if any record was read."""
    items = value if isinstance(value, list) else [value]
    kept = False
    for n, item in enumerate(items):
        if isinstance(item, dict):
            kept = _add_record(out, line, item, f"line {line + 1}, record {n + 1}") or kept
    return kept


_CSV_HEADER = re.compile(r"^\"?[a-z_]+\"?(?:,\"?[a-z_]+\"?)+$")


def parse_csv(lines: Sequence[str]) -> Outcome:
    """Read llama-bench ``-o csv`` output: a header of field names, then one quoted row per test."""
    out = Outcome("llama-bench-csv")
    names: list[str] | None = None
    for i, line in enumerate(lines):
        s = line.strip()
        if not s:
            continue
        if _CSV_HEADER.match(s) and "avg_ts" in s:
            names = next(csv.reader([s]))
            out.consumed.add(i)
            continue
        if names is None or "," not in s:
            continue
        values = next(csv.reader([s]))
        if len(values) != len(names):
            out.warnings.append(f"line {i + 1}: {len(values)} values under a {len(names)}-field CSV header")
        elif _add_record(out, i, dict(zip(names, values, strict=True)), f"line {i + 1}"):
            out.consumed.add(i)
    return out


_INSERT = re.compile(
    r"^.{0,40}?\bINSERT\s+INTO\s+[\"`]?\w+[\"`]?\s*\(([^)]*)\)\s*VALUES\s*\((.*)\)\s*;?\s*$", re.I
)
_SQL_VALUE = re.compile(r"\s*(?:'((?:[^']|'')*)'|(NULL)|([^,'\s][^,]*?))\s*(?:,|$)", re.I)
_SQL_SCHEMA = re.compile(r"^\s*(?:CREATE\s+TABLE\b.*|\w+\s+(?:TEXT|INTEGER|REAL)\s*,?|\)\s*;)\s*$", re.I)


def _sql_values(text: str) -> list[Any]:
    values: list[Any] = []
    pos = 0
    while pos < len(text):
        m = _SQL_VALUE.match(text, pos)
        if not m or m.end() == pos:
            return []
        values.append(
            m.group(1).replace("''", "'") if m.group(1) is not None else None if m.group(2) else m.group(3)
        )
        pos = m.end()
    return values


def parse_sql(lines: Sequence[str]) -> Outcome:
    """Read llama-bench ``-o sql`` output: ``CREATE TABLE`` then ``INSERT INTO ... VALUES (...);`` per test."""
    out = Outcome("llama-bench-sql")
    in_schema = False
    for i, line in enumerate(lines):
        if re.match(r"^\s*CREATE\s+TABLE\b", line, re.I):
            in_schema = True
        if in_schema and _SQL_SCHEMA.match(line):
            out.consumed.add(i)
            in_schema = not line.strip().endswith(";")
            continue
        m = _INSERT.match(line)
        if not m:
            continue
        names = [c.strip().strip('"`') for c in m.group(1).split(",")]
        values = _sql_values(m.group(2))
        if len(values) != len(names):
            out.warnings.append(f"line {i + 1}: {len(values)} values for {len(names)} columns")
        elif "avg_ts" in names and _add_record(
            out, i, dict(zip(names, values, strict=True)), f"line {i + 1}"
        ):
            out.consumed.add(i)
    return out


def _is_bench_record(obj: dict[str, Any]) -> bool:
    return "avg_ts" in obj or ("n_prompt" in obj and "n_gen" in obj)


_MD_EXAMPLE = Example(
    "| model | size | params | backend | ngl | test | t/s |\n"
    "| --- | ---: | ---: | --- | --: | --- | ---: |\n"
    "| llama 7B mostly Q4_0 | 3.56 GiB | 6.74 B | CUDA | 99 | pp512 | 2400.01 ± 7.72 |\n"
    "| llama 7B mostly Q4_0 | 3.56 GiB | 6.74 B | CUDA | 99 | tg128 | 131.66 ± 0.49 |",
    (
        {"prefill_tps": 2400.01, "prompt_tokens": 512, "gen_tokens": 0, "backend": "llama.cpp-cuda"},
        {"decode_tps": 131.66, "prompt_tokens": 0, "gen_tokens": 128, "engine": "llama.cpp"},
    ),
    "a pp and a tg row",
)
_JSON_EXAMPLE = '{"model_type": "llama 7B Q4_0", "n_prompt": 0, "n_gen": 128, "avg_ts": 130.965708}'

IMPORTERS = (
    Importer(
        name="llama-bench-md",
        engine="llama.cpp",
        describe="llama-bench markdown table (pp512, tg128, pp512+tg128, @ d4096)",
        signature=signature(
            r"^(?=.*[|\t]\s*test\s*(?:[|\t]|$)).*[|\t]\s*(?:t/s|tok/s|tokens/s)\s*(?:[|\t]|$)"
            # a data row pasted without its header: | model | 4.58 GiB | 8.03 B | backend | ... | tg128 | 127.05 ± 0.22 |
            r"|^\s*\|[^|\n]+\|\s*[\d.,]+\s*(?:GiB|MiB)\s*\|\s*[\d.,]+\s*[BM]\s*\|.*\|\s*(?:pp|tg|pg)\s*\d+[^|\n]*\|"
            r"\s*[\d.,]+\s*(?:±\s*[\d.,]+\s*)?\|?\s*$", re.I
        ),
        parse_text=parse_markdown,
        order=10,
        examples=(_MD_EXAMPLE,),
    ),
    Importer(
        name="llama-bench-csv",
        engine="llama.cpp",
        describe="llama-bench -o csv",
        signature=signature(r"^\"?[a-z_]+\"?(?:,\"?[a-z_]+\"?)*,\"?avg_ts\"?(?:,|$)"),
        parse_text=parse_csv,
        order=11,
        examples=(
            Example(
                'n_prompt,n_gen,backends,avg_ts\n"512","0","Metal","629.07"',
                ({"prefill_tps": 629.07, "prompt_tokens": 512, "backend": "llama.cpp-metal"},),
            ),
        ),
    ),
    Importer(
        name="llama-bench-sql",
        engine="llama.cpp",
        describe="llama-bench -o sql",
        signature=signature(
            r"\bCREATE\s+TABLE(?:\s+IF\s+NOT\s+EXISTS)?\s+(?:llama_bench|test)\b"
            r"|\bINSERT\s+INTO\s+\S+\s*\([^)]*\bavg_ts\b",
            re.I,
        ),
        parse_text=parse_sql,
        order=12,
        examples=(
            Example(
                "INSERT INTO llama_bench (n_prompt, n_gen, avg_ts) VALUES ('0', '128', '88.54');",
                ({"decode_tps": 88.54, "gen_tokens": 128},),
            ),
        ),
    ),
    Importer(
        name="llama-bench-jsonl",
        engine="llama.cpp",
        describe="llama-bench -o jsonl (one object per line)",
        json_test=_is_bench_record,
        from_json=from_json,
        json_one_line=True,
        order=9,
        examples=(Example(_JSON_EXAMPLE, ({"decode_tps": 130.965708, "gen_tokens": 128},)),),
    ),
    Importer(
        name="llama-bench-json",
        engine="llama.cpp",
        describe="llama-bench -o json (array)",
        json_test=_is_bench_record,
        from_json=from_json,
        order=10,
        examples=(Example(f"[\n  {_JSON_EXAMPLE}\n]", ({"decode_tps": 130.965708, "prompt_tokens": 0},)),),
    ),
)
