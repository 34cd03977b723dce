"""The NPU named ("is it using the NPU?", "can the Neural Engine speed it up?"): whether the engines people run use it.

Facts (as of late 2025): llama.cpp (and so Ollama, LM Studio's GGUF engine) and MLX run on the CPU cores and the GPU
(Metal, CUDA, ROCm, Vulkan, SYCL), not on NPUs; AMD's Ryzen AI software (Lemonade server, OnnxRuntime GenAI) and
FastFlowLM run LLMs on the XDNA NPU; Intel's OpenVINO GenAI runs them on Core Ultra NPUs; Apple's Core ML can use the
Neural Engine for small models; Qualcomm's QNN/Genie SDK uses the Hexagon NPU. An NPU shares the same memory as the
CPU and GPU, so decode (bandwidth-bound) is no faster there; NPUs save power and can help prefill.
"""

from __future__ import annotations

from advisor.diagnose.context import Ctx
from advisor.understand.engine import classify_engine

__all__ = ["npu_answer"]


def npu_answer(c: Ctx) -> str | None:
    """"The NPU: …" for a question that names it, or None."""
    if not c.sit.symptoms.npu_asked or c.sit.hardware is None:
        return None
    hw = c.sit.hardware
    fam, name, vendor = (hw.family or ""), hw.name, (hw.vendor or "").upper()
    if hw.kind == "apple_soc":
        other = "Core ML can use the Neural Engine for small models"
    elif vendor == "AMD":
        other = "AMD's Ryzen AI software (Lemonade server) and FastFlowLM run models on the XDNA NPU"
    elif vendor == "INTEL":
        other = "Intel's OpenVINO GenAI runs models on the Core Ultra NPU"
    elif "snapdragon" in (name + fam).lower() or vendor == "QUALCOMM":
        other = "Qualcomm's QNN/Genie SDK runs models on the Hexagon NPU"
    else:
        return ("The NPU: this machine's figures are for its GPU and CPU; llama.cpp, Ollama, LM Studio and MLX do not "
                "run on NPUs.")
    on = "CPU cores" if c.pred is not None and classify_engine(c.pred.backend)[1] == "cpu" else "GPU"
    return ("The NPU: not used — llama.cpp, Ollama, LM Studio and MLX run on the GPU and CPU cores, not the NPU; "
            f"{other}. It reads the same memory, so decode (bandwidth-bound) would not be faster there: it saves "
            f"power, and can shorten the wait for the first word. The figures here are for the {on}.")
