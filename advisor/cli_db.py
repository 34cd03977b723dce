"""``advisor db``: the knowledge store's stats, export, import and recovery."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from advisor.cli_support import JSON_OPT, STORE_OPT, emit, guard, open_store

db_app = typer.Typer(add_completion=False, no_args_is_help=True, help="The knowledge store: stats, export, import.")


@db_app.command("stats")
def db_stats(store: Optional[str] = STORE_OPT, as_json: bool = JSON_OPT) -> None:
    """Rows per table and per source."""
    st = guard(lambda: open_store(store), as_json)
    s = st.stats()
    from knowledge.catalog import catalog_stats

    s["catalog"] = cat = catalog_stats(st)
    txt = "\n".join([f"store: {s['store']}"] + [f"  {k:14} {v:>8,}" for k, v in s["tables"].items()]
                    + ["results by source:"] + [f"  {k:40} {v:>6,}" for k, v in s["results_by_source"].items()]
                    + [f"machines the catalog knows: {cat['machines']:,}"]
                    + [f"  {k:14} {v:>6,}  ({', '.join(f'{src} {n}' for src, n in cat['by_kind_and_source'][k].items())})"
                       for k, v in cat["by_kind"].items()]
                    + [f"  by source: {', '.join(f'{k} {v:,}' for k, v in cat['by_source'].items())}"])
    emit(s, as_json, txt)


@db_app.command("export")
def db_export(directory: Path = typer.Argument(...), store: Optional[str] = STORE_OPT, as_json: bool = JSON_OPT) -> None:
    """Write every table as Parquet (one file per table) into DIRECTORY."""
    def check() -> None:
        if directory.exists() and not directory.is_dir():
            raise ValueError(f"cannot export into {directory}: it is a file, not a folder; give a folder "
                             "(it is created when missing)")

    guard(check, as_json)
    st = guard(lambda: open_store(store), as_json)
    files = guard(lambda: st.export(directory), as_json)
    emit({"files": files}, as_json, "\n".join(files))


@db_app.command("import")
def db_import(source: Path = typer.Argument(...), store: Optional[str] = STORE_OPT, as_json: bool = JSON_OPT) -> None:
    """Merge results, probes and imports from an exported folder or Parquet file (de-duplicated)."""
    def check() -> None:
        if not source.exists():
            raise ValueError(f"cannot import {source}: no such file or folder")
        if not (source.is_dir() or source.is_file()):
            raise ValueError(f"cannot import {source}: it is a device or special file, not a folder or a "
                             "Parquet file")

    guard(check, as_json)
    st = guard(lambda: open_store(store), as_json)
    added = guard(lambda: st.import_pooled(source), as_json)
    new = {k: v for k, v in added.items() if not k.endswith("_refused")}
    refused = {k.removesuffix("_refused"): v for k, v in added.items() if k.endswith("_refused")}
    text = ", ".join(f"{k}: +{v}" for k, v in new.items())
    if refused:
        text += ("\nrefused as unsound (NaN/Inf or out-of-range values, a forged origin, oversized text, a future "
                 "date): " + ", ".join(f"{k}: {v}" for k, v in refused.items()))
    emit({"added": new, "refused": refused}, as_json, text)


@db_app.command("recover")
def db_recover(store: Optional[str] = STORE_OPT, as_json: bool = JSON_OPT,
               force: bool = typer.Option(False, "--force", help="Also move a store that opens fine.")) -> None:
    """Move a damaged store file aside (kept, never deleted) so a fresh one is built."""
    from knowledge.store import Store, default_store_path

    path = store or default_store_path()
    moved = guard(lambda: Store.recover(path, force=force), as_json)
    emit({"moved_to": moved}, as_json, f"moved {path} to {moved}; the next command builds a fresh store")
