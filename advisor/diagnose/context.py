"""What every rule and remedy reads: the Situation, the expected Prediction, physics bounds, measured rates.

The one place diagnosis calls the prediction code is :func:`predict_for`; remedies compute their effect
with it through :func:`advisor.diagnose.remedies.what_if`, so a fix's numbers come from the same model
as the expectation it is compared with.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from advisor.errors import AdvisorError
from advisor.models import Hardware, ModelSpec, Prediction, QuantFormat
from advisor.perf import predict
from advisor.perf.moe import with_moe
from advisor.perf.step import expert_layers_share, expert_offload_share, moe_split_bytes
from advisor.roofline import kv_element_bytes, served_share
from advisor.understand.engine import LLAMA_SERVER_ENGINES, classify_engine
from advisor.understand.situation import Situation
from knowledge import catalog
from knowledge.store import Store

__all__ = ["CACHE_HIT", "Bounds", "Ctx", "build_ctx", "predict_for", "stated_total_gb", "streams_for", "FAR_BELOW", "FAR_OUTSIDE", "GPU_KINDS"]

FAR_BELOW = 0.35  # measured / expected below this: something is wrong, not just slow
FAR_OUTSIDE = 0.5  # measured below this × the slowest plausible machine's low end: far outside physics
CACHE_HIT = 1.6  # measured prefill above the compute ceiling × this: a prompt-cache hit, not a rate
GPU_KINDS = ("discrete_gpu", "datacenter_gpu", "apu", "apple_soc")
SERVER_ENGINES = ("vllm", "sglang", "tensorrt-llm")
# The slowest memory a laptop APU reads (dual-channel DDR4-3200, catalog id cpu-ddr4-3200-2ch): the
# catalog's APUs are all large unified-memory chips, so the floor for "an APU" adds system-RAM machines.
_APU_FLOOR_IDS = ("cpu-ddr4-3200-2ch", "cpu-ddr5-5600-2ch")
_KIND_WORDS = {"apple_soc": "Apple Silicon Mac", "discrete_gpu": "desktop or laptop GPU",
               "datacenter_gpu": "datacenter GPU", "apu": "APU / integrated GPU", "cpu": "CPU-only machine"}


def predict_for(store: Store, sit: Situation, **changes: Any) -> Prediction | None:
    """The prediction for this situation with some facts changed (``quant=``, ``model=``, ``hardware=``,
    ``concurrency=``, ``prompt_tokens=``, ``gpu_share=``...), or None when it cannot be made.

    The only call of :func:`advisor.perf.predict` in diagnosis. A measured run that ran alone (llama-bench
    among stated users) is judged, and its fixes sized, as one stream by itself unless ``concurrency=`` is
    given (the batching fix asks for the users' batch itself).
    """
    # another machine, model or format (a purchase, a smaller model): its own placement, not the person's flags
    moved = any(changes.get(k) is not None for k in ("hardware", "model", "quant"))
    hw = changes.pop("hardware", None) or sit.hardware
    model = changes.pop("model", None) or sit.model
    quant = changes.pop("quant", None) or sit.quant
    if hw is None or model is None or quant is None:
        return None
    w = sit.workload
    backend = sit.engine_text
    if hw.kind in ("discrete_gpu", "datacenter_gpu", "apple_soc") and classify_engine(backend)[1] == "cpu":
        backend = sit.engine  # a CPU-backend run on a machine with a graphics card: the card is what is judged
    args: dict[str, Any] = dict(backend=backend, prompt_tokens=w.prompt_tokens, gen_tokens=w.gen_tokens,
                                depth=w.depth, concurrency=1 if sit.measured.alone else w.users,
                                flash_attn=sit.symptoms.flash_attention, ubatch=sit.symptoms.ubatch,
                                system_ram_gb=sit.machine.system_ram_gb if sit.machine is not None else None)
    if sit.symptoms.kv_cache_quant:  # "-ctk q8_0", "OLLAMA_KV_CACHE_TYPE=q4_0": the cache is that size
        args["kv_bytes_per_element"] = kv_element_bytes(sit.symptoms.kv_cache_quant)
    args.update(changes)
    try:
        p = predict(store, hardware=hw, model=model, quant=quant, **args)
        if "kv_bytes_per_element" in args and args["kv_bytes_per_element"] != 2.0:
            kvq = str(sit.symptoms.kv_cache_quant)
            said = "q8_0 (a quantized cache of no stated type)" if kvq == "quantized" else kvq
            p.assumptions.append(f"KV cache in {said}: {args['kv_bytes_per_element']:.3g} bytes per element instead of "
                                 "f16's 2, so about half (q8_0) or a quarter (q4_0) of its size; llama.cpp needs flash "
                                 "attention (-fa) to quantize the V cache.")
        ngl, n_layers = sit.symptoms.n_gpu_layers, model.n_layers or 0
        if (not moved and "gpu_share" not in changes and ngl is not None and n_layers and 0 < ngl < n_layers
                and hw.kind in ("discrete_gpu", "datacenter_gpu") and p.memory.gpu_share < 1.0
                and ngl / n_layers < p.memory.gpu_share - 0.02 and not sit.symptoms.experts_on_cpu):
            # it does not fit and the person set fewer layers on the card than the engine's own fit would: the
            # figures are for the split they run (their -ngl / "GPU offload 40/62"), not the best split
            p = predict(store, hardware=hw, model=model, quant=quant, **{**args, "gpu_share": ngl / n_layers})
            p.assumptions.append(f"{ngl} of the model's {n_layers} layers on the GPU, as you set: about "
                                 f"{ngl / n_layers:.0%} of the weights there, the rest read from system RAM.")
        layers = None if moved else sit.symptoms.cpu_moe_layers
        if (sit.symptoms.experts_on_cpu and sit.engine in LLAMA_SERVER_ENGINES and model.is_moe
                and "gpu_share" not in changes and (p.memory.gpu_share < 1.0 or layers)
                and hw.kind in ("discrete_gpu", "datacenter_gpu")):
            p = _experts_placed(store, p, hw, model, quant, args, layers)
        return p
    except (AdvisorError, ValueError):
        return None


def _experts_placed(store: Store, p: Prediction, hw: Hardware, model: ModelSpec, quant: QuantFormat,
                    args: dict[str, Any], layers: int | None) -> Prediction:
    """The prediction with a MoE's routed experts in system RAM on purpose (``--n-cpu-moe``, ``-ot exps=CPU``):
    attention and the dense layers stay on the GPU; as many layers' experts as said ("--n-cpu-moe 24"; "-ot exps=CPU":
    all), else as many as do not fit. A stated count that leaves more on the card than it holds does not load: the
    figures are for the fewest layers that fit, and said so."""
    moe = with_moe(model)
    n_layers = moe.n_layers or 0
    dense, routed, _ = moe_split_bytes(moe, quant.bits_per_weight)
    note = ""
    if layers and n_layers and routed and p.memory.gpu_share < 1.0:
        fits_on_gpu = min(1.0, max(0.0, (p.memory.gpu_share * (dense + routed) - dense) / routed))
        fewest = math.ceil(n_layers * (1.0 - fits_on_gpu) - 1e-9)
        if layers < fewest:
            on_card = (dense + routed * (1.0 - layers / n_layers)) / 1e9
            note = (f"--n-cpu-moe {layers} would leave about {on_card:.0f} GB of weights for the card's "
                    f"{p.memory.usable_gb:.0f} GB usable: it does not load as set (out of memory). The figures are for "
                    f"the fewest layers whose experts must stay in system RAM, {fewest}.")
            layers = fewest
    share = (expert_layers_share(moe, quant.bits_per_weight, layers) if layers
             else expert_offload_share(moe, quant.bits_per_weight, p.memory.gpu_share))
    held = (routed / 1e9 * min(1.0, layers / n_layers) if layers and n_layers
            else p.memory.weights_gb * (1.0 - p.memory.gpu_share))  # what sits in system RAM, GB
    p = predict(store, hardware=hw, model=model, quant=quant, **{**args, "gpu_share": share, "host_weights_gb": held})
    said = [_experts_said(a, layers, n_layers, share) for a in p.assumptions]
    return p.model_copy(update={"assumptions": [note, *said] if note else said})


def _experts_said(text: str, layers: int | None, n_layers: int, share: float) -> str:
    """The prediction's placement sentence ("Only 55% of the weights fit in GPU memory; the rest run from system
    RAM at …") said for a MoE whose routed experts are in system RAM on purpose."""
    if not text.startswith("Only ") or "of the weights fit in GPU memory" not in text:
        return text
    which = ("every layer's routed experts" if not layers or layers >= n_layers
             else f"the routed experts of {layers} of {n_layers} layers")
    if not layers:
        which = "the routed experts that do not fit on the GPU"
    rest = text.split("; the rest run from system RAM", 1)[-1]
    return (f"Experts in system RAM as set up: {which} there, attention and the rest on the GPU, so {share:.0%} of each "
            f"token's weight bytes are read from the GPU and the rest from system RAM{rest}")


@dataclass(frozen=True)
class Bounds:
    """What physics allows for a machine the catalog could not pin down, from what IS known about it.

    Attributes:
        lo_tps: low end (10th percentile) of the decode prediction on the slowest plausible machine, tok/s.
        hi_tps: decode ceiling of the fastest plausible machine (× the GPU count), tok/s.
        slow, fast: the slowest and fastest plausible catalog machines.
        basis: the words for what was known ("any Apple Silicon Mac with 8 GB").
    """

    lo_tps: float
    hi_tps: float
    slow: Hardware
    fast: Hardware
    basis: str
    slow_pred: Prediction
    fits_any: bool = True  # the model fits the stated memory on at least one of the two machines


@dataclass
class Ctx:
    """Everything the rules and remedies read for one diagnosis."""

    store: Store
    sit: Situation
    pred: Prediction | None
    bounds: Bounds | None = None
    tg: float | None = None  # measured decode tok/s per stream
    pp: float | None = None  # measured prefill tok/s
    tg_raw: float | None = None  # measured decode as reported (an aggregate when the tool summed streams)
    tg_lower_bound: bool = False  # the tool's rate includes prompt time (text-generation-webui)
    single_ceiling: float | None = None  # single-stream decode ceiling when the workload has several users

    @property
    def kv_bpe(self) -> float:
        """Bytes per KV-cache element of the cache type said ("-ctk q8_0"; f16 when none)."""
        return kv_element_bytes(self.sit.symptoms.kv_cache_quant)

    @property
    def kind(self) -> str | None:
        m = self.sit.machine
        return m.kind if m is not None else None

    @property
    def has_gpu(self) -> bool:
        """The machine has a GPU that could run the layers well (Apple Silicon, an APU, a discrete/datacenter
        GPU; not an Intel Mac's GPU)."""
        return self.kind in GPU_KINDS and not self.sit.symptoms.intel_mac

    @property
    def discrete(self) -> bool:
        return self.kind in ("discrete_gpu", "datacenter_gpu")

    @property
    def server_engine(self) -> bool:
        return self.sit.engine in SERVER_ENGINES or bool(self.sit.symptoms.batching and self.sit.symptoms.batching > 1)

    @property
    def expected_tg(self) -> float | None:
        """Expected decode per stream, tok/s (None without a resolved machine)."""
        p = self.pred
        if p is None:
            return None
        return (p.decode_tps_per_seq or p.decode_tps) * self.served_share

    @property
    def served_share(self) -> float:
        """The share of the decode rate a loaded server's output throughput keeps (:func:`advisor.roofline.served_share`)
        for an aggregate measured with a time to first token (a serving benchmark); else 1."""
        p, ms, w = self.pred, self.sit.measured, self.sit.workload
        if p is None or not ms.decode_is_aggregate or not ms.ttft_s or p.concurrency <= 1:
            return 1.0
        return served_share(p.decode_tps, p.prefill_tps, w.prompt_tokens, w.gen_tokens)

    @property
    def ratio_tg(self) -> float | None:
        e = self.expected_tg
        return self.tg / e if (self.tg and e) else None

    @property
    def far_below(self) -> bool:
        """Decode far below what this machine (or the slowest plausible one) reaches with the model in memory."""
        if not self.tg:
            return False
        r = self.ratio_tg
        if r is not None:
            return r < FAR_BELOW and not self.tg_lower_bound
        b = self.bounds
        return bool(b and self.tg < FAR_OUTSIDE * b.lo_tps and not (self.tg_lower_bound and self.tg > 0.2 * b.lo_tps))

    @property
    def looks_aggregate(self) -> bool:
        """The measured decode is above what one stream can reach (the single-stream ceiling or the bounds' top)."""
        if not self.tg_raw:
            return False
        if self.pred is not None:
            top = self.pred.decode_ceiling_tps if self.pred.concurrency <= 1 else self.single_ceiling
        else:
            top = self.bounds.hi_tps if self.bounds else None
        return bool(top and self.tg_raw > 1.15 * top)

    @property
    def cache_hit(self) -> bool:
        """The measured prefill is beyond what the machine can compute: the prompt came from a prompt cache.
        Never for a benchmark tool's own run (llama-bench's pp test, mlx_lm.generate): those read the whole prompt."""
        p = self.pred
        return bool(self.pp and p and p.prefill_ceiling_tps
                    and self.pp > CACHE_HIT * max(p.prefill_ceiling_tps, p.prefill_tps or 0.0)
                    and not self.sit.measured.alone)

    @property
    def fits(self) -> bool | None:
        return self.pred.memory.fits if self.pred is not None else None

    @property
    def n_layers(self) -> int | None:
        return self.sit.model.n_layers if self.sit.model is not None else None

    @property
    def offload_layers(self) -> int | None:
        """Layers an engine offloads: the repeating blocks plus the output layer (llama.cpp's "offloaded N/33")."""
        n = self.n_layers
        return n + 1 if n else None

    @property
    def all_on_gpu(self) -> bool:
        """Every layer is on the GPU by what the person's own output or words show: ``-ngl`` at or above the
        layers an engine offloads (the repeating blocks plus the output layer; 99 when the layer count is not
        known), a tool's 100 % GPU split (``ollama ps``), or "fully offloaded" / "33/33 layers" in the text.
        A fix must never propose what this already shows."""
        s = self.sit.symptoms
        if s.full_offload or (s.gpu_fraction is not None and s.gpu_fraction >= 0.98):
            return True
        ngl, n = s.n_gpu_layers, self.offload_layers
        return ngl is not None and ngl >= (n if n else 99)

    @property
    def expectation(self) -> float | None:
        """The decode figure a far-below verdict is stated against: the prediction, else the physics floor."""
        if self.expected_tg:
            return self.expected_tg
        return self.bounds.lo_tps if self.bounds else None


def _pool(store: Store, kind: str, memory_gb: float | None) -> list[Hardware]:
    """Catalog machines of a kind; for Apple Silicon (where memory sizes define the chips) those that ship
    with the stated memory. GPUs and CPUs are not filtered by memory: many cards are not in the catalog."""
    hws = catalog.all_hardware(store)
    pool = [h for h in hws.values() if h.kind == kind and h.n_devices == 1]
    if kind == "apu":
        pool += [hws[i] for i in _APU_FLOOR_IDS if i in hws]
    if memory_gb and kind == "apple_soc":
        exact = [h for h in pool if memory_gb in (h.memory_gb_options or [])]
        larger = [h for h in pool if max(h.memory_gb_options or [0]) >= memory_gb]
        pool = exact or larger or pool
    elif memory_gb and kind == "cpu":  # a board that never ships with that much RAM (a Pi) is not a candidate
        pool = [h for h in pool if not h.memory_gb_options or max(h.memory_gb_options) >= memory_gb] or pool
    return pool


def _per_device_gb(store: Store, kind: str, stated: float | None, count: int) -> float | None:
    """The stated memory per device: "4x A100 80GB" states one card's, "2x 3090 48GB" the total."""
    if not stated or count <= 1:
        return stated
    shipped = {o for h in catalog.all_hardware(store).values() if h.kind == kind for o in (h.memory_gb_options or [])}
    return stated if stated in shipped or (stated / count) not in shipped else stated / count


def streams_for(store: Store, sit: Situation, rate: float, top: int = 1024) -> int | None:
    """The smallest batch (a power of two) whose predicted aggregate decode reaches ``rate`` tok/s, or None."""
    b = 2
    while b <= top:
        p = predict_for(store, sit, concurrency=b)
        if p is None:
            return None
        if p.decode_tps >= rate:
            return b
        b *= 2
    return None


def stated_total_gb(store: Store, sit: Situation) -> float | None:
    """The whole machine's fast memory as stated, GB ("4x A100 80GB" → 320; "2x 3090 48GB" → 48)."""
    m = sit.machine
    if m is None or not m.memory_stated_gb:
        return None
    per = _per_device_gb(store, m.kind or "", m.memory_stated_gb, m.count)
    return (per or m.memory_stated_gb) * max(1, m.count)


def _candidates(store: Store, sit: Situation) -> list[Hardware]:
    """The catalog entries the name could be, when they are bins of one family of the machine's kind
    (A100 PCIe vs SXM): then they bound the machine more tightly than its kind does."""
    u = sit.unresolved_field("hardware")
    m = sit.machine
    if u is None or not u.candidates or m is None:
        return []
    by_name: dict[str, Hardware] = {}
    for h in catalog.all_hardware(store).values():
        by_name.update({f"{h.name} ({h.id})": h, h.name: h, h.id: h})
    hws = [by_name[c] for c in u.candidates if c in by_name]
    if not hws or len(hws) != len(u.candidates) or len({h.family for h in hws}) != 1:
        return []
    if m.kind is None or any(h.kind != m.kind for h in hws):
        return []
    return hws


def _devices(store: Store, hw: Hardware, count: int) -> Hardware:
    if count <= 1:
        return hw
    try:
        return catalog.get_hardware(store, f"{hw.id}x{count}")
    except AdvisorError:
        return hw


def physics_bounds(store: Store, sit: Situation) -> Bounds | None:
    """Decode bounds for an unresolved machine of a known kind (None when the kind or model is unknown).

    The slowest and fastest catalog machines of that kind (with the stated memory size, when given)
    are predicted with the same code as any machine; the floor is the slow one's 10th-percentile
    decode with the model in memory, the top the fast one's decode ceiling times the GPU count.
    """
    m = sit.machine
    if m is None or m.hardware is not None or m.kind is None or sit.model is None or sit.quant is None:
        return None
    per_device = _per_device_gb(store, m.kind, m.memory_stated_gb, m.count)
    cands = _candidates(store, sit)
    pool = cands or _pool(store, m.kind, per_device)
    if not pool:
        return None
    slow = _devices(store, min(pool, key=lambda h: h.bandwidth_gbs), m.count if cands else 1)
    fast = _devices(store, max(pool, key=lambda h: h.bandwidth_gbs), m.count if cands else 1)
    big = lambda h: max(h.memory_gb_options or [0]) or None  # noqa: E731 - the fit is the best case
    # With the memory stated, the fit decides the placement (a spill is part of the expectation); without it,
    # the best case: the model in memory.
    share = None if per_device else 1.0
    sp = predict_for(store, sit, hardware=slow.model_copy(update={"memory_gb": per_device or big(slow)}),
                     concurrency=1, gpu_share=share)
    fp = predict_for(store, sit, hardware=fast.model_copy(update={"memory_gb": per_device or big(fast)}),
                     concurrency=1, gpu_share=share)
    if sp is None or fp is None:
        return None
    lo = sp.decode_tps_range[0] if sp.decode_tps_range else sp.decode_tps
    words = _KIND_WORDS.get(m.kind, m.kind)
    basis = f"any {words}" + (f" with {per_device:g} GB" if per_device else "")
    if cands:
        basis = "the closest catalog match" + ("es, " if len(cands) > 1 else ", ") + " or ".join(
            (f"{m.count}× " if m.count > 1 else "") + h.name for h in cands)
    fits_any = sp.memory.fits or fp.memory.fits or not per_device
    top = fp.decode_ceiling_tps * (1 if cands else max(1, m.count))
    return Bounds(lo_tps=lo, hi_tps=top, slow=slow, fast=fast, basis=basis,
                  slow_pred=sp, fits_any=fits_any)


def build_ctx(store: Store, sit: Situation) -> Ctx:
    """The context of one diagnosis: expected prediction, bounds when the machine is unresolved, per-stream rates."""
    pred = predict_for(store, sit)
    ms = sit.measured
    pp = ms.prefill_tps
    ttft = ms.ttft_s or sit.facts.measured_ttft_s
    if pp is None and ttft and (ms.prompt_tokens or "prompt_tokens" in sit.workload.stated) and not (
            ms.decode_is_aggregate and sit.workload.users > 1):  # a loaded server's TTFT is mostly queueing
        pp = (ms.prompt_tokens or sit.workload.prompt_tokens) / ttft
    tg_raw = ms.decode_tps
    if tg_raw is None and ms.itl_ms:
        tg_raw = 1000.0 / ms.itl_ms
    tg = tg_raw
    if tg_raw and ms.decode_is_aggregate and ms.streams:
        tg = tg_raw / ms.streams
    elif tg_raw and sit.workload.users > 1 and ms.decode_is_aggregate:
        tg = tg_raw / sit.workload.users
    lower = (ms.decode_includes_prompt or sit.engine == "text-generation-webui"
             or "text-generation-webui" in sit.symptoms.mentions)
    c = Ctx(store=store, sit=sit, pred=pred, tg=tg, pp=pp, tg_raw=tg_raw, tg_lower_bound=lower)
    if pred is None:
        c.bounds = physics_bounds(store, sit)
    elif pred.concurrency > 1:
        one = predict_for(store, sit, concurrency=1)
        c.single_ceiling = one.decode_ceiling_tps if one else None
    return c
