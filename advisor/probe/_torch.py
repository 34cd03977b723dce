"""PyTorch CUDA kernel-probe backend (``torch-cuda``).

Every timed call ends in ``torch.cuda.synchronize()``. Streaming read: ``buf.sum()`` over an FP32
buffer. Matrix-vector (decode-shaped): ``F.linear(x, W)`` with one activation row over several distinct
FP16 weight matrices (plain PyTorch has no standard 4-bit kernel, so no ``q4``). Matrix-matrix
(prefill-shaped): FP16 ``F.linear(X, W)`` with ``X`` of ``m`` tokens (tensor cores).

The ``device`` argument exists so the same code can be exercised on a CPU build of torch in tests.
"""

from __future__ import annotations

import gc
from typing import Any

from advisor.errors import BackendUnavailable
from advisor.probe._backend import Workload

__all__ = ["TorchCudaBackend"]

_COLS = 4096
_PIP_HINT = "pip install torch (a CUDA build: see https://pytorch.org/get-started/locally/)"


def _torch() -> Any:
    try:
        import torch
    except Exception as e:  # ImportError or a broken CUDA runtime
        raise BackendUnavailable(f"the torch-cuda backend needs PyTorch, which does not import ({e}); {_PIP_HINT}") from e
    return torch


class TorchCudaBackend:
    """Kernel probe through PyTorch on one CUDA device.

    Args:
        device: torch device string, ``"cuda"`` (default, first GPU) or ``"cpu"`` for tests.

    Raises:
        BackendUnavailable: torch is missing, or it sees no CUDA device.
    """

    name = "torch-cuda"
    matvec_formats: tuple[str, ...] = ("fp16",)

    def __init__(self, device: str = "cuda") -> None:
        torch = _torch()
        if device.startswith("cuda") and not torch.cuda.is_available():
            raise BackendUnavailable(
                f"torch {torch.__version__} is installed but sees no CUDA device "
                f"(torch.version.cuda={torch.version.cuda}); {_PIP_HINT}"
            )
        self._torch = torch
        self._device = torch.device(device)
        self.is_gpu = self._device.type == "cuda"
        self.matmul_dtypes: tuple[str, ...] = ("float16",) if self.is_gpu else ("float32",)

    def _sync(self) -> None:
        if self.is_gpu:
            self._torch.cuda.synchronize(self._device)

    def device_name(self) -> str:
        if not self.is_gpu:
            return "CPU (PyTorch)"
        return f"{self._torch.cuda.get_device_name(self._device)} (PyTorch CUDA)"

    def engine_version(self) -> str:
        t = self._torch
        return f"torch {t.__version__}" + (f" cuda {t.version.cuda}" if t.version.cuda else "")

    def available_bytes(self) -> float | None:
        if not self.is_gpu:
            from advisor.probe.system import available_memory_bytes

            return available_memory_bytes()
        free, _total = self._torch.cuda.mem_get_info(self._device)
        return float(free)

    def stream_read(self, nbytes: int) -> list[Workload]:
        t = self._torch
        rows = max(1, int(nbytes) // (4 * _COLS))
        buf = t.ones((rows, _COLS), dtype=t.float32, device=self._device)
        self._sync()
        size = float(buf.numel() * buf.element_size())

        def run(n: int) -> None:
            for _ in range(n):
                buf.sum()
            self._sync()

        return [Workload(run, bytes_per_call=size, working_set_bytes=size, label="torch.sum fp32")]

    def matvec(self, fmt: str, rows: int, cols: int, count: int) -> Workload:
        t = self._torch
        if fmt != "fp16":
            raise ValueError(f"torch backend measures fp16 matvec only, not {fmt}")
        dt = t.float16 if self.is_gpu else t.float32
        mats = [t.full((rows, cols), 0.01 + 1e-3 * i, dtype=dt, device=self._device) for i in range(count)]
        x = t.full((1, cols), 0.5, dtype=dt, device=self._device)
        lin = t.nn.functional.linear
        self._sync()

        def run(n: int) -> None:
            with t.no_grad():
                for _ in range(n):
                    for w in mats:
                        lin(x, w)
            self._sync()

        size = float(sum(w.numel() * w.element_size() for w in mats))
        return Workload(run, bytes_per_call=size, flops_per_call=2.0 * rows * cols * count,
                        working_set_bytes=size, label=f"{count} x {rows}x{cols} {fmt}")

    def matmul(self, dtype: str, m: int, k: int, n: int) -> Workload:
        t = self._torch
        dt = getattr(t, dtype)
        a = t.full((m, k), 0.5, dtype=dt, device=self._device)
        w = t.full((n, k), 0.25, dtype=dt, device=self._device)
        lin = t.nn.functional.linear
        self._sync()

        def run(reps: int) -> None:
            with t.no_grad():
                for _ in range(reps):
                    lin(a, w)
            self._sync()

        item = a.element_size()
        size = float((m * k + n * k + m * n) * item)
        return Workload(run, bytes_per_call=size, flops_per_call=2.0 * m * k * n, working_set_bytes=size,
                        label=f"{m}x{k} @ {k}x{n} {dtype}")

    def release(self) -> None:
        gc.collect()
        if self.is_gpu:
            self._torch.cuda.empty_cache()
