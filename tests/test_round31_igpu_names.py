"""Bare iGPU names as people write them ("my 780m", "the 890M", "an 8060S", "140V") name the machine, in a
first message and in a follow-up that switches machines; model sizes in millions stay model sizes."""

from __future__ import annotations

import pytest

from advisor.intake._dialog import update
from advisor.intake._extract import extract
from knowledge import catalog
from knowledge.store import Store


@pytest.fixture(scope="module")
def store() -> Store:
    return Store(":memory:")


@pytest.mark.parametrize("text, hw_id", [
    ("my ryzen laptop with a 780m runs ollama qwen2.5 7b q4_k_m at 9 tok/s, is that normal?", "amd-radeon-780m-igpu"),
    ("my laptop with a 780m runs qwen2.5 7b at 9 tok/s", "amd-radeon-780m-igpu"),
    ("on my 780M laptop llama 3.1 8b runs at 9 tok/s", "amd-radeon-780m-igpu"),
    ("the 890M gets 12 tok/s on llama 3.1 8b", "amd-radeon-890m-igpu"),
    ("my 880m with 32gb ram, can it run qwen3 8b?", "amd-radeon-880m-igpu"),
    ("a mini PC with an 8060S and 128 GB", "amd-ryzen-ai-max-plus-395"),
    ("Lunar Lake 140V, 32GB, llama 3.1 8b", "intel-arc-140v-igpu"),
    ("radeon 760m, 16 GB, what can I run?", None),  # resolves to the catalog's 760M entry when it has one
])
def test_bare_igpu_name_names_the_machine(store: Store, text: str, hw_id: str | None) -> None:
    ext = extract(text, store)
    assert ext.hardware, text
    got = catalog.resolve_hardware(store, ext.hardware).value.id
    if hw_id:
        assert got == hw_id
    else:
        assert "760m" in got


@pytest.mark.parametrize("text, model_word", [
    ("gemma-3-270m on my M2", "gemma-3-270m"),
    ("I run a 780M-parameter model on an RTX 3060", None),
    ("smollm2-360m on an RTX 3060", "smollm2-360m"),
    ("it read 780m tokens so far with llama 3.1 8b", "llama 3.1 8b"),
    ("a 780M-token dataset, qwen3 8b", "qwen3 8b"),
])
def test_model_sizes_in_millions_are_not_igpus(store: Store, text: str, model_word: str | None) -> None:
    ext = extract(text, store)
    hw = catalog.resolve_hardware(store, ext.hardware).value.id if ext.hardware else ""
    assert "igpu" not in hw, (text, ext.hardware)
    if model_word:
        assert ext.model and model_word in ext.model.lower()


def test_follow_up_naming_an_igpu_switches_the_machine(store: Store) -> None:
    first = update(None, "I have a MacBook Air M2 with 16 GB. Can I run Llama 3.1 8B at 4-bit for chat?", store)
    assert "m2" in (first.facts.hardware or "").lower()
    after = update(first.facts, "my ryzen laptop with a 780m runs ollama qwen2.5 7b q4_k_m at 9 tok/s, is that normal?",
                   store)
    assert catalog.resolve_hardware(store, after.facts.hardware).value.id == "amd-radeon-780m-igpu"
    assert after.facts.memory_gb is None  # the Mac's 16 GB belonged to the Mac
    assert after.facts.measured_decode_tps == 9.0
    what_if = update(first.facts, "what about on my 890m?", store)
    assert catalog.resolve_hardware(store, what_if.facts.hardware).value.id == "amd-radeon-890m-igpu"
