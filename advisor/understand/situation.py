"""The Situation: everything the advisor understood about one person's setup, resolved once.

Text (chat, compare form, CLI flags, JSON, pasted tool output, probe results) is read only by
:mod:`advisor.understand`. Everything downstream (perf, diagnose, compare, rendering, charts) takes a
:class:`Situation` and never parses a string: names are already resolved against the catalog,
lengths are tokens, rates are tok/s, and what was noticed in the text is a typed :class:`Symptoms`.

Units are in the field names: ``_tokens`` tokens, ``_tps`` tokens per second, ``_gb`` 10^9 bytes,
``_gbs`` GB/s, ``_s`` seconds, ``_ms`` milliseconds.

>>> Workload(prompt_tokens=500, gen_tokens=300).users
1
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from advisor.models import Hardware, HardwareKind, ModelSpec, QuantFormat, Scenario

__all__ = [
    "Assumption",
    "Engine",
    "ENGINES",
    "Layout",
    "Machine",
    "Measured",
    "Situation",
    "Symptoms",
    "Unresolved",
    "Workload",
]

# The engines the advisor tells apart (one classifier: advisor.understand.engine.classify_engine).
Engine = Literal[
    "llama.cpp", "ollama", "lm-studio", "mlx", "vllm", "sglang", "tensorrt-llm", "exllamav2", "koboldcpp",
    "text-generation-webui", "ik_llama.cpp", "transformers", "other",
]
ENGINES: tuple[str, ...] = Engine.__args__  # type: ignore[attr-defined]
Layout = Literal["single", "layer_split", "tensor_parallel", "pipeline_parallel"]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Assumption(_Frozen):
    """One value the advisor assumed, and why (shown to the person).

    Attributes:
        field (str): what it is about (``"prompt_tokens"``, ``"memory_gb"``, ``"engine"``, ``"hardware"``...).
        text (str): the sentence to show ("Prompt length not stated: assumed 500 tokens.").
    """

    field: str
    text: str


class Unresolved(_Frozen):
    """Something the advisor needs but could not settle: what it is, why, and the candidates.

    Attributes:
        field (str): ``"hardware"``, ``"model"``, ``"quant"``, ``"memory_gb"``, ``"prompt_tokens"``...
        reason (str): one sentence for the person ("'RTX 4070 Ti' could be the Ti or the Ti Super").
        candidates (list[str]): catalog names it could be (closest first), possibly empty.
        blocking (bool): True when no prediction can be made without it.
    """

    field: str
    reason: str
    candidates: list[str] = Field(default_factory=list)
    blocking: bool = True


class Machine(_Frozen):
    """The machine asked about (or one candidate in a comparison).

    ``hardware`` is the resolved catalog entry for ONE device (or a probe-measured/custom machine);
    ``count`` identical devices (or ``mixed`` ones) form the machine. ``hardware`` is None when the
    name did not resolve; ``kind`` may still be known ("a Mac", "a GPU", "my laptop").

    Attributes:
        text (str | None): the name as the person wrote it ("2x RTX 3090 24GB, PCIe Gen3").
        hardware (Hardware | None): the resolved device (memory_gb set to the stated or assumed size).
        kind (HardwareKind | None): apple_soc, discrete_gpu, datacenter_gpu, apu, cpu.
        count (int): number of accelerators (GPUs); 1 for a Mac or a CPU.
        mixed (list[Hardware]): the cards of a mixed box ("3090 + 3060"), each as resolved; ``hardware`` is then
            their combined device (:func:`knowledge.catalog.mixed_hardware`: memory summed, bandwidth and compute
            weighted by each card's share of the layers) and ``count`` the number of cards.
        interconnect (str | None): ``"pcie3"``, ``"pcie4"``, ``"pcie5"``, ``"nvlink"``, ``"infinity-fabric"``...
        pcie_lanes (int | None): lanes per GPU when stated (x16, x8, x4, x1).
        layout (Layout | None): how the model is spread over the devices, when stated.
        tensor_parallel (int | None): the tensor-parallel degree when stated (``-tp 2``).
        memory_stated_gb (float | None): the accelerator/unified memory as stated, GB.
        memory_shipped (bool | None): False when the stated size is not one the product ships with.
        system_ram_gb (float | None): system RAM beside a discrete GPU, GB.
        vram_carveout_gb (float | None): BIOS VRAM carve-out on an APU (Strix Halo), GB.
        measured (bool): bandwidth/compute come from a probe of this machine.
        this_machine (bool): the person means the computer running the advisor (or their own, probed).
    """

    text: str | None = None
    hardware: Hardware | None = None
    kind: HardwareKind | None = None
    count: int = 1
    mixed: list[Hardware] = Field(default_factory=list)
    interconnect: str | None = None
    pcie_lanes: int | None = None
    layout: Layout | None = None
    tensor_parallel: int | None = None
    memory_stated_gb: float | None = None
    memory_shipped: bool | None = None
    system_ram_gb: float | None = None
    vram_carveout_gb: float | None = None
    measured: bool = False
    this_machine: bool = False

    @property
    def resolved(self) -> bool:
        """True when the device is known (catalog, probe or stated bandwidth)."""
        return self.hardware is not None

    @property
    def memory_gb(self) -> float | None:
        """Memory of one device as used for the fit, GB (stated, else the catalog's assumption)."""
        return self.hardware.memory_gb if self.hardware is not None else self.memory_stated_gb


class Workload(_Frozen):
    """What the person runs, in tokens and users.

    Attributes:
        prompt_tokens (int): new prompt tokens per request (the per-request part + shared prefix).
        prompt_range (tuple[int, int] | None): a stated range ("5–10k"); ``prompt_tokens`` is its middle.
        shared_prefix_tokens (int): the part of the prompt repeated across requests (system prompt, file):
            what prefix caching can save. Included in ``prompt_tokens``.
        depth (int): tokens already in the KV cache when the request starts (a long conversation).
        gen_tokens (int): answer length.
        users (int): concurrent streams (sequences decoded together).
        requests_per_minute (float | None): arrival rate, when stated.
        use (str | None): chat, coding_agent, rag, summarising, batch.
        context_window (int | None): the allocated context (n_ctx / num_ctx): sizes the KV cache, NOT a prompt.
        ttft_target_s (float | None): the time to first token the person needs ("under 2 s"), s.
        decode_target_tps (float | None): the per-user generation speed they need, tok/s.
        stated (frozenset[str]): which of these fields the person stated (the rest are defaults).
    """

    prompt_tokens: int = 500
    prompt_range: tuple[int, int] | None = None
    shared_prefix_tokens: int = 0
    depth: int = 0
    gen_tokens: int = 300
    users: int = 1
    requests_per_minute: float | None = None
    use: str | None = None
    context_window: int | None = None
    ttft_target_s: float | None = None
    decode_target_tps: float | None = None
    stated: frozenset[str] = frozenset()


class Measured(_Frozen):
    """Rates the person measured (chat, paste, probe), per phase.

    Attributes:
        prefill_tps (float | None): prompt processing, tok/s.
        decode_tps (float | None): token generation, tok/s (per stream unless ``decode_is_aggregate``).
        ttft_s (float | None): time to first token, s (with a prompt length it gives a prefill rate).
        itl_ms (float | None): inter-token latency, ms.
        decode_is_aggregate (bool): the decode rate is summed over ``streams`` sequences (a batched server).
        streams (int | None): how many streams an aggregate rate covers, when known.
        alone (bool): the rates are one stream that ran alone (a benchmark tool's single run), whatever the
            users stated: judged against one stream by itself.
        decode_includes_prompt (bool): the tool's rate divides by the whole call (text-generation-webui):
            a lower bound on decode.
        prompt_tokens, gen_tokens, depth (int | None): the lengths the measurement was made at.
        source (str | None): where it came from: ``"chat"``, ``"probe"``, or the importer format name.
    """

    prefill_tps: float | None = None
    decode_tps: float | None = None
    ttft_s: float | None = None
    itl_ms: float | None = None
    decode_is_aggregate: bool = False
    streams: int | None = None
    alone: bool = False
    decode_includes_prompt: bool = False
    prompt_tokens: int | None = None
    gen_tokens: int | None = None
    depth: int | None = None
    source: str | None = None

    @property
    def any(self) -> bool:
        """True when at least one rate or time was measured."""
        return any(v is not None for v in (self.prefill_tps, self.decode_tps, self.ttft_s, self.itl_ms))


class Symptoms(_Frozen):
    """What the text says about the setup, as typed facts (rules read these, never the text).

    Attributes:
        n_gpu_layers (int | None): ``-ngl`` / ``num_gpu`` as set.
        gpu_fraction (float | None): share of the model on the GPU as a tool reported it (ollama ps 48%/52%).
        gpu_backend (str | None): the compute backend named: cuda, rocm, metal, vulkan, sycl, clblast, cpu, opencl.
        cpu_only (bool): the run is on the CPU by choice or build (``-ngl 0``, a CPU-only build).
        gpu_not_used (bool): the text says the GPU is not found / not used / idle.
        driver_failed (bool): the text shows the GPU driver or runtime failing to start (nvidia-smi cannot reach the
            driver, NVML or CUDA fails to initialise): nothing runs on the GPU.
        container (bool): runs in Docker/Podman/WSL/a VM.
        cpu_sampling (bool): a sampler setting that forces CPU-side sampling over the whole vocabulary (``top_k 0``).
        eager_mode (bool): vLLM ``--enforce-eager`` (no CUDA graphs).
        attention_backend (str | None): the attention backend named (flashinfer, xformers, triton, torch-sdpa...).
        flash_attention (bool | None): flash attention on (True) / off (False) when stated.
        kv_cache_quant (str | None): KV-cache type when quantized (``q8_0``, ``q4_0``, ``fp8``).
        speculative (str | None): speculative decoding already in use: ``"draft"``, ``"mtp"``, ``"eagle"``, ``"ngram"``.
        speculative_asked (bool): speculative decoding asked about, not in use ("would a draft model help?").
        kv_quant_asked (str | None): the quantized KV cache asked about, not in use ("would an fp8 kv cache help?":
            ``"fp8"``; ``"quantized"`` when no type is named).
        batch_setting_asked (str | None): a batch setting asked about, as written ("should I increase max-num-seqs?").
        support_asked (bool): whether an engine runs here at all is asked ("does ollama even support it?").
        prefix_caching (bool | None): prefix/prompt caching on (True) / off (False) when stated.
        batching (int | None): parallel slots / max concurrency the server is set to (``-np 4``).
        swapping (bool): swap / memory pressure / OOM mentioned.
        thermal (bool): throttling, fanless, slows after minutes.
        numa (bool): NUMA / dual socket mentioned.
        threads (int | None): CPU threads set (``-t 8``).
        regression (bool): it got slower after an update / new version.
        long_context (bool): long or growing conversation/context mentioned.
        cache_discarded (bool): a llama-server log shows the slot's KV cache thrown away before a prompt
            (``kv cache rm [0, end)``, ``n_past = 0`` on a later turn): the whole prompt was read again.
        asks_about (frozenset[str]): phases the question singles out: ``"prefill"`` (TTFT, "takes long to
            start"), ``"decode"`` (generation speed).
        prefix_reuse (bool): the workload resends a growing or shared prompt (agents, chat history, RAG).
        mentions (frozenset[str]): other flags noticed, each a short id (for explanations and tests).
        full_offload (bool): every layer is said to be on the GPU ("fully offloaded", ``-ngl 99``, "33/33 layers").
        gpu_arch (str | None): an old GPU generation with slow FP16 named: ``"pascal"`` (P40, P4, GTX 10xx;
            not the P100), ``"maxwell"``, ``"kepler"``.
        p2p_disabled (bool): GPU peer-to-peer is off (``NCCL_P2P_DISABLE=1``, "P2P disabled").
        faster_elsewhere (bool): the same model runs much faster in another engine or version on this machine.
        power_limited (bool): the machine runs on battery, in a power-saving mode or under a lowered power limit.
        household (bool): a family/home question (plain words wanted).
        asks_speed (bool): the question asks for the speed itself ("how fast…?", "wie schnell…?"): the number first.
        experts_on_cpu (bool): a MoE's routed experts are kept in system RAM on purpose (``--n-cpu-moe``, ``-ot exps=CPU``).
        cpu_moe_layers (int | None): how many layers' experts are in system RAM (``--n-cpu-moe 28``; 10,000 for all:
            ``--cpu-moe``, ``-ot exps=CPU``), None when not said as a number.
        engine_asked (str | None): an engine asked about as an alternative ("should I switch to MLX?"), by its
            :func:`~advisor.understand.engine.classify_engine` name.
        api_asked (str | None): a GPU API asked about for the llama.cpp-family engine ("Vulkan or ROCm?": ``rocm``;
            ``cuda``, ``vulkan``, ``rocm``, ``sycl``, ``metal``, ``opencl``).
        npu_asked (bool): the NPU (Neural Engine, XDNA, Hexagon) is named: whether the engines use it is answered.
        rocm_refused (bool): the engine's log says ROCm does not support the card ("amdgpu is not supported").
        asks_memory (bool): the question asks for the memory it takes ("how much VRAM do I need?").
        kv_cache_full (bool): the engine ran out of KV cache (vLLM's preemption warning, or its log's cache full
            with requests waiting; :attr:`Scenario.kv_cache_full` from a pasted log).
        context_asked (bool): the question asks how much context fits ("how much context can I fit?",
            :data:`advisor.understand.symptoms.CONTEXT_ASKED`).
        ubatch (int | None): the prompt micro-batch set (llama.cpp ``-ub``, Ollama ``num_batch``), tokens.
        intel_mac (bool): the machine is an Intel Mac (its GPU is no Apple Silicon GPU, whatever a name matched).
        portable (bool): the person calls the machine a laptop, mini PC or board computer (no graphics card goes in).
    """

    n_gpu_layers: int | None = None
    gpu_fraction: float | None = None
    gpu_backend: str | None = None
    cpu_only: bool = False
    gpu_not_used: bool = False
    driver_failed: bool = False
    container: bool = False
    cpu_sampling: bool = False
    eager_mode: bool = False
    attention_backend: str | None = None
    flash_attention: bool | None = None
    kv_cache_quant: str | None = None
    speculative: str | None = None
    speculative_asked: bool = False
    kv_quant_asked: str | None = None
    batch_setting_asked: str | None = None
    support_asked: bool = False
    prefix_caching: bool | None = None
    batching: int | None = None
    swapping: bool = False
    thermal: bool = False
    numa: bool = False
    threads: int | None = None
    regression: bool = False
    long_context: bool = False
    asks_about: frozenset[str] = frozenset()
    prefix_reuse: bool = False
    cache_discarded: bool = False
    mentions: frozenset[str] = frozenset()
    full_offload: bool = False
    gpu_arch: str | None = None
    p2p_disabled: bool = False
    faster_elsewhere: bool = False
    household: bool = False
    asks_speed: bool = False
    asks_memory: bool = False
    context_asked: bool = False
    kv_cache_full: bool = False
    experts_on_cpu: bool = False
    cpu_moe_layers: int | None = None
    engine_asked: str | None = None
    api_asked: str | None = None
    npu_asked: bool = False
    rocm_refused: bool = False
    ubatch: int | None = None
    intel_mac: bool = False
    portable: bool = False
    power_limited: bool = False  # on battery / a power-saving mode / a lowered power limit
    complaint: bool = False  # the person says it is slow as they see it ("takes forever"), numbers or not
    after_idle: bool = False  # the slow request comes after a pause ("after a few min break"): a reload


class Situation(_Frozen):
    """One person's setup, understood once: the input of perf, diagnose, compare and rendering.

    Attributes:
        facts (Scenario): the stated facts as a Scenario (the wire format of ``ask --json`` ``facts``).
        machine (Machine | None): the machine asked about (None when nothing was said about it).
        model (ModelSpec | None): the resolved model.
        quant (QuantFormat | None): the resolved weight format (or the stated default, see assumptions).
        engine (Engine | None): the engine classified from what was said or pasted.
        engine_text (str | None): the engine/backend as written ("llama.cpp CUDA, -ngl 99").
        workload (Workload): lengths and users (defaults filled, see ``assumptions``).
        measured (Measured): what the person measured.
        symptoms (Symptoms): what the text says about the setup.
        compare_hardware (list[Machine]): machines the person asks to compare (besides ``machine``).
        compare_models (list[ModelSpec]): models the person asks to compare.
        assumptions (list[Assumption]): every value assumed, with its reason.
        unresolved (list[Unresolved]): what is still unknown; the dialog asks about the first blocking one.
        question (str | None): the person's question in their words (for rendering only; rules never read it).
        audience (str | None): ``"household"``, ``"team"`` or ``"diagnose"`` when it can be told.
        remote (bool): the person is a remote visitor of a shared server ("this machine" is not the host).
    """

    facts: Scenario = Field(default_factory=Scenario)
    machine: Machine | None = None
    model: ModelSpec | None = None
    quant: QuantFormat | None = None
    engine: Engine | None = None
    engine_text: str | None = None
    workload: Workload = Field(default_factory=Workload)
    measured: Measured = Field(default_factory=Measured)
    symptoms: Symptoms = Field(default_factory=Symptoms)
    compare_hardware: list[Machine] = Field(default_factory=list)
    compare_models: list[ModelSpec] = Field(default_factory=list)
    assumptions: list[Assumption] = Field(default_factory=list)
    unresolved: list[Unresolved] = Field(default_factory=list)
    question: str | None = None
    audience: str | None = None
    remote: bool = False

    @property
    def hardware(self) -> Hardware | None:
        """The resolved device of the machine asked about, or None."""
        return self.machine.hardware if self.machine is not None else None

    @property
    def ready(self) -> bool:
        """True when a prediction can be made (machine, model and format resolved)."""
        return self.hardware is not None and self.model is not None and self.quant is not None

    def unresolved_field(self, field: str) -> Unresolved | None:
        """The unresolved entry for ``field``, or None."""
        return next((u for u in self.unresolved if u.field == field), None)

    def assumption_texts(self) -> list[str]:
        """Every assumption as a sentence, in order, without repeats."""
        out: list[str] = []
        for a in self.assumptions:
            if a.text not in out:
                out.append(a.text)
        return out
