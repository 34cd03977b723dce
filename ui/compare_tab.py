"""The "Compare hardware" tab: inputs, ranked table, chart, and filling it from the chat.

The chat's side-by-side table (:mod:`advisor.render.options`) and this tab run the same engine
(:func:`advisor.compare.compare_request`); :func:`fill_updates` puts the conversation's model,
lengths, users and stated memory into the form (a 96 GB M3 Ultra stays 96 GB).

Prices are ``NAME=USD`` pairs where NAME is a catalog id or a name a person would write
("H100=30000", "2x 4090=4500"); a name that matches none of the chosen candidates is a note above the
summary, and the table still shows. Editing a field by hand after a fill marks it in the note above the
form (:func:`edited_note`), so the note never claims a value the form no longer holds.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from typing import Any

import gradio as gr

from advisor import compare as cmp
from advisor.compare.cost import match_prices as match_candidate_prices
from advisor.errors import AdvisorError, load_json
from advisor.intake._dialog import DEFAULT_COMPARE_MODEL  # the one home of the default comparison model
from advisor.models import Scenario
from advisor.render.options import DEFAULT_TPS_TARGET, DEFAULT_TTFT_TARGET_S, compare_fill
from knowledge import catalog
from knowledge.seed import split_hw_id
from knowledge.store import Store
from ui import charts

__all__ = ["COMPARE_DEFAULTS", "CompareForm", "api_compare", "build_compare_tab", "compare_choices",
           "default_model_id", "fill_note", "fill_updates", "form_request", "match_prices", "run_compare"]

log = logging.getLogger(__name__)

COMPARE_INTRO = ("**Compare hardware** for a team: ranked by whether each machine meets your targets under "
                 "load (first word for 95 % of requests, with queueing; tok/s per user with everyone streaming), "
                 "then, when you give prices, the cheaper first, then by headroom. Prices are never guessed.")
COMPARE_DEFAULTS = ["apple-m3-ultra-80gpu", "nvidia-rtx-4090x2", "nvidia-h100-pcie", "nvidia-dgx-spark-gb10"]
# The form's field labels (one home: the layout and the fill's "· from the chat" / "· default" use them).
LABELS = {"model": "Model", "quant": "Weights", "prompt_tokens": "Prompt tokens", "gen_tokens": "Answer tokens",
          "concurrency": "Users", "requests_per_minute": "Requests / min per user",
          "ttft_target_s": "Target first word, p95 (s)", "tps_per_user": "Target tok/s per user"}
# Engines the form offers (empty: the engine's own default, llama.cpp, or vLLM for 4+ users on a datacenter GPU).
ENGINES = ["", "llama.cpp", "vllm", "sglang", "tensorrt-llm", "mlx", "ollama", "lm-studio", "exllamav2"]
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


def default_model_id(store: Store) -> str | None:
    """The catalog id of :data:`advisor.intake._dialog.DEFAULT_COMPARE_MODEL` (None if the catalog lacks it)."""
    try:
        return catalog.resolve_model(store, DEFAULT_COMPARE_MODEL).value.id
    except AdvisorError:
        return None


def _opt(x: Any) -> Any:
    return None if x in (None, "") else x


def _base_id(candidate: str) -> str:
    return candidate.split(" ")[0].strip().lower()


def match_prices(store: Store, prices: dict[str, float], candidates: list[str]) -> dict[str, float]:
    """Price names → the chosen candidates' ids, the way candidate names resolve ("H100" →
    ``nvidia-h100-pcie``; "4090", "RTX 4090", "2x 4090" → ``nvidia-rtx-4090x2`` when that is the candidate;
    :func:`advisor.compare.cost.match_prices`). A name that matches no candidate stays as written: the
    comparison says so in a note and still runs (never an error). No candidates (every machine): unchanged.
    """
    if not prices or not candidates:
        return {k.strip().lower(): v for k, v in prices.items()}
    matched, unmatched = match_candidate_prices(store, prices, [_base_id(c) for c in candidates])
    return {**matched, **{k: prices[k] for k in unmatched}}


def form_request(store: Store, model: str, quant: str, prompt: float, gen: float, users: float, rpm: float | None,
                 ttft: float | None, tps: float | None, candidates: list[str], prices: str, prefix: float | None,
                 kv_quant: str, engine: str | None = None) -> cmp.CompareRequest:
    """The compare form's values (in :attr:`CompareForm.run_inputs` order) as a CompareRequest.

    Raises:
        ValueError: a field out of range (pydantic).
    """
    cands = list(candidates or [])
    return cmp.CompareRequest(
        model=model, quant=_opt(quant), backend=_opt(engine), prompt_tokens=int(prompt or 1), gen_tokens=int(gen or 1),
        concurrency=int(users or 1), requests_per_minute=_opt(rpm) or None, ttft_target_s=_opt(ttft) or None,
        tps_per_user=_opt(tps) or None, candidates=cands or None,
        prices=match_prices(store, cmp.parse_prices(prices), cands),
        shared_prefix_tokens=int(prefix or 0), kv_quant=kv_quant or "f16")


def run_compare(store: Store, model: str, quant: str, prompt: float, gen: float, users: float, rpm: float | None,
                ttft: float | None, tps: float | None, candidates: list[str], prices: str, prefix: float | None,
                kv_quant: str, engine: str | None = None) -> tuple[str, list[list[Any]], Any]:
    """The compare form → (summary markdown, table rows, chart). Errors become a message, never a traceback.

    ``engine``: "" or None for the default engine (llama.cpp; vLLM for 4+ users on a datacenter GPU).
    """
    from ui import handlers

    try:
        req = form_request(store, model, quant, prompt, gen, users, rpm, ttft, tps, candidates, prices, prefix,
                           kv_quant, engine)
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


@dataclass
class CompareForm:
    """The tab's components, in :func:`fill_updates` order (model … candidates)."""

    model: Any
    quant: Any
    prompt: Any
    gen: Any
    users: Any
    rpm: Any
    ttft: Any
    tps: Any
    candidates: Any
    prefix: Any
    engine: Any = None
    note: Any = None
    run_fn: Any = None
    run_inputs: Any = None
    run_outputs: Any = None

    def fill_targets(self) -> list[Any]:
        return [self.model, self.quant, self.prompt, self.gen, self.users, self.rpm, self.ttft, self.tps,
                self.candidates, self.prefix, self.engine, self.note]


def _name(store: Store, candidate: str) -> str:
    """A candidate's hardware name ("2× GeForce RTX 4090"), or the candidate as written."""
    root, n = split_hw_id(_base_id(candidate))
    h = catalog.all_hardware(store).get(root)
    return (f"{n}× {h.name}" if n > 1 else h.name) if h else candidate


def _label(store: Store, candidate: str) -> str:
    mem = candidate.partition(" ")[2]
    name = _name(store, candidate)
    return f"{name} ({mem.replace('GB', ' GB')}, from the chat)" if mem else f"{name} (from the chat)"


def fill_note(fill: dict[str, Any]) -> str:
    """What the form took from the chat and what it assumed (Markdown, shown above the form)."""
    said = ", ".join(fill.get("stated") or []) or "the machines"
    out = f"**Filled from the chat:** {said}."
    if fill.get("defaults"):
        out += " **Defaults (not said in the chat):** " + "; ".join(fill["defaults"]) + "."
    return out + " Change any of them and press Compare."


_HAND = " **Changed by hand:** "


def edited_note(note: str | None, label: str, value: Any) -> str:
    """The note above the form after a field was edited by hand: the fill's note (if any) and what changed.

    >>> print(edited_note("**Filled from the chat:** 6 users.", "Users", 20))
    **Filled from the chat:** 6 users. **Changed by hand:** Users = 20 (the table uses the form's values).
    """
    base, _, changes = (note or "").partition(_HAND)
    if not base.startswith("**Filled from the chat:**"):
        return note or ""
    said = dict(p.split(" = ", 1) for p in changes.removesuffix(" (the table uses the form's values).").split("; ")
                if " = " in p)
    value = ", ".join(map(str, value)) if isinstance(value, list) else ("—" if value in (None, "") else
                                                                       f"{value:g}" if isinstance(value, float)
                                                                       else value)
    said[label] = str(value)
    return (base + _HAND + "; ".join(f"{k} = {v}" for k, v in said.items())
            + " (the table uses the form's values).")


_FILL_N = 12  # len(CompareForm.fill_targets())


def with_scale_out(store: Store, fill: dict[str, Any]) -> dict[str, Any]:
    """The fill with the cards the chat's table added (the fewest of a named GPU that hold every user,
    :func:`advisor.render.options.scale_out`), so the tab ranks the same machines the chat answered with."""
    from advisor import compare as cmp
    from advisor.render.options import fill_request, scale_out

    try:
        req = cmp.CompareRequest(**fill_request(fill))
        more, _ = scale_out(store, req, cmp.compare_request(store, req))
    except (ValueError, AdvisorError):
        return fill
    if not more:
        return fill
    return {**fill, "candidates": [*fill["candidates"], *more],
            "stated": [*fill["stated"], f"{len(more)} added as in the chat (the fewest of a card that hold every user)"]}


def fill_updates(store: Store, facts: dict[str, Any] | None) -> list[Any]:
    """``gr.update``s for :meth:`CompareForm.fill_targets` from the chat facts.

    The candidates are exactly the machines named (each with the memory stated), the model, format,
    engine, lengths, users, rate and targets those of the conversation; the note says which are defaults.
    Nothing to fill (no model): the form stays, and the note says so.
    """
    try:
        sc = Scenario.model_validate(facts or {})
        fill = compare_fill(store, sc)
    except (ValueError, AdvisorError):
        fill = None
    except Exception as e:  # noqa: BLE001 - a failed fill must say so, not leave the tab's defaults looking filled
        log.exception("could not fill compare from the chat: %s", type(e).__name__)
        return [gr.skip()] * (_FILL_N - 1) + [gr.update(value="⚠️ I could not fill the form from the chat: the "
                                                             "values below are the tab's own, not your team's.")]
    if not fill or not fill["candidates"]:
        return [gr.skip()] * (_FILL_N - 1) + [gr.update(value="The chat has not named machines and a model to "
                                                             "compare yet: the form keeps its values.")]
    fill = with_scale_out(store, fill)
    hw_choices, models = compare_choices(store)
    known = {v for _, v in hw_choices}
    extra = [(_label(store, c), c) for c in fill["candidates"] if c not in known]
    model_choices = models if fill["model"] in models else [fill["model"], *models]
    def lab(key: str) -> str:  # each field says where its value came from
        return f"{LABELS[key]} · {'default' if key in fill['assumed'] else 'from the chat'}"

    return [gr.update(value=fill["model"], choices=model_choices, label=lab("model")),
            gr.update(value=fill["quant"] or "Q4_K_M", label=lab("quant")),
            gr.update(value=fill["prompt_tokens"], label=lab("prompt_tokens")),
            gr.update(value=fill["gen_tokens"], label=lab("gen_tokens")),
            gr.update(value=fill["concurrency"], label=lab("concurrency")),
            gr.update(value=fill["requests_per_minute"] or 0, label=lab("requests_per_minute")),
            gr.update(value=fill["ttft_target_s"], label=lab("ttft_target_s")),
            gr.update(value=fill["tps_per_user"], label=lab("tps_per_user")),
            gr.update(choices=extra + hw_choices, value=fill["candidates"], label="Candidates · as named in the chat"),
            gr.update(value=fill["shared_prefix_tokens"]), gr.update(value=fill.get("backend") or ""),
            gr.update(value=fill_note(fill))]


def build_compare_tab(store: Store) -> CompareForm:
    """The tab's layout and its Compare button (call inside a ``gr.Tab``)."""
    hw_choices, models = compare_choices(store)
    ids = {v for _, v in hw_choices}
    with gr.Column(elem_id="compare-tabs"):
        gr.Markdown(COMPARE_INTRO)
        note = gr.Markdown(elem_id="cmp-from-chat")
        with gr.Row():
            default = default_model_id(store)
            model = gr.Dropdown(models, value=default if default in models else None, label=LABELS["model"],
                                allow_custom_value=True, elem_id="cmp-model", scale=3)
            quant = gr.Dropdown(["Q4_K_M", "Q4_0", "Q5_K_M", "Q6_K", "Q8_0", "F16"], value="Q4_K_M", label=LABELS["quant"],
                                allow_custom_value=True, elem_id="cmp-quant", scale=1)
            engine = gr.Dropdown(ENGINES, value="", label="Engine (empty: default)", allow_custom_value=True,
                                 elem_id="cmp-engine", scale=1)
            kv = gr.Radio(["f16", "q8_0", "q4_0"], value="f16", label="KV cache", elem_id="cmp-kv", scale=1)
        with gr.Row():
            prompt = gr.Number(8000, label=LABELS["prompt_tokens"], precision=0, minimum=1, elem_id="cmp-prompt")
            gen = gr.Number(500, label=LABELS["gen_tokens"], precision=0, minimum=1, elem_id="cmp-gen")
            prefix = gr.Number(0, label="Shared prefix tokens (cached)", precision=0, minimum=0, elem_id="cmp-prefix")
            users = gr.Number(20, label=LABELS["concurrency"], precision=0, minimum=1, elem_id="cmp-users")
            rpm = gr.Number(0.2, label=LABELS["requests_per_minute"], minimum=0, elem_id="cmp-rpm")
            ttft = gr.Number(DEFAULT_TTFT_TARGET_S, label=LABELS["ttft_target_s"], minimum=0, elem_id="cmp-ttft")
            tps = gr.Number(DEFAULT_TPS_TARGET, label=LABELS["tps_per_user"], minimum=0, elem_id="cmp-tps")
        with gr.Row():
            cands = gr.Dropdown(hw_choices, value=[i for i in COMPARE_DEFAULTS if i in ids], multiselect=True,
                                label="Candidates (empty: every machine that holds the model)", elem_id="cmp-candidates",
                                scale=4, allow_custom_value=True)
            prices = gr.Textbox(label="Prices, optional (name=USD, …)", placeholder="H100=30000, M3 Ultra=5600",
                                elem_id="cmp-prices", scale=2)
        run = gr.Button("Compare", variant="primary", elem_id="compare-btn")
        table = gr.Dataframe(headers=cmp.TABLE_HEADERS, value=[], interactive=False, wrap=True,
                             elem_id="compare-table", show_label=False)
        gr.Markdown(f"<sub>{cmp.TABLE_LEGEND}</sub>", elem_id="compare-legend")
        summary = gr.Markdown(elem_id="compare-summary")
        plot = gr.Plot(charts.empty_figure("Press Compare to rank the candidates."), elem_id="compare-chart",
                       show_label=False)
    inputs = [model, quant, prompt, gen, users, rpm, ttft, tps, cands, prices, prefix, kv, engine]

    editable: list[tuple[str, Any]] = [(LABELS["model"], model), (LABELS["quant"], quant), (LABELS["prompt_tokens"], prompt),
                (LABELS["gen_tokens"], gen), ("Shared prefix tokens", prefix), (LABELS["concurrency"], users),
                (LABELS["requests_per_minute"], rpm), (LABELS["ttft_target_s"], ttft),
                (LABELS["tps_per_user"], tps), ("Candidates", cands), ("Engine", engine), ("KV cache", kv)]
    for label, comp in editable:  # .input: a person's edit only, never a fill's programmatic change
        comp.input(lambda v, n, label=label: edited_note(n, label, v), [comp, note], [note],
                   api_visibility="private", show_progress="hidden")

    def run_fn(*a: Any) -> tuple[str, list[list[Any]], Any]:
        return run_compare(store, *a)

    run.click(run_fn, inputs, [summary, table, plot], api_visibility="private")
    return CompareForm(model=model, quant=quant, prompt=prompt, gen=gen, users=users, rpm=rpm, ttft=ttft, tps=tps,
                       candidates=cands, prefix=prefix, engine=engine, note=note, run_fn=run_fn, run_inputs=inputs,
                       run_outputs=[summary, table, plot])
