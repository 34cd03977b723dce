"""System detection through psutil and NVML (nvidia-ml-py), with fakes of both libraries."""

from __future__ import annotations

import sys
import types
from collections import namedtuple

import pytest

from advisor.probe import _syslib
from advisor.probe import system as S
from advisor.probe._sysparse import nvml_bandwidth_gbs, pci_ids_name, pci_marketing_name

PCI_IDS = """# comment
1002  Advanced Micro Devices, Inc. [AMD/ATI]
\t744c  Navi 31 [Radeon RX 7900 XT/7900 XTX/7900M]
\t\t1002 0e3b  Radeon RX 7900 XTX
10de  NVIDIA Corporation
\t2330  GH100 [H100 SXM5 80GB]
\t\t10de 16c1  H100 SXM5 80GB
\t2684  AD102 [GeForce RTX 4090]
8086  Intel Corporation
\ta780  Raptor Lake-S GT1 [UHD Graphics 770]
C 03  Display controller
\t00  VGA compatible controller
"""


@pytest.mark.parametrize(("bits", "mhz", "gbs"), [(384, 10501, 1008.1), (5120, 2619, 3352.3), (5120, 1215, 1555.2),
                                                   (128, 8501, 272.0), (0, 9000, None), (256, None, None)])
def test_spec_bandwidth_from_bus_width_and_memory_clock(bits, mhz, gbs):
    assert nvml_bandwidth_gbs(bits, mhz) == gbs


def test_pci_ids_lookup():
    assert pci_ids_name(PCI_IDS, 0x10DE, 0x2684) == "AD102 [GeForce RTX 4090]"
    assert pci_ids_name(PCI_IDS, 0x10DE, 0x2330) == "GH100 [H100 SXM5 80GB]"
    assert pci_ids_name(PCI_IDS, 0x1002, 0x2684) is None  # another vendor's device id
    assert pci_ids_name(PCI_IDS, 0x10DE, 0x16C1) is None  # a subsystem line is not a device
    assert pci_ids_name(PCI_IDS, 0x8086, 0x0000) is None and pci_ids_name("", 0x10DE, 0x2684) is None
    assert pci_marketing_name("AD102 [GeForce RTX 4090]") == "GeForce RTX 4090"
    assert pci_marketing_name("Plain name") == "Plain name" and pci_marketing_name(None) is None


def _fake_pynvml(devices):
    m = types.ModuleType("pynvml")
    m.NVML_CLOCK_MEM = 2
    Mem = namedtuple("Mem", "total free used")
    Pci = namedtuple("Pci", "pciDeviceId busId")
    m.nvmlInit = lambda: None
    m.nvmlShutdown = lambda: None
    m.nvmlDeviceGetCount = lambda: len(devices)
    m.nvmlDeviceGetHandleByIndex = lambda i: devices[i]
    m.nvmlDeviceGetName = lambda h: h["name"]
    m.nvmlDeviceGetMemoryInfo = lambda h: Mem(h["total"], h["free"], h["total"] - h["free"])
    m.nvmlDeviceGetPciInfo = lambda h: Pci((h["device"] << 16) | 0x10DE, b"00000000:01:00.0")

    def bus(h):
        if "bus" not in h:
            raise RuntimeError("NVML_ERROR_NOT_SUPPORTED")
        return h["bus"]

    m.nvmlDeviceGetMemoryBusWidth = bus
    m.nvmlDeviceGetMaxClockInfo = lambda h, kind: h["clock"] if kind == 2 else 0
    return m


def test_nvml_gpus_and_machine_fields(monkeypatch):
    devs = [{"name": b"NVIDIA GeForce RTX 4090", "total": 25_757_220_864, "free": 24_000_000_000, "device": 0x2684,
             "bus": 384, "clock": 10501},
            {"name": "NVIDIA GeForce RTX 4090", "total": 25_757_220_864, "free": 1_000_000_000, "device": 0x2684,
             "clock": 10501}]
    monkeypatch.setitem(sys.modules, "pynvml", _fake_pynvml(devs))
    gpus = _syslib.nvml_gpus(pci_db=PCI_IDS)
    assert gpus[0] == {"name": "NVIDIA GeForce RTX 4090", "memory_gb": 25.76, "memory_free_gb": 24.0,
                       "pci_id": "10de:2684", "pci_name": "AD102 [GeForce RTX 4090]", "memory_bus_bits": 384,
                       "memory_clock_mhz": 10501, "bandwidth_gbs": 1008.1}
    assert "bandwidth_gbs" not in gpus[1] and gpus[1]["pci_id"] == "10de:2684"  # an unsupported query is skipped
    info: dict = {}
    S._nvml(info, gpus)
    assert info["gpu_name"] == "NVIDIA GeForce RTX 4090" and info["gpu_count"] == 2 and len(info["gpus"]) == 2
    assert info["gpu_bandwidth_gbs"] == 1008.1 and "384-bit" in info["gpu_bandwidth_source"]
    assert info["gpu_pci_id"] == "10de:2684"


def test_nvml_absent_or_failing_adds_nothing(monkeypatch):
    monkeypatch.setitem(sys.modules, "pynvml", None)  # import fails
    assert _syslib.nvml_gpus() == []
    broken = types.ModuleType("pynvml")

    def fail():
        raise RuntimeError("NVML Shared Library Not Found")

    broken.nvmlInit = fail
    monkeypatch.setitem(sys.modules, "pynvml", broken)
    assert _syslib.nvml_gpus() == []
    info = {"gpu_name": "from nvidia-smi"}
    S._nvml(info, [])
    assert info == {"gpu_name": "from nvidia-smi"}


def test_psutil_fills_only_what_is_missing(monkeypatch):
    fake = types.ModuleType("psutil")
    VM = namedtuple("VM", "total available")
    SW = namedtuple("SW", "total used")
    Freq = namedtuple("Freq", "current min max")
    Batt = namedtuple("Batt", "percent secsleft power_plugged")
    fake.cpu_count = lambda logical=True: 16 if logical else 8
    fake.virtual_memory = lambda: VM(34_359_738_368, 20_000_000_000)
    fake.swap_memory = lambda: SW(8_000_000_000, 2_500_000_000)
    fake.getloadavg = lambda: (3.456, 2.0, 1.0)
    fake.cpu_freq = lambda: Freq(3000.0, 800.0, 5200.0)
    fake.sensors_battery = lambda: Batt(80, 3600, False)
    monkeypatch.setitem(sys.modules, "psutil", fake)
    info = {"memory_total_gb": 33.0, "cpu_cores_physical": 6}  # e.g. a cgroup-limited reading kept as is
    _syslib.psutil_fill(info)
    assert info == {"memory_total_gb": 33.0, "cpu_cores_physical": 6, "cpu_cores_logical": 16,
                    "memory_available_gb": 20.0, "swap_used_gb": 2.5, "load_average_1m": 3.46, "cpu_max_mhz": 5200,
                    "power_source": "battery"}
    fresh: dict = {}
    _syslib.psutil_fill(fresh)
    assert fresh["memory_total_gb"] == 34.36 and fresh["memory_total_gib"] == 32.0


def test_windows_machine_is_described(monkeypatch):
    fake = types.ModuleType("psutil")
    VM = namedtuple("VM", "total available")
    fake.cpu_count = lambda logical=True: 24 if logical else 16
    fake.virtual_memory = lambda: VM(68_719_476_736, 40_000_000_000)
    monkeypatch.setitem(sys.modules, "psutil", fake)
    monkeypatch.setattr(S, "windows_cpu_model", lambda: "AMD Ryzen 9 7950X 16-Core Processor")
    info = S.detect_machine(run=lambda cmd, t: None, system="Windows", nvml=False)
    assert info["os"] == "Windows" and info["cpu_model"] == "AMD Ryzen 9 7950X 16-Core Processor"
    assert info["cpu_cores_physical"] == 16 and info["memory_total_gb"] == 68.72
    assert info["is_container"] is False
