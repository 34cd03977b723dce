"""Queries the rest of the product uses: calibration sets and peers.

All SQL is parameterised; table and column names are fixed in this module.
"""

from __future__ import annotations

import math
import statistics
from typing import Any

from knowledge.store import Store

__all__ = ["POPULATION_ORIGINS", "OWN_ORIGINS", "api_pairs", "calibration_set", "latest_probe", "machine_results", "peers",
           "population_calibration_set", "user_results"]

#: Who feeds the population calibration ("what an RTX 4090 with this model should do"): the curated,
#: sourced seed rows and rows an operator pooled on purpose (``advisor db import``). A person's own
#: results (pastes, uploads, ``/import``, ``advisor import``, probes) are their measurements: they are
#: compared against that expectation and never move it (issue 17 item 3).
POPULATION_ORIGINS = ("seed", "pooled")
OWN_ORIGINS = ("probe", "import")
_SCOPES = {"population": POPULATION_ORIGINS, "own": OWN_ORIGINS, "all": None}

_CAL_SQL = """
SELECT r.result_id, r.origin, r.source_set, r.hardware, r.hw_id, r.base_hw_id, r.n_devices, r.hw_level,
       r.backend, r.engine, r.accel, r.model, r.model_id, r.params_b, r.quant, r.prompt_tokens, r.gen_tokens,
       r.depth, r.batch, r.prefill_tps, r.decode_tps, r.source_url, r.notes,
       h.kind, h.family AS hw_family, h.bandwidth_gbs, h.fp16_tflops, h.fp16_tflops_kind, h.gpu_cores
FROM results r
LEFT JOIN hardware h ON h.hw_id = r.base_hw_id
WHERE r.value_kind = 'measured'
  AND ($kind IS NULL OR h.kind = $kind)
  AND ($engine IS NULL OR r.engine = $engine)
  AND ($quant IS NULL OR lower(r.quant) = lower($quant))
  AND ($depth IS NULL OR r.depth = $depth)
  AND ($batch IS NULL OR r.batch = $batch)
  AND ($origin IS NULL OR lower(r.origin) = lower($origin))
  AND ($origins IS NULL OR list_contains($origins, lower(r.origin)))
  AND ($hw IS NULL OR r.base_hw_id = $hw OR r.hw_id = $hw)
ORDER BY r.result_id
"""


def calibration_set(
    store: Store,
    *,
    kind: str | None = None,
    engine: str | None = None,
    quant: str | None = None,
    depth: int | None = None,
    batch: int | None = None,
    origin: str | None = None,
    scope: str = "population",
    hw_id: str | None = None,
) -> list[dict[str, Any]]:
    """Measured results joined with their hardware spec, for fitting efficiencies.

    ``scope``: ``"population"`` (default; seed + pooled rows, :data:`POPULATION_ORIGINS`), ``"own"``
    (the person's probes and imports) or ``"all"``. ``hw_id`` keeps one machine's rows.

    Family-level hardware ids (``apple-m1-max``) are resolved to the bins of that family when
    they share a bandwidth (the spec that decode depends on); their compute is the bins' mean and
    ``fp16_tflops_kind`` says ``family-mean``.
    """
    origins = _origins(scope)
    rows = store.query(
        _CAL_SQL,
        {"kind": kind, "engine": engine, "quant": quant, "depth": depth, "batch": batch, "origin": origin,
         "origins": list(origins) if origins else None, "hw": hw_id},
    )
    family = [r for r in rows if r["hw_level"] == "family" and r["bandwidth_gbs"] is None]
    if family:
        hws = store.query("SELECT hw_id, kind, family, bandwidth_gbs, fp16_tflops FROM hardware")
        for r in family:
            bins = [h for h in hws if h["hw_id"].startswith(r["base_hw_id"] + "-")]
            bws = {h["bandwidth_gbs"] for h in bins}
            if bins and len(bws) == 1:
                tfs = [h["fp16_tflops"] for h in bins if h["fp16_tflops"]]
                r.update(kind=bins[0]["kind"], hw_family=bins[0]["family"], bandwidth_gbs=bws.pop(),
                         fp16_tflops=sum(tfs) / len(tfs) if tfs else None, fp16_tflops_kind="family-mean")
    return [r for r in rows if r["kind"] is not None and (kind is None or r["kind"] == kind)]


def _origins(scope: str) -> tuple[str, ...] | None:
    if scope not in _SCOPES:
        raise ValueError(f"unknown scope {scope!r}; one of {', '.join(_SCOPES)}")
    return _SCOPES[scope]


def population_calibration_set(store: Store, **filters: Any) -> list[dict[str, Any]]:
    """The rows the population calibration is fitted on: seed + pooled (see :func:`calibration_set`)."""
    return calibration_set(store, scope="population", **filters)


def machine_results(store: Store, hw_id: str, **filters: Any) -> list[dict[str, Any]]:
    """A machine's own measured rows (its probes and imports, matched by catalog id), for calibrating
    predictions for that machine only (see :func:`calibration_set`)."""
    return calibration_set(store, scope="own", hw_id=hw_id, **filters)


def peers(
    store: Store,
    *,
    hw_id: str | None,
    params_b: float | None,
    bits_per_weight: float | None = None,
    quant: str | None = None,
    kind: str | None = None,
    bandwidth_gbs: float | None = None,
    depth: int = 0,
    limit: int = 12,
) -> list[dict[str, Any]]:
    """Measured results on the same or similar hardware for a similar model, nearest first.

    Similarity (0–1) multiplies: same hardware id (1.0), same hardware kind with bandwidth within a
    factor (exp(−|ln ratio|)), model size closeness (exp(−|ln ratio|)), same quantization (1.0 vs 0.8)
    and same context depth (1.0 vs 0.7). The query pre-filters in SQL (kind, size within 4×), scores
    narrow rows and fetches full rows only for the top matches, so it stays fast on a million rows
    (``bench/store.py``).
    """
    # Narrow scoring first (hardware similarity once per catalog entry, then one row id per result), full
    # rows only for the top matches: 2-3x less work than scoring wide rows (bench/store.py).
    sql = """
WITH hs AS (SELECT hw_id, CASE WHEN hw_id = $hw THEN 1.0 WHEN $bw IS NOT NULL AND bandwidth_gbs IS NOT NULL
                 THEN 0.8 * exp(-abs(ln(bandwidth_gbs / $bw))) ELSE 0.3 END AS hw_sim
            FROM hardware WHERE $kind IS NULL OR kind = $kind OR hw_id = $hw),
cand AS (
  SELECT r.rowid AS rid, r.result_id, h.hw_sim * (CASE WHEN $p IS NULL OR r.params_b IS NULL THEN 0.5 ELSE exp(-abs(ln(r.params_b / $p))) END)
       * (CASE WHEN $q IS NOT NULL AND lower(r.quant) = lower($q) THEN 1.0 ELSE 0.8 END)
       * (CASE WHEN coalesce(r.depth, 0) = $depth THEN 1.0 ELSE 0.7 END) AS similarity
  FROM results r JOIN hs h ON h.hw_id = r.base_hw_id WHERE r.value_kind = 'measured' AND coalesce(r.batch, 1) = 1
  AND ($p IS NULL OR r.params_b IS NULL OR (r.params_b BETWEEN $p / 4 AND $p * 4))
  AND (r.decode_tps IS NOT NULL OR r.prefill_tps IS NOT NULL)
  UNION ALL  -- results whose hardware id is not in the catalog (family-level or unknown)
  SELECT r.rowid, r.result_id, (CASE WHEN r.base_hw_id = $hw THEN 1.0 ELSE 0.3 END) * (CASE WHEN $p IS NULL OR r.params_b IS NULL THEN 0.5 ELSE exp(-abs(ln(r.params_b / $p))) END)
       * (CASE WHEN $q IS NOT NULL AND lower(r.quant) = lower($q) THEN 1.0 ELSE 0.8 END)
       * (CASE WHEN coalesce(r.depth, 0) = $depth THEN 1.0 ELSE 0.7 END)
  FROM results r WHERE r.value_kind = 'measured' AND coalesce(r.batch, 1) = 1
  AND ($p IS NULL OR r.params_b IS NULL OR (r.params_b BETWEEN $p / 4 AND $p * 4))
  AND (r.decode_tps IS NOT NULL OR r.prefill_tps IS NOT NULL) AND (r.base_hw_id = $hw OR $kind IS NULL) AND r.hw_level IS DISTINCT FROM 'sku'
    AND (r.base_hw_id IS NULL OR r.base_hw_id NOT IN (SELECT hw_id FROM hardware))),
top AS (SELECT * FROM cand ORDER BY similarity DESC, result_id LIMIT $limit)
SELECT r.result_id, r.origin, r.source_set, r.hardware, r.hw_id, r.backend, r.model, r.params_b, r.quant,
       r.prompt_tokens, r.gen_tokens, r.depth, r.batch, r.prefill_tps, r.decode_tps, r.source_url, h.kind, h.bandwidth_gbs, top.similarity FROM top JOIN results r ON r.rowid = top.rid
LEFT JOIN hardware h ON h.hw_id = r.base_hw_id ORDER BY top.similarity DESC, r.result_id
    """
    p = params_b if params_b and params_b > 0 and math.isfinite(params_b) else None
    bw = bandwidth_gbs if bandwidth_gbs and bandwidth_gbs > 0 else None
    return store.query(
        sql, {"hw": hw_id or "", "bw": bw, "p": p, "q": quant, "kind": kind, "depth": int(depth or 0),
              "limit": int(limit)},
    )


_API_PAIRS_SQL = """
SELECT a.hw_id, a.decode_tps AS da, b.decode_tps AS db, a.prefill_tps AS pa, b.prefill_tps AS pb
FROM results a JOIN results b
  ON a.hw_id = b.hw_id AND a.model_id = b.model_id AND lower(a.quant) = lower(b.quant) AND a.engine = b.engine
 AND a.source_set = b.source_set AND coalesce(a.prompt_tokens, -1) = coalesce(b.prompt_tokens, -1)
 AND coalesce(a.gen_tokens, -1) = coalesce(b.gen_tokens, -1) AND coalesce(a.depth, 0) = coalesce(b.depth, 0)
 AND coalesce(a.batch, 1) = coalesce(b.batch, 1)
WHERE a.value_kind = 'measured' AND b.value_kind = 'measured' AND coalesce(a.batch, 1) = 1
  AND a.accel = $a AND b.accel = $b AND a.n_devices IS NOT DISTINCT FROM b.n_devices AND coalesce(a.n_devices, 1) = 1
  AND list_contains($origins, lower(a.origin)) AND list_contains($origins, lower(b.origin))
"""


def api_pairs(store: Store, api_a: str, api_b: str) -> dict[str, Any]:
    """Runs measured twice on one machine, alike but for the GPU API (same model, format, engine, lengths, depth
    and source; one GPU, one stream), in the curated and pooled rows (:data:`POPULATION_ORIGINS`).

    Returns:
        ``{"pairs": n, "machines": [hw_id, ...], "decode": median decode ratio a/b or None, "prefill": median
        prefill ratio a/b or None}``: ratio > 1 means ``api_a`` is faster.
    """
    def build() -> dict[str, Any]:
        rows = store.query(_API_PAIRS_SQL, {"a": api_a, "b": api_b, "origins": list(POPULATION_ORIGINS)})

        def med(xs: list[float]) -> float | None:
            return statistics.median(xs) if xs else None
        return {"pairs": len(rows), "machines": sorted({r["hw_id"] for r in rows}),
                "decode": med([r["da"] / r["db"] for r in rows if r["da"] and r["db"]]),
                "prefill": med([r["pa"] / r["pb"] for r in rows if r["pa"] and r["pb"]])}
    return dict(store.cached(f"api_pairs:{api_a}:{api_b}", build))


def user_results(store: Store, limit: int = 50) -> list[dict[str, Any]]:
    """The user's own results (probes and imports), newest first."""
    return store.query(
        "SELECT * FROM results WHERE lower(origin) IN ('probe', 'import') ORDER BY created_at DESC, result_id LIMIT ?",
        [limit]
    )


def latest_probe(store: Store, machine_fp: str | None = None) -> dict[str, Any] | None:
    """The most recent probe of *this computer*, or None.

    Only a probe made here counts: ``origin = 'local'`` (not pooled from a team export) and recorded
    with this computer's :func:`knowledge.storefile.machine_fingerprint` (``machine_fp``; default: the
    current one). A teammate's probe, or one dated in the future, is never "this machine".
    """
    from knowledge.storefile import machine_fingerprint

    fp = machine_fp or machine_fingerprint()
    rows = store.query(
        "SELECT * FROM probes WHERE coalesce(origin, 'local') = 'local' AND machine_fp = ? "
        "AND (try_cast(created_at AS TIMESTAMPTZ) IS NULL OR try_cast(created_at AS TIMESTAMPTZ) <= now() + INTERVAL 1 DAY) "
        "ORDER BY created_at DESC LIMIT 1", [fp])
    return rows[0] if rows else None
