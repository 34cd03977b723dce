"""LM Studio: the response ``stats`` object (SDK camelCase or REST ``/api/v0`` snake_case) and the
chat window's status line (``12.34 tok/sec • 256 tokens • 0.52s to first token``).

``tokensPerSecond`` → ``decode_tps``; ``timeToFirstTokenSec`` → ``ttft_s``. LM Studio reports no
prefill rate, so ``prefill_tps`` = ``promptTokensCount`` ÷ ``timeToFirstTokenSec`` (rounded to two
decimals): a lower bound, since the time to first token may include loading the model.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

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

__all__ = ["from_json", "parse_status_line"]

_TTFT_NOTE = "prefill rate derived from the time to first token, which may include loading the model"


def _pick(d: dict[str, Any], *keys: str) -> Any:
    return next((d[k] for k in keys if d.get(k) is not None), None)


def from_json(obj: dict[str, Any], out: Outcome, line: int) -> bool:
    """Add the measurement of an LM Studio response or its ``stats`` object."""
    stats = obj["stats"] if isinstance(obj.get("stats"), dict) else obj
    usage = obj["usage"] if isinstance(obj.get("usage"), dict) else {}
    info = obj["model_info"] if isinstance(obj.get("model_info"), dict) else {}
    runtime = obj["runtime"] if isinstance(obj.get("runtime"), dict) else {}
    ttft = to_float(_pick(stats, "timeToFirstTokenSec", "time_to_first_token"))
    n_prompt = to_int(_pick(stats, "promptTokensCount")) or to_int(_pick(usage, "prompt_tokens"))
    n_gen = to_int(_pick(stats, "predictedTokensCount")) or to_int(_pick(usage, "completion_tokens"))
    layers = to_int(stats.get("numGpuLayers"))
    notes = [_TTFT_NOTE] if n_prompt and ttft else []
    if layers is not None and layers < 0:
        notes.append("numGpuLayers -1: LM Studio offloads as many layers as it can")
    model = _pick(obj, "model", "modelKey", "model_key")
    runtime_name = str(runtime.get("name") or "")
    fields = {
        "decode_tps": to_float(_pick(stats, "tokensPerSecond", "tokens_per_second")),
        "prefill_tps": derive_rate(n_prompt, ttft) if n_prompt else None,
        "prompt_tokens": n_prompt,
        "gen_tokens": n_gen,
        "ttft_s": ttft,
        "n_gpu_layers": layers if layers is not None and layers >= 0 else None,
        "model": model if isinstance(model, str) else None,
        "quant": normalise_quant(str(info.get("quant") or "")),
        "backend": "Metal" if "metal" in runtime_name else "CUDA" if "cuda" in runtime_name else None,
        "notes": notes,
    }
    return out.add(line, fields, f"LM Studio stats at line {line + 1}")


_STATUS = re.compile(
    rf"(?P<tps>{NUM})\s*tok/sec\s*[•·|,]\s*(?P<n>\d+)\s*tokens\b(?:\s*[•·|,]\s*(?P<ttft>{NUM})\s*s\s*(?:to\s*)?first\s*token)?",
    re.I,
)


def parse_status_line(lines: Sequence[str]) -> Outcome:
    """Read the chat window's status line: decode rate, generated tokens, time to first token."""
    out = Outcome("lmstudio")
    for i, line in enumerate(lines):
        m = _STATUS.search(line)
        if not m:
            continue
        comma = guess_decimal_comma([m.group("tps"), m.group("ttft") or ""])
        ttft = parse_number(m.group("ttft"), comma) if m.group("ttft") else None
        fields = {"decode_tps": parse_number(m.group("tps"), comma), "gen_tokens": to_int(m.group("n")), "ttft_s": ttft}
        if out.add(i, fields, f"line {i + 1}"):
            out.consumed.add(i)
    return out
