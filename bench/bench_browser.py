"""Dashboard timings in a real browser (issues 23, 28 item 7 and 29 item 4): what a user waits, click to settled page.

A real `streamlit run app.py` on the data (DNLP by default) and headless Debian chromium (tests/browser.py).  Each
figure runs from the request (or the change) until the script run is over, nothing on the page is stale, the page's
own text is shown and its charts are drawn (`tests.browser.settled`, the tests' own condition, polled every
`FINE_POLL` = 0.05 s instead of the tests' 0.25 s: a figure ends 0.05-0.1 s after the page settled, not 0.25-0.5 s),
but the page turn (below).

- **first views on a warm server**: the server has loaded and evaluated the data (a first Summary); then one page is
  opened for the first time, two ways, each on a warm server of its own (its caches cold, none warmed by an earlier
  page; `--one-server` opens them all on one: quicker, each page then benefits from the earlier ones):
  - *app open* (issue 29: <= 3 s each): in a chromium that has the app open (its Data page, or Protocols before
    Data: pages that compute nothing on a warm server), as a visitor follows a link or types the page's address: the
    page's own first view;
  - *fresh chromium*, a first visit (issue 28's target for a new session's first view: <= 5 s): in a chromium that
    has never loaded the app, so the figure also holds loading and compiling the app's scripts (~2 s of chromium's
    CPU, ~1 s of the wall time, as in a new session's first Summary below);
- **a new session's first Summary, charts drawn** on the warm server (issue 28: <= 5 s with both cores busy), each in
  a fresh chromium (a first visit: the app's scripts loaded and compiled), and for
  information in a chromium that has them cached (a returning visitor);
- **Compare at a new k** (the sidebar's k changed on Compare to a value not evaluated yet: <= 5 s);
- **an explorer page turn with semantic and sentiment on** (<= 1 s), from the new page number typed until the new
  page's cards are drawn: the run over, nothing stale, the caption naming the new page, every card a new one, and a
  frame produced after (`_TURNED`, watched by a MutationObserver, not polled: `settled` polls every 0.25 s and wants
  two equal polls, which adds 0.25-0.5 s to a figure this size).  The tests' `settled` is then checked, and the turn
  until it holds is printed for information;
- beside each of these three, the CPU seconds the server and chromium spent on it (`cpu_seconds`: what the load
  moves far less than the wall time; the figure to compare two commits by on a busy machine);
- for information: the fresh server's first view, each page opened again.

The embeddings and VADER values come from the persistent cache (`--cache`, default the user's kweval cache, where
`kweval embed DATA` pre-fills them): a first semantic run that embeds the DNLP keywords takes minutes on a CPU and is
not what is measured.  `--busy N` starts N busy-loop processes beside (issue 28: `--busy 2`, both cores busy); the
load average is printed before and after.  `--read S`: each explorer page is read for S seconds before the next turn
(default 0: turned as soon as the tests' `settled` holds), the time in which the page look-ahead builds the next
page's cards (`dashboard.cards_ahead`).

Usage: python bench/bench_browser.py [--data PATH] [--busy 2] [--repeat 3] [--read 1] [--cache DIR] [--one-server]
       [--per-page N] [--skip-first-views] [--only sessions|new-k|page-turn] [--demo]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from dashboard.review_tables import PER_PAGE  # noqa: E402
from tests.browser import CHART, SUMMARY_CHARTS, chromium, server, settled, type_into, wait_until  # noqa: E402

DNLP = Path(os.environ.get("KWEVAL_SHARED") or REPO.parent / "shared") / "data" / "dnlp" / "Dataset"
MODELS = "base,reranker,sentiment,sentiment_reranker"
# what a page must have drawn before it counts as settled: a chart (plotly or Vega-Lite) or, on the Summary, its
# SVG charts' bars and heatmap cells (`tests.browser.SUMMARY_CHARTS`: all of its charts, laid out with the page)
DRAWN: tuple[str, ...] = (CHART,)
SUMMARY: tuple[str, ...] = SUMMARY_CHARTS
# first view of each page (path?query, the text it settles on, what it draws: `DRAWN`, `SUMMARY` or nothing)
FIRST_VIEWS = {
    "Summary": ("summary?movie=ALL", "Every metric", SUMMARY),
    "Summary, semantic on": ("summary?movie=ALL&sem=1", "Every metric", SUMMARY),
    "explorer": ("explorer?movie=ALL", "review(s) match", ()),
    "explorer filtered by a category": (
        "explorer?movie=ALL&category=near_lexical&model=base&hl=base",
        "review(s) match",
        (),
    ),
    "explorer filtered by a slice": (
        "explorer?movie=ALL&slice=rating%3Dhigh&model=base&hl=base",
        "review(s) match",
        (),
    ),
    "Failures": ("failures?movie=ALL", "Slices where a model does worst", DRAWN),
    "Notebook parity": ("parity?movie=ALL", "Legacy vs corrected", ()),
    "Compare": ("compare?movie=ALL", "Reviews by difference", DRAWN),
    "nDCG": ("ndcg?movie=ALL", "Textbook examples", ()),
    "Data": ("data?movie=ALL", "The tidy layout", ()),
    "Protocols": ("protocols?movie=ALL", "Protocols", ()),  # per-document data only: says so on DNLP
    "History": ("history?movie=ALL", "Run history", ()),
}
# `settled` wants the same settled page at two polls in a row: the figure ends 1-2 polls after the page settled,
# 0.25-0.5 s at the tests' poll, 0.05-0.1 s at this one (each poll reads the page's text: a few ms of chromium's CPU)
FINE_POLL = 0.05
TARGETS = {
    "first view on a warm server": 3.0,  # the page's own: the app open (issue 29)
    "a first visit's view": 5.0,  # a fresh chromium's: the app's scripts loaded too (issue 28's new session)
    "new session's first Summary, charts drawn": 5.0,
    "Compare at a new k": 5.0,
    "explorer page turn, semantic + sentiment": 1.0,
}


def timed(action: Callable[[], object], driver, text: str, charts: Sequence[str]) -> float:
    """Seconds from `action` (a request or a change) until the page settled showing `text` with `charts` drawn (CSS
    selectors: `DRAWN`, `SUMMARY` or none), polled every `FINE_POLL` s."""
    start = time.perf_counter()
    action()
    settled(driver, [text], timeout=1200, present=list(charts), poll=FINE_POLL)
    return time.perf_counter() - start


def view(driver, url: str, text: str, charts: Sequence[str] = ()) -> float:
    """Seconds from asking for `url` (a new session) until it settled."""
    return timed(lambda: driver.get(url), driver, text, charts)


def _set_number(driver, key: str, value: int) -> None:
    """Type `value` into the number input of widget `key` and commit it (Enter), as a visitor does (`type_into`)."""
    type_into(driver, f".st-key-{key} input", str(value))


Spent = dict[str, float]  # {"server": CPU s, "browser": CPU s} of one step


def timed_cpu(action: Callable[[], object], driver, text: str, charts: Sequence[str]) -> tuple[float, Spent]:
    """`timed`, with the server's and chromium's CPU seconds spent meanwhile."""
    before = cpu_seconds()
    seconds = timed(action, driver, text, charts)
    after = cpu_seconds()
    return seconds, {kind: after[kind] - before[kind] for kind in after}


def new_k(driver, url: str, ks: list[int]) -> tuple[list[float], list[Spent]]:
    """Compare opened at k = 5, then the sidebar's k set to each of `ks` (values not evaluated yet): (seconds per
    change, CPU seconds per change)."""
    view(driver, f"{url}/compare?movie=ALL&k=5", "Reviews by difference", DRAWN)
    times, cpu = [], []
    for k in ks:  # the page names the metrics at the new k (ndcg@k) once its run is over
        seconds, spent = timed_cpu(lambda k=k: _set_number(driver, "sel_k", k), driver, f"ndcg@{k}", DRAWN)
        times.append(seconds)
        cpu.append(spent)
        wait_until(lambda k=k: f"k={k}" in driver.current_url, f"k={k} not in the URL")
    return times, cpu


def new_sessions(url: str, repeat: int) -> tuple[list[float], list[float], list[Spent]]:
    """A new session's first Summary `repeat` times, each in a fresh chromium (nothing cached: a first visit), then
    `repeat` times in one chromium that has loaded the app once (its scripts cached: a returning visitor); with the
    CPU seconds of each first visit."""
    fresh_times, cpu = [], []
    for _ in range(repeat):
        with chromium(reduced_motion=False) as fresh:
            seconds, spent = timed_cpu(lambda: fresh.get(f"{url}/summary?movie=ALL"), fresh, "Every metric", SUMMARY)
            fresh_times.append(seconds)
            cpu.append(spent)
    with chromium(reduced_motion=False) as driver:
        view(driver, f"{url}/data?movie=ALL", "The tidy layout")  # the app's scripts loaded; no chart drawn yet
        view(driver, f"{url}/compare?movie=ALL", "Reviews by difference", DRAWN)  # and its Vega-Lite chart's
        cached = [view(driver, f"{url}/summary?movie=ALL", "Every metric", SUMMARY) for _ in range(repeat)]
    return fresh_times, cached, cpu


def cpu_seconds() -> dict[str, float]:
    """CPU seconds so far of this process's descendants that are the Streamlit server or chromium (chromedriver and
    every process under it): what a step costs whatever else the machine runs (the load moves the wall times far
    more than these); chromium's also by process type ("browser:renderer", "browser:gpu-process", "browser:utility",
    "browser:main": the browser process, chromedriver and the zygotes)."""
    tick = os.sysconf("SC_CLK_TCK")
    children: dict[int, list[int]] = {}
    used: dict[int, float] = {}
    kinds: dict[int, str | None] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():  # /proc/self and the kernel's files
            continue
        try:
            stat, cmdline = (entry / "stat").read_text(), (entry / "cmdline").read_bytes()
        except OSError:
            continue  # a process that ended meanwhile
        fields = stat[stat.rindex(")") + 2 :].split()
        pid = int(entry.name)
        children.setdefault(int(fields[1]), []).append(pid)
        used[pid] = (int(fields[11]) + int(fields[12])) / tick  # utime + stime
        kinds[pid] = "server" if b"streamlit" in cmdline else _chromium_type(cmdline) if b"chrom" in cmdline else None
    totals = {"server": 0.0, "browser": 0.0}
    todo = [(pid, kinds[pid]) for pid in children.get(os.getpid(), [])]
    while todo:
        pid, kind = todo.pop()
        if kind:
            totals[kind.split(":")[0]] += used[pid]
            if ":" in kind:
                totals[kind] = totals.get(kind, 0.0) + used[pid]
        todo += [(child, kinds[child] or kind) for child in children.get(pid, [])]
    return totals


def _chromium_type(cmdline: bytes) -> str:
    """ "browser:TYPE" of a chromium process (its --type=, "main" for the browser process and chromedriver)."""
    found = re.search(rb"--type=([\w-]+)", cmdline)  # a zygote's child rewrites its command line: spaces, not NULs
    return "browser:" + (found.group(1).decode() if found else "main")


# Resolves once the page turn is drawn: the run over (Streamlit's script state), nothing stale, the caption names the
# new page, every card drawn (its HTML set) and none of them the old page's; then one frame later
# (requestAnimationFrame, then a task: the frame with the new cards has been produced).  Checked at each change of the
# page (a MutationObserver), not polled: the figure has no polling granularity and reading the page costs no layout.
# (the cards: the page's HTML elements but its one style for the keyword tables, which a turn leaves as it is)
_CARD_TEXTS = """Array.from(document.querySelectorAll('[data-testid="stHtml"]'), e => e.textContent.slice(0, 200))
    .filter(t => !t.startsWith('.kw-'))"""
_TURNED = (
    """
const [page, old, done] = [arguments[0], new Set(arguments[1]), arguments[arguments.length - 1]];
const app = document.querySelector('[data-testid="stApp"]');
const cards = () => """
    + _CARD_TEXTS
    + """;
function turned() {
    if (app.getAttribute('data-test-script-state') !== 'notRunning') return false;
    if (document.querySelector('[data-stale="true"]')) return false;
    const now = cards();
    if (!now.length || now.some(c => !c || old.has(c))) return false;  // every card drawn, none of the old page
    return Array.from(document.querySelectorAll('[data-testid="stCaptionContainer"]'))
        .some(c => c.textContent.includes('page ' + page + ' of'));
}
const drawn = () => requestAnimationFrame(() => setTimeout(() => done(true), 0));
const observer = new MutationObserver(() => {
    if (!turned()) return;
    observer.disconnect();
    drawn();
});
if (turned()) drawn();  // over before this script began (the typing returns after the keys are sent)
else observer.observe(document.body, {subtree: true, childList: true, attributes: true, characterData: true});
"""
)
_CARDS = "return " + _CARD_TEXTS + ";"


def page_turn(driver, page: int) -> tuple[float, float, Spent]:
    """The explorer's page number set to `page`: (seconds until the new page's cards are drawn (`_TURNED`), seconds
    until the tests' `settled` holds too (polled: 0.25-0.5 s more), the server's and chromium's CPU seconds until
    drawn)."""
    old = driver.execute_script(_CARDS)  # the old page's cards (some maybe not drawn yet): none may be on the new
    before, start = cpu_seconds(), time.perf_counter()
    _set_number(driver, "qp_p", page)
    driver.execute_async_script(_TURNED, page, old)
    drawn, after = time.perf_counter() - start, cpu_seconds()
    settled(driver, [f"page {page} of"], timeout=1200)  # the tests' condition holds too (a check)
    return drawn, time.perf_counter() - start, {kind: after[kind] - before[kind] for kind in after}


def page_turns(
    driver, url: str, repeat: int, read: float = 0.0, per_page: int | None = None
) -> tuple[list[float], list[float], list[Spent]]:
    """The explorer with semantic and sentiment on (`per_page` cards a page, by default the page's default), then its
    page number set to 2, 3, ..., each page read for `read` seconds first (a user's reading time, in which the page
    look-ahead builds the next page: `dashboard.cards_ahead`): (seconds per turn until drawn, until `settled`, the
    server's and chromium's CPU seconds per turn)."""
    pp = f"&pp={per_page}" if per_page else ""
    view(driver, f"{url}/explorer?movie=ALL&sem=1&sas=1{pp}", "review(s) match")
    turns = []
    for p in range(2, repeat + 2):
        time.sleep(read)
        turns.append(page_turn(driver, p))
    return [t for t, _, _ in turns], [t for _, t, _ in turns], [c for _, _, c in turns]


@contextlib.contextmanager
def busy(n: int) -> Iterator[None]:
    """`n` busy-loop processes for the duration."""
    procs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]
    try:
        yield
    finally:
        for proc in procs:
            proc.terminate()
            proc.wait()


@contextlib.contextmanager
def warm_server(tmp: Path, data: Path, cache: Path | None) -> Iterator[tuple[str, float]]:
    """A server on `data` whose first Summary has been drawn: (its URL, that first view's seconds)."""
    tmp.mkdir(parents=True, exist_ok=True)  # the server's log goes there
    with server(tmp, data, cache) as running, chromium(reduced_motion=False) as driver:
        first = view(driver, f"{running.url}/summary?movie=ALL", "Every metric", SUMMARY)
        yield running.url, first


def first_views(tmp: Path, data: Path, cache: Path | None, one_server: bool) -> dict[str, tuple[float, float]]:
    """{"page (how)": (first view s, opened again s)} on warm servers (two per page, one per way of opening it, unless
    `one_server`): the page opened in a chromium with the app open ("app open") and in a fresh one ("fresh
    chromium")."""
    out: dict[str, tuple[float, float]] = {}
    with contextlib.ExitStack() as shared:
        url = shared.enter_context(warm_server(tmp / "shared", data, cache))[0] if one_server else ""
        for name, (path, text, charts) in FIRST_VIEWS.items():
            for how in ("app open", "fresh chromium"):
                with contextlib.ExitStack() as own:
                    folder = tmp / f"{name}_{how}".replace(" ", "_").replace(",", "")
                    here = url or own.enter_context(warm_server(folder, data, cache))[0]
                    with chromium(reduced_motion=False) as driver:
                        if how == "app open":  # the app's scripts loaded by a page that computes nothing
                            opener = "Protocols" if name == "Data" else "Data"
                            view(driver, f"{here}/{FIRST_VIEWS[opener][0]}", FIRST_VIEWS[opener][1])
                        first = view(driver, f"{here}/{path}", text, charts)
                        again = view(driver, f"{here}/{path}", text, charts)
                    out[f"{name} ({how})"] = (first, again)
                    print(f"  {name} ({how}): first view {first:.2f} s, again {again:.2f} s", flush=True)
    return out


def _verdict(seconds: float, target: float) -> str:
    """The ratio to the target and whether it is met."""
    return f"{seconds / target:.2f} | {'met' if seconds <= target else '**not met**'}"


def parsed(parser: argparse.ArgumentParser, script: str) -> tuple[argparse.Namespace | None, str]:
    """The arguments of bench script `script` (its --data and --cache; the cache defaults to the user's) and its
    command line, to print beside the figures; None and a message when the data is not there."""
    args = parser.parse_args()
    if not args.data.exists():
        print(f"{script}: {args.data}: not found (the DNLP data is ../shared/data/dnlp/Dataset)")
        return None, ""
    if args.cache is None:
        from kweval.cachedir import cache_dir

        args.cache = cache_dir()
    return args, f"python bench/{script}.py " + " ".join(sys.argv[1:])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DNLP)
    parser.add_argument("--demo", action="store_true", help="also the new session's first Summary on the demo")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--busy", type=int, default=0, help="busy-loop processes beside (2: both cores busy)")
    parser.add_argument("--cache", type=Path, help="the servers' kweval cache (default: the user's)")
    parser.add_argument("--read", type=float, default=0.0, help="seconds each explorer page is read before a turn")
    parser.add_argument("--one-server", action="store_true", help="every first view on one warm server")
    parser.add_argument("--per-page", type=int, help="the explorer's cards a page (default: the page's default)")
    parser.add_argument("--skip-first-views", action="store_true", help="only the issue-28 measures")
    parser.add_argument(
        "--only",
        choices=["sessions", "new-k", "page-turn"],
        help="of the issue-28 measures, only this one (implies --skip-first-views)",
    )
    args, command = parsed(parser, "bench_browser")
    if args is None:
        return 2
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp, busy(args.busy):
        root = Path(tmp)
        views = {} if args.skip_first_views or args.only else first_views(root, args.data, args.cache, args.one_server)
        sessions: dict[str, list[float]] = {}
        warm: dict[str, list[float]] = {}  # the same in a browser that has the app's scripts already
        spent: dict[str, list[Spent]] = {}  # CPU seconds per step of each measure
        with warm_server(root / "sessions", args.data, args.cache) as (url, cold):
            if args.only in (None, "sessions"):
                name = f"new session's first Summary, {args.data.name}"
                sessions[args.data.name], warm[args.data.name], spent[name] = new_sessions(url, args.repeat)
            with chromium(reduced_motion=False) as driver:
                ks, spent["Compare at a new k"] = (
                    new_k(driver, url, [7 + i for i in range(args.repeat)])
                    if args.only in (None, "new-k")
                    else ([], [])
                )
                turns, polled, spent["explorer page turn"] = (
                    page_turns(driver, url, args.repeat, args.read, args.per_page)
                    if args.only in (None, "page-turn")
                    else ([], [], [])
                )
        if args.demo and args.only in (None, "sessions"):
            with warm_server(root / "demo", None, args.cache) as (url, _):
                sessions["demo"], warm["demo"], spent["new session's first Summary, demo"] = new_sessions(
                    url, args.repeat
                )
        load_after = os.getloadavg()
    print(
        f"\nCommand: `{command}` — data {args.data}, {args.busy} busy-loop process(es) beside, explorer pages read "
        f"{args.read:g} s before each turn, {args.per_page or PER_PAGE[0]} cards a page; load average "
        f"{load_before[0]:.1f} before, {load_after[0]:.1f} after, on {os.cpu_count()} cores.\n"
    )
    print("| measure | seconds | target | ÷ target | |\n| --- | ---: | ---: | ---: | --- |")
    print(f"| fresh server's first Summary (load + evaluation) | {cold:.2f} | | | |")
    for name, (first, _again) in views.items():
        target = TARGETS["first view on a warm server" if name.endswith("(app open)") else "a first visit's view"]
        print(f"| first view on a warm server: {name} | {first:.2f} | <= {target:g} | {_verdict(first, target)} |")
    for data, times in sessions.items():
        t, target = statistics.median(times), TARGETS["new session's first Summary, charts drawn"]
        print(
            f"| new session's first Summary, charts drawn, {data} (median of {len(times)}) | {t:.2f} | "
            f"<= {target:g} | {_verdict(t, target)} |"
        )
    for data, times in warm.items():
        t = statistics.median(times)
        print(f"| for information: the same, {data}, in a browser with the app's scripts cached | {t:.2f} | | | |")
    for name, times in (("Compare at a new k", ks), ("explorer page turn, semantic + sentiment", turns)):
        if not times:
            continue
        t = statistics.median(times)
        print(f"| {name} (median of {len(times)}) | {t:.2f} | <= {TARGETS[name]:g} | {_verdict(t, TARGETS[name])} |")
    if polled:
        t = statistics.median(polled)
        print(f"| for information: the page turn until the tests' settled() (polled; median) | {t:.2f} | | | |")
    for name, (_first, again) in views.items():
        print(f"| for information: {name} opened again | {again:.2f} | | | |")
    for name, steps in spent.items():
        for kind in ("server", "browser") if steps else ():
            t = statistics.median(c[kind] for c in steps)
            print(f"| for information: {kind} CPU seconds, {name} (median) | {t:.2f} | | | |")
    print(
        "\nAll runs, s: "
        + "; ".join(
            f"{n} {[round(t, 2) for t in ts]}"
            for n, ts in [*sessions.items(), ("new k", ks), ("page turns", turns), ("the same, settled()", polled)]
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
