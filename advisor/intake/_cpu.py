"""Computers without a GPU said loosely: the RAM a CPU-only machine is assumed to have, whether "no GPU" words hold for
the machine named, and Intel Macs (an x86 CPU machine, never an Apple Silicon one).

Part of the hardware reader (:mod:`advisor.intake._hardware`).
"""

from __future__ import annotations

import re

from advisor.errors import AmbiguousError, NotFoundError
from advisor.intake._machine import PLANNED
from advisor.intake._schema import Extraction
from advisor.intake._text import Msg
from knowledge import catalog
from knowledge.store import Store

__all__ = ["DDR_GENERATION", "DUNNO", "default_cpu_memory", "settle_cpu_only"]

_HAS_GPU = ("apple_soc", "apu", "discrete_gpu", "datacenter_gpu")


def settle_cpu_only(msg: Msg, ext: Extraction, store: Store, *, known: str | None = None) -> None:
    """Whether words that put the run on the CPU (``n_gpu_layers`` 0, read by :mod:`advisor.intake._names`) hold for
    the machine named: "no GPU" said beside a Mac or a GPU box is about a separate graphics card or another computer
    ("my old PC has no GPU but I also have a Mac mini"), and a GPU the person plans to buy ("no GPU yet, plan to buy
    an RTX 4090") runs with every layer on it; "CPU only" / "-ngl 0" stay."""
    if ext.n_gpu_layers != 0 or ext.cpu_only_said is None:
        return
    hid = ext.resolved.get("hardware")
    hw = None
    try:
        hw = catalog.get_hardware(store, hid) if hid else (catalog.resolve_hardware(store, known).value if known else None)
    except (AmbiguousError, NotFoundError):
        hw = None
    planned = hw is not None and hw.kind in ("discrete_gpu", "datacenter_gpu", "apple_soc") and PLANNED.search(msg.orig)
    if hw is not None and hw.kind in _HAS_GPU and (ext.cpu_only_said == "machine" or planned):
        ext.n_gpu_layers = None
        if planned:
            ext.note(f"Took the {hw.name} as a machine you plan to buy: answered with the whole model on its GPU.")
        elif ext.hardware_kind is None and hw.kind == "apple_soc":
            ext.note(f"Took “no GPU” as no separate graphics card: the {hw.name} runs the model on its own GPU.")
        return
    ext.note("Running on the CPU only: no layers offloaded to a GPU.")


DDR_GENERATION = re.compile(r"\bddr([45])\b", re.I)
# "I don't know" as an answer (one home: the CPU question here, the memory question in intake._dialog and
# intake._extract).
DUNNO = r"not\s+sure|no\s+idea|dunno|don'?t\s+know|do\s+not\s+know|idk|no\s+clue|unsure|whatever|forgot|can'?t\s+remember"
_DUNNO = re.compile(rf"\b(?:{DUNNO}|normal|regular|ordinary|standard|typical)\b", re.I)
# A CPU-only computer whose RAM is only named by generation: the usual dual-channel speed of that generation
# (DDR4-3200: the fastest JEDEC DDR4 grade most desktops and laptops run; DDR5-5600: the catalog's AM5 / Intel 13-14th
# gen desktop entry), or the slower of the two when not known.
_CPU_DEFAULT = {"4": ("DDR4-3200 dual channel", "cpu-ddr4-3200-2ch"), "5": ("DDR5-5600 dual channel", "cpu-ddr5-5600-2ch")}


def default_cpu_memory(ext: Extraction, text: str) -> None:
    """The CPU question ("which CPU or RAM?") answered with only a RAM generation or "not sure": a stated default."""
    gen = DDR_GENERATION.search(text)
    if not gen and not _DUNNO.search(text):
        return
    name, hw_id = _CPU_DEFAULT[gen.group(1) if gen else "4"]
    ext.hardware, ext.resolved["hardware"] = name, hw_id
    ext.note(f"Took the computer as {name} ({'its usual speed' if gen else 'not known: the slower common kind'}); "
             "tell me the RAM speed or the CPU model to refine.")
