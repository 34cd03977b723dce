"""Issue 17 items 7 and 10 through the real HTTP routes of the app (Gradio's queue, the body cap)."""

from __future__ import annotations

import json
import socket

import httpx
import pytest
from fastapi.testclient import TestClient

from advisor.models import ProbeResult
from knowledge.store import Store


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    from ui.app import build_app
    from ui.server import launch_options

    st = Store(str(tmp_path_factory.mktemp("http") / "s.duckdb"))
    st.save_probe(ProbeResult(backend="numpy", device="HOST-CPU", bandwidth_gbs=77.7, matmul_tflops=1.2, duration_s=1))
    demo = build_app(st, allow_probe=False)
    opts = launch_options(host="127.0.0.1", port=_free_port())
    demo.launch(prevent_thread_lock=True, quiet=True, server_name="127.0.0.1", server_port=opts["server_port"],
                app_kwargs=opts["app_kwargs"])
    yield demo
    demo.close()


def _call(client, api: str, *data: str) -> list:
    r = client.post(f"/gradio_api/call/{api}", json={"data": list(data)})
    assert r.status_code == 200, r.text
    text = client.get(f"/gradio_api/call/{api}/{r.json()['event_id']}").text
    assert "event: complete" in text, text
    return json.loads(text.split("data:", 2)[-1].strip())


BODY = json.dumps({"hardware": "this machine", "model": "llama 3.1 8b"})


def test_remote_client_over_http_is_not_given_the_hosts_probe(served):
    with TestClient(served.app) as c:  # client address "testclient": not loopback
        out = json.loads(_call(c, "predict", BODY)[0])
        assert "cannot see your computer" in out["error"]
        reply, _, facts = _call(c, "ask", "how fast is llama 3.1 8b on my computer?", "")
        assert "HOST-CPU" not in reply and json.loads(facts)["bandwidth_gbs"] is None


def test_loopback_client_over_http_gets_the_probe(served):
    with httpx.Client(base_url=served.local_url.rstrip("/"), timeout=60) as c:
        out = json.loads(_call(c, "predict", BODY)[0])
        assert out["bandwidth_gbs"] == pytest.approx(77.7)


def test_oversized_body_gets_413_and_the_app_keeps_answering(served):
    with TestClient(served.app) as c:
        r = c.post("/gradio_api/call/predict", content=b"x" * (3 * 1024 * 1024),
                   headers={"content-type": "application/json"})
        assert r.status_code == 413 and "larger than 2 MB" in r.json()["error"]
        ok = json.loads(_call(c, "predict", json.dumps({"hardware": "RTX 4090", "model": "llama 3.1 8b"}))[0])
        assert ok["decode_tps"] > 50
