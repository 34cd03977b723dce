"""Facts about the store *file*: is it a DuckDB file of this project, why can it not be opened, whose machine.

Kept apart from :mod:`knowledge.store` so that ``advisor db recover`` and the error messages share one
home for "what a store file looks like" and "which failures are not damage".

* DuckDB file magic: bytes 8–11 of a DuckDB database file are ``b"DUCK"`` (the first 8 bytes are the
  main header's checksum; DuckDB storage format, ``src/storage/storage_info.cpp`` ``MAGIC_BYTES``).
* This project's store has a ``meta`` table and a ``schema_migrations`` table recording
  ``m001_initial`` (:mod:`knowledge.migrations`).
"""

from __future__ import annotations

import errno
import hashlib
import os
import platform
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import duckdb

from advisor.errors import KnowledgeStoreError, StoreLockedError

__all__ = ["DUCKDB_MAGIC", "environment_problem", "file_signature", "foreign_tables", "has_duckdb_magic", "is_project_store",
           "machine_fingerprint", "open_failure", "recover"]

DUCKDB_MAGIC = b"DUCK"
_MAGIC_OFFSET = 8

# Failures of the disk or the file system, not of the store: moving the store aside would not help.
_ENV_MARKERS: tuple[tuple[str, str], ...] = (
    ("no space left", "the disk is full (no space left on device)"),
    ("disk full", "the disk is full"),
    ("disk quota", "the disk quota is exceeded"),
    ("read-only file system", "the file system is read-only"),
    ("permission denied", "permission denied"),
    ("operation not permitted", "operation not permitted"),
    ("cannot open file", ""),  # refined below by errno when possible
)


def has_duckdb_magic(path: str) -> bool:
    """True when ``path`` is a file whose header carries DuckDB's magic bytes (``DUCK`` at offset 8)."""
    try:
        with open(path, "rb") as f:
            head = f.read(_MAGIC_OFFSET + len(DUCKDB_MAGIC))
    except OSError:
        return False
    return head[_MAGIC_OFFSET:_MAGIC_OFFSET + len(DUCKDB_MAGIC)] == DUCKDB_MAGIC


def is_project_store(path: str) -> bool | None:
    """Whether a DuckDB file is a store of this project.

    Returns:
        True: it opens and has the ``meta`` and ``schema_migrations`` tables with ``m001_initial``;
        False: it opens and is some other DuckDB database;
        None: it cannot be opened (damaged, locked or unreadable) so it cannot be told.
    """
    try:
        con = duckdb.connect(path, read_only=True)
    except duckdb.Error:
        return None
    try:
        tables = {r[0] for r in con.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'main'").fetchall()}
        if not {"meta", "schema_migrations", "results"} <= tables:
            return False
        row = con.execute("SELECT count(*) FROM schema_migrations WHERE name = 'm001_initial'").fetchone()
        return bool(row and row[0])
    except duckdb.Error:
        return None
    finally:
        con.close()


def foreign_tables(con: duckdb.DuckDBPyConnection) -> list[str]:
    """The tables of an open DuckDB file that is another program's database: it has tables but no
    ``schema_migrations`` (every store of this project has one from its first step); [] for a store of this
    project or an empty database (a fresh file the store may build in)."""
    tables = sorted(r[0] for r in con.execute(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = 'main'").fetchall())
    return [] if not tables or "schema_migrations" in tables else tables


def environment_problem(e: BaseException) -> str | None:
    """The disk/file-system reason behind a store failure (disk full, read-only, permission), or None.

    Such failures are not damage: the message must not tell the user to run ``db recover``.
    """
    if isinstance(e, OSError) and e.errno in (errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EPERM):
        return os.strerror(e.errno).lower()
    msg = str(e).lower()
    for marker, reason in _ENV_MARKERS:
        if marker in msg and reason:
            return reason
    return None


def machine_fingerprint() -> str:
    """A short stable id of the computer running this process (host name, MAC, architecture, OS).

    Recorded with each probe, so that a probe pooled from a teammate is never taken for "this machine".
    """
    node = uuid.getnode()
    mac = "" if node & (1 << 40) else f"{node:012x}"  # multicast bit set: a random stand-in, not stable
    mid = ""
    for f in ("/etc/machine-id", "/var/lib/dbus/machine-id"):
        try:
            with open(f, encoding="ascii") as fh:
                mid = fh.read(64).strip()
            break
        except OSError:
            continue
    parts = [platform.node(), mac, mid, platform.machine(), platform.system()]
    return hashlib.sha1("|".join(parts).encode()).hexdigest()[:16]


def file_signature(path: str) -> tuple[Any, ...]:
    """(mtime_ns, size, inode) of the store file and its write-ahead log: changes when anyone writes."""
    out: list[Any] = []
    for p in (path, path + ".wal"):
        try:
            st = os.stat(p)
            out += [st.st_mtime_ns, st.st_size, st.st_ino]
        except OSError:
            out += [None, None, None]
    return tuple(out)


SERVING_SUFFIX = ".serving"  # "<store>.serving" holds the pid of an `advisor serve` using the store


def mark_serving(path: str) -> Callable[[], None]:
    """Record that this process serves the store at ``path`` (the server opens the file per request, so no lock
    says so between requests); returns the function that removes the mark (also run at exit). A path that is not
    a file store (``:memory:``, a Parquet folder, a URL) is not marked."""
    import atexit

    if not path or path == ":memory:" or os.path.isdir(path) or "://" in path:
        return lambda: None
    mark = path + SERVING_SUFFIX
    me = f"{os.getpid()} {_started(os.getpid())}"
    try:
        with open(mark, "w", encoding="utf-8") as f:
            f.write(me)
    except OSError:
        return lambda: None

    def clear() -> None:
        try:
            if open(mark, encoding="utf-8").read().strip().split()[:1] == [str(os.getpid())]:
                os.remove(mark)
        except OSError:
            pass
    atexit.register(clear)
    return clear


def served_by(path: str) -> int | None:
    """The pid of a running `advisor serve` that uses the store at ``path`` (its :func:`mark_serving` mark), or
    None (no mark, or its process is gone)."""
    try:
        parts = open(path + SERVING_SUFFIX, encoding="utf-8").read().split()
        pid = int(parts[0])
    except (OSError, ValueError, IndexError):
        return None
    if pid == os.getpid():
        return None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return None
    except OSError:
        return pid  # alive, another user's
    if len(parts) > 1 and (now := _started(pid)) and parts[1] != now:
        return None  # the server that wrote the mark is gone (killed); another process got its pid since
    return pid


def _started(pid: int) -> str:
    """When the process started (psutil's create time, to the 1/100 s), so a reused pid is not taken for the server
    that wrote a mark; "" when it cannot be read."""
    try:
        import psutil

        return f"{psutil.Process(pid).create_time():.2f}"
    except Exception:  # noqa: BLE001 - no psutil, or the process is gone: no start time to compare
        return ""


def recover(path: str, *, force: bool = False, try_open: Callable[[str], None]) -> str:
    """Move a damaged store file aside (never deleting it); returns the new name.

    ``try_open(path)`` opens the store (raising :class:`KnowledgeStoreError` when it cannot).

    Only a file that is recognisably a DuckDB store of this project is moved: it must carry DuckDB's
    magic bytes and, when it opens, this project's ``meta``/``schema_migrations`` tables. A file
    that cannot be used because of the disk (full, read-only) is not damaged and is not moved.

    Raises:
        KnowledgeStoreError: the path is not a store of this project, is healthy (unless ``force``),
            is in use, or the disk is the problem.
    """
    if not os.path.isfile(path):
        raise KnowledgeStoreError(f"{path} is not a store file (nothing to recover).")
    if not has_duckdb_magic(path):
        raise KnowledgeStoreError(
            f"{path} is not a DuckDB store (its header lacks DuckDB's magic bytes); nothing was moved. "
            "Check the --store path.")
    if is_project_store(path) is False:
        raise KnowledgeStoreError(
            f"{path} is a DuckDB database but not an advisor knowledge store (no meta/schema_migrations "
            "tables); nothing was moved.")
    if (pid := served_by(path)) is not None:  # --force too: moving a served store away loses what it writes next
        raise KnowledgeStoreError(f"{path} is in use by the advisor server (pid {pid}); stop it first, then recover.")
    if not force:
        try:
            try_open(path)
        except StoreLockedError:
            raise KnowledgeStoreError(f"{path} is in use by another process; stop it first.") from None
        except KnowledgeStoreError as e:
            if "is damaged" not in str(e):
                raise KnowledgeStoreError(f"{path} was not moved: {e}") from None
            # damaged, as expected: move it aside
        else:
            raise KnowledgeStoreError(
                f"{path} opens fine, so there is nothing to recover; your results are in it. "
                "Use --force to start a fresh store anyway (the file is kept beside it).")
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S")
    target = f"{path}.broken-{stamp}-{uuid.uuid4().hex[:6]}"
    os.replace(path, target)
    if os.path.exists(path + ".wal"):
        os.replace(path + ".wal", target + ".wal")
    return target


def open_failure(path: str, e: BaseException) -> str:
    """The message for a store that cannot be opened: the disk's reason when it is the disk (full,
    read-only, permission: moving the store aside would not help), "not a store" for a foreign file,
    else damage and how to recover."""
    env = environment_problem(e)
    if env:
        return (f"The knowledge store {path} cannot be used: {env}. The store itself is not damaged; "
                "free some space or fix the permissions, or use another --store.")
    if isinstance(e, OSError):
        return f"The knowledge store {path} cannot be used: {e.strerror or e}."
    if os.path.isfile(path) and not os.path.getsize(path):
        real = os.path.realpath(path)
        if real.startswith(("/proc/", "/sys/", "/dev/")):
            return (f"{path} is a file of the operating system ({real.split('/')[1]}), not a knowledge store; "
                    "nothing was opened. Check the --store path.")
        return (f"{path} is an empty file (0 bytes): not a knowledge store and nothing to rescue. Delete it, or "
                "give another --store; the next command then builds a fresh store there.")
    if os.path.isfile(path) and os.path.getsize(path) and not has_duckdb_magic(path):
        return (f"{path} is not a DuckDB knowledge store (its header lacks DuckDB's magic bytes), so it "
                "was left alone. Check the --store path, or move that file away yourself.")
    return (f"The knowledge store {path} is damaged ({type(e).__name__}: "
            f"{str(e).splitlines()[0][:160] if str(e) else ''}). The catalog can always be rebuilt: run "
            f"`advisor db recover --store {path}` to move the damaged file aside (it is kept, never "
            "deleted, so your own results can still be rescued) and start a fresh store.")
