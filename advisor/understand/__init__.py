"""Understanding: the only code that reads human or tool text. Its output is a :class:`Situation`.

Flow (DESIGN.md, Architecture)::

    chat text ─► advisor.intake (facts: Scenario) ─┐
    CLI flags / JSON / compare form ─► Scenario ───┼─► understand(store, scenario) ─► Situation
    pasted output ─► advisor.importers ────────────┘

Everything downstream (perf, diagnose, compare, rendering) takes the Situation.

>>> from knowledge.store import Store
>>> from advisor.models import Scenario
>>> sit = understand(Store(":memory:"), Scenario(hardware="RTX 4090", model="llama 3.1 8b", quant="Q4_K_M",
...                                             backend="llama.cpp -ngl 20"))
>>> sit.hardware.id, sit.engine, sit.symptoms.n_gpu_layers
('nvidia-rtx-4090', 'llama.cpp', 20)
"""

from __future__ import annotations

from advisor.models import Scenario
from advisor.resolve import Resolved, resolve_scenario
from advisor.understand.engine import classify_engine
from advisor.understand.situation import (
    ENGINES,
    Assumption,
    Engine,
    Layout,
    Machine,
    Measured,
    Situation,
    Symptoms,
    Unresolved,
    Workload,
)
from advisor.understand.symptoms import guess_kind, parse_ngl, read_machine_facts, read_symptoms
from knowledge.store import Store

__all__ = [
    "ENGINES",
    "Assumption",
    "Engine",
    "Layout",
    "Machine",
    "Measured",
    "Situation",
    "Symptoms",
    "Unresolved",
    "Workload",
    "classify_engine",
    "parse_ngl",
    "read_symptoms",
    "situation_from_resolved",
    "understand",
]

_FIELD_OF = {"prompt": "prompt_tokens", "answer": "gen_tokens", "memory": "memory_gb", "weight format": "quant",
             "model": "model", "hardware": "hardware", "engine": "engine", "gpus": "hardware"}


def _assumption_field(text: str) -> str:
    low = text.lower()
    for key, field in _FIELD_OF.items():
        if low.startswith(key):
            return field
    return "other"


def situation_from_resolved(res: Resolved, *, question: str | None = None, remote: bool = False) -> Situation:
    """A Situation from an already resolved scenario (see :func:`understand`)."""
    s = res.scenario
    text = " ".join(filter(None, [question or s.question, s.backend, s.hardware, s.raw_output, s.quant, s.use]))
    engine: str | None = None
    if s.backend:
        engine = classify_engine(s.backend)[0]
        if engine == "other":
            engine = None
    hw = res.hardware
    machine = None
    if hw is not None or s.hardware:
        facts = read_machine_facts(" ".join(filter(None, [s.hardware, s.backend, s.raw_output, s.interconnect])))
        kind = hw.kind if hw is not None else guess_kind(s.hardware)
        count = s.gpu_count or (int(facts.get("count", 1)) if kind not in (None, "cpu", "apple_soc") else 1)  # type: ignore[call-overload]
        machine = Machine(
            text=s.hardware, hardware=hw, kind=kind,  # type: ignore[arg-type]
            count=hw.n_devices if hw is not None else count,
            interconnect=facts.get("interconnect"), pcie_lanes=facts.get("pcie_lanes"),  # type: ignore[arg-type]
            layout=facts.get("layout"), tensor_parallel=facts.get("tensor_parallel"),  # type: ignore[arg-type]
            vram_carveout_gb=facts.get("vram_carveout_gb"), system_ram_gb=s.system_ram_gb,  # type: ignore[arg-type]
            memory_stated_gb=s.memory_gb,
            memory_shipped=(s.memory_gb in hw.memory_gb_options) if (hw is not None and s.memory_gb
                                                                     and hw.memory_gb_options) else None,
            measured=bool(hw is not None and hw.measured),
            this_machine=bool(s.hardware and s.hardware.lower().startswith("this machine")),
        )
    stated = frozenset(f for f in ("prompt_tokens", "gen_tokens", "depth", "concurrency", "shared_prefix_tokens",
                                   "requests_per_minute", "use") if getattr(s, f) is not None)
    workload = Workload(
        prompt_tokens=res.prompt_tokens, shared_prefix_tokens=s.shared_prefix_tokens or 0, depth=res.depth,
        gen_tokens=res.gen_tokens, users=res.concurrency, requests_per_minute=s.requests_per_minute, use=s.use,
        stated=stated,
    )
    measured = Measured(
        prefill_tps=s.measured_prefill_tps, decode_tps=s.measured_decode_tps,
        source="paste" if s.raw_output else ("chat" if (s.measured_decode_tps or s.measured_prefill_tps) else None),
    )
    symptoms = read_symptoms(text, n_gpu_layers=res.n_gpu_layers, gpu_fraction=res.gpu_fraction,
                             near=s.measured_decode_tps)
    unresolved = [Unresolved(field=f, reason=why, candidates=res.candidates.get(f, []),
                             blocking=f in ("hardware", "model"))
                  for f, why in res.problems.items()]
    assumptions = [Assumption(field=_assumption_field(a), text=a) for a in res.assumptions]
    return Situation(
        facts=s, machine=machine, model=res.model, quant=res.quant, engine=engine,  # type: ignore[arg-type]
        engine_text=s.backend, workload=workload, measured=measured, symptoms=symptoms, assumptions=assumptions,
        unresolved=unresolved, question=question or s.question, remote=remote,
    )


def understand(store: Store, scenario: Scenario, *, question: str | None = None, remote: bool = False) -> Situation:
    """Resolve a Scenario (names as written) into a Situation: catalog objects, defaults, symptoms.

    Never raises for unresolvable names: they land in ``Situation.unresolved`` with candidates.

    Args:
        store: the knowledge store (catalog look-ups).
        scenario: the facts as stated (chat intake, CLI flags, JSON input, merged paste).
        question: the person's words, for symptoms and rendering.
        remote: the person is a remote visitor of a shared server.
    """
    return situation_from_resolved(resolve_scenario(store, scenario), question=question, remote=remote)
