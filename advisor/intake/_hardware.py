"""Hardware facts in chat text: the machine's name, its memory, GPU cores, bandwidth and compute.

Names are found by small patterns (Apple chips and Mac products, GPU model numbers, a few named
machines, catalog ids) and then checked against the catalog with
:func:`knowledge.catalog.resolve_hardware`; the phrase kept is the user's, tidied
("a 3090" → "RTX 3090", "two RTX 4090s" → "2x RTX 4090"). Cards of one box are joined with " + ", each keeping
the size written after it ("3090 and 3060 12GB" → "RTX 3090 + RTX 3060 12GB"); a card named without its version
("an H100") is taken as its smallest, slowest version, said so, unless a measured rate is to be judged. Memory
sizes are read by :mod:`advisor.intake._memory`.
"""

from __future__ import annotations

import re

from advisor.errors import AmbiguousError, NotFoundError
from advisor.intake._cpu import DDR_GENERATION, default_cpu_memory
from advisor.intake._gpus import gpu_mentions as _gpu_mentions
from advisor.intake._gpus import workstation_pattern as _workstation_pattern
from advisor.intake._machine import (
    Mention,
    count_of,
    hardware_kind,
    strip_count,
)
from advisor.intake._memory import choose_memory, memory_mentions, tentative
from advisor.intake._ramspec import RAM_WORD, ram_bandwidth, stated_ram
from advisor.intake._ramspec import cpu_before_ram as _cpu_before_ram
from advisor.intake._ramspec import ddr_id as _ddr_id
from advisor.intake._ramspec import host_memory as _host_memory
from advisor.intake._ramspec import ram_machine as _ram_machine
from advisor.intake._schema import Extraction
from advisor.intake._several import CPU_NAMES as _CPU_NAMES
from advisor.intake._several import PHONE as _PHONE
from advisor.intake._several import aside as _aside
from advisor.intake._several import chip_with_its_mac as _chip_with_its_mac
from advisor.intake._several import host_cpu as _host_cpu
from advisor.intake._several import is_card as _card
from advisor.intake._several import owned_only as _owned_only
from advisor.intake._several import phone_chip as _phone_chip
from advisor.intake._several import several as _several
from advisor.intake._specs import bandwidth as _bandwidth
from advisor.intake._specs import cpu_cores as _cpu_cores
from advisor.intake._specs import gpu_cores as _gpu_cores
from advisor.intake._text import Msg, fmt, negated
from advisor.models import Hardware
from advisor.understand.symptoms import intel_mac
from knowledge import catalog
from knowledge.catalog._gpus import count_problem
from knowledge.store import Store

_PRODUCTS = r"mac\s?book\s?air|mac\s?book\s?pro|mac\s?mini|mac\s?studio|imac|mac\s?pro|mac\s?book"
_PRODUCT_NAMES = {"macbookair": "MacBook Air", "macbookpro": "MacBook Pro", "macmini": "Mac mini",
                  "macstudio": "Mac Studio", "imac": "iMac", "macpro": "Mac Pro", "macbook": "MacBook"}
# Chips each Mac product shipped with (Apple product history), newest first: the choices offered
# when only the product is named.
_PRODUCT_CHIPS = {
    "MacBook Air": ("M4", "M3", "M2", "M1"), "MacBook": ("M4", "M3", "M2", "M1"),
    "MacBook Pro": ("M4 Max", "M4 Pro", "M4", "M3 Max", "M3 Pro", "M3", "M2 Max", "M2 Pro", "M1 Max", "M1 Pro", "M1"),
    "Mac mini": ("M4 Pro", "M4", "M2 Pro", "M2", "M1"), "Mac Studio": ("M4 Max", "M3 Ultra", "M2 Ultra", "M2 Max",
                                                                      "M1 Ultra", "M1 Max"),
    "iMac": ("M4", "M3", "M1"), "Mac Pro": ("M2 Ultra",),
}
_WITH = r"[\s,(]*(?:with\s+(?:an?\s+|the\s+)?)?(?:apple\s+)?"
_SCREEN = r"(?:1[3-7](?:\.\d)?(?:[\s-]*(?:inch|in|\"|'')|\s))?\s*"
_APPLE = re.compile(
    rf"(?:\b(?P<prod>{_PRODUCTS})\b\s*{_SCREEN}{_WITH})?\b(?:apple\s+)?m(?P<gen>[1-5])(?:\s*|-)(?P<tier>pro|max|ultra)?(?:(?<=pro)s|(?<=max)es|(?<=ultra)s)?\b"
    rf"(?:{_WITH}(?P<cores>\d{{1,2}})\s*-?\s*cores?\b(?!\s*cpu))?",
    re.I,
)
_APPLE_UNKNOWN = re.compile(r"\b(?:Apple\s+)?M(?P<gen>[06-9]|[1-9]\d)\b(?P<rest>(?:\s+(?:Pro|Max|Ultra|[A-Z][a-z]{2,12}))*)")
_MAC_YEAR = re.compile(
    rf"\b(?P<prod>{_PRODUCTS})\b[\s,(]*(?:from\s+|of\s+)?(?:(?:late|early|mid)[\s-]+)?(?P<year>20[0-3]\d)\b"
    rf"|\b(?P<year2>20[0-3]\d)\s+(?P<prod2>{_PRODUCTS})\b",
    re.I,
)
_MAC_ONLY = re.compile(rf"\b(?P<prod>{_PRODUCTS})\b", re.I)
_SPECIALS = re.compile(
    r"\bdgx\s*spark\b|\bgb10\b|\b(?:asus\s+)?ascent\s*gx10\b|\bgx10\b|\bstrix\s*halo\b|\bframework\s+desktop\b|"
    r"\b(?:gmktec\s+)?evo[\s-]?x2\b|\b(?:rog\s+)?flow\s+z13\b|\b(?:ryzen\s*)?ai\s*max\+?\s*(?:pro\s*)?395\b|\bradeon\s*8060s\b"
    r"|\bjetson(?:\s*(?:agx|nx))?\s*(?:orin|thor)(?:\s*(?:nano|nx|agx))?(?:\s*super)?\b|\bagx\s*(?:thor|orin)\b|\borin\s*(?:nano|nx)(?:\s*super)?\b|\b(?:nvidia\s+)?grace(?:\s+cpu)?(?:\s+superchip)?\b"
    r"(?!\s*(?:hopper|blackwell))|\bgrace\s+hopper\b|\bxeon\s+(?:cpu\s+)?max(?:\s+9\d{3})?\b|\b(?:raspberry\s*)?pi\s*5\b|\bepyc(?:\s*[4789]\d{3}\w?)?(?:\s*\(?(?:genoa|turin|bergamo|siena|milan|rome|naples)\)?)?"
    r"|\bgenoa\b|\bturin\b|\bxeon\s*w-?3245\b|\bxeon\s+(?:e[357][\s-]*\d{4}\w*(?:\s*v\d)?|(?:platinum|gold|silver|bronze)\s+\d{4}\w*)|\btitan\s*(?:rtx|xp|x|v)\b"
    # integrated GPUs: Intel Iris Xe and Arc 130V/140V, AMD Radeon 660M-890M and Vega 8/11 (catalog apu entries)
    r"|\b(?:intel\s+)?iris\s*xe\b|\b(?:intel\s+)?arc\s*1[34]0v\b|\b(?:amd\s+)?radeon\s*(?:[678][4-9]0m|vega\s*(?:8|11))\b"
    r"|\b(?<!gtx )(?<!geforce )(?<!quadro )(?<!nvidia )[678][4-9]0m\b(?=\s*(?:i?gpu|graphics|integrated|igp)\b)"
    # bare iGPU names as people write them ("my 780m", "on the 890M", "a laptop with an 8060S", "140V"); not a
    # model size in millions ("gemma-3-270m", "a 780M-parameter model")
    # and not NVIDIA's laptop cards of the same numbers ("GTX 860M", "GeForce 840M")
    r"|(?<![\w.-])(?<!gtx )(?<!geforce )(?<!quadro )(?<!nvidia )(?:[678][4-9]0m|80[456]0s|1[34]0v)\b(?![-_.]\w|\s*(?:params?|parameters?|models?|weights?|tokens?|context|ctx|words?|rows?)\b)"
    r"|\b(?:dual[\s-]channel\s+|\d{1,2}[\s-]channels?\s+(?:total\s+)?(?:of\s+)?)?ddr[45][\s-]?\d{4}"
    r"(?:\s*(?:dual[\s-]channel|\(?\d{1,2}[\s-]?(?:channels?|ch)\)?))?",
    re.I,
)
_SOCKETS = re.compile(r"dual[\s-]socket|\b2[\s-]?sockets?\b|two\s+sockets|\b2p\b|\b(?:2\s*x|dual|two)\s*(?:amd\s+|intel\s+)?$",
                      re.I)  # "2x EPYC 9654", "dual Xeon E5-2690 v4": two sockets
# ----------------------------------------------------------------------------- catalog views
def _id_pattern(store: Store) -> re.Pattern[str]:
    def build() -> re.Pattern[str]:
        ids = sorted(catalog.all_hardware(store), key=len, reverse=True)
        return re.compile(rf"(?<![\w-])(?:{'|'.join(map(re.escape, ids))})(?:x\d{{1,2}})?(?![\w-])", re.I)

    return store.cached("intake:hw_ids", build)


def apple_chips(store: Store) -> list[str]:
    """Apple chips in the catalog, oldest first ("M1", "M1 Pro", ... "M5 Max")."""
    chips = {m.group(1) for h in catalog.all_hardware(store).values()
             if h.kind == "apple_soc" and (m := re.match(r"Apple (M\d(?: Pro| Max| Ultra)?)\b", h.name))}
    tiers = ("", "Pro", "Max", "Ultra")
    return sorted(chips, key=lambda c: (c[:2], tiers.index(c[3:]) if c[3:] in tiers else 9))


def shown_name(store: Store, phrase: str) -> str:
    """The name people read for a machine written as its catalog id (``cpu-ddr4-3200-2ch`` → ``Desktop dual-channel
    DDR4-3200``), when that name resolves back to the same entry; any other phrase as it is."""
    hws = catalog.all_hardware(store)
    hid = phrase.strip().lower()
    if hid not in hws:
        return phrase
    name = hws[hid].name
    try:
        return name if catalog.resolve_hardware(store, name).value.id == hid else phrase
    except (AmbiguousError, NotFoundError):
        return phrase


# ----------------------------------------------------------------------------- names
def _product(raw: str | None) -> str:
    return _PRODUCT_NAMES.get(re.sub(r"\s+", "", raw or "").lower(), "") if raw else ""


def _apple_mentions(msg: Msg) -> list[Mention]:
    out = []
    for m in msg.finditer(_APPLE):
        prod = _product(m.group("prod"))
        chip = f"M{m.group('gen')}" + (f" {m.group('tier').title()}" if m.group("tier") else "")
        cores = int(m.group("cores")) if m.group("cores") else None
        phrase = " ".join(x for x in (prod, chip, f"{cores}-core" if cores else "") if x)
        out.append(Mention(m.start(), m.end(), phrase, cores, prod))
    for m in msg.finditer(_MAC_YEAR):
        prod = _product(m.group("prod") or m.group("prod2"))
        out.append(Mention(m.start(), m.end(), f"{prod} {m.group('year') or m.group('year2')}", product=prod))
    return out


def _unknown_apple(msg: Msg) -> list[Mention]:
    out = []
    for m in msg.finditer(_APPLE_UNKNOWN):
        rest = m.group("rest").strip()
        chip_word = re.match(r"\s*chip\b", msg.s[m.end():], re.I)
        if rest or chip_word or _MAC_ONLY.search(msg.orig[max(0, m.start() - 30):m.start()]):
            out.append(Mention(m.start(), m.end(), f"M{m.group('gen')} {rest}".strip()))
    return out


def _other_mentions(msg: Msg, store: Store) -> list[Mention]:
    out = [Mention(m.start(), m.end(), m.group(0)) for m in msg.finditer(catalog.instance_pattern())]  # "p4d.24xlarge"
    out += [Mention(m.start(), m.end(), re.sub(r"\s+", " ", m.group(0)).strip())
            for m in msg.finditer(_workstation_pattern(store))]
    for m in msg.finditer(_SPECIALS):
        phrase = re.sub(r"\s+", " ", m.group(0)).strip()
        if _SOCKETS.search(msg.orig[max(0, m.start() - 30):m.start()]) and not _ddr_id(store, phrase):
            phrase = f"dual-socket {phrase}"  # advisor.resolve doubles the bandwidth for two sockets
        hid = _ddr_id(store, phrase)
        out.append(Mention(m.start(), m.end(), shown_name(store, hid) if hid else phrase))
    return out


def _mentions(msg: Msg, store: Store, found: list[Mention]) -> list[Mention]:
    """Machine names, in the order written; Macs named without a chip and CPU models come last."""
    for finder in (_other_mentions, lambda ms, _s: _apple_mentions(ms), _gpu_mentions,
                   lambda ms, _s: _unknown_apple(ms)):
        for men in finder(msg, store):
            if not any(men.start < f.end and f.start < men.end for f in found):
                found.append(men)
                msg.claim(men.start, men.end)
    found.sort(key=lambda f: f.start)
    # A Mac named without its chip, or a CPU model, is the machine only when nothing better is named.
    for pat, kind in ((_MAC_ONLY, ""), (_CPU_NAMES, "cpu")):
        for m in msg.finditer(pat):
            msg.claim(m.start(), m.end())
            phrase = _product(m.group("prod")) if kind == "" else re.sub(r"\s+", " ", m.group(0)).strip()
            found.append(Mention(m.start(), m.end(), phrase, product=kind or phrase))
    return _x86_macs(msg, store, found)


def _x86_macs(msg: Msg, store: Store, found: list[Mention]) -> list[Mention]:
    """Intel Macs ("my 2019 intel macbook pro", "an intel iMac") are CPU machines, not Apple Silicon ones: each becomes
    a CPU mention (sized by its processor or RAM), and gives way to a CPU model named with it ("... with an i7-9750H")."""
    out = []
    for men in found:
        mac = men.product in _PRODUCT_NAMES.values() and not re.search(r"\bM\d", men.phrase)
        if mac and intel_mac(msg.orig[max(0, men.start - 40):men.end + 40]) and not _resolves(store, men.phrase):
            men = Mention(men.start, men.end, f"Intel {men.product}", product="cpu", x86_mac=True)
        out.append(men)
    if any(m.product == "cpu" and not m.x86_mac and re.search(r"\d{3,}", m.phrase) for m in out):
        out = [m for m in out if not m.x86_mac]
    return out


def _resolves(store: Store, phrase: str) -> bool:
    try:
        return catalog.resolve_hardware(store, phrase).confidence >= 0.9
    except (AmbiguousError, NotFoundError):
        return False


def _clean_candidates(cands: list[str], product: str) -> list[str]:
    out = []
    for c in cands:
        c = re.sub(r"\s*\([a-z0-9-]+\)$", "", c).strip()
        if re.fullmatch(r"M\d(?: PRO| MAX| ULTRA)?", c):
            c = (f"{product} " if product else "") + c.title().replace("M", "M", 1)
        out.append(c)
    return out


def _fit_memory(store: Store, cands: list[str], memory: float | None) -> list[str]:
    """Drop candidates that do not come with the memory size the user gave ("A100 80GB")."""
    hws = catalog.all_hardware(store)
    keep = [c for c in cands if (m := re.search(r"\(([a-z0-9-]+)\)$", c)) and m.group(1) in hws
            and memory in hws[m.group(1)].memory_gb_options]
    return keep if memory is not None and keep else cands


def _only_fit(store: Store, fitting: list[str], cands: list[str], memory: float | None) -> tuple[str, Hardware] | None:
    """The one catalog entry left once the stated memory is applied, with a name that resolves to it."""
    if memory is None or len(fitting) != 1 or len(cands) < 2:
        return None
    m = re.search(r"^(.*?)\s*\(([a-z0-9-]+)\)$", fitting[0])
    if not m:
        return None
    name, hid = m.group(1), m.group(2)
    try:
        if catalog.resolve_hardware(store, name, memory_gb=memory).value.id == hid:
            return name, catalog.get_hardware(store, hid, memory_gb=memory)
    except (AmbiguousError, NotFoundError):
        pass
    return hid, catalog.get_hardware(store, hid, memory_gb=memory)


def _product_choices(store: Store, product: str) -> list[str]:
    chips = set(apple_chips(store))
    return [f"{product} {c}" for c in _PRODUCT_CHIPS.get(product, ()) if c in chips]


def _resolve_counted(store: Store, phrase: str, memory: float | None, cores: int | None) -> catalog.Match:
    """Resolve a phrase; "8x MI300X" that the catalog cannot count is resolved as one MI300X, times 8."""
    try:
        return catalog.resolve_hardware(store, phrase, memory_gb=memory, gpu_cores=cores)
    except NotFoundError:
        n = count_of(phrase)
        if n < 2:
            raise
        one = catalog.resolve_hardware(store, strip_count(phrase), memory_gb=memory, gpu_cores=cores)
        multi = catalog.get_hardware(store, f"{one.value.id}x{n}", memory_gb=memory)
        return catalog.Match(multi, one.confidence, one.assumptions)


def _resolve(ext: Extraction, store: Store, men: Mention, memory: float | None, cores: int | None) -> Hardware | None:
    if men.phrase in _PRODUCT_CHIPS:
        ext.ambiguous["hardware"] = _product_choices(store, men.phrase)
        return None
    if men.product == "cpu":
        try:  # a CPU model whose memory system the catalog knows ("Ryzen 7 7840HS", "Core Ultra 7 155H",
            # "Snapdragon X Elite"); not "an i7" (a bare brand word resolves to one laptop chip's iGPU)
            got = catalog.resolve_hardware(store, men.phrase, memory_gb=memory)
            numbered = re.search(r"\d{3,}", men.phrase) is not None
            if got.confidence >= 0.85 and (got.value.kind == "cpu" or (numbered and got.value.kind == "apu")):
                ext.hardware, ext.resolved["hardware"] = men.phrase, got.value.id
                for a in got.assumptions:
                    ext.note(a)
                return got.value
        except (AmbiguousError, NotFoundError):
            pass
    if men.product == "cpu":
        ext.hardware_kind = "cpu"  # the question that follows asks for its CPU model or RAM, not "a Mac or a GPU?"
        ext.suggestions["hardware"] = ["DDR5-5600 dual channel", "DDR4-3200 dual channel"]
        if men.x86_mac:
            ext.reject(f"An {men.phrase} runs a model on its x86 CPU (no Apple Silicon GPU), so it is sized like a PC "
                       "without a GPU: tell me its processor (About This Mac, e.g. 'Core i7-9750H') or its RAM.")
            return None
        ext.reject(f"I can't size '{men.phrase}' from its name. For a computer without a supported GPU, tell me its "
                   "RAM (e.g. 'DDR5-5600 dual channel') or its memory bandwidth in GB/s.")
        return None
    try:
        m = _resolve_counted(store, men.phrase.split(" + ")[0], memory, cores)
    except AmbiguousError as e:
        measured = any(v is not None for v in (ext.measured_decode_tps, ext.measured_prefill_tps, ext.measured_ttft_s))
        if isinstance(e, catalog.VariantsError) and e.default is not None and (not measured or e.close):
            # "an A100", "one H100": answered now for the smallest, slowest version, said so (a measured rate is
            # judged against every version instead, so it stays a question, unless the versions are about as fast
            # as each other: an "A100 80GB" PCIe or SXM4).
            ext.hardware, ext.resolved["hardware"] = men.phrase, e.default.value.id
            for a in e.default.assumptions:
                ext.note(a)
            return e.default.value
        fitting = _fit_memory(store, e.candidates, memory)
        one = _only_fit(store, fitting, e.candidates, memory)
        if one is not None:  # the stated memory leaves one entry: "Jetson Orin 64GB"
            name, hw = one
            ext.hardware, ext.resolved["hardware"] = name, hw.id
            ext.note(f"Took '{men.phrase}' with {fmt(memory or 0)} GB as the {hw.name}.")
            return hw
        ext.ambiguous["hardware"] = _clean_candidates(fitting, men.product)
        return None
    except NotFoundError as e:
        cands = _clean_candidates(e.candidates, "")
        ext.suggestions["hardware"] = cands
        ext.reject(f"I don't know the hardware '{men.phrase}'."
                   + (f" Did you mean {', '.join(cands[:3])}?" if cands else "")
                   + " You can also give its memory bandwidth in GB/s.")
        return None
    ext.hardware, ext.resolved["hardware"] = men.phrase, m.value.id
    for a in m.assumptions:
        ext.note(a)
    return m.value


# ----------------------------------------------------------------------------- entry point
def extract_hardware(msg: Msg, ext: Extraction, store: Store, *, known: str | None = None) -> None:
    """Read hardware name, memory, GPU cores, bandwidth and TFLOPS; set them on ``ext``.

    Args:
        msg (Msg): the message (claimed spans are skipped).
        ext (Extraction): receives facts, notes and problems.
        store (Store): the knowledge store.
        known (str | None): hardware already known from earlier turns, to interpret memory sizes.
    """
    ids = [Mention(m.start(), m.end(), shown_name(store, m.group(0).lower())) for m in msg.finditer(_id_pattern(store))]
    for i in ids:
        msg.claim(i.start, i.end)
    _bandwidth(msg, ext)
    mems = memory_mentions(msg, ext)
    cores = _gpu_cores(msg)
    said = [x for x in _mentions(msg, store, ids) if not negated(msg, x.start)]
    men = [x for x in said if not _aside(msg, x)] or _owned_only(msg, ext, said)
    men = _chip_with_its_mac(msg, men)
    spec = stated_ram(msg.orig)
    if any(x.product != "cpu" and _card(x.phrase) for x in men):
        # A graphics card is the machine; the CPU and RAM named beside it are its host ("4090 + 96GB DDR5-5600,
        # Ryzen 9 7950X"), the card first.
        men = sorted((x for x in men if not RAM_WORD.search(x.phrase)), key=lambda x: _host_cpu(x))
    elif spec is not None:
        men = _cpu_before_ram(store, men)
    men = _several(msg, ext, store, men)
    if (phone := _PHONE.search(msg.orig)) is not None and (not men or any(_phone_chip(msg, phone, x) for x in men)):
        men = []  # "ipad pro m4", "android phone (snapdragon 8 gen 3)": the chip is the phone's or tablet's
    # RAM alone after a CPU was named ("I upgraded to DDR5-6400"): that CPU's memory, not a new machine.
    known_cpu = (_known_cpu(store, known) if spec is not None and all(RAM_WORD.search(x.phrase) for x in men)
                 else None)
    if known_cpu is not None:
        men = []
    elif spec is not None and _ram_machine(ext, store, men, spec):
        men = []
    if ext.compare_hardware and len(men) > 1:
        mems = [m for m in mems if m.start < men[1].start]  # a later candidate's memory is that candidate's
    hw = None
    if men and men[0].product != "cpu" and (why := count_problem(msg.orig[:men[0].end], msg.orig[men[0].end:men[0].end + 16])) is not None:
        ext.reject(why)  # "1.5x RTX 4090", "0x", "9999x H100": no machine, and said so
        men = []
    if men:
        first = men[0]
        if cores is not None and first.product != first.phrase and re.match(r"(?:Mac\w* \w+ )?M\d", first.phrase) \
                and not first.cores:
            first.phrase += f" {cores}-core"
        hw = _resolve(ext, store, first, tentative(mems), cores or first.cores)
        # A CPU named beside a GPU is that PC's host ("i7-12700k, 32gb, rtx 3080"), not a second machine.
        others = list(dict.fromkeys(x.phrase for x in men[1:] if x.phrase != first.phrase and not _host_cpu(x)))
        if others and not ext.compare_hardware:
            ext.note(f"You also mentioned {', '.join(others)}; I'm using {first.phrase} for now "
                     "(compare ranks several machines side by side).")
        if cores is None and first.cores and hw is not None and hw.gpu_cores == first.cores:
            cores = first.cores
    elif known:
        try:
            hw = catalog.resolve_hardware(store, known).value
        except (AmbiguousError, NotFoundError):
            hw = None
    ext.gpu_cores = cores
    if (hw is not None and hw.kind in ("cpu", "apu")) or (hw is None and ext.hardware_kind == "cpu"):
        ext.cpu_cores = _cpu_cores(msg)  # "a 64-core Threadripper": sizes the prefill compute of a CPU family entry
    gpu_like = (hw is not None and hw.kind in ("discrete_gpu", "datacenter_gpu")) or bool(
        hw is None and men and _card(men[0].phrase)) or bool(not men and known and _card(known))
    ram = [m for m in mems if m.qual == "ram"] if gpu_like else []
    if ram:
        ext.system_ram_gb = ram[0].value
        ext.note(f"{ram[0].text} is system RAM beside the GPU, not its VRAM.")
        mems = [m for m in mems if m is not ram[0]]
    if gpu_like and men and not ext.compare_hardware:
        _host_memory(ext, store, [x for x in men[1:] if _host_cpu(x)], spec)  # "+ 128GB DDR5-6000", "EPYC 9654 + 4x 3090"
    mixed_box = bool(men) and " + " in men[0].phrase
    ext.memory_gb = None if mixed_box else choose_memory(ext, mems, hw)  # a mixed box: each card has its own
    if gpu_like and hw is None and ext.memory_gb is not None and not any(m.qual in ("vram", "mem", None, "variant") for m in mems
                                                                          if m.value == ext.memory_gb):
        ext.memory_gb = None
    if (hw is not None and ext.memory_gb is None and hw.memory_gb_options and not ext.bandwidth_gbs
            and _BASE_CONFIG.search(msg.orig)):
        ext.memory_gb = min(hw.memory_gb_options)
        ext.note(f"Took the base {hw.name} as its smallest memory size, {fmt(ext.memory_gb)} GB.")
    if hw is not None and hw.n_devices > 1 and ext.gpu_count is None:
        ext.gpu_count = hw.n_devices
    elif men and (n := count_of(men[0].phrase if ext.hardware is None else ext.hardware)) > 1:
        ext.gpu_count = n
    if not men and phone is not None:
        ext.reject(f"I don't size phones or tablets ({phone.group(0).strip()}): their chips and memory limits are not in "
                   "my catalog. Name a Mac, a PC (its GPU, or its CPU and RAM) or a server to size a model for.")
    if ext.hardware is None and not men and known_cpu is None:
        ext.hardware_kind = hardware_kind(msg)
        if ext.hardware_kind == "cpu" and DDR_GENERATION.search(msg.orig):  # "no GPU, 64GB DDR5": the generation's usual speed
            default_cpu_memory(ext, msg.orig)
    if hw is not None and hw.kind in ("cpu", "apu") and spec is not None and not ext.bandwidth_gbs and men \
            and not RAM_WORD.search(men[0].phrase) and (got := ram_bandwidth(
                spec, hw, 2 if men[0].phrase.startswith("dual-socket") else 1)):
        ext.bandwidth_gbs = got[0]  # a CPU's stated RAM decides its bandwidth; the entry keeps its cores
        ext.note(got[1])
        ext.notes = [n for n in ext.notes if not n.startswith("Memory not stated")]  # it was stated
    elif known_cpu is not None and spec is not None and not ext.bandwidth_gbs and known and (got := ram_bandwidth(
            spec, known_cpu, 2 if known.lower().startswith("dual-socket") else 1)):
        ext.bandwidth_gbs = got[0]  # "I upgraded to DDR5-6400": the CPU named before, with the RAM said now
        ext.note(got[1])
    elif hw is not None and men and (ext.bandwidth_gbs or ext.tflops):
        ext.note(f"I use the catalog's figures for the {hw.name} ({fmt(hw.bandwidth_gbs)} GB/s) rather than "
                 "the numbers you gave.")
        ext.bandwidth_gbs = ext.tflops = None


def _known_cpu(store: Store, known: str | None) -> Hardware | None:
    """The catalog CPU an earlier turn named (``known``), when it is one: RAM said in a later turn belongs to it."""
    if not known:
        return None
    try:
        hw = catalog.resolve_hardware(store, re.sub(r"^dual-socket\s+", "", known, flags=re.I)).value
    except (AmbiguousError, NotFoundError):
        return None
    if hw.custom or hw.kind not in ("cpu", "apu") or re.match(r"(?:lp)?ddr\d", hw.family or "", re.I):
        return None  # a described computer or a generic RAM entry: the new RAM describes a new one
    return hw


# "the base Mac mini", "M4 base model", "entry-level MacBook Air": the configuration with the least memory.
_MACHINE_WORD = r"(?:mac(?:book)?(?:\s*(?:air|pro|mini|studio))?|imac|m[1-5](?:\s*(?:pro|max|ultra))?|laptop|machine|config(?:uration)?|spec)"
_BASE_CONFIG = re.compile(rf"\b(?:base|entry[\s-]level|cheapest|lowest[\s-]spec)(?:\s+model)?\s+(?:(?!(?:on|with|for|of|in|and|to)\b)\w+\s+){{0,2}}{_MACHINE_WORD}\b|"
                          rf"\b{_MACHINE_WORD}\s+(?:(?!(?:on|with|for|of|in|and|to|llama|qwen|gemma|mistral|phi)\b)\w+\s+){{0,2}}(?:base|entry[\s-]level)(?:\s+(?:model|config(?:uration)?|version|spec))?"
                          r"\b(?!\s+(?:of|llm|weights|checkpoint|instruct))", re.I)
