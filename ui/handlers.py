"""Plain functions the Gradio app wires up; testable without a browser or a server.

Nothing here imports Gradio. Every function takes the :class:`~knowledge.store.Store` explicitly
and turns :class:`~advisor.errors.AdvisorError` and pydantic ``ValidationError`` into a message a
person can read; unexpected exceptions are logged and answered with a generic message, never a
traceback.
"""

from __future__ import annotations

import json
import logging
import os
import re
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import plotly.graph_objects as go
from pydantic import ValidationError

from advisor import report, service
from advisor.errors import AdvisorError, NotFoundError, load_json
from advisor.models import Prediction, ProbeResult, Scenario, Verdict, parse_scenario
from knowledge.store import Store
from ui import charts

__all__ = [
    "FACT_FIELDS",
    "MAX_MESSAGE_CHARS",
    "MAX_UPLOAD_BYTES",
    "ChatView",
    "ProbeFn",
    "chat_turn",
    "default_probe",
    "error_json",
    "export_files",
    "facts_edited",
    "facts_rows",
    "friendly_error",
    "import_paste",
    "import_paste_with_facts",
    "verdict_stale",
    "normalize_history",
    "parse_scenario_json",
    "peer_rows",
    "probe_markdown",
    "verdict_card",
    "verdict_view",
]

log = logging.getLogger("advisor.ui")

MAX_MESSAGE_CHARS = 100_000
MAX_UPLOAD_BYTES = 5 * 1024 * 1024
GENERIC_ERROR = "Something went wrong on my side while answering that. Please rephrase, or try again."
# Facts shown in the "What I understood" panel, in this order (others appear when set).
FACT_FIELDS: tuple[str, ...] = (
    "hardware", "memory_gb", "backend", "model", "params_b", "quant", "prompt_tokens", "gen_tokens",
    "concurrency", "use", "measured_prefill_tps", "measured_decode_tps",
)
FACT_LABELS: dict[str, str] = {
    "hardware": "hardware", "memory_gb": "memory (GB)", "backend": "engine", "model": "model",
    "params_b": "size (billion params)", "active_params_b": "MoE: active per token (billion params)",
    "quant": "quantization", "prompt_tokens": "prompt (tokens)",
    "gen_tokens": "answer (tokens)", "concurrency": "users at once", "use": "use",
    "measured_prefill_tps": "measured prefill (tok/s)", "measured_decode_tps": "measured decode (tok/s)",
    "depth": "context already in cache (tokens)", "n_gpu_layers": "GPU layers (-ngl)",
    "gpu_cores": "GPU cores", "bandwidth_gbs": "bandwidth (GB/s)", "tflops": "compute (TFLOP/s)",
    "shared_prefix_tokens": "shared prefix (tokens)", "requests_per_minute": "requests per minute",
    "compare_hardware": "also weighing (machines)", "compare_models": "also weighing (models)",
    "gpu_count": "GPUs", "system_ram_gb": "system RAM (GB)", "context_window": "context window (tokens)",
    "measured_ttft_s": "measured first word (s)", "gpu_fraction": "share on the GPU",
    "measured_streams": "streams when measured",
}
_HIDDEN_FACTS = {"raw_output", "question", "hardware_measured", "default_model"}
# The bottleneck in plain words (verdict card).
BOTTLENECK_WORDS = {"decode": "decode (how fast the answer streams)", "prefill": "prefill (reading your prompt)",
                    "memory_fit": "memory (the model does not fit)", "misconfiguration": "the setup, not the hardware",
                    "balanced": "both phases about equally"}
_LIST_FACTS = {"compare_hardware", "compare_models"}

#: ``probe_fn(store, progress) -> ProbeResult | str``; ``progress(fraction, description)``.
ProbeFn = Callable[[Store, Callable[[float, str], None]], "ProbeResult | str"]


# ------------------------------------------------------------------------------------- history
def _block_text(block: Any) -> str:
    if block is None:
        return ""
    if isinstance(block, str):
        return block
    if isinstance(block, dict):
        if "text" in block and block.get("type", "text") == "text":
            return str(block["text"] or "")
        f = block.get("file") or block.get("path") or block.get("url")
        if isinstance(f, dict):
            f = f.get("orig_name") or f.get("path") or f.get("url")
        if f:
            return f"[file: {os.path.basename(str(f))}]"
        if "value" in block:
            return _block_text(block["value"])
        return ""
    if isinstance(block, (list, tuple)):
        return "\n".join(t for t in (_block_text(b) for b in block) if t)
    for attr in ("text", "content", "value"):
        if hasattr(block, attr):
            return _block_text(getattr(block, attr))
    return str(block)


def normalize_history(history: Iterable[Any] | None) -> list[dict[str, str]]:
    """Chat history as ``[{"role": "user"|"assistant", "content": str}, ...]``.

    Accepts what Gradio 6 hands a function from the browser (``content`` is a list of
    ``{"type": "text", "text": ...}`` blocks, plus ``metadata``/``options`` keys), what
    ``gradio_client`` sends (``content`` is a plain string), ``gr.ChatMessage`` objects, and old
    ``[user, bot]`` pairs. Empty messages are dropped.
    """
    out: list[dict[str, str]] = []
    for msg in history or []:
        if isinstance(msg, dict):
            role, content = msg.get("role"), msg.get("content")
        elif isinstance(msg, (list, tuple)) and len(msg) == 2 and not isinstance(msg[0], dict):
            for r, c in (("user", msg[0]), ("assistant", msg[1])):
                text = _block_text(c)
                if text:
                    out.append({"role": r, "content": text})
            continue
        elif hasattr(msg, "role"):
            role, content = msg.role, getattr(msg, "content", "")
        else:
            continue
        role = "user" if role == "user" else "assistant"
        text = _block_text(content)
        if text:
            out.append({"role": role, "content": text})
    return out


# ------------------------------------------------------------------------------------ visitors
def request_is_local(request: Any) -> bool:
    """True when a web request comes from this computer (client address on loopback).

    ``request`` is a ``gr.Request`` (or anything with ``.client.host``); None — a direct Python call,
    as in the tests and the CLI — counts as local. Forwarded-for headers are not trusted.
    """
    if request is None:
        return True
    from ui.server import is_loopback

    client = getattr(request, "client", None)
    host = getattr(client, "host", None) if client is not None else None
    return bool(host) and is_loopback(str(host))


# ------------------------------------------------------------------------------------ errors
def friendly_error(e: BaseException) -> str:
    """A message a person can act on, for AdvisorError, ValidationError and bad JSON."""
    if isinstance(e, ValidationError):
        parts = []
        for err in e.errors()[:5]:
            loc = ".".join(str(x) for x in err.get("loc", ()) if x != "__root__") or "input"
            msg = str(err.get("msg", "invalid")).removeprefix("Value error, ")
            parts.append(f"{loc}: {msg}")
        return "Some values are not valid — " + "; ".join(parts) + "."
    if isinstance(e, json.JSONDecodeError):
        return f"That is not valid JSON ({e.msg} at line {e.lineno}, column {e.colno})."
    if isinstance(e, AdvisorError):
        return str(e) or type(e).__name__
    return GENERIC_ERROR


def error_json(e: BaseException) -> str:
    """``{"error": message}`` (plus ``candidates`` for unknown or ambiguous names) as JSON."""
    payload: dict[str, Any] = {"error": friendly_error(e)}
    cands = getattr(e, "candidates", None)
    if cands:
        payload["candidates"] = list(cands)[:10]
    if isinstance(e, NotFoundError):
        payload["kind"] = "not_found"
    return json.dumps(payload, ensure_ascii=False)


def unexpected_error(where: str, e: BaseException) -> str:
    log.exception("unexpected error in %s: %s", where, type(e).__name__)
    return GENERIC_ERROR


# ------------------------------------------------------------------------------------ facts
def parse_scenario_json(text: Any) -> Scenario | None:
    """Scenario from a JSON object string; ``""``/``"null"`` give None.

    An HTTP client that sends the object itself (``{"data": [{"hardware": ...}]}``) instead of its JSON
    text gets the same answer; a number, a list or ``true`` is an :class:`~advisor.errors.InputError`.

    Raises:
        json.JSONDecodeError, ValidationError: bad JSON or values (see :func:`friendly_error`).
        AdvisorError: the JSON is not an object.
    """
    from advisor.errors import InputError

    if isinstance(text, dict):
        return parse_scenario(text)
    if text is not None and not isinstance(text, str):
        raise InputError("Send the scenario as a JSON object (or its JSON text), e.g. "
                         "{\"hardware\": \"M2 Max\", \"model\": \"llama 3.1 8b\"}; got "
                         f"{json.dumps(text)[:60] if isinstance(text, (bool, int, float, list)) else type(text).__name__}.")
    text = (text or "").strip()
    if not text or text == "null":
        return None
    data = load_json(text, what="scenario JSON")
    if data is None:
        return None
    if not isinstance(data, dict):
        raise InputError("The scenario must be a JSON object, e.g. {\"hardware\": \"M2 Max\", \"model\": \"llama 3.1 8b\"}.")
    return parse_scenario(data)  # strict: an unknown key is an error that names it


def _facts_dict(s: Scenario) -> dict[str, Any]:
    return s.model_dump(mode="json")


def _fmt_value(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, (list, tuple)):
        return ", ".join(_fmt_value(x) for x in v)
    if isinstance(v, float):
        return f"{v:g}"
    return str(v)


def facts_rows(facts: dict[str, Any] | None) -> list[list[str]]:
    """Rows ``[label, value]`` for the facts table: the main fields always, others when set."""
    facts = facts or {}
    keys = list(FACT_FIELDS) + [k for k, v in facts.items()
                                if k not in FACT_FIELDS and k not in _HIDDEN_FACTS and v not in (None, [], False)]
    return [[FACT_LABELS.get(k, k.replace("_", " ")), _fmt_value(facts.get(k)).replace("_", " ") if k == "use" else
             _fmt_value(facts.get(k))] for k in keys]


def _field_for_label(label: str) -> str | None:
    label = (label or "").strip()
    for k, lab in FACT_LABELS.items():
        if label in (lab, k):
            return k
    return label if label in Scenario.model_fields else None


def _scenario_from_rows(rows: Any, facts: dict[str, Any] | None) -> Scenario:
    data = dict(facts or {})
    if hasattr(rows, "values") and hasattr(rows, "columns"):  # a pandas DataFrame
        rows = rows.values.tolist()
    if isinstance(rows, dict) and "data" in rows:
        rows = rows["data"]
    for row in rows or []:
        if not isinstance(row, (list, tuple)) or len(row) < 2:
            continue
        key = _field_for_label(str(row[0]))
        if key is None or key in _HIDDEN_FACTS:
            continue
        raw = row[1]
        val = None if raw is None or (isinstance(raw, str) and not raw.strip()) else raw
        if isinstance(val, str):
            val = val.strip()
            if key == "use":
                val = val.lower().replace(" ", "_")
            elif key in _LIST_FACTS:
                val = [x.strip() for x in val.split(",") if x.strip()] or None
            elif key not in ("hardware", "backend", "model", "quant"):
                val = val.replace(",", "").replace("_", "")
        data[key] = val
    return Scenario.model_validate(data)


# --------------------------------------------------------------------------------- verdict view
def peer_rows(store: Store, p: Prediction, *, limit: int = 10) -> list[dict[str, Any]]:
    """Measured results on similar hardware for a similar model (``knowledge.queries.peers``)."""
    from knowledge.queries import peers

    try:
        return peers(store, hw_id=p.hardware.get("id"), params_b=p.model.get("params_b"), quant=p.quant,
                     kind=p.hardware.get("kind"), bandwidth_gbs=p.bandwidth_gbs, depth=p.depth, limit=limit)
    except Exception as e:  # noqa: BLE001 - the peers chart is a nicety; the verdict must still show
        log.warning("peers query failed: %s", e)
        return []


def verdict_card(v: Verdict) -> str:
    """The verdict card beside the chat: bottleneck, the numbers, memory and every fix, nothing clipped.

    The chat answer keeps the plain-words verdict; the card holds what the chat folds away, so the
    two never repeat each other (see :mod:`ui.turns`).
    """
    out: list[str] = []
    p = v.prediction
    status = {"normal": "normal for this hardware", "below_expected": "slower than it should be",
              "above_expected": "faster than usual", "not_measured": "predicted (nothing measured yet)"}.get(
        v.status, v.status.replace("_", " "))
    name = BOTTLENECK_WORDS.get(v.bottleneck, v.bottleneck.replace("_", " "))
    if v.bottleneck == "memory_fit" and p is not None and p.running:  # the weights fit; the users' caches queue
        name = f"memory (the KV caches of {p.concurrency} users do not all fit: {p.running} at once, the rest wait)"
    out.append(f"**Bottleneck: {name}** · {status}")
    if v.headline and not v.headline.lower().startswith("bottleneck"):
        out.append(f"### {report.tidy(v.headline)}")
    if p is not None:
        out.append(report.prediction_markdown(p))
    if v.fixes:
        out.append("**Fixes, cheapest that works first:**\n" + "\n".join(
            f"{i}. **{report.tidy(f.title)}** — {report.tidy(f.predicted_effect)}. _{report.tidy(f.why)}_"
            for i, f in enumerate(v.fixes, 1)))
    return "\n\n".join(out)


def verdict_view(store: Store, v: Verdict | None) -> tuple[str, go.Figure, go.Figure, go.Figure]:
    """Card markdown and the three figures (roofline, time line, peers) for a verdict."""
    if v is None:
        return ("", charts.empty_figure(), charts.empty_figure(), charts.empty_figure())
    card = safe_markdown(verdict_card(v))
    p = v.prediction
    if p is None:
        msg = "No prediction for this verdict (hardware or model unknown)."
        return card, charts.empty_figure(msg), charts.empty_figure(msg), charts.empty_figure(msg)
    return (card, charts.roofline_figure(p, v), charts.timeline_figure(p, v),
            charts.peers_figure(peer_rows(store, p), p, v.measured))


def export_files(v: Verdict, facts: dict[str, Any] | None, out_dir: str | os.PathLike[str]) -> tuple[str, str]:
    """Write the verdict as Markdown and JSON under ``out_dir``; returns the two paths."""
    d = Path(out_dir)
    d.mkdir(parents=True, exist_ok=True)
    stem = f"verdict-{uuid.uuid4().hex[:10]}"
    md_path, json_path = d / f"{stem}.md", d / f"{stem}.json"
    sc = Scenario.model_validate(facts) if facts else None
    md_path.write_text("# Prefill/decode advisor — verdict\n\n" + report.verdict_markdown(v, facts=sc) + "\n",
                       encoding="utf-8")
    json_path.write_text(json.dumps({"facts": facts, "verdict": v.model_dump(mode="json")}, indent=2,
                                    ensure_ascii=False), encoding="utf-8")
    return str(md_path), str(json_path)


# ------------------------------------------------------------------------------------ browser
@dataclass
class ChatView:
    """Everything one chat turn changes on the page."""

    history: list[dict[str, str]]
    facts: dict[str, Any]
    verdict: Verdict | None = None
    choices: list[str] = field(default_factory=list)
    question: str = ""
    note: str = ""
    stale: bool = False  # no verdict this turn, and the machine or model it was for changed: clear the card


def verdict_stale(before: dict[str, Any] | None, after: dict[str, Any] | None, verdict: Verdict | None) -> bool:
    """Whether a verdict on the page from an earlier turn no longer applies: this turn gave none and changed
    (or forgot) the machine or the model it judged (a paste that ran on another machine, "now on my PC")."""
    if verdict is not None:
        return False
    b, a = before or {}, after or {}
    return any(b.get(k) != a.get(k) for k in ("hardware", "model"))


def chat_turn(store: Store, message: str | None, history: Any, facts: dict[str, Any] | None) -> ChatView:
    """One browser chat turn: append the exchange to the history and update the session facts."""
    hist = normalize_history(history)
    text = (message or "").strip()[:MAX_MESSAGE_CHARS]
    facts = dict(facts or {})
    if not text:
        return ChatView(history=hist, facts=facts, note="Type a message first.")
    try:
        sc = Scenario.model_validate(facts) if facts else None
    except ValidationError:
        sc = None
    try:
        res = service.ask(store, text, sc)
    except Exception as e:  # noqa: BLE001 - ask never raises by contract; a bug must not show a traceback
        reply = friendly_error(e) if isinstance(e, AdvisorError) else unexpected_error("ask", e)
        hist += [{"role": "user", "content": safe_markdown(text)}, {"role": "assistant", "content": safe_markdown(reply)}]
        return ChatView(history=hist, facts=facts)
    hist += [{"role": "user", "content": safe_markdown(text)}, {"role": "assistant", "content": safe_markdown(res.reply)}]
    q = res.question
    after = _facts_dict(res.facts)
    return ChatView(history=hist, facts=after, verdict=res.verdict,
                    choices=list(q.choices) if q else [], question=q.text if q else "",
                    stale=verdict_stale(facts, after, res.verdict))


def facts_edited(store: Store, rows: Any, facts: dict[str, Any] | None) -> tuple[dict[str, Any], Verdict | None, str]:
    """Apply edits from the facts table; re-diagnose when hardware and model are known.

    Returns the new facts (the old ones when the edit is invalid), a verdict or None, and a note.
    """
    try:
        sc = _scenario_from_rows(rows, facts)
    except ValidationError as e:
        # the bad cell is refused; the verdict of the facts as they were stays on screen
        old = dict(facts or {})
        try:
            was = Scenario.model_validate({k: v for k, v in old.items() if k in Scenario.model_fields})
            v = service.diagnose_scenario(store, was) if was.hardware and (was.model or was.params_b) else None
        except Exception:  # noqa: BLE001 - the note below is what matters; the verdict is a courtesy
            v = None
        return old, v, friendly_error(e) + " The other facts are as they were."
    new = _facts_dict(sc)
    if not (sc.hardware and (sc.model or sc.params_b)):
        return new, None, "Updated. I still need the hardware and the model to give a verdict."
    try:
        v = service.diagnose_scenario(store, sc)
    except AdvisorError as e:
        return new, None, friendly_error(e)
    except Exception as e:  # noqa: BLE001
        return new, None, unexpected_error("facts_edited", e)
    return new, v, "Updated the verdict for the edited facts."


def _read_upload(path: str | os.PathLike[str] | None) -> str:
    if not path:
        return ""
    p = Path(path)
    if p.stat().st_size > MAX_UPLOAD_BYTES:
        raise ValueError("too large")
    return p.read_bytes().decode("utf-8", errors="replace")


def import_paste(store: Store, text: str | None, file_path: str | None, hardware: str | None,
                 facts: dict[str, Any] | None) -> tuple[str, Verdict | None]:
    """Import pasted or uploaded tool output; returns a message and the verdict (or None)."""
    message, verdict, _ = import_paste_with_facts(store, text, file_path, hardware, facts)
    return message, verdict


def import_paste_with_facts(store: Store, text: str | None, file_path: str | None, hardware: str | None,
                            facts: dict[str, Any] | None) -> tuple[str, Verdict | None, dict[str, Any] | None]:
    """Like :func:`import_paste`, plus the session facts updated with what the output said (or None)."""
    try:
        body = _read_upload(file_path) or (text or "")
    except (OSError, ValueError):
        return "I could not read that file (it must be a text file under 5 MB).", None, None
    body = body[:MAX_MESSAGE_CHARS * 2]
    if not body.strip():
        return "Paste what your tool printed (llama-bench, ollama --verbose, mlx_lm.generate …) or upload the file.", None, None
    try:
        sc = Scenario.model_validate(facts) if facts else None
    except ValidationError:
        sc = None
    sc = _read_own_words(store, sc, (hardware or "").strip()[:300], body)
    try:
        out = service.import_output(store, body, hardware=sc.hardware if sc else None, save=True, scenario=sc,
                                    words_read=True)
    except (AdvisorError, ValidationError) as e:
        return friendly_error(e), None, None
    except Exception as e:  # noqa: BLE001
        return unexpected_error("import", e), None, None
    lines = [out.message]
    if out.measurements:
        lines += ["", "| test | prefill tok/s | decode tok/s | model |", "|---|---:|---:|---|"]
        for m in out.measurements[:12]:
            lines.append(f"| {_test_label(m)} | {_fmt_rate(m.prefill_tps)} | {_fmt_rate(m.decode_tps)} | "
                         f"{_cell(' '.join(x for x in (m.model, m.quant) if x))} |")
        if len(out.measurements) > 12:
            lines.append(f"\n…and {len(out.measurements) - 12} more.")
    if out.saved_id and out.saved_for_machine:
        lines += ["", "<sub>Saved with your results: later answers compare against it.</sub>"]
    elif out.saved_id:
        lines += ["", "<sub>Saved with your results, without a machine until you say which ran it.</sub>"]
    new_facts = None
    if out.facts is not None:
        new_facts = out.facts.model_dump(mode="json", exclude_none=True, exclude={"raw_output"})
        for f in ("hardware", "memory_gb", "gpu_count"):
            # the output ran on another machine (service._backend_clash), or the hardware box named another one than
            # the session's: what was said of the old machine is forgotten, not merged back in by the page
            if (facts or {}).get(f) is not None and getattr(out.facts, f) is None:
                new_facts[f] = None
    if out.verdict is None and out.measurements and out.facts is not None and not out.facts.model:
        lines += ["", "**Which model was this?** Tell me in the chat (e.g. “llama 3.1 8b q4_k_m”) and I will say "
                  "whether these numbers are normal."]
    return safe_markdown("\n".join(lines)), out.verdict, new_facts


def _read_own_words(store: Store, sc: Scenario | None, hardware: str, body: str) -> Scenario | None:
    """The facts with what the person wrote beside a paste read as in the chat: the hardware box
    ("RTX 3060 12GB" → hardware and 12 GB of memory) and their own words around the output
    ("this feels slow, is it normal?" → kept as their question)."""
    from advisor import intake

    words = intake.own_words(body)[:2000] if intake.looks_like_tool_output(body) else ""
    for text in (hardware, words):
        if not text:
            continue
        try:
            sc = intake.update(sc, text, store, asked="hardware" if text is hardware else None).facts
        except Exception as e:  # noqa: BLE001 - intake never raises by contract; the paste must still be read
            log.warning("paste words not read: %s", e)
    if hardware and sc is not None and not sc.hardware:
        sc = sc.model_copy(update={"hardware": hardware})  # a name intake did not know: the importer resolves it
    if words and sc is not None:
        sc = sc.model_copy(update={"question": "\n".join(x for x in (sc.question, words) if x)[-4000:]})
    return sc


def _fmt_rate(x: float | None) -> str:
    return "" if x is None else f"{x:,.1f}"


def _cell(text: str) -> str:
    return safe_markdown(text.replace("|", "/").replace("\n", " ")[:60])


_ALLOWED_TAG = re.compile(r"</?(?:sub|sup|details|summary|b|i|em|strong|br|code)\s*/?>", re.I)


def safe_markdown(md: str) -> str:
    """Markdown with every raw HTML tag escaped except the few the advisor writes itself (``<sub>``,
    ``<details>``, ``<summary>``, ``<br>`` …, without attributes), and no Markdown images: a model or
    hardware name is another person's text and must show as text (``<img src=…>``, ``<a href=…>``,
    ``![x](http://…)`` would make the browser fetch or link; issue 17 item 8). Idempotent."""
    out = []
    pos = 0
    for m in re.finditer(r"<", md):
        i = m.start()
        out.append(md[pos:i])
        tag = _ALLOWED_TAG.match(md, i)
        out.append(tag.group(0) if tag else "&lt;")
        pos = tag.end() if tag else i + 1
    out.append(md[pos:])
    return re.sub(r"!\[", r"!\\[", "".join(out))


def _test_label(m: Any) -> str:
    """llama-bench style label: ``pp512``, ``tg128``, ``pp512+tg128``, with ``@ d4096`` for depth."""
    parts = []
    if m.prompt_tokens:
        parts.append(f"pp{m.prompt_tokens}")
    if m.gen_tokens:
        parts.append(f"tg{m.gen_tokens}")
    label = "+".join(parts) or "?"
    if m.depth:
        label += f" @ d{m.depth}"
    if m.batch and m.batch > 1:
        label += f" ×{m.batch}"
    return label


def default_probe(store: Store, progress: Callable[[float, str], None]) -> ProbeResult:
    """The real probe: kernel probe of the machine running the advisor, stored in ``store``."""
    return service.run_probe(store, progress=progress, kernels_only=True)


def probe_markdown(store: Store, probe_fn: ProbeFn, progress: Callable[[float, str], None]) -> str:
    """Run ``probe_fn`` and describe its result; errors become a message."""
    try:
        result = probe_fn(store, progress)
    except AdvisorError as e:
        return f"The probe could not measure this machine: {friendly_error(e)}"
    except Exception as e:  # noqa: BLE001
        return unexpected_error("probe", e)
    if isinstance(result, str):
        return result
    return report.probe_markdown(result, store)
