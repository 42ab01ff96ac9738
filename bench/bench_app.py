"""Dashboard timings through streamlit.testing.v1.AppTest (server-side script time, no browser).

- cold: the first view of the embedded demo in a fresh process (imports, load,
  evaluation, first render of the default page), run in a subprocess;
- warm: on the DNLP data, each page is run, then rerun with every cache warm;
  the rerun time (median of --repeat) is what a user waits after a click.
  Target: < 0.5 s per page.
- warm with semantic matching and sentiment on (``sem=1&tau=0.75&sas=1``): the
  same per page.  Its "first run" of the app includes embedding whatever the
  persistent embedding cache ($KWEVAL_CACHE_DIR, else the user cache) lacks —
  minutes on a CPU for the DNLP data the first time; run it twice, or pre-fill
  the cache with `kweval embed`, to time only the warm path.  The report says
  whether `kweval.semantic.load_model` was called during the page runs and
  warm reruns (it must not be).  The Notebook parity page's legacy replay
  embeds with its own encoder (`kweval.legacy.legacy_encoder`, not cached on
  disk), so its first run with semantic on is slow; its warm rerun is not.

Usage: python bench/bench_app.py [--data PATH] [--movie MOVIE] [--pages compare,explorer] [--repeat 3] [--no-semantic]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
APP = REPO / "app.py"
DNLP = REPO.parent / "shared" / "data" / "dnlp" / "Dataset"
PAGES = [p for p in ("pages/summary.py", "pages/explorer.py", "pages/ndcg.py", "pages/compare.py", "pages/data.py", "pages/parity.py")
         if (REPO / p).is_file()]
TARGET_S = 0.5


def _navigation_v2() -> None:
    """AppTest resets PagesManager.uses_pages_directory before each run; keep st.navigation's path (see tests/test_app.py)."""
    from streamlit.runtime.pages_manager import PagesManager

    original = PagesManager.__init__

    def init(self, *args, **kwargs):
        original(self, *args, **kwargs)
        PagesManager.uses_pages_directory = False

    PagesManager.__init__ = init


def _run(at, timeout: float = 600) -> float:
    start = time.perf_counter()
    at.run(timeout=timeout)
    elapsed = time.perf_counter() - start
    if at.exception:
        raise RuntimeError(f"the app raised: {[e.message for e in at.exception]}")
    return elapsed


def cold() -> float:
    """Seconds for the first view of the demo, in this (fresh) process."""
    os.environ.pop("KWEVAL_DATA", None)
    start = time.perf_counter()
    _navigation_v2()
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(APP), default_timeout=600)
    at.run()
    if at.exception:
        raise RuntimeError(f"the app raised: {[e.message for e in at.exception]}")
    return time.perf_counter() - start


def warm(
    data: Path, params: dict[str, str], repeat: int, loads: list | None = None, pages: list[str] = PAGES
) -> tuple[float, list[tuple[str, float, float]], int]:
    """(seconds of the app's first run, [(page, first run s, median warm rerun s) per page of `pages`],
    model loads after the first run (with `loads` from `_count_model_loads`; else 0))."""
    os.environ["KWEVAL_DATA"] = str(data)
    _navigation_v2()
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(APP), default_timeout=600)
    at.query_params.update(params)
    setup = _run(at)  # load + evaluate (cached from here on)
    after_setup = len(loads) if loads is not None else 0
    rows = []
    for page in pages:
        at.switch_page(page)
        first = _run(at)
        reruns = [_run(at) for _ in range(repeat)]
        rows.append((page, first, statistics.median(reruns)))
    return setup, rows, (len(loads) - after_setup if loads is not None else 0)


def _count_model_loads() -> list:
    """Record every kweval.semantic.load_model call (embed_texts makes one only for strings the cache lacks)."""
    from kweval import semantic

    calls: list = []
    original = semantic.load_model

    def counting(*args, **kwargs):
        calls.append(args)
        return original(*args, **kwargs)

    semantic.load_model = counting
    return calls


def _report(title: str, rows: list[tuple[str, float, float]]) -> bool:
    print(title)
    print(f"{'page':<20} {'first run':>10} {'warm rerun':>11}")
    ok = True
    for page, first, rerun in rows:
        flag = "" if rerun < TARGET_S else f"  (> {TARGET_S} s target)"
        ok &= rerun < TARGET_S
        print(f"{page:<20} {first:>9.3f}s {rerun:>10.3f}s{flag}")
    return ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DNLP)
    parser.add_argument("--movie", default="SW_Episode6", help="movie selected in the sidebar (ALL for every movie)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--pages", help="comma-separated page names to time (default: every page), e.g. compare,explorer")
    parser.add_argument("--no-semantic", dest="semantic", action="store_false",
                        help="skip the pass with semantic matching and sentiment on")
    parser.add_argument("--cold-only", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    pages = PAGES if args.pages is None else [f"pages/{name.strip()}.py" for name in args.pages.split(",")]
    unknown = [p for p in pages if p not in PAGES]
    if unknown:
        parser.error(f"unknown page(s): {', '.join(unknown)} (pages: {', '.join(Path(p).stem for p in PAGES)})")
    if args.cold_only:
        print(f"{cold():.3f}")
        return 0

    cmd = [sys.executable, str(Path(__file__).resolve()), "--cold-only"]
    env = {k: v for k, v in os.environ.items() if k != "KWEVAL_DATA"}
    out = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, check=True)
    cold_s = float(out.stdout.strip().splitlines()[-1])

    print("command: python bench/bench_app.py " + " ".join(sys.argv[1:]))
    print(f"cold first view of the embedded demo (fresh process: imports, load, evaluate, Summary): {cold_s:.2f} s")
    ok = True
    for movie in dict.fromkeys([args.movie, "ALL"]):
        _, rows, _ = warm(args.data, {"movie": movie}, args.repeat, pages=pages)
        ok &= _report(f"\n{args.data.name} data, movie={movie}, all models, k=5 — server time per page (AppTest):", rows)
    if args.semantic:
        from kweval.cache import cache_dir

        loads = _count_model_loads()
        for movie in dict.fromkeys([args.movie, "ALL"]):
            before = len(loads)
            setup, rows, later = warm(args.data, {"movie": movie, "sem": "1", "tau": "0.75", "sas": "1"}, args.repeat, loads, pages)
            at_setup = len(loads) - before - later
            ok &= _report(
                f"\n{args.data.name} data, movie={movie}, all models, k=5, semantic (τ = 0.75) + sentiment on — "
                f"server time per page (AppTest); the app's first run took {setup:.2f} s "
                f"({'embedded what the cache lacked' if at_setup else 'embeddings all from the cache, no model load'}; "
                f"cache {cache_dir()}):", rows)
            print(f"model loads during the page runs and warm reruns: {later}" + ("" if later == 0 else "  (should be 0)"))
            ok &= later == 0
    print(f"\nwarm reruns {'all under' if ok else 'NOT all under'} the {TARGET_S} s target")
    return 0


if __name__ == "__main__":
    sys.exit(main())
