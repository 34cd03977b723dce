"""The knowledge store: schema, provenance, migrations, crashes, two processes, pooling."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import duckdb
import pytest

from advisor.errors import KnowledgeStoreError, StoreVersionError
from knowledge.store import Store

ROOT = Path(__file__).resolve().parents[1]


def test_seed_keeps_sources_and_counts(store):
    s = store.stats()
    assert s["tables"]["hardware"] > 1000 and s["tables"]["results"] == 1504  # curated + spec database
    assert store.query("SELECT count(*) AS n FROM results WHERE source_url IS NULL OR source_url = ''")[0]["n"] == 0
    assert store.query("SELECT count(*) AS n FROM hardware WHERE source_url = ''")[0]["n"] == 0


def test_multi_gpu_and_family_rows_are_modelled(store):
    r = store.query("SELECT n_devices, base_hw_id, hw_level FROM results WHERE hw_id = 'nvidia-rtx-3090x4' LIMIT 1")[0]
    assert r == {"n_devices": 4, "base_hw_id": "nvidia-rtx-3090", "hw_level": "sku"}
    fam = store.query("SELECT hw_level FROM results WHERE hw_id = 'apple-m1-max' LIMIT 1")[0]
    assert fam["hw_level"] == "family"
    depth = store.query("SELECT count(*) AS n FROM results WHERE depth > 0")[0]["n"]
    assert depth == 292  # results.csv 176 + results_more.csv 116 (6 leaderboard rows ran at the -d of their command)


def test_estimates_are_labelled(store):
    kinds = dict((r["hw_id"], r["fp16_tflops_kind"]) for r in store.query("SELECT hw_id, fp16_tflops_kind FROM hardware"))
    assert kinds["apple-m2-max-38gpu"] == "estimate" and kinds["nvidia-rtx-4090"] == "spec"
    q = store.query("SELECT value_kind FROM quant_formats WHERE format = 'Q3_K_M'")[0]
    assert q["value_kind"] == "estimate"


def test_migrations_table_and_schema(tmp_path):
    p = tmp_path / "s.duckdb"
    Store(str(p))
    con = duckdb.connect(str(p), read_only=True)
    names = [r[0] for r in con.execute("SELECT name FROM schema_migrations").fetchall()]
    cols = {r[0] for r in con.execute("DESCRIBE results").fetchall()}
    con.close()
    assert names == ["m001_initial", "m002_probe_origin"]
    assert {"source_url", "source_set", "value_kind", "origin", "n_devices", "depth", "batch"} <= cols


def test_newer_store_is_refused(tmp_path):
    p = tmp_path / "s.duckdb"
    Store(str(p))
    con = duckdb.connect(str(p))
    con.execute("INSERT INTO schema_migrations (name) VALUES ('m999_from_the_future')")
    con.close()
    with pytest.raises(StoreVersionError, match="newer version"):
        Store(str(p))


def test_corrupt_file_names_file_and_recovery(tmp_path):
    p = tmp_path / "broken.duckdb"
    p.write_bytes(b"this is not a duckdb file" * 1000)
    with pytest.raises(KnowledgeStoreError) as e:
        Store(str(p))
    assert str(p) in str(e.value) and "not a DuckDB" in str(e.value)
    with pytest.raises(KnowledgeStoreError, match="not a DuckDB store"):  # issue 17: only stores are moved
        Store.recover(str(p))
    assert p.exists()
    p.write_bytes(b"\0" * 8 + b"DUCK" + b"\xff" * 20000)  # a DuckDB header over a damaged body
    with pytest.raises(KnowledgeStoreError) as e:
        Store(str(p))
    assert "recover" in str(e.value)
    moved = Store.recover(str(p))
    assert Path(moved).exists() and not p.exists()
    assert Store(str(p)).stats()["tables"]["results"] == 1504


def _save_one(st: Store, i: int) -> str:
    return st.save_import(fmt="test", raw_text=f"run {i}", hardware="RTX 4090", hw_id="nvidia-rtx-4090",
                          measurements=[{"decode_tps": 100 + i, "gen_tokens": 128, "model": "llama-3.1-8b",
                                         "quant": "Q4_K_M"}])


def test_save_import_is_idempotent_and_exported(tmp_path):
    a = Store(str(tmp_path / "a.duckdb"))
    iid = _save_one(a, 1)
    assert _save_one(a, 1) == iid
    assert a.stats()["results_by_origin"]["import"] == 1
    files = a.export(tmp_path / "exp")
    assert any(f.endswith("results.parquet") for f in files)
    b = Store(str(tmp_path / "b.duckdb"))
    assert b.import_pooled(tmp_path / "exp") == {"results": 1, "probes": 0, "imports": 1}
    assert b.import_pooled(tmp_path / "exp") == {"results": 0, "probes": 0, "imports": 0}
    shared = Store(str(tmp_path / "exp"))  # a Parquet folder, attached read-only
    assert shared.read_only and shared.stats()["tables"]["imports"] == 1
    with pytest.raises(KnowledgeStoreError, match="read-only"):
        _save_one(shared, 2)


WRITER = textwrap.dedent(
    """
    import sys
    sys.path.insert(0, {root!r})
    from knowledge.store import Store
    st = Store({path!r})
    for i in range(10_000):
        iid = st.save_import(fmt="test", raw_text=f"run {{i}}", hardware="RTX 4090", hw_id="nvidia-rtx-4090",
                             measurements=[{{"decode_tps": 100 + i, "model": "m"}}, {{"prefill_tps": 1000 + i, "model": "m"}}])
        print(iid, flush=True)
    """
)


def test_kill_9_during_writes_loses_nothing_reported(tmp_path):
    path = str(tmp_path / "k.duckdb")
    Store(path)
    proc = subprocess.Popen([sys.executable, "-c", WRITER.format(root=str(ROOT), path=path)], stdout=subprocess.PIPE,
                            text=True)
    reported = []
    deadline = time.time() + 60
    while len(reported) < 15 and time.time() < deadline:
        line = proc.stdout.readline()  # type: ignore[union-attr]
        if line:
            reported.append(line.strip())
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    st = Store(path)
    ids = {r["import_id"] for r in st.query("SELECT import_id FROM imports")}
    assert set(reported) <= ids
    # No half-written import: every stored import has both of its result rows.
    counts = st.query("SELECT i.import_id, count(r.result_id) AS n FROM imports i LEFT JOIN results r "
                      "ON r.parent_id = i.import_id GROUP BY 1")
    assert counts and all(c["n"] == 2 for c in counts)


def test_two_processes_at_once(tmp_path):
    path = str(tmp_path / "two.duckdb")
    Store(path)
    env = {**os.environ, "ADVISOR_STORE": path, "PYTHONPATH": str(ROOT)}
    writer = subprocess.Popen([sys.executable, "-c", WRITER.format(root=str(ROOT), path=path)],
                              stdout=subprocess.DEVNULL, env=env)
    try:
        time.sleep(1.0)
        for _ in range(3):
            out = subprocess.run([sys.executable, "-m", "advisor.cli", "predict", "--hardware", "RTX 4090", "--model",
                                  "llama 3.1 8b", "--json"], capture_output=True, text=True, env=env, timeout=120)
            assert out.returncode == 0, out.stderr
            assert '"decode_tps"' in out.stdout
    finally:
        writer.kill()
        writer.wait()


def test_truncated_store_names_file_and_recover_refuses_healthy_store(tmp_path):
    good = tmp_path / "good.duckdb"
    Store(str(good)).close()
    bad = tmp_path / "bad.duckdb"
    bad.write_bytes(good.read_bytes()[:500_000])
    with pytest.raises(KnowledgeStoreError) as e:
        Store(str(bad))
    assert str(bad) in str(e.value) and "advisor db recover" in str(e.value)
    with pytest.raises(KnowledgeStoreError, match="opens fine"):
        Store.recover(str(good))
    with pytest.raises(KnowledgeStoreError, match="not a store file"):
        Store.recover(str(tmp_path))
    assert Path(Store.recover(str(bad))).exists()


def test_long_names_are_bounded_not_stored_whole(store):
    from advisor.service import import_output

    text = "| model | size | params | backend | ngl | test | t/s |\n|---|---|---|---|---|---|---|\n" \
           "| llama 8B Q4_K - Medium | 4.58 GiB | 8.03 B | CUDA | 99 | tg128 | 100.00 ± 0.10 |\n"
    t0 = time.perf_counter()
    out = import_output(store, text, hardware="x" * 1_000_000, save=True)
    assert time.perf_counter() - t0 < 10
    rows = store.query("SELECT max(length(hardware)) AS n FROM imports WHERE import_id = ?", [out.saved_id])
    assert rows[0]["n"] <= 300
