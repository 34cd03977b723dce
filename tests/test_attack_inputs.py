"""Attack (round 2): hostile or careless input at every edge — JSON booleans where numbers go, input files
from spreadsheets and Windows shells, odd store paths, wrong flags under --json, slow HTTP bodies."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from advisor.cli import app
from advisor.errors import InputError
from advisor.models import parse_scenario
from knowledge.store import Store

RTX = {"hardware": "RTX 4090", "model": "llama 3.1 8b", "quant": "Q4_K_M"}
BENCH = ("| model | size | params | backend | ngl | test | t/s |\n| --- | ---: | ---: | --- | --: | ---: | ---: |\n"
         "| llama 7B Q4_0 | 3.56 GiB | 6.74 B | Metal | 99 | pp512 | 1000.5 ± 2.1 |\n"
         "| llama 7B Q4_0 | 3.56 GiB | 6.74 B | Metal | 99 | tg128 | 60.2 ± 0.3 |\n")


@pytest.fixture(scope="module")
def shared_store(tmp_path_factory) -> str:
    """One store for the module: building and seeding a store file takes about a second."""
    path = str(tmp_path_factory.mktemp("attack2") / "s.duckdb")
    Store(path)
    return path


@pytest.fixture(autouse=True)
def _use_shared(shared_store, monkeypatch) -> None:
    monkeypatch.setenv("ADVISOR_STORE", shared_store)


def _run(args: list[str], tmp_path: Path, **kw):
    return CliRunner().invoke(app, args, **kw)  # the store is ADVISOR_STORE (the module's shared one)


def _lines(out: str) -> list[dict]:
    return [json.loads(ln) for ln in out.splitlines() if ln.strip()]


# ----------------------------------------------------------------- booleans are not numbers
@pytest.mark.parametrize("key", ["gen_tokens", "prompt_tokens", "depth", "concurrency", "memory_gb", "params_b",
                                 "bandwidth_gbs", "measured_decode_tps", "n_gpu_layers", "gpu_count"])
@pytest.mark.parametrize("value", [True, False])
def test_json_boolean_where_a_number_goes_is_refused(key: str, value: bool) -> None:
    with pytest.raises(InputError) as e:
        parse_scenario({**RTX, key: value})
    assert key in str(e.value) and json.dumps(value) in str(e.value)


def test_boolean_inside_a_range_is_refused_and_flags_stay_booleans() -> None:
    with pytest.raises(InputError, match="prompt_range"):
        parse_scenario({"prompt_range": [True, 5000]})
    sc = parse_scenario({**RTX, "hardware_measured": True, "measured_is_aggregate": False, "gen_tokens": 200})
    assert sc.hardware_measured is True and sc.measured_is_aggregate is False and sc.gen_tokens == 200


def test_api_predict_refuses_true_as_a_token_count(tmp_path) -> None:
    from ui.api import api_diagnose, api_predict

    store = Store(os.environ["ADVISOR_STORE"])
    for fn in (api_predict, api_diagnose):
        out = json.loads(fn(store, json.dumps({**RTX, "gen_tokens": True})))
        assert "gen_tokens" in out["error"] and "true" in out["error"]


def test_api_takes_the_object_itself_as_well_as_its_json_text(tmp_path) -> None:
    from ui.api import api_ask, api_import, api_predict

    store = Store(os.environ["ADVISOR_STORE"])
    as_text = json.loads(api_predict(store, json.dumps({**RTX, "prompt_tokens": 2000})))
    as_obj = json.loads(api_predict(store, {**RTX, "prompt_tokens": 2000}))  # type: ignore[arg-type]
    assert as_obj["prefill_tps"] == pytest.approx(as_text["prefill_tps"]) and as_obj["prompt_tokens"] == 2000
    for bad in (123, [1, 2], True):
        out = json.loads(api_predict(store, bad))  # type: ignore[arg-type]
        assert out["error"].startswith("Send the scenario as a JSON object") and json.dumps(bad) in out["error"]
    assert "text" in json.loads(api_import(store, 42))["error"]  # type: ignore[arg-type]
    reply, verdict, facts = api_ask(store, {"x": 1})  # type: ignore[arg-type]
    assert reply.startswith("Send your message as text") and verdict == "null" and json.loads(facts)["model"] is None


def test_predict_rows_refuse_true_in_json_lines(tmp_path) -> None:
    f = tmp_path / "rows.jsonl"
    f.write_text(json.dumps({**RTX, "gen_tokens": True}) + "\n" + json.dumps({**RTX, "batch": True}) + "\n")
    r = _run(["predict", "--input", str(f), "--json"], tmp_path)
    rows = _lines(r.output)
    assert "gen_tokens" in rows[0]["error"] and "batch" in rows[1]["error"]
    assert r.exit_code == 2  # no row could be predicted


# ----------------------------------------------------------------- input files as people make them
@pytest.fixture(scope="module")
def clean_prediction(shared_store, tmp_path_factory) -> dict:
    f = tmp_path_factory.mktemp("clean") / "clean.csv"
    f.write_text("hardware,model,quant,prompt_tokens,gen_tokens\nRTX 4090,llama 3.1 8b,Q4_K_M,2000,100\n")
    r = CliRunner().invoke(app, ["predict", "--input", str(f), "--json", "--store", shared_store])
    assert r.exit_code == 0, r.output
    return _lines(r.output)[0]


@pytest.mark.parametrize("name,data", [
    ("excel-utf8.csv", "\ufeffhardware,model,quant,prompt_tokens,gen_tokens\nRTX 4090,llama 3.1 8b,Q4_K_M,2000,100\n"
     .encode("utf-8")),
    ("powershell.csv", "hardware,model,quant,prompt_tokens,gen_tokens\r\nRTX 4090,llama 3.1 8b,Q4_K_M,2000,100\r\n"
     .encode("utf-16")),
    ("europe.csv", b"hardware;model;quant;prompt_tokens;gen_tokens\nRTX 4090;llama 3.1 8b;Q4_K_M;2000;100\n"),
    ("tabs.tsv", b"hardware\tmodel\tquant\tprompt_tokens\tgen_tokens\nRTX 4090\tllama 3.1 8b\tQ4_K_M\t2000\t100\n"),
    ("headers.csv", b"Hardware,Model,Quant,Prompt Tokens,gen-tokens\nRTX 4090,llama 3.1 8b,Q4_K_M,2000,100\n"),
    ("pandas.csv", b"hardware,model,quant,prompt_tokens,gen_tokens\nRTX 4090,llama 3.1 8b,Q4_K_M,2000.0,100.0\n"),
    ("blank-lines.csv", b"\nhardware,model,quant,prompt_tokens,gen_tokens\n\nRTX 4090,llama 3.1 8b,Q4_K_M,2000,100\n\n"),
    ("bom.jsonl", ("\ufeff" + json.dumps({**RTX, "prompt_tokens": 2000, "gen_tokens": 100}) + "\n").encode()),
    ("pretty.json", json.dumps({**RTX, "prompt_tokens": 2000, "gen_tokens": 100}, indent=2).encode()),
    ("array.json", json.dumps([{**RTX, "prompt_tokens": 2000, "gen_tokens": 100}]).encode()),
])
def test_input_tables_from_spreadsheets_and_shells_predict_the_same(tmp_path, clean_prediction, name: str,
                                                                   data: bytes) -> None:
    want = clean_prediction
    f = tmp_path / name
    f.write_bytes(data)
    r = _run(["predict", "--input", str(f), "--json"], tmp_path)
    assert r.exit_code == 0, r.output
    got = _lines(r.output)
    assert len(got) == 1 and "error" not in got[0], got
    assert got[0]["prompt_tokens"] == 2000 and got[0]["prefill_tps"] == pytest.approx(want["prefill_tps"])
    assert got[0]["decode_tps"] == pytest.approx(want["decode_tps"])


def test_row_with_more_values_than_columns_is_named(tmp_path) -> None:
    f = tmp_path / "rows.csv"
    f.write_text("hardware,model\nRTX 4090,llama 3.1 8b,Q4_K_M\nRTX 4090,llama 3.1 8b\n")
    r = _run(["predict", "--input", str(f), "--json"], tmp_path)
    rows = _lines(r.output)
    assert "3 values but the header names 2 columns" in rows[0]["error"] and "None" not in rows[0]["error"]
    assert rows[1]["row"] == 2 and rows[1]["decode_tps"] > 0 and r.exit_code == 0  # the good row still runs


def test_diagnose_reads_a_scenario_saved_with_a_bom(tmp_path) -> None:
    f = tmp_path / "scenario.json"
    f.write_bytes(("\ufeff" + json.dumps({**RTX, "measured_decode_tps": 120})).encode())
    r = _run(["diagnose", "--input", str(f), "--json"], tmp_path)
    assert r.exit_code == 0, r.output
    assert json.loads(r.output)["bottleneck"] == "decode"


def test_import_reads_output_saved_by_powershell(tmp_path) -> None:
    f = tmp_path / "bench.txt"
    f.write_bytes(BENCH.encode("utf-16"))  # PowerShell's `llama-bench > bench.txt`: UTF-16 with a BOM
    r = _run(["import", str(f), "--no-save", "--json"], tmp_path)
    assert r.exit_code == 0, r.output
    ms = json.loads(r.output)["measurements"]
    assert [m["prefill_tps"] for m in ms if m["prefill_tps"]] == [1000.5]
    assert [m["decode_tps"] for m in ms if m["decode_tps"]] == [60.2]


def test_import_keeps_a_stray_windows_byte_but_refuses_a_binary_file(tmp_path) -> None:
    f = tmp_path / "cp1252.txt"
    f.write_bytes(BENCH.replace("±", "\xb1").encode("latin-1"))  # "±" as one cp1252 byte, not UTF-8
    r = _run(["import", str(f), "--no-save", "--json"], tmp_path)
    assert r.exit_code == 0 and len(json.loads(r.output)["measurements"]) == 2, r.output
    b = tmp_path / "model.gguf"
    b.write_bytes(b"GGUF\x03\x00\x00\x00" + bytes(range(256)) * 40)
    for args, kw in ((["import", str(b), "--json"], {}), (["import", "-", "--json"], {"input": b.read_bytes()})):
        r = _run(args, tmp_path, **kw)
        assert r.exit_code == 2 and "not UTF-8 text" in json.loads(r.output)["error"]


# ----------------------------------------------------------------- --json: one object, also on errors
@pytest.mark.parametrize("args,needle", [
    (["predict", "--concurrency", "abc", "--json"], "--concurrency"),
    (["predict", "--bogus", "--json"], "--bogus"),
    (["diagnose", "--gen-tokens", "1.5", "--json"], "--gen-tokens"),
    (["import", "--json"], "file"),
    (["db", "stats", "--nope", "--json"], "--nope"),
    (["db", "nosuch", "--json"], "nosuch"),
    (["predict", "--depth", "-1", "--json"], "--depth"),
])
def test_usage_errors_under_json_are_one_json_object(tmp_path, args: list[str], needle: str) -> None:
    r = CliRunner().invoke(app, args)
    assert r.exit_code == 2
    out = json.loads(r.stdout)  # exactly one JSON document, nothing else on stdout
    assert set(out) == {"error"} and needle in out["error"] and "Traceback" not in r.output


def test_a_bug_is_one_line_never_a_traceback(tmp_path, monkeypatch) -> None:
    from advisor import service

    def boom(*a, **k):
        raise KeyError("x")

    monkeypatch.setattr(service, "predict_scenario", boom)
    r = _run(["predict", "--hardware", "RTX 4090", "--model", "llama 3.1 8b", "--json"], tmp_path)
    assert r.exit_code == 1 and "KeyError" in json.loads(r.stdout)["error"] and "Traceback" not in r.output
    r = _run(["predict", "--hardware", "RTX 4090", "--model", "llama 3.1 8b"], tmp_path)
    assert r.exit_code == 1 and len(r.output.strip().splitlines()) == 1 and "this is a bug" in r.output


# ----------------------------------------------------------------- odd store paths say what is wrong
def test_store_paths_that_are_not_stores_say_what_they_are(tmp_path) -> None:
    empty = tmp_path / "empty.duckdb"
    empty.write_bytes(b"")
    r = CliRunner().invoke(app, ["db", "stats", "--store", str(empty), "--json"])
    assert r.exit_code == 2 and "empty file (0 bytes)" in json.loads(r.output)["error"]
    folder = tmp_path / "folder"
    folder.mkdir()
    r = CliRunner().invoke(app, ["predict", "--hardware", "RTX 4090", "--model", "llama 3.1 8b", "--store",
                                 str(folder), "--json"])
    err = json.loads(r.output)["error"]
    assert r.exit_code == 2 and "not a store" in err and str(folder / "store.duckdb") in err
    assert list(folder.iterdir()) == []  # nothing was written there


@pytest.mark.skipif(not os.path.exists("/proc/self/mem"), reason="no /proc")
def test_proc_file_as_store_is_not_called_damaged() -> None:
    r = CliRunner().invoke(app, ["db", "stats", "--store", "/proc/self/mem", "--json"])
    err = json.loads(r.output)["error"]
    assert r.exit_code == 2 and "operating system" in err and "damaged" not in err and "recover" not in err


def test_db_export_and_import_on_wrong_paths(tmp_path) -> None:
    f = tmp_path / "a-file"
    f.write_text("x")
    r = _run(["db", "export", str(f), "--json"], tmp_path)
    assert r.exit_code == 2 and "is a file, not a folder" in json.loads(r.output)["error"] and f.read_text() == "x"
    r = _run(["db", "import", str(tmp_path / "missing"), "--json"], tmp_path)
    assert r.exit_code == 2 and "no such file or folder" in json.loads(r.output)["error"]
    r = _run(["db", "export", "/proc/no-such-dir/x", "--json"], tmp_path)
    assert r.exit_code == 2 and "Errno" not in json.loads(r.output)["error"]


# ----------------------------------------------------------------- HTTP: a body trickled in too slowly
def test_slow_body_is_cut_off_but_a_finished_request_may_wait() -> None:
    from ui.bodycap import BodyCap

    seen: list[str] = []

    async def slow_receive():
        await asyncio.sleep(60)  # a client that announced a body and never sends it
        return {"type": "http.request", "body": b"", "more_body": False}

    async def inner(scope, rcv, snd):
        seen.append((await rcv())["type"])

    async def main() -> float:
        loop = asyncio.get_running_loop()
        t = loop.time()
        await BodyCap(inner, timeout_s=0.2)({"type": "http", "path": "/gradio_api/call/predict",
                                             "headers": [(b"content-length", b"1000")]}, slow_receive, None)
        return loop.time() - t

    assert asyncio.run(main()) < 5 and seen == ["http.disconnect"]

    msgs = [{"type": "http.request", "body": b"{}", "more_body": False}]

    async def done_receive():
        if msgs:
            return msgs.pop(0)
        await asyncio.sleep(0.5)  # a streamed answer: waits for the client to go, past the body deadline
        return {"type": "http.disconnect", "late": True}

    got: list[dict] = []

    async def streaming(scope, rcv, snd):
        got.append(await rcv())
        got.append(await rcv())

    asyncio.run(BodyCap(streaming, timeout_s=0.1)({"type": "http", "path": "/x", "headers": []}, done_receive, None))
    assert got[0]["body"] == b"{}" and got[1].get("late") is True


# ----------------------------------------------------------------- no traceback on the terminal
def test_a_model_of_size_zero_is_unknown_not_a_crash(tmp_path) -> None:
    r = _run(["predict", "--hardware", "RTX 4090", "--model", "llama 3 0b", "--json"], tmp_path)
    assert r.exit_code == 2 and "don't know the model" in json.loads(r.output)["error"]


def test_logged_exceptions_are_one_line_unless_debug() -> None:
    import logging

    from advisor.cli import _LogLine

    try:
        raise ZeroDivisionError("x")
    except ZeroDivisionError:
        import sys

        rec = logging.LogRecord("advisor.t", logging.ERROR, __file__, 1, "step %s failed", ("a",), sys.exc_info())
    quiet = _LogLine("%(name)s %(message)s", tracebacks=False).format(rec)
    assert quiet == "advisor.t step a failed (ZeroDivisionError; ADVISOR_LOG=DEBUG shows the traceback)"
    assert "Traceback" in _LogLine("%(message)s", tracebacks=True).format(rec)


@pytest.mark.parametrize("name", [" ", "\t", " + ", "-", "\u200b"])
def test_a_name_without_letters_or_digits_is_not_given(name: str) -> None:
    sc = parse_scenario({"hardware": name, "model": name, "quant": name, "backend": name})
    assert (sc.hardware, sc.model, sc.quant, sc.backend) == (None, None, None, None)


def test_blank_hardware_asks_for_the_hardware_instead_of_crashing(tmp_path) -> None:
    r = _run(["predict", "--hardware", " + ", "--model", "llama 3.1 8b", "--json"], tmp_path)
    assert r.exit_code == 2 and json.loads(r.output)["error"].startswith("Which hardware?")


def test_offloaded_model_on_hardware_of_unknown_memory_gets_a_verdict(tmp_path) -> None:
    f = tmp_path / "s.json"
    f.write_text(json.dumps({"model": "llama 3.1 8b", "bandwidth_gbs": 500, "tflops": 50, "gpu_fraction": 0.5}))
    r = _run(["diagnose", "--input", str(f), "--json"], tmp_path)
    assert r.exit_code == 0, r.output
    assert json.loads(r.output)["bottleneck"] == "memory_fit"  # half the layers off the GPU: it does not fit


@pytest.mark.parametrize("flag,value", [("--server-budget", "nan"), ("--server-budget", "inf"),
                                        ("--server-budget", "-1"), ("--server-streams", "-5")])
def test_server_probe_numbers_are_checked_before_any_connection(tmp_path, flag: str, value: str) -> None:
    r = _run(["probe", "--server", "http://127.0.0.1:9", flag, value, "--json"], tmp_path)
    err = json.loads(r.output)["error"]
    assert r.exit_code == 2 and flag in err and "listening" not in err


def test_api_import_says_when_a_long_paste_was_cut() -> None:
    from ui.api import MAX_MESSAGE_CHARS, api_import

    store = Store(os.environ["ADVISOR_STORE"])
    text = BENCH + "\n" + "x" * (MAX_MESSAGE_CHARS * 2)
    out = json.loads(api_import(store, text, ""))
    assert [m["prefill_tps"] for m in out["measurements"] if m["prefill_tps"]] == [1000.5]
    assert any(f"{len(text):,} characters" in w for w in out["warnings"])
    short = json.loads(api_import(store, BENCH, ""))
    assert not any("characters were read" in w for w in short["warnings"])


def test_fullwidth_and_web_copied_names_predict_like_plain_ones(tmp_path) -> None:
    from advisor import service

    store = Store(os.environ["ADVISOR_STORE"])
    plain = service.predict_scenario(store, parse_scenario(RTX))
    for hw, model, quant in (("ＲＴＸ ４０９０", "ｌｌａｍａ ３.１ ８ｂ", "Ｑ４_Ｋ_Ｍ"),
                             ("RTX\u00a04090", "llama\u00a03.1\u00a08b", "Q4_K_M"),
                             ("RTX 4090\u200b", "llama 3.1 8b\ufeff", "Q4_K_M")):
        p = service.predict_scenario(store, parse_scenario({"hardware": hw, "model": model, "quant": quant}))
        assert p.decode_tps == pytest.approx(plain.decode_tps) and p.quant == "Q4_K_M"


@pytest.mark.parametrize("data,needle", [
    ({"prompt_range": "9" * 400 + " 5"}, "prompt_range"),
    ({"prompt_range": "5 " + "9" * 400}, "prompt_range"),
    ({"prompt_tokens": 10**400}, "about 1e400"),
    ({"gen_tokens": -(10**30)}, "about -1e30"),
])
def test_giant_numbers_are_refused_in_one_short_line(data: dict, needle: str) -> None:
    from pydantic import ValidationError

    with pytest.raises(ValidationError) as e:
        parse_scenario(data)
    msg = e.value.errors()[0]["msg"]
    assert needle in msg and len(msg) < 200
