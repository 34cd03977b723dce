"""Words that look like machines or lengths but are not: datacenter names that are also other things ("layer L20",
"Sony a800", "Galaxy A40"), numbers in scientific notation, and token loads per minute/hour/day, which are not
prompt lengths."""

import pytest

from advisor import service
from advisor.resolve import resolve_scenario


@pytest.mark.parametrize("msg, hw_id", [
    ("my Sony a800 camera and a 3090 running qwen3 32b q4_k_m, getting 30 tok/s", "nvidia-rtx-3090"),
    ("I run llama 3.1 8b q4 on my 4090, each layer L20 takes long? decode 120 tok/s", "nvidia-rtx-4090"),
    ("my Samsung Galaxy A40 and a mac mini m4 16gb running gemma 3 4b", "apple-m4-10gpu"),
    ("Huawei P40 is my phone; the PC has an RTX 3060 12GB, mistral 7b q4", "nvidia-rtx-3060"),
    ("the L4 vertebra hurts while my 4080 runs qwen3 14b", "nvidia-rtx-4080"),
    ("check the T4 levels later. Anyway: RTX 4070 with llama 3.1 8b", "nvidia-rtx-4070"),
])
def test_other_things_with_gpu_names_are_not_gpus(store, msg, hw_id):
    r = service.ask(store, msg)
    hw = resolve_scenario(store, r.facts).hardware
    assert hw is not None and hw.id == hw_id, (r.facts.hardware, r.reply[:200])
    assert "You also mentioned" not in r.reply


@pytest.mark.parametrize("msg, hw_id", [
    ("llama 3.1 8b on an L4, 40 tok/s", "nvidia-l4"),
    ("T4 on colab with mistral 7b q4, 20 tok/s", "nvidia-tesla-t4"),
    ("two L20s running qwen3 32b", "nvidia-l20x2"),
    ("we rent an A800 80GB for qwen2.5 72b", "nvidia-a800"),
    ("nvidia a40 with llama 3.1 70b awq", "nvidia-a40"),
])
def test_the_gpus_themselves_still_resolve(store, msg, hw_id):
    hw = resolve_scenario(store, service.ask(store, msg).facts).hardware
    assert hw is not None and hw.id.startswith(hw_id), hw


@pytest.mark.parametrize("msg, field, value", [
    ("M4 Pro 48GB, qwen3 30b a3b, prompts of 1e4 tokens", "prompt_tokens", 10_000),
    ("RTX 4090, llama 3.1 8b, 2.5e3 token prompts", "prompt_tokens", 2_500),
])
def test_scientific_notation_is_a_number(store, msg, field, value):
    assert getattr(service.ask(store, msg).facts, field) == value


def test_an_absurd_rate_in_scientific_notation_is_refused_aloud(store):
    r = service.ask(store, "M4 Pro 48GB, qwen3 30b a3b, 1e30 prompt tok/s and 60 tok/s decode")
    assert r.facts.measured_prefill_tps is None and r.facts.measured_decode_tps == 60
    assert "'1e30 prompt tok/s' is not a usable speed" in r.reply


@pytest.mark.parametrize("msg, per_s", [
    ("we need to process 20000 prompt tokens per minute with llama 3.1 70b on 2x A100 80GB", "333"),
    ("about 2M output tokens a day on an RTX 4090 with qwen3 8b", "23.1"),
    ("our pipeline pushes 90k input tokens per hour through qwen3 32b on an H100", "25"),
    ("60000 tokens/min on an L40S with mistral small 24b", "1,000"),
])
def test_token_loads_are_not_prompt_lengths(store, msg, per_s):
    r = service.ask(store, msg)
    assert r.facts.prompt_tokens is None, r.facts.prompt_tokens
    assert f"{per_s} tokens a second" in r.reply and "not a prompt length" in r.reply, r.reply[:600]
