"""The small protocol every kernel-probe backend implements, and backend selection.

A backend prepares :class:`Workload` objects (buffers allocated, nothing timed yet); the generic
timing loop in :mod:`advisor.probe.kernels` runs them. A test can pass any object with these
attributes (a fake backend) to :func:`advisor.probe.run_kernel_probe`.
"""

from __future__ import annotations

import importlib.util
import platform
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from advisor.errors import BackendUnavailable, InputError

__all__ = ["BACKENDS", "KernelBackend", "Workload", "select_backend"]

BACKENDS: tuple[str, ...] = ("mlx-gpu", "torch-cuda", "mlx-cpu", "numpy")


@dataclass
class Workload:
    """One prepared kernel: its buffers are allocated, ``run(n)`` executes it ``n`` times.

    Attributes:
        run: executes the kernel ``n`` times back to back and returns only when the device has
            finished (MLX: ``mx.eval`` + ``mx.synchronize``; CUDA: ``torch.cuda.synchronize``).
        bytes_per_call: bytes read from memory by one execution (for GB/s).
        flops_per_call: floating-point operations of one execution (for TFLOP/s).
        working_set_bytes: distinct bytes the kernel touches (to tell cache-resident sizes).
        label: short description for notes, e.g. ``"4 x 4096x4096 fp16"``.
    """

    run: Callable[[int], None]
    bytes_per_call: float = 0.0
    flops_per_call: float = 0.0
    working_set_bytes: float = 0.0
    label: str = ""


@runtime_checkable
class KernelBackend(Protocol):
    """What :func:`advisor.probe.run_kernel_probe` needs from a backend.

    Attributes:
        name: the ``ProbeResult.backend`` value (``mlx-gpu``, ``mlx-cpu``, ``torch-cuda``, ``numpy``).
        is_gpu: True when buffers live in accelerator memory (sizes buffers up to 4 GB, not 1 GB).
        matvec_formats: weight formats for the decode-shaped matrix-vector test, e.g. ``("fp16", "q4")``.
        matmul_dtypes: dtypes to try for the matrix-matrix test, best kept.
    """

    name: str
    is_gpu: bool
    matvec_formats: tuple[str, ...]
    matmul_dtypes: tuple[str, ...]

    def device_name(self) -> str: ...

    def engine_version(self) -> str: ...

    def available_bytes(self) -> float | None:
        """Memory the probe buffers come from (free VRAM, or available RAM), bytes; None if unknown."""
        ...

    def stream_read(self, nbytes: int) -> list[Workload]:
        """Candidate streaming reads over a buffer of about ``nbytes``; the fastest is kept."""
        ...

    def matvec(self, fmt: str, rows: int, cols: int, count: int) -> Workload:
        """``count`` distinct ``rows × cols`` weight matrices, each times one activation vector."""
        ...

    def matmul(self, dtype: str, m: int, k: int, n: int) -> Workload:
        """``(m × k) @ (k × n)`` in ``dtype``: prefill-shaped, ``m`` tokens."""
        ...

    def release(self) -> None:
        """Return cached device memory after a stage (buffers already dropped)."""
        ...


def _has_module(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def _mlx_hint() -> str:
    if platform.system() == "Darwin":
        return "pip install mlx mlx-lm"
    return "pip install 'mlx[cpu]' mlx-lm"


def _make(name: str) -> KernelBackend:
    if name == "numpy":
        from advisor.probe._numpy import NumpyBackend

        return NumpyBackend()
    if name in ("mlx-gpu", "mlx-cpu"):
        try:
            import mlx.core as mx  # noqa: F401
        except Exception as e:  # ImportError, or a broken native library
            raise BackendUnavailable(f"the {name} backend needs MLX, which does not import ({e}); try: {_mlx_hint()}") from e
        from advisor.probe._mlx import MlxBackend

        return MlxBackend(gpu=name == "mlx-gpu")
    if name == "torch-cuda":
        from advisor.probe._torch import TorchCudaBackend

        return TorchCudaBackend()
    raise InputError(f"unknown probe backend {name!r}; choose one of {', '.join(BACKENDS)}")


def select_backend(name: str | None = None) -> KernelBackend:
    """Return the backend called ``name``, or the best available one when ``name`` is None.

    Automatic order: ``mlx-gpu`` (Metal available), ``torch-cuda`` (torch imports and sees a CUDA
    device), ``mlx-cpu`` (mlx imports), ``numpy``.

    Raises:
        BackendUnavailable: a named backend is not installed or has no device (with a pip hint).
        InputError: ``name`` is not a backend.
    """
    if name is not None:
        return _make(name.strip().lower())
    mlx_ok = False
    if _has_module("mlx"):
        try:
            import mlx.core as mx

            mlx_ok = True
            if mx.metal.is_available():
                return _make("mlx-gpu")
        except Exception:  # noqa: BLE001 - a broken mlx just is not a candidate
            mlx_ok = False
    if _has_module("torch"):
        try:
            return _make("torch-cuda")
        except BackendUnavailable:
            pass
    if mlx_ok:
        return _make("mlx-cpu")
    return _make("numpy")
