"""Weight formats weighed against each other: the answer to "Q4_K_M or IQ1_S?", "Q8 vs Q4?", "4-bit or 8-bit MLX?"
(``Scenario.compare_quants``).

Each format goes through the same prediction code as the verdict (:func:`advisor.diagnose.remedies.what_if`): its
memory need, whether it fits (on a Mac: by default, or once the GPU memory limit is raised), and its decode. The pick
is the one with the most bits per weight that fits and decodes at reading speed or better (more bits, answers
closer to the full model's); when none does, the fastest that fits.
"""

from __future__ import annotations

from advisor.diagnose.context import Ctx
from advisor.diagnose.fit import roomy
from advisor.diagnose.remedies import macos_reserve_gb, what_if
from advisor.errors import NotFoundError
from advisor.models import Prediction, QuantFormat
from advisor.render.markdown import READING_TPS
from advisor.understand.formats import format_conflict
from knowledge import catalog

__all__ = ["format_answer"]


def _fit_words(c: Ctx, p: Prediction) -> tuple[bool, str]:
    """(fits, words): whether the format fits as the machine is set up or after one setting (a Mac's GPU limit)."""
    m = p.memory
    if m.fits:
        return True, "fits"
    total = m.total_gb or 0.0
    if c.kind == "apple_soc" and total and m.required_gb <= total - macos_reserve_gb(total):
        return True, "fits once the GPU memory limit is raised"
    if c.kind in ("discrete_gpu", "datacenter_gpu"):
        return False, "does not fit the GPU (part would run from system RAM)"
    return False, "does not fit"


def _formats(c: Ctx) -> list[tuple[QuantFormat, str | None]]:
    """The formats named, resolved, each with why the engine in use cannot load it (None when it can)."""
    out: list[tuple[QuantFormat, str | None]] = []
    engine = "mlx" if "mlx" in (c.sit.engine_text or "").lower() else c.sit.engine
    for name in (c.sit.facts.compare_quants or [])[:4]:
        try:
            q = catalog.resolve_quant(c.store, name, backend=c.sit.engine_text).value
        except NotFoundError:
            continue
        clash = format_conflict(c.store, q, engine)
        if all(x.name != q.name for x, _ in out):
            out.append((q, clash[1].split(":")[0] if clash else None))
    return out


def format_answer(c: Ctx) -> str | None:
    """One paragraph weighing the formats the person named, each with its memory and decode; None when fewer than
    two formats were named or resolve."""
    named = _formats(c)
    if len(named) < 2 or c.sit.model is None:
        return None
    rows: list[tuple[QuantFormat, Prediction, bool, str]] = []
    parts: list[str] = []
    for q, clash in named:
        if clash:
            parts.append(f"{q.name}: {clash}")
            continue
        p = what_if(c, quant=q)
        if p is None or not p.decode_tps:
            return None
        ok, words = _fit_words(c, p)
        rows.append((q, p, ok, words))
        parts.append(f"{q.name} ({q.bits_per_weight:.3g} bits): needs {p.memory.required_gb:,.0f} GB, {words}; decode ≈ "
                     f"{p.decode_tps_per_seq or p.decode_tps:.1f} tok/s")
    if not rows:
        return "; ".join(parts) + "."
    roomy_rows = [r for r in rows if r[2] and roomy(r[1].memory.required_gb, r[1].memory.usable_gb or 0.0)
                  or r[3].startswith("fits once")]
    usable = [r for r in roomy_rows if (r[1].decode_tps_per_seq or r[1].decode_tps) >= READING_TPS]
    fitting = [r for r in rows if r[2]]
    if usable:
        pick = max(usable, key=lambda r: r[0].bits_per_weight)
        why = ("the most bits per weight that fit with room for the conversation and still decode at reading speed "
               "or better: its answers stay closest to the full model's")
    elif fitting:
        pick = max(fitting, key=lambda r: r[1].decode_tps)
        why = "none of them leaves room and reads at reading speed here; this one is the fastest that fits"
    else:
        pick = min(rows, key=lambda r: r[1].memory.required_gb)
        why = "none fits; this one needs the least memory"
    low = [q.name for q, *_ in rows if q.bits_per_weight < 3.0]
    warn = (f" Below about 3 bits ({', '.join(low)}) answers get visibly worse; the largest models hold up best."
            if low else "")
    return "; ".join(parts) + f". Pick {pick[0].name}: {why}.{warn}"
