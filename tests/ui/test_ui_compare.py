"""The "Compare hardware" tab: chart function, form handler, /compare endpoint, and the tab in a browser."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import plotly.graph_objects as go
import pytest

from advisor import compare as cmp
from ui import charts
from ui.app import api_compare, compare_choices, run_compare

ARTIFACTS = Path(__file__).parent / "artifacts"  # git-ignored
CHROMIUM = "/usr/bin/chromium"
REQUEST = {"model": "llama 3.3 70b", "quant": "Q4_K_M", "prompt_tokens": 8000, "gen_tokens": 500, "concurrency": 20,
           "requests_per_minute": 0.2, "ttft_target_s": 30, "tps_per_user": 10,
           "candidates": ["apple-m3-ultra-80gpu", "nvidia-rtx-4090x2", "nvidia-h200", "nvidia-dgx-spark-gb10"],
           "prices": {"nvidia-h200": 32000}}


@pytest.fixture(scope="module")
def result(store):
    return cmp.compare_request(store, cmp.CompareRequest(**REQUEST))


# ----------------------------------------------------------------------------- chart
def test_compare_figure_draws_curves_targets_and_saturation(result):
    fig = charts.compare_figure(result)
    assert isinstance(fig, go.Figure)
    lines = [t for t in fig.data if t.mode == "lines"]
    drawn = [c for c in result["candidates"] if c["batch"]["curve"]]
    assert len(lines) == 2 * len(drawn)  # aggregate (left) and per-user (right) for each that fits
    h200 = next(c for c in drawn if c["hardware"]["id"] == "nvidia-h200")
    agg = next(t for t in lines if t.name.startswith("H200") and t.xaxis == "x")
    per = next(t for t in lines if t.name.startswith("H200") and t.xaxis == "x2")
    assert list(agg.y) == [p["aggregate_tps"] for p in h200["batch"]["curve"]]
    assert list(per.y) == [p["per_user_tps"] for p in h200["batch"]["curve"]]
    assert per.line.dash == "dash"
    # The per-user target (horizontal, right panel) and the users (vertical) are drawn.
    ys = [s.y0 for s in fig.layout.shapes if s.y0 == s.y1]
    xs = [s.x0 for s in fig.layout.shapes if s.x0 == s.x1]
    assert 10 in ys and 20 in xs
    assert any("target 10 tok/s" in (a.text or "") for a in fig.layout.annotations)
    users = [a for a in fig.layout.annotations if "20 users" in (a.text or "")]
    assert len(users) == 2 and users[0].x == pytest.approx(math.log10(20))  # log axis: log10 position
    # Saturation markers sit on the aggregate curves.
    marks = [t for t in fig.data if t.mode == "markers"]
    assert marks and all(m.x[0] in [p["concurrency"] for c in drawn for p in c["batch"]["curve"]] for m in marks)
    assert fig.layout.xaxis.type == "log"


def test_compare_figure_without_curves_says_so():
    fig = charts.compare_figure({"candidates": [{"batch": {"curve": []}}]})
    assert "nothing to draw" in fig.layout.annotations[0].text


# ----------------------------------------------------------------------------- form handler
def test_compare_choices_offer_catalog_and_multi_gpu(store):
    hw, models = compare_choices(store)
    ids = {v for _, v in hw}
    assert {"nvidia-h200", "apple-m3-ultra-80gpu", "nvidia-rtx-4090x2", "nvidia-dgx-spark-gb10"} <= ids
    assert "meta-llama/Llama-3.3-70B-Instruct" in models
    assert not any(v.startswith("cpu-") for v in ids)


def test_run_compare_with_nothing_that_fits_says_so(store):
    md, rows, fig = run_compare(store, "a 999b model", "Q4_K_M", 8000, 500, 20, None, None, None, [], "", 0, "f16")
    assert rows == [] and "No candidate holds" in md and "nothing to draw" in fig.layout.annotations[0].text


def test_run_compare_fills_table_chart_and_summary(store):
    md, rows, fig = run_compare(store, "llama 3.3 70b", "Q4_K_M", 8000, 500, 20, 0.2, 30, 10,
                                ["apple-m3-ultra-80gpu", "nvidia-h200"], "nvidia-h200=32000", 0, "f16")
    assert len(rows) == 2 and rows[0][1] == "H200 SXM 141GB" and rows[0][2] == "meets targets"
    assert rows[1][2] == rows[1][4] == "overloaded"  # the 512 GB M3 Ultra cannot keep up: ranked below
    assert len(rows[0]) == len(cmp.TABLE_HEADERS) and rows[0][9] != "—"  # priced
    assert "Summary" in md and "Assumptions" in md
    assert isinstance(fig, go.Figure) and fig.data


@pytest.mark.parametrize("model, prices, msg", [("potato", "", "potato"),
                                                ("llama 3.3 70b", "h200", "ID=USD")])
def test_run_compare_errors_are_messages(store, model, prices, msg):
    md, rows, fig = run_compare(store, model, "Q4_K_M", 8000, 500, 20, None, None, None, [], prices, 0, "f16")
    assert md.startswith("⚠️") and msg in md and "Traceback" not in md and rows == []


# ----------------------------------------------------------------------------- /compare endpoint
def test_api_compare_in_process(store):
    out = json.loads(api_compare(store, json.dumps(REQUEST)))
    assert out["candidates"][0]["hardware"]["id"] == "nvidia-h200"
    assert out["candidates"][0]["cost"]["usd_per_million_tokens"] > 0
    for bad in ("", "[1, 2]", "{not json", json.dumps({**REQUEST, "concurrency": -1})):
        err = json.loads(api_compare(store, bad))
        assert err["error"] and "Traceback" not in err["error"]


@pytest.mark.e2e
def test_compare_endpoint_over_http(app_url):
    from gradio_client import Client

    c = Client(app_url, verbose=False, analytics_enabled=False)
    try:
        named = c.view_api(print_info=False, return_format="dict")["named_endpoints"]
        assert [p["parameter_name"] for p in named["/compare"]["parameters"]] == ["request_json"]
        out = json.loads(c.predict(json.dumps(REQUEST), api_name="/compare"))
        assert [x["rank"] for x in out["candidates"]] == [1, 2, 3, 4]
        assert json.loads(c.predict("nonsense", api_name="/compare"))["error"]
    finally:
        c.close()


# ----------------------------------------------------------------------------- in a browser
@pytest.mark.e2e
@pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="needs Debian chromium at /usr/bin/chromium")
def test_compare_tab_in_browser(app_url):
    sync_api = pytest.importorskip("playwright.sync_api")
    expect = sync_api.expect
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True,
                              args=["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"])
        try:
            page = b.new_context(viewport={"width": 1440, "height": 1000}).new_page()
            page.set_default_timeout(20_000)
            page.goto(app_url)
            page.get_by_role("tab", name="Compare hardware").click()
            prices = page.locator("#cmp-prices textarea, #cmp-prices input").first
            prices.fill("nvidia-h100-pcie=30000")
            page.locator("#compare-btn").click()
            table = page.locator("#compare-table")
            expect(table).to_contain_text("H100 PCIe", timeout=30_000)
            expect(table).to_contain_text("M3 Ultra")
            expect(table).to_contain_text("overloaded")
            expect(page.locator("#compare-chart .js-plotly-plot")).to_be_visible()
            expect(page.locator("#compare-chart")).to_contain_text("Decode tok/s per user")
            expect(page.locator("#compare-summary")).to_contain_text("Summary")
            ARTIFACTS.mkdir(exist_ok=True)
            page.locator("#compare-tabs").screenshot(path=str(ARTIFACTS / "05-compare.png"))
        finally:
            b.close()
