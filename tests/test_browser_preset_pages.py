"""In headless Debian chromium: following the pke preset's numbers from the Summary down to one document in the
explorer shows pke's numbers and decisions for that document, not kweval's (issue 27)."""

from __future__ import annotations

import pytest
from selenium.webdriver.common.by import By

from dashboard.escape import fmt_num
from kweval.data import load_dataset
from kweval.keyphrase.dataset_protocol import protocol_scores
from tests.browser import click_button, click_page_link, click_radio_option
from tests.test_browser import ERROR, _settled
from tests.test_browser_protocol import _protocol

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def test_pke_from_summary_to_one_document(collection_server, browser):
    scores = protocol_scores(load_dataset(str(collection_server.data)), "pke", 5).set_index(["review_id", "model"])
    url = collection_server.url
    driver = browser
    driver.get(f"{url}/summary?movie=ALL")
    _settled(driver, ["At a glance", "Protocol"])
    click_radio_option(driver, "pke")
    text = _settled(driver, ["under the pke preset", "significant under pke"])
    assert _protocol(driver) == ["pke"]
    click_page_link(driver, "Document explorer")
    text = _settled(driver, ["Document explorer", "Under the pke preset", "document(s) match"])
    assert _protocol(driver) == ["pke"] and "URL parameter" not in text, driver.current_url
    click_button(driver, "Open this document", 1)  # the second document of the collection: d2
    text = _settled(driver, ["Document d2", "Under the pke preset", "match: the pke preset"])
    assert _protocol(driver) == ["pke"] and not driver.find_elements(By.CSS_SELECTOR, ERROR)
    for model in ("first", "reversed"):  # each model's line: pke's per-document numbers of d2
        row = scores.loc[("d2", model)]
        line = f"p@5 {fmt_num(row['p@5'])} · r@5 {fmt_num(row['r@5'])} · f1@5 {fmt_num(row['f1@5'])}"
        assert line in text, (model, line)
    assert "ndcg@5" not in text  # no kweval metric in the card
