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
