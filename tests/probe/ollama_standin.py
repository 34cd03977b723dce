"""A small recorded-protocol stand-in for Ollama's HTTP API, for tests and ``bench/server_probe.py``.

Written from Ollama's documented response fields, not from a capture of a real server:

- ``GET /`` → ``Ollama is running``; ``GET /api/version`` → ``{"version": ...}``;
- ``GET /api/tags`` → ``{"models": [{"name", "model", "modified_at", "size", "digest", "details":
  {"parent_model", "format", "family", "families", "parameter_size", "quantization_level"}}]}``;
- ``GET /api/ps`` → ``{"models": [{"name", "model", "size", "digest", "details", "expires_at",
  "size_vram", "context_length"}]}`` (https://docs.ollama.com/api/ps; only models loaded by a request);
- ``POST /api/generate`` (and ``/api/chat``) streams one JSON object per line, ``{"model", "created_at",
  "response", "done": false}``; the last has ``"done": true``, ``"done_reason"`` and the usage fields
  ``total_duration``, ``load_duration``, ``prompt_eval_count``, ``prompt_eval_duration``,
  ``eval_count``, ``eval_duration``, durations in nanoseconds (https://docs.ollama.com/api/usage).

The stand-in "computes" by sleeping: ``prompt_tokens / prefill_tps`` before the first token, then
``1 / decode_tps`` per token, a one-off ``load_s`` on the first request, so a probe of it has known
answers. A prompt token is a word or a punctuation mark. ``report_factor`` scales the durations it
reports (2.0 reports half the real speed) to exercise the disagreement check; ``parallel`` = 1
serialises requests like ``OLLAMA_NUM_PARALLEL=1``; with more, concurrent requests share one
decode step (batched).
"""

from __future__ import annotations

import json
import re
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["OllamaStandIn", "StandInModel"]


@dataclass
class StandInModel:
    """One model the stand-in serves; ``gpu_share`` sets ``size_vram = gpu_share × size``."""

    name: str = "llama3.1:8b"
    parameter_size: str = "8.0B"
    quantization_level: str = "Q4_K_M"
    family: str = "llama"
    size: int = 6_000_000_000
    gpu_share: float = 1.0
    context_length: int = 4096


@dataclass
class OllamaStandIn:
    """Serve the stand-in on ``127.0.0.1`` (a free port unless given) in a background thread.

    Use as a context manager; ``url`` is ``http://127.0.0.1:PORT``.
    """

    models: list[StandInModel] = field(default_factory=lambda: [StandInModel()])
    prefill_tps: float = 2000.0
    decode_tps: float = 200.0
    load_s: float = 0.05
    report_factor: float = 1.0
    parallel: int = 1
    port: int = 0
    loaded: set[str] = field(default_factory=set)
    requests: list[dict[str, Any]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._lock = threading.Semaphore(max(1, self.parallel))
        self._server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> OllamaStandIn:
        standin = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def _json(self, obj: Any, status: int = 200) -> None:
                body = json.dumps(obj).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self) -> None:
                if self.path == "/":
                    body = b"Ollama is running"
                    self.send_response(200)
                    self.send_header("Content-Type", "text/plain; charset=utf-8")
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                elif self.path == "/api/version":
                    self._json({"version": "0.12.6"})
                elif self.path == "/api/tags":
                    self._json({"models": [standin._tag(m) for m in standin.models]})
                elif self.path == "/api/ps":
                    self._json({"models": [standin._ps(m) for m in standin.models if m.name in standin.loaded]})
                else:
                    self._json({"error": "404 page not found"}, 404)

            def do_POST(self) -> None:
                n = int(self.headers.get("Content-Length") or 0)
                try:
                    req = json.loads(self.rfile.read(n) or b"{}")
                except ValueError:
                    self._json({"error": "invalid JSON"}, 400)
                    return
                if self.path not in ("/api/generate", "/api/chat"):
                    self._json({"error": "404 page not found"}, 404)
                    return
                model = next((m for m in standin.models if m.name == req.get("model")), None)
                if model is None:
                    self._json({"error": f"model '{req.get('model')}' not found"}, 404)
                    return
                standin.requests.append(req)
                standin._generate(self, req, model, chat=self.path == "/api/chat")

        self._server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    # ------------------------------------------------------------------ protocol
    def _details(self, m: StandInModel) -> dict[str, Any]:
        return {"parent_model": "", "format": "gguf", "family": m.family, "families": [m.family],
                "parameter_size": m.parameter_size, "quantization_level": m.quantization_level}

    def _tag(self, m: StandInModel) -> dict[str, Any]:
        return {"name": m.name, "model": m.name, "modified_at": "2025-10-17T23:14:07.414671Z", "size": m.size,
                "digest": "a2af6cc3eb7fa8be8504abaf9b04e88f17a119ec3f04a3addf55f92841195f5a",
                "details": self._details(m)}

    def _ps(self, m: StandInModel) -> dict[str, Any]:
        return {"name": m.name, "model": m.name, "size": m.size,
                "digest": "a2af6cc3eb7fa8be8504abaf9b04e88f17a119ec3f04a3addf55f92841195f5a",
                "details": self._details(m), "expires_at": "2099-01-01T00:00:00Z",
                "size_vram": int(m.size * m.gpu_share), "context_length": m.context_length}

    def _generate(self, h: BaseHTTPRequestHandler, req: dict[str, Any], m: StandInModel, *, chat: bool) -> None:
        prompt = req.get("prompt") or " ".join(str(x.get("content", "")) for x in req.get("messages") or [])
        n_prompt = len(re.findall(r"\w+|[^\w\s]", prompt)) + 2  # + BOS and template tokens
        n_gen = int((req.get("options") or {}).get("num_predict") or 128)
        stream = req.get("stream", True)
        with self._lock:
            t0 = time.perf_counter()
            load = 0.0
            if m.name not in self.loaded:
                time.sleep(self.load_s)
                load = time.perf_counter() - t0
                self.loaded.add(m.name)
            t1 = time.perf_counter()
            time.sleep(n_prompt / self.prefill_tps)
            t2 = time.perf_counter()
            h.send_response(200)
            h.send_header("Content-Type", "application/x-ndjson")
            h.end_headers()
            words = ("the", "quick", "brown", "fox", "jumps", "over", "a", "lazy", "dog")
            for i in range(n_gen):
                if i:
                    time.sleep(1.0 / self.decode_tps)
                piece = (" " if i else "") + words[i % len(words)]
                line = {"model": m.name, "created_at": "2025-10-17T23:14:07Z", "done": False}
                line.update({"message": {"role": "assistant", "content": piece}} if chat else {"response": piece})
                if stream:
                    h.wfile.write((json.dumps(line) + "\n").encode())
                    h.wfile.flush()
            t3 = time.perf_counter()
            f = self.report_factor
            final = {"model": m.name, "created_at": "2025-10-17T23:14:08Z", "done": True, "done_reason": "length",
                     "total_duration": int((t3 - t0) * 1e9), "load_duration": int(load * 1e9),
                     "prompt_eval_count": n_prompt, "prompt_eval_duration": int((t2 - t1) * 1e9 * f),
                     "eval_count": n_gen, "eval_duration": int((t3 - t2) * 1e9 * f)}
            final.update({"message": {"role": "assistant", "content": ""}} if chat else {"response": ""})
            h.wfile.write((json.dumps(final) + "\n").encode())
            h.wfile.flush()
