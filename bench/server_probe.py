"""Server probe: what the stream measured next to what the server reported, on the same requests.

Runs the server probe (``advisor.probe.server.measure_server``) against

1. the Ollama stand-in of the test suite (``tests/probe/ollama_standin.py``, written from Ollama's
   documented response fields) at known speeds, once reporting its true durations and once
   reporting twice the time it took (the probe must flag that);
2. ``mlx_lm.server`` serving the suite's tiny random-weight model, with ``--mlx-tiny`` (mlx-lm
   reports token counts, not times);
3. every real LLM server found on the loopback default ports (``--no-real`` skips them).

For each request it prints the prompt tokens, the stream's TTFT, prefill and decode tok/s and ITL
p50/p95, the server's own prefill and decode tok/s for the same request, and their gap (stream ÷
server − 1, %).

Usage::

    python bench/server_probe.py [--budget 30] [--prompts 128,512] [--gen 32] [--mlx-tiny] [--no-real]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from advisor.probe.server import ServerProbeResult, discover_servers, find_servers, measure_server  # noqa: E402
from bench._common import free_port  # noqa: E402
from tests.probe.ollama_standin import OllamaStandIn  # noqa: E402


def _gap(ours: float | None, theirs: float | None) -> str:
    return f"{(ours / theirs - 1) * 100:+.0f} %" if ours and theirs else "–"


def _num(v: float | None, fmt: str = "{:,.1f}") -> str:
    return fmt.format(v) if v is not None else "–"


def table(title: str, r: ServerProbeResult) -> str:
    lines = [f"### {title}: {r.engine_label} at {r.url}, model {r.model} ({r.duration_s:.1f} s)", "",
             "| prompt tok | TTFT s | prefill tok/s stream | server | gap | decode tok/s stream | server | gap "
             "| ITL p50 / p95 ms | gen tok (server) / chunks |",
             "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for x in r.server_runs:
        lines.append(
            f"| {x.prompt_tokens}{'≈' if x.prompt_tokens_estimated else ''} | {x.ttft_s:.3f} | {x.prefill_tps:,.1f} | "
            f"{_num(x.server_prefill_tps)} | {_gap(x.prefill_tps, x.server_prefill_tps)} | {_num(x.decode_tps)} | "
            f"{_num(x.server_decode_tps)} | {_gap(x.decode_tps, x.server_decode_tps)} | "
            f"{_num(x.itl_p50_ms)} / {_num(x.itl_p95_ms)} | {x.gen_tokens} / {x.chunks} |")
    if r.batching:
        lines += ["", f"Concurrent pass: {r.batching.note}"]
    if r.gpu_share is not None:
        lines += ["", f"GPU share (size_vram / size): {r.gpu_share:.0%}"]
    flagged = r.disagreements or ["none"]
    lines += ["", "Disagreements flagged: " + "; ".join(flagged)]
    lines += [f"Note: {n}" for n in r.notes]
    return "\n".join(lines)


def _tiny_mlx(tmp: Path) -> tuple[subprocess.Popen[bytes], str] | None:
    try:
        from tests.probe.tiny_model import build_tiny_model

        model = build_tiny_model(tmp / "tiny")
    except Exception as e:  # noqa: BLE001 - mlx missing: skip this part
        print(f"(mlx_lm.server skipped: {e})\n")
        return None
    port = free_port()
    (tmp / "hf").mkdir(exist_ok=True)
    env = {**os.environ, "HF_HUB_CACHE": str(tmp / "hf"), "HF_HUB_OFFLINE": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "mlx_lm", "server", "--model", model, "--host", "127.0.0.1",
                             "--port", str(port), "--log-level", "WARNING"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            with urllib.request.urlopen(url + "/health", timeout=1):
                return proc, url
        except OSError:
            time.sleep(0.2)
    proc.kill()
    print("(mlx_lm.server did not start)\n")
    return None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--budget", type=float, default=30.0, help="time budget per server, seconds")
    ap.add_argument("--prompts", default="128,512", help="prompt lengths, tokens, comma-separated")
    ap.add_argument("--gen", type=int, default=32, help="answer length of every request, tokens")
    ap.add_argument("--streams", type=int, default=2, help="concurrent streams of the batching pass (0: none)")
    ap.add_argument("--mlx-tiny", action="store_true", help="also measure mlx_lm.server with the tiny test model")
    ap.add_argument("--no-real", action="store_true", help="do not look for real servers on loopback ports")
    args = ap.parse_args(argv)
    lengths = tuple(int(x) for x in args.prompts.split(",") if x.strip())
    kw = {"prompt_lengths": lengths, "gen_tokens": args.gen, "time_budget_s": args.budget,
          "concurrency": args.streams}

    print("## Server probe: stream vs server-reported, same requests\n")
    for title, standin in (
        ("Ollama stand-in, true report (prefill 1500, decode 60 tok/s)",
         OllamaStandIn(prefill_tps=1500.0, decode_tps=60.0, parallel=1)),
        ("Ollama stand-in reporting twice the time it took",
         OllamaStandIn(prefill_tps=1500.0, decode_tps=60.0, report_factor=2.0, parallel=4)),
    ):
        with standin as s:
            [info] = find_servers(s.url)
            print(table(title, measure_server(info, **kw)) + "\n")
    if args.mlx_tiny:
        with tempfile.TemporaryDirectory(prefix="bench-server-") as d:
            started = _tiny_mlx(Path(d))
            if started:
                proc, url = started
                try:
                    [info] = find_servers(url)
                    print(table("mlx_lm.server, tiny random model", measure_server(info, **kw)) + "\n")
                finally:
                    proc.terminate()
                    proc.wait(10)
    if not args.no_real:
        found = discover_servers()
        if not found:
            print("No real LLM server answers on the loopback default ports.")
        for info in found:
            try:
                print(table("real server", measure_server(info, **kw)) + "\n")
            except Exception as e:  # noqa: BLE001 - one failing server must not stop the others
                print(f"{info.label} at {info.url}: {str(e).splitlines()[0]}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
