"""GPU names in chat text: model numbers ("a 3090", "two RTX 4090s", "RTX 4070 laptop GPU"), AMD workstation cards,
and how many of them.

Part of the hardware reader (:mod:`advisor.intake._hardware`): each finder returns :class:`~advisor.intake._machine.Mention`
spans with the phrase tidied ("a 3090" → "RTX 3090", "two RTX 4090s" → "2x RTX 4090"); the catalog checks them there.
"""

from __future__ import annotations

import re

from advisor.intake._machine import Mention
from advisor.intake._text import Msg
from knowledge import catalog
from knowledge.store import Store

__all__ = ["GPU", "gpu_mentions", "workstation_pattern"]

GPU = re.compile(
    r"(?:(?P<count>(?<![\w.,])(?:\d{1,2}|two|three|four|five|six|seven|eight|dual|quad|single|one|(?:a\s+)?pair\s+of|"
    r"zwei|drei|vier|acht|dos|tres|cuatro|ocho|deux|trois|quatre|huit))"
    r"\s*(?:x|×|\*)?\s*)?(?:(?:used|new|refurb(?:ished)?|second[\s-]?hand|old|cheap|identical|matching)\s+)?"
    r"(?:(?:nvidia|geforce|amd|radeon|intel|tesla|quadro|instinct)\s+)*"
    # laptop parts keep their M ("GTX 860M", "RX 6800M"); NVIDIA's MX line ("MX450"); a GeForce with no series word
    # ("GeForce 840M")
    r"(?:(?P<series>rtx|gtx|rx|arc|mx)\s*-?\s*(?P<pro>pro\s+)?(?P<snum>[a-z]?\d{3,12}m?)"
    r"|(?:(?<=geforce )|(?<=nvidia ))(?P<gfm>\d{3}m)"
    r"|(?P<dc>gh200|gb200|h100|h200|h800|h20[\s-]?3e|h20|b200|b300|a100|a800|l20|a6000|a5000|a4000|a10g?|a30|a40|l40s|l40|(?<![\w-])[lt]4"
    r"|mi300x|mi325x|mi355x|mi250x?|mi210|mi100|mi60|mi50|v100|p40|p100)"
    r"|(?P<bare>(?<![\d.,])\d{4}))"
    r"(?P<var>(?:[\s-]*(?:ti|super|xtx|xt|ada|pcie|sxm\d?|nvl)(?=s?\b))*)(?P<plural>s)?\b"
    r"(?:\s*\(?\s*(?:x|×)\s*(?P<count2>\d{1,2})\b\)?)?",  # "RTX 3090 x2", "RTX 4090 (x3)"
    re.I,
)

_COUNT_WORDS = {"two": 2, "dual": 2, "pair": 2, "three": 3, "four": 4, "quad": 4, "five": 5, "six": 6, "seven": 7,
                "eight": 8, "single": 1, "one": 1,
                # German, Spanish, French ("zwei RTX 4090", "dos 3090", "deux 4090")
                "zwei": 2, "drei": 3, "vier": 4, "acht": 8, "dos": 2, "tres": 3, "cuatro": 4, "ocho": 8, "deux": 2,
                "trois": 3, "quatre": 4, "huit": 8}
_VARIANTS = {"ti": "Ti", "super": "Super", "xtx": "XTX", "xt": "XT", "ada": "Ada", "pcie": "PCIe", "nvl": "NVL"}
_BARE_OK_BEFORE = re.compile(r"(?:\b(?:an?|my|the|one|single|with|and|or|vs\.?|versus|on|own|have|got|buy|used|"
                             r"eine?|meine?|zwei|una?|mi|dos|une?|mon|ma|deux|y|und|et|o|oder|ou|con|mit|avec|"
                             r"dual|two|three|four|quad|eight|\d\s?x|second|another|2nd|new|old|vs\.?)|\d\s?(?:gb|gigs?)|[,(/+:]|^)\s*$", re.I)
_BARE_NOT_AFTER = re.compile(r"^\s*(?:-\s*)?(?:tokens?|toks?|words?|t/s|tok|tps|ms|users?|people|requests?|lines?|"
                             r"pages?|mhz|rpm|[kKmM]\b|gb|mb|\$|dollars?|euros?|usd|watts?)", re.I)
# A number that is a place in code or a log, not a card: "model_runner.py:1060", "line 1060", "pid 3090", "port 3090".
# A build number is not one either: llama-bench's "build: 5c0eb5ef (5600)", "llama.cpp build 5600", "version: 5600".
_CODE_PLACE = re.compile(r"(?:\.(?:py|cpp|cc|cu|c|h|hpp|rs|go|js|ts)|\bline|\bpid|\bport|\blocalhost|\d\.\d+\.\d+\.\d+)\s*[:= ]?\s*$"
                         r"|\b(?:build|version|commit|release)\s*[:=#]?\s*(?:[0-9a-f]{6,40}\s*)?\(?\s*$", re.I)
_BARE_OK_AFTER = re.compile(r"^(?:s\b|\s*(?:gpu|card|graphics|ti\b|xtx|xt\b|super))", re.I)


def _gpu_numbers(store: Store) -> dict[str, str]:
    """Model numbers of catalog GPUs → the series word to put in front ("3090" → "RTX")."""

    def build() -> dict[str, str]:
        out: dict[str, str] = {}
        for h in catalog.all_hardware(store).values():
            if h.kind in ("apple_soc", "cpu"):
                continue
            for num in re.findall(r"(?<![\w.])(\d{3,4})(?!\d)", h.name):
                series = re.search(r"\b(RTX|GTX|RX|Arc)\b", h.name)
                out.setdefault(num, series.group(1) if series else "")
        # Consumer cards of the spec database too ("a 1070", "my 6700 XT"), by their GTX/RTX/RX number; round
        # thousands ("RTX 2000 Ada") are left out, since "a 2000 word essay" is a length, not a card.
        for h in catalog.all_known_hardware(store).values():
            series = re.search(r"\b(RTX|GTX|RX)\s+(\d{3,4})(?!\d)", h.name)
            if h.kind == "discrete_gpu" and series and int(series.group(2)) % 1000:
                out.setdefault(series.group(2), series.group(1))
        return out

    return store.cached("intake:gpu_numbers", build)



def _gpu_count(m: re.Match[str]) -> int:
    raw = (m.group("count2") or m.group("count") or "1").lower()
    if raw.isdigit():
        return int(raw)
    return 2 if "pair" in raw else _COUNT_WORDS.get(raw.split()[-1], 1)


_LAPTOP_AFTER = re.compile(r"^\s*(?:laptop|notebook|mobile|max-?q)\b", re.I)
_LAPTOP_BEFORE = re.compile(r"\b(?:laptop|notebook)\b(?![^.;!?]*\b(?:desktop|tower|pc|server|workstation|rig)\b)"
                            r"[^.;!?]{0,24}$", re.I)


def _laptop_card(msg: Msg, m: re.Match[str]) -> bool:
    """A GeForce card named as a laptop's ("4070 laptop GPU", "my laptop with a 4070"): its mobile version."""
    return bool(_LAPTOP_AFTER.match(msg.orig[m.end():m.end() + 12])
                or _LAPTOP_BEFORE.search(msg.orig[max(0, m.start() - 40):m.start()]))


_CPU_BEFORE = re.compile(r"\b(?:ryzen|athlon|core|xeon|epyc|threadripper|celeron|pentium)(?:\s+(?:ai\s+)?(?:pro\s+)?"
                         r"(?:i?[3579]|hx?))?\s*$", re.I)


# Datacenter names that are also everyday words, other brands' products or labels: "layer L20", "the L4 vertebra",
# "Sony a800", "Samsung Galaxy A40", "Huawei P40", "Apple A10", "T4 levels", "H20" (water). They count as GPUs
# unless the words around them make some other thing of them.
_AMBIGUOUS_DC = re.compile(r"^(?:[lt]4|l20|a800|a10g?|a30|a40|h20|p40|p100)$", re.I)
_OTHER_THING_BEFORE = re.compile(
    r"\b(?:sony|samsung|galaxy|huawei|apple|nokia|canon|nikon|fuji(?:film)?|audi|lumix|leica|layers?|levels?|steps?|"
    r"blocks?|rows?|cells?|columns?|lines?|vertebrae?|spine|road|route|highway|motorway|bus|size|paper|grade|"
    r"class|tier|stage|phase|round|chapter|section|floor|room|gate|seat|slot|cache)\s*[#:]?\s*$", re.I)
_CLOUD_BEFORE = re.compile(r"\b(?:colab|kaggle|runpod|vast(?:\.ai)?|lambda|aws|gcp|azure|sagemaker|modal|cloud|"
                           r"(?:free|paid|pro)\s+tier)\b[^.?!]{0,12}$", re.I)
_OTHER_THING_AFTER = re.compile(r"^\s*(?:cache|camera|lens|vertebrae?|phone|smartphone|paper|sheet|envelope|"
                                r"hormone|levels?|molecules?|bottle)\b", re.I)


def _other_thing(msg: Msg, m: re.Match[str]) -> bool:
    """A short datacenter name (:data:`_AMBIGUOUS_DC`) that the words beside it make something else."""
    if not _AMBIGUOUS_DC.match(m.group("dc") or ""):
        return False
    if _CLOUD_BEFORE.search(msg.orig[max(0, m.start("dc") - 24):m.start("dc")]):
        return False  # "Colab free tier T4", "a Kaggle T4": a cloud's GPU
    return bool(_OTHER_THING_BEFORE.search(msg.orig[max(0, m.start("dc") - 24):m.start("dc")])
                or _OTHER_THING_AFTER.match(msg.orig[m.end():m.end() + 16]))


def gpu_mentions(msg: Msg, store: Store) -> list[Mention]:
    numbers = _gpu_numbers(store)
    out = []
    for m in msg.finditer(GPU):
        if _CPU_BEFORE.search(msg.orig[max(0, m.start() - 16):m.start()]):
            continue  # "Ryzen 5 5600", "Core i5 12400": a CPU's model number, not "5x RX 5600"
        if m.group("dc") and _other_thing(msg, m):
            continue
        if m.group("bare"):
            num = m.group("bare")
            ok_ctx = (m.group("count") or _BARE_OK_BEFORE.search(msg.orig[max(0, m.start() - 12):m.start()])
                      or _BARE_OK_AFTER.search(msg.orig[m.start("bare") + 4:m.start("bare") + 14]))
            if num not in numbers or not ok_ctx or _BARE_NOT_AFTER.match(msg.orig[m.start("bare") + 4:]) \
                    or _CODE_PLACE.search(msg.orig[max(0, m.start() - 40):m.start()]):
                continue
            name = f"{numbers[num]} {num}".strip()
        elif m.group("series"):
            series = m.group("series")
            pro = "PRO " if m.group("pro") else ""
            name = f"{'Arc' if series.lower() == 'arc' else series.upper()} {pro}{m.group('snum').upper()}"
        elif m.group("gfm"):
            name = "GeForce " + m.group("gfm").upper()
        else:
            name = m.group("dc").upper()
        var = [_VARIANTS.get(v.lower(), v.upper()) for v in re.findall(r"[a-z]+\d?", m.group("var") or "", re.I)]
        form = re.match(r"\s*(?:\d{1,3}\s*gb\s*)?\(?(sxm\d?|pcie|hbm3(?!e))\b", msg.orig[m.end():m.end() + 16], re.I)
        if form and not any(v.lower().startswith(("sxm", "pcie", "hbm")) for v in var):  # "80GB HBM3": nvidia-smi's SXM
            var.append(_VARIANTS.get(form.group(1).lower(), form.group(1).upper()))  # "two A100s 80GB SXM"
        n = _gpu_count(m)
        if n < 1:  # "0x RTX 4090", "RTX 4090 (x0)": kept, so the machine step says why it is no machine
            out.append(Mention(m.start(), m.end(), " ".join([name, *var])))
            continue
        # "RX 6800M" is the laptop chip; NVIDIA's MX line is laptop-only
        mobile_part = m.group("series") and (m.group("snum").lower().endswith("m") or m.group("series").lower() == "mx")
        if (m.group("series") or m.group("bare")) and not mobile_part and _laptop_card(msg, m):
            var.append("Laptop")  # "my Legion laptop with a 4070", "RTX 4090 laptop GPU": the mobile chip
        phrase = (f"{n}x " if n > 1 else "") + " ".join([name, *var])
        out.append(Mention(m.start(), m.end(), phrase))
    return out


def workstation_pattern(store: Store) -> re.Pattern[str]:
    """AMD workstation cards by the model numbers the catalog names them with ("Radeon AI PRO R9700", "Radeon
    PRO W7900", "FirePro W9100"), with or without their brand words: the GeForce/RX/Arc series pattern misses
    them. Built from the catalog, so a number no card has ("W2000") is not read as one."""

    def build() -> re.Pattern[str]:
        nums = sorted({t.upper() for h in (*catalog.all_hardware(store).values(), *catalog.all_known_hardware(store).values())
                       if h.kind != "apple_soc" and h.vendor == "AMD" for t in re.findall(r"\b[RW]\d{4}\b", h.name)})
        words = r"(?:(?:amd|radeon|firepro|ai|pro)\s+)*"
        return re.compile(rf"\b{words}(?:{'|'.join(nums) or '(?!)'})\b(?:\s*(?:\d{{2}})\s*gb\b)?", re.I)

    return store.cached("intake:workstation_cards", build)
