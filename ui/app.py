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
import json
import logging
import shutil
import tempfile
from typing import Any

import gradio as gr

from advisor import compare as cmp
from advisor import service
from advisor.errors import AdvisorError, load_json
from knowledge import catalog
from knowledge.store import Store
from ui import charts, handlers
from ui.handlers import ProbeFn

__all__ = ["CSS", "api_compare", "build_app", "compare_choices", "run_compare", "theme_kwargs"]

log = logging.getLogger(__name__)

TITLE = "Prefill/decode advisor"
INTRO = ("Tell me what you run (model, quantization, prompt and answer length, users) and on what hardware: "
         "I predict **prefill** (time to first token) and **decode** (streaming speed), say which one is your "
         "bottleneck, whether your numbers are normal, and which fix helps by how much.")
PROBE_TEXT = ("The probe measures **the computer running this advisor** (memory bandwidth and matrix-multiply "
              "speed, ~15 s). If this advisor runs on a server, that is the server, not your laptop: to measure "
              "your own machine run `advisor probe` there and paste its output below.")
PROBE_OFF_TEXT = ("The probe is turned off on this server: it would measure the server, not your computer. "
                  "Run `advisor probe` on your own machine and paste its output in “Paste tool output”.")
CHAT_PLACEHOLDER = ("**Try:** “I have a MacBook Air M2 with 16 GB” → “Llama 3.1 8B at 4-bit for chat”, "
                    "or “llama-bench says pp512 45, tg128 6 on my laptop — is that normal?”")
CSS = """
#verdict { max-height: 560px; overflow-y: auto; }
#verdict table, #probe-out table, #paste-out table { font-size: 0.9em; }
#facts { font-size: 0.92em; }
#quick .wrap { gap: 6px; }
.intro { font-size: 1.02em; }
#compare-table table { font-size: 0.9em; }
#compare-summary { font-size: 0.95em; }
footer { display: none !important; }
"""


def theme_kwargs() -> dict[str, Any]:
    """``launch()`` keyword arguments for the look (theme and CSS), shared by server and tests."""
    return {"theme": gr.themes.Soft(), "css": CSS}



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
    run_probe_fn: ProbeFn = probe_fn or handlers.default_probe
    out_dir = export_dir or tempfile.mkdtemp(prefix="advisor-export-")
    if export_dir is None:  # ours: removed when the process ends
        atexit.register(shutil.rmtree, out_dir, ignore_errors=True)

    def local(request: Any) -> Any:
        """The context for one request: local only for a loopback client (and no share tunnel)."""
        return service.caller(local=not everyone_remote and handlers.request_is_local(request))

    with gr.Blocks(title=TITLE, analytics_enabled=False, delete_cache=(3600, 86400)) as demo:
        facts_state = gr.State({})
        verdict_state = gr.State(None)

        gr.Markdown(f"# {TITLE}")
        gr.Markdown(INTRO, elem_classes=["intro"])
        with gr.Row(equal_height=False):
            with gr.Column(scale=5, min_width=380):
                chatbot = gr.Chatbot(elem_id="chat", label="Chat", show_label=False, height=500,
                                     placeholder=CHAT_PLACEHOLDER, buttons=["copy"])
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

            with gr.Column(scale=6, min_width=420):
                gr.Markdown("### What I understood")
                facts_df = gr.Dataframe(
                    value=handlers.facts_rows({}), headers=["fact", "value"], datatype=["str", "str"],
                    type="array", interactive=True, static_columns=[0], elem_id="facts", show_label=False,
                    max_height=520, wrap=True,
                    column_widths=["42%", "58%"],
                )
                facts_note = gr.Markdown(elem_id="facts-note")
                verdict_md = gr.Markdown("*The verdict appears here once I know the hardware and the model.*",
                                         elem_id="verdict", container=True, padding=True)
                with gr.Tabs(elem_id="charts"):
                    with gr.Tab("Roofline", id="tab-roofline"):
                        roof_plot = gr.Plot(charts.empty_figure(), elem_id="roofline", show_label=False)
                    with gr.Tab("Time line", id="tab-timeline"):
                        time_plot = gr.Plot(charts.empty_figure(), elem_id="timeline", show_label=False)
                    with gr.Tab("Peers", id="tab-peers"):
                        peers_plot = gr.Plot(charts.empty_figure(), elem_id="peers", show_label=False)
                with gr.Row():
                    dl_md = gr.DownloadButton("Download verdict (.md)", elem_id="export-md", interactive=False,
                                              size="sm")
                    dl_json = gr.DownloadButton("Download verdict (.json)", elem_id="export-json",
                                                interactive=False, size="sm")

        _compare_section(store)

        verdict_outputs = [verdict_state, verdict_md, roof_plot, time_plot, peers_plot, dl_md, dl_json]

        def _verdict_updates(v: Any, facts: dict[str, Any]) -> list[Any]:
            if v is None:
                return [gr.skip()] * len(verdict_outputs)
            card, roof, tl, pe = handlers.verdict_view(store, v)
            try:
                md_path, json_path = handlers.export_files(v, facts, out_dir)
                dls = [gr.update(value=md_path, interactive=True), gr.update(value=json_path, interactive=True)]
            except Exception:  # noqa: BLE001 - a failed export must not hide the verdict
                dls = [gr.skip(), gr.skip()]
            return [v.model_dump(mode="json"), card, roof, tl, pe, *dls]

        # ------------------------------------------------------------------ chat
        def on_message(message: str, history: Any, facts: dict[str, Any], request: gr.Request) -> list[Any]:
            with local(request):
                view = handlers.chat_turn(store, message, history, facts)
            return [view.history, "", view.facts, handlers.facts_rows(view.facts),
                    _choices_update(view.choices, view.question), view.note,
                    *_verdict_updates(view.verdict, view.facts)]

        chat_outputs = [chatbot, msg, facts_state, facts_df, quick, facts_note, *verdict_outputs]
        chat_kw: dict[str, Any] = dict(outputs=chat_outputs, api_visibility="private")
        msg.submit(on_message, [msg, chatbot, facts_state], **chat_kw)
        send.click(on_message, [msg, chatbot, facts_state], **chat_kw)
        quick.input(on_message, [quick, chatbot, facts_state], **chat_kw)

        # ------------------------------------------------------------------ facts edits
        def on_facts_edit(rows: Any, facts: dict[str, Any], request: gr.Request) -> list[Any]:
            with local(request):
                new, v, note = handlers.facts_edited(store, rows, facts)
            return [new, handlers.facts_rows(new), note, *_verdict_updates(v, new)]

        facts_df.input(on_facts_edit, [facts_df, facts_state],
                       [facts_state, facts_df, facts_note, *verdict_outputs], api_visibility="private",
                       trigger_mode="always_last")

        # ------------------------------------------------------------------ paste
        def on_paste(text: str, file_path: str | None, hw: str, facts: dict[str, Any], request: gr.Request) -> list[Any]:
            with local(request):
                message, v, new_facts = handlers.import_paste_with_facts(store, text, file_path, hw, facts)
            merged = {**(facts or {}), **(new_facts or {})}
            return [message, merged, handlers.facts_rows(merged), *_verdict_updates(v, merged)]

        paste_btn.click(on_paste, [paste, upload, paste_hw, facts_state],
                        [paste_out, facts_state, facts_df, *verdict_outputs],
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
        def ask(message: str, facts_json: str = "", request: gr.Request = None) -> tuple[str, str, str]:  # type: ignore[assignment]
            """One chat turn. Returns (reply markdown, verdict JSON or "null", facts JSON for the next turn)."""
            with local(request):
                return handlers.api_ask(store, message, facts_json)

        def predict(scenario_json: str, request: gr.Request = None) -> str:  # type: ignore[assignment]
            """Scenario JSON → Prediction JSON (or {"error": ...})."""
            with local(request):
                return handlers.api_predict(store, scenario_json)

        def diagnose(scenario_json: str, request: gr.Request = None) -> str:  # type: ignore[assignment]
            """Scenario JSON → Verdict JSON (or {"error": ...})."""
            with local(request):
                return handlers.api_diagnose(store, scenario_json)

        def import_(text: str, hardware: str = "", request: gr.Request = None) -> str:  # type: ignore[assignment]
            """Tool output (llama-bench, ollama --verbose, …) → import result JSON (or {"error": ...})."""
            with local(request):
                return handlers.api_import(store, text, hardware)

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


# ---------------------------------------------------------------------------------- compare hardware
COMPARE_INTRO = ("**Compare hardware** for a team: ranked by whether each machine meets your targets under "
                 "load (TTFT p95 with queueing, decode tok/s per user with everyone streaming), then by "
                 "headroom. Prices are used only if you give them.")
COMPARE_DEFAULTS = ["apple-m3-ultra-80gpu", "nvidia-rtx-4090x2", "nvidia-h100-pcie", "nvidia-dgx-spark-gb10"]
# Multi-GPU boxes people build from consumer cards (layer split), offered next to the catalog entries.
MULTI_GPU = {"nvidia-rtx-3090": (2, 4), "nvidia-rtx-4090": (2, 4), "nvidia-rtx-5090": (2,), "amd-rx-7900-xtx": (2,)}


def compare_choices(store: Store) -> tuple[list[tuple[str, str]], list[str]]:
    """(hardware (label, id) choices incl. multi-GPU builds, model ids) for the compare inputs."""
    hws = [h for h in catalog.all_hardware(store).values() if h.kind != "cpu" and h.memory_gb_options]
    hw = [(f"{h.name} ({max(h.memory_gb_options):g} GB)", h.id) for h in hws]
    for base, counts in MULTI_GPU.items():
        h = catalog.all_hardware(store).get(base)
        hw += [(f"{n}× {h.name} ({n * max(h.memory_gb_options):g} GB)", f"{base}x{n}") for n in counts if h]
    models = sorted(catalog.all_models(store))
    return sorted(hw, key=lambda c: c[0].lower()), models


def _opt(x: Any) -> Any:
    return None if x in (None, "") else x


def run_compare(store: Store, model: str, quant: str, prompt: float, gen: float, users: float, rpm: float | None,
                ttft: float | None, tps: float | None, candidates: list[str], prices: str, prefix: float | None,
                kv_quant: str) -> tuple[str, list[list[Any]], Any]:
    """The compare form → (summary markdown, table rows, chart). Errors become a message, never a traceback."""
    from ui import handlers

    try:
        req = cmp.CompareRequest(
            model=model, quant=_opt(quant), prompt_tokens=int(prompt or 1), gen_tokens=int(gen or 1),
            concurrency=int(users or 1), requests_per_minute=_opt(rpm) or None, ttft_target_s=_opt(ttft) or None,
            tps_per_user=_opt(tps) or None, candidates=list(candidates or []) or None, prices=cmp.parse_prices(prices),
            shared_prefix_tokens=int(prefix or 0), kv_quant=kv_quant or "f16")
        result = cmp.compare_request(store, req)
    except (ValueError, AdvisorError) as e:
        return f"⚠️ {handlers.friendly_error(e)}", [], charts.empty_figure("Fix the inputs to see the chart.")
    except Exception as e:  # noqa: BLE001 - never a traceback in the page
        log.exception("unexpected error in compare: %s", type(e).__name__)
        return f"⚠️ {handlers.GENERIC_ERROR}", [], charts.empty_figure("Something went wrong.")
    return cmp.notes_markdown(result), cmp.table_rows(result), charts.compare_figure(result)


def api_compare(store: Store, request_json: str) -> str:
    """``/compare``: CompareRequest JSON → comparison JSON, or ``{"error": ...}``."""
    from ui import handlers

    try:
        data = load_json(request_json or "", what="comparison request")
        if not isinstance(data, dict):
            raise AdvisorError('Send a JSON object, e.g. {"model": "llama 3.3 70b", "concurrency": 20}.')
        return json.dumps(cmp.compare_request(store, cmp.CompareRequest.model_validate(data)), ensure_ascii=False)
    except (ValueError, AdvisorError) as e:  # JSONDecodeError and ValidationError are ValueErrors
        return handlers.error_json(e)
    except Exception as e:  # noqa: BLE001
        log.exception("unexpected error in api compare: %s", type(e).__name__)
        return json.dumps({"error": handlers.GENERIC_ERROR})


def _compare_section(store: Store) -> None:
    """The "Compare hardware" tab below the chat layout: inputs, ranked table, batched-decode chart."""
    hw_choices, models = compare_choices(store)
    ids = {v for _, v in hw_choices}
    with gr.Tabs(elem_id="compare-tabs"), gr.Tab("Compare hardware", id="tab-compare"):
        gr.Markdown(COMPARE_INTRO)
        with gr.Row():
            model = gr.Dropdown(models, value="meta-llama/Llama-3.3-70B-Instruct", label="Model",
                                allow_custom_value=True, elem_id="cmp-model", scale=3)
            quant = gr.Dropdown(["Q4_K_M", "Q4_0", "Q5_K_M", "Q6_K", "Q8_0", "F16"], value="Q4_K_M", label="Weights",
                                allow_custom_value=True, elem_id="cmp-quant", scale=1)
            kv = gr.Radio(["f16", "q8_0", "q4_0"], value="f16", label="KV cache", elem_id="cmp-kv", scale=1)
        with gr.Row():
            prompt = gr.Number(8000, label="Prompt tokens", precision=0, minimum=1, elem_id="cmp-prompt")
            gen = gr.Number(500, label="Answer tokens", precision=0, minimum=1, elem_id="cmp-gen")
            prefix = gr.Number(0, label="Shared prefix tokens (cached)", precision=0, minimum=0, elem_id="cmp-prefix")
            users = gr.Number(20, label="Users", precision=0, minimum=1, elem_id="cmp-users")
            rpm = gr.Number(0.2, label="Requests / min per user", minimum=0, elem_id="cmp-rpm")
            ttft = gr.Number(30, label="Target TTFT p95 (s)", minimum=0, elem_id="cmp-ttft")
            tps = gr.Number(10, label="Target tok/s per user", minimum=0, elem_id="cmp-tps")
        with gr.Row():
            cands = gr.Dropdown(hw_choices, value=[i for i in COMPARE_DEFAULTS if i in ids], multiselect=True,
                                label="Candidates (empty: every machine that holds the model)", elem_id="cmp-candidates",
                                scale=4)
            prices = gr.Textbox(label="Prices, optional (ID=USD, …)", placeholder="nvidia-h100-pcie=30000",
                                elem_id="cmp-prices", scale=2)
        run = gr.Button("Compare", variant="primary", elem_id="compare-btn")
        table = gr.Dataframe(headers=cmp.TABLE_HEADERS, value=[], interactive=False, wrap=True,
                             elem_id="compare-table", show_label=False)
        plot = gr.Plot(charts.empty_figure("Press Compare to rank the candidates."), elem_id="compare-chart",
                       show_label=False)
        summary = gr.Markdown(elem_id="compare-summary")
    run.click(lambda *a: run_compare(store, *a),
              [model, quant, prompt, gen, users, rpm, ttft, tps, cands, prices, prefix, kv],
              [summary, table, plot], api_visibility="private")
