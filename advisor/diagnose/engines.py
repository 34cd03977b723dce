"""Another engine for the same model on the same machine: the answer to "should I switch to MLX?", "would vLLM be
faster than Ollama?", "is ExLlamaV2 worth trying?" (:attr:`Symptoms.engine_asked`).

Both sides come from the same prediction code (:func:`advisor.diagnose.remedies.what_if`): the engine in use with
its build of the weights, and the engine asked about with that engine's usual build of about the same size
(:func:`equivalent_quant`). An engine that cannot run on the machine is said so, with why.
"""

from __future__ import annotations

from advisor.diagnose.context import Ctx
from advisor.diagnose.remedies import fix, register, what_if
from advisor.models import Fix, Prediction, QuantFormat
from advisor.understand.engine import (
    API_NAMES,
    ENGINE_NAMES,
    LLAMA_SERVER_ENGINES,
    classify_engine,
    ollama_gpu_fallback,
)
from advisor.understand.formats import SERVER_ENGINES as _SERVERS
from advisor.understand.formats import equivalent_quant

__all__ = ["engine_answer", "equivalent_quant"]

WORTH = 1.10  # a switch is worth making for speed from +10 % of decode; within ±10 % it is a wash


def _cannot_run(c: Ctx, engine: str) -> str | None:
    """Why ``engine`` does not run on this machine, or None when it does."""
    hw = c.sit.hardware
    if hw is None:
        return None
    vendor = (hw.vendor or "").upper()
    if engine == "mlx" and hw.kind != "apple_soc":
        return (f"MLX is Apple's framework for Apple silicon; on the {hw.name} its CPU/CUDA builds are young and slow — "
                "llama.cpp or vLLM are the engines made for it")
    if engine in _SERVERS and hw.kind == "apple_soc":
        return (f"{ENGINE_NAMES[engine]} needs a discrete NVIDIA or AMD GPU for its speed; on a Mac it runs only on the CPU "
                "(or as MLX kernels in vllm-metal), so MLX or llama.cpp are the fast choices here")
    if engine in _SERVERS and hw.kind in ("cpu", "apu"):
        return (f"{ENGINE_NAMES[engine]} needs a discrete NVIDIA or AMD GPU for its speed; on CPU cores (or an integrated "
                "GPU) llama.cpp is the engine made for it")
    if engine == "tensorrt-llm" and vendor != "NVIDIA":
        return "TensorRT-LLM runs only on NVIDIA GPUs"
    if engine == "exllamav2" and (hw.kind not in ("discrete_gpu", "datacenter_gpu") or vendor not in ("NVIDIA", "AMD")):
        return "ExLlamaV2 runs only on NVIDIA (CUDA) and AMD (ROCm) graphics cards, with the whole model in their memory"
    return None


def _switched(c: Ctx, engine: str) -> tuple[Prediction, QuantFormat] | None:
    q = c.sit.quant
    if q is None or c.pred is None:
        return None
    q2 = equivalent_quant(c.store, q, engine)
    if q2 is None:
        return None
    p = what_if(c, backend=ENGINE_NAMES.get(engine, engine) if engine != "mlx" else "mlx", quant=q2)
    return (p, q2) if p is not None and p.decode_tps else None


def _asked(c: Ctx) -> str | None:
    e = c.sit.symptoms.engine_asked
    now = classify_engine(c.sit.engine_text)[0] if c.sit.engine_text else c.sit.engine
    return e if e and e != now else None


def kernel_family(engine: str | None) -> str:
    """The kernels an engine runs (an engine id or a backend label): Ollama, LM Studio, KoboldCpp and llama-server all
    run llama.cpp's (ggml); none named is the usual llama.cpp build."""
    e = classify_engine(engine)[0] if engine else ""
    return "llama.cpp" if not e or e == "ollama" or e in LLAMA_SERVER_ENGINES else e


def engine_answer(c: Ctx) -> str | None:
    """One sentence that answers the engine question, with both predictions; None when none was asked."""
    e = _asked(c)
    if e is None or c.pred is None:
        return None
    name = ENGINE_NAMES.get(e, e)
    if (why := _cannot_run(c, e)) is not None:
        return f"{name} instead: not here — {why}."
    got = _switched(c, e)
    if got is None:
        return None
    p2, q2 = got
    p = c.pred
    users = p.concurrency
    a = p.decode_tps_per_seq or p.decode_tps if users > 1 else p.decode_tps
    b = p2.decode_tps_per_seq or p2.decode_tps if users > 1 else p2.decode_tps
    each = f" per user of {users}" if users > 1 else ""
    pre = (f", prompt reading ≈ {p.prefill_tps:,.0f} → {p2.prefill_tps:,.0f} tok/s"
           if p.prefill_tps and p2.prefill_tps else "")
    r = b / a if a else 1.0
    rp = (p2.prefill_tps / p.prefill_tps) if p.prefill_tps and p2.prefill_tps else 1.0
    if r >= WORTH:
        verdict = "worth it for speed"
    elif r < 1 / WORTH:
        verdict = "slower here: stay"
    elif rp >= 1.3 and r >= 0.95:
        verdict = "prompts read faster, answers written at about the same speed: worth it for long prompts only"
    else:
        verdict = "about the same: not worth switching for speed alone"
    build = "" if q2.name == (c.sit.quant.name if c.sit.quant else "") else f" with its {q2.name} build"
    from advisor.render.markdown import engine_label

    # no engine stated: the one the prediction assumed (the hardware's usual llama.cpp build)
    now_label = ENGINE_NAMES.get(c.sit.engine or "", c.sit.engine or "") or engine_label(p.backend)
    lead = ""
    if c.sit.symptoms.support_asked:
        api = API_NAMES.get(p2.backend.rpartition("-")[2].lower(), "")
        lead = f"yes, it runs on this machine{' (' + api + ')' if api else ''}; "
        hw = c.sit.hardware
        fallback = ollama_gpu_fallback(e, hw) if (e == "ollama" and hw is not None) else None
        if fallback == "cpu":  # its GPU backends skip this iGPU: the CPU cores run it unless Vulkan is switched on
            return (f"{name}: it runs, but on the CPU cores — its GPU backends do not drive this integrated GPU unless "
                    f"OLLAMA_VULKAN=1 turns its experimental Vulkan backend on: decode ≈ {a:.1f} → {b:.1f} tok/s"
                    f"{each}{pre}; with OLLAMA_VULKAN=1 about what {now_label} does.")
        if fallback == "opt_in":
            lead = ("yes, with OLLAMA_VULKAN=1 (its experimental Vulkan backend; without it, the CPU cores run the model) "
                    "or Intel's IPEX-LLM build of Ollama; ")
        if kernel_family(p2.backend) == kernel_family(p.backend) and fallback is None:
            return (f"{name}: {lead}it runs the same kernels as {now_label}, so expect the same speed: decode ≈ "
                    f"{b:.1f} tok/s{each}{', prompt reading ≈ ' + format(p2.prefill_tps, ',.0f') + ' tok/s' if p2.prefill_tps else ''}.")
    if c.tg and users <= 1:  # the person's own rate, scaled by the predicted ratio of the two engines
        # never past what the other engine is predicted to reach near its roofline (its predicted rate, or 85 % of
        # the ceiling): a rate measured above our prediction does not carry the ratio beyond the hardware
        to = min(c.tg * r, max(b, 0.85 * p2.decode_ceiling_tps)) if r > 1 else c.tg * r
        said = (f"decode ≈ {c.tg:g} → {to:.1f} tok/s (your {now_label} rate × the predicted {r:.2f}"
                + (", held under the other engine's ceiling)" if to < c.tg * r else ")"))
    else:
        said = f"decode ≈ {a:.1f} → {b:.1f} tok/s{each} ({now_label} now → {name}; predicted for both)"
    return f"{name} instead{build}: {lead}{said}{pre} — {verdict}."


@register("switch_engine", "fix_configuration", 1, lambda c: _asked(c) is not None)
def _switch_engine(c: Ctx) -> Fix | None:
    """The engine asked about as a fix, when it is faster here (:data:`WORTH`)."""
    e = _asked(c)
    if e is None or c.pred is None or _cannot_run(c, e) is not None or (got := _switched(c, e)) is None:
        return None
    p2, q2 = got
    p = c.pred
    a, b = p.decode_tps_per_seq or p.decode_tps, p2.decode_tps_per_seq or p2.decode_tps
    if not a or b < WORTH * a:
        return None
    name = ENGINE_NAMES.get(e, e)
    return fix("fix_configuration", f"Switch to {name} with its {q2.name} build",
               f"decode ≈ {a:.1f} → {b:.1f} tok/s (≈ {b / a:.1f}×)",
               f"{name}'s kernels reach a larger share of this machine's memory bandwidth for this model than the engine "
               "in use (both predicted from measured runs of each engine).", speedup=b / a, new_decode_tps=b)
