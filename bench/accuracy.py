"""Leave-one-hardware-out accuracy of the calibrated predictions vs the plain roofline.

For each hardware id in the store's measured results: fit the efficiencies on every other
machine, predict that machine's rows, and compare with what was measured. Prints MdAPE and the
90th-percentile absolute percentage error per phase, overall and per hardware kind, next to the
plain roofline (spec bandwidth ÷ bytes, spec FLOPS ÷ FLOPs) on the same rows.

Held-back section: rows dealt into 10 random folds, each predicted from a fit on the other folds (the
row's machine stays in the fit: the case of new measurements on a machine the store already has).

Batched section: on measured rows with batch > 1 (llama-batched-bench, servers at fixed concurrency;
aggregate tok/s over all sequences), the step model of ``predict(concurrency=b)`` held out by
hardware and by source, against a plain "batch × single-stream" estimate on the same rows.

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
from advisor.calibration import bounded, fit  # noqa: E402
from advisor.errors import AdvisorError  # noqa: E402
from advisor.models import Hardware  # noqa: E402
from advisor.perf import build_cal_rows, calibration_model, predict  # noqa: E402
from advisor.perf.fit import (  # noqa: E402
    fit_batched_terms,
    modelled_batch_tps,
    population_rows,
    row_hardware,
    row_model,
)
from advisor.perf.prediction import resolve_compute  # noqa: E402
from knowledge import catalog  # noqa: E402
from knowledge.seed import read_csv  # noqa: E402
from knowledge.store import Store  # noqa: E402

_MORE_SOURCES = {r["source_set"] for r in read_csv("results_more.csv")} - {r["source_set"] for r in read_csv("results.csv")}


def _q(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    if not xs:
        return float("nan")
    k = (len(xs) - 1) * p
    lo, hi = int(k), min(int(k) + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (k - lo)


def _score(cal, r, errs) -> None:
    """Append (calibrated APE, plain-roofline APE) of one batch-1 row to ``errs[phase][group]``."""
    g = dataclasses.asdict(r)
    eff = None
    if not g["tflops"]:
        # The prediction path's own rule (spec, else FITTED per core / per family / per kind), not a copy of it.
        hw = Hardware(id=r.hw_id, name=r.hw_id, kind=r.kind, family=r.family, bandwidth_gbs=r.bandwidth_gbs,
                      cpu_cores=str(r.cpu_cores) if r.cpu_cores else None)
        tf, _ = resolve_compute(hw, r.accel, cal, quant=r.quant, engine=r.engine)
        g["tflops"] = tf
        eff = 1.0 if tf else None  # estimated from achieved rates: the efficiency is in the figure (as predict)
    kind = r.kind + ("-multi" if r.multi else "")
    if r.decode_tps:
        pred = cal.decode_tps(g)
        plain = roofline.decode_ceiling_tps(r.bandwidth_gbs, r.decode_bytes)
        e = (abs(pred / r.decode_tps - 1) * 100, abs(plain / r.decode_tps - 1) * 100, r.hw_id)
        errs["decode"][kind].append(e)
        errs["decode"]["ALL"].append(e)
    if r.prefill_tps and g["tflops"]:
        pred = cal.prefill_tps(g, eff=eff)
        plain = r.tflops * 1e12 / r.prefill_flops if r.tflops else None
        if pred:
            e = (abs(pred / r.prefill_tps - 1) * 100, abs(plain / r.prefill_tps - 1) * 100 if plain else float("nan"),
                 r.hw_id)
            errs["prefill"][kind].append(e)
            errs["prefill"]["ALL"].append(e)


def evaluate(store: Store, *, only: set[str] | None = None) -> dict[str, dict[str, list[tuple[float, float, str]]]]:
    """Leave-one-hardware-out errors of batch-1 rows (``only``: score just these result ids)."""
    rows = build_cal_rows(store)
    by_hw = defaultdict(list)
    for r in rows:
        if only is None or r.result_id in only:
            by_hw[r.hw_id].append(r)
    errs: dict[str, dict[str, list[tuple[float, float, str]]]] = {"decode": defaultdict(list), "prefill": defaultdict(list)}
    for hw, held in by_hw.items():
        cal = fit(bounded([r for r in rows if r.hw_id != hw]))
        for r in held:
            _score(cal, r, errs)
    return errs


def evaluate_folds(store: Store, *, folds: int = 10, seed: int = 1) -> dict[str, dict[str, dict[str, list[tuple[float, float, str]]]]]:
    """Held-back rows with their hardware still in the fit: rows dealt at random into ``folds`` folds; each
    fold is predicted from a fit on the others. Errors of batch-1 rows split ``{"older": ..., "new": ...}``
    (results.csv sources vs results_more sources), each as :func:`evaluate` returns them."""
    import random

    rows = build_cal_rows(store)
    more = more_ids(store)
    ids = sorted({r.result_id for r in rows})
    random.Random(seed).shuffle(ids)
    fold = {rid: k % folds for k, rid in enumerate(ids)}
    out = {s: {"decode": defaultdict(list), "prefill": defaultdict(list)} for s in ("older", "new")}
    for k in range(folds):
        cal = fit(bounded([r for r in rows if fold[r.result_id] != k]))
        for r in rows:
            if fold[r.result_id] == k:
                _score(cal, r, out["new" if r.result_id in more else "older"])
    return out


def batched_rows(store: Store) -> list[dict]:
    """Population rows with batch > 1 and an aggregate decode rate (llama-batched-bench, servers at fixed concurrency)."""
    return [r for r in population_rows(store) if (r["batch"] or 1) > 1 and r["decode_tps"] and r["bandwidth_gbs"]]


def _row_model(store: Store, r: dict):
    return row_model(store, r)


def _held_out_cal(store: Store, held: set[str], key: str):
    """Calibration fitted without the rows whose ``key`` (``base_hw_id`` or ``source_set``) is in ``held``."""
    rows = [r for r in population_rows(store) if r[key] not in held]
    return fit_batched_terms(store, rows, fit(bounded(build_cal_rows(store, rows))))


def evaluate_batched(store: Store, rows: list[dict], *, hold_out: str | None = "base_hw_id") -> list[tuple[float, float, float]]:
    """(APE aggregate decode, APE batch × single-stream, APE prefill or nan) per row, in %.

    ``hold_out``: refit without the row's hardware (``base_hw_id``) or source (``source_set``) before
    predicting it; None uses the full fit. Row keys as in ``knowledge.queries.calibration_set``.
    """
    out = []
    groups: dict[str, list[dict]] = defaultdict(list)
    for r in rows:
        groups[r[hold_out] if hold_out else "all"].append(r)
    for g, held in groups.items():
        cal = _held_out_cal(store, {g}, hold_out) if hold_out else calibration_model(store)
        for r in held:
            try:
                m = _row_model(store, r)
                if m is None:
                    continue
                hw = row_hardware(store, r)
                q = catalog.resolve_quant(store, r["quant"], backend=r.get("backend")).value
                kw = dict(hardware=hw, model=m, quant=q, backend=r.get("backend"),
                          prompt_tokens=r.get("prompt_tokens") or 512, gen_tokens=r.get("gen_tokens") or 128,
                          depth=r.get("depth") or 0, cal=cal)
                p = predict(store, concurrency=r["batch"], **kw)
                naive = r["batch"] * predict(store, concurrency=1, **kw).decode_tps
            except (AdvisorError, KeyError, TypeError, ValueError):
                continue
            m_d = r["decode_tps"]
            pre = float("nan")
            if r.get("prefill_tps") and p.prefill_tps:
                pre = abs(p.prefill_tps / r["prefill_tps"] - 1) * 100  # llama-batched-bench S_PP: aggregate prompt rate
            out.append((abs(modelled_batch_tps(p, r) / m_d - 1) * 100, abs(naive / m_d - 1) * 100, pre))
    return out


def print_batched(store: Store, rows: list[dict] | None = None,
                  hold_outs: tuple[str | None, ...] = ("base_hw_id", "source_set")) -> None:
    """The batched section: MdAPE/P90 of aggregate decode and prefill, our model vs batch × single-stream."""
    rows = batched_rows(store) if rows is None else rows
    print("\nBatched rows (batch > 1; aggregate tok/s over the batch), held out by hardware and by source")
    if not rows:
        print("no batched measurements in the store (batch > 1)")
        return
    print("| held out | rows | used | decode MdAPE | P90 | batch × single-stream MdAPE | P90 | prefill rows | prefill MdAPE |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for how in hold_outs:
        errs = evaluate_batched(store, rows, hold_out=how)
        ours, naive = [a for a, _, _ in errs], [b for _, b, _ in errs]
        pre = [c for _, _, c in errs if c == c]
        label = {"base_hw_id": "hardware", "source_set": "source", None: "none"}[how]
        print(f"| {label} | {len(rows)} | {len(errs)} | {_q(ours, .5):.1f} | "
              f"{_q(ours, .9):.1f} | {_q(naive, .5):.1f} | {_q(naive, .9):.1f} | {len(pre)} | {_q(pre, .5):.1f} |")


def more_ids(store: Store) -> set[str]:
    """Result ids of the newly collected rows (sources only in ``results_more.csv``)."""
    return {r["result_id"] for r in population_rows(store) if r["source_set"] in _MORE_SOURCES}


def machine_median(v: list[tuple[float, float, str]]) -> float:
    """Median APE with each machine's rows weighing 1 / its row count: every machine counts once (one card's
    85-row sweep weighs as much as one run on another), the case of hardware the store has never seen."""
    n: dict[str, int] = defaultdict(int)
    for *_, hw in v:
        n[hw] += 1
    pairs = sorted((a, 1.0 / n[hw]) for a, _, hw in v)
    half, acc = sum(w for _, w in pairs) / 2.0, 0.0
    for a, w in pairs:
        acc += w
        if acc >= half:
            return a
    return float("nan")


def print_table(title: str, errs: dict) -> None:
    print(title)
    print("| phase | group | rows | machines | MdAPE | per-machine MdAPE | P90 | roofline MdAPE | roofline P90 |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for phase in ("decode", "prefill"):
        for group in ["ALL"] + sorted(k for k in errs[phase] if k != "ALL"):
            v = errs[phase][group]
            ours = [a for a, _, _ in v]
            plain = [b for _, b, _ in v if b == b]
            print(f"| {phase} | {group} | {len(v)} | {len({h for *_, h in v})} | {_q(ours, .5):.1f} | "
                  f"{machine_median(v):.1f} | {_q(ours, .9):.1f} | {_q(plain, .5):.1f} | {_q(plain, .9):.1f} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--store", default=":memory:")
    args = ap.parse_args()
    store = Store(args.store)
    print_table("Leave-one-hardware-out, batch 1, absolute percentage error (%), calibrated vs plain roofline",
                evaluate(store))
    older = {r["result_id"] for r in population_rows(store)} - more_ids(store)
    print_table("\nOlder rows only (results.csv sources; issue-15 targets decode <= 8.5 %, prefill <= 18 %), batch 1, "
                "leave-one-hardware-out", evaluate(store, only=older))
    print_table("\nNewly collected rows only (results_more sources), batch 1, leave-one-hardware-out",
                evaluate(store, only=more_ids(store)))
    held = evaluate_folds(store)
    print_table("\nOlder rows, batch 1, held back in 10 random folds (each row's hardware stays in the fit, as for "
                "held-back rows of machines the store has measured)", held["older"])
    print_table("\nNewly collected rows, batch 1, held back in 10 random folds (hardware stays in the fit)", held["new"])
    print_batched(store)


if __name__ == "__main__":
    main()
