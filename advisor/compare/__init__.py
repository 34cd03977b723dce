"""Rank hardware for a multi-user workload (teams choosing what to buy).

Modules: :mod:`~advisor.compare.request` (the request), :mod:`~advisor.compare.capacity` (memory,
saturation), :mod:`~advisor.compare.queueing` (TTFT under load), :mod:`~advisor.compare.cost`,
:mod:`~advisor.compare.evaluate` (one candidate), :mod:`~advisor.compare.engine` (resolve, rank),
:mod:`~advisor.compare.output` (tables, sentences).

Per candidate (units in the names: ``_s`` seconds, ``_tps`` tokens/s, ``_gb`` 10^9 bytes):

* **Memory at concurrency** — weights + KV cache per active sequence × sequences + overhead
  (:func:`advisor.roofline.memory_fit`); the largest concurrency that fits is found by binary search
  (:func:`max_concurrency`). ``kv_quant`` (llama.cpp ``--cache-type-k/-v``) shrinks the KV bytes:
  q8_0 stores 34 bytes per 32 elements (1.0625 B, about half of f16), q4_0 18 bytes per 32
  (``block_q8_0`` / ``block_q4_0`` in ggml-common.h).
* **Batched decode** — one decode step reads the weights once plus every sequence's KV cache, and
  does ``2 × P_active`` FLOPs per sequence; the step is the slower of the two (roofline, DESIGN.md):
  ``t(b) = max((W + b·K) / (BW·e_d) + t0, b · 2·P_active / (FLOPS·e_p))``, the same model as
  :func:`advisor.perf.predict` with ``concurrency=b`` (efficiencies ``e_d``, ``e_p`` and the fixed
  per-step cost ``t0`` come from its single-stream calibration; see :class:`StepModel`).
  Aggregate tok/s ``= b / t(b)``, per user ``1 / t(b)``. Adding users is free while the step is
  bandwidth-bound: up to the ridge point, ``b* = ridge × bpw / 16`` (decode intensity
  ``2b / (bpw/8)`` FLOP per weight byte = ``FLOPS / BW``).
* **TTFT under load** — Poisson arrivals at ``users × requests_per_minute / 60`` per second, FIFO
  prefill, decode steps of all running streams interleaved: a small deterministic discrete-event
  simulation (:func:`simulate_load`, a few thousand arrivals with a fixed seed), run twice — without
  chunked prefill (a prompt runs whole; every running stream stalls meanwhile) and with chunked
  prefill (each iteration carries one decode step plus a prompt chunk: prefill slightly slower,
  streams keep flowing). The unchunked case is an M/D/1 queue of prefill work; its mean is checked
  against Pollaczek–Khinchine (:func:`pk_mean_wait_s`) and its p95 against the exact M/D/1
  waiting-time distribution (Erlang 1909 / Crommelin 1932, :func:`md1_wait_cdf`).
* **Prefix caching** — a prefix shared by every request is prefilled once; each request prefills
  only the rest (attending to the cached prefix), so TTFT falls by about ``cached / pp``.
* **Cost** — only from prices the user gives, amortised over a stated period at a stated
  utilisation; no electricity figure.
"""

from advisor.compare.capacity import (
    curve_points,
    kv_knee_batch,
    max_concurrency,
    saturation_batch,
    saturation_concurrency,
)
from advisor.compare.cost import cost_per_million
from advisor.compare.engine import compare, compare_request, compare_situation
from advisor.compare.evaluate import Candidate
from advisor.compare.output import (
    TABLE_HEADERS,
    TABLE_LEGEND,
    headline,
    notes_markdown,
    summary_lines,
    table_markdown,
    table_rows,
)
from advisor.compare.queueing import (
    LoadResult,
    md1_wait_cdf,
    md1_wait_quantile,
    pk_mean_wait_s,
    simulate_load,
)
from advisor.compare.request import KV_BYTES_PER_ELEMENT, CompareRequest
from advisor.understand.text import parse_prices  # names are read by understanding

__all__ = [
    "KV_BYTES_PER_ELEMENT",
    "TABLE_HEADERS",
    "TABLE_LEGEND",
    "Candidate",
    "CompareRequest",
    "LoadResult",
    "compare",
    "compare_request",
    "compare_situation",
    "cost_per_million",
    "curve_points",
    "headline",
    "kv_knee_batch",
    "max_concurrency",
    "md1_wait_cdf",
    "md1_wait_quantile",
    "notes_markdown",
    "parse_prices",
    "pk_mean_wait_s",
    "saturation_batch",
    "saturation_concurrency",
    "simulate_load",
    "summary_lines",
    "table_markdown",
    "table_rows",
]
