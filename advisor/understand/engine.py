"""The one engine classifier: an engine/backend label as written → (engine, accelerator API).

Every place that needs to know which engine produced a number (stored results, calibration groups,
pasted output, chat text) calls :func:`classify_engine`; importers pass the engine their format
implies as ``hint``.

>>> classify_engine("llama.cpp-metal")
('llama.cpp', 'metal')
>>> classify_engine("CUDA", hint="llama.cpp")
('llama.cpp', 'cuda')
>>> classify_engine("mlx (rapid-mlx 0.7.9)")
('mlx', 'metal')
"""

from __future__ import annotations

__all__ = ["ACCELS", "classify_engine"]

# (substring, engine) in priority order; the first that occurs in the lower-cased label wins.
_ENGINE_KEYS: tuple[tuple[str, str], ...] = (
    ("ik_llama", "ik_llama.cpp"),
    ("llama.cpp", "llama.cpp"),
    ("llama-bench", "llama.cpp"),
    ("llama-server", "llama.cpp"),
    ("llama-cli", "llama.cpp"),
    ("llamacpp", "llama.cpp"),
    ("llama_cpp", "llama.cpp"),
    ("ollama", "ollama"),
    ("lm studio", "lm-studio"),
    ("lmstudio", "lm-studio"),
    ("lm-studio", "lm-studio"),
    ("koboldcpp", "koboldcpp"),
    ("text-generation-webui", "text-generation-webui"),
    ("oobabooga", "text-generation-webui"),
    ("exllama", "exllamav2"),
    ("tabbyapi", "exllamav2"),
    ("sglang", "sglang"),
    ("tensorrt", "tensorrt-llm"),
    ("trt-llm", "tensorrt-llm"),
    ("trtllm", "tensorrt-llm"),
    ("vllm", "vllm"),
    ("mlx", "mlx"),
    ("transformers", "transformers"),
    ("ds4", "other"),
)
ACCELS: tuple[tuple[str, str], ...] = (
    ("metal", "metal"),
    ("mlx", "metal"),
    ("cuda", "cuda"),
    ("cublas", "cuda"),
    ("rocm", "rocm"),
    ("hip", "rocm"),
    ("vulkan", "vulkan"),
    ("sycl", "sycl"),
    ("clblast", "opencl"),
    ("opencl", "opencl"),
    ("cpu", "cpu"),
    ("blas", "cpu"),
)


def classify_engine(label: str | None, *, hint: str | None = None) -> tuple[str, str]:
    """Engine and accelerator API from a backend label.

    Args:
        label: the backend as written or as a tool printed it (``"llama.cpp-rocm (rocm6.4.4)"``, ``"CUDA"``).
        hint: the engine the source implies when the label does not name one (an importer's format).

    Returns:
        (engine, accel): engine is one of :data:`advisor.understand.situation.ENGINES` (``"other"`` when
        unknown); accel one of metal, cuda, rocm, vulkan, sycl, opencl, cpu or ``"other"``.
    """
    b = (label or "").lower()
    engine = next((e for key, e in _ENGINE_KEYS if key in b), None)
    if engine == "vllm" and "mlx" in b:
        engine = "mlx"  # vllm-mlx runs MLX kernels
    if engine is None:
        engine = hint or "other"
    accel = next((a for key, a in ACCELS if key in b), "other")
    if accel == "other" and engine == "mlx":
        accel = "metal"
    return engine, accel
