"""After a turn that changes the machine or model and gives no verdict (a paste that ran on another machine,
"now on my PC"), the verdict card of the earlier machine is cleared instead of standing beside the new facts; a
clashing paste's engine replaces the one named for the other machine (the facts table kept "ollama" beside a
CUDA llama-bench)."""

from __future__ import annotations

import pytest

from knowledge.store import Store
from ui import turns
from ui.handlers import verdict_stale

BENCH = ("| model | size | params | backend | ngl | test | t/s |\n| --- | ---: | ---: | --- | --: | ---: | ---: |\n"
         "| llama 8B Q4_K - Medium | 4.58 GiB | 8.03 B | {b} | 99 | pp512 | 4210.33 ± 20.1 |\n"
         "| llama 8B Q4_K - Medium | 4.58 GiB | 8.03 B | {b} | 99 | tg128 | 127.4 ± 0.5 |\n")


@pytest.fixture(scope="module")
def store() -> Store:
    return Store(":memory:")


def test_verdict_stale_rule() -> None:
    mac = {"hardware": "MacBook Air M2", "model": "llama 3.1 8b"}
    assert verdict_stale(mac, {**mac, "hardware": None}, None)
    assert verdict_stale(mac, {**mac, "model": "qwen2.5 14b"}, None)
    assert not verdict_stale(mac, {**mac, "prompt_tokens": 4000}, None)  # the same machine and model
    assert not verdict_stale(mac, {**mac, "hardware": None}, object())  # a new verdict replaces the card


def test_a_clashing_paste_clears_the_card_and_takes_the_runs_engine(store: Store) -> None:
    first = turns.chat_turn(store, "my macbook air m2 16gb runs ollama llama 3.1 8b at 9 tok/s, normal?", [], {})
    assert first.verdict is not None and first.facts["backend"] == "ollama"
    view, _ = turns.paste_turn(store, BENCH.format(b="CUDA"), None, None, first.history, first.facts)
    assert view.verdict is None and view.stale
    assert view.facts["hardware"] is None
    assert view.facts["backend"] == "llama.cpp-cuda"  # the run's engine, not the Mac's Ollama
    assert view.facts["model"] == "llama 3.1 8b"  # the same model (8.03 B): the person's name for it stays
    assert "without a machine until you say which ran it" in view.history[-1]["content"]
    again = turns.chat_turn(store, "that was on an RTX 4090", view.history, view.facts)
    assert again.verdict is not None and not again.stale
    assert again.verdict.prediction.backend.startswith("llama.cpp")


def test_a_mac_paste_on_the_mac_keeps_the_card(store: Store) -> None:
    facts = {"hardware": "MacBook Air M2", "memory_gb": 16, "model": "llama 3.1 8b"}
    view, _ = turns.paste_turn(store, BENCH.format(b="Metal"), None, None, [], facts)
    assert view.verdict is not None and not view.stale


def test_a_question_about_another_machine_without_a_verdict_clears_the_card(store: Store) -> None:
    first = turns.chat_turn(store, "RTX 4090, llama 3.1 8b q4_k_m, 130 tok/s. normal?", [], {})
    assert first.verdict is not None
    nxt = turns.chat_turn(store, "and on a mac?", first.history, first.facts)
    if nxt.verdict is None:  # it asks which Mac: the RTX 4090's card no longer applies
        assert nxt.stale == (nxt.facts.get("hardware") != first.facts.get("hardware"))
