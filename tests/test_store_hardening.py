"""Issue 17: the store under attack and load — recover, population vs own results, pooled data,
the calibration cache, other processes' writes, disk errors."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path

import duckdb
import pytest

from advisor import service
from advisor.errors import KnowledgeStoreError
from advisor.models import Scenario
from knowledge import queries
from knowledge.store import Store

ROOT = Path(__file__).resolve().parents[1]
BENCH = """| model                          |       size |     params | backend    | ngl |          test |                  t/s |
| ------------------------------ | ---------: | ---------: | ---------- | --: | ------------: | -------------------: |
| llama 8B Q4_K - Medium         |   4.58 GiB |     8.03 B | CUDA       |  99 |         pp512 |        {pp:.2f} ± 0.1 |
| llama 8B Q4_K - Medium         |   4.58 GiB |     8.03 B | CUDA       |  99 |         tg128 |         {tg:.2f} ± 0.01 |
"""
RTX_8B = Scenario(hardware="RTX 4090", model="llama 3.1 8b", quant="Q4_K_M")


def _decode(st: Store) -> float:
    return service.predict_scenario(st, RTX_8B).decode_tps


# ------------------------------------------------------------------------------- item 2: recover
def test_recover_refuses_a_text_file_and_leaves_it(tmp_path):
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes, not a store\n" * 100)
    with pytest.raises(KnowledgeStoreError, match="not a DuckDB store"):
        Store.recover(str(notes))
    with pytest.raises(KnowledgeStoreError, match="not a DuckDB store"):
        Store.recover(str(notes), force=True)
    assert notes.read_text().startswith("my notes") and list(tmp_path.iterdir()) == [notes]


def test_recover_refuses_another_projects_duckdb_even_with_force(tmp_path):
    other = tmp_path / "analytics.duckdb"
    con = duckdb.connect(str(other))
    con.execute("CREATE TABLE sales (id INTEGER)")
    con.close()
    with pytest.raises(KnowledgeStoreError, match="not an advisor knowledge store"):
        Store.recover(str(other), force=True)
    assert other.exists()


def test_recover_moves_a_damaged_store_of_this_project(tmp_path):
    good = tmp_path / "good.duckdb"
    Store(str(good)).close()
    bad = tmp_path / "bad.duckdb"
    bad.write_bytes(good.read_bytes()[:300_000])  # truncated: DuckDB header intact, body gone
    moved = Store.recover(str(bad))
    assert Path(moved).exists() and not bad.exists()
    with pytest.raises(KnowledgeStoreError, match="opens fine"):
        Store.recover(str(good))
    assert Path(Store.recover(str(good), force=True)).exists()


def test_cli_recover_of_a_text_file_is_one_clear_line(tmp_path):
    notes = tmp_path / "notes.txt"
    notes.write_text("hello")
    r = subprocess.run([sys.executable, "-m", "advisor", "db", "recover", "--store", str(notes)],
                       capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert r.returncode == 2 and "not a DuckDB store" in r.stderr and "Traceback" not in r.stderr
    assert notes.read_text() == "hello"


# ------------------------------------------------------------------ item 3: population vs own rows
def test_made_up_imports_do_not_move_everyones_prediction():
    st = Store(":memory:")
    before = _decode(st)
    assert 100 < before < 140  # RTX 4090 + Llama 3.1 8B Q4_K_M decodes at ~120 tok/s
    for i in range(6):
        out = service.import_output(st, BENCH.format(pp=50 + i, tg=3 + i / 10), hardware="RTX 4090")
        assert out.saved_id
    assert _decode(st) == pytest.approx(before, rel=1e-9)
    own = queries.machine_results(st, "nvidia-rtx-4090")
    assert len(own) == 12 and {r["origin"] for r in own} == {"import"}  # kept as that machine's own rows
    assert not any(r["origin"] == "import" for r in queries.population_calibration_set(st))


def test_pooled_rows_feed_the_population_and_seed_case_tricks_do_not(tmp_path):
    a = Store(str(tmp_path / "a.duckdb"))
    service.import_output(a, BENCH.format(pp=5000, tg=110), hardware="RTX 4090")
    a.export(tmp_path / "exp")
    con = duckdb.connect()
    con.execute(f"CREATE TABLE r AS SELECT * FROM read_parquet('{tmp_path / 'exp' / 'results.parquet'}')")
    con.execute("UPDATE r SET origin = 'SEED', result_id = result_id || 'x' WHERE origin = 'import'")
    con.execute(f"INSERT INTO r SELECT * FROM read_parquet('{tmp_path / 'exp' / 'results.parquet'}') "
                "WHERE origin = 'import'")
    con.execute(f"COPY r TO '{tmp_path / 'tricked.parquet'}' (FORMAT parquet)")
    con.close()
    b = Store(str(tmp_path / "b.duckdb"))
    added = b.import_pooled(tmp_path / "tricked.parquet")
    assert added["results"] == 2 and added["results_refused"] == 2  # 'SEED' refused, real rows pooled
    origins = {r["origin"] for r in b.query("SELECT origin FROM results")}
    assert origins == {"seed", "pooled"}
    pop = queries.population_calibration_set(b)
    assert sum(r["origin"] == "pooled" for r in pop) == 2


# ------------------------------------------------------------------------ item 6: pooled validation
def _write_parquet(path: Path, sql: str) -> Path:
    con = duckdb.connect()
    con.execute(f"COPY ({sql}) TO '{path}' (FORMAT parquet)")
    con.close()
    return path


def _results_sql(rows: list[str]) -> str:
    cols = ("result_id, origin, hardware, hw_id, base_hw_id, model, quant, prompt_tokens, gen_tokens, "
            "prefill_tps, decode_tps, value_kind, source_url, notes")
    return f"SELECT * FROM (VALUES {', '.join(rows)}) t({cols})"


def test_pooled_import_refuses_nan_inf_case_tricks_and_huge_strings(tmp_path):
    good = ("('g1', 'import', 'RTX 4090', 'nvidia-rtx-4090', 'nvidia-rtx-4090', 'llama-3.1-8b', 'Q4_K_M', 512, 128,"
            " 5000.0, 110.0, 'measured', 'import:x', 'ok')")
    bad = [
        good.replace("'g1'", "'b1'").replace("110.0", "'NaN'::DOUBLE"),
        good.replace("'g1'", "'b2'").replace("5000.0", "'Infinity'::DOUBLE"),
        good.replace("'g1'", "'b3'").replace("'import'", "'SEED'"),
        good.replace("'g1'", "'b4'").replace("'import'", "' seed '"),
        good.replace("'g1'", "'b5'").replace("'ok'", "repeat('x', 20000000)"),
        good.replace("'g1'", "'b6'").replace("110.0", "-5.0"),
        good.replace("'g1'", "'b7'").replace("'measured'", "'made-up'"),
    ]
    f = _write_parquet(tmp_path / "results.parquet", _results_sql([good, *bad]))
    st = Store(str(tmp_path / "s.duckdb"))
    added = st.import_pooled(f)
    assert added == {"results": 1, "results_refused": 7}
    assert st.query("SELECT result_id, origin FROM results WHERE origin <> 'seed'") == [
        {"result_id": "g1", "origin": "pooled"}]


def test_pooled_import_has_a_row_cap(tmp_path):
    from knowledge.pooled import MAX_POOLED_ROWS

    f = _write_parquet(tmp_path / "results.parquet",
                       f"SELECT 'r' || i AS result_id, 'import' AS origin, 1.0 AS decode_tps, 'measured' AS value_kind "
                       f"FROM range({MAX_POOLED_ROWS + 1}) t(i)")
    st = Store(str(tmp_path / "s.duckdb"))
    before = st.stats()["tables"]["results"]
    with pytest.raises(KnowledgeStoreError, match="at most 100,000"):
        st.import_pooled(f)
    assert st.stats()["tables"]["results"] == before  # nothing merged


def test_a_pooled_probe_is_never_this_machine(tmp_path):
    st = Store(str(tmp_path / "s.duckdb"))
    payload = ('{"backend": "numpy", "device": "teammate box", "bandwidth_gbs": 900, "matmul_tflops": 50, '
               '"duration_s": 1}')
    rows = [f"('p{i}', '{when}', 'numpy', 'teammate box', {bw}, 50.0, '{payload}', 'local', '{fp}')"
            for i, (when, bw, fp) in enumerate([("2099-01-01T00:00:00", 1e9, "x"), ("2026-01-01T00:00:00", 900.0, "y")])]
    f = _write_parquet(tmp_path / "probes.parquet",
                       "SELECT * FROM (VALUES " + ", ".join(rows) + ") t(probe_id, created_at, backend, device, "
                       "bandwidth_gbs, matmul_tflops, payload_json, origin, machine_fp)")
    added = st.import_pooled(f)
    assert added == {"probes": 1, "probes_refused": 1}  # 10^9 GB/s dated 2099 refused
    assert queries.latest_probe(st) is None  # the teammate's sound probe is pooled, not "this machine"
    with pytest.raises(Exception, match="No probe of this machine"):
        service.predict_scenario(st, Scenario(hardware="this machine", model="llama 3.1 8b"))


def test_a_probe_made_here_is_this_machine_and_only_here(tmp_path):
    from advisor.models import ProbeResult
    from knowledge.storefile import machine_fingerprint

    st = Store(str(tmp_path / "s.duckdb"))
    st.save_probe(ProbeResult(backend="numpy", device="this box", bandwidth_gbs=80.0, matmul_tflops=1.5, duration_s=3))
    assert queries.latest_probe(st)["device"] == "this box"
    assert queries.latest_probe(st, machine_fp="0" * 16) is None
    assert st.query("SELECT machine_fp FROM probes")[0]["machine_fp"] == machine_fingerprint()


# ---------------------------------------------------------------------------- item 4: the cache
def test_cache_is_single_flight():
    st = Store(":memory:")
    calls = []

    def build():
        calls.append(1)
        time.sleep(0.2)
        return object()

    out = []
    ts = [threading.Thread(target=lambda: out.append(st.cached("k", build))) for _ in range(8)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert len(calls) == 1 and len({id(o) for o in out}) == 1


def test_a_write_during_a_build_leaves_no_stale_cache():
    st = Store(":memory:")
    started, release = threading.Event(), threading.Event()

    def slow():
        started.set()
        release.wait(5)
        return "old"

    t = threading.Thread(target=lambda: st.cached("k", slow))
    t.start()
    started.wait(5)
    st.write(lambda con: con.execute("INSERT INTO meta VALUES ('x', 'y')"))
    release.set()
    t.join()
    assert st.cached("k", lambda: "new") == "new"


def test_own_results_keep_the_population_calibration():
    from advisor.perf import calibration_model

    st = Store(":memory:")
    cal = calibration_model(st)
    service.import_output(st, BENCH.format(pp=50, tg=3), hardware="RTX 4090")
    assert calibration_model(st) is cal  # not refitted for a person's own paste
    st.write(lambda con: con.execute("INSERT INTO meta VALUES ('pooled-ish', '1')"))  # a population write
    assert calibration_model(st) is not cal


def test_import_is_one_bulk_insert(tmp_path):
    st = Store(str(tmp_path / "s.duckdb"))
    ms = [{"decode_tps": 100.0 + i % 50, "gen_tokens": 128, "prompt_tokens": i, "model": "llama-3.1-8b",
           "quant": "Q4_K_M"} for i in range(5000)]
    t0 = time.perf_counter()
    st.save_import(fmt="test", raw_text="bulk", measurements=ms, hardware="RTX 4090", hw_id="nvidia-rtx-4090")
    dt = time.perf_counter() - t0
    assert st.stats()["results_by_origin"]["import"] == 5000
    assert dt < 10  # ~10 ms a row before (50 s for 5,000); one DataFrame insert is well under a second a 1,000


def test_a_32bit_overflow_keeps_the_sound_rows(tmp_path):
    st = Store(str(tmp_path / "s.duckdb"))
    ms = [{"decode_tps": 100.0, "gen_tokens": 128, "model": "llama-3.1-8b", "n_gpu_layers": 2**31},
          {"decode_tps": 101.0, "gen_tokens": 128, "model": "llama-3.1-8b", "n_gpu_layers": 99},
          {"decode_tps": float("nan"), "gen_tokens": 128, "model": "llama-3.1-8b"}]
    st.save_import(fmt="test", raw_text="ovf", measurements=ms, hardware="RTX 4090", hw_id="nvidia-rtx-4090")
    rows = st.query("SELECT decode_tps, n_gpu_layers FROM results WHERE origin = 'import' ORDER BY decode_tps")
    assert rows == [{"decode_tps": 100.0, "n_gpu_layers": None}, {"decode_tps": 101.0, "n_gpu_layers": 99}]


# --------------------------------------------------------------- item 5: other processes' writes
def test_the_app_sees_another_process_write(tmp_path):
    path = tmp_path / "s.duckdb"
    app = Store(str(path))
    n0 = app.stats()["results_by_origin"].get("import", 0)
    code = (f"from knowledge.store import Store; s = Store({str(path)!r}); "
            "s.save_import(fmt='t', raw_text='cli', hardware='RTX 4090', hw_id='nvidia-rtx-4090', "
            "measurements=[{'decode_tps': 99.0, 'gen_tokens': 128, 'model': 'llama-3.1-8b'}])")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT, timeout=120)
    time.sleep(0.6)  # the app looks at the file at most every 0.5 s
    assert app.stats()["results_by_origin"].get("import", 0) == n0 + 1
    # and its own write afterwards keeps the other process's row
    service.import_output(app, BENCH.format(pp=4000, tg=100), hardware="RTX 4090")
    assert Store(str(path)).stats()["results_by_origin"]["import"] == n0 + 3


# ------------------------------------------------------------------------- item 9: disk problems
class _FullDisk:
    """A connection whose writes fail like a full disk and whose rollback then fails too."""

    def __init__(self, con):
        self.con = con

    def execute(self, sql, *a):
        if sql.startswith(("INSERT INTO results", "INSERT INTO imports")):
            raise duckdb.IOException("IO Error: Could not write file \"s.duckdb.wal\": No space left on device")
        if sql == "ROLLBACK":
            raise duckdb.TransactionException("TransactionContext Error: cannot rollback - no transaction is active")
        return self.con.execute(sql, *a)

    def __getattr__(self, name):
        return getattr(self.con, name)


def test_disk_full_shows_the_real_reason(tmp_path, monkeypatch):
    st = Store(str(tmp_path / "s.duckdb"))
    real = st._connect_file
    monkeypatch.setattr(st, "_connect_file", lambda read_only: _FullDisk(real(read_only=read_only)))
    with pytest.raises(KnowledgeStoreError) as e:
        st.save_import(fmt="t", raw_text="x", measurements=[{"decode_tps": 1.0}], hardware="RTX 4090")
    assert "no space left" in str(e.value) and "rollback" not in str(e.value)
    monkeypatch.undo()
    assert st.stats()["results_by_origin"].get("import", 0) == 0  # consistent: nothing half-saved


def test_read_only_disk_is_not_called_damaged(tmp_path, monkeypatch):
    path = tmp_path / "s.duckdb"
    Store(str(path)).close()
    real = duckdb.connect

    def ro(p, *a, **k):
        if str(p) == str(path):
            raise duckdb.IOException(f'IO Error: Cannot open file "{path}": Read-only file system')
        return real(p, *a, **k)

    monkeypatch.setattr(duckdb, "connect", ro)
    with pytest.raises(KnowledgeStoreError) as e:
        Store(str(path))
    assert "read-only" in str(e.value) and "recover" not in str(e.value) and "not damaged" in str(e.value)
    monkeypatch.undo()
    assert path.exists()


def test_pooled_import_caps_the_text_it_would_unpack(tmp_path, monkeypatch):
    """A tiny compressed file of repeated text must not unpack into gigabytes in memory."""
    from knowledge import pooled

    monkeypatch.setattr(pooled, "MAX_POOLED_BYTES", 1_000_000)
    f = _write_parquet(tmp_path / "imports.parquet", "SELECT 'i' || i AS import_id, 'x' AS format, "
                       "repeat('y', 200000) AS raw_text FROM range(10) t(i)")
    assert f.stat().st_size < 100_000  # 2 million characters in a small file
    st = Store(str(tmp_path / "s.duckdb"))
    with pytest.raises(KnowledgeStoreError, match="million characters"):
        st.import_pooled(f)
    assert st.stats()["tables"]["imports"] == 0


def test_a_flood_of_pastes_cannot_fill_the_store(monkeypatch):
    import knowledge.store as store_mod

    monkeypatch.setattr(store_mod, "MAX_OWN_TEXT_CHARS", 50_000)
    st = Store(":memory:")
    st.save_import(fmt="t", raw_text="x" * 30_000, measurements=[{"decode_tps": 1.0}], hardware="RTX 4090")
    with pytest.raises(KnowledgeStoreError, match="not saved"):
        st.save_import(fmt="t", raw_text="y" * 30_000, measurements=[{"decode_tps": 1.0}], hardware="RTX 4090")
    assert st.stats()["tables"]["imports"] == 1


def test_own_results_keep_the_catalog_caches_and_rebuild_own_row_caches():
    from knowledge import catalog

    st = Store(":memory:")
    hws = catalog.all_hardware(st)
    mine = st.cached("own-rows", lambda: object(), scope="all")
    service.import_output(st, BENCH.format(pp=50, tg=3), hardware="RTX 4090")
    assert catalog.all_hardware(st) is hws  # ~100 ms of catalog rebuild per paste before
    assert st.cached("own-rows", lambda: object(), scope="all") is not mine
