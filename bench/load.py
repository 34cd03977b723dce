"""Load test of the app: many concurrent chat sessions for a bounded time, and the probe queue.

What is measured and how:

* the app runs in its own process: by default this script starts one (``python bench/load.py
  --serve``: ``ui.app.build_app`` on a temporary store file, the production launch options of
  ``ui.server.launch_options``, a stand-in probe, see below) on a free loopback port; or it drives
  an app already running at ``--url`` (e.g. ``advisor serve``);
* ``--sessions`` threads (default 50), each with its own ``gradio_client.Client`` (or, with
  ``--client raw``, its own plain HTTP connection) and its own memory size, send ``/ask`` turns back to back for ``--seconds`` (default 30): the first turn is
  a complete one-shot message (hardware + memory, model, quantization, prompt length), the next
  ones the same without the memory size plus the facts JSON of the previous turn (after one
  untimed warm-up turn: the first turn after a start fits the calibration). No new turn
  starts after the deadline; turns in flight are waited for. A turn counts as an error when it
  raises (an HTTP request unanswered for 60 s included: ``TURN_TIMEOUT_S``, set on both clients;
  gradio_client's own default is httpx's 5 s, shorter than any browser waits), has no verdict, or
  its facts do not echo that session's memory size. Latency is
  client-side wall-clock per turn (gradio_client adds ~50–70 ms of its own polling per call);
  p50/p95/p99 over completed turns. The CPU seconds the app's process and this load driver used
  during the load are printed too (on 2 cores they compete: gradio_client is not light);
* probe queue: three clients submit the ``/probe`` endpoint (undocumented in the API page; it is
  tried, and the check is skipped if it is missing) at the same moment. Each job's status is
  polled every 10 ms to get when it started processing and when it finished. On the app this
  script starts, the probe is a stand-in that sleeps ``--probe-seconds`` and logs its own
  start/end times (the real probe takes ~15 s and would store a result): the report checks that
  no two probes ran at the same time. Against ``--url`` the probe check runs only with
  ``--probe`` (it runs the real probe of that app three times).

Run: python bench/load.py [--seconds 30] [--sessions 50] [--url http://127.0.0.1:7860/] [--no-probe]
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
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import HARDWARE, REST, free_port, one_shot, pct  # noqa: E402,F401

os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
os.environ.setdefault("HF_HUB_OFFLINE", "1")


TURN_TIMEOUT_S = 60.0  # a request with no answer for this long counts as an error (clients' HTTP timeout)
PROBE_OVERLAP_TOLERANCE_S = 0.15  # client-side timestamps come through gradio_client's 50 ms polling





# ----------------------------------------------------------------------------------------- the app
def serve(port: int, store_path: str, probe_log: str, probe_seconds: float) -> None:
    """Run the app in this process (blocks): the real app with a stand-in probe that logs its times."""
    from knowledge.store import Store
    from ui.app import build_app
    from ui.server import launch_options

    def stand_in_probe(store: Any, progress: Any) -> str:
        start = time.time()
        progress(0.5, "stand-in probe (bench/load.py)")
        time.sleep(probe_seconds)
        end = time.time()
        with open(probe_log, "a", encoding="utf-8") as f:
            f.write(json.dumps({"start": start, "end": end, "thread": threading.get_ident()}) + "\n")
        return f"stand-in probe ran {start:.3f} → {end:.3f}"

    demo = build_app(Store(store_path), probe_fn=stand_in_probe, allow_probe=True,
                     export_dir=str(Path(store_path).parent / "export"))
    demo.launch(**launch_options(host="127.0.0.1", port=port), quiet=True)


def start_server(tmp: str, probe_seconds: float) -> tuple[subprocess.Popen[bytes], str, str]:
    port = free_port()
    probe_log = str(Path(tmp) / "probes.jsonl")
    cmd = [sys.executable, str(Path(__file__).resolve()), "--serve", "--port", str(port),
           "--store", str(Path(tmp) / "advisor.duckdb"), "--probe-log", probe_log,
           "--probe-seconds", str(probe_seconds)]
    proc = subprocess.Popen(cmd, cwd=str(ROOT), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}/"
    deadline = time.monotonic() + 60
    while True:
        if proc.poll() is not None:
            err = proc.stderr.read().decode(errors="replace")[-800:] if proc.stderr else ""
            raise SystemExit(f"the app exited with {proc.returncode}: {err}")
        try:
            with urllib.request.urlopen(url, timeout=2) as r:
                if r.status == 200:
                    return proc, url, probe_log
        except (urllib.error.URLError, ConnectionError, TimeoutError, OSError):
            pass
        if time.monotonic() > deadline:
            proc.terminate()
            raise SystemExit("the app did not answer within 60 s")
        time.sleep(0.05)


def stop_server(proc: subprocess.Popen[bytes]) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


# ----------------------------------------------------------------------------------------- load
def warm_up(url: str) -> float:
    """One untimed turn, so the load measures a warm app; returns its milliseconds."""
    from gradio_client import Client

    client = Client(url, verbose=False, analytics_enabled=False)
    try:
        t0 = time.perf_counter()
        client.predict(one_shot(16), "", api_name="/ask")
        return (time.perf_counter() - t0) * 1000
    finally:
        client.close()


class RawClient:
    """The /ask call over plain HTTP (POST /gradio_api/call/ask, then read the event stream)."""

    def __init__(self, url: str) -> None:
        import httpx

        self.http = httpx.Client(base_url=url.rstrip("/"), timeout=TURN_TIMEOUT_S)

    def predict(self, message: str, facts: str, api_name: str = "/ask") -> tuple[str, str, str]:
        eid = self.http.post(f"/gradio_api/call{api_name}", json={"data": [message, facts]}).json()["event_id"]
        event, data = None, None
        with self.http.stream("GET", f"/gradio_api/call{api_name}/{eid}") as resp:
            for line in resp.iter_lines():
                if line.startswith("event:"):
                    event = line.split(":", 1)[1].strip()
                elif line.startswith("data:") and event in ("complete", "error"):
                    data = line.split(":", 1)[1].strip()
        if event != "complete" or not data:
            raise RuntimeError(f"event {event!r}: {str(data)[:80]}")
        reply, verdict, facts_out = json.loads(data)
        return reply, verdict, facts_out

    def close(self) -> None:
        self.http.close()


def make_client(url: str, kind: str) -> Any:
    if kind == "raw":
        return RawClient(url)
    from gradio_client import Client

    # gradio_client's HTTP requests (the queue join among them) time out after httpx's default 5 s, far
    # shorter than a browser waits; on 2 busy cores a join alone can take that long (issue 17 item 10).
    return Client(url, verbose=False, analytics_enabled=False, httpx_kwargs={"timeout": TURN_TIMEOUT_S})


def cpu_seconds(pid: int | None) -> float | None:
    """User + system CPU seconds of a process (Linux /proc; this process when ``pid`` is None)."""
    if pid is None:
        t = os.times()
        return t.user + t.system
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return None


def run_load(url: str, sessions: int, seconds: float, client_kind: str = "gradio",
             server_pid: int | None = None) -> dict[str, Any]:

    latencies: list[list[float]] = [[] for _ in range(sessions)]
    errors: list[list[str]] = [[] for _ in range(sessions)]
    last_end = [0.0] * sessions
    deadline = [0.0]

    cpu0: dict[str, float | None] = {}

    def go() -> None:  # runs once, when every session is connected, before any is released
        cpu0.update(server=cpu_seconds(server_pid) if server_pid else None, driver=cpu_seconds(None))
        deadline[0] = time.monotonic() + seconds

    ready = threading.Barrier(sessions + 1, action=go)

    def work(i: int) -> None:
        memory = 8 + 2 * i
        try:
            client = make_client(url, client_kind)
        except Exception as e:  # noqa: BLE001
            errors[i].append(f"connect: {type(e).__name__}: {str(e)[:100]}")
            ready.abort()
            return
        try:
            ready.wait(timeout=120)
        except threading.BrokenBarrierError:
            pass
        facts = ""
        try:
            while time.monotonic() < deadline[0]:
                t0 = time.perf_counter()
                try:
                    _, verdict, facts_out = client.predict(one_shot(None if facts else memory), facts,
                                                           api_name="/ask")
                except Exception as e:  # noqa: BLE001 - counted and reported
                    errors[i].append(f"{type(e).__name__}: {str(e)[:100]}")
                    time.sleep(0.05)  # no hot loop against a failing app
                    continue
                latencies[i].append((time.perf_counter() - t0) * 1000)
                last_end[i] = time.monotonic()
                mem = json.loads(facts_out).get("memory_gb") if facts_out else None
                if verdict in (None, "", "null"):
                    errors[i].append("no verdict")
                elif mem is None or float(mem) != memory:
                    errors[i].append(f"facts memory_gb={mem}, session sent {memory}")
                else:
                    facts = facts_out
        finally:
            try:
                client.close()
            except Exception:  # noqa: BLE001
                pass

    threads = [threading.Thread(target=work, args=(i,), daemon=True) for i in range(sessions)]
    for t in threads:
        t.start()
    try:
        ready.wait(timeout=120)
    except threading.BrokenBarrierError:
        deadline[0] = time.monotonic() + seconds
    t0 = deadline[0] - seconds
    for t in threads:
        t.join(timeout=seconds + 120)
    wall = max([*last_end, deadline[0]]) - t0  # start of the load → last turn answered
    cpu: dict[str, float] = {}
    for key, now in (("server", cpu_seconds(server_pid) if server_pid else None), ("driver", cpu_seconds(None))):
        before = cpu0.get(key)
        if now is not None and before is not None:
            cpu[key] = now - before
    lat = [x for xs in latencies for x in xs]
    errs = [e for es in errors for e in es]
    return {"latencies": lat, "errors": errs, "wall": wall, "stuck": sum(t.is_alive() for t in threads),
            "cpu": cpu}


# ----------------------------------------------------------------------------------------- probes
def fire_probes(url: str, n: int = 3) -> dict[str, Any]:
    """Submit ``/probe`` from ``n`` clients at once; client-side submit/start/end per job."""
    from gradio_client import Client

    clients = [Client(url, verbose=False, analytics_enabled=False) for _ in range(n)]
    try:
        named = clients[0].view_api(print_info=False, return_format="dict") or {}
        listed = "/probe" in (named.get("named_endpoints") or {})
        jobs: list[Any] = []
        submitted: list[float] = []
        for c in clients:
            try:
                jobs.append(c.submit(api_name="/probe"))
            except Exception as e:  # noqa: BLE001 - the app has no probe endpoint
                return {"skipped": f"the app exposes no /probe endpoint ({type(e).__name__}: {str(e)[:80]})"}
            submitted.append(time.time())
        started: list[float | None] = [None] * n
        finished: list[float | None] = [None] * n
        t_end = time.monotonic() + 300
        while any(f is None for f in finished) and time.monotonic() < t_end:
            for i, j in enumerate(jobs):
                if finished[i] is not None:
                    continue
                code = j.status().code.name
                if started[i] is None and code in ("PROCESSING", "PROGRESS", "ITERATING", "LOG"):
                    started[i] = time.time()
                if j.done():
                    finished[i] = time.time()
                    started[i] = started[i] or finished[i]
            time.sleep(0.01)
        outputs = []
        for j in jobs:
            try:
                outputs.append(str(j.result(timeout=1))[:80])
            except Exception as e:  # noqa: BLE001
                outputs.append(f"error: {type(e).__name__}: {str(e)[:60]}")
        return {"listed": listed, "submitted": submitted, "started": started, "finished": finished,
                "outputs": outputs}
    finally:
        for c in clients:
            try:
                c.close()
            except Exception:  # noqa: BLE001
                pass


def overlaps(intervals: list[tuple[float, float]], tolerance: float = 0.0) -> int:
    """Number of pairs of intervals that overlap by more than ``tolerance`` seconds."""
    n = 0
    for a in range(len(intervals)):
        for b in range(a + 1, len(intervals)):
            (s1, e1), (s2, e2) = intervals[a], intervals[b]
            if min(e1, e2) - max(s1, s2) > tolerance:
                n += 1
    return n


# ----------------------------------------------------------------------------------------- main
def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=30.0, help="duration of the load (default 30)")
    ap.add_argument("--sessions", type=int, default=50, help="concurrent sessions (default 50)")
    ap.add_argument("--url", default=None, help="drive an app already running there instead of starting one")
    ap.add_argument("--client", choices=["gradio", "raw"], default="gradio",
                    help="gradio: one gradio_client.Client per session (default); raw: plain HTTP per session "
                         "(POST /gradio_api/call/ask + event stream), much lighter on the load driver")
    ap.add_argument("--probe", action="store_true", help="with --url: also fire 3 real probes at once")
    ap.add_argument("--no-probe", action="store_true", help="skip the probe-queue check")
    ap.add_argument("--probe-seconds", type=float, default=1.0,
                    help="duration of the stand-in probe of the app this script starts (default 1.0)")
    # internal: the app process this script starts
    ap.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--port", type=int, default=0, help=argparse.SUPPRESS)
    ap.add_argument("--store", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--probe-log", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)

    if args.serve:
        serve(args.port, args.store, args.probe_log, args.probe_seconds)
        return 0

    tmp = tempfile.TemporaryDirectory(prefix="advisor-bench-load-")
    proc = None
    probe_log = None
    if args.url:
        url = args.url if args.url.endswith("/") else args.url + "/"
        where = f"the app at {url}"
    else:
        t0 = time.perf_counter()
        proc, url, probe_log = start_server(tmp.name, args.probe_seconds)
        where = f"the app started by this script in its own process ({url}, up in {time.perf_counter() - t0:.1f} s)"
    print(f"machine: {platform.machine()} · {os.cpu_count()} CPUs · load average {os.getloadavg()[0]:.2f} · "
          f"Python {platform.python_version()}")
    print(f"target: {where}; {args.sessions} {'gradio_client' if args.client == 'gradio' else 'raw HTTP'} "
          f"sessions for {args.seconds:g} s; "
          f"message “{one_shot(16)}” then the same without memory + facts JSON")
    try:
        warm_ms = warm_up(url)
        print(f"warm-up: 1 untimed /ask turn first ({warm_ms:.0f} ms; the first turn after a start fits the "
              "calibration)")
        res = run_load(url, args.sessions, args.seconds, args.client, proc.pid if proc is not None else None)
        probe: dict[str, Any] | None = None
        if args.no_probe:
            probe = {"skipped": "--no-probe"}
        elif args.url and not args.probe:
            probe = {"skipped": "against --url the probe check needs --probe (it runs that app's real probe)"}
        else:
            probe = fire_probes(url)
    finally:
        if proc is not None:
            stop_server(proc)

    lat, errs, wall = res["latencies"], res["errors"], res["wall"]
    print()
    print("| sessions | seconds | completed turns | turns/s | errors | p50 (ms) | p95 (ms) | p99 (ms) |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    print(f"| {args.sessions} | {wall:.1f} | {len(lat)} | {len(lat) / wall if wall else 0:.1f} | {len(errs)} | "
          f"{pct(lat, 50):.1f} | {pct(lat, 95):.1f} | {pct(lat, 99):.1f} |")
    if errs:
        kinds: dict[str, int] = {}
        for e in errs:
            kinds[e.split(":")[0]] = kinds.get(e.split(":")[0], 0) + 1
        print("errors: " + ", ".join(f"{k} ×{v}" for k, v in sorted(kinds.items(), key=lambda kv: -kv[1])))
        print(f"  first: {errs[0]}")
    if res["cpu"]:
        c = res["cpu"]
        parts = [f"{name} process {c[name]:.1f} s ({100 * c[name] / wall:.0f} % of one core)"
                 for name in ("server", "driver") if name in c and wall]
        print("CPU during the load: " + "; ".join(parts) + f" · load average {os.getloadavg()[0]:.2f}")
    if res["stuck"]:
        print(f"{res['stuck']} session thread(s) still busy after the join timeout")

    print()
    if "skipped" in probe:
        print(f"probe queue: skipped — {probe['skipped']}")
    else:
        server: list[dict[str, float]] = []
        if probe_log and os.path.exists(probe_log):
            with open(probe_log, encoding="utf-8") as f:
                server = sorted((json.loads(line) for line in f if line.strip()), key=lambda r: r["start"])
        t0 = min(probe["submitted"])

        def rel(x: float | None) -> str:
            return f"{x - t0:.2f}" if x is not None else "—"

        # rows in the order the jobs started (client-side); the server's runs, sorted, pair with them
        order = sorted(range(len(probe["submitted"])), key=lambda i: probe["started"][i] or float("inf"))
        print("| probe (submit order) | submitted (s) | started, client-side (s) | finished, client-side (s) | "
              "ran on the server (s) |")
        print("|---:|---:|---:|---:|---|")
        for k, i in enumerate(order):
            srv = f"{rel(server[k]['start'])} → {rel(server[k]['end'])}" if k < len(server) else "—"
            print(f"| {i + 1} | {rel(probe['submitted'][i])} | {rel(probe['started'][i])} | "
                  f"{rel(probe['finished'][i])} | {srv} |")
        if server:
            n = overlaps([(r["start"], r["end"]) for r in server])
            basis = "server-side start/end of the stand-in probe"
        else:
            iv = [(s, e) for s, e in zip(probe["started"], probe["finished"], strict=True) if s and e]
            n = overlaps(iv, PROBE_OVERLAP_TOLERANCE_S)
            basis = f"client-side start/end, ±{PROBE_OVERLAP_TOLERANCE_S:.2f} s"
        one_at_a_time = n == 0 and len(server or probe["finished"]) == 3 and all(probe["finished"])
        print(f"probes ran one at a time: {'yes' if one_at_a_time else '**no**'} "
              f"({n} overlapping pair(s); {basis}; /probe {'listed' if probe['listed'] else 'not listed'} "
              f"in view_api, called by name)")
    tmp.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
