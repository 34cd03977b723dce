"""Weight-format look-up: GGUF, MLX, GPTQ/AWQ, compressed-tensors, EXL2/3, NVFP4/MXFP4 by the names people write."""

from __future__ import annotations

import re

from rapidfuzz import fuzz, process

from advisor.errors import NotFoundError
from advisor.models import QuantFormat
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
    "nvfp4": "NVFP4", "mxfp8": "MXFP8", "nf4": "NF4 (bitsandbytes)", "bnb 4bit": "NF4 (bitsandbytes)",
    "bnb-4bit": "NF4 (bitsandbytes)", "bitsandbytes 4bit": "NF4 (bitsandbytes)", "fp8 dynamic": "FP8 (E4M3)",
    "fp8_dynamic": "FP8 (E4M3)", "w8a8 fp8": "FP8 (E4M3)", "w8a8-fp8": "FP8 (E4M3)", "int8 w8a8": "W8A8 (INT8)",
}
_GGUF = re.compile(r"\b((?:i|t)?q\d(?:_[a-z0-9]+)*)\b")
_WA = re.compile(r"\bw(4|8)a(16|8)\b(?:\D{0,12}?\bg(?:roup)?[\s_-]?(?:size[\s_=-]?)?(\d{2,3})\b)?")
_BARE_BPW = re.compile(r"^\s*(\d(?:\.\d+)?)\s*bpw\s*$")
_EXL = re.compile(r"\bexl([23])\b(?:\D{0,12}?(\d(?:\.\d+)?)\s*(?:bpw|bits?|b)\b)?|\b(\d(?:\.\d+)?)\s*bpw\b\D{0,12}exl([23])")


def _special(quants: dict[str, QuantFormat], raw: str, t: str) -> Match | None:
    """Formats named by a pattern: W4A16 at a group size, W8A8, EXL2/EXL3 at a stated bpw."""
    wa = _WA.search(t)
    if wa:
        w, a, g = wa.group(1), wa.group(2), wa.group(3)
        if w == "4" and a == "16":
            name = f"W4A16 g{g or 128}"
            if name in quants:
                return Match(quants[name], 0.95, [] if g else [f"'{raw}' taken as {name}: group size 128 is "
                                                                "the compressed-tensors W4A16 preset."])
            bpw = 4 + 16 / int(g or 128)
            return Match(QuantFormat(name=name, ecosystem="compressed-tensors", bits_per_weight=round(bpw, 4),
                                     notes=f"COMPUTED from the format definition: 4-bit weights + one FP16 scale per "
                                           f"group of {g} = 4 + 16/{g} = {bpw:.4g} bpw",
                                     source_url=quants["W4A16 g128"].source_url if "W4A16 g128" in quants else ""),
                         0.9)
        name = "W8A16" if a == "16" else ("FP8 (E4M3)" if "fp8" in t else "W8A8 (INT8)")
        if name in quants:
            return Match(quants[name], 0.95)
    if bare := _BARE_BPW.match(t):  # "4.0bpw" alone: how EXL2 files are named (turboderp's and most uploads)
        got = _special(quants, raw, f"exl2 {bare.group(1)}bpw")
        if got is not None:
            return Match(got.value, 0.8, [f"'{raw}' taken as an EXL2 file at {bare.group(1)} bits per weight (EXL2 "
                                          "uploads are named by their bpw); say EXL3 if it is one."])
    ex = _EXL.search(t)
    if ex:
        ver = ex.group(1) or ex.group(4)
        bpw_text = ex.group(2) or ex.group(3)
        if not bpw_text:
            raise NotFoundError(
                f"EXL{ver} files come at any bits per weight; which one is it (the model name usually says, "
                f"e.g. '4.65bpw')?", [f"EXL{ver} 4.0 bpw", f"EXL{ver} 5.0 bpw", f"EXL{ver} 6.0 bpw"])
        b = float(bpw_text)
        if not 1.0 <= b <= 16.0:
            raise NotFoundError(f"{b:g} bits per weight is not a valid EXL{ver} size.", [f"EXL{ver} 4.0 bpw"])
        return Match(QuantFormat(name=f"EXL{ver} {b:g} bpw", ecosystem=f"exllamav{ver}", bits_per_weight=b,
                                 notes=f"EXL{ver} stores the average bits per weight chosen at conversion; "
                                       f"the name states {b:g}",
                                 source_url=f"https://github.com/turboderp-org/exllamav{ver}"), 0.95)
    return None


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
    if t in _QUANT_ALIASES and _QUANT_ALIASES[t] in quants:
        return Match(quants[_QUANT_ALIASES[t]], 1.0)
    if "gptq" in t and re.search(r"int8|8[\s-]?bit|\bw8", t):
        return Match(QuantFormat(
            name="GPTQ 8-bit g128", ecosystem="gptq", bits_per_weight=8.156, source_url="computed (formula; see notes)",
            notes="COMPUTED: 8-bit codes + FP16 scale + 4-bit packed zero-point per group of 128 = 8 + 20/128 bpw"), 0.9)
    sp = _special(quants, raw, t)
    if sp:
        return sp
    g = _GGUF.search(re.sub(r"\bud[-_]", "", t).replace("-", " ").replace("_", "_"))
    if g:
        name = g.group(1).upper()
        name = {"Q3_K": "Q3_K_M", "Q4_K": "Q4_K_M", "Q5_K": "Q5_K_M"}.get(name, name)  # llama-quantize aliases
        if name in quants:
            return Match(quants[name], 0.97)
        base_map = {"Q4_0_": "Q4_0", "Q4_K": "Q4_K_M", "Q5_K": "Q5_K_M", "Q3_K": "Q3_K_M", "Q6_K_L": "Q6_K", "Q8_K_XL": "Q8_0",
                    "Q4_K_XL": "Q4_K_M", "Q5_K_XL": "Q5_K_M", "Q3_K_XL": "Q3_K_M", "Q2_K_XL": "Q2_K",
                    "Q4_K_L": "Q4_K_M", "Q8": "Q8_0", "Q4": "Q4_K_M", "Q5": "Q5_K_M", "Q6": "Q6_K",
                    "Q3": "Q3_K_M", "Q2": "Q2_K", "IQ4": "IQ4_XS", "IQ3": "IQ3_M", "IQ2": "IQ2_M", "IQ1": "IQ1_M",
                    "Q2_K_S": "Q2_K", "Q2_K_L": "Q2_K"}
        for k, v in base_map.items():
            if name.startswith(k):
                if v in quants:
                    return Match(quants[v], 0.75, [f"{raw} is not in the format table: sized as {v} "
                                                   f"({quants[v].bits_per_weight:g} bits per weight), its nearest published format."])
        for q in quants:
            if q.startswith(name.split("_")[0] + "_"):
                return Match(quants[q], 0.6, [f"{raw} sized as {q}, the nearest format in the table."])
    for k, v in _QUANT_ALIASES.items():
        if v in quants and re.search(rf"(?<![\w]){re.escape(k)}(?![\w])", t):
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
