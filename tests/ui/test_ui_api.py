"""The named API endpoints, driven with gradio_client against a launched app."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor

import pytest
from gradio_client import Client

pytestmark = pytest.mark.e2e


@pytest.fixture
def client(app_url):
    c = Client(app_url, verbose=False, analytics_enabled=False)
    try:
        yield c
    finally:
        c.close()


def ask(client: Client, message: str, facts: str = "") -> tuple[str, dict | None, str]:
    reply, verdict, facts_out = client.predict(message, facts, api_name="/ask")
    assert isinstance(reply, str) and reply.strip()
    return reply, json.loads(verdict), facts_out


def test_endpoints_are_named(client):
    named = client.view_api(print_info=False, return_format="dict")["named_endpoints"]
    for name in ("/ask", "/predict", "/diagnose", "/import"):
        assert name in named
    assert [p["parameter_name"] for p in named["/ask"]["parameters"]] == ["message", "facts_json"]
    assert len(named["/ask"]["returns"]) == 3


def test_conversation_reaches_a_verdict(client):
    reply, verdict, facts = ask(client, "I have a MacBook Air M2 with 16 GB")
    assert verdict is None
    f = json.loads(facts)
    assert f["hardware"] and f["memory_gb"] == 16
    reply, verdict, facts = ask(client, "Llama 3.1 8B at 4-bit for chat", facts)
    for _ in range(3):  # answer follow-up questions with the first offered choice, if any
        if verdict is not None:
            break
        reply, verdict, facts = ask(client, "yes, the usual", facts)
    assert verdict is not None, reply
    assert verdict["bottleneck"] in ("prefill", "decode", "memory_fit", "misconfiguration")
    assert verdict["prediction"]["decode_tps"] > 0
    assert json.loads(facts)["memory_gb"] == 16


def test_predict_and_diagnose(client):
    sc = {"hardware": "RTX 4090", "model": "llama 3.1 8b", "quant": "Q4_K_M", "prompt_tokens": 4000,
          "gen_tokens": 500}
    p = json.loads(client.predict(json.dumps(sc), api_name="/predict"))
    assert p["decode_tps"] > 0 and p["prefill_tps"] > p["decode_tps"] and p["ttft_s"] > 0
    v = json.loads(client.predict(json.dumps({**sc, "measured_decode_tps": 40}), api_name="/diagnose"))
    assert v["status"] == "below_expected" and v["fixes"] and v["prediction"]["decode_tps"] > 0


def test_import_llama_bench(client, llama_bench_md):
    out = json.loads(client.predict(llama_bench_md, "MacBook Pro M2 Max", api_name="/import"))  # a Metal run
    assert out["format"].startswith("llama-bench")
    rates = {(m["prefill_tps"], m["decode_tps"]) for m in out["measurements"]}
    assert (190.52, None) in rates and (None, 17.21) in rates
    assert out["verdict"]["prediction"]["hardware"]["id"]


JUNK = ("\x00\x1b[31m<script>alert(1)</script> ̷̢ {{7*7}} ${jndi:ldap://x} " * 200)[:10_240]


@pytest.mark.parametrize("bad", ["", "'; DROP TABLE results; --", JUNK])
def test_bad_input_gets_a_friendly_message(client, bad):
    reply, verdict, facts = ask(client, bad)
    assert "Traceback" not in reply and verdict is None
    assert isinstance(json.loads(facts), dict)
    for api in ("/predict", "/diagnose"):
        out = json.loads(client.predict(bad, api_name=api))
        assert out["error"] and "Traceback" not in out["error"]
    out = json.loads(client.predict(bad, "", api_name="/import"))
    assert ("error" in out) or (out["measurements"] == [] and out["saved_id"] is None)
    # The store still answers after hostile text.
    p = json.loads(client.predict('{"hardware": "RTX 4090", "model": "llama 3.1 8b"}', api_name="/predict"))
    assert p["decode_tps"] > 0


def test_parallel_clients_keep_separate_facts(app_url):
    def session(hw: str, mem: int) -> dict:
        c = Client(app_url, verbose=False, analytics_enabled=False)
        try:
            facts = ""
            for msg in (f"I have a {hw} with {mem} GB", "Llama 3.1 8B at 4-bit for chat"):
                _, _, facts = c.predict(msg, facts, api_name="/ask")
            return json.loads(facts)
        finally:
            c.close()

    with ThreadPoolExecutor(4) as ex:
        futs = [ex.submit(session, "MacBook Air M2", 16), ex.submit(session, "Mac Studio M2 Ultra", 192),
                ex.submit(session, "MacBook Air M2", 24), ex.submit(session, "Mac Studio M2 Ultra", 64)]
        a, b, c, d = (f.result(timeout=60) for f in futs)
    assert [x["memory_gb"] for x in (a, b, c, d)] == [16, 192, 24, 64]
    assert "ultra" not in a["hardware"].lower() and "ultra" in b["hardware"].lower()
