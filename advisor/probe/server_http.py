"""HTTP plumbing of the server probe: URL checks, JSON GETs and streamed POSTs, all with timeouts.

Only the standard library (``http.client``) is used, so every read has a socket timeout and the
arrival time of each streamed line is taken the moment it is read.

Security: :func:`check_url` accepts a non-loopback address only when the caller says the person
typed it on the command line (``allow_remote=True``); discovery and the web app never pass that.
"""

from __future__ import annotations

import http.client
import ipaddress
import json
import socket
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from advisor.errors import InputError, ProbeError

__all__ = ["HttpReply", "ServerProbeError", "check_url", "get_json", "is_loopback_host", "post_stream"]

#: Seconds to open a TCP connection; local servers answer in microseconds.
CONNECT_TIMEOUT_S = 3.0
#: Longest body read for a JSON endpoint (a model list is a few kB).
MAX_JSON_BYTES = 4_000_000
LOOPBACK_NAMES = {"localhost", "localhost.localdomain", "ip6-localhost"}


class ServerProbeError(ProbeError):
    """The server cannot be measured (not an LLM server, an HTTP error, a timeout). One-line message."""


@dataclass
class HttpReply:
    """A finished GET: status code, headers (lower-case names), parsed JSON (None if not JSON), text."""

    status: int
    headers: dict[str, str] = field(default_factory=dict)
    data: Any = None
    text: str = ""


def is_loopback_host(host: str) -> bool:
    """True for ``127.0.0.0/8``, ``::1`` and ``localhost`` (names are not resolved: DNS could lie)."""
    h = (host or "").strip().strip("[]").lower()
    if h in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(h).is_loopback
    except ValueError:
        return False


def check_url(url: str, *, allow_remote: bool = False) -> str:
    """Normalise a server address to ``scheme://host:port`` and enforce the loopback rule.

    ``127.0.0.1:11434``, ``http://localhost:8080/v1`` and ``http://[::1]:8000/`` are accepted; an
    OpenAI-style ``/v1`` suffix is dropped (the probe adds its own paths).

    Raises:
        InputError: not an http(s) address, no host, a bad port, or a non-loopback host without
            ``allow_remote``.
    """
    raw = (url or "").strip()
    if not raw:
        raise InputError("no server address given")
    if "://" not in raw:
        raw = "http://" + raw
    parts = urlsplit(raw)
    if parts.scheme not in ("http", "https"):
        raise InputError(f"{url!r} is not an http:// or https:// address")
    try:
        port = parts.port
    except ValueError as e:
        raise InputError(f"{url!r} has a bad port: {e}") from None
    host = parts.hostname or ""
    if not host:
        raise InputError(f"{url!r} has no host name")
    if not allow_remote and not is_loopback_host(host):
        raise InputError(f"{host} is not a loopback address; the server probe only measures servers on this "
                         "machine unless you pass their address on the command line")
    port = port or (443 if parts.scheme == "https" else 80)
    shown = f"[{host}]" if ":" in host else host
    return f"{parts.scheme}://{shown}:{port}"


def _connection(base: str, timeout: float) -> http.client.HTTPConnection:
    parts = urlsplit(base)
    cls = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    return cls(parts.hostname or "127.0.0.1", parts.port, timeout=timeout)


def _fail(base: str, path: str, e: BaseException) -> ServerProbeError:
    if isinstance(e, socket.timeout | TimeoutError):
        return ServerProbeError(f"{base}{path} did not answer in time")
    if isinstance(e, ConnectionRefusedError):
        return ServerProbeError(f"nothing is listening on {base}")
    return ServerProbeError(f"{base}{path} failed: {type(e).__name__}: {str(e).splitlines()[0][:160] if str(e) else ''}")


def get_json(base: str, path: str, *, timeout: float = 3.0) -> HttpReply:
    """GET ``base + path``; the body is parsed as JSON when it is JSON.

    Raises:
        ServerProbeError: connection refused, timeout, or a broken HTTP exchange.
    """
    conn = _connection(base, min(timeout, CONNECT_TIMEOUT_S))
    try:
        conn.connect()
        if conn.sock is not None:
            conn.sock.settimeout(timeout)
        conn.request("GET", path, headers={"Accept": "application/json"})
        resp = conn.getresponse()
        body = resp.read(MAX_JSON_BYTES)
        headers = {k.lower(): v for k, v in resp.getheaders()}
    except (OSError, http.client.HTTPException) as e:
        raise _fail(base, path, e) from None
    finally:
        conn.close()
    text = body.decode("utf-8", errors="replace")
    try:
        data = json.loads(text) if text.strip() else None
    except ValueError:
        data = None
    return HttpReply(status=resp.status, headers=headers, data=data, text=text[:2000])


def post_stream(base: str, path: str, body: dict[str, Any], *, timeout: float = 60.0) -> Iterator[tuple[float, bytes]]:
    """POST JSON and yield ``(perf_counter time, line)`` for every non-empty line of the streamed reply.

    The clock starts before the request is sent (``time.perf_counter``); the first tuple yielded is
    ``(t_sent, b"")`` so callers can measure TTFT from it. ``timeout`` bounds every single read
    (a model that loads for longer than that fails the request).

    Raises:
        ServerProbeError: connection failure, timeout, or a non-2xx status (with the server's message).
    """
    payload = json.dumps(body).encode()
    conn = _connection(base, CONNECT_TIMEOUT_S)
    try:
        conn.connect()
        if conn.sock is not None:
            conn.sock.settimeout(timeout)
        t0 = time.perf_counter()
        conn.request("POST", path, body=payload,
                     headers={"Content-Type": "application/json", "Accept": "text/event-stream, application/json"})
        yield t0, b""
        resp = conn.getresponse()
        if resp.status >= 300:
            msg = resp.read(4000).decode("utf-8", errors="replace").strip()
            try:
                err = json.loads(msg)
                if isinstance(err, dict):
                    e = err.get("error", err)
                    msg = str(e.get("message", e) if isinstance(e, dict) else e)
            except ValueError:
                pass
            raise ServerProbeError(f"{base}{path} answered HTTP {resp.status}: {msg.splitlines()[0][:200] if msg else resp.reason}")
        while True:
            line = resp.readline(1_000_000)
            if not line:
                break
            line = line.strip()
            if line:
                yield time.perf_counter(), line
    except ServerProbeError:
        raise
    except (OSError, http.client.HTTPException) as e:
        raise _fail(base, path, e) from None
    finally:
        conn.close()
