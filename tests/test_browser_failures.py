"""End to end in headless chromium: the Failures page, a segment's link to the explorer filtered, one keyword graded
(the judgment lands in the SQLite store beside the server's kweval cache)."""

from __future__ import annotations

import time
from urllib.parse import parse_qs, urlparse

import pytest
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from kweval.judgments import read_store
from tests.test_browser import ERROR, _chromium, _server, _settled

pytestmark = [pytest.mark.browser, pytest.mark.slow]

QUERY = "movie=ALL&models=keybert,yake,keybert_vader&k=5"


def _button(driver, label: str):
    deadline = time.time() + 30
    while time.time() < deadline:
        found = [b for b in driver.find_elements(By.CSS_SELECTOR, "button") if b.text.strip() == label]
        if found:
            return found[0]
        time.sleep(0.25)
    raise AssertionError(f"no button {label!r}")


def test_failures_to_filtered_explorer_to_a_judgment(tmp_path):
    with _server(tmp_path) as url, _chromium() as driver:
        driver.get(f"{url}/failures?{QUERY}")
        text = _settled(driver, ["Why did my model fail?", "of its keywords are hits", "Open a segment"])
        assert not driver.find_elements(By.CSS_SELECTOR, ERROR) and "Traceback" not in text
        assert len(driver.find_elements(By.CSS_SELECTOR, '[data-testid="stPlotlyChart"]')) == 2
        link = next(a for a in driver.find_elements(By.CSS_SELECTOR, "a") if "yake · near" in a.text)
        driver.get(link.get_attribute("href"))  # markdown links open a new tab; follow it in this one
        text = _settled(driver, ["Review explorer", "Filtered:", "review(s) match"])
        query = parse_qs(urlparse(driver.current_url).query)
        assert query.get("category") == ["near_lexical"] and query.get("model") == ["yake"], driver.current_url
        assert driver.find_elements(By.CSS_SELECTOR, ".kw-category.kw-near_lexical"), "no near keyword marked"
        _button(driver, "Open this review").click()
        _settled(driver, ["← All reviews", "Judge the keywords"])
        name = driver.find_element(By.CSS_SELECTOR, '[data-testid="stSidebar"] input[aria-label^="Annotator"]')
        name.send_keys("reader1", Keys.ENTER)
        time.sleep(1.0)
        driver.find_element(By.XPATH, "//*[contains(text(), 'Judge the keywords')]").click()
        _button(driver, "Save the judgment").click()
        _settled(driver, ["Saved:", "by reader1"])
        stores = list((tmp_path / "embeddings" / "judgments").glob("*.sqlite"))
        assert len(stores) == 1
        rows = read_store(stores[0])
        assert list(rows["annotator"]) == ["reader1"] and list(rows["side"]) == ["prediction"]
        assert not driver.find_elements(By.CSS_SELECTOR, ERROR)


def test_a_click_on_a_bar_segment_opens_the_explorer_filtered(tmp_path):
    with _server(tmp_path) as url, _chromium() as driver:
        driver.get(f"{url}/failures?{QUERY}")
        _settled(driver, ["Why did my model fail?", "of its keywords are hits"])
        chart = driver.find_elements(By.CSS_SELECTOR, '[data-testid="stPlotlyChart"]')[0]
        bars = [b for b in chart.find_elements(By.CSS_SELECTOR, "g.trace.bars g.point path") if b.size["width"] > 8]
        assert bars, "no bar segment drawn"
        ActionChains(driver).move_to_element(bars[0]).pause(0.5).click().perform()  # plotly's overlay takes it
        deadline = time.time() + 60
        while time.time() < deadline and urlparse(driver.current_url).path != "/explorer":
            time.sleep(0.3)
        query = parse_qs(urlparse(driver.current_url).query)
        assert urlparse(driver.current_url).path == "/explorer" and query.get("category"), driver.current_url
        text = _settled(driver, ["Review explorer", "Filtered:", "review(s) match"])
        assert "Traceback" not in text
