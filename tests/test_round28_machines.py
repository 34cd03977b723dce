"""Machines said loosely (round 28): "no GPU", a Jetson's model, "the base Mac mini"."""

from __future__ import annotations

import pytest

from advisor import service
from knowledge.store import Store


@pytest.fixture(scope="module")
def store() -> Store:
    return Store(":memory:")


def _hw(r) -> str | None:
    return r.verdict.prediction.hardware.get("id") if r.verdict and r.verdict.prediction else None


@pytest.mark.parametrize("msg", [
    "12th gen intel laptop, 16GB RAM, no GPU, llama 3.1 8b q4_k_m, how fast?",
    "ryzen laptop cpu-only 32GB, qwen2.5 7b q4",
    "I have no dedicated graphics card, 32gb ram, want to run mistral 7b",
    "my pc doesn't have a gpu, 16 GB of RAM. llama 3.2 3b?",
    "just the CPU, 64GB, llama 3.1 8b",
    "old i7 desktop, 16gb, llama 3.2 3b",
    "intel core ultra laptop without a GPU, phi-4 mini",
])
def test_a_computer_without_a_gpu_is_asked_for_its_cpu_or_ram(store, msg):
    r = service.ask(store, msg)
    assert r.facts.hardware_kind == "cpu"
    assert r.question is not None and r.question.field == "hardware"
    assert "RAM" in r.question.text and "A Mac, a GPU" not in r.question.text
    assert "DDR5-5600 dual channel" in r.question.choices
    # the answer to that question resolves to a CPU machine and predicts
    r2 = service.ask(store, "DDR5-5600 dual channel", r.facts)
    assert r2.verdict is not None and r2.verdict.prediction is not None
    assert r2.verdict.prediction.hardware["kind"] == "cpu"
    assert r2.verdict.prediction.hardware["id"] == "cpu-ddr5-5600-2ch"  # 2 × 5600 MT/s × 8 B = 89.6 GB/s


@pytest.mark.parametrize("msg,kind", [
    ("my mac, llama 3.1 8b", "apple_soc"),
    ("a gpu with 24gb vram for qwen 32b", "discrete_gpu"),
])
def test_other_unnamed_machines_get_their_own_question(store, msg, kind):
    r = service.ask(store, msg)
    assert r.facts.hardware_kind == kind
    assert r.question is not None and "A Mac, a GPU" not in r.question.text


def test_a_laptop_gpu_is_still_a_gpu(store):
    r = service.ask(store, "my laptop has an rtx 4060 and i want llama 3.1 8b q4_k_m")
    assert _hw(r) == "nvidia-rtx-4060-laptop"


@pytest.mark.parametrize("msg,hw_id", [
    ("Jetson Orin Nano 8GB, llama 3.2 3b q4_k_m speed?", "nvidia-jetson-orin-nano-8gb"),
    ("jetson orin nx 16gb running qwen2.5 7b q4_k_m", "nvidia-jetson-orin-nx-16gb"),
    ("Jetson AGX Orin 64GB, llama 3.1 8b q8_0", "nvidia-jetson-agx-orin-64gb"),
    ("jetson orin nano super, llama 3.2 3b q4_k_m", "nvidia-jetson-orin-nano-super"),  # 102.4 GB/s, not 68
])
def test_a_jetson_keeps_its_model_name(store, msg, hw_id):
    r = service.ask(store, msg)
    assert r.question is None
    assert _hw(r) == hw_id


@pytest.mark.parametrize("msg,memory", [
    ("m4 mac mini base, can I run llama 3.1 8b?", 16.0),
    ("base model MacBook Air M2, gemma 3 12b q4_k_m?", 8.0),
    ("entry-level Mac Studio M2 Max, llama 3.3 70b q4", 32.0),
])
def test_the_base_configuration_is_the_smallest_memory(store, msg, memory):
    r = service.ask(store, msg)
    assert r.facts.memory_gb == memory
    assert any("smallest memory size" in n for n in r.notes)
    assert r.question is None


def test_no_base_word_still_asks_for_memory(store):
    r = service.ask(store, "Mac mini M4, llama 3.1 8b")
    assert r.facts.memory_gb is None
    assert r.question is not None and r.question.field == "memory_gb"


@pytest.mark.parametrize("text,base", [
    ("m4 mac mini base", True), ("the base M2 MacBook Air", True), ("Mac mini M4 base model", True),
    ("M4 Max, llama 3.1 8b base model", False), ("the base model of llama on my M4 Max", False),
    ("qwen base model on m2 max", False), ("my m2 max running qwen base model", False),
])
def test_base_means_the_machine_only_next_to_a_machine_word(text, base):
    from advisor.intake._hardware import _BASE_CONFIG
    assert bool(_BASE_CONFIG.search(text)) is base


@pytest.mark.parametrize("answer,memory,note", [
    ("the base one", 16.0, "Took the base"),
    ("whatever the cheapest has", 16.0, "Took the base"),
    ("not sure", 16.0, "Not known: assumed the smallest"),
    ("no idea tbh", 16.0, "Not known: assumed the smallest"),
    ("24GB", 24.0, None),
])
def test_an_answer_to_the_memory_question_without_a_number(store, answer, memory, note):
    first = service.ask(store, "Mac mini M4, llama 3.1 8b q4_k_m")
    assert first.question is not None and first.question.field == "memory_gb"
    r = service.ask(store, answer, first.facts)
    assert r.facts.memory_gb == memory
    assert r.question is None and r.verdict is not None
    if note:
        assert any(n.startswith(note) for n in r.notes)


def test_the_answer_after_a_question_is_a_first_answer_not_a_change(store):
    """The memory question's answer had read "Changed: memory 16 GB. With that: still fits; speed still 20.3"
    about an answer never shown."""
    first = service.ask(store, "Mac mini M4, llama 3.1 8b q4_k_m")
    r = service.ask(store, "16GB", first.facts)
    assert "**Changed:**" not in r.reply and " still " not in r.reply.split("\n")[0]
    assert r.reply.startswith("**Yes")
    again = service.ask(store, "what about 24GB?", r.facts)  # after an answer, a change is a change
    assert again.reply.startswith("**Changed:** memory 16 GB → 24 GB")


def _chat(store, *msgs):
    r, facts = None, None
    for m in msgs:
        r = service.ask(store, m, facts)
        facts = r.facts
    return r


MINI = "llama 3.1 8b on a mac mini M4"


@pytest.mark.parametrize("answer", [
    "whatever, 32 maybe", "at least 24", "more than the base", "not the base one, the upgraded one",
    "the base model, not the instruct one", "the default 4-bit quant",
])
def test_an_answer_that_says_more_is_not_taken_as_the_smallest_memory(store, answer):
    r = _chat(store, MINI, answer)
    assert r.facts.memory_gb != 16.0
    assert not any("smallest" in n or "Took the base" in n for n in r.notes)


@pytest.mark.parametrize("answer,hw,memory", [
    ("idk, what about on an RTX 4090 instead?", "nvidia-rtx-4090", 24.0),
])
def test_a_new_machine_in_the_answer_does_not_get_the_old_ones_memory(store, answer, hw, memory):
    r = _chat(store, MINI, answer)
    assert r.verdict is not None and r.verdict.prediction.hardware["id"] == hw
    assert r.facts.memory_gb in (None, memory)


def test_a_new_mac_in_the_answer_is_asked_its_own_memory(store):
    r = _chat(store, MINI, "not sure, let's say a MacBook Pro M3 Max instead")
    assert r.facts.memory_gb is None and r.question is not None and r.question.field == "memory_gb"


@pytest.mark.parametrize("msg,kind", [
    ("no gpu, only a mac. qwen3 14b", "apple_soc"),
    ("I have no GPU yet, planning a GPU server. llama 3.3 70b", "discrete_gpu"),
    ("no GPU offload in llama.cpp on my gaming pc", "discrete_gpu"),
])
def test_no_gpu_words_that_do_not_mean_a_cpu_only_computer(store, msg, kind):
    assert service.ask(store, msg).facts.hardware_kind == kind


@pytest.mark.parametrize("msgs,hw_id", [
    (("I have no GPU. llama 3.1 8b", "DDR4"), "cpu-ddr4-3200-2ch"),
    (("I have no GPU. llama 3.1 8b", "ddr5"), "cpu-ddr5-5600-2ch"),
    (("I have no GPU. llama 3.1 8b", "not sure"), "cpu-ddr4-3200-2ch"),
    (("I have no GPU, 64GB DDR5 RAM, llama 3.1 8b",), "cpu-ddr5-5600-2ch"),
    (("no graphics card, 12th gen intel laptop with 16GB DDR4, llama 3.1 8b",), "cpu-ddr4-3200-2ch"),
])
def test_a_cpu_only_computer_named_by_its_ram_generation_gets_a_stated_default(store, msgs, hw_id):
    r = _chat(store, *msgs)
    assert r.verdict is not None and r.verdict.prediction.hardware["id"] == hw_id
    assert any(n.startswith("Took the computer as DDR") for n in r.notes)


def test_orin_nano_super_without_the_word_jetson(store):
    r = service.ask(store, "llama 3.1 8b on an Orin Nano Super")
    assert r.verdict is not None and r.verdict.prediction.hardware["id"] == "nvidia-jetson-orin-nano-super"


def test_a_cpu_boxs_zero_gpu_layers_do_not_follow_the_person_to_a_mac(store):
    """"no GPU" set 0 GPU layers on the CPU box; on the Mac mini asked about next they read as "layers on the CPU"
    ("Best fix: run natively with Metal so every layer is on the GPU")."""
    r = _chat(store, "12th gen intel laptop, 16GB RAM, no GPU, llama 3.1 8b q4_k_m", "DDR4-3200 dual channel",
              "Mac mini M4, llama 3.1 8b q4_k_m", "not sure")
    assert r.facts.n_gpu_layers is None
    assert r.verdict is not None and r.verdict.prediction.hardware["kind"] == "apple_soc"
    assert "every layer is on the GPU" not in r.reply and "holding it back" not in r.reply


def test_a_correction_to_the_same_kind_keeps_the_layer_count(store):
    r = _chat(store, "RTX 3060 12GB, llama 3.1 8b q4_k_m with -ngl 20, I get 9 tok/s", "sorry, it's an RTX 3090")
    assert r.facts.n_gpu_layers == 20


def test_the_memory_said_before_the_machine_is_named_stays(store):
    r = _chat(store, "12th gen intel laptop, 16GB RAM, no GPU, llama 3.1 8b q4_k_m", "DDR4-3200 dual channel")
    assert r.facts.memory_gb == 16.0
    assert not any("Forgot the 16 GB" in n for n in r.notes)
    assert "say how much the machine has" not in r.reply
    r2 = _chat(store, "RTX 3060 12GB, llama 3.1 8b", "what about an RTX 4090?")  # a previous machine: its memory goes
    assert r2.facts.memory_gb in (None, 24.0)
