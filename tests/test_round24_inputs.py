"""Bad input found by a tester: another program's DuckDB file, an unknown format in diagnose, GPU counts
that are no counts, a model name with an impossible size, an impossible measured decode."""

from __future__ import annotations

import os

import duckdb
import pytest

from advisor import intake, service
from advisor.errors import InputError, KnowledgeStoreError, NotFoundError
from advisor.models import Scenario
from knowledge import catalog
from knowledge.store import Store
from knowledge.storefile import recover


@pytest.fixture(scope="module")
def store() -> Store:
    return Store(":memory:")


@pytest.mark.parametrize("tables", [["x"], ["results", "meta"]])
def test_another_programs_duckdb_file_is_refused_and_left_unchanged(tmp_path, tables):
    path = str(tmp_path / "theirs.duckdb")
    con = duckdb.connect(path)
    for t in tables:
        con.execute(f"CREATE TABLE {t} (a INTEGER)")
        con.execute(f"INSERT INTO {t} VALUES (1)")
    con.close()
    before = (os.path.getsize(path), open(path, "rb").read())
    with pytest.raises(KnowledgeStoreError, match="DuckDB database of another program.*nothing was written"):
        Store(path)
    assert (os.path.getsize(path), open(path, "rb").read()) == before
    with pytest.raises(KnowledgeStoreError, match="not an advisor knowledge store"):
        recover(path, force=True, try_open=Store)
    assert os.path.exists(path)
    con = duckdb.connect(path, read_only=True)
    assert sorted(r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()) == sorted(tables)
    con.close()


def test_an_empty_duckdb_file_becomes_a_store(tmp_path):
    path = str(tmp_path / "empty.duckdb")
    duckdb.connect(path).close()
    assert Store(path).query("SELECT count(*) AS n FROM results")[0]["n"] > 100


def test_diagnose_refuses_an_unknown_format(store):
    with pytest.raises(InputError, match="weight format 'Q99_K_Z'"):
        service.diagnose_scenario(store, Scenario(hardware="RTX 3060", model="llama 3.1 8b", quant="Q99_K_Z",
                                                  measured_decode_tps=50))


@pytest.mark.parametrize("text, why", [
    ("1.5x RTX 4090", "'1.5x' is not a number of GPUs"),
    ("-2x RTX 4090", "'-2x' is not a number of GPUs"),
    ("0x RTX 4090", "'0x' is not a number of GPUs"),
    ("100x RTX 4090", "100 GPUs in one machine"),
    ("9999x H100", "9,999 GPUs in one machine"),
])
def test_a_count_that_is_no_gpu_count_is_refused(store, text, why):
    with pytest.raises(NotFoundError, match=why):
        catalog.resolve_hardware(store, text)


@pytest.mark.parametrize("text, n", [("2x RTX 4090", 2), ("4xRTX4090", 4), ("8x H100", 8), ("16x H100", 16),
                                      ("2x3090", 2), ("AMD Radeon RX 7900 XT (19.98 GB reported)", 1),
                                      ("RX 7900 XTX", 1), ("2x RX 7900 XTX", 2), ("RTX 5090 x2", 2)])
def test_real_counts_still_count(store, text, n):
    assert catalog.resolve_hardware(store, text).value.n_devices == n


def test_the_chat_says_why_it_ignored_a_count(store):
    ext = intake.extract("1.5x RTX 4090 with llama 3.1 8b", store)
    assert ext.hardware is None and any("'1.5x' is not a number of GPUs" in x for x in ext.not_understood)


def test_a_model_name_with_an_impossible_size_is_refused(store):
    with pytest.raises(NotFoundError, match="99,999,999B parameters, more than any model"):
        catalog.resolve_model(store, "foo-99999999b")
    assert catalog.resolve_model(store, "foo-1000b").value.params_b == 1000  # a 1T model is possible


def test_scenario_and_chat_share_the_size_limit():
    from advisor.intake import _names
    from advisor.models import MAX_PARAMS_B

    assert _names.MAX_PARAMS_B is MAX_PARAMS_B or _names.MAX_PARAMS_B == MAX_PARAMS_B == 10_000
    with pytest.raises(ValueError):
        Scenario(params_b=20_000)


def test_a_prompt_longer_than_the_models_context_is_said(store):
    p = service.predict_scenario(store, Scenario(hardware="RTX 4090", model="llama 2 7b", prompt_tokens=100_000))
    assert any("100,300 tokens of context" in a and "(4,096)" in a for a in p.assumptions)
    ok = service.predict_scenario(store, Scenario(hardware="RTX 4090", model="llama 2 7b", prompt_tokens=2000))
    assert not any("was trained for" in a for a in ok.assumptions)


def test_an_impossible_rate_among_several_users_is_refused_too(store):
    with pytest.raises(InputError, match="99,999 tok/s"):
        service.diagnose_scenario(store, Scenario(hardware="RTX 3060", model="llama 3.1 8b", concurrency=2,
                                                  measured_decode_tps=99999))
    v = service.diagnose_scenario(store, Scenario(hardware="RTX 3060", model="llama 3.1 8b", backend="vllm",
                                                  measured_decode_tps=9000))  # a server's total: judged, not refused
    assert v.status


def test_a_pipe_closed_early_is_not_a_bug(tmp_path):
    """`advisor compare | head`: the reader goes away before the table is written."""
    import subprocess
    import sys

    proc = subprocess.Popen([sys.executable, "-m", "advisor", "compare", "--model", "llama 3.1 8b", "--concurrency", "2"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env={**os.environ, "ADVISOR_STORE": str(tmp_path / "s.duckdb")})
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # nobody reads: the first write fails with EPIPE
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 0, err
    assert "bug" not in err and "Traceback" not in err


def test_the_chat_leaves_an_impossible_rate_out_and_answers_the_rest(store):
    r = service.ask(store, "RTX 3060 12GB with llama 3.1 8b Q4_K_M on llama.cpp")
    r = service.ask(store, "I get 99999 tok/s", r.facts)
    assert r.reply.startswith("**A measured decode of 99,999 tok/s is")
    assert r.facts.measured_decode_tps is None and r.verdict is not None and r.verdict.status == "not_measured"
    assert "Tell me the hardware and the model" not in r.reply


def test_a_negative_model_size_is_refused(store):
    ext = intake.extract("llama.cpp with a -5B model", store)
    assert ext.params_b is None and "A model of -5B parameters is not possible; I ignored it." in ext.not_understood
    assert intake.extract("qwen-7b on a 4090", store).model == "qwen-7b"  # a hyphen inside a name is no sign
