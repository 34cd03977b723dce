"""Issue 17 items 9 and 10: clear one-line errors instead of tracebacks, and input bounds."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest
from pydantic import ValidationError
from typer.testing import CliRunner

from advisor import cli, service
from advisor.models import Scenario
from knowledge.store import Store
from ui import api

runner = CliRunner()


def _run(*args: str):
    r = runner.invoke(cli.app, list(args))
    out = (r.stdout or "") + (r.stderr or "")
    assert "Traceback" not in out and r.exception is None or isinstance(r.exception, SystemExit), out
    return r.exit_code, out


@pytest.mark.parametrize("host,why", [("999.999.1.1", "not a valid IPv4"), ("no-such-host.invalid", "can resolve"),
                                      ("", "empty")])
def test_serve_bad_host_is_one_line(host, why):
    code, out = _run("serve", "--host", host, "--port", "7999")
    assert code == 2 and why in out and len(out.strip().splitlines()) == 1


def test_probe_bad_model_is_checked_before_the_kernel_probe(monkeypatch, tmp_path):
    calls = []
    monkeypatch.setattr(service, "run_probe", lambda *a, **k: calls.append(1))
    code, out = _run("probe", "--model", str(tmp_path / "BADPATH"))
    assert code == 2 and "BADPATH" in out and calls == []
    (tmp_path / "notamodel").mkdir()
    code, out = _run("probe", "--model", str(tmp_path / "notamodel"))
    assert code == 2 and "config.json" in out and calls == []


def test_cli_import_with_a_32bit_overflow_keeps_the_sound_rows(tmp_path):
    f = tmp_path / "bench.json"
    rows = [{"model_type": "llama 8B Q4_K - Medium", "n_gpu_layers": n, "n_prompt": 0, "n_gen": 128,
             "avg_ts": ts, "backends": "CUDA", "model_filename": "llama-3.1-8b-q4_k_m.gguf"}
            for n, ts in ((2**31, 120.0), (99, 121.0))]
    f.write_text(json.dumps(rows))
    code, out = _run("import", str(f), "--hardware", "RTX 4090", "--json")
    assert code == 0, out
    st = Store()
    got = st.query("SELECT decode_tps, n_gpu_layers FROM results WHERE origin = 'import' ORDER BY decode_tps")
    # the sound row is kept; the overflowing one is dropped by the importer or kept without that field
    assert {"decode_tps": 121.0, "n_gpu_layers": 99} in got and len(got) in (1, 2)
    assert all(r["n_gpu_layers"] in (None, 99) for r in got)


def test_tampered_catalog_value_is_no_python_message():
    path = Store().path
    con = duckdb.connect(path)
    con.execute("UPDATE hardware SET memory_gb_options = 'abc;def' WHERE hw_id = 'nvidia-rtx-4090'")
    con.close()
    code, out = _run("predict", "--hardware", "RTX 4090", "--model", "llama 3.1 8b")
    assert code == 2 and "could not convert" not in out and "edited by hand" in out


def test_cli_store_full_disk_is_reported_as_the_disk(monkeypatch):
    Store()  # create it

    real = duckdb.connect

    def full(p, *a, **k):
        if not k.get("read_only") and str(p).endswith(".duckdb"):
            raise duckdb.IOException("IO Error: Could not write to file: No space left on device")
        return real(p, *a, **k)

    monkeypatch.setattr(duckdb, "connect", full)
    f = Path(Store().path).with_name("b.txt")
    f.write_text("llama_perf_context_print:        eval time =    1000.00 ms /   100 runs   (   10.00 ms per token,"
                 "   100.00 tokens per second)\n")
    code, out = _run("import", str(f), "--hardware", "RTX 4090")
    assert code == 2 and "disk is full" in out and "recover" not in out and "rollback" not in out


# ------------------------------------------------------------------------------ item 10: bounds
@pytest.mark.parametrize("field,value,why", [
    ("prompt_tokens", 0, "at least one token"), ("gen_tokens", 0, "at least one token"),
    ("n_gpu_layers", -1, "0 = CPU only"), ("gpu_cores", -8, "at least 1"), ("gpu_cores", 0, "at least 1"),
])
def test_zero_and_negative_counts_are_refused(field, value, why):
    with pytest.raises(ValidationError, match=why):
        Scenario(**{field: value})
    out = json.loads(api.api_predict(Store(":memory:"), json.dumps(
        {"hardware": "RTX 4090", "model": "llama 3.1 8b", field: value})))
    assert field in out["error"] and why in out["error"]


def test_sound_counts_still_pass():
    s = Scenario(prompt_tokens=1, gen_tokens=1, n_gpu_layers=0, gpu_cores=1, depth=0)
    assert (s.prompt_tokens, s.gen_tokens, s.n_gpu_layers, s.gpu_cores) == (1, 1, 0, 1)


def test_export_folder_is_removed_at_exit_and_share_visitors_are_remote(monkeypatch):
    import atexit
    import os
    from types import SimpleNamespace

    from ui.app import build_app

    registered = []
    monkeypatch.setattr(atexit, "register", lambda fn, *a, **k: registered.append((fn, a, k)))
    st = Store(":memory:")
    demo = build_app(st, allow_probe=False, everyone_remote=True)  # as with --share
    fns = {getattr(f.fn, "__name__", ""): f.fn for f in demo.fns.values()}
    assert not [r for r in registered if r[1] and "advisor-export-" in str(r[1][0])]  # nothing made per turn
    fns["on_export"](None, {})  # the first export makes the folder (and registers its removal)
    (fn, a, k), = [r for r in registered if r[1] and "advisor-export-" in str(r[1][0])]
    folder = a[0]
    assert os.path.isdir(folder)
    fn(*a, **k)  # what runs when the process ends
    assert not os.path.exists(folder)
    # a share tunnel arrives from loopback: every visitor is still remote
    loop = SimpleNamespace(client=SimpleNamespace(host="127.0.0.1"))
    out = json.loads(fns["predict"](json.dumps({"hardware": "this machine", "model": "llama 3.1 8b"}), request=loop))
    assert "cannot see your computer" in out["error"]
