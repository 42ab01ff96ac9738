"""In headless Debian chromium (issue 23): the protocol chosen on a per-document collection's Summary is the one
Compare shows after the explorer, through the sidebar's links."""

from __future__ import annotations

from urllib.parse import parse_qs, urlparse

import pytest
from selenium.webdriver.common.by import By

from tests.browser import ERROR, click_page_link, click_radio_option, settled, wait_until

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def _protocol(driver) -> list[str] | None:
    return parse_qs(urlparse(driver.current_url).query).get("protocol")


def test_the_protocol_survives_the_explorer(collection_server, browser):
    driver = browser
    driver.get(f"{collection_server.url}/summary?movie=ALL")
    settled(driver, ["At a glance", "Protocol"])
    click_radio_option(driver, "pke")
    settled(driver, ["under the pke preset"])
    wait_until(lambda: _protocol(driver) == ["pke"], lambda: f"no protocol=pke in {driver.current_url}")
    click_page_link(driver, "Document explorer")  # the sidebar speaks the data's words too
    text = settled(driver, ["Document explorer", "document(s) match"])
    assert _protocol(driver) == ["pke"] and "URL parameter" not in text, driver.current_url
    click_page_link(driver, "Compare models")
    text = settled(driver, ["Compare models", "(pke preset)"])
    assert _protocol(driver) == ["pke"] and not driver.find_elements(By.CSS_SELECTOR, ERROR)
    assert "URL parameter" not in text
