"""End to end in headless chromium: the Failures page, a segment's link to the explorer filtered, one keyword graded
(the judgment lands in the SQLite store beside the server's kweval cache)."""

from __future__ import annotations

from urllib.parse import parse_qs, urlparse

import pytest
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By

from kweval.judgments import read_store
from tests.browser import (
    CHART,
    ERROR,
    SVG_CHART,
    click_button,
    click_text,
    page_state,
    settled,
    type_into,
    wait_until,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]

QUERY = "movie=ALL&models=keybert,yake,keybert_vader&k=5"


ANNOTATOR = '[data-testid="stSidebar"] input[aria-label^="Annotator"]'
SEGMENT = f"{SVG_CHART} a g.kw-segment rect"  # a bar segment of the charts (dashboard/svg_charts.py), a link


def _annotator_set(driver, name: str) -> bool:
    """Whether the sidebar's Annotator field holds `name` and the run it started is over (read in one script: a rerun
    may replace the field)."""
    value = driver.execute_script("const e = document.querySelector(arguments[0]); return e && e.value;", ANNOTATOR)
    return value == name and page_state(driver)["script"] == "notRunning"


def _links(driver) -> list[list[str]]:
    """Every HTML link's text and href, read in one script (not the charts' SVG links: a segment, `SEGMENT`)."""
    return driver.execute_script(
        "return Array.from(document.querySelectorAll('a:not(svg a)'), a => [a.innerText, a.href]);"
    )


def test_failures_to_filtered_explorer_to_a_judgment(demo_server, browser):
    driver = browser
    driver.get(f"{demo_server.url}/failures?{QUERY}")
    text = settled(driver, ["Why did my model fail?", "of its keywords are hits", "Open a segment"], present=[CHART])
    assert not driver.find_elements(By.CSS_SELECTOR, ERROR) and "Traceback" not in text
    drawn = wait_until(lambda: len(driver.find_elements(By.CSS_SELECTOR, CHART)) >= 2, "the two charts are not drawn")
    assert drawn and len(driver.find_elements(By.CSS_SELECTOR, SVG_CHART)) == 2
    href = wait_until(
        lambda: next((h for t, h in _links(driver) if "yake · near" in t), None),
        lambda: f"no link 'yake · near' in {[t for t, _ in _links(driver)]}",
    )
    driver.get(href)  # markdown links open a new tab; follow it in this one
    # the filtered cards come with the run that shows "review(s) match", a poll or two after on a busy machine
    settled(driver, ["Review explorer", "Filtered:", "review(s) match"], present=[".kw-category.kw-near_lexical"])
    query = parse_qs(urlparse(driver.current_url).query)
    assert query.get("category") == ["near_lexical"] and query.get("model") == ["yake"], driver.current_url
    click_button(driver, "Open this review")
    settled(driver, ["← All reviews", "Judge the keywords"])
    type_into(driver, ANNOTATOR, "reader1")
    wait_until(lambda: _annotator_set(driver, "reader1"), "the annotator's name was not taken")
    settled(driver, ["Judge the keywords"])
    click_text(driver, "Judge the keywords")
    click_button(driver, "Save the judgment")
    settled(driver, ["Saved:", "by reader1"])
    stores = list((demo_server.cache_dir / "judgments").glob("*.sqlite"))
    assert len(stores) == 1
    rows = read_store(stores[0])
    assert list(rows["annotator"]) == ["reader1"] and list(rows["side"]) == ["prediction"]
    assert not driver.find_elements(By.CSS_SELECTOR, ERROR)


def test_a_click_on_a_bar_segment_opens_the_explorer_filtered(demo_server, browser):
    driver = browser
    driver.get(f"{demo_server.url}/failures?{QUERY}")
    settled(driver, ["Why did my model fail?", "of its keywords are hits"], present=[SEGMENT])
    home = driver.current_window_handle

    def clicked() -> bool:  # the first chart's first segment wide enough to point at, clicked where it is drawn
        wide = [s for s in driver.find_elements(By.CSS_SELECTOR, SEGMENT) if s.size["width"] > 8]
        if not wide:
            return False
        ActionChains(driver).move_to_element(wide[0]).click().perform()
        return True

    wait_until(clicked, "no bar segment drawn to click")
    # a link in Markdown's HTML may open a new tab: follow the explorer wherever it opened
    wait_until(lambda: len(driver.window_handles) > 1 or urlparse(driver.current_url).path == "/explorer", "no page")
    opened = [h for h in driver.window_handles if h != home]
    if opened:
        driver.switch_to.window(opened[0])
    try:
        wait_until(lambda: urlparse(driver.current_url).path == "/explorer", lambda: f"still at {driver.current_url}")
        query = parse_qs(urlparse(driver.current_url).query)
        assert query.get("category") and query.get("model"), driver.current_url
        text = settled(driver, ["Review explorer", "Filtered:", "review(s) match"])
        assert "Traceback" not in text
    finally:
        if opened:
            driver.close()
            driver.switch_to.window(home)
