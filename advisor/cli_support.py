"""What every ``advisor`` command shares: the store and ``--json`` options, output (one JSON object with ``--json``,
else text or Markdown rendered for the terminal) and errors (one clear line, exit status 2, never a traceback)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import typer

from advisor.report import json_safe

__all__ = ["JSON_OPT", "STORE_OPT", "emit", "fail", "guard", "json_default", "open_store", "os_message", "say"]

STORE_OPT = typer.Option(None, "--store", envvar="ADVISOR_STORE", help="Store file, Parquet folder or URL.")
JSON_OPT = typer.Option(False, "--json", help="Print one JSON object.")


def open_store(path: str | None) -> Any:
    from advisor.errors import InputError
    from knowledge.store import Store

    if path is not None and "://" not in path:
        if not path.strip():
            raise InputError("--store (or ADVISOR_STORE) is empty; give a store file, Parquet folder or URL, or unset it")
        p = Path(path)
        if p.exists() and not (p.is_file() or p.is_dir()):
            raise InputError(f"{path} is not a store file (a device or special file); nothing was opened")
    return Store(path)


def emit(obj: Any, as_json: bool, text: str | None = None) -> None:
    if as_json:
        if hasattr(obj, "model_dump"):
            obj = obj.model_dump(mode="json")
        typer.echo(json.dumps(json_safe(obj), default=json_default, ensure_ascii=False, allow_nan=False))
    else:
        typer.echo(text if text is not None else json.dumps(obj, indent=2, default=json_default))


def say(obj: Any, as_json: bool, md: str) -> None:
    """One JSON object with ``--json``, else the answer's Markdown rendered for the terminal (rich)."""
    if as_json:
        emit(obj, True)
        return
    from advisor.render.terminal import print_markdown

    print_markdown(md)


def json_default(o: Any) -> Any:
    if hasattr(o, "model_dump"):
        return o.model_dump(mode="json")
    if isinstance(o, float) and o != o:
        return None
    return str(o)


def fail(msg: str, as_json: bool, code: int = 2) -> None:
    if as_json:
        typer.echo(json.dumps({"error": msg}))
    else:
        typer.echo(f"error: {msg}", err=True)
    raise typer.Exit(code)


def guard(fn: Any, as_json: bool) -> Any:
    from pydantic import ValidationError

    from advisor.errors import AdvisorError

    try:
        return fn()
    except AdvisorError as e:
        fail(str(e), as_json)
    except ValidationError as e:
        from advisor.compare.request import validation_message

        fail(validation_message(e), as_json)
    except (OSError, ValueError) as e:
        if isinstance(e, ValueError) and PY_MESSAGE.search(str(e)):
            import logging

            logging.getLogger("advisor").debug("unexpected ValueError", exc_info=True)
            fail("a value the advisor needs cannot be used (a number in the knowledge store may have been edited "
                  "by hand). `advisor db recover --force` starts a fresh store and keeps the old file beside it; "
                  "ADVISOR_LOG=DEBUG shows the details.", as_json)
        from knowledge.storefile import environment_problem

        env = environment_problem(e) if isinstance(e, OSError) else None
        fail(str(e) if isinstance(e, ValueError) else (env or os_message(e)), as_json)


def os_message(e: OSError) -> str:
    """``cannot use /proc/x: no such file or directory`` rather than ``FileNotFoundError: [Errno 2] ...``."""
    if e.strerror and e.filename:
        return f"cannot use {e.filename}: {e.strerror[0].lower()}{e.strerror[1:]}"
    return f"{type(e).__name__}: {e}"


# Python's own ValueError wording (a conversion of a damaged value), never meant for a user.
PY_MESSAGE = re.compile(
    r"could not convert|invalid literal|math domain|cannot convert float|values to unpack|must be real number|"
    r"codec can't|substring not found|is not in list|empty separator|arg is an empty sequence|"
    r"not enough values|too many values|invalid (?:isoformat|format)|unconverted data|does not match format", re.I)
