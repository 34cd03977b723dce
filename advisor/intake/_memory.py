"""Memory sizes in chat text ("24GB", "64 gigs of RAM", "the 16GB model") and which one is the machine's.

Part of the hardware reader (:mod:`advisor.intake._hardware`): every size is found with its qualifier (VRAM,
unified, system RAM, a product variant), sizes of disks, files and models are skipped, and the one that is the
accelerator's memory is chosen against the resolved machine.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from advisor.intake._schema import Extraction
from advisor.intake._text import Msg, fmt, parse_num
from advisor.models import Hardware

REPORTED_SHARE = 0.9  # a stated size this close under a card's smallest is what its driver reports, not a variant

__all__ = ["MAX_MEMORY_GB", "Mem", "choose_memory", "memory_mentions", "tentative"]

MAX_MEMORY_GB = 24_576.0  # 24 TB: beyond the largest servers; larger figures are typos or jokes
_N = r"(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?"

_MEM = re.compile(
    rf"(?:(?<![\w.])|(?<=\d[x×]))(?P<num>{_N})\s*(?P<unit>gb|gib|gigs?|gigabytes?|g|tb|tib|terabytes?|mb|mib)\b(?!\s*/|\s*per\s+s)"
    r"(?P<tail>(?:\s*(?:of|in))?\s*(?:(?:unified|system|shared|total|gpu|graphics|video|(?:lp|g)?ddr\d\w*|hbm\d?e?)\s+)*"
    r"(?P<qual>vram|ram|memory|unified|card|gpu|graphics\s+card))?",
    re.I,
)
# A minus sign written on the number ("-5 GB", "DDR4 −5 GB"), not a dash between words or a range ("DDR4-3200", "16-32GB").
_NEGATIVE = re.compile(r"(?:^|[\s(:=,])[-−–]\s?$")
_MEM_BEFORE = re.compile(r"\b(?P<q>vram|ram|memory)\s*(?:[:=]|of|is|size)?\s*$", re.I)
_MEM_SKIP_BEFORE = re.compile(
    r"(?:\b(?:model|file|weights?|gguf|download)(?:\s+(?:size|file))?\s*(?:is|was|=|:|of|weighs|takes|needs|uses|\()?"
    r"|\b(?:needs?|requires?|required|uses?|using|used|takes?|peak(?:\s+memory)?\s*:?|swap|kv\s+cache|cache|"
    r"download(?:ed|ing)?|free|ssd|disk|size\s*:))\s*(?:about\s+|around\s+|only\s+|~)?$", re.I)
_MEM_SKIP_AFTER = re.compile(r"^\s*(?:of\s+)?(?:ssd|storage|disk|drive|hdd|nvme|flash|swap|download|file|model|"
                             r"weights|free|used|left)\b", re.I)


# A size written right after a weight format is the model file's ("UD-Q2_K_XL, ~380GB"), not the machine's.
_AFTER_QUANT = re.compile(r"(?:\b(?:ud[-_])?i?q\d\w*|\bgguf|\b(?:bf|fp?)16)\s*[,:(]?\s*[~≈]?\s*(?:about\s+|around\s+)?$", re.I)
_DIMMS = re.compile(r"(?<![\w.])(\d{1,2})\s*[x×]\s*$", re.I)  # "16x" before "32GB": memory modules
_RAM_AFTER = re.compile(r"\s*(?:(?:lp)?ddr\d|(?:ecc\s+)?(?:r|lr|u|so)?dimms?\b|ram\b|sticks?\b|modules?\b|ecc\b)", re.I)


@dataclass
class Mem:
    value: float
    qual: str | None  # "vram", "unified", "ram", "mem" or None
    text: str
    start: int = -1  # where it is written in the message


def memory_mentions(msg: Msg, ext: Extraction) -> list[Mem]:
    out = []
    for m in msg.finditer(_MEM):
        before, after = msg.orig[max(0, m.start() - 30):m.start()], msg.orig[m.end():m.end() + 30]
        unit, qual = m.group("unit").lower(), (m.group("qual") or "").lower() or None
        if qual is None and (b := _MEM_BEFORE.search(before)):
            qual = b.group("q").lower()
        if qual is None and re.match(r"\s*(?:of\s+)?(?:lp)?ddr\d", after, re.I):
            qual = "ram"
        variant = bool(re.search(r"\bthe\s*$", before, re.I) and re.match(r"\s*(?:model|version|variant|one)\b", after, re.I))
        if not variant and (_MEM_SKIP_BEFORE.search(before) or _MEM_SKIP_AFTER.search(after)
                            or _AFTER_QUANT.search(before)):
            continue
        if variant:
            qual = "variant"  # "the 24GB model": the machine's memory option, checked against the catalog below
        if unit in ("g", "mb", "mib", "tb", "tib", "terabyte", "terabytes") and qual is None:
            continue  # "2TB" alone is a disk; "16g" alone may be anything
        said = m.group(0).strip()
        value = parse_num(m.group("num")) or 0.0
        value *= 1024 if unit.startswith(("t",)) else (1 / 1024 if unit.startswith("m") else 1)
        if (dimms := _DIMMS.search(before)) and (qual == "ram" or _RAM_AFTER.match(after)
                                                 or re.search(r"\b(?:ram|memory)\s*[:=]?\s*\d{1,2}\s*[x×]\s*$", before, re.I)):
            value *= int(dimms.group(1))  # "16x32GB DDR5", "2x48gb ddr5": the modules add up
            qual = "ram"
            said = dimms.group(0).replace(" ", "") + m.group(0).strip()
        tail = (m.group("tail") or "").lower()
        if qual in ("card", "gpu", "graphics card") or (qual == "ram" and re.search(r"gpu|graphics|video", tail)):
            qual = "vram"
        elif qual == "memory":
            qual = "unified" if "unified" in tail else ("ram" if "system" in tail else "mem")
        msg.claim(m.start(), m.end())
        if _NEGATIVE.search(msg.orig[max(0, m.start() - 3):m.start()]):
            ext.reject(f"-{m.group(0).strip()} is not a memory size (a size cannot be negative); I ignored it.")
            continue
        if not 0 < value <= MAX_MEMORY_GB:
            ext.reject(f"{said} is not a memory size any machine has; I ignored it.")
            continue
        out.append(Mem(round(value, 3), qual, m.group(0).strip(), m.start()))
    return out


def tentative(mems: list[Mem]) -> float | None:
    for q in ("vram", "unified", "mem", None):
        for m in mems:
            if m.qual == q:
                return m.value
    return mems[0].value if mems else None


def choose_memory(ext: Extraction, mems: list[Mem], hw: Hardware | None) -> float | None:
    if not mems:
        return None
    mems = [m for m in mems if m.qual != "variant" or hw is None or m.value in hw.memory_gb_options]
    if not mems:
        return None
    if hw is None or hw.kind not in ("discrete_gpu", "datacenter_gpu"):
        pick = next((m for m in mems if m.qual != "vram"), mems[0])
        if hw is not None and hw.memory_gb_options and pick.value not in hw.memory_gb_options:
            opts = "/".join(fmt(x) for x in hw.memory_gb_options)
            ext.note(f"The {hw.name} ships with {opts} GB; I kept the {fmt(pick.value)} GB you said.")
        return pick.value
    sizes = hw.memory_gb_options
    for m in mems:
        if m.qual == "vram" or (m.qual in (None, "mem", "variant") and (not sizes or m.value in sizes)):
            if hw.n_devices > 1 and sizes and m.value in [o * hw.n_devices for o in sizes] and m.value not in sizes:
                ext.note(f"{m.text} is the total over {hw.n_devices} cards ({fmt(m.value / hw.n_devices)} GB each).")
                return m.value / hw.n_devices
            return m.value
    unq = next((m for m in mems if m.qual in (None, "mem")), None)
    if unq is not None and sizes and REPORTED_SHARE * min(sizes) <= unq.value < min(sizes):
        # what a driver or tool reports of the card ("Tesla T4 (15.0 GB reported)", an L4's 22.5 of 24)
        ext.note(f"{unq.text}: what the driver reports of the {hw.name}'s {fmt(min(sizes))} GB; sized as {fmt(min(sizes))} GB.")
        return min(sizes)
    if unq is not None and sizes and unq.value < min(sizes):
        ext.note(f"{unq.text}: less than the {hw.name}'s {'/'.join(fmt(x) for x in sizes)} GB; taken as this card's "
                 "VRAM (a laptop or cut-down version).")
        return unq.value
    if unq is not None and sizes and unq.value > max(sizes) * max(1, hw.n_devices) and ext.system_ram_gb is None:
        ext.system_ram_gb = unq.value
    ext.note(f"{mems[0].text} looks like system RAM; what counts for a {hw.name} is its own memory "
             f"({'/'.join(fmt(x) for x in sizes)} GB of VRAM).")
    return None


_MEMORY_AFTER = re.compile(r"^[\s,]*(?:with\s+|w/\s*)?\(?(\d{1,4})\s*(?:GB|gigs?)\b(?!\s*(?:of\s+)?(?:system\s+)?ram)", re.I)


def with_memory_after(msg: Msg, phrase: str, end: int, stop: int | None) -> str:
    """A compare candidate's phrase with the memory written right after it ("Mac Studio M3 Ultra 256GB"),
    read between the candidate's end and the next candidate's start (``stop``)."""
    m = _MEMORY_AFTER.match(msg.orig[end:stop if stop is not None else end + 30])
    if not m or f"{m.group(1)}gb" in phrase.replace(" ", "").lower():
        return phrase
    return f"{phrase} {m.group(1)}GB"
