"""In headless Debian chromium (issue 23): the Summary's headline card on the demo, above the fold, and the
per-document words on a small collection's Summary and explorer."""

from __future__ import annotations

import re

import pytest
from selenium.webdriver.common.by import By

from tests.test_browser import ERROR, _chromium, _server, _settled
from tests.test_page_headline import _collection

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def test_headline_card_on_the_demo(tmp_path):
    with _server(tmp_path) as url, _chromium(1400, 1000) as driver:
        driver.get(f"{url}/summary?movie=ALL&models=keybert,yake,keybert_vader")
        text = _settled(driver, ["At a glance", "clearly behind", "How sure", "Build report"], timeout=120)
        assert not driver.find_elements(By.CSS_SELECTOR, ERROR) and "Traceback" not in text
        card = driver.find_element(By.CSS_SELECTOR, ".st-key-headline_card")
        assert card.is_displayed() and card.location["y"] < 1000, card.location  # the answer at a glance
        lines = [li.text for li in card.find_elements(By.CSS_SELECTOR, "li") if li.is_displayed()]
        assert len(lines) >= 4 and any(line.endswith("each significant.") for line in lines), lines
        # the markers are Material icons (a ligature of Streamlit's own font), not emoji a browser may lack
        names = " or ".join(f"text()='{name}'" for name in ("check_circle", "radio_button_unchecked"))
        icons = [i for i in card.find_elements(By.XPATH, f".//li//span[{names}]") if i.is_displayed()]
        assert len(icons) == len(lines), [i.get_attribute("outerHTML") for i in icons]
        assert all("Material" in i.value_of_css_property("font-family") for i in icons)
        assert "yake is clearly behind keybert" in card.text and "Holm" not in card.text  # statistics: one click
        assert " 0.000 " not in card.text and "0.000 (" not in card.text
        assert text.index("At a glance") < text.index("Every metric")


def test_per_document_summary_and_explorer(tmp_path):
    folder = _collection(tmp_path)
    with _server(tmp_path, folder) as url, _chromium(1400, 1000) as driver:
        driver.get(f"{url}/summary?movie=ALL")
        text = _settled(driver, ["At a glance — All collections", "first finds the most", "collections × models"])
        assert not driver.find_elements(By.CSS_SELECTOR, ERROR) and "Traceback" not in text
        assert driver.find_elements(By.CSS_SELECTOR, '[data-testid="stPlotlyChart"]'), "no chart"
        driver.get(f"{url}/explorer?movie=ALL")
        text = _settled(driver, ["Document explorer", "document(s) match", "GT keywords (", "in the GT"])
        assert "GT rank" not in text and "Top 5 GT keywords" not in text and "evaluated reviews" not in text
        assert driver.find_elements(By.CSS_SELECTOR, "mark"), "no highlighted match"


def test_build_report_shows_its_stages_then_the_download(tmp_path):
    """Build report: the status box ends saying the size, the success line names the file, Download report appears."""
    with _server(tmp_path) as url, _chromium(1400, 1000) as driver:
        driver.get(f"{url}/summary?movie=ALL&models=keybert,yake")
        _settled(driver, ["At a glance", "Build report"], timeout=120)
        driver.find_element(By.CSS_SELECTOR, ".st-key-build_report button").click()
        text = _settled(driver, ["Report ready: ", "Download report"], timeout=120)
        assert not driver.find_elements(By.CSS_SELECTOR, ERROR) and "Traceback" not in text
        assert re.search(r"Report ready: \S+\.html \(\d+(\.\d)? (MB|KB)\)", text), text[:2000]
        boxes = [e.text for e in driver.find_elements(By.CSS_SELECTOR, '[data-testid="stExpander"]')]
        assert any(box.split("\n")[-1].startswith("Report ready: ") for box in boxes), boxes  # the status box, done
        assert driver.find_elements(By.CSS_SELECTOR, ".st-key-download_report button")
