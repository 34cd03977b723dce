"""Round 50: several users whose prompts take most of the machine's time are prefill-bound; a follow-up's new prompt
length ("if i paste 32k?") is read; a quantized KV cache asked about is answered, not silently applied."""

import re

import pytest

from advisor import service
from advisor.intake import extract
from advisor.roofline import served_share
from advisor.understand.symptoms import read_symptoms
from knowledge.store import Store

RAG = ("we're building a RAG app: prompts are ~12k tokens of retrieved docs, answers ~300 tokens, about 50 concurrent "
       "users, llama 3.1 8b. is one L40S enough?")


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    return Store(str(tmp_path_factory.mktemp("r50") / "s.duckdb"))


@pytest.fixture(scope="module")
def rag(store):
    return service.ask(store, RAG)


def test_many_users_with_long_prompts_are_prefill_bound(rag):
    v = rag.verdict
    assert v.bottleneck == "prefill"
    p = v.prediction
    read_s, decode_s = 12000 / p.prefill_tps, 300 / p.decode_tps
    assert read_s > decode_s
    share = read_s / (read_s + decode_s)
    assert f"reading prompts is {share:.0%} of the machine's time" in v.explanation
    per_user = p.decode_tps_per_seq * served_share(p.decode_tps, p.prefill_tps, 12000, 300)
    assert f"about {per_user:.1f} tok/s on average" in v.explanation
    assert f"after about {50 * read_s:.0f} s" in v.explanation


def test_the_headline_says_how_many_requests_an_hour(rag):
    p = rag.verdict.prediction
    per_hour = 3600 / (12000 / p.prefill_tps + 300 / p.decode_tps)
    head = rag.reply.split("\n")[0]
    assert f"about {per_hour:,.0f} requests an hour in all" in head
    # the headline's per-user speed is the average with the pauses for other users' prompts, not the idle rate
    avg = p.decode_tps_per_seq * served_share(p.decode_tps, p.prefill_tps, 12000, 300)
    assert f"each of those {p.running} gets about {avg:.1f} tok/s" in head


def test_room_for_more_streams_comes_before_the_prompt_fixes(rag):
    ids = [f.id for f in rag.verdict.fixes]
    assert ids[0] == "kv_cache_quantization"
    # retrieved documents differ per request: a prefix cache is not the second fix for a RAG load
    assert ids[1] == "chunked_prefill"


def test_a_team_with_long_shared_prompts_gets_prefix_caching_first(store):
    r = service.ask(store, "30 of us use qwen2.5 7b on an H100 with vllm; each request sends a 16k token prompt and gets "
                           "a 100 token answer")
    assert r.verdict.bottleneck == "prefill"
    assert [f.id for f in r.verdict.fixes][:2] == ["prefix_caching", "chunked_prefill"]


@pytest.mark.parametrize("msg", [
    "5 of us share a 3090 running llama 3.1 8b q4_k_m on llama-server, chats are short, answers are ~500 tokens",
    "20 users chatting with qwen2.5 14b on an A100 80GB with vllm, 300 token prompts, 400 token replies",
])
def test_short_prompts_for_many_users_stay_decode_bound(store, msg):
    r = service.ask(store, msg)
    assert r.verdict.bottleneck == "decode"
    assert "requests an hour" not in r.reply


def test_one_user_is_never_judged_by_the_prompt_load(store):
    r = service.ask(store, "llama 3.1 8b q4_k_m on an rtx 4090, 12k token prompts, 300 token answers")
    assert "requests an hour" not in r.reply
    assert "of the machine's time" not in r.verdict.explanation


@pytest.mark.parametrize("msg, tokens", [
    ("how long will the first token take if i paste 32k?", 32000),
    ("what if i feed it 100k", 100000),
    ("and if I send 2k?", 2000),
    ("pasting ~8k into it, how slow?", 8000),
    ("if I give it 16k how long until it answers", 16000),
    ("what if i dump 64K in there", 64000),
])
def test_a_bare_count_handed_to_the_model_is_a_prompt_length(store, msg, tokens):
    assert extract(msg, store).facts().get("prompt_tokens") == tokens


@pytest.mark.parametrize("msg", ["paste 32k tok/s", "we send 4k requests a day to qwen 7b", "we send 2k emails per day",
                                 "they send 10k queries each week"])
def test_a_rate_or_a_count_of_things_after_paste_is_not_a_prompt_length(store, msg):
    assert extract(msg, store).facts().get("prompt_tokens") is None


def test_a_follow_up_prompt_length_replaces_the_old_one(tmp_path):
    s = Store(str(tmp_path / "s.duckdb"))
    r1 = service.ask(s, "i run qwen2.5 coder 32b q4_k_m on a 3090 with llama.cpp, my prompts are about 8k tokens of code")
    r2 = service.ask(s, "how long will the first token take if i paste 32k?", r1.facts)
    assert (r1.facts.prompt_tokens, r2.facts.prompt_tokens) == (8000, 32000)
    assert "prompt 8,000 tokens → 32,000 tokens" in r2.reply
    assert r2.verdict.prediction.ttft_s > 3 * r1.verdict.prediction.ttft_s


@pytest.mark.parametrize("msg, asked, quant", [
    ("would fp8 kv cache help?", "fp8", None),
    ("should I quantize the kv cache?", "quantized", None),
    ("what about a q8_0 kv cache", "q8_0", None),
    ("would a q4_0 kv cache let me fit 32k?", "q4_0", None),
    ("is it worth keeping the kv cache in 8 bits?", "q8_0", None),
    ("I run llama-server -ctk q8_0 -ctv q8_0 -fa on, how can I make it faster?", None, "q8_0"),
    ("I'm using a q8_0 kv cache and it got slower", None, "q8_0"),
    ("ollama with OLLAMA_KV_CACHE_TYPE=q4_0, 12 tok/s", None, "q4_0"),
    ("vllm --kv-cache-dtype fp8 on an H100", None, "fp8"),
])
def test_a_kv_cache_asked_about_is_not_in_use(msg, asked, quant):
    s = read_symptoms(msg)
    assert (s.kv_quant_asked, s.kv_cache_quant) == (asked, quant)


def _first_lines(reply):
    return "\n".join(reply.split("\n")[:8])


def test_an_fp8_kv_question_on_llama_cpp_gets_its_8_bit_flags(tmp_path):
    s = Store(str(tmp_path / "s.duckdb"))
    r1 = service.ask(s, "qwen2.5 coder 32b q4_k_m on a 3090 with llama.cpp, 24k token prompts")
    r2 = service.ask(s, "would fp8 kv cache help?", r1.facts)
    head = _first_lines(r2.reply)
    assert "-ctk q8_0 -ctv q8_0" in head and "no fp8 cache type" in head
    kv = r1.verdict.prediction.memory.kv_cache_gb
    assert re.search(rf"{kv:.1f} → {kv / 2:.1f} GB", head)
    # asked about, not applied: the prediction keeps its f16 cache
    assert r2.verdict.prediction.memory.kv_cache_gb == pytest.approx(kv, rel=0.01)


def test_a_kv_question_on_vllm_names_its_flag(store):
    r = service.ask(store, "llama 3.1 70b fp8 on 2x H100 with vllm, 40 users, 8k prompts. would an fp8 kv cache help?")
    assert "--kv-cache-dtype fp8" in _first_lines(r.reply)
    assert "no fp8 cache type" not in r.reply


def test_a_kv_question_at_short_context_says_little_to_gain(store):
    r = service.ask(store, "llama 3.1 8b q4_k_m on an rtx 4090 with ollama, short chats. should i quantize the kv cache?")
    head = _first_lines(r.reply)
    assert "OLLAMA_KV_CACHE_TYPE=q8_0" in head and "little to gain here" in head
    assert "no fp8 cache type" not in head  # no fp8 was asked about
    kv = r.verdict.prediction.memory.kv_cache_gb
    assert f"the cache is only {kv:.1f} GB" in head


TEAM = "30-person dev team, we want to self-host Qwen3 Coder 30B-A3B for coding assistance. Which GPUs should we buy?"


@pytest.fixture(scope="module")
def team(store):
    return service.ask(store, TEAM)


def _row(reply, name):
    return next(line for line in reply.splitlines() if line.startswith(f"| {name}"))


def test_cards_the_16_bit_weights_do_not_fit_are_compared_at_their_serving_build(team):
    # FP8 tensor cores (Ada) and 48 GB: FP8 holds all 30; a 32 GB 5090 holds more users at AWQ 4-bit than at FP8
    assert "L40S 48 GB at FP8 (E4M3) | meets targets" in _row(team.reply, "L40S")
    assert "RTX 5090 32 GB at AWQ 4-bit g128 | meets targets" in _row(team.reply, "RTX 5090")
    assert "does not fit" not in team.reply.split("<details>")[0]


def test_a_stated_format_is_kept_for_every_option(store):
    r = service.ask(store, TEAM.replace("Qwen3 Coder 30B-A3B", "Qwen3 Coder 30B-A3B in BF16"))
    assert "| L40S 48 GB | **does not fit**" in r.reply
    assert " at FP8" not in r.reply and " at AWQ" not in r.reply


def test_the_compare_api_marks_the_build_each_option_was_evaluated_at(store):
    from advisor import compare as cmp

    req = cmp.CompareRequest(model="Qwen/Qwen3-Coder-30B-A3B-Instruct", quant="BF16", concurrency=30,
                             candidates=["nvidia-l40s", "nvidia-a100-80gb-sxm", "nvidia-a100-40gb"])
    pinned = {c["hardware"]["id"]: c for c in cmp.compare_request(store, req)["candidates"]}
    assert pinned["nvidia-l40s"]["max_concurrency"] == 0 and pinned["nvidia-l40s"]["quant"] is None
    free = {c["hardware"]["id"]: c for c in cmp.compare_request(store, req, quant_stated=False)["candidates"]}
    assert free["nvidia-l40s"]["quant"] == "FP8 (E4M3)" and free["nvidia-l40s"]["max_concurrency"] > 0
    # an A100 has no FP8 tensor cores: its build is AWQ 4-bit
    assert free["nvidia-a100-40gb"]["quant"] == "AWQ 4-bit g128"
    # a card the 16-bit weights fit keeps them
    assert free["nvidia-a100-80gb-sxm"]["quant"] is None


def test_one_person_on_a_serving_engine_gets_batching_last(store):
    r = service.ask(store, "DGX Spark, llama 3.3 70b fp8 on vllm, I get 2.7 tok/s. is that normal? how do I make it faster?")
    ids = [f.id for f in r.verdict.fixes]
    assert ids[0] != "batching" and ids[-1] == "batching"
    batch = r.verdict.fixes[-1]
    assert batch.speedup is None and batch.title.startswith("If you have several requests to run")
    assert "one conversation by itself stays as fast as it is" in batch.predicted_effect


def test_several_users_keep_batching_with_its_speedup(store):
    r = service.ask(store, "4 of us share a 3090 with llama.cpp running qwen2.5 14b q4_k_m, each gets 12 tok/s")
    b = [f for f in r.verdict.fixes if f.id == "batching"]
    assert b and b[0].speedup and b[0].speedup > 1


@pytest.mark.parametrize("msg, engine, same", [
    ("I just got a 9070 XT, want to run qwen3 14b, does ollama even support it?", "Ollama", True),
    ("RX 7900 XTX with llama 3.1 8b q4_k_m, does LM Studio work with it?", "LM Studio", True),
    ("rtx 4090 with llama.cpp, qwen2.5 32b q4_k_m, does vllm support it and would it be faster?", "vLLM", False),
])
def test_an_engine_support_question_is_answered_first(store, msg, engine, same):
    r = service.ask(store, msg)
    line = next(x for x in r.reply.splitlines() if x.startswith(f"**{engine}"))
    assert "yes, it runs on this machine" in line
    assert ("runs the same kernels as llama.cpp" in line) == same
    assert "now now" not in r.reply and "the engine now" not in r.reply


def test_an_ambiguous_card_with_a_rate_is_asked_with_its_variants(store):
    r = service.ask(store, "vllm on an A100 with llama 3.1 8b, I only get 90 tok/s")
    q = r.question
    assert q.field == "hardware" and len(q.choices) == 3
    for c in q.choices:
        assert c in q.text
    assert "bandwidth" in q.text


def test_a_card_number_before_another_rate_is_no_range(store):
    e = extract("llama 3.1 8b Q4_K_M llama.cpp: 120 tok/s on my RTX 4090 and 10 tok/s on my RTX 3060", store)
    f = e.facts()
    assert (f["hardware"], f["measured_decode_tps"]) == ("RTX 4090", 120.0)
    assert any("'10 tok/s' is a second generation (decode) speed; I judged the first, 120 tok/s" in n for n in e.notes)
    assert not any("4090 and 10" in n for n in e.notes)


@pytest.mark.parametrize("msg, rate", [("I get 20 and 30 tok/s on a 3090", 25.0), ("between 20 and 30 tok/s on my 3090", 25.0),
                                       ("20-30 tok/s on a 3090", 25.0), ("20 to 30 tok/s on a 3090", 25.0)])
def test_a_rate_range_keeps_its_middle(store, msg, rate):
    assert extract(msg, store).facts()["measured_decode_tps"] == rate


def test_a_second_rate_of_one_machine_is_said_not_dropped(store):
    e = extract("qwen 7b on a 3090, I get 30 tok/s, sometimes 110 tok/s", store)
    assert e.facts()["measured_decode_tps"] == 30.0
    assert any("'110 tok/s' is a second generation (decode) speed" in n for n in e.notes)
    assert not any("'110 tok/s' taken as" in n for n in e.notes)


@pytest.fixture(scope="module")
def mac(tmp_path_factory):
    s = Store(str(tmp_path_factory.mktemp("mac") / "s.duckdb"))
    return s, service.ask(s, "mac mini m4 16gb, can it run qwen3 14b?")


@pytest.mark.parametrize("msg", ["why?", "Why", "how come", "why is that?", "explain please", "warum?"])
def test_a_why_follow_up_is_answered_with_the_reasoning_not_the_whole_reply(mac, msg):
    s, first = mac
    r = service.ask(s, msg, first.facts)
    assert r.reply.startswith("**Why:** ")
    p = first.verdict.prediction
    assert f"reading all {p.weight_bytes_per_token_gb:.1f} GB of weights for every token" in r.reply
    assert "**Best fix:**" not in r.reply and "<details>" not in r.reply


def test_turning_the_thinking_off_is_answered_with_the_models_switch(mac):
    s, first = mac
    r = service.ask(s, "can i turn the thinking off?", first.facts)
    assert r.reply.startswith("**Yes.** Qwen3-14B thinks before it answers")
    assert "`/no_think`" in r.reply and "**Best fix:**" not in r.reply


def test_a_model_that_does_not_reason_has_no_thinking_to_turn_off(tmp_path):
    s = Store(str(tmp_path / "s.duckdb"))
    first = service.ask(s, "rtx 3060 12gb with llama 3.1 8b q4_k_m")
    r = service.ask(s, "how do i disable thinking?", first.facts)
    assert "does not reason before it answers" in r.reply


def test_a_why_that_changes_a_fact_is_a_follow_up_with_the_change(mac):
    s, first = mac
    r = service.ask(s, "why? what if it had 32gb", first.facts)
    assert not r.reply.startswith("**Why:**")
    assert "16 GB → 32 GB" in r.reply or "32" in r.reply.split("\n")[0]


@pytest.mark.parametrize("msg", [
    "mixtral 8x7b q4_k_m on my 7900 xtx with 32gb ram, llama.cpp, it's slow, 12 tok/s",
    "qwen3 30b a3b q8_0 on a 4090 with 64gb ram, llama.cpp, 20 tok/s",
])
def test_a_format_that_fits_the_card_whole_leads_over_the_expert_offload(store, msg):
    fixes = service.ask(store, msg).verdict.fixes
    assert (fixes[0].remedy, fixes[1].remedy) == ("fit_in_memory", "moe_expert_offload")
    assert fixes[0].new_decode_tps >= 2 * fixes[1].new_decode_tps and fixes[0].fits_with_margin


def test_the_expert_offload_leads_when_no_format_fits_the_card(store):
    fixes = service.ask(store, "gpt-oss-120b on a 3090 with 64gb ram llama.cpp 9 tok/s").verdict.fixes
    assert fixes[0].remedy == "moe_expert_offload"


@pytest.mark.parametrize("msg, prompt, gen", [
    ("Wir sind 30 Leute, 2x RTX 4090, Qwen3 14B, Prompts etwa 8.000 Tokens (Dokumente zusammenfassen), Antworten 500 "
     "Tokens. Wie viele Nutzer schafft das gleichzeitig?", 8000, 500),
    ("Antworten 500 Tokens, Prompts etwa 8000 Tokens", 8000, 500),
    ("RTX 4090でQwen3-32B Q4_K_Mを動かすとどのくらいの速さですか？プロンプトは8000トークンです", 8000, None),
    ("输入 8000 个 token，输出 500 个 token，qwen2.5 14b", 8000, 500),
    ("프롬프트 8000 토큰, qwen2.5 14b on a 4090", 8000, None),
    ("Prompts de 12.000 Tokens, respuestas de 300 tokens", 12000, 300),
])
def test_lengths_in_other_languages_and_capitalised_units(store, msg, prompt, gen):
    f = extract(msg, store).facts()
    assert (f.get("prompt_tokens"), f.get("gen_tokens")) == (prompt, gen)


def test_an_mlx_rate_with_three_decimals_is_no_thousands(store):
    e = extract("Prompt: 64 tokens, 612.345 tokens-per-sec\nGeneration: 256 tokens, 58.120 tokens-per-sec", store)
    assert e.facts()["measured_prefill_tps"] == pytest.approx(612.345)
    assert not any("thousands" in n for n in e.notes)


LB_IMPOSSIBLE = """| model                          |       size |     params | backend    | ngl |            test |                  t/s |
| ------------------------------ | ---------: | ---------: | ---------- | --: | --------------: | -------------------: |
| llama 8B Q4_K_M                |   4.58 GiB |     8.03 B | CUDA       |  99 |           pp512 |    999999.00 ± 5.00 |
| llama 8B Q4_K_M                |   4.58 GiB |     8.03 B | CUDA       |  99 |           tg128 |         60.12 ± 0.10 |
"""


def test_a_benchmark_prefill_beyond_the_machines_compute_is_not_its_result(tmp_path):
    from advisor.paste_import import import_output

    s = Store(str(tmp_path / "s.duckdb"))
    text = import_output(s, LB_IMPOSSIBLE, hardware="RTX 3060").message
    assert "Its prefill (999,999 tok/s) is more than the GeForce RTX 3060 12GB can compute" in text
    rows = s.query("SELECT hw_id, prefill_tps FROM results WHERE prefill_tps = 999999")
    assert rows and all(r["hw_id"] is None for r in rows)


def test_a_plausible_fast_benchmark_prefill_is_kept_for_the_machine(tmp_path):
    from advisor.paste_import import import_output

    s = Store(str(tmp_path / "s.duckdb"))
    import_output(s, LB_IMPOSSIBLE.replace("999999.00", "  2900.00"), hardware="RTX 3060")
    rows = s.query("SELECT hw_id FROM results WHERE prefill_tps = 2900")
    assert [r["hw_id"] for r in rows] == ["nvidia-rtx-3060"]


@pytest.mark.parametrize("msg, field, rate, depth", [
    ("llama.cpp on 4060 ti 16gb: prompt processing drops from 2000 t/s to 300 t/s when context reaches 30k. qwen3 14b",
     "measured_prefill_tps", 300.0, 30000),
    ("pp falls from 1500 to 400 t/s once the conversation gets to 20k tokens", "measured_prefill_tps", 400.0, 20000),
    ("decode goes from 40 to 12 t/s once the chat gets to 20k tokens", "measured_decode_tps", 12.0, 20000),
    ("generation drops from 40 t/s to 12 t/s when the context hits 16k", "measured_decode_tps", 12.0, 16384),
])
def test_a_fall_keeps_the_phase_it_names_and_the_depth_it_happens_at(store, msg, field, rate, depth):
    f = extract(msg, store).facts()
    assert f[field] == rate and f.get("depth") == depth
    other = "measured_decode_tps" if field == "measured_prefill_tps" else "measured_prefill_tps"
    assert other not in f


@pytest.mark.parametrize("msg", [
    "my first message takes 40 seconds after i come back from lunch, ollama, mac mini m4 pro 24gb, qwen2.5 14b",
    "after lunch the first reply takes 40 s, ollama, mac mini m4 pro 24gb, qwen2.5 14b",
    "whenever we get back from a meeting the first request takes 40 s, ollama, mac mini m4 pro 24gb, qwen2.5 14b",
])
def test_a_slow_first_message_after_a_break_is_the_model_reloading(store, msg):
    r = service.ask(store, msg)
    assert r.facts.measured_ttft_s == 40.0
    assert "OLLAMA_KEEP_ALIVE" in r.reply and "Nothing you need to change" not in r.reply


def test_one_slow_stream_on_vllm_points_at_its_settings_and_a_batch_question_is_answered(store):
    r = service.ask(store, "One user (me) on vLLM, RTX 4090, Qwen2.5 14B AWQ. I get 40 tok/s. Should I increase "
                           "max-num-seqs or batch size to speed it up?")
    assert r.verdict.fixes[0].remedy == "setup:cuda_graphs" and "CUDA graphs" in r.verdict.fixes[0].title
    assert "where the layers run" not in r.reply
    assert "**max-num-seqs:** no help for one stream" in r.reply and "the 40 tok/s you get" in r.reply


def test_a_batch_setting_for_several_users_is_not_called_useless(store):
    r = service.ask(store, "8 users on vLLM, RTX 4090, Qwen2.5 14B AWQ. Should I increase max-num-seqs?")
    assert "no help for one stream" not in r.reply


def test_ollama_on_an_igpu_it_does_not_drive_is_said_to_run_on_the_cpu(store):
    r = service.ask(store, "Radeon 780M laptop, 32GB DDR5, llama.cpp vulkan, llama 3.1 8b q4_k_m, does ollama support it?")
    line = next(x for x in r.reply.splitlines() if x.startswith("**Ollama"))
    assert "on the CPU cores" in line and "OLLAMA_VULKAN=1" in line and "same speed" not in line


def test_ollama_on_an_intel_arc_card_needs_its_vulkan_switch(store):
    r = service.ask(store, "Intel Arc B580 12GB, llama.cpp SYCL, qwen2.5 14b q4_k_m, does ollama support it?")
    line = next(x for x in r.reply.splitlines() if x.startswith("**Ollama"))
    assert "OLLAMA_VULKAN=1" in line and "same kernels" not in line


def test_a_reply_that_narrows_the_choices_keeps_the_machine(tmp_path):
    s = Store(str(tmp_path / "s.duckdb"))
    r1 = service.ask(s, "I get 25 tok/s with llama 3.1 70b q4_k_m on an A100 in llama.cpp, is that normal?")
    assert r1.question is not None and r1.question.field == "hardware"
    r2 = service.ask(s, "the 80GB one", r1.facts)
    assert r2.verdict is not None and "A100" in r2.verdict.prediction.hardware["name"]
    assert "80" in r2.verdict.prediction.hardware["name"]


def test_the_kv_cache_type_is_kept_across_turns(tmp_path):
    s = Store(str(tmp_path / "s.duckdb"))
    r1 = service.ask(s, "RTX 3090 24GB, ollama, qwen2.5 32b q4_k_m, I want 32k context for coding, "
                        "OLLAMA_KV_CACHE_TYPE=q4_0. how fast?")
    assert r1.facts.kv_cache_type == "q4_0" and r1.verdict.prediction.memory.fits
    r2 = service.ask(s, "what if I paste 20k?", r1.facts)
    assert r2.facts.kv_cache_type == "q4_0" and r2.facts.prompt_tokens == 20000
    assert r2.verdict.prediction.memory.fits  # a 20k prompt inside the 32k window that fitted still fits
    assert "does not fit" not in r2.reply.split("\n")[0]


@pytest.mark.parametrize("msg, kv", [("llama-server -ctk q8_0 -ctv q8_0 -fa on", "q8_0"),
                                     ("OLLAMA_KV_CACHE_TYPE=q4_0", "q4_0"), ("--kv-cache-dtype fp8", "fp8"),
                                     ("would a q8_0 kv cache help?", None)])
def test_the_kv_cache_type_in_use_is_a_fact(store, msg, kv):
    assert extract(msg, store).facts().get("kv_cache_type") == kv


def test_weights_that_fit_beside_a_context_that_does_not_are_said_so(store):
    r = service.ask(store, "We're a team of 40 people summarising documents, prompts are about 100k tokens and answers "
                           "about 400 tokens. How many users can 2x H100 handle with Llama 3.3 70B?")
    m = r.verdict.prediction.memory
    head = r.reply.split("\n")[0]
    assert f"the weights fit ({m.weights_gb:.0f} of {m.usable_gb:.0f} GB usable)" in head
    assert f"({m.kv_cache_gb / 40:.1f} GB) does not fit beside them" in head
    assert "--kv-cache-dtype fp8" in r.verdict.fixes[0].title and "needs flash attention" not in r.verdict.fixes[0].title


def test_speculative_decoding_gains_little_where_compute_is_scarce(store):
    r = service.ask(store, "raspberry pi 5 8gb, llama.cpp, qwen2.5 3b q4_k_m, would speculative decoding help?")
    p = r.verdict.prediction
    cost = 1 + 5 / p.prefill_tps * (p.decode_tps_per_seq or p.decode_tps)
    assert cost > 1.5 and f"costs about {cost:.1f}× one token's step" in r.reply
    assert not any(f.remedy == "speculative_decoding" for f in r.verdict.fixes)


def test_speculative_decoding_keeps_its_gain_on_a_gpu(store):
    r = service.ask(store, "rtx 4090 llama.cpp qwen2.5 32b q4_k_m 38 tok/s, how to make it faster?")
    spec = [f for f in r.verdict.fixes if f.remedy == "speculative_decoding"]
    assert spec and spec[0].speedup > 1.8


def test_an_f16_cache_said_in_a_follow_up_replaces_the_quantized_one(tmp_path):
    s = Store(str(tmp_path / "s.duckdb"))
    r1 = service.ask(s, "RTX 3090 24GB, ollama, qwen2.5 32b q4_k_m, I want 32k context for coding, "
                        "OLLAMA_KV_CACHE_TYPE=q4_0. how fast?")
    r2 = service.ask(s, "and with an f16 cache?", r1.facts)
    assert r2.facts.kv_cache_type == "f16"
    assert r2.verdict.allocated_gb > r1.verdict.allocated_gb + 5


@pytest.mark.parametrize("msg", ["if i paste 99999999k?", "プロンプトは99999999999トークンです"])
def test_an_absurd_length_handed_to_the_model_is_said_back_as_ignored(store, msg):
    e = extract(msg, store)
    assert "prompt_tokens" not in e.facts()
    assert any("is not a usable length" in n for n in e.not_understood)
