"""MoE figures of catalog models (experts, experts per token, shared experts), from ``models.csv``.

The catalog's model table carries the attention shape; the routing figures sit in extra columns of
``knowledge/seed/models.csv`` (``experts``, ``experts_per_token``, ``shared_experts``,
``moe_source_url``; each from the model's ``config.json``) and are attached here to the
:class:`~advisor.models.ModelSpec` the catalog returns, so the step model can compute expert coverage.
"""

from __future__ import annotations

from functools import lru_cache

from advisor.models import ModelSpec
from knowledge.seed import read_csv

__all__ = ["moe_table", "with_moe"]


@lru_cache(maxsize=1)
def moe_table() -> dict[str, tuple[int, int, int, str]]:
    """``model_id`` (lower case) → (experts, experts_per_token, shared_experts, source URL)."""
    out = {}
    for r in read_csv("models.csv"):
        if (r.get("experts") or "").strip() and (r.get("experts_per_token") or "").strip():
            out[r["model_id"].lower()] = (int(r["experts"]), int(r["experts_per_token"]),
                                          int(r.get("shared_experts") or 0), r.get("moe_source_url") or "")
    return out


def with_moe(model: ModelSpec) -> ModelSpec:
    """``model`` with its MoE routing figures filled from the seed (unchanged when known or dense)."""
    if model.experts or not model.is_moe:
        return model
    row = moe_table().get(model.id.lower())
    if row is None:
        return model
    e, k, s, src = row
    return model.model_copy(update={"experts": e, "experts_per_token": k, "shared_experts": s, "moe_source_url": src})
