"""The terminal is a conversation too: answers rendered with rich, ``--json`` unchanged."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from advisor.cli import app

runner = CliRunner()
STORE: list[str] = []


@pytest.fixture(scope="module", autouse=True)
def _one_store(tmp_path_factory):
    """One seeded store file for the module (seeding costs seconds; the commands only read it)."""
    STORE[:] = ["--store", str(tmp_path_factory.mktemp("cli-render") / "store.duckdb")]
LLAMA_BENCH = """\
| model                          |       size |     params | backend    | ngl |          test |                  t/s |
| ------------------------------ | ---------: | ---------: | ---------- | --: | ------------: | -------------------: |
| llama 8B Q4_K - Medium         |   4.58 GiB |     8.03 B | Metal,BLAS |  99 |         pp512 |        190.52 ± 0.31 |
| llama 8B Q4_K - Medium         |   4.58 GiB |     8.03 B | Metal,BLAS |  99 |         tg128 |         17.21 ± 0.05 |
"""


def test_ask_renders_markdown_for_a_terminal():
    r = runner.invoke(app, ["ask", "MacBook Air M3 16GB, can I run a 27B model for chat?", *STORE])
    assert r.exit_code == 0, r.output
    out = r.output
    assert "does not fit" in out and "Best fix:" in out
    assert "<details>" not in out and "<sub>" not in out and "**" not in out  # rendered, not raw Markdown
    assert "The numbers" in out and "predicted" in out and "|---" not in out  # the table is drawn
    assert all(line == line.rstrip() for line in out.splitlines())


def test_ask_json_keeps_its_contract():
    r = runner.invoke(app, ["ask", "MacBook Air M3 16GB, can I run a 27B model for chat?", *STORE, "--json"])
    d = json.loads(r.output.strip().splitlines()[-1])
    assert {"reply", "verdict", "facts", "missing"} <= set(d)
    assert "<details>" in d["reply"]  # the reply is the chat's Markdown, folded detail included
    follow = runner.invoke(app, ["ask", "what about the 24GB one?", "--facts", json.dumps(d["facts"]), *STORE,
                                 "--json"])
    d2 = json.loads(follow.output.strip().splitlines()[-1])
    assert "memory 16 GB → 24 GB" in d2["reply"]


def test_import_prints_a_table_and_the_answer(tmp_path):
    f = tmp_path / "bench.md"
    f.write_text(LLAMA_BENCH, encoding="utf-8")
    r = runner.invoke(app, ["import", str(f), "--hardware", "MacBook Air M2 16GB", "--no-save", *STORE])
    assert r.exit_code == 0, r.output
    assert "from llama-bench output" in r.output and "191" in r.output and "17.2" in r.output
    assert "decode tok/s" in r.output and "|" not in r.output.split("decode tok/s")[1].splitlines()[0]


def test_ask_lists_the_choices_of_its_question_and_how_to_answer():
    r = runner.invoke(app, ["ask", "Mac mini M4, llama 3.1 8b", *STORE])
    assert r.exit_code == 0, r.output
    assert "How much unified memory" in r.output
    assert "For example: 16 GB · 24 GB · 32 GB" in r.output and "--facts" in r.output
    j = runner.invoke(app, ["ask", "Mac mini M4, llama 3.1 8b", *STORE, "--json"])
    d = json.loads(j.output.strip().splitlines()[-1])
    assert "For example" not in d["reply"] and d["question"]["choices"] == ["16 GB", "24 GB", "32 GB"]


def test_ask_takes_a_message_that_starts_with_a_dash():
    r = runner.invoke(app, ["ask", "-40% tok/s since the update: M4 Pro 48GB, qwen3 8b q4_k_m, tg 30 tok/s", "--json",
                            *STORE])
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    assert out["facts"]["measured_decode_tps"] == 30 and out["facts"]["hardware"]
