"""What machine is this? CPU, memory, GPU, power and container hints, without raising.

Every external command runs with a short timeout; whatever cannot be read is simply absent from the
result. Memory is reported in GB of 10^9 bytes (``_gb``), like the rest of the advisor, with the
binary total (``memory_total_gib``) alongside because vendors sell "24 GB" machines that hold 24 GiB.

Sources: Linux ``/proc/cpuinfo``, ``/proc/meminfo``, ``lscpu``, cgroup files and
``/sys/class/power_supply``; macOS ``sysctl`` (``hw.memsize``, ``machdep.cpu.brand_string``,
``hw.physicalcpu``, ``iogpu.wired_limit_mb``), ``vm_stat``, ``pmset -g batt``, ``ioreg`` or
``system_profiler SPDisplaysDataType``; ``nvidia-smi`` wherever it is on ``PATH``; MLX ``device_info``
on Metal; ``psutil`` (what is still missing, and Windows) and NVIDIA's NVML through ``nvidia-ml-py``
(name, memory, PCI id, spec bandwidth from bus width × memory clock) where they are installed
(:mod:`advisor.probe._syslib`).
"""

from __future__ import annotations

import os
import platform
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from advisor.probe._syslib import nvml_gpus, psutil_fill, windows_cpu_model
from advisor.probe._sysparse import (
    default_wired_limit_gb,
    num,
    parse_cpuinfo,
    parse_gpu_cores,
    parse_lscpu,
    parse_meminfo,
    parse_nvidia_smi,
    parse_pmset_batt,
    parse_vm_stat,
)

__all__ = [
    "CpuSnapshot",
    "available_memory_bytes",
    "cpu_busy_others_pct",
    "default_wired_limit_gb",
    "detect_machine",
    "parse_cpuinfo",
    "parse_gpu_cores",
    "parse_lscpu",
    "parse_meminfo",
    "parse_nvidia_smi",
    "parse_pmset_batt",
    "parse_vm_stat",
]

GB = 1e9
GIB = 2**30
#: Runs a command and returns its stdout, or None when it is missing, fails or times out.
Runner = Callable[[list[str], float], "str | None"]


def _run(cmd: list[str], timeout: float = 3.0) -> str | None:
    """Run ``cmd`` and return stdout, or None on any failure (missing, non-zero exit, timeout)."""
    if shutil.which(cmd[0]) is None:
        return None
    try:
        proc = subprocess.run(
            cmd, capture_output=True, text=True, timeout=timeout, check=False, stdin=subprocess.DEVNULL
        )
    except (OSError, subprocess.SubprocessError, ValueError):
        return None
    return proc.stdout if proc.returncode == 0 else None


def _read(path: str) -> str | None:
    try:
        return Path(path).read_text(errors="replace")
    except (OSError, ValueError):
        return None


def _round(x: float | None, nd: int = 2) -> float | None:
    return None if x is None else round(x, nd)


# --------------------------------------------------------------------------------------------- sections


def _container_hints() -> bool:
    if os.path.exists("/.dockerenv") or os.path.exists("/run/.containerenv"):
        return True
    if os.environ.get("container") or os.environ.get("KUBERNETES_SERVICE_HOST"):
        return True
    cg = _read("/proc/1/cgroup") or ""
    return bool(re.search(r"docker|kubepods|containerd|lxc|podman|libpod", cg))


def _cgroup_memory_limit() -> tuple[float | None, float | None]:
    """(limit bytes, usage bytes) of this cgroup, v2 then v1; None where unlimited or unreadable."""
    for limit_path, usage_path in (
        ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current"),
        ("/sys/fs/cgroup/memory/memory.limit_in_bytes", "/sys/fs/cgroup/memory/memory.usage_in_bytes"),
    ):
        raw = _read(limit_path)
        if raw is None:
            continue
        raw = raw.strip()
        if not raw.isdigit():
            return None, None  # "max": unlimited
        limit = float(raw)
        if limit >= 2**60:  # v1 "unlimited" is a huge number
            return None, None
        usage = num(_read(usage_path))
        return limit, usage
    return None, None


def _linux(info: dict[str, Any], run: Runner) -> None:
    cpuinfo = _read("/proc/cpuinfo")
    if cpuinfo:
        info.update({k: v for k, v in parse_cpuinfo(cpuinfo).items() if v})
    lscpu = run(["lscpu"], 3.0)
    if lscpu:
        parsed = parse_lscpu(lscpu)
        if "cpu_model" in parsed and (info.get("cpu_model") in (None, "") or "cpu_model" not in info):
            info["cpu_model"] = parsed["cpu_model"]
        for key in ("hypervisor", "cpu_l3_cache"):
            if key in parsed:
                info[key] = parsed[key]
        if "cpu_cores_physical" not in info and "cpu_cores_physical" in parsed:
            info["cpu_cores_physical"] = parsed["cpu_cores_physical"]
    quota = (_read("/sys/fs/cgroup/cpu.max") or "").split()
    if len(quota) == 2 and quota[0].isdigit() and quota[1].isdigit() and int(quota[1]) > 0:
        info["cpu_quota_cores"] = round(int(quota[0]) / int(quota[1]), 2)  # container CPU limit
    mem = parse_meminfo(_read("/proc/meminfo") or "")
    total, avail = mem.get("MemTotal"), mem.get("MemAvailable", mem.get("MemFree"))
    limit, usage = _cgroup_memory_limit()
    if limit is not None and (total is None or limit < total):
        info["memory_limit_gb"] = _round(limit / GB)
        if avail is not None and usage is not None:
            avail = min(avail, max(0.0, limit - usage))
    if total:
        info["memory_total_gb"] = _round(total / GB)
        info["memory_total_gib"] = _round(total / GIB)
    if avail is not None:
        info["memory_available_gb"] = _round(avail / GB)
    power = _linux_power()
    if power:
        info["power_source"] = power


def _linux_power() -> str | None:
    base = Path("/sys/class/power_supply")
    try:
        supplies = list(base.iterdir())
    except OSError:
        return None
    on_ac = battery = None
    for sup in supplies:
        kind = (_read(str(sup / "type")) or "").strip()
        if kind in ("Mains", "USB") and (_read(str(sup / "online")) or "").strip() == "1":
            on_ac = True
        elif kind == "Battery":
            battery = (_read(str(sup / "status")) or "").strip()
    if on_ac:
        return "ac"
    if battery == "Discharging":
        return "battery"
    if battery:
        return "ac"  # charging, full or "Not charging" all mean a charger is attached
    return None


def _darwin(info: dict[str, Any], run: Runner) -> None:
    def sysctl(name: str) -> str | None:
        out = run(["sysctl", "-n", name], 2.0)
        return out.strip() if out and out.strip() else None

    brand = sysctl("machdep.cpu.brand_string")
    if brand:
        info["cpu_model"] = brand
    for key, name in (
        ("cpu_cores_physical", "hw.physicalcpu"),
        ("cpu_cores_logical", "hw.logicalcpu"),
        ("cpu_cores_performance", "hw.perflevel0.physicalcpu"),
        ("cpu_cores_efficiency", "hw.perflevel1.physicalcpu"),
    ):
        v = num(sysctl(name))
        if v:
            info[key] = int(v)
    total = num(sysctl("hw.memsize"))
    if total:
        info["memory_total_gb"] = _round(total / GB)
        info["memory_total_gib"] = _round(total / GIB)
    vm = run(["vm_stat"], 2.0)
    avail = parse_vm_stat(vm) if vm else None
    if avail is not None:
        info["memory_available_gb"] = _round(avail / GB)
    wired = num(sysctl("iogpu.wired_limit_mb"))
    if wired is not None and total:
        if wired > 0:
            info["gpu_wired_limit_gb"] = _round(wired * 2**20 / GB)
            info["gpu_wired_limit_is_default"] = False
        else:
            info["gpu_wired_limit_gb"] = default_wired_limit_gb(total)
            info["gpu_wired_limit_is_default"] = True
            info["gpu_wired_limit_is_estimate"] = True
    if platform.machine() == "arm64" or (brand or "").startswith("Apple"):
        info["unified_memory"] = True
        if brand and brand.startswith("Apple"):
            info["chip"] = brand  # e.g. "Apple M2 Max": CPU and GPU are one SoC
            info.setdefault("gpu_name", f"{brand} GPU")
        if total:
            info["gpu_memory_gb"] = _round(total / GB)
        cores = None
        ioreg = run(["ioreg", "-rc", "AGXAccelerator", "-d", "1"], 3.0)
        if ioreg:
            cores = parse_gpu_cores(ioreg)
        if cores is None:
            sp = run(["system_profiler", "SPDisplaysDataType"], 6.0)
            cores = parse_gpu_cores(sp) if sp else None
        if cores:
            info["gpu_cores"] = cores
    batt = run(["pmset", "-g", "batt"], 2.0)
    power = parse_pmset_batt(batt) if batt else None
    if power:
        info["power_source"] = power


def _metal_info(info: dict[str, Any]) -> None:
    """Add what MLX knows about the Metal GPU (only when mlx is importable and Metal present)."""
    try:
        import mlx.core as mx

        if not mx.metal.is_available():
            return
        dev = mx.device_info(mx.gpu) if hasattr(mx, "device_info") else mx.metal.device_info()
    except Exception:  # noqa: BLE001 - detection never raises
        return
    name = dev.get("device_name")
    if name:
        info["gpu_name"] = str(name)
    ws = dev.get("max_recommended_working_set_size")
    if isinstance(ws, int | float) and ws > 0:
        info["gpu_recommended_working_set_gb"] = _round(ws / GB)


def _nvidia(info: dict[str, Any], run: Runner) -> None:
    out = run(
        ["nvidia-smi", "--query-gpu=name,memory.total,memory.free", "--format=csv,noheader,nounits"], 5.0
    )
    gpus = parse_nvidia_smi(out) if out else []
    if not gpus:
        return
    info["gpu_name"] = gpus[0]["name"]
    if "memory_gb" in gpus[0]:
        info["gpu_memory_gb"] = gpus[0]["memory_gb"]
    if "memory_free_gb" in gpus[0]:
        info["gpu_memory_free_gb"] = gpus[0]["memory_free_gb"]
    info["gpu_count"] = len(gpus)
    if len(gpus) > 1:
        info["gpus"] = gpus


def _nvml(info: dict[str, Any], gpus: list[dict[str, Any]] | None = None) -> None:
    """NVML's view of the NVIDIA GPUs (preferred over ``nvidia-smi``: exact PCI id, bus width, clock)."""
    gpus = nvml_gpus() if gpus is None else gpus
    if not gpus:
        return
    g = gpus[0]
    for src, dst in (("name", "gpu_name"), ("memory_gb", "gpu_memory_gb"), ("memory_free_gb", "gpu_memory_free_gb"),
                     ("pci_id", "gpu_pci_id"), ("pci_name", "gpu_pci_name"), ("bandwidth_gbs", "gpu_bandwidth_gbs")):
        if src in g:
            info[dst] = g[src]
    if "bandwidth_gbs" in g:
        info["gpu_bandwidth_source"] = (f"NVML: {g['memory_bus_bits']}-bit bus × {g['memory_clock_mhz']} MHz "
                                        "max memory clock × 2 transfers (spec, not measured)")
    info["gpu_count"] = len(gpus)
    if len(gpus) > 1:
        info["gpus"] = gpus


def _windows(info: dict[str, Any]) -> None:
    model = windows_cpu_model()
    if model:
        info["cpu_model"] = model


def available_memory_bytes() -> float | None:
    """RAM available to this process without swapping, bytes (cgroup limit applied); None if unknown.

    Cheaper than :func:`detect_machine`: reads ``/proc/meminfo`` on Linux, runs ``vm_stat`` on macOS.
    """
    try:
        if platform.system() == "Darwin":
            out = _run(["vm_stat"], 2.0)
            return parse_vm_stat(out) if out else None
        mem = parse_meminfo(_read("/proc/meminfo") or "")
        avail = mem.get("MemAvailable", mem.get("MemFree"))
        limit, usage = _cgroup_memory_limit()
        if avail is not None and limit is not None and usage is not None:
            avail = min(avail, max(0.0, limit - usage))
        return avail
    except Exception:  # noqa: BLE001
        return None


class CpuSnapshot:
    """Machine-wide busy CPU time (``/proc/stat``) and this process's CPU time, for contention."""

    def __init__(self) -> None:
        self.wall = time.monotonic()
        self.own = sum(os.times()[:4])
        self.busy: float | None = None
        line = (_read("/proc/stat") or "").split("\n", 1)[0].split()
        if line[:1] == ["cpu"] and len(line) >= 5:
            vals = [float(v) for v in line[1:]]
            hz = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
            idle = vals[3] + (vals[4] if len(vals) > 4 else 0.0)  # idle + iowait
            self.busy = (sum(vals[:8]) - idle) / hz


def cpu_busy_others_pct(before: CpuSnapshot, after: CpuSnapshot) -> float | None:
    """Share of the machine's CPU time used by other processes between two snapshots, percent.

    Linux only (``/proc/stat``); None elsewhere. A high value means the probe competed for cores and
    memory bandwidth, so its figures understate the machine.
    """
    if before.busy is None or after.busy is None:
        return None
    wall = after.wall - before.wall
    cores = os.cpu_count() or 1
    if wall <= 0:
        return None
    others = (after.busy - before.busy) - (after.own - before.own)
    return round(max(0.0, min(100.0, 100.0 * others / (wall * cores))), 1)


def detect_machine(*, run: Runner | None = None, system: str | None = None, nvml: bool = True) -> dict[str, Any]:
    """Describe this machine; never raises, and leaves out what it cannot read.

    Args:
        run: command runner (``(argv, timeout_s) -> stdout | None``), injectable for tests.
        system: ``platform.system()`` override, for tests.
        nvml: ask NVML (``nvidia-ml-py``) about NVIDIA GPUs; False for tests that fake ``run``.

    Returns:
        A dict with keys among ``os``, ``os_version``, ``arch``, ``python``, ``cpu_model``,
        ``cpu_cores_physical``, ``cpu_cores_logical``, ``cpu_cores_usable`` (affinity mask),
        ``cpu_quota_cores`` (cgroup CPU limit), ``cpu_cores_performance``/``cpu_cores_efficiency``
        (Apple), ``memory_total_gb``, ``memory_total_gib``, ``memory_available_gb``,
        ``memory_limit_gb`` (cgroup), ``load_average_1m``, ``gpu_name``, ``gpu_memory_gb``,
        ``gpu_memory_free_gb``, ``gpu_count``, ``gpus`` (several), ``gpu_cores`` (Apple),
        ``gpu_recommended_working_set_gb`` (Metal), ``gpu_wired_limit_gb`` with
        ``gpu_wired_limit_is_default`` (and ``gpu_wired_limit_is_estimate`` when it is the default
        share), ``unified_memory``, ``power_source`` ("ac", "battery", "ups"), ``hypervisor``,
        ``cpu_l3_cache``, ``chip`` (Apple SoC name) and ``is_container``; with NVML also
        ``gpu_pci_id`` (``vendor:device``), ``gpu_pci_name`` (from ``pci.ids``), ``gpu_bandwidth_gbs``
        (spec) with ``gpu_bandwidth_source``; with psutil also ``swap_used_gb`` and ``cpu_max_mhz``.
        Memory in GB of 10^9 bytes.
    """
    run = run or _run
    system = system or platform.system()
    info: dict[str, Any] = {
        "os": system,
        "arch": platform.machine(),
        "python": sys.version.split()[0],
    }
    steps: list[Callable[[], None]] = []
    if system == "Darwin":
        info["os_version"] = platform.mac_ver()[0] or platform.release()
        steps += [lambda: _darwin(info, run), lambda: _metal_info(info)]
    else:
        info["os_version"] = platform.release()
        if system == "Linux":
            steps.append(lambda: _linux(info, run))
        elif system == "Windows":
            steps.append(lambda: _windows(info))
    steps.append(lambda: _nvidia(info, run))
    if nvml:
        steps.append(lambda: _nvml(info))
    steps.append(lambda: psutil_fill(info))
    for step in steps:
        try:
            step()
        except Exception:  # noqa: BLE001 - detection never raises; missing info is just absent
            pass
    logical = os.cpu_count()
    if logical and "cpu_cores_logical" not in info:
        info["cpu_cores_logical"] = logical
    try:
        usable = len(os.sched_getaffinity(0))  # type: ignore[attr-defined]
        if usable and usable != info.get("cpu_cores_logical"):
            info["cpu_cores_usable"] = usable
    except (AttributeError, OSError):
        pass
    if "cpu_model" not in info and platform.processor():
        info["cpu_model"] = platform.processor()
    info["is_container"] = system == "Linux" and _container_hints()
    try:
        info["load_average_1m"] = round(os.getloadavg()[0], 2)
    except (AttributeError, OSError):
        pass
    return info
