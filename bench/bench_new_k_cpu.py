"""CPU seconds of Compare at a new k (issue 28 item 7), server and browser apart: a figure a busy machine changes
little, beside `bench_browser.py --only new-k`'s wall seconds, which it changes a lot.

A real `streamlit run app.py` on the DNLP data and headless Debian chromium (tests/browser.py), as bench_browser:
Compare opened at k = 5, then the sidebar's k typed to each new value; per change, the CPU seconds (user + system,
from /proc: Linux only) the server process and chromium's processes spent until the page settled with its chart
drawn, and the wall seconds.  The embeddings and VADER values come from the persistent cache (`--cache`).

Usage: python bench/bench_new_k_cpu.py [--data PATH] [--cache DIR] [--ks 7 8 9]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from bench_browser import DNLP, _set_number, view  # noqa: E402

from tests.browser import CHART, chromium, server, settled  # noqa: E402

TICKS = os.sysconf("SC_CLK_TCK")


def _children() -> dict[int, list[int]]:
    """{pid: its child pids} of every process now (/proc)."""
    out: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            out.setdefault(ppid, []).append(int(entry.name))
    return out


def _tree(pid: int) -> list[int]:
    """`pid` and its descendants."""
    children, found = _children(), [pid]
    for p in found:
        found += children.get(p, [])
    return found


def _cpu(pids: list[int]) -> float:
    """CPU seconds (user + system) of `pids` so far; a process gone counts 0."""
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / TICKS


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DNLP)
    parser.add_argument("--cache", type=Path, help="the server's kweval cache (default: the user's)")
    parser.add_argument("--ks", type=int, nargs="+", default=[7, 8, 9])
    args = parser.parse_args()
    if not args.data.exists():
        print(f"bench_new_k_cpu: {args.data}: not found (the DNLP data is ../shared/data/dnlp/Dataset)")
        return 2
    if args.cache is None:
        from kweval.cachedir import cache_dir

        args.cache = cache_dir()
    mine = os.getpid()
    rows = []
    with tempfile.TemporaryDirectory() as tmp, server(Path(tmp), args.data, args.cache) as running:
        served = [p for p in _tree(mine) if p != mine]  # the streamlit server (started before chromium)
        with chromium() as driver:
            view(driver, f"{running.url}/summary?movie=ALL", "Every metric", True)
            view(driver, f"{running.url}/compare?movie=ALL&k=5", "Reviews by difference", True)
            for k in args.ks:
                browser = _tree(driver.service.process.pid)
                before = (_cpu(served), _cpu(browser), time.perf_counter())
                _set_number(driver, "sel_k", k)
                settled(driver, [f"ndcg@{k}"], timeout=1200, present=[CHART])
                rows.append((k, _cpu(served) - before[0], _cpu(browser) - before[1], time.perf_counter() - before[2]))
                _k, cpu_server, cpu_browser, wall = rows[-1]
                print(f"  k={k}: server {cpu_server:.2f} CPU s, chromium {cpu_browser:.2f} CPU s, wall {wall:.2f} s")
    print(
        f"\nCommand: `python bench/bench_new_k_cpu.py {' '.join(sys.argv[1:])}`; load average {os.getloadavg()[0]:.1f}"
    )
    print("| per new k (median) | server CPU s | chromium CPU s | wall s |\n| --- | ---: | ---: | ---: |")
    server_s, browser_s, wall_s = (statistics.median(r[i] for r in rows) for i in (1, 2, 3))
    print(f"| Compare at a new k, {len(rows)} changes | {server_s:.2f} | {browser_s:.2f} | {wall_s:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
