"""Attack: an LLM server (or something posing as one) that never ends its stream must not hang the probe."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from advisor.probe.server import find_servers, measure_server
from advisor.probe.server_http import ServerProbeError


def _handler(mode: str) -> type[BaseHTTPRequestHandler]:
    class H(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.0"

        def log_message(self, *a: object) -> None:
            pass

        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            if self.path.startswith("/v1/models"):
                body = json.dumps({"data": [{"id": "m"}]}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                self.wfile.write(body)
            else:
                self.send_response(404)
                self.end_headers()

        def do_POST(self) -> None:  # noqa: N802
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            t0 = time.time()
            line = b'data: {"choices":[{"text":"hi "}]}\n\n' if mode == "endless" else b"\xff\xfe {{{ garbage\n"
            try:
                while time.time() - t0 < 30:  # bounded: the server thread ends by itself
                    self.wfile.write(line)
                    self.wfile.flush()
                    time.sleep(0.0005)
            except OSError:
                pass

    return H


@pytest.fixture(params=["endless", "garbage"])
def hostile(request: pytest.FixtureRequest) -> Iterator[tuple[str, str]]:
    srv = ThreadingHTTPServer(("127.0.0.1", 0), _handler(request.param))
    srv.daemon_threads = True
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        yield request.param, f"http://127.0.0.1:{srv.server_address[1]}"
    finally:
        srv.shutdown()
        srv.server_close()


def test_stream_that_never_ends_is_cut_off(hostile: tuple[str, str]) -> None:
    mode, url = hostile
    (info,) = find_servers(url)
    t0 = time.perf_counter()
    if mode == "endless":  # ignores max_tokens: measured on a bounded number of chunks
        res = measure_server(info, prompt_lengths=(16,), gen_tokens=8, time_budget_s=5, concurrency=0)
        assert res.server_runs and res.server_runs[0].chunks <= 8 * 4 + 16
    else:  # lines that are no events: a clear error, not an endless read
        with pytest.raises(ServerProbeError, match="did not finish"):
            measure_server(info, prompt_lengths=(16,), gen_tokens=8, time_budget_s=5, concurrency=0)
    assert time.perf_counter() - t0 < 15
