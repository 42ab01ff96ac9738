"""End to end: the real server in headless Debian chromium, every page, on the embedded demo.

Needs /usr/bin/chromium and /usr/bin/chromedriver (`make browser` installs
them); the test fails, not skips, without them.  Screenshots go to
artifacts/screenshots/ (git-ignored); with KWEVAL_UPDATE_DOCS=1 the explorer's
is also written to docs/explorer.png (the README's picture).
"""

from __future__ import annotations

import os
import shutil
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pytest
from selenium.webdriver.common.by import By

from tests.browser import (
    CHART,
    ERROR,
    ROOT,
    SHOTS,
    SUMMARY_CHARTS,
    click_page_link,
    server,
    settled,
    wait_until,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]

PARAMS = "movie=star_tide&models=keybert,yake,keybert_vader&k=5"
# page title in the navigation -> texts that must be on the page
PAGES = {
    "Summary": ["Every metric, movies × models", "bootstrap 95% CIs", "by review rating and length"],
    "Review explorer": ["review(s) match", "GT rank", "unmatched"],
    "nDCG worked example": ["Three GT keywords, five predicted keywords", "0.7295", "Textbook examples"],
    "Compare models": ["Every metric, each model against", "Reviews by difference"],
    "Data": ["Validation messages", "The tidy layout", "kweval convert"],
}

# The names other browser tests and bench/bench_browser.py imported from here before tests/browser.py held them.
_settled = settled


@contextmanager
def _server(
    tmp_path: Path, data: Path | None = None, extra_env: dict[str, str] | None = None, cache: Path | None = None
):
    """`tests.browser.server`, yielding its URL."""
    with server(tmp_path, data, cache=cache, extra_env=extra_env) as running:
        yield running.url


def test_every_page_in_chromium(demo_server, browser):
    SHOTS.mkdir(parents=True, exist_ok=True)
    url, driver = demo_server.url, browser
    # a copied link straight into a page (test_browser_deep_links.py: each page as a fresh server's first request)
    driver.get(f"{url}/explorer?{PARAMS}")
    settled(driver, ["Review explorer", *PAGES["Review explorer"]], present=["mark"])
    assert not driver.find_elements(By.CSS_SELECTOR, ERROR)
    driver.save_screenshot(str(SHOTS / "explorer.png"))
    if os.environ.get("KWEVAL_UPDATE_DOCS") == "1":
        shutil.copyfile(SHOTS / "explorer.png", ROOT / "docs" / "explorer.png")

    # every page has its own address: /summary is the Summary, not "Page not found"
    driver.get(f"{url}/summary?{PARAMS}")
    text = settled(driver, ["Summary", *PAGES["Summary"]])
    assert "Page not found" not in text and urlparse(driver.current_url).path == "/summary"

    # every page through the sidebar's links (dashboard/sidebar.py); the selection stays in the URL
    for title, texts in PAGES.items():
        click_page_link(driver, title)
        charts = {"Summary": list(SUMMARY_CHARTS), "Compare models": [CHART]}.get(title, [])
        text = settled(
            driver, [title if title != "nDCG worked example" else "nDCG, step by step", *texts], present=charts
        )
        assert not driver.find_elements(By.CSS_SELECTOR, ERROR), f"{title}: error element"
        assert "Traceback" not in text
        query = parse_qs(urlparse(driver.current_url).query)
        assert query.get("movie") == ["star_tide"] and query.get("k") == ["5"], f"{title}: URL {driver.current_url}"
        driver.save_screenshot(str(SHOTS / f"{title.lower().replace(' ', '_')}.png"))

    # semantic matching on (the first time in this server: it loads the model and embeds the demo's keywords):
    # each predicted keyword gets its nearest GT keyword and the cosine
    driver.get(f"{url}/explorer?{PARAMS}&sem=1&tau=0.75")
    text = settled(
        driver,
        ["Review explorer", "review(s) match", "nearest GT", "cosine"],
        present=["table.kw-table .kw-cos", "mark.kw-above"],
    )
    assert not driver.find_elements(By.CSS_SELECTOR, ERROR) and "Traceback" not in text
    query = parse_qs(urlparse(driver.current_url).query)
    assert query.get("sem") == ["1"] and query.get("tau") == ["0.75"], driver.current_url
    driver.save_screenshot(str(SHOTS / "explorer_semantic.png"))


# every page by its own address: title on the page (the navigation's label differs for the nDCG page)
ADDRESSES = {
    "summary": "Summary",
    "explorer": "Review explorer",
    "ndcg": "nDCG, step by step",
    "compare": "Compare models",
    "data": "Data",
    "parity": "Notebook parity",
}
MODELS = "keybert,yake,keybert_vader"


def _dark(driver) -> None:
    """The operating system asks for dark: Streamlit's default theme follows prefers-color-scheme."""
    driver.execute_cdp_cmd(
        "Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": "dark"}]}
    )


def _background_is_dark(driver) -> bool:
    rgb = driver.execute_script(
        "const e = document.querySelector('[data-testid=\"stAppViewContainer\"]') || document.body;"
        "return getComputedStyle(e).backgroundColor;"
    )
    channels = [int(c) for c in rgb[rgb.index("(") + 1 : rgb.index(")")].split(",")[:3]]
    return sum(channels) / 3 < 100


def _visit_every_page(driver, url: str, query: str, shot_prefix: str) -> None:
    for path, title in ADDRESSES.items():
        driver.get(f"{url}/{path}?{query}")
        text = settled(driver, [title])
        assert not driver.find_elements(By.CSS_SELECTOR, ERROR), f"{path}?{query}: exception block"
        assert "Traceback" not in text and "Page not found" not in text, f"{path}?{query}"
        assert urlparse(driver.current_url).path == f"/{path}", driver.current_url
        driver.save_screenshot(str(SHOTS / f"{shot_prefix}_{path}.png"))


def test_every_page_at_k3_light_and_k20_dark(demo_server, browser):
    SHOTS.mkdir(parents=True, exist_ok=True)
    _visit_every_page(browser, demo_server.url, f"movie=star_tide&models={MODELS}&k=3", "k3")
    _dark(browser)
    _visit_every_page(browser, demo_server.url, f"movie=ALL&models={MODELS}&k=20&agg=micro", "k20_dark")
    assert _background_is_dark(browser), "the dark pass did not render dark"


def test_every_page_at_390px(demo_server, browser):
    SHOTS.mkdir(parents=True, exist_ok=True)
    # a phone's viewport (headless windows cannot be narrower than 500 px)
    browser.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride", {"width": 390, "height": 844, "deviceScaleFactor": 2, "mobile": True}
    )
    browser.get(demo_server.url)
    wait_until(lambda: browser.execute_script("return window.innerWidth") == 390, "the viewport is not 390 px wide")
    _visit_every_page(browser, demo_server.url, f"movie=star_tide&models={MODELS}&k=5", "w390")


HOSTILE = {
    "image": "![t](http://tracker.invalid/t.png)",
    "html": '<img src="http://tracker.invalid/h.png" onerror="document.title=\'pwned\'">',
    "link": "[click](http://phish.invalid/)",
    "raw_link": '<a href="http://phish.invalid/a">x</a>',
}


def _write_hostile_tidy(root: Path) -> Path:
    """A tidy folder whose every string (movie, title, model, keywords, review text and title) is hostile."""
    import pandas as pd

    root.mkdir(parents=True)
    movie, model = HOSTILE["html"], HOSTILE["link"]
    keywords = [HOSTILE["image"], "fraud", HOSTILE["raw_link"], "poverty", HOSTILE["html"]]
    pd.DataFrame(
        {
            "movie": movie,
            "rank": range(4),
            "keyword": ["fraud", HOSTILE["image"], "poverty", HOSTILE["raw_link"]],
            "helpful": 1,
            "not_helpful": 0,
        }
    ).to_csv(root / "ground_truth.csv", index=False)
    rows = [
        (movie, f"r{i}", m, rank, kw, 1e308 if m == model else 1.0 - rank / 10)
        for i in range(3)
        for m in (model, "plain")
        for rank, kw in enumerate(keywords)
    ]
    pd.DataFrame(rows, columns=["movie", "review_id", "model", "rank", "keyword", "score"]).to_csv(
        root / "predictions.csv", index=False
    )
    pd.DataFrame(
        {
            "movie": movie,
            "review_id": ["r0", "r1", "r2"],
            "title": HOSTILE["image"],
            "rating": [2, 5, 9],
            "text": [f"A fraud story {HOSTILE['image']} {HOSTILE['html']} {HOSTILE['raw_link']} about poverty."] * 3,
        }
    ).to_csv(root / "reviews.csv", index=False)
    pd.DataFrame({"movie": [movie], "title": [HOSTILE["html"]]}).to_csv(root / "movies.csv", index=False)
    return root


def _live_from_data(driver) -> list[str]:
    """Elements in the DOM that the data made: images and links to the hostile hosts, its event handlers, frames,
    scripts.

    The app's own links (to its pages, carrying the hostile names URL-encoded in their query) are not live data.
    """
    return driver.execute_script("""
        const host = u => { try { return new URL(u, location.href).host; } catch (e) { return ''; } };
        const bad = [];
        for (const e of document.querySelectorAll('img[src], a[href], iframe, script[src], source[src]')) {
            const target = e.getAttribute('src') || e.getAttribute('href') || '';
            if (/invalid/.test(host(target))) bad.push(e.outerHTML.slice(0, 200));
        }
        for (const e of document.querySelectorAll('*')) {
            for (const a of e.attributes) {
                if (a.name.startsWith('on') && /pwned/.test(a.value)) bad.push(e.outerHTML.slice(0, 200));
            }
        }
        return bad;""")


def test_hostile_data_is_never_live_on_any_page(tmp_path, browser):
    SHOTS.mkdir(parents=True, exist_ok=True)
    data = _write_hostile_tidy(tmp_path / "hostile")
    with server(tmp_path, data) as running:
        driver, url = browser, running.url
        for path, title in ADDRESSES.items():
            for query in ("k=5", "k=5&review=r0"):
                driver.get(f"{url}/{path}?{query}")
                settled(driver, [title])
                assert not driver.find_elements(By.CSS_SELECTOR, ERROR), f"{path}?{query}: exception block"
                assert _live_from_data(driver) == [], f"{path}?{query}"
                assert driver.title != "pwned"
            driver.save_screenshot(str(SHOTS / f"hostile_{path}.png"))
