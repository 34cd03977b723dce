"""Which tool to look with, on this person's platform (one home for every "check with …" hint).

A hint that names ``nvidia-smi`` to a Mac user is wrong advice. Every check a rule or remedy
states goes through :func:`hint`, which picks the tool for the machine in the Situation:

* ``mac``: Apple Silicon or an Intel Mac — Activity Monitor, ``memory_pressure``,
  ``sudo sysctl iogpu.wired_limit_mb`` (the GPU's share of unified memory);
* ``nvidia``: an NVIDIA GPU (also Jetson/DGX Spark APUs) — ``nvidia-smi``;
* ``amd``: an AMD GPU or APU — ``rocm-smi`` / ``amd-smi``;
* ``intel``: an Intel Arc GPU — ``intel_gpu_top`` / ``xpu-smi``;
* ``cpu``: no GPU — ``free -h`` / ``htop`` (Task Manager on Windows);
* ``unknown``: the machine is not known — the tool per vendor, said as alternatives.

Names and flags: nvidia-smi(1) manual (``-q -d CLOCK,POWER,PERFORMANCE``, ``--help-query-gpu``);
``powermetrics(1)`` (``--samplers gpu_power``); ``lspci(8)`` (LnkSta); ROCm SMI / AMD SMI CLI docs; Apple's Activity Monitor
user guide and ``memory_pressure(1)``; Intel ``intel_gpu_top(1)`` (igt-gpu-tools), ``xpu-smi`` docs.
"""

from __future__ import annotations

from typing import Literal

from advisor.diagnose.context import Ctx

__all__ = ["OLLAMA_IDLE_UNLOAD_MIN", "Platform", "TOOLS", "hint", "offload_check", "platform_of"]

# Ollama's default keep_alive: an idle model is unloaded after this many minutes (Ollama FAQ, "How do I keep a model
# loaded in memory or make it unload immediately?").
OLLAMA_IDLE_UNLOAD_MIN = 5

Platform = Literal["mac", "nvidia", "amd", "intel", "cpu", "unknown"]

# what → platform → the words of the check. Keys of ``what``:
#   gpu_memory: how much GPU memory the model takes; gpu_busy: whether the GPU works while it generates;
#   power: the power limit or mode in force; ram: system memory use and pressure (swapping);
#   container: the GPU seen inside a container; device_list: the GPUs the driver lists;
#   clocks: clocks, power limit and throttle reasons under load; gpu_procs: other programs on the GPU;
#   gpu_link: the exact card (a mobile variant), its memory clock and PCIe link ('' where there is none).
TOOLS: dict[str, dict[Platform, str]] = {
    "gpu_memory": {
        "mac": "Activity Monitor's Memory tab (and `sudo sysctl iogpu.wired_limit_mb` for the GPU's share)",
        "nvidia": "`nvidia-smi`",
        "amd": "`rocm-smi --showmeminfo vram` (or `amd-smi monitor`)",
        "intel": "`xpu-smi stats -d 0` (or `intel_gpu_top`)",
        "cpu": "`free -h` or htop (Task Manager on Windows)",
        "unknown": "the GPU monitor (`nvidia-smi` on NVIDIA, `rocm-smi` on AMD, Activity Monitor on a Mac)",
    },
    "gpu_busy": {
        "mac": "Activity Monitor's GPU History (Window → GPU History)",
        "nvidia": "`nvidia-smi` (GPU-Util and the process list)",
        "amd": "`rocm-smi` / `amd-smi monitor` (GPU use)",
        "intel": "`intel_gpu_top`",
        "cpu": "htop (Task Manager on Windows): all cores busy while it generates",
        "unknown": "the GPU monitor (`nvidia-smi` on NVIDIA, `rocm-smi` on AMD, Activity Monitor's GPU History on "
                   "a Mac)",
    },
    "power": {
        "mac": "System Settings → Battery (Low Power Mode off; `pmset -g` shows the mode)",
        "nvidia": "`nvidia-smi -q -d POWER` (the power limit in force)",
        "amd": "`rocm-smi --showpower` (or `amd-smi metric --power`)",
        "intel": "the Windows power plan or `intel_gpu_top` (frequency)",
        "cpu": "the power plan (Windows) or `powerprofilesctl get` (Linux)",
        "unknown": "the power mode (Windows power plan, macOS Low Power Mode, `nvidia-smi -q -d POWER`)",
    },
    "ram": {
        "mac": "Activity Monitor's Memory Pressure graph (or `memory_pressure` in Terminal)",
        "nvidia": "`free -h` (Task Manager on Windows) for system RAM, `nvidia-smi` for the card",
        "amd": "`free -h` (Task Manager on Windows) for system RAM, `rocm-smi --showmeminfo vram` for the card",
        "intel": "`free -h` (Task Manager on Windows)",
        "cpu": "`free -h` or htop (Task Manager on Windows)",
        "unknown": "Activity Monitor's Memory Pressure on a Mac, `free -h` on Linux, Task Manager on Windows",
    },
    "clocks": {
        "mac": "`sudo powermetrics --samplers gpu_power -i 1000 -n 5` while it generates (GPU frequency and power; "
               "Low Power Mode off in System Settings → Battery)",
        "nvidia": "`nvidia-smi -q -d CLOCK,POWER,PERFORMANCE` while it generates (current against maximum clocks, the "
                  "power limit in force and the throttle reasons: power cap, thermal, idle)",
        "amd": "`rocm-smi --showclocks --showpower --showperflevel --showtemp` while it generates (or `amd-smi metric`)",
        "intel": "`intel_gpu_top` while it generates (actual against requested frequency) or `xpu-smi stats -d 0`",
        "cpu": "the CPU frequency under load (`watch -n1 \"grep MHz /proc/cpuinfo\"`; Task Manager on Windows)",
        "unknown": "the GPU's clocks, power limit and temperature while it generates (`nvidia-smi -q -d "
                   "CLOCK,POWER,PERFORMANCE` on NVIDIA, `rocm-smi --showclocks --showpower` on AMD, `sudo powermetrics "
                   "--samplers gpu_power` on a Mac)",
    },
    "gpu_procs": {
        "mac": "Activity Monitor's % GPU column (another app drawing on the GPU)",
        "nvidia": "the process list of `nvidia-smi` (another program holding the card's memory or compute: a game, a "
                  "browser, a second engine)",
        "amd": "`rocm-smi --showpids` (or `amd-smi process`)",
        "intel": "the client list of `intel_gpu_top`",
        "cpu": "htop (Task Manager on Windows)",
        "unknown": "the GPU's process list (`nvidia-smi` on NVIDIA, `rocm-smi --showpids` on AMD, Activity Monitor's "
                   "% GPU on a Mac)",
    },
    "gpu_link": {
        "mac": "",  # unified memory: no card, no bus, no separate memory clock to check
        "nvidia": "`nvidia-smi --query-gpu=name,clocks.mem,clocks.max.mem,pcie.link.gen.current,"
                  "pcie.link.width.current --format=csv` under load (the exact card — a \"Laptop GPU\" is the mobile "
                  "variant —, its memory clock against the maximum, and the PCIe link)",
        "amd": "`rocm-smi --showclocks` (the mclk level against its top) and `sudo lspci -vv` (LnkSta: the PCIe link "
               "speed and width)",
        "intel": "`xpu-smi stats -d 0` (memory frequency) and `sudo lspci -vv` (LnkSta: the PCIe link speed and width)",
        "cpu": "the memory speed the BIOS reports",
        "unknown": "the card's exact name, memory clock and PCIe link (`nvidia-smi --query-gpu=name,clocks.mem,"
                   "clocks.max.mem,pcie.link.gen.current --format=csv` on NVIDIA, `sudo lspci -vv` elsewhere)",
    },
    "container": {
        "mac": "Activity Monitor's GPU History stays flat while it generates",
        "nvidia": "`nvidia-smi` inside the container lists the card",
        "amd": "`rocm-smi` inside the container lists the card",
        "intel": "`xpu-smi discovery` inside the container lists the card",
        "cpu": "the engine's log inside the container names the device it uses",
        "unknown": "the GPU tool inside the container (`nvidia-smi`, `rocm-smi`) lists the card",
    },
}


def platform_of(c: Ctx) -> Platform:
    """The platform of the Situation's machine (see the module docstring)."""
    if c.sit.symptoms.intel_mac or c.kind == "apple_soc":
        return "mac"
    hw = c.sit.hardware
    kind = c.kind
    if kind is None:
        return "unknown"
    vendor = (hw.vendor if hw is not None else "").lower()
    if kind == "cpu":
        return "cpu"
    if "nvidia" in vendor:
        return "nvidia"
    if "amd" in vendor:
        return "amd"
    if "intel" in vendor:
        return "intel"
    return "unknown"


def hint(c: Ctx, what: str) -> str:
    """The tool to check ``what`` with on this machine (a key of :data:`TOOLS`), in words."""
    return TOOLS[what][platform_of(c)]


def offload_check(c: Ctx) -> str:
    """Where this engine says how much of the model is on the GPU, in its own words (Ollama: ``ollama ps``;
    llama.cpp: the load log's "offloaded N/M layers to GPU" line and -ngl; LM Studio: its GPU offload setting),
    then the GPU's memory monitor (:func:`hint`)."""
    e = c.sit.engine
    if e == "ollama":
        where = "`ollama ps` (its PROCESSOR column shows the CPU/GPU split)"
    elif e == "lm-studio":
        where = "LM Studio's GPU offload setting (all layers) and its load log"
    elif e == "koboldcpp":
        where = "KoboldCpp's --gpulayers and its load log"
    elif e in ("llama.cpp", "ik_llama.cpp"):
        where = "the load log's \"offloaded N/M layers to GPU\" line (-ngl 99 puts them all there)"
    else:
        where = "your tool's GPU offload setting (`ollama ps`, llama.cpp's \"offloaded N/M layers\" log line)"
    return f"{where} or {hint(c, 'gpu_memory')}"
