"""In headless Debian chromium (issue 27): the Protocols page opens from a direct link as the first request to a fresh
server on a per-document collection, with its settings from the URL, and its documents open the explorer."""

from __future__ import annotations

from urllib.parse import parse_qs, urlparse

import pytest
from selenium.webdriver.common.by import By

from tests.browser import CHART, link_hrefs, reset, wait_until
from tests.test_browser import ERROR, _server, _settled
from tests.test_page_headline import _collection

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def test_protocols_page_from_a_direct_link(tmp_path, browser):
    folder = _collection(tmp_path)
    query = "movie=ALL&models=first,reversed&from=meng&to=kpeval&metric=f1%40M&reported=f1%40M%3D0.4157"
    with _server(tmp_path, folder) as url:
        driver = browser
        reset(driver, 1400, 1200)
        driver.get(f"{url}/protocols?{query}")
        text = _settled(driver, ["Protocols", "Where a gap comes from", "higher than meng's", "combinations of"])
        assert not driver.find_elements(By.CSS_SELECTOR, ERROR) and "Traceback" not in text
        assert "URL parameter" not in text and "Page not found" not in text
        assert "kpeval's F1@M (0.4157) is 0.0165 higher than meng's (0.3992)" in text
        wait_until(lambda: driver.find_elements(By.CSS_SELECTOR, CHART), "the waterfall is not drawn")
        found = parse_qs(urlparse(driver.current_url).query)
        assert found["from"] == ["meng"] and found["to"] == ["kpeval"] and found["metric"] == ["f1@M"]
        hrefs = wait_until(lambda: link_hrefs(driver), "no page link in the sidebar")
        assert "/protocols" in {urlparse(h).path for h in hrefs}, hrefs
