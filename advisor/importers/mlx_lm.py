"""mlx-lm: ``mlx_lm.generate --verbose`` / ``batch_generate`` statistics and ``mlx_lm.benchmark``.

``Prompt: N tokens, X tokens-per-sec`` → ``prefill_tps`` X (mlx-lm times the prompt up to the first
generated token), ``Generation: M tokens, Y tokens-per-sec`` → ``decode_tps``, ``Peak memory`` (GB,
10^9 bytes) → ``peak_memory_gb``. ``mlx_lm.benchmark`` gives one measurement per configuration, from
its ``Averages:`` line (the trials are its samples, like llama-bench's repetitions).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from advisor.importers._registry import Example, Importer, signature
from advisor.importers._util import NUM, Outcome, guess_decimal_comma, is_rate, parse_number, to_int

__all__ = ["IMPORTERS", "parse_benchmark", "parse_generate"]

_GEN = re.compile(
    rf"^\s*(?P<batch>\[batch_generate\]\s*)?(?P<what>Prompt|Generation):\s*(?:(?P<n>\d+)\s*tokens?\s*,\s*)?"
    rf"(?P<tps>{NUM})\s*tokens[- ]per[- ]sec(?:ond)?\s*$",
    re.I,
)
_PEAK = re.compile(rf"^\s*(?:\[batch_generate\]\s*)?Peak memory:\s*(?P<gb>{NUM})\s*GB\s*$", re.I)
_WARN = re.compile(
    r"^\s*(?:\[WARNING\]\s*)?Generating with a model that requires\s*(?P<need>[\d.]+)\s*MB.*?"
    r"maximum recommended size of\s*(?P<max>[\d.]+)\s*MB",
    re.I,
)
_BATCH_NOTE = "batch_generate: rates are aggregate over all prompts of the batch"
_NO_TEXT = re.compile(r"^\s*No text generated for this prompt\s*$", re.I)


def parse_generate(lines: Sequence[str]) -> Outcome:
    """Read ``Prompt:`` / ``Generation:`` / ``Peak memory:`` lines (also with ``[batch_generate]``)."""
    out = Outcome("mlx-generate")
    block: dict[str, Any] = {}
    first: int | None = None
    notes: list[str] = []

    def flush() -> None:
        nonlocal block, first
        if first is not None and ("prefill_tps" in block or "decode_tps" in block):
            out.add(first, {**block, "notes": list(notes)}, f"mlx-lm statistics at line {first + 1}")
        block, first = {}, None

    for i, line in enumerate(lines):
        warn, gen, peak = _WARN.match(line), _GEN.match(line), _PEAK.match(line)
        if warn:
            notes.append(
                f"model needs {warn.group('need')} MB, close to the {warn.group('max')} MB the GPU may wire"
            )
            out.machine["recommended_max_mb"] = float(warn.group("max"))
        elif _NO_TEXT.match(line):
            out.warnings.append(f"line {i + 1}: mlx-lm generated no text for this prompt")
        elif gen:
            what = "prefill" if gen.group("what").lower() == "prompt" else "decode"
            if what == "prefill" or f"{what}_tps" in block:
                flush()
            tps = parse_number(gen.group("tps"), guess_decimal_comma([gen.group("tps")]))
            if not is_rate(tps):
                out.warnings.append(
                    f"line {i + 1}: {gen.group('what')} rate {gen.group('tps')!r} is not usable"
                )
                continue
            block[f"{what}_tps"] = tps
            if gen.group("n") is not None:
                block["prompt_tokens" if what == "prefill" else "gen_tokens"] = to_int(gen.group("n"))
            if gen.group("batch") and _BATCH_NOTE not in notes:
                notes.append(_BATCH_NOTE)
            first = i if first is None else first
        elif peak and first is not None:
            gb = parse_number(peak.group("gb"))
            block["peak_memory_gb"] = gb if is_rate(gb) else None
            flush()
        else:
            continue
        out.consumed.add(i)
    flush()
    return out


_TIMING_WITH = re.compile(
    r"^\s*Timing with prompt_tokens\s*=\s*(\d+)\s*(?:,|and)\s*generation_tokens\s*=\s*(\d+)"
    r"(?:\s*,\s*batch_size\s*=\s*(\d+))?\s*\.?\s*$",
    re.I,
)
_TRIAL = re.compile(r"^\s*(Trial\s+\d+|Averages):\s*(.*)$", re.I)
_PAIR = re.compile(rf"(?<!\w)(\w+)\s*=\s*({NUM})")
_WARMUP = re.compile(r"^\s*Running warmup\.*\s*$", re.I)


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


class _Config:
    """One ``Timing with ...`` configuration and the trials printed under it."""

    def __init__(self, line: int, prompt: int | None, gen: int | None, batch: int | None) -> None:
        self.line, self.prompt, self.gen, self.batch = line, prompt, gen, batch
        self.trials: list[dict[str, float]] = []
        self.averages: dict[str, float] | None = None

    def fields(self) -> dict[str, Any] | None:
        if self.averages is None and not self.trials:
            return None
        avg: dict[str, float | None] = dict(self.averages or {})
        if not avg:
            avg = {k: _mean([t[k] for t in self.trials if k in t]) for k in self.trials[0]}
        notes = [] if self.averages else ["no Averages line: mean of the trials shown"]
        for key in ("prompt_tps", "generation_tps"):
            samples = [t[key] for t in self.trials if key in t]
            if samples:
                notes.append(f"{key} per trial: " + ", ".join(f"{v:g}" for v in samples))
        return {
            "prefill_tps": avg.get("prompt_tps"),
            "decode_tps": avg.get("generation_tps"),
            "peak_memory_gb": avg.get("peak_memory"),
            "prompt_tokens": self.prompt,
            "gen_tokens": self.gen,
            "batch": self.batch,
            "notes": notes,
        }


def parse_benchmark(lines: Sequence[str]) -> Outcome:
    """Read ``mlx_lm.benchmark`` output: ``Timing with ...``, ``Trial i: ...``, ``Averages: ...``."""
    out = Outcome("mlx-lm-benchmark")
    configs: list[_Config] = []
    for i, line in enumerate(lines):
        timing, trial = _TIMING_WITH.match(line), _TRIAL.match(line)
        if _WARMUP.match(line):
            out.consumed.add(i)
        elif timing:
            prompt, gen_n, batch = (to_int(g) for g in timing.groups())
            configs.append(_Config(i, prompt, gen_n, batch))
            out.consumed.add(i)
        elif trial:
            values = {k: parse_number(v) for k, v in _PAIR.findall(trial.group(2))}
            if not values or not all(is_rate(v) for v in values.values()):
                out.warnings.append(f"line {i + 1}: {trial.group(1)} has a value that is not a usable number")
                continue
            if not configs or configs[-1].averages is not None:
                configs.append(_Config(i, None, None, None))
            clean = {k: v for k, v in values.items() if v is not None}
            if trial.group(1).lower() == "averages":
                configs[-1].averages = clean
            else:
                configs[-1].trials.append(clean)
            out.consumed.add(i)
    for config in configs:
        fields = config.fields()
        if fields is not None:
            out.add(config.line, fields, f"mlx_lm.benchmark at line {config.line + 1}")
    return out


IMPORTERS = (
    Importer(
        name="mlx-generate",
        engine="mlx",
        describe="mlx_lm.generate --verbose (also [batch_generate])",
        signature=signature(
            r"^\s*(?:\[batch_generate\]\s*)?(?:Prompt|Generation):\s*(?:\d+\s*tokens,\s*)?[\d.,]+\s*tokens[- ]per[- ]sec"
        ),
        parse_text=parse_generate,
        order=30,
        examples=(
            Example(
                "==========\nPrompt: 32159 tokens, 261.786 tokens-per-sec\n"
                "Generation: 1000 tokens, 23.146 tokens-per-sec\nPeak memory: 13.523 GB",
                ({"prefill_tps": 261.786, "decode_tps": 23.146, "peak_memory_gb": 13.523, "backend": "mlx"},),
            ),
        ),
    ),
    Importer(
        name="mlx-lm-benchmark",
        engine="mlx",
        describe="mlx_lm.benchmark (one measurement per configuration, from Averages)",
        signature=signature(r"^\s*(?:Trial\s+\d+|Averages):\s*prompt_tps\s*="),
        parse_text=parse_benchmark,
        order=31,
        examples=(
            Example(
                "Timing with prompt_tokens=512, generation_tokens=128, batch_size=1.\n"
                "Trial 1:  prompt_tps=1000.000, generation_tps=50.000, peak_memory=5.000, total_time=3.0\n"
                "Averages: prompt_tps=1000.000, generation_tps=50.000, peak_memory=5.000",
                ({"prefill_tps": 1000.0, "decode_tps": 50.0, "prompt_tokens": 512, "batch": 1},),
            ),
        ),
    ),
)
