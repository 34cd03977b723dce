"""A strict, chat-only OpenAI-compatible server: the probe falls back to chat and to standard fields."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from advisor.probe.server import DEFAULT_TOKENS_PER_WORD, find_servers, measure_server


class _Strict(BaseHTTPRequestHandler):
    seen: list[tuple[str, dict]] = []

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
        if self.path == "/v1/models":
            self._json({"object": "list", "data": [{"id": "strict-model", "owned_by": "someone"}]})
        else:
            self._json({"error": "not found"}, 404)

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).seen.append((self.path, body))
        if self.path != "/v1/chat/completions":
            self._json({"error": {"message": "Not Found"}}, 404)
            return
        extra = sorted(set(body) - {"model", "messages", "stream", "max_tokens", "temperature"})
        if extra:
            self._json({"error": {"message": f"Unrecognized request argument supplied: {extra[0]}"}}, 400)
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        time.sleep(0.02)
        for i in range(body["max_tokens"]):
            if i:
                time.sleep(0.005)
            chunk = {"choices": [{"index": 0, "delta": {"content": f" w{i}"}, "finish_reason": None}]}
            self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
            self.wfile.flush()
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()


@pytest.fixture
def strict_server():
    _Strict.seen = []
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Strict)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def test_chat_only_strict_server_is_measured_with_estimates(strict_server):
    [info] = find_servers(strict_server)
    assert info.engine == "other" and info.label == "an OpenAI-compatible server"
    r = measure_server(info, prompt_lengths=(64, 128), gen_tokens=10, concurrency=0)
    paths = [p for p, _ in _Strict.seen]
    assert paths[:3] == ["/v1/completions", "/v1/chat/completions", "/v1/chat/completions"]
    assert "stream_options" in _Strict.seen[1][1] and "stream_options" not in _Strict.seen[2][1]
    assert any("/v1/chat/completions" in n for n in r.notes) and any("standard fields only" in n for n in r.notes)
    assert any(f"{DEFAULT_TOKENS_PER_WORD:g} tokens per random word" in n for n in r.notes)
    assert len(r.server_runs) == 2
    for run in r.server_runs:
        assert run.prompt_tokens_estimated is True and run.gen_tokens == 10 == run.chunks
        assert run.decode_tps is not None and 0.35 * 200 <= run.decode_tps <= 1.25 * 200
        assert run.server_decode_tps is None and run.server_prefill_tps is None
    # Estimated sizes land on the asked lengths (2 tokens per word assumed, the instruction included).
    assert [x.prompt_tokens for x in r.server_runs] == [64, 128]
