"""Every page's deep link as the very first request to a fresh server, in headless Debian chromium.

Streamlit's classic multipage mode runs `pages/NAME.py` alone for `/NAME`: each page must draw its own
sidebar and content on a cold server (issue 20: with `st.navigation` beside a `pages/` folder, the first
visit to a deep link rendered the auto-generated navigation and a blank page).  One server per page, so
that no earlier visit to `/` can have prepared anything (the backend test shares the session's demo server).
"""

from __future__ import annotations

from urllib.parse import parse_qs, urlparse

import pytest
from selenium.webdriver.common.by import By

from tests.browser import ERROR, act_when_drawn, chromium, link_hrefs, server, settled, wait_until

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
def test_a_deep_link_is_the_first_request_to_a_fresh_server(tmp_path, browser, page):
    title, own = DEEP[page]
    with server(tmp_path) as running:
        driver = browser
        entries = driver.execute_script("return history.length;")
        driver.get(f"{running.url}/{page}?{QUERY}")
        text = settled(driver, [title, *own])
        # the sidebar's settings reach the URL in one update (`dashboard.url_state.one_url_update`): the link and one
        # history entry, not one per setting (Back would step through each)
        grew = driver.execute_script("return history.length;") - entries
        assert grew <= 2, f"{grew} history entries for one visit"
        assert not driver.find_elements(By.CSS_SELECTOR, ERROR) and "Traceback" not in text
        assert "Page not found" not in text
        # the page itself, not Streamlit's generated page list, and the URL still names the page and the selection
        assert not driver.find_elements(By.CSS_SELECTOR, '[data-testid="stSidebarNav"]')
        assert urlparse(driver.current_url).path == f"/{page}", driver.current_url
        query = parse_qs(urlparse(driver.current_url).query)
        assert query.get("movie") == ["star_tide"] and query.get("k") == ["3"] and query.get("agg") == ["micro"]
        # the shared sidebar: a link to every page, each carrying the selection
        pages = {f"/{name}" for name in DEEP}
        hrefs = wait_until(
            lambda: (found := link_hrefs(driver)) and {urlparse(h).path for h in found} == pages and found,
            lambda: f"the sidebar's links are not one per page: {link_hrefs(driver)}",
        )
        assert all("k=3" in h for h in hrefs), hrefs


def _cosines(driver) -> list[str]:
    # read in one script: the cells are replaced while a rerun draws them again
    return driver.execute_script(
        "return Array.from(document.querySelectorAll('table.kw-table .kw-cos'), e => e.textContent.trim());"
    )


def _choose(driver, label: str, option: str) -> None:
    """Pick `option` in the sidebar selectbox labelled `label`, as a visitor does (typing it when the list does not
    open on the click)."""

    def field():
        boxes = driver.find_elements(By.CSS_SELECTOR, '[data-testid="stSidebar"] [data-testid="stSelectbox"]')
        return next((b.find_element(By.CSS_SELECTOR, "input") for b in boxes if label in b.text), None)

    act_when_drawn(driver, field, lambda box: box.click(), f"no selectbox {label!r}")
    polls = []

    def option_shown():
        found = [o for o in driver.find_elements(By.CSS_SELECTOR, '[role="option"]') if o.text.strip() == option]
        polls.append(bool(found))
        if not found and len(polls) == 12:  # the list did not open on the click: type into the box to filter it
            act_when_drawn(driver, field, lambda box: box.send_keys(option), f"no selectbox {label!r}")
        return found[0] if found else None

    act_when_drawn(driver, option_shown, lambda shown: shown.click(), f"no option {option!r} in {label!r}")


def test_a_shared_link_reopens_a_non_default_embedding_backend(demo_server, browser):
    """Issue 23: a link made with onnx-int8 reopened as auto, with other numbers.  A visitor picks onnx-int8 in the
    sidebar; the page's URL, opened in a new browser (a new session), shows the same cosines."""
    query = f"{QUERY}&sem=1&tau=0.75"
    first = browser
    first.get(f"{demo_server.url}/explorer?{query}")
    # the model is loaded and the keywords embedded first (the first semantic run of this server)
    settled(first, ["Review explorer", "review(s) match", "cosine"], present=["table.kw-table .kw-cos"])
    auto = _cosines(first)
    assert auto, "no cosine cells"
    _choose(first, "Embedding backend", "onnx-int8")
    # the quantized model is exported and the keywords embedded again: tens of seconds
    wait_until(
        lambda: "backend=onnx-int8" in first.current_url and _cosines(first) not in ([], auto),
        lambda: f"the cosines did not change with onnx-int8: {first.current_url}",
    )
    settled(first, ["Review explorer", "review(s) match", "cosine"], present=["table.kw-table .kw-cos"])
    int8, link = _cosines(first), first.current_url
    assert len(int8) == len(auto), (len(int8), len(auto))  # the same page of the same reviews, other cosines
    assert "backend=onnx-int8" in link and int8 != auto, (link, auto[:5], int8[:5])
    with chromium() as shared:
        shared.get(link)
        settled(shared, ["Review explorer", "review(s) match", "cosine"], present=["table.kw-table .kw-cos"])
        # the cards may still be drawing when the run is over (seen with both cores busy): wait for all of them
        wait_until(
            lambda: _cosines(shared) == int8,
            lambda: f"the shared link shows other cosines: {_cosines(shared)[:40]} != {int8[:40]}",
        )
        assert parse_qs(urlparse(shared.current_url).query).get("backend") == ["onnx-int8"]
