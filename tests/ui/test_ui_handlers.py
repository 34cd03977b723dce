"""Handlers are plain functions: test them without a browser or a server."""

from __future__ import annotations

import json

import pytest

from advisor.errors import ProbeError
from advisor.models import Scenario
from ui import api, handlers

BROWSER_HISTORY = [
    {"role": "user", "metadata": None, "content": [{"text": "one", "type": "text"}], "options": None},
    {"role": "assistant", "metadata": None, "content": [{"text": "two", "type": "text"},
                                                          {"text": "three", "type": "text"}], "options": None},
    {"role": "user", "metadata": None,
     "content": [{"type": "file", "file": {"path": "/tmp/x/bench.txt", "orig_name": "bench.txt"}}],
     "options": None},
]
CLIENT_HISTORY = [{"role": "user", "content": "one"}, {"role": "assistant", "content": "two\nthree"}]


def test_normalize_history_browser_shape():
    assert handlers.normalize_history(BROWSER_HISTORY) == [
        {"role": "user", "content": "one"},
        {"role": "assistant", "content": "two\nthree"},
        {"role": "user", "content": "[file: bench.txt]"},
    ]


def test_normalize_history_client_shape():
    assert handlers.normalize_history(CLIENT_HISTORY) == CLIENT_HISTORY


def test_normalize_history_other_shapes():
    import gradio as gr

    assert handlers.normalize_history(None) == []
    assert handlers.normalize_history([["hi", "hello"], ["again", None]]) == [
        {"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"},
        {"role": "user", "content": "again"}]
    msgs = [gr.ChatMessage(role="user", content="a"), gr.ChatMessage(role="assistant", content="b")]
    assert handlers.normalize_history(msgs) == [{"role": "user", "content": "a"},
                                                {"role": "assistant", "content": "b"}]
    assert handlers.normalize_history([{"role": "system", "content": ""}, 42]) == []


def test_facts_rows_and_edit_roundtrip(store):
    facts = Scenario(hardware="MacBook Air M2", memory_gb=16, model="llama 3.1 8b", quant="Q4_K_M",
                     depth=4096).model_dump(mode="json")
    rows = handlers.facts_rows(facts)
    labels = [r[0] for r in rows]
    assert labels[:4] == ["hardware", "memory (GB)", "engine", "model"]
    assert ["memory (GB)", "16"] in rows and ["context already in cache (tokens)", "4096"] in rows
    # Edit the prompt length in the table: the facts follow and a verdict comes back.
    edited = [[k, "8,000" if k == "prompt (tokens)" else v] for k, v in rows]
    new, verdict, note = handlers.facts_edited(store, edited, facts)
    assert new["prompt_tokens"] == 8000 and new["memory_gb"] == 16
    assert verdict is not None and verdict.prediction.prompt_tokens == 8000
    assert "Updated" in note


def test_facts_edit_rejects_bad_values(store):
    facts = {"hardware": "M2"}
    new, verdict, note = handlers.facts_edited(store, [["memory (GB)", "-3"]], facts)
    assert new == facts and verdict is None
    assert "memory_gb" in note and "negative" in note
    new, verdict, note = handlers.facts_edited(store, [["memory (GB)", "lots"]], facts)
    assert new == facts and "memory_gb" in note
    new, verdict, note = handlers.facts_edited(store, [["model", "llama 3.1 8b"]], {})
    assert new["model"] == "llama 3.1 8b" and verdict is None and "hardware" in note


def test_parse_scenario_json_errors():
    assert handlers.parse_scenario_json("") is None
    assert handlers.parse_scenario_json("null") is None
    with pytest.raises(ValueError, match="'junk'"):  # strict at the API edge (issue 12): the unknown key is named
        handlers.parse_scenario_json('{"hardware": "4090", "junk": 1}')
    with pytest.raises(ValueError):
        handlers.parse_scenario_json("{not json")
    with pytest.raises(ValueError):
        handlers.parse_scenario_json("[1, 2]")
    with pytest.raises(ValueError):
        handlers.parse_scenario_json('{"concurrency": 0}')


@pytest.mark.parametrize("payload, needle", [
    ("", "JSON object"),
    ("{oops", "not valid JSON"),
    ('{"hardware": "Cray-9000", "model": "llama 3.1 8b"}', "Cray-9000"),
    ('{"hardware": "RTX 4090", "model": "llama 3.1 8b", "memory_gb": -1}', "memory_gb"),
    ("'; DROP TABLE results; --", "not valid JSON"),
])
def test_api_predict_errors_are_json(store, payload, needle):
    out = json.loads(api.api_predict(store, payload))
    assert needle in out["error"]
    assert "Traceback" not in out["error"]


def test_api_predict_and_diagnose(store):
    sc = json.dumps({"hardware": "RTX 4090", "model": "llama 3.1 8b", "quant": "Q4_K_M",
                     "measured_decode_tps": 60})
    p = json.loads(api.api_predict(store, sc))
    assert p["decode_tps"] > 0 and p["hardware"]["id"]
    v = json.loads(api.api_diagnose(store, sc))
    assert v["bottleneck"] in ("prefill", "decode", "memory_fit", "misconfiguration")
    assert v["prediction"]["decode_tps"] > 0


def test_api_ask_bad_facts_json(store):
    reply, verdict, facts = api.api_ask(store, "hello", "{broken")
    assert "could not read the facts" in reply and verdict == "null"
    assert json.loads(facts)["hardware"] is None


def test_unexpected_errors_are_hidden(store, monkeypatch):
    def boom(*a, **k):
        raise RuntimeError("secret internals /etc/passwd")

    monkeypatch.setattr(handlers.service, "ask", boom)
    monkeypatch.setattr(handlers.service, "predict_scenario", boom)
    reply, verdict, _ = api.api_ask(store, "hi", "")
    assert reply == handlers.GENERIC_ERROR and verdict == "null"
    out = api.api_predict(store, '{"hardware": "4090"}')
    assert "secret" not in out and json.loads(out)["error"] == handlers.GENERIC_ERROR
    view = handlers.chat_turn(store, "hi", [], {})
    assert view.history[-1]["content"] == handlers.GENERIC_ERROR


def test_import_paste_text_and_file(store, llama_bench_md, tmp_path):
    msg, verdict = handlers.import_paste(store, llama_bench_md, None, "MacBook Pro M2 Max", {})  # a Metal run
    assert "2 measurement" in msg and "190.5" in msg
    assert verdict is not None
    msg_gpu, v_gpu = handlers.import_paste(store, llama_bench_md, None, "RTX 4090", {})  # Metal is not a GeForce's
    assert v_gpu is None and "did not run on the GeForce RTX 4090" in msg_gpu
    f = tmp_path / "bench.md"
    f.write_text(llama_bench_md)
    msg2, _ = handlers.import_paste(store, "", str(f), "", {"hardware": "RTX 4090"})
    assert "2 measurement" in msg2
    msg3, v3 = handlers.import_paste(store, "   ", None, "", {})
    assert v3 is None and "Paste" in msg3
    msg4, v4 = handlers.import_paste(store, "x" * 10_000, None, "", {})
    assert v4 is None and "could not find" in msg4


def test_verdict_view_and_export(store, verdict, tmp_path):
    card, roof, timeline, peers = handlers.verdict_view(store, verdict)
    assert "Bottleneck: decode" in card and "Speculative decoding" in card
    assert roof.data and timeline.data and peers.data
    md, js = handlers.export_files(verdict, {"hardware": "MacBook Air M2"}, tmp_path)
    assert "Speculative decoding" in open(md, encoding="utf-8").read()
    data = json.load(open(js, encoding="utf-8"))
    assert data["verdict"]["bottleneck"] == "decode" and data["facts"]["hardware"] == "MacBook Air M2"


def test_probe_markdown(store):
    seen = []

    def fake(st, progress):
        progress(0.5, "half")
        seen.append("ran")
        return "**done**"

    assert handlers.probe_markdown(store, fake, lambda f, d: None) == "**done**"

    def failing(st, progress):
        raise ProbeError("no device")

    assert "no device" in handlers.probe_markdown(store, failing, lambda f, d: None)
