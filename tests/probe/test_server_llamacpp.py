"""Server probe end to end against a small llama-server stand-in (``/props``, ``/slots``, ``/completion``).

The stand-in follows llama-server's documented behaviour: ``POST /completion`` with ``stream: true``
sends SSE ``data:`` lines ``{"content": ..., "stop": false}``; the last has ``"stop": true`` and
``timings`` {``cache_n``, ``prompt_n``, ``prompt_ms``, ``prompt_per_second``, ``predicted_n``,
``predicted_ms``, ``predicted_per_second``}. It sleeps ``prompt_n / 1000`` s and 10 ms per token.
"""

from __future__ import annotations

import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from advisor.probe.server import find_servers, measure_server

PREFILL, STEP = 1000.0, 0.010


class _LlamaServer(BaseHTTPRequestHandler):
    bodies: list[dict] = []

    def log_message(self, *a):
        pass

    def _json(self, obj, status=200):
        raw = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def do_GET(self):
        if self.path == "/props":
            self._json({"default_generation_settings": {"n_ctx": 4096}, "total_slots": 1,
                        "model_path": "/models/Llama-3.2-3B-Instruct-Q4_K_M.gguf", "build_info": "b6000"})
        elif self.path == "/slots":
            self._json([{"id": 0, "n_ctx": 4096}])
        elif self.path == "/v1/models":
            self._json({"object": "list", "data": [{"id": "Llama-3.2-3B-Instruct-Q4_K_M.gguf", "owned_by": "llamacpp"}]})
        else:
            self._json({"error": {"code": 404, "message": "File Not Found"}}, 404)

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).bodies.append(body)
        if self.path != "/completion":
            self._json({"error": {"code": 404, "message": "File Not Found"}}, 404)
            return
        n_prompt = len(re.findall(r"\w+|[^\w\s]", body["prompt"])) + 1
        t0 = time.perf_counter()
        time.sleep(n_prompt / PREFILL)
        t1 = time.perf_counter()
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        n = body["n_predict"]
        for i in range(n):
            if i:
                time.sleep(STEP)
            self.wfile.write(f"data: {json.dumps({'content': ' tok', 'stop': False})}\n\n".encode())
            self.wfile.flush()
        t2 = time.perf_counter()
        final = {"content": "", "stop": True, "tokens_predicted": n, "tokens_evaluated": n_prompt,
                 "timings": {"cache_n": 0, "prompt_n": n_prompt, "prompt_ms": (t1 - t0) * 1e3,
                             "prompt_per_second": n_prompt / (t1 - t0), "predicted_n": n,
                             "predicted_ms": (t2 - t1) * 1e3, "predicted_per_second": n / (t2 - t1)}}
        self.wfile.write(f"data: {json.dumps(final)}\n\n".encode())
        self.wfile.flush()


@pytest.fixture
def llama_server():
    _LlamaServer.bodies = []
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _LlamaServer)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def test_llama_server_end_to_end(llama_server):
    [info] = find_servers(llama_server)
    assert info.engine == "llama.cpp" and info.label == "llama-server (llama.cpp)"
    r = measure_server(info, prompt_lengths=(64, 256), gen_tokens=12, concurrency=0)
    assert r.model == "Llama-3.2-3B-Instruct-Q4_K_M.gguf"
    # Every request disables the prompt cache and asks for the answer length.
    assert all(b["cache_prompt"] is False and b["stream"] is True for b in _LlamaServer.bodies)
    assert [b["n_predict"] for b in _LlamaServer.bodies] == [24, 12, 12]
    for run, raw in zip(r.server_runs, r.server_reported, strict=True):
        assert run.prompt_tokens == raw["timings"]["prompt_n"] and run.gen_tokens == 12
        assert 0.35 * PREFILL <= run.prefill_tps <= 1.01 * PREFILL
        assert run.server_prefill_tps == pytest.approx(raw["timings"]["prompt_per_second"], rel=1e-3)
        assert 0.35 / STEP <= run.decode_tps <= 1.25 / STEP
        assert run.server_decode_tps == pytest.approx(raw["timings"]["predicted_per_second"], rel=1e-3)
    assert r.disagreements == [] or all("prefill at 6" in d for d in r.disagreements)  # HTTP weighs on tiny TTFTs
    assert r.details["total_slots"] == 1 and r.details["n_ctx"] == 4096
