"""A quantized KV cache asked about ("would an fp8 kv cache help?", "should I quantize the kv cache?"): one sentence
with the engine's setting and the predicted effect, or why it gains little here (:attr:`Symptoms.kv_quant_asked`).

The effect is the ``kv_cache_quantization`` remedy's own (:func:`advisor.diagnose.remedies._kv_quant`): half the
cache's memory at 8 bits, and at long context a share of the bytes decode reads per token.
"""

from __future__ import annotations

from advisor.diagnose.context import Ctx
from advisor.diagnose.engines import kernel_family
from advisor.diagnose.remedies import build

__all__ = ["kv_answer", "kv_setting"]

# How each engine keeps its KV cache in 8 bits (llama.cpp: --cache-type-k/-v, the V cache needs flash attention;
# Ollama: OLLAMA_KV_CACHE_TYPE with OLLAMA_FLASH_ATTENTION=1; vLLM/SGLang: --kv-cache-dtype; mlx_lm: --kv-bits).
_SETTINGS = {
    "vllm": "--kv-cache-dtype fp8", "sglang": "--kv-cache-dtype fp8_e5m2", "tensorrt-llm": "an FP8 KV cache (kv_cache_dtype fp8)",
    "ollama": "OLLAMA_KV_CACHE_TYPE=q8_0 with OLLAMA_FLASH_ATTENTION=1",
    "lm-studio": "K and V cache quantization (q8_0) in the model's load settings, with flash attention on",
    "mlx": "--kv-bits 8 (mlx_lm)", "mlx-lm": "--kv-bits 8 (mlx_lm)",
}
_LLAMA = "-ctk q8_0 -ctv q8_0 with flash attention (-fa on)"


def kv_setting(engine: str | None) -> str:
    """The engine's own way to keep the KV cache in 8 bits (llama.cpp's flags when the engine is not known)."""
    return _SETTINGS.get(engine or "", _LLAMA)


def kv_answer(c: Ctx) -> str | None:
    """"8-bit KV cache: …" answering the question, or None when none was asked."""
    if not c.sit.symptoms.kv_quant_asked or c.pred is None:
        return None
    engine = c.sit.engine or ""
    setting = kv_setting(engine)
    fp8 = ("; llama.cpp has no fp8 cache type — q8_0 is its 8-bit one"
           if str(c.sit.symptoms.kv_quant_asked).startswith("fp8") and kernel_family(engine) == "llama.cpp" else "")
    f = build(c, "kv_cache_quantization")
    p, w = c.pred, c.sit.workload
    if f is None:
        return (f"8-bit KV cache ({setting}{fp8}): little to gain here — at {w.depth + w.prompt_tokens + w.gen_tokens:,} "
                f"tokens the cache is only {p.memory.kv_cache_gb:.1f} GB of the {p.memory.required_gb:.1f} GB needed; it "
                "pays at long context or with many users.")
    return f"8-bit KV cache ({setting}{fp8}): {f.predicted_effect}{_allocated_after(c)}."


def _allocated_after(c: Ctx) -> str:
    """"; with it the 32,768-token context needs 13.0 GB of the 16.6 usable (16.2 now)" when a context window is set
    (num_ctx / -c reserve the cache up front), else ""."""
    from advisor import roofline
    from advisor.diagnose.weights import _allocated_need_gb

    need, p, model = _allocated_need_gb(c), c.pred, c.sit.model
    cw = c.sit.workload.context_window or c.sit.facts.context_window
    if not need or p is None or model is None or not cw:
        return ""
    kv_now = roofline.kv_bytes(model, cw, c.kv_bpe) * max(1, c.sit.workload.users) / roofline.GB
    after = need - kv_now * (1 - 1.0 / c.kv_bpe)  # 8 bits a value: half of F16's, as the remedy sizes it
    fits = "fits" if after <= p.memory.usable_gb else "still does not fit"
    return (f"; with it the {cw:,}-token context needs {after:.1f} GB of the {p.memory.usable_gb:.1f} GB usable "
            f"({need:.1f} GB now): {fits}")
