"""The HTML report's stages on the DNLP data: the seconds of each `REPORT_STAGES` step, as the dashboard's
"Build report" shows them (`kweval.io.html_report.report_page(progress=...)`), and the page's size.

The evaluation (loading and scoring) is timed apart: the dashboard has it cached when the button is pressed.

    python bench/bench_report_stages.py [--data $KWEVAL_SHARED/data/dnlp/Dataset] [--models base,sentiment]
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DNLP = Path(os.environ.get("KWEVAL_SHARED") or REPO.parent / "shared") / "data" / "dnlp" / "Dataset"


def main() -> None:
    from kweval.data import load_dataset
    from kweval.evaluation.pipeline import EvalOptions, evaluate
    from kweval.io import html_report
    from kweval.io.card import evaluation_card

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", default=str(DNLP))
    parser.add_argument("--models", help="comma-separated models (default: all)")
    args = parser.parse_args()
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

    page = html_report.report_page(dataset, evaluation, "macro", card, title="bench", progress=progress)
    for (stage, _, began), (_, _, ended) in zip(marks, marks[1:]):
        print(f"  {stage:<40} {ended - began:6.2f} s")
    print(f"report: {marks[-1][2] - marks[0][2]:.2f} s in all, {len(page.encode('utf-8')) / 1e6:.1f} MB")


if __name__ == "__main__":
    main()
