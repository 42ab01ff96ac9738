"""End to end in headless chromium: the Failures page, a segment's link to the explorer filtered, one keyword graded
(the judgment lands in the SQLite store beside the server's kweval cache)."""

from __future__ import annotations

from urllib.parse import parse_qs, urlparse

import pytest
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from kweval.judgments import read_store
from tests.browser import CHART, ERROR, page_state, settled, wait_until

pytestmark = [pytest.mark.browser, pytest.mark.slow]

QUERY = "movie=ALL&models=keybert,yake,keybert_vader&k=5"


def _button(driver, label: str):
    return wait_until(
        lambda: next((b for b in driver.find_elements(By.CSS_SELECTOR, "button") if b.text.strip() == label), None),
        f"no button {label!r}",
    )


def _annotator_set(driver, name: str) -> bool:
    """Whether the sidebar's Annotator field holds `name` and the run it started is over."""
    field = driver.find_element(By.CSS_SELECTOR, '[data-testid="stSidebar"] input[aria-label^="Annotator"]')
    return field.get_attribute("value") == name and page_state(driver)["script"] == "notRunning"


def test_failures_to_filtered_explorer_to_a_judgment(demo_server, browser):
    driver = browser
    driver.get(f"{demo_server.url}/failures?{QUERY}")
    text = settled(driver, ["Why did my model fail?", "of its keywords are hits", "Open a segment"], present=[CHART])
    assert not driver.find_elements(By.CSS_SELECTOR, ERROR) and "Traceback" not in text
    drawn = wait_until(lambda: len(driver.find_elements(By.CSS_SELECTOR, CHART)) >= 2, "the two charts are not drawn")
    assert drawn and len(driver.find_elements(By.CSS_SELECTOR, '[data-testid="stPlotlyChart"]')) == 2
    link = next(a for a in driver.find_elements(By.CSS_SELECTOR, "a") if "yake · near" in a.text)
    driver.get(link.get_attribute("href"))  # markdown links open a new tab; follow it in this one
    # the filtered cards come with the run that shows "review(s) match", a poll or two after on a busy machine
    settled(driver, ["Review explorer", "Filtered:", "review(s) match"], present=[".kw-category.kw-near_lexical"])
    query = parse_qs(urlparse(driver.current_url).query)
    assert query.get("category") == ["near_lexical"] and query.get("model") == ["yake"], driver.current_url
    _button(driver, "Open this review").click()
    settled(driver, ["← All reviews", "Judge the keywords"])
    name = driver.find_element(By.CSS_SELECTOR, '[data-testid="stSidebar"] input[aria-label^="Annotator"]')
    name.send_keys("reader1", Keys.ENTER)
    wait_until(lambda: _annotator_set(driver, "reader1"), "the annotator's name was not taken")
    settled(driver, ["Judge the keywords"])
    driver.find_element(By.XPATH, "//*[contains(text(), 'Judge the keywords')]").click()
    _button(driver, "Save the judgment").click()
    settled(driver, ["Saved:", "by reader1"])
    stores = list((demo_server.cache_dir / "judgments").glob("*.sqlite"))
    assert len(stores) == 1
    rows = read_store(stores[0])
    assert list(rows["annotator"]) == ["reader1"] and list(rows["side"]) == ["prediction"]
    assert not driver.find_elements(By.CSS_SELECTOR, ERROR)


def test_a_click_on_a_bar_segment_opens_the_explorer_filtered(demo_server, browser):
    driver = browser
    driver.get(f"{demo_server.url}/failures?{QUERY}")
    settled(driver, ["Why did my model fail?", "of its keywords are hits"], present=[CHART])
    chart = driver.find_elements(By.CSS_SELECTOR, '[data-testid="stPlotlyChart"]')[0]
    bars = wait_until(
        lambda: [b for b in chart.find_elements(By.CSS_SELECTOR, "g.trace.bars g.point path") if b.size["width"] > 8],
        "no bar segment drawn",
    )
    ActionChains(driver).move_to_element(bars[0]).pause(0.5).click().perform()  # plotly's overlay takes it
    wait_until(lambda: urlparse(driver.current_url).path == "/explorer", lambda: f"still at {driver.current_url}")
    query = parse_qs(urlparse(driver.current_url).query)
    assert query.get("category"), driver.current_url
    text = settled(driver, ["Review explorer", "Filtered:", "review(s) match"])
    assert "Traceback" not in text
