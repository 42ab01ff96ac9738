"""`kweval evaluate --judgments PATH`: the judged metrics beside the reference ones (docs/metrics.md §11).

A judgments file that cannot be used (missing, damaged, locked, of another
dataset) is one `kweval: PATH: REASON` line and the evaluation goes on
without judgments; judgments the dataset cannot use are one line per kind
and the evaluation goes on without them.  The agreement between annotators
is one line too, never hidden.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass

import pandas as pd

from kweval.data.dataset import Dataset
from kweval.evaluation.options import EvalOptions, Evaluation
from kweval.messages import problem_line, say


@dataclass
class Judged:
    """The judged evaluation and its summary, when judgments could be used."""

    summary: pd.DataFrame
    evaluation: Evaluation

    def per_review(self, table: pd.DataFrame) -> pd.DataFrame:
        """The --per-review table with each review's `_judged` columns."""
        from kweval.judgments.summary import judged_per_review

        return judged_per_review(table, self.evaluation)


def add_argument(parser: argparse.ArgumentParser) -> None:
    """`--judgments PATH` on `kweval evaluate`."""
    parser.add_argument(
        "--judgments",
        metavar="PATH",
        help="reader judgments (a kweval SQLite store, or a CSV/Parquet with movie, review_id, keyword, grade, "
        "annotator): adds each metric's <metric>_judged value against the judged GT (docs/metrics.md §11) and "
        "n_judgments",
    )


def check_arguments(args: argparse.Namespace) -> None:
    """--judgments and --legacy do not go together (legacy mode is the notebooks' metrics, not kweval's)."""
    if getattr(args, "judgments", None) and args.legacy:
        from kweval.cli.common import UsageError

        raise UsageError("--judgments scores the judged GT with kweval's metrics; run --legacy without it")


def with_judgments(
    args: argparse.Namespace, dataset: Dataset | None, options: EvalOptions, summary: pd.DataFrame
) -> tuple[pd.DataFrame, Judged | None]:
    """(the summary, with its judged columns when --judgments could be used; the judged tables or None).

    Its lines (dropped judgments, agreement) come before the data's; nothing is written before both are done."""
    if not args.judgments or dataset is None:  # never evaluated in groups with --judgments: a dataset is loaded
        return summary, None
    judged = judged_report(args, dataset, options, summary)
    return (summary if judged is None else judged.summary), judged


def dataset_hash(args: argparse.Namespace, dataset: Dataset) -> str:
    """The content hash a store made for this data carries: of the whole dataset, not a --movies/--models subset."""
    if not (getattr(args, "movies", None) or getattr(args, "models", None)):
        return dataset.content_hash()
    from kweval.cli.common import prediction_files
    from kweval.data import load_dataset

    return load_dataset(args.data, predictions=prediction_files(args)).content_hash()


def load_checked(path: str, dataset: Dataset, content_hash: str | None, quiet: bool) -> pd.DataFrame | None:
    """The usable judgments of `path` (lines on stderr for what was dropped), or None when the file is unusable."""
    from kweval.judgments import JudgmentsError, checked, load_judgments

    try:
        judgments = load_judgments(path, content_hash)
    except JudgmentsError as exc:
        say(exc.source, f"{exc.reason}; evaluated without judgments")
        return None
    kept, problems = checked(judgments, dataset, path)
    for problem in problems:
        print(problem_line(problem), file=sys.stderr)
    if not quiet:
        from kweval.judgments import agreement

        say(path, agreement(kept).line())
    return kept


def judged_report(
    args: argparse.Namespace, dataset: Dataset, options: EvalOptions, summary: pd.DataFrame
) -> Judged | None:
    """The summary with `_judged` columns and `n_judgments`, and the judged evaluation; None without usable file."""
    from kweval.judgments import judged_evaluation, judged_summary

    kept = load_checked(args.judgments, dataset, dataset_hash(args, dataset), args.quiet)
    if kept is None:
        return None
    evaluation, ground_truth = judged_evaluation(dataset, kept, options, keywords=bool(args.per_review))
    return Judged(judged_summary(summary, evaluation, ground_truth, args.aggregate), evaluation)
