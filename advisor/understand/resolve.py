"""Turn a :class:`Scenario` (names as written) into catalog objects plus stated assumptions.

Part of :mod:`advisor.understand`: the machine's count (``gpu_count``) and mixed boxes ("RTX 3090 + RTX 3060")
are resolved here, one device name at a time, so nothing downstream reads a hardware string. A mixed box becomes
one combined device (:func:`knowledge.catalog.mixed_hardware`: layer split, or tensor parallel for vLLM/SGLang/
TensorRT-LLM); a card named without its version is predicted for its smallest, slowest version unless a measured
rate is to be judged (:func:`resolve_default`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Literal

from advisor.errors import AdvisorError, AmbiguousError, InputError, NotFoundError
from advisor.models import Hardware, ModelSpec, QuantFormat, Scenario
from advisor.understand.engine import classify_engine
from advisor.understand.formats import NOT_AS_IT_IS, format_conflict
from advisor.understand.symptoms import parse_ngl
from knowledge import catalog
from knowledge.catalog._gpus import MAX_DEVICES
from knowledge.cpu_uarch import sku_cores
from knowledge.seed import split_hw_id
from knowledge.store import Store

# GPU generations without BF16 arithmetic (NVIDIA before Ampere: compute capability < 8.0).
NO_BF16_FAMILIES = ("NVIDIA Turing", "NVIDIA Volta", "NVIDIA Pascal", "NVIDIA Maxwell", "NVIDIA Kepler")

__all__ = ["DEFAULTS", "Resolved", "custom_hardware", "measured_anything", "parse_ngl", "resolve_default",
           "resolve_scenario"]

# Workload defaults by use (tokens); every default used is stated in the answer.
DEFAULTS = {
    "chat": (500, 300),
    "coding_agent": (4000, 300),
    "rag": (4000, 300),
    "summarising": (2000, 300),
    "batch": (1000, 300),
    None: (500, 300),
}


@dataclass
class Resolved:
    """A scenario resolved against the catalog. ``problems`` lists what could not be resolved."""

    scenario: Scenario
    hardware: Hardware | None = None
    model: ModelSpec | None = None
    quant: QuantFormat | None = None
    backend: str | None = None
    prompt_tokens: int = 500
    gen_tokens: int = 300
    depth: int = 0
    concurrency: int = 1
    n_gpu_layers: int | None = None
    gpu_fraction: float | None = None
    mixed: list[Hardware] = field(default_factory=list)
    assumptions: list[str] = field(default_factory=list)
    problems: dict[str, str] = field(default_factory=dict)
    candidates: dict[str, list[str]] = field(default_factory=dict)


def _resolve_model_text(store: Store, text: str, params_b: float | None) -> catalog.Match:
    """Resolve a model name; for a long description try its leading part ("X (posted table); ...")."""
    try:
        return catalog.resolve_model(store, text, params_b=params_b)
    except NotFoundError:
        head = re.split(r"[;(\[]| / | or ", text)[0].strip()
        if head and head != text:
            return catalog.resolve_model(store, head, params_b=params_b)
        raise


def _quoted_row(raw: str | None, value: float | None) -> dict[str, Any]:
    """In a pasted markdown table, the row quoting ``value``: its size in GB and its format name."""
    if not raw or value is None:
        return {}
    lines = [ln for ln in raw.splitlines() if ln.strip().startswith("|")]
    if len(lines) < 2:
        return {}
    header = [c.strip().lower() for c in lines[0].strip().strip("|").split("|")]
    token = f"{value:g}"
    for ln in lines[1:]:
        cells = [c.strip() for c in ln.strip().strip("|").split("|")]
        if token not in cells or len(cells) != len(header):
            continue
        out: dict[str, Any] = {}
        for h, c in zip(header, cells, strict=True):
            if re.search(r"\bgi?b\b|size", h) and not re.search(r"/s|x tok", h):
                try:
                    out["size_gb"] = float(re.sub(r"[^\d.]", "", c)) * (1.073741824 if "gib" in (h + c).lower() else 1)
                except ValueError:
                    pass
            if h in ("quant", "quantization", "type", "format") and re.search(r"q\d|f16|bf16|bit", c, re.I):
                out["quant"] = c
        return out
    return {}


def custom_hardware(s: Scenario) -> Hardware | None:
    """Hardware described by numbers (``bandwidth_gbs``, ``tflops``, ``memory_gb``) instead of a name."""
    if not s.bandwidth_gbs:
        return None
    name = s.hardware or "custom hardware"
    text = name.lower()
    kind: Literal["apple_soc", "discrete_gpu", "cpu"] = "cpu"
    if re.search(r"\bmac(?:book|mini|studio|\b)|\bm[1-5]\b|mlx-gpu|apple", text):
        kind = "apple_soc"
    elif re.search(r"gpu|rtx|radeon|nvidia|cuda", text) and "mlx-cpu" not in text:
        kind = "discrete_gpu"
    return Hardware(id="custom", name=name[:80], kind=kind, bandwidth_gbs=s.bandwidth_gbs, fp16_tflops=s.tflops,
                    memory_gb=s.memory_gb, memory_gb_options=[s.memory_gb] if s.memory_gb else [], custom=True,
                    measured=s.hardware_measured,
                    notes="measured by the probe" if s.hardware_measured else "described by the user")


def _cpu_with_bandwidth(store: Store, s: Scenario, res: Resolved) -> Hardware | None:
    """A CPU the catalog knows, given with its RAM's bandwidth ("Threadripper 7980X" and 8-channel DDR5-5200 read
    by the intake as 332.8 GB/s): the catalog entry (cores, family) with the stated bandwidth for all sockets."""
    if not s.hardware or s.hardware_measured or s.tflops or re.search(r"\b(?:lp)?ddr\d", s.hardware, re.I):
        return None
    try:
        m = catalog.resolve_hardware(store, re.sub(r"^dual-socket\s+", "", s.hardware, flags=re.I))
    except (AmbiguousError, NotFoundError):
        return None
    hw = m.value
    if hw.kind not in ("cpu", "apu") or m.confidence < 0.85:
        return None
    n = _sockets(s.hardware)
    name = re.sub(r"\s*\bper[\s-]socket\b", "", hw.name).strip() + (f", {n} sockets together" if n > 1 else "")
    res.assumptions.append(f"The {name} with the memory you stated: {s.bandwidth_gbs:g} GB/s"
                           + (" (both sockets' memory adds up only with --numa distribute)." if n > 1 else "."))
    return hw.model_copy(update={"bandwidth_gbs": s.bandwidth_gbs, "name": name, "n_devices": n,
                                 "memory_gb": s.memory_gb or hw.memory_gb})


def _sockets(text: str) -> int:
    if re.search(r"dual[- ]socket|2[- ]?sockets?|\b2p\b|two sockets", text, re.I):
        return 2
    return 1


def measured_anything(s: Scenario) -> bool:
    """True when the scenario carries a measured rate, TTFT or pasted output (a diagnosis, not a prediction)."""
    return any(v is not None for v in (s.measured_decode_tps, s.measured_prefill_tps, s.measured_ttft_s,
                                       s.raw_output))


def resolve_default(store: Store, text: str, *, memory_gb: float | None = None, gpu_cores: int | None = None,
                    allow_default: bool = True) -> catalog.Match:
    """:func:`knowledge.catalog.resolve_hardware`, except that a name fitting versions of one product ("an A100",
    "one H100") resolves to the smallest and slowest version with the assumption stated, when ``allow_default``
    (no measurement to judge: a measured rate is judged against every version instead), or when the versions are
    about as fast as each other (``VariantsError.close``).

    Raises:
        AmbiguousError, NotFoundError: as the catalog does.
    """
    try:
        return catalog.resolve_hardware(store, text, memory_gb=memory_gb, gpu_cores=gpu_cores)
    except catalog.VariantsError as e:
        if (allow_default or e.close) and e.default is not None:
            return e.default
        raise


def _resolve_one(store: Store, part: str, s: Scenario) -> catalog.Match:
    """One device name; "8x MI300X" that the catalog cannot count resolves as one MI300X (the count is applied
    from ``gpu_count`` or the phrase)."""
    try:
        return resolve_default(store, part, memory_gb=s.memory_gb, gpu_cores=s.gpu_cores,
                               allow_default=not measured_anything(s))
    except NotFoundError as e:
        m = re.match(r"\s*(\d{1,4})\s*[x×]\s*(.+)", part)
        if not m or not 1 <= int(m.group(1)) <= MAX_DEVICES:
            raise e from None  # ("100x RTX 3090": the catalog's own words on the count)
        one = catalog.resolve_hardware(store, m.group(2), memory_gb=s.memory_gb, gpu_cores=s.gpu_cores)
        n = s.gpu_count or int(m.group(1))
        hw = catalog.get_hardware(store, f"{one.value.id}x{n}" if n > 1 else one.value.id, memory_gb=one.value.memory_gb)
        return catalog.Match(hw, one.confidence, one.assumptions)


def _tidy_hardware(store: Store, text: str) -> Any:
    """A machine described in words (a JSON field, a flag) read as the chat reads it, when the catalog
    cannot resolve the text as written: "2x RTX 3090 24GB, PCIe Gen3 x8" → "2x RTX 3090". None if no better."""
    try:
        catalog.resolve_hardware(store, text)
        return None
    except AmbiguousError:
        return None
    except NotFoundError:
        pass
    from advisor.intake import extract

    ext = extract(text[:2000], store)
    return ext if ext.hardware and ext.hardware != text else None


def _names_intel_mac(text: str) -> bool:
    from advisor.understand.symptoms import intel_mac

    return bool(re.search(r"\bintel\b|core\s*i[3579]|\bi[3579]-?\d|xeon", text, re.I)) and intel_mac(text)


def resolve_scenario(store: Store, s: Scenario) -> Resolved:
    """Resolve hardware, model and format names; fill workload defaults with stated assumptions.

    Never raises for unresolvable names: they land in ``problems`` (with ``candidates``) so the
    caller can ask or explain.
    """
    res = Resolved(scenario=s, backend=s.backend)
    # Hardware
    if s.bandwidth_gbs:
        res.hardware = _cpu_with_bandwidth(store, s, res) or custom_hardware(s)
    elif s.hardware:
        text = catalog.card_head(store, s.hardware)  # "RTX 3080 (RTX 3080 Ti (12 GB) preset)": the card named first
        tidy = _tidy_hardware(store, text)
        if tidy is not None:
            text = tidy.hardware or text
            res.assumptions.append(f"Read the machine '{s.hardware[:80]}' as {text}.")
            if s.gpu_count is None and tidy.gpu_count:
                s = s.model_copy(update={"gpu_count": tidy.gpu_count})
                res.scenario = s
        parts = [p.strip() for p in re.split(r"\s+\+\s+", text) if p.strip()]  # "Ryzen AI Max+ 395" is one name
        if s.memory_gb is None and len(parts) == 1:  # a mixed box's sizes belong to its cards ("3060 12GB")
            # "A10G" and "a2-highgpu-1g" name no memory; "64GB RAM" is the host's
            mm = re.search(r"(?<![\w-])(\d{1,4}(?:\.\d+)?)\s*(?:gb|gib|g\b|gigs?)\b(?!\s*/s)"
                           r"(?!\s*(?:of\s+)?(?:system\s+)?(?:ram|(?:lp)?ddr\d?|system\s+memory)\b)", text, re.I)
            if mm and 1 <= float(mm.group(1)) <= 4096:
                s = s.model_copy(update={"memory_gb": float(mm.group(1))})
                res.scenario = s
        try:
            m = _resolve_one(store, parts[0], s) if len(parts) == 1 else _mixed_box(store, parts, s, res)
            hw = m.value
            if len(parts) == 1 and s.gpu_count and s.gpu_count != hw.n_devices and hw.kind in ("discrete_gpu", "datacenter_gpu"):
                if s.gpu_count > MAX_DEVICES:
                    raise NotFoundError(f"{s.gpu_count:,} GPUs in one machine is more than the advisor models "
                                        f"(1–{MAX_DEVICES}); for a cluster, ask about one node (e.g. '8x H100').", [])
                hw = catalog.get_hardware(store, f"{split_hw_id(hw.id)[0]}x{s.gpu_count}" if s.gpu_count > 1
                                          else split_hw_id(hw.id)[0], memory_gb=hw.memory_gb)
            n = _sockets(s.hardware or "")
            if hw.kind == "cpu" and n > 1:
                # The catalog's figure is one socket's ("… per socket"); the bandwidth here is all sockets together.
                one = re.sub(r"\s*\bper[\s-]socket\b", "", hw.name).strip()
                hw = hw.model_copy(update={"n_devices": n, "bandwidth_gbs": hw.bandwidth_gbs * n,
                                           "name": f"{one}, {n} sockets together"})
                res.assumptions.append(f"{n} sockets: memory bandwidth adds up only when the model is spread "
                                       "over both NUMA nodes (--numa distribute).")
            if hw.kind == "apple_soc" and _names_intel_mac(s.hardware or ""):
                # "MacBook Air 2020 Intel Core i5": the name matched an Apple Silicon model of the same year.
                res.problems["hardware"] = (f"'{(s.hardware or '')[:80]}' is an Intel Mac, not the {hw.name}; it is "
                                            "judged as a CPU machine of that kind.")
            else:
                res.hardware = hw
                res.assumptions += m.assumptions
        except AmbiguousError as e:
            res.problems["hardware"] = str(e)
            res.candidates["hardware"] = e.candidates
        except NotFoundError as e:
            res.problems["hardware"] = str(e)
            res.candidates["hardware"] = e.candidates
    if res.hardware is not None and s.cpu_cores and res.hardware.kind in ("cpu", "apu") \
            and str(res.hardware.cpu_cores or "") != str(s.cpu_cores):
        res.hardware = res.hardware.model_copy(update={"cpu_cores": str(s.cpu_cores)})
        res.assumptions.append(f"{s.cpu_cores} CPU cores, as you said.")
    elif res.hardware is not None and not s.cpu_cores and res.hardware.kind in ("cpu", "apu") \
            and (sku := sku_cores(s.hardware)) is not None:
        n = _sockets(s.hardware or "")
        cores = sku[0] * n  # the catalog entry is a family ("16-96 cores"): the model number says how many
        if str(res.hardware.cpu_cores or "") != str(cores):
            res.hardware = res.hardware.model_copy(update={"cpu_cores": str(cores)})
            res.assumptions.append(f"{cores} CPU cores: the {sku[1].upper()}'s {sku[0]}"
                                   + (f" × {n} sockets" if n > 1 else "") + " (vendor spec).")
    if res.hardware is not None and s.memory_gb and res.hardware.memory_gb != s.memory_gb and not res.mixed:
        card = catalog.with_memory(res.hardware, s.memory_gb)  # a card keeps only a memory it can have
        if card.memory_gb == s.memory_gb:
            res.hardware = card
        else:
            res.assumptions.append(f"{s.memory_gb:g} GB is more than any {res.hardware.name} has: read as the "
                                   "computer's RAM, not the card's memory.")
    card_opts = res.hardware.memory_gb_options if res.hardware is not None else []
    if res.hardware is not None and s.memory_gb and card_opts and res.hardware.memory_gb == s.memory_gb \
            and res.hardware.kind in ("discrete_gpu", "datacenter_gpu") and res.hardware.n_devices == 1 \
            and s.memory_gb > max(card_opts) and not res.mixed:
        # "an RTX 3090 with 48GB": a modded card, or two cards' total?
        most, stock = max(card_opts), ", ".join(f"{x:g}" for x in card_opts)
        k = s.memory_gb / most
        res.assumptions.append(
            f"A {res.hardware.name} ships with {stock} GB; using {s.memory_gb:g} GB as you said (modded cards exist)"
            + (f". If it is {k:g} cards' total, say '{k:g}x {res.hardware.name}'." if k.is_integer()
               else " — check it, since memory decides what fits."))
    if res.hardware is not None and s.host_bandwidth_gbs and res.hardware.kind in ("discrete_gpu", "datacenter_gpu"):
        # the RAM stated beside the card (intake's note says how): where weights left off the card are read
        res.hardware = res.hardware.model_copy(update={"host_bandwidth_gbs": s.host_bandwidth_gbs})
    hw_opts = res.hardware.memory_gb_options if res.hardware is not None else []
    if res.hardware is not None and s.memory_gb and hw_opts and s.memory_gb not in hw_opts \
            and res.hardware.kind in ("apple_soc", "apu"):
        res.assumptions.append(
            f"The {res.hardware.name} ships with {', '.join(f'{x:g}' for x in hw_opts)} GB; using the stated "
            f"{s.memory_gb:g} GB — check it, since memory decides what fits.")
    # Model
    row = _quoted_row(s.raw_output, s.measured_decode_tps or s.measured_prefill_tps)
    if s.model or s.params_b or row.get("size_gb"):
        try:
            m = _resolve_model_text(store, s.model or "", s.params_b)
            model = m.value
            if s.params_b and model.generic is False and abs(model.params_b - s.params_b) / s.params_b > 0.3:
                model = catalog.generic_model(store, s.model or "model", s.params_b, s.active_params_b)
                res.assumptions.append(f"Sized from the stated {s.params_b:g}B parameters.")
            elif model.generic and s.active_params_b and s.active_params_b < model.params_b:
                model = catalog.generic_model(store, s.model or "model", model.params_b, s.active_params_b)
                res.assumptions.append(f"A mixture of experts: {model.params_b:g}B parameters, "
                                       f"{s.active_params_b:g}B read per token (as stated).")
            res.model = model
            res.assumptions += m.assumptions
        except NotFoundError as e:
            res.problems["model"] = str(e)
            res.candidates["model"] = e.candidates
    if res.model is None and row.get("size_gb"):
        q_row = row.get("quant")
        try:
            qv = catalog.resolve_quant(store, q_row).value if q_row else catalog.all_quants(store)["Q4_K_M"]
            params = row["size_gb"] * 8 / qv.bits_per_weight
            res.model = catalog.generic_model(store, s.model or "model", params)
            res.problems.pop("model", None)
            res.assumptions.append(f"Model size taken from the quoted file size {row['size_gb']:g} GB at "
                                   f"{qv.name} (≈ {params:.2f}B parameters).")
        except AdvisorError:
            pass
    # Engine: none stated and a team on a datacenter GPU → vLLM (the one rule, perf.prediction.assumed_engine), so
    # the format default, the fixes and the prediction all assume the same engine
    if not s.backend and res.hardware is not None:
        from advisor.perf.prediction import assumed_engine

        res.backend, why = assumed_engine(res.hardware, s.concurrency or 1, quant=s.quant,
                                          requests_per_minute=(s.requests_per_minute or 0) * (s.concurrency or 1) or None)
        if why:
            res.assumptions.append(why)
    # Format
    if row.get("quant") and (not s.quant or re.search(r"\bto\b|sweep|various|,", s.quant)):
        s = s.model_copy(update={"quant": row["quant"]})
        res.scenario = s
    quant_text = s.quant
    if quant_text and re.search(r"not stated|default|unknown|\?", quant_text, re.I) and not re.search(
        r"q\d|\d-?bit|f16|bf16|fp16", quant_text, re.I
    ):
        quant_text = None
    try:
        if quant_text:
            q = catalog.resolve_quant(store, quant_text, backend=res.backend)
            res.quant = q.value
            res.assumptions += q.assumptions
        else:
            from advisor.intake._dialog import default_quant

            name, why = default_quant(res.backend, res.model.id if res.model is not None else s.model)
            fam = res.hardware.family if res.hardware is not None else ""
            if name == "BF16" and any(g in (fam or "") for g in NO_BF16_FAMILIES):
                # no BF16 before Ampere: vLLM/SGLang load a BF16 checkpoint as FP16 there (same size, same speed)
                name, why = "FP16", f"the checkpoint's 16-bit weights as FP16: {fam} GPUs have no BF16, so vLLM casts them"
            res.quant = catalog.resolve_quant(store, name).value
            from advisor import roofline
            from advisor.perf.moe import weights_bpw

            if (res.hardware is not None and res.hardware.kind in ("discrete_gpu", "datacenter_gpu") and res.model is not None
                    and res.quant.bits_per_weight >= 8
                    and classify_engine(res.backend)[0] in ("vllm", "sglang", "tensorrt-llm")
                    and not roofline.memory_fit(res.hardware, res.model, weights_bpw(res.model, res.quant),
                                                context_tokens=4096).fits):
                from advisor.understand.formats import serving_builds

                for build in serving_builds(res.hardware.family):  # FP8 where its tensor cores multiply it, then AWQ
                    q = catalog.resolve_quant(store, build).value
                    if roofline.memory_fit(res.hardware, res.model, weights_bpw(res.model, q), context_tokens=4096).fits:
                        # the checkpoint's own weights do not fit the card: a serving engine runs a smaller build there
                        res.quant, why = q, (f"the checkpoint's {name} weights do not fit the {res.hardware.name}, so "
                                             f"the {q.name.split(' (')[0]} build people serve on such cards")
                        break
            res.assumptions.append(f"Weight format not stated: assumed {res.quant.name} "
                                   f"({res.quant.bits_per_weight:g} bits per weight), {why}.")
    except NotFoundError as e:
        res.problems["quant"] = str(e)
        res.candidates["quant"] = e.candidates
        res.quant = catalog.all_quants(store)["Q4_K_M"]
        res.assumptions.append(f"Weight format {quant_text!r} not recognised: sized as Q4_K_M instead.")
    if res.quant is not None and res.backend and (clash := format_conflict(
            store, res.quant, "mlx" if "mlx" in res.backend.lower() else classify_engine(res.backend)[0])) is not None:
        res.quant = clash[0]  # "4.0bpw exl2 in llama.cpp": the engine's own build of that size
        res.assumptions.append(NOT_AS_IT_IS + clash[1])
    # Workload
    use = s.use if s.use in DEFAULTS else None
    d_prompt, d_gen = DEFAULTS[use]
    if s.prompt_tokens is None:
        res.assumptions.append(f"Prompt length not stated: assumed {d_prompt:,} tokens" + (f" (typical for {use.replace('_', ' ')})." if use else "."))
    if s.gen_tokens is None:
        res.assumptions.append(f"Answer length not stated: assumed {d_gen} tokens (about {int(d_gen * 0.75)} words).")
    if s.prompt_tokens is None and s.shared_prefix_tokens:
        d_prompt = s.shared_prefix_tokens + d_prompt
        res.assumptions[-1] = (f"Prompt length not stated: assumed the shared {s.shared_prefix_tokens:,} tokens plus "
                               f"{d_prompt - s.shared_prefix_tokens:,} per request = {d_prompt:,} tokens.")
    res.prompt_tokens = s.prompt_tokens if s.prompt_tokens is not None else d_prompt
    res.gen_tokens = s.gen_tokens if s.gen_tokens is not None else d_gen
    res.depth = s.depth or 0
    limit = res.model.max_context if res.model is not None else None
    if res.model is not None and limit and res.depth and res.depth + res.prompt_tokens + res.gen_tokens > limit:
        # a conversation longer than the model's context window: the app cuts (or shifts) it to the window
        kept = max(0, limit - res.prompt_tokens - res.gen_tokens)
        res.assumptions.append(f"{res.depth + res.prompt_tokens:,} tokens of conversation is more than "
                               f"{res.model.id.split('/')[-1]} holds ({limit:,}-token context): the app keeps only the "
                               f"last part, so the figures are for {kept:,} tokens already in the context.")
        res.depth = kept
    res.concurrency = s.concurrency or 1
    res.n_gpu_layers = s.n_gpu_layers
    res.gpu_fraction = s.gpu_fraction
    _assume_memory(res)
    if res.n_gpu_layers is None:
        res.n_gpu_layers = parse_ngl(s.backend) or parse_ngl(s.raw_output, s.measured_decode_tps)
    return res


def _assume_memory(res: Resolved) -> None:
    """A machine sold in several memory sizes, its size not stated: the smallest that holds the model at this
    context and number of users (weights + KV cache + overhead, :func:`advisor.roofline.memory_fit`), else the
    largest; without a model, the smallest. Said in the assumptions. Speed does not depend on the size chosen
    (one catalog entry, one bandwidth); what fits does, and a measured run shows the model fitted."""
    hw = res.hardware
    if hw is None or hw.memory_gb is not None or not hw.memory_gb_options:
        return
    from advisor import roofline
    from advisor.perf.moe import weights_bpw

    opts = sorted(hw.memory_gb_options)
    listed = ", ".join(f"{x:g}" for x in opts)
    mem, why = opts[0], f"the smallest {hw.name}"
    if res.model is not None and res.quant is not None and len(opts) > 1:
        ctx = res.depth + res.prompt_tokens + res.gen_tokens
        holds = [x for x in opts if roofline.memory_fit(hw, res.model, weights_bpw(res.model, res.quant), context_tokens=ctx,
                                                        concurrency=res.concurrency, memory_gb=x).fits]
        # what has to fit: the weights alone, or with the KV cache of this context and these users
        weights_fit = roofline.memory_fit(hw, res.model, weights_bpw(res.model, res.quant), context_tokens=1,
                                          memory_gb=opts[0] if holds else opts[-1]).fits
        users = f" × {res.concurrency} users" if res.concurrency > 1 else ""
        what = f"this model with its KV cache ({ctx:,} tokens{users})" if weights_fit else "this model"
        if not holds:
            mem, why = opts[-1], f"the largest {hw.name}, and even that cannot hold {what}"
        elif holds[0] != opts[0]:
            smaller = [f"{x:g}" for x in opts if x < holds[0]]
            mem, why = holds[0], (f"the smallest {hw.name} that holds {what}; the {' and '.join(smaller)} GB "
                                  f"version{'s' if len(smaller) > 1 else ''} cannot")
    res.hardware = hw.model_copy(update={"memory_gb": mem})
    res.assumptions.append(f"Memory not stated: assumed {mem:g} GB, {why} (options: {listed} GB).")


def _host_cpu(got: list[catalog.Match], res: Resolved) -> Hardware | None:
    """The host CPU named next to the card(s) ("RTX 4070 + Ryzen 5 5600X"), said in the assumptions; None
    when every part is a card or no part is."""
    cpus = [g.value for g in got if g.value.kind == "cpu"]
    if not cpus or not any(g.value.kind in catalog.GPU_KINDS for g in got):
        return None
    host = cpus[0]
    res.assumptions.append(catalog.host_cpu_note(host))
    return host


def _mixed_box(store: Store, parts: list[str], s: Scenario, res: Resolved) -> catalog.Match:
    """A mixed box ("RTX 3090 + RTX 3060 12GB"): each card resolved with its own memory, combined by
    :func:`knowledge.catalog.mixed_hardware` for the layout the engine uses (layer split; tensor parallel for
    vLLM/SGLang/TensorRT-LLM or ``-tp``). A card that does not resolve is stated and left out, not guessed.
    Sets ``res.mixed`` to the cards."""
    from advisor.understand.engine import classify_engine

    got: list[catalog.Match] = []
    for p in parts:
        try:
            got.append(resolve_default(store, p, allow_default=not measured_anything(s)))
        except (AmbiguousError, NotFoundError) as e:
            res.assumptions.append(f"Could not tell which device '{p}' is ({e}); left out of the machine.")
    if not got:
        raise NotFoundError(f"None of the cards in '{' + '.join(parts)[:120]}' is in the catalog.", [])
    host = _host_cpu(got, res)
    got = [g for g in got if g.value.kind in catalog.GPU_KINDS] or got
    notes = [a for g in got for a in g.assumptions]
    hws = [g.value for g in got]
    if host is not None and len(hws) == 1:  # "Arc A770 + Core i5-12600KF": the card, with that CPU as its host
        return catalog.Match(hws[0].model_copy(update={"host_bandwidth_gbs": hws[0].host_bandwidth_gbs
                                                       or host.bandwidth_gbs}), got[0].confidence, notes)
    res.mixed = hws if len(hws) > 1 else []
    if len(hws) == 1 or len({(split_hw_id(h.id)[0], h.memory_gb) for h in hws}) == 1:  # "3090 + 3090": two of one
        n = sum(h.n_devices for h in hws)
        one = catalog.get_hardware(store, split_hw_id(hws[0].id)[0], memory_gb=hws[0].memory_gb)
        return catalog.Match(catalog.get_hardware(store, f"{one.id}x{n}", memory_gb=one.memory_gb) if n > 1 else one,
                             got[0].confidence, notes)
    engine = classify_engine(s.backend)[0] if s.backend else None
    tp = (s.tensor_parallel or 0) > 1 or engine in ("vllm", "sglang", "tensorrt-llm")
    box = catalog.mixed_hardware(hws, "tensor_parallel" if tp else "layer_split")
    return catalog.Match(box, min(g.confidence for g in got), [*notes, f"Mixed GPUs ({box.name}): {box.notes}."])


def require(res: Resolved) -> tuple[Hardware, ModelSpec, QuantFormat]:
    """Hardware, model and format, or an InputError that says what is missing and why."""
    if res.hardware is None:
        raise InputError(res.problems.get("hardware") or "Which hardware? Give a name (e.g. 'M2 Max 38-core', "
                         "'RTX 4090') or its memory bandwidth with --bandwidth-gbs.")
    if res.model is None:
        raise InputError(res.problems.get("model") or "Which model? Give a name (e.g. 'llama 3.1 8b') or its "
                         "size with --params-b.")
    if "quant" in res.problems:
        raise InputError(res.problems["quant"])
    assert res.quant is not None
    return res.hardware, res.model, res.quant
