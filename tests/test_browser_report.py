"""In headless Debian chromium: `kweval report`'s page, opened from disk, draws its charts and runs no hostile string
of the data (issue 23, item 5; tests/test_html_report.py parses the same page)."""

from __future__ import annotations

from pathlib import Path

import pytest
from selenium.webdriver.common.by import By

from kweval.cli.dispatch import main
from kweval.data.tidy import write_tidy
from tests.browser import wait_until
from tests.test_html_report import EVIL_MODEL, hostile_dataset

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def test_report_renders_in_chromium_and_runs_nothing_hostile(tmp_path, browser):
    folder = tmp_path / "hostile"
    write_tidy(hostile_dataset(), folder)
    out = tmp_path / "report.html"
    assert main(["report", str(folder), "--out", str(out), "--resamples", "200", "--k", "3"]) == 0
    driver = browser
    driver.get(Path(out).resolve().as_uri())
    charts = "#chart-summary svg .bars path"
    wait_until(lambda: driver.find_elements(By.CSS_SELECTOR, charts), "the charts did not render")
    assert driver.execute_script("return window.__xss === undefined")
    assert len(driver.find_elements(By.TAG_NAME, "script")) == 3  # plotly.js and the two charts
    assert not driver.find_elements(By.TAG_NAME, "img")
    body = driver.find_element(By.TAG_NAME, "body").text
    assert EVIL_MODEL in body and "At a glance" in body
    assert driver.find_elements(By.CSS_SELECTOR, ".text mark")
