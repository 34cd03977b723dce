"""Query speed of the knowledge store: ``peers(...)`` and ``calibration_set(...)`` at 1,000,000 rows.

What is measured and how:

* two in-memory stores (``Store(":memory:")``, seeded with the ~817 published results): one left
  as it is, one with ``--rows`` synthetic results (default 1,000,000) bulk-inserted from a pandas
  DataFrame (``cursor.register`` + ``INSERT INTO results BY NAME SELECT ...``). Nothing is ever
  written to a store file: the synthetic rows live only in the temporary in-memory store and
  disappear when the script ends;
* synthetic rows are marked ``origin='synthetic'``, ``source_set='synthetic-bench'`` and a
  ``notes``/``source_url`` that says so. Their rates follow a roofline with noise (decode ≈
  efficiency × bandwidth ÷ bytes per token, prefill ≈ efficiency × FLOP/s ÷ FLOPs per token) over
  the catalog's hardware ids, model sizes, quantizations and context depths, batch 1;
* ``peers(...)`` is called ``--calls`` times (default 200) with varied hardware / model size /
  quantization / depth, the arguments the app's peers chart passes (``ui.handlers.peer_rows``);
  ``calibration_set(store, kind=...)`` ``--cal-calls`` times (default 20), cycling over the
  hardware kinds, and ``calibration_set(store)`` (no filter: what ``advisor.perf.build_cal_rows``
  reads after each write) ``--cal-all-calls`` times (default 3). Each timing is wall-clock around
  one call (SQL + turning rows into dicts), after ``--warmup`` untimed calls; the table gives
  median and 95th percentile in ms for both stores side by side, next to the target (peers p95
  ≤ 50 ms at 1M rows on a 2-core machine). The load average is printed too: on a shared machine
  other processes inflate every figure.

Run: python bench/store.py [--rows 1000000] [--calls 200] [--cal-calls 20] [--threads N] [--explain]
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import duckdb  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from knowledge.queries import calibration_set, peers  # noqa: E402
from knowledge.store import Store  # noqa: E402

PEERS_TARGET_MS = 50.0
SYNTHETIC_ORIGIN = "synthetic"
SYNTHETIC_SOURCE_SET = "synthetic-bench"

# Share of synthetic rows per hardware kind (roughly what people post: Macs and gaming GPUs first).
KIND_WEIGHTS = {"apple_soc": 0.35, "discrete_gpu": 0.30, "datacenter_gpu": 0.15, "apu": 0.10, "cpu": 0.10}
# Engine (backend, engine, accel, weight) by hardware kind / vendor.
BACKENDS: dict[str, list[tuple[str, str, str, float]]] = {
    "apple_soc": [("llama.cpp-metal", "llama.cpp", "metal", 0.7), ("mlx", "mlx", "metal", 0.3)],
    "nvidia": [("llama.cpp-cuda", "llama.cpp", "cuda", 0.8), ("llama.cpp-vulkan", "llama.cpp", "vulkan", 0.2)],
    "amd": [("llama.cpp-rocm", "llama.cpp", "rocm", 0.5), ("llama.cpp-vulkan", "llama.cpp", "vulkan", 0.5)],
    "other_gpu": [("llama.cpp-vulkan", "llama.cpp", "vulkan", 1.0)],
    "cpu": [("llama.cpp-cpu", "llama.cpp", "cpu", 1.0)],
}
GGUF_QUANTS = {"Q4_K_M": 0.35, "Q4_0": 0.10, "Q8_0": 0.12, "F16": 0.10, "BF16": 0.03, "Q5_K_M": 0.08,
               "Q6_K": 0.07, "Q3_K_M": 0.04, "IQ4_XS": 0.04, "MXFP4": 0.04, "Q2_K": 0.03}
MLX_QUANTS = {"MLX 4-bit g64": 0.6, "MLX 8-bit g64": 0.25, "MLX 6-bit g64": 0.15}
DEPTHS = {0: 0.70, 4096: 0.10, 32768: 0.10, 65536: 0.10}
PROMPTS = [512, 1024, 2048, 4096, 8192]
GENS = [128, 256, 512]
# Compute per bandwidth when the catalog has no fp16 figure (TFLOP/s per GB/s).
TFLOPS_PER_GBS = {"cpu": 0.02, "apu": 0.15, "apple_soc": 0.03, "discrete_gpu": 0.1, "datacenter_gpu": 0.2}


def _pick(rng: np.random.Generator, weights: dict[Any, float], n: int) -> np.ndarray:
    keys = list(weights)
    p = np.array([weights[k] for k in keys], dtype=float)
    return rng.choice(len(keys), size=n, p=p / p.sum())


def synthetic_results(store: Store, n: int, seed: int = 0) -> pd.DataFrame:
    """``n`` synthetic results rows over the store's catalog (hardware, models, quantizations).

    Every row is marked ``origin='synthetic'``, ``source_set='synthetic-bench'``. ``value_kind`` is
    ``'measured'`` only because ``peers`` and ``calibration_set`` read measured rows alone: these
    rows must never reach a real store (this script inserts them into ``Store(":memory:")`` only).
    """
    rng = np.random.default_rng(seed)
    hw = pd.DataFrame(store.query("SELECT hw_id, name, vendor, kind, bandwidth_gbs, fp16_tflops FROM hardware "
                                  "ORDER BY hw_id"))
    models = pd.DataFrame(store.query("SELECT model_id, params_b, coalesce(active_params_b, params_b) AS active_b "
                                      "FROM models ORDER BY model_id"))
    bpw = {r["format"].lower(): r["bits_per_weight"] for r in store.query("SELECT format, bits_per_weight "
                                                                            "FROM quant_formats")}

    # hardware: pick a kind, then a machine of that kind uniformly
    kinds = [k for k in KIND_WEIGHTS if (hw["kind"] == k).any()]
    kind_idx = _pick(rng, {k: KIND_WEIGHTS[k] for k in kinds}, n)
    hw_idx = np.empty(n, dtype=np.int64)
    for i, k in enumerate(kinds):
        members = np.flatnonzero(hw["kind"].to_numpy() == k)
        sel = kind_idx == i
        hw_idx[sel] = rng.choice(members, size=int(sel.sum()))
    hkind = hw["kind"].to_numpy()[hw_idx]
    vendor = hw["vendor"].str.lower().to_numpy()[hw_idx]
    bw = hw["bandwidth_gbs"].to_numpy(dtype=float)[hw_idx]
    tf = hw["fp16_tflops"].to_numpy(dtype=float)[hw_idx]
    tf_fallback = np.array([TFLOPS_PER_GBS[k] for k in hkind]) * bw
    tf = np.where(np.isnan(tf), tf_fallback, tf)

    # engine by kind / vendor
    group = np.where(hkind == "apple_soc", "apple_soc",
                     np.where(hkind == "cpu", "cpu",
                              np.where(vendor == "nvidia", "nvidia", np.where(vendor == "amd", "amd", "other_gpu"))))
    backend_names = sorted({b[0] for opts in BACKENDS.values() for b in opts})
    engine_of = {b[0]: (b[1], b[2]) for opts in BACKENDS.values() for b in opts}
    backend_code = np.empty(n, dtype=np.int64)
    for g, opts in BACKENDS.items():
        sel = group == g
        if sel.any():
            choice = _pick(rng, {b[0]: b[3] for b in opts}, int(sel.sum()))
            backend_code[sel] = [backend_names.index(opts[c][0]) for c in choice]
    is_mlx = np.array([backend_names[c] == "mlx" for c in backend_code])

    # model: sizes people run most (around 8-30B) are likelier
    p = models["params_b"].to_numpy(dtype=float)
    w = np.exp(-0.5 * ((np.log(p) - np.log(12.0)) / 1.2) ** 2)
    model_idx = rng.choice(len(models), size=n, p=w / w.sum())
    params = p[model_idx]
    active = models["active_b"].to_numpy(dtype=float)[model_idx]

    # quantization (MLX formats for MLX rows, GGUF formats otherwise)
    quant_names = list(GGUF_QUANTS) + list(MLX_QUANTS)
    q_code = np.empty(n, dtype=np.int64)
    q_code[~is_mlx] = _pick(rng, GGUF_QUANTS, int((~is_mlx).sum()))
    q_code[is_mlx] = len(GGUF_QUANTS) + _pick(rng, MLX_QUANTS, int(is_mlx.sum()))
    bits = np.array([bpw.get(q.lower(), 4.5) for q in quant_names])[q_code]

    depth = np.array(list(DEPTHS))[_pick(rng, DEPTHS, n)]
    prompt = rng.choice(PROMPTS, size=n)
    gen = rng.choice(GENS, size=n)

    # rates: roofline × efficiency × noise; long contexts slow both phases down
    slow = 1.0 + 0.6 * depth / 65536
    weight_gb = active * bits / 8.0
    decode = rng.uniform(0.45, 0.85, n) * bw / weight_gb / slow * rng.lognormal(0.0, 0.15, n)
    prefill = rng.uniform(0.25, 0.7, n) * tf * 1e12 / (2.0 * active * 1e9) / slow * rng.lognormal(0.0, 0.2, n)
    # llama-bench prints prefill (pp) and decode (tg) on separate rows: 40 % / 40 % / 20 % both
    which = rng.choice(3, size=n, p=[0.4, 0.4, 0.2])
    decode = np.where(which == 0, np.nan, np.round(decode, 2))
    prefill = np.where(which == 1, np.nan, np.round(prefill, 2))

    def cat(codes: np.ndarray, values: list[str] | pd.Series) -> pd.Categorical:
        # categorical columns keep 1M repeated strings cheap; DuckDB casts them to VARCHAR on insert
        return pd.Categorical(np.asarray(list(values), dtype=object)[codes])

    hw_ids = cat(hw_idx, hw["hw_id"])
    return pd.DataFrame({
        "result_id": [f"synthetic-{i:08d}" for i in range(n)],
        "origin": SYNTHETIC_ORIGIN,
        "source_set": SYNTHETIC_SOURCE_SET,
        "hardware": cat(hw_idx, hw["name"]),
        "hw_id": hw_ids,
        "base_hw_id": hw_ids,  # must equal hardware.hw_id for the JOIN in the queries
        "n_devices": 1,
        "hw_level": "sku",
        "backend": cat(backend_code, backend_names),
        "engine": cat(backend_code, [engine_of[b][0] for b in backend_names]),
        "accel": cat(backend_code, [engine_of[b][1] for b in backend_names]),
        "model": cat(model_idx, models["model_id"].str.split("/").str[-1].str.lower()),
        "model_id": cat(model_idx, models["model_id"]),
        "params_b": params,
        "quant": cat(q_code, quant_names),
        "prompt_tokens": prompt.astype(np.int32),
        "gen_tokens": gen.astype(np.int32),
        "depth": depth.astype(np.int32),
        "batch": np.int32(1),
        "prefill_tps": prefill,
        "decode_tps": decode,
        # value_kind 'measured' is what peers()/calibration_set() select; these rows are synthetic
        # and exist only in the temporary in-memory store built by this script.
        "value_kind": "measured",
        "source_url": "synthetic:bench/store.py",
        "notes": "SYNTHETIC benchmark row (bench/store.py), not a measurement",
    })


def insert_synthetic(store: Store, df: pd.DataFrame) -> float:
    """Bulk-insert ``df`` into ``store.results`` (in-memory stores only); returns seconds taken."""
    if store.path != ":memory:":  # never let synthetic rows near a store file
        raise SystemExit("refusing to insert synthetic rows into a store file")

    def fn(con: duckdb.DuckDBPyConnection) -> None:
        con.register("synthetic_rows", df)
        try:
            con.execute("INSERT INTO results BY NAME SELECT * FROM synthetic_rows")
        finally:
            con.unregister("synthetic_rows")

    t0 = time.perf_counter()
    store.write(fn)
    return time.perf_counter() - t0


def peers_calls(store: Store, n: int, seed: int = 1) -> list[dict[str, Any]]:
    """``n`` varied peers() argument sets, as ``ui.handlers.peer_rows`` would pass them."""
    rnd = random.Random(seed)
    hws = store.query("SELECT hw_id, kind, bandwidth_gbs FROM hardware ORDER BY hw_id")
    sizes = [r["params_b"] for r in store.query("SELECT params_b FROM models ORDER BY model_id")]
    quants = list(GGUF_QUANTS) + list(MLX_QUANTS) + [None]
    calls = []
    for _ in range(n):
        h = rnd.choice(hws)
        calls.append(dict(hw_id=h["hw_id"], params_b=rnd.choice(sizes), quant=rnd.choice(quants), kind=h["kind"],
                          bandwidth_gbs=h["bandwidth_gbs"], depth=rnd.choice(list(DEPTHS)), limit=10))
    return calls


def time_calls(fn: Any, calls: list[dict[str, Any]], warmup: int) -> tuple[list[float], float, list[float]]:
    """Wall-clock ms per call (after ``warmup`` untimed calls), mean rows returned, CPU ms per call.

    CPU time is the whole process's (DuckDB's worker threads included): unlike wall-clock time it
    barely moves when other processes compete for the cores.
    """
    for kw in calls[:warmup]:
        fn(**kw)
    ms, cpu, rows = [], [], 0
    for kw in calls:
        c0, t0 = time.process_time(), time.perf_counter()
        out = fn(**kw)
        ms.append((time.perf_counter() - t0) * 1000)
        cpu.append((time.process_time() - c0) * 1000)
        rows += len(out)
    return ms, rows / max(1, len(calls)), cpu


def pct(xs: list[float], q: float) -> float:
    return float(np.percentile(xs, q)) if xs else float("nan")


def duckdb_threads(store: Store, threads: int | None) -> int:
    with store.cursor() as cur:
        if threads:
            cur.execute(f"SET threads TO {int(threads)}")
        return int(cur.execute("SELECT current_setting('threads')").fetchone()[0])  # type: ignore[index]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 epilog="Synthetic rows live only in a temporary in-memory store.")
    ap.add_argument("--rows", type=int, default=1_000_000, help="synthetic rows to add (default 1,000,000)")
    ap.add_argument("--calls", type=int, default=200, help="timed peers() calls per store (default 200)")
    ap.add_argument("--cal-calls", type=int, default=20, help="timed calibration_set() calls per store (default 20)")
    ap.add_argument("--cal-all-calls", type=int, default=3,
                    help="timed calibration_set() calls without a kind, as perf.build_cal_rows does (default 3)")
    ap.add_argument("--warmup", type=int, default=3, help="untimed calls before timing (default 3)")
    ap.add_argument("--threads", type=int, default=None, help="DuckDB threads (default: DuckDB's, = CPU count)")
    ap.add_argument("--seed", type=int, default=0, help="random seed of the synthetic rows")
    ap.add_argument("--explain", action="store_true", help="print EXPLAIN ANALYZE of one peers() call at --rows")
    args = ap.parse_args(argv)

    seeded = Store(":memory:")
    big = Store(":memory:")
    n_seed = seeded.query("SELECT count(*) AS n FROM results")[0]["n"]
    t0 = time.perf_counter()
    df = synthetic_results(big, args.rows, seed=args.seed)
    gen_s = time.perf_counter() - t0
    ins_s = insert_synthetic(big, df)
    del df
    n_big = big.query("SELECT count(*) AS n FROM results")[0]["n"]
    n_syn = big.query("SELECT count(*) AS n FROM results WHERE origin = ?", [SYNTHETIC_ORIGIN])[0]["n"]
    threads = duckdb_threads(seeded, args.threads)
    duckdb_threads(big, args.threads)

    print(f"machine: {platform.machine()} · {os.cpu_count()} CPUs · load average {os.getloadavg()[0]:.2f} · "
          f"DuckDB {duckdb.__version__}, {threads} threads · Python {platform.python_version()}")
    print(f"seeded store: {n_seed:,} results · big store: {n_big:,} results ({n_syn:,} synthetic, "
          f"origin='{SYNTHETIC_ORIGIN}', source_set='{SYNTHETIC_SOURCE_SET}'; generated in {gen_s:.1f} s, "
          f"bulk-inserted in {ins_s:.1f} s)")

    pc = peers_calls(seeded, args.calls)
    kinds = [r["kind"] for r in seeded.query("SELECT DISTINCT kind FROM hardware ORDER BY kind")]
    cc = [{"kind": kinds[i % len(kinds)]} for i in range(args.cal_calls)]

    def run_peers(store: Store) -> Any:
        return time_calls(lambda **kw: peers(store, **kw), pc, args.warmup)

    def run_cal(store: Store, calls: list[dict[str, Any]]) -> Any:
        return time_calls(lambda **kw: calibration_set(store, **kw), calls, min(args.warmup, 1))

    call_all = [{} for _ in range(args.cal_all_calls)]
    res = {}
    for name, store in (("seeded", seeded), ("big", big)):
        res[("peers", name)] = run_peers(store)
        res[("calibration_set", name)] = run_cal(store, cc)
        res[("calibration_set_all", name)] = run_cal(store, call_all)

    print()
    big_label = f"{n_big:,} rows"
    print(f"| query | calls | seeded ({n_seed:,} rows) median (ms) | seeded p95 (ms) | "
          f"{big_label} median (ms) | {big_label} p95 (ms) | rows returned (seeded / big) | target | met |")
    print("|---|---:|---:|---:|---:|---:|---:|---|---|")
    labels = {"peers": "peers(hw, params, quant, kind, bw, depth, limit=10)",
              "calibration_set": "calibration_set(kind=…)",
              "calibration_set_all": "calibration_set()"}
    for q, calls, target in (("peers", len(pc), PEERS_TARGET_MS), ("calibration_set", len(cc), None),
                             ("calibration_set_all", len(call_all), None)):
        if not calls:
            continue
        (s_ms, s_rows, _), (b_ms, b_rows, _) = res[(q, "seeded")], res[(q, "big")]
        label = labels[q]
        tgt = f"p95 ≤ {target:.0f} ms at 1M rows, 2 cores" if target else "—"
        met = ("yes" if pct(b_ms, 95) <= target else "**no**") if target else "—"
        print(f"| `{label}` | {calls} | {pct(s_ms, 50):.1f} | {pct(s_ms, 95):.1f} | {pct(b_ms, 50):.1f} | "
              f"{pct(b_ms, 95):.1f} | {s_rows:,.0f} / {b_rows:,.0f} | {tgt} | {met} |")

    cpu = {k: pct(v[2], 50) for k, v in res.items() if v[2]}
    if ("peers", "big") in cpu:
        print(f"\nCPU time per call, median, all threads (steadier than wall-clock on a busy machine): "
              f"peers {cpu[('peers', 'seeded')]:.1f} ms seeded, {cpu[('peers', 'big')]:.1f} ms at {n_big:,} rows"
              + (f"; calibration_set(kind=…) {cpu[('calibration_set', 'big')]:.0f} ms at {n_big:,} rows"
                 if ("calibration_set", "big") in cpu else ""))
    print(f"load average at the end: {os.getloadavg()[0]:.2f}")

    if args.explain and pc:
        kw = pc[0]
        print("\nEXPLAIN ANALYZE of peers() with", kw)
        import knowledge.queries as kq

        captured: dict[str, Any] = {}

        def capture(sql: str, params: Any = None) -> list[dict[str, Any]]:
            captured.update(sql=sql, params=params)
            return []

        orig, big.query = big.query, capture  # type: ignore[method-assign]
        try:
            kq.peers(big, **kw)
        finally:
            big.query = orig  # type: ignore[method-assign]
        with big.cursor() as cur:
            plan = cur.execute("EXPLAIN ANALYZE " + captured["sql"], captured["params"]).fetchall()
        print(plan[0][1])
    seeded.close()
    big.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
