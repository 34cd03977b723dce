"""The Compare tab filled from the chat (issue 18), and the same numbers on both paths (issue 15).

A conversation's Situation fills the form exactly: the machines the person named and only those, each
with the memory they stated, the users, prompt/answer lengths, model, format and engine; what was not
said is labelled a default. The chat's side-by-side table, the filled Compare tab and `advisor compare`
give the same per-user and aggregate tok/s for the same team.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from advisor import compare as cmp
from advisor import service
from advisor.intake._dialog import DEFAULT_COMPARE_MODEL
from advisor.render.options import compare_fill, fill_request, options_for
from ui.compare_tab import COMPARE_DEFAULTS, default_model_id, fill_updates, form_request

ROOT = Path(__file__).resolve().parents[2]
TRIAL = "We're a team of 6 developers. Should we buy an M3 Ultra with 96GB, two RTX 4090s or an H100?"
FIELDS = ["model", "quant", "prompt", "gen", "users", "rpm", "ttft", "tps", "candidates", "prefix", "engine", "note"]


def _values(updates) -> dict:
    assert len(updates) == len(FIELDS)
    return {k: u.get("value") for k, u in zip(FIELDS, updates, strict=True)}


@pytest.fixture(scope="module")
def trial(store):
    r1 = service.ask(store, TRIAL)
    r2 = service.ask(store, "We mostly ask short questions.", r1.facts)
    return r1, r2


def test_fill_is_the_conversation_and_only_it(store, trial):
    r1, _ = trial
    v = _values(fill_updates(store, r1.facts.model_dump(mode="json")))
    assert v["candidates"] == ["apple-m3-ultra-80gpu 96GB", "nvidia-rtx-4090x2", "nvidia-h100-pcie"]
    assert "nvidia-dgx-spark-gb10" not in v["candidates"]  # the tab's own defaults are not added
    assert (v["model"], v["quant"]) == (default_model_id(store), "Q4_K_M")
    assert (v["prompt"], v["gen"], v["users"], v["rpm"], v["prefix"]) == (500, 300, 6, 0, 0)
    assert (v["ttft"], v["tps"], v["engine"]) == (10.0, 10.0, "")  # 10 s: where a wait starts to feel broken
    note = v["note"]
    assert note.startswith("**Filled from the chat:** 3 machines as named, 6 users.")
    assert f"model {DEFAULT_COMPARE_MODEL}: the default for comparing machines" in note  # said, not silent
    assert "prompts of 500 tokens" in note.split("Defaults")[1]
    labels = {k: u.get("label") for k, u in zip(FIELDS, fill_updates(store, r1.facts.model_dump()), strict=True)}
    assert (labels["model"], labels["users"], labels["prompt"]) == ("Model · default", "Users · from the chat",
                                                                     "Prompt tokens · default")


def test_short_questions_give_a_short_prompt_in_compare(store, trial):
    _, r2 = trial
    v = _values(fill_updates(store, r2.facts.model_dump(mode="json")))
    assert v["prompt"] == 50 and v["users"] == 6  # "a short question ≈ 50 tokens" (DESIGN.md), as the chat understood
    said, defaults = v["note"].split("**Defaults")
    assert "prompts of 50 tokens" in said and "answers of 300 tokens" in defaults
    prompt_label = fill_updates(store, r2.facts.model_dump(mode="json"))[FIELDS.index("prompt")]["label"]
    assert prompt_label == "Prompt tokens · from the chat"
    assert v["candidates"][0] == "apple-m3-ultra-80gpu 96GB"


@pytest.mark.parametrize("text, cands, model, prompt, users, engine", [
    # the chat's table added two H100s (one holds 14 of the 20 users): the tab ranks the same machines
    ("Should we buy an M3 Ultra 96GB, two 4090s or an H100 for 20 engineers? Llama 3.3 70B, 8k prompts.",
     ["apple-m3-ultra-80gpu 96GB", "nvidia-rtx-4090x2", "nvidia-h100-pcie", "nvidia-h100-pciex2"],
     "meta-llama/Llama-3.3-70B-Instruct", 8000, 20, ""),
    ("team of 10: M2 Ultra 192GB or 4x RTX 3090, qwen 2.5 72b at q8_0, we use vLLM",
     ["apple-m2-ultra-76gpu 192GB", "nvidia-rtx-3090x4"], None, 500, 10, "vLLM"),
])
def test_named_model_lengths_engine_are_filled_as_stated(store, text, cands, model, prompt, users, engine):
    r = service.ask(store, text)
    v = _values(fill_updates(store, r.facts.model_dump(mode="json")))
    assert v["candidates"] == cands and v["prompt"] == prompt and v["users"] == users
    if model:
        assert v["model"] == model
    assert (v["engine"] or "").lower() == engine.lower()
    assert "default for comparing machines" not in v["note"]  # the person named the model


def test_a_model_named_later_is_no_longer_called_a_default(store, trial):
    r1, _ = trial
    assert r1.facts.default_model == DEFAULT_COMPARE_MODEL
    r = service.ask(store, "We'd run Qwen 2.5 72B.", r1.facts)
    fill = compare_fill(store, r.facts)
    assert "qwen" in fill["model"].lower() and not any("default for comparing" in d for d in fill["defaults"])


def test_nothing_to_fill_keeps_the_form_and_says_so(store):
    ups = fill_updates(store, {})
    assert len(ups) == len(FIELDS) and "has not named machines" in ups[-1]["value"]


def test_one_home_for_the_default_comparison_model(store):
    assert default_model_id(store) == "meta-llama/Llama-3.3-70B-Instruct"
    import ui.compare_tab as tab

    assert not hasattr(tab, "DEFAULT_MODEL") and tab.DEFAULT_COMPARE_MODEL is DEFAULT_COMPARE_MODEL
    assert len(COMPARE_DEFAULTS) == 4  # the tab's standalone defaults stay for a person who opens it directly


# ----------------------------------------------------------------------------- same numbers on every path
def test_chat_compare_tab_and_cli_give_the_same_tok_s(store, trial, tmp_path):
    r1, _ = trial
    facts = r1.facts
    chat = {r["id"]: r for r in options_for(store, facts).rows}
    v = _values(fill_updates(store, facts.model_dump(mode="json")))
    req = form_request(store, v["model"], v["quant"], v["prompt"], v["gen"], v["users"], v["rpm"], v["ttft"],
                       v["tps"], v["candidates"], "", v["prefix"], "f16", v["engine"])
    tab = {c["hardware"]["id"]: c for c in cmp.compare_request(store, req)["candidates"]}
    assert set(chat) == set(tab) == {"apple-m3-ultra-80gpu", "nvidia-rtx-4090x2", "nvidia-h100-pcie"}
    for hid, row in chat.items():
        assert row["tps_each"] == pytest.approx(tab[hid]["decode_tps_per_user"], rel=1e-9)
        assert row["tps_total"] == pytest.approx(tab[hid]["aggregate_decode_tps"], rel=1e-9)
        assert row["rank"] == tab[hid]["rank"] and row["status"] == tab[hid]["status"]
    assert tab["nvidia-h100-pcie"]["aggregate_decode_tps"] > 150  # real numbers: ~6 × 34 tok/s
    fill = fill_request(compare_fill(store, facts))
    args = [sys.executable, "-m", "advisor", "compare", "--model", fill["model"], "--quant", fill["quant"],
            "--prompt-tokens", str(fill["prompt_tokens"]), "--gen-tokens", str(fill["gen_tokens"]),
            "--concurrency", str(fill["concurrency"]), "--candidates", ",".join(fill["candidates"]),
            "--json", "--store", str(tmp_path / "cli.duckdb")]
    out = subprocess.run(args, capture_output=True, text=True, cwd=ROOT, timeout=180)
    assert out.returncode == 0, out.stderr
    cli = {c["hardware"]["id"]: c for c in json.loads(out.stdout)["candidates"]}
    for hid, row in chat.items():
        # another process: the calibration sums rows in DuckDB's order (last float bits may differ)
        assert cli[hid]["decode_tps_per_user"] == pytest.approx(row["tps_each"], rel=1e-6)
        assert cli[hid]["aggregate_decode_tps"] == pytest.approx(row["tps_total"], rel=1e-6)


def test_chat_table_never_puts_an_overloaded_machine_first(store):
    """The chat's side-by-side table follows the engine's ranking: the H100 that serves the team first,
    the Macs that cannot keep up (20 users x 0.2/min of 8k prompts) after it, said in words."""
    from advisor.models import Scenario
    from advisor.render.options import options_markdown

    facts = Scenario(hardware="M3 Ultra", memory_gb=512, compare_hardware=["DGX Spark", "H100 PCIe"],
                     model="llama 3.3 70b", prompt_tokens=8000, gen_tokens=500, concurrency=20,
                     requests_per_minute=0.2)
    opt = options_for(store, facts)
    # One H100 holds 14 of the 20: two (added, the fewest that hold them all) do the job.
    assert [(r["id"], r["status"]) for r in opt.rows] == [
        ("nvidia-h100-pciex2", "meets"), ("nvidia-h100-pcie", "partial"), ("nvidia-dgx-spark-gb10", "overloaded"),
        ("apple-m3-ultra-80gpu", "overloaded")]  # the overloaded: least over first (the Spark reads prompts faster)
    text = options_markdown(opt)
    assert "the 2× H100 PCIe 80GB is the one that does the job" in text
    assert "| M3 Ultra 512 GB | overloaded | 121 | overloaded |" in text
    assert "**M3 Ultra 512 GB** cannot keep up with 20 users" in text and "at 0.2 requests per minute" in text
    fill = compare_fill(store, facts)
    assert fill["requests_per_minute"] == 0.2 and "0.2 requests per minute per user" in fill["stated"]


def test_a_failed_fill_says_the_values_are_not_the_teams(store, monkeypatch):
    """The trial's symptom (512 GB M3 Ultra, 8k prompts, DGX Spark added) is what the tab shows when the fill
    fails: the tab's own defaults. A failure now says so instead of looking filled."""
    import ui.compare_tab as tab

    def broken(*a, **k):
        raise AttributeError("boom")

    monkeypatch.setattr(tab, "compare_fill", broken)
    ups = fill_updates(store, {"hardware": "M3 Ultra", "compare_hardware": ["H100", "M3 Ultra"]})
    assert len(ups) == len(FIELDS) and "not your team's" in ups[-1]["value"]


@pytest.mark.parametrize("text, users, lead", [
    ("We are 5 people. Should we get two RTX 3090s or one RTX 5090 for Qwen 2.5 32B?", 5,
     "**For 5 people at once, both meet the targets**; the RTX 5090 32 GB ranks first (on its tightest margin, "
     "then speed; give prices in the Compare tab to pick on cost)."),
    ("Compare an M3 Ultra with 96GB and an H100 for 10 users at 2 requests a minute each", 10,
     "**For 10 people at once, the H100 PCIe 80GB is the one that does the job**; the other does not."),
    ("For 8 people, is a DGX Spark or an M4 Max 128GB better? mostly short questions, long answers", 8,
     "**Neither meets the targets for 8 people at once**; the closest is the {first} ("),
])
def test_team_questions_answer_in_one_plain_sentence(store, text, users, lead):
    r = service.ask(store, text)
    first = options_for(store, r.facts).rows[0]["name"]  # the best ranked (both hold all 8 users, both too slow)
    assert r.reply.startswith(lead.format(first=first)), r.reply[:200]
    fill = compare_fill(store, r.facts)
    assert len(fill["candidates"]) == 2 and fill["concurrency"] == users
