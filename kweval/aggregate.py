"""Aggregation of the per-review table into movie × model summaries (METRICS.md §6).

- ``macro``: the mean over reviews of each per-review value.
- ``micro``: ratios of sums for the set-based, weighted and semantic metrics
  (F1s from the aggregated pair); ranking metrics and SAS stay means over
  reviews.
- ``gt_coverage`` is movie-level: per movie it is covered / |G|; the ALL row
  pools the movies (Σ covered / Σ |G|) under micro and averages them under macro.
- Every row says how many reviews were used (``n_reviews``) and skipped
  (``n_skipped``).  An ``ALL`` row per model aggregates all reviews of the
  selected movies the same way.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from kweval.evaluate import AGGREGATIONS, Evaluation
from kweval.metrics import harmonic_mean, safe_ratio

ALL = "ALL"

# micro metric -> (numerator count, denominator count); F1s come from the pair
_MICRO_RATIOS = {
    "precision": ("n_matched", "n_pred"),
    "recall": ("n_matched", "n_gt"),
    "w_precision": ("matched_score", "score_sum"),
    "w_recall": ("matched_gain", "gain_sum"),
    "sem_precision": ("sem_pred_matched", "sem_n_pred"),
    "sem_recall": ("sem_gt_matched", "sem_n_gt"),
}
_MICRO_F1 = {"f1": ("precision", "recall"), "w_f1": ("w_precision", "w_recall"), "sem_f1": ("sem_precision", "sem_recall")}


def _summarise(scores: pd.DataFrame, by: list[str], metric_cols: list[str], how: str) -> pd.DataFrame:
    grouped = scores.groupby(by, sort=False)
    out = grouped.size().rename("n_reviews").to_frame()
    means = grouped[metric_cols].mean()
    out = out.join(means)
    if how == "micro":
        count_cols = sorted({c for pair in _MICRO_RATIOS.values() for c in pair if c in scores.columns})
        sums = grouped[count_cols].sum()
        for metric, (num, den) in _MICRO_RATIOS.items():
            if metric in metric_cols:
                out[metric] = safe_ratio(sums[num].to_numpy(), sums[den].to_numpy())
        for metric, (a, b) in _MICRO_F1.items():
            if metric in metric_cols:
                out[metric] = harmonic_mean(out[a].to_numpy(), out[b].to_numpy())
    return out


def aggregate(evaluation: Evaluation, how: str = "macro", include_all: bool = True) -> pd.DataFrame:
    """Movie × model summary (plus ALL rows): movie, model, n_reviews, n_skipped, then every metric."""
    if how not in AGGREGATIONS:
        raise ValueError(f"aggregation must be one of {', '.join(AGGREGATIONS)}; got {how!r}")
    metric_cols = [m for m in evaluation.metric_names if m != "gt_coverage"]
    scores = evaluation.scores
    frame = pd.DataFrame(
        [(mv, md) for mv in evaluation.movies for md in evaluation.models], columns=["movie", "model"]
    )
    per_movie = _summarise(scores, ["movie", "model"], metric_cols, how)
    frame = frame.join(per_movie, on=["movie", "model"])
    skipped = evaluation.skipped.groupby(["movie", "model"]).size()
    frame["n_skipped"] = skipped.reindex(pd.MultiIndex.from_frame(frame[["movie", "model"]]), fill_value=0).to_numpy()
    cov = evaluation.coverage.set_index(["movie", "model"])
    idx = pd.MultiIndex.from_frame(frame[["movie", "model"]])
    frame["gt_coverage"] = cov["gt_coverage"].reindex(idx).to_numpy()

    if include_all and len(evaluation.movies) > 0:
        overall = _summarise(scores.assign(movie=ALL), ["movie", "model"], metric_cols, how).reset_index()
        rows = pd.DataFrame({"movie": ALL, "model": evaluation.models}).merge(overall, on=["movie", "model"], how="left")
        rows["n_skipped"] = [int(skipped.xs(m, level="model").sum()) if m in skipped.index.get_level_values("model") else 0 for m in evaluation.models]
        pooled = evaluation.coverage.groupby("model", sort=False)[["n_covered", "n_gt"]].sum()
        if how == "micro":
            cov_all = safe_ratio(pooled["n_covered"].to_numpy(), pooled["n_gt"].to_numpy())
            rows["gt_coverage"] = pd.Series(cov_all, index=pooled.index).reindex(rows["model"]).to_numpy()
        else:
            rows["gt_coverage"] = evaluation.coverage.groupby("model", sort=False)["gt_coverage"].mean().reindex(rows["model"]).to_numpy()
        frame = pd.concat([frame, rows], ignore_index=True)

    frame["n_reviews"] = frame["n_reviews"].fillna(0).astype("int64")
    frame["n_skipped"] = frame["n_skipped"].fillna(0).astype("int64")
    return frame[["movie", "model", "n_reviews", "n_skipped"] + evaluation.metric_names].reset_index(drop=True)
