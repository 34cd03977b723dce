"""Round 42: people named one by one are users; the headline names the phase that is off; absurd targets, windows
and GPU counts are said back; chunked prefill in each engine's words; a serving run's own streams."""

from __future__ import annotations

import pytest

from advisor.diagnose.context import build_ctx
from advisor.diagnose.remedies import _chunked
from advisor.intake import extract
from advisor.models import Scenario
from advisor.understand import understand


def _ctx(store, **kw):
    return build_ctx(store, understand(store, Scenario(**kw)))


@pytest.mark.parametrize(("text", "users"), [
    ("MacBook Air M2 16GB, Llama 3.1 8B for me and my kid", 2),
    ("my wife and I want to run gemma 3 on a 4070", 2),
    ("my partner and me share a mac studio", 2),
    ("Me and a friend want to run Qwen3 32B on a 3090", 2),
    ("me + 1 friend, m2 max", 2),
    ("me, my wife and our 3 kids on a mac mini m4", 5),
    ("for me and my two sons, qwen 7b", 3),
    ("me and my 2 kids on an RTX 4060", 3),
    ("One of my friends and I, RTX 3060", 2),
    ("a couple of my colleagues and me, on an L40S", 3),
    ("Mac mini M4 Pro 48GB for me and my wife, plus my son sometimes", 3),
    ("Ich und meine Frau, RTX 4070", 2),
    ("mi esposa y yo, una RTX 3060", 2),
    ("moi et mes deux enfants sur un mac mini", 3),
    ("ich, meine Frau und unsere zwei Kinder, M2 Pro", 4),
    # a count said as users wins; household members said as a count stay as they were read
    ("me and my colleague plus 8 users on an L4", 8),
    ("family of 4 on a 4090", 4),
    ("just me, rtx 4090", 1),
])
def test_people_named_one_by_one_are_counted(store, text, users):
    assert extract(text, store).concurrency == users


@pytest.mark.parametrize("text", [
    "I run llama with my friend's GPU",
    "I wonder if my son's laptop can run llama 8b",
    "my kid asked me if a 4060 can run llama 8b",
    "I have an RTX 4090 and 64 GB of RAM",
])
def test_people_mentioned_in_passing_are_no_count(store, text):
    assert extract(text, store).concurrency is None


def test_a_plural_without_a_number_is_read_as_two_and_said(store):
    e = extract("a 4090 for me and the kids", store)
    assert e.concurrency == 3
    assert any("counted as 3 people" in n and "say how many" in n for n in e.notes)


def test_the_household_reply_answers_for_both(tmp_path):
    from advisor import service
    from knowledge.store import Store

    r = service.ask(Store(str(tmp_path / "s.duckdb")), "MacBook Air M2 16GB, Llama 3.1 8B for me and my kid")
    assert r.facts.concurrency == 2 and "each of 2 users" in r.reply


_BENCH = """| model                          |       size |     params | backend    | threads |            test |                  t/s |
| ------------------------------ | ---------: | ---------: | ---------- | ------: | --------------: | -------------------: |
| llama 8B Q4_K - Medium         |   4.58 GiB |     8.03 B | Metal,BLAS |       4 |           pp512 |        191.00 ± 0.50 |
| llama 8B Q4_K - Medium         |   4.58 GiB |     8.03 B | Metal,BLAS |       4 |           tg128 |         17.21 ± 0.10 |"""


def test_the_headline_names_the_phase_that_is_off(tmp_path):
    # prefill 191 tok/s is above the M2's usual range, decode 17.2 tok/s is normal: the headline says which, so the
    # panel never reads "your numbers are above the usual range" beside a chat that calls decode normal
    from advisor import service
    from knowledge.store import Store

    v = service.ask(Store(str(tmp_path / "s.duckdb")), "MacBook Air M2 16GB, is this normal?\n" + _BENCH).verdict
    assert v.phase_status == {"prefill_tps": "above_expected", "decode_tps": "normal"}
    assert v.headline.endswith("— prefill above the usual range, decode normal.")


@pytest.mark.parametrize(("text", "said"), [
    ("can an L4 serve 20 users at -5 tok/s each with qwen 7b?", "'-5 tok/s' is no speed to aim for"),
    ("we need at least 0 tok/s on a 4090", "'0 tok/s' is no speed to aim for"),
    ("how many users can an H100 hold with llama 70b at 99999999k context each?",
     "'99999999k context' is no context window a model has"),
    ("llama 70b on H100 with 99999999 ctx", "'99999999 ctx' is no context window"),
    ("RTX 4090 (x0) llama 8b", "'x0' is not a number of GPUs"),
    ("RTX 4090 x0 llama 8b", "'x0' is not a number of GPUs"),
    ("0x RTX 4090 with llama 8b", "'0x' is not a number of GPUs"),
    ("-2 RTX 3090 with llama 8b", "'-2' is not a number of GPUs"),
])
def test_absurd_targets_windows_and_counts_are_said_back(store, text, said):
    e = extract(text, store)
    assert any(said in n for n in e.not_understood), e.not_understood
    assert e.target_decode_tps is None and e.context_window is None


@pytest.mark.parametrize(("text", "hardware", "count"), [
    ("RTX 3090 x2, llama 70b", "2x RTX 3090", 2), ("RTX 4090 (x3)", "3x RTX 4090", 3),
    ("can an L4 serve 20 users at 15 tok/s each with qwen 7b?", "L4", 1),
])
def test_good_counts_and_targets_still_read(store, text, hardware, count):
    e = extract(text, store)
    assert e.hardware == hardware and (e.gpu_count or 1) == count and not e.not_understood


@pytest.mark.parametrize(("engine", "words"), [
    ("vLLM", "on by default in vLLM 0.8 and later"),
    ("vLLM 0.6.3", "--enable-chunked-prefill"),
    ("SGLang", "--chunked-prefill-size"),
    ("llama-server", "-b (--batch-size, default 2048)"),
    (None, "on by default in vLLM 0.8 and later"),  # many users on a datacenter GPU: vLLM is assumed
])
def test_chunked_prefill_in_the_engines_words(store, engine, words):
    f = _chunked(_ctx(store, hardware="A100 80GB", model="llama 3.1 8b", concurrency=20, prompt_tokens=8000,
                      backend=engine))
    assert f is not None and f.id == "chunked_prefill" and words in f.title, f.title


def test_ollama_is_offered_no_chunked_prefill(store):
    # Ollama already reads prompts in num_batch chunks (512) beside the decoding requests
    assert _chunked(_ctx(store, hardware="RTX 4090", model="llama 3.1 8b", concurrency=4, prompt_tokens=8000,
                         backend="ollama")) is None


_SERVE = """vLLM 0.10.1 on 1x H100, Llama-3.1-8B-Instruct bf16, 16 users, bench serve says:
============ Serving Benchmark Result ============
Successful requests:                     400
Benchmark duration (s):                  120.2
Total input tokens:                      409600
Total generated tokens:                  102400
Request throughput (req/s):              3.33
Output token throughput (tok/s):         852.0
Mean TTFT (ms):                          210.5
Mean TPOT (ms):                          31.0
=================================================="""


def test_a_serving_run_counts_its_own_streams_when_the_users_named_disagree(tmp_path):
    # 852 tok/s × 0.031 s a token ≈ 26 requests decoding at once, not the 16 users named (over 1.5× apart)
    from advisor import service
    from knowledge.store import Store

    f = service.ask(Store(str(tmp_path / "s.duckdb")), _SERVE).facts
    assert (f.concurrency, f.measured_streams, f.prompt_tokens, f.gen_tokens) == (16, 26, 1024, 256)


def test_a_serving_run_keeps_the_users_named_when_littles_law_agrees(tmp_path):
    from advisor import service
    from knowledge.store import Store

    f = service.ask(Store(str(tmp_path / "s.duckdb")), _SERVE.replace("16 users", "24 users")).facts
    assert (f.concurrency, f.measured_streams) == (24, 24)


@pytest.mark.parametrize(("text", "target"), [
    ("Ich habe eine RTX 3090, läuft Qwen2.5 32B in Q4? Ich brauche etwa 20 Token pro Sekunde.", 20),
    ("Tengo un Mac Studio M2 Ultra 192GB, ¿puedo correr DeepSeek R1 671B? Necesito 10 tokens por segundo.", 10),
    ("J'ai une RTX 4070, il me faut au moins 15 tokens par seconde avec Mistral 7B", 15),
    ("RTX 4060, wir brauchen mindestens 25 Token pro Sekunde mit Llama 3.1 8B", 25),
])
def test_targets_in_other_languages_are_targets(store, text, target):
    e = extract(text, store)
    assert e.target_decode_tps == target and e.measured_decode_tps is None


@pytest.mark.parametrize(("text", "rate"), [
    ("我有一张RTX 4090，跑Qwen2.5 32B Q4_K_M 每秒 35 tokens，正常吗？", 35),
    ("RTX 4090で Llama 3.1 8B が毎秒30トークンしか出ない", 30),
    ("RTX 3060 qwen 7b 40 tokens/秒", 40),
    ("RTX 4090 llama 8b 초당 50 토큰", 50),
])
def test_rates_in_chinese_japanese_and_korean_are_read(store, text, rate):
    e = extract(text, store)
    assert e.measured_decode_tps == rate and e.prompt_tokens != rate


def test_a_wait_said_after_the_sentence_about_prompt_processing_is_the_ttft(store):
    e = extract("prompt processing on my m1 max 64gb is super slow with 20k token promts in lm studio, qwen3 30b a3b. "
                "like 2 minutes", store)
    assert e.measured_ttft_s == 120 and e.prompt_tokens == 20000
    assert extract("the model takes 2 minutes to load on my 3090, llama 70b", store).measured_ttft_s is None


@pytest.mark.parametrize(("text", "said"), [
    ("we're 12 devs, what should we buy? budget 15k", "Budget about $15,000"),
    ("best gpu under $1000 for llama 8b", "Budget about $1,000"),
    ("I can spend about 2000 euros on a PC for qwen 32b", "Budget about €2,000"),
    ("~1.5k € budget, which mac for 70b?", "Budget about €1,500"),
    ("2 grand max, what gpu for 13b?", "Budget about $2,000"),
    ("I have £800, which GPU?", "Budget about £800"),
    ("budget 1.500€ für eine GPU", "Budget about €1,500"),
    ("what to buy for under 3k", "Budget about $3,000"),
])
def test_a_budget_is_read_and_said_back(store, text, said):
    notes = extract(text, store).notes
    assert any(n.startswith(said) and "no prices" in n for n in notes), notes


@pytest.mark.parametrize("text", ["4090 costs $1800 vs 2x 3090 at $700 each", "we pay $2/hr for an H100",
                                  "under 4k tokens prompts on a 4090", "budget of 8k tokens on a 4090"])
def test_prices_rents_and_token_counts_are_no_budget(store, text):
    assert not any(n.startswith("Budget") for n in extract(text, store).notes)


def test_the_budget_is_said_in_a_buying_reply(tmp_path):
    from advisor import service
    from knowledge.store import Store

    r = service.ask(Store(str(tmp_path / "s.duckdb")), "we're 12 devs, want a coding assistant, what to buy, budget 15k")
    assert "You asked what to buy" in r.reply and "Budget about $15,000" in r.reply
    # a coding team's comparison runs on a coding model, said
    assert r.facts.model == "Qwen3 Coder Next" and "a common choice for a coding team" in r.reply


@pytest.mark.parametrize(("text", "model", "who"), [
    ("we're a family of four, we want a local chatbot, budget 2000 dollars what to buy", "Qwen3.6 27B", "a household"),
    ("what hardware to buy for our team of 20, general chat?", "Llama 3.3 70B", "a team"),
    ("I code all day, what should I buy to run a coding model locally?", "Qwen3 Coder 30B A3B", "one coder"),
])
def test_buying_without_a_model_compares_on_a_model_for_who_asks(tmp_path, text, model, who):
    from advisor import service
    from knowledge.store import Store

    r = service.ask(Store(str(tmp_path / "s.duckdb")), text)
    assert "You asked what to buy" in r.reply and r.facts.model == model and f"a common choice for {who}" in r.reply


def test_the_context_each_user_holds_sizes_the_comparison(tmp_path):
    # Qwen2.5 Coder 32B at BF16 is 65.5 GB; 16,384 tokens of KV cache are 4.3 GB a user: one H100 holds about 4
    from advisor import service
    from knowledge.store import Store

    r = service.ask(Store(str(tmp_path / "s.duckdb")),
                    "our startup needs to serve qwen2.5 coder 32b to 50 devs, 16k ctx each, what should we buy?")
    assert "memory for 16,384 tokens of context each" in r.reply
    line = next(ln for ln in r.reply.splitlines() if ln.startswith("| H100 SXM5 80GB |"))
    assert "4 of 50 at once" in line


def test_users_at_once_times_every_stream_at_its_full_context(store):
    # 18 streams × 8,192 tokens × 128 KiB of KV cache a token ≈ 19 GB read each step besides the 4.9 GB of weights
    import re

    from advisor import service

    head = service.ask(store, "how many users can one 4090 hold with llama 3.1 8b at 8k context?").reply.split("\n\n")[0]
    each = float(re.search(r"each gets ≈ ([\d.]+) tok/s", head).group(1))
    assert "at their full context" in head and 20 <= each <= 45, head


def test_users_at_once_counts_and_times_one_set_up(store):
    from advisor import service

    head = service.ask(store, "How many users can 2x H100 hold with Llama 3.3 70B, 64k context each?").reply
    head = head.split("\n\n")[0]
    assert "about 1 conversation of 65,536 tokens" in head and "served by vLLM with BF16 weights" in head
    assert "alone at its full context, it gets" in head


def test_a_target_missed_by_under_five_percent_is_just_about(store):
    from advisor import service

    r = service.ask(store, "we have an RTX 6000 Ada, want to serve llama 3.1 70b awq with vllm to 4 people, each user "
                           "needs 20 tok/s, possible?")
    assert r.reply.startswith("**Just about: ≈ 19") and "a little under the 20 tok/s you want" in r.reply


_LB4090 = """| model                          |       size |     params | backend    | ngl |            test |                  t/s |
| ------------------------------ | ---------: | ---------: | ---------- | --: | --------------: | -------------------: |
| llama 8B Q4_K - Medium         |   4.58 GiB |     8.03 B | CUDA       |  99 |           pp512 |     12834.21 ± 40.12 |
| llama 8B Q4_K - Medium         |   4.58 GiB |     8.03 B | CUDA       |  99 |           tg128 |        152.31 ± 0.50 |"""


def test_a_fast_llama_bench_prefill_is_no_prompt_cache(tmp_path):
    # words on the line right above the table are read; llama-bench reads the whole prompt, and llama.cpp's CUDA
    # kernels multiply quantized weights in INT8 on an Ada card's tensor cores (2× the FP16 figure)
    from advisor import service
    from knowledge.store import Store

    r = service.ask(Store(str(tmp_path / "s.duckdb")), "RTX 4090, normal?\n" + _LB4090)
    assert r.facts.hardware == "RTX 4090" and r.verdict is not None and r.verdict.benchmark_run
    assert "cached prompt" not in r.reply and "prompt cache" not in r.reply
    assert "A benchmark's own run reads the whole prompt (no cache)" in r.reply
    p = r.verdict.prediction
    assert p.prefill_ceiling_tps > 12834 and any("INT8 tensor-core rate" in a for a in p.assumptions)


def test_words_with_a_flag_right_above_a_paste_are_read():
    from advisor.intake._paste import prose_lines

    assert prose_lines("H100 SXM, vllm serving llama 3.1 8b, --max-concurrency 64:\n" + _LB4090) == \
        "H100 SXM, vllm serving llama 3.1 8b, --max-concurrency 64:"
    assert prose_lines("./llama-bench -m x.gguf -ngl 99 --flash-attn 1\n" + _LB4090) == ""


def test_an_unusable_rate_is_not_also_taken(store):
    e = extract("I get -5 tok/s on my RTX 3060 with llama 3.1 8b", store)
    assert e.measured_decode_tps is None and not any("taken as" in n for n in e.notes)
    assert any("'-5 tok/s' is not a usable speed" in n for n in e.not_understood)


def test_a_count_after_the_name_too_large_is_said(store):
    e = extract("RTX 4090 (x1000) llama 8b", store)
    assert e.hardware is None and any("1,000 GPUs in one machine" in n for n in e.not_understood)


_SERVE_Q = """vllm bench serve on 1x H100 80GB, llama 3.1 8b, 64 concurrency. good or bad?

============ Serving Benchmark Result ============
Successful requests:                     500
Maximum request concurrency:             64
Benchmark duration (s):                  212.4
Total input tokens:                      1024000
Total generated tokens:                  128000
Request throughput (req/s):              2.35
Output token throughput (tok/s):         602.6
Mean TTFT (ms):                          8420.5
Mean TPOT (ms):                          61.4
=================================================="""


def test_answering_which_h100_keeps_the_pasted_run(tmp_path):
    # "H100 80GB" is PCIe or SXM; answering the question with one of its choices is the same machine said exactly
    from advisor import service
    from knowledge.store import Store

    st = Store(str(tmp_path / "s.duckdb"))
    r1 = service.ask(st, _SERVE_Q)
    assert r1.question is not None and r1.question.field == "hardware"
    r2 = service.ask(st, "H100 SXM5 80GB", r1.facts)
    assert "Set aside" not in r2.reply and r2.verdict is not None
    assert r2.verdict.status == "below_expected" and r2.facts.measured_decode_tps == 602.6


def test_a_serving_run_is_stored_with_one_requests_lengths_and_its_streams(tmp_path):
    from advisor import service
    from knowledge.store import Store

    st = Store(str(tmp_path / "s.duckdb"))
    service.ask(st, _SERVE_Q.replace("on 1x H100 80GB", "on 1x H100 SXM"))
    rows = st.query("select hw_id, prompt_tokens, gen_tokens, batch, decode_tps from results where origin = 'import'")
    assert [tuple(r.values()) for r in rows] == [("nvidia-h100-sxm", 2048, 256, 64, 602.6)]


_DEV3060 = """ggml_cuda_init: found 1 CUDA devices:
  Device 0: NVIDIA GeForce RTX 3060, compute capability 8.6, VMM: yes
| model                          |       size |     params | backend    | ngl |            test |                  t/s |
| ------------------------------ | ---------: | ---------: | ---------- | --: | --------------: | -------------------: |
| llama 8B Q4_K - Medium         |   4.58 GiB |     8.03 B | CUDA       |  99 |           pp512 |      2834.21 ± 40.12 |
| llama 8B Q4_K - Medium         |   4.58 GiB |     8.03 B | CUDA       |  99 |           tg128 |        131.45 ± 0.50 |"""


def test_a_benchmark_over_the_machines_roofline_is_not_its_result(tmp_path):
    # 131 tok/s is 1.7× what the 3060's 360 GB/s allow for 4.6 GB a token: said, not stored as the 3060's, and no
    # "nothing to change"; the Device line is the paste's, not words that name a second machine
    from advisor import service
    from knowledge.store import Store

    st = Store(str(tmp_path / "s.duckdb"))
    r = service.ask(st, "my RTX 4090 llama-bench:\n" + _DEV3060)
    assert "judged on the GeForce RTX 3060 12GB" in r.reply
    assert "is more than the GeForce RTX 3060 12GB's memory can deliver" in r.reply
    assert "Nothing you need to change" not in r.reply and "You also mentioned" not in r.reply
    hw = {r["hw_id"] for r in st.query("select hw_id from results where origin = 'import'")}
    assert "nvidia-rtx-3060" not in hw


def test_a_near_limit_spill_is_said_as_probable_with_the_engines_check(store):
    from advisor import service

    r = service.ask(store, "llama.cpp on my RTX 3060 12GB gives 8 tok/s on qwen2.5 14b q4_k_m, why?")
    assert r.reply.startswith("**Probably spilling out of GPU memory: 8 tok/s") and "instead of about 3" in r.reply
    assert "offloaded N/M layers" in r.reply and "ollama ps" not in r.reply


def test_a_huge_model_is_offered_a_low_bit_format_that_fits(store):
    # DeepSeek R1 671B: Q4_K_M needs 423 GB; IQ1_S (1.56 bits) needs about 135 GB of the 144 GB an M2 Ultra 192GB
    # lets the GPU use — the 1.58-bit dynamic GGUF people run there. A 70B is never offered under 3 bits, a 32B under 3.5.
    from advisor import service
    from advisor.diagnose.weights import min_fit_bits

    v = service.ask(store, "Mac Studio M2 Ultra 192GB, can I run DeepSeek R1 671B? I need 10 tok/s").verdict
    fit = next(f for f in v.fixes if f.id == "fit_in_memory")
    assert "IQ1_S" in fit.title and "answers get visibly worse below about 3 bits" in fit.title
    assert (min_fit_bits(671), min_fit_bits(235), min_fit_bits(70), min_fit_bits(32)) == (1.5, 2.0, 3.0, 3.5)


def test_smaller_models_come_from_current_lines_and_hold_the_prompt(store):
    from advisor import service

    v = service.ask(store, "M3 Max 36GB llama 3.3 70b").verdict
    small = next(f for f in v.fixes if f.id == "smaller_model")
    assert "Qwen3.6 27B" in small.title and "Jamba" not in small.title and "Mixtral" not in small.title
    v = service.ask(store, "GTX 1080 deepseek r1 671b prompt 100000 tokens").verdict
    small = next(f for f in v.fixes if f.id == "smaller_model")
    assert "TinyLlama" not in small.title  # a 2,048-token window cannot hold a 100,000-token prompt


def test_a_rate_in_words_far_over_the_roofline_is_not_a_result_to_improve(store):
    from advisor import service

    r = service.ask(store, "I get 1000 tok/s with llama 3.1 8b q4_k_m on my RTX 3060")
    assert "is more than the GeForce RTX 3060 12GB's memory can deliver" in r.reply
    assert "or are a total over several requests" in r.reply and "Nothing you need to change" not in r.reply


def test_an_edited_llama_perf_rate_is_said():
    from advisor.importers import parse_output

    text = ("llama_perf_context_print: prompt eval time =     500.00 ms /   100 tokens (    5.00 ms per token,   200.00 "
            "tokens per second)\nllama_perf_context_print:        eval time =    1000.00 ms /   100 runs   (   10.00 ms "
            "per token,   900.00 tokens per second)\nllama_perf_context_print:       total time =    1600.00 ms /   200 "
            "tokens\n")
    out = parse_output(text)
    # (round 49: a rate that does not add up is not kept, and said; the phase that adds up stays)
    assert out.measurements[0].decode_tps is None and out.measurements[0].prefill_tps == 200
    assert any("printed 900 tokens per second disagrees with its own" in w and "(100 tok/s): not kept" in w
               for w in out.warnings)


def test_how_many_cards_leads_with_the_fewest_that_meets_the_targets(store):
    from advisor import service

    r = service.ask(store, "how many H100s do we need to serve llama 3.3 70b to 300 users?")
    # FP8, the build vLLM serves on Hopper when BF16 does not fit one card (round 50): two hold the 300
    assert r.reply.startswith("**For 300 people at once, 2× H100 PCIe 80GB is the fewest that meets the targets**")
    rows = [ln for ln in r.reply.splitlines() if ln.startswith("| 2× H100")]
    assert len(rows) == 1  # an option already compared is not added again


def test_more_users_than_one_server_holds_are_answered_in_servers(store):
    # 8× H100 PCIe holds 2,048 conversations at BF16 and streams ≈ 5,300 tok/s in all: ≈ 530 users at 10 tok/s each,
    # so 5,000 users need about 10 such servers (the comparison itself runs at its 4,096-user cap)
    import re

    from advisor import service

    r = service.ask(store, "how many H100s do we need to serve llama 3.3 70b to 5000 users?")
    head = r.reply.split("\n\n")[0]
    held = int(re.search(r"^\*\*Even 8× H100 PCIe 80GB holds ([\d,]+) of the 5,000 users at once", head).group(1)
               .replace(",", ""))
    assert 2000 <= held <= 2600  # FP8 (round 50): about 2,300 conversations
    n = int(re.search(r"about ([\d,]+) such servers", head).group(1).replace(",", ""))
    assert 6 <= n <= 16 and "serve all 5,000 at 10 tok/s each" in head


_SGLANG_UNCAPPED = """sglang on an A100 80GB, llama 3.1 8b
============ Serving Benchmark Result ============
Backend:                                 sglang
Traffic request rate:                    inf
Max reqeuest concurrency:                not set
Successful requests:                     200
Benchmark duration (s):                  60.2
Total input tokens:                      204800
Total generated tokens:                  51200
Request throughput (req/s):              3.32
Output token throughput (tok/s):         1276.0
Mean TTFT (ms):                          -300.00
Mean ITL (ms):                           78.00
=================================================="""


def test_an_uncapped_serving_run_counts_its_streams_from_the_mean_itl(tmp_path):
    # no concurrency cap and no TPOT: 1,276 tok/s × 0.078 s between tokens ≈ 100 requests decoding at once; a negative
    # mean TTFT is no time and is left out
    from advisor import service
    from knowledge.store import Store

    r = service.ask(Store(str(tmp_path / "s.duckdb")), _SGLANG_UNCAPPED)
    assert r.facts.measured_streams == 100 and r.facts.measured_ttft_s is None
    assert "each of 100 streams writes at 12.8 tok/s" in r.reply and r.verdict.status == "below_expected"


def test_an_allocated_context_that_does_not_fit_is_what_the_answer_says(store):
    # Gemma 3 27B at Q4_K_M fits a 4090 for the conversation itself (18.2 GB) but not with 131,072 tokens allocated
    from advisor import service

    r = service.ask(store, "RTX 4090 gemma 3 27b q4_k_m 128k context")
    assert r.reply.startswith("**Not with the 131,072-token context you allocate: with the weights it needs 29.0 GB")
    assert "with a context that fits" in r.reply and "has spilled" not in r.reply


def test_a_named_option_that_does_the_job_is_not_scaled_out(store):
    from advisor import service

    r = service.ask(store, "does a 5090 make sense vs two used 3090s for llama 3.3 70b?")
    assert r.reply.startswith("**For one person, the 2× RTX 3090 24 GB is the one that does the job")
    assert "2× RTX 5090" not in r.reply
    assert "| option | status | first word | tok/s |" in r.reply  # one person: no "users fit" or totals


def test_two_options_as_fast_as_each_other_are_told_apart_by_the_rest(store):
    from advisor import service

    head = service.ask(store, "L4 vs T4 for qwen 7b").reply.split("\n\n")[0]
    assert "stream at about the same speed" in head and "the L4 24 GB reads prompts faster" in head
    assert "has more memory (24 vs 16 GB)" in head


@pytest.mark.parametrize(("engine", "knob"), [("ollama", "OLLAMA_NUM_PARALLEL"), ("vLLM", "--max-num-seqs"),
                                              ("SGLang", "--max-running-requests"), ("llama-server", "llama-server -np")])
def test_batching_names_the_engines_own_setting(store, engine, knob):
    from advisor.diagnose.remedies import batch_knob

    assert batch_knob(_ctx(store, hardware="RTX 4090", model="llama 3.1 8b", backend=engine)).startswith(knob)


def test_speculative_decoding_on_a_moe_counts_the_experts_its_check_reads(store):
    # Qwen3-30B-A3B (8 of 128 experts): 5 tokens checked at once touch 1 − (15/16)^5 ≈ 28 % of the experts against
    # 6.25 % for one token; with the attention and dense weights every token reads, a step reads ≈ 3.1× the bytes; the step's fixed part (launches, attention)
    # does not grow, so on a 4090 the check costs ≈ 1.7 steps and the Leviathan speed-up falls from 2.0× to ≈ 1.3×
    from advisor.diagnose.remedies import _speculative, moe_verify_cost
    from advisor.perf.step import weight_bytes_step

    moe = _ctx(store, hardware="RTX 4090", model="qwen3 30b a3b", quant="q4_k_m")
    m, q = moe.sit.model, moe.sit.quant
    grow = weight_bytes_step(m, q.bits_per_weight, 5) / weight_bytes_step(m, q.bits_per_weight, 1)
    assert 2.8 <= grow <= 3.4
    v = moe_verify_cost(moe)
    assert 1.3 <= v < grow
    f = _speculative(moe)
    assert f is not None and 1.05 <= f.speedup < 1.6 and "mixture of experts" in f.why
    dense = _ctx(store, hardware="RTX 4090", model="qwen 2.5 14b", quant="q4_k_m")
    # dense: the check costs one weight read plus 5 tokens' arithmetic (5 ÷ prefill × decode, ≈ 0.1 on a 4090):
    # (1 − 0.7⁵) ÷ (0.3 × (4 × 0.1 + 1.1)) ≈ 1.85× instead of the bandwidth-only 2.0×
    from advisor.roofline import speculative_speedup
    p = dense.pred
    v = 1 + 5 / p.prefill_tps * (p.decode_tps_per_seq or p.decode_tps)
    assert moe_verify_cost(dense) == 1.0 and 1.05 < v < 1.2
    assert _speculative(dense).speedup == pytest.approx(speculative_speedup(0.7, 4, 0.1, v), rel=1e-6)
    assert 1.75 < _speculative(dense).speedup < 1.95


def test_an_unknown_machine_given_to_import_is_said_with_the_closest(tmp_path):
    from advisor import service
    from knowledge.store import Store

    out = service.import_output(Store(str(tmp_path / "s.duckdb")), _LB4090, hardware="zzz unknown gpu")
    assert "I do not know the machine “zzz unknown gpu” (closest:" in out.message
    assert "kept without one" in out.message


def test_the_same_machine_named_several_ways_is_compared_once(store):
    from advisor import compare as cmp

    req = cmp.CompareRequest(model="llama 3.1 8b", candidates=["RTX 4090", "rtx 4090", "nvidia-rtx-4090", "RTX 3090"])
    names = [c["hardware"]["id"] for c in cmp.compare_request(store, req)["candidates"]]
    assert sorted(names) == ["nvidia-rtx-3090", "nvidia-rtx-4090"]
    from advisor.compare.output import table_markdown

    assert ", 1 user, " in table_markdown(cmp.compare_request(store, req))


def test_a_memory_speed_is_no_cpu_model_number():
    from knowledge.cpu_uarch import sku_cores

    assert sku_cores("Desktop dual-channel DDR5-5600") is None and sku_cores("6000 MT/s RAM") is None
    assert sku_cores("Ryzen 5 5600 with DDR4-3200")[0] == 6


def test_a_model_over_a_cards_memory_runs_split_with_system_ram(store):
    from advisor import service

    r = service.ask(store, "RTX 4090 with 64GB RAM, llama 3.3 70b q4_k_m")
    assert "more than the card's 25.8 GB" in r.reply and "this machine's whole" not in r.reply
    assert "Split between the card and system RAM" in r.reply and "swaps" not in r.reply


def test_no_gpu_said_after_a_card_sets_the_card_aside(store):
    from advisor import service

    r1 = service.ask(store, "RTX 3060 12GB, llama 3.1 8b q4_k_m")
    r2 = service.ask(store, "sorry, I meant 0 GPUs", r1.facts)
    assert r2.facts.hardware is None and r2.facts.hardware_kind == "cpu" and r2.facts.memory_gb is None
    assert r2.question is not None and "CPU" in r2.question.text


@pytest.mark.parametrize("text", ["1" * 25_000, "9" * 5000 + " GB", "1 " * 12_000, "me and my wife and " * 1000,
                                  "$1 " * 6000, "-2 RTX 3090 " * 1500, "每秒" + "1" * 20_000, "1" * 20_000 + " tokens/秒",
                                  "budget " * 3000, "(x" + "9" * 20_000])
def test_long_runs_are_read_in_linear_time(store, text):
    # the unit patterns of other languages once backtracked over every start in a run of digits (43 s for 25,000 "1"s)
    import time

    t0 = time.perf_counter()
    extract(text, store)
    assert time.perf_counter() - t0 < 5.0


def test_one_slow_stream_on_a_serving_engine_points_at_its_settings(store):
    # vLLM and SGLang never run layers on the CPU unless told to: no "-ngl 99" for them
    from advisor import service

    r = service.ask(store, "sglang serving deepseek-v3 fp8 on 8xH200, single request decode is only 35 tok/s")
    assert "-ngl" not in r.reply and "layers are most likely running on the CPU" not in r.reply
    assert r.verdict.fixes[0].title.startswith("Let the engine capture CUDA graphs")


@pytest.mark.parametrize(("reply", "hardware"), [("actually it's the SXM one", "H100 SXM5"), ("SXM", "H100 SXM5"),
                                                 ("the PCIe one", "H100 PCIe"), ("the second", "H100 SXM5")])
def test_a_choice_is_picked_by_a_word_only_it_has(store, reply, hardware):
    from advisor import service

    r1 = service.ask(store, "I get 20 tok/s with llama 3.1 8b on an H100 with vLLM")
    assert r1.question is not None and r1.question.choices == ["H100 PCIe 80GB", "H100 SXM5 80GB"]
    r2 = service.ask(store, reply, r1.facts)
    assert r2.facts.hardware == hardware and r2.facts.measured_decode_tps == 20


def test_the_answered_machine_keeps_the_count_said_before(store):
    from advisor import service

    r1 = service.ask(store, "2x H100 80GB (TP=2), llama 3.3 70b fp8 with vllm, 32 users, is 600 tok/s total normal?")
    r2 = service.ask(store, "H100 SXM5 80GB", r1.facts)
    assert r2.facts.gpu_count == 2 and r2.verdict is not None


_SERVE_EDITED = """vLLM serving Llama 3.1 8B on one RTX 4090, is this normal?
============ Serving Benchmark Result ============
Successful requests:                     100
Maximum request concurrency:             8
Benchmark duration (s):                  45.1
Total input tokens:                      102400
Total generated tokens:                  12800
Request throughput (req/s):              2.22
Output token throughput (tok/s):         28381.0
Mean TTFT (ms):                          120.5
Mean TPOT (ms):                          26.5
=================================================="""


def test_a_serving_total_over_its_streams_roofline_is_not_the_machines(tmp_path):
    # 8 streams of an 8B at Q... BF16 on a 4090 can total at most 8 × its one-stream ceiling (≈ 500 tok/s)
    from advisor import service
    from knowledge.store import Store

    st = Store(str(tmp_path / "s.duckdb"))
    r = service.ask(st, _SERVE_EDITED)
    assert "is more than the GeForce RTX 4090's memory can deliver" in r.reply and "the line was edited" in r.reply
    assert "Nothing you need to change" not in r.reply
    rows = st.query("select hw_id, batch, model from results where origin = 'import'")
    assert [(x["hw_id"], x["batch"], x["model"]) for x in rows] == [(None, 8, "Llama 3.1 8B")]


def test_a_setting_then_a_sentence_above_a_paste_is_read():
    from advisor.intake._paste import prose_lines

    text = "TP=2 on 2x H100 SXM, Llama 3.3 70B FP8, vllm 0.6.3, 32 users\n" + _LB4090 + "\nmodel=llama n_ctx=4096\n"
    assert prose_lines(text) == "TP=2 on 2x H100 SXM, Llama 3.3 70B FP8, vllm 0.6.3, 32 users"


@pytest.mark.parametrize("text", ["RTX 4090 " + " " * 19_000 + " llama 8b", "RTX 4090\n" + " \n" * 9000 + "llama 8b",
                                  "RTX 4090\t" + "\t " * 9000, "ok " * 6000])
def test_blank_runs_are_read_in_linear_time(store, text):
    import time

    t0 = time.perf_counter()
    e = extract(text, store)
    assert time.perf_counter() - t0 < 3.0 and (e.hardware == "RTX 4090" or text.startswith("ok"))


@pytest.mark.parametrize("line", [" " * 4000, "1" * 4000, "a " * 2000, "Time to first token" + " " * 3900])
def test_importer_line_patterns_are_linear(line):
    import time

    from advisor.importers import _util, exllamav2, llama_cpp, lmstudio, mlx_lm

    t0 = time.perf_counter()
    for pat in (lmstudio._LMS_LINE, lmstudio._STATUS, _util._GO_PART, exllamav2._BPW, llama_cpp._PAIR, mlx_lm._PAIR):
        pat.match(line)
        list(pat.finditer(line))
    assert time.perf_counter() - t0 < 1.0


def test_a_671b_on_cpu_cores_is_offered_a_two_bit_block_format(store):
    # decode reads every weight once a token: Q4_K_M (4.9 bits) → Q2_K (3.2 bits) is ≈ 1.5× faster on the same memory
    v = _ctx(store, hardware="AMD EPYC 9654 single socket, 12x DDR5-4800", memory_gb=768, backend="llama.cpp CPU",
             model="DeepSeek-V3 671B (37B active)", params_b=671, quant="Q4_K_M", measured_decode_tps=7.0)
    from advisor.diagnose.weights import _quantization

    f = _quantization(v)
    assert f is not None and f.title == "Use a Q2_K build" and 1.3 <= f.speedup <= 2.0


_MIXED = _SERVE_Q.replace("on 1x H100 80GB", "on 1x H100 SXM") + "\n" + _LB4090.replace("CUDA       ", "CUDA       ")


def test_rows_of_another_tool_pasted_with_a_serving_run_keep_their_own_lengths(tmp_path):
    from advisor import service
    from knowledge.store import Store

    st = Store(str(tmp_path / "s.duckdb"))
    service.ask(st, _MIXED)
    rows = st.query("select prompt_tokens, gen_tokens, batch, decode_tps, prefill_tps from results "
                    "where origin = 'import' order by decode_tps nulls last")
    bench = [r for r in rows if r["batch"] in (None, 1)]
    assert any(r["prompt_tokens"] == 512 for r in bench) and not any(r["prompt_tokens"] == 2048 for r in bench)


@pytest.mark.parametrize("text", [
    "Is it worth adding a draft model (Llama 3.2 1B) for speculative decoding to Llama 3.3 70B Q4_K_M on 2x RTX 3090?",
    "llama-server -m llama-3.3-70b.gguf -md llama-3.2-1b.gguf on 2x 3090",
])
def test_a_draft_model_is_not_the_model_judged(store, text):
    e = extract(text, store)
    assert "70b" in (e.model or "").lower() and any("is the draft model" in n for n in e.notes)


def test_a_threshold_on_the_wait_is_a_target(store):
    e = extract("RAG with 30k token prompts on an A10G, qwen 2.5 7b: how many concurrent requests before TTFT goes "
                "over 5s?", store)
    assert e.target_ttft_s == 5 and e.measured_ttft_s is None


@pytest.mark.parametrize(("text", "window"), [("context is usually 8k, RTX 4090 qwen 14b", 8192),
                                              ("Kontext ist meistens 8k, RTX 4090", 8192),
                                              ("RTX 4060 8 Go, Mistral 7B, contexte 8k", 8192),
                                              ("contexto de 16k en una RTX 3090", 16384)])
def test_context_said_several_ways(store, text, window):
    assert extract(text, store).context_window == window


def test_a_slow_first_reply_after_lunch_is_the_model_reloading(store):
    from advisor import service

    r = service.ask(store, "RTX 3080, ollama, llama 3.1 8b: after lunch the first reply takes like 25 sec, then it's fast")
    assert r.facts.measured_ttft_s == 25 and "Ollama unloads an idle model" in r.reply


def test_flash_attention_is_offered_only_where_it_is_a_switch(store):
    from advisor.diagnose.remedies import _flash

    for engine in ("vLLM", "SGLang", "mlx"):
        hw = "M2 Ultra 192GB" if engine == "mlx" else "H100"
        assert _flash(_ctx(store, hardware=hw, model="llama 3.1 8b", prompt_tokens=16000, backend=engine)) is None
    f = _flash(_ctx(store, hardware="RTX 4090", model="llama 3.1 8b", prompt_tokens=16000, backend="llama.cpp"))
    assert f is not None and "-fa on" in f.title
    on = _LB4090.replace("| ngl |", "| ngl | fa |").replace("| --: |", "| --: | -: |", 1).replace("|  99 |", "|  99 |  1 |")
    ran = _ctx(store, hardware="RTX 4090", model="llama 3.1 8b", prompt_tokens=16000, backend="llama.cpp",
               raw_output=on)
    assert _flash(ran) is None


def test_ollama_users_are_batched_with_ollamas_own_setting(store):
    from advisor.diagnose.remedies import _batching

    f = _batching(_ctx(store, hardware="RTX 4080 Super", model="qwen 2.5 14b", concurrency=4, backend="ollama"))
    assert f is not None and "OLLAMA_NUM_PARALLEL=4" in f.title and "llama-server" not in f.title


def test_one_bad_fact_sent_to_the_api_costs_only_that_fact(store):
    # a client that sends facts with one unusable value keeps the conversation: that value is dropped and said
    import json

    from ui.api import api_ask, salvage_facts

    reply, _, facts = api_ask(store, "is it fast?", json.dumps({"hardware": "RTX 4090", "model": "llama 3.1 8b",
                                                                "concurrency": -5, "colour": "red"}))
    f = json.loads(facts)
    assert (f["hardware"], f["model"], f["concurrency"]) == ("RTX 4090", "llama 3.1 8b", None)
    assert reply.startswith("I could not use colour, concurrency from the facts you sent")
    assert "tok/s" in reply
    assert salvage_facts("[1, 2]") == (None, []) and salvage_facts("{broken") == (None, [])


@pytest.mark.parametrize(("text", "said"), [("budget -5000 dollars", "'5000 dollars' is no budget"),
                                            ("budget -$5000", "'$5000' is no budget"),
                                            ("budget $0 for a gpu", "'budget $0' is no budget")])
def test_an_unusable_budget_is_said_back_not_read(store, text, said):
    e = extract(text, store)
    assert not any(n.startswith("Budget") for n in e.notes)
    assert any(said in n for n in e.not_understood), e.not_understood
