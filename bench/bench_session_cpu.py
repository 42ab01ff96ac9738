"""CPU time of a new session's first Summary (issue 28 item 7), the figure to trust on a busy shared machine.

`bench/bench_browser.py --only sessions` times the same view by the wall clock, which on a machine whose load
varies from 5 to 18 within minutes moves by a factor of two between runs of one commit.  This script opens the
Summary as a new session would (a fresh headless chromium, a real `streamlit run` warmed by a first Summary) and
measures, from the request until the page settled with its charts drawn (`tests.browser.settled`):

- the server's CPU seconds (the script run, the static files, the websocket);
- chromium's CPU seconds, all its processes (parsing and running the app's scripts, rendering);
- the renderer's script time (Chrome's `Performance.getMetrics` ScriptDuration: wall time, so load inflates it);
- the wall seconds, with the load average beside.

Compare two commits by running it from each checkout in turn.

Usage: python bench/bench_session_cpu.py [--data PATH | --demo] [--repeat 3] [--cache DIR]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import psutil

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.browser import CHART, chromium, server, settled  # noqa: E402

DNLP = Path(os.environ.get("KWEVAL_SHARED") or REPO.parent / "shared") / "data" / "dnlp" / "Dataset"
COLUMNS = ("wall", "server CPU", "chromium CPU", "renderer script")


def cpu_seconds(processes: list[psutil.Process]) -> float:
    """User + system CPU seconds of `processes` (those gone in between count 0)."""
    total = 0.0
    for proc in processes:
        try:
            times = proc.cpu_times()
        except psutil.Error:
            continue
        total += times.user + times.system
    return total


def server_processes(url: str) -> list[psutil.Process]:
    """The `streamlit run` serving `url` (found by its port on the command line)."""
    port = url.rsplit(":", 1)[1]
    return [
        p
        for p in psutil.process_iter(["cmdline"])
        if p.info["cmdline"] and "streamlit" in " ".join(p.info["cmdline"]) and port in p.info["cmdline"]
    ]


def one_session(url: str, served: list[psutil.Process]) -> tuple[float, ...]:
    """(wall, server CPU, chromium CPU, renderer script) seconds of one new session's first Summary."""
    with chromium() as driver:
        driver.execute_cdp_cmd("Performance.enable", {})
        browser = psutil.Process(driver.service.process.pid)
        server0, browser0, start = (
            cpu_seconds(served),
            cpu_seconds(browser.children(recursive=True)),
            time.perf_counter(),
        )
        driver.get(f"{url}/summary?movie=ALL")
        settled(driver, ["Every metric"], timeout=600, present=[CHART])
        wall = time.perf_counter() - start
        browser_cpu = cpu_seconds(browser.children(recursive=True)) - browser0
        metrics = {m["name"]: m["value"] for m in driver.execute_cdp_cmd("Performance.getMetrics", {})["metrics"]}
        return wall, cpu_seconds(served) - server0, browser_cpu, metrics["ScriptDuration"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=DNLP)
    parser.add_argument("--demo", action="store_true", help="the embedded demo instead of --data")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--cache", type=Path, default=None, help="kweval cache (default: the user's)")
    args = parser.parse_args()
    if args.cache is None:
        from kweval.cachedir import cache_dir

        args.cache = cache_dir()
    data = None if args.demo else args.data
    rows = []
    with tempfile.TemporaryDirectory() as tmp, server(Path(tmp), data, args.cache) as running:
        with chromium() as driver:  # the server's first Summary: data loaded, evaluated, every cache warm
            driver.get(f"{running.url}/summary?movie=ALL")
            settled(driver, ["Every metric"], timeout=1200, present=[CHART])
        served = server_processes(running.url)
        for _ in range(args.repeat):
            rows.append(one_session(running.url, served))
            print(
                "  " + ", ".join(f"{c} {v:.2f} s" for c, v in zip(COLUMNS, rows[-1])), f"load {os.getloadavg()[0]:.1f}"
            )
    medians = [statistics.median(r[i] for r in rows) for i in range(len(COLUMNS))]
    print(f"\nCommand: `python bench/bench_session_cpu.py {' '.join(sys.argv[1:])}` in {REPO}")
    print(f"Data: {'demo' if args.demo else args.data}; load average now {os.getloadavg()[0]:.1f} on {os.cpu_count()}")
    print("Medians of", args.repeat, "new sessions, s: " + ", ".join(f"{c} {v:.2f}" for c, v in zip(COLUMNS, medians)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
