"""A request-body cap for the app's HTTP API (an ASGI middleware, no Gradio import).

Without it the server accepted a 60 MB JSON body and kept the memory. A body over the cap is
answered ``413 Payload Too Large`` when it announces its length; a chunked body is cut off (the app
sees the client go away) once it passes the cap. Uploads (``/upload``) get the upload limit, every
other route :data:`MAX_BODY_BYTES`.

A body must also arrive in time: one that is still incomplete :data:`BODY_TIMEOUT_S` seconds after the
request began (:data:`UPLOAD_TIMEOUT_S` for uploads) is cut off the same way. Without that, a client
that announces 1,000 bytes and sends 9 (slowloris) held its connection, and the app's handler, forever:
300 such connections stayed open after 70 s.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

__all__ = ["BODY_TIMEOUT_S", "MAX_BODY_BYTES", "MAX_UPLOAD_BODY_BYTES", "UPLOAD_TIMEOUT_S", "BodyCap"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

# The largest text an endpoint reads is 200,000 characters (/import); JSON-escaped as \\uXXXX that is
# 1.2 MB. 2 MB leaves room for the facts JSON next to it.
MAX_BODY_BYTES = 2 * 1024 * 1024
MAX_UPLOAD_BODY_BYTES = 6 * 1024 * 1024  # the 5 MB upload limit plus multipart framing
# 2 MB in 30 s is 70 kB/s, slower than any link a person uses; an upload gets 5 minutes (6 MB at 20 kB/s).
BODY_TIMEOUT_S = 30.0
UPLOAD_TIMEOUT_S = 300.0


class BodyCap:
    """ASGI middleware: refuse request bodies over ``max_bytes`` (``upload_bytes`` on upload routes)."""

    def __init__(self, app: Callable[..., Awaitable[None]], max_bytes: int = MAX_BODY_BYTES,
                 upload_bytes: int = MAX_UPLOAD_BODY_BYTES, timeout_s: float = BODY_TIMEOUT_S,
                 upload_timeout_s: float = UPLOAD_TIMEOUT_S) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.upload_bytes = upload_bytes
        self.timeout_s = timeout_s
        self.upload_timeout_s = upload_timeout_s

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope.get("type") != "http":
            await self.app(scope, receive, send)
            return
        upload = str(scope.get("path", "")).rstrip("/").endswith("/upload")
        cap = self.upload_bytes if upload else self.max_bytes
        loop = asyncio.get_running_loop()
        deadline = loop.time() + (self.upload_timeout_s if upload else self.timeout_s)
        length = None
        for k, v in scope.get("headers") or []:
            if k.lower() == b"content-length":
                try:
                    length = int(v)
                except ValueError:
                    length = cap + 1
        if length is not None and length > cap:
            await _too_large(send, cap)
            return
        seen = 0
        complete = False

        async def capped() -> Message:
            nonlocal seen, complete
            if complete:  # the body is in: later receives wait for the client to go (streamed answers)
                return await receive()
            try:
                msg = await asyncio.wait_for(receive(), timeout=max(0.0, deadline - loop.time()))
            except TimeoutError:
                return {"type": "http.disconnect"}  # a body trickled in too slowly (slowloris)
            if msg.get("type") == "http.request":
                seen += len(msg.get("body") or b"")
                if seen > cap:
                    return {"type": "http.disconnect"}
                complete = not msg.get("more_body")
            return msg

        await self.app(scope, capped, send)


async def _too_large(send: Send, cap: int) -> None:
    body = json.dumps({"error": f"The request is larger than {cap // (1024 * 1024)} MB; send less text."}).encode()
    await send({"type": "http.response.start", "status": 413,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})
