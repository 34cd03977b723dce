"""A request-body cap for the app's HTTP API (an ASGI middleware, no Gradio import).

Without it the server accepted a 60 MB JSON body and kept the memory. A body over the cap is
answered ``413 Payload Too Large`` when it announces its length; a chunked body is cut off (the app
sees the client go away) once it passes the cap. Uploads (``/upload``) get the upload limit, every
other route :data:`MAX_BODY_BYTES`.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

__all__ = ["MAX_BODY_BYTES", "MAX_UPLOAD_BODY_BYTES", "BodyCap"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

# The largest text an endpoint reads is 200,000 characters (/import); JSON-escaped as \\uXXXX that is
# 1.2 MB. 2 MB leaves room for the facts JSON next to it.
MAX_BODY_BYTES = 2 * 1024 * 1024
MAX_UPLOAD_BODY_BYTES = 6 * 1024 * 1024  # the 5 MB upload limit plus multipart framing


class BodyCap:
    """ASGI middleware: refuse request bodies over ``max_bytes`` (``upload_bytes`` on upload routes)."""

    def __init__(self, app: Callable[..., Awaitable[None]], max_bytes: int = MAX_BODY_BYTES,
                 upload_bytes: int = MAX_UPLOAD_BODY_BYTES) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.upload_bytes = upload_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope.get("type") != "http":
            await self.app(scope, receive, send)
            return
        cap = self.upload_bytes if str(scope.get("path", "")).rstrip("/").endswith("/upload") else self.max_bytes
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

        async def capped() -> Message:
            nonlocal seen
            msg = await receive()
            if msg.get("type") == "http.request":
                seen += len(msg.get("body") or b"")
                if seen > cap:
                    return {"type": "http.disconnect"}
            return msg

        await self.app(scope, capped, send)


async def _too_large(send: Send, cap: int) -> None:
    body = json.dumps({"error": f"The request is larger than {cap // (1024 * 1024)} MB; send less text."}).encode()
    await send({"type": "http.response.start", "status": 413,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})
