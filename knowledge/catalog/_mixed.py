"""Mixed GPUs in one machine ("RTX 4090 + RTX 3090", "3090 and 3060 12GB") as one combined device.

The step model knows ``n`` identical devices (``Hardware.n_devices``); a mixed box is described to it as ``n``
equal devices whose figures give the same answer as the real cards:

* **layer split** (llama.cpp, Ollama, LM Studio: the default for several GPUs): the layers are spread in proportion
  to each card's memory (llama.cpp's ``--tensor-split`` docs: "By default the data is split in proportion to VRAM",
  https://github.com/ggml-org/llama.cpp/pull/15980), and a token
  passes through every card in turn, reading that card's share ``s_i`` of the weights at that card's speed. So one
  token takes ``Σ s_i × B / BW_i``: the effective bandwidth is ``1 / Σ (s_i / BW_i)`` (a share-weighted harmonic
  mean), likewise the effective FP16 compute for prefill. Memory adds up: ``Σ mem_i``.
* **tensor parallel** (vLLM, SGLang, TensorRT-LLM ``-tp N``): every layer is cut into ``N`` equal shards, so the
  slowest card sets the pace and the smallest card the memory: ``N`` devices of ``min(BW_i)``, ``min(TFLOPS_i)``,
  ``min(mem_i)``.

>>> from advisor.models import Hardware
>>> a = Hardware(id="a", name="A", kind="discrete_gpu", bandwidth_gbs=1000, memory_gb=24, fp16_tflops=100)
>>> b = Hardware(id="b", name="B", kind="discrete_gpu", bandwidth_gbs=500, memory_gb=12, fp16_tflops=50)
>>> m = mixed_hardware([a, b])
>>> m.n_devices, m.memory_gb * m.n_devices, round(m.bandwidth_gbs, 1), round(m.fp16_tflops or 0, 1)
(2, 36.0, 750.0, 75.0)
"""

from __future__ import annotations

from typing import Literal

from advisor.errors import InputError
from advisor.models import Hardware

__all__ = ["GPU_KINDS", "MIXED_SEP", "host_cpu_note", "mixed_hardware"]

MIXED_SEP = "+"  # joins the part ids of a mixed box: "nvidia-rtx-4090+nvidia-rtx-3090"
GPU_KINDS = ("discrete_gpu", "datacenter_gpu")  # the kinds that are cards of a box


def host_cpu_note(cpu: Hardware) -> str:
    """What is said when a CPU is named next to the card(s): it is the host, not another GPU."""
    return (f"{cpu.name} is the host CPU, not a GPU of the box: layers that do not fit in GPU memory run "
            f"from its memory ({cpu.bandwidth_gbs:g} GB/s).")


def _devices(parts: list[Hardware]) -> list[tuple[Hardware, float]]:
    """One (card, its memory in GB) per physical device; "2x RTX 3090" counts twice."""
    out = []
    for h in parts:
        mem = h.memory_gb if h.memory_gb is not None else min(h.memory_gb_options or [0.0])
        out += [(h, float(mem))] * max(1, h.n_devices)
    return out


def mixed_hardware(parts: list[Hardware], layout: Literal["layer_split", "tensor_parallel"] = "layer_split") -> Hardware:
    """The combined device of a mixed box (see the module doc for the formulas and their source).

    Args:
        parts: the cards as resolved, each with its memory (``memory_gb``, else its smallest option) and
            ``n_devices`` (a part may be "2x RTX 3090").
        layout: ``layer_split`` (llama.cpp default) or ``tensor_parallel`` (vLLM/SGLang ``-tp``).

    Returns:
        Hardware with ``n_devices`` = the number of cards, ``memory_gb`` per device such that ``memory_gb ×
        n_devices`` is the memory the layout can use, and the effective ``bandwidth_gbs`` / ``fp16_tflops``.

    Raises:
        InputError: fewer than two cards, a part that is not a GPU, or a card without a memory size.
    """
    devs = _devices(parts)
    if len(devs) < 2 or any(h.kind not in GPU_KINDS for h, _ in devs):
        raise InputError("A mixed machine needs two or more GPUs (discrete or datacenter cards).")
    if any(mem <= 0 for _, mem in devs):
        raise InputError("Every card of a mixed machine needs a memory size.")
    n = len(devs)
    total = sum(mem for _, mem in devs)
    tfs = [h.fp16_tflops for h, _ in devs]
    if layout == "tensor_parallel":
        per_mem = min(mem for _, mem in devs)
        bw = min(h.bandwidth_gbs for h, _ in devs)
        tf = min(t for t in tfs if t) if all(tfs) else None
        how = (f"tensor parallel over {n} unequal cards: each holds 1/{n} of every layer, so the smallest card "
               f"({per_mem:g} GB) and the slowest ({bw:g} GB/s) set the pace")
    else:
        per_mem = total / n
        shares = [mem / total for _, mem in devs]
        bw = 1.0 / sum(s / h.bandwidth_gbs for s, (h, _) in zip(shares, devs, strict=True))
        tf = (1.0 / sum(s / (h.fp16_tflops or 1.0) for s, (h, _) in zip(shares, devs, strict=True))) if all(tfs) else None
        split = "/".join(f"{100 * s:.0f}" for s in shares)
        how = (f"layers split in proportion to each card's memory ({split} %), a token reads each card's share at "
               f"that card's speed: effective {bw:.0f} GB/s = 1 / Σ (share / bandwidth)"
               + (f", {tf:.0f} TFLOPS likewise" if tf else ""))
    first = parts[0]
    vendors = {h.vendor for h in parts}
    return Hardware(
        id=MIXED_SEP.join(h.id for h in parts), name=" + ".join(h.name for h in parts),
        vendor=first.vendor if len(vendors) == 1 else "/".join(sorted(v for v in vendors if v)),
        family=first.family, kind="datacenter_gpu" if all(h.kind == "datacenter_gpu" for h in parts) else "discrete_gpu",
        bandwidth_gbs=round(bw, 1), memory_gb=per_mem, memory_gb_options=[], fp16_tflops=round(tf, 1) if tf else None,
        fp16_tflops_is_estimate=any(h.fp16_tflops_is_estimate for h in parts),
        release_year=min((h.release_year for h in parts if h.release_year), default=None), n_devices=n,
        source_url=" ; ".join(dict.fromkeys(u for h in parts for u in h.source_url.split(" ; ") if u)),
        notes=f"mixed box, {total:g} GB in all; {how}",
    )
