"""Purchases: a machine with more memory bandwidth, a GPU with more compute, another card of the same kind.

Each suggests catalog machines still sold, that hold what the person runs (weights, the allocated context), and
predicts the effect with the same code as every other fix (:func:`advisor.diagnose.remedies.what_if`). Registered on
import by :mod:`advisor.diagnose.remedies`.
"""

from __future__ import annotations

import math
import re
from typing import Any

from advisor import roofline
from advisor.diagnose.context import Ctx
from advisor.diagnose.fit import roomy
from advisor.diagnose.remedies import fix, register, what_if
from advisor.models import Fix, Hardware, Prediction
from advisor.perf.moe import weights_bpw
from advisor.render.markdown import fmt_rate
from knowledge import catalog


def _upgrade(c: Ctx, pick_by: str) -> Fix | None:
    p, hw = c.pred, c.sit.hardware
    if p is None or hw is None:
        return None
    need = p.memory.required_gb
    sit = c.sit
    cw = sit.workload.context_window or sit.facts.context_window
    if cw and sit.model is not None and sit.quant is not None:
        # The allocated context (num_ctx / -c) reserves its cache up front: the new machine must hold it too.
        need = max(need, roofline.memory_fit(hw, sit.model, weights_bpw(sit.model, sit.quant), context_tokens=cw,
                                             concurrency=sit.workload.users, kv_bytes_per_element=c.kv_bpe).required_gb)
    # A machine suggested instead of this one (:func:`_replaces`) has at least the memory this one has (a faster machine with less
    # memory is no upgrade), any machine what the model needs; machines whose memory is not fixed (generic DDR rows
    # list no sizes) get that.
    floor = p.memory.total_gb or 0.0
    portable = sit.symptoms.portable
    hws = [h for h in catalog.all_hardware(c.store).values() if h.n_devices == 1
           and (not h.memory_gb_options or max(h.memory_gb_options) >= max(need, floor if _replaces(hw, h) else 0))]
    if pick_by == "bandwidth":
        fam = [h for h in hws if _bandwidth_step(hw, h, p.bandwidth_gbs, hws, portable)]
        # From a CPU the kinds of :func:`_cpu_step_kinds` first; then the same family, then the smallest step up
        # (the cheapest machine that makes the difference).
        fam.sort(key=lambda h: (_step_rank(hw, h, portable), h.family != hw.family, h.bandwidth_gbs))
    elif hw.kind == "cpu":
        fam = [h for h in hws if h.fp16_tflops and p.tflops and h.fp16_tflops >= 2.5 * p.tflops
               and _cross_kind_ok(hw, h, hws, portable)]
        fam.sort(key=lambda h: (_step_rank(hw, h, portable), h.fp16_tflops or 0))
    else:
        fam = [h for h in hws if h.fp16_tflops and p.tflops and h.fp16_tflops >= 2.5 * p.tflops
               and h.kind in (hw.kind, "discrete_gpu", "datacenter_gpu")]
        fam.sort(key=lambda h: (h.kind != hw.kind, h.kind != "discrete_gpu", h.fp16_tflops or 0))
    got = _holding(c, fam, need, floor)
    if got is None:
        return None
    pick, mem, new = got
    room: dict[str, Any] = {}
    if not p.memory.fits and new.memory.total_gb is not None:  # a machine bought to hold the model
        room = {"margin_gb": round(new.memory.usable_gb - new.memory.required_gb, 2),
                "fits_with_margin": roomy(new.memory.required_gb, new.memory.usable_gb)}
    if pick_by == "bandwidth":
        base = c.expected_tg or 1.0
        per = new.decode_tps_per_seq or new.decode_tps
        named = f"{_with_memory(pick, mem)} ({pick.bandwidth_gbs:g} GB/s)"
        why = "Decode is bandwidth-bound: tok/s scales with GB/s for the same bytes per token."
        title = f"More memory bandwidth, e.g. {named}"
        if not _replaces(hw, pick):  # a card added to a CPU machine: the model moves into its memory
            title = f"A graphics card that holds the model, e.g. {named}"
            why = (f"Decode is bandwidth-bound: on the card every weight is read from its own memory "
                   f"({pick.bandwidth_gbs:g} GB/s) instead of the RAM ({p.bandwidth_gbs:g} GB/s).")
        return fix("more_bandwidth", title, f"decode ≈ {fmt_rate(per)} tok/s (from {fmt_rate(base)} expected here)",
                   why, speedup=per / base, new_decode_tps=new.decode_tps, **room)
    if not new.prefill_tps or not p.prefill_tps:
        return None
    return fix("more_compute", f"More compute for prefill, e.g. {_with_memory(pick, mem)} ({pick.fp16_tflops:g} TFLOPS)",
               f"prefill ≈ {new.prefill_tps:,.0f} tok/s, TTFT {p.ttft_s or 0:.1f} → {new.ttft_s or 0:.1f} s",
               "Prefill is compute-bound: TTFT falls with FLOP/s (GPU cores, matrix units).",
               speedup=new.prefill_tps / p.prefill_tps, new_ttft_s=new.ttft_s, **room)


RECENT_YEARS = 4  # a machine suggested across kinds is one still sold: released within this many years of the newest


# A CPU machine no graphics card goes into: a laptop or mini PC part (by its name or family), a board computer, or
# one the person calls a laptop (Symptoms.portable).
_PORTABLE = re.compile(r"mobile|laptop|raspberry|\bpi \d|jetson|rockchip|snapdragon|\bsbc\b|strix\s*point|lunar\s*lake"
                       r"|meteor\s*lake|krackan|hawk\s*point|phoenix|rembrandt|\bn[1-3]00\b|\b\d{4,5}[uh]s?\b|\bhx\s*\d", re.I)


_EMBEDDED = re.compile(r"jetson|orin", re.I)  # developer modules, not a machine to suggest across kinds


def _cpu_step_kinds(mine: Hardware, portable: bool = False) -> tuple[tuple[str, ...], ...]:
    """Kinds a CPU machine's bandwidth upgrade is looked for in, best first: a desktop or server takes a graphics
    card, whose own memory a model reads several times faster than DIMMs, else (a model no single card holds) a
    machine with a wide unified memory (Apple SoC, APU); a laptop, mini PC or board computer (``portable``: the
    person called it one, :attr:`Symptoms.portable`; or its part's name says so) such a machine; an APU (Strix Halo) a unified-memory machine with wider memory. Other kinds: their own."""
    unified = ("apple_soc", "apu")
    if mine.kind == "apu":  # a unified-memory PC's next step is a unified-memory machine with wider memory (a Mac)
        return (unified,)
    if mine.kind != "cpu":
        return ((mine.kind,),)
    if portable or _PORTABLE.search(f"{mine.name} {mine.family or ''}"):
        return (unified,)
    return ("discrete_gpu",), unified


def _step_rank(mine: Hardware, h: Hardware, portable: bool = False) -> int:
    """Place of ``h``'s kind in :func:`_cpu_step_kinds` (one past the end: the person's own kind, from a CPU)."""
    ranks = _cpu_step_kinds(mine, portable)
    return next((i for i, ks in enumerate(ranks) if h.kind in ks), len(ranks))


def _replaces(mine: Hardware, h: Hardware) -> bool:
    """Whether buying ``h`` replaces the person's machine (the same kind, or a unified-memory machine instead of a
    CPU one), so it must keep at least the memory they have; a graphics card is added to it (its VRAM only has
    to hold the model)."""
    return h.kind == mine.kind or (mine.kind in ("cpu", "apu") and h.kind in ("apple_soc", "apu"))


def _bandwidth_step(mine: Hardware, h: Hardware, bw: float, hws: list[Hardware], portable: bool = False) -> bool:
    """Whether ``h`` is a bandwidth upgrade to suggest for ``mine`` (``bw``: its bandwidth, GB/s): 1.8× or more, of
    the same kind, or from a CPU of :func:`_cpu_step_kinds` and current (:data:`RECENT_YEARS`): a laptop's next
    step is not a server's memory system, a desktop's not a new DDR5 platform."""
    return h.bandwidth_gbs >= 1.8 * bw and (h.kind == mine.kind or _cross_kind_ok(mine, h, hws, portable))


def _cross_kind_ok(mine: Hardware, h: Hardware, hws: list[Hardware], portable: bool = False) -> bool:
    """Whether a CPU machine's upgrade may be ``h`` of another kind: one of :func:`_cpu_step_kinds`, current
    (:data:`RECENT_YEARS`), and not an embedded developer module."""
    if mine.kind not in ("cpu", "apu") or _step_rank(mine, h, portable) == len(_cpu_step_kinds(mine, portable)) \
            or _EMBEDDED.search(h.name):
        return False
    newest = max((x.release_year or 0) for x in hws)
    return (h.release_year or 0) >= newest - RECENT_YEARS


def _holding(c: Ctx, fam: list[Hardware], need: float, floor: float = 0.0) -> tuple[Hardware, float, Prediction] | None:
    """The first machine of ``fam`` (best first) in its smallest memory size that holds what this situation needs
    (``need``, GB: weights + KV cache + overhead, with the headroom of :mod:`advisor.diagnose.fit`) and, when of the
    same kind as the person's machine, is no smaller than ``floor`` (GB: the memory the person has), with that size
    and its prediction; None when none does.
    A machine named without the memory that holds the model is no fix."""
    for h in fam[:12]:
        mine = floor if c.sit.hardware is not None and _replaces(c.sit.hardware, h) else 0.0  # VRAM is not RAM
        sizes = sorted(o for o in (h.memory_gb_options or []) if o >= max(need, mine)) or (
            [] if h.memory_gb_options else [max(mine, float(2 ** math.ceil(math.log2(max(need * 1.3, 1)))))])
        for mem in sizes:
            new = what_if(c, hardware=h.model_copy(update={"memory_gb": mem}))
            if new is None:
                break
            m = new.memory
            if m.total_gb is None or (m.fits and roomy(m.required_gb, m.usable_gb)):
                return h, mem, new
    return None


def _with_memory(h: Hardware, mem: float) -> str:
    """``Apple M2 Pro (19-core GPU) with 32 GB``; a name that already says its size is left as is (``RTX 3080 10GB``);
    a memory system without sizes is ``Desktop dual-channel DDR4-3200 with at least 8 GB of RAM``."""
    sizes = re.search(r"(?<![\d.])(\d+(?:/\d+)+)\s?GB\b", h.name)  # one row for the sizes a card is sold in: 8/16GB
    if sizes and f"{mem:g}" in sizes.group(1).split("/"):
        return h.name[:sizes.start()] + f"{mem:g}GB" + h.name[sizes.end():]
    if re.search(rf"(?<![\d.]){mem:g}\s?GB\b", h.name):
        return h.name
    if not h.memory_gb_options:  # a memory system (RAM one installs), not a product sold in sizes
        return f"{h.name} with at least {mem:g} GB of RAM"
    return f"{h.name} with {mem:g} GB"


@register("more_bandwidth", "more_bandwidth", 3)
def _more_bandwidth(c: Ctx) -> Fix | None:
    return _upgrade(c, "bandwidth")


@register("add_gpu", "fit_in_memory", 3,
          lambda c: c.pred is not None and not c.pred.memory.fits and c.sit.hardware is not None
          and c.sit.hardware.kind in ("discrete_gpu", "datacenter_gpu"))
def _add_gpu(c: Ctx) -> Fix | None:
    """More of the same card, so the model and its KV cache fit in VRAM: the fewest (up to 8) that hold it with
    room, run as llama.cpp splits layers (or tensor parallel on vLLM/SGLang), with the predicted decode."""
    hw = c.sit.hardware
    assert hw is not None
    from knowledge.seed import split_hw_id

    if re.search(r"\b(?:laptop|mobile|max-q)\b", f"{hw.name} {hw.id}", re.I):
        return None  # a laptop's GPU is soldered in: no second one to add
    base_id, n_now = split_hw_id(hw.id)
    tp = c.sit.engine in ("vllm", "sglang", "tensorrt-llm")
    heads = c.sit.model.n_heads if c.sit.model is not None else None
    for n in (2, 3, 4, 6, 8):
        if n <= (n_now or 1):
            continue
        if tp and (n & (n - 1) or (heads and heads % n)):
            continue  # tensor parallel splits the attention heads: vLLM/SGLang need a count that divides them (1, 2, 4, 8)
        try:
            more = catalog.get_hardware(c.store, f"{base_id}x{n}", memory_gb=hw.memory_gb)
        except Exception:  # noqa: BLE001 - a card the catalog cannot multiply: no such fix
            return None
        new = what_if(c, hardware=more)
        if new is None or not (new.memory.fits and roomy(new.memory.required_gb, new.memory.usable_gb)):
            continue
        rate = new.decode_tps_per_seq or new.decode_tps
        added = n - (n_now or 1)
        one = hw.name.split("× ", 1)[-1]
        return fix("fit_in_memory", f"Add {'another' if added == 1 else added} {one}{'' if added == 1 else 's'} "
                   f"({n} in all) so the whole model fits in VRAM",
                   f"{n}× {one}: {new.memory.required_gb:.1f} GB needed of {new.memory.usable_gb:.1f} GB usable; decode ≈ "
                   f"{fmt_rate(rate)} tok/s" + (f" vs {c.tg:g} now" if c.tg and c.tg < rate else ""),
                   "A model that does not fit in one card's VRAM runs its overflow from system RAM; split over "
                   "enough cards it runs at VRAM speed (llama.cpp splits the layers; vLLM/SGLang run tensor parallel).",
                   speedup=(rate / c.tg) if c.tg else None, new_decode_tps=rate, fits_with_margin=True,
                   margin_gb=round(new.memory.usable_gb - new.memory.required_gb, 2))
    return None


@register("more_compute", "more_compute", 3)
def _more_compute(c: Ctx) -> Fix | None:
    f = _upgrade(c, "compute")
    if f is None and c.sit.symptoms.gpu_arch:
        return fix("more_compute", "A GPU with fast FP16 (any NVIDIA card from Volta/Turing on, e.g. RTX 3090)",
                   "FP16 math at full rate instead of 1/64: the engine becomes bandwidth-bound again",
                   "Engines that compute in half precision need a GPU whose FP16 rate is not crippled.")
    return f
