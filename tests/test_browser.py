"""End to end: the real server in headless Debian chromium, every page, on the embedded demo.

Needs /usr/bin/chromium and /usr/bin/chromedriver (`make browser` installs
them); the test fails, not skips, without them.  Screenshots go to
artifacts/screenshots/ (git-ignored); with KWEVAL_UPDATE_DOCS=1 the explorer's
is also written to docs/explorer.png (the README's picture).
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By

pytestmark = [pytest.mark.browser, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
SHOTS = ROOT / "artifacts" / "screenshots"
PARAMS = "movie=star_tide&models=keybert,yake,keybert_vader&k=5"
# page title in the navigation -> texts that must be on the page
PAGES = {
    "Summary": ["Every metric, movies × models", "bootstrap 95% CIs", "by review rating and length"],
    "Review explorer": ["review(s) match", "GT rank", "unmatched"],
    "nDCG worked example": ["Three GT keywords, five predicted keywords", "0.7295", "Textbook examples"],
    "Compare models": ["Every metric, each model against", "Reviews by difference"],
    "Data": ["Validation messages", "The tidy layout", "kweval convert"],
}
ERROR = '[data-testid="stException"]'


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_healthy(url: str, proc: subprocess.Popen, timeout: float = 90) -> None:
    deadline = time.time() + timeout
    while time.time() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"streamlit exited with {proc.returncode}")
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as r:
                if r.read().strip() == b"ok":
                    return
        except OSError:
            pass
        time.sleep(0.3)
    raise AssertionError("streamlit did not become healthy")


def _settled(driver, texts: list[str], timeout: float = 90) -> str:
    """Wait until the script run is over and every text is on the page; return the page text."""
    deadline = time.time() + timeout
    body = ""
    while time.time() < deadline:
        running = driver.find_elements(By.CSS_SELECTOR, '[data-testid="stStatusWidget"]')
        body = driver.find_element(By.TAG_NAME, "body").text
        if not running and all(t in body for t in texts):
            time.sleep(0.8)  # let charts and KaTeX finish drawing
            return driver.find_element(By.TAG_NAME, "body").text
        if driver.find_elements(By.CSS_SELECTOR, ERROR):
            break
        time.sleep(0.25)
    errors = [e.text for e in driver.find_elements(By.CSS_SELECTOR, ERROR)]
    raise AssertionError(f"page did not show {texts}; errors: {errors}; text: {body[:800]}")


@contextmanager
def _server(tmp_path: Path, data: Path | None = None, extra_env: dict[str, str] | None = None):
    """A real `streamlit run app.py` on a free port (the embedded demo, or `data`; `extra_env` set too); yields its
    URL."""
    assert CHROMIUM.exists() and CHROMEDRIVER.exists(), (
        "Debian's chromium is required: apt-get install -y chromium chromium-driver (or `make browser`)"
    )
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    env = {k: v for k, v in os.environ.items() if not k.startswith("KWEVAL_")}
    env.update(
        HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", KWEVAL_CACHE_DIR=str(tmp_path / "embeddings")
    )  # never the user's cache
    if data is not None:
        env["KWEVAL_DATA"] = str(data)
    env.update(extra_env or {})
    log = open(tmp_path / f"streamlit_{port}.log", "w")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "streamlit",
            "run",
            "app.py",
            "--server.headless",
            "true",
            "--server.address",
            "127.0.0.1",
            "--server.port",
            str(port),
            "--server.fileWatcherType",
            "none",
            "--browser.gatherUsageStats",
            "false",
        ],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        _wait_healthy(url, proc)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)
        log.close()


@contextmanager
def _chromium(width: int = 1400, height: int = 1000):
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for arg in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        f"--window-size={width},{height}",
    ):
        options.add_argument(arg)
    driver = webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)
    driver.set_page_load_timeout(60)
    try:
        yield driver
    finally:
        driver.quit()


def test_every_page_in_chromium(tmp_path):
    SHOTS.mkdir(parents=True, exist_ok=True)
    with _server(tmp_path) as url, _chromium() as driver:
        # a copied link straight into a page (the server's very first run)
        driver.get(f"{url}/explorer?{PARAMS}")
        _settled(driver, ["Review explorer", *PAGES["Review explorer"]])
        assert driver.find_elements(By.CSS_SELECTOR, "mark"), "no highlighted match in the explorer"
        assert not driver.find_elements(By.CSS_SELECTOR, ERROR)
        driver.save_screenshot(str(SHOTS / "explorer.png"))
        if os.environ.get("KWEVAL_UPDATE_DOCS") == "1":
            shutil.copyfile(SHOTS / "explorer.png", ROOT / "docs" / "explorer.png")

        # every page has its own address: /summary is the Summary, not "Page not found"
        driver.get(f"{url}/summary?{PARAMS}")
        text = _settled(driver, ["Summary", *PAGES["Summary"]])
        assert "Page not found" not in text and urlparse(driver.current_url).path == "/summary"

        # every page through the sidebar's links (dashboard/sidebar.py); the selection stays in the URL
        for title, texts in PAGES.items():
            links = driver.find_elements(By.CSS_SELECTOR, '[data-testid="stPageLink-NavLink"]')
            link = next((a for a in links if a.text.strip().endswith(title)), None)
            assert link is not None, f"no navigation link {title!r} in {[a.text for a in links]}"
            link.click()
            text = _settled(driver, [title if title != "nDCG worked example" else "nDCG, step by step", *texts])
            assert not driver.find_elements(By.CSS_SELECTOR, ERROR), f"{title}: error element"
            assert "Traceback" not in text
            query = parse_qs(urlparse(driver.current_url).query)
            assert query.get("movie") == ["star_tide"] and query.get("k") == ["5"], f"{title}: URL {driver.current_url}"
            if title in ("Summary", "Compare models"):
                assert driver.find_elements(By.CSS_SELECTOR, '[data-testid="stPlotlyChart"]'), f"{title}: no chart"
            driver.save_screenshot(str(SHOTS / f"{title.lower().replace(' ', '_')}.png"))

        # semantic matching on (a cold embedding cache: the server embeds the demo's keywords first):
        # each predicted keyword gets its nearest GT keyword and the cosine
        driver.get(f"{url}/explorer?{PARAMS}&sem=1&tau=0.75")
        text = _settled(driver, ["Review explorer", "review(s) match", "nearest GT", "cosine"], timeout=180)
        assert not driver.find_elements(By.CSS_SELECTOR, ERROR) and "Traceback" not in text
        assert driver.find_elements(By.CSS_SELECTOR, "table.kw-table .kw-cos"), "no cosine cells in the explorer"
        assert driver.find_elements(By.CSS_SELECTOR, "mark.kw-above"), "no keyword marked above the threshold"
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
        text = _settled(driver, [title])
        assert not driver.find_elements(By.CSS_SELECTOR, ERROR), f"{path}?{query}: exception block"
        assert "Traceback" not in text and "Page not found" not in text, f"{path}?{query}"
        assert urlparse(driver.current_url).path == f"/{path}", driver.current_url
        driver.save_screenshot(str(SHOTS / f"{shot_prefix}_{path}.png"))


def test_every_page_at_k3_light_and_k20_dark(tmp_path):
    SHOTS.mkdir(parents=True, exist_ok=True)
    with _server(tmp_path) as url, _chromium() as driver:
        _visit_every_page(driver, url, f"movie=star_tide&models={MODELS}&k=3", "k3")
        _dark(driver)
        _visit_every_page(driver, url, f"movie=ALL&models={MODELS}&k=20&agg=micro", "k20_dark")
        assert _background_is_dark(driver), "the dark pass did not render dark"


def test_every_page_at_390px(tmp_path):
    SHOTS.mkdir(parents=True, exist_ok=True)
    with _server(tmp_path) as url, _chromium() as driver:
        # a phone's viewport (headless windows cannot be narrower than 500 px)
        driver.execute_cdp_cmd(
            "Emulation.setDeviceMetricsOverride", {"width": 390, "height": 844, "deviceScaleFactor": 2, "mobile": True}
        )
        driver.get(url)
        assert driver.execute_script("return window.innerWidth") == 390
        _visit_every_page(driver, url, f"movie=star_tide&models={MODELS}&k=5", "w390")


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


def test_hostile_data_is_never_live_on_any_page(tmp_path):
    SHOTS.mkdir(parents=True, exist_ok=True)
    data = _write_hostile_tidy(tmp_path / "hostile")
    with _server(tmp_path, data) as url, _chromium() as driver:
        for path, title in ADDRESSES.items():
            for query in ("k=5", "k=5&review=r0"):
                driver.get(f"{url}/{path}?{query}")
                _settled(driver, [title])
                assert not driver.find_elements(By.CSS_SELECTOR, ERROR), f"{path}?{query}: exception block"
                assert _live_from_data(driver) == [], f"{path}?{query}"
                assert driver.title != "pwned"
            driver.save_screenshot(str(SHOTS / f"hostile_{path}.png"))
