"""Replies as a conversation: short first answers, follow-ups that say what changed, options side by side."""

from __future__ import annotations

import io
import re

import pytest

from advisor import service
from advisor.models import Scenario
from advisor.render import markdown as md
from advisor.render.options import compare_fill, has_options, options_for, options_markdown, short_name
from advisor.render.reply import (
    answer_markdown,
    changes,
    feel_speed,
    feel_wait,
    followup_markdown,
    visible_words,
)
from advisor.render.terminal import print_markdown, to_terminal_markdown

INTERNAL = re.compile(r"hardware_measured|coding_agent|measured rows|\d\.\d{3,} bits|mat-vec|llama-bench-md")
TEAM = Scenario(hardware="M3 Ultra", memory_gb=96, compare_hardware=["two 4090s", "H100"], model="llama 3.3 70b",
                prompt_tokens=8000, concurrency=20)


def above_details(text: str) -> str:
    return text.split("<details>")[0]


# ----------------------------------------------------------------------------- feelings and numbers
@pytest.mark.parametrize("tps, words", [(2.0, "painfully slow"), (3.5, "slower than you read"),
                                        (6.0, "about reading speed"), (10.0, "faster than you read"),
                                        (40.0, "much faster than you read")])
def test_speed_against_reading_speed(tps, words):
    assert feel_speed(tps).endswith(words)


@pytest.mark.parametrize("ttft, words", [(0.4, "instant"), (3.0, "noticeable pause"), (12.0, "broken")])
def test_wait_for_the_first_word(ttft, words):
    assert words in feel_wait(ttft)


def test_engine_sentences_are_rounded_for_people():
    assert md.tidy("assumed Q4_K_M (4.8944 bits per weight)") == "assumed Q4_K_M (4.9 bits per weight)"
    assert md.tidy("v1.2345 build") == "v1.2345 build"  # a version, not a measurement
    assert md.fmt_bpw(4.8944) == "4.9" and md.fmt_bpw(16.0) == "16"
    assert md.use_label("coding_agent") == "a coding agent"
    assert md.name_tools("Read 2 measurement(s) from llama-bench-md output.") == \
        "Read 2 measurement(s) from llama-bench output."


# ----------------------------------------------------------------------------- first answers
def test_first_answer_is_short_and_folds_the_detail(verdict):
    text = answer_markdown(verdict)
    assert visible_words(text) <= 250
    top = above_details(text)
    assert top.startswith("**Slower than it should be")  # the verdict first, in plain words
    assert "12 tok/s" in top and "Best fix:** Speculative decoding" in top
    assert "2,000-token prompts" in top  # the assumed prompt is said, so it can be corrected
    assert "<summary>Why</summary>" in text and "<summary>Other fixes</summary>" in text
    assert "Cache the repeated prompt prefix" not in top  # only the top fix is unfolded


def test_model_larger_than_memory_leads_with_the_fit(verdict_factory, prediction_factory):
    from advisor.models import Fix, MemoryFit

    p = prediction_factory(memory=MemoryFit(weights_gb=16.5, kv_cache_gb=0.2, overhead_gb=1.0, required_gb=17.7,
                                            usable_gb=10.7, total_gb=16.0, fits=False))
    v = verdict_factory(p, bottleneck="memory_fit", status="not_measured", measured={}, fixes=[
        Fix(id="smaller_model", title="Use a smaller model or more memory", predicted_effect="fits in 9 GB",
            why="too big")])
    top = above_details(answer_markdown(v))
    assert top.startswith("**No: it does not fit") and "whole 16 GB" in top
    assert "Best fix:** Use a smaller model" in top
    # the speed is not promised as if it ran: more than the whole memory is said not to run in practice (round 29)
    assert "In practice it will not run" in top and "at best" in top


def test_follow_up_says_what_changed_and_is_short(verdict_factory, prediction_factory):
    before = verdict_factory(prediction_factory(), measured={}, status="not_measured")
    after = verdict_factory(prediction_factory(decode_tps=20.0, decode_tps_per_seq=20.0, ttft_s=12.0),
                            measured={}, status="not_measured")
    b, a = Scenario(hardware="MacBook Air M2", memory_gb=16), Scenario(hardware="MacBook Air M2", memory_gb=24)
    text = followup_markdown(after, before, facts=a, before_facts=b)
    assert text.startswith("**Changed:** memory 16 GB → 24 GB.")
    assert "16.4 → 20.0 tok/s" in text and "15.0 s → 12.0 s" in text and "still fits" in text
    assert visible_words(text) < 0.6 * visible_words(answer_markdown(after, facts=a))
    assert "<summary>Why</summary>" not in text  # said in the first answer


def test_changes_name_the_model_that_replaced_a_size():
    ch = changes(Scenario(hardware="M3", params_b=27), Scenario(hardware="M3", model="Llama 3.1 8B"))
    assert [(f, old, new) for f, _, old, new in ch] == [("model", "27B", "Llama 3.1 8B")]


# ----------------------------------------------------------------------------- a conversation
def test_household_conversation_through_ask(store):
    r1 = service.ask(store, "MacBook Air M3 16GB, can I run a 27B model for chat?")
    assert r1.verdict is not None and visible_words(r1.reply) <= 250
    assert "does not fit" in above_details(r1.reply) and "500-token prompts" in r1.reply
    r2 = service.ask(store, "actually it has 32GB", r1.facts)
    assert "memory 16 GB → 32 GB" in r2.reply  # acknowledged, not applied silently
    assert visible_words(r2.reply) < 0.8 * visible_words(r1.reply)
    r3 = service.ask(store, "what about the 24GB one?", r2.facts)
    assert "memory 32 GB → 24 GB" in r3.reply
    for r in (r1, r2, r3):
        assert not INTERNAL.search(r.reply)


# ----------------------------------------------------------------------------- options side by side
def test_team_three_way_question_in_one_reply(store):
    assert has_options(TEAM)
    opt = options_for(store, TEAM)
    assert opt is not None and opt.kind == "hardware"
    names = [r["name"] for r in opt.rows]
    # best first (the engine's ranking); one H100 holds 14 of the 20 users, so two (the fewest that hold them all)
    # are added; 2× RTX 4090 (2 × 24 GiB) holds the 70B with two 8k conversations
    assert names == ["2× H100 PCIe 80GB", "H100 PCIe 80GB", "M3 Ultra 96 GB", "2× RTX 4090 24 GB"]  # one card's memory
    assert opt.rows[0]["meets"] and "2× H100 PCIe 80GB added" in " ".join(opt.said)
    m3 = opt.rows[2]
    assert m3["memory_gb"] == 96 and 0 < m3["users_fit"] < 20  # 96 GB as said, not the 512 GB option
    assert opt.rows[3]["fits"] is True and opt.rows[3]["users_fit"] == 2 and opt.rows[3]["status"] == "partial"
    text = options_markdown(opt)
    for n in names:
        assert n in text
    assert text.count(" tok/s") >= 2 and "20 people at once" in text and "8,000-token prompts" in text
    reply = service.ask(store, "which one should we buy?", TEAM).reply
    assert "M3 Ultra 96 GB" in reply and "RTX 4090" in reply and "H100" in reply


def test_compare_tab_filled_from_the_conversation(store):
    fill = compare_fill(store, TEAM)
    assert fill["candidates"] == ["apple-m3-ultra-80gpu 96GB", "nvidia-rtx-4090x2", "nvidia-h100-pcie"]
    assert (fill["model"], fill["prompt_tokens"], fill["concurrency"]) == \
        ("meta-llama/Llama-3.3-70B-Instruct", 8000, 20)
    from advisor import compare as cmp

    res = cmp.compare(store, model=fill["model"], candidates=fill["candidates"], concurrency=20, prompt_tokens=8000)
    assert {c["hardware"]["id"]: c["hardware"]["memory_gb"] for c in res["candidates"]}["apple-m3-ultra-80gpu"] == 96


def test_model_options_on_one_machine(store):
    facts = Scenario(hardware="MacBook Pro M3 Max", memory_gb=64, model="llama 3.1 8b",
                     compare_models=["qwen 2.5 32b", "llama 3.3 70b"])
    opt = options_for(store, facts)
    assert opt is not None and opt.kind == "models" and len(opt.rows) == 3
    speeds = [r["tps_each"] for r in opt.rows]
    assert speeds[0] > speeds[1] > speeds[2]  # bigger model, slower decode on the same bandwidth
    # the 70B fits but streams under 10 tok/s: the largest at a usable speed leads, the 70B is said after it
    md = options_markdown(opt)
    assert "the largest that runs at 10 tok/s or more (about twice reading speed) is qwen" in md
    assert "llama 3.3 70b fits too, but streams at" in md


def test_short_names():
    assert short_name("Apple M3 Ultra (80-core GPU)", 96) == "M3 Ultra 96 GB"
    assert short_name("2× GeForce RTX 4090", 48) == "2× RTX 4090 24 GB"  # several cards: one card's memory
    assert short_name("2× NVIDIA RTX PRO 6000 Blackwell", 192) == "2× RTX PRO 6000 Blackwell 96 GB"
    assert short_name("4× NVIDIA L40S", 192) == "4× L40S 48 GB"
    assert short_name("H100 PCIe 80GB", 80) == "H100 PCIe 80GB"


# ----------------------------------------------------------------------------- terminal
def test_terminal_renders_folded_blocks_and_tables(verdict):
    text = answer_markdown(verdict)
    assert "<details>" not in to_terminal_markdown(text) and "#### Why" in to_terminal_markdown(text)
    buf = io.StringIO()
    print_markdown(text, file=buf)
    out = buf.getvalue()
    assert "<" not in out and "Why" in out and "predicted" in out and "|---" not in out
    assert all(line == line.rstrip() for line in out.splitlines())


def test_cheapest_change_when_no_option_works(store):
    # None of the machines named meets the targets: the cheapest change on one of them (no purchase) is the
    # hint, beside the rows a second H100 adds.
    opt = options_for(store, TEAM)
    named = [r for r in opt.rows if not r["name"].startswith("2× H100")]
    assert not any(r["meets"] for r in named)
    assert "KV cache" in opt.hint and "8 bits" in opt.hint and "all 20 users" in opt.hint and "H100" in opt.hint



def test_a_comfortable_setup_is_told_nothing_needs_changing(verdict_factory, prediction_factory):
    v = verdict_factory(status="not_measured", measured={})  # 16.4 tok/s, first word 15 s: too slow to start
    assert "Best fix:**" in answer_markdown(v)
    quick = verdict_factory(prediction_factory(ttft_s=2.0), status="not_measured", measured={})
    top = above_details(answer_markdown(quick))
    assert "Nothing you need to change.** Faster still: Speculative decoding" in top


def test_probe_result_in_plain_words():
    from advisor.models import ProbeResult

    text = md.probe_markdown(ProbeResult(backend="numpy", device="CPU", bandwidth_gbs=5.7, matmul_tflops=0.0042,
                                         duration_s=3.0, matvec_gbs={"q4": 0.0, "f16": 4.2}))
    assert "4.2 GFLOP/s" in text and "0.00 TFLOP" not in text
    assert "q4" not in text and "(f16 weights): 4.2 GB/s" in text  # a kernel that did not run is not shown
    assert not INTERNAL.search(text)


def test_names_assumed_or_left_out_are_said(store):
    facts = TEAM.model_copy(update={"compare_hardware": ["two 4090s", "H100", "a potato computer"]})
    text = options_markdown(options_for(store, facts))
    top = above_details(text)
    assert "“H100” could be H100 PCIe" in top and "“a potato computer”" in top and "left out" in top
