"""Where a new session's first Summary spends chromium's CPU (issue 28 item 7): DNLP and the demo side by side.

Each data gets a warm server (`bench_browser.warm_server`); then, taking turns between the data, a fresh headless
chromium (a first visit: nothing cached or compiled) opens the Summary and waits until it settled with its charts
drawn (`tests.browser.settled` with `SUMMARY_CHARTS`: the server's SVG bars and heatmap cells).  Per visit it records:

- the CPU seconds of the server and of chromium by process type (`bench_browser.cpu_seconds`: the renderer runs the
  page's JavaScript; the gpu process rasterises, software here; the browser process and the network utility fetch);
- the renderer's JavaScript self time by script file, from V8's sampling profiler (CDP `Profiler.start/stop`), the
  bundles' hashes dropped (``embed.js`` is Streamlit's Vega chunk, ``DataFrame.js`` its grid);
- the page's DOM elements, those inside Vega charts and inside the server's SVG charts, and the scripts it loaded
  (count and decoded kB; Resource Timing), which show what a first visit must compile.

The medians of each data and the DNLP ÷ demo ratios are printed with the command and the load.  CPU seconds are the
figure to compare by on a busy machine; the profile's self times are wall-clock samples of the renderer's main
thread, so load inflates them too (compare their shares, not their sums across loads).

Usage: python bench/bench_browser_profile.py [--data PATH] [--repeat 5] [--busy 2] [--cache DIR] [--top 12]
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import os
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from bench_browser import DNLP, busy, cpu_seconds, parsed, warm_server  # noqa: E402

from tests.browser import SUMMARY_CHARTS, chromium, settled  # noqa: E402

URL = "summary?movie=ALL"
TEXT = "Every metric"
# one script run of the page: elements, those drawn by Vega and those of the server's SVG charts, scripts loaded
# (count, decoded bytes)
_PAGE = """
const scripts = performance.getEntriesByType('resource').filter(e => e.name.endsWith('.js'));
return {
    elements: document.getElementsByTagName('*').length,
    vega: Array.from(document.querySelectorAll('[data-testid="stVegaLiteChart"]'),
                     c => c.getElementsByTagName('*').length).reduce((a, b) => a + b, 0),
    svg: Array.from(document.querySelectorAll('.kw-svg-chart'),
                    c => c.getElementsByTagName('*').length).reduce((a, b) => a + b, 0),
    scripts: scripts.length,
    script_kb: scripts.reduce((a, e) => a + e.decodedBodySize, 0) / 1024,
};"""
_HASH = re.compile(r"\.[A-Za-z0-9_-]{8}\.js$")


def self_times(profile: dict) -> dict[str, float]:
    """Seconds of self time per script file (bundle hash dropped) or V8 category ("(program)", "(garbage
    collector)"; "(idle)" left out) in a CDP profile."""
    frames = {node["id"]: node["callFrame"] for node in profile["nodes"]}
    out: collections.Counter[str] = collections.Counter()
    for node, delta in zip(profile["samples"], profile["timeDeltas"]):
        frame = frames[node]
        name = _HASH.sub(".js", frame["url"].rsplit("/", 1)[-1]) or f"({frame['functionName'].strip('()')})"
        out[name] += delta / 1e6
    out.pop("(idle)", None)
    return dict(out)


def visit(url: str) -> dict[str, float]:
    """A fresh chromium's first Summary at `url`: wall and CPU seconds, self times (``js:`` + file), page counts."""
    with chromium(reduced_motion=False) as driver:
        driver.execute_cdp_cmd("Profiler.enable", {})
        driver.execute_cdp_cmd("Profiler.start", {})
        before, start = cpu_seconds(), time.perf_counter()
        driver.get(f"{url}/{URL}")
        settled(driver, [TEXT], timeout=1200, present=list(SUMMARY_CHARTS))
        wall, after = time.perf_counter() - start, cpu_seconds()
        profile = driver.execute_cdp_cmd("Profiler.stop", {})["profile"]
        page = driver.execute_script(_PAGE)
    out = {"wall": wall, **{f"cpu {k}": after[k] - before.get(k, 0.0) for k in after}}
    out.update({f"js {k}": v for k, v in self_times(profile).items()})
    out.update({f"page {k}": float(v) for k, v in page.items()})
    return out


def medians(runs: list[dict[str, float]]) -> dict[str, float]:
    """Per key, the median over `runs` (a key a run lacks counts 0 there)."""
    keys = {k for run in runs for k in run}
    return {k: statistics.median(run.get(k, 0.0) for run in runs) for k in keys}


def report(results: dict[str, list[dict[str, float]]], top: int) -> None:
    """The medians side by side, CPU and page counts first, then the `top` JavaScript self times of the first data."""
    names = list(results)
    med = {name: medians(runs) for name, runs in results.items()}
    first = med[names[0]]
    rows = sorted(k for k in first if not k.startswith("js "))
    rows += sorted((k for k in first if k.startswith("js ")), key=lambda k: -first[k])[:top]
    ratio = len(names) == 2
    print(f"| median of {len(results[names[0]])} | " + " | ".join(names) + (" | ratio |" if ratio else " |"))
    print("| --- |" + " ---: |" * (len(names) + ratio))
    for key in rows:
        cells = [med[n].get(key, 0.0) for n in names]
        share = f" | {cells[0] / cells[1]:.2f}" if ratio and cells[1] else (" | " if ratio else "")
        print(f"| {key} | " + " | ".join(f"{c:.2f}" for c in cells) + share + " |")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DNLP)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--busy", type=int, default=0, help="busy-loop processes beside (2: both cores busy)")
    parser.add_argument("--cache", type=Path, help="the servers' kweval cache (default: the user's)")
    parser.add_argument("--top", type=int, default=12, help="script files listed by self time")
    args, command = parsed(parser, "bench_browser_profile")
    if args is None:
        return 2
    load_before = os.getloadavg()[0]
    results: dict[str, list[dict[str, float]]] = {args.data.name: [], "demo": []}
    with tempfile.TemporaryDirectory() as tmp, contextlib.ExitStack() as servers:
        urls = {
            name: servers.enter_context(warm_server(Path(tmp) / name, data, args.cache))[0]
            for name, data in ((args.data.name, args.data), ("demo", None))
        }
        with busy(args.busy):
            for i in range(args.repeat):
                for name, url in urls.items():  # the data take turns: the load drifts alike for both
                    results[name].append(visit(url))
                    run = results[name][-1]
                    print(
                        f"  {i} {name}: wall {run['wall']:.2f} s, chromium CPU {run['cpu browser']:.2f} s", flush=True
                    )
    print(
        f"\nCommand: `{command}` — {args.busy} busy-loop process(es) beside; load average {load_before:.1f} before, "
        f"{os.getloadavg()[0]:.1f} after, on {os.cpu_count()} cores. Seconds unless named otherwise.\n"
    )
    report(results, args.top)
    return 0


if __name__ == "__main__":
    sys.exit(main())
