"""Aggregation of the per-review table into movie × model summaries (docs/metrics.md §6).

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

from collections.abc import Sequence

import numpy as np
import pandas as pd

from kweval._arrays import positions
from kweval.data.dataset import Dataset
from kweval.evaluation.pipeline import AGGREGATIONS, Evaluation
from kweval.evaluation.semantic_columns import moves_with_tau
from kweval.metrics import registry
from kweval.metrics.ratios import harmonic_mean, safe_ratio

ALL = "ALL"

# The micro rules of the registered metrics, as tables (a snapshot taken at import, for readers that want tables;
# aggregation itself asks the registry at every call): metric -> (numerator count, denominator count), and
# metric -> the two metrics whose micro values' harmonic mean it is.
MICRO_RATIOS = {e.name: e.micro for e in registry.entries() if e.micro is not None}
MICRO_F1 = {e.name: e.micro_f1 for e in registry.entries() if e.micro_f1 is not None}


def _codes(values: pd.Series, names: list[str]) -> np.ndarray:
    """Each value's position in `names` (-1 if absent)."""
    return positions(values.to_numpy(dtype=object), {name: i for i, name in enumerate(names)})


def _summarise(scores: pd.DataFrame, key: np.ndarray, n_keys: int, metric_cols: list[str], how: str) -> pd.DataFrame:
    """One row per key 0..n_keys-1: n_reviews and every metric (NaN for a key without reviews).

    Means and sums are pandas' grouped reductions over the rows of each key in
    table order (the same arithmetic as grouping by the movie/model strings).
    """
    present = key >= 0
    if not present.all():
        scores, key = scores[present], key[present]
    grouped = scores.groupby(key, sort=True)
    out = pd.DataFrame({"n_reviews": np.bincount(key, minlength=n_keys).astype("int64")})
    index = pd.RangeIndex(n_keys)
    means = grouped[metric_cols].mean().reindex(index)
    out = out.join(means)
    if how == "micro":
        _micro(out, grouped, index, metric_cols)
    return out


def _micro(out: pd.DataFrame, grouped, index: pd.RangeIndex, metric_cols: list[str]) -> None:
    """Replace the means of `out` by the micro values where the registry gives a metric a micro rule.

    A ratio of summed counts (`MetricInfo.micro`; a metric undefined on some
    reviews, without text or with an empty denominator, is NaN for a row none
    of whose reviews defines it), then the F1s from their micro pair
    (`MetricInfo.micro_f1`).
    """
    count_cols = sorted({c for m in metric_cols for c in registry.micro_counts(m)})
    sums = grouped[count_cols].sum().reindex(index)
    has = out["n_reviews"].to_numpy() > 0
    for metric in metric_cols:
        ratio = registry.micro_ratio(metric)
        if ratio is not None:
            defined = has & out[metric].notna().to_numpy()  # the mean is NaN only where no review defines it
            out[metric] = np.where(defined, safe_ratio(sums[ratio[0]].to_numpy(), sums[ratio[1]].to_numpy()), np.nan)
    for metric in metric_cols:
        pair = registry.micro_f1(metric)
        if pair is not None:
            out[metric] = np.where(has, harmonic_mean(out[pair[0]].to_numpy(), out[pair[1]].to_numpy()), np.nan)


def _metric_columns(evaluation: Evaluation, metrics: Sequence[str] | None) -> tuple[list[str], list[str]]:
    """(the metrics shown: every metric or those of `metrics`, in the evaluation's order; the per-review columns
    they are aggregated from: a micro F1 reads its pair)."""
    shown = evaluation.metric_names if metrics is None else [m for m in evaluation.metric_names if m in set(metrics)]
    needed = set(shown) | {part for m in shown for part in (registry.micro_f1(m) or ())}
    return shown, [m for m in evaluation.metric_names if m in needed and m != "gt_coverage"]


def aggregate(
    evaluation: Evaluation, how: str = "macro", include_all: bool = True, metrics: Sequence[str] | None = None
) -> pd.DataFrame:
    """Movie × model summary (plus ALL rows): movie, model, n_reviews, n_skipped, then every metric (or those of
    `metrics`: the same numbers, the others not computed)."""
    if how not in AGGREGATIONS:
        raise ValueError(f"aggregation must be one of {', '.join(AGGREGATIONS)}; got {how!r}")
    shown, metric_cols = _metric_columns(evaluation, metrics)
    scores = evaluation.scores
    movies, models = evaluation.movies, evaluation.models
    n_models = len(models)
    n_cells = len(movies) * n_models

    movie_of = _codes(scores["movie"], movies)
    model_of = _codes(scores["model"], models)
    cell = np.where((movie_of >= 0) & (model_of >= 0), movie_of * n_models + model_of, -1)
    frame = pd.DataFrame(
        {"movie": [mv for mv in movies for _ in models], "model": [md for _ in movies for md in models]}
    )
    frame = frame.join(_summarise(scores, cell, n_cells, metric_cols, how))
    skipped = evaluation.skipped
    sk_movie, sk_model = _codes(skipped["movie"], movies), _codes(skipped["model"], models)
    sk_ok = (sk_movie >= 0) & (sk_model >= 0)
    skipped_per_cell = np.bincount(sk_movie[sk_ok] * n_models + sk_model[sk_ok], minlength=n_cells)
    frame["n_skipped"] = skipped_per_cell.astype("int64")
    cov = evaluation.coverage
    cov_cell = _codes(cov["movie"], movies) * n_models + _codes(cov["model"], models)
    gt_coverage = np.full(n_cells, np.nan)
    ok = (cov_cell >= 0) & (_codes(cov["movie"], movies) >= 0) & (_codes(cov["model"], models) >= 0)
    gt_coverage[cov_cell[ok]] = cov["gt_coverage"].to_numpy()[ok]
    frame["gt_coverage"] = gt_coverage

    if include_all and len(movies) > 0:
        rows = pd.DataFrame({"movie": ALL, "model": models})
        rows = rows.join(_summarise(scores, np.where(cell >= 0, model_of, -1), n_models, metric_cols, how))
        rows["n_skipped"] = np.bincount(sk_model[sk_model >= 0], minlength=n_models).astype("int64")[:n_models]
        cov_model = _codes(cov["model"], models)
        if how == "micro":
            pooled = cov[["n_covered", "n_gt"]].groupby(cov_model, sort=True).sum().reindex(pd.RangeIndex(n_models))
            rows["gt_coverage"] = safe_ratio(pooled["n_covered"].to_numpy(), pooled["n_gt"].to_numpy())
            rows.loc[pooled["n_gt"].isna().to_numpy(), "gt_coverage"] = np.nan
        else:
            rows["gt_coverage"] = (
                cov["gt_coverage"].groupby(cov_model, sort=True).mean().reindex(pd.RangeIndex(n_models)).to_numpy()
            )
        frame = pd.concat([frame, rows], ignore_index=True)

    frame["n_reviews"] = frame["n_reviews"].fillna(0).astype("int64")
    frame["n_skipped"] = frame["n_skipped"].fillna(0).astype("int64")
    return frame[["movie", "model", "n_reviews", "n_skipped"] + shown].reset_index(drop=True)


def summary_at_threshold(table: pd.DataFrame, evaluation: Evaluation, how: str = "macro") -> pd.DataFrame:
    """Speed trick "τ-free summary": `aggregate(evaluation, how)` from `table`, the same summary of this evaluation at
    another τ (`with_threshold`: only the semantic columns differ), its metrics that a τ change moves
    (`moves_with_tau`) aggregated again, the others kept.  Reference: `aggregate` itself (tests/test_semantic.py)."""
    moving = [m for m in evaluation.metric_names if moves_with_tau(m)]
    fresh = aggregate(evaluation, how, metrics=moving)
    return table.assign(**{m: fresh[m].to_numpy() for m in moving})


def _label_codes(labels: pd.Series) -> tuple[list[str], np.ndarray]:
    """(the groups present, in category order, else sorted; each row's group position, -1 for a missing label)."""
    if isinstance(labels.dtype, pd.CategoricalDtype):  # from the category codes: no per-row string conversion
        codes = labels.cat.codes.to_numpy()
        used = np.unique(codes[codes >= 0])
        groups = [str(labels.cat.categories[i]) for i in used]
        position = np.full(len(labels.cat.categories) + 1, -1, dtype="int64")
        position[used] = np.arange(len(used))
        return groups, position[codes]  # code -1 (missing) reads the last slot, -1
    text = pd.Series(labels.astype(str).to_numpy(dtype=object))
    groups = sorted(set(text))
    return groups, _codes(text, groups)


def aggregate_by(
    evaluation: Evaluation,
    labels: pd.Series,
    how: str = "macro",
    name: str = "slice",
    metrics: Sequence[str] | None = None,
) -> pd.DataFrame:
    """Label × model summary of the per-review table: `name`, model, n_reviews, then every metric (or those of
    `metrics`: the same numbers, the others not computed).

    `labels` gives each row of ``evaluation.scores`` a group (e.g. its rating
    band, `kweval.evaluation.slices.slice_labels`); rows come in the labels' category
    order (else sorted), each with `aggregate`'s arithmetic for `how`.
    Movie-level metrics (gt_coverage) do not apply to slices and are NaN.
    """
    if how not in AGGREGATIONS:
        raise ValueError(f"aggregation must be one of {', '.join(AGGREGATIONS)}; got {how!r}")
    if len(labels) != len(evaluation.scores):
        raise ValueError("aggregate_by: one label per row of evaluation.scores")
    groups, group_of = _label_codes(labels)
    shown, metric_cols = _metric_columns(evaluation, metrics)
    models = evaluation.models
    n_models = len(models)
    model_of = _codes(evaluation.scores["model"], models)
    cell = np.where((group_of >= 0) & (model_of >= 0), group_of * n_models + model_of, -1)
    frame = pd.DataFrame({name: [g for g in groups for _ in models], "model": [m for _ in groups for m in models]})
    frame = frame.join(
        _summarise(evaluation.scores.reset_index(drop=True), cell, len(groups) * n_models, metric_cols, how)
    )
    frame["n_reviews"] = frame["n_reviews"].fillna(0).astype("int64")
    if "gt_coverage" in shown:
        frame["gt_coverage"] = np.nan
    return frame[[name, "model", "n_reviews"] + shown]


def dataset_overview(dataset: Dataset, evaluation: Evaluation) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(per movie: title, reviews, GT keywords, evaluated review × model pairs, skipped;
    per model: score direction, predicted keywords, evaluated reviews, skipped reviews)."""

    def with_counts(table: pd.DataFrame, by: str, rows_of: dict[str, pd.DataFrame]) -> pd.DataFrame:
        for name, rows in rows_of.items():
            sizes = rows.groupby(by).size() if len(rows) else pd.Series(dtype="int64")
            table[name] = table[by].map(sizes).fillna(0).astype("int64")
        return table

    movies = with_counts(
        dataset.movies[["movie", "title"]].copy(),
        "movie",
        {
            "reviews": dataset.reviews,
            "gt_keywords": evaluation.ground_truth,
            "evaluated_pairs": evaluation.scores,
            "skipped_pairs": evaluation.skipped,
        },
    )
    models = with_counts(
        dataset.models[["model", "score_direction"]].copy(),
        "model",
        {
            "keywords": evaluation.keywords,
            "evaluated_reviews": evaluation.scores,
            "skipped_reviews": evaluation.skipped,
        },
    )
    return movies, models
