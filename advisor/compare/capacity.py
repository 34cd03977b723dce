"""Capacity of one machine: how many sequences fit in memory, where adding users stops being free.

Memory at concurrency: weights + KV cache per active sequence x sequences + overhead
(:func:`advisor.roofline.memory_fit`). Saturation: the ridge-point batch (spec-sheet roofline) and the
KV knee (the sequences' KV reads outweigh the weights), whichever comes first.
"""

from __future__ import annotations

import math

from advisor import roofline
from advisor.compare.request import MAX_CONCURRENCY_CAP
from advisor.models import Hardware, ModelSpec

__all__ = ["curve_points", "kv_knee_batch", "max_concurrency", "saturation_batch", "saturation_concurrency"]


def max_concurrency(hw: Hardware, model: ModelSpec, bits_per_weight: float, context_tokens: int,
                    kv_bytes_per_element: float = 2.0, cap: int = MAX_CONCURRENCY_CAP) -> int:
    """Largest number of sequences of ``context_tokens`` whose KV cache fits next to the weights.

    Binary search on :func:`advisor.roofline.memory_fit` (fit is monotone in concurrency).
    Returns 0 when not even one sequence fits, ``cap`` when ``cap`` fits.
    """
    def fits(n: int) -> bool:
        return roofline.memory_fit(hw, model, bits_per_weight, context_tokens=context_tokens, concurrency=n,
                                   kv_bytes_per_element=kv_bytes_per_element).fits

    if not fits(1):
        return 0
    if fits(cap):
        return cap
    lo, hi = 1, cap  # invariant: fits(lo), not fits(hi)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if fits(mid) else (lo, mid)
    return lo



def saturation_batch(tflops: float, bandwidth_gbs: float, bits_per_weight: float) -> float:
    """Batch at which decode's arithmetic intensity reaches the ridge point [sequences].

    Intensity ``2b / (bpw/8)`` FLOP per weight byte equals ``FLOPS / BW`` at
    ``b* = ridge × bpw / 16``. Example: RTX 4090 165.2 TFLOP/s / 1008 GB/s = 163.9 FLOP/B; at 4.5 bpw
    b* ≈ 46.
    """
    return roofline.ridge_point(tflops, bandwidth_gbs) * bits_per_weight / 16.0


def kv_knee_batch(weight_bytes: float, kv_bytes_per_seq: float) -> float:
    """Batch at which the KV-cache reads of all sequences equal the weight reads, ``W / K``.

    Past it each added user slows every stream about as much as it adds: at 8k context a 70B model's
    KV cache (≈ 2.7 GB per sequence in f16) outweighs its 43 GB of 4-bit weights beyond ~16 users.
    """
    return weight_bytes / kv_bytes_per_seq if kv_bytes_per_seq > 0 else math.inf


def saturation_concurrency(tflops: float | None, bandwidth_gbs: float, bits_per_weight: float,
                           weight_bytes: float, kv_bytes_per_seq: float) -> tuple[int | None, str]:
    """Where adding users stops being free (spec-sheet roofline), and which limit binds.

    The smaller of the ridge-point batch (compute-bound past it) and the KV knee (bandwidth taken by
    the sequences' KV caches past it), floored to whole sequences (at least 1); None when neither
    is known (no compute figure and no attention shape).
    """
    ridge = saturation_batch(tflops, bandwidth_gbs, bits_per_weight) if tflops else math.inf
    kv = kv_knee_batch(weight_bytes, kv_bytes_per_seq)
    b, why = (ridge, "compute (ridge point)") if ridge <= kv else (kv, "KV-cache reads")
    return (max(1, math.floor(b)) if math.isfinite(b) else None), why


def curve_points(max_b: int, users: int, extra: tuple[float | None, ...] = ()) -> list[int]:
    """Concurrencies to draw: 1, 2, 3, 4, 6, 8, 12, 16 … up to a bound, plus the users and knees."""
    top = min(max_b, max(2 * users, 16, *(2 * int(x) for x in extra if x)))
    pts = {1, min(users, max_b)} | {int(x) for x in extra if x and 1 <= x <= top}
    k = 2
    while k <= top:
        pts |= {k, min(top, k * 3 // 2)}
        k *= 2
    pts.add(top)
    return sorted(p for p in pts if 1 <= p <= top)
