"""System detection through well-kept libraries: ``psutil`` (memory, CPU, load, battery, Windows)
and ``nvidia-ml-py`` (``pynvml``: NVIDIA GPUs). Both are imported lazily and optional: when one is
missing or fails, these readers add nothing and never raise.

What they read, and what they do not: psutil does not know cgroup limits or Apple's GPU wired-memory
limit, so :mod:`advisor.probe.system` keeps its own cgroup, ``sysctl`` and ``ioreg`` code and only
fills what is still missing from psutil. NVML gives each GPU's name, memory, PCI id, memory bus
width and maximum memory clock; the spec bandwidth follows from the last two
(:func:`~advisor.probe._sysparse.nvml_bandwidth_gbs`), and the PCI id is named from the system's own
copy of the PCI ID database (``pci.ids``) when there is one.
"""

from __future__ import annotations

import platform
from pathlib import Path
from typing import Any

from advisor.probe._sysparse import nvml_bandwidth_gbs, pci_ids_name

__all__ = ["PCI_IDS_PATHS", "nvml_gpus", "psutil_fill", "windows_cpu_model"]

GB = 1e9
GIB = 2**30
#: Where Linux distributions keep the PCI ID database (https://pci-ids.ucw.cz).
PCI_IDS_PATHS = ("/usr/share/hwdata/pci.ids", "/usr/share/misc/pci.ids", "/usr/share/pci.ids")


def psutil_fill(info: dict[str, Any]) -> None:
    """Fill what ``info`` still lacks from psutil (cores, memory, swap, load, CPU clock, battery)."""
    try:
        import psutil
    except ImportError:
        return
    steps = []

    def cores() -> None:
        if "cpu_cores_physical" not in info:
            n = psutil.cpu_count(logical=False)
            if n:
                info["cpu_cores_physical"] = int(n)
        if "cpu_cores_logical" not in info:
            n = psutil.cpu_count(logical=True)
            if n:
                info["cpu_cores_logical"] = int(n)

    def memory() -> None:
        vm = psutil.virtual_memory()
        if "memory_total_gb" not in info and vm.total:
            info["memory_total_gb"] = round(vm.total / GB, 2)
            info["memory_total_gib"] = round(vm.total / GIB, 2)
        if "memory_available_gb" not in info and vm.available is not None:
            info["memory_available_gb"] = round(vm.available / GB, 2)
        sw = psutil.swap_memory()
        if sw.total:
            info.setdefault("swap_used_gb", round(sw.used / GB, 2))

    def load() -> None:
        if "load_average_1m" not in info and hasattr(psutil, "getloadavg"):
            info["load_average_1m"] = round(psutil.getloadavg()[0], 2)

    def clock() -> None:
        f = psutil.cpu_freq()
        if f is not None and f.max:
            info.setdefault("cpu_max_mhz", round(f.max))

    def battery() -> None:
        if "power_source" in info or not hasattr(psutil, "sensors_battery"):
            return
        b = psutil.sensors_battery()
        if b is not None and b.power_plugged is not None:
            info["power_source"] = "ac" if b.power_plugged else "battery"

    steps += [cores, memory, load, clock, battery]
    for step in steps:
        try:
            step()
        except Exception:  # noqa: BLE001 - detection never raises
            continue


def windows_cpu_model() -> str | None:
    """The CPU's marketing name from the Windows registry (``ProcessorNameString``), or None."""
    try:
        import winreg  # type: ignore[import-not-found,unused-ignore]

        key = winreg.OpenKey(winreg.HKEY_LOCAL_MACHINE, r"HARDWARE\DESCRIPTION\System\CentralProcessor\0")  # type: ignore[attr-defined,unused-ignore]
        value, _ = winreg.QueryValueEx(key, "ProcessorNameString")  # type: ignore[attr-defined,unused-ignore]
        return str(value).strip() or None
    except Exception:  # noqa: BLE001
        return platform.processor() or None


def _pci_db() -> str | None:
    for p in PCI_IDS_PATHS:
        try:
            return Path(p).read_text(errors="replace")
        except OSError:
            continue
    return None


def nvml_gpus(pci_db: str | None = None) -> list[dict[str, Any]]:
    """One dict per NVIDIA GPU from NVML, or [] without ``pynvml``, a driver or a GPU.

    Keys (each only when NVML answers): ``name``, ``memory_gb``, ``memory_free_gb`` (GB of 10^9
    bytes), ``pci_id`` (``"10de:2684"``), ``pci_name`` (from ``pci.ids``), ``memory_bus_bits``,
    ``memory_clock_mhz`` (maximum), ``bandwidth_gbs`` (spec, from bus width × memory clock).
    """
    try:
        import pynvml
    except ImportError:
        return []
    try:
        pynvml.nvmlInit()
    except Exception:  # noqa: BLE001 - no driver, no GPU
        return []
    db = pci_db
    gpus: list[dict[str, Any]] = []
    try:
        for i in range(pynvml.nvmlDeviceGetCount()):
            h = pynvml.nvmlDeviceGetHandleByIndex(i)
            g: dict[str, Any] = {}

            def name(h: Any = h, g: dict[str, Any] = g) -> None:
                n = pynvml.nvmlDeviceGetName(h)
                g["name"] = n.decode() if isinstance(n, bytes) else str(n)

            def memory(h: Any = h, g: dict[str, Any] = g) -> None:
                m = pynvml.nvmlDeviceGetMemoryInfo(h)
                g["memory_gb"] = round(m.total / GB, 2)
                g["memory_free_gb"] = round(m.free / GB, 2)

            def pci(h: Any = h, g: dict[str, Any] = g) -> None:
                nonlocal db
                raw = int(pynvml.nvmlDeviceGetPciInfo(h).pciDeviceId)  # device id << 16 | vendor id
                vendor, device = raw & 0xFFFF, raw >> 16
                g["pci_id"] = f"{vendor:04x}:{device:04x}"
                db = db if db is not None else (_pci_db() or "")
                named = pci_ids_name(db, vendor, device)
                if named:
                    g["pci_name"] = named

            def bandwidth(h: Any = h, g: dict[str, Any] = g) -> None:
                bits = int(pynvml.nvmlDeviceGetMemoryBusWidth(h))
                mhz = int(pynvml.nvmlDeviceGetMaxClockInfo(h, pynvml.NVML_CLOCK_MEM))
                g["memory_bus_bits"], g["memory_clock_mhz"] = bits, mhz
                bw = nvml_bandwidth_gbs(bits, mhz)
                if bw:
                    g["bandwidth_gbs"] = bw

            for step in (name, memory, pci, bandwidth):
                try:
                    step()
                except Exception:  # noqa: BLE001 - an older driver lacks some queries
                    continue
            if g:
                gpus.append(g)
    except Exception:  # noqa: BLE001
        pass
    finally:
        try:
            pynvml.nvmlShutdown()
        except Exception:  # noqa: BLE001
            pass
    return gpus
