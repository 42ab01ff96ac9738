"""Dashboard timings in a real browser (issue 23 "Speed"): what a user waits, from click to a settled page.

A real `streamlit run app.py` on the data (DNLP by default) and headless Debian
chromium, as in tests/test_browser.py.  Measured, each from the request (or the
click) until Streamlit's status widget is gone and the page's own text is there:

- a fresh server's first view of the Summary (for information: imports, reading, evaluating);
- a new session's first view on the warm server (a second browser): target <= 1.5 s;
- a warm rerun of each page (the same URL again, in the same browser): target <= 0.5 s
  of server time (bench/bench_app.py measures that without a browser; here the
  browser's drawing is included, so the figure is an upper bound).

Usage: python bench/bench_browser.py [--data PATH] [--params QUERY] [--repeat 3]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from test_browser import _chromium, _server, _settled  # noqa: E402

DNLP = REPO.parent / "shared" / "data" / "dnlp" / "Dataset"
PAGES = {"summary": "Summary", "explorer": "Review explorer", "compare": "Compare models", "data": "Data"}
TARGETS = {"new session's first view": 1.5}


def _view(driver, url: str, text: str) -> float:
    """Seconds from asking for `url` until the page settled showing `text`."""
    start = time.perf_counter()
    driver.get(url)
    _settled(driver, [text], timeout=600)
    return time.perf_counter() - start - 0.8  # _settled waits 0.8 s for charts once the run is over


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DNLP)
    parser.add_argument("--params", default="k=5", help="the URL query every page is opened with")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    if not args.data.exists():
        print(f"bench_browser: {args.data}: not found (the DNLP data is ../shared/data/dnlp/Dataset)")
        return 2
    with tempfile.TemporaryDirectory() as tmp, _server(Path(tmp), args.data) as url:
        with _chromium() as driver:
            cold = _view(driver, f"{url}/summary?{args.params}", "Summary")
            reruns = {
                page: statistics.median(
                    _view(driver, f"{url}/{page}?{args.params}", title) for _ in range(args.repeat + 1)
                )
                for page, title in PAGES.items()
            }
        firsts = []
        for _ in range(args.repeat):
            with _chromium() as fresh:
                firsts.append(_view(fresh, f"{url}/summary?{args.params}", "Summary"))
    first = statistics.median(firsts)
    print(f"data: {args.data}  query: {args.params}")
    print("| measure | seconds | target | |\n| --- | ---: | ---: | --- |")
    print(f"| fresh server's first view | {cold:.2f} | | |")
    verdict = "met" if first <= TARGETS["new session's first view"] else "**not met**"
    print(f"| new session's first view (median of {args.repeat}) | {first:.2f} | <= 1.5 | {verdict} |")
    for page, seconds in reruns.items():
        print(f"| {page}: page opened again (median) | {seconds:.2f} | | |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
