"""Serve the advisor's app (called by ``advisor serve``).

Safe defaults: loopback only, no share link, no monitoring page, no error details to the browser,
uploads capped at 5 MB, a bounded queue. On a non-loopback host the probe is turned off unless the
caller asks for it, because it would measure the server, not the visitor's machine.
"""

from __future__ import annotations

import ipaddress
import sys
from typing import Any

__all__ = ["is_loopback", "launch", "launch_options"]

LOOPBACK_NAMES = {"localhost", "localhost.localdomain", "ip6-localhost"}


def is_loopback(host: str) -> bool:
    """True for ``127.0.0.0/8``, ``::1`` and ``localhost``."""
    h = (host or "").strip().strip("[]").lower()
    if h in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(h).is_loopback
    except ValueError:
        return False


def launch_options(*, host: str = "127.0.0.1", port: int | None = 7860, share: bool = False) -> dict[str, Any]:
    """Keyword arguments for ``Blocks.launch()`` with the production settings (theme included)."""
    from starlette.middleware import Middleware

    from ui.app import theme_kwargs
    from ui.bodycap import BodyCap

    return {
        "app_kwargs": {"middleware": [Middleware(BodyCap)]},  # request bodies capped (ui/bodycap.py)
        "server_name": host,
        "server_port": port,
        "share": share,
        "max_file_size": "5mb",
        "show_error": False,
        "enable_monitoring": False,
        "ssr_mode": False,
        "mcp_server": False,
        **theme_kwargs(),
    }


def launch(
    store_path: str | None = None,
    host: str = "127.0.0.1",
    port: int = 7860,
    allow_probe: bool | None = None,
    share: bool = False,
    **launch_kwargs: Any,
) -> None:
    """Open the knowledge store, build the app and serve it (blocks until stopped).

    Args:
        store_path (str | None): knowledge store path, ``":memory:"`` or a Parquet folder; None uses
            the default store file.
        host (str): interface to bind. Default: ``127.0.0.1``. Anything else prints a warning.
        port (int): TCP port. Default: ``7860``.
        allow_probe (bool | None): offer the probe button. None: only on a loopback host.
        share (bool): open a public gradio.live tunnel. Default: ``False``; prints a warning when set.
        **launch_kwargs: passed to ``Blocks.launch()`` (e.g. ``prevent_thread_lock`` in tests).
    """
    from knowledge.store import Store
    from ui.app import build_app

    local = is_loopback(host)
    if allow_probe is None:
        allow_probe = local and not share
    if not local:
        msg = (f"WARNING: serving on {host}, reachable from other machines. The probe button is "
               + ("ON: it measures this server, not the visitors' machines." if allow_probe
                  else "off (pass allow_probe=True / --allow-probe to turn it on)."))
        print(msg, file=sys.stderr)
    if share:
        print("WARNING: --share opens a public gradio.live link to this app.", file=sys.stderr)
    store = Store(store_path)
    from knowledge.storefile import mark_serving

    mark_serving(store.path)  # `advisor db recover` refuses a store a server is using, --force or not
    demo = build_app(store, allow_probe=bool(allow_probe), everyone_remote=share)
    opts = launch_options(host=host, port=port, share=share)
    opts.setdefault("quiet", True)  # Gradio's own banner suggests share=True; say what applies here instead
    opts.update(launch_kwargs)
    shown = "localhost" if host in ("0.0.0.0", "::") else host
    print(f"Prefill/decode advisor on http://{shown}:{port}  (store: {store.path}; Ctrl+C to stop"
          + ("" if share else "; --share for a public link") + ")", file=sys.stderr, flush=True)
    demo.launch(**opts)
