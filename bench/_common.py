"""Helpers shared by the app benchmarks (latency, load): the test message, ports, percentiles."""

from __future__ import annotations

import socket

import numpy as np

HARDWARE = "MacBook Air M2"
REST = "llama 3.1 8b at 4-bit, prompts of 500 words"


def one_shot(memory_gb: int | None) -> str:
    """The complete message (with the memory size) or the same without it (memory from the facts)."""
    return f"{HARDWARE} {memory_gb}GB, {REST}" if memory_gb else f"{HARDWARE}, {REST}"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def pct(xs: list[float], q: float) -> float:
    """The q-th percentile (0-100), NaN for no data."""
    return float(np.percentile(xs, q)) if xs else float("nan")
