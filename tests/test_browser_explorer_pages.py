"""In headless Debian chromium: the explorer's page turns, which rerun only the pager-and-cards fragment
(pages/explorer.py `page_of_cards`), keep the URL state of a full run: the page number in the URL, a deep link to a
page, a filter resetting the page, the single review opened from a card of a later page."""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlparse

import pytest
from selenium.webdriver.common.by import By

from dashboard.review_tables import PER_PAGE
from kweval.data import load_dataset
from tests.browser import ERROR, click_button, element_texts, settled, type_into, wait_until

pytestmark = [pytest.mark.browser, pytest.mark.slow]
PAGES = -(-len(load_dataset(None).reviews) // PER_PAGE[0])  # the demo's pages of cards, every movie (36 of 5)


def _page(driver) -> str | None:
    return parse_qs(urlparse(driver.current_url).query).get("p", [None])[0]


def _headers(text: str) -> list[str]:
    """The reviews whose cards are shown, in order (each card's header: "Review ID · “title” · ...")."""
    return re.findall(r"^Review (\S+) ·", text, flags=re.M)


def _cards(driver, text: str) -> list[str]:
    """The reviews of the page's cards (`PER_PAGE[0]`, the default) once `text` is shown and every card drawn, its
    "Open this review" button too: a card's HTML, or a button's label, can come a moment after the run is over on a
    busy machine (a button without its label yet: a click on "the second button" took the third card's, seen with
    both cores busy)."""

    def buttons() -> int:
        return element_texts(driver, "button").count("Open this review")

    def drawn() -> list[str] | None:
        headers = _headers(settled(driver, [text]))
        return headers if len(headers) == PER_PAGE[0] == buttons() else None

    return wait_until(
        drawn,
        lambda: (
            f"not {PER_PAGE[0]} cards with their buttons with {text!r}: {_headers(settled(driver, [text]))}, "
            f"{buttons()} buttons"
        ),
    )


def _type(driver, key: str, value: str) -> None:
    """Type `value` into the input `key` once it is drawn (a busy machine may still be redrawing it after a turn)."""
    type_into(driver, f".st-key-{key} input", value)


def test_page_turns_keep_the_url_state(demo_server, browser):
    driver = browser
    driver.get(f"{demo_server.url}/explorer?movie=ALL")
    first = _cards(driver, f"review(s) match · page 1 of {PAGES}")
    assert _page(driver) is None, driver.current_url
    _type(driver, "qp_p", "2")
    second = _cards(driver, f"review(s) match · page 2 of {PAGES}")
    assert not set(first) & set(second), (first, second)
    wait_until(lambda: _page(driver) == "2", lambda: f"p=2 not in the URL: {driver.current_url}")
    driver.get(driver.current_url)  # the page's link, shared: a new session opens page 2
    assert _cards(driver, f"review(s) match · page 2 of {PAGES}") == second
    _type(driver, "qp_q", "the")  # a filter (outside the fragment) starts again at page 1
    settled(driver, ["review(s) match · page 1 of"])
    wait_until(lambda: _page(driver) is None, lambda: f"p still in the URL: {driver.current_url}")
    driver.get(f"{demo_server.url}/explorer?movie=ALL&p=3")
    third = _cards(driver, f"review(s) match · page 3 of {PAGES}")
    opened = third[1]
    click_button(driver, "Open this review", 1)
    text = settled(driver, ["← All reviews", f"Review {opened}"])
    assert _headers(text) == [opened] and parse_qs(urlparse(driver.current_url).query).get("review") == [opened]
    assert not driver.find_elements(By.CSS_SELECTOR, ERROR)


_TABLE_STYLE = """return Array.from(document.querySelectorAll('table.kw-table'),
    t => getComputedStyle(t).borderCollapse).concat(Array.from(document.querySelectorAll('tr.kw-dim'),
    r => getComputedStyle(r).opacity));"""


def test_keyword_tables_keep_their_style_across_page_turns(demo_server, browser):
    """The keyword tables' style is given once per page, outside the page-of-cards fragment
    (`review_card.card_style`): after a turn, which reruns only the fragment, and in a single review's view, every
    table is still styled (collapsed borders, rows beyond k dimmed), no card carries a <style> and no CSS text shows."""
    driver = browser
    driver.get(f"{demo_server.url}/explorer?movie=ALL&sem=1&sas=1")
    first = _cards(driver, f"review(s) match · page 1 of {PAGES}")
    _type(driver, "qp_p", "2")
    second = _cards(driver, f"review(s) match · page 2 of {PAGES}")
    assert not set(first) & set(second), (first, second)
    for view in ("page 2", "single review"):
        styled = driver.execute_script(_TABLE_STYLE)
        assert "collapse" in styled and set(styled) <= {"collapse", "0.6"}, (view, styled)
        if view == "page 2":
            cards = driver.execute_script(
                "return Array.from(document.querySelectorAll('[data-testid=\"stHtml\"]'), e => e.innerHTML);"
            )
            styles = [card for card in cards if "<style" in card]  # the page's one style (Streamlit's event area)
            assert len(styles) == 1 and styles[0].startswith("<style>") and len(cards) == PER_PAGE[0] + 1, view
            click_button(driver, "Open this review")
            settled(driver, ["← All reviews", f"Review {second[0]}"], present=["table.kw-table"])
        assert ".kw-table" not in driver.find_element(By.TAG_NAME, "body").text, view
    assert not driver.find_elements(By.CSS_SELECTOR, ERROR)
