"""The "Probe my LLM server" panel of the app (its own module so the app layout stays small).

It measures the LLM servers on the loopback default ports of the computer running the advisor
(never an address typed by a visitor), and it is offered exactly when the kernel probe is: on a
non-loopback host it is off unless the operator passed ``--allow-probe``, so a remote visitor can
never make the advisor send requests into its own network.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gradio as gr

from advisor import service
from advisor.errors import AdvisorError
from knowledge.store import Store

__all__ = ["SERVER_OFF_TEXT", "SERVER_TEXT", "add_server_probe", "served_models", "server_probe_markdown"]

SERVER_TEXT = ("Measures the LLM server **running on the computer that runs this advisor** (Ollama, LM Studio, "
               "llama-server, vLLM, SGLang, mlx_lm.server on their usual ports) with a short streamed benchmark "
               "of random prompts (about a minute): TTFT, prefill and decode tok/s, inter-token latency, and what "
               "the server itself reports. Leave the model empty to measure the one it has loaded.")
SERVER_OFF_TEXT = ("The server probe is turned off on this server: it would measure this server's own LLM "
                   "servers, not yours. Run `advisor probe --server` on your machine and paste its output.")
#: ``run(store, model, progress) -> list[ServerProbeResult]``; tests inject a fake.
ServerProbeFn = Callable[[Store, str | None, Callable[[float, str], None]], list[Any]]


def _default_run(store: Store, model: str | None, progress: Callable[[float, str], None]) -> list[Any]:
    return service.run_server_probe(store, model=model, progress=progress)


def served_models(find: Callable[[], list[Any]] | None = None) -> tuple[list[str], str]:
    """The models the loopback LLM servers serve (for the model choice) and a markdown list of the servers."""
    from advisor.probe.server import find_servers

    try:
        infos = (find or find_servers)()
    except AdvisorError as e:
        return [], f"No LLM server found: {e}"
    names = list(dict.fromkeys(m for i in infos for m in i.models))
    lines = [f"- {i.label} at `{i.url}`: {', '.join(i.models[:12]) or 'no model listed'}" for i in infos]
    from ui.handlers import safe_markdown  # model names come from the server: text, never HTML

    return names, safe_markdown("\n".join(lines))


def server_probe_markdown(store: Store, model: str | None, progress: Callable[[float, str], None],
                          run: ServerProbeFn | None = None) -> str:
    """Run the server probe (loopback servers only) and describe each server; errors become one message."""
    from advisor.probe.server_report import result_markdown
    from ui import handlers

    try:
        results = (run or _default_run)(store, (model or "").strip()[:200] or None, progress)
    except AdvisorError as e:
        return f"The server probe could not measure: {handlers.friendly_error(e)}"
    except Exception as e:  # noqa: BLE001 - the browser gets a generic message, the log the details
        return handlers.unexpected_error("server probe", e)
    return handlers.safe_markdown("\n\n---\n\n".join(result_markdown(r, r.verdict) for r in results))


def add_server_probe(store: Store, *, allow_probe: bool, run: ServerProbeFn | None = None) -> None:
    """Add the panel inside the current ``gr.Blocks`` layout and wire its button.

    Args:
        allow_probe: the same switch as the kernel probe; False shows the panel disabled with why.
        run: the probe to call (default :func:`advisor.service.run_server_probe` on loopback ports).
    """
    with gr.Group():
        gr.Markdown("### Probe my LLM server\n" + (SERVER_TEXT if allow_probe else SERVER_OFF_TEXT),
                    elem_id="server-probe-text", padding=True)
        model = gr.Dropdown(choices=[], value=None, label="Model (optional: the one in memory when empty)",
                            allow_custom_value=True, elem_id="server-probe-model", interactive=allow_probe)
        with gr.Row():
            find = gr.Button("Find my servers", elem_id="server-find-btn", interactive=allow_probe, size="sm")
            btn = gr.Button("Probe my LLM server", elem_id="server-probe-btn", interactive=allow_probe)
        out = gr.Markdown(elem_id="server-probe-out", padding=True)
    if not allow_probe:
        return

    def on_click(name: str | None, progress: gr.Progress = gr.Progress()) -> str:  # noqa: B008 - Gradio's idiom
        progress(0.0, desc="Looking for LLM servers on this machine…")

        def report(fraction: float, desc: str) -> None:
            progress(max(0.0, min(1.0, float(fraction))), desc=desc or "Measuring…")

        return server_probe_markdown(store, name, report, run)

    def on_find() -> tuple[Any, str]:
        names, listing = served_models()
        return gr.update(choices=names, value=None), listing

    find.click(on_find, None, [model, out], concurrency_limit=1, concurrency_id="probe", api_visibility="private")
    btn.click(lambda: gr.update(interactive=False), None, btn, queue=False, api_visibility="private").then(
        on_click, [model], out, concurrency_limit=1, concurrency_id="probe", api_visibility="undocumented",
        api_name="server_probe", show_progress="full",
    ).then(lambda: gr.update(interactive=True), None, btn, queue=False, api_visibility="private")
