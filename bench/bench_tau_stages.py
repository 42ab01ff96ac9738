"""Where the Summary's τ step spends its CPU, stage by stage (issue 29 item 4), on DNLP ALL with semantic on.

One AppTest session draws the Summary, turns semantic on, then alternates a plain rerun and a τ step of +0.01 (as
`bench_app.py --tau-step` does).  The functions the Summary calls at a τ step (FUNCTIONS: the dashboard's caches,
charts and state, the headline's and the statistics' stages) are wrapped with a `time.process_time` counter, since
cProfile does not see Streamlit's script thread; the table gives each one's median CPU seconds per τ step and per
plain rerun.  Stages nest (a cache function includes the statistics it calls), so the column does not add up.
A name missing from the tree measured is left out (the bench runs on older trees too).  `--no-look-ahead`
turns the τ look-ahead off (`dashboard.look_ahead.ENABLED`): each step then computes its τ on request in the script
thread, so no background thread's CPU falls into a stage's count.

Usage: python bench/bench_tau_stages.py [--data PATH] [--repeat 7] [--no-look-ahead]
"""

from __future__ import annotations

import argparse
import collections
import functools
import importlib
import os
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))
import bench_app  # noqa: E402  # its session, timing and component scan

FUNCTIONS = {
    "dashboard.caches": [
        "summary_headline",
        "summary_cis",
        "sliced",
        "summary_exports",
        "latex_intervals",
        "undefined_metrics",
        "compare_metrics",
        "headline_across_presets",
        "headline",
        "ci_digest",
    ],
    "dashboard.charts": ["movie_heatmap", "metric_bars", "show_bars", "show_heatmap"],
    "dashboard.tables": ["best_in_bold"],
    "dashboard.state": ["with_threshold", "get_evaluation", "_summary"],
    "kweval.stats": ["bootstrap_summary_cis"],
    "kweval.stats.paired": [
        "align_pair",
        "paired_scores",
        "remembered_columns",
        "compare_columns",
        "paired_comparison",
    ],
    "kweval.stats.headline": ["aggregate_values", "plan", "remember_pairs", "compare_aggregated", "coded_keys"],
    "kweval.stats.aggregated": ["paired_scores", "compare_models", "aggregated_difference"],
    "kweval.io.report": ["to_csv", "to_markdown", "to_latex"],
}
SPENT: collections.defaultdict[str, float] = collections.defaultdict(float)


def _counted(module_name: str, name: str) -> bool:
    """`module_name.name` replaced by a wrapper adding its CPU seconds to SPENT; False when the tree lacks it."""
    module = importlib.import_module(module_name)
    original = getattr(module, name, None)
    if original is None:
        return False

    @functools.wraps(original)
    def counted(*args, **kwargs):
        start = time.process_time()
        try:
            return original(*args, **kwargs)
        finally:
            SPENT[f"{module_name.rsplit('.', 1)[-1]}.{name}"] += time.process_time() - start

    setattr(module, name, counted)
    return True


def measure(repeat: int) -> tuple[list[tuple[float, dict]], list[tuple[float, dict]]]:
    """([(CPU s, {stage: CPU s})] per τ step, the same per plain rerun), alternating in one session."""
    at = bench_app._session({"movie": "ALL"})
    at.switch_page("pages/summary.py")
    at.run()
    at.sidebar.toggle(key="sel_sem").set_value(True).run()
    start = float(at.sidebar.slider(key="sel_tau").value)
    steps, plain = [], []
    for i in range(repeat):
        SPENT.clear()
        plain.append((bench_app._timed(at.run, at).cpu, dict(SPENT)))
        SPENT.clear()
        slider = at.sidebar.slider(key="sel_tau").set_value(round(start + 0.01 * (i + 1), 2))
        steps.append((bench_app._timed(slider.run, at).cpu, dict(SPENT)))
    return steps, plain


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=bench_app.DNLP)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--no-look-ahead", action="store_true", help="every τ step computed on request")
    args = parser.parse_args()
    os.environ["KWEVAL_DATA"] = str(args.data)
    if args.no_look_ahead:
        importlib.import_module("dashboard.look_ahead").ENABLED = False
    for module_name, names in FUNCTIONS.items():
        for name in names:
            _counted(module_name, name)
    load = os.getloadavg()[0]
    steps, plain = measure(args.repeat)
    step_cpu, plain_cpu = statistics.median(c for c, _ in steps), statistics.median(c for c, _ in plain)
    print(
        f"Command: `python bench/bench_tau_stages.py {' '.join(sys.argv[1:])}` — tree {REPO}, data {args.data}, "
        f"movie=ALL, semantic on, {args.repeat} τ steps of +0.01 each after a plain rerun"
        f"{', look-ahead off' if args.no_look_ahead else ''}; load average {load:.1f} "
        f"before, {os.getloadavg()[0]:.1f} after, on {os.cpu_count()} cores.\n"
    )
    ratio = step_cpu / plain_cpu
    print(f"τ step {step_cpu:.3f} s CPU, plain rerun {plain_cpu:.3f} s CPU (medians), ratio {ratio:.1f}×\n")
    print("| stage (nested: a caller includes its callees) | τ step CPU s | plain rerun CPU s |\n| --- | ---: | ---: |")
    names = {k for _, spent in steps + plain for k in spent}
    median = lambda rows, k: statistics.median(spent.get(k, 0.0) for _, spent in rows)  # noqa: E731
    for name in sorted(names, key=lambda k: -median(steps, k)):
        print(f"| {name} | {median(steps, name):.4f} | {median(plain, name):.4f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
