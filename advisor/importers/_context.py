"""Lines around the results that say what ran and where: the shell command, the GPU the backend
found, llama.cpp's model-loading log. They fill fields the results themselves leave empty.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import PurePosixPath, PureWindowsPath
from typing import Any

from advisor.importers._util import (
    NUM,
    find_quant,
    gpu_layers_problem,
    lines_matching,
    parse_params_b,
    parse_size_gb,
    to_int,
)

__all__ = ["Context", "parse_command", "parse_context"]

_TOOLS = {
    "llama-bench",
    "llama-cli",
    "llama-server",
    "llama-batched-bench",
    "llama-simple",
    "llama-run",
    "main",
    "ollama",
    "mlx_lm.generate",
    "mlx_lm.benchmark",
    "mlx_lm.server",
    "mlx_lm",
    "vllm",
    "benchmark_serving.py",
    "lms",
}
_PREFIX_WORDS = {"sudo", "python", "python3", "-m", "uv", "run", "time", "PS", "nohup", "env", "exec"}
_FLAGS = {
    "-m": "model",
    "--model": "model",
    "-ngl": "n_gpu_layers",
    "--n-gpu-layers": "n_gpu_layers",
    "--gpu-layers": "n_gpu_layers",
    "-t": "threads",
    "--threads": "threads",
}
_DEVICE = (
    re.compile(r"^\s*Device\s+(?P<idx>\d+):\s*(?P<name>[^,]+),\s*(?:compute capability|gfx\d+)", re.I),
    re.compile(r"^\s*ggml_metal_(?:device_)?init:\s*(?:GPU name|found device):\s*(?P<name>.+?)\s*$"),
    re.compile(r"^\s*ggml_vulkan:\s*\d+\s*=\s*(?P<name>.+?)\s*(?:\(|\|)"),
)
_DEVICE_COUNT = re.compile(
    r"^\s*(?:ggml_cuda_init|ggml_init_cublas|ggml_vulkan):\s*found\s+\d+\s+\w+\s+devices?:?\s*$"
)
_QUANT_LINE = re.compile(
    r"^\s*(?:llm_load_print_meta|print_info):\s*(?:model\s+)?(?:ftype|file type)\s*=\s*(.+?)\s*$"
)
_OLD_FTYPE = re.compile(r"^\s*llama_model_load_internal:\s*ftype\s*=\s*\d+\s*\((.+?)\)\s*$")
_PARAMS = re.compile(rf"^\s*(?:llm_load_print_meta|print_info):\s*model params\s*=\s*({NUM}\s*[KMBT])\s*$")
_SIZE = re.compile(rf"^\s*(?:llm_load_print_meta|print_info):\s*model size\s*=\s*({NUM}\s*[KMGT]i?B)")
_NAME = re.compile(r"\bgeneral\.name\s+(?:str\s+)?=\s*(.+?)\s*$")
_OFFLOAD = re.compile(
    r"^\s*(?:llm_load_tensors|load_tensors):\s*offloaded\s+(\d+)\s*/\s*(\d+)\s+layers to GPU"
)
_SYSTEM = re.compile(r"^\s*system_info:\s*n_threads\s*=\s*(\d+)")
# Every line this module reads contains one of these words.
_HINT = re.compile(
    r"Device|ggml_|print_info|llm_load|llama_model_load|general\.name|load_tensors|system_info|build"
    r"|llama|ollama|mlx_lm|vllm|benchmark_serving|\blms\b|main"
)
_PROGRESS = re.compile(r"^\s*llama-bench:\s*benchmark\s+\d+/\d+:")
_BUILD = re.compile(r"^\s*(?:main:\s*)?build\s*[:=]\s*(\d+|\w+)\s*\((\w+)\)")


MAX_THREADS = 1_000_000  # more than any machine has; a larger figure was typed wrong


@dataclass
class Context:
    """What the context lines said: fields for measurements, facts for ``machine``, lines read."""

    fields: dict[str, Any] = field(default_factory=dict)
    machine: dict[str, Any] = field(default_factory=dict)
    consumed: set[int] = field(default_factory=set)
    warnings: list[str] = field(default_factory=list)
    cut: int | None = None  # the line where a second run on another machine starts (its rows are not this machine's)

    def take(self, key: str, value: Any, line: int) -> None:
        """Keep a field for the measurements unless an earlier line gave it or it is not sound."""
        problem = gpu_layers_problem(value) if key == "n_gpu_layers" else None
        if key == "threads" and isinstance(value, int) and not 0 < value <= MAX_THREADS:
            problem = f"threads {value} is not a thread count (1 to {MAX_THREADS:,})"
        if problem:
            self.warnings.append(f"line {line + 1}: {problem}; not used")
        elif value is not None and not (key == "n_gpu_layers" and value == -1):
            self.fields.setdefault(key, value)


def _prompt_token(tok: str) -> bool:
    return "=" in tok or "@" in tok or tok.startswith("(") or tok in _PREFIX_WORDS or tok[-1] in "$#%>"


def _model_from_path(value: str) -> str:
    path = PureWindowsPath(value) if "\\" in value else PurePosixPath(value)
    stem = re.sub(r"\.(gguf|bin|ggml)$", "", path.name, flags=re.I)
    if stem == path.name:  # no file extension: a hub id (mlx-community/Qwen3-4B-4bit) or a local folder
        return path.name if value.startswith((".", "/", "~")) or "\\" in value else value
    if re.match(r"^(ggml-)?model\b", stem, re.I) and path.parent.name not in ("", "."):
        return path.parent.name
    return stem


def _mlx_quant(name: str) -> str | None:
    m = re.search(r"(?<![\d.])(\d)[-_ ]?bit\b", name, re.I)
    return f"MLX {m.group(1)}-bit" if m else None


def parse_command(line: str) -> dict[str, Any] | None:
    """Fields from a shell command that ran a known tool (``./llama-bench -m x.gguf -ngl 99``)."""
    tokens = line.split()
    for idx, tok in enumerate(tokens[:12]):
        base = re.split(r"[/\\]", tok)[-1].removesuffix(".exe")
        if base not in _TOOLS:
            if not _prompt_token(tok):
                return None
            continue
        args = tokens[idx + 1 :]
        if base == "main" and not re.search(r"[/\\]", tok):
            return None
        if base == "ollama" and (not args or args[0] not in ("run", "ps", "serve", "show")):
            return None
        found: dict[str, Any] = {"tool": base}
        if base == "ollama" and args[0] == "run" and len(args) > 1:
            found["model"] = args[1]
        for flag, value in zip(args, args[1:], strict=False):
            key = _FLAGS.get(flag.split("=")[0])
            if key == "model":
                found["model"] = _model_from_path(value)
                found["quant"] = find_quant(PurePosixPath(value).name) or _mlx_quant(value)
            elif key and value.isdigit():
                found[key] = to_int(value)
        return found
    return None


def _load_log(line: str) -> dict[str, Any] | None:
    """Fields in a llama.cpp model-loading line (quant, params, size, name, offload, threads, build)."""
    if m := _QUANT_LINE.match(line) or _OLD_FTYPE.match(line):
        return {"quant": find_quant(m.group(1)) or m.group(1)}
    if m := _PARAMS.match(line):
        return {"params_b": parse_params_b(m.group(1))}
    if m := _SIZE.match(line):
        return {"model_size_gb": parse_size_gb(m.group(1))}
    if m := _NAME.search(line):
        return {"model": m.group(1)}
    if m := _OFFLOAD.match(line):
        done, total = to_int(m.group(1)), to_int(m.group(2))
        return {
            "n_gpu_layers": done,
            "gpu_fraction": round(min(done / total, 1.0), 4) if done is not None and total else None,
        }
    if m := _SYSTEM.match(line):
        return {"threads": to_int(m.group(1))}
    if m := _BUILD.match(line):
        return {"build": f"{m.group(1)} ({m.group(2)})"}
    return None


def parse_context(lines: Sequence[str]) -> Context:
    """Read command, device and model-loading lines; later lines do not override earlier ones."""
    ctx = Context()
    other_run: str | None = None  # a second run's devices (its device list starts again at 0)
    for i in lines_matching(lines, _HINT):
        line = lines[i]
        device = next((m for p in _DEVICE if (m := p.match(line))), None)
        if device and "idx" in device.re.groupindex and device.group("idx") == "0" and \
                device.group("name").strip() in ctx.machine.get("gpus", []) and other_run is None:
            ctx.consumed.add(i)
            continue  # the same machine's next run: its GPU is already counted
        if device and (other_run is not None or (
                "idx" in device.re.groupindex and device.group("idx") == "0" and ctx.machine.get("gpus"))):
            if other_run is None:
                other_run, ctx.cut = device.group("name").strip(), i
            ctx.consumed.add(i)
            continue  # another run in the same paste: not a GPU of the first run's machine
        if device:
            ctx.machine.setdefault("gpus", []).append(device.group("name").strip())
            ctx.fields.setdefault("hardware", device.group("name").strip())
        elif _DEVICE_COUNT.match(line) or _PROGRESS.match(line):
            pass
        elif (command := parse_command(line)) is not None:
            ctx.machine.setdefault("command", line.strip())
            for key, value in command.items():
                if key != "tool":
                    ctx.take(key, value, i)
        elif (found := _load_log(line)) is not None:
            for key, value in found.items():
                if key == "build" and value is not None:
                    ctx.machine.setdefault(key, value)
                elif key != "build":
                    ctx.take(key, value, i)
        else:
            continue
        ctx.consumed.add(i)
    gpus = ctx.machine.get("gpus", [])
    if other_run is not None:
        ctx.warnings.append(f"the output holds runs on more than one machine ({' + '.join(gpus)}, then {other_run}): "
                            f"the {other_run} run is not used (paste it on its own to judge it)")
    if len(gpus) > 1 and ctx.fields.get("hardware") == gpus[0]:
        # "found 2 CUDA devices" and a Device line each: the run's machine has them all
        ctx.fields["hardware"] = f"{len(gpus)}x {gpus[0]}" if len(set(gpus)) == 1 else " + ".join(gpus)
    return ctx
