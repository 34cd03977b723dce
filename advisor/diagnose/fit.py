"""What fits with room to spare: the headroom rule and the real catalog models that fit a machine.

One home for the headroom rule. A model that fits with almost nothing left over is not a fix:
the KV cache grows as the conversation gets longer, the engine's buffers grow with the batch, and
other apps take GPU memory too. :func:`margin_needed` is the room an answer must leave, in GB:

    margin_needed(usable) = min(MIN_MARGIN_GB, MARGIN_SHARE × usable)

``MIN_MARGIN_GB`` = 1.5 GB is an ESTIMATE: the KV cache of an 8–14B model at f16 grows by about
0.13–0.2 MB a token (Llama 3.1 8B: 32 layers × 8 KV heads × 128 × 2 × 2 bytes = 128 KiB/token), so
8,000 more tokens of conversation take ~1–1.5 GB; ``MARGIN_SHARE`` = 15 % scales it down for
small devices (a 5 GB budget keeps 0.75 GB).

:func:`fitting_models` names real catalog models (never "a ~13.7B model") that fit the usable
memory at a stated format with that margin, largest first, skipping models a newer release of
the same line replaces at about the same size, and distills / coder variants unless the person
runs one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from advisor import roofline
from advisor.errors import AdvisorError
from advisor.models import Hardware, ModelSpec
from knowledge import catalog
from knowledge.store import Store

__all__ = ["MIN_MARGIN_GB", "MARGIN_SHARE", "Candidate", "fitting_models", "margin_needed", "model_label",
           "roomy", "thin_words"]

MIN_MARGIN_GB = 1.5
MARGIN_SHARE = 0.15


def margin_needed(usable_gb: float) -> float:
    """GB an answer must leave free of ``usable_gb`` (module docstring)."""
    return min(MIN_MARGIN_GB, MARGIN_SHARE * max(usable_gb, 0.0))


def roomy(required_gb: float, usable_gb: float) -> bool:
    """True when ``required_gb`` fits ``usable_gb`` with :func:`margin_needed` to spare."""
    return usable_gb - required_gb >= margin_needed(usable_gb)


def thin_words(required_gb: float, usable_gb: float) -> str:
    """"only 0.1 GB to spare — too thin …" for a fit without the margin ('' when the margin is there)."""
    if roomy(required_gb, usable_gb):
        return ""
    left = max(usable_gb - required_gb, 0.0)
    return (f"only {left:.1f} GB to spare — too thin: a longer conversation or another app would push it out "
            f"of fast memory (keep about {margin_needed(usable_gb):.1f} GB free)")


_SIZE = re.compile(r"(?<![\d.])(\d+(?:\.\d+)?)[bB](?:-[aA](\d+(?:\.\d+)?)[bB])?(?![a-zA-Z])")
_VERSION = re.compile(r"^(.*?)[\s-]?(\d+(?:\.\d+)?)(.*)$")


def model_label(m: ModelSpec) -> str:
    """A name people recognise: ``Qwen3 14B``, ``Gemma 3 12B``, ``Qwen3 30B-A3B``; a MoE always with its active size
    (``gpt-oss 20B-A3.6B``, ``Granite 4.0 H 32B-A9B``), which sets its speed."""
    fam = re.sub(r"\s*\(.*?\)", "", m.family or "").replace(" MoE", "").strip()
    tail = m.id.split("/")[-1]
    size = None
    s = _SIZE.search(tail)
    if s is not None:
        total = float(s.group(1))
        if abs(total - m.params_b) <= 0.35 * m.params_b:
            size = f"{s.group(1)}B" + (f"-A{s.group(2)}B" if s.group(2) else "")
    if size is None:
        size = f"{m.params_b:.3g}B"
    if m.is_moe and "-A" not in size and m.active_params_b:
        size += f"-A{m.active_params_b:.2g}B"  # a MoE reads its active parameters per token: that sets its speed
    if not fam:
        return tail
    return f"{fam} {size}"


def _line(m: ModelSpec) -> tuple[str, float]:
    """(line, version): ``Gemma 3`` → (``gemma``, 3.0); ``Qwen2.5`` → (``qwen``, 2.5); no number → 0."""
    fam = re.sub(r"\s*\(.*?\)", "", m.family or m.id).strip()
    v = _VERSION.match(fam)
    if v is None:
        return fam.lower(), 0.0
    return (v.group(1) + v.group(3)).strip().lower(), float(v.group(2))


def _special(m: ModelSpec) -> str:
    t = (m.id + " " + m.family).lower()
    return " ".join(w for w in ("distill", "coder") if w in t)


def _replaces(o: ModelSpec, m: ModelSpec) -> bool:
    """``o`` is a newer release of ``m``'s line at about its size: 0.75–1.33× for a point release, 0.5–2×
    a whole generation on (Llama 3.1 8B replaces Llama 2 13B; Qwen3 14B replaces Qwen2.5 14B)."""
    (lo, vo), (lm, vm) = _line(o), _line(m)
    if o is m or lo != lm:
        return False
    r = o.params_b / m.params_b
    if vo == vm:
        return o.params_b == m.params_b and o.id > m.id  # the same model twice (v0.2 / v0.3): the later id
    return vo > vm and (0.75 <= r <= 1.34 or (vo - vm >= 1 and 0.5 <= r <= 2.0))


def _current(models: list[ModelSpec]) -> list[ModelSpec]:
    """Models no newer release of the same line replaces (:func:`_replaces`)."""
    return [m for m in models if not any(_replaces(o, m) for o in models)]


@dataclass(frozen=True)
class Candidate:
    """A catalog model that fits: the model and its memory fit (GB)."""

    model: ModelSpec
    required_gb: float
    usable_gb: float

    @property
    def label(self) -> str:
        return model_label(self.model)


def shortlist_ids(store: Store) -> set[str]:
    """Catalog ids of the which-model shortlists (:mod:`advisor.intake._model_pick`): the current lines."""
    def build() -> set[str]:
        from advisor.intake._model_pick import CODING_MODELS, GENERAL_MODELS

        out = set()
        for name in (*GENERAL_MODELS, *CODING_MODELS):
            try:
                out.add(catalog.resolve_model(store, name).value.id)
            except AdvisorError:
                continue
        return out

    return store.cached("diagnose:shortlist_ids", build)  # type: ignore[no-any-return]


def fitting_models(store: Store, hw: Hardware, bits_per_weight: float, *, context_tokens: int, users: int = 1,
                   like: ModelSpec | None = None, below_b: float | None = None, below_active_b: float | None = None,
                   at_least_b: float | None = None, limit: int = 2) -> list[Candidate]:
    """Up to ``limit`` real catalog models that fit ``hw`` at ``bits_per_weight`` with the margin, best first.

    Args:
        like: the person's model: its line comes first when it has a fitting size, and distills / coder
            variants are offered only when it is one.
        below_b: only models smaller than this many billion parameters.
        below_active_b: only models that read fewer than this many billion parameters per token (MoE: active).
        at_least_b: only models with at least this many billion parameters in all.

    Returns:
        Largest first, one per line (a second line for a choice); empty when nothing fits.
    """
    kind = _special(like) if like is not None else ""
    pool = [m for m in _current(list(catalog.all_models(store).values())) if not m.generic and _special(m) == kind
            and (below_b is None or m.params_b < below_b) and (below_active_b is None or m.active_b < below_active_b)
            and (at_least_b is None or m.params_b >= at_least_b)
            and (m.max_context is None or m.max_context >= context_tokens)  # it must hold the prompt
            and (like is None or m.id != like.id)]
    picks = shortlist_ids(store)
    fits: list[Candidate] = []
    for m in pool:
        fm = roofline.memory_fit(hw, m, bits_per_weight, context_tokens=context_tokens, concurrency=users)
        if fm.total_gb is not None and roomy(fm.required_gb, fm.usable_gb):
            fits.append(Candidate(m, fm.required_gb, fm.usable_gb))
    # the current lines people run (the which-model shortlists) first, largest first; then the rest of the catalog
    fits.sort(key=lambda c: (c.model.id not in picks, -c.model.params_b, c.model.id))
    if like is not None and fits:
        same = sorted((c for c in fits if _line(c.model)[0] == _line(like)[0]), key=lambda c: -c.model.params_b)
        if same and same[0].model.params_b >= 0.6 * fits[0].model.params_b:
            fits.remove(same[0])
            fits.insert(0, same[0])
    out: list[Candidate] = []
    for c in fits:
        if all(_line(c.model)[0] != _line(o.model)[0] for o in out):
            out.append(c)
        if len(out) == limit:
            break
    return out
