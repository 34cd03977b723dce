"""NumPy kernel-probe backend: the fallback that needs nothing but NumPy (FP32, CPU).

Streaming read: the faster of ``np.max`` over the buffer (one thread, vectorised) and a BLAS
``sgemv`` of the buffer viewed as a matrix against a ones vector (all BLAS threads); both read every
byte once. Matrix-vector: FP32 ``W @ x`` (BLAS sgemv). Matrix-matrix: FP32 ``A @ B`` (BLAS sgemm).
FP16 is not measured: NumPy has no FP16 BLAS and emulates it hundreds of times slower.
"""

from __future__ import annotations

import os
import platform

import numpy as np

from advisor.probe._backend import Workload
from advisor.probe.system import available_memory_bytes

__all__ = ["NumpyBackend", "blas_name", "stream_read_workloads"]

_COLS = 4096


def blas_name() -> str:
    """Name of the BLAS NumPy was built against (e.g. ``scipy-openblas``), or ``""``."""
    try:
        cfg = np.show_config(mode="dicts")  # type: ignore[call-arg]
        return str(cfg["Build Dependencies"]["blas"]["name"])
    except Exception:  # noqa: BLE001 - informative only
        return ""


def stream_read_workloads(nbytes: int) -> list[Workload]:
    """FP32 buffer of about ``nbytes`` and the two plain NumPy ways of reading it once.

    Args:
        nbytes: buffer size in bytes (rounded down to whole 4096-float rows, at least one row).

    Returns:
        ``[max, gemv]`` workloads sharing one buffer.
    """
    rows = max(1, int(nbytes) // (4 * _COLS))
    buf = np.empty((rows, _COLS), dtype=np.float32)
    buf.fill(1.0)  # touch every page before timing
    flat = buf.reshape(-1)
    ones = np.ones(_COLS, dtype=np.float32)
    size = float(buf.nbytes)

    def run_max(n: int) -> None:
        for _ in range(n):
            flat.max()

    def run_gemv(n: int) -> None:
        for _ in range(n):
            buf @ ones

    return [
        Workload(run_max, bytes_per_call=size, working_set_bytes=size, label="np.max fp32"),
        Workload(run_gemv, bytes_per_call=size, flops_per_call=2 * size / 4, working_set_bytes=size,
                 label="BLAS sgemv fp32"),
    ]


class NumpyBackend:
    """Kernel probe on the CPU with NumPy and its BLAS, FP32 throughout."""

    name = "numpy"
    is_gpu = False
    matvec_formats: tuple[str, ...] = ("fp32",)
    matmul_dtypes: tuple[str, ...] = ("float32",)

    def device_name(self) -> str:
        """CPU model and thread count, e.g. ``"AMD EPYC (2 threads, NumPy + scipy-openblas)"``."""
        from advisor.probe.system import parse_cpuinfo

        model = platform.processor() or platform.machine()
        try:
            with open("/proc/cpuinfo") as f:
                model = parse_cpuinfo(f.read()).get("cpu_model", model)
        except OSError:
            pass
        blas = blas_name()
        return f"{model} CPU ({os.cpu_count()} threads, NumPy{' + ' + blas if blas else ''})"

    def engine_version(self) -> str:
        blas = blas_name()
        return f"numpy {np.__version__}" + (f" ({blas})" if blas else "")

    def available_bytes(self) -> float | None:
        return available_memory_bytes()

    def stream_read(self, nbytes: int) -> list[Workload]:
        return stream_read_workloads(nbytes)

    def matvec(self, fmt: str, rows: int, cols: int, count: int) -> Workload:
        if fmt != "fp32":
            raise ValueError(f"numpy backend measures fp32 matvec only, not {fmt}")
        mats = [np.full((rows, cols), 0.01 + 1e-4 * i, dtype=np.float32) for i in range(count)]
        x = np.full(cols, 0.5, dtype=np.float32)

        def run(n: int) -> None:
            for _ in range(n):
                for w in mats:
                    w @ x

        size = float(sum(w.nbytes for w in mats))
        return Workload(run, bytes_per_call=size, flops_per_call=2.0 * rows * cols * count,
                        working_set_bytes=size, label=f"{count} x {rows}x{cols} fp32")

    def matmul(self, dtype: str, m: int, k: int, n: int) -> Workload:
        dt = np.dtype(dtype)
        a = np.full((m, k), 0.5, dtype=dt)
        b = np.full((k, n), 0.25, dtype=dt)

        def run(reps: int) -> None:
            for _ in range(reps):
                a @ b

        size = float(a.nbytes + b.nbytes + m * n * dt.itemsize)
        return Workload(run, bytes_per_call=size, flops_per_call=2.0 * m * k * n, working_set_bytes=size,
                        label=f"{m}x{k} @ {k}x{n} {dt.name}")

    def release(self) -> None:
        return None
