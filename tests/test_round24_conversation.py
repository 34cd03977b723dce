"""A measured rate belongs to the set-up it was measured on; model names written as slugs; compare's format.

Found by a first-time user: "what about nemotron?" after "granite gets 45 tok/s" judged nemotron against
granite's 45 tok/s, and "my real prompts are 16k" judged a pp512 run against a 16k-token prompt.
"""

from __future__ import annotations

import pytest

from advisor import compare as cmp
from advisor import intake, service
from knowledge import catalog
from knowledge.store import Store


@pytest.fixture(scope="module")
def store() -> Store:
    return Store(":memory:")


def _chat(store, *msgs):
    facts, r = None, None
    for m in msgs:
        r = service.ask(store, m, facts)
        facts = r.facts
    return r


FIRST = "I run llama 3.1 8b Q4_K_M on an RTX 3060 with llama.cpp and get 45 tok/s. Is that normal?"


@pytest.mark.parametrize("follow", [
    "what about qwen3 14b?",
    "and gemma 3 12b?",
    "what if I had an RTX 4090?",
    "how about on a Mac Studio M2 Ultra",
    "what about Q8_0?",
])
def test_a_what_if_sets_the_measured_rate_aside(store, follow):
    r = _chat(store, FIRST, follow)
    assert r.facts.measured_decode_tps is None
    assert any(n.startswith("Set aside the 45 tok/s decode") for n in r.notes)
    assert r.verdict is None or r.verdict.status == "not_measured"


@pytest.mark.parametrize("follow", [
    "sorry, I meant qwen3 8b",
    "actually it's Q8_0",
    "that was on an RTX 4090",
    "it was llama 3.2 3b",
])
def test_a_correction_keeps_the_measured_rate(store, follow):
    r = _chat(store, FIRST, follow)
    assert r.facts.measured_decode_tps == 45.0
    assert not any(n.startswith("Set aside") for n in r.notes)


def test_the_same_model_spelled_otherwise_keeps_the_rate(store):
    r = _chat(store, FIRST, "what about Llama-3.1-8B?")
    assert r.facts.measured_decode_tps == 45.0


TABLE = """| model                          |       size |     params | backend    | ngl |            test |                  t/s |
| ------------------------------ | ---------: | ---------: | ---------- | --: | --------------: | -------------------: |
| llama 8B Q4_K - Medium         |   4.58 GiB |     8.03 B | CUDA       |  99 |           pp512 |      2812.45 ± 12.10 |
| llama 8B Q4_K - Medium         |   4.58 GiB |     8.03 B | CUDA       |  99 |           tg128 |         62.31 ± 0.20 |
| llama 8B Q4_K - Medium         |   4.58 GiB |     8.03 B | CUDA       |  99 |  pp512 @ d16384 |       910.20 ± 3.00 |
| llama 8B Q4_K - Medium         |   4.58 GiB |     8.03 B | CUDA       |  99 |  tg128 @ d16384 |         41.20 ± 0.10 |
"""


def test_longer_prompts_after_a_paste_set_its_rates_aside(store):
    r = _chat(store, "RTX 3060 12GB, is this normal?\n" + TABLE, "my real prompts are 16k tokens, answers about 400")
    assert r.facts.prompt_tokens == 16000 and r.facts.measured_prefill_tps is None
    assert any("that was for 512-token prompts" in n for n in r.notes)


def test_a_long_context_question_judges_the_deep_rows(store):
    deep = _chat(store, "RTX 3060 12GB. why is prompt processing slow at 16k context?\n" + TABLE)
    assert (deep.facts.depth, deep.facts.measured_prefill_tps, deep.facts.measured_decode_tps) == (16384, 910.2, 41.2)
    plain = _chat(store, "RTX 3060 12GB, is this normal?\n" + TABLE)
    assert (plain.facts.depth or 0, plain.facts.measured_prefill_tps) == (0, 2812.45)


@pytest.mark.parametrize("msg, model", [
    ("what about nemotron-3-super-120b-a12b?", "nemotron-3-super-120b-a12b"),
    ("qwen3.5-35b-a3b on a 4090", "qwen3.5-35b-a3b"),
    ("deepseek-r1-distill-qwen-14b is slow", "deepseek-r1-distill-qwen-14b"),
    ("gemma-4-e4b, for homework.", "gemma-4-e4b"),
])
def test_a_model_written_as_one_slug_is_read_whole(store, msg, model):
    assert intake.extract(msg, store).model == model


def test_a_gguf_file_name_keeps_its_format(store):
    ext = intake.extract("Llama-3.1-8B-Instruct-Q4_K_M.gguf on my mac", store)
    assert (ext.model, ext.quant) == ("Llama-3.1-8B-Instruct", "Q4_K_M")


def test_nemotron_super_is_a_moe_not_a_dense_120b(store):
    m = catalog.resolve_model(store, intake.extract("nemotron-3-super-120b-a12b on a DGX Spark", store).model).value
    assert m.is_moe and m.active_params_b == 12


def test_an_unknown_name_without_a_size_asks_for_the_size(store):
    r = intake.update(None, "I run granite-4.0-h-tiny on my RTX 3060", store)
    assert any("granite-4.0-h-tiny" in x and "how many parameters" in x for x in r.not_understood)


@pytest.mark.parametrize("name, want", [
    ("qwen3moe 30B.A3B Q4_K - Medium", "Qwen/Qwen3-30B-A3B"),  # llama-bench's architecture names
    ("qwen35moe 35B.A3B Q4_K - Medium", "Qwen/Qwen3.5-35B-A3B"),
    ("qwen25 7b", "Qwen/Qwen2.5-7B"),
])
def test_llama_bench_architecture_names(store, name, want):
    assert catalog.resolve_model(store, name).value.id == want


def test_qwen35_arch_name_of_an_unknown_size_keeps_the_hybrid_layout(store):
    m = catalog.resolve_model(store, "qwen35 4B Q4_K - Medium").value
    assert m.generic and m.kv_layers == 9 and "Qwen3.5-9B" in m.notes


def test_compare_assumes_the_chats_format(store):
    out = cmp.compare(store, model="gpt-oss-120b", prompt_tokens=8000, gen_tokens=500, concurrency=5,
                      candidates=["DGX Spark"])
    assert out["quant"] == "MXFP4"
    llama = cmp.compare(store, model="llama 3.1 8b", concurrency=2, candidates=["DGX Spark"])
    assert llama["quant"] == "Q4_K_M"
    assert cmp.compare(store, model="llama 3.1 8b", concurrency=2, candidates=["DGX Spark"], backend="vllm")["quant"] == "BF16"


def test_cli_compare_targets_are_the_apps():
    import typer

    from advisor.cli import app
    from advisor.render.options import DEFAULT_TPS_TARGET, DEFAULT_TTFT_TARGET_S

    params = {p.name: p.default for p in typer.main.get_command(app).commands["compare"].params}  # type: ignore[attr-defined]
    assert (params["ttft_target"], params["tps_per_user"]) == (DEFAULT_TTFT_TARGET_S, DEFAULT_TPS_TARGET) == (10, 10)


def test_an_impossible_single_stream_rate_is_an_error(store):
    from advisor.errors import InputError
    from advisor.models import Scenario

    with pytest.raises(InputError, match=r"99,999 tok/s is [\d,]+× the most"):
        service.diagnose_scenario(store, Scenario(hardware="RTX 3060", model="llama 3.1 8b",
                                                  measured_decode_tps=99999))
    # a batch's total over 32 streams is not one stream
    v = service.diagnose_scenario(store, Scenario(hardware="RTX 3060", model="llama 3.1 8b", concurrency=32,
                                                  measured_decode_tps=900))
    assert v.status == "normal"


def test_a_benchmark_prefill_above_the_fp16_figure_is_not_called_cached(store):
    fast = TABLE.replace("2812.45", "3900.00")  # above the 3060's FP16 figure for an 8B at 512 tokens
    r = _chat(store, "RTX 3060 12GB, is this normal?\n" + fast)
    text = r.reply + " ".join(r.verdict.explanation if isinstance(r.verdict.explanation, list) else [str(r.verdict.explanation)])
    assert "cache" not in text.split("Best fix")[0].lower() or "integer matrix units" in text
    assert r.verdict.bottleneck != "prompt_cache"


def test_a_new_size_after_a_comparison_answers_the_new_size(store):
    r = _chat(store, "MacBook Pro M3 Pro with 18 GB. Can I run Qwen3 4B or Gemma 3 4B for homework?", "what about a 14B?")
    assert r.facts.compare_models is None and r.facts.model == "Qwen3 14B"  # the same family at the new size
    assert r.verdict is not None and r.verdict.prediction.decode_tps < 20  # a 14B at ~150 GB/s, not the 4B's ~38


@pytest.mark.parametrize("msg", [
    "both kids use it at the same time",
    "both of us at once",
    "the two of us would use it simultaneously",
])
def test_both_at_once_is_two_users(store, msg):
    assert intake.extract(msg, store).concurrency == 2


def test_both_alone_is_not_a_user_count(store):
    assert intake.extract("both models are slow", store).concurrency is None


def test_a_length_first_stated_after_the_rate_describes_the_run(store):
    # the prompt length was not known: "my prompt was 2000 tokens" says what the measured run was
    r = _chat(store, "RTX 3060 12GB, llama 3.1 8b Q4_K_M with llama.cpp, I get 45 tok/s", "my prompt was 2000 tokens")
    assert r.facts.prompt_tokens == 2000 and r.facts.measured_decode_tps == 45.0
    assert not any(n.startswith("Set aside") for n in r.notes)


def test_a_misread_rate_is_a_correction(store):
    r = _chat(store, FIRST, "sorry I misread, it was 19 tok/s")
    assert r.facts.measured_decode_tps == 19.0


def test_a_bare_new_size_sets_a_named_models_rate_aside(store):
    r = _chat(store, FIRST, "what about a 14B?")
    assert r.facts.measured_decode_tps is None and any(n.startswith("Set aside the 45 tok/s") for n in r.notes)
