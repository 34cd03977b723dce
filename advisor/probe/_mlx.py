"""MLX kernel-probe backend, on the Apple GPU (``mlx-gpu``) or the CPU (``mlx-cpu``).

MLX is lazy: every timed call ends in ``mx.eval`` of all outputs followed by ``mx.synchronize()``, so
the clock stops only when the device has finished.

- Streaming read: the faster of a full ``sum`` and a column ``sum(axis=0)`` over an FP32 buffer. On
  the CPU the buffer is split over one MLX CPU stream per core (MLX runs each CPU stream on its own
  thread; one stream alone reaches only what one core can pull).
- Matrix-vector (decode-shaped): ``x @ W.T`` with ``x`` of shape ``1 × cols``, like ``nn.Linear``,
  over several distinct FP16 weight matrices; and 4-bit affine weights (``mx.quantize``, group 64)
  through ``mx.quantized_matmul(..., transpose=True)``, like ``nn.QuantizedLinear``. One stream, as
  mlx-lm runs. Bytes counted: weights, plus scales and biases for q4 (4.5 bits per weight).
- Matrix-matrix (prefill-shaped): ``X @ W.T`` with ``X`` of ``m`` tokens, one stream.
"""

from __future__ import annotations

import gc
import os
from typing import Any

from advisor.errors import BackendUnavailable
from advisor.probe._backend import Workload
from advisor.probe.system import available_memory_bytes

__all__ = ["MlxBackend"]

_COLS = 4096
_Q_GROUP = 64
_Q_BITS = 4
# MLX streams belong to the thread that made them (a second probe from another server worker thread
# fails with "There is no Stream(cpu, 1) in current thread"), so they are kept per thread.
_CPU_STREAMS: dict[int, list[Any]] = {}


def _mx() -> Any:
    import mlx.core as mx

    return mx


def _sync(mx: Any) -> None:
    if hasattr(mx, "synchronize"):
        mx.synchronize()


def _cpu_streams(mx: Any, n: int) -> list[Any]:
    import threading

    mine = _CPU_STREAMS.setdefault(threading.get_ident(), [])
    while len(mine) < n:
        mine.append(mx.new_stream(mx.cpu))
    return mine[:n]


class MlxBackend:
    """Kernel probe through MLX on one device.

    Args:
        gpu: True for the Metal GPU (``mlx-gpu``), False for the CPU (``mlx-cpu``).

    Raises:
        BackendUnavailable: ``gpu`` is True but Metal is not available.
    """

    is_gpu: bool

    def __init__(self, gpu: bool) -> None:
        mx = _mx()
        if gpu and not mx.metal.is_available():
            raise BackendUnavailable(
                "the mlx-gpu backend needs the Metal GPU of an Apple-silicon Mac (mx.metal.is_available() "
                "is False here); use mlx-cpu or numpy"
            )
        self.is_gpu = gpu
        self.name = "mlx-gpu" if gpu else "mlx-cpu"
        self._dev = mx.gpu if gpu else mx.cpu
        self.matvec_formats: tuple[str, ...] = ("fp16", "q4")
        # The GPU is measured in FP16; on the CPU the fastest of FP32, FP16, BF16 is kept (BF16 often wins).
        # On the CPU, NumPy's BLAS sgemm is a candidate too: it is close to what CPU engines such as
        # llama.cpp reach, while MLX's CPU matmul is far slower; the probe keeps the fastest.
        self.matmul_dtypes: tuple[str, ...] = (
            ("float16",) if gpu else ("float32", "float16", "bfloat16", "numpy-float32"))

    # ------------------------------------------------------------------------------ description
    def _info(self) -> dict[str, Any]:
        mx = _mx()
        try:
            return dict(mx.device_info(self._dev)) if hasattr(mx, "device_info") else {}
        except Exception:  # noqa: BLE001
            return {}

    def device_name(self) -> str:
        name = str(self._info().get("device_name") or ("Apple GPU" if self.is_gpu else "CPU"))
        if self.is_gpu:
            return f"{name} GPU (MLX Metal)"
        return f"{name} CPU (MLX, {os.cpu_count()} threads)"

    def engine_version(self) -> str:
        return f"mlx {_mx().__version__}"

    def available_bytes(self) -> float | None:
        avail = available_memory_bytes()
        if self.is_gpu:
            ws = self._info().get("max_recommended_working_set_size")
            if isinstance(ws, int | float) and ws > 0:
                free_ws = ws - _mx().get_active_memory()
                avail = free_ws if avail is None else min(avail, free_ws)
        return avail

    # ------------------------------------------------------------------------------ workloads
    def stream_read(self, nbytes: int) -> list[Workload]:
        mx = _mx()
        streams = [self._dev] if self.is_gpu else _cpu_streams(mx, max(2, min(8, os.cpu_count() or 2)))
        cols = _COLS if self.is_gpu else 1024
        rows_total = max(len(streams), int(nbytes) // (4 * cols))
        per = rows_total // len(streams)
        with mx.stream(self._dev):
            chunks = [mx.full((per, cols), 1.0 + i, dtype=mx.float32) for i in range(len(streams))]
        mx.eval(chunks)
        _sync(mx)
        size = float(sum(c.nbytes for c in chunks))

        def make(axis: int | None, view: Any) -> Any:
            parts = [c if view is None else c.view(view) for c in chunks]

            def run(n: int) -> None:
                outs = []
                for _ in range(n):
                    for c, s in zip(parts, streams, strict=True):
                        outs.append(mx.sum(c, axis=axis, stream=s))
                mx.eval(outs)
                _sync(mx)

            return run

        where = f"{len(streams)} stream{'s' if len(streams) > 1 else ''}"
        if self.is_gpu:
            variants = [(None, None, "mx.sum fp32"), (0, None, "mx.sum(axis=0) fp32")]
        else:  # full float sums vectorise poorly on the CPU; column sums and integer sums do not
            variants = [(0, None, "mx.sum(axis=0) fp32"), (None, mx.uint32, "mx.sum uint32 view")]
        out = [
            Workload(make(axis, view), bytes_per_call=size, working_set_bytes=size, label=f"{label}, {where}")
            for axis, view, label in variants
        ]
        if not self.is_gpu:
            # The memory is the same whichever library reads it: on the CPU, NumPy's BLAS read (what CPU
            # engines approach) is a candidate too, so the figure is the machine's, not MLX-CPU's.
            from advisor.probe._numpy import stream_read_workloads

            out += stream_read_workloads(int(size))[1:]
        return out

    def matvec(self, fmt: str, rows: int, cols: int, count: int) -> Workload:
        mx = _mx()
        if fmt not in ("fp16", "q4"):
            raise ValueError(f"mlx backend measures fp16 and q4 matvec, not {fmt}")
        with mx.stream(self._dev):
            x = mx.full((1, cols), 0.5, dtype=mx.float16)
            mats: list[Any] = []
            for i in range(count):
                w = mx.full((rows, cols), 0.01 + 1e-3 * i, dtype=mx.float16)
                if fmt == "q4":
                    q = mx.quantize(w, group_size=_Q_GROUP, bits=_Q_BITS)
                    mx.eval(q)
                    mats.append(tuple(q))
                else:
                    mx.eval(w)
                    mats.append(w)
        _sync(mx)
        dev = self._dev
        if fmt == "q4":
            size = float(sum(a.nbytes for m in mats for a in m))

            def run(n: int) -> None:
                outs = [
                    mx.quantized_matmul(x, wq, s, b, transpose=True, group_size=_Q_GROUP, bits=_Q_BITS, stream=dev)
                    for _ in range(n)
                    for wq, s, b in mats
                ]
                mx.eval(outs)
                _sync(mx)
        else:
            size = float(sum(w.nbytes for w in mats))

            def run(n: int) -> None:
                outs = [mx.matmul(x, w.T, stream=dev) for _ in range(n) for w in mats]
                mx.eval(outs)
                _sync(mx)

        return Workload(run, bytes_per_call=size, flops_per_call=2.0 * rows * cols * count,
                        working_set_bytes=size, label=f"{count} x {rows}x{cols} {fmt}")

    def matmul(self, dtype: str, m: int, k: int, n: int) -> Workload:
        if dtype == "numpy-float32":
            from advisor.probe._numpy import NumpyBackend

            return NumpyBackend().matmul("float32", m, k, n)
        mx = _mx()
        dt = getattr(mx, dtype)
        with mx.stream(self._dev):
            a = mx.full((m, k), 0.5, dtype=dt)
            w = mx.full((n, k), 0.25, dtype=dt)
        mx.eval(a, w)
        _sync(mx)
        dev = self._dev

        # Evaluate in chunks so that pending outputs stay under about 256 MB.
        chunk = max(1, int(256e6 // max(1, m * n * a.itemsize)))

        def run(reps: int) -> None:
            done = 0
            while done < reps:
                todo = min(chunk, reps - done)
                mx.eval([mx.matmul(a, w.T, stream=dev) for _ in range(todo)])
                done += todo
            _sync(mx)

        size = float(a.nbytes + w.nbytes + m * n * a.itemsize)
        return Workload(run, bytes_per_call=size, flops_per_call=2.0 * m * k * n, working_set_bytes=size,
                        label=f"{m}x{k} @ {k}x{n} {dtype}")

    def release(self) -> None:
        gc.collect()
        mx = _mx()
        if hasattr(mx, "clear_cache"):
            mx.clear_cache()
