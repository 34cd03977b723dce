"""MoE figures of catalog models (experts, experts per token, shared experts), from ``models.csv``.

The catalog's model table carries the attention shape; the routing figures sit in extra columns of
``knowledge/seed/models.csv`` (``experts``, ``experts_per_token``, ``shared_experts``,
``moe_source_url``; each from the model's ``config.json``) and are attached here to the
:class:`~advisor.models.ModelSpec` the catalog returns, so the step model can compute expert coverage.
"""

from __future__ import annotations

from functools import lru_cache

from advisor.calibration import UBATCH, engine_family
from advisor.models import ModelSpec
from knowledge.seed import read_csv

__all__ = ["PREFILL_STEP_TOKENS", "moe_prefill_terms", "moe_table", "with_moe"]

# Tokens one prefill step carries, by engine family: llama.cpp's n_ubatch (512, common/common.h; llama-bench
# -ub), mlx-lm's prefill_step_size (2048, mlx_lm/generate.py), vLLM/SGLang's chunked-prefill budget
# (max_num_batched_tokens / chunked_prefill_size, 8192 for online serving on large GPUs).
PREFILL_STEP_TOKENS = {"llama.cpp": UBATCH, "ik_llama.cpp": UBATCH, "mlx": 2048, "server": 8192}
# Routing assumed for a MoE whose config is not in the catalog (Qwen3-style: 8 of 128 experts per token).
DEFAULT_ROUTING = (128, 8)


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


def moe_prefill_terms(model: ModelSpec, prompt_tokens: int, engine: str | None, step: int | None = None) -> tuple[float, float]:
    """(s, m) of a MoE prefill: the share of the active matmul FLOPs in routed experts and the tokens each
    routed expert multiplies per step, ``m = min(P, step) × k / E``; (0, 0) for a dense model.

    ``step``: the engine's prefill step (llama.cpp ``-ub``), default :data:`PREFILL_STEP_TOKENS`. Routed
    weights ``R = (P_total − P_active) / (1 − k / E)``; active routed ``R × k / E``; ``s`` = that ÷ P_active.
    A MoE without routing figures assumes :data:`DEFAULT_ROUTING`.
    Example: Qwen3-Coder-30B-A3B (30.5B, 3.3B active, 8 of 128), P = 512 on llama.cpp → m = 32, s ≈ 0.55.
    """
    if not model.is_moe:
        return 0.0, 0.0
    e, k = (model.experts, model.experts_per_token) if model.experts and model.experts_per_token else DEFAULT_ROUTING
    if k >= e:
        return 0.0, 0.0
    routed = (model.params_b - model.active_b) / (1 - k / e)
    share = min(1.0, routed * k / e / model.active_b)
    tokens = min(max(1, int(prompt_tokens)), step or PREFILL_STEP_TOKENS.get(engine_family(engine), UBATCH))
    return share, tokens * k / e
