"""Words that look like machines or lengths but are not: datacenter names that are also other things ("layer L20",
"Sony a800", "Galaxy A40"), numbers in scientific notation, and token loads per minute/hour/day, which are not
prompt lengths."""

import pytest

from advisor import service
from advisor.resolve import resolve_scenario


@pytest.fixture(scope="module")
def own_store():
    """A store of this module's own for the pastes: a pasted output is saved, and the session store's counts are
    pinned elsewhere (tests/test_store.py)."""
    from knowledge.store import Store

    return Store(":memory:")


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


def test_each_users_rate_with_serving_words_is_per_user_and_a_scheduling_question(store):
    """'With 20 concurrent users … each user gets 25 tok/s' on vLLM: 25 is one user's rate (not a total to divide by
    20), the A100 80GB's two versions (PCIe, SXM4: 5 % apart) do not hold up the verdict, and the cause named is the
    server's scheduling, never layers on the CPU (a serving engine keeps them on the GPU)."""
    r = service.ask(store, "With 20 concurrent users on vLLM, one A100 80GB, Llama 3.1 8B, each user gets 25 tok/s. "
                           "Can we do better?")
    assert r.facts.measured_is_aggregate is None and r.facts.measured_decode_tps == 25
    v = r.verdict
    assert v is not None and v.status == "below_expected" and v.bottleneck == "misconfiguration"
    lo, hi = v.expected_range["decode_tps"]
    assert 60 < lo < hi < 160  # one user's share of the batch, not the aggregate
    assert "scheduling" in v.fixes[0].title and not any("-ngl" in f.title for f in v.fixes)


def test_a_total_with_serving_words_stays_a_total(store):
    r = service.ask(store, "vLLM on one A100 80GB, llama 3.1 8b, with 20 concurrent users we get 1800 tok/s")
    assert r.facts.measured_is_aggregate is True


@pytest.mark.parametrize("msg", ["A100 80GB, Llama 3.1 8B, 25 tok/s", "an A100 80GB with llama 3.1 8b: 120 tok/s, ok?"])
def test_close_versions_do_not_hold_up_a_verdict(store, msg):
    r = service.ask(store, msg)
    assert r.verdict is not None, r.reply[:300]


def test_far_apart_versions_still_ask(store):
    r = service.ask(store, "H100, llama 3.1 8b, 60 tok/s")
    assert r.verdict is None and "Which" in r.reply  # PCIe 2.0 TB/s vs SXM 3.35 TB/s: the verdict depends on it


# --- the breaker's findings: decimal commas, labelled lengths before a comma, speeds per minute, who counts -------------

@pytest.mark.parametrize("msg, decode, prefill", [
    ("RTX 4090, llama 3.1 8b q4, I get 12,5 tok/s decode", 12.5, None),
    ("RTX 4090 llama 3.1 8b prefill 850,3 tok/s and 7,5 t/s", 7.5, 850.3),
    ("RTX 4090 llama 3.1 8b prefill 850 tok/s and 7 t/s", 7.0, 850.0),
    ("RTX 4090, llama 3.1 8b, decode 2 tokens per minute", 0.0333, None),  # three significant digits under 0.1
    ("my pi 5 with llama 3.1 8b gets 30 tokens a minute", 0.5, None),
])
def test_rates_in_local_formats(store, msg, decode, prefill):
    f = service.ask(store, msg).facts
    assert (f.measured_decode_tps, f.measured_prefill_tps) == (decode, prefill)


def test_lists_and_thousands_keep_their_commas(store):
    f = service.ask(store, "batch sizes 1,2,4,8 on an RTX 4090 with llama 3.1 8b, 8,000 token prompts").facts
    assert f.prompt_tokens == 8000 and f.measured_decode_tps is None


@pytest.mark.parametrize("msg, prompt, ttft", [
    ("M3 Max 128GB, llama 3.1 70b, prompts of 32k, first token after 20 s", 32000, 20.0),
    ("RTX 4090 llama 3.1 8b, prompts of 8k, TTFT is 20 seconds", 8000, 20.0),
    ("RTX 4090 llama 3.1 8b, answers of 500, prompts of 2000.", 2000, None),
])
def test_a_labelled_length_before_a_comma_or_full_stop(store, msg, prompt, ttft):
    f = service.ask(store, msg).facts
    assert (f.prompt_tokens, f.measured_ttft_s) == (prompt, ttft)


@pytest.mark.parametrize("msg, users", [
    ("I have 2 kids, 3 cats, and an M2 Pro 16GB; mistral 7b, 8 users", 8),
    ("my 3 kids use my RTX 4090 with llama 3.1 8b", 3),
    ("team of 5 engineers, 2 kids at home, RTX 4090 with qwen3 14b", 5),
])
def test_users_said_as_users_beat_household_members_in_passing(store, msg, users):
    assert service.ask(store, msg).facts.concurrency == users


def test_a_prompt_too_short_to_time_is_not_called_slow(own_store, tmp_path):
    """Ollama's stats for a 20-token prompt: 0.1 s of prompt_eval is the request's fixed costs, not prefill."""
    from advisor.importers import parse_output

    ms = parse_output('{"model":"llama3.1:8b","eval_count": 298, "eval_duration": 2400000000, '
                      '"prompt_eval_count": 20, "prompt_eval_duration": 100000000}').measurements
    r = service.ask(own_store, "RTX 4090, llama 3.1 8b q4_k_m in ollama:\nprompt eval count:    20 token(s)\n"
                           "prompt eval duration: 100ms\nprompt eval rate:     200.00 tokens/s\n"
                           "eval count:           298 token(s)\neval duration:        2.4s\neval rate:            124.17 tokens/s")
    assert ms and ms[0].prompt_tokens == 20
    v = r.verdict
    assert v is not None and v.phase_status["prefill_tps"] != "below_expected", r.reply[:300]
    assert "too short" in v.explanation or "fixed costs" in v.explanation


def test_an_impossible_imported_rate_is_not_kept():
    from advisor.importers import parse_output

    ms = parse_output('{"model":"llama3.1:8b","eval_count": 298, "eval_duration": 1e30, '
                      '"prompt_eval_count": 20, "prompt_eval_duration": 100000000}').measurements
    assert ms and ms[0].decode_tps is None and ms[0].prefill_tps == pytest.approx(200)


ROW = "| llama 8B Q4_K_M | 4.58 GiB | 8.03 B | CUDA | 99 | tg128 | 127.05 ± 0.22 |"
HEADER = "| model | size | params | backend | ngl | test | t/s |\n| ---- | ---: | ---: | --- | --: | ---: | ---: |"


@pytest.mark.parametrize("msg", [
    f"RTX 4090, llama 3.1 8b\n{ROW}",                       # a row without its header
    f"RTX 4090, llama 3.1 8b\n{HEADER}\n{ROW}",              # a short line of names before the table
    f"Here is my result on an RTX 4090: {HEADER}\n{ROW}",    # the header on the same line as the words
])
def test_llama_bench_rows_however_pasted(own_store, msg):
    r = service.ask(own_store, msg)
    assert r.facts.measured_decode_tps == 127.05 and r.facts.memory_gb is None, (r.facts, r.reply[:300])
    hw = resolve_scenario(own_store, r.facts).hardware
    assert hw is not None and hw.id == "nvidia-rtx-4090"
    assert r.verdict is not None and r.verdict.status == "normal"


def test_a_headerless_row_is_parsed_with_a_warning():
    from advisor.importers import parse_output

    out = parse_output(ROW)
    assert out.format == "llama-bench-md" and [m.decode_tps for m in out.measurements] == [127.05]
    assert out.measurements[0].n_gpu_layers == 99 and "no header line" in out.warnings[0]


# --- the new-user trial's findings ----------------------------------------------------------------------------------

def test_two_used_cards_are_two(store):
    r = service.ask(store, "Should I buy two used 3090s or one 5090 for running 70b models at home?")
    assert "2× RTX 3090" in r.reply or "2x RTX 3090" in r.reply, r.reply[:300]


def test_a_measured_rate_that_does_not_fit_does_not_open_with_no(store):
    r = service.ask(store, "My 4090 only gives 35 tok/s on llama 3.1 70b q4_k_m. Is something wrong?")
    assert r.reply.lstrip("*").startswith("It does not fit"), r.reply[:120]


def test_no_draft_model_fix_for_ollama(store):
    v = service.ask(store, "ollama, RTX 4090, llama 3.1 8b q4_k_m, 120 tok/s normal?").verdict
    assert v is not None and not any(f.id == "speculative_decoding" for f in v.fixes)


def test_a_layer_split_is_offered_tensor_parallelism(store):
    v = service.ask(store, "70B Q4 on two 4090s with Ollama runs 18 t/s and each GPU only shows about 50% utilization. "
                           "llama 3.3 70b q4_k_m. Why isn't it using both fully?").verdict
    assert v is not None
    tp = [f for f in v.fixes if "tensor parallelism" in f.title]
    assert tp and tp[0].id == "fix_configuration" and tp[0].new_decode_tps > 18 * 1.1


def test_a_fast_prefill_does_not_make_a_slow_decode_fast(store):
    v = service.ask(store, "RTX 4070, qwen2.5 14b q4_k_m in llama.cpp: pp512 3000 tok/s, tg128 27.84 tok/s").verdict
    r = service.ask(store, "RTX 4070, qwen2.5 14b q4_k_m in llama.cpp: pp512 3000 tok/s, tg128 27.84 tok/s")
    assert v is not None and r.verdict is not None
    head = r.reply.split("\n")[0]
    assert "decode 27.84" not in head or "low end" in head or "Slower" in head, head  # never "faster" about decode


def test_words_after_a_command_line_are_read(own_store):
    r = service.ask(own_store, "ollama run gemma3:27b --verbose on my Mac Studio M2 Max 32GB, feels slow:\n"
                           "total duration:       40.1s\nload duration:        25ms\nprompt eval count:    30 token(s)\n"
                           "prompt eval duration: 400ms\nprompt eval rate:     75.00 tokens/s\neval count:           500 token(s)\n"
                           "eval duration:        39.6s\neval rate:            12.63 tokens/s")
    hw = resolve_scenario(own_store, r.facts).hardware
    assert hw is not None and hw.id.startswith("apple-m2-max"), (r.facts.hardware, r.reply[:200])


def test_how_sure_uses_the_tables_share_of_the_limit(store):
    from advisor.render.markdown import calibration_note

    p = service.ask(store, "RTX 4090 llama 3.1 8b q4_k_m 120 tok/s").verdict.prediction
    note = calibration_note(p)
    share = round(100 * p.decode_tps / p.decode_ceiling_tps)
    assert f"generation predicted at {share}% of the memory-bandwidth limit" in note and "limit, tuned on" in note
