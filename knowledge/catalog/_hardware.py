"""Hardware names → catalog entries: Apple chips and Macs, GPUs, CPUs/APUs/boards, RAM specs.

Order: an exact id; several cards joined by "+", "&" or "plus" (a mixed box, :mod:`knowledge.catalog._mixed`);
an Apple chip or Mac product; a GPU (:mod:`knowledge.catalog._gpus`, which
also reads the GPU count); a CPU, APU or board by its model number (``memory_systems.csv``); a
RAM spec ("DDR5-6000 dual channel"); fuzzy matching (rapidfuzz) as the last resort. Bins of one
chip resolve to the common bin with the assumption stated; distinct products raise
:class:`~advisor.errors.AmbiguousError`; an unknown name raises
:class:`~advisor.errors.NotFoundError` with the closest entries.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from rapidfuzz import fuzz, process

from advisor.errors import AmbiguousError, NotFoundError
from knowledge.catalog._cloud import cloud_instance
from knowledge.catalog._gpus import VariantsError, gpu_brand, resolve_gpu
from knowledge.catalog._load import Match, all_hardware, all_known_hardware, with_memory
from knowledge.catalog._mixed import GPU_KINDS, host_cpu_note, mixed_hardware
from knowledge.hardware_seed import memory_system_names
from knowledge.seed import read_csv, split_hw_id
from knowledge.store import Store

__all__ = ["closest_hardware", "resolve_hardware"]

_APPLE = re.compile(r"\bm\s?([1-5])(?:[\s-]*(?:mini[\s-]+)?(pro|max|ultra)(?:(?<=pro)s|(?<=max)es|(?<=ultra)s)?)?\b")
_CORES = re.compile(r"\b(\d{1,2})\s*-?\s*(?:core|c)\b(?:\s*(gpu|cpu))?")
_GPU_CORES = re.compile(r"\b(\d{1,2})\s*-?\s*(?:core|c)\s*gpu\b|\bgpu\s*(?:with\s*)?(\d{1,2})\s*-?\s*cores?\b")

# Which chip a Mac of a given year ships with (Apple product history), for "MacBook Air 2022".
_CPU_WORD = re.compile(r"\b(?:ryzen|core\s?i[3579]|i[3579][\s-]\d{4}|xeon|epyc|threadripper|celeron|pentium|"
                       r"snapdragon|graviton|altra)\b")
# A host CPU's full name beside a card ("RX 9070 XT with a Ryzen 5 7600", "RTX 3090, Xeon E5-2690 v4 x2"): its model
# number is no card (an RX 7600) and its "x2" no card count, so it is taken out before the card is looked up.
_CPU_NAME = re.compile(
    r"\b(?:amd\s+)?ryzen\s+(?:threadripper\s+)?(?:pro\s+)?(?:ai\s+)?(?:max\+?\s+)?(?:[3579]\s+)?(?:pro\s+)?(?:hx\s+)?"
    r"\d{3,4}\w*|\b(?:intel\s+)?(?:core\s+)?i[3579][\s-]\d{4,5}\w*|\b(?:intel\s+)?core\s+ultra\s+[3579]\s+\d{3}\w*"
    r"|\bxeon(?:\s+(?:gold|silver|platinum|bronze|max|w))?(?:\s*-?\s*(?:e\d-)?[a-z]?\d{4}\w*)?(?:\s+v\d)?(?:\s*[x×]\s*\d)?"
    r"|\bepyc(?:\s+\d{4}\w*)?(?:\s*[x×]\s*\d)?", re.I)
_GPU_SERIES = re.compile(r"\b(?:rtx|gtx|rx|radeon|geforce|quadro|tesla|instinct|arc|nvidia|gpus?|gfx\d+\w*)\b")

_MAC_YEARS: dict[str, dict[int, str]] = {
    "macbook air": {2020: "m1", 2022: "m2", 2023: "m2", 2024: "m3", 2025: "m4", 2026: "m5"},
    "mac mini": {2020: "m1", 2023: "m2", 2024: "m4"},
    "imac": {2021: "m1", 2023: "m3", 2024: "m4"},
    "macbook pro": {2020: "m1", 2021: "m1 pro|m1 max", 2023: "m2 pro|m2 max|m3|m3 pro|m3 max",
                    2024: "m4|m4 pro|m4 max", 2025: "m5", 2026: "m5 pro|m5 max"},
    "mac studio": {2022: "m1 max|m1 ultra", 2023: "m2 max|m2 ultra", 2025: "m4 max|m3 ultra"},
}


def _norm(text: str) -> str:
    t = text.lower().replace("®", "").replace("™", "").replace("(tm)", " ").replace("(r)", " ")
    t = re.sub(r"[_,;()\[\]/]+", " ", t)
    return re.sub(r"\s+", " ", t).strip()


def closest_hardware(store: Store, text: str, limit: int = 5) -> list[str]:
    """Names (with ids) of the catalog entries closest to ``text`` (rapidfuzz WRatio), best first."""
    hws = all_known_hardware(store)
    choices = store.cached("catalog:hw_choices", lambda: {h.id: f"{h.name} {h.id}".lower() for h in hws.values()})
    brand = gpu_brand(text)  # "MX 450" names NVIDIA: never AMD's Radeon Pro 450 among the closest
    if brand is not None:
        choices = {k: v for k, v in choices.items() if hws[k].vendor == brand}
    got = process.extract(_norm(text), choices, scorer=fuzz.WRatio, limit=limit)
    return [f"{hws[k].name} ({k})" for _, _, k in got]


def _apple(store: Store, t: str, memory_gb: float | None, gpu_cores: int | None) -> Match | None:
    hws = all_hardware(store)
    found = list(_APPLE.finditer(t))
    m = max(found, key=lambda x: bool(x.group(2))) if found else None  # "M1 (Apple M1 Max preset)": the M1 Max
    chip = None
    if m:
        chip = f"m{m.group(1)}" + (f" {m.group(2)}" if m.group(2) else "")
    else:
        for product, years in _MAC_YEARS.items():
            if product in t:
                y = re.search(r"\b(20[12]\d)\b", t)
                if not y:
                    chips = sorted({c for v in years.values() for c in v.split("|")})
                    tier = re.search(r"\b(pro|max|ultra)\b", t.replace(product, ""))
                    chips = [c for c in chips if tier and c.endswith(tier.group(1))] or chips  # "Mac Studio Ultra"
                    raise AmbiguousError(
                        f"Which chip does your {product.title()} have? ({', '.join(c.upper() for c in chips)}; "
                        "'About This Mac' shows it.)",
                        [c.upper() for c in chips],
                    )
                if int(y.group(1)) in years:
                    options = years[int(y.group(1))].split("|")
                    if len(options) > 1:
                        raise AmbiguousError(
                            f"A {product.title()} from {y.group(1)} came with several chips: "
                            f"{', '.join(o.upper() for o in options)}. Which one is it?",
                            [o.upper() for o in options],
                        )
                    chip = options[0]
                break
    if chip is None:
        return None
    prefix = "apple-" + chip.replace(" ", "-") + "-"
    tier_given = " " in chip
    cands = [h for h in hws.values() if h.id.startswith(prefix) and (tier_given or h.id.count("-") == 2)]
    if not cands:
        return None
    cands.sort(key=lambda h: h.gpu_cores or 0)
    if gpu_cores is None:
        gm = _GPU_CORES.search(t)
        if gm:
            gpu_cores = int(gm.group(1) or gm.group(2))
        else:
            for cm in _CORES.finditer(t):
                if cm.group(2) != "cpu" and int(cm.group(1)) in {h.gpu_cores for h in cands}:
                    gpu_cores = int(cm.group(1))
    assumptions: list[str] = []
    if gpu_cores is not None:
        exact = [h for h in cands if h.gpu_cores == gpu_cores]
        if exact:
            return Match(with_memory(exact[0], memory_gb), 0.98)
        assumptions.append(f"{chip.upper()} has no {gpu_cores}-core GPU in the catalog; ")
    pool = cands
    if memory_gb is not None:
        fit = [h for h in cands if memory_gb in h.memory_gb_options]
        pool = fit or pool
    pick = pool[-1]
    others = [h for h in cands if h.id != pick.id]
    if others:
        other_txt = ", ".join(f"{h.gpu_cores}-core" for h in others)
        assumptions.append(
            f"GPU core count not stated: assumed the {pick.name} ({pick.bandwidth_gbs:g} GB/s); "
            f"the {other_txt} version differs — say so to refine."
        )
    elif assumptions:
        assumptions.append(f"using the {pick.name}.")
    return Match(with_memory(pick, memory_gb), 0.85 if others else 0.95, ["".join(assumptions)] if assumptions else [],
                 [h.id for h in others])


def _memory_patterns(store: Store) -> list[tuple[re.Pattern[str], str, str]]:
    def build() -> list[tuple[re.Pattern[str], str, str]]:
        out = []
        for phrase, hid, assumption in memory_system_names():
            body = phrase[3:] if phrase.startswith("re:") else re.escape(phrase).replace(r"\ ", r"\s?")
            out.append((re.compile(rf"(?<![\w+]){body}(?![\w+])"), hid, assumption))
        return out

    return store.cached("catalog:memory_patterns", build)


@lru_cache(maxsize=1)
def _channel_table() -> dict[str, tuple[float, str]]:
    return {r["hw_id"]: (float(r["channels"]), r["memory"]) for r in read_csv("memory_systems.csv") if r["channels"]}


def _channels(hw_id: str) -> tuple[float, str] | None:
    return _channel_table().get(hw_id)


def _cpu(store: Store, t: str, memory_gb: float | None) -> Match | None:
    """A CPU, APU or board named by model number; its memory system assumed unless stated."""
    hws = all_known_hardware(store)
    t2 = re.sub(r"[-_]", " ", t)
    hits = []
    for pat, hid, assumption in _memory_patterns(store):
        m = pat.search(t2)
        if m and hid in hws:
            hits.append((m.start(), hid, assumption))
    if not hits:
        return None
    hits.sort()
    if re.search(r"\bcpu[\s-]only\b|\bon (?:the )?cpu\b", t2):
        pick = next((h for h in hits if hws[h[1]].kind == "cpu"), hits[0])
    elif re.search(r"\bigpu\b|integrated|vulkan|\bgpu\b", t2):
        pick = next((h for h in hits if hws[h[1]].kind == "apu"), hits[0])
    else:
        pick = hits[0]
    hw = hws[pick[1]]
    ddr = re.search(r"\b(?:lp)?ddr([45])x?\s?(\d{4})\b", t2)
    ch = _channels(hw.id)
    if ddr and ch:
        mts = float(ddr.group(2))
        bw = round(ch[0] * 8 * mts / 1000, 1)
        hw = hw.model_copy(update={"bandwidth_gbs": bw, "notes": f"{hw.notes}; bandwidth from the stated RAM: "
                                   f"{ch[0]:g} x 64-bit channels x 8 bytes x {mts:g} MT/s = {bw:g} GB/s"})
        return Match(with_memory(hw, memory_gb), 0.9)
    return Match(with_memory(hw, memory_gb), 0.85 if pick[2] else 0.92, [pick[2]] if pick[2] else [])


def _ddr(store: Store, t: str, memory_gb: float | None) -> Match | None:
    hws = all_known_hardware(store)
    cpu = re.search(r"\bddr([45])[- ]?(\d{4})\b", t)
    if not cpu or re.search(r"epyc|genoa|turin|xeon", t):
        return None
    ch = re.search(r"\b(\d{1,2}|dual|quad|eight|twelve)[- ]?(?:ch|channels?)\b", t)
    words = {"dual": "2", "quad": "4", "eight": "8", "twelve": "12"}
    chans = words.get(ch.group(1), ch.group(1)) if ch else "2"
    hid = f"cpu-ddr{cpu.group(1)}-{cpu.group(2)}-{chans}ch"
    if hid in hws:
        return Match(with_memory(hws[hid], memory_gb), 0.9,
                     [] if ch else ["Channel count not stated: assumed dual channel (a desktop)."])
    return None


# ROCm/LLVM target names (as rocminfo, llama.cpp and vLLM print them) → the products built on that chip.
# Source: LLVM AMDGPU backend processor table, https://llvm.org/docs/AMDGPUUsage.html#processors
_GFX: dict[str, tuple[str, ...]] = {
    "gfx906": ("Instinct MI50", "Instinct MI60", "Radeon VII"), "gfx908": ("Instinct MI100",),
    "gfx90a": ("Instinct MI210", "Instinct MI250", "Instinct MI250X"),
    "gfx942": ("Instinct MI300X", "Instinct MI300A", "Instinct MI325X"), "gfx950": ("Instinct MI350X", "Instinct MI355X"),
    "gfx1030": ("RX 6800", "RX 6800 XT", "RX 6900 XT", "RX 6950 XT", "Radeon PRO W6800"),
    "gfx1031": ("RX 6700 XT", "RX 6750 XT"), "gfx1032": ("RX 6600", "RX 6600 XT", "RX 6650 XT"),
    "gfx1100": ("RX 7900 XTX", "RX 7900 XT", "RX 7900 GRE", "Radeon PRO W7900", "Radeon PRO W7800"),
    "gfx1101": ("RX 7800 XT", "RX 7700 XT"), "gfx1102": ("RX 7600", "RX 7600 XT"),
    "gfx1103": ("Radeon 780M",), "gfx1150": ("Radeon 890M", "Radeon 880M"), "gfx1151": ("Ryzen AI Max+ 395",),
    "gfx1200": ("RX 9060 XT",), "gfx1201": ("RX 9070 XT", "RX 9070"),
}


def _gfx(store: Store, t: str, memory_gb: float | None) -> Match | None:
    """A bare ROCm target ("gfx1100"): the one product on that chip, else a question listing them."""
    m = re.search(r"\bgfx(\d{2,4}[a-z]?)\b", t)
    if not m or f"gfx{m.group(1)}" not in _GFX:
        return None
    names = _GFX[f"gfx{m.group(1)}"]
    if len(names) == 1:
        got = resolve_hardware(store, names[0], memory_gb=memory_gb)
        return Match(got.value, 0.85, [*got.assumptions, f"gfx{m.group(1)} is the ROCm target of the {names[0]}."])
    raise AmbiguousError(f"gfx{m.group(1)} is the ROCm target of several products: {', '.join(names)}. Which one is it?",
                         list(names))


def card_head(store: Store, text: str) -> str:
    """The card named before a tool's preset ("RTX 3080 (RTX 3080 Ti (12 GB) preset; CPU i7)" → "RTX 3080") when
    that name alone is a GPU; else the text as written."""
    text = text.strip()[:300]  # a name, not a paste: bounded work, as resolve_hardware reads it
    head = drop_presets(text)
    if head == text or not head:
        return text
    try:
        return head if resolve_hardware(store, head).value.kind in _GPU_KIND else text
    except (AmbiguousError, NotFoundError):
        return text


# A parenthetical that annotates a card rather than names it: a leaderboard's chosen preset, or a benchmark
# harness's report of the run ("(8.0 GB reported, host CPU AMD Ryzen 5 3600, linux)": the host's "2 x Xeon" is no
# card count, its "Ryzen 5 7600" no RX 7600, and the usable "15.0 GB" of a 16 GB T4 no other T4).
_ANNOTATION = re.compile(r"\bpreset\b|\bhost\s+cpu\b|\bGB\s+reported\b", re.I)


def drop_presets(text: str) -> str:
    """Without parentheticals that annotate the card (:data:`_ANNOTATION`): a tool's preset ("RTX 4070 (RTX 4070 Ti
    (12 GB) preset; CPU …)", a leaderboard's chosen profile, which may not be the card named before it) or a
    harness's report of the host ("GTX 1070 (8.0 GB reported, host CPU AMD Ryzen 5 3600, linux)")."""
    out, i = [], 0
    while i < len(text):
        if text[i] == "(":
            depth, j = 0, i
            while j < len(text):
                depth += {"(": 1, ")": -1}.get(text[j], 0)
                if depth == 0:
                    break
                j += 1
            group = text[i:j + 1]
            if _ANNOTATION.search(group) and text[:i].strip():
                i = j + 1
                continue
        out.append(text[i])
        i += 1
    return "".join(out).strip()


def _text_memory(t: str) -> float | None:
    mems = [float(x) for x in re.findall(r"\b(\d{1,4}(?:\.\d+)?)\s?gb\b", t) if 2 <= float(x) <= 1536]
    return max(mems) if mems else None


_STOPWORDS = frozenset({"and", "the", "a", "an", "my", "with", "of", "on", "in", "for", "or", "plus", "i", "have"})
_MIXED_SPLIT = re.compile(r"\s*\+\s*|\s+plus\s+|\s*&\s*|\s+and\s+(?:an?\s+|one\s+)?", re.I)
_GPU_KIND = GPU_KINDS


def _mixed_box(store: Store, parts: list[str]) -> Match | None:
    """Several cards in one machine ("RTX 4090 + RTX 3090", "2x 3090 + 3060 12GB"): the combined device of
    :func:`knowledge.catalog._mixed.mixed_hardware` (layer split); the same card named twice is ``...x2``.
    None when a part names nothing ("Ryzen AI Max+ 395" is one name with a plus in it)."""
    got: list[Match] = []
    for p in parts:
        try:
            got.append(resolve_hardware(store, p))
        except VariantsError as e:
            if e.default is None:
                raise
            got.append(e.default)
        except (AmbiguousError, NotFoundError):
            return None
    hws = [g.value for g in got]
    cpus = [h for h in hws if h.kind == "cpu"]
    if cpus and any(h.kind in _GPU_KIND for h in hws) and all(h.kind in (*_GPU_KIND, "cpu") for h in hws):
        # "Arc A770 + Core i5-12600KF (64GB)": the card(s), with that CPU as the host (its RAM is not VRAM)
        got = [g for g in got if g.value.kind in _GPU_KIND]
        hws = [g.value for g in got]
        host = host_cpu_note(cpus[0])
        got = [Match(g.value.model_copy(update={"host_bandwidth_gbs": g.value.host_bandwidth_gbs or cpus[0].bandwidth_gbs}),
                     g.confidence, [*g.assumptions, host]) for g in got]
        hws = [g.value for g in got]
        if len(got) == 1:
            return got[0]
    if any(h.kind not in _GPU_KIND for h in hws):
        return None  # "Snapdragon X Plus", "M4 Max + RTX 5090": not cards of one box (the name is read as a whole)
    notes = [a for g in got for a in g.assumptions]
    conf = min(g.confidence for g in got)
    if len({split_hw_id(h.id)[0] for h in hws}) == 1 and len({h.memory_gb for h in hws}) == 1:
        n = sum(h.n_devices for h in hws)
        return Match(with_memory(hws[0], hws[0].memory_gb, n) if hws[0].n_devices == 1 else
                     with_memory(all_known_hardware(store)[split_hw_id(hws[0].id)[0]], hws[0].memory_gb, n), conf, notes)
    box = mixed_hardware(hws)
    return Match(box, conf, [*notes, f"Mixed GPUs ({box.name}): {box.notes}."])


def resolve_hardware(
    store: Store, text: str, *, memory_gb: float | None = None, gpu_cores: int | None = None
) -> Match:
    """Resolve what a person wrote ("M2 Max 38-core", "MacBook Air 2022", "my 4060", "8x H100", "Ryzen 7 7840HS").

    Args:
        store: the knowledge store.
        text: the name as written (a phrase; at most 300 characters are read).
        memory_gb: memory the user stated, used to pick between bins and kept on the result; read
            from the text ("MacBook Pro M4 Max 128GB") when not given.
        gpu_cores: GPU core count if stated separately.

    Returns:
        Match: ``value`` is a :class:`Hardware` (``n_devices`` > 1 for "2x 4090"); ``assumptions``
        says what was assumed (an unstated GPU bin, memory system or variant).

    Raises:
        NotFoundError: nothing matches well; ``candidates`` lists the closest entries.
        AmbiguousError: several entries that differ in what matters (e.g. H100 PCIe vs SXM).
    """
    raw = (text or "").strip()[:300]  # a name, not a paste: bounded work
    if not raw:
        raise NotFoundError("No hardware given.", [])
    head = drop_presets(raw)
    if head != raw and head:
        # A leaderboard's "RTX 4070 (RTX 4070 Ti (12 GB) preset; CPU …)": a card named first is the card; a bare
        # "M1 (Apple M1 Max (64 GB) preset; CPU Apple M1 Max)" is not specific enough, so the whole text is read.
        try:
            hm = resolve_hardware(store, head, memory_gb=memory_gb, gpu_cores=gpu_cores)
            if hm.value.kind in _GPU_KIND:
                return hm
        except (AmbiguousError, NotFoundError):
            pass
    t = _norm(raw)
    hws = all_known_hardware(store)
    base, n = split_hw_id(t)
    if base in hws:
        return Match(with_memory(hws[base], memory_gb, n), 1.0)
    if (cloud := cloud_instance(store, raw)) is not None:  # "p4d.24xlarge": 8x A100 40GB
        return cloud
    if len(parts := [p for p in _MIXED_SPLIT.split(raw) if p.strip()]) > 1 and (box := _mixed_box(store, parts)):
        return box
    mem = memory_gb if memory_gb is not None else _text_memory(t)
    m = _apple(store, t, mem, gpu_cores)
    if m:
        return m
    if re.search(r"\b(?:igpu|integrated)\b", t) or (_CPU_WORD.search(t) and not _GPU_SERIES.search(t)):
        # "Ryzen 5 7600" is a CPU: its model number is also an RX 7600, and "5 7600" is no GPU count
        m = _cpu(store, t, memory_gb)
        if m:
            return m
    g = resolve_gpu(store, _CPU_NAME.sub(" ", raw) if _GPU_SERIES.search(t) else raw, memory_gb)
    if g and ((g.value.release_year or 0) >= 2016 or gpu_brand(raw) == g.value.vendor):
        return g  # "GTX 860M" names NVIDIA: the 2014 laptop card, not AMD's Radeon 860M iGPU
    m = _cpu(store, t, memory_gb) or g or _ddr(store, t, memory_gb)  # "780M" today is AMD's iGPU, not a 2013 GTX
    if m:
        return m
    gfx = _gfx(store, t, memory_gb)
    if gfx:
        return gfx
    choices: dict[str, Any] = store.cached(
        "catalog:fuzzy", lambda: {h.id: f"{h.name} {h.id.replace('-', ' ')}".lower() for h in hws.values()})
    words = " ".join(w for w in t.split() if w not in _STOPWORDS)  # "and" alone is in a Steam Deck's name
    got = process.extract(words, choices, scorer=fuzz.token_set_ratio, limit=5) if words else []
    nums = set(re.findall(r"\d+", t))
    got = [g for g in got if nums <= set(re.findall(r"\d+", g[0]))]  # "Raspberry Pi 4" is never the Pi 5
    if got and got[0][1] >= 92 and (len(got) == 1 or got[0][1] - got[1][1] >= 5):
        return Match(with_memory(hws[got[0][2]], memory_gb), got[0][1] / 100)
    close = closest_hardware(store, raw)
    raise NotFoundError(
        f"I don't know the hardware {raw[:80]!r}. Closest catalog entries: " + "; ".join(close)
        + ". You can also describe it with its memory bandwidth (GB/s) and FP16 TFLOPS.",
        close,
    )
