"""Judged metrics beside the reference ones (docs/metrics.md §11): `<metric>_judged` columns and `n_judgments`.

Both tables come from the same aggregation (`kweval.evaluation.aggregate`)
of the same pipeline, one against the reference GT and one against G'.
`gt_coverage` has no judged twin: a review judged on its own gets a list of
its own, so "the movie's GT" is no longer one list.
"""

from __future__ import annotations

import pandas as pd

from kweval.evaluation.aggregate import ALL, aggregate
from kweval.evaluation.options import Evaluation
from kweval.judgments.combine import JudgedGroundTruth
from kweval.metrics.registry import JUDGED_SUFFIX

SUFFIX = JUDGED_SUFFIX
KEYS = ["movie", "model"]


def judged_columns(evaluation: Evaluation) -> list[str]:
    """The metrics that get a judged twin: every per-review metric (not the movie-level `gt_coverage`)."""
    return [m for m in evaluation.metric_names if m != "gt_coverage"]


def judged_summary(
    summary: pd.DataFrame, judged: Evaluation, ground_truth: JudgedGroundTruth, how: str = "macro"
) -> pd.DataFrame:
    """`summary` (movie × model, ALL rows) with each metric's judged value right after it and `n_judgments` (the
    judged items used: per movie, and in all on the ALL rows)."""
    metrics = judged_columns(judged)
    twin = aggregate(judged, how)[KEYS + metrics].rename(columns={m: m + SUFFIX for m in metrics})
    out = summary.merge(twin, on=KEYS, how="left", sort=False)
    used = ground_truth.used_per_movie
    out["n_judgments"] = [
        ground_truth.n_used if movie == ALL else int(used.get(str(movie), 0)) for movie in out["movie"]
    ]
    order = list(summary.columns[: summary.columns.get_loc(metrics[0])]) if metrics else list(summary.columns)
    for column in summary.columns[len(order) :]:
        order += [column] + ([column + SUFFIX] if column in metrics else [])
    return out[order + ["n_judgments"]]


def judged_per_review(per_review: pd.DataFrame, judged: Evaluation) -> pd.DataFrame:
    """The per-review table with each review's judged metrics (`_judged` columns) after the reference ones."""
    metrics = [m for m in judged_columns(judged) if m in judged.scores.columns]
    keys = ["movie", "review_id", "model"]
    twin = judged.scores[keys + metrics].rename(columns={m: m + SUFFIX for m in metrics})
    twin = twin.astype({k: object for k in keys})
    left = per_review.astype({k: object for k in keys if k in per_review.columns})
    return left.merge(twin, on=keys, how="left", sort=False)
