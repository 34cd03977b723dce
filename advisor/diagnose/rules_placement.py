"""Placement rules: where the weights are (split from :mod:`advisor.diagnose.rules`).

What the tool reports on the CPU (``ollama ps``), a MoE split planned with ``--n-cpu-moe`` / ``-ot exps=CPU``, layers
left off the GPU (``-ngl``), a GPU the run does not use, and a spill near the memory limit. Same contract as the rules
there: each reads ``Ctx`` (never text) and returns a Finding or None; they are tried in the order of ``rules.RULES``.
"""

from __future__ import annotations

import math
import re

from advisor.diagnose.context import Ctx, predict_for
from advisor.diagnose.rules import Finding, _below
from advisor.diagnose.tools import hint, offload_check

__all__ = ["experts_off_the_card", "reported_split", "output_layer_on_cpu", "partial_offload", "gpu_not_used", "near_limit_spill",
           "PLANNED_SPLIT_RULE", "NEAR_LIMIT"]

NEAR_LIMIT = 0.8  # required / usable above this: a larger context or another process can spill it


def reported_split(c: Ctx) -> Finding | None:
    """The tool reports part of the model on the CPU (ollama ps 48%/52%), or the person says it swaps."""
    s = c.sit.symptoms
    if s.gpu_fraction is not None and s.gpu_fraction < 0.05 and c.has_gpu and c.fits is not False:
        return Finding("misconfiguration", "The tool reports the whole model on the CPU although it fits in GPU memory: "
                       "the engine found no usable GPU (driver, runtime, or an unsupported GPU).",
                       ["offload_all", "setup:gpu_runtime"], status="below_expected", rule="reported_split")
    if s.gpu_fraction is not None and s.gpu_fraction < 0.98 and s.n_gpu_layers is not None and c.fits is True \
            and c.offload_layers and s.n_gpu_layers < c.offload_layers - 1:
        return None  # the person set -ngl below the layer count and the model fits: partial_offload names it
    if s.gpu_fraction is not None and s.gpu_fraction < 0.98:
        return Finding("memory_fit", f"Only {s.gpu_fraction:.0%} of the model is on the GPU (as the tool reports); "
                       "the rest decodes from system RAM at a fraction of the speed.",
                       ["fit_in_memory", "shrink_context", "quantization", "kv_cache_quantization", "smaller_model"],
                       rule="reported_split")
    if s.swapping and not s.gpu_not_used:
        return Finding("memory_fit", "Swapping / memory pressure: part of the model is paged out to disk, which "
                       f"stalls every token (check {hint(c, 'ram')}).",
                       ["fit_in_memory", "quantization", "smaller_model", "kv_cache_quantization"], rule="reported_split")
    return None


PLANNED_SPLIT_RULE = "planned_split"
# Below this share of the split's expected decode, the CPU side of a planned split is checked first (threads, NUMA,
# RAM speed), the same margin as the "below expected" band of advisor.diagnose.status.
_SPLIT_SLOW = 0.7


def _planned_split(c: Ctx) -> Finding | None:
    """A MoE run with its routed experts in system RAM on purpose (``--n-cpu-moe``, ``-ot exps=CPU``) that fits the
    card and system RAM together: the split is the design, so the system RAM's bandwidth sets decode and the fixes
    tune the split (the CPU side when slow, more experts on the card, larger prompt micro-batches) before any smaller
    model. None when it is no such run, or the stated system RAM cannot hold the rest either."""
    from advisor.diagnose.remedies import deliberate_split, experts_on_cpu

    p, sit = c.pred, c.sit
    if p is None or not experts_on_cpu(c) or not deliberate_split(c):
        return None
    mem = p.memory
    ram = sit.machine.system_ram_gb if sit.machine is not None else None
    if ram and mem.required_gb > mem.usable_gb + 0.9 * ram:
        return None
    host = next((a for a in p.assumptions if "from system RAM" in a), "")
    bw = re.search(r"at ~([\d.,]+) GB/s", host)
    sig = (f"A split by design: the model needs {mem.required_gb:.1f} GB, {mem.usable_gb:.1f} GB of it on the GPU, and "
           f"the routed experts left in system RAM are read from there for every token"
           + (f" (at ~{bw.group(1)} GB/s)" if bw else "") + ", so the system RAM, not the GPU, sets decode.")
    slow = c.tg is not None and c.ratio_tg is not None and c.ratio_tg < _SPLIT_SLOW
    rem = ["more_experts_on_gpu", "micro_batch", "setup:hybrid_cpu", "quantization"]
    if "prefill" in sit.symptoms.asks_about:  # "how to make prompt processing faster?": the prompt's fix first
        rem = ["micro_batch", "more_experts_on_gpu", "setup:hybrid_cpu", "quantization"]
    if slow:
        sig += (f" {c.tg:g} tok/s is {c.ratio_tg:.0%} of what this split usually gives: the CPU side is the usual "
                "cause (threads, NUMA, RAM below its rated speed).")
        rem = ["setup:hybrid_cpu", "more_experts_on_gpu", "micro_batch", "quantization"]
    return Finding("memory_fit", sig, rem, status="below_expected" if slow else None, rule=PLANNED_SPLIT_RULE)


def experts_off_the_card(c: Ctx) -> Finding | None:
    """``--n-cpu-moe`` / ``--cpu-moe`` / ``-ot exps=CPU`` keep routed experts in system RAM although the whole model fits
    the card: every token reads them at system-RAM speed for no reason; the fix is to drop the flag (``offload_all``)."""
    from advisor.diagnose.split import experts_on_cpu

    p = c.pred
    if p is None or not c.has_gpu or c.fits is not True or not experts_on_cpu(c) or not c.tg:
        return None  # (no measured rate: the expert-flag fixes rank as usual)
    mem = p.memory
    got = f" {c.tg:g} tok/s is what reading them from system RAM gives." if c.tg else ""
    return Finding("misconfiguration", f"Your flags keep the routed experts in system RAM, yet the whole model fits the "
                   f"GPU ({mem.required_gb:.1f} of {mem.usable_gb:.1f} GB usable): every token reads them over the CPU's "
                   f"memory, many times slower than VRAM.{got}", ["offload_all", "more_experts_on_gpu"],
                   status="below_expected", rule="experts_off_the_card")


def _layers_phrase(c: Ctx) -> str:
    """ "With -ngl 20, 13 of 33 layers run from system RAM." (llama.cpp counts the output layer as one more.)"""
    ngl, n = c.sit.symptoms.n_gpu_layers, c.offload_layers
    if ngl is None or not n or ngl >= n - 1 or not c.has_gpu:
        return ""
    return f"With -ngl {ngl}, {n - ngl} of {n} layers run from system RAM."


def output_layer_on_cpu(c: Ctx) -> Finding | None:
    """-ngl equal to the repeating layer count leaves the output layer (LM head) on the CPU."""
    ngl, n = c.sit.symptoms.n_gpu_layers, c.n_layers
    if ngl is None or not n or ngl != n or not c.has_gpu:
        return None
    return Finding("misconfiguration", f"-ngl {ngl} equals the model's {n} repeating layers, so the output layer (the "
                   "LM head, one of the largest matrices) stays on the CPU and is read from system RAM for every token.",
                   ["offload_all", "setup:output_layer"], status="below_expected", rule="output_layer_on_cpu")


def partial_offload(c: Ctx) -> Finding | None:
    """Some layers left on the CPU although the whole model would fit on the GPU."""
    phrase = _layers_phrase(c)
    if not phrase or c.sit.symptoms.n_gpu_layers == 0 or c.fits is False:
        return None
    return Finding("misconfiguration", phrase + " The whole model fits in GPU memory, so every layer can go there.",
                   ["offload_all"], status="below_expected" if _below(c) else None, rule="partial_offload")


def gpu_not_used(c: Ctx) -> Finding | None:
    """The output says the GPU is not used (or -ngl 0) on a machine that has one."""
    s = c.sit.symptoms
    if not c.has_gpu or not (s.gpu_not_used or s.n_gpu_layers == 0):
        return None
    if s.driver_failed:
        return Finding("misconfiguration", "The GPU's driver or runtime does not start (the output shows it failing), so "
                       "nothing can run on the GPU: every layer runs on the CPU until the driver loads (reinstall or "
                       "update it, reboot; with Secure Boot, enrol its module).",
                       ["setup:gpu_runtime", "offload_all"], status="below_expected", rule="gpu_not_used")
    return Finding("misconfiguration", ("The output says the GPU is not being used" if s.gpu_not_used else
                                        "-ngl 0 keeps every layer on the CPU") + ", so every layer runs on the CPU.",
                   ["offload_all", "setup:gpu_runtime"], status="below_expected", rule="gpu_not_used")


def near_limit_spill(c: Ctx) -> Finding | None:
    """Far below on a discrete GPU close to its memory limit, nothing else named: the cache or layers spilled."""
    p = c.pred
    if p is None or not c.discrete or not c.far_below or c.sit.symptoms.full_offload:
        return None
    if not p.memory.usable_gb or p.memory.required_gb / p.memory.usable_gb <= NEAR_LIMIT:
        return None
    how = ""
    share = _share_explaining(c)
    if share is not None:
        part = "≥ 90 %" if share <= 0.1 else f"≈ {1 - share:.0%}"
        how = f"; {c.tg:g} tok/s is what {part} of the weights in system RAM would give"
    return Finding("memory_fit", f"Decode is {c.ratio_tg:.0%} of the expected rate while model + KV cache take "
                   f"{p.memory.required_gb:.1f} of {p.memory.usable_gb:.1f} GB{how}: part of the model or cache has most "
                   "likely spilled to system RAM, or not every layer is on the GPU (a larger context raises the KV cache; "
                   f"check {offload_check(c)}).", ["shrink_context", "fit_in_memory", "kv_cache_quantization", "quantization"],
                   rule="near_limit_spill")


def _share_explaining(c: Ctx) -> float | None:
    """The GPU share of the weights (0.1 steps) whose predicted decode is closest to the measured rate."""
    if not c.tg:
        return None
    best: tuple[float, float] | None = None
    for i in range(1, 10):
        p = predict_for(c.store, c.sit, gpu_share=i / 10)
        if p is not None:
            err = abs(math.log((p.decode_tps_per_seq or p.decode_tps) / c.tg))
            if best is None or err < best[0]:
                best = (err, i / 10)
    return best[1] if best and best[0] < math.log(2) else None
