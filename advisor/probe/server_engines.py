"""Which LLM server is this, what does it serve, and how do we talk to it?

Identification uses each engine's own endpoints first, then the OpenAI-style ``/v1/models``:

- Ollama: ``GET /api/version`` and ``GET /api/tags`` (``models[].name``), ``GET /api/ps`` (loaded
  models, ``size`` and ``size_vram`` in bytes); requests ``POST /api/generate`` (one JSON object per
  line; the last has ``done: true`` and ``prompt_eval_count``, ``prompt_eval_duration``,
  ``eval_count``, ``eval_duration``, ``load_duration``, ``total_duration`` in nanoseconds —
  https://docs.ollama.com/api/usage).
- llama-server (llama.cpp): ``GET /props`` (``default_generation_settings``, ``total_slots``,
  ``model_path``), ``GET /slots``; requests ``POST /completion`` (SSE ``data:`` lines with
  ``content``; the last has ``stop: true`` and ``timings`` {``prompt_n``, ``prompt_ms``,
  ``prompt_per_second``, ``predicted_n``, ``predicted_ms``, ``predicted_per_second``}).
- OpenAI-compatible (vLLM, SGLang, LM Studio, mlx_lm.server, others): ``GET /v1/models``
  (``data[].id``, ``owned_by``); requests ``POST /v1/completions`` with ``stream_options.include_usage``
  (the last chunk's ``usage`` has ``prompt_tokens`` and ``completion_tokens``). The engine is told
  apart by ``owned_by`` (``vllm``, ``sglang``, ``llamacpp``), SGLang's ``/get_model_info``, vLLM's
  ``/version``, LM Studio's ``/api/v0/models``, and mlx_lm.server's ``/health`` answered by Python's
  ``BaseHTTP`` server with an mlx-lm ``system_fingerprint``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from advisor.errors import InputError
from advisor.probe.server_http import HttpReply, ServerProbeError, get_json

__all__ = ["DEFAULT_PORTS", "ENGINE_LABELS", "Event", "ServerInfo", "build_request", "choose_model",
           "identify", "parse_line"]

#: Default ports of the common servers, probed on loopback in this order (each port once).
DEFAULT_PORTS: tuple[tuple[int, str], ...] = (
    (11434, "Ollama"),
    (1234, "LM Studio"),
    (8080, "llama-server / mlx_lm.server"),
    (8000, "vLLM / mlx_lm.server"),
    (30000, "SGLang"),
    (5000, "text-generation-webui / others"),
    (8081, "llama-server (second)"),
)
#: Engine id (one of :data:`advisor.understand.situation.ENGINES`, the one engine classifier's names)
#: → how people name it. The id is also the ``backend`` the advisor stores and diagnoses.
ENGINE_LABELS = {
    "ollama": "Ollama",
    "llama.cpp": "llama-server (llama.cpp)",
    "vllm": "vLLM",
    "sglang": "SGLang",
    "lm-studio": "LM Studio",
    "mlx": "mlx_lm.server",
    "other": "an OpenAI-compatible server",
}
#: Engines that accept ``ignore_eos`` (so the answer has the asked length).
_IGNORE_EOS = {"vllm", "sglang", "llama.cpp"}
#: mlx_lm.server serves the model given on its command line under this name.
MLX_DEFAULT_MODEL = "default_model"


@dataclass
class ServerInfo:
    """One identified server.

    Attributes:
        engine: an :data:`ENGINE_LABELS` key. api: ``ollama``, ``llama.cpp`` or ``openai`` (the protocol).
        models: names the server lists; loaded: models in memory (Ollama ``/api/ps`` entries, raw).
        details: what identification read (version, props, owned_by), for the report.
    """

    engine: str
    api: str
    url: str
    models: list[str] = field(default_factory=list)
    loaded: list[dict[str, Any]] = field(default_factory=list)
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def label(self) -> str:
        return ENGINE_LABELS.get(self.engine, self.engine)


@dataclass
class Event:
    """One parsed stream line: new ``text``, whether it ends the answer, the server's own fields."""

    text: str = ""
    done: bool = False
    report: dict[str, Any] | None = None
    model: str | None = None


def _ok(r: HttpReply) -> bool:
    return 200 <= r.status < 300


def _try(base: str, path: str, timeout: float) -> HttpReply | None:
    try:
        return get_json(base, path, timeout=timeout)
    except ServerProbeError:
        return None


def _ollama(base: str, timeout: float) -> ServerInfo | None:
    tags = _try(base, "/api/tags", timeout)
    if tags is None or not _ok(tags) or not isinstance(tags.data, dict) or not isinstance(tags.data.get("models"), list):
        return None
    version = _try(base, "/api/version", timeout)
    ps = _try(base, "/api/ps", timeout)
    loaded = [m for m in (ps.data.get("models") or []) if isinstance(m, dict)] if (
        ps and _ok(ps) and isinstance(ps.data, dict)) else []
    names = [str(m.get("name") or m.get("model")) for m in tags.data["models"] if isinstance(m, dict)]
    details: dict[str, Any] = {}
    if version and isinstance(version.data, dict) and version.data.get("version"):
        details["version"] = version.data["version"]
    details["tags"] = {str(m.get("name") or m.get("model")): m.get("details") or {} for m in tags.data["models"]
                       if isinstance(m, dict)}
    return ServerInfo(engine="ollama", api="ollama", url=base, models=names, loaded=loaded, details=details)


def _llama_server(base: str, timeout: float) -> ServerInfo | None:
    props = _try(base, "/props", timeout)
    if props is None or not _ok(props) or not isinstance(props.data, dict):
        return None
    d = props.data
    if not ({"default_generation_settings", "total_slots"} & set(d)):
        return None
    models = _openai_models(base, timeout)
    path = d.get("model_path")
    if not models and path:
        models = [str(path).rsplit("/", 1)[-1]]
    details = {k: d[k] for k in ("model_path", "total_slots", "build_info", "n_ctx") if k in d}
    gen = d.get("default_generation_settings")
    if isinstance(gen, dict) and "n_ctx" in gen:
        details["n_ctx"] = gen["n_ctx"]
    slots = _try(base, "/slots", timeout)
    if slots and _ok(slots) and isinstance(slots.data, list):
        details["slots"] = len(slots.data)
    return ServerInfo(engine="llama.cpp", api="llama.cpp", url=base, models=models, details=details)


def _openai_models(base: str, timeout: float, reply: HttpReply | None = None) -> list[str]:
    r = reply or _try(base, "/v1/models", timeout)
    if r is None or not _ok(r) or not isinstance(r.data, dict) or not isinstance(r.data.get("data"), list):
        return []
    return [str(m["id"]) for m in r.data["data"] if isinstance(m, dict) and m.get("id")]


def _openai(base: str, timeout: float) -> ServerInfo | None:
    r = _try(base, "/v1/models", timeout)
    listed = r is not None and _ok(r) and isinstance(r.data, dict) and isinstance(r.data.get("data"), list)
    models = _openai_models(base, timeout, r) if listed else []
    owners = {str(m.get("owned_by", "")).lower() for m in (r.data["data"] if listed else []) if isinstance(m, dict)}  # type: ignore[union-attr]
    details: dict[str, Any] = {"owned_by": sorted(o for o in owners if o)}
    health = _try(base, "/health", timeout)
    server_hdr = ((r.headers if r else {}) or (health.headers if health else {})).get("server", "")
    details["server_header"] = server_hdr
    engine = None
    if "vllm" in owners:
        engine = "vllm"
    elif "sglang" in owners:
        engine = "sglang"
    elif "llamacpp" in owners:
        engine = "llama.cpp"
    if engine is None and listed:
        info = _try(base, "/get_model_info", timeout)
        if info and _ok(info) and isinstance(info.data, dict) and "model_path" in info.data:
            engine = "sglang"
        else:
            ver = _try(base, "/version", timeout)
            if ver and _ok(ver) and isinstance(ver.data, dict) and "version" in ver.data and "uvicorn" in (
                    ver.headers.get("server", "")):
                engine, details["version"] = "vllm", ver.data["version"]
        if engine is None:
            lms = _try(base, "/api/v0/models", timeout)
            if lms and _ok(lms) and isinstance(lms.data, dict) and isinstance(lms.data.get("data"), list):
                engine = "lm-studio"
                details["lmstudio_models"] = [m for m in lms.data["data"] if isinstance(m, dict)][:20]
    healthy_basehttp = bool(health and _ok(health) and isinstance(health.data, dict)
                            and health.data.get("status") == "ok" and "basehttp" in server_hdr.lower())
    if engine is None and healthy_basehttp:
        engine = "mlx"  # mlx_lm.server: Python's http.server, /health {"status": "ok"}
    if engine is None and not listed:
        return None
    # LM Studio's own list says which model is loaded (``state``) and its ``quantization``.
    loaded = [{"name": m.get("id"), **m} for m in details.get("lmstudio_models", []) if m.get("state") == "loaded"]
    return ServerInfo(engine=engine or "other", api="openai", url=base, models=models, loaded=loaded,
                      details=details)


def identify(base: str, *, timeout: float = 2.0) -> ServerInfo | None:
    """Identify the LLM server at ``base`` (``scheme://host:port``), or None when it is not one.

    Raises:
        ServerProbeError: nothing listens there (connection refused or timeout), or it wants an API key.
    """
    get_json(base, "/", timeout=timeout)  # raises when nothing listens
    for probe in (_ollama, _llama_server, _openai):
        info = probe(base, timeout)
        if info is not None:
            return info
    locked = _try(base, "/v1/models", timeout)
    if locked is not None and locked.status in (401, 403):
        raise ServerProbeError(f"{base} refuses /v1/models without an API key (HTTP {locked.status}); the server "
                               "probe measures servers that answer without one")
    return None


def choose_model(info: ServerInfo, wanted: str | None = None) -> str:
    """The model to measure: ``wanted`` (exact, then unique substring), else the one in memory, else the first.

    Raises:
        InputError: ``wanted`` matches none or several of the served models (the message lists them).
        ServerProbeError: the server lists no model at all (and is not mlx_lm.server).
    """
    names = list(dict.fromkeys(info.models))
    loaded = [str(m.get("name") or m.get("model")) for m in info.loaded]
    if wanted:
        w = wanted.strip().lower()
        exact = [n for n in names if n.lower() == w]
        if exact:
            return exact[0]
        part = [n for n in names if w in n.lower()]
        if len(part) == 1:
            return part[0]
        if not names and info.engine != "ollama":
            return wanted.strip()
        listing = ", ".join(names[:20]) or "none"
        what = "several" if part else "none"
        raise InputError(f"--server-model {wanted!r} matches {what} of the models {info.label} serves: {listing}")
    if info.engine == "mlx":
        return MLX_DEFAULT_MODEL  # the model on mlx_lm.server's command line; other names would load a model
    for n in loaded:
        if n in names or not names:
            return n
    if names:
        return names[0]
    raise ServerProbeError(f"{info.label} at {info.url} lists no model to measure (pull or load one first)")


def display_model(info: ServerInfo, model: str) -> str:
    """The name to show and store for ``model`` (mlx_lm.server's ``default_model`` → its model path)."""
    if model == MLX_DEFAULT_MODEL and info.models:
        paths = [m for m in info.models if m.startswith("/") or ":\\" in m]
        return (paths or info.models)[-1].rstrip("/").rsplit("/", 1)[-1]
    return model


def build_request(info: ServerInfo, model: str, prompt: str, gen_tokens: int, *, chat: bool = False,
                  minimal: bool = False, temperature: float = 0.0) -> tuple[str, dict[str, Any]]:
    """(path, JSON body) of one streamed request of ``gen_tokens`` tokens (no prompt cache where it can be said).

    ``minimal`` leaves out the optional OpenAI fields (``stream_options``, ``ignore_eos``) for strict servers.
    """
    if info.api == "ollama":
        return "/api/generate", {"model": model, "prompt": prompt, "stream": True,
                                 "options": {"num_predict": gen_tokens, "temperature": temperature}}
    if info.api == "llama.cpp":
        return "/completion", {"prompt": prompt, "n_predict": gen_tokens, "stream": True, "cache_prompt": False,
                               "temperature": temperature, "ignore_eos": True}
    body: dict[str, Any] = {"model": model, "stream": True, "max_tokens": gen_tokens, "temperature": temperature}
    if not minimal:
        body["stream_options"] = {"include_usage": True}
        if info.engine in _IGNORE_EOS:
            body["ignore_eos"] = True
    if chat:
        body["messages"] = [{"role": "user", "content": prompt}]
        return "/v1/chat/completions", body
    body["prompt"] = prompt
    return "/v1/completions", body


_OLLAMA_FIELDS = ("total_duration", "load_duration", "prompt_eval_count", "prompt_eval_cached_count",
                  "prompt_eval_duration", "eval_count", "eval_duration", "done_reason")


def parse_line(api: str, line: bytes) -> Event | None:
    """One stream line → :class:`Event`; None for keep-alives, comments and lines that are not JSON.

    Raises:
        ServerProbeError: the line carries an ``error`` object (the server failed mid-stream).
    """
    s = line.decode("utf-8", errors="replace").strip()
    if not s or s.startswith(":"):
        return None
    if s.startswith("data:"):
        s = s[5:].strip()
        if s == "[DONE]":
            return Event(done=True)
    try:
        d = json.loads(s)
    except ValueError:
        return None
    if not isinstance(d, dict):
        return None
    if d.get("error"):
        e = d["error"]
        raise ServerProbeError(f"the server failed mid-answer: {str(e.get('message', e) if isinstance(e, dict) else e)[:200]}")
    if api == "ollama":
        text = d.get("response")
        if text is None and isinstance(d.get("message"), dict):
            text = d["message"].get("content")
        rep = {k: d[k] for k in _OLLAMA_FIELDS if k in d} if d.get("done") else None
        return Event(text=str(text or ""), done=bool(d.get("done")), report=rep, model=d.get("model"))
    if api == "llama.cpp" and "content" in d:
        rep = None
        if d.get("stop"):
            rep = {k: d[k] for k in ("timings", "tokens_evaluated", "tokens_predicted", "tokens_cached",
                                     "stop_type", "truncated") if k in d}
        return Event(text=str(d.get("content") or ""), done=bool(d.get("stop")), report=rep, model=d.get("model"))
    text = ""
    for ch in d.get("choices") or []:
        if isinstance(ch, dict):
            delta: dict[str, Any] = ch["delta"] if isinstance(ch.get("delta"), dict) else {}
            text += str(ch.get("text") or delta.get("content") or delta.get("reasoning_content") or "")
    rep = None
    if isinstance(d.get("usage"), dict) or isinstance(d.get("timings"), dict):
        rep = {k: d[k] for k in ("usage", "timings") if isinstance(d.get(k), dict)}
    return Event(text=text, report=rep, model=d.get("model"))
