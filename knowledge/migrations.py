"""Numbered schema migrations for the knowledge store (the pattern of simonw/llm's migrations.py).

Each ``mNNN_*`` function is one small schema step. :func:`migrate` records applied steps in
``schema_migrations``; a store that records a step this version does not know was written by a
newer advisor and is refused (:class:`~advisor.errors.StoreVersionError`).
"""

from __future__ import annotations

from collections.abc import Callable

import duckdb

from advisor.errors import StoreVersionError

__all__ = ["MIGRATIONS", "migrate", "pending", "unknown_applied"]

Migration = Callable[[duckdb.DuckDBPyConnection], None]
MIGRATIONS: list[Migration] = []


def migration(fn: Migration) -> Migration:
    MIGRATIONS.append(fn)
    return fn


@migration
def m001_initial(con: duckdb.DuckDBPyConnection) -> None:
    con.execute(
        """
        CREATE TABLE hardware (
            hw_id VARCHAR PRIMARY KEY, vendor VARCHAR, family VARCHAR, name VARCHAR NOT NULL,
            kind VARCHAR NOT NULL, gpu_cores INTEGER, cpu_cores VARCHAR,
            bandwidth_gbs DOUBLE NOT NULL CHECK (bandwidth_gbs > 0),
            memory_gb_options VARCHAR, fp16_tflops DOUBLE, fp16_tflops_kind VARCHAR,
            release_year INTEGER, notes VARCHAR, source_url VARCHAR NOT NULL
        )"""
    )
    con.execute(
        """
        CREATE TABLE models (
            model_id VARCHAR PRIMARY KEY, family VARCHAR, params_b DOUBLE NOT NULL,
            active_params_b DOUBLE, n_layers INTEGER, hidden_size INTEGER, n_heads INTEGER,
            n_kv_heads INTEGER, head_dim INTEGER, vocab_size BIGINT, max_context BIGINT,
            full_attention_layers INTEGER, sliding_layers INTEGER, sliding_window INTEGER,
            source_url VARCHAR NOT NULL, notes VARCHAR
        )"""
    )
    con.execute("CREATE TABLE model_aliases (alias VARCHAR NOT NULL, model_id VARCHAR NOT NULL)")
    con.execute(
        """
        CREATE TABLE quant_formats (
            format VARCHAR PRIMARY KEY, ecosystem VARCHAR, bits_per_weight DOUBLE,
            ppl_delta_7b DOUBLE, value_kind VARCHAR, notes VARCHAR, source_url VARCHAR NOT NULL
        )"""
    )
    con.execute(
        """
        CREATE TABLE lab_machines (
            alias VARCHAR PRIMARY KEY, hardware VARCHAR, hw_id VARCHAR,
            achieved_bandwidth_gbs DOUBLE, source VARCHAR NOT NULL
        )"""
    )
    con.execute(
        """
        CREATE TABLE results (
            result_id VARCHAR PRIMARY KEY,
            origin VARCHAR NOT NULL,            -- seed | probe | import | pooled
            source_set VARCHAR, hardware VARCHAR, hw_id VARCHAR, base_hw_id VARCHAR,
            n_devices INTEGER DEFAULT 1, hw_level VARCHAR,   -- sku | family | unknown
            backend VARCHAR, engine VARCHAR, accel VARCHAR,
            model VARCHAR, model_id VARCHAR, params_b DOUBLE, quant VARCHAR,
            prompt_tokens INTEGER, gen_tokens INTEGER, depth INTEGER DEFAULT 0, batch INTEGER DEFAULT 1,
            prefill_tps DOUBLE CHECK (prefill_tps IS NULL OR prefill_tps >= 0),
            decode_tps DOUBLE CHECK (decode_tps IS NULL OR decode_tps >= 0),
            blended_tps DOUBLE CHECK (blended_tps IS NULL OR blended_tps >= 0),
            n_gpu_layers INTEGER, threads INTEGER,
            value_kind VARCHAR NOT NULL,        -- measured | derived | estimate
            source_url VARCHAR, notes VARCHAR, parent_id VARCHAR,
            created_at TIMESTAMPTZ DEFAULT now()
        )"""
    )
    con.execute(
        """
        CREATE TABLE probes (
            probe_id VARCHAR PRIMARY KEY, created_at VARCHAR, backend VARCHAR NOT NULL,
            device VARCHAR, hw_id VARCHAR, bandwidth_gbs DOUBLE NOT NULL CHECK (bandwidth_gbs > 0),
            bandwidth_median_gbs DOUBLE, matmul_tflops DOUBLE NOT NULL CHECK (matmul_tflops > 0),
            duration_s DOUBLE, engine_version VARCHAR, machine_json VARCHAR, payload_json VARCHAR NOT NULL
        )"""
    )
    con.execute(
        """
        CREATE TABLE imports (
            import_id VARCHAR PRIMARY KEY, created_at TIMESTAMPTZ DEFAULT now(), format VARCHAR NOT NULL,
            hardware VARCHAR, hw_id VARCHAR, engine VARCHAR, raw_text VARCHAR NOT NULL,
            machine_json VARCHAR
        )"""
    )
    con.execute("CREATE TABLE meta (key VARCHAR PRIMARY KEY, value VARCHAR)")


@migration
def m002_probe_origin(con: duckdb.DuckDBPyConnection) -> None:
    """Probes say where they came from: ``origin`` (``local``: made by this store's user; ``pooled``:
    merged from a team export) and ``machine_fp`` (:func:`knowledge.storefile.machine_fingerprint` of the
    computer that ran it), so that only a local probe of this very computer is "this machine"."""
    con.execute("ALTER TABLE probes ADD COLUMN origin VARCHAR DEFAULT 'local'")
    con.execute("ALTER TABLE probes ADD COLUMN machine_fp VARCHAR")


def _applied(con: duckdb.DuckDBPyConnection) -> list[str]:
    con.execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations (name VARCHAR PRIMARY KEY, applied_at TIMESTAMPTZ DEFAULT now())"
    )
    return [r[0] for r in con.execute("SELECT name FROM schema_migrations ORDER BY name").fetchall()]


def unknown_applied(con: duckdb.DuckDBPyConnection) -> list[str]:
    """Migration names recorded in the store that this version does not know (newer store)."""
    try:
        names = [r[0] for r in con.execute("SELECT name FROM schema_migrations").fetchall()]
    except duckdb.CatalogException:
        return []
    known = {m.__name__ for m in MIGRATIONS}
    return [n for n in names if n not in known]


def pending(con: duckdb.DuckDBPyConnection) -> list[str]:
    """Names of migrations not yet applied (read-only check)."""
    try:
        names = {r[0] for r in con.execute("SELECT name FROM schema_migrations").fetchall()}
    except duckdb.CatalogException:
        names = set()
    return [m.__name__ for m in MIGRATIONS if m.__name__ not in names]


def migrate(con: duckdb.DuckDBPyConnection, *, where: str = "the store") -> list[str]:
    """Apply every pending migration, each in its own transaction.

    Returns:
        list[str]: names of the migrations applied now.

    Raises:
        StoreVersionError: the store records migrations this version does not know.
    """
    done = set(_applied(con))
    newer = unknown_applied(con)
    if newer:
        raise StoreVersionError(
            f"{where} was written by a newer version of the advisor (schema steps {', '.join(sorted(newer))} "
            "are unknown here). Upgrade the advisor (pip install -U prefill-decode-advisor), or point "
            "--store at another file."
        )
    applied = []
    for m in MIGRATIONS:
        if m.__name__ in done:
            continue
        con.execute("BEGIN TRANSACTION")
        try:
            m(con)
            con.execute("INSERT INTO schema_migrations (name) VALUES (?)", [m.__name__])
            con.execute("COMMIT")
        except Exception:
            con.execute("ROLLBACK")
            raise
        applied.append(m.__name__)
    return applied
