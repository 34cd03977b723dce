"""What a browser turn shows: chat beside the card, paste in the chat, prices by name, Compare filled from chat."""

from __future__ import annotations

import pytest

from advisor.render.reply import answer_markdown
from ui import charts, handlers, turns
from ui.compare_tab import fill_updates, match_prices, run_compare

CANDS = ["apple-m3-ultra-80gpu 96GB", "nvidia-rtx-4090x2", "nvidia-h100-pcie"]


def test_chat_and_card_do_not_repeat_each_other(verdict):
    chat = turns.for_chat(answer_markdown(verdict))
    card = handlers.verdict_card(verdict)
    assert "<summary>The numbers</summary>" not in chat and "<summary>Other fixes</summary>" not in chat
    assert "<summary>Why</summary>" in chat
    assert "| prefill (prompt processing)" in card and "| prefill (prompt processing)" not in chat
    # the card holds every fix, unclipped
    assert all(f.title in card for f in verdict.fixes)


def test_facts_table_hides_internal_fields():
    rows = dict(map(tuple, handlers.facts_rows({"hardware": "M3 Ultra", "hardware_measured": False,
                                                "use": "coding_agent", "compare_hardware": ["2x RTX 4090", "H100"]})))
    assert "hardware_measured" not in rows and "hardware measured" not in rows
    assert rows["use"] == "coding agent"
    assert rows["also weighing (machines)"] == "2x RTX 4090, H100"


@pytest.fixture(scope="module")
def own_store():
    """A store of its own: a paste saves its rows, which must not reach the shared store's calibration."""
    from knowledge.store import Store

    return Store(":memory:")


def test_pasted_output_answers_in_the_chat(own_store, llama_bench_md):
    store = own_store
    view, note = turns.paste_turn(store, llama_bench_md, None, "", [], {"hardware": "MacBook Air M2", "memory_gb": 16})
    assert note == "Answered in the chat."
    user, bot = view.history[-2:]
    assert user["role"] == "user" and "pasted 5 lines" in user["content"]
    assert "llama-bench output" in bot["content"] and "190.5" in bot["content"] and "17.2" in bot["content"]
    assert view.verdict is not None and view.verdict.measured["decode_tps"] == pytest.approx(17.21)
    empty, msg = turns.paste_turn(store, "  ", None, "", [], {})
    assert empty.history == [] and "Paste" in msg


@pytest.mark.parametrize("prices, expected", [
    ({"H100": 30000}, {"nvidia-h100-pcie": 30000}),
    ({"M3 Ultra": 5600, "2x 4090": 3800}, {"apple-m3-ultra-80gpu": 5600, "nvidia-rtx-4090x2": 3800}),
    ({"nvidia-h100-pcie": 1}, {"nvidia-h100-pcie": 1}),
])
def test_prices_by_name(store, prices, expected):
    assert match_prices(store, prices, CANDS) == expected


def test_price_name_not_understood_is_a_note_and_the_table_stays(store):
    assert match_prices(store, {"potato": 1}, CANDS) == {"potato": 1}  # left as written: the engine notes it
    md, rows, _ = run_compare(store, "llama 3.3 70b", "Q4_K_M", 8000, 300, 20, None, 30, 10, CANDS,
                              "H200=32000", 0, "f16")
    assert md.startswith("⚠️ The price 'H200' matched none of the machines compared") and len(rows) == 3
    assert "e.g. H100 PCIe 80GB=32000 if that is its price" in md  # the closest name, the price as given
    assert all(r[-1] == "—" for r in rows)  # never a price on the wrong machine
    md, rows, _ = run_compare(store, "llama 3.3 70b", "Q4_K_M", 8000, 300, 20, None, 30, 10, CANDS,
                              "H100=30000", 0, "f16")
    h100 = next(r for r in rows if "H100" in r[1])
    assert h100[-1] != "—"  # the named price reached the H100's cost column


def test_compare_form_filled_from_the_chat(store):
    facts = {"hardware": "M3 Ultra", "memory_gb": 96, "model": "llama 3.3 70b", "prompt_tokens": 8000,
             "concurrency": 20, "compare_hardware": ["two 4090s", "H100"]}
    ups = fill_updates(store, facts)
    model, _, prompt, _, users, *_, cands, _prefix, _engine, note = ups
    said = note["value"].split("**Defaults")[0]  # the model and lengths were named: from the chat, not defaults
    assert "model Llama-3.3-70B-Instruct" in said and "prompts of 8,000 tokens" in said and "20 users" in said
    assert model["value"] == "meta-llama/Llama-3.3-70B-Instruct"
    assert (prompt["value"], users["value"]) == (8000, 20)
    # the chat's table adds two H100s (one holds 14 of the 20 users): the form ranks the same machines, and says so
    assert cands["value"] == [*CANDS, "nvidia-h100-pciex2"] and "1 added as in the chat" in said
    labels = dict((v, k) for k, v in cands["choices"])
    assert "96 GB" in labels["apple-m3-ultra-80gpu 96GB"]
    assert turns.compare_offer(facts) and not turns.compare_offer({"hardware": "M3 Ultra"})
    assert not turns.compare_offer({"hardware": "M3 Max", "model": "llama 3.1 8b", "compare_models": ["qwen 2.5 32b"]})


def test_peers_compare_one_user_with_one_user(prediction_factory):
    p = prediction_factory(concurrency=15, decode_tps=150.0, decode_tps_per_seq=10.0)
    fig = charts.peers_figure([], p, {})
    decode = fig.data[0]
    assert list(decode.x) == [10.0]  # per user, never the 15-user sum
    assert "each of 15 users" in decode.y[0]


def test_exports_only_when_asked(verdict, tmp_path):
    assert turns.export_now(None, {}, str(tmp_path)) is None and not any(tmp_path.iterdir())
    md_path, json_path = turns.export_now(verdict.model_dump(mode="json"), {}, str(tmp_path))
    assert md_path.endswith(".md") and json_path.endswith(".json")
