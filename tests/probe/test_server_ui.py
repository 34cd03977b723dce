"""The app's "Probe my LLM server" panel: wiring, the remote-visitor rule, and what it prints."""

from __future__ import annotations

import pytest

pytest.importorskip("gradio")

from advisor.errors import ProbeError  # noqa: E402
from advisor.probe.server import ServerProbeResult, ServerRun  # noqa: E402
from knowledge.store import Store  # noqa: E402
from ui.app import build_app  # noqa: E402
from ui.server_probe import server_probe_markdown  # noqa: E402


@pytest.fixture(scope="module")
def store():
    return Store(":memory:")


def _fns(demo):
    return {f.api_name: f for f in demo.fns.values()}


def _component(demo, elem_id):
    return next(c for c in demo.get_config_file()["components"] if c.get("props", {}).get("elem_id") == elem_id)


def test_panel_is_wired_like_the_kernel_probe(store):
    demo = build_app(store, probe_fn=lambda st, progress: "ok")
    fn = _fns(demo)["server_probe"]
    assert fn.concurrency_limit == 1 and fn.concurrency_id == "probe"  # never alongside the kernel probe
    assert fn.api_visibility == "undocumented"
    assert _component(demo, "server-probe-btn")["props"]["interactive"] is True


def test_panel_is_off_when_the_probe_is_off(store):
    demo = build_app(store, allow_probe=False)
    assert "server_probe" not in _fns(demo)
    assert _component(demo, "server-probe-btn")["props"]["interactive"] is False
    text = _component(demo, "server-probe-text")["props"]["value"]
    assert "turned off" in text and "advisor probe --server" in text


def test_markdown_of_a_result_and_of_a_failure(store):
    run = ServerRun(prompt_tokens=512, ttft_s=0.25, prefill_tps=2048.0, gen_tokens=64, decode_tps=42.0,
                    itl_p50_ms=23.5, itl_p95_ms=30.1, server_prefill_tps=2100.0, server_decode_tps=43.0)
    res = ServerProbeResult(engine="ollama", engine_label="Ollama", url="http://127.0.0.1:11434",
                            model="llama3.1:8b", server_runs=[run], gpu_share=1.0)
    seen = {}

    def fake(st, model, progress):
        seen["model"] = model
        progress(0.5, "half")
        return [res]

    md = server_probe_markdown(store, "  llama3.1:8b ", lambda f, d: None, run=fake)
    assert seen["model"] == "llama3.1:8b"
    assert "| 512 | 64 | 0.250 | 2,048.0 | 42.0 | 23.5 / 30.1 | 2,100.0 / 43.0 |" in md
    assert "Ollama serves llama3.1:8b: decode 42.0 tok/s, prefill 2,048 tok/s at 512 prompt tokens" in md

    def failing(st, model, progress):
        raise ProbeError("no LLM server answers on 127.0.0.1 ports 11434")

    assert server_probe_markdown(store, "", lambda f, d: None, run=failing) == (
        "The server probe could not measure: no LLM server answers on 127.0.0.1 ports 11434")


def test_find_my_servers_offers_the_models(store):
    from advisor.probe.server_engines import ServerInfo
    from ui.server_probe import served_models

    infos = [ServerInfo(engine="ollama", api="ollama", url="http://127.0.0.1:11434", models=["llama3.1:8b", "qwen2.5:7b"]),
             ServerInfo(engine="mlx", api="openai", url="http://127.0.0.1:8080", models=[])]
    names, md = served_models(lambda: infos)
    assert names == ["llama3.1:8b", "qwen2.5:7b"]
    assert md == ("- Ollama at `http://127.0.0.1:11434`: llama3.1:8b, qwen2.5:7b\n"
                  "- mlx_lm.server at `http://127.0.0.1:8080`: no model listed")

    def none():
        raise ProbeError("no LLM server answers on 127.0.0.1 ports 11434")

    assert served_models(none) == ([], "No LLM server found: no LLM server answers on 127.0.0.1 ports 11434")
    demo = build_app(store, allow_probe=False)
    assert _component(demo, "server-find-btn")["props"]["interactive"] is False
