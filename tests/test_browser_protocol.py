"""In headless Debian chromium (issue 23): the protocol chosen on a per-document collection's Summary is the one
Compare shows after the explorer, through the sidebar's links."""

from __future__ import annotations

from urllib.parse import parse_qs, urlparse

import pytest
from selenium.webdriver.common.by import By

from tests.test_browser import ERROR, _chromium, _server, _settled
from tests.test_page_headline import _collection

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def _click_link(driver, title: str) -> None:
    links = driver.find_elements(By.CSS_SELECTOR, '[data-testid="stPageLink-NavLink"]')
    link = next((a for a in links if a.text.strip().endswith(title)), None)
    assert link is not None, f"no navigation link {title!r} in {[a.text for a in links]}"
    link.click()


def _protocol(driver) -> list[str] | None:
    return parse_qs(urlparse(driver.current_url).query).get("protocol")


def test_the_protocol_survives_the_explorer(tmp_path):
    folder = _collection(tmp_path)
    with _server(tmp_path, folder) as url, _chromium(1400, 1000) as driver:
        driver.get(f"{url}/summary?movie=ALL")
        _settled(driver, ["At a glance", "Protocol"])
        labels = driver.find_elements(By.CSS_SELECTOR, '[data-testid="stRadio"] label')
        next(lbl for lbl in labels if lbl.text.strip() == "pke").click()
        _settled(driver, ["under the pke preset"])
        assert _protocol(driver) == ["pke"]
        _click_link(driver, "Document explorer")  # the sidebar speaks the data's words too
        text = _settled(driver, ["Document explorer", "document(s) match"])
        assert _protocol(driver) == ["pke"] and "URL parameter" not in text, driver.current_url
        _click_link(driver, "Compare models")
        text = _settled(driver, ["Compare models", "(pke preset)"])
        assert _protocol(driver) == ["pke"] and not driver.find_elements(By.CSS_SELECTOR, ERROR)
        assert "URL parameter" not in text
