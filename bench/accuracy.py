"""Leave-one-hardware-out accuracy of the calibrated predictions vs the plain roofline.

For each hardware id in the store's measured results: fit the efficiencies on every other
machine, predict that machine's rows, and compare with what was measured. Prints MdAPE and the
90th-percentile absolute percentage error per phase, overall and per hardware kind, next to the
plain roofline (spec bandwidth ÷ bytes, spec FLOPS ÷ FLOPs) on the same rows.

Run: python bench/accuracy.py [--store PATH]
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from advisor import roofline  # noqa: E402
from advisor.calibration import accel_class, fit  # noqa: E402
from advisor.perf import build_cal_rows  # noqa: E402
from knowledge.store import Store  # noqa: E402


def _q(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    if not xs:
        return float("nan")
    k = (len(xs) - 1) * p
    lo, hi = int(k), min(int(k) + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (k - lo)


def evaluate(store: Store) -> dict[str, dict[str, list[tuple[float, float]]]]:
    rows = build_cal_rows(store)
    by_hw = defaultdict(list)
    for r in rows:
        by_hw[r.hw_id].append(r)
    errs: dict[str, dict[str, list[tuple[float, float]]]] = {"decode": defaultdict(list), "prefill": defaultdict(list)}
    for hw, held in by_hw.items():
        train = [r for r in rows if r.hw_id != hw]
        cal = fit(train)
        for r in held:
            g = dataclasses.asdict(r)
            if not g["tflops"]:
                ratio = cal.compute_per_bw.get(f"{r.kind}:{accel_class(r.accel)}")
                g["tflops"] = ratio * r.bandwidth_gbs if ratio else None
            kind = r.kind + ("-multi" if r.multi else "")
            if r.decode_tps:
                pred = cal.decode_tps(g)
                plain = roofline.decode_ceiling_tps(r.bandwidth_gbs, r.decode_bytes)
                e = (abs(pred / r.decode_tps - 1) * 100, abs(plain / r.decode_tps - 1) * 100)
                errs["decode"][kind].append(e)
                errs["decode"]["ALL"].append(e)
            if r.prefill_tps and g["tflops"]:
                pred = cal.prefill_tps(g)
                plain = r.tflops * 1e12 / r.prefill_flops if r.tflops else None
                if pred:
                    e = (abs(pred / r.prefill_tps - 1) * 100,
                         abs(plain / r.prefill_tps - 1) * 100 if plain else float("nan"))
                    errs["prefill"][kind].append(e)
                    errs["prefill"]["ALL"].append(e)
    return errs


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--store", default=":memory:")
    args = ap.parse_args()
    store = Store(args.store)
    errs = evaluate(store)
    print("Leave-one-hardware-out, absolute percentage error (%), calibrated vs plain roofline")
    print(f"| phase | group | rows | MdAPE | P90 | roofline MdAPE | roofline P90 |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for phase in ("decode", "prefill"):
        for group in ["ALL"] + sorted(k for k in errs[phase] if k != "ALL"):
            v = errs[phase][group]
            ours = [a for a, _ in v]
            plain = [b for _, b in v if b == b]
            print(f"| {phase} | {group} | {len(v)} | {_q(ours, .5):.1f} | {_q(ours, .9):.1f} | "
                  f"{_q(plain, .5):.1f} | {_q(plain, .9):.1f} |")


if __name__ == "__main__":
    main()
