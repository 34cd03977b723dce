"""Admin operations of the knowledge store: stats, Parquet export, pooled import, recover.

A mixin of :class:`knowledge.store.Store` (kept apart so each module stays readable); it uses the
store's ``cursor()``, ``write()`` and ``path``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from advisor.errors import KnowledgeStoreError
from knowledge import pooled, storefile

__all__ = ["StoreAdmin", "TABLES", "USER_TABLES"]

TABLES = ("hardware", "models", "model_aliases", "quant_formats", "lab_machines", "results", "probes", "imports", "meta")
USER_TABLES = ("results", "probes", "imports")


def _sql_str(s: str) -> str:
    return "'" + s.replace("'", "''") + "'"


class StoreAdmin:
    """stats / export / import_pooled / recover for :class:`~knowledge.store.Store`."""

    path: str
    read_only: bool
    cursor: Any
    write: Any

    # ------------------------------------------------------------------ admin
    def stats(self) -> dict[str, Any]:
        """Rows per table and, for results, per origin and per source set."""
        with self.cursor() as cur:
            tables = {t: cur.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in TABLES}  # type: ignore[index]
            by_origin = dict(cur.execute("SELECT origin, count(*) FROM results GROUP BY 1 ORDER BY 1").fetchall())
            by_source = dict(
                cur.execute(
                    "SELECT coalesce(source_set, '?'), count(*) FROM results GROUP BY 1 ORDER BY 2 DESC"
                ).fetchall()
            )
            kinds = dict(cur.execute("SELECT value_kind, count(*) FROM results GROUP BY 1").fetchall())
        return {
            "store": self.path, "read_only": self.read_only, "tables": tables,
            "results_by_origin": by_origin, "results_by_source": by_source, "results_by_value_kind": kinds,
        }

    def export(self, directory: str | os.PathLike[str]) -> list[str]:
        """Write every table as ``<directory>/<table>.parquet``; returns the files written."""
        d = Path(directory)
        d.mkdir(parents=True, exist_ok=True)
        files = []
        with self.cursor() as cur:
            for t in TABLES:
                target = str(d / f"{t}.parquet")
                tmp = target + ".tmp"
                cur.execute(f"COPY {t} TO {_sql_str(tmp)} (FORMAT parquet)")
                os.replace(tmp, target)
                files.append(target)
        return files

    def import_pooled(self, source: str | os.PathLike[str]) -> dict[str, int]:
        """Merge user tables (results, probes, imports) from an exported folder or one Parquet file.

        Rows are de-duplicated by content id, so importing the same export twice adds nothing. Pooled
        rows are validated and marked ``origin = 'pooled'`` (:mod:`knowledge.pooled`): they feed the
        population calibration; pooled probes are never "this machine".

        Returns:
            dict[str, int]: new rows per table and ``<table>_refused`` rows skipped as unsound.
        """
        src = Path(source)
        files: dict[str, Path] = {}
        if src.is_dir():
            for t in USER_TABLES:
                if (src / f"{t}.parquet").exists():
                    files[t] = src / f"{t}.parquet"
        elif src.is_file() and src.suffix == ".parquet":
            files[src.stem if src.stem in USER_TABLES else "results"] = src
        if not files:
            raise KnowledgeStoreError(
                f"Nothing to import from {source}: expected a folder made by `advisor db export` "
                "(results.parquet, probes.parquet, imports.parquet) or one of those files."
            )

        return dict(self.write(lambda con: pooled.merge_files(con, files), population=True))

    @staticmethod
    def recover(path: str, *, force: bool = False) -> str:
        """Move a damaged store file aside (never deleting it); returns the new name.

        See :func:`knowledge.storefile.recover`: only a recognisable store of this project is moved.

        Raises:
            KnowledgeStoreError: not a store of this project, healthy (unless ``force``), in use, or the disk.
        """
        from knowledge.store import Store

        return storefile.recover(path, force=force, try_open=lambda p: Store(p, lock_timeout_s=2.0).close())
