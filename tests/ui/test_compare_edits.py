"""The note above the Compare form after a fill says which values were then changed by hand (trial B3)."""

from __future__ import annotations

import gradio as gr
import pytest

from knowledge.store import Store
from ui.compare_tab import build_compare_tab, edited_note, fill_note

FILLED = fill_note({"stated": ["3 machines as named", "prompts of 3,000 tokens", "6 users"],
                    "defaults": ["answers of 300 tokens"]})


def test_an_edit_is_said_after_the_fill():
    n = edited_note(FILLED, "Users", 20)
    assert n.startswith(FILLED) and n.endswith("**Changed by hand:** Users = 20 (the table uses the form's values).")


@pytest.mark.parametrize("edits, said", [
    ([("Users", 20), ("Users", 40)], "Users = 40"),
    ([("Users", 20), ("Prompt tokens", 5000.0)], "Users = 20; Prompt tokens = 5000"),
    ([("Candidates", ["nvidia-h100-pcie", "nvidia-h200"])], "Candidates = nvidia-h100-pcie, nvidia-h200"),
    ([("Requests / min per user", None)], "Requests / min per user = —"),
])
def test_edits_accumulate_and_the_latest_value_wins(edits, said):
    n = FILLED
    for label, value in edits:
        n = edited_note(n, label, value)
    assert n == f"{FILLED} **Changed by hand:** {said} (the table uses the form's values)."


def test_without_a_fill_the_note_is_left_alone():
    assert edited_note("", "Users", 20) == ""
    assert edited_note("The chat has not named machines.", "Users", 20) == "The chat has not named machines."


def test_the_users_field_rewrites_the_note_on_a_persons_edit():
    with gr.Blocks() as blocks:
        form = build_compare_tab(Store(":memory:"))
    fns = [f for f in blocks.fns.values() if form.users in f.inputs and f.outputs == [form.note]]
    assert len(fns) == 1 and [t[1] for t in fns[0].targets] == ["input"]  # a person's edit, not a fill
    assert fns[0].fn(20, FILLED).endswith("Users = 20 (the table uses the form's values).")
