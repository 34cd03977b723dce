"""Understanding: the only code that reads human or tool text. Its output is a :class:`Situation`.

Flow (DESIGN.md, Architecture)::

    chat text ─► advisor.intake (facts: Scenario) ─┐   (intake: the chat-text reader of this package)
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

from advisor.models import Scenario, parse_scenario
from advisor.understand.build import THIS_MACHINE, is_this_machine, situation_from_resolved
from advisor.understand.engine import classify_engine
from advisor.understand.resolve import Resolved, require, resolve_scenario
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
from advisor.understand.symptoms import parse_ngl, read_symptoms
from knowledge.store import Store

__all__ = [
    "THIS_MACHINE",
    "Resolved",
    "is_this_machine",
    "parse_scenario",
    "require",
    "resolve_scenario",
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

def understand(store: Store, scenario: Scenario, *, question: str | None = None, remote: bool = False) -> Situation:
    """Resolve a Scenario (names as written) into a Situation: catalog objects, defaults, symptoms.

    Never raises for unresolvable names: they land in ``Situation.unresolved`` with candidates.

    Args:
        store: the knowledge store (catalog look-ups).
        scenario: the facts as stated (chat intake, CLI flags, JSON input, merged paste).
        question: the person's words, for symptoms and rendering.
        remote: the person is a remote visitor of a shared server.
    """
    return situation_from_resolved(resolve_scenario(store, scenario), question=question, remote=remote, store=store)
