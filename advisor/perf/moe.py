"""MoE figures of catalog models (experts, experts per token, shared experts), from ``models.csv``.

The catalog's model table carries the attention shape; the routing figures sit in extra columns of
``knowledge/seed/models.csv`` (``experts``, ``experts_per_token``, ``shared_experts``,
``moe_source_url``; each from the model's ``config.json``) and are attached here to the
:class:`~advisor.models.ModelSpec` the catalog returns, so the step model can compute expert coverage.
"""

from __future__ import annotations

from functools import lru_cache

from advisor.calibration import UBATCH, engine_family
from advisor.models import ModelSpec, QuantFormat
from knowledge.catalog import release_format
from knowledge.seed import read_csv

__all__ = ["PREFILL_STEP_TOKENS", "active_bpw", "expert_dense_bits", "kept_experts", "kernel_format", "moe_prefill_terms", "moe_table",
           "weights_bpw", "with_moe"]

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


@lru_cache(maxsize=1)
def _format_bits() -> dict[str, float]:
    """GGUF tensor formats a converter keeps as released (MXFP4 is one; FP8 is not, and is re-quantized) → bits."""
    return {r["format"].lower(): float(r["bits_per_weight"]) for r in read_csv("quant_formats.csv")
            if r.get("bits_per_weight") and r.get("ecosystem") == "gguf"}


# GGUF formats under this many bits per weight quantize a MoE's routed experts only: attention, shared experts and
# dense layers stay at 4–6 bits, or the model breaks ("leave attention and other layers in 4 or 6bit … the MoE layers
# take up 88% of all space", unsloth.ai/blog/deepseekr1-dynamic; llama-quantize's IQ1/IQ2 recipes raise the same
# tensors). LOW_BIT_DENSE_BITS is an ESTIMATE: the middle of "4 or 6 bit".
LOW_BIT_MOE = 3.0
LOW_BIT_DENSE_BITS = 5.0


def _routed_b(model: ModelSpec) -> tuple[float, float]:
    """(routed expert parameters, k/E) of a MoE, billions: ``R = (P − A) / (1 − k/E)`` (0 for a dense model)."""
    if not model.is_moe:
        return 0.0, 0.0
    e, k = (model.experts, model.experts_per_token) if model.experts and model.experts_per_token else DEFAULT_ROUTING
    if k >= e:
        return 0.0, 0.0
    return min(model.params_b, (model.params_b - model.active_b) / (1 - k / e)), k / e


def kept_experts(model: ModelSpec | None, quant: QuantFormat) -> str | None:
    """The release format a GGUF build of ``model`` keeps its routed experts in (gpt-oss: ``MXFP4``), None when the
    build's own format holds them (see :func:`expert_dense_bits`)."""
    if model is None or not model.is_moe or quant.ecosystem != "gguf":
        return None
    rel = release_format(model.id)
    return rel if rel and rel.lower() in _format_bits() and rel.lower() != quant.name.lower() else None


def expert_dense_bits(model: ModelSpec | None, quant: QuantFormat) -> tuple[float, float]:
    """(bits of the routed experts, bits of everything else) of ``model`` stored in ``quant``.

    A MoE released with its routed experts in a GGUF tensor format (gpt-oss: MXFP4, :func:`knowledge.catalog.release_format`;
    DeepSeek's FP8 is not one and is re-quantized) keeps them in that format in every GGUF build: llama.cpp's
    converters re-quantize only the attention, embedding and output tensors ("All quants keep the feed forward networks
    at mxfp4 … the size differences are negligible", bartowski/openai_gpt-oss-20b-GGUF README). A MoE in a GGUF format
    under :data:`LOW_BIT_MOE` bits has its experts in it and the rest at :data:`LOW_BIT_DENSE_BITS`. Otherwise both
    are ``quant.bits_per_weight``.
    """
    bits = quant.bits_per_weight
    if model is None or not model.is_moe or quant.ecosystem != "gguf":
        return bits, bits
    if kept := kept_experts(model, quant):
        return _format_bits()[kept.lower()], bits
    if bits < LOW_BIT_MOE:
        return bits, max(bits, LOW_BIT_DENSE_BITS)
    return bits, bits


def weights_bpw(model: ModelSpec | None, quant: QuantFormat) -> float:
    """Bits per weight of ``model`` stored in ``quant``, over all its weights (the file's size).

    Routed parameters ``R`` (:func:`_routed_b`) at the experts' bits, the rest at the others' (:func:`expert_dense_bits`).

    Examples: gpt-oss-120b (116.83B, 5.1B active, 4 of 128) in Q2_K (3.16): R = 115.34B at 4.25, 1.49B at 3.16 → 4.24
    bits per weight (61.9 GB), not 3.16 (46 GB). DeepSeek-R1 (671B, 37B active, 8 of 256) in IQ1_S (1.56): R = 654.5B at
    1.56, 16.5B at 5 → 1.64 (138 GB; unsloth's dynamic IQ1_S file: 131 GB).
    """
    e, d = expert_dense_bits(model, quant)
    if model is None or e == d:
        return quant.bits_per_weight
    r, _ = _routed_b(model)
    return (r * e + (model.params_b - r) * d) / model.params_b


def active_bpw(model: ModelSpec | None, quant: QuantFormat) -> float:
    """Bits per weight over the parameters one token reads (what decode's bytes are): the ``R·k/E`` routed ones at
    the experts' bits, the ``A − R·k/E`` others at theirs.

    Example: DeepSeek-R1 in IQ1_S: 20.45B at 1.56 and 16.55B at 5 → 3.10 bits over the 37B read a token (14.3 GB), not
    1.56 (7.2 GB).
    """
    e, d = expert_dense_bits(model, quant)
    if model is None or e == d:
        return quant.bits_per_weight
    r, ke = _routed_b(model)
    routed = min(model.active_b, r * ke)
    return (routed * e + (model.active_b - routed) * d) / model.active_b


def kernel_format(model: ModelSpec | None, quant: QuantFormat) -> str:
    """The format whose kernels do most of a token's work: the release format of experts a GGUF build keeps (a gpt-oss
    "Q4_K_M" or "F16" GGUF multiplies MXFP4 experts), else ``quant``'s own name."""
    return kept_experts(model, quant) or quant.name
