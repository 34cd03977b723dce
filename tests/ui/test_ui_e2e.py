"""The app in a real headless browser (Debian chromium through Playwright; no browser download)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

ARTIFACTS = Path(__file__).parent / "artifacts"  # git-ignored

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--no-first-run"]

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="needs Debian chromium at /usr/bin/chromium"),
]
sync_api = pytest.importorskip("playwright.sync_api")
expect = sync_api.expect


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            yield b
        finally:
            b.close()


@pytest.fixture
def page(browser, app_url):
    ctx = browser.new_context(viewport={"width": 1440, "height": 1000})
    pg = ctx.new_page()
    pg.set_default_timeout(15_000)
    pg.goto(app_url)
    expect(pg.locator("#msg textarea")).to_be_visible()
    try:
        yield pg
    finally:
        ctx.close()


def send(page, text: str) -> None:
    n = page.locator("#chat .bot").count()
    box = page.locator("#msg textarea")
    box.fill(text)
    box.press("Enter")
    expect(page.locator("#chat .bot")).to_have_count(n + 1, timeout=15_000)
    expect(box).to_have_value("", timeout=15_000)  # cleared when the reply lands (a cold fit takes seconds)


def shot(page, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / name), full_page=True)


def test_full_session(page, llama_bench_md):
    send(page, "I have a MacBook Air M2 with 16 GB")
    expect(page.locator("#facts")).to_contain_text("16")
    send(page, "Llama 3.1 8B at 4-bit for chat")
    verdict = page.locator("#verdict")
    for _ in range(3):  # answer any follow-up with the first quick reply
        if "Bottleneck:" in verdict.inner_text():
            break
        quick = page.locator("#quick label")
        if quick.count():
            n = page.locator("#chat .bot").count()
            quick.first.click()
            expect(page.locator("#chat .bot")).to_have_count(n + 1)
        else:
            send(page, "yes")
    expect(verdict).to_contain_text("Bottleneck:", timeout=15_000)
    expect(page.locator("#facts")).to_contain_text("M2")
    # The roofline chart rendered; the downloads are made when asked.
    expect(page.locator("#roofline .js-plotly-plot")).to_be_visible()
    expect(page.locator("#export-md")).to_be_hidden()
    page.locator("#export-btn").click()
    expect(page.locator("#export-md")).to_be_visible()
    with page.expect_download() as dl:
        page.locator("#export-json").click()
    assert dl.value.suggested_filename.endswith(".json")
    assert '"bottleneck"' in open(dl.value.path(), encoding="utf-8").read()
    shot(page, "01-verdict.png")

    page.get_by_role("tab", name="Time line").click()
    expect(page.locator("#timeline .js-plotly-plot")).to_be_visible()
    expect(page.locator("#timeline")).to_contain_text("Predicted now")
    page.locator("#charts").screenshot(path=str(ARTIFACTS / "03-timeline.png"))
    page.get_by_role("tab", name="Peers").click()
    expect(page.locator("#peers .js-plotly-plot")).to_be_visible()
    expect(page.locator("#peers")).to_contain_text("Predicted for you")
    page.locator("#charts").screenshot(path=str(ARTIFACTS / "04-peers.png"))

    # Editing a fact re-computes the verdict.
    row = page.locator('#facts [role="row"]', has_text="prompt (tokens)")
    row.locator('[role="gridcell"]').nth(1).dblclick()
    expect(page.locator('#facts textarea[aria-label="Edit cell"]')).to_be_visible()
    page.keyboard.press("Control+A")
    page.keyboard.type("8000")
    page.keyboard.press("Enter")
    expect(page.locator("#facts-note")).to_contain_text("Updated", timeout=15_000)
    expect(verdict).to_contain_text("8,000")

    # The probe shows progress, then its result.
    page.locator("#probe-btn").click()
    expect(page.locator("#probe-out")).to_contain_text(re.compile("Measuring|Detecting|Starting"), timeout=5_000)
    expect(page.locator("#probe-out")).to_contain_text("42.5 GB/s", timeout=15_000)
    expect(page.locator("#probe-btn")).to_be_enabled()

    # Pasted tool output is read and diagnosed.
    page.get_by_text("Paste tool output").click()
    page.locator("#paste textarea").fill(llama_bench_md)
    page.locator("#paste-btn").click()
    expect(page.locator("#paste-out")).to_contain_text("chat")
    expect(page.locator("#chat .bot").last).to_contain_text("2 measurement")
    expect(page.locator("#chat .bot").last).to_contain_text("190.5")
    page.get_by_role("tab", name="Roofline").click()
    expect(page.locator("#roofline .js-plotly-plot")).to_be_visible()
    shot(page, "02-after-probe-and-paste.png")


def test_browser_sessions_are_isolated(browser, app_url, page):
    send(page, "I have a MacBook Air M2 with 16 GB")
    ctx2 = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        other = ctx2.new_page()
        other.goto(app_url)
        expect(other.locator("#msg textarea")).to_be_visible()
        send(other, "I have an RTX 4090")
        expect(other.locator("#facts")).to_contain_text("4090")
        expect(other.locator("#facts")).not_to_contain_text("M2")
        # The question's choices are offered as quick replies; clicking one sends it.
        choice = other.locator("#quick label").first
        expect(choice).to_be_visible()
        picked = choice.inner_text().strip()
        n = other.locator("#chat .user").count()
        choice.click()
        expect(other.locator("#chat .user")).to_have_count(n + 1)
        expect(other.locator("#chat .user").last).to_contain_text(picked)
        expect(page.locator("#facts")).not_to_contain_text("4090")
    finally:
        ctx2.close()
