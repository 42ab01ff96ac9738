"""Try a running kweval server in headless Debian chromium, as a visitor does (scripts/check_image.sh calls it).

    python scripts/image_pages.py URL pages    every page of the sidebar: its own title renders, no error box
    python scripts/image_pages.py URL judge    grade one keyword in the explorer (annotator "image-check")
    python scripts/image_pages.py URL judged   the Summary offers the judged metrics: the judgment is still there

One line per check on stdout; exit 1 at the first failure (with the page's text), 0 when every check holds.  Every
wait is for a condition (the script run over and the text there) with a generous deadline: a container's first
view loads the demo and warms its caches.
"""

from __future__ import annotations

import sys
import time
from contextlib import contextmanager

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

# each page of dashboard.sidebar.PAGES -> the title it draws on the embedded demo (tests/test_packaging.py keeps
# the two lists equal)
TITLES = {
    "summary": "Summary",
    "explorer": "Review explorer",
    "ndcg": "nDCG, step by step",
    "compare": "Compare models",
    "history": "Run history",
    "failures": "Why did my model fail?",
    "data": "Data",
    "parity": "Notebook parity",
    "protocols": "Protocols",
}
ERRORS = '[data-testid="stException"], [data-testid="stAlertContentError"]'
QUERY = "movie=star_tide&models=keybert,yake,keybert_vader&k=5"
ANNOTATOR = "image-check"
DEADLINE_S = 300.0


class CheckFailed(Exception):
    """A check did not hold (the message says which, with what the page showed)."""


@contextmanager
def chromium():
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1400,1000"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    try:
        yield driver
    finally:
        driver.quit()


def settled(driver, texts: list[str], what: str) -> str:
    """The page's text once no script run is in progress and every one of `texts` shows; CheckFailed on an error
    box or at the deadline."""
    deadline = time.monotonic() + DEADLINE_S
    body = ""
    while time.monotonic() < deadline:
        if driver.find_elements(By.CSS_SELECTOR, ERRORS):
            errors = [e.text for e in driver.find_elements(By.CSS_SELECTOR, ERRORS)]
            raise CheckFailed(f"{what}: an error box: {errors}")
        body = driver.find_element(By.TAG_NAME, "body").text
        running = driver.find_elements(By.CSS_SELECTOR, '[data-testid="stStatusWidget"]')
        if not running and all(t in body for t in texts):
            return body
        time.sleep(0.25)
    raise CheckFailed(f"{what}: {texts} not shown within {DEADLINE_S:.0f} s; the page shows: {body[:600]!r}")


def headings(driver) -> list[str]:
    return [h.text.strip() for h in driver.find_elements(By.CSS_SELECTOR, "h1")]


def check_pages(driver, url: str) -> None:
    for name, title in TITLES.items():
        started = time.monotonic()
        driver.get(f"{url}/{name}?{QUERY}")
        settled(driver, [title], f"/{name}")
        if title not in headings(driver):
            raise CheckFailed(f"/{name}: no heading {title!r} (headings: {headings(driver)})")
        print(f"ok /{name}: {title!r} in {time.monotonic() - started:.1f} s, no error box")


def button(driver, label: str):
    deadline = time.monotonic() + DEADLINE_S
    while time.monotonic() < deadline:
        found = [b for b in driver.find_elements(By.CSS_SELECTOR, "button") if b.text.strip() == label]
        if found:
            return found[0]
        time.sleep(0.25)
    raise CheckFailed(f"no button {label!r}")


def judge(driver, url: str) -> None:
    driver.get(f"{url}/explorer?{QUERY}")
    settled(driver, ["Review explorer", "review(s) match"], "/explorer")
    button(driver, "Open this review").click()
    settled(driver, ["← All reviews", "Judge the keywords"], "/explorer, one review")
    field = driver.find_element(By.CSS_SELECTOR, '[data-testid="stSidebar"] input[aria-label^="Annotator"]')
    field.send_keys(ANNOTATOR, Keys.ENTER)
    settled(driver, ["Judge the keywords"], "/explorer, the annotator named")
    driver.find_element(By.XPATH, "//*[contains(text(), 'Judge the keywords')]").click()
    button(driver, "Save the judgment").click()
    text = settled(driver, ["Saved:", f"by {ANNOTATOR}"], "/explorer, the judgment saved")
    print(f"ok judgment saved: {next(line for line in text.splitlines() if line.startswith('Saved:'))}")


def judged(driver, url: str) -> None:
    driver.get(f"{url}/summary?{QUERY}")
    text = settled(driver, ["Summary", "Judged metrics beside the reference ones"], "/summary")
    print(f"ok the judgment is kept: {next(line for line in text.splitlines() if 'judgment(s) stored' in line)}")


CHECKS = {"pages": check_pages, "judge": judge, "judged": judged}


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[1] not in CHECKS:
        print(f"usage: image_pages.py URL {{{'|'.join(CHECKS)}}}", file=sys.stderr)
        return 2
    url, check = argv[0].rstrip("/"), CHECKS[argv[1]]
    with chromium() as driver:
        try:
            check(driver, url)
        except CheckFailed as exc:
            print(f"FAILED {exc}")
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
