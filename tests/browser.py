"""Helpers of the browser tests: a real `streamlit run app.py`, headless Debian chromium, and waits on conditions.

Not a test module.  Every wait here is for a condition (the script run over, a text or an element on the page, a
URL) with a generous deadline, never for a fixed time: on a busy machine a run, a chart's first drawing or a page
link can take many times longer than on an idle one (issue 29).

How a browser test uses them (the fixtures are in tests/conftest.py):

- ``demo_server`` / ``collection_server`` (one server per test session, per xdist worker): a test that only reads
  pages of the embedded demo (or of the small per-document collection) opens them there; each ``driver.get`` is a
  new Streamlit session, so no state is shared but the server's caches.  A test that needs a fresh server (a deep
  link as the first request, a cold embedding cache, its own data) starts one with ``server(tmp_path, data)``.
- ``browser``: a chromium for the test at 1400 × 1000 (one per session, reset between tests: no emulation, no
  cookies, about:blank); ``chromium(width, height)`` starts one of its own.
- ``settled(driver, texts, present=...)``: wait until the run is over, the texts are shown and every CSS selector
  of ``present`` matches (e.g. ``CHART`` for a drawn chart: plotly, Vega-Lite or the Summary's SVG); it returns the
  page's text.
  ``wait_until(condition, what)`` waits for anything else; a condition that meets an element being replaced or not
  yet there (stale, absent, not yet interactable) is only not met yet.
- Never act on an element found once: a busy machine may still be laying the page out (a chart drawn above moves
  it, covers it) or a rerun may replace it between the find and the act.  Every click, typing and hover goes
  through ``act_when_drawn(driver, find, act, what)`` (find it, act, look again when covered or replaced), or its
  shorthands ``click_when_free`` (a CSS selector), ``click_button`` (a button's label), ``click_text`` (an
  element's text), ``click_page_link``, ``click_radio_option`` and ``type_into``; what a rerun may replace is read in
  one script (``link_hrefs``).  No fixed sleeps: after an act, wait for what it shows (``settled``, ``wait_until``).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from selenium import webdriver
from selenium.common.exceptions import (
    ElementClickInterceptedException,
    ElementNotInteractableException,
    NoSuchElementException,
    StaleElementReferenceException,
    TimeoutException,
    WebDriverException,
)
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
SHOTS = ROOT / "artifacts" / "screenshots"
ERROR = '[data-testid="stException"]'
# a chart drawn (its SVG), not only its placeholder: plotly's (most pages), Vega-Lite's (Compare's scatter, which
# Streamlit draws on a canvas beyond 2,000 points) or the server's own SVG (the Summary's, dashboard/svg_charts.py)
SVG_CHART = ".kw-svg-chart svg"
CHART = (
    '[data-testid="stPlotlyChart"] .main-svg, [data-testid="stVegaLiteChart"] svg.marks, '
    f'[data-testid="stVegaLiteChart"] canvas.marks, {SVG_CHART}'
)
# the Summary's charts all drawn: its small multiples' bars and its heatmap's cells (the last chart of the page)
SUMMARY_CHARTS = (f"{SVG_CHART} g.kw-bar", f"{SVG_CHART} g.kw-cell")
PAGE_LINK = '[data-testid="stPageLink-NavLink"]'
# Generous: on a shared machine with both cores busy (load 10-25 seen) a fresh server's first evaluation, or the
# int8 export of the embedding model, takes ten times an idle one's; a deadline costs time only when a test fails.
DEADLINE = 600.0
POLL = 0.25

T = TypeVar("T")


# What a page that is still being drawn or rerun throws at a find or an act: the element replaced (stale), not there
# yet (a nested find), not yet shown or enabled, or covered by another (a chart above still moving it).
CHANGING = (
    StaleElementReferenceException,
    NoSuchElementException,
    ElementNotInteractableException,
    ElementClickInterceptedException,
)


def wait_until(condition: Callable[[], T], what: Callable[[], str] | str, timeout: float = DEADLINE) -> T:
    """`condition()`'s first truthy value, polled until `timeout` seconds; AssertionError saying `what` after.  A
    condition raising one of `CHANGING` (the page still being drawn or rerun) is not met yet."""
    deadline = time.monotonic() + timeout
    last: WebDriverException | None = None
    while True:
        try:
            value = condition()
        except CHANGING as exc:
            last = exc
        else:
            if value:
                return value
        if time.monotonic() > deadline:
            said = what() if callable(what) else what
            raise AssertionError(said + (f" (last: {type(last).__name__}: {last.msg})" if last else ""))
        time.sleep(POLL)


# One script reads the page's state at one moment: Streamlit's own attributes on the app element (the script run's
# state and the connection's, which the status widget shows only after 500 ms of running), stale elements (drawn by
# an earlier run, not yet replaced), exceptions, the text and how many elements each selector matches.
_STATE = """
const app = document.querySelector('[data-testid="stApp"]');
return {
    script: app ? app.getAttribute('data-test-script-state') : null,
    connection: app ? app.getAttribute('data-test-connection-state') : null,
    stale: document.querySelectorAll('[data-stale="true"]').length,
    errors: Array.from(document.querySelectorAll(arguments[0]), e => e.innerText.slice(0, 500)),
    text: document.body ? document.body.innerText : '',
    present: arguments[1].map(s => document.querySelectorAll(s).length),
};"""


def page_state(driver, present: Sequence[str] = ()) -> dict:
    """The page's state now: script (run state), connection, stale (count), errors, text, present (counts); all
    empty while the browser is too busy to answer (a starved renderer answers no script for a while)."""
    try:
        return driver.execute_script(_STATE, ERROR, list(present))
    except TimeoutException:
        return {"script": None, "connection": None, "stale": 0, "errors": [], "text": "", "present": []}


def _done(state: dict, texts: Sequence[str], present: Sequence[str]) -> bool:
    return (
        state["script"] == "notRunning"
        and state["connection"] == "CONNECTED"
        and state["stale"] == 0
        and all(t in state["text"] for t in texts)
        and len(state["present"]) == len(present)
        and all(state["present"])
    )


def settled(
    driver, texts: Sequence[str], timeout: float = DEADLINE, present: Sequence[str] = (), poll: float = POLL
) -> str:
    """Wait until the script run is over and nothing on the page is stale, every text of `texts` is shown and every
    CSS selector of `present` matches; return the page's text.  Done means so, with the same text, at two polls in a
    row, `poll` seconds apart (a run that ends and the next that starts between two polls is not taken for the end):
    it returns 1-2 polls after the page settled (bench/bench_browser.py times with a finer poll).  An exception
    element fails at once."""
    deadline = time.monotonic() + timeout
    state: dict = {"text": "", "errors": []}
    last = None
    while time.monotonic() < deadline:
        state = page_state(driver, present)
        if state["errors"]:
            break
        done = _done(state, texts, present)
        if done and state["text"] == last:
            return state["text"]
        last = state["text"] if done else None
        time.sleep(poll)
    missing = [t for t in texts if t not in state.get("text", "")]
    absent = [s for s, n in zip(present, state.get("present", [])) if not n]
    raise AssertionError(
        f"page did not settle on {list(texts)} within {timeout:.0f} s: script {state.get('script')}, connection "
        f"{state.get('connection')}, stale {state.get('stale')}, missing texts {missing}, absent elements {absent}; "
        f"errors: {state['errors']}; text: {state['text'][:800]}"
    )


def page_links(driver) -> list:
    """The sidebar's page links (dashboard/sidebar.py)."""
    return driver.find_elements(By.CSS_SELECTOR, PAGE_LINK)


def link_hrefs(driver) -> list[str]:
    """The (absolute) hrefs of the sidebar's page links, read in one script (a rerun may replace the elements)."""
    return driver.execute_script("return Array.from(document.querySelectorAll(arguments[0]), a => a.href);", PAGE_LINK)


def element_texts(driver, css: str) -> list[str]:
    """The texts of the elements `css`, read in one script (a rerun may replace them between two reads)."""
    return driver.execute_script(
        "return Array.from(document.querySelectorAll(arguments[0]), e => e.innerText.trim());", css
    )


def act_when_drawn(
    driver, find: str | Callable[[], object], act: Callable[[object], object], what: Callable[[], str] | str
) -> None:
    """`act` on the element `find` (a CSS selector: its first match; or a function returning the element, None while
    there is none) once it is there and takes the action: on a busy machine the page may still be laying out (an
    element drawn above covers or moves it) or a rerun may replace it mid-way; find it again until done (`CHANGING`).
    Only the act that raised is repeated: make it one that can be (typing selects what the field holds first)."""

    def first() -> object:
        found = driver.find_elements(By.CSS_SELECTOR, find)
        return found[0] if found else None

    locate = first if isinstance(find, str) else find

    def done() -> bool:
        element = locate()
        if element is None:
            return False
        act(element)
        return True

    wait_until(done, what)


def click_when_free(driver, css: str) -> None:
    """Click the element `css` once it is there and nothing covers it (`act_when_drawn`)."""
    act_when_drawn(driver, css, lambda element: element.click(), f"nothing clickable at {css!r}")


def click_button(driver, label: str, index: int = 0) -> None:
    """Click the `index`-th button labelled `label` once there are that many and nothing covers it."""

    def button() -> object:
        found = [b for b in driver.find_elements(By.CSS_SELECTOR, "button") if b.text.strip() == label]
        return found[index] if len(found) > index else None

    act_when_drawn(
        driver,
        button,
        lambda element: element.click(),
        lambda: f"no button {label!r} number {index + 1} to click in {element_texts(driver, 'button')}",
    )


def click_text(driver, text: str) -> None:
    """Click the element whose own text contains `text` (an expander's label, say), once it is there and free."""
    act_when_drawn(
        driver,
        lambda: next(iter(driver.find_elements(By.XPATH, f"//*[contains(text(), {text!r})]")), None),
        lambda element: element.click(),
        f"nothing to click with the text {text!r}",
    )


def type_into(driver, css: str, value: str) -> None:
    """Type `value` and Enter into the input `css` once it is drawn, replacing what it holds (a busy machine may still
    be redrawing it after a page turn or a rerun)."""

    def typing(field) -> None:
        field.send_keys(Keys.CONTROL, "a")
        field.send_keys(value, Keys.ENTER)

    act_when_drawn(driver, css, typing, f"no input {css!r} to type {value!r} into")


def click_page_link(driver, title: str) -> None:
    """Click the sidebar's link whose label ends with `title`, once it is there and free."""
    act_when_drawn(
        driver,
        lambda: next((a for a in page_links(driver) if a.text.strip().endswith(title)), None),
        lambda element: element.click(),
        lambda: f"no navigation link {title!r} to click in {element_texts(driver, PAGE_LINK)}",
    )


def click_radio_option(driver, label: str) -> None:
    """Click the radio option labelled `label`, once it is drawn (a shared browser may still show the last page)."""
    act_when_drawn(
        driver,
        lambda: next(
            (
                e
                for e in driver.find_elements(By.CSS_SELECTOR, '[data-testid="stRadio"] label')
                if e.text.strip() == label
            ),
            None,
        ),
        lambda element: element.click(),
        f"no radio option {label!r}",
    )


# ---------------------------------------------------------------------------------------------
# the server and the browser


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass(frozen=True)
class Server:
    """A running server: its URL, the kweval cache folder it writes (embeddings, judgments) and the data it serves
    (None: the embedded demo)."""

    url: str
    cache_dir: Path
    data: Path | None = None


def _wait_healthy(url: str, proc: subprocess.Popen, timeout: float = DEADLINE) -> None:
    def healthy() -> bool:
        if proc.poll() is not None:
            raise AssertionError(f"streamlit exited with {proc.returncode}")
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=5) as r:
                return r.read().strip() == b"ok"
        except OSError:
            return False

    wait_until(healthy, "streamlit did not become healthy", timeout)


@contextmanager
def server(
    folder: Path, data: Path | None = None, cache: Path | None = None, extra_env: dict[str, str] | None = None
) -> Iterator[Server]:
    """A real `streamlit run app.py` on a free port (the embedded demo, or `data`), its log in `folder` and its
    kweval cache in `cache` (default: `folder`/embeddings, never the user's cache; the benchmarks pass one);
    `extra_env` is set on top (e.g. `KWEVAL_PREDICTIONS`)."""
    assert CHROMIUM.exists() and CHROMEDRIVER.exists(), (
        "Debian's chromium is required: apt-get install -y chromium chromium-driver (or `make browser`)"
    )
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    cache = cache or folder / "embeddings"
    env = {k: v for k, v in os.environ.items() if not k.startswith("KWEVAL_")}
    env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", KWEVAL_CACHE_DIR=str(cache))
    if data is not None:
        env["KWEVAL_DATA"] = str(data)
    env.update(extra_env or {})
    command = [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true"]
    command += ["--server.address", "127.0.0.1", "--server.port", str(port), "--server.fileWatcherType", "none"]
    command += ["--browser.gatherUsageStats", "false"]
    with open(folder / f"streamlit_{port}.log", "w") as log:
        proc = subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
        try:
            _wait_healthy(url, proc)
            yield Server(url, cache, data)
        finally:
            proc.terminate()
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(5)


@contextmanager
def chromium(width: int = 1400, height: int = 1000, reduced_motion: bool = True) -> Iterator[webdriver.Chrome]:
    """Headless Debian chromium at `width` × `height`; with `reduced_motion`, as a visitor who asked their system for
    less motion (the tests: what they check does not move, and Streamlit's running indicators and skeletons then cost
    the machine less CPU while a page waits for the server: 0.5-1 s of chromium's CPU in a fresh server's first view,
    ~6% of the browser tests' CPU); the benchmarks time the default, animated, as most visitors see it."""
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    if reduced_motion:
        options.add_argument("--force-prefers-reduced-motion")
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
    driver.set_page_load_timeout(DEADLINE)
    driver.set_script_timeout(DEADLINE)
    try:
        yield driver
    finally:
        driver.quit()


def reset(driver, width: int = 1400, height: int = 1000) -> None:
    """A shared chromium as a new one: a blank page, no cookies, no emulated device or colour scheme, its size."""
    driver.get("about:blank")
    driver.delete_all_cookies()
    driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
    driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": "", "features": []})
    driver.set_window_size(width, height)
