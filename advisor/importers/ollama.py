"""Ollama: ``ollama run --verbose`` statistics, the API's timing fields and ``ollama ps``.

``--verbose`` prints rates with two decimals and Go durations; the API gives counts and durations
in nanoseconds, from which rates are count ÷ seconds (rounded to 2 decimals like the CLI prints).
``ollama ps`` carries no rate: each model becomes a placement record (``model``, ``gpu_fraction``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from advisor.importers._registry import Example, Importer, signature
from advisor.importers._util import (
    NUM,
    RATE_AGREES,
    Outcome,
    derive_rate,
    guess_decimal_comma,
    is_rate,
    normalise_quant,
    parse_go_duration,
    parse_number,
    parse_size_gb,
    to_float,
    to_int,
)

__all__ = [
    "IMPORTERS",
    "cache_hit_note",
    "from_api_json",
    "from_ps_json",
    "gpu_fraction",
    "parse_api_repr",
    "parse_ps",
    "parse_verbose",
]

_KEYS = (
    "total duration",
    "load duration",
    "prompt eval count",
    "prompt eval duration",
    "prompt eval rate",
    "eval count",
    "eval duration",
    "eval rate",
    "sample count",
    "sample duration",
    "sample rate",
)
_LINE = re.compile(rf"^\s*(?P<key>{'|'.join(_KEYS)})\s*:\s*(?P<value>.+?)\s*$", re.I)
_COUNT = re.compile(rf"^({NUM})\s*(?:token\(s\)|tokens?)?$", re.I)
_RATE = re.compile(rf"^({NUM})\s*(?:tokens?/s(?:ec)?|tok/s|t/s)?$", re.I)
# Ollama's runner counts cached prompt tokens but times only the new ones, so a prompt-cache hit
# shows as an absurd prompt eval rate: above 10k tok/s on a sizeable prompt, or 300x the decode rate.
_CACHE_HIT_TPS = 10_000.0
_CACHE_HIT_MIN_TOKENS = 256
_CACHE_HIT_DECODE_RATIO = 300.0
_COLD_LOAD_S = 1.0  # a load duration above this means the model was loaded for the request


def cache_hit_note(prefill: float | None, decode: float | None, count: int | None) -> str | None:
    """A note when a prompt eval rate is too high to be real prefill (a prompt-cache hit)."""
    if prefill is None:
        return None
    fast = prefill > _CACHE_HIT_TPS and (count or 0) >= _CACHE_HIT_MIN_TOKENS
    far_above_decode = (
        bool(decode) and (count or 0) >= 32 and prefill > _CACHE_HIT_DECODE_RATIO * (decode or 0)
    )
    if fast or far_above_decode:
        return (
            f"prompt eval rate {prefill:g} tok/s is implausibly high for {count or '?'} tokens: probably a "
            "prompt-cache hit (only the uncached tokens were evaluated); it is not the prefill speed"
        )
    return None


def _load_note(load_s: float | None) -> str | None:
    if load_s is not None and load_s > _COLD_LOAD_S:
        return f"load duration {load_s:.1f} s: the model was loaded for this request (cold start)"
    return None


def _checked(phase: str, printed: float | None, count: float | None, secs: float | None, total: float | None,
             warn: list[str]) -> float | None:
    """A phase's rate when the block agrees with itself: the printed rate (else count ÷ duration), or None (and a
    warning) when the printed rate and count ÷ duration disagree, or the phase took longer than the whole request."""
    derived = derive_rate(count, secs)
    if secs and total and secs > total * 1.02:
        warn.append(f"{phase} duration {secs:g} s is longer than the total duration {total:g} s: the block does not add "
                    f"up, its {phase} rate is not kept")
        return None
    if printed is not None and derived is not None and abs(printed / derived - 1) > RATE_AGREES:
        warn.append(f"{phase} rate {printed:g} disagrees with {phase} count ÷ duration ({count:g} tokens in {secs:g} s = "
                    f"{derived:.3g} tok/s): the block does not add up, its {phase} rate is not kept")
        return None
    return printed if printed is not None else derived


def _fields(values: dict[str, float], rates: dict[str, float | None], warn: list[str] | None = None) -> dict[str, Any]:
    """Measurement fields from counts (tokens), durations (s) and printed rates (tok/s); a phase whose figures
    contradict each other is left out, said in ``warn``."""
    warn = warn if warn is not None else []
    n_prompt, n_gen = values.get("prompt eval count"), values.get("eval count")
    total = values.get("total duration")
    prefill = rates.get("prompt eval rate")
    if prefill is not None or "prompt eval rate" not in rates:
        prefill = _checked("prompt eval", prefill, n_prompt, values.get("prompt eval duration"), total, warn)
    decode = rates.get("eval rate")
    if decode is not None or "eval rate" not in rates:
        decode = _checked("eval", decode, n_gen, values.get("eval duration"), total, warn)
    prompt_tokens = to_int(n_prompt) if n_prompt is not None else (0 if n_gen is not None else None)
    load_s = values.get("load duration")
    notes = [n for n in (cache_hit_note(prefill, decode, prompt_tokens), _load_note(load_s)) if n]
    if n_prompt is None and n_gen is not None:
        notes.append(
            "no prompt evaluation reported: the whole prompt came from the cache (ollama omits zeros)"
        )
    return {
        "prefill_tps": prefill,
        "decode_tps": decode,
        "prompt_tokens": prompt_tokens,
        "gen_tokens": to_int(n_gen),
        "load_s": load_s,
        "notes": notes,
    }


def _value(key: str, text: str, comma: bool) -> float | None:
    if key.endswith("duration"):
        return parse_go_duration(text)
    m = (_COUNT if key.endswith("count") else _RATE).match(text)
    return parse_number(m.group(1), comma) if m else None


def parse_verbose(lines: Sequence[str]) -> Outcome:
    """Read ``ollama run --verbose`` statistics blocks (``total duration:`` ... ``eval rate:``)."""
    out = Outcome("ollama-verbose")
    matches = [(i, _LINE.match(line)) for i, line in enumerate(lines)]
    found = [(i, m) for i, m in matches if m]
    comma = guess_decimal_comma(t for _, m in found for t in re.findall(NUM, m.group("value")))
    values: dict[str, float] = {}
    rates: dict[str, float | None] = {}
    first: int | None = None

    def flush() -> None:
        nonlocal values, rates, first
        if first is not None and (
            "eval rate" in rates or "prompt eval rate" in rates or "eval count" in values
        ):
            warn: list[str] = []
            out.add(first, _fields(values, rates, warn), f"ollama stats at line {first + 1}")
            out.warnings += [f"line {first + 1}: {w}" for w in warn]
        values, rates, first = {}, {}, None

    for i, m in found:
        key = m.group("key").lower()
        if key in values or key in rates or (key == "total duration" and first is not None):
            flush()
        v = _value(key, m.group("value"), comma)
        first = i if first is None else first
        if key.endswith("rate"):
            ok = is_rate(v)
            rates[key] = v if ok else None
            if not ok:
                out.warnings.append(f"line {i + 1}: {key} {m.group('value')!r} is not a usable rate")
                continue
        elif v is None:
            out.warnings.append(f"line {i + 1}: {key} {m.group('value')!r} is not understood")
            continue
        else:
            values[key] = v
        out.consumed.add(i)
    flush()
    return out


_API_KEYS = (
    "total_duration",
    "load_duration",
    "prompt_eval_count",
    "prompt_eval_duration",
    "eval_count",
    "eval_duration",
)


def _api_fields(obj: dict[str, Any]) -> dict[str, Any]:
    ns = {k: to_float(obj.get(k)) for k in _API_KEYS}
    values = {
        "prompt eval count": ns["prompt_eval_count"],
        "eval count": ns["eval_count"],
        "prompt eval duration": ns["prompt_eval_duration"] / 1e9 if ns["prompt_eval_duration"] else None,
        "eval duration": ns["eval_duration"] / 1e9 if ns["eval_duration"] else None,
        "load duration": ns["load_duration"] / 1e9 if ns["load_duration"] is not None else None,
    }
    fields = _fields({k: v for k, v in values.items() if v is not None}, {})
    model = obj.get("model")
    fields["model"] = model if isinstance(model, str) and model else None
    return fields


def from_api_json(obj: dict[str, Any], out: Outcome, line: int) -> bool:
    """Add the measurement of an ``/api/generate`` or ``/api/chat`` response (final chunk, ``done``).

    Streaming chunks without timing fields are understood but give nothing.
    """
    if obj.get("done") is False or not any(k in obj for k in ("eval_count", "prompt_eval_count")):
        return True
    return out.add(line, _api_fields(obj), f"ollama response at line {line + 1}")


_REPR_PAIR = re.compile(r"\b(" + "|".join(_API_KEYS) + r"|model)\s*=\s*('[^']*'|\"[^\"]*\"|\d+)")


def parse_api_repr(lines: Sequence[str]) -> Outcome:
    """Read the Python client's repr of a response (``... eval_count=25 eval_duration=321374542``)."""
    out = Outcome("ollama-api")
    for i, line in enumerate(lines):
        if "eval_count" not in line or "eval_duration" not in line:
            continue
        obj: dict[str, Any] = {}
        for key, raw in _REPR_PAIR.findall(line):
            obj[key] = raw.strip("'\"") if raw[0] in "'\"" else to_int(raw)
        if "eval_count" in obj and out.add(i, _api_fields(obj), f"line {i + 1}"):
            out.consumed.add(i)
    return out


_PS_HEADER = re.compile(r"^\s*NAME\s+ID\s+SIZE\s+PROCESSOR\b")
_PS_ROW = re.compile(
    r"^\s*(?P<name>\S+)\s+(?P<id>[0-9a-f]{6,64})\s+(?P<size>[\d.,]+\s*[KMGT]?i?B)\s+"
    r"(?P<proc>\d+%\s*/\s*\d+%\s*CPU\s*/\s*GPU|\d+%\s*(?:GPU|CPU))(?:\s+(?P<rest>.*))?$",
    re.I,
)


def gpu_fraction(processor: str) -> float | None:
    """Share of the model on the GPU from ``ollama ps``'s PROCESSOR: ``100% GPU``, ``48%/52% CPU/GPU``."""
    nums = [float(n) for n in re.findall(r"(\d+(?:\.\d+)?)%", processor)]
    up = processor.upper()
    if len(nums) == 2 and "CPU/GPU" in up.replace(" ", ""):
        return round(nums[1] / 100, 4)
    if len(nums) == 1:
        return round(nums[0] / 100, 4) if "GPU" in up else round(1 - nums[0] / 100, 4)
    return None


def _placement(name: str, fraction: float | None, size_gb: float | None, extra: str) -> dict[str, Any]:
    note = f"ollama ps: {name} uses {size_gb:g} GB (weights + KV cache)" if size_gb is not None else ""
    return {
        "model": name,
        "gpu_fraction": fraction,
        "notes": [n for n in (note, extra) if n],
        "placement_only": True,
    }


def parse_ps(lines: Sequence[str]) -> Outcome:
    """Read the ``ollama ps`` table (``NAME ID SIZE PROCESSOR [CONTEXT] UNTIL``): one placement per model."""
    out = Outcome("ollama-ps")
    seen_header = False
    for i, line in enumerate(lines):
        if _PS_HEADER.match(line):
            seen_header = True
            out.consumed.add(i)
            continue
        m = _PS_ROW.match(line) if seen_header else None
        if not m:
            continue
        frac, size = gpu_fraction(m.group("proc")), parse_size_gb(m.group("size"))
        extra = (
            "partly on the CPU: decode slows to the speed of system memory"
            if frac is not None and frac < 1
            else ""
        )
        out.machine.setdefault("ollama_ps", []).append(
            {
                "name": m.group("name"),
                "id": m.group("id"),
                "size_gb": size,
                "processor": m.group("proc"),
                "gpu_fraction": frac,
                "rest": (m.group("rest") or "").strip(),
            }
        )
        if out.add(i, _placement(m.group("name"), frac, size, extra), f"line {i + 1}"):
            out.consumed.add(i)
    return out


def from_ps_json(obj: dict[str, Any], out: Outcome, line: int) -> bool:
    """Add placements from ``/api/ps`` (``models[{name, size, size_vram}]``): gpu_fraction = size_vram ÷ size."""
    kept = False
    for model in obj.get("models") or []:
        if not isinstance(model, dict):
            continue
        size, vram = to_float(model.get("size")), to_float(model.get("size_vram"))
        frac = round(min(1.0, vram / size), 4) if size and vram is not None and size > 0 else None
        name = str(model.get("name") or model.get("model") or "") or None
        size_gb = size / 1e9 if size else None
        out.machine.setdefault("ollama_ps", []).append(
            {"name": name, "size_gb": size_gb, "gpu_fraction": frac}
        )
        details = model["details"] if isinstance(model.get("details"), dict) else {}
        fields = _placement(name or "?", frac, size_gb, "")
        fields["quant"] = normalise_quant(str(details.get("quantization_level") or ""))
        kept = out.add(line, fields, f"ollama ps entry at line {line + 1}") or kept
    return kept


def _is_api_response(obj: dict[str, Any]) -> bool:
    if any(k in obj for k in ("eval_count", "eval_duration", "prompt_eval_count", "prompt_eval_duration")):
        return True
    return "done" in obj and any(k in obj for k in ("response", "message")) and "created_at" in obj


def _is_ps(obj: dict[str, Any]) -> bool:
    models = obj.get("models")
    return isinstance(models, list) and any(
        isinstance(m, dict) and any(k in m for k in ("size_vram", "digest")) for m in models
    )


IMPORTERS = (
    Importer(
        name="ollama-verbose",
        engine="ollama",
        describe="ollama run --verbose statistics (Go durations)",
        signature=signature(
            r"^\s*(?:prompt eval rate|eval rate|eval count|eval duration|prompt eval count)\s*:", re.I
        ),
        parse_text=parse_verbose,
        order=20,
        examples=(
            Example(
                "total duration:       2m27.989997625s\nload duration:        559.665542ms\n"
                "prompt eval count:    13 token(s)\nprompt eval duration: 19.747s\n"
                "prompt eval rate:     0.66 tokens/s\neval count:           1133 token(s)\n"
                "eval duration:        2m7.682s\neval rate:            8.87 tokens/s",
                ({"prefill_tps": 0.66, "decode_tps": 8.87, "gen_tokens": 1133, "backend": "ollama"},),
            ),
        ),
    ),
    Importer(
        name="ollama-api",
        engine="ollama",
        describe="/api/generate or /api/chat JSON (durations in ns), final chunk; the Python client's repr",
        signature=signature(
            r"\beval_count['\"]?\s*[=:]\s*\d.*\beval_duration|\beval_duration['\"]?\s*[=:]\s*\d.*\beval_count"
        ),
        parse_text=parse_api_repr,
        json_test=_is_api_response,
        from_json=from_api_json,
        order=21,
        examples=(
            Example(
                '{"model": "llama3.2", "done": true, "prompt_eval_count": 29, "prompt_eval_duration": 516695792,'
                ' "eval_count": 25, "eval_duration": 321374542}',
                ({"prefill_tps": 56.13, "decode_tps": 77.79, "engine": "ollama"},),
            ),
        ),
    ),
    Importer(
        name="ollama-ps",
        engine="ollama",
        describe="ollama ps table or /api/ps JSON: placement records, no rates",
        signature=signature(r"^\s*NAME\s+ID\s+SIZE\s+PROCESSOR\b"),
        parse_text=parse_ps,
        json_test=_is_ps,
        from_json=from_ps_json,
        order=22,
        placement=True,
        examples=(
            Example(
                "NAME            ID              SIZE      PROCESSOR          UNTIL\n"
                "llama3.1:70b    c0df3564cfe8    42 GB     48%/52% CPU/GPU    4 minutes from now",
                ({"model": "llama3.1:70b", "gpu_fraction": 0.52, "decode_tps": None},),
            ),
        ),
    ),
)
