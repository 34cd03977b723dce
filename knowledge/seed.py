"""Curated seed data (CSV files in ``knowledge/seed``) and their loader.

Every row keeps its ``source_url``. The files are the figures of the project's shared data set
(hardware specs, model architectures, quantization formats, published results, the lab ladder),
plus two small supplements whose every row says how it was derived (``model_attention.csv``,
``quant_formats_extra.csv``).
"""

from __future__ import annotations

import csv
import hashlib
import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import duckdb

__all__ = ["SEED_DIR", "load_seed", "read_csv", "result_id", "seed_fingerprint", "split_hw_id", "engine_of"]

SEED_DIR = Path(__file__).parent / "seed"
SEED_FILES = (
    "hardware.csv",
    "hardware_extra.csv",
    "hardware_more.csv",
    "memory_systems.csv",
    "cpu_uarch.csv",
    "cpu_skus.csv",
    "hardware_spec_db.csv",
    "models.csv",
    "model_attention.csv",
    "quant_formats.csv",
    "quant_formats_extra.csv",
    "results.csv",
    "results_more.csv",
    "lab_machines.csv",
    "cloud_instances.csv",
)


def read_csv(name: str) -> list[dict[str, str]]:
    """Rows of one seed CSV as dicts of strings (blank cells are ``""``)."""
    with open(SEED_DIR / name, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def seed_fingerprint() -> str:
    """Hash of the seed files: the store re-seeds when the shipped data changes."""
    from knowledge.hardware_seed import fingerprint_extra

    h = hashlib.sha256()
    for name in SEED_FILES:
        h.update((SEED_DIR / name).read_bytes())
    h.update(fingerprint_extra().encode())
    return h.hexdigest()[:16]


def _num(s: str | None) -> float | None:
    s = (s or "").strip()
    if not s:
        return None
    try:
        return float(s)
    except ValueError:
        return None


def _int(s: str | None) -> int | None:
    v = _num(s)
    return None if v is None else int(v)


_XN = re.compile(r"^(?P<base>.+?)x(?P<n>\d+)$")


def split_hw_id(hw_id: str) -> tuple[str, int]:
    """``nvidia-rtx-3090x4`` → (``nvidia-rtx-3090``, 4); ids without a suffix have one device."""
    m = _XN.match(hw_id or "")
    if m and 1 <= int(m.group("n")) <= 64:
        return m.group("base"), int(m.group("n"))
    return hw_id or "", 1


def engine_of(backend: str | None, hint: str | None = None) -> tuple[str, str]:
    """Engine and accelerator API from a backend label (the one classifier:
    :func:`advisor.understand.engine.classify_engine`).

    ``llama.cpp-metal`` → (``llama.cpp``, ``metal``); ``mlx (rapid-mlx 0.7.9)`` → (``mlx``, ``metal``);
    ``llama.cpp-rocm (rocm6.4.4)`` → (``llama.cpp``, ``rocm``); ``CUDA`` with hint ``llama.cpp`` → (``llama.cpp``, ``cuda``).
    """
    from advisor.understand.engine import classify_engine

    return classify_engine(backend, hint=hint)


def result_id(row: dict[str, Any]) -> str:
    """Content hash of a result row: equal measurements pooled from two stores merge into one."""
    keys = (
        "origin_key", "hardware", "hw_id", "backend", "model", "quant", "prompt_tokens", "gen_tokens",
        "depth", "batch", "prefill_tps", "decode_tps", "blended_tps", "source_url",
    )
    payload = json.dumps([str(row.get(k) if row.get(k) is not None else "") for k in keys])
    return hashlib.sha1(payload.encode()).hexdigest()[:20]


def _hardware_rows() -> Iterable[list[Any]]:
    """Curated rows, CPU/APU memory systems and the GPU spec database (see :mod:`knowledge.hardware_seed`)."""
    from knowledge.hardware_seed import hardware_rows

    return hardware_rows()


def _model_rows() -> tuple[list[list[Any]], list[list[str]]]:
    attn = {r["model_id"]: r for r in read_csv("model_attention.csv")}
    models, aliases = [], []
    for r in read_csv("models.csv"):
        a = attn.get(r["model_id"], {})
        models.append([
            r["model_id"], r["family"], _num(r["params_b"]), _num(r["active_params_b"]), _int(r["n_layers"]),
            _int(r["hidden_size"]), _int(r["n_heads"]), _int(r["n_kv_heads"]), _int(r["head_dim"]),
            _int(r["vocab_size"]), _int(r["max_context"]), _int(a.get("full_attention_layers")),
            _int(a.get("sliding_layers")), _int(a.get("sliding_window")), r["source_url"], r["notes"],
        ])
        for alias in filter(None, (x.strip().lower() for x in r["aliases"].split(";"))):
            aliases.append([alias, r["model_id"]])
        aliases.append([r["model_id"].lower(), r["model_id"]])
        aliases.append([r["model_id"].split("/")[-1].lower(), r["model_id"]])
    return models, aliases


def _quant_rows() -> Iterable[list[Any]]:
    seen = set()
    for name in ("quant_formats.csv", "quant_formats_extra.csv"):
        for r in read_csv(name):
            if r["format"] in seen or _num(r["bits_per_weight"]) is None:
                continue
            seen.add(r["format"])
            notes = r["notes"]
            kind = "estimate" if "ESTIMATE" in notes else ("derived" if "COMPUTED" in notes else "measured")
            yield [r["format"], r["ecosystem"], _num(r["bits_per_weight"]), _num(r["ppl_delta_7b"]), kind,
                   notes, r["source_url"]]


RESULT_COLUMNS = (
    "result_id", "origin", "source_set", "hardware", "hw_id", "base_hw_id", "n_devices", "hw_level", "backend",
    "engine", "accel", "model", "model_id", "params_b", "quant", "prompt_tokens", "gen_tokens", "depth", "batch",
    "prefill_tps", "decode_tps", "blended_tps", "n_gpu_layers", "threads", "value_kind", "source_url", "notes",
    "parent_id",
)


def result_row(
    r: dict[str, Any], *, origin: str, hw_ids: set[str], model_aliases: dict[str, str], parent_id: str | None = None
) -> list[Any]:
    """Normalise one result dict (seed CSV or user) into the ``results`` column order."""
    hw_id = (r.get("hw_id") or "").strip()
    base, n = split_hw_id(hw_id)
    if not hw_id:
        level = "unknown"
    elif base in hw_ids:
        level = "sku"
    elif any(h.startswith(base + "-") for h in hw_ids):
        level = "family"
    else:
        level = "unknown"
    engine, accel = engine_of(r.get("backend"), hint=r.get("engine"))
    model = (r.get("model") or "").strip()
    row = {
        "origin_key": origin if origin != "seed" else "seed",
        **r,
    }
    rid = r.get("result_id") or result_id(row)
    return [
        rid, origin, r.get("source_set"), r.get("hardware"), hw_id or None, base or None, n, level, r.get("backend"),
        engine, accel, model or None, model_aliases.get(model.lower()), _num(str(r.get("params_b") or "")),
        r.get("quant"), _int(str(r.get("prompt_tokens") or "")), _int(str(r.get("gen_tokens") or "")),
        _int(str(r.get("depth") or "")) or 0, _int(str(r.get("batch") or "")) or 1,
        _num(str(r.get("prefill_tps") if r.get("prefill_tps") is not None else "")),
        _num(str(r.get("decode_tps") if r.get("decode_tps") is not None else "")),
        _num(str(r.get("blended_tps") if r.get("blended_tps") is not None else "")),
        _int(str(r.get("n_gpu_layers") if r.get("n_gpu_layers") is not None else "")),
        _int(str(r.get("threads") or "")), r.get("value_kind") or "measured", r.get("source_url"), r.get("notes"),
        parent_id,
    ]


def insert_rows(
    con: duckdb.DuckDBPyConnection, table: str, rows: list[list[Any]], columns: Iterable[str] | None = None
) -> None:
    """Bulk insert (DataFrame scan: far faster than ``executemany``); duplicates by key are skipped.

    ``table`` must be one of the store's fixed table names, never user text.
    """
    if not rows:
        return
    import pandas as pd

    cols = list(columns) if columns else [d[0] for d in con.execute(f"SELECT * FROM {table} LIMIT 0").description]
    df = pd.DataFrame(rows, columns=cols[: len(rows[0])])
    conflict = "" if table == "model_aliases" else " ON CONFLICT DO NOTHING"
    con.register("_seed_rows", df)
    con.execute(f"INSERT INTO {table} BY NAME SELECT * FROM _seed_rows{conflict}")
    con.unregister("_seed_rows")


def load_seed(con: duckdb.DuckDBPyConnection) -> dict[str, int]:
    """(Re)load every seed table inside one transaction; user rows (origin != seed) are kept.

    Returns:
        dict[str, int]: rows loaded per table.
    """
    models, aliases = _model_rows()
    hw = list(_hardware_rows())
    hw_ids = {h[0] for h in hw}
    alias_map = {a: m for a, m in aliases}
    quants = list(_quant_rows())
    results = [result_row(r, origin="seed", hw_ids=hw_ids, model_aliases=alias_map)
               for name in ("results.csv", "results_more.csv") for r in read_csv(name)]
    labs = [[r["alias"], r["hardware"], r["hw_id"] or None, _num(r["achieved_bandwidth_gbs"]), r["source"]]
            for r in read_csv("lab_machines.csv")]
    con.execute("BEGIN TRANSACTION")
    try:
        for table in ("hardware", "models", "model_aliases", "quant_formats", "lab_machines"):
            con.execute(f"DELETE FROM {table}")  # fixed table names, no user input
        con.execute("DELETE FROM results WHERE origin = 'seed'")
        for table, rows in (("hardware", hw), ("models", models), ("model_aliases", aliases),
                            ("quant_formats", quants), ("lab_machines", labs)):
            insert_rows(con, table, rows)
        insert_rows(con, "results", results, columns=RESULT_COLUMNS)
        con.execute(
            "INSERT OR REPLACE INTO meta VALUES ('seed_fingerprint', ?)", [seed_fingerprint()]
        )
        con.execute("COMMIT")
    except Exception:
        con.execute("ROLLBACK")
        raise
    return {
        "hardware": len(hw), "models": len(models), "model_aliases": len(aliases), "quant_formats": len(quants),
        "results": len(results), "lab_machines": len(labs),
    }
