"""Chat-turn latency of the app and cold start of ``advisor serve``.

What is measured and how:

* **server-side**: the function behind the ``/ask`` endpoint (``ui.api.api_ask``: parse the
  facts JSON, ``advisor.service.ask``, serialise the verdict) called in-process ``--turns`` times
  (default 100), and ``advisor.service.ask`` alone; wall-clock per call after ``--warmup`` calls;
* **client-side, 1 session**: the app is built with ``ui.app.build_app(Store(<temp file>))`` and
  launched in this process (``launch(prevent_thread_lock=True)`` on a free loopback port, the
  production launch options of ``ui.server.launch_options``); one ``gradio_client.Client`` sends
  ``--turns`` ``/ask`` turns that need no follow-up question: the first is the complete one-shot
  message (hardware with its memory size, model, quantization, prompt length), the next ones
  repeat it *without* the memory size and send the facts JSON of the previous turn, so the memory
  in each reply can only come from the facts this session carried. The same turns are also sent
  as raw HTTP (``POST /gradio_api/call/ask`` + reading the event stream with httpx) to separate
  the server from gradio_client's own overhead (it polls its message queue every 50 ms);
* **client-side, N concurrent sessions** (default 20): N threads, each with its own Client and
  its own memory size (8, 12, 16, … GB), ``--turns-per-session`` turns each; every reply must
  carry a verdict and echo that session's memory size in its facts JSON (else it is counted as a
  leak / error). The same again over raw HTTP (N threads, each its own connection and facts),
  which shows what the server sustains without gradio_client's own cost. Clients and server share
  this process (and its GIL), so these figures are an upper bound on what separate client
  machines would see;
* **cold start**: ``python -m advisor serve --port <free>`` spawned with ``ADVISOR_STORE`` set to
  a fresh temporary path (so the start includes creating and seeding the store file), polling
  ``http://127.0.0.1:<port>/`` every 50 ms until it answers 200; then once more on the store that
  now exists (``--cold-runs 2``, the default).

Targets printed beside the figures: p95 ≤ 150 ms server-side for one session; cold start ≤ 5 s.

Run: python bench/latency.py [--turns 100] [--sessions 20] [--turns-per-session 10] [--cold-runs 2]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import HARDWARE, REST, free_port, one_shot, pct  # noqa: E402,F401

os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
os.environ.setdefault("HF_HUB_OFFLINE", "1")


SERVER_P95_TARGET_MS = 150.0
COLD_START_TARGET_S = 5.0





def check_reply(verdict_json: str, facts_json: str, memory_gb: int) -> str | None:
    """None when the reply has a verdict and echoes ``memory_gb``; else what is wrong."""
    if verdict_json in ("", "null", None):
        return "no verdict"
    mem = json.loads(facts_json).get("memory_gb")
    if mem is None or abs(float(mem) - memory_gb) > 1e-9:
        return f"facts say memory_gb={mem}, this session sent {memory_gb}"
    return None


# ----------------------------------------------------------------------------------------- server-side
def server_side(store: Any, turns: int, warmup: int, memory_gb: int = 16) -> dict[str, list[float]]:
    from advisor import service
    from advisor.models import Scenario
    from ui import api

    out: dict[str, list[float]] = {"api_ask": [], "service.ask": []}
    _, _, facts = api.api_ask(store, one_shot(memory_gb), "")
    for i in range(warmup + turns):
        t0 = time.perf_counter()
        _, verdict, facts_out = api.api_ask(store, one_shot(None), facts)
        dt = (time.perf_counter() - t0) * 1000
        problem = check_reply(verdict, facts_out, memory_gb)
        if problem:
            raise SystemExit(f"server-side /ask handler: {problem}")
        if i >= warmup:
            out["api_ask"].append(dt)
    facts_obj = Scenario.model_validate_json(facts)
    for i in range(warmup + turns):
        t0 = time.perf_counter()
        service.ask(store, one_shot(None), facts_obj)
        if i >= warmup:
            out["service.ask"].append((time.perf_counter() - t0) * 1000)
    return out


# ----------------------------------------------------------------------------------------- client-side
class Session:
    """One chat session through gradio_client: carries its own facts JSON and memory size."""

    def __init__(self, url: str, memory_gb: int) -> None:
        from gradio_client import Client

        self.client = Client(url, verbose=False, analytics_enabled=False)
        self.memory_gb = memory_gb
        self.facts = ""
        self.latencies: list[float] = []
        self.problems: list[str] = []

    def turn(self) -> None:
        msg = one_shot(self.memory_gb if not self.facts else None)
        t0 = time.perf_counter()
        try:
            _, verdict, facts = self.client.predict(msg, self.facts, api_name="/ask")
        except Exception as e:  # noqa: BLE001 - counted, reported
            self.problems.append(f"{type(e).__name__}: {str(e)[:120]}")
            return
        self.latencies.append((time.perf_counter() - t0) * 1000)
        problem = check_reply(verdict, facts, self.memory_gb)
        if problem:
            self.problems.append(problem)
        else:
            self.facts = facts

    def close(self) -> None:
        try:
            self.client.close()
        except Exception:  # noqa: BLE001
            pass


def raw_http(url: str, turns: int, warmup: int, memory_gb: int = 16) -> list[float]:
    """Same turns as raw HTTP: POST /gradio_api/call/ask, then read the event stream to the end."""
    import httpx

    out: list[float] = []
    facts = ""
    with httpx.Client(base_url=url.rstrip("/"), timeout=30) as h:
        for i in range(warmup + turns):
            msg = one_shot(memory_gb if not facts else None)
            t0 = time.perf_counter()
            eid = h.post("/gradio_api/call/ask", json={"data": [msg, facts]}).json()["event_id"]
            data = None
            with h.stream("GET", f"/gradio_api/call/ask/{eid}") as resp:
                event = None
                for line in resp.iter_lines():
                    if line.startswith("event:"):
                        event = line.split(":", 1)[1].strip()
                    elif line.startswith("data:") and event == "complete":
                        data = json.loads(line.split(":", 1)[1])
            dt = (time.perf_counter() - t0) * 1000
            if not data:
                raise SystemExit(f"raw HTTP /ask: no complete event (last event {event!r})")
            problem = check_reply(data[1], data[2], memory_gb)
            if problem:
                raise SystemExit(f"raw HTTP /ask: {problem}")
            facts = data[2]
            if i >= warmup:
                out.append(dt)
    return out


def concurrent_raw(url: str, sessions: int, turns: int) -> tuple[list[float], list[str], float]:
    """Like :func:`concurrent_sessions` over raw HTTP: what the server sustains without gradio_client."""
    lat: list[list[float]] = [[] for _ in range(sessions)]
    problems: list[str] = []
    start = threading.Barrier(sessions)

    def work(i: int) -> None:
        try:
            start.wait(timeout=60)
        except threading.BrokenBarrierError:
            pass
        try:
            lat[i] = raw_http(url, turns, 0, memory_gb=8 + 4 * i)
        except (Exception, SystemExit) as e:  # noqa: BLE001
            problems.append(f"raw session {i}: {e}")

    wall = _run_threads(work, sessions)
    return [x for xs in lat for x in xs], problems, wall


def _run_threads(work: Callable[[int], None], sessions: int) -> float:
    """Run ``work(i)`` for each session in its own thread; wall seconds until all are done."""
    threads = [threading.Thread(target=work, args=(i,), daemon=True) for i in range(sessions)]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=600)
    return time.perf_counter() - t0


def concurrent_sessions(url: str, sessions: int, turns: int) -> tuple[list[float], list[str], float]:
    """``sessions`` threads, each its own Client and memory size; all latencies, problems, wall s."""
    clients: list[Session] = [None] * sessions  # type: ignore[list-item]
    problems: list[str] = []
    start = threading.Barrier(sessions)

    def work(i: int) -> None:
        try:
            clients[i] = s = Session(url, memory_gb=8 + 4 * i)
        except Exception as e:  # noqa: BLE001
            problems.append(f"session {i}: cannot connect: {e}")
            start.abort()
            return
        try:
            start.wait(timeout=60)
        except threading.BrokenBarrierError:
            pass
        for _ in range(turns):
            s.turn()

    wall = _run_threads(work, sessions)
    lat: list[float] = []
    for i, s in enumerate(clients):
        if s is None:
            continue
        lat += s.latencies
        problems += [f"session {i} ({s.memory_gb} GB): {p}" for p in s.problems]
        s.close()
    return lat, problems, wall


# ----------------------------------------------------------------------------------------- cold start
def cold_start(store_path: str, timeout_s: float = 60.0) -> float:
    """Seconds from spawning ``python -m advisor serve`` until ``/`` answers 200."""
    port = free_port()
    env = dict(os.environ, ADVISOR_STORE=store_path, GRADIO_ANALYTICS_ENABLED="False",
               PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "advisor", "serve", "--port", str(port)], cwd=str(ROOT),
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        while True:
            if proc.poll() is not None:
                err = proc.stderr.read().decode(errors="replace")[-800:] if proc.stderr else ""
                raise SystemExit(f"advisor serve exited with {proc.returncode}: {err}")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=2) as r:
                    if r.status == 200:
                        return time.perf_counter() - t0
            except (urllib.error.URLError, ConnectionError, TimeoutError, OSError):
                pass
            if time.perf_counter() - t0 > timeout_s:
                raise SystemExit(f"advisor serve did not answer within {timeout_s:.0f} s")
            time.sleep(0.05)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


# ----------------------------------------------------------------------------------------- main
def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--turns", type=int, default=100, help="turns for the one-session figures (default 100)")
    ap.add_argument("--sessions", type=int, default=20, help="concurrent sessions (default 20)")
    ap.add_argument("--turns-per-session", type=int, default=10, help="turns per concurrent session (default 10)")
    ap.add_argument("--warmup", type=int, default=3, help="untimed turns first (default 3)")
    ap.add_argument("--cold-runs", type=int, default=2, choices=[0, 1, 2],
                    help="cold starts of `advisor serve`: 0 none, 1 fresh store, 2 fresh + existing (default 2)")
    ap.add_argument("--store", default=None, help="store for the in-process app (default: a new temp file)")
    args = ap.parse_args(argv)

    from knowledge.store import Store
    from ui.app import build_app
    from ui.server import launch_options

    tmp = tempfile.TemporaryDirectory(prefix="advisor-bench-latency-")
    store_path = args.store or str(Path(tmp.name) / "advisor.duckdb")
    t0 = time.perf_counter()
    store = Store(store_path)
    store_s = time.perf_counter() - t0

    print(f"machine: {platform.machine()} · {os.cpu_count()} CPUs · load average {os.getloadavg()[0]:.2f} · "
          f"Python {platform.python_version()} · store {'temp file' if not args.store else store_path} "
          f"(opened in {store_s:.1f} s)")
    print(f"message: “{one_shot(16)}” (then the same without the memory size + the facts JSON)")

    ss = server_side(store, args.turns, args.warmup)

    port = free_port()
    demo = build_app(store, allow_probe=False, export_dir=str(Path(tmp.name) / "export"))
    opts = launch_options(host="127.0.0.1", port=port)
    demo.launch(**opts, prevent_thread_lock=True, quiet=True)
    url = f"http://127.0.0.1:{port}/"
    try:
        one = Session(url, memory_gb=16)
        for _ in range(args.warmup):
            one.turn()
        one.latencies.clear()
        for _ in range(args.turns):
            one.turn()
        one.close()
        if one.problems:
            raise SystemExit(f"1 session: {one.problems[:3]}")
        raw = raw_http(url, args.turns, args.warmup)
        raw_conc, raw_problems, raw_wall = concurrent_raw(url, args.sessions, args.turns_per_session)
        conc, problems, wall = concurrent_sessions(url, args.sessions, args.turns_per_session)
        problems = raw_problems + problems
    finally:
        demo.close()

    colds: list[tuple[str, float]] = []
    if args.cold_runs:
        cold_path = str(Path(tmp.name) / "cold" / "advisor.duckdb")
        colds.append(("fresh store (created + seeded)", cold_start(cold_path)))
        if args.cold_runs > 1:
            colds.append(("existing store", cold_start(cold_path)))

    print()
    print("| measurement | turns | median (ms) | p95 (ms) | target |")
    print("|---|---:|---:|---:|---|")
    ok = "met" if pct(ss["api_ask"], 95) <= SERVER_P95_TARGET_MS else "**missed**"
    print(f"| server-side: `/ask` handler (`ui.api.api_ask`), in-process, 1 session | {len(ss['api_ask'])} | "
          f"{pct(ss['api_ask'], 50):.1f} | {pct(ss['api_ask'], 95):.1f} | p95 ≤ {SERVER_P95_TARGET_MS:.0f} ms ({ok}) |")
    print(f"| server-side: `advisor.service.ask` alone | {len(ss['service.ask'])} | "
          f"{pct(ss['service.ask'], 50):.1f} | {pct(ss['service.ask'], 95):.1f} | — |")
    print(f"| client-side: raw HTTP (`/gradio_api/call/ask` + event stream), 1 session | {len(raw)} | "
          f"{pct(raw, 50):.1f} | {pct(raw, 95):.1f} | — |")
    print(f"| client-side: `gradio_client`, 1 session | {len(one.latencies)} | {pct(one.latencies, 50):.1f} | "
          f"{pct(one.latencies, 95):.1f} | — |")
    print(f"| client-side: raw HTTP, {args.sessions} concurrent sessions | {len(raw_conc)} | "
          f"{pct(raw_conc, 50):.1f} | {pct(raw_conc, 95):.1f} | — |")
    print(f"| client-side: `gradio_client`, {args.sessions} concurrent sessions | {len(conc)} | "
          f"{pct(conc, 50):.1f} | {pct(conc, 95):.1f} | — |")
    expected = args.sessions * args.turns_per_session
    print()
    print(f"{args.sessions} concurrent sessions: raw HTTP {len(raw_conc)}/{expected} turns in {raw_wall:.1f} s "
          f"({len(raw_conc) / raw_wall if raw_wall else 0:.1f} turns/s), gradio_client {len(conc)}/{expected} "
          f"turns in {wall:.1f} s ({len(conc) / wall if wall else 0:.1f} turns/s); facts isolation (each "
          f"session's memory size echoed back, a verdict every turn): {len(problems)} problem(s)")
    print(f"load average at the end: {os.getloadavg()[0]:.2f}")
    for p in problems[:5]:
        print(f"  - {p}")
    if colds:
        print()
        print("| cold start of `advisor serve` (spawn → `/` answers 200) | seconds | target |")
        print("|---|---:|---|")
        for label, s in colds:
            print(f"| {label} | {s:.2f} | ≤ {COLD_START_TARGET_S:.0f} s "
                  f"({'met' if s <= COLD_START_TARGET_S else '**missed**'}) |")
    store.close()
    tmp.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
