"""Reading the files a person hands the command line: ``--input`` tables and scenarios, ``advisor import`` text.

One home for "what a usable input file is", so ``predict --input``, ``diagnose --input`` and ``import`` refuse
the same things with the same one-line messages (:class:`ValueError`, shown by the CLI's guard):

* not a regular file (a folder, ``/dev/zero``, a FIFO: reading it would never end), missing, too big;
* not text: NUL bytes or undecodable bytes (a binary file, a model file, an archive);
* text with a byte-order mark: UTF-8 (Excel's "CSV UTF-8") and UTF-16 (PowerShell's ``>`` redirect, the
  Windows default) are decoded, so the BOM never becomes part of the first column name or JSON value;
* CSV written with ``;`` (Excel in most European locales), tabs or ``|`` between columns; headers in other
  cases or with spaces (``Prompt Tokens``); whole numbers written as ``2000.0`` (pandas writes an integer
  column holding a blank so); a row with more values than the header has columns.
"""

from __future__ import annotations

import csv
import re
from pathlib import Path
from typing import Any

__all__ = ["MAX_IMPORT_BYTES", "MAX_INPUT_BYTES", "ROW_KEYS", "decode_text", "read_input_file", "read_rows",
           "read_text_file", "row_measured", "row_scenario"]

#: Largest --input file read (a scenario or a table of rows is a few kB; a bigger one is a wrong file).
MAX_INPUT_BYTES = 50_000_000
#: Largest tool output ``advisor import`` reads (a llama-bench or server log is well under 1 MB).
MAX_IMPORT_BYTES = 5_000_000

#: Columns of a ``predict --input`` table (DESIGN.md: hardware, model, params_b, quant, backend,
#: prompt_tokens, gen_tokens, depth, batch; plus the flags that describe hardware not in the catalog).
ROW_KEYS = frozenset({"hardware", "model", "params_b", "active_params_b", "quant", "backend", "prompt_tokens", "gen_tokens", "depth",
                      "batch", "concurrency", "memory_gb", "bandwidth_gbs", "tflops"})
#: Columns of a table of measured results (``knowledge/seed/results*.csv``, a benchmark's export): the rates
#: measured, compared with the prediction (``measured_*`` and ``*_error_pct`` in the output; batch > 1: aggregate
#: over the batch), and columns that describe the row (``hw_id``: a catalog id, used when ``hardware`` does not
#: resolve).
MEASURED_KEYS = frozenset({"prefill_tps", "decode_tps"})
MIN_RATE = 0.001  # tok/s: a measured rate below this is a typo or another unit, not a run
_NO_VALUE = re.compile(r"^\s*(?:|na|n/a|-|—|–|null|none|nan)\s*$", re.I)
INFO_KEYS = frozenset({"hw_id", "source_set", "source_url", "notes", "result_id"})
_INT_KEYS = frozenset({"prompt_tokens", "gen_tokens", "depth", "batch", "concurrency"})
_WHOLE = re.compile(r"^\s*[+]?\d+(?:\.0*)?\s*$")
_BOMS = ((b"\xef\xbb\xbf", "utf-8-sig"), (b"\xff\xfe", "utf-16"), (b"\xfe\xff", "utf-16"))


def decode_text(raw: bytes, name: str, expects: str) -> str:
    """The text in ``raw``: UTF-8, or UTF-8/UTF-16 with a byte-order mark (the mark removed).

    A few bytes that are not UTF-8 (at most 0.5 %: a stray byte of a Windows code page) become U+FFFD.

    Args:
        raw: the file's bytes.
        name: the file as the person named it (for the message).
        expects: what the command reads, e.g. "CSV, JSON lines or a JSON object".

    Raises:
        ValueError: NUL bytes or many bytes that are not UTF-8 (a binary file), in one line.
    """
    for bom, codec in _BOMS:
        if raw.startswith(bom):
            try:
                return raw.decode(codec)
            except UnicodeDecodeError:
                break
    else:
        if b"\x00" not in raw:
            text = raw.decode("utf-8", errors="replace")
            # A stray byte of another encoding (a Windows console's "±") is replaced; a binary file has many.
            if text.count("\ufffd") - raw.count("\ufffd".encode()) <= max(3, len(raw) // 200):
                return text
    raise ValueError(f"{name} is not UTF-8 text (a binary file?); expected {expects}")


def read_text_file(path: Path, *, limit: int, what: str, expects: str) -> str:
    """The text of a regular file of at most ``limit`` bytes (see :func:`decode_text`).

    Raises:
        ValueError: missing, not a regular file (a folder or a device such as ``/dev/zero``: it would be read
            forever), over ``limit`` bytes, or not text. ``what`` names the option in the message.
    """
    if not path.exists():
        raise ValueError(f"cannot read {path}: no such file")
    if not path.is_file():
        kind = "a folder" if path.is_dir() else "a device, pipe or other special file"
        raise ValueError(f"cannot read {path}: it is {kind}, not a regular file")
    size = path.stat().st_size
    if size > limit:
        raise ValueError(f"{path} is {size / 1e6:.1f} MB; {what} over {limit // 1_000_000} MB is not read")
    try:
        with path.open("rb") as f:
            raw = f.read(limit + 1)  # a file that grows while read (a log) is still cut at the limit
    except OSError as e:
        raise ValueError(f"cannot read {path}: {e.strerror or e}") from None
    if len(raw) > limit:
        raise ValueError(f"{path} is over {limit // 1_000_000} MB; {what} over that is not read")
    return decode_text(raw, str(path), expects)


def read_input_file(path: Path) -> str:
    """The UTF-8 text of an ``--input`` file (see :func:`read_text_file`). Raises ValueError in one line."""
    return read_text_file(path, limit=MAX_INPUT_BYTES, what="an --input file",
                          expects="CSV, JSON lines or a JSON object")


def _header_key(k: Any) -> Any:
    """``"Prompt Tokens"``, ``" prompt-tokens"`` → ``"prompt_tokens"`` (None: a value beyond the header)."""
    if not isinstance(k, str):
        return k
    return re.sub(r"[\s\-]+", "_", k.strip().lower())


def _csv_rows(text: str) -> list[dict[str, Any]]:
    lines = text.splitlines()
    head = next((ln for ln in lines if ln.strip()), "")
    delim = max(",;\t|", key=head.count) if head else ","
    if head.count(delim) == 0:
        delim = ","
    names = [_header_key(k) for k in next(csv.reader([head], delimiter=delim), [])]
    twice = sorted({k for k in names if k and names.count(k) > 1})
    if twice:
        raise ValueError(f"the header names {', '.join(repr(k) for k in twice)} more than once: which one to read?")
    out: list[dict[str, Any]] = []
    for r in csv.DictReader([ln for ln in lines if ln.strip()], delimiter=delim):
        row = {_header_key(k): v for k, v in r.items()}
        extra = row.pop(None, None)
        if extra is not None and any(str(x).strip() for x in extra):
            row = {"_error": f"the row has {len(r) - 1 + len(extra)} values but the header names "
                             f"{len(r) - 1} columns (an unquoted '{delim}' inside a value?)"}
        out.append(row)
    return out


def read_rows(path: Path) -> list[dict[str, Any]]:
    """The rows of a ``predict --input`` table: CSV (``,`` ``;`` tab or ``|``) or JSON lines.

    A row that cannot be read is ``{"_error": message}`` so the others are still predicted.

    Raises:
        ValueError: the file cannot be read at all (see :func:`read_input_file`).
    """
    from advisor.errors import load_json

    text = read_input_file(path)
    if path.suffix.lower() in (".jsonl", ".json", ".ndjson") or text.lstrip().startswith(("{", "[")):
        whole: Any = None
        try:  # one JSON object (pretty-printed over several lines) or an array of row objects
            whole = load_json(text.strip(), what=path.name)
        except ValueError:
            pass  # JSON lines: one object per line
        if isinstance(whole, dict):
            return [whole]
        if isinstance(whole, list):
            return [r if isinstance(r, dict) else {"_error": f"item {i} is not a JSON object"}
                    for i, r in enumerate(whole, 1)]
        rows: list[dict[str, Any]] = []
        for i, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                r = load_json(line, what=f"line {i} of {path.name}")
            except ValueError as e:
                r = {"_error": str(e)}
            rows.append(r if isinstance(r, dict) else {"_error": f"line {i} is not a JSON object"})
        return rows
    return _csv_rows(text)


def row_scenario(row: dict[str, Any], where: str) -> Any:
    """The Scenario of one table row (``batch`` is ``concurrency`` when that is not given).

    Blank cells are missing values; ``2000.0`` in a whole-number column is 2000. Strict as every API edge
    (:func:`advisor.models.parse_scenario`): JSON ``true`` is not a token count.

    Raises:
        InputError: an unknown column (each named, with the known ones).
        pydantic.ValidationError: a value out of range or of the wrong type.
    """
    from advisor.errors import InputError
    from advisor.models import parse_scenario

    clean = {k: (None if v is None or (isinstance(v, str) and not v.strip()) else v) for k, v in row.items()
             if k not in MEASURED_KEYS | INFO_KEYS}
    unknown = [k for k in clean if k not in ROW_KEYS]
    if unknown:
        raise InputError(f"unknown column{'s' if len(unknown) > 1 else ''} {', '.join(repr(k) for k in unknown[:5])}; "
                         f"known: {', '.join(sorted(ROW_KEYS | MEASURED_KEYS | INFO_KEYS))}")
    for k in _INT_KEYS & set(clean):
        v = clean[k]
        if isinstance(v, str) and _WHOLE.match(v):
            clean[k] = int(float(v))
    if clean.get("prompt_tokens") in (0, 0.0) and not isinstance(clean.get("prompt_tokens"), bool):
        clean["prompt_tokens"] = 1  # a decode-only run (llama-bench tg128: no prompt): decode from an empty cache
    batch = clean.pop("batch", None)
    if isinstance(batch, bool):
        raise InputError(f"batch in the {where} is {str(batch).lower()}; it takes a number of sequences")
    if batch is not None and clean.get("concurrency") is None:
        clean["concurrency"] = batch
    return parse_scenario({k: v for k, v in clean.items() if v is not None}, what=where)


def row_measured(row: dict[str, Any], where: str) -> dict[str, float]:
    """The measured rates of a results-table row (``prefill_tps``, ``decode_tps``; blank cells left out).

    Raises:
        InputError: a rate that is not a positive number.
    """
    from advisor.errors import InputError

    out: dict[str, float] = {}
    bad = []
    for k in sorted(MEASURED_KEYS):
        v = row.get(k)
        if v is None or (isinstance(v, str) and _NO_VALUE.match(v)):
            continue  # blank, "NA", "n/a", "-": not measured
        try:
            x = float(str(v).replace("_", "x")) if not isinstance(v, bool) else float("nan")
        except (TypeError, ValueError):
            x = float("nan")
        if not (MIN_RATE <= x < 1e9):
            bad.append(f"{k} is {str(v)[:40]!r}")
        else:
            out[k] = x
    if bad:
        raise InputError(f"{' and '.join(bad)} in {where}; a measured rate is a number of tok/s from {MIN_RATE:g} up")
    return out
