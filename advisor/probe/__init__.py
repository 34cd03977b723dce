"""The probe: measures this machine (kernel probe) and, optionally, a real model (mlx-lm).

Public API::

    detect_machine() -> dict
    run_kernel_probe(*, backend=None, time_budget_s=15.0, progress=None, max_buffer_gb=None) -> ProbeResult
    numpy_stream_reference_gbs(size_mb=512, repeats=5) -> float
    run_model_probe(model_path, *, prompt_lengths=(128, 512, 2048), gen_tokens=128, trials=1,
                    progress=None, time_budget_s=60.0) -> list[ModelRun]
    run_probe(*, model_path=None, kernels_only=False, ...) -> ProbeResult

MLX and PyTorch are imported only when a backend needs them, so ``import advisor.probe`` works
without either. Units follow :mod:`advisor.models`: GB/s = 10^9 bytes/s, TFLOP/s = 10^12 FLOP/s.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from advisor.errors import InputError
from advisor.models import ProbeResult
from advisor.probe._backend import BACKENDS, KernelBackend, Workload, select_backend
from advisor.probe.kernels import numpy_stream_reference_gbs, run_kernel_probe
from advisor.probe.model import ModelProbeOutcome, probe_model, resolve_model_path, run_model_probe
from advisor.probe.system import detect_machine

__all__ = [
    "BACKENDS",
    "KernelBackend",
    "ModelProbeOutcome",
    "Workload",
    "detect_machine",
    "numpy_stream_reference_gbs",
    "probe_model",
    "resolve_model_path",
    "run_kernel_probe",
    "run_model_probe",
    "run_probe",
    "select_backend",
]


def run_probe(
    *,
    model_path: str | None = None,
    kernels_only: bool = False,
    backend: str | KernelBackend | None = None,
    time_budget_s: float = 15.0,
    model_time_budget_s: float = 60.0,
    prompt_lengths: Sequence[int] = (128, 512, 2048),
    gen_tokens: int = 128,
    trials: int = 1,
    progress: Callable[[float, str], None] | None = None,
    max_buffer_gb: float | None = None,
) -> ProbeResult:
    """Run the kernel probe and, when ``model_path`` is given, the model probe.

    Args:
        model_path: model directory or cached Hugging Face repo id for the mlx-lm model probe.
        kernels_only: only the kernel probe (``model_path`` must then be None).
        backend: kernel-probe backend name or object; None picks the best available.
        time_budget_s: kernel-probe budget, seconds.
        model_time_budget_s: model-probe budget (load included), seconds.
        prompt_lengths, gen_tokens, trials: model-probe workload (see :func:`run_model_probe`).
        progress: ``progress(fraction, description)``, fractions increasing to 1.0 over both parts.
        max_buffer_gb: cap on kernel-probe buffers, GB.

    Returns:
        The kernel :class:`ProbeResult` with ``model_runs`` filled when a model ran;
        ``duration_s`` covers both parts, and ``notes`` say what the model probe did or skipped.

    Raises:
        InputError: ``kernels_only`` together with ``model_path``, or bad arguments.
        BackendUnavailable, ProbeError: see the two probes.
    """
    if kernels_only and model_path is not None:
        raise InputError("kernels_only=True and a model_path were both given; choose one")
    t0 = time.perf_counter()
    with_model = model_path is not None
    last = [-1.0]

    def scaled(lo: float, hi: float) -> Callable[[float, str], None]:
        def cb(frac: float, desc: str) -> None:
            value = lo + (hi - lo) * min(1.0, max(0.0, frac))
            if progress is not None and value > last[0]:
                last[0] = value
                progress(value, desc)

        return cb

    result = run_kernel_probe(backend=backend, time_budget_s=time_budget_s, max_buffer_gb=max_buffer_gb,
                              progress=scaled(0.0, 0.5 if with_model else 1.0))
    if not with_model:
        return result
    outcome = probe_model(str(model_path), prompt_lengths=prompt_lengths, gen_tokens=gen_tokens, trials=trials,
                          progress=scaled(0.5, 1.0), time_budget_s=model_time_budget_s)
    info = outcome.info
    notes = list(result.notes)
    desc = f"model {info.get('model')} ({info.get('model_type')}"
    if "weights_gb" in info:
        desc += f", {info['weights_gb']} GB of weights"
    if "bits_per_weight" in info:
        desc += f", {info['bits_per_weight']} bits/weight"
    desc += f") on mlx-lm {info.get('mlx_lm_version', '')} {info.get('device', '')}, loaded in {info.get('load_s')} s"
    notes.append(desc)
    notes.extend(outcome.notes)
    return result.model_copy(update={
        "model_runs": outcome.runs,
        "notes": notes,
        "duration_s": round(time.perf_counter() - t0, 3),
    })
