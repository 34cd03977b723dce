"""Model look-up: catalog models by id, alias or the names people write ("qwen3 30b a3b")."""

from __future__ import annotations

import math
import re
from functools import lru_cache

from rapidfuzz import fuzz, process

from advisor.errors import NotFoundError
from advisor.models import MAX_PARAMS_B, ModelSpec
from knowledge.catalog._load import Match, all_models
from knowledge.seed import read_csv
from knowledge.store import Store

__all__ = ["family_key", "generic_model", "resolve_model"]


# ----------------------------------------------------------------------------- models
_SIZE = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)\s*b\b")
_SIZE_M = re.compile(r"(?<![\w.])(\d{2,4})\s*m\b")  # a size in millions of parameters
_ACTIVE = re.compile(r"\ba(\d+(?:\.\d+)?)b\b")
_MOE_X = re.compile(r"\b(\d+)x(\d+(?:\.\d+)?)b\b")
_QUANT_SUFFIX = re.compile(
    r"[-_. :](?:gguf|mlx|instruct|chat|it|base|hf|awq|gptq|fp16|bf16|f16|\d-?bit|q\d[\w]*|iq\d[\w]*|mxfp4|dwq|qat|"
    r"ud|v\d+(?:\.\d+)?|\d{4})\b"
)


_ARCH_VERSION = re.compile(r"\bqwen(\d)(\d)(?:moe)?\b|\bqwen(\d)moe\b")  # llama.cpp's arch names: qwen35, qwen3moe


def _model_key(text: str) -> str:
    t = text.strip().lower()
    if "/" in t:
        t = t.split("/")[-1]
    t = t.replace("_", "-")
    # llama-bench prints the architecture: "qwen35 4B" is Qwen3.5, "qwen3moe 30B.A3B" Qwen3 (MoE)
    t = _ARCH_VERSION.sub(lambda m: f"qwen{m.group(1)}.{m.group(2)}" if m.group(1) else f"qwen{m.group(3)}", t)
    return re.sub(r"(\d)b\.a(\d)", r"\1b-a\2", t)


def _strip_suffixes(t: str) -> str:
    prev = None
    while prev != t:
        prev = t
        t = _QUANT_SUFFIX.sub("", t).strip(" -_.:")
    return t


def _family_tokens(t: str) -> list[str]:
    fams = re.findall(
        r"(llama|qwen|gemma|mistral|mixtral|phi|gpt[- ]?oss|deepseek|tinyllama|coder|distill|small|mini|r1)", t
    )
    return fams


def _version(t: str) -> str | None:
    """The family version written ("llama 3.1" → "3.1", "gemma 3n" → "3n"), or None."""
    m = re.search(r"(?:llama|qwen|gemma|phi|mistral)[\s-]?(\d(?:\.\d)?n?)(?![\d.]*\s*b\b)", t)
    return m.group(1) if m else None


def _version_pattern(ver: str) -> str:
    """A catalog name carrying family version ``ver`` ("3" is not "3.1" nor Gemma "3n")."""
    return rf"(?:llama|qwen|gemma|phi|mistral)[\s-]?{re.escape(ver)}(?![\d.])" + ("" if ver.endswith("n") else "(?!n)")


_RELEASE = re.compile(r"(?<![\w.])v(\d+(?:\.\d+)?)\b")


def _release_note(raw: str, m: ModelSpec) -> list[str]:
    """The assumption when the text names a release ("v0.1") the chosen model is not ("Mistral-7B-...-v0.2")."""
    rel = _RELEASE.search(raw.lower())
    if rel and not re.search(rf"\bv{re.escape(rel.group(1))}\b", (m.id + " " + " ".join(m.aliases)).lower()):
        return [f"Version v{rel.group(1)} is not in the catalog: assumed {m.id.split('/')[-1]} (same size and family; "
                "the numbers depend on size and format, not on the release)."]
    return []


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
    # Aliases are written with spaces or hyphens ("deepseek-v3.1"): the text is tried both ways.
    for cand in (raw.lower(), key, re.sub(r"[\s-]+", "-", key), _strip_suffixes(key), _strip_suffixes(key).replace("-", " ")):
        if cand and cand in alias_map:
            return Match(models[alias_map[cand]], 1.0, _release_note(raw, models[alias_map[cand]]))
        if cand and cand.lower() in {m.lower() for m in models}:
            mid = next(m for m in models if m.lower() == cand.lower())
            return Match(models[mid], 1.0, _release_note(raw, models[mid]))
    t = _strip_suffixes(key).replace("-", " ")
    size = None
    sm = _MOE_X.search(t)
    if sm:
        size = float(sm.group(1)) * float(sm.group(2))
    else:
        sizes = ([float(x) for x in _SIZE.findall(t)] or [float(x) for x in re.findall(r"\be(\d+(?:\.\d+)?)b\b", t)]
                 or [float(x) / 1000 for x in _SIZE_M.findall(t)])  # "gemma-3-270m", "smollm2-135m"
        active = _ACTIVE.search(t)
        sizes = [s for s in sizes if not (active and s == float(active.group(1)))]
        size = sizes[0] if sizes else None
    if not size:  # "llama 3 0b": a size of 0 names no model (and divided by zero below)
        size = None
    active_b = float(_ACTIVE.search(t).group(1)) if _ACTIVE.search(t) else None  # type: ignore[union-attr]
    fams = _family_tokens(t)
    ver = _version(t)
    if raw and fams:
        scored = []
        for mid, m in models.items():
            name = (mid.split("/")[-1] + " " + " ".join(m.aliases)).lower()
            if not all(f in name for f in fams if f not in ("r1",)):
                continue
            if ver and not re.search(_version_pattern(ver), name):
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
            exact = size is not None and any(abs(float(x) - size) < 0.05
                                             for x in re.findall(r"(?<![a-z\d.])(\d+(?:\.\d+)?)b", name))
            if m.is_moe and size is not None and active_b is None and not exact and abs(m.params_b - size) / size > 0.05:
                continue  # "qwen3 72b" (dense, no such model) is not the 80B-A3B MoE: a different speed altogether
            scored.append((score, mid, exact))
        if any(e for _, _, e in scored):  # "deepseek r1 8b" is the 8B distill, not the 7.6B one within tolerance
            scored = [x for x in scored if x[2]]
        scored.sort(reverse=True)
        if scored and size is not None:
            best = scored[0]
            alts = [mid for _, mid, _ in scored[1:4]]
            conf = 0.95 if len(scored) == 1 else 0.8
            assumptions = []
            if len(scored) > 1 and ver is None:
                assumptions.append(
                    f"Model version not stated: assumed {best[1].split('/')[-1]} (others of that size: "
                    f"{', '.join(a.split('/')[-1] for a in alts)}); speed depends on size and format, so this "
                    "barely matters for the numbers."
                )
            return Match(models[best[1]], conf, assumptions + _release_note(raw, models[best[1]]), alts)
    if params_b is None:
        params_b = size
    if params_b is not None and params_b > MAX_PARAMS_B:
        raise NotFoundError(f"{raw[:80]!r} would have {params_b:,.0f}B parameters, more than any model (at most "
                            f"{MAX_PARAMS_B:,.0f}B): check the name or the size.", [])
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


_ORG_TOKENS = frozenset({"nvidia", "meta", "google", "microsoft", "ibm", "mistralai", "openai", "unsloth"})
_SIZE_TOKEN = re.compile(r"e?\d+(?:\.\d+)?[bm]|a\d+(?:\.\d+)?b|\d+x\d+(?:\.\d+)?b")


def family_key(name: str) -> str:
    """The model line a name belongs to: its words up to the first one carrying a version number, without an
    organisation prefix ("nvidia-nemotron-3-super-120b-a12b" → "nemotron-3", "Qwen/Qwen3.5-9B" → "qwen3.5",
    "gemma-4-e4b" → "gemma-4"); "" when no word carries a version before the size."""
    toks = [t for t in re.split(r"[-\s_]+", _model_key(name)) if t]
    while toks and toks[0] in _ORG_TOKENS:
        toks = toks[1:]
    out: list[str] = []
    for tok in toks:
        if _SIZE_TOKEN.fullmatch(tok):
            break
        out.append(tok)
        if re.search(r"\d", tok):
            return "-".join(out)
    return ""


def _size_distance(m: ModelSpec, size: float) -> tuple[float, str]:
    return (abs(math.log(max(m.params_b, 1e-3) / size)), m.id)


def generic_model(store: Store, name: str, params_b: float, active_b: float | None = None) -> ModelSpec:
    """A model not in the catalog, sized ``params_b`` (total) / ``active_b`` (per token), billions.

    When the catalog holds other sizes of the same model line (:func:`family_key`: "qwen3.5-4b" is a
    Qwen3.5, "nemotron-3-super-120b-a12b" a Nemotron 3), the shape is borrowed from the sibling of the
    nearest size (by size ratio), of the same kind (MoE or dense) where there is one: layers, heads, and
    the attention layout (hybrid linear-attention and sliding-window layers keep little or no KV cache,
    so a Qwen3.5 or Gemma 4 of any size does); a MoE sibling lends its routing (experts, experts per
    token). Otherwise the attention shape (layers, query and KV heads, head dim) is borrowed from the dense
    catalog model of the nearest size among Llama 3.x / Qwen 2.5–3 (GQA with 8 or fewer KV heads). The
    result is marked ``generic=True``. A MoE is matched at ``√(total × active)``: its attention is that of
    a model between the two (Qwen3-30B-A3B's, 786 k FLOPs per token per context token, lies between
    Qwen2.5-3B's 295 k and Qwen2.5-32B's 1.31 M; at √(30.5 × 3.3) ≈ 10B an 8B's 590 k is the nearest) —
    an ESTIMATE either way, and the notes say which model lent the shape.
    """
    models = all_models(store)
    is_moe = bool(active_b and active_b < params_b)
    ref_size = math.sqrt(params_b * active_b) if is_moe and active_b else params_b
    fam = family_key(name)
    kin = [m for m in models.values() if fam and family_key(m.id) == fam and m.n_layers and m.n_kv_heads and m.head_dim]
    same = [m for m in kin if bool(m.active_params_b) == is_moe]
    sib = min(same or kin, key=lambda m: _size_distance(m, params_b)) if kin else None
    routing = None
    ref: ModelSpec | None
    if sib is not None and _size_distance(sib, params_b)[0] <= math.log(2.0):
        ref = sib
        routing = sib if same and is_moe else None  # routing differs between sizes of a line (gpt-oss: 32 vs 128)
        why = f"same model line ({fam}): shape and attention layout of {sib.id} (nearest size to {params_b:g}B)"
    else:
        dense = [m for m in models.values() if not m.active_params_b and m.n_layers and m.n_kv_heads and m.head_dim
                 and m.kv_layers is None and re.search(r"llama-3|qwen2\.5|qwen3-", m.id.lower())]
        ref = min(dense, key=lambda m: (abs(m.params_b - ref_size), m.id)) if dense else None  # ties: by id (stable)
        why = f"attention shape of {ref.id if ref else 'none'} (nearest size to {ref_size:.3g}B)"
        if sib is not None and ref is not None and (sib.kv_layers is not None or sib.sliding_layers):
            why += f"; attention layout of the same model line's {sib.id}"
    kv_layers = sliding_layers = sliding_window = None
    if sib is not None and ref is not None and sib.n_layers:
        # the sibling's layout as shares of its layers, on the borrowed layer count
        share = ref.n_layers / sib.n_layers if ref.n_layers else 1.0
        kv_layers = round(sib.kv_layers * share) if sib.kv_layers is not None else None
        sliding_layers = round(sib.sliding_layers * share) if sib.sliding_layers is not None else None
        sliding_window = sib.sliding_window
    return ModelSpec(
        id=name.strip()[:80] or f"generic-{params_b:g}b", family="generic", params_b=params_b,
        active_params_b=active_b if is_moe else None,
        n_layers=ref.n_layers if ref else None, n_heads=ref.n_heads if ref else None,
        n_kv_heads=ref.n_kv_heads if ref else None,
        head_dim=ref.head_dim if ref else None, hidden_size=ref.hidden_size if ref else None,
        vocab_size=ref.vocab_size if ref else None, generic=True,
        kv_layers=kv_layers, sliding_layers=sliding_layers, sliding_window=sliding_window,
        experts=routing.experts if routing else None,
        experts_per_token=routing.experts_per_token if routing else None,
        shared_experts=routing.shared_experts if routing else None,
        moe_source_url=routing.moe_source_url if routing else "",
        notes="generic architecture: " + why,
        source_url=ref.source_url if ref else "",
    )


@lru_cache(maxsize=1)
def _release_formats() -> dict[str, str]:
    return {r["model_id"].lower(): r["release_format"].strip()
            for r in read_csv("models.csv") if (r.get("release_format") or "").strip()}


def release_format(model_id: str | None) -> str | None:
    """The weight format a model is released in when it is not 16-bit (``"FP8 (E4M3)"`` for DeepSeek-V3/R1,
    ``"MXFP4"`` for gpt-oss), from the seed's ``release_format`` column (its config's quantization_config,
    source in ``release_format_source``); None for a 16-bit release or a model the catalog lacks."""
    return _release_formats().get((model_id or "").lower())
