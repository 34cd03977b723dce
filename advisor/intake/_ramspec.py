"""A computer's RAM as people state it ("8 channels DDR5-5200", "DDR4-3200 quad channel", "LPDDR5X-8533",
"12 channels total of DDR5-4800"): the memory system that sets a CPU machine's decode speed.

A stated RAM spec is more specific than the memory a CPU's catalog entry assumes (one row per CPU family, e.g.
"assumed 4-channel DDR5-5200" for a Threadripper 7000), so for a CPU machine it decides the bandwidth; the CPU
entry keeps its cores and family. RAM the catalog has no entry for becomes a machine described by its
computed bandwidth. Peak bandwidth: :func:`knowledge.hardware_seed.peak_bandwidth_gbs`.

Part of the hardware reader (:mod:`advisor.intake._hardware`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from advisor.errors import AmbiguousError, NotFoundError
from advisor.intake._machine import Mention
from advisor.intake._schema import Extraction
from advisor.intake._text import fmt
from advisor.models import Hardware
from knowledge import catalog
from knowledge.hardware_seed import memory_systems, peak_bandwidth_gbs
from knowledge.store import Store

__all__ = ["RAM_WORD", "RamSpec", "cpu_before_ram", "ddr_id", "host_memory", "ram_bandwidth", "ram_machine", "stated_ram"]

_WORDS = {"single": 1, "one": 1, "dual": 2, "double": 2, "two": 2, "quad": 4, "four": 4, "hexa": 6, "six": 6,
          "octa": 8, "octo": 8, "eight": 8, "twelve": 12}
_COUNT = r"\d{1,2}|single|one|dual|double|two|quad|four|hexa|six|octa|octo|eight|twelve"
_TOTAL = r"(?:total|in\s+total|combined|overall|altogether)"
_SPEC = re.compile(
    rf"(?:\b(?P<ch1>{_COUNT})[\s-]*(?:channels?|ch)\b\s*(?P<tot1>{_TOTAL}\s+)?(?:of\s+)?(?:ram\s+|memory\s+)?)?"
    r"\b(?P<gen>(?:lp)?ddr[345]x?)(?:[\s-]*(?P<mts>[1-9]\d{2,3}))?(?:\s*(?:mt/s|mts|mhz))?\b"
    rf"(?:\s*[,(]?\s*(?:in\s+|with\s+)?(?P<ch2>{_COUNT})[\s-]*(?:channels?|ch)\b\)?)?(?P<tot2>\s*{_TOTAL}\b)?",
    re.I,
)
RAM_WORD = re.compile(r"\b(?:lp)?ddr[45]", re.I)  # a machine phrase that names RAM, not a computer


@dataclass(frozen=True)
class RamSpec:
    """RAM stated in a message: generation (``DDR5``, ``LPDDR5X``), transfer rate (MT/s) and 64-bit channels when
    said, whether the channel count is for all sockets together (``total``), and where it was written."""

    gen: str
    mts: int | None
    channels: int | None
    total: bool
    start: int
    end: int
    usual_rate: bool = False  # the rate was not said: the generation's usual one (:data:`LP_USUAL_MTS`)

    def phrase(self, channels: float | None = None) -> str:
        ch = channels or self.channels
        rate = (f"-{self.mts}" + (" (its usual rate in laptops; say yours)" if self.usual_rate else "")) if self.mts else ""
        return (f"{ch:g}-channel " if ch else "") + self.gen + rate


# Soldered laptop memory named without its rate ("32GB LPDDR5X"): the rate most laptops of the generation run
# (JEDEC grades as shipped: LPDDR5X-7500 in AMD Phoenix/Hawk Point and Strix Point laptops, LPDDR5-6400, LPDDR4X-4266).
LP_USUAL_MTS = {"LPDDR5X": 7500, "LPDDR5": 6400, "LPDDR4X": 4266}


def _count(x: str | None) -> int | None:
    if not x:
        return None
    n = int(x) if x.isdigit() else _WORDS[x.lower()]
    return n if 1 <= n <= 24 else None


def stated_ram(text: str) -> RamSpec | None:
    """The first RAM spec in ``text`` that gives a transfer rate or a channel count (a bare "DDR5" says neither).

    >>> stated_ram("Threadripper 7980X with 8 channels DDR5-5200, 768GB")
    RamSpec(gen='DDR5', mts=5200, channels=8, total=False, start=24, end=46)
    >>> stated_ram("16GB DDR5") is None
    True
    """
    for m in _SPEC.finditer(text or ""):
        mts = int(m.group("mts")) if m.group("mts") else None
        ch = _count(m.group("ch1")) or _count(m.group("ch2"))
        if mts is not None and not 1000 <= mts <= 12000:
            mts = None
        gen = m.group("gen").upper()
        usual = mts is None and ch is None and gen in LP_USUAL_MTS
        if usual:
            mts = LP_USUAL_MTS[gen]
        elif mts is None and ch is None:
            continue
        return RamSpec(gen, mts, ch, bool(m.group("tot1") or m.group("tot2")), m.start(), m.end(), usual)
    return None


MAX_CHANNELS = 12  # 64-bit memory channels per socket on the widest platforms (EPYC 9004/9005, Xeon 6 6900P)


def ram_bandwidth(spec: RamSpec, hw: Hardware | None = None, sockets: int = 1) -> tuple[float, str] | None:
    """Bandwidth (GB/s, all sockets together) of the stated RAM on the CPU ``hw``, and the note that says how it
    was worked out; None when it cannot be worked out.

    What the statement leaves out (the rate or the channel count) comes from the CPU's own memory system
    (memory_systems.csv); a CPU entry without one needs both stated. Channels said for a two-socket machine are
    per socket unless said to be the total. With no CPU at all (``hw`` None) the rate must be stated and the
    channel count defaults to two (a desktop or laptop).
    """
    own = memory_systems().get(hw.id) if hw is not None else None
    if hw is not None and own is None and (spec.mts is None or spec.channels is None):
        return None  # a CPU entry with no memory system of its own: only a full statement replaces its figure
    if own is not None and spec.mts is None and own[0] != spec.gen:
        return None  # "DDR4" said of a CPU whose entry is DDR5, with no rate: nothing to compute from
    mts = spec.mts or (own[1] if own else None)
    ch = spec.channels or (own[2] if own else 2)
    if mts is None:
        return None
    # More channels than the CPU has ("4 channels" on a two-channel AM5 desktop: four DIMMs share two channels)
    # cannot all be used; with no CPU named, no platform has more than MAX_CHANNELS per socket.
    cap = own[2] * (max(1, sockets) if spec.total else 1) if own else MAX_CHANNELS * (2 if spec.total else 1)
    capped = ""
    if ch > cap:
        capped = (f" (the {hw.name} has {own[2]:g} memory channels{' per socket' if sockets > 1 else ''}, so "
                  f"{ch:g} cannot all be used: more DIMMs share them)" if hw is not None and own
                  else f" ({ch:g} channels is more than any platform has: counted as {cap:g})")
        ch = cap
    per = peak_bandwidth_gbs(mts, ch)
    total = per if spec.total or sockets <= 1 else per * sockets
    was, where = "", ""
    if hw is not None:
        assumed = hw.bandwidth_gbs * max(1, sockets)
        fitted = f"{own[2]:g}-channel {own[0]}-{own[1]:g}, " if own else ""
        name = re.sub(r"\s*\(?per socket\)?\s*$", "", hw.name)  # the catalog's per-socket entry, named as the machine
        was, where = (f", rather than the catalog's {fitted}{assumed:g} GB/s",
                      f" for the {f'{sockets}× ' if sockets > 1 else ''}{name}")
        if abs(total - assumed) <= 0.01 * assumed:
            was = ", as the catalog has it"  # said, so the reply must not call it "not stated"
    sock = f" × {sockets} sockets" if sockets > 1 and not spec.total else ""
    how = (f"{ch:g} channels × 8 bytes × {mts:g} MT/s{sock} = {total:g} GB/s peak"
           + ("" if spec.channels else f" (channels: {'the CPU’s own' if own else 'two assumed, a desktop or laptop'})"))
    said = spec.phrase(ch) + (" in all" if spec.total and sockets > 1 else "")
    return total, f"Used your RAM, {said}{where}: {how}{was}{capped}."


def ddr_id(store: Store, phrase: str) -> str | None:
    """Catalog id of a RAM spec ("DDR5-6000 dual channel" → ``cpu-ddr5-6000-2ch``), if it has one."""
    m = re.search(r"ddr([45])[\s-]?(\d{4})", phrase, re.I)
    if not m:
        return None
    ch = re.search(r"(\d{1,2})[\s-]?(?:ch|channels?)\b", phrase, re.I)
    hid = f"cpu-ddr{m.group(1)}-{m.group(2)}-{ch.group(1) if ch else 2}ch"
    return hid if hid in catalog.all_hardware(store) else None


def cpu_before_ram(store: Store, men: list[Mention]) -> list[Mention]:
    """A CPU the catalog knows, named beside its RAM ("Threadripper 7980X with 8 channels DDR5-5200"), is the
    machine; the RAM then sets its bandwidth (:func:`advisor.intake._ramspec.ram_bandwidth`)."""
    if not any(RAM_WORD.search(x.phrase) for x in men):
        return men
    for x in men:
        if RAM_WORD.search(x.phrase) or not re.search(r"\d{3,}", x.phrase):
            continue
        try:
            got = catalog.resolve_hardware(store, x.phrase.removeprefix("dual-socket "))
        except (AmbiguousError, NotFoundError):
            continue
        if got.value.kind in ("cpu", "apu") and got.confidence >= 0.85:
            return [x] + [m for m in men if m is not x and not RAM_WORD.search(m.phrase)]
    return men


def ram_machine(ext: Extraction, store: Store, men: list[Mention], ram: RamSpec) -> bool:
    """RAM the catalog has no entry for, named as the machine ("8-channel DDR5-5200", "LPDDR5X-8533, no GPU"): a
    computer described by the RAM's computed bandwidth. True when it was taken so."""
    if men and not RAM_WORD.search(men[0].phrase) or ram.mts is None:
        return False
    if men and ddr_id(store, men[0].phrase):
        return False  # the catalog's own entry ("DDR5-6000 dual channel")
    if not men and ext.hardware_kind not in (None, "cpu"):
        return False
    got = ram_bandwidth(ram, None)
    if got is None:
        return False
    ext.bandwidth_gbs = got[0]
    ext.hardware = f"computer with {ram.phrase(ram.channels or 2)}"
    ext.hardware_kind = "cpu"
    ext.note(got[1])
    return True


def host_memory(ext: Extraction, store: Store, hosts: list[Mention], spec: RamSpec | None) -> None:
    """The system RAM behind a graphics card, where weights left off the card are read (llama.cpp's partial
    offload, ``--n-cpu-moe``): ``ext.host_bandwidth_gbs`` in GB/s, with a note that says how it was worked out.

    From the RAM stated ("+ 128GB DDR5-6000": 2 channels × 8 bytes × 6000 MT/s = 96 GB/s) on the host CPU named
    beside the card when there is one (its own channel count: an EPYC 9654 has 12), else from the host CPU's catalog
    memory system ("EPYC 9654 + 4x RTX 3090": 460.8 GB/s). Nothing is set when neither is said (the prediction
    then assumes the memory usual for the card's year, and says so).

    Args:
        hosts: CPUs named beside the card, in the order written (``x.phrase`` like "EPYC 9654").
        spec: the RAM stated in the message, if any (:func:`stated_ram`).
    """
    cpu, sockets = None, 1
    for x in hosts:
        try:
            got = catalog.resolve_hardware(store, re.sub(r"^dual-socket\s+", "", x.phrase, flags=re.I))
        except (AmbiguousError, NotFoundError):
            continue
        if got.value.kind in ("cpu", "apu") and got.confidence >= 0.85:
            cpu, sockets = got.value, 2 if x.phrase.lower().startswith("dual-socket") else 1
            break
    if spec is not None and (done := ram_bandwidth(spec, cpu, sockets) or ram_bandwidth(spec, None)) is not None:
        ext.host_bandwidth_gbs = done[0]
        ext.note(done[1].replace("Used your RAM", "The system RAM beside the card (where weights left off it are "
                                 "read)", 1))
    elif cpu is not None:
        ext.host_bandwidth_gbs = cpu.bandwidth_gbs * sockets
        name = re.sub(r"\s*\([^)]*\)|\s*\bper[\s-]socket\b", "", cpu.name).strip()
        ext.note(f"The system RAM beside the card (where weights left off it are read): the {name}'s memory, "
                 f"{fmt(cpu.bandwidth_gbs * sockets)} GB/s peak as the catalog has it"
                 + (" for both sockets" if sockets > 1 else "") + "; tell me your RAM (e.g. 'DDR5-6000') if it differs.")
