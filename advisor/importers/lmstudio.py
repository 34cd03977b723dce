"""LM Studio: the response ``stats`` object (SDK camelCase or REST ``/api/v0`` snake_case), the
``lms chat --stats`` block and the chat window's status line
(``12.34 tok/sec • 256 tokens • 0.52s to first token``).

``tokensPerSecond`` → ``decode_tps``; ``timeToFirstTokenSec`` → ``ttft_s``. LM Studio reports no
prefill rate, so ``prefill_tps`` = ``promptTokensCount`` ÷ ``timeToFirstTokenSec`` (rounded to two
decimals): a lower bound, since the time to first token may include loading the model.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from advisor.importers._registry import Example, Importer, signature
from advisor.importers._util import (
    NUM,
    Outcome,
    derive_rate,
    guess_decimal_comma,
    normalise_quant,
    parse_number,
    to_float,
    to_int,
)

__all__ = ["IMPORTERS", "from_json", "parse_text"]

_TTFT_NOTE = "prefill rate derived from the time to first token, which may include loading the model"


def _pick(d: dict[str, Any], *keys: str) -> Any:
    return next((d[k] for k in keys if d.get(k) is not None), None)


def _dict(obj: dict[str, Any], key: str) -> dict[str, Any]:
    value = obj.get(key)
    return value if isinstance(value, dict) else {}


def _fields(
    decode: float | None, ttft: float | None, n_prompt: int | None, n_gen: int | None
) -> dict[str, Any]:
    """Measurement fields from LM Studio's decode rate (tok/s), TTFT (s) and token counts."""
    return {
        "decode_tps": decode,
        "prefill_tps": derive_rate(n_prompt, ttft) if n_prompt else None,
        "prompt_tokens": n_prompt,
        "gen_tokens": n_gen,
        "ttft_s": ttft,
        "notes": [_TTFT_NOTE] if n_prompt and ttft else [],
    }


def from_json(obj: dict[str, Any], out: Outcome, line: int) -> bool:
    """Add the measurement of an LM Studio response or its ``stats`` object."""
    stats = _dict(obj, "stats") or obj
    usage, info, runtime = _dict(obj, "usage"), _dict(obj, "model_info"), _dict(obj, "runtime")
    fields = _fields(
        to_float(_pick(stats, "tokensPerSecond", "tokens_per_second")),
        to_float(_pick(stats, "timeToFirstTokenSec", "time_to_first_token")),
        to_int(_pick(stats, "promptTokensCount")) or to_int(_pick(usage, "prompt_tokens")),
        to_int(_pick(stats, "predictedTokensCount")) or to_int(_pick(usage, "completion_tokens")),
    )
    layers = to_int(stats.get("numGpuLayers"))
    if layers is not None and layers < 0:
        fields["notes"].append("numGpuLayers -1: LM Studio offloads as many layers as it can")
    model = _pick(obj, "model", "modelKey", "model_key")
    runtime_name = str(runtime.get("name") or "")
    fields.update(
        n_gpu_layers=layers if layers is not None and layers >= 0 else None,
        model=model if isinstance(model, str) else None,
        quant=normalise_quant(str(info.get("quant") or "")),
        backend="Metal" if "metal" in runtime_name else "CUDA" if "cuda" in runtime_name else None,
    )
    return out.add(line, fields, f"LM Studio stats at line {line + 1}")


# ``lms chat --stats``: a "Prediction Stats:" block of "Key: value" lines ("" = read, not used).
_LMS_KEYS = {
    "tokens/second": "decode",
    "time to first token": "ttft",
    "prompt tokens": "prompt",
    "predicted tokens": "gen",
    "total tokens": "",
    "stop reason": "",
    "prediction stats": "",
}
# the key is words of letters and "/" split by single spaces (deterministic: a line of 4,000 spaces is not cubic)
_LMS_LINE = re.compile(rf"^\s*(?P<key>[A-Za-z/]+(?: [A-Za-z/]+)*)\s*:\s*(?:(?P<num>{NUM})\s*s?|\w+)?\s*$")
_STATUS = re.compile(
    rf"(?<![\d.])(?P<tps>{NUM})\s*tok/sec\s*[•·|,]\s*(?P<n>\d+)\s*tokens\b(?:\s*[•·|,]\s*(?P<ttft>{NUM})\s*s\s*(?:to\s*)?first\s*token)?",
    re.I,
)


def _lms_blocks(lines: Sequence[str], out: Outcome) -> None:
    block: dict[str, float | None] = {}
    first: int | None = None
    for i, line in enumerate([*lines, ""]):
        m = _LMS_LINE.match(line)
        key = _LMS_KEYS.get(m.group("key").strip().lower()) if m else None
        if m is None or key is None:
            if first is not None and block.get("decode") is not None:
                counts = (to_int(block.get("prompt")), to_int(block.get("gen")))
                out.add(
                    first,
                    _fields(block["decode"], block.get("ttft"), *counts),
                    f"lms stats at line {first + 1}",
                )
            block, first = {}, None
            continue
        if key:
            block[key] = parse_number(m.group("num"))
        first = i if first is None else first
        out.consumed.add(i)


def parse_text(lines: Sequence[str]) -> Outcome:
    """Read ``lms chat --stats`` blocks and the chat window's status line."""
    out = Outcome("lmstudio")
    _lms_blocks(lines, out)
    for i, line in enumerate(lines):
        m = _STATUS.search(line)
        if not m:
            continue
        comma = guess_decimal_comma([m.group("tps"), m.group("ttft") or ""])
        ttft = parse_number(m.group("ttft"), comma) if m.group("ttft") else None
        fields = {
            "decode_tps": parse_number(m.group("tps"), comma),
            "gen_tokens": to_int(m.group("n")),
            "ttft_s": ttft,
        }
        if out.add(i, fields, f"line {i + 1}"):
            out.consumed.add(i)
    return out


def _is_stats(obj: dict[str, Any]) -> bool:
    stats = obj.get("stats")
    return any(k in obj for k in ("tokensPerSecond", "timeToFirstTokenSec")) or (
        isinstance(stats, dict)
        and any(k in stats for k in ("tokensPerSecond", "tokens_per_second", "timeToFirstTokenSec"))
    )


IMPORTERS = (
    Importer(
        name="lmstudio",
        engine="lm-studio",
        describe="LM Studio stats JSON, lms chat --stats, the chat status line (prefill from time to first token)",
        signature=signature(r"tok/sec\s*[•·|,]\s*\d+\s*tokens\b|^\s*Tokens/Second\s*:", re.I),
        parse_text=parse_text,
        json_test=_is_stats,
        from_json=from_json,
        order=40,
        examples=(
            Example(
                '"stats": {\n  "tokensPerSecond": 2.039456782601547,\n  "timeToFirstTokenSec": 15.076,\n'
                '  "promptTokensCount": 31,\n  "predictedTokensCount": 10\n}',
                ({"decode_tps": 2.039456782601547, "prefill_tps": 2.06, "engine": "lm-studio"},),
            ),
            Example(
                "12.34 tok/sec • 256 tokens • 0.52s to first token", ({"decode_tps": 12.34, "ttft_s": 0.52},)
            ),
        ),
    ),
)
