"""App wiring and server defaults, without a browser."""

from __future__ import annotations

import pytest

from ui import server
from ui.app import build_app


def _fns(demo) -> dict[str, object]:
    return {f.api_name: f for f in demo.fns.values()}


def test_probe_runs_alone(store):
    demo = build_app(store, probe_fn=lambda st, progress: "ok")
    probe = _fns(demo)["probe"]
    assert probe.concurrency_limit == 1 and probe.concurrency_id == "probe"
    public = {name for name, f in _fns(demo).items() if f.api_visibility == "public"}
    assert public == {"ask", "predict", "diagnose", "import", "compare"}


def test_probe_disabled(store):
    demo = build_app(store, allow_probe=False)
    assert "probe" not in _fns(demo)
    cfg = demo.get_config_file()
    btn = next(c for c in cfg["components"] if c.get("props", {}).get("elem_id") == "probe-btn")
    assert btn["props"]["interactive"] is False
    text = next(c for c in cfg["components"] if c.get("props", {}).get("elem_id") == "probe-text")
    assert "advisor probe" in text["props"]["value"] and "turned off" in text["props"]["value"]


@pytest.mark.parametrize("host, local", [("127.0.0.1", True), ("localhost", True), ("::1", True),
                                         ("[::1]", True), ("0.0.0.0", False), ("192.168.1.5", False),
                                         ("example.org", False)])
def test_is_loopback(host, local):
    assert server.is_loopback(host) is local


def test_launch_options_are_safe():
    opts = server.launch_options()
    assert opts["server_name"] == "127.0.0.1" and opts["share"] is False
    assert opts["max_file_size"] == "5mb" and opts["show_error"] is False
    assert opts["enable_monitoring"] is False and opts["theme"] is not None


class _FakeDemo:
    def __init__(self) -> None:
        self.launched: dict | None = None

    def launch(self, **kw) -> None:
        self.launched = kw


@pytest.fixture
def captured(monkeypatch):
    calls: dict = {}
    demo = _FakeDemo()

    def fake_build(store, *, allow_probe=True, **kw):
        calls["allow_probe"] = allow_probe
        calls["store"] = store
        return demo

    monkeypatch.setattr("ui.app.build_app", fake_build)
    calls["demo"] = demo
    return calls


def test_launch_loopback_keeps_probe(captured):
    server.launch(":memory:")
    assert captured["allow_probe"] is True
    assert captured["demo"].launched["server_name"] == "127.0.0.1"
    assert captured["demo"].launched["server_port"] == 7860


def test_launch_public_host_warns_and_disables_probe(captured, capsys):
    server.launch(":memory:", host="0.0.0.0", port=8080)
    assert captured["allow_probe"] is False
    assert "WARNING" in capsys.readouterr().err
    assert captured["demo"].launched["server_name"] == "0.0.0.0"
    server.launch(":memory:", host="0.0.0.0", allow_probe=True)
    assert captured["allow_probe"] is True
    assert "measures this server" in capsys.readouterr().err
