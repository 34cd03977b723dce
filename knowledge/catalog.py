"""Catalog look-up: hardware, models and weight formats by id or by the names people write.

Resolution is rule-first (chip and GPU model numbers, sizes like ``8b`` and ``30b-a3b``, GGUF
format names) with fuzzy matching (rapidfuzz) as the fallback. A name that matches nothing well
raises :class:`~advisor.errors.NotFoundError` with the closest candidates; one that matches several
entries that differ in ways that matter raises :class:`~advisor.errors.AmbiguousError`. A detail
that only refines the answer (an Apple chip's GPU-core bin) is picked and stated as an assumption.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from rapidfuzz import fuzz, process

from advisor.errors import AmbiguousError, NotFoundError
from advisor.models import Hardware, ModelSpec, QuantFormat
from knowledge.seed import split_hw_id
from knowledge.store import Store

__all__ = [
    "Match",
    "all_hardware",
    "all_models",
    "all_quants",
    "generic_model",
    "get_hardware",
    "resolve_hardware",
    "resolve_model",
    "resolve_quant",
]


@dataclass
class Match:
    """A resolved catalog entry with how sure the resolution is (0–1) and what was assumed."""

    value: Any
    confidence: float
    assumptions: list[str] = field(default_factory=list)
    alternatives: list[str] = field(default_factory=list)


# ----------------------------------------------------------------------------- loading
def _hw_from_row(r: dict[str, Any]) -> Hardware:
    mem = [float(x) for x in (r.get("memory_gb_options") or "").split(";") if x.strip()]
    return Hardware(
        id=r["hw_id"], name=r["name"], vendor=r["vendor"] or "", family=r["family"] or "", kind=r["kind"],
        gpu_cores=r["gpu_cores"], cpu_cores=r["cpu_cores"] or None, bandwidth_gbs=r["bandwidth_gbs"],
        memory_gb_options=mem, memory_gb=mem[0] if len(mem) == 1 else None, fp16_tflops=r["fp16_tflops"],
        fp16_tflops_is_estimate=r["fp16_tflops_kind"] == "estimate", release_year=r["release_year"],
        source_url=r["source_url"], notes=r["notes"] or "",
    )


def all_hardware(store: Store) -> dict[str, Hardware]:
    """Every catalog hardware entry by id."""
    return store.cached(
        "hardware", lambda: {r["hw_id"]: _hw_from_row(r) for r in store.query("SELECT * FROM hardware")}
    )


def _model_from_row(r: dict[str, Any], aliases: list[str]) -> ModelSpec:
    return ModelSpec(
        id=r["model_id"], family=r["family"] or "", params_b=r["params_b"], active_params_b=r["active_params_b"],
        n_layers=r["n_layers"], hidden_size=r["hidden_size"], n_heads=r["n_heads"], n_kv_heads=r["n_kv_heads"],
        head_dim=r["head_dim"], vocab_size=r["vocab_size"], max_context=r["max_context"],
        kv_layers=r["full_attention_layers"], aliases=aliases, source_url=r["source_url"], notes=r["notes"] or "",
        sliding_layers=r["sliding_layers"], sliding_window=r["sliding_window"],
    )


def all_models(store: Store) -> dict[str, ModelSpec]:
    """Every catalog model by id (aliases attached)."""

    def build() -> dict[str, ModelSpec]:
        aliases: dict[str, list[str]] = {}
        for a in store.query("SELECT alias, model_id FROM model_aliases"):
            aliases.setdefault(a["model_id"], []).append(a["alias"])
        return {r["model_id"]: _model_from_row(r, aliases.get(r["model_id"], [])) for r in store.query("SELECT * FROM models")}

    return store.cached("models", build)


def all_quants(store: Store) -> dict[str, QuantFormat]:
    """Every weight format by name."""
    return store.cached(
        "quants",
        lambda: {
            r["format"]: QuantFormat(
                name=r["format"], ecosystem=r["ecosystem"] or "", bits_per_weight=r["bits_per_weight"],
                ppl_delta_7b=r["ppl_delta_7b"], source_url=r["source_url"], notes=r["notes"] or "",
                estimated=r["value_kind"] == "estimate",
            )
            for r in store.query("SELECT * FROM quant_formats")
        },
    )


# ----------------------------------------------------------------------------- hardware
_APPLE = re.compile(r"\bm\s?([1-5])(?:\s*|-)?(pro|max|ultra)?\b")
_CORES = re.compile(r"\b(\d{1,2})\s*-?\s*(?:core|c)\b(?:\s*(gpu|cpu))?")
_GPU_CORES = re.compile(r"\b(\d{1,2})\s*-?\s*(?:core|c)\s*gpu\b|\bgpu\s*(?:with\s*)?(\d{1,2})\s*-?\s*cores?\b")
_WORDS = {"two": 2, "dual": 2, "three": 3, "four": 4, "quad": 4, "six": 6, "eight": 8}

# Which chip a Mac of a given year ships with (Apple product history), for "MacBook Air 2022".
_MAC_YEARS: dict[str, dict[int, str]] = {
    "macbook air": {2020: "m1", 2022: "m2", 2023: "m2", 2024: "m3", 2025: "m4", 2026: "m5"},
    "mac mini": {2020: "m1", 2023: "m2", 2024: "m4"},
    "imac": {2021: "m1", 2023: "m3", 2024: "m4"},
    "macbook pro": {2020: "m1", 2021: "m1 pro|m1 max", 2023: "m2 pro|m2 max|m3|m3 pro|m3 max",
                    2024: "m4|m4 pro|m4 max", 2025: "m5", 2026: "m5 pro|m5 max"},
    "mac studio": {2022: "m1 max|m1 ultra", 2023: "m2 max|m2 ultra", 2025: "m4 max|m3 ultra"},
}


def _norm(text: str) -> str:
    t = text.lower().replace("®", "").replace("™", "")
    t = re.sub(r"[_,;()\[\]/]+", " ", t)
    return re.sub(r"\s+", " ", t).strip()


def _device_count(t: str) -> tuple[int, str]:
    m = re.search(r"\b(\d|two|three|four|six|eight|dual|quad)\s*(?:x|×)?\s*(?:nvidia\s+|amd\s+|geforce\s+)?(?:rtx|gtx|rx|a100|h100|h200|l40s|a6000|a40|mi300x|\d{4})", t)
    n = 1
    if m:
        w = m.group(1)
        n = int(w) if w.isdigit() else _WORDS.get(w, 1)
        if w.isdigit() and not re.search(rf"\b{w}\s*(?:x|×)", t) and not re.search(r"\b\d\s+(?:rtx|gtx|rx)", t):
            n = 1 if len(w) != 1 else n
    m2 = re.search(r"(?:x|×)\s*(\d)\b", t)
    if m2 and n == 1:
        n = int(m2.group(1))
    m3 = re.search(r"\b(\d)\s*(?:gpus|cards)\b", t)
    if m3 and n == 1:
        n = int(m3.group(1))
    return max(1, min(n, 16)), t


def _with_memory(hw: Hardware, memory_gb: float | None, n: int = 1) -> Hardware:
    upd: dict[str, Any] = {}
    if memory_gb is not None:
        upd["memory_gb"] = memory_gb
    if n > 1:
        upd.update(id=f"{hw.id}x{n}", name=f"{n}× {hw.name}", n_devices=n)
    return hw.model_copy(update=upd) if upd else hw


def get_hardware(store: Store, hw_id: str, memory_gb: float | None = None) -> Hardware:
    """Catalog entry by exact id (``...xN`` for N GPUs). Raises NotFoundError."""
    hws = all_hardware(store)
    base, n = split_hw_id(hw_id.strip().lower())
    if base in hws:
        return _with_memory(hws[base], memory_gb, n)
    raise NotFoundError(f"No hardware with id {hw_id!r}.", _closest_hw(store, hw_id))


def _closest_hw(store: Store, text: str, limit: int = 5) -> list[str]:
    hws = all_hardware(store)
    choices = {h.id: f"{h.name} {h.id}".lower() for h in hws.values()}
    got = process.extract(_norm(text), choices, scorer=fuzz.WRatio, limit=limit)
    return [f"{hws[k].name} ({k})" for _, _, k in got]


def _apple(store: Store, t: str, memory_gb: float | None, gpu_cores: int | None) -> Match | None:
    hws = all_hardware(store)
    m = _APPLE.search(t)
    chip = None
    if m:
        chip = f"m{m.group(1)}" + (f" {m.group(2)}" if m.group(2) else "")
    else:
        for product, years in _MAC_YEARS.items():
            if product in t:
                y = re.search(r"\b(20[12]\d)\b", t)
                if not y:
                    chips = sorted({c for v in years.values() for c in v.split("|")})
                    raise AmbiguousError(
                        f"Which chip does your {product.title()} have? ({', '.join(c.upper() for c in chips)}; "
                        "'About This Mac' shows it.)",
                        [c.upper() for c in chips],
                    )
                if y and int(y.group(1)) in years:
                    options = years[int(y.group(1))].split("|")
                    if len(options) == 1:
                        chip = options[0]
                    else:
                        raise AmbiguousError(
                            f"A {product.title()} from {y.group(1)} came with several chips: "
                            f"{', '.join(o.upper() for o in options)}. Which one is it?",
                            [o.upper() for o in options],
                        )
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
            return Match(_with_memory(exact[0], memory_gb), 0.98)
        assumptions.append(f"{chip.upper()} has no {gpu_cores}-core GPU in the catalog; ")
    pool = cands
    if memory_gb is not None:
        fit = [h for h in cands if memory_gb in h.memory_gb_options]
        if fit:
            pool = fit
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
    return Match(_with_memory(pick, memory_gb), 0.85 if others else 0.95, ["".join(assumptions)] if assumptions else [],
                 [h.id for h in others])


def _discrete(store: Store, t: str, memory_gb: float | None) -> Match | None:
    hws = all_hardware(store)
    t = re.sub(r"(?<=[a-z0-9])-(?=[a-z0-9])", " ", t)
    t = re.sub(r"\b(rtx|gtx|rx|arc|mi)(?=\d)", r"\1 ", t)  # "rtx4090" -> "rtx 4090"
    n, t = _device_count(t)
    nums = set(re.findall(r"\b(\d{3,4})s?\b", t)) - {"2020", "2021", "2022", "2023", "2024", "2025", "2026"}
    specials = {
        "h100": "nvidia-h100", "h200": "nvidia-h200", "a100": "nvidia-a100", "l40s": "nvidia-l40s",
        "mi300x": "amd-mi300x", "dgx spark": "nvidia-dgx-spark-gb10", "gb10": "nvidia-dgx-spark-gb10",
        "strix halo": "amd-ryzen-ai-max-plus-395", "ryzen ai max": "amd-ryzen-ai-max-plus-395",
        "8060s": "amd-ryzen-ai-max-plus-395", "395": "amd-ryzen-ai-max-plus-395",
        "jetson": "nvidia-jetson-agx-orin", "raspberry pi 5": "raspberry-pi-5", "pi 5": "raspberry-pi-5",
        "a6000": "nvidia-rtx-a6000", "a4000": "nvidia-rtx-a4000", "a40": "nvidia-a40", "arc a770": "intel-arc-a770",
        "a770": "intel-arc-a770", "genoa": "amd-epyc-9004-genoa", "turin": "amd-epyc-9005-turin",
        "mac pro 2019": "intel-mac-pro-2019-16c", "xeon w-3245": "intel-mac-pro-2019-16c",
    }
    cands: list[Hardware] = []
    for key, prefix in specials.items():
        if re.search(rf"(?<![\w-]){re.escape(key)}(?![\w])", t):
            cands = [h for h in hws.values() if h.id.startswith(prefix)]
            break
    if not cands and nums:
        for num in sorted(nums, key=len, reverse=True):
            c = [h for h in hws.values() if re.search(rf"(?<![\d.]){num}(?!\d)", h.name) and h.kind != "apple_soc"]
            if c:
                cands = c
                break
    if not cands:
        return None
    # Narrow by variant words.
    def has(word: str) -> bool:
        tail = r"\d?\b" if word in ("sxm", "pcie") else r"s?\b"
        return re.search(rf"\b{word}{tail}", t) is not None

    narrowed = []
    for h in cands:
        name = h.name.lower() + " " + h.id
        ok = True
        for word in ("ti", "xtx", "ada", "pcie", "sxm", "40gb", "80gb"):
            in_name = re.search(rf"\b{word}", name) is not None
            if has(word) != in_name and word in ("ti", "xtx", "ada"):
                ok = False
            if has(word) and not in_name and word in ("pcie", "sxm", "40gb", "80gb"):
                ok = False
        if has("xt") and not has("xtx") and "xtx" in name:
            ok = False
        if ok:
            narrowed.append(h)
    if not narrowed:
        raise NotFoundError(
            "That card is not in the catalog; the closest are: " + "; ".join(f"{h.name} ({h.bandwidth_gbs:g} GB/s)"
                                                                            for h in cands[:5])
            + ". Pick one, or give its memory bandwidth (GB/s).",
            [f"{h.name} ({h.id})" for h in cands[:5]],
        )
    cands = narrowed
    if "a6000" in t and "ada" not in t:
        cands = [h for h in cands if h.id == "nvidia-rtx-a6000"] or cands
    if len(cands) == 1:
        return Match(_with_memory(cands[0], memory_gb, n), 0.95)
    if memory_gb is not None:
        fit = [h for h in cands if memory_gb in h.memory_gb_options]
        if len(fit) == 1:
            return Match(_with_memory(fit[0], memory_gb, n), 0.9)
        if fit:
            cands = fit
    raise AmbiguousError(
        "That name fits several cards that differ in memory bandwidth: "
        + "; ".join(f"{h.name} ({h.bandwidth_gbs:g} GB/s)" for h in cands[:6])
        + ". Which one?",
        [f"{h.name} ({h.id})" for h in cands[:6]],
    )


def resolve_hardware(
    store: Store, text: str, *, memory_gb: float | None = None, gpu_cores: int | None = None
) -> Match:
    """Resolve what a person wrote ("M2 Max 38-core", "MacBook Air 2022", "a 3090", "2x 4090").

    Args:
        store: the knowledge store.
        text: the name as written.
        memory_gb: memory the user stated, used to pick between bins and kept on the result.
        gpu_cores: GPU core count if stated separately.

    Returns:
        Match: ``value`` is a :class:`Hardware` (``n_devices`` > 1 for "2x 4090").

    Raises:
        NotFoundError: nothing matches well; ``candidates`` lists the closest entries.
        AmbiguousError: several entries that differ in what matters (e.g. H100 PCIe vs SXM).
    """
    raw = (text or "").strip()[:300]  # a name, not a paste: bounded work for fuzzy matching
    if not raw:
        raise NotFoundError("No hardware given.", [])
    t = _norm(raw)
    hws = all_hardware(store)
    base, n = split_hw_id(t)
    if base in hws:
        return Match(_with_memory(hws[base], memory_gb, n), 1.0)
    m = _apple(store, t, memory_gb, gpu_cores)
    if m:
        return m
    cpu = re.search(r"\bddr([45])[- ]?(\d{4})\b", t)
    if cpu and not re.search(r"epyc|genoa|turin|xeon", t):
        ch = re.search(r"\b(\d{1,2}|dual|quad|eight|twelve)[- ]?(?:ch|channels?)\b", t)
        words = {"dual": "2", "quad": "4", "eight": "8", "twelve": "12"}
        chans = (words.get(ch.group(1), ch.group(1)) if ch else "2")
        hid = f"cpu-ddr{cpu.group(1)}-{cpu.group(2)}-{chans}ch"
        if hid in hws:
            return Match(_with_memory(hws[hid], memory_gb), 0.9,
                         [] if ch else ["Channel count not stated: assumed dual channel (a desktop)."])
    m = _discrete(store, t, memory_gb)
    if m:
        return m
    choices = {h.id: f"{h.name} {h.id.replace('-', ' ')}".lower() for h in hws.values()}
    got = process.extract(t, choices, scorer=fuzz.token_set_ratio, limit=5)
    if got and got[0][1] >= 92 and (len(got) == 1 or got[0][1] - got[1][1] >= 5):
        return Match(_with_memory(hws[got[0][2]], memory_gb), got[0][1] / 100)
    raise NotFoundError(
        f"I don't know the hardware {raw[:80]!r}. Closest catalog entries: "
        + "; ".join(_closest_hw(store, raw))
        + ". You can also describe it with its memory bandwidth (GB/s) and FP16 TFLOPS.",
        _closest_hw(store, raw),
    )


# ----------------------------------------------------------------------------- models
_SIZE = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)\s*b\b")
_ACTIVE = re.compile(r"\ba(\d+(?:\.\d+)?)b\b")
_MOE_X = re.compile(r"\b(\d+)x(\d+(?:\.\d+)?)b\b")
_QUANT_SUFFIX = re.compile(
    r"[-_. :](?:gguf|mlx|instruct|chat|it|base|hf|awq|gptq|fp16|bf16|f16|\d-?bit|q\d[\w]*|iq\d[\w]*|mxfp4|dwq|qat|"
    r"ud|v\d+(?:\.\d+)?|\d{4})\b"
)


def _model_key(text: str) -> str:
    t = text.strip().lower()
    if "/" in t:
        t = t.split("/")[-1]
    t = t.replace("_", "-")
    return t


def _strip_suffixes(t: str) -> str:
    prev = None
    while prev != t:
        prev = t
        t = _QUANT_SUFFIX.sub("", t).strip(" -_.:")
    return t


def _family_tokens(t: str) -> list[str]:
    fams = re.findall(
        r"(llama|qwen|gemma|mistral|mixtral|phi|gpt-?oss|deepseek|tinyllama|coder|distill|small|mini|r1)", t
    )
    return fams


def _version(t: str) -> str | None:
    m = re.search(r"(?:llama|qwen|gemma|phi|mistral)[\s-]?(\d(?:\.\d)?)(?!\d*\s*b\b)", t)
    return m.group(1) if m else None


def resolve_model(store: Store, text: str, *, params_b: float | None = None) -> Match:
    """Resolve a model name ("llama 3.1 8b", "qwen3 30b a3b", "mlx-community/Qwen3.5-9B-4bit").

    Returns:
        Match with a :class:`ModelSpec`; an unknown model whose size is known (from the name, like
        ``30b-a3b``, or ``params_b``) gets a generic architecture, stated as an assumption.

    Raises:
        NotFoundError: unknown model and no size to go on.
    """
    raw = (text or "").strip()[:300]
    models = all_models(store)
    alias_map = {a: mid for mid, m in models.items() for a in m.aliases}
    key = _model_key(raw) if raw else ""
    for cand in (raw.lower(), key, _strip_suffixes(key), _strip_suffixes(key).replace("-", " ")):
        if cand and cand in alias_map:
            return Match(models[alias_map[cand]], 1.0)
        if cand and cand.lower() in {m.lower() for m in models}:
            mid = next(m for m in models if m.lower() == cand.lower())
            return Match(models[mid], 1.0)
    t = _strip_suffixes(key).replace("-", " ")
    size = None
    sm = _MOE_X.search(t)
    if sm:
        size = float(sm.group(1)) * float(sm.group(2))
    else:
        sizes = [float(x) for x in _SIZE.findall(t)] or [float(x) for x in re.findall(r"\be(\d+(?:\.\d+)?)b\b", t)]
        active = _ACTIVE.search(t)
        sizes = [s for s in sizes if not (active and s == float(active.group(1)))]
        size = sizes[0] if sizes else None
    active_b = float(_ACTIVE.search(t).group(1)) if _ACTIVE.search(t) else None  # type: ignore[union-attr]
    fams = _family_tokens(t)
    ver = _version(t)
    if raw and fams:
        scored = []
        for mid, m in models.items():
            name = (mid.split("/")[-1] + " " + " ".join(m.aliases)).lower()
            if not all(f in name for f in fams if f not in ("r1",)):
                continue
            if ver and not re.search(rf"(?:llama|qwen|gemma|phi|mistral)[\s-]?{re.escape(ver)}(?![\d.])", name):
                continue
            if size is not None:
                nominal = re.findall(r"(?<![a-z\d.])(\d+(?:\.\d+)?)b", mid.lower())
                if not any(abs(float(x) - size) / size < 0.12 for x in nominal) and abs(m.params_b - size) / size > 0.12:
                    continue
            if active_b is not None and m.active_params_b and abs(m.active_params_b - active_b) > 0.6:
                continue
            extra = sum(1 for w in ("coder", "distill", "deepseek", "r1", "math", "vl", "dolphin")
                        if w in name and w not in t)
            score = fuzz.token_set_ratio(t, name) - 15 * extra
            scored.append((score, mid))
        scored.sort(reverse=True)
        if scored and size is not None:
            best = scored[0]
            alts = [mid for s, mid in scored[1:4]]
            conf = 0.95 if len(scored) == 1 else 0.8
            assumptions = []
            if len(scored) > 1 and ver is None:
                assumptions.append(
                    f"Model version not stated: assumed {best[1].split('/')[-1]} (others of that size: "
                    f"{', '.join(a.split('/')[-1] for a in alts)}); speed depends on size and format, so this "
                    "barely matters for the numbers."
                )
            return Match(models[best[1]], conf, assumptions, alts)
    if params_b is None:
        params_b = size
    if params_b is not None:
        return Match(generic_model(store, raw or f"{params_b:g}B model", params_b, active_b), 0.6,
                     [f"{raw or 'This model'} is not in the catalog: sized as a {params_b:g}B"
                      + (f" (≈{active_b:g}B active)" if active_b else "")
                      + " model with a generic architecture borrowed from the nearest catalog model."])
    names = {mid: (mid + " " + " ".join(m.aliases)).lower() for mid, m in models.items()}
    got = process.extract(key or raw, names, scorer=fuzz.WRatio, limit=5)
    raise NotFoundError(
        f"I don't know the model {raw[:80]!r} and no size was given. Closest: "
        + ", ".join(mid.split("/")[-1] for _, _, mid in got)
        + ". Give its size, e.g. '8B', to predict it anyway.",
        [mid for _, _, mid in got],
    )


def generic_model(store: Store, name: str, params_b: float, active_b: float | None = None) -> ModelSpec:
    """A model not in the catalog, sized ``params_b`` (total) / ``active_b`` (per token), billions.

    The attention shape (layers, KV heads, head dim) is borrowed from the dense catalog model of
    the nearest size among Llama 3.x / Qwen 2.5–3 (GQA with 8 or fewer KV heads), and the result is
    marked ``generic=True``.
    """
    models = all_models(store)
    ref_size = active_b or params_b
    dense = [m for m in models.values() if not m.active_params_b and m.n_layers and m.n_kv_heads and m.head_dim
             and m.kv_layers is None and re.search(r"llama-3|qwen2\.5|qwen3-", m.id.lower())]
    ref = min(dense, key=lambda m: abs(m.params_b - params_b)) if dense else None
    return ModelSpec(
        id=name.strip()[:80] or f"generic-{params_b:g}b", family="generic", params_b=params_b,
        active_params_b=active_b if active_b and active_b < params_b else None,
        n_layers=ref.n_layers if ref else None, n_kv_heads=ref.n_kv_heads if ref else None,
        head_dim=ref.head_dim if ref else None, hidden_size=ref.hidden_size if ref else None,
        vocab_size=ref.vocab_size if ref else None, generic=True,
        notes=f"generic architecture: attention shape of {ref.id if ref else 'none'} (nearest size to {ref_size:g}B)",
        source_url=ref.source_url if ref else "",
    )


# ----------------------------------------------------------------------------- formats
_QUANT_ALIASES = {
    "fp32": "F32", "f32": "F32", "float32": "F32",
    "fp16": "F16", "f16": "F16", "float16": "F16", "half": "F16", "16-bit": "F16", "16bit": "F16",
    "bf16": "BF16", "bfloat16": "BF16",
    "fp8": "FP8 (E4M3)", "e4m3": "FP8 (E4M3)",
    "mxfp4": "MXFP4", "awq": "AWQ 4-bit g128", "gptq": "GPTQ 4-bit g128",
}
_GGUF = re.compile(r"\b(i?q\d(?:_[a-z0-9]+)*)\b")


def resolve_quant(store: Store, text: str | None, *, backend: str | None = None) -> Match:
    """Resolve a weight format ("q4_k_m", "Q4_K - Medium", "4-bit", "mlx 8bit", "fp16", "UD-Q4_K_XL").

    A bare bit count ("4-bit") becomes the common format of the engine: MLX's 4-bit g64 under
    mlx, else GGUF Q4_K_M (Ollama's default), stated as an assumption.

    Raises:
        NotFoundError: nothing recognisable.
    """
    quants = all_quants(store)
    raw = (text or "").strip()[:300]
    t = raw.lower().replace(" - medium", "_m").replace(" - small", "_s").replace(" - large", "_l")
    t = t.replace("mostly ", "")
    be = (backend or "").lower()
    mlx_ctx = "mlx" in t or "mlx" in be
    if not t:
        raise NotFoundError("No weight format given.", [])
    for q in quants:
        if t == q.lower():
            return Match(quants[q], 1.0)
    if t in _QUANT_ALIASES:
        return Match(quants[_QUANT_ALIASES[t]], 1.0)
    g = _GGUF.search(re.sub(r"\bud[-_]", "", t).replace("-", " ").replace("_", "_"))
    if g:
        name = g.group(1).upper()
        if name in quants:
            return Match(quants[name], 0.97)
        base_map = {"Q4_K": "Q4_K_M", "Q5_K": "Q5_K_M", "Q3_K": "Q3_K_M", "Q6_K_L": "Q6_K", "Q8_K_XL": "Q8_0",
                    "Q4_K_XL": "Q4_K_M", "Q5_K_XL": "Q5_K_M", "Q3_K_XL": "Q3_K_M", "Q2_K_XL": "Q2_K",
                    "Q4_K_L": "Q4_K_M", "Q8": "Q8_0", "Q4": "Q4_K_M", "Q5": "Q5_K_M", "Q6": "Q6_K",
                    "Q3": "Q3_K_M", "Q2": "Q2_K", "IQ4_NL": "IQ4_XS", "IQ2_XS": "IQ2_XXS", "IQ3_XS": "IQ3_XXS",
                    "IQ3_S": "IQ3_XXS", "IQ3_M": "IQ3_XXS", "IQ2_M": "IQ2_XXS", "IQ2_S": "IQ2_XXS"}
        for k, v in base_map.items():
            if name.startswith(k):
                if v in quants:
                    return Match(quants[v], 0.75, [f"{raw} is not in the format table: sized as {v} "
                                                   f"({quants[v].bits_per_weight:g} bits per weight), its nearest published format."])
        for q in quants:
            if q.startswith(name.split("_")[0] + "_"):
                return Match(quants[q], 0.6, [f"{raw} sized as {q}, the nearest format in the table."])
    for k, v in _QUANT_ALIASES.items():
        if re.search(rf"(?<![\w]){re.escape(k)}(?![\w])", t):
            return Match(quants[v], 0.9)
    bits = re.search(r"\b(\d)\s*-?\s*(?:bit|bits|b)\b|\bint(\d)\b|\b(\d)bit\b|\bq(\d)\b", t)
    if bits:
        b = next(x for x in bits.groups() if x)
        if mlx_ctx:
            name = f"MLX {b}-bit g64"
        else:
            name = {"8": "Q8_0", "6": "Q6_K", "5": "Q5_K_M", "4": "Q4_K_M", "3": "Q3_K_M", "2": "Q2_K"}.get(b, "")
        if name in quants:
            why = "MLX's default group size 64" if mlx_ctx else "llama.cpp/Ollama's usual GGUF format"
            return Match(quants[name], 0.85, [f"'{raw}' taken as {name} ({quants[name].bits_per_weight:g} bits "
                                              f"per weight, {why})."])
    got = process.extract(t, list(quants), scorer=fuzz.WRatio, limit=4)
    raise NotFoundError(
        f"I don't know the weight format {raw[:60]!r}. Try one of: Q4_K_M, Q8_0, F16, 'MLX 4-bit'. "
        f"Closest: {', '.join(g for g, _, _ in got)}.",
        [g for g, _, _ in got],
    )
