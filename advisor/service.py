"""The functions every front end calls: chat turn, predict, diagnose, import, probe.

The Gradio app, the CLI and the Python API all go through here, so every answer the UI gives can
be reproduced from the command line.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from pydantic import BaseModel, Field

from advisor import report
from advisor.asked import asks_users, over_context, reframe, service_load, users_at_once
from advisor.diagnose import diagnose_resolved
from advisor.diagnose.thinking import thinking_note
from advisor.errors import AdvisorError, ImpossibleRateError, InputError
from advisor.intake._text import LONG_NOTE
from advisor.models import Prediction, ProbeResult, Scenario, Verdict
from advisor.paste_facts import (
    backend_clash,
    foreign_rate,
    merge_measurements,
)
from advisor.paste_import import ImportOutcome, import_output
from advisor.perf import predict
from advisor.understand import THIS_MACHINE, is_this_machine, require, resolve_scenario
from advisor.understand.text import looks_pasted
from knowledge.store import Store

__all__ = ["AskResult", "ImportOutcome", "ask", "caller", "caller_is_local", "diagnose_scenario", "import_output",
           "predict_scenario", "run_probe", "run_server_probe"]

_backend_clash, _foreign_rate = backend_clash, foreign_rate  # their names before advisor.paste_facts held them
log = logging.getLogger("advisor")
MAX_MESSAGE_CHARS = 200_000


class QuestionOut(BaseModel):
    field: str
    text: str
    choices: list[str] = Field(default_factory=list)


class AskResult(BaseModel):
    """One chat turn: the reply, the verdict (null while facts are missing) and the facts so far."""

    reply: str
    verdict: Verdict | None
    facts: Scenario
    missing: list[str] = Field(default_factory=list)
    question: QuestionOut | None = None
    notes: list[str] = Field(default_factory=list)
    changes: list[tuple[str, Any, Any]] = Field(default_factory=list)  # (field, old, new) this turn changed


def _latest_probe(store: Store) -> ProbeResult | None:
    from knowledge.queries import latest_probe

    row = latest_probe(store)
    if not row:
        return None
    try:
        return ProbeResult.model_validate_json(row["payload_json"])
    except ValueError:
        return None


# Whether the person asking sits at the computer running the advisor (CLI, or a browser on loopback).
# The web app sets it per request from the client address (ui/app.py); a remote visitor's "my computer"
# is not the server, so the server's probe is never used as theirs (issue 17 item 7).
_CALLER_LOCAL: ContextVar[bool] = ContextVar("advisor_caller_local", default=True)
REMOTE_THIS_MACHINE = (
    "I cannot see your computer from here: this advisor runs on a server, and its probe measured the server, "
    "not your machine. Tell me your hardware (e.g. “RTX 4090” or “MacBook Pro M3 Max 64 GB”), or run "
    "`advisor probe --json` on your computer and paste its output here.")


@contextmanager
def caller(*, local: bool) -> Iterator[None]:
    """Within the block, answers are for a caller who is (``local=True``) or is not at this computer."""
    token = _CALLER_LOCAL.set(bool(local))
    try:
        yield
    finally:
        _CALLER_LOCAL.reset(token)


def caller_is_local() -> bool:
    """True for the CLI and local browsers; False for a remote web visitor (see :func:`caller`)."""
    return _CALLER_LOCAL.get()


def uploaded_probe(text: str) -> ProbeResult | None:
    """A probe result pasted as JSON (``advisor probe --json`` output), or None when the text is not one."""
    t = (text or "").strip()
    if not (t.startswith("{") and '"matmul_tflops"' in t and '"bandwidth_gbs"' in t) or len(t) > 1_000_000:
        return None
    try:
        return ProbeResult.model_validate_json(t)
    except ValueError:
        return None




def _probe_for(store: Store, s: Scenario) -> ProbeResult | None:
    h = (s.hardware or "").strip().lower()
    if h in THIS_MACHINE or is_this_machine(h):
        if not caller_is_local():
            raise InputError(REMOTE_THIS_MACHINE)
        probe = _latest_probe(store)
        if probe is None:
            raise InputError("No probe of this machine is stored yet: press “Probe this machine” in the app or run "
                             "`advisor probe`, then ask again.")
        return probe
    return None


def apply_probe(store: Store, scenario: Scenario) -> Scenario:
    """Replace "this machine" by the latest probe's measured bandwidth (and compute, where it applies).

    Raises:
        InputError: "this machine" was asked for but nothing has been probed yet.
    """
    probe = _probe_for(store, scenario)
    if probe is None or scenario.bandwidth_gbs:
        return scenario
    return _with_probe(scenario, probe, owner="this machine")


def _with_probe(scenario: Scenario, probe: ProbeResult, *, owner: str) -> Scenario:
    """The scenario on the probed machine; validated like typed input (a pasted probe is user input).

    Raises:
        pydantic.ValidationError: a value out of range (e.g. 10^9 GB/s).
    """
    mem = probe.machine.get("memory_total_gb")
    return Scenario.model_validate({**scenario.model_dump(), 
        "bandwidth_gbs": probe.bandwidth_gbs,
        "tflops": probe.matmul_tflops,
        "hardware_measured": True,
        "memory_gb": scenario.memory_gb or (mem if isinstance(mem, (int, float)) and 0 < mem < 100_000 else None),
        "hardware": f"{owner} ({str(probe.device)[:60]}, {probe.backend})"
    })


def warm_up(store: Store) -> None:
    """Build the store's calibration fit now (a few seconds on two cores) so the first verdict does not wait.

    Meant for a background thread at app start; the store's cache is single-flight, so a request that
    arrives meanwhile waits for this build instead of starting its own. A failure is logged, not raised:
    the first request then builds (and reports) it.
    """
    from advisor.perf.fit import calibration_model

    try:
        calibration_model(store)
    except Exception:  # noqa: BLE001 - a background warm-up must not kill the app; the request path reports
        log.exception("calibration warm-up failed")


def predict_scenario(store: Store, scenario: Scenario) -> Prediction:
    """Prediction for a scenario. Raises :class:`AdvisorError` when hardware or model is unknown."""
    scenario = apply_probe(store, scenario)
    res = resolve_scenario(store, scenario)
    hw, model, quant = require(res)
    p = predict(store, hardware=hw, model=model, quant=quant, backend=res.backend, prompt_tokens=res.prompt_tokens,
                gen_tokens=res.gen_tokens, depth=res.depth, concurrency=res.concurrency)
    return p.model_copy(update={"assumptions": res.assumptions + p.assumptions})


def diagnose_scenario(store: Store, scenario: Scenario, *, question: str | None = None) -> Verdict:
    """Verdict for a scenario (with or without measured rates or pasted output); ``question``: the person's
    words this turn (symptoms such as a household question or "after the update" are read from them)."""
    from advisor.importers import parse_output

    if scenario.raw_output and (scenario.measured_decode_tps is None and scenario.measured_prefill_tps is None):
        parsed = parse_output(scenario.raw_output)
        scenario = merge_measurements(scenario, parsed.measurements, parsed.format, store=store)
    scenario = apply_probe(store, scenario)
    res = resolve_scenario(store, scenario)
    if res.model is None and res.hardware is None and not (scenario.measured_decode_tps or scenario.measured_prefill_tps):
        raise InputError(
            "I need at least the hardware and the model (or measured numbers) to diagnose. "
            + " ".join(res.problems.values())
        )
    if "quant" in res.problems:  # a format named but unknown: judging it as Q4_K_M would call the wrong speed normal
        raise InputError(res.problems["quant"])
    return diagnose_resolved(store, res, question=question)


def run_probe(
    store: Store, *, progress: Callable[[float, str], None] | None = None, kernels_only: bool = True,
    model_path: str | None = None, time_budget_s: float = 15.0,
) -> ProbeResult:
    """Probe this machine (kernel probe, plus the mlx-lm model probe when a model path is given) and store it."""
    from advisor import probe as probe_mod
    from knowledge import catalog

    t0 = time.perf_counter()
    result = probe_mod.run_probe(model_path=None if kernels_only else model_path, kernels_only=kernels_only,
                                 progress=progress, time_budget_s=time_budget_s)
    hw_id = _match_machine(store, result.machine, catalog)
    if hw_id:
        result = result.model_copy(update={"hw_id": hw_id})
    result = result.model_copy(update={"notes": result.notes + [f"stored as probe {store.save_probe(result)}"]})
    log.info("probe backend=%s bw=%.1f tflops=%.3f s=%.1f", result.backend, result.bandwidth_gbs,
             result.matmul_tflops, time.perf_counter() - t0)
    return result


def _match_machine(store: Store, machine: dict[str, Any], catalog: Any) -> str | None:
    for key in ("chip", "gpu_name", "cpu_model"):
        name = machine.get(key)
        if not name:
            continue
        try:
            m = catalog.resolve_hardware(store, str(name), memory_gb=machine.get("memory_total_gb"),
                                         gpu_cores=machine.get("gpu_cores"))
            if m.confidence >= 0.8:
                return m.value.id
        except AdvisorError:
            continue
    return None


def ask(store: Store, message: str, facts: Scenario | None = None) -> AskResult:
    """One chat turn: understand the message, ask for what is missing, or answer with a verdict.

    Never raises for bad input: the reply says what was not understood.
    """
    from advisor import intake

    t0 = time.perf_counter()
    facts = intake.named_machines(facts or Scenario(), store)  # a machine carried in as its catalog id: its name
    before = facts
    text = (message or "").strip()
    if not text:
        return AskResult(reply="Tell me what you run and on what — e.g. *“MacBook Air M2 with 16 GB, Llama 3.1 8B at "
                         "4-bit, prompts of about 500 words”* — or paste what llama-bench / ollama printed.",
                         verdict=None, facts=facts, missing=intake.missing(facts, store))
    if len(text) > MAX_MESSAGE_CHARS:
        text = text[:MAX_MESSAGE_CHARS]
    theirs = uploaded_probe(text)
    if theirs is not None:
        try:
            facts = _with_probe(facts, theirs, owner="your machine")
        except ValueError:
            return AskResult(reply="I could not use that probe result: its bandwidth or compute is out of range.",
                             verdict=None, facts=facts)
        text = "my machine was probed"  # the JSON itself is not a sentence for intake
    try:
        upd = intake.update(facts, text, store)
    except AdvisorError as e:
        return AskResult(reply=f"I could not use that: {e}", verdict=None, facts=facts)
    facts = upd.facts
    mine = intake.rewrite_listings(text)[0]  # an nvidia-smi table's or free's lines are not the person's words
    if not (getattr(upd, "looks_like_tool_output", False) or looks_pasted(text)):
        # The person's own words (all turns, newest last) travel with the facts, so the Situation's symptoms
        # ("takes ages to start", "in Docker", "top_k 0") come from what they wrote, not only from the fields.
        said = "\n".join(x for x in (facts.question, mine[:2000]) if x)
        facts = facts.model_copy(update={"question": said[-_QUESTION_CHARS:]})
    elif own := intake.own_words(mine)[:2000]:  # words around a paste ("this feels slow, is it normal?")
        said = "\n".join(x for x in (facts.question, own) if x)
        facts = facts.model_copy(update={"question": said[-_QUESTION_CHARS:]})
    notes = list(upd.notes)
    if theirs is not None:
        notes.append(f"Using the probe result you pasted ({theirs.device}: {theirs.bandwidth_gbs:,.0f} GB/s, "
                     f"{theirs.matmul_tflops:,.2f} TFLOP/s).")
    elif is_this_machine(text) and not facts.hardware and not facts.bandwidth_gbs and not caller_is_local():
        notes.append(REMOTE_THIS_MACHINE)
    elif is_this_machine(text) and not facts.hardware and not facts.bandwidth_gbs:
        if _latest_probe(store) is not None:
            facts = apply_probe(store, facts.model_copy(update={"hardware": "this machine"}))
            notes.append("Using the probe of this machine (the computer running the advisor).")
        else:
            notes.append("Nothing has been probed yet: press “Probe this machine” (or run `advisor probe`) to use "
                         "this computer's measured speed.")
    lines: list[str] = []
    if upd.not_understood:
        lines += [f"- {x}" for x in upd.not_understood]
    # "how much RAM for 128k context?" with no machine named: the memory it needs, before any machine is picked for it
    need = _memory_needed(store, facts, mine) if not facts.hardware else None
    facts = reframe(store, facts, text, notes)  # buying, "which model?", "how many cards?": what is compared
    # What answers the question ahead of the verdict: a service's load ("10 req/s peak, enough?": the machine's time,
    # split between the phases; the verdict below is one request's), or a prompt longer than the model's window (the
    # verdict below is for the longest prompt it reads). Either way nothing else is left "to change" for one request.
    load = service_load(store, facts)
    lead, carried, lead_label = (*load, "_For one request on its own:_ ") if load else (None, True, "")
    if lead is None and (over := over_context(store, facts)) is not None:
        (facts, lead), carried = over, False
    if len(facts.compare_hardware or []) >= 2 and not (facts.model or facts.params_b or facts.compare_models):
        # Several machines and no model yet: answer the comparison on a common model, and say so.
        from advisor.intake._dialog import default_model

        model, who = default_model(facts.concurrency, facts.use, text)
        facts = facts.model_copy(update={"model": model, "default_model": model})
        notes.append(f"Model not stated: the options are compared on {model}, a common choice for {who}; name "
                     "your model to compare on it instead.")
    q = intake.next_question(facts, store, ambiguous=upd.ambiguous or None)
    missing = intake.missing(facts, store)
    verdict = None
    if getattr(upd, "looks_like_tool_output", False) or looks_pasted(text):
        out = import_output(store, text, hardware=facts.hardware, save=True, scenario=facts, words_read=True)
        lines.insert(0, out.message)
        verdict = out.verdict
        if out.facts is not None:  # the paste's facts, merged once by the importer's rules (_merge_measurements)
            facts = out.facts.model_copy(update={"raw_output": facts.raw_output})
            if facts.context_window is None:  # the paste's own count was the prompt (textgen's "context 3200")
                notes = [n for n in notes if not n.startswith("Context window")]
            if out.measurements:  # the importer's rates are the ones used, not a rate the words around it were read for
                notes = [n for n in notes if " taken as the generation (decode) speed" not in n]
            missing = intake.missing(facts, store)
            q = intake.next_question(facts, store, ambiguous=upd.ambiguous or None)
    if verdict is None and need:
        lines.append(need)  # answered before the advisor asks which machine
    # A reply to the advisor's own question ("RTX 4090" after "which machine?") completes the earlier message:
    # its words (a complaint, "in Docker") are read with it; after an answer, a follow-up's own words are.
    said_here = facts.question if (before.question and intake.missing(before, store)) else mine
    if verdict is None and q is None and not missing:
        try:
            verdict = diagnose_scenario(store, facts, question=said_here)
        except ImpossibleRateError as e:  # "I get 99999 tok/s": said, left out, and the rest still answered
            facts = facts.model_copy(update={"measured_decode_tps": None, "measured_streams": None,
                                             "measured_tpot_ms": None})
            lines.insert(0, f"**{e}** I left that number out; the rest is answered without it.")
            notes = [n for n in notes if "taken as the generation" not in n]
            try:
                verdict = diagnose_scenario(store, facts, question=said_here)
            except AdvisorError as e2:
                lines.append(str(e2))
        except AdvisorError as e:
            lines.append(str(e))
    corrected = [c for c in upd.changes if c[1] is not None and c[0] in _CHANGE_LABELS]
    from advisor.render.conversation import turn_reply

    # The previous turn ended in a question (no answer was shown): this answer is the first, not a change of one.
    shown = before if not intake.missing(before, store) else None
    if verdict is not None and verdict.prediction is not None and (
            think := thinking_note(verdict.prediction.model.get("id") or facts.model, said_here, verdict.prediction)):
        if facts.measured_ttft_s and not lines:  # the wait they measured is mostly the reasoning: said first
            lines.append(f"**Most of that wait is the model reasoning before it answers.** {think}")
        else:
            notes.append(think)  # a reasoning model's wait is its reasoning, written before the answer
    answer = turn_reply(store, verdict, facts=facts, before=shown, notes=notes, message=mine)
    if answer is not None:
        reply = "\n\n".join(x for x in (*lines[:1], answer) if x) if verdict is not None and lines else answer
    else:
        head = "\n".join(lines)
        ask_txt = q.text if q else "Tell me the hardware and the model."
        understood = report.facts_summary(facts)
        cut = next((n for n in notes if n.startswith(LONG_NOTE)), "")  # what was not read is said before the question
        reply = "\n\n".join(x for x in (changes_line(corrected) if corrected else "", head, cut, understood,
                                        f"**{ask_txt}**") if x)
    if lead is not None and verdict is not None:
        if not carried:  # over capacity, or over the window: not "nothing you need to change"
            reply = reply.replace("**Nothing you need to change.**", "**Nothing else to change for one request.**")
        reply = f"{lead}\n\n{lead_label}{reply}"
    if verdict is not None and verdict.prediction is not None and asks_users(text):
        cap = users_at_once(store, facts, verdict.prediction)
        if cap:  # the answer to the question asked leads; the verdict below is one conversation's
            from advisor.render.markdown import engine_label

            notes.append(cap)
            reply = f"{cap}\n\n_For one conversation alone, on {engine_label(verdict.prediction.backend)}:_ {reply}"
    if need and verdict is not None and need not in reply:  # machines picked for them: the memory question first
        reply = f"{need}\n\n{reply}"
    for lead in ("Model not stated: the options", "You asked what to buy", "You asked what to upgrade to", "You asked how many", "You asked which model",
                 "Budget about"):
        said_note = next((n for n in notes if n.startswith(lead)), None)
        if said_note and said_note not in reply:
            reply = f"{reply}\n\n{said_note}"
    log.info("turn ms=%.0f verdict=%s missing=%s", (time.perf_counter() - t0) * 1000, verdict is not None, missing)
    return AskResult(
        reply=reply, verdict=verdict, facts=facts, missing=missing,
        question=QuestionOut(field=q.field, text=q.text, choices=list(q.choices)) if q else None, notes=notes,
        changes=list(upd.changes),
    )


def _memory_needed(store: Store, facts: Scenario, text: str) -> str | None:
    """The memory a model needs, when the message asks for it (or how much context fits) and names no machine."""
    from advisor.diagnose.context_fit import needs_line
    from advisor.understand.symptoms import read_symptoms

    sym = read_symptoms(text)
    asked = sym.asks_memory or sym.context_asked or bool(facts.context_window and re.search(r"\bfits?\b", text, re.I))
    return needs_line(store, facts, asked)


_QUESTION_CHARS = 4000  # the person's words kept with the facts (several turns)
_CHANGE_LABELS = {"hardware": "machine", "memory_gb": "memory", "model": "model", "params_b": "model size",
                  "active_params_b": "active per token",
                  "quant": "weight format", "backend": "engine", "prompt_tokens": "prompt", "gen_tokens": "answer",
                  "concurrency": "users", "gpu_count": "GPUs", "context_window": "context window",
                  "measured_decode_tps": "measured decode", "measured_prefill_tps": "measured prefill",
                  "shared_prefix_tokens": "shared prefix", "depth": "depth", "use": "use",
                  "system_ram_gb": "system RAM", "interconnect": "interconnect"}


def changes_line(changes: list[tuple[str, Any, Any]]) -> str:
    """"**Changed:** memory 16 GB → 24 GB; model Gemma 3 12B → Gemma 3 27B." for a correction."""
    def val(f: str, v: Any) -> str:
        if v is None:
            return "—"
        if f in ("memory_gb", "system_ram_gb"):
            return f"{v:g} GB"
        if f in ("prompt_tokens", "gen_tokens", "shared_prefix_tokens", "depth", "context_window"):
            return f"{v:,} tokens"
        return f"{v:g}" if isinstance(v, float) else str(v)

    parts = [f"{_CHANGE_LABELS.get(f, f)} {val(f, a)} → {val(f, b)}" for f, a, b in changes]
    return "**Changed:** " + "; ".join(parts) + "."


def run_server_probe(
    store: Store | Callable[[], Store], *, url: str | None = None, model: str | None = None, allow_remote: bool = False,
    progress: Callable[[float, str], None] | None = None, time_budget_s: float = 60.0,
    prompt_lengths: tuple[int, ...] = (128, 512, 2048), gen_tokens: int = 64, concurrency: int = 2,
    ports: list[int] | None = None, save: bool = True, machine: dict[str, Any] | None = None,
) -> list[Any]:
    """Measure the LLM server(s) running on this machine (or at ``url``), store and diagnose each.

    Args:
        store: the knowledge store, or a function that opens it (called only once a server was found, so a
            wrong address fails fast and touches no store).
        url: the server's address; None finds servers on the loopback default ports. A non-loopback
            ``url`` needs ``allow_remote`` (the CLI sets it for an address typed on its command line;
            the web app never does).
        model: ``--server-model``: which served model to measure (servers that lack it are skipped).
        time_budget_s: budget for each server's benchmark, seconds.
        prompt_lengths, gen_tokens, concurrency: the workload (see :func:`advisor.probe.server.measure_server`).
        ports: loopback ports to search instead of the defaults.
        save: store each measurement (one results row per run, with engine, model and machine).
        machine: this machine's description (default: :func:`advisor.probe.detect_machine`).

    Returns:
        list[ServerProbeResult]: one per server measured, each with its ``verdict`` and ``summary``.

    Raises:
        InputError: bad address or arguments, or no server serves ``model``.
        ServerProbeError: nothing found, not an LLM server, or every request failed (one-line message).
    """
    import json as _json

    from advisor.probe.server import find_servers, measure_server
    from advisor.probe.server_engines import choose_model
    from advisor.probe.server_report import scenario_of, stored_rows, summary_line
    from advisor.probe.system import detect_machine
    from knowledge import catalog

    infos = find_servers(url, allow_remote=allow_remote, ports=ports)
    if model and len(infos) > 1:
        serving = []
        for info in infos:
            try:
                choose_model(info, model)
                serving.append(info)
            except AdvisorError:
                continue
        if not serving:
            raise InputError(f"none of the servers found ({', '.join(i.url for i in infos)}) serves {model!r}")
        infos = serving
    if not isinstance(store, Store):
        store = store()
    machine = machine if machine is not None else detect_machine()
    hw_id = _match_machine(store, machine, catalog)
    probe = _latest_probe(store) if hw_id is None else None
    hardware = hw_id or ("this machine" if probe is not None else None)
    memory = machine.get("gpu_memory_gb") or machine.get("memory_total_gb")
    out = []
    for k, info in enumerate(infos):
        def sub(frac: float, desc: str, k: int = k, label: str = info.label) -> None:
            if progress is not None:
                progress((k + min(1.0, max(0.0, frac))) / len(infos), f"{label}: {desc}")

        result = measure_server(info, model=model, prompt_lengths=prompt_lengths, gen_tokens=gen_tokens,
                                time_budget_s=time_budget_s, concurrency=concurrency, progress=sub)
        result = result.model_copy(update={"machine": machine})
        verdict = None
        if result.server_runs:
            discrete = bool(machine.get("gpu_memory_gb")) and not machine.get("unified_memory")
            sc = scenario_of(result, hardware=hardware, memory_gb=memory if hardware and hardware != "this machine"
                             else None, system_ram_gb=machine.get("memory_total_gb") if discrete else None,
                             gpu_count=machine.get("gpu_count"))
            try:
                verdict = diagnose_scenario(store, sc)
            except AdvisorError as e:
                result.notes.append(f"No verdict: {e}")
        result = result.model_copy(update={"verdict": verdict, "summary": summary_line(result, verdict)})
        if save and result.server_runs:
            raw = _json.dumps(result.model_dump(mode="json", exclude={"verdict"}), default=str)
            result.stored_id = store.save_import(
                fmt=f"server-probe:{info.engine}", raw_text=raw, measurements=stored_rows(result),
                hardware=str(machine.get("chip") or machine.get("gpu_name") or machine.get("cpu_model") or "this machine"),
                hw_id=hw_id, machine=machine)
        log.info("server probe engine=%s model=%s runs=%d s=%.1f", info.engine, result.model,
                 len(result.server_runs), result.duration_s)
        out.append(result)
    return out
