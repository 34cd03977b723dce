"""The Gradio Blocks app: chat, facts, verdict card, charts, probe, paste, export, JSON API.

``build_app()`` builds the app and never launches it; :func:`ui.server.launch` does. Theme and CSS
belong to ``launch()`` in Gradio 6, so :func:`theme_kwargs` gives them to the server and the
tests.

Named API endpoints (``gradio_client.Client(url).predict(..., api_name=...)``); every payload is a
string so a client, which never sees ``gr.State``, can carry the facts itself:

* ``/ask``      (message, facts_json="") → (reply_markdown, verdict_json or "null", facts_json)
* ``/predict``  (scenario_json) → prediction_json or ``{"error": ...}``
* ``/diagnose`` (scenario_json) → verdict_json or ``{"error": ...}``
* ``/import``   (text, hardware="") → import_json or ``{"error": ...}``
* ``/compare``  (request_json) → comparison_json or ``{"error": ...}``; the request holds the fields of
  :class:`advisor.compare.CompareRequest` (``model``, ``concurrency``, ``candidates``, ``prices`` …)
"""

# No ``from __future__ import annotations`` here: ``gr.api`` reads the endpoint functions' real
# annotations to type the API (string annotations become one untyped output).
import atexit
import logging
import shutil
import tempfile
import threading
from typing import Any

import gradio as gr

from advisor import service
from knowledge.store import Store
from ui import api, charts, handlers, turns
from ui.compare_tab import api_compare, build_compare_tab, compare_choices, fill_updates, run_compare
from ui.handlers import ProbeFn

__all__ = ["CSS", "api_compare", "build_app", "compare_choices", "run_compare", "theme_kwargs"]

log = logging.getLogger(__name__)

TITLE = "Prefill/decode advisor"
INTRO = ("Tell me what you run (model, quantization, prompt and answer length, users) and on what hardware: "
         "I say how fast it will feel — how long until the first word (**prefill**, reading your prompt) and how "
         "fast the answer streams (**decode**) — what limits it, and the cheapest change that helps.")
PROBE_TEXT = ("The probe measures **the computer running this advisor** (memory bandwidth and matrix-multiply "
              "speed, ~15 s). If this advisor runs on a server, that is the server, not your laptop: to measure "
              "your own machine run `advisor probe` there and paste its output below.")
PROBE_OFF_TEXT = ("The probe is turned off on this server: it would measure the server, not your computer. "
                  "Run `advisor probe` on your own machine and paste its output in “Paste tool output”.")
CHAT_PLACEHOLDER = ("**Try:** “MacBook Air M3 16GB, can I run a 27B model for chat?”, “Should we buy an M3 Ultra, "
                    "two 4090s or an H100 for 20 engineers, 8k prompts?”, or paste what llama-bench printed.")
VERDICT_PLACEHOLDER = "*The numbers and every fix appear here once I know the hardware and the model.*"
CSS = """
#verdict { overflow: visible; }
#verdict table, #probe-out table, #paste-out table { font-size: 0.9em; }
#facts { font-size: 0.92em; }
#quick .wrap { gap: 6px; }
.intro { font-size: 1.02em; }
#compare-table table { font-size: 0.9em; }
#compare-summary { font-size: 0.95em; }
#chat table { font-size: 0.88em; width: auto; max-width: 100%; }
#chat th, #chat td, #verdict th, #verdict td { word-break: normal !important; overflow-wrap: normal !important;
  hyphens: none; }
#chat th, #verdict th { white-space: nowrap; }
#chat details { margin-top: 0.4em; }
#chat details > summary { cursor: pointer; font-weight: 600; }
#chat sub { font-size: 0.86em; opacity: 0.85; }
#verdict code, #chat code { white-space: pre-wrap; overflow-wrap: anywhere; }
footer { display: none !important; }
"""
# After a reply: show its top. A reply taller than the chat would otherwise open on its last lines.
SCROLL_TO_ANSWER_JS = """
() => { setTimeout(() => {
  const bots = document.querySelectorAll('#chat .bot');
  const last = bots[bots.length - 1];
  if (!last) return;
  let box = last.parentElement;
  while (box && !(box.scrollHeight > box.clientHeight + 4 && /(auto|scroll)/.test(getComputedStyle(box).overflowY))) {
    box = box.parentElement;
  }
  if (!box) return;
  const top = last.getBoundingClientRect().top - box.getBoundingClientRect().top;
  box.scrollTop = Math.max(0, box.scrollTop + top - 48);
}, 60); }
"""


# Gradio 6.31's English locale lacks the key its status tracker announces when an event completes, so the raw
# key "common.complete" reached the page (screen readers, copied text): give it words.
I18N_FIXES = {"en": {"common.complete": "Done"}}


def theme_kwargs() -> dict[str, Any]:
    """``launch()`` keyword arguments for the look (theme, CSS, missing UI words), shared by server and tests."""
    return {"theme": gr.themes.Soft(), "css": CSS, "i18n": gr.I18n(**I18N_FIXES)}


def _choices_update(choices: list[str], question: str) -> Any:
    return gr.update(choices=choices, value=None, visible=bool(choices),
                     label=question or "Quick replies")


def build_app(
    store: Store | None = None,
    *,
    allow_probe: bool = True,
    probe_fn: ProbeFn | None = None,
    export_dir: str | None = None,
    queue_size: int = 64,
    concurrency: int = 8,
    everyone_remote: bool = False,
) -> gr.Blocks:
    """Build the advisor's Gradio app (not launched).

    Args:
        store (Store | None): knowledge store; default opens the user's store file.
        allow_probe (bool): offer the "Probe this machine" button. Default: ``True``.
        probe_fn (ProbeFn | None): ``probe_fn(store, progress) -> ProbeResult | str`` with
            ``progress(fraction, description)``; default runs the real kernel probe. Tests inject a
            fast fake here.
        export_dir (str | None): where verdict downloads are written. Default: a new temp dir.
        queue_size (int): queue ``max_size``; more waiting events are rejected.
        concurrency (int): default concurrency limit of each event (the probe always runs alone).
        everyone_remote (bool): treat every visitor as remote (a share tunnel arrives from loopback).
            Otherwise a visitor whose client address is not loopback is remote: "my computer" is then
            never answered with this server's probe (:func:`advisor.service.caller`).

    Returns:
        gr.Blocks: call ``.launch(**theme_kwargs(), ...)`` or :func:`ui.server.launch`.
    """
    store = store if store is not None else Store()
    # The calibration fit takes seconds; build it while the page loads, not on the first question.
    threading.Thread(target=service.warm_up, args=(store,), name="advisor-warm-up", daemon=True).start()
    run_probe_fn: ProbeFn = probe_fn or handlers.default_probe
    export_root: dict[str, str] = {}

    def out_dir() -> str:  # made on the first export, never on a plain turn; ours is removed at exit
        if "dir" not in export_root:
            export_root["dir"] = export_dir or tempfile.mkdtemp(prefix="advisor-export-")
            if export_dir is None:
                atexit.register(shutil.rmtree, export_root["dir"], ignore_errors=True)
        return export_root["dir"]

    def local(request: Any) -> Any:
        """The context for one request: local only for a loopback client (and no share tunnel)."""
        return service.caller(local=not everyone_remote and handlers.request_is_local(request))

    with gr.Blocks(title=TITLE, analytics_enabled=False, delete_cache=(3600, 86400)) as demo:
        facts_state = gr.State({})
        verdict_state = gr.State(None)

        gr.Markdown(f"# {TITLE}")
        gr.Markdown(INTRO, elem_classes=["intro"])
        with gr.Tabs(elem_id="main-tabs", selected="tab-advisor") as main_tabs:
            with gr.Tab("Advisor", id="tab-advisor"), gr.Row(equal_height=False):
                with gr.Column(scale=7, min_width=420):
                    chatbot = gr.Chatbot(elem_id="chat", label="Chat", show_label=False, height=560,
                                         placeholder=CHAT_PLACEHOLDER, buttons=["copy"], autoscroll=False)
                    open_cmp = gr.Button("Open these options in Compare →", elem_id="open-compare", visible=False,
                                         size="sm", variant="secondary")
                    quick = gr.Radio(choices=[], value=None, label="Quick replies", elem_id="quick",
                                     visible=False, interactive=True)
                    with gr.Row(equal_height=True):
                        msg = gr.Textbox(elem_id="msg", show_label=False, scale=8, lines=1, max_lines=8,
                                         placeholder="e.g. “RTX 4090, Qwen 2.5 32B at Q4_K_M”",
                                         autofocus=True, max_length=handlers.MAX_MESSAGE_CHARS)
                        send = gr.Button("Send", variant="primary", scale=1, min_width=80, elem_id="send")
                    with gr.Accordion("Paste tool output (llama-bench, ollama --verbose, mlx_lm …)", open=False,
                                      elem_id="paste-acc"):
                        paste = gr.Textbox(elem_id="paste", lines=6, max_lines=20, show_label=False,
                                           placeholder="| model | size | params | backend | ngl | test | t/s |\n…",
                                           max_length=handlers.MAX_MESSAGE_CHARS * 2)
                        with gr.Row():
                            upload = gr.File(label="…or upload a file", file_count="single", type="filepath",
                                             file_types=[".txt", ".md", ".log", ".json", ".jsonl", ".csv"],
                                             elem_id="upload", height=110)
                            paste_hw = gr.Textbox(label="Hardware (optional)", elem_id="paste-hw",
                                                  placeholder="e.g. MacBook Pro M3 Max 64GB")
                        paste_btn = gr.Button("Read this output", elem_id="paste-btn")
                        paste_out = gr.Markdown(elem_id="paste-out")
                    with gr.Group():
                        gr.Markdown("### Probe this machine\n" + (PROBE_TEXT if allow_probe else PROBE_OFF_TEXT),
                                    elem_id="probe-text", padding=True)
                        probe_btn = gr.Button("Probe this machine", elem_id="probe-btn", interactive=allow_probe)
                        probe_out = gr.Markdown(elem_id="probe-out", padding=True)
                    from ui.server_probe import add_server_probe
                    add_server_probe(store, allow_probe=allow_probe)

                with gr.Column(scale=5, min_width=380):
                    gr.Markdown("### What I understood")
                    facts_df = gr.Dataframe(
                        value=handlers.facts_rows({}), headers=["fact", "value"], datatype=["str", "str"],
                        type="array", interactive=True, static_columns=[0], elem_id="facts", show_label=False,
                        max_height=520, wrap=True,
                        column_widths=["42%", "58%"],
                    )
                    facts_note = gr.Markdown(elem_id="facts-note")
                    verdict_md = gr.Markdown(VERDICT_PLACEHOLDER, elem_id="verdict", container=True, padding=True)
                    with gr.Tabs(elem_id="charts"):
                        with gr.Tab("Roofline", id="tab-roofline"):
                            roof_plot = gr.Plot(charts.empty_figure(), elem_id="roofline", show_label=False)
                        with gr.Tab("Time line", id="tab-timeline"):
                            time_plot = gr.Plot(charts.empty_figure(), elem_id="timeline", show_label=False)
                        with gr.Tab("Peers", id="tab-peers"):
                            peers_plot = gr.Plot(charts.empty_figure(), elem_id="peers", show_label=False)
                    with gr.Row():
                        export_btn = gr.Button("Export this verdict", elem_id="export-btn", size="sm",
                                               interactive=False)
                        dl_md = gr.DownloadButton("Download .md", elem_id="export-md", visible=False, size="sm")
                        dl_json = gr.DownloadButton("Download .json", elem_id="export-json", visible=False,
                                                    size="sm")

            with gr.Tab("Compare hardware", id="tab-compare"):
                form = build_compare_tab(store)

        # The reply comes first; the charts follow in a second step so the reply never waits on Plotly.
        verdict_outputs = [verdict_state, verdict_md, export_btn, dl_md, dl_json]
        plots = [roof_plot, time_plot, peers_plot]

        def _verdict_updates(v: Any, stale: bool = False) -> list[Any]:
            if v is None and stale:  # the card was for a machine or model this turn changed: clear it
                return [None, VERDICT_PLACEHOLDER, gr.update(interactive=False), gr.update(visible=False),
                        gr.update(visible=False)]
            if v is None:
                return [gr.skip()] * len(verdict_outputs)
            return [v.model_dump(mode="json"), handlers.safe_markdown(handlers.verdict_card(v)), gr.update(interactive=True),
                    gr.update(visible=False), gr.update(visible=False)]

        def on_charts(v: Any) -> list[Any]:
            if not v:
                return list(turns.verdict_figures(store, None))  # no verdict (or a cleared one): empty charts
            return list(turns.verdict_figures(store, v))

        def _chained(ev: Any) -> None:
            ev.then(None, None, None, js=SCROLL_TO_ANSWER_JS).then(
                on_charts, [verdict_state], plots, api_visibility="private", show_progress="hidden")

        # ------------------------------------------------------------------ chat
        def on_message(message: str, history: Any, facts: dict[str, Any], request: gr.Request) -> list[Any]:
            with local(request):
                view = turns.chat_turn(store, message, history, facts)
            return [view.history, "", view.facts, handlers.facts_rows(view.facts),
                    _choices_update(view.choices, view.question), view.note,
                    gr.update(visible=turns.compare_offer(view.facts)), *_verdict_updates(view.verdict, view.stale)]

        chat_outputs = [chatbot, msg, facts_state, facts_df, quick, facts_note, open_cmp, *verdict_outputs]
        chat_kw: dict[str, Any] = dict(outputs=chat_outputs, api_visibility="private")
        _chained(msg.submit(on_message, [msg, chatbot, facts_state], **chat_kw))
        _chained(send.click(on_message, [msg, chatbot, facts_state], **chat_kw))
        _chained(quick.input(on_message, [quick, chatbot, facts_state], **chat_kw))

        # ------------------------------------------------------------------ facts edits
        def on_facts_edit(rows: Any, facts: dict[str, Any], request: gr.Request) -> list[Any]:
            with local(request):
                new, v, note = handlers.facts_edited(store, rows, facts)
            return [new, handlers.facts_rows(new), note, *_verdict_updates(v)]

        facts_df.input(on_facts_edit, [facts_df, facts_state],
                       [facts_state, facts_df, facts_note, *verdict_outputs], api_visibility="private",
                       trigger_mode="always_last").then(on_charts, [verdict_state], plots, api_visibility="private",
                                                        show_progress="hidden")

        # ------------------------------------------------------------------ paste: answered in the chat
        def on_paste(text: str, file_path: str | None, hw: str, history: Any, facts: dict[str, Any],
                     request: gr.Request) -> list[Any]:
            with local(request):
                view, note = turns.paste_turn(store, text, file_path, hw, history, facts)
            return [note, view.history, view.facts, handlers.facts_rows(view.facts),
                    _choices_update([], "") if view.verdict is not None else gr.skip(),
                    *_verdict_updates(view.verdict, view.stale)]

        paste_io: dict[str, Any] = dict(inputs=[paste, upload, paste_hw, chatbot, facts_state],
                                        outputs=[paste_out, chatbot, facts_state, facts_df, quick, *verdict_outputs],
                                        api_visibility="private")
        _chained(paste_btn.click(on_paste, **paste_io))
        _chained(upload.upload(on_paste, **paste_io))  # an uploaded file is answered at once

        # ------------------------------------------------------------------ exports, when asked
        def on_export(v: Any, facts: dict[str, Any]) -> list[Any]:
            paths = turns.export_now(v, facts, out_dir())
            if paths is None:
                return [gr.update(visible=False), gr.update(visible=False)]
            return [gr.update(value=paths[0], visible=True), gr.update(value=paths[1], visible=True)]

        export_btn.click(on_export, [verdict_state, facts_state], [dl_md, dl_json], api_visibility="private")

        # ------------------------------------------------------------------ chat → Compare tab
        def on_open_compare(facts: dict[str, Any]) -> list[Any]:
            return [*fill_updates(store, facts), gr.Tabs(selected="tab-compare")]

        open_cmp.click(on_open_compare, [facts_state], [*form.fill_targets(), main_tabs],
                       api_visibility="private").then(form.run_fn, form.run_inputs, form.run_outputs,
                                                      api_visibility="private")

        # ------------------------------------------------------------------ probe
        if allow_probe:
            def on_probe(progress: gr.Progress = gr.Progress()) -> str:  # noqa: B008 - Gradio's idiom
                progress(0.0, desc="Starting the probe…")

                def report(fraction: float, desc: str) -> None:
                    progress(max(0.0, min(1.0, float(fraction))), desc=desc or "Probing…")

                return handlers.probe_markdown(store, run_probe_fn, report)

            probe_btn.click(lambda: gr.update(interactive=False), None, probe_btn, queue=False,
                            api_visibility="private").then(
                on_probe, None, probe_out, concurrency_limit=1, concurrency_id="probe",
                api_visibility="undocumented", api_name="probe", show_progress="full",
            ).then(lambda: gr.update(interactive=True), None, probe_btn, queue=False, api_visibility="private")

        # ------------------------------------------------------------------ JSON API
        def ask(message: str = "", facts_json: str = "", request: gr.Request = None) -> tuple[str, str, str]:  # type: ignore[assignment]
            """One chat turn. Returns (reply markdown, verdict JSON or "null", facts JSON for the next turn)."""
            with local(request):
                return api.api_ask(store, message, facts_json)

        def predict(scenario_json: str = "", request: gr.Request = None) -> str:  # type: ignore[assignment]
            """Scenario JSON → Prediction JSON (or {"error": ...})."""
            with local(request):
                return api.api_predict(store, scenario_json)

        def diagnose(scenario_json: str = "", request: gr.Request = None) -> str:  # type: ignore[assignment]
            """Scenario JSON → Verdict JSON (or {"error": ...})."""
            with local(request):
                return api.api_diagnose(store, scenario_json)

        def import_(text: str = "", hardware: str = "", request: gr.Request = None) -> str:  # type: ignore[assignment]
            """Tool output (llama-bench, ollama --verbose, …) → import result JSON (or {"error": ...})."""
            with local(request):
                return api.api_import(store, text, hardware)

        def compare(request_json: str, request: gr.Request = None) -> str:  # type: ignore[assignment]
            """Comparison request JSON (model, concurrency, candidates, …) → ranked comparison JSON (or {"error": ...})."""
            with local(request):
                return api_compare(store, request_json)

        gr.api(ask, api_name="ask")
        gr.api(predict, api_name="predict")
        gr.api(diagnose, api_name="diagnose")
        gr.api(import_, api_name="import")
        gr.api(compare, api_name="compare")

    demo.queue(max_size=queue_size, default_concurrency_limit=concurrency)
    return demo
