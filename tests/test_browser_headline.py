"""In headless Debian chromium (issue 23): the Summary's headline card on the demo, above the fold, and the
per-document words on a small collection's Summary and explorer."""

from __future__ import annotations

import re

import pytest
from selenium.webdriver.common.by import By

from tests.browser import ERROR, SUMMARY_CHARTS, click_when_free, settled

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def test_headline_card_on_the_demo(demo_server, browser):
    driver = browser
    driver.get(f"{demo_server.url}/summary?movie=ALL&models=keybert,yake,keybert_vader")
    text = settled(driver, ["At a glance", "clearly behind", "How sure", "Build report"])
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


def test_per_document_summary_and_explorer(collection_server, browser):
    driver, url = browser, collection_server.url
    driver.get(f"{url}/summary?movie=ALL")
    # the Summary's charts (SVG from the server): its bars and its heatmap's cells
    text = settled(
        driver,
        ["At a glance — All collections", "first finds the most", "collections × models"],
        present=list(SUMMARY_CHARTS),
    )
    assert not driver.find_elements(By.CSS_SELECTOR, ERROR) and "Traceback" not in text
    driver.get(f"{url}/explorer?movie=ALL")
    text = settled(driver, ["Document explorer", "document(s) match", "GT keywords (", "in the GT"], present=["mark"])
    assert "GT rank" not in text and "Top 5 GT keywords" not in text and "evaluated reviews" not in text


def test_build_report_shows_its_stages_then_the_download(demo_server, browser):
    """Build report: the status box ends saying the size, the success line names the file, Download report appears."""
    driver = browser
    driver.get(f"{demo_server.url}/summary?movie=ALL&models=keybert,yake")
    settled(driver, ["At a glance", "Build report"])
    click_when_free(driver, ".st-key-build_report button")
    text = settled(driver, ["Report ready: ", "Download report"], present=[".st-key-download_report button"])
    assert not driver.find_elements(By.CSS_SELECTOR, ERROR) and "Traceback" not in text
    assert re.search(r"Report ready: \S+\.html \(\d+(\.\d)? (MB|KB)\)", text), text[:2000]
    boxes = [e.text for e in driver.find_elements(By.CSS_SELECTOR, '[data-testid="stExpander"]')]
    assert any(box.split("\n")[-1].startswith("Report ready: ") for box in boxes), boxes  # the status box, done
    assert driver.find_elements(By.CSS_SELECTOR, ".st-key-download_report button")


def test_metrics_doc_opens_on_the_summary(demo_server, browser):
    """docs/metrics.md's expander is drawn only when opened (issue 28 item 7: not on a first view): a click reruns the
    page and shows the whole text."""
    driver = browser
    driver.get(f"{demo_server.url}/summary?movie=ALL")
    settled(driver, ["every metric's definition"], present=list(SUMMARY_CHARTS))
    hidden_too = driver.execute_script("return document.body.textContent")  # a closed expander's text included
    assert "Every number kweval reports is defined here" not in hidden_too  # closed: not sent to the browser at all
    click_when_free(driver, ".st-key-metrics_doc summary")  # the charts above may still be moving it
    text = settled(driver, ["Every number kweval reports is defined here"], present=list(SUMMARY_CHARTS))
    assert not driver.find_elements(By.CSS_SELECTOR, ERROR) and "Traceback" not in text
