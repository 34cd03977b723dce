"""A fake kernel-probe backend with known rates, for unit tests of the probe's arithmetic.

Each workload busy-waits exactly ``bytes / rate`` (or ``flops / rate``) per call, so the probe must
report the configured rates back.
"""

from __future__ import annotations

import time

from advisor.probe import Workload

__all__ = ["FakeBackend", "FakeClock"]


def _spin(seconds: float) -> None:
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


class FakeClock:
    """A ``perf_counter`` stand-in that only moves when the fake kernels 'run': timing is exact even on
    a loaded machine. Patch it in with ``monkeypatch.setattr(kernels, "time", clock.module())``."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        self.now += 1e-7  # reading the clock costs a little, like a real one
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds

    def module(self) -> object:
        import types

        return types.SimpleNamespace(perf_counter=self, monotonic=self, time=self, sleep=self.advance)


class FakeBackend:
    """Implements :class:`advisor.probe.KernelBackend` with fixed rates.

    Args:
        bandwidth_gbs: streaming-read rate, GB/s.
        matvec_gbs: per-format matrix-vector rate, GB/s of weights.
        tflops: per-dtype matrix-matrix rate, TFLOP/s.
        available_gb: what ``available_bytes`` reports, GB.
    """

    name = "numpy"
    is_gpu = False

    def __init__(self, bandwidth_gbs: float = 20.0, matvec_gbs: dict[str, float] | None = None,
                 tflops: dict[str, float] | None = None, available_gb: float = 8.0,
                 clock: FakeClock | None = None) -> None:
        self._wait = clock.advance if clock is not None else _spin
        self.bandwidth_gbs = bandwidth_gbs
        self.matvec_rates = matvec_gbs or {"fp16": 10.0, "q4": 4.0}
        self.tflops = tflops or {"float32": 0.05, "float16": 0.1}
        self.matvec_formats = tuple(self.matvec_rates)
        self.matmul_dtypes = tuple(self.tflops)
        self.available_gb = available_gb
        self.calls: list[tuple] = []
        self.released = 0

    def device_name(self) -> str:
        return "Fake device"

    def engine_version(self) -> str:
        return "fake 1.0"

    def available_bytes(self) -> float | None:
        return self.available_gb * 1e9

    def stream_read(self, nbytes: int) -> list[Workload]:
        self.calls.append(("stream_read", nbytes))
        per_call = nbytes / (self.bandwidth_gbs * 1e9)
        slow = per_call * 2  # a second, slower candidate that the probe must not keep

        return [
            Workload(lambda n: self._wait(n * slow), bytes_per_call=nbytes, working_set_bytes=nbytes, label="slow read"),
            Workload(lambda n: self._wait(n * per_call), bytes_per_call=nbytes, working_set_bytes=nbytes, label="fast read"),
        ]

    def matvec(self, fmt: str, rows: int, cols: int, count: int) -> Workload:
        self.calls.append(("matvec", fmt, rows, cols, count))
        bpw = {"fp32": 4.0, "fp16": 2.0, "q4": 4.5 / 8}[fmt]
        size = rows * cols * count * bpw
        per_call = size / (self.matvec_rates[fmt] * 1e9)
        return Workload(lambda n: self._wait(n * per_call), bytes_per_call=size, flops_per_call=2.0 * rows * cols * count,
                        working_set_bytes=size, label=f"{count} x {rows}x{cols} {fmt}")

    def matmul(self, dtype: str, m: int, k: int, n: int) -> Workload:
        self.calls.append(("matmul", dtype, m, k, n))
        flops = 2.0 * m * k * n
        per_call = flops / (self.tflops[dtype] * 1e12)
        return Workload(lambda reps: self._wait(reps * per_call), flops_per_call=flops, label=f"{m}x{k}x{n} {dtype}")

    def release(self) -> None:
        self.released += 1
