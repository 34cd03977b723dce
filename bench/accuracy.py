"""Leave-one-hardware-out accuracy of the calibrated predictions vs the plain roofline.

For each hardware id in the store's measured results: fit the efficiencies on every other
machine, predict that machine's rows, and compare with what was measured. Prints MdAPE and the
90th-percentile absolute percentage error per phase, overall and per hardware kind, next to the
plain roofline (spec bandwidth ÷ bytes, spec FLOPS ÷ FLOPs) on the same rows.

Batched section: on measured rows with batch > 1 (llama-batched-bench output the user imported;
aggregate decode tok/s over all sequences), the batched-decode model of ``predict(concurrency=b)``
against a plain "batch × single-stream" estimate. The seed has no such rows; the section says so.

Run: python bench/accuracy.py [--store PATH]
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from advisor import roofline  # noqa: E402
from advisor.calibration import accel_class, fit  # noqa: E402
from advisor.errors import AdvisorError  # noqa: E402
from advisor.perf import build_cal_rows, calibration_model, predict  # noqa: E402
from knowledge import catalog  # noqa: E402
from knowledge.queries import calibration_set  # noqa: E402
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


def batched_rows(store: Store) -> list[dict]:
    """Measured rows with batch > 1 and an aggregate decode rate (e.g. imported llama-batched-bench)."""
    return [r for r in calibration_set(store) if (r["batch"] or 1) > 1 and r["decode_tps"]]


def _row_model(store: Store, r: dict):
    models = catalog.all_models(store)
    if r.get("model_id") in models:
        return models[r["model_id"]]
    return catalog.resolve_model(store, r.get("model") or "", params_b=r.get("params_b")).value


def evaluate_batched(store: Store, rows: list[dict]) -> list[tuple[float, float]]:
    """(APE of the batched model, APE of batch × single-stream) per row, in %; unusable rows skipped.

    Row keys as in ``knowledge.queries.calibration_set``: ``hw_id``/``base_hw_id``, ``model_id``/``model``,
    ``params_b``, ``quant``, ``backend``, ``prompt_tokens``, ``gen_tokens``, ``depth``, ``batch``,
    ``decode_tps`` (aggregate over the batch).
    """
    cal, out = calibration_model(store), []
    for r in rows:
        try:
            hw = catalog.get_hardware(store, r.get("hw_id") or r["base_hw_id"])
            q = catalog.resolve_quant(store, r["quant"], backend=r.get("backend")).value
            kw = dict(hardware=hw, model=_row_model(store, r), quant=q, backend=r.get("backend"),
                      prompt_tokens=r.get("prompt_tokens") or 512, gen_tokens=r.get("gen_tokens") or 128,
                      depth=r.get("depth") or 0, cal=cal)
            ours = predict(store, concurrency=r["batch"], **kw).decode_tps
            naive = r["batch"] * predict(store, concurrency=1, **kw).decode_tps
        except (AdvisorError, KeyError, TypeError, ValueError):
            continue
        m = r["decode_tps"]
        out.append((abs(ours / m - 1) * 100, abs(naive / m - 1) * 100))
    return out


def print_batched(store: Store, rows: list[dict] | None = None) -> None:
    """The batched section: MdAPE/P90 of aggregate decode, our model vs batch × single-stream."""
    rows = batched_rows(store) if rows is None else rows
    print("\nBatched decode (aggregate tok/s over the batch)")
    if not rows:
        print("no batched measurements in the store (batch > 1); import llama-batched-bench output "
              "(`advisor import FILE --hardware H`) to evaluate the batched model")
        return
    errs = evaluate_batched(store, rows)
    ours, naive = [a for a, _ in errs], [b for _, b in errs]
    print("| rows | used | MdAPE | P90 | batch × single-stream MdAPE | P90 |")
    print("|---:|---:|---:|---:|---:|---:|")
    print(f"| {len(rows)} | {len(errs)} | {_q(ours, .5):.1f} | {_q(ours, .9):.1f} | "
          f"{_q(naive, .5):.1f} | {_q(naive, .9):.1f} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--store", default=":memory:")
    args = ap.parse_args()
    store = Store(args.store)
    errs = evaluate(store)
    print("Leave-one-hardware-out, absolute percentage error (%), calibrated vs plain roofline")
    print("| phase | group | rows | MdAPE | P90 | roofline MdAPE | roofline P90 |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for phase in ("decode", "prefill"):
        for group in ["ALL"] + sorted(k for k in errs[phase] if k != "ALL"):
            v = errs[phase][group]
            ours = [a for a, _ in v]
            plain = [b for _, b in v if b == b]
            print(f"| {phase} | {group} | {len(v)} | {_q(ours, .5):.1f} | {_q(ours, .9):.1f} | "
                  f"{_q(plain, .5):.1f} | {_q(plain, .9):.1f} |")
    print_batched(store)


if __name__ == "__main__":
    main()
