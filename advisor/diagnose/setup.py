"""Setup remedies: the configuration causes the rules name, each with the check that confirms it.

Their effect is the expectation the rule compared with: the prediction for this machine with the
model where it belongs (:func:`advisor.diagnose.remedies.what_if` with the layers on the GPU), or,
for an unresolved machine, the floor of the slowest plausible machine of its kind.
"""

from __future__ import annotations

from collections.abc import Callable

from advisor import roofline
from advisor.diagnose.context import Ctx, stated_total_gb
from advisor.diagnose.remedies import fix, register, what_if
from advisor.diagnose.tools import OLLAMA_IDLE_UNLOAD_MIN, TOOLS, hint, platform_of
from advisor.models import Fix
from advisor.render.markdown import fmt_s, gap_words
from advisor.understand.engine import engine_accel, ollama_gpu_fallback
from knowledge import catalog

__all__ = ["SETUP", "checks"]


def _restore(c: Ctx) -> tuple[str, float | None, float | None]:
    """(effect words, speedup, new decode tok/s) of putting the setup right."""
    full = what_if(c, gpu_share=1.0) if (c.pred is not None and c.has_gpu and c.fits) else None
    exp = (full.decode_tps_per_seq or full.decode_tps) if full else c.expected_tg
    if exp and c.tg:
        if exp <= c.tg * 1.05:
            return "removes this cause; the numbers are already near the expectation", None, None
        gap = gap_words(exp, c.tg)
        gap = gap if gap.startswith("≈") else f"{gap} below"  # "(≈ 3×)", "(about 33% below)"
        return f"decode ≈ {exp:.0f} tok/s expected vs {c.tg:.4g} measured ({gap})", exp / c.tg, exp
    if exp:
        return f"decode ≈ {exp:.0f} tok/s expected with this fixed", None, exp
    b = c.bounds
    if b and c.tg:
        return (f"decode ≥ {b.lo_tps:.0f} tok/s on {b.basis} (the slowest, {b.slow.name}) vs {c.tg:.4g} measured",
                b.lo_tps / c.tg, b.lo_tps)
    return "back to the speed this hardware should reach", None, None


def _setup(c: Ctx, title: str, why: str, check: str, fix_id: str = "fix_configuration") -> Fix:
    eff, sp, new = _restore(c)
    return fix(fix_id, title, eff, f"{why} Check: {check}", speedup=sp, new_decode_tps=new)


def _has_gpu(c: Ctx) -> bool:
    return c.has_gpu


def _too_big(c: Ctx) -> bool:
    """The model does not fit the GPU's memory at all: no placement setting brings back full speed."""
    if c.fits is False:
        return True
    sit = c.sit
    total = stated_total_gb(c.store, sit) if c.pred is None else None
    if not total or sit.model is None or sit.quant is None:
        return False
    return roofline.weight_bytes_total(sit.model, sit.quant.bits_per_weight) / 1e9 > total


@register("offload_all", "gpu_offload", 0, _has_gpu)
def _offload_all(c: Ctx) -> Fix | None:
    if _too_big(c):
        return None  # "every layer on the GPU … back to full speed" is not possible when the model does not fit
    if c.all_on_gpu:
        return None  # their own output shows every layer on the GPU: never propose what they already do
    if c.kind == "apple_soc" and (c.sit.engine == "mlx" or "mlx" in (c.sit.engine_text or "").lower()):
        return None  # MLX runs every layer on the Mac's GPU (Metal): there is nothing to offload
    ngl, n = c.sit.symptoms.n_gpu_layers, c.offload_layers
    now = f" (today -ngl {ngl}: {n - ngl} of {n} layers in system RAM)" if (ngl is not None and n and ngl < n) else ""
    if (build := cpu_build(c)) is not None:
        title = (f"Use a llama.cpp build with your GPU's backend: this one has only the CPU backend (its backend "
                 f"column says CPU). Rebuild with `cmake -B build {build[0]}` or take a {build[1]} release, then -ngl 99")
    elif c.sit.symptoms.experts_on_cpu and c.pred is not None and c.pred.memory.gpu_share >= 1.0:
        title = ("Keep the experts on the GPU too: drop --cpu-moe / --n-cpu-moe / the -ot …exps=CPU override (the whole "
                 "model fits the card's memory)")
    elif c.kind == "apple_soc":
        title = "Run the engine natively with Metal so every layer is on the GPU (Ollama app, LM Studio, mlx-lm)"
    else:
        title = "Put every layer on the GPU (-ngl 99 / num_gpu 999; a GPU-enabled build or runtime)" + now
    return _setup(c, title, "Layers left on the CPU are read from system RAM at a fraction of the GPU's bandwidth.",
                  "the engine's startup log lists the device each layer is on; `ollama ps` shows the CPU/GPU split; "
                  f"{hint(c, 'gpu_memory')} shows the memory the model takes.", fix_id="gpu_offload")


# The CMake switch of llama.cpp's GPU backend per platform, and its prebuilt releases (llama.cpp docs/build.md).
_BUILDS = {"mac": ("-DGGML_METAL=ON", "Metal (macOS)"), "nvidia": ("-DGGML_CUDA=ON", "CUDA"),
           "amd": ("-DGGML_HIP=ON (or -DGGML_VULKAN=ON)", "ROCm/HIP or Vulkan"),
           "intel": ("-DGGML_SYCL=ON (or -DGGML_VULKAN=ON)", "SYCL or Vulkan")}


def cpu_build(c: Ctx) -> tuple[str, str] | None:
    """(CMake flag, release name) to rebuild with when a llama.cpp run on a machine with a GPU (a card or a Mac) ran on
    its CPU backend (llama-bench's backend column ``CPU``), else None."""
    from advisor.understand.engine import classify_engine

    if c.sit.engine not in ("llama.cpp", "ik_llama.cpp") or c.kind not in ("discrete_gpu", "datacenter_gpu", "apple_soc"):
        return None
    if classify_engine(c.sit.engine_text)[1] != "cpu" and c.sit.symptoms.gpu_backend != "cpu":
        return None
    return _BUILDS.get(platform_of(c))


def _shown(c: Ctx) -> str:
    """How the person's own output shows every layer on the GPU ("-ngl 99", "100% GPU")."""
    s = c.sit.symptoms
    if s.n_gpu_layers is not None and c.all_on_gpu:
        return f"-ngl {s.n_gpu_layers}"
    if s.gpu_fraction is not None and s.gpu_fraction >= 0.98:
        return "100% GPU"
    return "as your output says"


def _build_check(c: Ctx) -> str:
    """Where the engine's build and backend show ('' words never: always a place to look)."""
    back = {"nvidia": "CUDA", "amd": "ROCm/HIP (or Vulkan)", "intel": "SYCL (or Vulkan)", "mac": "Metal"}
    want = back.get(platform_of(c))
    if (c.sit.engine or "").startswith("llama.cpp"):
        return ("llama-bench's `backend` and `build` columns" + (f" ({want}, a current release)" if want else
                                                               " (a GPU backend, a current release)"))
    return "the engine's version and the backend its log names at startup (a current release)"


@register("setup:gpu_state", "fix_configuration", 0, _has_gpu)
def _gpu_state(c: Ctx) -> Fix | None:
    """Every layer on the GPU and still far below: the GPU itself runs below its speed.

    The causes an engineer checks, most likely first (decode is bandwidth-bound; a normal prefill says the
    compute works): a power/clock limit or thermal throttling, another program on the GPU, a mobile variant of the
    card, the memory clock or PCIe link trained down, an old or wrong build. The checks are this platform's tools
    (:mod:`advisor.diagnose.tools`).
    """
    if not c.all_on_gpu:
        return None
    p, mac = c.pred, platform_of(c) == "mac"
    pp_ok = bool(c.pp and p is not None and p.prefill_tps and c.pp >= 0.5 * p.prefill_tps)
    now = f"Every layer is already on the GPU ({_shown(c)})"
    if pp_ok:
        assert p is not None and p.prefill_tps and c.pp
        now += (f" and prompt reading is normal ({c.pp:,.0f} tok/s against ≈ {p.prefill_tps:,.0f}), so the GPU "
                "computes at full speed")
    causes = ["a power or clock limit, or heat (thermal throttling)", "another program using the GPU or its memory"]
    if c.discrete:
        causes.append("a laptop (mobile) variant of the card, with a lower power limit and memory clock")
        causes.append("the memory clock or the PCIe link running below its rated speed")
    causes.append("an old or wrong build")
    why = (f"{now}; decode, which reads every weight from the GPU's memory for each token, is what runs slow. "
           f"The usual causes, most likely first: {'; '.join(causes)}.")
    looks = [hint(c, "clocks"), hint(c, "gpu_procs"), hint(c, "gpu_link"), _build_check(c)]
    title = ("Find what slows the Mac's GPU down: Low Power Mode or heat, another app on the GPU, or the build"
             if mac else "Find what slows the GPU down: a power or clock limit (or heat), another program on it, the "
             "card variant or memory clock, or the build")
    return _setup(c, title, why, "; ".join(x for x in looks if x) + ".")


def _placement_check(c: Ctx) -> str:
    """Where this engine shows which device the layers run on."""
    eng = c.sit.engine or ""
    if eng == "ollama":
        return f"`ollama ps` (PROCESSOR should say 100% GPU); {hint(c, 'gpu_memory')}"
    if eng == "lm-studio":
        return f"the GPU offload setting in the model's load options (all layers); {hint(c, 'gpu_memory')}"
    if eng in ("llama.cpp", "ik_llama.cpp", "koboldcpp"):
        return f"the -ngl in the command and the log line 'offloaded N/N layers to GPU'; {hint(c, 'gpu_memory')}"
    if eng == "mlx":
        return f"Activity Monitor's GPU History while it writes; {hint(c, 'ram')}: swapping slows MLX most"
    return f"the engine's startup log (the device it loads the weights on); {hint(c, 'gpu_memory')}"


def _ollama_on_cpu(c: Ctx) -> bool:
    """Ollama predicted on the CPU cores of a machine whose GPU only its opt-in Vulkan backend drives
    (:func:`advisor.understand.engine.ollama_accel`)."""
    hw = c.sit.hardware
    return bool(c.pred is not None and hw is not None and ollama_gpu_fallback(c.sit.engine_text, hw) == "cpu")


@register("ollama_vulkan", "gpu_offload", 0, _ollama_on_cpu)
def _ollama_vulkan(c: Ctx) -> Fix | None:
    """Run Ollama on the integrated GPU: its Vulkan backend, off by default, with the effect predicted."""
    p, on = c.pred, what_if(c, backend="ollama vulkan")
    if p is None or on is None or not on.decode_tps:
        return None
    eff = f"decode ≈ {p.decode_tps:.3g} → {on.decode_tps:.3g} tok/s"
    if p.prefill_tps and on.prefill_tps:
        eff += f", prompt reading ≈ {p.prefill_tps:,.0f} → {on.prefill_tps:,.0f} tok/s"
    name = c.sit.hardware.name if c.sit.hardware is not None else "the integrated GPU"
    return fix("gpu_offload", f"Run it on the {name}: start Ollama with OLLAMA_VULKAN=1 (its Vulkan backend)", eff,
               "Ollama drives this GPU only through its Vulkan backend, which is off unless OLLAMA_VULKAN=1, so today "
               "it runs on the CPU cores (`ollama ps` shows 100% CPU); llama.cpp's Vulkan build does the same.",
               speedup=on.decode_tps / p.decode_tps, new_decode_tps=on.decode_tps)


def _vllm_v0(c: Ctx) -> bool:
    from advisor.perf.fit import vllm_v0

    return c.pred is not None and vllm_v0(c.sit.engine_text)


@register("vllm_v1", "fix_configuration", 0, _vllm_v0)
def _vllm_v1(c: Ctx) -> Fix | None:
    """Upgrade vLLM past 0.8: its V1 engine takes the per-sequence host work out of the GPU's loop."""
    p, on = c.pred, what_if(c, backend="vllm")
    if p is None or on is None or not on.decode_tps or not p.decode_tps:
        return None
    users = c.sit.workload.users
    each = (f", ≈ {p.decode_tps_per_seq:.3g} → {on.decode_tps_per_seq:.3g} tok/s each"
            if users > 1 and p.decode_tps_per_seq and on.decode_tps_per_seq else "")
    return fix("fix_configuration", "Upgrade vLLM to 0.8 or later (its V1 engine)",
               f"decode ≈ {p.decode_tps:,.0f} → {on.decode_tps:,.0f} tok/s{' over ' + str(users) + ' users' if users > 1 else ''}{each}",
               "Before 0.8 vLLM scheduled, prepared inputs, sampled and detokenised in the GPU's loop, one sequence at "
               "a time, so the GPU waits on the host more the more users share a step (most with a small model); "
               "V1 runs that beside the GPU.", speedup=on.decode_tps / p.decode_tps, new_decode_tps=on.decode_tps)


# How each llama.cpp-family engine is put on an AMD/Intel iGPU's Vulkan backend (its words; the default for others)
_IGPU_VULKAN: dict[str, tuple[str, str]] = {
    "ollama": ("start Ollama with OLLAMA_VULKAN=1", "ollama vulkan"),
    "lm-studio": ("pick the Vulkan llama.cpp runtime in LM Studio's runtime settings and offload all layers", "lm-studio vulkan"),
    "koboldcpp": ("start KoboldCpp with --usevulkan and all layers on the GPU (--gpulayers 999)", "koboldcpp vulkan"),
}
_IGPU_DEFAULT = ("use llama.cpp's Vulkan build with every layer on the GPU (-ngl 99)", "llama.cpp vulkan")


def _igpu_left_idle(c: Ctx) -> bool:
    """A llama.cpp-family engine predicted on the CPU cores of a CPU whose integrated GPU has a catalog row."""
    hw, eng = c.sit.hardware, c.sit.engine or ""
    if c.pred is None or hw is None or hw.kind != "cpu" or eng not in ("llama.cpp", "ollama", "lm-studio", "koboldcpp"):
        return False
    return catalog.integrated_gpu(c.store, hw) is not None and engine_accel(c.sit.engine_text, hw)[1] == "cpu"


@register("igpu_vulkan", "gpu_offload", 0, _igpu_left_idle)
def _igpu_vulkan(c: Ctx) -> Fix | None:
    """Run the layers on the CPU's own integrated GPU (Vulkan): prompt reading is compute-bound and the iGPU
    has several times the cores' compute; decode reads the same memory, so it gains little."""
    p, hw = c.pred, c.sit.hardware
    gpu = catalog.integrated_gpu(c.store, hw) if hw is not None else None
    if p is None or hw is None or gpu is None:
        return None
    how, backend = _IGPU_VULKAN.get(c.sit.engine or "", _IGPU_DEFAULT)
    on = what_if(c, hardware=gpu, backend=backend)
    if on is None or not on.decode_tps or not p.decode_tps or not on.memory.fits:
        return None  # a model the machine's memory does not hold runs no better on its iGPU

    parts = []
    if p.prefill_tps and on.prefill_tps:
        parts.append(f"prompt reading ≈ {p.prefill_tps:,.3g} → {on.prefill_tps:,.3g} tok/s")
        if p.ttft_s and on.ttft_s:
            parts[-1] += f" (first word after {fmt_s(p.ttft_s)} → {fmt_s(on.ttft_s)})"
    parts.append(f"decode ≈ {p.decode_tps:.3g} → {on.decode_tps:.3g} tok/s")
    gain = max(on.decode_tps / p.decode_tps, (on.prefill_tps or 0) / (p.prefill_tps or on.prefill_tps or 1))
    return fix("gpu_offload", f"Run it on the {gpu.name}: {how}", ", ".join(parts),
               f"This {hw.name.split(' (')[0]} has an integrated GPU on the same memory that sits idle today: "
               "reading the prompt is compute-bound and the iGPU has several times the CPU cores' compute, while "
               "writing the answer reads the same memory either way, so it gains less.",
               speedup=gain, new_decode_tps=on.decode_tps, new_ttft_s=on.ttft_s)


@register("setup:check_placement", "fix_configuration", 0)
def _check_placement(c: Ctx) -> Fix | None:
    """Check where the layers run and what else holds the GPU (the check in this engine's own words)."""
    if _ollama_on_cpu(c):
        return None  # the layers are on the CPU by Ollama's design here: ollama_vulkan says what moves them
    if c.sit.engine == "mlx" and c.kind != "apple_soc" and c.kind is not None:
        title = "Run it with llama.cpp or vLLM instead of MLX (built for Apple silicon)"
        why = ("MLX's kernels are written for Apple's GPUs; on this hardware its young CUDA or CPU build is what runs, "
               "well below the engines made for it.")
        return _setup(c, title, why, "which MLX build is installed (mlx[cuda] or mlx[cpu]) and the device it reports.")
    if c.sit.engine == "mlx" or c.kind == "apple_soc":
        title = "Check that nothing else holds the Mac's memory or GPU (other apps, swapping) while it runs"
        why = "MLX and Metal run every layer on the GPU; what slows them is memory pressure or another app on the GPU."
    else:
        title = "Check where the layers run and that nothing else holds the GPU"
        why = "Layers on the CPU, or another program on the GPU, slow decode below what this hardware reaches."
    return _setup(c, title, why, _placement_check(c) + ".")


SSD_READ_GBS = 3.0  # ESTIMATE: sequential read of a PCIe 3.0 NVMe SSD (a SATA SSD ≈ 0.5 GB/s, PCIe 4.0 ≈ 7)
# (title, why) of keeping the model loaded, per engine (Ollama's idle unload: tools.OLLAMA_IDLE_UNLOAD_MIN).
_KEEP_LOADED: dict[str, tuple[str, str]] = {
    "ollama": ("Keep the model loaded between requests (OLLAMA_KEEP_ALIVE=-1, or keep_alive in the request) and keep "
               "num_ctx the same", f"Ollama unloads a model after {OLLAMA_IDLE_UNLOAD_MIN} minutes idle, and reloads it "
               "when a request asks for another num_ctx or another model; the load comes before the first token."),
    "lm-studio": ("Keep the model loaded in LM Studio (turn off auto-unload of idle models / the JIT load TTL)",
                  "With just-in-time loading LM Studio loads the model on the first request and unloads it when idle."),
    "llama.cpp": ("Serve the model once with llama-server instead of a new llama-cli run per prompt",
                  "Each command-line run loads every weight before its first token; a server loads it once."),
    "mlx": ("Serve the model once with mlx_lm.server instead of a new mlx_lm.generate run per prompt",
            "Each mlx_lm.generate run loads every weight before its first token; a server loads it once."),
}


@register("setup:model_load", "fix_configuration", 0)
def _model_load(c: Ctx) -> Fix | None:
    """Keep the model loaded: a load before the request adds weights ÷ disk speed to the first token."""
    p, eng = c.pred, c.sit.engine or ""
    if p is None or c.server_engine:
        return None  # a serving engine loads the weights once at start-up
    title, why = _KEEP_LOADED.get(eng, ("Keep the model loaded between requests (a server that stays up, not a new "
                                        "process per prompt)", "Loading the weights comes before the first token."))
    load = p.memory.weights_gb / SSD_READ_GBS
    ttft = p.ttft_s or 0.0
    effect = (f"first token ≈ {ttft:.2f} s expected with the model loaded, instead of ≈ {load + ttft:.1f} s when it "
              f"has to load {p.memory.weights_gb:.1f} GB first (estimate: {SSD_READ_GBS:g} GB/s, an NVMe SSD's read)")
    check = ("`ollama ps` shows whether the model is loaded and until when" if eng == "ollama" else
             "time a second request right after the first: if only the first is slow, it was the load")
    return fix("fix_configuration", title, effect, f"{why} Check: {check}.", speedup=None,
               new_ttft_s=p.ttft_s)


# What holds back prompt processing while decode is in range, per engine family (titles of ``setup:prefill``).
_PREFILL_SETTINGS = {
    "llama.cpp": "Check the prompt-processing settings: a current build, flash attention on (-fa on), the default "
                 "batch sizes (-b 2048 -ub 512) and every layer on the GPU",
    "mlx": "Update mlx and mlx-lm and keep the default prefill step (prefill_step_size 2048); close other GPU work",
    "server": "Check the server's prefill settings: time a second request (the first after a start pays the warm-up), "
              "a current version, the chunked-prefill budget "
              "(max_num_batched_tokens) and no eager mode",
}


@register("setup:prefill", "fix_configuration", 0)
def _prefill_settings(c: Ctx) -> Fix | None:
    """Prefill below this machine's expectation with decode in range: the prompt path's settings; the effect is the
    predicted prefill and first token against the measured ones."""
    from advisor.calibration import engine_family

    p, pp = c.pred, c.pp
    if p is None or not pp or not p.prefill_tps or p.prefill_tps <= 1.05 * pp:
        return None
    n = c.sit.workload.prompt_tokens
    effect = (f"prefill ≈ {p.prefill_tps:,.0f} tok/s expected vs {pp:,.0f} measured: first token {fmt_s(n / pp)} → "
              f"{fmt_s(n / p.prefill_tps)} for a {n:,}-token prompt")
    title = _PREFILL_SETTINGS.get(engine_family(c.sit.engine), _PREFILL_SETTINGS["llama.cpp"])
    why = ("Prefill is compute-bound: an old build, flash attention off, a small micro-batch or layers left on the "
           "CPU slow it, while decode, which only needs the memory, stays in range.")
    return fix("fix_configuration", title, effect, f"{why} Check: a benchmark of the same model with the defaults "
               "(llama-bench -p 512, or the engine's own benchmark) against this run.", speedup=p.prefill_tps / pp,
               new_ttft_s=n / p.prefill_tps)


SETUP: dict[str, tuple[str, str, str]] = {
    "output_layer": ("Set -ngl to 99 (any number above the layer count), not the layer count",
                     "The output layer is one more tensor than the repeating blocks; -ngl N leaves it on the CPU.",
                     "the log line 'offloaded N/N+1 layers to GPU'."),
    "gpu_runtime": ("Install the GPU build/runtime (CUDA, ROCm, Metal) and check the engine sees the GPU",
                    "A missing driver or a CPU-only wheel silently falls back to the CPU.",
                    "the startup log names the GPU; {gpu_busy} shows it working."),
    "container_mac": ("Run outside the container, natively on macOS",
                      "Docker on macOS has no GPU access; the model runs on the CPU cores inside a Linux VM.",
                      "{container}."),
    "container_gpu": ("Give the container the GPU (--gpus all with the NVIDIA container toolkit; /dev/kfd and /dev/dri "
                      "for ROCm)", "Without it the engine inside falls back to the CPU.",
                      "{container}."),
    "fp16_kernels": ("Use an engine with an FP32 path on this card (llama.cpp / GGUF) instead of FP16 kernels",
                     "Pascal GPUs other than the P100 have crippled FP16 throughput; llama.cpp computes in FP32 there.",
                     "the card draws far below its power limit under load (`nvidia-smi`), the sign of stalled math."),
    "gpu_backend": ("Use the CPU backend (-ngl 0) or a native GPU backend (CUDA/ROCm/Vulkan) instead",
                    "On Intel Macs the Metal backend and CLBlast offload are slower than the CPU for decode.",
                    "compare tok/s with -ngl 0 against the GPU run."),
    "power": ("Run plugged in with the performance power mode (Windows power plan / vendor app / macOS Low Power "
              "Mode off)", "On battery or in a power-saving mode the GPU's clocks and memory clock are capped, so the "
              "same model runs at a fraction of its plugged-in speed.",
              "compare tok/s plugged in; {power} shows the mode in force."),
    "native_backend": ("Use the GPU vendor's backend build (ROCm/HIP on Radeon, CUDA on NVIDIA, SYCL on Arc) for "
                       "prompt processing", "Portable backends (Vulkan, OpenCL) often lack the tuned matrix-multiply "
                       "kernels that prefill needs, while decode (bandwidth-bound) is close.",
                       "llama-bench pp512 with the vendor build against this one."),
    "engine": ("Serve the model with an inference engine (vLLM, llama.cpp, ExLlamaV2, SGLang) instead of plain "
               "transformers generate()", "Inference engines capture CUDA graphs and fuse the decode step's kernels; "
               "eager generate() pays Python and launch overhead for every layer of every token.",
               "the same model's tok/s in llama.cpp or vLLM on this GPU."),
    "kv_f16": ("Use an f16 KV cache (unset OLLAMA_KV_CACHE_TYPE / drop -ctk q8_0), or update the engine",
               "The CPU fallback moves data between GPU and CPU each token.",
               "the speed with the f16 cache; the log mentions the fallback of the flash-attention op."),
    "sampler": ("Set top_k to 40 (or any cut-off) instead of 0",
                "top_k 0 sorts the full vocabulary on the CPU for every token.",
                "the sampler settings of the client (SillyTavern, Open WebUI, the API call)."),
    "cuda_graphs": ("Let the engine capture CUDA graphs (vLLM: drop --enforce-eager; SGLang: drop "
                    "--disable-cuda-graph)",
                    "CUDA graphs replay a decode step's kernels in one launch.",
                    "the startup log says 'CUDA graphs' are captured; compare tok/s at batch 1."),
    "attention": ("Use the engine's default attention backend (FLASH_ATTN / FLASHINFER; unset VLLM_ATTENTION_BACKEND)",
                  "Fallback backends (xformers, torch SDPA) are much slower at decode on recent GPUs.",
                  "the startup log line 'Using ... backend'."),
    "kv_pool": ("Give the KV cache more room and stop the preemptions: --gpu-memory-utilization 0.95 (vLLM's default "
                "0.9), and --max-num-seqs at the number of requests the cache holds, so the rest queue instead of being "
                "preempted and recomputed",
                "A preempted request is thrown out of the cache and its whole prompt computed again when it resumes: "
                "work done twice while others wait.",
                "the log's 'GPU KV cache usage' and the preemption warnings (total_num_cumulative_preemption)."),
    "tp_interconnect": ("Give tensor parallel a faster link: enable PCIe P2P (or NVLink), a Gen4 platform, or use a "
                        "layer split (pipeline) instead",
                        "Each layer's all-reduce crosses the bus; staged through host memory it costs most.",
                        "{topology} (PHB/SYS = through the CPU), and NCCL_P2P_DISABLE in the environment."),
    "carveout": ("Let the GPU use the shared memory: a small BIOS carve-out plus a larger GTT (amdgpu.gttsize / ttm "
                 "pages_limit), or raise the carve-out", "The carve-out is only the reserved part; the APU can map "
                 "most of the unified memory.", "`rocm-smi --showmeminfo gtt` or the engine's log of usable VRAM."),
    "rocm_igpu": ("Make ROCm accept the iGPU (HSA_OVERRIDE_GFX_VERSION=11.0.0 for gfx1103 / 780M) or use the Vulkan "
                  "build", "ROCm does not list most integrated GPUs and silently falls back to the CPU.",
                  "`ollama ps` shows 100% CPU; the server log says no compatible GPU was found."),
    "rocm_card": ("Make ROCm accept the card (HSA_OVERRIDE_GFX_VERSION=10.3.0 for RDNA2 cards such as the RX 6700 XT "
                  "or 6600; 11.0.0 for RDNA3) or use a Vulkan build (LM Studio's Vulkan runtime, llama.cpp -DGGML_VULKAN=ON)",
                  "ROCm lists only some Radeon cards; on the others the engine finds no usable GPU and silently runs on "
                  "the CPU.", "`ollama ps` shows 100% CPU; the server log says no compatible GPU was found."),
    "runtime": ("Update (or roll back) the engine's runtime to a build without the regression",
                "The same weights run faster in another engine or version on this machine: the hardware is fine.",
                "compare the same model and quant in another runtime (e.g. llama.cpp's llama-bench)."),
    "threads": ("Use the physical core count of threads (or fewer)",
                "Decode on the CPU is bandwidth-bound; extra threads only add contention.",
                "tok/s at -t equal to the physical cores."),
    "hybrid_cpu": ("Tune the CPU side of the split: threads = physical cores (-t), one NUMA node per socket (NPS1, or "
                   "--numa distribute), and the RAM at its rated speed (EXPO/XMP on)",
                   "With the experts in system RAM, the CPU reads them for every token: too many threads, memory spread "
                   "over NUMA nodes or DIMMs below their rated speed waste the bandwidth that sets decode.",
                   "tok/s at -t equal to the physical cores; the memory speed the BIOS reports; `numastat -p <pid>` on "
                   "a server CPU."),
    "numa": ("Spread the model across NUMA nodes (--numa distribute; drop the page cache first)",
             "On a multi-socket server the weights must sit in both sockets' memory to use both controllers.",
             "`numastat -p <pid>` shows the pages on one node."),
    "cpu_tuning": ("Set threads to the physical core count; close background load; check memory speed",
                   "CPU decode is bandwidth-bound; oversubscribed threads or slow DIMMs waste it.",
                   "the memory speed the BIOS reports; tok/s with the machine idle."),
    "scheduler": ("Check the server's scheduling: max-num-seqs and the KV-cache budget (gpu-memory-utilization) room "
                  "for every user at once, chunked prefill on, and per-user speed timed from the first token",
                  "Requests that wait in the queue or are preempted for KV-cache space, or decoding streams stalled by "
                  "other users' long prompts, make each user slow while the GPU itself is not the limit.",
                  "the engine's metrics while the users are on (vLLM: num_requests_waiting and 'preempted' in the "
                  "log, SGLang: #queue-req)."),
    "thermal": ("Keep it cool and on full power (no Low Power Mode, on a hard surface or a stand; a fan for fanless "
                "laptops)", "Fanless and thin machines lower their clocks when hot; sustained decode drops.",
                "tok/s of a cold run vs after five minutes."),
}


_TOPOLOGY = {"amd": "`rocm-smi --showtopo`", "mac": "the engine's log", "intel": "`xpu-smi topology -m`"}


def checks(c: Ctx, check: str) -> str:
    """A check's words with its ``{tool}`` places filled for this platform (:mod:`advisor.diagnose.tools`)."""
    tools = {k: hint(c, k) for k in TOOLS}
    tools["topology"] = _TOPOLOGY.get(platform_of(c), "`nvidia-smi topo -m`")
    return check.format(**tools)


def _make(key: str) -> Callable[[Ctx], Fix | None]:
    title, why, check = SETUP[key]

    def make(c: Ctx) -> Fix | None:
        if key == "kv_pool":  # more cache, not the expected speed back: its effect is the pool's growth
            return fix("fix_configuration", title, _kv_pool_effect(c), f"{why} Check: {checks(c, check)}")
        return _setup(c, title, why, checks(c, check))
    return make


def _kv_pool_effect(c: Ctx) -> str:
    """The KV pool at --gpu-memory-utilization 0.95 against vLLM's default 0.9, ESTIMATE from the card's memory, the
    weights and the overhead (:mod:`advisor.diagnose.rules_engine`)."""
    from advisor.diagnose.rules_engine import VLLM_GPU_SHARE

    p = c.pred
    if p is None or not p.memory.total_gb:
        return "more room for the KV cache; requests queue instead of being thrown out and recomputed"
    now = p.memory.total_gb * VLLM_GPU_SHARE - p.memory.weights_gb - p.memory.overhead_gb
    more = p.memory.total_gb * 0.95 - p.memory.weights_gb - p.memory.overhead_gb
    if now <= 0:
        return "more room for the KV cache; requests queue instead of being thrown out and recomputed"
    return (f"KV pool ≈ {now:.1f} → {more:.1f} GB (≈ {more / now:.2g}× the tokens in flight, an estimate); requests beyond "
            "it queue instead of being thrown out and recomputed")


for _key in SETUP:
    register(f"setup:{_key}", "fix_configuration", 0)(_make(_key))
