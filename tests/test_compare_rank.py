"""Compare's ranking rule and what its tables say about queueing (issue 15, issue 18).

* A machine that cannot hold the stated users (the model does not fit, or requests arrive faster than
  it answers: overloaded) never ranks above one that can, in the JSON, the table and the CLI.
* TTFT median and p95 come from the queue simulation; without a request rate the table says "idle"
  (every request finds the machine free, so median = p95), at a rate too low for a queue "no queue".
"""

from __future__ import annotations

import json
import re

import pytest
from typer.testing import CliRunner

from advisor import compare as cmp
from advisor.compare.evaluate import STATUSES, candidate_status

FOUR = ["apple-m3-ultra-80gpu", "nvidia-rtx-4090x2", "nvidia-h100-pcie", "nvidia-dgx-spark-gb10"]
# The Compare tab's own defaults (20 users, 8k prompts, a request every 5 minutes each): the trial's case.
TAB = dict(model="llama 3.3 70b", prompt_tokens=8000, gen_tokens=500, concurrency=20, requests_per_minute=0.2,
           ttft_target_s=30, tps_per_user=10, candidates=FOUR)


@pytest.fixture(scope="module")
def tab_result(store):
    return cmp.compare(store, **TAB)


def _ids(res):
    return [c["hardware"]["id"] for c in res["candidates"]]


def test_an_overloaded_machine_ranks_below_the_one_that_serves_the_team(tab_result):
    """Before: the 512 GB M3 Ultra (fits 121 users, but 20 × 0.2/min of 8k prompts at ~100 tok/s prefill
    is ~5× what it can read) ranked first, above an H100 that answers every request."""
    res = tab_result
    # 2× RTX 4090 (2 × 24 GiB = 51.5 GB) holds the 70B at Q4_K_M with one 8.5k-token conversation: one user at a
    # time, so 20 users' requests queue without bound (overloaded), below the H100 that holds 14.
    # Overloaded machines rank by how far over they are: the DGX Spark reads 8k prompts faster than the M3 Ultra.
    assert _ids(res) == ["nvidia-h100-pcie", "nvidia-rtx-4090x2", "nvidia-dgx-spark-gb10", "apple-m3-ultra-80gpu"]
    h100, rtx, spark, m3 = res["candidates"]
    assert spark["load"]["utilisation_lower_bound"] < m3["load"]["utilisation_lower_bound"]
    assert (h100["status"], h100["max_concurrency"], h100["holds_users"]) == ("partial", 14, True)
    svc = 8000 / h100["prefill_tps"]  # one 8k prompt on an idle H100, s; the queue adds to it but stays finite
    assert svc < h100["ttft_s"]["median"] < h100["ttft_s"]["p95"] < 10 * svc
    rate = 20 * 0.2 / 60
    for c in (m3, spark):
        assert c["status"] == "overloaded" and c["holds_users"] is False and c["max_concurrency"] >= 20
        prefill_alone = rate * 8000 / c["prefill_tps"]  # λ × prompt / prefill rate: prefill work per second
        assert prefill_alone > 1.5 and c["load"]["utilisation_lower_bound"] >= prefill_alone  # > 1: overloaded
        assert c["ttft_s"]["p95"] is None
    assert m3["hardware"]["memory_gb"] == 512  # memory not stated: the largest option, said in its notes
    assert rtx["status"] == "overloaded" and rtx["max_concurrency"] == 1


@pytest.mark.parametrize("over", [
    dict(ttft_target_s=None, tps_per_user=10),  # headroom from tok/s alone used to lift the overloaded Macs
    dict(ttft_target_s=None, tps_per_user=None),
    dict(concurrency=6, requests_per_minute=1, ttft_target_s=None, tps_per_user=None),
    dict(concurrency=6, requests_per_minute=0.5, ttft_target_s=5, tps_per_user=None),
    dict(concurrency=6, requests_per_minute=None, prompt_tokens=500, gen_tokens=300),
    dict(concurrency=40, requests_per_minute=0.05, prompt_tokens=2000, kv_quant="q8_0"),
])
def test_no_machine_that_cannot_hold_the_users_ranks_above_one_that_can(store, over):
    res = cmp.compare(store, **{**TAB, **over})
    cands = res["candidates"]
    assert [c["rank"] for c in cands] == list(range(1, len(cands) + 1))
    holds = [c["holds_users"] for c in cands]
    assert holds == sorted(holds, reverse=True), [(c["hardware"]["id"], c["status"]) for c in cands]
    order = [STATUSES.index(c["status"]) for c in cands]
    assert order == sorted(order)
    for c in cands:  # the status agrees with the numbers it summarises
        overloaded = bool(c.get("load") and c["load"]["overloaded"])
        assert c["status"] == candidate_status(c["max_concurrency"], res["concurrency"], overloaded, c["meets_targets"])


def test_status_by_hand():
    assert candidate_status(0, 6, overloaded=False, meets=False) == "no_fit"
    assert candidate_status(121, 20, overloaded=True, meets=False) == "overloaded"
    assert candidate_status(12, 20, overloaded=False, meets=False) == "partial"
    assert candidate_status(45, 6, overloaded=False, meets=False) == "holds"
    assert candidate_status(45, 6, overloaded=False, meets=True) == "meets"


def test_table_says_what_each_machine_can_do(tab_result):
    rows = cmp.table_rows(tab_result)
    assert len(rows[0]) == len(cmp.TABLE_HEADERS)
    assert [r[2] for r in rows] == ["14 of 20 at once", "overloaded", "overloaded", "overloaded"]
    t = tab_result["candidates"][0]["ttft_s"]
    assert rows[0][4] == f"{t['median']:.1f} / {t['p95']:.1f}"  # median and p95 of the simulated queue
    assert rows[2][4] == "overloaded" and rows[3][4] == "overloaded"
    assert all(len(h) <= 24 for h in cmp.TABLE_HEADERS)  # short words: no header is cut in a narrow column
    md = cmp.table_markdown(tab_result)
    assert "**status**" in md and "overloaded (requests arrive faster" in md


def test_without_a_rate_the_first_word_is_an_idle_machine_and_says_so(store):
    res = cmp.compare(store, model="llama 3.3 70b", concurrency=6, prompt_tokens=2000,
                      candidates=["nvidia-h100-pcie", "apple-m3-ultra-80gpu 96GB"])
    h100 = res["candidates"][0]
    t = h100["ttft_s"]
    assert t["median"] == t["p95"] == pytest.approx(2000 / h100["prefill_tps"])  # one prompt, no wait
    rows = cmp.table_rows(res)
    shown, idle = rows[0][4].split()
    assert idle == "(idle)" and float(shown) == pytest.approx(2000 / h100["prefill_tps"], rel=0.05) and rows[0][5] == "—"
    assert "no request rate given" in cmp.table_markdown(res)
    notes = cmp.notes_markdown(res)
    assert "No request rate given: every request finds the machine idle" in notes
    assert "on an idle machine (no request rate given)" in notes


def test_with_a_rate_the_p95_comes_from_the_queue(store):
    # 40 users x 0.9/min = 0.6 request per second; 2,000-token prompts take ~0.8 s on the H100 (λD ≈ 0.5),
    # 45 sequences fit, so slots never bind and the unchunked case is an M/D/1 queue of prefill work.
    res = cmp.compare(store, model="llama 3.3 70b", concurrency=40, prompt_tokens=2000, requests_per_minute=0.9,
                      candidates=["nvidia-h100-pcie"])
    c = res["candidates"][0]
    svc = 2000 / c["prefill_tps"]
    check = c["load"]["unchunked"]["md1_check"]
    assert check["prefill_rho"] == pytest.approx(40 * 0.9 / 60 * svc) and 0.3 < check["prefill_rho"] < 0.7
    u = c["ttft_no_chunking_s"]
    assert u["p95"] == pytest.approx(check["exact_p95_ttft_s"], rel=0.05)  # Erlang/Crommelin exact p95
    assert u["mean"] == pytest.approx(check["pk_mean_ttft_s"], rel=0.05)  # Pollaczek–Khinchine mean
    t = c["ttft_s"]
    # chunked prefill reads a prompt a little slower than whole; the p95 is the queue's, not a copy of the median
    assert svc <= t["median"] <= 1.3 * svc and t["p95"] > 2.5 * t["median"]
    med, p95 = (float(x) for x in cmp.table_rows(res)[0][4].split(" / "))
    assert med == pytest.approx(t["median"], rel=0.05) and p95 == pytest.approx(t["p95"], rel=0.05)
    low = cmp.compare(store, model="llama 3.3 70b", concurrency=6, prompt_tokens=2000, requests_per_minute=0.01,
                      candidates=["nvidia-h100-pcie"])
    lt = low["candidates"][0]["ttft_s"]
    assert lt["p95"] == pytest.approx(lt["median"], rel=0.005)  # λD ≈ 0.0015: 95 % of requests find it free
    shown, tag = cmp.table_rows(low)[0][4].split(" ", 1)
    assert tag == "(no queue)" and float(shown) == pytest.approx(lt["p95"], rel=0.05)


def test_assumptions_plain_words_first_and_folded(tab_result):
    md = cmp.notes_markdown(tab_result)
    assert md.startswith("**None of the 4 meets the targets; the closest is the ") and "\n\n**Summary**" in md
    folded = md[md.index("<details>"):]
    assert "Pollaczek" in folded and "Pollaczek" not in md[:md.index("<details>")]
    assert "Requests arrive at random" in folded and "the busier the machine, the longer the wait" in folded
    assert folded.index("Requests arrive at random") < folded.index("(Poisson arrivals")
    assert md.count("<details>") == md.count("</details>") == 2


def test_cli_compare_ranks_and_labels(tmp_path):
    from advisor.cli import app

    args = ["compare", "--model", "llama 3.3 70b", "--concurrency", "20", "--prompt-tokens", "8000",
            "--gen-tokens", "500", "--requests-per-minute", "0.2", "--candidates", ",".join(FOUR),
            "--store", str(tmp_path / "s.duckdb")]
    r = CliRunner().invoke(app, [*args, "--json"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert _ids(out)[0] == "nvidia-h100-pcie" and [c["status"] for c in out["candidates"]][-1] == "overloaded"
    r = CliRunner().invoke(app, args, env={"COLUMNS": "200"})
    assert r.exit_code == 0
    first = next(line for line in r.stdout.splitlines() if re.match(r"^ *1 ", line))
    assert "H100 PCIe" in first and "14 of 20 at once" in first
    assert re.search(r"^ *2 .*overloaded", r.stdout, re.M) and "Assumptions" in r.stdout
