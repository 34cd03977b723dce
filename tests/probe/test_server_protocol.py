"""Server probe plumbing: the loopback rule, engine identification, stream parsing, bad servers."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from typer.testing import CliRunner

from advisor.cli import app, server_argv
from advisor.errors import InputError
from advisor.probe.server import _counts, _pct, _prompt, _vocab, find_servers
from advisor.probe.server_engines import ServerInfo, build_request, choose_model, display_model, parse_line
from advisor.probe.server_http import ServerProbeError, check_url
from advisor.probe.server_report import params_from_text

ROOT = Path(__file__).resolve().parents[2]


class _Fake:
    """A loopback HTTP server answering GET paths with fixed (status, JSON or text, headers)."""

    def __init__(self, routes: dict[str, tuple[int, object]], server_header: str = "uvicorn") -> None:
        routes_ = routes

        class H(BaseHTTPRequestHandler):
            def log_message(self, *a):  # quiet
                pass

            def version_string(self):
                return server_header

            def _answer(self):
                status, body = routes_.get(self.path.split("?")[0], (404, {"detail": "Not Found"}))
                raw = body.encode() if isinstance(body, str) else json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "text/html" if isinstance(body, str) else "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            do_GET = _answer
            do_POST = _answer

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), H)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.mark.parametrize(("given", "want"), [
    ("127.0.0.1:11434", "http://127.0.0.1:11434"),
    ("http://localhost:8080/v1", "http://localhost:8080"),
    ("http://[::1]:8000/", "http://[::1]:8000"),
    ("127.0.0.2:30000", "http://127.0.0.2:30000"),
    ("http://127.0.0.1", "http://127.0.0.1:80"),
])
def test_loopback_addresses_are_accepted(given, want):
    assert check_url(given) == want


@pytest.mark.parametrize("given", ["10.0.0.5:8080", "http://192.168.1.20:11434", "http://example.com:8000",
                                   "http://127.0.0.1.example.com:80", "http://0.0.0.0:8080"])
def test_other_addresses_need_the_command_line(given):
    with pytest.raises(InputError, match="not a loopback address"):
        check_url(given)
    assert check_url(given, allow_remote=True).startswith("http://")


@pytest.mark.parametrize("given", ["ftp://127.0.0.1:21", "http://127.0.0.1:99999", "http://:8080", ""])
def test_malformed_addresses(given):
    with pytest.raises(InputError):
        check_url(given)


def test_argv_server_without_url_means_discovery():
    assert server_argv(["probe", "--server"]) == ["probe", "--server=auto"]
    assert server_argv(["probe", "--server", "--json"]) == ["probe", "--server=auto", "--json"]
    assert server_argv(["probe", "--server", "127.0.0.1:1234"]) == ["probe", "--server", "127.0.0.1:1234"]


def test_identifies_llama_server_by_props():
    routes = {"/props": (200, {"default_generation_settings": {"n_ctx": 8192}, "total_slots": 4,
                                "model_path": "/models/Qwen2.5-7B-Instruct-Q4_K_M.gguf"}),
              "/v1/models": (200, {"object": "list", "data": [{"id": "qwen2.5-7b", "owned_by": "llamacpp"}]}),
              "/slots": (200, [{"id": 0}, {"id": 1}, {"id": 2}, {"id": 3}])}
    with _Fake(routes) as f:
        [info] = find_servers(f.url)
    assert (info.engine, info.api, info.models) == ("llama.cpp", "llama.cpp", ["qwen2.5-7b"])
    assert info.details["n_ctx"] == 8192 and info.details["slots"] == 4 and info.details["total_slots"] == 4


@pytest.mark.parametrize(("routes", "engine"), [
    ({"/v1/models": (200, {"data": [{"id": "meta-llama/Llama-3.1-8B-Instruct", "owned_by": "vllm"}]})}, "vllm"),
    ({"/v1/models": (200, {"data": [{"id": "qwen", "owned_by": "sglang"}]})}, "sglang"),
    ({"/v1/models": (200, {"data": [{"id": "qwen"}]}), "/get_model_info": (200, {"model_path": "Qwen/Qwen2.5"})},
     "sglang"),
    ({"/v1/models": (200, {"data": [{"id": "qwen"}]}), "/api/v0/models": (200, {"data": [{"id": "qwen",
                                                                                          "state": "loaded"}]})},
     "lm-studio"),
    ({"/v1/models": (200, {"data": [{"id": "some-model", "owned_by": "me"}]})}, "other"),
])
def test_identifies_openai_style_engines(routes, engine):
    from advisor.understand.engine import classify_engine
    from advisor.understand.situation import ENGINES

    with _Fake(routes) as f:
        [info] = find_servers(f.url)
    assert info.engine == engine and info.api == "openai"
    assert engine in ENGINES and classify_engine(engine)[0] == engine  # the one classifier agrees


def test_mlx_lm_server_without_a_model_list_is_still_recognised():
    # mlx_lm.server's /v1/models fails without a Hugging Face cache; /health and its BaseHTTP header remain.
    with _Fake({"/health": (200, {"status": "ok"}), "/v1/models": (200, "")}, server_header="BaseHTTP/0.6 Python/3.11") as f:
        [info] = find_servers(f.url)
    assert info.engine == "mlx" and choose_model(info) == "default_model"


def test_a_plain_http_server_is_not_an_llm_server():
    with _Fake({"/": (200, "<html>hello</html>")}) as f:
        with pytest.raises(ServerProbeError, match="not an LLM server"):
            find_servers(f.url)
        r = CliRunner().invoke(app, ["probe", "--server", f.url, "--json"])
        assert r.exit_code == 2
        assert "not an LLM server" in json.loads(r.stdout)["error"]


def test_cli_not_an_llm_server_is_one_line_and_exit_2(tmp_path):
    # A real process, so the message on stderr is all the person sees: one line, no traceback.
    with _Fake({"/": (200, "<html>hello</html>")}) as f:
        p = subprocess.run([sys.executable, "-m", "advisor", "probe", "--server", f.url, "--store",
                            str(tmp_path / "s.duckdb")], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert p.returncode == 2
    lines = [x for x in p.stderr.splitlines() if x.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ") and "not an LLM server" in lines[0]
    assert "Traceback" not in p.stderr and p.stdout == ""


def test_nothing_listening_is_one_clear_line():
    with _Fake({}) as f:
        url = f.url
    r = CliRunner().invoke(app, ["probe", "--server", url, "--json"])
    assert r.exit_code == 2 and json.loads(r.stdout)["error"] == f"nothing is listening on {url}"


def test_remote_server_in_service_needs_allow_remote():
    from advisor import service

    def no_store():
        raise AssertionError("the store is opened only once a server was found")

    with pytest.raises(InputError, match="not a loopback address"):
        service.run_server_probe(no_store, url="http://192.168.1.20:11434")
    with _Fake({}) as f:
        url = f.url
    with pytest.raises(ServerProbeError, match="nothing is listening"):
        service.run_server_probe(no_store, url=url)


def test_parse_ollama_lines():
    ev = parse_line("ollama", b'{"model":"m","response":"Hi","done":false}')
    assert (ev.text, ev.done, ev.report) == ("Hi", False, None)
    final = parse_line("ollama", json.dumps({"model": "m", "response": "", "done": True, "done_reason": "length",
                                             "prompt_eval_count": 11, "prompt_eval_duration": 13074791,
                                             "eval_count": 18, "eval_duration": 52479709,
                                             "load_duration": 101397084}).encode())
    assert final.done and final.report["eval_count"] == 18
    c = _counts("ollama", final.report)
    assert c["prompt"] == 11 and c["gen"] == 18
    assert c["prefill_tps"] == pytest.approx(11 / 0.013074791)
    assert c["decode_tps"] == pytest.approx(18 / 0.052479709)
    assert c["load_s"] == pytest.approx(0.101397084)
    chat = parse_line("ollama", b'{"message":{"role":"assistant","content":"yo"},"done":false}')
    assert chat.text == "yo"


def test_parse_llama_server_timings_and_cache():
    line = b'data: {"content":"","stop":true,"tokens_predicted":64,"timings":{"cache_n":100,"prompt_n":412,' \
           b'"prompt_ms":205.9,"prompt_per_second":2001.0,"predicted_n":64,"predicted_ms":1280.0,' \
           b'"predicted_per_second":50.0}}'
    ev = parse_line("llama.cpp", line)
    assert ev.done
    c = _counts("llama.cpp", ev.report)
    assert (c["prompt"], c["cached"], c["gen"], c["prefill_tps"], c["decode_tps"]) == (512, 100, 64, 2001.0, 50.0)


def test_parse_openai_chunks():
    assert parse_line("openai", b": keepalive 7/8") is None
    assert parse_line("openai", b"data: [DONE]").done
    ev = parse_line("openai", b'data: {"choices":[{"index":0,"text":" ox","finish_reason":null}]}')
    assert ev.text == " ox"
    ev = parse_line("openai", b'data: {"choices":[{"delta":{"content":"Hel"}}]}')
    assert ev.text == "Hel"
    ev = parse_line("openai", b'data: {"choices":[],"usage":{"prompt_tokens":256,"completion_tokens":32,'
                              b'"prompt_tokens_details":{"cached_tokens":64}}}')
    c = _counts("openai", ev.report)
    assert (c["prompt"], c["cached"], c["gen"], c["prefill_tps"]) == (256, 64, 32, None)
    with pytest.raises(ServerProbeError, match="out of memory"):
        parse_line("openai", b'data: {"error":{"message":"CUDA out of memory"}}')


def test_requests_ask_for_no_cache_and_the_answer_length():
    ls = ServerInfo(engine="llama.cpp", api="llama.cpp", url="http://127.0.0.1:8080")
    path, body = build_request(ls, "m", "p", 64)
    assert path == "/completion" and body["cache_prompt"] is False and body["n_predict"] == 64 and body["ignore_eos"]
    ol = ServerInfo(engine="ollama", api="ollama", url="http://127.0.0.1:11434")
    path, body = build_request(ol, "llama3.1:8b", "p", 32)
    assert path == "/api/generate" and body["options"]["num_predict"] == 32 and body["stream"] is True
    vl = ServerInfo(engine="vllm", api="openai", url="http://127.0.0.1:8000")
    path, body = build_request(vl, "m", "p", 16)
    assert path == "/v1/completions" and body["ignore_eos"] and body["stream_options"] == {"include_usage": True}
    mx = ServerInfo(engine="mlx", api="openai", url="http://127.0.0.1:8080")
    assert "ignore_eos" not in build_request(mx, "m", "p", 16)[1]
    assert build_request(mx, "m", "p", 16, chat=True)[0] == "/v1/chat/completions"
    strict = build_request(vl, "m", "p", 16, minimal=True)[1]
    assert "stream_options" not in strict and "ignore_eos" not in strict and strict["max_tokens"] == 16


def test_choose_and_display_model():
    info = ServerInfo(engine="ollama", api="ollama", url="u", models=["a:1b", "b:7b"], loaded=[{"name": "b:7b"}])
    assert choose_model(info) == "b:7b" and choose_model(info, "A:1B") == "a:1b" and choose_model(info, "a:") == "a:1b"
    with pytest.raises(InputError, match="matches several"):
        choose_model(ServerInfo(engine="ollama", api="ollama", url="u", models=["qwen:7b", "qwen:14b"]), "qwen")
    with pytest.raises(ServerProbeError, match="lists no model"):
        choose_model(ServerInfo(engine="ollama", api="ollama", url="u"))
    mlx = ServerInfo(engine="mlx", api="openai", url="u", models=["mlx-community/x", "/tmp/models/tiny"])
    assert display_model(mlx, "default_model") == "tiny"


def test_prompts_differ_and_use_the_models_own_words():
    import random

    rng = random.Random(3)
    a, b = _prompt(50, rng, ["ox", "ruf"]), _prompt(50, rng, ["ox", "ruf"])
    assert a != b and a.split()[:3] != b.split()[:3]
    assert "ox" in a.split() or "ruf" in a.split() or "ox," in a
    assert _vocab("Ruf ox, xicl! 42 a") == ["ox", "ruf", "xicl"]


def test_percentiles_and_parameter_sizes():
    assert _pct([1.0, 2.0, 3.0, 4.0], 0.5) == 2.5 and _pct([5.0], 0.95) == 5.0 and _pct([], 0.5) is None
    assert params_from_text("8.0B") == 8.0 and params_from_text("494.03M") == pytest.approx(0.49403)
    assert params_from_text("lots") is None and params_from_text(None) is None


def test_a_server_that_errors_is_one_line_with_its_message():
    oom = "model requires more system memory (9.1 GiB) than is available (4.0 GiB)"
    routes = {"/api/tags": (200, {"models": [{"name": "llama3.1:8b", "model": "llama3.1:8b"}]}),
              "/api/generate": (500, {"error": oom})}
    with _Fake(routes) as f:
        r = CliRunner().invoke(app, ["probe", "--server", f.url, "--json"])
    assert r.exit_code == 2
    err = json.loads(r.stdout)["error"]
    assert err == f"{f.url}/api/generate answered HTTP 500: {oom}"


def test_a_server_that_streams_no_text_is_one_line():
    routes = {"/v1/models": (200, {"data": [{"id": "m", "owned_by": "vllm"}]}),
              "/v1/completions": (200, "data: [DONE]\n\n")}
    with _Fake(routes) as f:
        r = CliRunner().invoke(app, ["probe", "--server", f.url, "--json"])
    assert r.exit_code == 2 and json.loads(r.stdout)["error"] == f"vLLM at {f.url} streamed no text for model 'm'"


def test_a_server_that_wants_an_api_key_says_so():
    with _Fake({"/v1/models": (401, {"error": {"message": "Invalid API Key"}}), "/props": (401, {})}) as f:
        with pytest.raises(ServerProbeError, match=r"without an API key \(HTTP 401\)"):
            find_servers(f.url)


def test_lm_studio_loaded_model_and_its_quantization_are_used():
    from advisor.probe.server import ServerProbeResult, ServerRun
    from advisor.probe.server_report import scenario_of

    routes = {"/v1/models": (200, {"data": [{"id": "qwen2.5-7b-instruct"}, {"id": "llama-3.2-3b-instruct"}]}),
              "/api/v0/models": (200, {"data": [
                  {"id": "qwen2.5-7b-instruct", "state": "not-loaded", "quantization": "Q4_K_M"},
                  {"id": "llama-3.2-3b-instruct", "state": "loaded", "quantization": "Q8_0", "arch": "llama"}]})}
    with _Fake(routes) as f:
        [info] = find_servers(f.url)
    assert info.engine == "lm-studio" and choose_model(info) == "llama-3.2-3b-instruct"
    run = ServerRun(prompt_tokens=512, ttft_s=0.5, prefill_tps=1024.0, gen_tokens=64, decode_tps=30.0,
                    itl_p50_ms=33.0, itl_p95_ms=40.0)
    res = ServerProbeResult(engine=info.engine, engine_label=info.label, url=info.url, model="llama-3.2-3b-instruct",
                            server_runs=[run], details=info.details)
    sc = scenario_of(res, hardware="nvidia-rtx-4070")
    assert (sc.quant, sc.backend, sc.measured_decode_tps, sc.prompt_tokens) == ("Q8_0", "lm-studio", 30.0, 512)


@pytest.mark.parametrize(("agg_tokens", "note"), [
    (60, "the server batches requests."), (34, "the server batches only a little."),
    (30, "one after another (no batching; set OLLAMA_NUM_PARALLEL"), (10, "slower than one stream alone")])
def test_batching_verdicts(monkeypatch, agg_tokens, note):
    """Two streams over one second against a single stream of 30 tok/s: the note follows the speed-up."""
    import advisor.probe.server as S

    def fake_stream(info, model, prompt, gen, timeout, opts, temperature=0.0):
        s = S._Stream()
        s.t0 = 0.0
        s.times = [0.1 + i / (agg_tokens / 2) for i in range(agg_tokens // 2 + 1)]
        return s

    monkeypatch.setattr(S, "_stream", fake_stream)
    info = ServerInfo(engine="ollama", api="ollama", url="http://127.0.0.1:11434")
    b = S._batching(info, "m", 10, 16, 2, 30.0, 5.0, {}, [])
    assert b is not None and note in b.note
    assert b.batches is (agg_tokens == 60)


@pytest.mark.parametrize("args", [["probe", "--server"], ["probe", "--server", "--json"],
                                  ["probe", "--json", "--server"]])
def test_bare_server_flag_searches_the_default_ports(monkeypatch, args):
    import advisor.probe.server as server_mod

    with _Fake({}) as f:
        port = int(f.url.rsplit(":", 1)[1])
    monkeypatch.setattr(server_mod, "DEFAULT_PORTS", ((port, "closed"),))
    r = CliRunner().invoke(app, args)
    assert r.exit_code == 2
    assert f"no LLM server answers on 127.0.0.1 ports {port};" in r.output
