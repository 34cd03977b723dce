"""The app's API endpoints (``/ask``, ``/predict``, ``/diagnose``, ``/import``): JSON in, JSON out, never a
traceback. The chat, CLI and API call the same service functions (:mod:`advisor.service`)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from pydantic import ValidationError

from advisor import service
from advisor.errors import AdvisorError
from advisor.models import Scenario
from advisor.understand.engine import check_backend
from knowledge.store import Store
from ui.handlers import (
    MAX_MESSAGE_CHARS,
    error_json,
    friendly_error,
    parse_scenario_json,
    safe_markdown,
    unexpected_error,
)

__all__ = ["api_ask", "api_diagnose", "api_import", "api_predict", "salvage_facts"]


def api_ask(store: Store, message: str, facts_json: str = "") -> tuple[str, str, str]:
    """``/ask``: (reply markdown, verdict JSON or ``"null"``, facts JSON to send with the next turn)."""
    said = ""
    try:
        facts = parse_scenario_json(facts_json)
    except (ValueError, AdvisorError) as e:  # JSONDecodeError and ValidationError are ValueErrors
        kept, dropped = salvage_facts(facts_json)
        if kept is None:
            return (f"I could not read the facts you sent: {friendly_error(e)}", "null",
                    Scenario().model_dump_json())
        # one bad value must not cost the conversation: the rest of the facts are kept, and it is said
        facts = kept
        said = (f"I could not use {', '.join(dropped)} from the facts you sent ({friendly_error(e)}); the rest is "
                "kept.\n\n")
    if message is not None and not isinstance(message, str):
        return ("Send your message as text, e.g. \"RTX 4090, llama 3.1 8b Q4_K_M: is 40 tok/s normal?\".", "null",
                (facts or Scenario()).model_dump_json())
    text = (message or "")[:MAX_MESSAGE_CHARS]
    try:
        res = service.ask(store, text, facts)
    except Exception as e:  # noqa: BLE001 - never a traceback to a client
        reply = friendly_error(e) if isinstance(e, (AdvisorError, ValidationError)) else unexpected_error("api ask", e)
        return reply, "null", (facts or Scenario()).model_dump_json()
    verdict = res.verdict.model_dump_json() if res.verdict is not None else "null"
    return safe_markdown(said + res.reply), verdict, res.facts.model_dump_json()


def salvage_facts(facts_json: Any) -> tuple[Scenario | None, list[str]]:
    """(the facts without the fields whose values are unusable or whose keys are unknown, those fields), or
    (None, []) when the text is no JSON object at all."""
    try:
        data = facts_json if isinstance(facts_json, dict) else json.loads(facts_json or "")
    except (ValueError, TypeError, RecursionError):  # "[[[[…": nested too deep to be facts
        return None, []
    if not isinstance(data, dict):
        return None, []
    data = {k: v for k, v in data.items() if isinstance(k, str)}
    dropped = sorted(k for k in data if k not in Scenario.model_fields)
    data = {k: v for k, v in data.items() if k in Scenario.model_fields}
    for _ in range(len(data) + 1):
        try:
            return Scenario.model_validate(data), dropped
        except ValidationError as e:
            bad = {str(err["loc"][0]) for err in e.errors() if err.get("loc")} & set(data)
            if not bad:  # a rule across fields ("active_params_b" above "params_b"): the one field whose removal cures it
                bad = next(({k} for k in sorted(data, reverse=True) if _valid_without(data, k)), set())
            if not bad:
                return None, []
            dropped += sorted(bad)
            data = {k: v for k, v in data.items() if k not in bad}
    return None, []


def _valid_without(data: dict[str, Any], key: str) -> bool:
    try:
        Scenario.model_validate({k: v for k, v in data.items() if k != key})
        return True
    except ValidationError:
        return False


def _scenario_call(store: Store, scenario_json: str, fn: Callable[[Store, Scenario], Any], where: str) -> str:
    try:
        sc = parse_scenario_json(scenario_json)
        if sc is None:
            from advisor.errors import InputError

            raise InputError("Send a scenario as a JSON object, e.g. "
                             "{\"hardware\": \"RTX 4090\", \"model\": \"llama 3.1 8b\", \"quant\": \"Q4_K_M\"}.")
        check_backend(sc.backend)  # "backend": "foo" is refused, as the CLI refuses --backend foo
        return fn(store, sc).model_dump_json()
    except (ValueError, AdvisorError) as e:
        return error_json(e)
    except Exception as e:  # noqa: BLE001
        return json.dumps({"error": unexpected_error(where, e)})


def api_predict(store: Store, scenario_json: str) -> str:
    """``/predict``: scenario JSON → Prediction JSON, or ``{"error": ...}``."""
    return _scenario_call(store, scenario_json, service.predict_scenario, "api predict")


def api_diagnose(store: Store, scenario_json: str) -> str:
    """``/diagnose``: scenario JSON → Verdict JSON, or ``{"error": ...}``."""
    return _scenario_call(store, scenario_json, service.diagnose_scenario, "api diagnose")


def api_import(store: Store, text: str, hardware: str = "") -> str:
    """``/import``: tool output (+ optional hardware) → ImportOutcome JSON, or ``{"error": ...}``."""
    if not isinstance(text, str) or not isinstance(hardware, (str, type(None))):
        return json.dumps({"error": "Send the tool output (and the hardware) as text, e.g. what llama-bench "
                                    "printed."})
    body = (text or "")[:MAX_MESSAGE_CHARS * 2]
    if not body.strip():
        return json.dumps({"error": "Send the text your tool printed (llama-bench, ollama --verbose, …)."})
    try:
        out = service.import_output(store, body, hardware=(hardware or "").strip() or None, save=True)
        if len(text) > len(body):  # said, not silently dropped: measurements may stand in the part not read
            out = out.model_copy(update={"warnings": [*out.warnings, (
                f"Only the first {len(body):,} of {len(text):,} characters were read; send the rest in another "
                "request, or run `advisor import FILE` (up to 5 MB).")]})
        return out.model_dump_json()
    except (ValueError, AdvisorError) as e:
        return error_json(e)
    except Exception as e:  # noqa: BLE001
        return json.dumps({"error": unexpected_error("api import", e)})
