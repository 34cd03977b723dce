"""Another GPU API for the same llama.cpp-family engine on the same machine: the answer to "Vulkan or ROCm?",
"would the CUDA build be faster than Vulkan?", "SYCL or Vulkan on my Arc?" (:attr:`Symptoms.api_asked`).

Both sides come from the same prediction code (:func:`advisor.diagnose.remedies.what_if`) with the engine's label
carrying the other API; the fitted model tells the APIs apart in prefill (its Vulkan/SYCL factor against the vendor's
own API, :func:`advisor.calibration._terms._fit_api_factor`), not in decode. Where the store holds runs of one machine
measured both ways (:func:`knowledge.queries.api_pairs`), their median ratio is quoted beside the prediction.
"""

from __future__ import annotations

from advisor.diagnose.context import Ctx
from advisor.diagnose.remedies import what_if
from advisor.errors import AdvisorError
from advisor.understand.engine import API_NAMES, ENGINE_NAMES, engine_accel
from knowledge.catalog import get_hardware
from knowledge.queries import api_pairs

__all__ = ["api_answer"]

# Engines whose build picks the GPU API (llama.cpp and the apps that run its kernels).
_LLAMA_FAMILY = ("llama.cpp", "ollama", "lm-studio", "koboldcpp", "ik_llama.cpp")
SAME = 1.10  # within ±10 % the two are called about the same (as diagnose.engines.WORTH)


def _cannot_run(c: Ctx, api: str) -> str | None:
    """Why ``api`` does not run on this machine's GPU, or None when it does."""
    hw = c.sit.hardware
    if hw is None:
        return None
    vendor = (hw.vendor or "").upper()
    if hw.kind == "cpu":
        return f"the {hw.name} has no GPU for it to run on; the CPU build is the one that runs here"
    if api == "cuda" and vendor != "NVIDIA":
        return "CUDA runs only on NVIDIA GPUs"
    if api == "rocm" and (vendor != "AMD" or hw.kind == "apple_soc"):
        return "ROCm (HIP) runs only on AMD GPUs"
    if api == "metal" and hw.kind != "apple_soc":
        return "Metal is Apple's API and runs only on Macs"
    if api == "sycl" and vendor != "INTEL":
        return "llama.cpp's SYCL build targets Intel GPUs (Arc, Core Ultra, Data Center GPU Max)"
    if api in ("vulkan", "opencl") and hw.kind == "apple_soc":
        return f"on a Mac llama.cpp runs on Metal; {API_NAMES[api]} would go through a translation layer and be slower"
    if api == "opencl":
        return "llama.cpp's OpenCL backend targets Adreno phone GPUs; on this GPU Vulkan is the portable choice"
    return None


def _measured(c: Ctx, new: str, now: str) -> tuple[str, float | None, float | None]:
    """The store's paired runs of one machine with both APIs: (a sentence or "", decode ratio and prefill ratio
    new/now when the pairs are this machine's own, else None)."""
    m = api_pairs(c.store, new, now)
    if not m["pairs"]:
        return "", None, None
    parts = [f"{phase} {m[key]:.2f}×" for phase, key in (("decode", "decode"), ("prompt reading", "prefill")) if m[key]]
    hw = c.sit.hardware
    own = hw is not None and m["machines"] == [hw.id]
    where = "this machine" if own else "on the " + ", ".join(_name(c, h) for h in m["machines"][:3]) + (
        "" if len(m["machines"]) <= 3 else ", …")
    said = (f" Measured both ways ({m['pairs']} paired runs, {where}): {API_NAMES[new]} vs {API_NAMES[now]} "
            + ", ".join(parts) + ".")
    return said, (m["decode"] if own else None), (m["prefill"] if own else None)


def _name(c: Ctx, hw_id: str) -> str:
    try:
        return get_hardware(c.store, hw_id).name
    except AdvisorError:
        return hw_id


def api_answer(c: Ctx) -> str | None:
    """One sentence that answers the GPU-API question, with both predictions; None when none was asked."""
    api, hw, p = c.sit.symptoms.api_asked, c.sit.hardware, c.pred
    if api is None or hw is None or p is None:
        return None
    engine = c.sit.engine or "llama.cpp"
    family, now, _ = engine_accel(c.sit.engine_text or engine, hw)
    if api == now:
        return None
    new_name, now_name = API_NAMES.get(api, api), API_NAMES.get(now, now)
    if engine not in _LLAMA_FAMILY:
        return (f"{new_name} instead: {ENGINE_NAMES.get(engine, engine)} picks its GPU API itself "
                f"({now_name} here); the choice of API is llama.cpp's (and Ollama's, LM Studio's).")
    if (why := _cannot_run(c, api)) is not None:
        return f"{new_name} instead: not here — {why}."
    label = f"{ENGINE_NAMES.get(engine, engine)} ({new_name})"
    p2 = what_if(c, backend=label)
    if p2 is None or not p2.decode_tps or not p.decode_tps:
        return None
    said, md, mp = _measured(c, api, now)
    rd = md or p2.decode_tps / p.decode_tps  # this machine's own paired runs decide where the store has them
    rp = mp or (p2.prefill_tps / p.prefill_tps if p.prefill_tps and p2.prefill_tps else 1.0)
    pre = (f", prompt reading ≈ {p.prefill_tps:,.0f} → {p.prefill_tps * rp:,.0f} tok/s"
           if p.prefill_tps and p2.prefill_tps else "")
    if rp >= SAME and rd >= 1 / SAME:
        verdict = (f"{new_name} reads prompts faster ({rp:.1f}×) and writes answers at about the same speed"
                   if rd < SAME else f"{new_name} is faster in both ({rp:.1f}× prompt reading, {rd:.2f}× decode)")
        verdict += ": worth it, most of all for long prompts"
    elif rp <= 1 / SAME and rd <= SAME:
        verdict = (f"{now_name} reads prompts faster ({1 / rp:.1f}×)"
                   + (" and writes at about the same speed" if rd > 1 / SAME else f" and writes faster ({1 / rd:.2f}×)")
                   + f": stay on {now_name}")
    elif rd >= SAME:
        verdict = f"worth it for speed ({rd:.2f}× decode)"
    elif rd <= 1 / SAME:
        verdict = f"slower here: stay on {now_name}"
    else:
        verdict = "about the same: not worth switching for speed alone"
    note = " (Ollama runs Vulkan only with OLLAMA_VULKAN=1)" if engine == "ollama" and api == "vulkan" else ""
    basis = f"{now_name} predicted, {new_name} by this machine's runs measured both ways" if md else "predicted for both"
    return (f"{new_name} instead of {now_name}: decode ≈ {p.decode_tps:.1f} → {p.decode_tps * rd:.1f} tok/s{pre} "
            f"({basis}) — {verdict}{note}.{said}")
