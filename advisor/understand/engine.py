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

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from advisor.models import Hardware

__all__ = ["ENGINE_MENTIONS", "engine_mentions", "ACCELS", "API_NAMES", "ENGINE_NAMES", "LLAMA_SERVER_ENGINES", "accel_conflict", "check_backend", "classify_engine", "default_accel", "engine_accel", "engine_mismatch",
           "engine_of_format"]

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
    ("kobold", "koboldcpp"),
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
# Engines and accelerator APIs as people write them (the one table of display names).
ENGINE_NAMES: dict[str, str] = {
    "vllm": "vLLM", "sglang": "SGLang", "tensorrt-llm": "TensorRT-LLM", "mlx": "MLX", "mlx-lm": "MLX",
    "ollama": "Ollama", "lm-studio": "LM Studio", "lmstudio": "LM Studio", "llama.cpp": "llama.cpp",
    "ik_llama.cpp": "ik_llama.cpp", "koboldcpp": "KoboldCpp", "exllamav2": "ExLlamaV2",
    "text-generation-webui": "text-generation-webui", "transformers": "Transformers",
}
API_NAMES: dict[str, str] = {"cuda": "CUDA", "rocm": "ROCm", "metal": "Metal", "vulkan": "Vulkan", "sycl": "SYCL",
                             "cpu": "CPU", "opencl": "OpenCL"}
# Engines built on llama.cpp's server (llama-server's -np slots, -b prompt chunks, -ngl offload).
LLAMA_SERVER_ENGINES: tuple[str, ...] = ("llama.cpp", "ik_llama.cpp", "koboldcpp", "lm-studio")
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


# Apps that run llama.cpp's kernels under their own name: a backend written as one of them is known.
_LLAMA_CPP_APPS = ("llamafile", "jan", "gpt4all", "localai", "anythingllm", "msty", "open webui", "openwebui",
                   "mistral.rs", "mistralrs")


def check_backend(label: str | None) -> None:
    """Refuse a backend that names no engine and no accelerator API (``--backend toaster``), instead of
    predicting it silently as llama.cpp.

    Raises:
        InputError: the label names nothing known; the message lists what is.
    """
    if not label:
        return
    b = label.lower()
    if classify_engine(label) != ("other", "other") or any(a in b for a in _LLAMA_CPP_APPS):
        return
    from advisor.errors import InputError

    raise InputError(f"unknown engine {label!r}: name one of llama.cpp, llama-server, Ollama, LM Studio, "
                     "ik_llama.cpp, koboldcpp, vLLM, SGLang, TensorRT-LLM, MLX or exllamav2, optionally with its "
                     "API (llama.cpp-cuda, -rocm, -vulkan, -metal, -cpu)")


def default_accel(hw: Hardware) -> str:
    """The accelerator API an engine uses on this hardware when the label does not say (Metal on a Mac...)."""
    if hw.kind == "apple_soc":
        return "metal"
    if hw.kind == "cpu":
        return "cpu"
    v = hw.vendor.lower()
    if "nvidia" in v:
        return "cuda"
    if "amd" in v:
        return "vulkan" if hw.kind == "apu" else "rocm"
    if "intel" in v:
        return "vulkan"
    return "cpu"


_VENDOR_APIS = {"cuda": ("nvidia", "CUDA runs only on NVIDIA GPUs", "an RTX 4090"),
                "rocm": ("amd", "ROCm/HIP runs only on AMD GPUs", "an RX 7900 XTX"),
                "sycl": ("intel", "SYCL (oneAPI) here means an Intel GPU", "an Arc A770"),
                "metal": ("apple", "Metal runs only on Apple chips", "a Mac with an M2 Max")}
# (vendor word, why, an example machine to name) per vendor API


def accel_conflict(backend: str | None, hw: Hardware) -> tuple[str, str] | None:
    """Why a measurement's backend cannot have run on this hardware, and a machine it could have run on
    (None when it can, or the label names no vendor API).

    A vendor API names its vendor's chips: CUDA → NVIDIA (a GeForce card, a DGX Spark, a Jetson), ROCm/HIP →
    AMD, SYCL → Intel, Metal → Apple (a vendor's CPU counts: its iGPU ran it). Vulkan, OpenCL and the CPU run anywhere.

    >>> from advisor.models import Hardware
    >>> accel_conflict("CUDA", Hardware(id="m", name="Apple M2", kind="apple_soc", vendor="Apple", bandwidth_gbs=100))
    ('CUDA runs only on NVIDIA GPUs', 'an RTX 4090')
    >>> accel_conflict("Vulkan", Hardware(id="m", name="Apple M2", kind="apple_soc", vendor="Apple", bandwidth_gbs=100)) is None
    True
    """
    _, accel = classify_engine(backend)
    if accel not in _VENDOR_APIS:
        return None
    vendor, why, example = _VENDOR_APIS[accel]
    if vendor in (hw.vendor or "").lower():  # a CPU row of the vendor too: SYCL/ROCm on a Core Ultra's/Ryzen's iGPU
        return None
    return why, example


_PERF_ACCELS = ("metal", "cuda", "rocm", "vulkan", "sycl", "cpu")
# AMD integrated GPUs on ROCm's support list (gfx1151, ROCm 6.4.1+/7.x), which Ollama's ROCm build runs on.
_ROCM_APU_FAMILIES = ("AMD Strix Halo",)


def ollama_accel(hw: Hardware, accel: str) -> str:
    """The API Ollama runs on when its label does not name one: CUDA, ROCm (GPUs on ROCm's list) or Metal.

    Ollama's Vulkan backend is experimental and off unless ``OLLAMA_VULKAN=1`` (Ollama docs/gpu.mdx; its GPU
    discovery drops AMD GPUs ROCm does not support to the CPU), so where llama.cpp would use Vulkan (Intel
    iGPUs, AMD iGPUs off ROCm's list) Ollama runs on the CPU cores, which read the same system memory. A discrete
    card (Intel Arc) keeps its API: the prediction says it needs OLLAMA_VULKAN=1 (or Intel's IPEX-LLM build of
    Ollama). A label that says Vulkan keeps it.
    """
    if accel == "vulkan" and hw.kind == "apu" and hw.family in _ROCM_APU_FAMILIES:
        return "rocm"
    if accel in ("vulkan", "sycl") and hw.kind == "apu":
        return "cpu"  # an iGPU shares the system memory: the CPU cores read the same RAM
    return accel  # a discrete card (Intel Arc): predicted on the card, with the setting it needs said


def ollama_gpu_fallback(backend: str | None, hw: Hardware) -> str | None:
    """Where Ollama puts a model on a machine whose GPU only its opt-in Vulkan backend drives.

    ``"cpu"``: an iGPU left to the CPU cores (:func:`ollama_accel`); ``"opt_in"``: predicted on a discrete card
    (Intel Arc) that needs ``OLLAMA_VULKAN=1`` or IPEX-LLM's build; None: not Ollama, a label that names
    Vulkan/SYCL, a CPU-only machine, or a GPU Ollama drives by default (CUDA, ROCm's list, Metal).
    The one test of this state: the prediction's note and the diagnosis' OLLAMA_VULKAN fix both read it.
    """
    named = classify_engine(backend)
    if named[0] != "ollama" or named[1] in ("vulkan", "sycl") or hw.kind == "cpu" \
            or default_accel(hw) not in ("vulkan", "sycl"):
        return None
    from advisor.understand.symptoms import parse_ngl

    if parse_ngl(backend) == 0:
        return None  # the person put the layers on the CPU (num_gpu 0): not Ollama's default
    accel = engine_accel(backend, hw)[1]
    if accel == "cpu":
        return "cpu"
    return "opt_in" if accel in ("vulkan", "sycl") else None


def engine_accel(backend: str | None, hw: Hardware) -> tuple[str, str, str]:
    """(engine family the performance model calibrates, accelerator API, label) for a backend as written.

    The performance model tells apart MLX, vLLM and the llama.cpp family (Ollama, LM Studio and the other
    GGUF engines run llama.cpp kernels); the accelerator comes from the label, else from the hardware.

    >>> from advisor.models import Hardware
    >>> engine_accel("ollama", Hardware(id="x", name="x", kind="discrete_gpu", vendor="NVIDIA", bandwidth_gbs=1))
    ('llama.cpp', 'cuda', 'ollama (llama.cpp-cuda)')
    """
    engine, accel = classify_engine(backend)
    b = (backend or "").lower()
    if engine == "ik_llama.cpp":  # the fork's CPU and CUDA kernels differ from mainline: its own term
        acc = accel if accel in _PERF_ACCELS else default_accel(hw)
        return "ik_llama.cpp", acc, f"ik_llama.cpp-{acc}"
    if engine == "mlx" or "mlx" in b:  # "LM Studio (MLX)" runs MLX kernels
        return "mlx", "metal", "mlx"
    if engine in ("vllm", "sglang", "tensorrt-llm"):
        if hw.kind == "apple_soc":  # no Metal backend of their own: vllm-metal runs MLX kernels (engine_mismatch)
            return "mlx", "metal", f"{engine} (MLX kernels)"
        if hw.kind == "cpu":
            return engine, "cpu", f"{engine}-cpu"
        return engine, "cuda" if hw.vendor.lower() == "nvidia" else "rocm", engine
    if accel in _VENDOR_APIS and accel_conflict(backend, hw):  # "llama.cpp-cuda" on a Mac: the API it has
        accel = default_accel(hw)
    if accel not in _PERF_ACCELS:  # the performance model is calibrated per these APIs; others run as the default
        from advisor.understand.symptoms import parse_ngl

        accel = "cpu" if parse_ngl(b) == 0 else default_accel(hw)
        if engine == "ollama":
            accel = ollama_accel(hw, accel)
    label = f"llama.cpp-{accel}"
    if engine == "ollama":
        label = f"ollama ({label})"
    elif engine == "lm-studio":
        label = f"LM Studio ({label})"
    elif engine == "exllamav2":  # no measured ExLlamaV2 rows: its CUDA kernels are modelled as llama.cpp's
        label = f"ExLlamaV2 (modelled as {label})"
    return "llama.cpp", accel, label


# Importer formats whose name does not say the engine that printed them.
_FORMAT_ENGINES = {"batched-bench": "llama.cpp", "llama-print-timings": "llama.cpp", "llama-perf": "llama.cpp"}


def engine_of_format(fmt: str | None) -> str | None:
    """The engine that prints an importer format (``llama-bench-md`` → ``llama.cpp``), None when unknown.

    A pasted llama-bench table says only ``CUDA`` in its backend column: this hint makes it llama.cpp's.
    """
    if not fmt:
        return None
    engine = _FORMAT_ENGINES.get(fmt) or classify_engine(fmt)[0]
    return None if engine == "other" else engine


def engine_mismatch(backend: str | None, hw: Hardware) -> str | None:
    """Why a stated engine or API does not run as written on this hardware, and what the prediction assumes
    instead (None when it runs as written). One sentence, for the prediction's assumptions.

    MLX is built for Apple silicon (its CUDA and CPU builds for Linux are young and not in the measurements);
    vLLM and SGLang have no Metal backend (on a Mac: the vllm-metal plugin's MLX kernels, else the CPU);
    TensorRT-LLM is NVIDIA's; a vendor API names its vendor's chips (:func:`accel_conflict`).
    """
    engine, accel = classify_engine(backend)
    name = hw.name
    if engine == "mlx" and hw.kind != "apple_soc":
        return (f"MLX is built for Apple silicon: on the {name} it would run through its young CUDA or CPU build, "
                "which no measurement here covers, so these figures are MLX's on Apple chips scaled to this "
                "hardware; llama.cpp or vLLM are the usual engines here.")
    if engine in ("vllm", "sglang", "tensorrt-llm") and hw.kind == "apple_soc":
        label = ENGINE_NAMES[engine]
        if engine == "tensorrt-llm":
            return f"TensorRT-LLM runs only on NVIDIA GPUs: on the {name} the figures are for MLX, the Mac's own engine."
        return (f"{label} has no Metal backend of its own: on a Mac it runs through the vllm-metal plugin's MLX "
                "kernels (without it, on the CPU cores only), so the figures are for MLX kernels.")
    if engine == "exllamav2" and (hw.kind not in ("discrete_gpu", "datacenter_gpu")
                                  or (hw.vendor or "").upper() not in ("NVIDIA", "AMD")):
        return (f"ExLlamaV2 runs only on NVIDIA (CUDA) and AMD (ROCm) graphics cards: on the {name} the figures are for "
                "llama.cpp, which runs there.")
    if engine == "tensorrt-llm" and "nvidia" not in (hw.vendor or "").lower():
        return f"TensorRT-LLM runs only on NVIDIA GPUs: the figures for the {name} are for vLLM's kernels instead."
    if engine not in ("vllm", "sglang", "tensorrt-llm", "mlx") and accel in _VENDOR_APIS:
        c = accel_conflict(backend, hw)
        if c is not None:
            api = {**API_NAMES, "cpu": "the CPU"}.get(default_accel(hw), "its own API")
            return f"{c[0]}: on the {name} the figures are for {api}, the API it has."
    return None


# Engines as people write them in a message, in the one place they are listed: (pattern, name as said back).
# Each name is one :func:`classify_engine` reads (``"TensorRT-LLM"`` → ``tensorrt-llm``).
ENGINE_MENTIONS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\bollama\b|\bOLLAMA_[A-Z_]+", re.I), "ollama"),  # its environment variables name it too
    (re.compile(r"\blm\s*studio\b", re.I), "LM Studio"),
    (re.compile(r"\bik[_-]llama(?:[.\s_-]?cpp)?\b", re.I), "ik_llama.cpp"),
    (re.compile(r"(?<![\w-])llama[.\s_-]?cpp\b|\bllama-(?:server|bench|cli|batched-bench|sweep-bench)\b", re.I), "llama.cpp"),
    (re.compile(r"\bmlx(?:[\s_-]lm|[\s_-]community)?\b", re.I), "mlx"),
    (re.compile(r"\bvllm\b", re.I), "vllm"),
    (re.compile(r"\bsglang\b", re.I), "sglang"),
    (re.compile(r"\bkoboldcpp\b", re.I), "koboldcpp"),
    # Intel's IPEX-LLM runs models through its llama.cpp / Ollama builds on SYCL (read with its API below)
    (re.compile(r"\bipex[\s_-]?llm\b", re.I), "llama.cpp"),
    (re.compile(r"\bexllama(?:v[23])?\b|\bexl[23]\b|\btabby(?:api)?\b", re.I), "exllamav2"),
    (re.compile(r"\btensorrt[\s_-]?llm\b|\btrt[\s_-]?llm\b", re.I), "TensorRT-LLM"),
    (re.compile(r"\bllamafile\b", re.I), "llamafile"),
    (re.compile(r"\bgpt4all\b", re.I), "gpt4all"),
)


def engine_mentions(text: str | None) -> list[tuple[re.Match[str], str]]:
    """Each engine named in ``text``: (its match, its name in :data:`ENGINE_MENTIONS`), in text order.

    >>> [(m.group(0), n) for m, n in engine_mentions("ollama or vllm? ik_llama.cpp is faster")]
    [('ollama', 'ollama'), ('vllm', 'vllm'), ('ik_llama.cpp', 'ik_llama.cpp')]
    >>> [n for _, n in engine_mentions("./models/vllm-llama-3-8b.gguf in llama-server, from github.com/ollama/ollama")]
    ['llama.cpp']
    """
    text = text or ""
    hits = [(m, name) for pat, name in ENGINE_MENTIONS for m in pat.finditer(text) if not _in_path(text, m)]
    return sorted(hits, key=lambda h: h[0].start())


_FILE = re.compile(r"\.(?:gguf|safetensors|bin|pt|onnx)$", re.I)


def _in_path(text: str, m: re.Match[str]) -> bool:
    """A name inside a path, URL or file name ("./models/vllm-llama-3-8b.gguf", "github.com/sgl-project/sglang") is
    no engine in use; one that starts its token stays ("mlx-community/…", "ollama/ollama")."""
    if m.start() > 0 and text[m.start() - 1] in "/\\":
        return True
    start = max(text.rfind(" ", 0, m.start()), text.rfind("\n", 0, m.start())) + 1
    end = min((i for i in (text.find(" ", m.end()), text.find("\n", m.end())) if i >= 0), default=len(text))
    token = text[start:end].rstrip(".,;:!?)")
    return bool(_FILE.search(token)) and token.lower() != m.group(0).lower()
