"""Model probe: prefill and decode rates of a real model through mlx-lm, like ``llama-bench -p N -n M``.

Method (after ``mlx_lm.benchmark``): load once (never downloading: a local directory, or a snapshot
already in the local Hugging Face cache), one warm-up generation, then for each prompt length and
trial a prompt of exactly that many random token ids (``mx.random.seed(0)``, uniform over the
vocabulary, so no prompt cache can shorten prefill), end-of-sequence disabled so exactly
``gen_tokens`` are generated, peak memory reset before each trial.

- ``prefill_tps``: mlx-lm's ``prompt_tps`` = prompt tokens / time to the first generated token.
- ``ttft_s``: our own clock (``perf_counter``) from the call to the first yielded token.
- ``decode_tps``: mlx-lm's ``generation_tps`` (tokens after the first / time since the first).
- ``peak_memory_gb``: ``mx.get_peak_memory()`` / 10^9 during the trial.
"""

from __future__ import annotations

import gc
import math
import os
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from advisor.errors import BackendUnavailable, InputError, ProbeError
from advisor.models import ModelRun

__all__ = ["ModelProbeOutcome", "probe_model", "resolve_model_path", "run_model_probe"]

Progress = Callable[[float, str], None]
_SAFETY = 1.3  # prefill cost grows faster than linearly with the prompt (attention)


@dataclass
class ModelProbeOutcome:
    """Runs plus what :class:`ModelRun` has no field for.

    Attributes:
        runs: one :class:`ModelRun` per (prompt length, trial) that ran, shortest prompt first.
        skipped: prompt lengths left out because they would overrun the time budget.
        info: ``model``, ``path``, ``model_type``, ``load_s``, ``weights_gb``, ``bits_per_weight``,
            ``device``, ``mlx_lm_version`` where known.
        notes: human-readable remarks.
    """

    runs: list[ModelRun] = field(default_factory=list)
    skipped: list[int] = field(default_factory=list)
    info: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def _import_mlx_lm() -> tuple[Any, Any]:
    try:
        import mlx.core as mx
        import mlx_lm
    except Exception as e:
        raise BackendUnavailable(
            f"the model probe needs mlx-lm, which does not import ({e}); "
            "try: pip install mlx-lm (and 'mlx[cpu]' on Linux)"
        ) from e
    return mx, mlx_lm


def resolve_model_path(model: str) -> Path:
    """A local model directory for ``model``, never downloading.

    Args:
        model: a directory, or a Hugging Face repo id (``org/name``) already in the local cache.

    Returns:
        The directory to load.

    Raises:
        ProbeError: neither a directory nor a cached snapshot.
    """
    if not isinstance(model, str | os.PathLike) or not str(model).strip():
        raise InputError(f"model_path must be a directory or a Hugging Face repo id, got {model!r}")
    path = Path(model).expanduser()
    if path.is_dir():
        return path
    if path.exists():
        raise ProbeError(f"{model} is a file; pass the model's directory (with config.json and *.safetensors)")
    text = str(model)
    looks_like_repo = text.count("/") == 1 and not text.startswith((".", "/", "~"))
    if looks_like_repo:
        try:
            from huggingface_hub import snapshot_download

            try:
                from mlx_lm.utils import DEFAULT_ALLOW_PATTERNS as patterns
            except Exception:  # noqa: BLE001
                patterns = None  # type: ignore[assignment]
            return Path(snapshot_download(text, local_files_only=True, allow_patterns=patterns))
        except Exception as e:  # LocalEntryNotFoundError, IncompleteSnapshotError, ...
            raise ProbeError(
                f"model {text!r} is not a local directory and not in the local Hugging Face cache; "
                f"the probe never downloads. Download it first (e.g. `hf download {text}`) or pass a directory."
            ) from e
    raise ProbeError(f"no model directory at {text!r} (the probe never downloads; pass a local directory)")


@contextmanager
def _offline_env() -> Iterator[None]:
    keys = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")
    saved = {k: os.environ.get(k) for k in keys}
    os.environ.update({k: "1" for k in keys})
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _disable_eos(tokenizer: Any) -> None:
    """Make generation run to ``max_tokens`` (what ``mlx_lm.benchmark`` does)."""
    try:
        tokenizer.eos_token_ids = set()
    except (AttributeError, TypeError):
        pass
    if hasattr(tokenizer, "_eos_token_ids"):
        tokenizer._eos_token_ids = set()


def _vocab_size(config: dict[str, Any], tokenizer: Any) -> int:
    sizes = []
    v = config.get("vocab_size") or (config.get("text_config") or {}).get("vocab_size")
    if isinstance(v, int) and v > 0:
        sizes.append(v)
    try:
        tv = len(tokenizer._tokenizer) if hasattr(tokenizer, "_tokenizer") else tokenizer.vocab_size
        if isinstance(tv, int) and tv > 0:
            sizes.append(tv)
    except Exception:  # noqa: BLE001
        pass
    if not sizes:
        raise ProbeError("cannot tell the model's vocabulary size (no vocab_size in config.json)")
    return min(sizes)


def _trial(mx: Any, mlx_lm: Any, model: Any, tokenizer: Any, prompt: Any, gen_tokens: int) -> ModelRun:
    if hasattr(mx, "reset_peak_memory"):
        mx.reset_peak_memory()
    t0 = time.perf_counter()
    ttft = None
    last = None
    for resp in mlx_lm.stream_generate(model, tokenizer, prompt, max_tokens=gen_tokens):
        if ttft is None:
            ttft = time.perf_counter() - t0
        last = resp
    if last is None:
        raise ProbeError("mlx-lm generated nothing")
    return ModelRun(
        prompt_tokens=int(last.prompt_tokens),
        prefill_tps=float(last.prompt_tps),
        gen_tokens=int(last.generation_tokens),
        decode_tps=float(last.generation_tps),
        peak_memory_gb=float(last.peak_memory) if last.peak_memory else None,
        ttft_s=ttft,
    )


def _check_args(prompt_lengths: Sequence[int], gen_tokens: int, trials: int, time_budget_s: float) -> list[int]:
    lengths = list(prompt_lengths)
    if not lengths or any(not isinstance(n, int) or isinstance(n, bool) or n < 1 for n in lengths):
        raise InputError(f"prompt_lengths must be positive integers, got {prompt_lengths!r}")
    if not isinstance(gen_tokens, int) or gen_tokens < 2:
        raise InputError(f"gen_tokens must be an integer of at least 2 (decode rate needs two), got {gen_tokens!r}")
    if not isinstance(trials, int) or trials < 1:
        raise InputError(f"trials must be a positive integer, got {trials!r}")
    if not (isinstance(time_budget_s, int | float) and math.isfinite(time_budget_s) and time_budget_s > 0):
        raise InputError(f"time_budget_s must be a positive number of seconds, got {time_budget_s!r}")
    return sorted(lengths)


def probe_model(model_path: str, *, prompt_lengths: Sequence[int] = (128, 512, 2048), gen_tokens: int = 128,
                trials: int = 1, progress: Progress | None = None, time_budget_s: float = 60.0) -> ModelProbeOutcome:
    """Like :func:`run_model_probe`, also returning skipped lengths, model facts and notes."""
    lengths = _check_args(prompt_lengths, gen_tokens, trials, time_budget_s)
    report = progress or (lambda _f, _d: None)
    t_start = time.perf_counter()
    mx, mlx_lm = _import_mlx_lm()
    path = resolve_model_path(model_path)
    out = ModelProbeOutcome()
    report(0.0, f"loading {model_path}")
    try:
        with _offline_env():
            model, tokenizer, config = mlx_lm.load(str(path), return_config=True)
    except (FileNotFoundError, ValueError, OSError, KeyError) as e:
        raise ProbeError(f"mlx-lm could not load the model at {path}: {e}") from e
    load_s = time.perf_counter() - t_start
    out.info.update(model=str(model_path), path=str(path), model_type=config.get("model_type"),
                    load_s=round(load_s, 3), device=str(mx.default_device()),
                    mlx_lm_version=getattr(mlx_lm, "__version__", ""))
    try:
        from mlx.utils import tree_reduce
        from mlx_lm.utils import compute_bits_per_weight

        nbytes = tree_reduce(lambda a, x: a + x.nbytes if isinstance(x, mx.array) else a, model.parameters(), 0)
        out.info["weights_gb"] = round(nbytes / 1e9, 4)
        out.info["bits_per_weight"] = round(float(compute_bits_per_weight(model)), 3)
    except Exception:  # noqa: BLE001 - informative only
        pass
    try:
        _disable_eos(tokenizer)
        vocab = _vocab_size(config, tokenizer)
        mx.random.seed(0)
        report(0.1, "warming up")
        warm = _trial(mx, mlx_lm, model, tokenizer, mx.random.randint(0, vocab, (lengths[0],)), min(gen_tokens, 4))
        prefill_rate, decode_rate = warm.prefill_tps, max(warm.decode_tps, 1e-9)
        total = len(lengths) * trials
        done = 0
        for n in lengths:
            estimate = trials * (_SAFETY * n / max(prefill_rate, 1e-9) + gen_tokens / decode_rate)
            elapsed = time.perf_counter() - t_start
            if out.runs and elapsed + estimate > time_budget_s:
                out.skipped.append(n)
                done += trials
                continue
            for t in range(trials):
                report(0.15 + 0.85 * done / total, f"prompt {n} tokens, trial {t + 1}/{trials}")
                prompt = mx.random.randint(0, vocab, (n,))
                run = _trial(mx, mlx_lm, model, tokenizer, prompt, gen_tokens)
                out.runs.append(run)
                prefill_rate, decode_rate = run.prefill_tps, max(run.decode_tps, 1e-9)
                done += 1
        if out.skipped:
            out.notes.append(
                f"skipped prompt lengths {out.skipped}: they would overrun the {time_budget_s:g} s model budget"
            )
        if out.runs and time.perf_counter() - t_start > time_budget_s:
            out.notes.append(f"model probe took {time.perf_counter() - t_start:.1f} s, over its {time_budget_s:g} s budget")
    finally:
        del model
        gc.collect()
        if hasattr(mx, "clear_cache"):
            mx.clear_cache()
    report(1.0, "done")
    return out


def run_model_probe(model_path: str, *, prompt_lengths: Sequence[int] = (128, 512, 2048), gen_tokens: int = 128,
                    trials: int = 1, progress: Progress | None = None, time_budget_s: float = 60.0) -> list[ModelRun]:
    """Measure prefill and decode rates of a local model with mlx-lm.

    Args:
        model_path: a model directory, or a Hugging Face repo id already in the local cache (never
            downloaded).
        prompt_lengths: prompt sizes in tokens; each prompt has exactly this many random tokens.
        gen_tokens: tokens generated per trial (end-of-sequence disabled), at least 2.
        trials: trials per prompt length.
        progress: called as ``progress(fraction, description)``.
        time_budget_s: wall-clock budget including load, seconds. Prompt lengths whose estimated
            time (from the previous run) would overrun it are skipped; the shortest always runs.

    Returns:
        One :class:`ModelRun` per (prompt length, trial) that ran, shortest prompt first.

    Raises:
        ProbeError: the model is missing or cannot be loaded (with the reason).
        BackendUnavailable: mlx-lm is not installed.
        InputError: bad arguments.
    """
    return probe_model(model_path, prompt_lengths=prompt_lengths, gen_tokens=gen_tokens, trials=trials,
                       progress=progress, time_budget_s=time_budget_s).runs
