"""detect_machine on this machine, and its parsers on captured outputs of other systems."""

from __future__ import annotations

import pytest

from advisor.probe import detect_machine
from advisor.probe import system as S


def test_detect_machine_here_is_sane():
    info = detect_machine()
    assert info["os"]
    assert info["arch"]
    assert 1 <= info["memory_total_gb"] <= 10_000
    assert 0 < info["memory_available_gb"] <= info["memory_total_gb"] * 1.01
    assert info["cpu_cores_logical"] >= 1
    assert 1 <= info.get("cpu_cores_physical", 1) <= info["cpu_cores_logical"]
    assert isinstance(info["is_container"], bool)
    assert S.available_memory_bytes() > 0


def test_detect_machine_never_raises_when_every_command_fails():
    def broken(_cmd, _timeout):
        return None

    for system in ("Linux", "Darwin", "Windows"):
        info = detect_machine(run=broken, system=system)
        assert info["os"] == system and "arch" in info and "is_container" in info


def test_run_helper_handles_missing_and_failing_commands():
    assert S._run(["definitely-not-a-command-xyz"]) is None
    assert S._run(["false"]) is None
    assert S._run(["sleep", "5"], timeout=0.2) is None
    assert S._run(["echo", "hi"]).strip() == "hi"


CPUINFO = """processor\t: 0
model name\t: Intel(R) Core(TM) i7-8700 CPU @ 3.20GHz
physical id\t: 0
core id\t\t: 0

processor\t: 1
model name\t: Intel(R) Core(TM) i7-8700 CPU @ 3.20GHz
physical id\t: 0
core id\t\t: 0

processor\t: 2
model name\t: Intel(R) Core(TM) i7-8700 CPU @ 3.20GHz
physical id\t: 0
core id\t\t: 1
"""


def test_parse_cpuinfo_counts_physical_cores_once():
    out = S.parse_cpuinfo(CPUINFO)
    assert out == {"cpu_model": "Intel(R) Core(TM) i7-8700 CPU @ 3.20GHz", "cpu_cores_logical": 3,
                   "cpu_cores_physical": 2}


def test_parse_meminfo_scales_kb():
    out = S.parse_meminfo("MemTotal:       16318136 kB\nMemAvailable:    8000000 kB\nHugePages_Total:       0\n")
    assert out["MemTotal"] == 16318136 * 1024
    assert out["MemAvailable"] == 8000000 * 1024
    assert out["HugePages_Total"] == 0


def test_parse_lscpu():
    text = "Model name:  Neoverse-N1\nCore(s) per socket:  64\nSocket(s):  2\nHypervisor vendor:  KVM\n"
    assert S.parse_lscpu(text) == {"cpu_model": "Neoverse-N1", "cpu_cores_physical": 128, "hypervisor": "KVM"}


def test_parse_nvidia_smi_mib_to_gb():
    gpus = S.parse_nvidia_smi("NVIDIA GeForce RTX 4090, 24564, 23000\nNVIDIA H100 80GB HBM3, 81559, 80000\n")
    assert gpus[0]["name"] == "NVIDIA GeForce RTX 4090"
    assert gpus[0]["memory_gb"] == pytest.approx(25.76, abs=0.01)
    assert gpus[1]["memory_free_gb"] == pytest.approx(83.89, abs=0.01)


@pytest.mark.parametrize("text, expected", [
    ("Now drawing from 'AC Power'\n -InternalBattery-0 (id=1)\t100%; charged;", "ac"),
    ("Now drawing from 'Battery Power'\n -InternalBattery-0\t85%; discharging;", "battery"),
    ("garbage", None),
])
def test_parse_pmset(text, expected):
    assert S.parse_pmset_batt(text) == expected


def test_default_wired_limit_share():
    assert S.default_wired_limit_gb(16 * 2**30) == pytest.approx(16 * 2**30 * 2 / 3 / 1e9, abs=0.01)
    assert S.default_wired_limit_gb(36 * 2**30) == pytest.approx(36 * 2**30 * 2 / 3 / 1e9, abs=0.01)
    assert S.default_wired_limit_gb(64 * 2**30) == pytest.approx(64 * 2**30 * 3 / 4 / 1e9, abs=0.01)


VM_STAT = """Mach Virtual Memory Statistics: (page size of 16384 bytes)
Pages free:                               10000.
Pages active:                            500000.
Pages inactive:                           20000.
Pages speculative:                         3000.
Pages purgeable:                           1000.
"""


def _fake_mac(wired_mb: str):
    outputs = {
        "sysctl -n machdep.cpu.brand_string": "Apple M2 Max\n",
        "sysctl -n hw.physicalcpu": "12\n",
        "sysctl -n hw.logicalcpu": "12\n",
        "sysctl -n hw.perflevel0.physicalcpu": "8\n",
        "sysctl -n hw.perflevel1.physicalcpu": "4\n",
        "sysctl -n hw.memsize": str(32 * 2**30) + "\n",
        "sysctl -n iogpu.wired_limit_mb": wired_mb + "\n",
        "vm_stat": VM_STAT,
        "ioreg -rc AGXAccelerator -d 1": '+-o AGXAcceleratorG14X  <class AGXAcceleratorG14X>\n  "gpu-core-count" = 38\n',
        "pmset -g batt": "Now drawing from 'Battery Power'\n",
    }
    return lambda cmd, _timeout: outputs.get(" ".join(cmd))


def test_detect_machine_macos_from_captured_outputs():
    info = detect_machine(run=_fake_mac("0"), system="Darwin")
    assert info["cpu_model"] == "Apple M2 Max" and info["chip"] == "Apple M2 Max"
    assert info["cpu_cores_physical"] == 12 and info["cpu_cores_performance"] == 8
    assert info["memory_total_gib"] == 32.0
    assert info["memory_available_gb"] == pytest.approx(34000 * 16384 / 1e9, abs=0.01)
    assert info["gpu_cores"] == 38
    assert info["gpu_wired_limit_is_default"] is True and info["gpu_wired_limit_is_estimate"] is True
    assert info["gpu_wired_limit_gb"] == pytest.approx(32 * 2**30 * 2 / 3 / 1e9, abs=0.01)
    assert info["power_source"] == "battery"
    assert info["is_container"] is False


def test_detect_machine_macos_raised_wired_limit():
    info = detect_machine(run=_fake_mac("28000"), system="Darwin")
    assert info["gpu_wired_limit_is_default"] is False
    assert info["gpu_wired_limit_gb"] == pytest.approx(28000 * 2**20 / 1e9, abs=0.01)


def test_gpu_cores_from_system_profiler():
    assert S.parse_gpu_cores("Chipset Model: Apple M3 Pro\n      Total Number of Cores: 18\n") == 18
