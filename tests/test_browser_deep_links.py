"""Every page's deep link as the very first request to a fresh server, in headless Debian chromium.

Streamlit's classic multipage mode runs `pages/NAME.py` alone for `/NAME`: each page must draw its own
sidebar and content on a cold server (issue 20: with `st.navigation` beside a `pages/` folder, the first
visit to a deep link rendered the auto-generated navigation and a blank page).  One server per page, so
that no earlier visit to `/` can have prepared anything.
"""

from __future__ import annotations

import time
from urllib.parse import parse_qs, urlparse

import pytest
from selenium.webdriver.common.by import By

from tests.test_browser import ERROR, _chromium, _server, _settled

pytestmark = [pytest.mark.browser, pytest.mark.slow]

QUERY = "movie=star_tide&models=keybert,yake&k=3&agg=micro"
# page -> (its title, texts only that page's own content shows)
DEEP = {
    "summary": ("Summary", ["Every metric, movies × models (micro)", "by review rating and length"]),
    "explorer": ("Review explorer", ["review(s) match", "Mark the matches of"]),
    "ndcg": ("nDCG, step by step", ["Three GT keywords, five predicted keywords", "Textbook examples"]),
    "compare": ("Compare models", ["Every metric, each model against keybert", "Reviews by difference"]),
    "history": ("Run history", ["Runs shown", "No run recorded yet here"]),
    "data": ("Data", ["Validation messages", "The tidy layout"]),
    "failures": ("Why did my model fail?", ["of its keywords are hits", "Slices where a model does worst"]),
    "parity": ("Notebook parity", ["Legacy vs corrected (macro)", "Each defect, on a real review"]),
}


@pytest.mark.parametrize("page", list(DEEP))
def test_a_deep_link_is_the_first_request_to_a_fresh_server(tmp_path, page):
    title, own = DEEP[page]
    with _server(tmp_path) as url, _chromium() as driver:
        driver.get(f"{url}/{page}?{QUERY}")
        text = _settled(driver, [title, *own])
        assert not driver.find_elements(By.CSS_SELECTOR, ERROR) and "Traceback" not in text
        assert "Page not found" not in text
        # the page itself, not Streamlit's generated page list, and the URL still names the page and the selection
        assert not driver.find_elements(By.CSS_SELECTOR, '[data-testid="stSidebarNav"]')
        assert urlparse(driver.current_url).path == f"/{page}", driver.current_url
        query = parse_qs(urlparse(driver.current_url).query)
        assert query.get("movie") == ["star_tide"] and query.get("k") == ["3"] and query.get("agg") == ["micro"]
        # the shared sidebar: a link to every page, each carrying the selection
        links = driver.find_elements(By.CSS_SELECTOR, '[data-testid="stPageLink-NavLink"]')
        paths = {urlparse(a.get_attribute("href")).path for a in links}
        assert paths == {f"/{name}" for name in DEEP}, paths
        assert all("k=3" in a.get_attribute("href") for a in links)


def _cosines(driver) -> list[str]:
    # read in one script: the cells are replaced while a rerun draws them again
    return driver.execute_script(
        "return Array.from(document.querySelectorAll('table.kw-table .kw-cos'), e => e.textContent.trim());"
    )


def _choose(driver, label: str, option: str) -> None:
    """Pick `option` in the sidebar selectbox labelled `label`, as a visitor does."""
    box = next(
        b
        for b in driver.find_elements(By.CSS_SELECTOR, '[data-testid="stSidebar"] [data-testid="stSelectbox"]')
        if label in b.text
    )
    field = box.find_element(By.CSS_SELECTOR, "input")
    field.click()
    deadline = time.time() + 10
    while time.time() < deadline:
        found = [o for o in driver.find_elements(By.CSS_SELECTOR, '[role="option"]') if o.text.strip() == option]
        if found:
            found[0].click()
            return
        if time.time() > deadline - 7:  # the list did not open on a click: type to filter it
            field.send_keys(option)
        time.sleep(0.3)
    raise AssertionError(f"no option {option!r} in {label!r}")


def test_a_shared_link_reopens_a_non_default_embedding_backend(tmp_path):
    """Issue 23: a link made with onnx-int8 reopened as auto, with other numbers.  A visitor picks onnx-int8 in the
    sidebar; the page's URL, opened in a new browser (a new session), shows the same cosines."""
    query = f"{QUERY}&sem=1&tau=0.75"
    with _server(tmp_path) as url:
        with _chromium() as first:
            first.get(f"{url}/explorer?{query}")
            deadline = time.time() + 240
            while time.time() < deadline and not _cosines(first):
                time.sleep(0.5)  # the model is loaded and the keywords embedded first
            _settled(first, ["Review explorer", "review(s) match", "cosine"], timeout=240)
            auto = _cosines(first)
            assert auto, "no cosine cells"
            _choose(first, "Embedding backend", "onnx-int8")
            deadline = time.time() + 240
            while time.time() < deadline and ("backend=onnx-int8" not in first.current_url or _cosines(first) == auto):
                time.sleep(0.5)  # the quantized model is exported and the keywords embedded again: tens of seconds
            _settled(first, ["Review explorer", "review(s) match", "cosine"], timeout=240)
            int8, link = _cosines(first), first.current_url
            assert "backend=onnx-int8" in link and int8 != auto, (link, auto[:5], int8[:5])
        with _chromium() as shared:
            shared.get(link)
            deadline = time.time() + 240
            while time.time() < deadline and len(_cosines(shared)) < len(int8):
                time.sleep(0.5)
            _settled(shared, ["Review explorer", "review(s) match", "cosine"], timeout=240)
            assert _cosines(shared) == int8
            assert parse_qs(urlparse(shared.current_url).query).get("backend") == ["onnx-int8"]
