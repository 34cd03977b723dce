"""Device listings people paste to show their machine: read into the words the rest of intake reads.

``nvidia-smi`` (its table, ``-L`` and ``--query-gpu=name,memory.total --format=csv``), ``rocm-smi
--showproductname`` and macOS ``system_profiler`` name the GPUs (and their memory), ``free`` the system RAM, but measure nothing, so they
are not tool output for the importers: each listing becomes one phrase ("2x NVIDIA GeForce RTX 3090 24GB") in
place of its lines, and intake's own machine rules read it.

>>> rewrite_listings("|   0  NVIDIA GeForce RTX 3090   Off | 00000000:01:00.0 Off |  N/A |\\n"
...                  "| 30%   40C  P8   20W / 350W |   10MiB / 24576MiB |  0%  Default |")[0]
'NVIDIA GeForce RTX 3090 24GB'
"""

from __future__ import annotations

import re
from collections import Counter

__all__ = ["is_listing_line", "listing_gpus", "listing_ram_gb", "rewrite_listings"]

# nvidia-smi's table: a GPU's first row "|   0  NVIDIA GeForce RTX 4060 Ti     Off |   00000000:01:00.0  On | …"
# (index, name, persistence mode), its second "|  0%  45C  P8  11W / 165W |  1234MiB / 16380MiB | …".
_SMI_GPU = re.compile(r"^\|\s*(\d{1,2})\s+(?P<name>[A-Za-z][^|]*?)\s+(?:On|Off)\s*\|\s*[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:", re.M)
_SMI_MEM = re.compile(r"^\|[^|\n]*\|\s*(?P<used>\d+)\s*MiB\s*/\s*(?P<total>\d+)\s*MiB\s*\|", re.M)
# nvidia-smi -L: "GPU 0: NVIDIA GeForce RTX 3090 (UUID: GPU-…)"
_SMI_L = re.compile(r"^\s*GPU\s+\d{1,2}:\s*(?P<name>[^()\n]+?)\s*\(UUID:[^)\n]*\)\s*$", re.M)
# nvidia-smi --query-gpu=name,memory.total --format=csv[,noheader]: "NVIDIA GeForce RTX 3090, 24576 MiB"
_SMI_CSV = re.compile(r"^\s*(?P<name>(?:NVIDIA|Tesla|Quadro|GeForce)[^,\n]*?)\s*,\s*(?P<mib>\d+)\s*MiB\s*$", re.M | re.I)
# rocm-smi --showproductname: "GPU[0]		: Card Series: 		Navi 31 [Radeon RX 7900 XTX]" (older) or "… Radeon RX 7900 XTX"
_ROCM = re.compile(r"^\s*GPU\[(\d{1,2})\]\s*:\s*Card [Ss]eries:\s*(?P<name>.+?)\s*$", re.M)
_ROCM_VRAM = re.compile(r"^\s*GPU\[(\d{1,2})\]\s*:\s*VRAM Total Memory \(B\):\s*(\d+)\s*$", re.M)
# system_profiler SPHardwareDataType / SPDisplaysDataType: "Chip: Apple M2 Max", "Memory: 32 GB",
# "Chipset Model: Apple M2 Max" with "Total Number of Cores: 38" (the GPU's cores, in the displays report)
_MAC_CHIP = re.compile(r"^\s*(?:Chip|Chipset Model):\s*(?P<name>Apple M\d[^\n]*?)\s*$", re.M)
_MAC_MEM = re.compile(r"^\s*Memory:\s*(\d{1,4})\s*GB\s*$", re.M)
_MAC_GPU_CORES = re.compile(r"^\s*Total Number of Cores:\s*(\d{1,3})\s*$", re.M)

# free -h / -g / -m / (KiB): "Mem:  62Gi  8.1Gi …" — the first number is the RAM the kernel manages (a little under
# what is installed), its unit a suffix (-h) or the flag's (KiB without one)
_FREE_MEM = re.compile(r"^\s*Mem:\s+(?P<n>\d+(?:[.,]\d+)?)(?P<unit>[KMGT]i?B?)?(?=\s)", re.M)
_FREE_LINE = re.compile(r"^\s*(?:Mem|Swap):\s+\d|^\s*total\s+used\s+free\b", re.M)
_FREE_UNITS = {"k": 2**-20, "m": 2**-10, "g": 1.0, "t": 1024.0}

# Marketed memory sizes, GB: a listing's total (MiB, less what the driver reserves or ECC takes) is read as the
# smallest of these it reaches 98 % of (15,360 MiB on a T4 → 16; 46,068 MiB on an A40 or L40S → 48; 81,559 → 80).
_NOMINAL_GB = (2, 3, 4, 6, 8, 10, 11, 12, 16, 20, 22, 24, 32, 40, 48, 64, 80, 94, 96, 128, 141, 180, 192, 256, 288)


def nominal_gb(total_gib: float) -> int:
    """A card's marketed memory size from the total a listing reports (GiB): the smallest of :data:`_NOMINAL_GB` at
    or above 98 % of it (the rounded total above the largest)."""
    return next((n for n in _NOMINAL_GB if n >= total_gib * 0.98), round(total_gib))


def _clean_name(name: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"\.{2,}|…", "", name)).strip(" ,")


def listing_gpus(text: str) -> list[tuple[str, int | None]]:
    """The GPUs a pasted device listing names, in order: ``[(name, memory GB or None), …]`` (empty: no listing).

    Reads nvidia-smi's table (a name cut short with "..." keeps what is shown), ``nvidia-smi -L``, nvidia-smi's
    CSV query, ``rocm-smi --showproductname`` (with ``--showmeminfo vram`` totals when present) and macOS
    ``system_profiler`` (one Apple chip, its memory and GPU cores).
    """
    gpus = [m.group("name") for m in _SMI_GPU.finditer(text)]
    if gpus:
        mems: list[int | None] = [nominal_gb(int(m.group("total")) / 1024) for m in _SMI_MEM.finditer(text)]
        mems = mems if len(mems) == len(gpus) else [None] * len(gpus)
        return [(_clean_name(n), g) for n, g in zip(gpus, mems, strict=True)]
    if found := _SMI_L.findall(text):
        return [(_clean_name(n), None) for n in found]
    if found := [(m.group("name"), int(m.group("mib"))) for m in _SMI_CSV.finditer(text)]:
        return [(_clean_name(n), nominal_gb(mib / 1024)) for n, mib in found]
    if found := _ROCM.findall(text):
        vram = {int(i): int(b) for i, b in _ROCM_VRAM.findall(text)}
        out: list[tuple[str, int | None]] = []
        for i, n in found:
            inner = re.search(r"\[([^\]]+)\]", n)  # "Navi 31 [Radeon RX 7900 XTX]" → the product in brackets
            gb = vram.get(int(i))
            out.append((_clean_name(inner.group(1) if inner else n), nominal_gb(gb / 2**30) if gb else None))
        return out
    if chip := _MAC_CHIP.search(text):
        name = _clean_name(chip.group("name"))
        if cores := _MAC_GPU_CORES.search(text):
            name += f" {cores.group(1)}-core GPU"
        mem = _MAC_MEM.search(text)
        return [(name, int(mem.group(1)) if mem else None)]
    return []


def listing_ram_gb(text: str) -> int | None:
    """The system RAM a pasted ``free`` report shows, as its marketed size in GB (``Mem: 62Gi`` → 64), else None."""
    m = _FREE_MEM.search(text)
    if m is None:
        return None
    unit = (m.group("unit") or "k")[0].lower()  # a bare number is KiB (free's default)
    gib = float(m.group("n").replace(",", ".")) * _FREE_UNITS[unit]
    if not m.group("unit") and gib < 0.5:  # "free -g" on a tiny box, or numbers in MiB without -m: not a size to use
        return None
    return nominal_gb(gib) if 0.5 <= gib <= 65536 else None


IDLE_SHARE, BUSY_SHARE = 0.05, 0.5  # a card under 5 % of its memory used beside one over half full


def idle_cards(text: str) -> str | None:
    """The sentence for an nvidia-smi table in which some cards hold almost nothing while another is over half full:
    the model is not spread over all of them (a run on one card, or on the CPU for the rest); None otherwise."""
    used = [(int(m.group("used")), int(m.group("total"))) for m in _SMI_MEM.finditer(text)]
    if len(used) < 2:
        return None
    idle = [i for i, (u, t) in enumerate(used) if t and u / t < IDLE_SHARE]
    busy = [i for i, (u, t) in enumerate(used) if t and u / t > BUSY_SHARE]
    if not idle or not busy:
        return None
    say = ", ".join(f"GPU {i} ({used[i][0]:,} of {used[i][1]:,} MiB)" for i in idle)
    full = ", ".join(f"GPU {i} ({used[i][0]:,} MiB)" for i in busy)
    return (f"It also shows {say} almost empty while {full} holds the model: the model is not spread over every card "
            "(set the engine to use them all, e.g. CUDA_VISIBLE_DEVICES and --tensor-split or -sm layer in llama.cpp).")


def _phrase(gpus: list[tuple[str, int | None]]) -> str:
    """``[("RTX 3090", 24), ("RTX 3090", 24)]`` → ``"2x RTX 3090 24GB"``; different cards joined with "and"."""
    counts = Counter(gpus)
    parts = [(f"{n}x " if n > 1 else "") + name + (f" {gb}GB" if gb else "") for (name, gb), n in counts.items()]
    return " and ".join(parts)


_LISTING_LINE = re.compile(r"NVIDIA-SMI\s+[\d.]+|^\s*[|+][-=+|\s]*$|^\|\s*(?:GPU|Fan|Processes|ID|No running)\b|"
                           r"^\s*name,\s*memory\.total|^=+\s*(?:ROCm System Management|Product Info|End of)|"
                           r"^\|[^|\n]*\|\s*\d+\s*MiB\s*/\s*\d+\s*MiB\s*\||"
                           r"^\|\s*\d{1,2}\s+[A-Za-z][^|]*?\s+(?:On|Off)\s*\|\s*[0-9A-Fa-f]{4,8}:|"
                           r"^\|\s+\|\s+\|[^|\n]*\|\s*$|"
                           r"^\|\s*\d{1,2}\s+N/A\s+N/A\s+\d+", re.M)


def is_listing_line(line: str) -> bool:
    """True for a line of a device listing (nvidia-smi's table and rules, ``-L``, its CSV, rocm-smi)."""
    return any(p.search(line) for p in (_LISTING_LINE, _SMI_L, _SMI_CSV, _ROCM, _ROCM_VRAM))


def rewrite_listings(text: str) -> tuple[str, str | None]:
    """The text with a pasted device listing replaced by one phrase naming its GPUs, and a note saying what was read
    (``(text, None)`` when it holds no listing). The listing's lines are dropped; the person's words stay, the phrase
    first (a name said in words after it is the newer statement)."""
    gpus, ram = listing_gpus(text), listing_ram_gb(text)
    if not gpus and ram is None:
        return text, None
    phrase = " and ".join(x for x in (_phrase(gpus), f"{ram}GB RAM" if ram else "") if x)
    mac = _MAC_CHIP.search(text) is not None
    kept = [ln for ln in text.splitlines() if not is_listing_line(ln) and not (ram and _FREE_LINE.search(ln))
            and not (mac and (_MAC_CHIP.match(ln) or _MAC_MEM.match(ln) or _MAC_GPU_CORES.match(ln)))]
    source = " and ".join(x for x in (
        ("system_profiler" if mac else "rocm-smi" if _ROCM.search(text) else "nvidia-smi") if gpus else "",
        "free" if ram else "") if x)
    note = f"Read the machine from what {source} printed: {phrase}."
    if idle := idle_cards(text):
        note += " " + idle
    if any(re.search(r"\.{2,}|…", m.group("name")) for m in _SMI_GPU.finditer(text)):
        note += " nvidia-smi cut the card's name short: if it is a Ti, SUPER or another variant, tell me which."
    return "\n".join([phrase, *kept]), note
