"""Issue 17: a public server — remote visitors' "my computer", other visitors' text, request bodies."""

from __future__ import annotations

import asyncio
import json
from types import SimpleNamespace

import pytest

from advisor import service
from advisor.errors import InputError
from advisor.models import ProbeResult, Scenario
from knowledge.store import Store
from ui import charts, handlers

HOST_PROBE = ProbeResult(backend="numpy", device="HOST-CPU Xeon 9999", bandwidth_gbs=77.7, matmul_tflops=1.25,
                         duration_s=2.0, machine={"memory_total_gb": 512})


@pytest.fixture()
def probed(tmp_path):
    st = Store(str(tmp_path / "s.duckdb"))
    st.save_probe(HOST_PROBE)
    return st


# ------------------------------------------------------------------ item 7: remote "my computer"
def test_local_caller_gets_the_probe(probed):
    p = service.predict_scenario(probed, Scenario(hardware="this machine", model="llama 3.1 8b"))
    assert p.bandwidth_gbs == pytest.approx(77.7)


@pytest.mark.parametrize("hw", ["this machine", "my computer", "This Computer", "my machine"])
def test_remote_caller_never_gets_the_hosts_probe(probed, hw):
    with service.caller(local=False), pytest.raises(InputError, match="cannot see your computer"):
        service.predict_scenario(probed, Scenario(hardware=hw, model="llama 3.1 8b"))
    with service.caller(local=False), pytest.raises(InputError, match="cannot see your computer"):
        service.diagnose_scenario(probed, Scenario(hardware=hw, model="llama 3.1 8b", measured_decode_tps=5))


@pytest.mark.parametrize("msg", [
    "how fast would llama 3.1 8b run on my computer?",
    "Llama 3.1 8B Q4_K_M on this machine, is 5 tok/s normal?",
    "what about this PC with qwen 2.5 7b",
])
def test_remote_chat_asks_instead_of_using_the_host(probed, msg):
    with service.caller(local=False):
        res = service.ask(probed, msg)
    text = res.reply + " ".join(res.notes)
    assert "HOST-CPU" not in text and "77.7" not in text and "512" not in text
    assert res.facts.bandwidth_gbs is None and not res.facts.hardware_measured
    assert "cannot see your computer" in text or res.verdict is None
    with service.caller(local=True):
        assert service.ask(probed, msg).facts.bandwidth_gbs == pytest.approx(77.7)


def test_remote_visitor_can_paste_their_own_probe(probed):
    theirs = ProbeResult(backend="mlx-gpu", device="Apple M2 Pro", bandwidth_gbs=180.0, matmul_tflops=6.5,
                         duration_s=14.0)
    with service.caller(local=False):
        res = service.ask(probed, theirs.model_dump_json())
    assert res.facts.bandwidth_gbs == pytest.approx(180.0) and "your machine" in (res.facts.hardware or "")
    bogus = theirs.model_copy(update={"bandwidth_gbs": 1e9})
    with service.caller(local=False):
        res = service.ask(probed, bogus.model_dump_json())
    assert res.facts.bandwidth_gbs is None and "out of range" in res.reply


def test_remote_api_predict_through_the_app_wrappers(probed):
    """The /predict endpoint function the app registers, called with a remote client address."""
    from ui.app import build_app

    demo = build_app(probed, allow_probe=False)
    fns = {getattr(f.fn, "__name__", ""): f.fn for f in demo.fns.values()}
    remote = SimpleNamespace(client=SimpleNamespace(host="203.0.113.9"))
    local = SimpleNamespace(client=SimpleNamespace(host="127.0.0.1"))
    body = json.dumps({"hardware": "this machine", "model": "llama 3.1 8b"})
    out = json.loads(fns["predict"](body, request=remote))
    assert "cannot see your computer" in out["error"]
    assert json.loads(fns["predict"](body, request=local))["bandwidth_gbs"] == pytest.approx(77.7)
    reply, _, facts = fns["ask"]("llama 3.1 8b on my computer", "", request=remote)
    assert "HOST-CPU" not in reply and json.loads(facts)["bandwidth_gbs"] is None


@pytest.mark.parametrize("host,local", [("127.0.0.1", True), ("::1", True), ("localhost", True),
                                        ("10.0.0.5", False), ("203.0.113.9", False), ("", False), (None, False)])
def test_request_is_local(host, local):
    assert handlers.request_is_local(SimpleNamespace(client=SimpleNamespace(host=host))) is local


# --------------------------------------------------------------------- item 8: other visitors' text
EVIL_HW = '<a href="https://evil.example/x">RTX 4090</a>'
EVIL_MODEL = '<img src="https://evil.example/p.png">'


def test_peers_chart_escapes_hardware_names(store):
    from tests.ui.conftest import make_prediction

    rows = [{"hardware": EVIL_HW, "model": EVIL_MODEL, "quant": "<b>Q4</b>", "decode_tps": 100.0,
             "prefill_tps": 5000.0}]
    fig = charts.peers_figure(rows, make_prediction(), {})
    dumped = json.dumps(fig.to_plotly_json()["data"])
    assert "<a" not in dumped and "<img" not in dumped and "&lt;a href" in dumped


def test_roofline_title_escapes_custom_hardware_name():
    from tests.ui.conftest import make_prediction

    p = make_prediction()
    p = p.model_copy(update={"hardware": {**p.hardware, "name": EVIL_HW}})
    fig = charts.roofline_figure(p, None)
    assert "<a" not in json.dumps(fig.to_plotly_json()["layout"]["title"])


def test_paste_result_escapes_model_names(store):
    text = (BENCH_EVIL := "| model | size | params | backend | ngl | test | t/s |\n|---|---:|---:|---|--:|---:|---:|\n"
            f"| {EVIL_MODEL} | 4.58 GiB | 8.03 B | CUDA | 99 | tg128 | 100.00 ± 0.1 |\n")
    msg, _, _ = handlers.import_paste_with_facts(Store(":memory:"), BENCH_EVIL, None, EVIL_HW, None)
    assert text and "<img" not in msg and "<a " not in msg


@pytest.mark.parametrize("evil", [EVIL_MODEL, EVIL_HW, "![x](https://evil.example/t.png)", "<script>alert(1)</script>",
                                  "<svg onload=alert(1)>", "<IMG SRC=x>", "<sub onclick=x>"])
def test_chat_history_escapes_user_and_reply(evil):
    view = handlers.chat_turn(Store(":memory:"), f"my gpu is {evil} with llama 3.1 8b", [], {})
    for m in view.history:
        low = m["content"].lower()
        assert "<img" not in low and "<a " not in low and "<script" not in low and "<svg" not in low
        assert "![" not in m["content"] and "<sub onclick" not in low


def test_safe_markdown_keeps_the_advisors_own_tags():
    md = "<sub>Saved</sub> <details><summary>Why</summary>x</details> a<br>b"
    assert handlers.safe_markdown(md) == md
    assert handlers.safe_markdown(handlers.safe_markdown(EVIL_MODEL)) == handlers.safe_markdown(EVIL_MODEL)


# --------------------------------------------------------------------------- item 10: body cap
def _asgi(app, headers, chunks):
    sent, seen = [], []

    async def receive():
        if chunks:
            return {"type": "http.request", "body": chunks.pop(0), "more_body": bool(chunks)}
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(msg):
        sent.append(msg)

    async def inner(scope, rcv, snd):
        while True:
            m = await rcv()
            seen.append(m["type"])
            if m["type"] == "http.disconnect" or not m.get("more_body"):
                break
        await snd({"type": "http.response.start", "status": 200, "headers": []})

    asyncio.run(app(inner)({"type": "http", "path": "/gradio_api/call/predict", "headers": headers}, receive, send))
    return sent, seen


def test_body_cap_refuses_a_60_mb_body():
    from ui.bodycap import MAX_BODY_BYTES, BodyCap

    sent, seen = _asgi(BodyCap, [(b"content-length", str(60 * 1024 * 1024).encode())], [b"x"])
    assert sent[0]["status"] == 413 and seen == []  # refused before the app read anything
    sent, seen = _asgi(BodyCap, [], [b"x" * (1024 * 1024)] * 3)  # chunked, no length: cut off past the cap
    assert "http.disconnect" in seen
    sent, seen = _asgi(BodyCap, [(b"content-length", b"100")], [b"x" * 100])
    assert sent[0]["status"] == 200 and MAX_BODY_BYTES >= 2 * 1024 * 1024


def test_launch_options_install_the_body_cap():
    from ui.bodycap import BodyCap
    from ui.server import launch_options

    mw = launch_options()["app_kwargs"]["middleware"]
    assert any(m.cls is BodyCap for m in mw)
