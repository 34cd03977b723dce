"""Kernel probe: achieved memory bandwidth and matrix throughput on the device the engine would use.

Method (every figure is best-of-N over timed runs; N grows until the stage's share of the time
budget is spent or a cap is reached):

1. Streaming read: a buffer of at most 1/8 of available memory, at most 1 GB (CPU) or 4 GB (GPU),
   at least 64 MB, read once per run by each candidate reduction of the backend; the fastest
   candidate is kept. ``bandwidth_gbs`` = buffer bytes / best time, ``bandwidth_median_gbs`` the
   same over the median time. GB = 10^9 bytes.
2. Matrix-vector products (decode-shaped): several distinct 4096-column weight matrices (up to
   1 GB of weights on a GPU, 256 MB on a CPU), one activation row; ``matvec_gbs[fmt]`` = weight
   bytes read / best time. The working set shrinks when a backend is too slow to repeat it within
   the budget (a note says so).
3. Matrix-matrix products (prefill-shaped, ``m`` tokens × ``k`` × ``n``): climbs a ladder of shapes
   from 128×1024×1024 towards 2048×4096×4096 (and up to 8192³ on GPUs) while one call stays short;
   ``matmul_tflops`` = 2·m·k·n / best time / 10^12.

Each timed call ends only when the device has finished (see the backends). A call shorter than
20 ms is repeated inside the timed region and the time divided.
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable
from datetime import UTC, datetime

from advisor.errors import InputError, ProbeError
from advisor.models import ProbeResult
from advisor.probe._backend import KernelBackend, Workload, select_backend
from advisor.probe.system import CpuSnapshot, cpu_busy_others_pct, detect_machine

__all__ = ["numpy_stream_reference_gbs", "run_kernel_probe"]

Progress = Callable[[float, str], None]

MB = 1e6
GB = 1e9
_MIN_REGION_S = 0.02
# Shares of the time budget for the timed loops (the rest covers allocation and setup).
_SHARE = {"bandwidth": 0.15, "matvec": 0.22, "matmul": 0.18}
_DEADLINE_SHARE = 0.9
_MATVEC_COLS = 4096
_BYTES_PER_WEIGHT = {"fp32": 4.0, "fp16": 2.0, "bf16": 2.0, "q4": 4.5 / 8}  # q4: + fp16 scale/bias per 64
_MATMUL_LADDER: tuple[tuple[int, int, int], ...] = (
    (128, 1024, 1024),
    (256, 1024, 1024),
    (512, 1024, 1024),
    (512, 2048, 2048),
    (1024, 2048, 2048),
    (2048, 2048, 2048),
    (2048, 4096, 4096),  # the prefill-like target shape on CPUs
    (4096, 4096, 4096),
    (4096, 8192, 8192),
    (8192, 8192, 8192),
)
_CPU_LADDER_TOP = 6


class _Progress:
    """Forwards strictly increasing fractions in [0, 1] to the user's callback."""

    def __init__(self, cb: Progress | None) -> None:
        self._cb = cb
        self.last = -1.0

    def __call__(self, frac: float, desc: str) -> None:
        frac = min(1.0, max(0.0, frac))
        if self._cb is not None and frac > self.last:
            self.last = frac
            self._cb(frac, desc)


def _time(w: Workload, *, max_runs: int, slice_s: float, deadline: float, min_runs: int = 3,
          warm: bool = True, tick: Callable[[float], None] | None = None) -> list[float]:
    """Time ``w``; returns seconds per call for each timed run (at least one run, always).

    Args:
        w: the prepared workload.
        max_runs: stop after this many timed runs.
        slice_s: stop once this much time was spent and ``min_runs`` are done.
        deadline: ``perf_counter`` value after which no new run starts.
        min_runs: runs wanted before ``slice_s`` may stop the loop.
        warm: run once untimed first (compilation, first-touch, caches).
        tick: called with the fraction of ``slice_s`` used after each run.
    """
    per_call = None
    if warm:
        t0 = time.perf_counter()
        w.run(1)
        per_call = time.perf_counter() - t0
    inner = 1 if not per_call or per_call >= _MIN_REGION_S else min(1000, math.ceil(_MIN_REGION_S / max(per_call, 1e-7)))
    times: list[float] = []
    start = time.perf_counter()
    while True:
        t0 = time.perf_counter()
        w.run(inner)
        elapsed = time.perf_counter() - t0
        times.append(elapsed / inner)
        if not warm and len(times) == 1 and elapsed < _MIN_REGION_S:
            inner = min(1000, math.ceil(_MIN_REGION_S / max(elapsed / inner, 1e-7)))
        now = time.perf_counter()
        if tick is not None:
            tick(min(1.0, (now - start) / slice_s) if slice_s > 0 else 1.0)
        if len(times) >= max_runs or now + elapsed > deadline:
            break
        if len(times) >= min_runs and now - start >= slice_s:
            break
    return times


def _stream_bytes(avail: float | None, is_gpu: bool, max_buffer_gb: float | None) -> int:
    cap = (4 if is_gpu else 1) * GB
    if max_buffer_gb is not None:
        cap = min(cap, max_buffer_gb * GB)
    size = cap if avail is None else min(cap, avail / 8)
    return int(max(size, min(64 * MB, cap)))


def _bandwidth(be: KernelBackend, nbytes: int, slice_s: float, deadline: float,
               tick: Callable[[float], None], notes: list[str]) -> tuple[float, float]:
    cands = be.stream_read(nbytes)
    if not cands:
        raise ProbeError(f"backend {be.name} offered no streaming-read kernel")
    best, best_times = cands[0], [math.inf]
    if len(cands) > 1:
        for c in cands:
            ts = _time(c, max_runs=2, min_runs=1, slice_s=0.0, deadline=deadline)
            if min(ts) * best.bytes_per_call < min(best_times) * c.bytes_per_call:
                best, best_times = c, ts
        times = best_times + _time(best, max_runs=12, slice_s=slice_s, deadline=deadline, warm=False, tick=tick)
    else:
        times = _time(best, max_runs=12, slice_s=slice_s, deadline=deadline, tick=tick)
    del cands
    size = best.bytes_per_call
    notes.append(
        f"bandwidth: {best.label} over {size / MB:.0f} MB, best of {len(times)} runs"
        + (" (below 64 MB: may be served from cache)" if size < 64 * MB else "")
    )
    return size / min(times) / GB, size / statistics.median(times) / GB


def _matvec(be: KernelBackend, fmt: str, target_ws: float, slice_s: float, deadline: float,
            tick: Callable[[float], None], notes: list[str]) -> float:
    cols = _MATVEC_COLS
    bpw = _BYTES_PER_WEIGHT.get(fmt, 2.0)
    small_rows = 256
    probe = be.matvec(fmt, small_rows, cols, 1)
    calib = _time(probe, max_runs=1, min_runs=1, slice_s=0.0, deadline=math.inf)
    s_per_byte = min(calib) / probe.bytes_per_call
    ws_time = slice_s / 4 / s_per_byte  # one call should take at most a quarter of the slice
    ws = min(target_ws, ws_time)
    unit = 4096 * cols * bpw
    if ws >= unit:
        rows, count = 4096, max(1, int(ws // unit))
    else:
        rows, count = max(small_rows, int(ws / (cols * bpw)) // small_rows * small_rows), 1
    if (rows, count) == (small_rows, 1):
        w, times = probe, calib + _time(probe, max_runs=7, slice_s=slice_s, deadline=deadline, warm=False, tick=tick)
    else:
        del probe
        w = be.matvec(fmt, rows, cols, count)
        times = _time(w, max_runs=8, slice_s=slice_s, deadline=deadline, tick=tick)
    size = w.bytes_per_call
    note = f"matvec {fmt}: {w.label}, {size / MB:.1f} MB of weights, best of {len(times)} runs"
    if size < 64 * MB:
        why = "to fit the time budget (compute-bound here)" if ws_time < target_ws else "by the buffer cap"
        note += f" (working set limited {why}: may be served from cache)"
    notes.append(note)
    return size / min(times) / GB


def _matmul_fits(shape: tuple[int, int, int], itemsize: int, mem_cap: float) -> bool:
    m, k, n = shape
    return (m * k + k * n + m * n) * itemsize <= mem_cap


def _matmul(be: KernelBackend, mem_cap: float, slice_s: float, deadline: float,
            tick: Callable[[float], None], notes: list[str]) -> tuple[float, str]:
    top = len(_MATMUL_LADDER) - 1 if be.is_gpu else _CPU_LADDER_TOP
    per_call_target = slice_s / 5
    itemsize = {"float32": 4, "float64": 8}
    # Pick the dtype: calibrate each candidate on the smallest shape.
    best: tuple[float, str, Workload, list[float]] | None = None
    for dt in be.matmul_dtypes:
        w = be.matmul(dt, *_MATMUL_LADDER[0])
        ts = _time(w, max_runs=2 if len(be.matmul_dtypes) > 1 else 1, min_runs=1, slice_s=0.0, deadline=math.inf)
        rate = w.flops_per_call / min(ts)
        if best is None or rate > best[0]:
            best = (rate, dt, w, ts)
    assert best is not None
    rate, dtype, w, times = best
    i = 0
    for _ in range(3):  # climb: a larger shape runs closer to peak
        size = itemsize.get(dtype, 2)
        fitting = [
            j for j in range(i + 1, top + 1)
            if 2.0 * math.prod(_MATMUL_LADDER[j]) / rate <= per_call_target
            and _matmul_fits(_MATMUL_LADDER[j], size, mem_cap)
        ]
        if not fitting or time.perf_counter() > deadline:
            break
        i = max(fitting)
        w = be.matmul(dtype, *_MATMUL_LADDER[i])
        times = _time(w, max_runs=1, min_runs=1, slice_s=0.0, deadline=math.inf)
        rate = w.flops_per_call / min(times)
    times = times + _time(w, max_runs=6, slice_s=slice_s, deadline=deadline, warm=False, tick=tick)
    notes.append(f"matmul: {w.label}, best of {len(times)} runs")
    return w.flops_per_call / min(times) / 1e12, dtype


def run_kernel_probe(*, backend: str | KernelBackend | None = None, time_budget_s: float = 15.0,
                     progress: Progress | None = None, max_buffer_gb: float | None = None) -> ProbeResult:
    """Measure achieved memory bandwidth, matrix-vector and matrix-matrix throughput.

    Args:
        backend: ``"mlx-gpu"``, ``"mlx-cpu"``, ``"torch-cuda"``, ``"numpy"``, a backend object
            (see :class:`advisor.probe.KernelBackend`), or None to pick the best available.
        time_budget_s: wall-clock budget, seconds. Timed loops use about 55 % of it and stop
            repeating at 90 %; allocation and setup come on top of the loops but within the budget
            on ordinary machines (about 4–8 s of a 15 s budget on a 2-core CPU).
        progress: called as ``progress(fraction, description)`` with fractions increasing to 1.0.
        max_buffer_gb: upper bound on the streaming-read buffer and the weight sets, GB.

    Returns:
        A :class:`ProbeResult` without ``model_runs``.

    Raises:
        BackendUnavailable: a named backend is not installed or has no device.
        InputError: a bad argument.
        ProbeError: the measurement failed.
    """
    if not (isinstance(time_budget_s, int | float) and math.isfinite(time_budget_s) and time_budget_s > 0):
        raise InputError(f"time_budget_s must be a positive number of seconds, got {time_budget_s!r}")
    if max_buffer_gb is not None and not (math.isfinite(max_buffer_gb) and max_buffer_gb > 0):
        raise InputError(f"max_buffer_gb must be a positive number of GB, got {max_buffer_gb!r}")
    t_start = time.perf_counter()
    cpu_before = CpuSnapshot()
    deadline = t_start + _DEADLINE_SHARE * time_budget_s
    prog = _Progress(progress)
    prog(0.0, "choosing backend")
    be = backend if backend is not None and not isinstance(backend, str) else select_backend(backend)
    prog(0.01, f"detecting machine ({be.name})")
    machine = detect_machine()
    avail = be.available_bytes()
    if avail is None and machine.get("memory_available_gb"):
        avail = machine["memory_available_gb"] * GB
    notes: list[str] = []

    def stage(lo: float, hi: float, desc: str) -> Callable[[float], None]:
        prog(lo, desc)
        return lambda f: prog(lo + (hi - lo) * f, desc)

    try:
        nbytes = _stream_bytes(avail, be.is_gpu, max_buffer_gb)
        tick = stage(0.05, 0.35, "measuring memory bandwidth")
        bw, bw_med = _bandwidth(be, nbytes, _SHARE["bandwidth"] * time_budget_s, deadline, tick, notes)
        be.release()
        prog(0.35, f"bandwidth {bw:.1f} GB/s")

        ws_cap = 1 * GB if be.is_gpu else 256 * MB  # weights read per matvec pass, beyond any LLC
        if avail is not None:
            ws_cap = min(ws_cap, avail / 8)
        if max_buffer_gb is not None:
            ws_cap = min(ws_cap, max_buffer_gb * GB)
        matvec: dict[str, float] = {}
        fmts = be.matvec_formats
        reserve = 0.12 * time_budget_s  # kept for the matrix-matrix stage
        for j, fmt in enumerate(fmts):
            lo = 0.35 + 0.35 * j / len(fmts)
            tick = stage(lo, lo + 0.35 / len(fmts), f"matrix-vector {fmt}")
            if time.perf_counter() > deadline - reserve:
                notes.append(f"matvec {fmt}: skipped, time budget used up")
                continue
            slice_s = _SHARE["matvec"] * time_budget_s / len(fmts)
            matvec[fmt] = _matvec(be, fmt, ws_cap, slice_s, deadline - reserve, tick, notes)
            be.release()

        tick = stage(0.7, 0.98, "matrix-matrix")
        mem_cap = max(64 * MB, (avail or 8 * GB) / 8)
        if max_buffer_gb is not None:
            mem_cap = min(mem_cap, max(max_buffer_gb * GB, 16 * MB))
        tflops, dtype = _matmul(be, mem_cap, _SHARE["matmul"] * time_budget_s, deadline, tick, notes)
        be.release()
    except (MemoryError, RuntimeError, ValueError) as e:
        be.release()
        raise ProbeError(f"the {be.name} kernel probe failed: {e}") from e
    duration = time.perf_counter() - t_start
    busy = cpu_busy_others_pct(cpu_before, CpuSnapshot())
    if busy is not None:
        machine["cpu_busy_others_pct"] = busy
        if busy >= 15:
            notes.append(f"other processes kept {busy:.0f} % of the CPU busy during the probe: "
                         "figures may understate this machine")
    if duration > time_budget_s:
        notes.append(f"took {duration:.1f} s, over the {time_budget_s:g} s budget (slow allocation or device)")
    result = ProbeResult(
        backend=be.name,  # type: ignore[arg-type]
        device=be.device_name(),
        bandwidth_gbs=round(bw, 3),
        bandwidth_median_gbs=round(bw_med, 3),
        matmul_tflops=round(tflops, 6),
        matmul_dtype=dtype,
        matvec_gbs={k: round(v, 3) for k, v in matvec.items()},
        duration_s=round(duration, 3),
        machine=machine,
        engine_version=be.engine_version(),
        created_at=datetime.now(UTC).isoformat(timespec="seconds"),
        notes=notes,
    )
    prog(1.0, "done")
    return result


def numpy_stream_reference_gbs(size_mb: int = 512, repeats: int = 5) -> float:
    """Plain NumPy streaming-read bandwidth, GB/s: a reference to compare the probe with.

    Reads an FP32 buffer of ``size_mb`` MB (10^6 bytes) with ``np.max`` (one thread) and with a
    BLAS ``sgemv`` against a ones vector (all BLAS threads); returns the best of ``repeats`` runs
    of each, after one untimed warm-up run of each.

    Args:
        size_mb: buffer size in MB; keep it well above the last-level cache.
        repeats: timed runs per method.

    Returns:
        Bytes read / best time, in GB/s.
    """
    from advisor.probe._numpy import stream_read_workloads

    if size_mb <= 0 or repeats <= 0:
        raise InputError(f"size_mb and repeats must be positive, got {size_mb}, {repeats}")
    best = math.inf
    size = 0.0
    for w in stream_read_workloads(int(size_mb * MB)):
        ts = _time(w, max_runs=repeats, min_runs=repeats, slice_s=math.inf, deadline=math.inf)
        best = min(best, min(ts))
        size = w.bytes_per_call
    return size / best / GB

