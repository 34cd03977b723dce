"""Attack: careless --input files given to the CLI (a device that never ends, a binary file)."""

from __future__ import annotations

import os

import pytest
from typer.testing import CliRunner

from advisor.cli import app


@pytest.mark.parametrize("cmd", ["predict", "diagnose"])
def test_input_device_is_refused_not_read_forever(tmp_path, cmd: str) -> None:
    if not os.path.exists("/dev/urandom"):
        pytest.skip("no /dev/urandom")
    r = CliRunner().invoke(app, [cmd, "--input", "/dev/urandom", "--store", str(tmp_path / "s.duckdb")])
    assert r.exit_code == 2 and "not a regular file" in r.output


@pytest.mark.parametrize("cmd", ["predict", "diagnose"])
def test_binary_input_is_named_not_blamed_on_the_store(tmp_path, cmd: str) -> None:
    f = tmp_path / "rows.json"
    f.write_bytes(bytes(range(128, 256)) * 10)
    r = CliRunner().invoke(app, [cmd, "--input", str(f), "--store", str(tmp_path / "s.duckdb")])
    assert r.exit_code == 2 and "not UTF-8 text" in r.output and "recover" not in r.output


@pytest.mark.parametrize("store", ["", "  ", "/dev/null"])
def test_odd_store_path_gets_a_clear_reason_not_recover_advice(store: str) -> None:
    if store == "/dev/null" and not os.path.exists(store):
        pytest.skip("no /dev/null")
    r = CliRunner().invoke(app, ["db", "stats", "--store", store])
    assert r.exit_code == 2 and "recover" not in r.output and "damaged" not in r.output
