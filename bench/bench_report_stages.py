"""`kweval report` on the DNLP data (issue 29: <= 10 s): the command end to end (wall and CPU seconds, the ratio to
the target), then the seconds of each `REPORT_STAGES` step in this process, as the dashboard's "Build report" shows
them (`kweval.io.html_report.report_page(progress=...)`), and the page's size.

The evaluation (loading and scoring) is timed apart: the dashboard has it cached when the button is pressed.  The
load average is printed beside the figures (a busy machine inflates the wall times; the CPU seconds less).

    python bench/bench_report_stages.py [--data $KWEVAL_SHARED/data/dnlp/Dataset] [--models base,sentiment]
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DNLP = Path(os.environ.get("KWEVAL_SHARED") or REPO.parent / "shared") / "data" / "dnlp" / "Dataset"
TARGET_S = 10.0


def command_seconds(data: str, models: str | None) -> tuple[float, float]:
    """(wall, CPU) seconds of `python -m kweval report DATA --out TMP --quiet` in a process of its own."""
    with tempfile.TemporaryDirectory() as tmp:
        argv = [sys.executable, "-m", "kweval", "report", data, "--out", str(Path(tmp) / "report.html"), "--quiet"]
        argv += ["--models", models] if models else []
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run(argv, cwd=REPO, check=True, capture_output=True)
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    from kweval.data import load_dataset
    from kweval.evaluation.pipeline import EvalOptions, evaluate
    from kweval.io import html_report
    from kweval.io.card import evaluation_card

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", default=str(DNLP))
    parser.add_argument("--models", help="comma-separated models (default: all)")
    args = parser.parse_args()
    load = os.getloadavg()[0]
    wall, cpu = command_seconds(args.data, args.models)
    print(f"Command: `python bench/bench_report_stages.py {' '.join(sys.argv[1:])}`".rstrip() + "\n")
    print(
        f"`kweval report {args.data} --out report.html --quiet`: {wall:.2f} s wall, {cpu:.2f} s CPU "
        f"({wall / TARGET_S:.2f} of the {TARGET_S:g} s target: {'met' if wall <= TARGET_S else 'not met'}); "
        f"load average {load:.1f} before, {os.getloadavg()[0]:.1f} after, on {os.cpu_count()} cores.\n"
    )
    start = time.perf_counter()
    dataset = load_dataset(args.data)
    if args.models:
        dataset = dataset.subset(None, args.models.split(","))
    evaluation = evaluate(dataset, EvalOptions(), keywords=True)
    print(f"load + evaluate: {time.perf_counter() - start:.2f} s ({len(evaluation.scores):,} review × model rows)")
    marks: list[tuple[str, float, float]] = []
    card = evaluation_card(evaluation.options, str(args.data), "bench", aggregation="macro")

    def progress(stage: str, fraction: float) -> None:
        marks.append((stage, fraction, time.perf_counter()))

    cpu_start = time.process_time()
    page = html_report.report_page(dataset, evaluation, "macro", card, title="bench", progress=progress)
    for (stage, _, began), (_, _, ended) in zip(marks, marks[1:]):
        print(f"  {stage:<40} {ended - began:6.2f} s")
    print(
        f"report: {marks[-1][2] - marks[0][2]:.2f} s in all ({time.process_time() - cpu_start:.2f} s CPU), "
        f"{len(page.encode('utf-8')) / 1e6:.1f} MB"
    )


if __name__ == "__main__":
    main()
