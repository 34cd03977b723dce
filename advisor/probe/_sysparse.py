"""Pure parsers of system-tool output used by :mod:`advisor.probe.system` (testable anywhere).

Memory results are bytes unless the name says GB (10^9 bytes).
"""

from __future__ import annotations

import re
from typing import Any

__all__ = [
    "default_wired_limit_gb",
    "num",
    "nvml_bandwidth_gbs",
    "parse_cpuinfo",
    "parse_gpu_cores",
    "parse_lscpu",
    "parse_meminfo",
    "parse_nvidia_smi",
    "parse_pmset_batt",
    "parse_vm_stat",
    "pci_ids_name",
    "pci_marketing_name",
]

GB = 1e9
GIB = 2**30


def num(text: str | None) -> float | None:
    if text is None:
        return None
    m = re.search(r"-?\d+(?:\.\d+)?", text)
    return float(m.group()) if m else None


def parse_meminfo(text: str) -> dict[str, float]:
    """``/proc/meminfo`` → {"MemTotal": bytes, "MemAvailable": bytes, ...} (kB lines scaled)."""
    out: dict[str, float] = {}
    for line in text.splitlines():
        m = re.match(r"(\w+):\s+(\d+)(?:\s+kB)?", line)
        if m:
            out[m.group(1)] = float(m.group(2)) * (1024 if "kB" in line else 1)
    return out


def parse_cpuinfo(text: str) -> dict[str, Any]:
    """``/proc/cpuinfo`` → model name, logical count and physical cores (unique package/core ids)."""
    model = None
    logical = 0
    cores: set[tuple[str, str]] = set()
    phys = core = None
    for line in text.splitlines() + [""]:
        if not line.strip():
            if phys is not None and core is not None:
                cores.add((phys, core))
            phys = core = None
            continue
        key, _, value = line.partition(":")
        key, value = key.strip(), value.strip()
        if key == "processor":
            logical += 1
        elif key in ("model name", "Model", "Hardware", "cpu model") and value and model is None:
            model = value
        elif key == "physical id":
            phys = value
        elif key == "core id":
            core = value
    out: dict[str, Any] = {}
    if model:
        out["cpu_model"] = model
    if logical:
        out["cpu_cores_logical"] = logical
    if cores:
        out["cpu_cores_physical"] = len(cores)
    return out


def parse_lscpu(text: str) -> dict[str, Any]:
    """``lscpu`` → cpu model, physical cores (cores per socket × sockets), hypervisor, LLC."""
    kv: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep:
            kv.setdefault(key.strip(), value.strip())
    out: dict[str, Any] = {}
    if kv.get("Model name") and kv["Model name"] != "-":
        out["cpu_model"] = kv["Model name"]
    cps, sockets = num(kv.get("Core(s) per socket")), num(kv.get("Socket(s)"))
    if cps and sockets:
        out["cpu_cores_physical"] = int(cps * sockets)
    if kv.get("Hypervisor vendor"):
        out["hypervisor"] = kv["Hypervisor vendor"]
    if kv.get("L3 cache"):
        out["cpu_l3_cache"] = kv["L3 cache"]
    return out


def parse_nvidia_smi(text: str) -> list[dict[str, Any]]:
    """``nvidia-smi --query-gpu=name,memory.total,memory.free --format=csv,noheader,nounits`` rows.

    Memory values are MiB in, GB out.
    """
    gpus = []
    for line in text.strip().splitlines():
        parts = [p.strip() for p in line.split(",")]
        if len(parts) < 2 or not parts[0]:
            continue
        gpu: dict[str, Any] = {"name": parts[0]}
        total = num(parts[1])
        if total is not None:
            gpu["memory_gb"] = round(total * 2**20 / GB, 2)
        if len(parts) > 2 and num(parts[2]) is not None:
            gpu["memory_free_gb"] = round(num(parts[2]) * 2**20 / GB, 2)  # type: ignore[operator]
        gpus.append(gpu)
    return gpus


def parse_pmset_batt(text: str) -> str | None:
    """``pmset -g batt`` → "ac", "battery" or "ups" (from "Now drawing from 'AC Power'")."""
    m = re.search(r"drawing from '([^']+)'", text)
    if not m:
        return None
    src = m.group(1).lower()
    if "ac" in src:
        return "ac"
    if "battery" in src:
        return "battery"
    if "ups" in src:
        return "ups"
    return src


def parse_vm_stat(text: str) -> float | None:
    """macOS ``vm_stat`` → available bytes (free + inactive + speculative + purgeable pages)."""
    m = re.search(r"page size of (\d+) bytes", text)
    page = int(m.group(1)) if m else 4096
    pages = 0
    found = False
    for key in ("Pages free", "Pages inactive", "Pages speculative", "Pages purgeable"):
        mm = re.search(rf"{key}:\s+(\d+)", text)
        if mm:
            pages += int(mm.group(1))
            found = True
    return pages * page if found else None


def parse_gpu_cores(text: str) -> int | None:
    """GPU core count from ``ioreg -rc AGXAccelerator`` or ``system_profiler SPDisplaysDataType``."""
    for pat in (r'"gpu-core-count"\s*=\s*(\d+)', r"Total Number of Cores:\s*(\d+)", r'"sppci_cores"\s*:\s*"?(\d+)'):
        m = re.search(pat, text)
        if m:
            return int(m.group(1))
    return None


def default_wired_limit_gb(total_bytes: float) -> float:
    """macOS default GPU wired-memory share when ``iogpu.wired_limit_mb`` is 0 (an estimate).

    About two thirds of unified memory on machines with at most 36 GiB, about three quarters above.

    Args:
        total_bytes: physical memory in bytes (``hw.memsize``).

    Returns:
        The estimated limit in GB (10^9 bytes).
    """
    share = 2 / 3 if total_bytes <= 36 * GIB else 3 / 4
    return round(total_bytes * share / GB, 2)


def nvml_bandwidth_gbs(bus_bits: int | None, mem_clock_mhz: int | None) -> float | None:
    """Spec memory bandwidth from NVML's memory bus width and maximum memory clock, GB/s.

    ``bus_bits / 8 × clock × 2``: NVML reports the memory clock such that two transfers per clock
    give the data rate, for GDDR and HBM alike (RTX 4090: 384 bits × 10,501 MHz → 1,008 GB/s; H100
    SXM5: 5,120 bits × 2,619 MHz → 3,352 GB/s, the spec sheets' 1,008 GB/s and 3.35 TB/s).

    Returns:
        GB/s (10^9 bytes/s) rounded to 0.1, or None for missing or non-positive inputs.
    """
    if not bus_bits or not mem_clock_mhz or bus_bits <= 0 or mem_clock_mhz <= 0:
        return None
    return round(bus_bits / 8 * mem_clock_mhz * 1e6 * 2 / 1e9, 1)


def pci_ids_name(db: str, vendor: int, device: int) -> str | None:
    """The device's name in a ``pci.ids`` database text (``\\t2684  AD102 [GeForce RTX 4090]``), or None.

    Vendors start at column 0 (``10de  NVIDIA Corporation``), their devices follow indented by one
    tab, subsystems by two (skipped); the device-class section (``C 03 ...``) ends the vendors.
    """
    vend, dev = f"{vendor:04x}", f"{device:04x}"
    inside = False
    for line in (db or "").splitlines():
        if not line or line.startswith("#"):
            continue
        if not line.startswith("\t"):
            if inside:
                return None
            inside = line[:4].lower() == vend and line[4:6] == "  "
            continue
        if inside and not line.startswith("\t\t") and line[1:5].lower() == dev:
            return line[5:].strip() or None
    return None


def pci_marketing_name(pci_name: str | None) -> str | None:
    """``AD102 [GeForce RTX 4090]`` → ``GeForce RTX 4090`` (the bracketed part, when there is one)."""
    m = re.search(r"\[([^\]]+)\]", pci_name or "")
    return m.group(1).strip() if m else (pci_name or None)
