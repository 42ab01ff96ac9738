"""The History page in headless chromium, opened by a direct link as the first request to a fresh server: two runs
recorded with `kweval evaluate --record`, compared on the page with the numbers of `kweval runs compare`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from urllib.parse import parse_qs, urlparse

import pytest
from selenium.webdriver.common.by import By

from tests.browser import CHART, wait_until
from tests.test_browser import ERROR, ROOT, _server, _settled

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def _kweval(cache, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KWEVAL_")}
    env |= {"KWEVAL_CACHE_DIR": str(cache), "HF_HUB_OFFLINE": "1"}
    result = subprocess.run([sys.executable, "-m", "kweval", *args], capture_output=True, text=True, cwd=ROOT, env=env)
    assert result.returncode == 0, result.stderr
    return result


def test_history_from_a_direct_link_compares_as_the_cli(tmp_path, browser):
    cache = tmp_path / "embeddings"  # the server's KWEVAL_CACHE_DIR: its default runs store is beside it
    _kweval(cache, "evaluate", "--models", "keybert", "--record", "--run-name", "before", "--out", os.devnull)
    _kweval(
        cache,
        "evaluate",
        "--models",
        "yake",
        "--match",
        "exact",
        "--record",
        "--run-name",
        "after",
        "--out",
        os.devnull,
    )
    runs = json.loads(_kweval(cache, "runs", "list", "--format", "json").stdout)
    a, b = runs[0]["id"], runs[1]["id"]
    cli = json.loads(_kweval(cache, "runs", "compare", a, b, "--format", "json").stdout)
    row = next(r for r in cli["metrics"] if r["metric"] == cli["metric"])
    expected = (
        f"{cli['metric']} {row['a']:.4f} → {row['b']:.4f}, B − A {row['difference']:+.4f} "
        f"(95% CI [{row['ci_low']:+.4f}, {row['ci_high']:+.4f}]"
    )
    with _server(tmp_path) as url:
        driver = browser
        driver.get(f"{url}/history?a={a}&b={b}&movie=ALL&models=keybert,yake")
        text = _settled(driver, ["Run history", "Compare two runs", "2 of the 2 runs recorded", expected])
        assert not driver.find_elements(By.CSS_SELECTOR, ERROR) and "Traceback" not in text
        assert "settings that differ (A→B): match approx→exact" in text
        assert "Page not found" not in text
        assert urlparse(driver.current_url).path == "/history"
        query = parse_qs(urlparse(driver.current_url).query)
        assert query.get("a") == [a] and query.get("b") == [b]  # the chosen runs stay in the URL
        wait_until(lambda: driver.find_elements(By.CSS_SELECTOR, CHART), "the history chart is not drawn")
