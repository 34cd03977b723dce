"""The DuckDB knowledge store: catalog, published results and the user's own results.

Concurrency design (DuckDB lets one process hold a file read-write, and then no other process can
open it at all; see CONVENTIONS.md §3.3):

* every process works on an **in-memory copy** loaded from the file when the store opens, so the
  app, ``advisor predict`` and ``advisor probe`` never hold the file between calls;
* a write (a probe, an import, a pooled import) opens the file briefly, inserts inside one
  transaction, commits and closes it again, retrying while another process holds the lock; only
  then is the write reported as saved and mirrored into the in-memory copy. A crash mid-write
  leaves the file as it was before the transaction (DuckDB's write-ahead log is atomic);
* ``--store`` may also name a Parquet folder or URL (``s3://…``, ``https://…``) exported with
  ``advisor db export``: it is attached read-only, so a team can share one catalog of results.

``Store`` is thread-safe: reads use a fresh cursor per call, writes are serialised by a lock.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import duckdb
import platformdirs

from advisor.errors import KnowledgeStoreError, StoreLockedError, StoreVersionError
from knowledge import migrations, pooled, seed, storefile
from knowledge.store_admin import TABLES, USER_TABLES, StoreAdmin

__all__ = ["Store", "default_store_path", "TABLES", "USER_TABLES"]

log = logging.getLogger("advisor.store")

APP_NAME = "prefill-decode-advisor"


def default_store_path() -> str:
    """``$ADVISOR_STORE`` if set, else ``<user data dir>/advisor.duckdb`` (platformdirs)."""
    env = os.environ.get("ADVISOR_STORE")
    if env:
        return env
    return str(Path(platformdirs.user_data_dir(APP_NAME)) / "advisor.duckdb")


def _is_remote(path: str) -> bool:
    return path.startswith(("s3://", "gs://", "gcs://", "r2://", "az://", "abfss://", "http://", "https://"))


def _is_lock_error(e: Exception) -> bool:
    msg = str(e).lower()
    return "lock" in msg and ("conflicting" in msg or "could not set" in msg)


# One process may hold a file open only one way at a time: DuckDB shares one database instance per file in a process
# and refuses a second connection with another configuration ("Can't open a connection to same database file with a
# different configuration"), so a read-only open beside a write (two users saving and reading at once) failed. Every
# open of a store file in this process goes through its path's lock (Store._file), whichever Store object opens it.
_FILE_LOCKS: dict[str, threading.RLock] = {}
_FILE_LOCKS_GUARD = threading.Lock()


def _file_lock(path: str) -> threading.RLock:
    key = os.path.realpath(path)
    with _FILE_LOCKS_GUARD:
        return _FILE_LOCKS.setdefault(key, threading.RLock())


CHANGE_KEY, POPULATION_KEY = "change_token", "population_token"
MAX_OWN_TEXT_CHARS = 200_000_000  # raw tool output kept with imports, all together (it is also held in memory)
EXTERNAL_CHECK_S = 0.5  # how often reads look for another process's writes (one os.stat each time)


class Store(StoreAdmin):
    """Knowledge store backed by a DuckDB file, an in-memory database or a read-only Parquet folder.

    Args:
        path (str | None): file path, ``":memory:"``, a Parquet folder or URL. Default:
            :func:`default_store_path`.
        lock_timeout_s (float): how long a write waits for another process to release the file.

    Raises:
        KnowledgeStoreError: the file is corrupt or unreadable (the message says how to recover).
        StoreLockedError: another process kept the file locked for longer than ``lock_timeout_s``.
        StoreVersionError: the file was written by a newer advisor.
    """

    def __init__(self, path: str | os.PathLike[str] | None = None, *, lock_timeout_s: float = 15.0) -> None:
        self.path = str(path) if path is not None else default_store_path()
        self.lock_timeout_s = lock_timeout_s
        self._write_lock = threading.RLock()
        self._cache_lock = threading.Lock()
        self._key_locks: dict[str, threading.Lock] = {}
        self._catalog_cache: dict[str, tuple[int, int, Any]] = {}
        self._gen = [0, 0]  # [population generation, any-write generation]
        self._tokens: tuple[Any, Any] = (None, None)  # (change, population) tokens of the file as last seen
        self._file_sig: tuple[Any, ...] | None = None
        self._next_check = 0.0
        self._mem = duckdb.connect(":memory:")
        migrations.migrate(self._mem, where="the in-memory store")
        self.read_only = False
        if self.path == ":memory:":
            seed.load_seed(self._mem)
        elif os.path.isdir(self.path) or _is_remote(self.path):
            self.read_only = True
            self._load_parquet(self.path)
        else:
            try:
                self._ensure_file()
                self.refresh()
            except (StoreVersionError, StoreLockedError):
                raise
            except KnowledgeStoreError:
                raise
            except (duckdb.Error, OSError) as e:
                raise KnowledgeStoreError(self._damaged(e)) from None

    def _damaged(self, e: Exception) -> str:
        return storefile.open_failure(self.path, e)

    # ------------------------------------------------------------------ file access
    @contextmanager
    def _file(self, *, read_only: bool) -> Iterator[duckdb.DuckDBPyConnection]:
        """A connection to the store file, held under the path's in-process lock (:func:`_file_lock`), closed after."""
        with _file_lock(self.path):
            con = self._connect_file(read_only=read_only)
            try:
                yield con
            finally:
                con.close()

    def _connect_file(self, *, read_only: bool) -> duckdb.DuckDBPyConnection:
        deadline = time.monotonic() + self.lock_timeout_s
        delay = 0.02
        while True:
            try:
                return duckdb.connect(self.path, read_only=read_only)
            except duckdb.Error as e:
                if _is_lock_error(e):
                    if time.monotonic() >= deadline:
                        raise StoreLockedError(
                            f"The knowledge store {self.path} is held by another process (the advisor "
                            "server or a DuckDB shell) for longer than "
                            f"{self.lock_timeout_s:.0f} s. Try again, or use another --store."
                        ) from None
                    time.sleep(delay)
                    delay = min(delay * 2, 0.25)
                    continue
                raise KnowledgeStoreError(self._damaged(e)) from None

    def _ensure_file(self) -> None:
        """Create, migrate and seed the file when needed (first use, upgrade, new seed data)."""
        Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        exists = os.path.exists(self.path)
        if exists:
            with self._file(read_only=True) as con:
                foreign = storefile.foreign_tables(con)
                if foreign:
                    raise KnowledgeStoreError(
                        f"{self.path} is a DuckDB database of another program (tables: {', '.join(foreign[:5])}"
                        f"{', …' if len(foreign) > 5 else ''}), not an advisor knowledge store; nothing was written "
                        "to it. Give another --store (a new file name makes a fresh store).")
                newer = migrations.unknown_applied(con)
                todo = migrations.pending(con)
                try:
                    fp = con.execute("SELECT value FROM meta WHERE key = 'seed_fingerprint'").fetchone()
                except duckdb.CatalogException:
                    fp = None
            if newer:
                raise StoreVersionError(
                    f"The knowledge store {self.path} was written by a newer version of the advisor "
                    f"(unknown schema steps: {', '.join(sorted(newer))}). Upgrade the advisor, or use "
                    "another --store."
                )
            if not todo and fp and fp[0] == seed.seed_fingerprint():
                return
        with self._write_lock, self._file(read_only=False) as con:
            migrations.migrate(con, where=f"The knowledge store {self.path}")
            fp = con.execute("SELECT value FROM meta WHERE key = 'seed_fingerprint'").fetchone()
            if not fp or fp[0] != seed.seed_fingerprint():
                seed.load_seed(con)
                token = uuid.uuid4().hex  # new catalog/seed: other processes refit their population
                con.execute("INSERT OR REPLACE INTO meta VALUES (?, ?), (?, ?)",
                            [CHANGE_KEY, token, POPULATION_KEY, token])
                con.execute("CHECKPOINT")

    def refresh(self) -> None:
        """Reload the in-memory copy from the file (picks up other processes' writes)."""
        if self.path == ":memory:" or self.read_only:
            return
        sig = self._stat_file()
        with self._file(read_only=True) as con:
            data = {t: con.execute(f"SELECT * FROM {t}").fetch_df() for t in TABLES}  # fixed names
        meta = dict(zip(data["meta"]["key"], data["meta"]["value"], strict=True)) if len(data["meta"]) else {}
        tokens = (meta.get(CHANGE_KEY), meta.get(POPULATION_KEY))
        with self._write_lock:
            cur = self._mem.cursor()
            try:
                cur.execute("BEGIN TRANSACTION")
                for t, df in data.items():
                    cur.execute(f"DELETE FROM {t}")
                    if len(df):
                        cur.register("incoming", df)
                        cur.execute(f"INSERT INTO {t} BY NAME SELECT * FROM incoming")
                        cur.unregister("incoming")
                cur.execute("COMMIT")
            except Exception:
                cur.execute("ROLLBACK")
                raise
            finally:
                cur.close()
            population_changed = tokens[1] != self._tokens[1] or self._tokens == (None, None)
            self._tokens, self._file_sig = tokens, sig
            self._invalidate(population=population_changed)

    def _stat_file(self) -> tuple[Any, ...]:
        return storefile.file_signature(self.path)

    def check_external_writes(self, *, force: bool = False) -> bool:
        """Reload when another process (``advisor probe``/``import`` from a shell) wrote to the file.

        Cheap: one ``os.stat`` at most every :data:`EXTERNAL_CHECK_S` seconds; only when the file
        changed is its change token read (a short read-only open) and, when it is not ours, the copy
        reloaded. Never raises: a failed check is logged and retried later.

        Returns:
            bool: True when the in-memory copy was reloaded.
        """
        if self.path == ":memory:" or self.read_only:
            return False
        now = time.monotonic()
        if not force and now < self._next_check:
            return False
        self._next_check = now + EXTERNAL_CHECK_S
        try:
            sig = self._stat_file()
            if sig == self._file_sig:
                return False
            with _file_lock(self.path):
                con = duckdb.connect(self.path, read_only=True)
                try:
                    rows = dict(con.execute("SELECT key, value FROM meta WHERE key IN (?, ?)",
                                            [CHANGE_KEY, POPULATION_KEY]).fetchall())
                finally:
                    con.close()
            if (rows.get(CHANGE_KEY), rows.get(POPULATION_KEY)) == self._tokens:
                self._file_sig = sig
                return False
            self.refresh()
            return True
        except Exception as e:  # noqa: BLE001 - a busy or briefly locked file: try again on a later read
            log.info("store change check skipped: %s", str(e).splitlines()[0][:120] if str(e) else type(e).__name__)
            return False

    def _invalidate(self, *, population: bool) -> None:
        with self._cache_lock:
            if population:
                self._gen[0] += 1
            self._gen[1] += 1

    def _load_parquet(self, base: str) -> None:
        base = base.rstrip("/") or "/"
        if not _is_remote(base) and not any(os.path.exists(f"{base}/{t}.parquet") for t in TABLES):
            raise KnowledgeStoreError(
                f"{base} is a folder without the tables `advisor db export` writes (hardware.parquet, "
                f"results.parquet, ...), so it is not a store. Give a store file, e.g. --store "
                f"{os.path.join(base, 'store.duckdb')}, or a folder made by `advisor db export`.")
        cur = self._mem.cursor()
        try:
            for t in TABLES:
                src = f"{base}/{t}.parquet"
                if not _is_remote(base) and not os.path.exists(src):
                    continue
                try:
                    cur.execute(f"INSERT INTO {t} BY NAME SELECT * FROM read_parquet(?)", [src])
                except duckdb.Error as e:
                    raise KnowledgeStoreError(f"Cannot read {src} of the shared store: {str(e)[:160]}") from None
            if not cur.execute("SELECT count(*) FROM hardware").fetchone()[0]:  # type: ignore[index]
                seed.load_seed(cur)
        finally:
            cur.close()

    # ------------------------------------------------------------------ reading
    @contextmanager
    def cursor(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """A fresh cursor on the in-memory copy, closed afterwards (one per thread or call)."""
        self.check_external_writes()
        cur = self._mem.cursor()
        try:
            yield cur
        finally:
            cur.close()

    def query(self, sql: str, params: list[Any] | dict[str, Any] | None = None) -> list[dict[str, Any]]:
        """Run a parameterised read query; rows as dicts."""
        with self.cursor() as cur:
            res = cur.execute(sql, params or [])
            cols = [d[0] for d in res.description or []]
            return [dict(zip(cols, r, strict=True)) for r in res.fetchall()]

    def cached(self, key: str, build: Callable[[], Any], *, scope: str = "population") -> Any:
        """Memoise a derived structure (catalog indexes, calibration).

        Args:
            scope: ``"population"`` (default; ``"catalog"`` is the same): built only from the catalog,
                seed and pooled rows, so it is kept when a person saves their own results (probes,
                imports) and rebuilt after a pooled import, a seed reload or another process's such
                write. ``"all"``: rebuilt after any write — for anything that reads a person's own rows.

        Single-flight: concurrent callers of one key wait for one ``build()`` instead of all building.
        A value built while a write happened is returned to its caller but not kept (generation check),
        so no stale value outlives the write.
        """
        if scope not in ("all", "population", "catalog"):
            raise ValueError(f"unknown cache scope {scope!r}")
        self.check_external_writes()

        def current() -> tuple[int, int]:
            return (self._gen[0], self._gen[1] if scope == "all" else -1)

        with self._cache_lock:
            hit = self._catalog_cache.get(key)
            if hit is not None and hit[:2] == current():
                return hit[2]
            klock = self._key_locks.setdefault(key, threading.Lock())
        with klock:
            with self._cache_lock:
                gen = current()
                hit = self._catalog_cache.get(key)
                if hit is not None and hit[:2] == gen:
                    return hit[2]
            value = build()
            with self._cache_lock:
                if current() == gen:
                    self._catalog_cache[key] = (*gen, value)
            return value

    # ------------------------------------------------------------------ writing
    def write(self, fn: Callable[[duckdb.DuckDBPyConnection], Any], *, population: bool = True) -> Any:
        """Run ``fn(con)`` in one transaction on the file, then on the in-memory copy.

        Args:
            population: the write changes what the population calibration is fitted on (pooled data,
                catalog). False for a person's own results: caches of scope ``population`` are kept.

        Returns what ``fn`` returned on the file. The write is durable when this returns.

        Raises:
            KnowledgeStoreError: the file could not be written (the disk's own reason, e.g. no space left).
        """
        if self.read_only:
            raise KnowledgeStoreError(
                f"The shared store {self.path} is read-only. Save your results in a local store "
                "(drop --store) and pool them with `advisor db export` / `advisor db import`."
            )
        self.check_external_writes(force=True)  # never mirror onto a copy that misses another process's rows
        with self._write_lock:
            out = None
            change = uuid.uuid4().hex
            state: dict[str, tuple[Any, Any]] = {}

            def fn_and_mark(con: duckdb.DuckDBPyConnection) -> Any:
                res = fn(con)
                if "tokens" not in state:  # first run: on the file (or the only copy): read its tokens
                    prev = dict(con.execute("SELECT key, value FROM meta WHERE key IN (?, ?)",
                                            [CHANGE_KEY, POPULATION_KEY]).fetchall())
                    state["prev"] = (prev.get(CHANGE_KEY), prev.get(POPULATION_KEY))
                    state["tokens"] = (change, change if population else state["prev"][1])
                tokens = state["tokens"]
                con.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", [CHANGE_KEY, tokens[0]])
                if tokens[1] is not None:
                    con.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", [POPULATION_KEY, tokens[1]])
                return res

            try:
                if self.path != ":memory:":
                    with self._file(read_only=False) as con:
                        out = self._tx(con, fn_and_mark)
                cur = self._mem.cursor()
                try:
                    mem_out = self._tx(cur, fn_and_mark)
                finally:
                    cur.close()
            except (duckdb.Error, OSError) as e:
                env = storefile.environment_problem(e)
                why = env or f"{type(e).__name__}: {str(e).splitlines()[0][:160] if str(e) else ''}"
                raise KnowledgeStoreError(f"Nothing was saved to {self.path}: {why}.") from None
            if self.path != ":memory:":
                if state["prev"] != self._tokens:  # another process wrote just before us: reload it all
                    self.refresh()
                self._tokens, self._file_sig = state["tokens"], self._stat_file()
            self._invalidate(population=population)
            return out if self.path != ":memory:" else mem_out

    @staticmethod
    def _tx(con: duckdb.DuckDBPyConnection, fn: Callable[[duckdb.DuckDBPyConnection], Any]) -> Any:
        """``fn(con)`` in one transaction. When it fails, the original error is raised even if the
        rollback fails too (a full disk makes DuckDB refuse the rollback: "cannot rollback")."""
        con.execute("BEGIN TRANSACTION")
        try:
            out = fn(con)
            con.execute("COMMIT")
            return out
        except BaseException:
            try:
                con.execute("ROLLBACK")
            except Exception as rb:  # noqa: BLE001 - keep the first, real reason
                log.warning("rollback failed after a failed write: %s", rb)
            raise

    def save_probe(self, probe: Any) -> str:
        """Store a :class:`~advisor.models.ProbeResult` (and its model runs as results rows).

        Returns:
            str: the probe id (a content hash: saving the same probe twice stores it once).
        """
        payload = probe.model_dump_json()
        pid = hashlib.sha1(payload.encode()).hexdigest()[:20]
        created = probe.created_at or datetime.now(UTC).isoformat(timespec="seconds")
        machine = probe.machine or {}
        hw_name = machine.get("cpu_model") or machine.get("gpu_name") or probe.device
        runs = []
        for run in probe.model_runs:
            r = {
                "hardware": hw_name, "hw_id": probe.hw_id or "", "backend": f"mlx ({probe.backend})",
                "model": machine.get("model_name") or "probe model", "quant": machine.get("model_quant"),
                "prompt_tokens": run.prompt_tokens, "gen_tokens": run.gen_tokens, "depth": 0, "batch": 1,
                "prefill_tps": run.prefill_tps, "decode_tps": run.decode_tps, "source_set": "probe",
                "source_url": f"probe:{pid}", "notes": f"advisor probe {created}", "value_kind": "measured",
            }
            runs.append(r)

        def fn(con: duckdb.DuckDBPyConnection) -> str:
            con.execute(
                "INSERT INTO probes (probe_id, created_at, backend, device, hw_id, bandwidth_gbs, "
                "bandwidth_median_gbs, matmul_tflops, duration_s, engine_version, machine_json, payload_json, "
                "origin, machine_fp) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,'local',?) ON CONFLICT DO NOTHING",
                [pid, created, probe.backend, probe.device, probe.hw_id, probe.bandwidth_gbs,
                 probe.bandwidth_median_gbs, probe.matmul_tflops, probe.duration_s, probe.engine_version,
                 json.dumps(machine, default=str), payload, storefile.machine_fingerprint()],
            )
            self._insert_results(con, runs, origin="probe", parent_id=pid)
            return pid

        return self.write(fn, population=False)

    def save_import(
        self, *, fmt: str, raw_text: str, measurements: list[dict[str, Any]], hardware: str | None = None,
        hw_id: str | None = None, machine: dict[str, Any] | None = None,
    ) -> str:
        """Store an imported tool output: the raw text and one results row per measurement.

        Returns:
            str: the import id (a content hash of the raw text and the machine).

        Raises:
            KnowledgeStoreError: the stored tool output already holds :data:`MAX_OWN_TEXT_CHARS`
                characters (every process keeps the store in memory: a flood of pastes must not fill it).
        """
        with self.cursor() as cur:
            held = cur.execute("SELECT coalesce(sum(length(raw_text)), 0) FROM imports").fetchone()[0]  # type: ignore[index]
        if held + len(raw_text) > MAX_OWN_TEXT_CHARS:
            raise KnowledgeStoreError(
                f"The store already holds {held / 1e6:,.0f} million characters of pasted tool output, its limit; "
                "this one was not saved. Export what you need (`advisor db export`) and start a fresh store.")
        iid = hashlib.sha1(f"{fmt}\n{hw_id}\n{hardware}\n{raw_text}".encode()).hexdigest()[:20]
        rows = []
        for m in measurements:
            r = dict(m)
            r.update({
                "hardware": hardware or r.get("hardware") or "", "hw_id": hw_id or "",
                "source_set": f"import:{fmt}", "source_url": f"import:{iid}", "value_kind": "measured",
            })
            rows.append(r)

        def fn(con: duckdb.DuckDBPyConnection) -> str:
            con.execute(
                "INSERT INTO imports (import_id, format, hardware, hw_id, engine, raw_text, machine_json) "
                "VALUES (?,?,?,?,?,?,?) ON CONFLICT DO NOTHING",
                [iid, fmt, hardware, hw_id, (rows[0].get("backend") if rows else None), raw_text,
                 json.dumps(machine or {}, default=str)],
            )
            self._insert_results(con, rows, origin="import", parent_id=iid)
            return iid

        return self.write(fn, population=False)

    def _insert_results(
        self, con: duckdb.DuckDBPyConnection, rows: list[dict[str, Any]], *, origin: str, parent_id: str | None
    ) -> None:
        if not rows:
            return
        hw_ids = {r[0] for r in con.execute("SELECT hw_id FROM hardware").fetchall()}
        aliases = dict(con.execute("SELECT alias, model_id FROM model_aliases").fetchall())
        cols = tuple(seed.RESULT_COLUMNS)
        out = [row for r in rows if (row := pooled.sound_result_row(seed.result_row(
            {**r, "origin_key": parent_id}, origin=origin, hw_ids=hw_ids, model_aliases=aliases,
            parent_id=parent_id), cols)) is not None]
        seed.insert_rows(con, "results", out, cols)  # one bulk insert (a DataFrame scan), not a row at a time

    def close(self) -> None:
        self._mem.close()
