"""Round 52: how much context fits on a machine, and how much memory a context needs before a machine is named."""
from __future__ import annotations

import re

import pytest

from advisor import roofline, service
from advisor.diagnose.context_fit import context_capacity, needs_line, window_setting
from advisor.models import Scenario
from advisor.understand.symptoms import CONTEXT_ASKED, read_symptoms
from knowledge import catalog
from knowledge.store import Store


@pytest.mark.parametrize("text", [
    "How much context can I fit with Llama 3.1 8B on my 3090?",
    "what's the max context I can run",
    "How long a context can I use?",
    "maximum context length that fits in 24GB",
    "how many tokens of context will fit",
    "how big can the context window be",
    "what context size can I get on my M2 16GB with qwen 7b",
    "how much context will fit in vram",
    "whats the largest context i could use with 70b on 2x3090",
    "max ctx for qwen3 32b on a 4090?",
    "What context length should I use on 16GB?",
    "how many tokens can I fit in 24gb with mistral 7b",
    "biggest context window possible on a 5090",
    "which context length could we afford on two L4s",
])
def test_a_context_capacity_question_is_recognised(text):
    assert CONTEXT_ASKED.search(text)
    assert read_symptoms(text).context_asked


@pytest.mark.parametrize("text", [
    "how long does prefill take",
    "does more context slow it down",
    "how much context affects speed",
    "I set max context 8192 and it's slow",
    "with 32k context it gets slow",
    "how much vram do I need",
    "the context is long",
    "how long context processing takes is annoying",
])
def test_other_context_talk_is_not_a_capacity_question(text):
    assert not read_symptoms(text).context_asked


def test_capacity_is_free_memory_over_the_kv_cache_of_a_token(store):
    model = catalog.resolve_model(store, "llama 3.1 8b").value
    # Llama 3.1 8B: 32 layers × 8 KV heads × 128 dims × (K and V) × 2 bytes = 131,072 bytes a token at F16
    assert roofline.kv_bytes_per_token(model, 2.0) == 131072
    assert context_capacity(13.1072, model, 2.0) == 100_000
    assert context_capacity(13.1072, model, 2.0, users=4) == 25_000
    assert context_capacity(13.1072, model, 34 / 32) == 188_235  # q8_0: 34 bytes per 32 elements
    assert context_capacity(-1.0, model, 2.0) == 0


def _tokens_in(reply: str) -> int:
    m = re.search(r"room for ≈ ([\d,]+) tokens", reply)
    assert m, reply
    return int(m.group(1).replace(",", ""))


def test_the_answer_gives_the_tokens_left_after_the_weights(store):
    r = service.ask(store, "what's the max context I can run with Qwen2.5 32B Q4_K_M on a 3090 in llama.cpp?")
    assert r.verdict is not None and "Context that fits" in r.reply
    p = r.verdict.prediction
    free = p.memory.usable_gb - p.memory.weights_gb - p.memory.overhead_gb
    model = catalog.resolve_model(store, "qwen2.5 32b").value
    expected = free * 1e9 / roofline.kv_bytes_per_token(model, 2.0)  # 262,144 bytes a token (64 layers × 8 × 128)
    assert _tokens_in(r.reply) == pytest.approx(expected, rel=0.04)
    assert 12_000 < expected < 20_000
    # not the whole 131k window at F16, so the 8-bit cache is offered with its own count, about twice as many
    assert "An 8-bit cache (-ctk q8_0 -ctv q8_0" in r.reply
    n8 = int(re.search(r"halves each token's size: ≈ ([\d,]+) tokens", r.reply).group(1).replace(",", ""))
    assert n8 == pytest.approx(expected * 2 / (34 / 32), rel=0.04)
    assert "-c (--ctx-size) to about" in r.reply


def test_a_window_that_fits_whole_is_said_with_the_stated_cache_type(store):
    r = service.ask(store, "How much context can I fit with Llama 3.1 8B Q4_K_M on my RTX 3090 24GB if I use "
                           "-ctk q8_0 -ctv q8_0?")
    assert "at 70 KB a token in q8_0" in r.reply  # 131,072 × 34/32 / 2 = 69,632 bytes
    assert "so the whole window fits (9.1 GB)" in r.reply  # 131,072 tokens × 69,632 bytes
    assert "-c (--ctx-size) 131072" in r.reply
    assert "slows to ≈" in r.reply


def test_ollama_gets_its_own_settings(store):
    r = service.ask(store, "how much context can I fit with llama 3.3 70b q4_k_m on 2x 3090 in ollama")
    assert "num_ctx (or OLLAMA_CONTEXT_LENGTH)" in r.reply
    assert "OLLAMA_KV_CACHE_TYPE=q8_0" in r.reply
    assert window_setting("vllm") == "--max-model-len"


def test_memory_for_a_context_is_answered_before_the_machine_is_asked(store):
    r = service.ask(store, "How much RAM do I need to run Llama 3.1 8B with 128k context?")
    assert r.verdict is None and r.question is not None and r.question.field == "hardware"
    # 131,072 tokens × 131,072 bytes = 17.2 GB of F16 cache; Q4_K_M weights 4.9 GB; overhead 0.5 + 3 % of weights
    assert "KV cache 17.2 GB (F16)" in r.reply
    assert "≈ **22.7 GB**" in r.reply
    assert "with an 8-bit KV cache ≈ 14.7 GB" in r.reply
    # a 24 GiB card keeps 0.5 GB for its driver (25.3 GB usable); a 32 GB Mac gives the GPU 2/3 (21.3), a 36 GB one 24
    assert "a 24 GB graphics card or a Mac with 36 GB" in r.reply
    assert r.reply.index("Memory for") < r.reply.index("What will you run it on")


def test_no_memory_line_without_a_memory_question_or_with_a_machine(store):
    facts = Scenario(model="llama 3.1 8b", context_window=32768)
    assert needs_line(store, facts, asked=False) is None
    assert needs_line(store, facts.model_copy(update={"hardware": "nvidia-rtx-4090"}), asked=True) is None
    line = needs_line(store, facts, asked=True)
    assert line is not None and "32,768-token context" in line and "KV cache 4.3 GB (F16)" in line


@pytest.mark.parametrize("first, follow, want", [
    ("I run llama 3.1 70b q4 on an A100 80GB with vllm, 20 users", "its the SXM version btw", "nvidia-a100-80gb-sxm"),
    ("llama 3.1 8b on an H100 with vllm, 50 users", "it's the SXM5 one", "nvidia-h100-sxm"),
    ("llama 3.1 70b awq on an A100 80GB SXM with vllm, 20 users", "oh wait, pcie", "nvidia-a100-80gb-pcie"),
    ("llama 3.1 8b on an H100 PCIe with vllm, 50 users", "sorry, SXM", "nvidia-h100-sxm"),
])
def test_a_form_factor_follow_up_changes_the_card(store, first, follow, want):
    r1 = service.ask(store, first)
    r2 = service.ask(store, follow, r1.facts)
    assert r2.verdict is not None and r2.verdict.prediction is not None
    assert r2.verdict.prediction.hardware["id"].startswith(want)
    assert r2.verdict.prediction.hardware["id"] != r1.verdict.prediction.hardware["id"]


def test_a_pcie_link_is_not_a_form_factor(store):
    r1 = service.ask(store, "2x rtx 3090, llama 3.3 70b q4_k_m in llama.cpp")
    r2 = service.ask(store, "it's pcie 4.0 x8 on the second card", r1.facts)
    assert r2.facts.hardware == r1.facts.hardware


@pytest.mark.parametrize("msg, small, big", [
    ("Should I get the M4 Pro Mac mini with 48GB or 64GB for Llama 3.3 70B?", 48, 64),
    ("M4 Pro mac mini, 48GB or 64GB? Llama 3.3 70B at Q4_K_M", 48, 64),
    ("thinking about the M4 Max MacBook Pro with 36GB or 48GB for llama 3.3 70b", 36, 48),
])
def test_two_memory_sizes_of_one_mac_are_compared(store, msg, small, big):
    r = service.ask(store, msg)
    assert len(r.facts.compare_hardware or []) == 2
    assert {f"{small}GB", f"{big}GB"} <= {x.split()[-1] for x in r.facts.compare_hardware}
    # Llama 3.3 70B at Q4_K_M needs about 45 GB: more than a 48 GB Mac's 36 GB usable (3/4), less than 64 GB's 48
    if big == 64:
        assert "**Only the M4 Pro 64 GB holds the model for one person**" in r.reply
        assert "**M4 Pro 48 GB** cannot hold the model" in r.reply


_VLLM_LOG = """Running Qwen2.5-32B-Instruct-AWQ on a single RTX 4090 with vllm serve, --max-model-len 16384. With ~30 users it gets really slow and the log keeps printing this:

INFO 03-12 10:21:33 metrics.py:455] Avg prompt throughput: 812.4 tokens/s, Avg generation throughput: 96.3 tokens/s, Running: 14 reqs, Swapped: 0 reqs, Pending: 17 reqs, GPU KV cache usage: 99.6%, CPU KV cache usage: 0.0%.
WARNING 03-12 10:21:35 scheduler.py:1555] Sequence group chatcmpl-8f2 is preempted by PreemptionMode.RECOMPUTE mode because there is not enough KV cache space. This can affect the end-to-end performance. Increase gpu_memory_utilization or tensor_parallel_size to provide more KV cache memory. total_num_cumulative_preemption=51
INFO 03-12 10:21:43 metrics.py:455] Avg prompt throughput: 640.0 tokens/s, Avg generation throughput: 88.1 tokens/s, Running: 13 reqs, Swapped: 0 reqs, Pending: 18 reqs, GPU KV cache usage: 99.8%, CPU KV cache usage: 0.0%.
"""


def test_a_vllm_metrics_log_is_read_as_a_loaded_server():
    from advisor.importers import parse_output

    r = parse_output(_VLLM_LOG)
    assert r.format == "vllm-metrics"
    m = r.measurements[0]
    # the busiest interval: 14 running, 96.3 tok/s summed over them; the prompt throughput is no prefill rate
    assert (m.decode_tps, m.batch, m.prefill_tps) == (96.3, 14, None)
    assert m.tpot_s == pytest.approx(14 / 96.3)
    assert r.machine["kv_full"] is True and r.machine["preemptions"] == 51 and r.machine["requests_waiting"] == 18
    assert r.machine["kv_usage_pct"] == 99.8


def test_a_v1_log_line_with_room_is_not_a_full_cache():
    from advisor.importers import parse_output

    r = parse_output("INFO 05-02 08:11:09 [loggers.py:116] Engine 000: Avg prompt throughput: 0.0 tokens/s, Avg "
                     "generation throughput: 380.2 tokens/s, Running: 8 reqs, Waiting: 0 reqs, GPU KV cache usage: "
                     "41.0%, Prefix cache hit rate: 12.0%\n")
    assert r.format == "vllm-metrics" and r.measurements[0].batch == 8
    assert r.machine["kv_full"] is False


def test_a_full_kv_cache_leads_with_more_cache_per_request(tmp_path):
    st = Store(str(tmp_path / "s.duckdb"))
    r = service.ask(st, _VLLM_LOG)
    v = r.verdict
    assert r.reply.startswith("Read 1 measurement(s) from vllm-metrics output.")
    assert r.facts.kv_cache_full and r.facts.measured_streams == 14 and r.facts.concurrency == 14
    assert "The KV cache is full" in v.signals[0] and "it ran 14 requests at once" in v.signals[0]
    ids = [f.remedy or f.id for f in v.fixes]
    assert ids[0] == "kv_cache_quantization" and "--kv-cache-dtype fp8" in v.fixes[0].title
    assert "setup:kv_pool" in ids[:3]
    assert not any(i.startswith("batching") for i in ids)  # no bigger batch: the cache admits no more requests
    # the aggregate is judged against the 14 streams' aggregate, and each stream's rate is said
    assert "96.3 tok/s" in r.reply and "each of 14 streams writes at 6.9 tok/s" in r.reply
    assert v.status == "below_expected"
    # vLLM's --max-model-len caps a request; it reserves nothing per user: no "part goes to system RAM"
    assert "system RAM" not in r.reply.split("<details>")[0]


@pytest.mark.parametrize("words", ["vllm keeps logging preemptions when 40 people use it, llama 3.1 70b awq on 2x a6000",
                                   "the kv cache is full all the time on our vllm box (h100, llama 3.1 8b, 200 users)"])
def test_a_full_cache_said_in_words_is_the_finding(store, words):
    r = service.ask(store, words)
    assert r.verdict is not None and "The KV cache is full" in r.verdict.signals[0]


@pytest.mark.parametrize("msg", [
    "I run qwen2.5 14b in ollama on a 4060 ti 16gb with num_ctx 32768. Should I set OLLAMA_KV_CACHE_TYPE=q8_0?",
    "qwen2.5 14b, ollama, rtx 4060 ti 16gb, num_ctx 32768 - is it worth setting OLLAMA_KV_CACHE_TYPE=q8_0?",
])
def test_should_i_set_a_kv_cache_type_is_weighed(store, msg):
    sym = read_symptoms(msg)
    assert (sym.kv_cache_quant, sym.kv_quant_asked) == (None, "q8_0")
    r = service.ask(store, msg)
    # Qwen2.5 14B: 48 layers × 8 KV heads × 128 × 2 × 2 bytes = 196,608 bytes a token → 6.4 GB at 32,768 tokens
    assert "**8-bit KV cache (OLLAMA_KV_CACHE_TYPE=q8_0 with OLLAMA_FLASH_ATTENTION=1):** KV cache at 32,768 tokens × 1: " \
           "6.4 → 3.2 GB" in r.reply
    m = re.search(r"with it the 32,768-token context needs ([\d.]+) GB of the ([\d.]+) GB usable \(([\d.]+) GB now\)", r.reply)
    assert m and float(m.group(3)) - float(m.group(1)) == pytest.approx(3.2, abs=0.11)


def test_a_flag_in_use_is_still_judged_as_set(store):
    assert read_symptoms("does -ctk q8_0 make it fit?").kv_cache_quant == "q8_0"
    assert read_symptoms("I use OLLAMA_KV_CACHE_TYPE=q8_0 and it is slow").kv_cache_quant == "q8_0"


@pytest.mark.parametrize("text, asked", [
    ("can I use speculative decoding in ollama to speed up llama 3.3 70b?", True),
    ("should I use a draft model?", True),
    ("how do I use speculative decoding in lm studio", True),
    ("could we use speculative decoding on the 4090?", True),
    ("I use speculative decoding with a 1b draft and it's slow", False),
    ("I run speculative decoding already", False),
])
def test_can_i_use_speculative_decoding_is_a_question(text, asked):
    s = read_symptoms(text)
    assert s.speculative_asked is asked
    assert (s.speculative is None) is asked


def test_ollama_says_it_has_no_draft_model(store):
    r = service.ask(store, "can I use speculative decoding in ollama to speed up llama 3.3 70b q4_k_m on 2x 3090?")
    assert "Ollama has no draft-model option; llama-server (-md small.gguf) and LM Studio do" in r.reply
    assert not r.reply.startswith("**Yes")


def test_a_current_layer_split_is_not_judged_by_2023_builds(store):
    # a layer split reads each card's layers in turn: per token, total bytes ÷ one card's bandwidth, less a small
    # sync cost in current llama.cpp builds (2023 builds' slow splits have their own era level)
    def tps(msg):
        return service.ask(store, msg).verdict.prediction.decode_tps
    two_5090, two_3090 = tps("2x RTX 5090, Qwen2.5 32B Q8_0 in llama.cpp"), tps("2x RTX 3090, Qwen2.5 32B Q8_0 in llama.cpp")
    assert two_5090 > 1.5 * two_3090  # 1,792 against 936 GB/s a card
    one, two = tps("1x RTX 5090, Qwen2.5 14B Q8_0 in llama.cpp"), tps("2x RTX 5090, Qwen2.5 14B Q8_0 in llama.cpp")
    assert 0.8 * one < two <= one


def test_a_second_model_named_beside_two_machines_is_answered_for_each(store):
    r = service.ask(store, "Should I get the M4 Pro Mac mini with 48GB or 64GB? I want to run Qwen2.5 32B and maybe "
                           "Llama 3.3 70B")
    assert "| M4 Pro 48 GB | meets targets |" in r.reply  # the table: the first model named
    # Llama 3.3 70B at Q4_K_M needs ≈ 45 GB: over the 48 GB Mac's 36 GB usable (3/4), under the 64 GB one's 48
    assert re.search(r"\*\*Llama 3\.3 70B:\*\* fits only the M4 Pro 64 GB \([\d.]+ tok/s\); not the M4 Pro 48 GB\.",
                     r.reply)


@pytest.mark.parametrize("msg", ["M4 Pro mini 24 or 48 gb for qwen2.5 32b?",
                                 "should i get the 24gb or the 48gb m4 pro mac mini for qwen2.5 32b?",
                                 "m4 pro mac mini: 24gb vs 48gb, for Qwen2.5 32B"])
def test_two_sizes_written_either_side_of_the_mac_are_compared(store, msg):
    r = service.ask(store, msg)
    assert sorted(x.split()[-1] for x in r.facts.compare_hardware) == ["24GB", "48GB"]
    assert "**For one person, the M4 Pro 48 GB is the one that does the job**" in r.reply  # 32B Q4_K_M: ≈ 21 GB


def test_ollama_settings_words_and_typos(store):
    from advisor.understand.engine import engine_mentions

    assert [n for _, n in engine_mentions("should I set OLLAMA_KV_CACHE_TYPE=q8_0 on my 4060 ti")] == ["ollama"]
    assert read_symptoms("shud i turn on OLLAMA_KV_CACHE_TYPE=q8_0 or will it make it dumber").kv_quant_asked == "q8_0"
    assert read_symptoms("how many gigs of ram to run mistral small 24b at 8bit w/ 64k ctx?").asks_memory
    r = service.ask(store, "im using ollama with llama3.1:8b on my 3080 10gb, want num_ctx 32768. shud i turn on "
                           "OLLAMA_KV_CACHE_TYPE=q8_0 or will it make it dumber/slower?")
    assert "**8-bit KV cache (OLLAMA_KV_CACHE_TYPE=q8_0 with OLLAMA_FLASH_ATTENTION=1):**" in r.reply


def test_a_memory_question_is_answered_even_when_machines_are_picked_for_it(store):
    r = service.ask(store, "how much ram do i need to run qwen3 30b a3b with 128k contex?")
    # Qwen3-30B-A3B: 48 layers × 4 KV heads × 128 × 2 × 2 bytes = 98,304 bytes a token → 12.9 GB at 131,072 tokens
    assert r.reply.startswith("**Memory for Qwen3-30B-A3B at Q4_K_M with a 131,072-token context:**")
    assert "KV cache 12.9 GB (F16)" in r.reply
    r2 = service.ask(store, "how many gigs of ram to run mistral small 24b at 8bit w/ 64k ctx?")
    assert "**Memory for" in r2.reply and "65,536-token context" in r2.reply


def test_does_lm_studio_support_speculative_decoding_is_answered_for_lm_studio(store):
    r = service.ask(store, "does lm studio support speculative decoding? i've got a m2 max 64gb with qwen2.5 coder 32b "
                           "mlx 4bit")
    assert "**Speculative decoding (a small helper model guesses ahead):** LM Studio has it" in r.reply
    assert "LM Studio instead" not in r.reply


def test_the_context_answer_leads(store):
    r = service.ask(store, "what's the max context I can run with Qwen2.5 32B Q4_K_M on a 3090?")
    assert r.reply.startswith("**Context that fits:**")


def test_a_full_vllm_cache_estimates_each_requests_tokens(tmp_path):
    r = service.ask(Store(str(tmp_path / "s.duckdb")), _VLLM_LOG)
    # 24 GiB × 0.9 (vLLM's default share) − 17.0 GB AWQ weights − 1.0 GB overhead ≈ 5.2 GB of KV pool;
    # Qwen2.5 32B: 262,144 bytes a token; over 14 running requests ≈ 1,400 tokens each
    assert "each holds about 1,400 tokens (an estimate" in r.verdict.signals[0]


def test_an_impossible_vllm_log_line_is_skipped_not_stored():
    from advisor.importers import parse_output

    r = parse_output("INFO x metrics.py:455] Avg prompt throughput: 1.0 tokens/s, Avg generation throughput: 9000000.0 "
                     "tokens/s, Running: 1 reqs, Swapped: 0 reqs, Pending: 0 reqs, GPU KV cache usage: 350.0%, CPU KV "
                     "cache usage: 0.0%.\n")
    assert r.measurements == [] and "is no vLLM log line a server prints; skipped" in r.warnings[0]


def test_a_vllm_cache_state_is_not_given_to_a_llama_bench_table_pasted_with_it(tmp_path):
    table = ("| model | size | params | backend | ngl | test | t/s |\n| --- | ---: | ---: | --- | --: | ---: | ---: |\n"
             "| llama 8B Q4_K - Medium | 4.58 GiB | 8.03 B | CUDA | 99 | pp512 | 11234.50 ± 30.1 |\n"
             "| llama 8B Q4_K - Medium | 4.58 GiB | 8.03 B | CUDA | 99 | tg128 | 127.40 ± 0.5 |\n")
    log = _VLLM_LOG.splitlines()[2]
    r = service.ask(Store(str(tmp_path / "s.duckdb")), f"RTX 4090, is this normal?\n{table}\n{log}\n")
    assert not r.facts.kv_cache_full
    assert r.verdict is not None and "The KV cache is full" not in " ".join(r.verdict.signals)


def test_a_tight_allocated_context_is_never_comfortable(store):
    r = service.ask(store, "I have OLLAMA_KV_CACHE_TYPE=q4_0 set, Qwen3 14B on an RTX 3060 12GB with 64k context, "
                           "does it fit?")
    assert r.reply.startswith("**Yes, but only just (memory is tight)")
    assert "Nothing you need to change" not in r.reply
