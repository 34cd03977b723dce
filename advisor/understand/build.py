"""Resolved scenario → :class:`Situation`: machine layout, workload, measurements, candidates, what is open.

The only step between a Scenario (the wire format of facts) and what perf, diagnose, compare and
rendering read. Every value filled in is either stated or listed in ``Situation.assumptions``; every
value still needed is in ``Situation.unresolved`` (blocking first), which is what the dialog asks about.
"""

from __future__ import annotations

import re

from advisor.errors import AmbiguousError, NotFoundError
from advisor.models import Hardware, ModelSpec, Scenario
from advisor.understand.engine import classify_engine
from advisor.understand.resolve import Resolved, resolve_default
from advisor.understand.situation import Assumption, Machine, Measured, Situation, Unresolved, Workload
from advisor.understand.symptoms import guess_kind, kv_cache_said, read_machine_facts, read_symptoms
from knowledge import catalog
from knowledge.store import Store

__all__ = ["THIS_MACHINE", "is_this_machine", "situation_from_resolved"]

THIS_MACHINE = ("this machine", "this computer", "my machine", "this mac", "this pc")
_THIS_MACHINE_RE = re.compile(r"\bthis (?:machine|computer|mac|pc|box|server)\b|\bmy (?:machine|computer)\b", re.I)
_FIELD_OF = {"prompt": "prompt_tokens", "answer": "gen_tokens", "memory": "memory_gb", "weight format": "quant",
             "model": "model", "hardware": "hardware", "engine": "engine", "gpus": "hardware", "mixed": "hardware",
             "time to first": "prefill_tps"}
_ASK_ORDER = ("hardware", "memory_gb", "model")


def is_this_machine(text: str | None) -> bool:
    """True when the words mean the computer running the advisor ("this machine", "my computer")."""
    return bool(text and _THIS_MACHINE_RE.search(text))


def _assumption_field(text: str) -> str:
    low = text.lower()
    return next((f for key, f in _FIELD_OF.items() if low.startswith(key)), "other")


def _interconnect(s: Scenario) -> tuple[str | None, int | None]:
    """("pcie4", 8) from "pcie4 x8"; ("nvlink", None)."""
    if not s.interconnect:
        return None, None
    link = s.interconnect.strip().lower()
    m = re.search(r"\bx\s?(16|8|4|1)\b", link)
    base = re.sub(r"\s*x\s?(16|8|4|1)\b", "", link).strip() or "pcie"
    return base, int(m.group(1)) if m else None


def _layout_from_text(s: Scenario) -> Scenario:
    """Interconnect / tensor parallelism written inside a JSON or flag name ("2x 3090, PCIe Gen3", "vllm -tp 2")."""
    if (s.interconnect and s.tensor_parallel) or not (s.hardware or s.backend):
        return s
    from advisor.intake._extract import layout_facts

    found = layout_facts(" ".join(filter(None, [s.hardware, s.backend])))
    upd = {k: v for k, v in found.items() if getattr(s, k) is None and v is not None}
    return s.model_copy(update=upd) if upd else s


def _machine(res: Resolved, s: Scenario) -> Machine | None:
    hw = res.hardware
    if hw is None and not s.hardware and not s.hardware_kind:
        return None
    s = _layout_from_text(s)
    # What a pasted log or a long description says about the machine (diagnose's reader), where facts are silent.
    seen = read_machine_facts(" ".join(filter(None, [s.hardware, s.backend, s.raw_output, s.interconnect])))
    kind = hw.kind if hw is not None else (s.hardware_kind or guess_kind(s.hardware))
    count = s.gpu_count or (hw.n_devices if hw is not None else
                            (int(seen.get("count", 1)) if kind not in (None, "cpu", "apple_soc") else 1))  # type: ignore[call-overload]
    if res.mixed and hw is not None:
        count = hw.n_devices  # a mixed box: every card, counted once
    link, lanes = _interconnect(s)
    link = link or seen.get("interconnect")  # type: ignore[assignment]
    lanes = lanes or seen.get("pcie_lanes")  # type: ignore[assignment]
    tp = s.tensor_parallel or seen.get("tensor_parallel")
    layout = seen.get("layout")
    if tp and tp > 1:  # type: ignore[operator]
        layout = "tensor_parallel"
    elif layout is None and count > 1:
        layout = "layer_split"
    elif layout is None and hw is not None:
        layout = "single"
    opts = hw.memory_gb_options if hw is not None else []
    return Machine(
        text=s.hardware, hardware=hw, kind=kind, count=count,  # type: ignore[arg-type]
        mixed=res.mixed, interconnect=link, pcie_lanes=lanes, layout=layout, tensor_parallel=tp,  # type: ignore[arg-type]
        vram_carveout_gb=seen.get("vram_carveout_gb"),  # type: ignore[arg-type]
        memory_stated_gb=s.memory_gb,
        memory_shipped=(s.memory_gb in opts) if (s.memory_gb and opts) else None,
        system_ram_gb=s.system_ram_gb, measured=bool(hw is not None and hw.measured),
        this_machine=bool(s.hardware and s.hardware.lower().startswith(THIS_MACHINE)),
    )


def _candidates(store: Store, s: Scenario, unresolved: list[Unresolved]) -> tuple[list[Machine], list[ModelSpec]]:
    machines: list[Machine] = []
    for name in (s.compare_hardware or [])[:8]:
        if s.hardware and name.strip().lower() == s.hardware.strip().lower():
            continue
        try:
            hw = resolve_default(store, name).value
            machines.append(Machine(text=name, hardware=hw, kind=hw.kind, count=hw.n_devices))
        except (AmbiguousError, NotFoundError) as e:
            machines.append(Machine(text=name))
            unresolved.append(Unresolved(field="compare_hardware", reason=str(e), candidates=e.candidates[:6],
                                         blocking=False))
    models: list[ModelSpec] = []
    for name in (s.compare_models or [])[:8]:
        try:
            models.append(catalog.resolve_model(store, name).value)
        except NotFoundError as e:
            unresolved.append(Unresolved(field="compare_models", reason=str(e), candidates=e.candidates[:6],
                                         blocking=False))
    return machines, models


def _unresolved(res: Resolved, s: Scenario) -> list[Unresolved]:
    out = [Unresolved(field=f, reason=why, candidates=res.candidates.get(f, []), blocking=f in ("hardware", "model"))
           for f, why in res.problems.items()]
    fields = {u.field for u in out}
    if res.hardware is None and "hardware" not in fields:
        kind = {"apple_soc": "Which Mac (chip and memory)?", "discrete_gpu": "Which GPU?",
                "datacenter_gpu": "Which GPU?", "cpu": "Which RAM (e.g. DDR5-5600 dual channel)?"}
        out.append(Unresolved(field="hardware", reason=kind.get(s.hardware_kind or "", "Which machine?")))
    hw = res.hardware
    if hw is not None and s.memory_gb is None and not s.bandwidth_gbs and len(hw.memory_gb_options) > 1:
        out.append(Unresolved(field="memory_gb", reason=f"The {hw.name} ships with several memory sizes.",
                              candidates=[f"{x:g} GB" for x in hw.memory_gb_options], blocking=False))
    if res.model is None and "model" not in fields:
        out.append(Unresolved(field="model", reason="Which model?"))
    order = {f: i for i, f in enumerate(_ASK_ORDER)}
    return sorted(out, key=lambda u: (order.get(u.field, 9), not u.blocking))


def situation_from_resolved(res: Resolved, *, question: str | None = None, remote: bool = False,
                            store: Store | None = None) -> Situation:
    """A Situation from an already resolved scenario (see :func:`advisor.understand.understand`).

    ``store`` resolves the candidates to compare; without it they are left out.
    """
    s = res.scenario
    text = " ".join(filter(None, [question or s.question, s.backend, s.hardware, s.raw_output, s.quant, s.use]))
    engine: str | None = None
    if res.backend:  # as stated, or the engine assumed for a team on a datacenter GPU (resolve_scenario)
        engine = classify_engine(res.backend)[0]
        if engine == "other":
            engine = None
    stated = frozenset(f for f in ("prompt_tokens", "gen_tokens", "depth", "concurrency", "shared_prefix_tokens",
                                   "requests_per_minute", "use", "context_window") if getattr(s, f) is not None)
    workload = Workload(
        prompt_tokens=res.prompt_tokens, prompt_range=s.prompt_range, shared_prefix_tokens=s.shared_prefix_tokens or 0,
        depth=res.depth, gen_tokens=res.gen_tokens, users=res.concurrency, requests_per_minute=s.requests_per_minute,
        use=s.use, context_window=s.context_window, ttft_target_s=s.target_ttft_s,
        decode_target_tps=s.target_decode_tps, stated=stated,
    )
    assumptions = [Assumption(field=_assumption_field(a), text=a) for a in res.assumptions]
    prefill = s.measured_prefill_tps
    if prefill is None and s.measured_ttft_s and s.prompt_tokens and not s.measured_is_aggregate:
        # (a loaded server's TTFT is mostly queueing behind other requests: not a prefill rate)
        prefill = round(s.prompt_tokens / s.measured_ttft_s, 3)
        assumptions.append(Assumption(field="prefill_tps", text=(
            f"Time to first token {s.measured_ttft_s:g} s for a {s.prompt_tokens:,}-token prompt ≈ {prefill:g} tok/s "
            "prefill (includes any model load and queueing).")))
    aggregate = bool(s.measured_is_aggregate)
    measured = Measured(
        prefill_tps=prefill, decode_tps=s.measured_decode_tps, ttft_s=s.measured_ttft_s, itl_ms=s.measured_tpot_ms,
        decode_is_aggregate=aggregate, streams=((s.measured_streams or s.concurrency) if aggregate else None),
        alone=not aggregate and s.measured_streams == 1,
        prompt_tokens=s.prompt_tokens if prefill is not None else None,
        source="paste" if s.raw_output else ("chat" if (s.measured_decode_tps or prefill or s.measured_ttft_s) else None),
    )
    symptoms = read_symptoms(text, n_gpu_layers=res.n_gpu_layers, gpu_fraction=res.gpu_fraction,
                             near=s.measured_decode_tps)
    if s.kv_cache_full and not symptoms.kv_cache_full:  # a pasted engine log said so (advisor.importers.vllm_log)
        symptoms = symptoms.model_copy(update={"kv_cache_full": True})
    if symptoms.cpu_moe_layers is None and s.cpu_moe_layers:  # said in an earlier turn ("--n-cpu-moe 30")
        symptoms = symptoms.model_copy(update={"experts_on_cpu": True, "cpu_moe_layers": s.cpu_moe_layers})
    if (symptoms.kv_cache_quant is None and not symptoms.kv_quant_asked and s.kv_cache_type
            and s.kv_cache_type != "f16" and kv_cache_said(text)[0] != "f16"):  # said in an earlier turn ("-ctk q4_0")
        symptoms = symptoms.model_copy(update={"kv_cache_quant": s.kv_cache_type})
    unresolved = _unresolved(res, s)
    machines, models = _candidates(store, s, unresolved) if store is not None else ([], [])
    return Situation(
        facts=s, machine=_machine(res, s), model=res.model, quant=res.quant, engine=engine,  # type: ignore[arg-type]
        engine_text=res.backend, workload=workload, measured=measured, symptoms=symptoms,
        compare_hardware=machines, compare_models=models, assumptions=assumptions, unresolved=unresolved,
        question=question or s.question, remote=remote, audience=_audience(s, measured),
    )


def _audience(s: Scenario, measured: Measured) -> str:
    """"diagnose" (numbers measured or pasted), "team" (several users or machines to choose), else "household"."""
    if measured.any or s.raw_output:
        return "diagnose"
    if (s.concurrency or 1) > 1 or s.requests_per_minute or s.compare_hardware:
        return "team"
    return "household"


def hardware_ids(machines: list[Machine]) -> list[str]:
    """Catalog ids of the resolved machines, in order (for compare requests)."""
    return [m.hardware.id for m in machines if isinstance(m.hardware, Hardware)]
