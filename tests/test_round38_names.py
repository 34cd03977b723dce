"""Machines people name in chat that were only reachable by their full catalog names: the A800 and H20-3e
(datacenter parts sold in China), the L20, and GB10 boxes sold under other names (ASUS Ascent GX10)."""

import pytest

from advisor import service
from advisor.resolve import resolve_scenario


@pytest.mark.parametrize("msg, hw_id", [
    ("Our ASUS Ascent GX10 runs gpt-oss-120b for 3 people, how fast?", "nvidia-dgx-spark-gb10"),
    ("gx10 with llama 3.1 8b q4_k_m, is 40 tok/s normal?", "nvidia-dgx-spark-gb10"),
    ("one A800 SXM for llama 3.1 70b fp8, 10 users", "nvidia-a800-80gb-sxm"),
    ("we have 8x H20-3e and want to serve deepseek r1 to 50 users", "nvidia-h20-3ex8"),
    ("an H20 3e with qwen3 32b in vllm", "nvidia-h20-3e"),
])
def test_named_machines_resolve(store, msg, hw_id):
    r = service.ask(store, msg)
    hw = resolve_scenario(store, r.facts).hardware
    assert hw is not None and hw.id == hw_id, (r.facts.hardware, r.reply[:200])


def test_a800_pcie_is_the_a800_not_a_question(store):
    r = service.ask(store, "A800 80GB PCIe, vLLM, Qwen2.5-72B-Instruct-AWQ, single user: 18 tokens/s decode. normal?")
    hw = resolve_scenario(store, r.facts).hardware
    assert hw is not None and hw.id.startswith("nvidia-a800"), r.reply[:200]
    assert "What will you run it on" not in r.reply


@pytest.mark.parametrize("msg, prefill, decode, prompt", [
    ("We get about 180 prompt tok/s and 14 tok/s generation with Qwen2.5 32B AWQ on a single L4 in vLLM.", 180.0, 14.0,
     None),
    ("my 3090 does 900 pp tok/s and 40 tg t/s on llama 3.1 8b q4_k_m", 900.0, 40.0, None),
    ("about 1200 prefill tokens/s, 35 generation tok/s, qwen3 14b on a 4090", 1200.0, 35.0, None),
    # a prompt length stays a length
    ("4000 token prompts, 30 tok/s on an rtx 4090 with qwen3 14b", None, 30.0, 4000),
])
def test_a_phase_between_number_and_unit_is_a_measured_rate(store, msg, prefill, decode, prompt):
    f = service.ask(store, msg).facts
    assert (f.measured_prefill_tps, f.measured_decode_tps, f.prompt_tokens) == (prefill, decode, prompt)


@pytest.mark.parametrize("msg, measured, target", [
    ("RTX 4090 Qwen2.5 7B Q4_K_M, should hit 150 generation tok/s, currently 90 tok/s", 90.0, 150.0),
    ("we need 30 generation tok/s on an rtx 3060 with llama 3.1 8b", None, 30.0),
    ("the target is 40 tg t/s for qwen3 14b on a 4090", None, 40.0),
])
def test_a_phase_worded_target_stays_a_target(store, msg, measured, target):
    f = service.ask(store, msg).facts
    assert (f.measured_decode_tps, f.target_decode_tps) == (measured, target)


def test_a_wanted_prefill_rate_is_not_measured(store):
    f = service.ask(store, "qwen3 32b on an L4, I want at least 1200 prefill tokens/s").facts
    assert f.measured_prefill_tps is None


def test_stepfun_step_35_without_flash_is_the_model(store):
    r = service.ask(store, "stepfun step 3.5 on H200")
    assert resolve_scenario(store, r.facts).model.id == "stepfun-ai/Step-3.5-Flash"


@pytest.mark.parametrize("msg, prompt, window", [
    ("prompt processing is ~300 tok/s on 10k context with qwen3 32b q4_k_m on a 3090, generation 25 tok/s", 10000, None),
    ("pp is 900 t/s at 16k context on my 4090 with llama 3.1 8b", 16384, None),
    ("I run 32k ctx, qwen3 8b on a 4090", None, 32768),  # a window said alone stays a window
])
def test_a_rate_on_a_context_is_measured_at_that_prompt(store, msg, prompt, window):
    f = service.ask(store, msg).facts
    assert (f.prompt_tokens, f.context_window) == (prompt, window)
