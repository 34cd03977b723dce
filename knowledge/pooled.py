"""Merging a team export (``advisor db import``): pooled data is validated like any other input.

What is refused, per table (a refused row is counted and skipped; the rest is merged):

* any table with more than :data:`MAX_POOLED_ROWS` rows or :data:`MAX_POOLED_BYTES` of uncompressed data
  (the whole import is refused);
* a text value longer than :data:`MAX_TEXT_CHARS` (``raw_text``/``payload_json``/``machine_json``:
  :data:`MAX_BLOB_CHARS`, the size of tool output the importer accepts);
* results: an ``origin`` that is not ``probe``/``import``/``pooled`` in any letter case or with blanks
  (so ``'SEED'`` never passes as curated seed data), a ``value_kind`` other than
  measured/derived/estimate, a rate that is NaN, ±Inf, negative or above :data:`MAX_TPS`, counts
  outside 0…:data:`MAX_TOKENS`;
* probes: a bandwidth or compute that is not finite or above the plausibility caps
  :data:`MAX_PROBE_GBS` / :data:`MAX_PROBE_TFLOPS`, or a date more than a day in the future.

Every merged results row gets ``origin = 'pooled'`` and every probe ``origin = 'pooled'``: pooled
results feed the population calibration (the operator pooled them on purpose), pooled probes are
never "this machine".
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import duckdb

from advisor.errors import KnowledgeStoreError

__all__ = ["MAX_POOLED_ROWS", "merge_files", "sound_result_row"]

MAX_POOLED_ROWS = 100_000
MAX_POOLED_BYTES = 512_000_000  # characters of text per table, counted before loading: a small compressed
# file can unpack to gigabytes
MAX_TEXT_CHARS = 10_000
MAX_BLOB_CHARS = 5_000_000
# Plausibility caps (not measurements): ~40x the fastest single-stream decode rates in the seed data
# and ~5x the fastest accelerators' spec sheets (B200 8 TB/s HBM3e, ~2.3 PFLOP/s dense FP16).
MAX_TPS = 1_000_000.0
MAX_TOKENS = 100_000_000
MAX_PROBE_GBS = 50_000.0
MAX_PROBE_TFLOPS = 20_000.0
_BLOBS = {"raw_text", "payload_json", "machine_json"}
_RATES = ("prefill_tps", "decode_tps", "blended_tps")
_COUNTS = ("prompt_tokens", "gen_tokens", "depth", "batch", "n_devices", "threads")


def _q(col: str) -> str:
    return '"' + col.replace('"', '""') + '"'


def _conditions(table: str, cols: dict[str, str]) -> list[str]:
    """SQL conditions a sound row of ``table`` meets, given the incoming columns and their types."""
    conds = []
    for c, typ in cols.items():
        if "VARCHAR" in typ.upper():
            cap = MAX_BLOB_CHARS if c in _BLOBS else MAX_TEXT_CHARS
            conds.append(f"({_q(c)} IS NULL OR length({_q(c)}) <= {cap})")
    if table == "results":
        conds.append("lower(trim(origin)) IN ('probe', 'import', 'pooled')")
        if "value_kind" in cols:
            conds.append("lower(trim(value_kind)) IN ('measured', 'derived', 'estimate')")
        for c in _RATES:
            if c in cols:
                conds.append(f"({_q(c)} IS NULL OR (isfinite({_q(c)}::DOUBLE) AND {_q(c)} BETWEEN 0 AND {MAX_TPS}))")
        for c in _COUNTS:
            if c in cols:
                conds.append(f"({_q(c)} IS NULL OR {_q(c)} BETWEEN 0 AND {MAX_TOKENS})")
        if "params_b" in cols:
            conds.append("(params_b IS NULL OR (isfinite(params_b::DOUBLE) AND params_b > 0 AND params_b <= 100000))")
    if table == "probes":
        conds.append(f"(isfinite(bandwidth_gbs::DOUBLE) AND bandwidth_gbs > 0 AND bandwidth_gbs <= {MAX_PROBE_GBS})")
        conds.append(f"(isfinite(matmul_tflops::DOUBLE) AND matmul_tflops > 0 AND matmul_tflops <= {MAX_PROBE_TFLOPS})")
        if "bandwidth_median_gbs" in cols:
            conds.append("(bandwidth_median_gbs IS NULL OR (isfinite(bandwidth_median_gbs::DOUBLE) "
                         f"AND bandwidth_median_gbs BETWEEN 0 AND {MAX_PROBE_GBS}))")
        if "created_at" in cols:
            conds.append("(created_at IS NULL OR try_cast(created_at AS TIMESTAMPTZ) IS NULL "
                         "OR try_cast(created_at AS TIMESTAMPTZ) <= now() + INTERVAL 1 DAY)")
    return conds


def merge_files(con: duckdb.DuckDBPyConnection, files: dict[str, Path]) -> dict[str, int]:
    """Validate and merge each ``table -> parquet file`` inside the caller's transaction.

    Returns:
        dict[str, int]: new rows per table, and ``<table>_refused`` rows skipped as unsound (only when
        some were; the exporter's own seed rows, ``origin = 'seed'`` exactly, are left out silently).

    Raises:
        KnowledgeStoreError: a file is unreadable, too large, or not an advisor export.
    """
    out: dict[str, int] = {}
    for t, f in files.items():
        try:
            n = con.execute("SELECT count(*) FROM read_parquet(?)", [str(f)]).fetchone()[0]  # type: ignore[index]
            if n > MAX_POOLED_ROWS:
                raise KnowledgeStoreError(
                    f"{f} has {n:,} rows; a pooled import takes at most {MAX_POOLED_ROWS:,} per table. "
                    "Split the export, or import only the rows you trust.")
            incoming = con.execute("DESCRIBE SELECT * FROM read_parquet(?)", [str(f)]).fetchall()
            texts = [_q(r[0]) for r in incoming if "VARCHAR" in str(r[1]).upper()]
            size = con.execute(  # streamed, before anything is held in memory
                f"SELECT sum({' + '.join(f'coalesce(length({c}), 0)' for c in texts) or '0'}) FROM read_parquet(?)",
                [str(f)]).fetchone()[0] if texts else 0  # type: ignore[index]
            if size and size > MAX_POOLED_BYTES:
                raise KnowledgeStoreError(
                    f"{f} holds {size / 1e6:,.0f} million characters of text; a pooled import takes at most "
                    f"{MAX_POOLED_BYTES / 1e6:,.0f} million per table.")
            con.execute("CREATE OR REPLACE TEMP TABLE _pooled_in AS SELECT * FROM read_parquet(?)", [str(f)])
            cols = {r[0]: str(r[1]) for r in con.execute("DESCRIBE _pooled_in").fetchall()}
            if t == "results" and "origin" not in cols:
                raise KnowledgeStoreError(f"{f} has no origin column: it was not written by `advisor db export`.")
            if t == "probes" and not {"bandwidth_gbs", "matmul_tflops"} <= set(cols):
                raise KnowledgeStoreError(f"{f} has no bandwidth_gbs/matmul_tflops: not an advisor probe export.")
            if t == "results":  # the exporter's own copy of the seed: this store has its own; not refused
                con.execute("DELETE FROM _pooled_in WHERE origin = 'seed'")
            conds = _conditions(t, cols)
            refused = 0
            if conds:
                bad = " AND ".join(conds)
                refused = con.execute(
                    f"SELECT count(*) FROM _pooled_in WHERE NOT coalesce({bad}, false)").fetchone()[0]  # type: ignore[index]
                con.execute(f"DELETE FROM _pooled_in WHERE NOT coalesce({bad}, false)")
            if t in ("results", "probes"):
                if "origin" not in cols:
                    con.execute("ALTER TABLE _pooled_in ADD COLUMN origin VARCHAR")
                con.execute("UPDATE _pooled_in SET origin = 'pooled'")
            if t == "results" and "value_kind" in cols:
                con.execute("UPDATE _pooled_in SET value_kind = lower(trim(value_kind))")
            before = con.execute(f"SELECT count(*) FROM {t}").fetchone()[0]  # type: ignore[index]
            con.execute(f"INSERT INTO {t} BY NAME SELECT * FROM _pooled_in ON CONFLICT DO NOTHING")
            out[t] = con.execute(f"SELECT count(*) FROM {t}").fetchone()[0] - before  # type: ignore[index]
            if refused:
                out[f"{t}_refused"] = int(refused)
            con.execute("DROP TABLE _pooled_in")
        except duckdb.Error as e:
            raise KnowledgeStoreError(f"Cannot merge {f}: {str(e).splitlines()[0][:160]}") from None
    return out


# ---------------------------------------------------------------- a person's own rows (pastes, probes)
_INT32 = (-(2**31), 2**31 - 1)
_INT_COLUMNS = ("n_devices", "prompt_tokens", "gen_tokens", "depth", "batch", "n_gpu_layers", "threads")
_RATE_COLUMNS = ("prefill_tps", "decode_tps", "blended_tps")

def sound_result_row(row: list[Any], cols: tuple[str, ...]) -> list[Any] | None:
    """A results row with out-of-range counts dropped to NULL (a 32-bit column cannot hold 2**31) and
    unusable rates (NaN, ±Inf, negative) dropped; None when no rate is left."""
    idx = {c: i for i, c in enumerate(cols)}
    row = list(row)
    for c in _INT_COLUMNS:
        v = row[idx[c]]
        if v is not None and not (_INT32[0] <= int(v) <= _INT32[1]):
            row[idx[c]] = None
    for c in _RATE_COLUMNS:
        v = row[idx[c]]
        if v is not None and not (isinstance(v, (int, float)) and math.isfinite(v) and v >= 0):
            row[idx[c]] = None
    if all(row[idx[c]] is None for c in _RATE_COLUMNS):
        return None
    return row
