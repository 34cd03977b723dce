"""Which weight formats an engine loads, and the build of about the same size it loads instead.

A format is one engine family's (GGUF for the llama.cpp family, MLX's own for MLX, EXL2/EXL3 for ExLlama, AWQ/GPTQ/FP8
for the serving engines): a statement that pairs a format with an engine that cannot load it ("4.0bpw exl2 in
llama.cpp") is read as that engine with its same-size build (:func:`format_conflict`), said as an assumption.
"""

from __future__ import annotations

from advisor.errors import NotFoundError
from advisor.models import QuantFormat
from advisor.understand.engine import ENGINE_NAMES, LLAMA_SERVER_ENGINES
from knowledge import catalog
from knowledge.store import Store

__all__ = ["NOT_AS_IT_IS", "SERVER_ENGINES", "equivalent_quant", "format_conflict", "not_loadable"]

GGUF_ENGINES = (*LLAMA_SERVER_ENGINES, "ollama")
SERVER_ENGINES = ("vllm", "sglang", "tensorrt-llm")
# GPUs whose tensor cores multiply FP8 (vLLM's W8A8 FP8 kernels): NVIDIA Ada, Hopper and Blackwell, AMD CDNA3 (MI300)
# (NVIDIA Ada/Hopper/Blackwell architecture whitepapers; AMD CDNA3 whitepaper). Older GPUs are served a 4-bit build.
FP8_FAMILIES = ("Ada", "Hopper", "Blackwell", "CDNA3", "CDNA 3")
SERVING_BUILDS = ("FP8 (E4M3)", "AWQ 4-bit g128")  # what a serving engine loads when 16-bit weights do not fit


def serving_builds(family: str | None) -> tuple[str, ...]:
    """The smaller builds a serving engine runs on a GPU of ``family`` when the 16-bit checkpoint does not fit, best
    first: FP8 where the tensor cores multiply FP8 (:data:`FP8_FAMILIES`), then AWQ 4-bit."""
    fp8 = any(f in (family or "") for f in FP8_FAMILIES)
    return tuple(b for b in SERVING_BUILDS if fp8 or not b.startswith("FP8"))
# The format families each engine loads (ecosystem column of the quant table; "gguf" float formats too).
_LOADS: dict[str, tuple[str, ...]] = {
    **{e: ("gguf",) for e in GGUF_ENGINES},
    "mlx": ("mlx", "gguf-float"),
    "exllamav2": ("exl2",),
    **{e: ("awq", "gptq", "vllm", "gguf-float", "gguf") for e in SERVER_ENGINES},  # vLLM loads GGUF (experimental)
}


def equivalent_quant(store: Store, quant: QuantFormat, engine: str) -> QuantFormat | None:
    """The build of about the same size that ``engine`` loads: MLX's own 3/4/6/8-bit (group 64) under MLX, a GGUF
    K-quant (Q3_K_M … Q8_0, F16) under the llama.cpp family, AWQ 4-bit or FP8 under vLLM/SGLang/TensorRT-LLM, an
    EXL2 file of the same bits under ExLlamaV2; the format itself when the engine loads it already. None when the
    quant table has no such build.

    >>> from knowledge.store import Store
    >>> s = Store(":memory:")
    >>> q = catalog.resolve_quant(s, "Q4_K_M").value
    >>> equivalent_quant(s, q, "mlx").name, equivalent_quant(s, q, "vllm").name, equivalent_quant(s, q, "ollama").name
    ('MLX 4-bit g64', 'AWQ 4-bit g128', 'Q4_K_M')
    """
    b = quant.bits_per_weight
    eco = (quant.ecosystem or "").lower()
    if engine == "mlx":
        name = "BF16" if b > 9 else "MLX " + next(f"{x}-bit g64" for x in (3, 4, 6, 8) if b <= x + 1.1 or x == 8)
        if eco == "mlx":
            return quant
    elif engine in GGUF_ENGINES:
        if eco == "gguf":
            return quant
        name = next(n for top, n in ((3.7, "Q3_K_M"), (4.7, "Q4_K_M"), (5.3, "Q5_K_M"), (6.2, "Q6_K"), (9.1, "Q8_0"),
                                     (99.0, "F16")) if b <= top)
    elif engine in SERVER_ENGINES:
        if eco in ("awq", "gptq", "vllm") or quant.name in ("BF16", "F16"):
            return quant
        name = "AWQ 4-bit g128" if b <= 5.5 else "FP8 (E4M3)" if b <= 9.1 else "BF16"
    elif engine == "exllamav2":
        if eco.startswith("exl"):
            return quant
        name = f"EXL2 {min(8.0, max(2.5, round(b * 2) / 2)):g} bpw"
    else:
        return None
    try:
        return catalog.resolve_quant(store, name, backend=engine).value
    except NotFoundError:
        return None


def _family(quant: QuantFormat) -> str:
    eco = (quant.ecosystem or "").lower()
    if quant.name.upper() in ("F16", "BF16", "F32", "FP16", "FP32"):
        return "gguf-float"
    if eco.startswith("exl"):
        return "exl3" if "3" in quant.name.split()[0] else "exl2"
    return eco


# How a format the engine cannot load is said, in the assumptions and the notes (one phrase, read back by the headline).
NOT_AS_IT_IS = "Not as it is: "


def not_loadable(assumptions: list[str]) -> str | None:
    """The clause "Ollama cannot load AWQ 4-bit g128 files" of a :func:`format_conflict` sentence among
    ``assumptions`` (as :data:`NOT_AS_IT_IS` starts it), else None."""
    said = next((a for a in assumptions if a.startswith(NOT_AS_IT_IS)), None)
    return said.removeprefix(NOT_AS_IT_IS).split(" (")[0].split(":")[0] if said else None


def format_conflict(store: Store, quant: QuantFormat, engine: str | None) -> tuple[QuantFormat, str] | None:
    """(the build ``engine`` loads instead, the sentence that says so) when ``engine`` cannot load ``quant``
    ("EXL2 4 bpw" in llama.cpp → IQ4_XS-sized GGUF Q4_K_M…); None when it can, or either is unknown.

    >>> s = Store(":memory:")
    >>> q, why = format_conflict(s, catalog.resolve_quant(s, "EXL2 4 bpw").value, "llama.cpp")
    >>> q.name, why.split(":")[0]
    ('Q4_K_M', 'llama.cpp cannot load EXL2 4 bpw files (ExLlamaV2’s format)')
    """
    if not engine or engine not in _LOADS:
        return None
    fam = _family(quant)
    if not fam or fam in _LOADS[engine] or (fam == "gguf-float" and engine in GGUF_ENGINES):
        return None
    if fam == "exl3" and engine == "exllamav2":
        return None  # ExLlamaV3's format in the ExLlama line: same kernels family, kept as stated
    other = equivalent_quant(store, quant, engine)
    if other is None or other.name == quant.name:
        return None
    owner = {"exl2": "ExLlamaV2’s format", "exl3": "ExLlamaV3’s format", "mlx": "MLX’s own format",
             "awq": "a format for vLLM/SGLang/Transformers", "gptq": "a format for vLLM/SGLang/Transformers",
             "gguf": "llama.cpp’s format", "vllm": "a format for the serving engines"}.get(fam, "another engine’s format")
    name = ENGINE_NAMES.get(engine, engine)
    return other, (f"{name} cannot load {quant.name} files ({owner}): sized as the {other.name} build of the same "
                   f"model ({other.bits_per_weight:g} bits per weight), the one {name} loads at about that size.")
