"""Prices in Compare: names resolve like candidate names, the cheaper machine ranks first within a status,
the headline names the cheapest that meets the targets, an unmatched price is a note (trial B5/B6)."""

from __future__ import annotations

import re

import pytest

from advisor import compare as cmp
from advisor.compare.cost import match_prices
from advisor.models import Scenario
from advisor.render.markdown import TTFT_BROKEN_S
from advisor.render.options import DEFAULT_TTFT_TARGET_S, compare_fill, options_for, options_markdown
from knowledge.store import Store

TRIO = ["apple-m3-ultra-80gpu 96GB", "nvidia-rtx-4090x2", "nvidia-h100-pcie"]
IDS = ["apple-m3-ultra-80gpu", "nvidia-rtx-4090x2", "nvidia-h100-pcie"]
# The trial's team: 6 developers, Qwen2.5-Coder 32B, 3,000-token prompts, no request rate.
TEAM = dict(model="Qwen/Qwen2.5-Coder-32B-Instruct", quant="Q4_K_M", prompt_tokens=3000, gen_tokens=300,
            concurrency=6, tps_per_user=10, candidates=TRIO)
PRICES = {"H100": 30000, "M3 Ultra": 4000, "2x RTX 4090": 4500}


@pytest.fixture(scope="module")
def store():
    return Store(":memory:")


def _order(res):
    return [c["hardware"]["id"] for c in res["candidates"]]


@pytest.mark.parametrize("name, expected", [
    ("4090", "nvidia-rtx-4090x2"), ("RTX 4090", "nvidia-rtx-4090x2"), ("2x 4090", "nvidia-rtx-4090x2"),
    ("2× RTX 4090", "nvidia-rtx-4090x2"), ("two 4090s", "nvidia-rtx-4090x2"), ("dual 4090", "nvidia-rtx-4090x2"),
    ("nvidia-rtx-4090x2", "nvidia-rtx-4090x2"), ("H100", "nvidia-h100-pcie"), ("nvidia h100", "nvidia-h100-pcie"),
    ("M3 Ultra", "apple-m3-ultra-80gpu"), ("m3 ultra 96GB", "apple-m3-ultra-80gpu"),
])
def test_price_names_resolve_like_candidate_names(store, name, expected):
    assert match_prices(store, {name: 4500}, IDS) == ({expected: 4500.0}, [])


@pytest.mark.parametrize("name, expected", [
    ("4090", "nvidia-rtx-4090"), ("RTX 4090", "nvidia-rtx-4090"), ("2x 4090", "nvidia-rtx-4090x2"),
    ("two RTX 4090s", "nvidia-rtx-4090x2"),
])
def test_a_count_picks_between_builds_of_one_card(store, name, expected):
    ids = ["nvidia-rtx-4090", "nvidia-rtx-4090x2"]
    assert match_prices(store, {name: 1}, ids) == ({expected: 1.0}, [])


@pytest.mark.parametrize("name", ["H200", "potato", "3090", "4x 4090"])
def test_a_price_for_no_candidate_is_unmatched(store, name):
    assert match_prices(store, {name: 1}, IDS) == ({}, [name])


def test_unmatched_price_is_a_note_and_the_comparison_still_runs(store):
    res = cmp.compare(store, **TEAM, ttft_target_s=10, prices={"H200": 32000, "4090": 4500})
    assert len(res["candidates"]) == 3
    assert res["price_notes"] == [
        "The price 'H200' matched none of the machines compared (2× GeForce RTX 4090, H100 PCIe 80GB, Apple M3 "
        "Ultra (80-core GPU)), so it is left out: write it as a machine is named, e.g. H100 PCIe 80GB=32000 if "
        "that is its price."]
    md = cmp.notes_markdown(res)
    assert md.startswith("⚠️ The price 'H200' matched none")
    costs = {c["hardware"]["id"]: c["cost"] for c in res["candidates"]}
    assert costs["nvidia-rtx-4090x2"]["price_usd"] == 4500 and costs["nvidia-h100-pcie"] is None


def test_cheaper_first_when_all_meet_the_targets(store):
    res = cmp.compare(store, **TEAM, ttft_target_s=30, prices=PRICES)  # 30 s: even the M3 Ultra's 13.2 s meets
    assert [c["status"] for c in res["candidates"]] == ["meets"] * 3
    assert _order(res) == ["apple-m3-ultra-80gpu", "nvidia-rtx-4090x2", "nvidia-h100-pcie"]
    assert cmp.headline(res) == "3 of 3 meet the targets; the cheapest is the Apple M3 Ultra (80-core GPU) ($4,000)."
    assert cmp.notes_markdown(res).startswith("**3 of 3 meet the targets; the cheapest is the Apple M3 Ultra")


def test_a_cheap_machine_that_misses_a_target_stays_below_one_that_meets(store):
    res = cmp.compare(store, **TEAM, ttft_target_s=DEFAULT_TTFT_TARGET_S, prices=PRICES)
    assert _order(res) == ["nvidia-rtx-4090x2", "nvidia-h100-pcie", "apple-m3-ultra-80gpu"]
    m3 = res["candidates"][2]
    assert m3["status"] == "holds" and m3["ttft_s"]["p95"] == pytest.approx(13.2, abs=0.1)
    assert cmp.headline(res) == "2 of 3 meet the targets; the cheapest is the 2× GeForce RTX 4090 ($4,500)."


def test_without_prices_the_headline_never_says_the_one(store):
    res = cmp.compare(store, **TEAM, ttft_target_s=10)
    assert _order(res)[0] == "nvidia-h100-pcie"  # no prices: the most headroom first
    assert cmp.headline(res) == ("2 of 3 meet the targets; give prices to pick between them on cost (the most "
                                 "room to spare: the H100 PCIe 80GB).")
    one = cmp.compare(store, **{**TEAM, "concurrency": 40}, ttft_target_s=10)
    assert cmp.headline(one) == "Only the H100 PCIe 80GB meets the targets (of 3)."


def test_a_priced_machine_ranks_before_an_unpriced_one_of_the_same_status(store):
    res = cmp.compare(store, **TEAM, ttft_target_s=10, prices={"H100": 30000})
    assert _order(res)[:2] == ["nvidia-h100-pcie", "nvidia-rtx-4090x2"]
    res = cmp.compare(store, **TEAM, ttft_target_s=10, prices={"4090": 4500})
    assert _order(res)[:2] == ["nvidia-rtx-4090x2", "nvidia-h100-pcie"]


def test_default_first_word_target_is_where_a_wait_feels_broken(store):
    assert DEFAULT_TTFT_TARGET_S == TTFT_BROKEN_S == 10.0
    sc = Scenario(hardware="M3 Ultra", memory_gb=96, compare_hardware=["2x RTX 4090", "H100"],
                  model="Qwen2.5-Coder 32B", prompt_tokens=3000, concurrency=6)
    assert compare_fill(store, sc)["ttft_target_s"] == 10.0
    rows = {r["id"]: r for r in options_for(store, sc).rows}
    assert rows["apple-m3-ultra-80gpu"]["first_word_s"] == pytest.approx(13.2, abs=0.1)
    assert rows["apple-m3-ultra-80gpu"]["meets"] is False and rows["nvidia-h100-pcie"]["meets"] is True


def test_chat_reply_is_the_table_and_one_sentence(store):
    sc = Scenario(hardware="M3 Ultra", memory_gb=96, compare_hardware=["2x RTX 4090", "H100"],
                  model="Qwen2.5-Coder 32B", prompt_tokens=3000, concurrency=6)
    md = options_markdown(options_for(store, sc))
    shown = md[:md.index("<details>")]
    assert shown.startswith("**For 6 people at once, 2 of 3 meet the targets**; the H100 PCIe 80GB ranks first")
    assert "the one that does the job" not in md
    assert "much faster than you read" not in shown and "much faster than you read" in md  # row sentences folded
    assert "slow case" in shown and "95 % of requests" in shown
    assert len(re.findall(r"[A-Za-z]+", shown)) < 150, len(re.findall(r"[A-Za-z]+", shown))
    assert "| M3 Ultra 96 GB | misses a target | 58 | 13.2 s |" in shown


def test_tab_words_avoid_unexplained_jargon(store):
    res = cmp.compare(store, **TEAM, ttft_target_s=10)
    text = cmp.notes_markdown(res) + " ".join(cmp.TABLE_HEADERS) + cmp.TABLE_LEGEND
    shown = text[:text.index("<details>")] + " ".join(cmp.TABLE_HEADERS) + cmp.TABLE_LEGEND
    for jargon in ("KV-cache reads outweigh", "compute-bound", "unchunked"):
        assert jargon not in shown
    assert "typical (half the requests wait less: p50) / slow case (95 % wait less: p95)" in cmp.TABLE_LEGEND
    assert "adding users is nearly free up to ~23 (beyond, reading every user's conversation memory" in text


def test_a_count_with_a_product_of_several_versions(store):
    """'2x H100' names two cards of a product with versions: the resolver's candidate ids carry the count."""
    assert match_prices(store, {"2x H100": 1}, ["nvidia-h100-pciex2", "nvidia-h100-sxm"]) == ({"nvidia-h100-pciex2": 1.0}, [])
    assert match_prices(store, {"H100": 1}, ["nvidia-h100-pciex2", "nvidia-h100-sxm"]) == ({"nvidia-h100-sxm": 1.0}, [])


def test_variant_question_carries_ids_with_the_count(store):
    from knowledge import catalog
    with pytest.raises(catalog.VariantsError) as e:
        catalog.resolve_hardware(store, "2x H100")
    assert e.value.candidate_ids == ["nvidia-h100-pciex2", "nvidia-h100-sxmx2"]
