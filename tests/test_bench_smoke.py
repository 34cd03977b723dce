"""Smoke tests of the benchmark scripts (bench/store.py, bench/latency.py, bench/load.py).

Each script runs as a subprocess in a tiny configuration and must exit 0 and print its table
headers. Nothing here asserts on speed: the benchmarks print figures, they are not timed tests.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "bench"


def run_script(name: str, *args: str, timeout: float = 120) -> str:
    env = dict(os.environ, GRADIO_ANALYTICS_ENABLED="False", HF_HUB_OFFLINE="1")
    proc = subprocess.run([sys.executable, str(BENCH / name), *args], cwd=str(ROOT), env=env,
                          capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, f"{name} {' '.join(args)} exited {proc.returncode}:\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout


@pytest.mark.parametrize("name", ["store.py", "latency.py", "load.py"])
def test_help(name):
    out = run_script(name, "--help", timeout=60)
    assert out.startswith("usage:") and "--" in out


def test_store_bench_tiny():
    out = run_script("store.py", "--rows", "2000", "--calls", "5", "--cal-calls", "2")
    assert "2,000 synthetic, origin='synthetic', source_set='synthetic-bench'" in out
    for header in ("| query |", "| calls |", "median (ms)", "p95 (ms)", "| target |"):
        assert header in out, header
    assert "`peers(" in out and "`calibration_set(" in out
    assert "p95 ≤ 50 ms at 1M rows" in out


@pytest.mark.slow
@pytest.mark.e2e
def test_latency_bench_tiny():
    out = run_script("latency.py", "--turns", "3", "--sessions", "2", "--turns-per-session", "2",
                     "--warmup", "1", "--cold-runs", "1")
    assert "| measurement | turns | median (ms) | p95 (ms) | target |" in out
    for row in ("server-side: `/ask` handler", "`advisor.service.ask` alone", "raw HTTP (`/gradio_api/call/ask`",
                "raw HTTP, 2 concurrent sessions", "`gradio_client`, 1 session", "`gradio_client`, 2 concurrent sessions"):
        assert row in out, row
    assert "raw HTTP 4/4 turns" in out and "gradio_client 4/4 turns" in out and ": 0 problem(s)" in out
    assert "| cold start of `advisor serve` (spawn → `/` answers 200) | seconds | target |" in out
    assert "| fresh store (created + seeded) |" in out


@pytest.mark.slow
@pytest.mark.e2e
def test_load_bench_tiny():
    out = run_script("load.py", "--seconds", "3", "--sessions", "3", "--probe-seconds", "0.2")
    header = "| sessions | seconds | completed turns | turns/s | errors | p50 (ms) | p95 (ms) | p99 (ms) |"
    assert header in out
    row = out.split(header, 1)[1].splitlines()[2]
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[0] == "3" and int(cells[2]) > 0 and cells[4] == "0", row
    assert "| probe (submit order) | submitted (s) |" in out
    assert "probes ran one at a time: yes" in out
