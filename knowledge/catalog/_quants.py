"""Weight-format look-up: GGUF, MLX, GPTQ/AWQ, compressed-tensors, EXL2/3, NVFP4/MXFP4 by the names people write."""

from __future__ import annotations

import re

from rapidfuzz import fuzz, process

from advisor.errors import NotFoundError
from knowledge.catalog._load import Match, all_quants
from knowledge.store import Store

__all__ = ["resolve_quant"]


# ----------------------------------------------------------------------------- formats
_QUANT_ALIASES = {
    "fp32": "F32", "f32": "F32", "float32": "F32",
    "fp16": "F16", "f16": "F16", "float16": "F16", "half": "F16", "16-bit": "F16", "16bit": "F16",
    "bf16": "BF16", "bfloat16": "BF16",
    "fp8": "FP8 (E4M3)", "e4m3": "FP8 (E4M3)",
    "mxfp4": "MXFP4", "awq": "AWQ 4-bit g128", "gptq": "GPTQ 4-bit g128",
}
_GGUF = re.compile(r"\b(i?q\d(?:_[a-z0-9]+)*)\b")


def resolve_quant(store: Store, text: str | None, *, backend: str | None = None) -> Match:
    """Resolve a weight format ("q4_k_m", "Q4_K - Medium", "4-bit", "mlx 8bit", "fp16", "UD-Q4_K_XL").

    A bare bit count ("4-bit") becomes the common format of the engine: MLX's 4-bit g64 under
    mlx, else GGUF Q4_K_M (Ollama's default), stated as an assumption.

    Raises:
        NotFoundError: nothing recognisable.
    """
    quants = all_quants(store)
    raw = (text or "").strip()[:300]
    t = raw.lower().replace(" - medium", "_m").replace(" - small", "_s").replace(" - large", "_l")
    t = t.replace("mostly ", "")
    be = (backend or "").lower()
    mlx_ctx = "mlx" in t or "mlx" in be
    if not t:
        raise NotFoundError("No weight format given.", [])
    for q in quants:
        if t == q.lower():
            return Match(quants[q], 1.0)
    if t in _QUANT_ALIASES:
        return Match(quants[_QUANT_ALIASES[t]], 1.0)
    g = _GGUF.search(re.sub(r"\bud[-_]", "", t).replace("-", " ").replace("_", "_"))
    if g:
        name = g.group(1).upper()
        if name in quants:
            return Match(quants[name], 0.97)
        base_map = {"Q4_K": "Q4_K_M", "Q5_K": "Q5_K_M", "Q3_K": "Q3_K_M", "Q6_K_L": "Q6_K", "Q8_K_XL": "Q8_0",
                    "Q4_K_XL": "Q4_K_M", "Q5_K_XL": "Q5_K_M", "Q3_K_XL": "Q3_K_M", "Q2_K_XL": "Q2_K",
                    "Q4_K_L": "Q4_K_M", "Q8": "Q8_0", "Q4": "Q4_K_M", "Q5": "Q5_K_M", "Q6": "Q6_K",
                    "Q3": "Q3_K_M", "Q2": "Q2_K", "IQ4_NL": "IQ4_XS", "IQ2_XS": "IQ2_XXS", "IQ3_XS": "IQ3_XXS",
                    "IQ3_S": "IQ3_XXS", "IQ3_M": "IQ3_XXS", "IQ2_M": "IQ2_XXS", "IQ2_S": "IQ2_XXS"}
        for k, v in base_map.items():
            if name.startswith(k):
                if v in quants:
                    return Match(quants[v], 0.75, [f"{raw} is not in the format table: sized as {v} "
                                                   f"({quants[v].bits_per_weight:g} bits per weight), its nearest published format."])
        for q in quants:
            if q.startswith(name.split("_")[0] + "_"):
                return Match(quants[q], 0.6, [f"{raw} sized as {q}, the nearest format in the table."])
    for k, v in _QUANT_ALIASES.items():
        if re.search(rf"(?<![\w]){re.escape(k)}(?![\w])", t):
            return Match(quants[v], 0.9)
    bits = re.search(r"\b(\d)\s*-?\s*(?:bit|bits|b)\b|\bint(\d)\b|\b(\d)bit\b|\bq(\d)\b", t)
    if bits:
        b = next(x for x in bits.groups() if x)
        if mlx_ctx:
            name = f"MLX {b}-bit g64"
        else:
            name = {"8": "Q8_0", "6": "Q6_K", "5": "Q5_K_M", "4": "Q4_K_M", "3": "Q3_K_M", "2": "Q2_K"}.get(b, "")
        if name in quants:
            why = "MLX's default group size 64" if mlx_ctx else "llama.cpp/Ollama's usual GGUF format"
            return Match(quants[name], 0.85, [f"'{raw}' taken as {name} ({quants[name].bits_per_weight:g} bits "
                                              f"per weight, {why})."])
    got = process.extract(t, list(quants), scorer=fuzz.WRatio, limit=4)
    raise NotFoundError(
        f"I don't know the weight format {raw[:60]!r}. Try one of: Q4_K_M, Q8_0, F16, 'MLX 4-bit'. "
        f"Closest: {', '.join(g for g, _, _ in got)}.",
        [g for g, _, _ in got],
    )
