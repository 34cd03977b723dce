"""Probe speed and stability: run the kernel probe N times next to a plain NumPy reference.

Prints, per run: wall time, the share of CPU other processes used meanwhile (a shared machine
skews everything), achieved bandwidth (best and median), the NumPy streaming-read reference (best of
one measurement just before and one just after the probe, same process), their ratio, matrix-vector GB/s and matmul
TFLOP/s; then the spread over runs (max/min - 1, %) of each figure. The design asks for: verdict in
<= 20 s, bandwidth within 10 % of the reference, repeat runs within 5 %.

Usage::

    python bench/probe.py [--backend mlx-cpu|numpy|mlx-gpu|torch-cuda] [--runs 5] [--budget 15]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from advisor.probe import numpy_stream_reference_gbs, run_kernel_probe  # noqa: E402


def spread(values: list[float]) -> float:
    """max/min - 1, in percent."""
    return (max(values) / min(values) - 1) * 100 if values and min(values) > 0 else float("nan")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backend", default=None, help="probe backend (default: automatic)")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--budget", type=float, default=15.0, help="time_budget_s of each probe")
    ap.add_argument("--ref-mb", type=int, default=512, help="NumPy reference buffer, MB")
    args = ap.parse_args(argv)

    rows = []
    for i in range(args.runs):
        ref_before = numpy_stream_reference_gbs(size_mb=args.ref_mb, repeats=5)
        t0 = time.perf_counter()
        r = run_kernel_probe(backend=args.backend, time_budget_s=args.budget)
        wall = time.perf_counter() - t0
        ref = max(ref_before, numpy_stream_reference_gbs(size_mb=args.ref_mb, repeats=5))
        rows.append({
            "run": i + 1, "wall_s": wall, "busy": r.machine.get("cpu_busy_others_pct", float("nan")), "bw": r.bandwidth_gbs, "bw_med": r.bandwidth_median_gbs or 0.0,
            "ref": ref, "ratio": r.bandwidth_gbs / ref, "tflops": r.matmul_tflops, "dtype": r.matmul_dtype,
            **{f"mv_{k}": v for k, v in r.matvec_gbs.items()},
        })
        if i == 0:
            print(f"backend {r.backend} | device {r.device} | {r.engine_version} | budget {args.budget:g} s")
            for note in r.notes:
                print(f"  note: {note}")
    mv_keys = sorted({k for row in rows for k in row if k.startswith("mv_")})
    head = ["run", "wall s", "others' CPU %", "BW best GB/s", "BW median", "NumPy ref GB/s", "BW/ref"]
    head += [f"matvec {k[3:]} GB/s" for k in mv_keys] + [f"matmul TFLOP/s ({rows[0]['dtype']})"]
    print()
    print("| " + " | ".join(head) + " |")
    print("|" + "|".join("---:" for _ in head) + "|")
    for row in rows:
        cells = [str(row["run"]), f"{row['wall_s']:.2f}", f"{row['busy']:.0f}", f"{row['bw']:.1f}",
                 f"{row['bw_med']:.1f}", f"{row['ref']:.1f}", f"{row['ratio']:.2f}"]
        cells += [f"{row.get(k, float('nan')):.3g}" for k in mv_keys] + [f"{row['tflops']:.4g}"]
        print("| " + " | ".join(cells) + " |")
    cols = ["wall_s", "busy", "bw", "bw_med", "ref", "ratio", *mv_keys, "tflops"]
    med = [statistics.median(r[c] for r in rows) for c in cols]
    spr = [spread([r[c] for r in rows]) for c in cols]
    print("| median | " + " | ".join(f"{m:.3g}" for m in med) + " |")
    print("| spread % | " + " | ".join("-" if c == "busy" else f"{s:.1f}" for c, s in zip(cols, spr, strict=True)) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
