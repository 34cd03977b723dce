"""GPU names → catalog entries: tokens, variant rules and the device count ("2x 3090").

Every GPU entry (curated or spec database) is reduced to tokens of its name. An entry matches a
text when all its *required* tokens (model numbers and variant words like ``ti``, ``super``,
``refresh``) are in the text, and every *variant word* the text uses (``ti``, ``xt``, ``laptop``,
``max-q``, ``pro``, a series like ``gtx``) is in the entry: "4070 Ti Super" never becomes a 4070 Ti,
"4070 laptop" never a desktop 4070. Series and vendor words (``geforce``, ``tesla``, ``rtx``) may be
left out of the text; memory sizes and form factors (``sxm``/``pcie``) pick between entries.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from advisor.errors import AmbiguousError, NotFoundError
from advisor.models import Hardware
from knowledge.catalog._load import Match, all_known_hardware, is_spec_db, with_memory
from knowledge.store import Store

__all__ = ["MAX_DEVICES", "VariantsError", "count_problem", "device_count", "gpu_tokens", "resolve_gpu"]

SOFT = frozenset({"nvidia", "geforce", "amd", "radeon", "intel", "tesla", "instinct", "quadro", "rtx", "gtx", "rx",
                  "arc", "pro", "ai", "jetson", "graphics", "blackwell", "ampere", "hopper", "lovelace", "generation",
                  "gpu", "hgx", "dgx", "titan", "ada"})
# Words that name a variant: when the text says one, the entry must have it.
VARIANT = frozenset({"ti", "super", "xt", "xtx", "gre", "d", "mobile", "maxq", "nvl", "cnx", "ada", "pro", "rtx",
                     "gtx", "rx", "arc", "quadro", "titan", "3e", "nano", "nx", "agx", "refresh"})
# Board-power and memory-speed words of one chip's versions ("MX450 12W", "MX450 30.5W 10Gbps"): a name without them
# is any of those versions (a question with the slowest as default), not a different card.
_DESCRIPTOR = re.compile(r"\d+(?:\.\d+)?w|\d+gbps")
_MX = re.compile(r"mx\d{3}")  # NVIDIA's laptop-only MX line ("MX450")
_EXTRA = VARIANT - {"rtx", "gtx", "rx", "arc"}  # variant words people leave out only when they mean "not that one"
_VENDOR = frozenset({"nvidia", "geforce", "amd", "radeon", "intel", "tesla", "instinct", "graphics", "gpu",
                     "generation", "jetson"})
_FORMS = {"sxm": "sxm", "sxm2": "sxm", "sxm3": "sxm", "sxm4": "sxm", "sxm5": "sxm", "pcie": "pcie", "pci": "pcie"}
_WORD_N = {"two": 2, "dual": 2, "twin": 2, "pair": 2, "three": 3, "triple": 3, "four": 4, "quad": 4, "five": 5,
           "six": 6, "eight": 8, "ten": 10, "twelve": 12, "sixteen": 16}
_GPU_WORD = (r"(?:nvidia\s+|amd\s+|intel\s+|geforce\s+|radeon\s+)*(?:rtx|gtx|rx|arc|tesla|quadro|instinct|titan|"
             r"[abhlvtp]\d{2,4}[a-z]?\b|mi\d{2,3}[a-z]?s?\b|b\d{3}\b|\d{4}(?:\s*(?:ti|xtx|xt|super))?s?\b|gpus?\b|cards?\b)")


# Catalog rows that describe one GPU of a package holding several (NVIDIA GB200: one Grace CPU + two Blackwell GPUs,
# per the row's sources): a name without a count is the whole package.
_GPUS_PER_PACKAGE = {"nvidia-gb200": 2}

_CLEAN = tuple((re.compile(p), r) for p, r in (
    (r"\(tm\)|\(r\)", " "),
    (r"max[\s-]?q", " maxq "),
    (r"\b(?:laptop|notebook|mobile)(?:\s+gpu)?\b", " mobile "),
    (r"\bpcie?\s*(?:gen\s*\d|\d\.0|\d\b|x\d+)[\w.]*(?:\s*x\d+)?", " "),  # interconnect, not form factor
    (r"\b(?:gen\s*\d|x(?:16|8)\s*lanes?|nvlink|sli)\b", " "),
    (r"\b(?:lp)?ddr\d\w*[\s-]*\d{4}\b|\b\d{4}\s*mt\s*/?\s*s\b|\b20[12]\d\b", " "),  # RAM speeds, years
    (r"[-_,;:()\[\]/|+]+", " "),
    (r"\b(\d{1,2})\s*[x×*]\s*(?=[a-z]{2,5}\d)", r"\1x "),  # "4xRTX4090", "2×RTX3090": the count before the series split
    (r"\b(rtx|gtx|gt|rx|arc|quadro)(?=\d)", r"\1 "),
    (r"\bmi\s+(?=\d{2,3}\w?\b)", "mi"),
    (r"\bmx\s+(?=\d{3}\b)", "mx"),  # "MX 450": NVIDIA names it MX450
    (r"(?<=\d)(ti|super|xtx|xt|gre)\b", r" \1"),
    (r"\b(\d{4})d\b", r"\1 d"),
    (r"\b(\d{1,2})\s*[x×](?=[a-z]|\d{3,4}\b)", r"\1x "),  # "8xH100", "2x3090", "2×3090"
    (r"(?<=\d)x(\d{1,2})\b", r" x\1"),  # "H100x8"
))
_SLASH_GB = re.compile(r"(\d{1,3})\s*/\s*(?=\d{1,3}\s*gb\b)")
_GB = re.compile(r"\b(\d{1,3}(?:\.\d+)?)\s*gb\b")


def _clean(text: str) -> str:
    t = text.lower().replace("®", " ").replace("™", " ")
    for pat, rep in _CLEAN:
        t = pat.sub(rep, t)
    return " ".join(t.split())


@lru_cache(maxsize=8192)
def gpu_tokens(text: str) -> tuple[frozenset[str], tuple[float, ...], str | None]:
    """(tokens, memory sizes in GB, form factor) of a GPU name as the matcher sees it (cached per name)."""
    t = _clean(_SLASH_GB.sub(r"\1gb ", text.lower()))  # "8/16GB"
    mems = [float(m) for m in _GB.findall(t)]
    toks = set(_GB.sub(" ", t).split())
    form = next((_FORMS[w] for w in toks if w in _FORMS), None)
    if form is None and "hbm3" in toks:
        form = "sxm"  # "NVIDIA H100 80GB HBM3" is how nvidia-smi names the SXM5 card (the PCIe one has HBM2e)
    return frozenset(w for w in toks if w not in _FORMS), tuple(mems), form


@dataclass(frozen=True)
class _Entry:
    hw: Hardware
    tokens: frozenset[str]
    required: frozenset[str]
    form: str | None
    curated: bool


def _is_gpu(h: Hardware) -> bool:
    return h.kind in ("discrete_gpu", "datacenter_gpu") or (is_spec_db(h) and h.kind == "apu") or "jetson" in h.id


def _index(store: Store) -> tuple[list[_Entry], dict[str, list[int]]]:
    def build() -> tuple[list[_Entry], dict[str, list[int]]]:
        entries: list[_Entry] = []
        by_token: dict[str, list[int]] = {}
        for h in all_known_hardware(store).values():
            if not _is_gpu(h):
                continue
            ftoks, _, form = gpu_tokens(h.name.split("(")[0])
            toks = set(ftoks) | ({"mobile"} if "maxq" in ftoks else set())
            req = {w for w in toks - SOFT if not _DESCRIPTOR.fullmatch(w)}
            if any(_MX.fullmatch(w) for w in toks):
                toks.add("mobile")  # NVIDIA's MX line is laptop-only: "MX450 laptop" is that card
            if not any(ch.isdigit() for w in req for ch in w):
                req |= toks & {"titan"}  # "TITAN X" needs both words
            if not req:
                continue
            entries.append(_Entry(h, frozenset(toks), frozenset(req), form, not is_spec_db(h)))
            keys = ([w for w in req if len(w) > 1 and w not in VARIANT] or [w for w in req if len(w) > 1]
                    or list(req))
            for w in keys:
                by_token.setdefault(w, []).append(len(entries) - 1)
        return entries, by_token

    return store.cached("catalog:gpu_index", build)


def _ram_sizes(text: str) -> set[float]:
    """Sizes the text gives as system RAM ("64GB RAM", "128 GB of DDR5"), not as the card's memory."""
    return {float(m) for m in re.findall(r"(\d{1,4})\s*gb\s+(?:of\s+)?(?:system\s+)?(?:ram|(?:lp)?ddr\d|system memory)\b",
                                         text.lower())}


def _brand(toks: set[str]) -> str | None:
    """The one GPU vendor the text names, if exactly one ("... CPU AMD Ryzen" next to an RTX names two).

    Vendor words name it ("radeon", "geforce"); so does a series word when no vendor word is given ("GTX 860M",
    "MX 450": never AMD's Radeon 860M or Radeon Pro 450).
    """
    named = {v for v, words in (("AMD", {"amd", "radeon"}), ("NVIDIA", {"nvidia", "geforce"}), ("Intel", {"intel"}))
             if toks & words}
    series = {v for v, words in (("AMD", {"rx"}), ("NVIDIA", {"rtx", "gtx", "mx"}), ("Intel", {"arc"})) if toks & words}
    if any(_MX.fullmatch(w) for w in toks):
        series.add("NVIDIA")  # "MX450"
    if not named and len(series) == 1:
        return series.pop()
    if len(named) == 1 and not series - named:
        return named.pop()
    return None


def gpu_brand(text: str) -> str | None:
    """The one GPU vendor a name spells out (``"geforce 840m"`` → ``"NVIDIA"``; :func:`_brand`), None if none or several."""
    return _brand(set(gpu_tokens(text)[0]))


MAX_DEVICES = 16  # GPUs in one machine (an HGX board holds 8; a node of 16 is the most sold)
# "2x RTX 4090", "4xRTX4090", "2x3090", "9999x H100": a count, then x, then a GPU's name (a series word or a
# model number); not "RX 7900 XT(X)", "RTX 3090 x 2" (the count after the name) or "i9-10900X CPU".
_GPU_START = (r"(?:rtx|gtx|rx|radeon|geforce|nvidia|amd|intel|arc|tesla|quadro|instinct|titan|mi\d{3}|[abhlptv]\d{1,4}|"
              r"gh?b\d{3}|\d{3,4})\b")
# (not a hex literal: "0x744c", "[0x7448 : 0xc8]" in rocm-smi's listing)
_WRITTEN_COUNT = re.compile(rf"(?<![\w.-])(?P<n>[-−]?\d+(?:[.,]\d+)?)\s*[x×](?!(?<=(?<!\d)0x)[0-9a-f])\s*"
                            rf"(?={_GPU_START}|[a-z]{{2,5}}\d)", re.I)


# A count written after the name ("RTX 4090 (x0)", "3090 x-1") or a negative one before it ("-2 RTX 3090").
_TRAILING_COUNT = re.compile(r"(?<![\w.])[x×]\s*(?P<n>[-−]?\d+(?:[.,]\d+)?)\s*\)?\s*$", re.I)
_NEGATIVE_COUNT = re.compile(rf"(?<![\w.-])(?P<n>[-−]\s?\d+(?:[.,]\d+)?)\s+(?={_GPU_START}|[a-z]{{2,5}}\d)", re.I)


# "100 H100 GPUs", "1,000 RTX 4090s": a count of three digits or more before the name, with no "x" (the GPU reader
# takes one or two digits as a count; a longer number there would otherwise be dropped without a word).
_BIG_COUNT = re.compile(rf"(?<![\w.,$€£-])(?P<n>[1-9]\d{{0,2}}(?:,\d{{3}})+|[1-9]\d{{2,}})\s+(?:nvidia\s+|geforce\s+)?"
                        rf"(?={_GPU_START})(?:\S+\s*){{1,3}}$", re.I)  # the count right before the name just read


_AFTER_COUNT = re.compile(r"^\s*\(?\s*[x×]\s*(?P<n>[-−]?\d+(?:[.,]\d+)?)\b\s*\)?", re.I)


def count_problem(text: str, after: str = "") -> str | None:
    """Why a GPU count written with the name ("1.5x RTX 4090", "0x", "-2x", "9999x H100", "RTX 4090 (x0)",
    "-2 RTX 3090") is no count of GPUs in one machine (a whole number from 1 to :data:`MAX_DEVICES`); None when
    there is none or it is fine. ``text``: the message up to the end of the name; ``after``: what follows it
    (a count the name pattern did not take, "RTX 4090 (x1000)")."""
    m = (_WRITTEN_COUNT.search(text or "") or _TRAILING_COUNT.search(text or "") or _NEGATIVE_COUNT.search(text or "")
         or _AFTER_COUNT.match(after or "") or _BIG_COUNT.search(text or ""))
    if m is None:
        return None
    raw = re.sub(r"\s", "", m.group("n")).replace("−", "-")
    raw = raw.replace(",", "") if re.fullmatch(r"-?\d{1,3}(?:,\d{3})+", raw) else raw.replace(",", ".")
    n = float(raw)
    if n != int(n) or n < 1:
        return f"'{m.group(0).strip(' )')}' is not a number of GPUs: give a whole number, e.g. '2x RTX 4090'."
    if n > MAX_DEVICES:
        return (f"{int(n):,} GPUs in one machine is more than the advisor models (1–{MAX_DEVICES}); for a cluster, "
                "ask about one node (e.g. '8x H100').")
    return None


# "Ryzen 5 3600", "Ryzen AI 9 365", "Core Ultra 7 155H": the digit after a CPU line names its tier, not a count.
_CPU_SERIES = re.compile(r"\b(ryzen(?:\s+ai)?|core\s+ultra|ultra)\s+[3579]\b")


def device_count(text: str) -> int:
    """Number of GPUs a phrase names: "8x H100", "2 x 3090", "dual 4090", "four A100s", "3090 x2" (1–16).

    A CPU series digit is no count: "GTX 1070 (host CPU AMD Ryzen 5 3600, linux)" is one GTX 1070."""
    t = _CPU_SERIES.sub(r"\1", _clean(text))
    pats = (
        rf"(?<![\w.,])(\d{{1,2}})\s*[x×*]\s*{_GPU_WORD}",
        r"(?<![\w.,])(\d{1,2})\s*[x×]\s+(?!faster|slower|more|less|the\b|speed)(?=[a-z])",
        rf"{_GPU_WORD}[\w\s]{{0,24}}?[\s(][x×*]\s*(\d{{1,2}})\b(?!\s*(?:gb|bit))",  # "RTX 4090 (x3)"
        rf"{_GPU_WORD}[\w\s]{{0,24}}?\s[x×](\d{{1,2}})\b(?!\s*(?:gb|bit))",
        rf"{_GPU_WORD}[\w\s]{{0,24}}?\s(\d{{1,2}})\s?x\s*$",  # "RTX 4090 (2x)"
        rf"(?<![\w.,])(\d{{1,2}})\s+{_GPU_WORD}",
        rf"\b({'|'.join(_WORD_N)})\s+(?:of\s+)?{_GPU_WORD}",
        r"(?<![\w.,])(\d{1,2})\s*(?:gpus|cards)\b",
    )
    for p in pats:
        m = re.search(p, t)
        if m:
            w = next(g for g in m.groups() if g)
            n = int(w) if w.isdigit() else _WORD_N.get(w, 1)
            if 1 <= n <= 16:
                return n
    return 1


def _describe(h: Hardware) -> str:
    mem = "/".join(f"{m:g}" for m in h.memory_gb_options)
    return f"{h.name} ({mem + ' GB, ' if mem else ''}{h.bandwidth_gbs:g} GB/s) ({h.id})"


def resolve_gpu(store: Store, text: str, memory_gb: float | None = None) -> Match | None:
    """Resolve a GPU phrase; None when it names no GPU in the catalog.

    Raises:
        AmbiguousError: the text fits distinct products (Ti vs Ti Super, 40 vs 80 GB, PCIe vs SXM).
        NotFoundError: the model number is known but not with the variant words given.
    """
    if (why := count_problem(text)) is not None:
        raise NotFoundError(why, [])
    entries, by_token = _index(store)
    ftoks, mems, form = gpu_tokens(text)
    toks = set(ftoks)
    # "3090s", "A100s": a plural of a model number (never a word: "XPS" is no TITAN Xp)
    toks |= {w[:-1] for w in toks if w.endswith("s") and any(c.isdigit() for c in w) and w[:-1] in by_token
             and w not in by_token}
    if "maxq" in toks:
        toks.add("mobile")
    if memory_gb is None and mems:
        memory_gb = max((m for m in mems if m not in _ram_sizes(text)), default=None)
    near = {i for w in toks if w in by_token for i in by_token[w]}
    if not near:
        return None
    said = toks & VARIANT
    brand = _brand(toks)
    cands = [entries[i] for i in near if entries[i].required <= toks and said <= entries[i].tokens
             and (form is None or entries[i].form in (None, form)) and brand in (None, entries[i].hw.vendor)]
    n = device_count(text)
    board: list[str] = []
    if toks & {"hgx", "dgx"} and not toks & {"spark", "station"} and form in (None, "sxm"):
        # "HGX H100", "DGX A100": NVIDIA's 8-GPU SXM server boards (a count the text gives wins)
        form = "sxm"
        if n == 1:
            n = 8
            board.append("HGX/DGX boards carry 8 SXM GPUs: counted as 8 (give a GPU count if you mean fewer).")
    laptop_only: list[str] = []
    if not cands:
        # "RTX 3050 Ti" without "laptop": that card exists only as a laptop GPU, so it is that one (said)
        mobile = [entries[i] for i in near if entries[i].required - toks == {"mobile"} and said <= entries[i].tokens
                  and brand in (None, entries[i].hw.vendor) and (form is None or entries[i].form in (None, form))]
        if mobile and len({e.hw.bandwidth_gbs for e in mobile}) == 1:
            cands = mobile
            laptop_only.append(f"The {mobile[0].hw.name} is a laptop GPU (no desktop card has that name): "
                               "read as that one.")
    if not cands:
        close = sorted((entries[i] for i in near if brand in (None, entries[i].hw.vendor)),
                       key=lambda e: (-len(e.required & toks), len(e.tokens)))[:6]
        if not any(e.required - toks <= VARIANT for e in close):
            return None  # shares a number with a GPU, names none ("Ryzen AI 9 HX 370")
        if any(e.required <= toks for e in close):
            raise NotFoundError(
                "That card is not in the catalog; the closest are: " + "; ".join(_describe(e.hw) for e in close[:5])
                + ". Pick one, or give its memory bandwidth (GB/s).",
                [f"{e.hw.name} ({e.hw.id})" for e in close[:5]], [_with_count(e.hw.id, n) for e in close[:5]],
            )
        raise AmbiguousError(
            "Which card is it? The name fits several: " + "; ".join(_describe(e.hw) for e in close[:6]) + ".",
            [f"{e.hw.name} ({e.hw.id})" for e in close[:6]], [_with_count(e.hw.id, n) for e in close[:6]],
        )
    if memory_gb is not None:
        cands = [e for e in cands if memory_gb in e.hw.memory_gb_options] or cands
    if form is not None:
        cands = [e for e in cands if e.form == form] or cands  # "V100-PCIE-32GB": the PCIe card itself
        exact = re.search(r"sxm\d", text.lower())
        if exact:  # "V100 SXM2" is not the SXM3 board
            cands = [e for e in cands if exact.group(0) in e.hw.name.lower() + e.hw.id] or cands
    if not any(_DESCRIPTOR.fullmatch(w) for w in toks):
        # "GTX 1080" is the card of that plain name, not its "11Gbps" refresh; the MX450 has no plain entry
        cands = [e for e in cands if not any(_DESCRIPTOR.fullmatch(w) for w in e.tokens)] or cands
    fewest = min(len((e.tokens & _EXTRA) - toks) for e in cands)  # "Radeon VII" is not the Radeon Pro VII
    cands = [e for e in cands if len((e.tokens & _EXTRA) - toks) == fewest]
    best = max(len((e.tokens - _VENDOR) & toks) for e in cands)
    cands = [e for e in cands if len((e.tokens - _VENDOR) & toks) == best]
    assumptions: list[str] = [*board, *laptop_only]
    groups = {frozenset(w for w in e.tokens - _VENDOR if not _DESCRIPTOR.fullmatch(w)) for e in cands}
    if len(groups) > 1:
        raise AmbiguousError(
            "That name fits several cards: " + "; ".join(_describe(e.hw) for e in cands[:6]) + ". Which one?",
            [f"{e.hw.name} ({e.hw.id})" for e in cands[:6]], [_with_count(e.hw.id, n) for e in cands[:6]],
        )
    try:
        pick = _pick(cands, n, form, assumptions)
    except VariantsError as e:
        if e.default_hw is not None:
            e.default = Match(with_memory(e.default_hw, memory_gb, n), 0.7, [*assumptions, e.default_note])
        raise
    if mems and memory_gb == max(mems) and memory_gb in _ram_sizes(text):
        memory_gb = None  # "an RTX 3090 and 64GB RAM": the 64 GB is not the card's
    per_pkg = _GPUS_PER_PACKAGE.get(pick.hw.id)
    if per_pkg and n == 1:
        n = per_pkg
        assumptions.append(f"A {pick.hw.name.split(' (')[0]} superchip carries {per_pkg} GPUs: counted as {per_pkg} "
                           "(give a GPU count if you mean fewer).")
    hw = with_memory(pick.hw, memory_gb, n)
    conf = 0.95 if not assumptions else 0.85
    return Match(hw, conf, assumptions, [e.hw.id for e in cands if e is not pick])


def _with_count(hw_id: str, n: int) -> str:
    """The id a resolution with ``n`` devices gives (``...xN``, as :func:`knowledge.catalog.with_memory` names it)."""
    return f"{hw_id}x{n}" if n > 1 else hw_id


def _pick(cands: list[_Entry], n: int, form: str | None, assumptions: list[str]) -> _Entry:
    """One entry among products that differ only in memory size, form factor or source."""
    if len(cands) == 1:
        return cands[0]
    specs = {(e.hw.bandwidth_gbs, e.hw.fp16_tflops) for e in cands}
    if len(specs) == 1:
        return min(cands, key=lambda e: (not e.curated, e.hw.release_year or 9999))
    pool = cands
    if n >= 4 and form is None and any(e.form == "sxm" for e in cands):
        pool = [e for e in cands if e.form == "sxm"]
        assumptions.append(f"{n}-GPU servers of this card are usually SXM boards (HGX): assumed SXM; say PCIe if not."
                           if n <= 8 else f"{n} of this card are {-(-n // 8)} servers of up to 8 (an HGX board holds 8, "
                           "SXM): assumed SXM; say PCIe if not.")
        if len(pool) == 1:
            return pool[0]
    curated = [e for e in pool if e.curated]
    if len(curated) != 1:
        # Versions of one product (A100 40GB / 80GB PCIe / 80GB SXM4, H100 PCIe / SXM5): a question, with the
        # smallest memory and slowest memory system as the default a caller may take (never an optimistic answer).
        pool = curated or pool
        pick = min(pool, key=lambda e: (min(e.hw.memory_gb_options or [float("inf")]), e.hw.bandwidth_gbs,
                                        e.hw.fp16_tflops or 0.0))
        err = VariantsError(
            "That name fits cards that differ in memory or bandwidth: "
            + "; ".join(_describe(e.hw) for e in pool[:6]) + ". Which one (memory size, SXM or PCIe)?",
            [f"{e.hw.name} ({e.hw.id})" for e in pool[:6]], [_with_count(e.hw.id, n) for e in pool[:6]],
        )
        err.default_hw = pick.hw
        bws = [e.hw.bandwidth_gbs for e in pool]
        tfs = [e.hw.fp16_tflops for e in pool if e.hw.fp16_tflops]
        err.close = max(bws) <= CLOSE_VARIANTS * min(bws) and (not tfs or max(tfs) <= CLOSE_VARIANTS * min(tfs))
        err.default_note = (
            f"Variant not stated: assumed the {pick.hw.name} ({_mem_bw(pick.hw)}), the smallest and slowest of its "
            "versions so the answer is not optimistic; "
            + "; ".join(f"the {e.hw.name} has {_mem_bw(e.hw)}" for e in pool if e is not pick)
            + " — say which to refine.")
        raise err
    pick = curated[0]
    others = [e for e in cands if e is not pick and (e.hw.bandwidth_gbs, e.hw.fp16_tflops) !=
              (pick.hw.bandwidth_gbs, pick.hw.fp16_tflops)]
    if others:
        assumptions.append(
            f"Variant not stated: assumed the {pick.hw.name} ({pick.hw.bandwidth_gbs:g} GB/s); "
            + "; ".join(f"the {e.hw.name} has {e.hw.bandwidth_gbs:g} GB/s" for e in others[:3])
            + " — say which to refine."
        )
    return pick


class VariantsError(AmbiguousError):
    """A name that fits versions of ONE product differing in memory or form factor ("A100", "H100").

    Besides the question (``candidates``), it carries ``default``: a :class:`Match` on the smallest and slowest
    version, with the assumption stated, for callers that answer now rather than ask (no measurement to judge).
    """

    default_hw: Hardware | None = None
    default_note: str = ""
    default: Match | None = None
    close: bool = False  # the versions' bandwidth and compute are within CLOSE_VARIANTS of each other


CLOSE_VARIANTS = 1.15
"""Versions of one product whose bandwidth and FP16 compute differ by less than this factor (A100 80GB PCIe 1,935 GB/s
vs SXM4 2,039) read a measured rate alike: a verdict's range is wider than their difference."""


def _mem_bw(h: Hardware) -> str:
    """ "80 GB, 2039 GB/s" (memory only when the product ships with one size)."""
    mem = f"{h.memory_gb_options[0]:g} GB, " if len(h.memory_gb_options) == 1 else ""
    return f"{mem}{h.bandwidth_gbs:g} GB/s"

