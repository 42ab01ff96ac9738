"""What the pages derive from an evaluation, cached: the Summary's CIs, slices and downloads, Compare's tests,
the Notebook parity replay.

Each public function takes the page's `Ctx` and builds the cache key from it (`Ctx.key`: the data's content
hash and the evaluation options), so no page makes keys by hand; the cached functions behind them take the
frames they read as underscore arguments (not hashed).  The evaluation and the loaders are cached in
`dashboard.state`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

import pandas as pd
import streamlit as st

from dashboard.state import Ctx, ci_digest, ci_groups, row_identity
from kweval import legacy, stats
from kweval.evaluation import slice_features, slices
from kweval.evaluation.aggregate import aggregate_by
from kweval.explain import failures
from kweval.io import report
from kweval.stats import slices as stats_slices

# ---------------------------------------------------------------------------------------------
# Summary


@st.cache_data(show_spinner="Bootstrapping 95% CIs…", max_entries=256)
def _group_cis(digest: str, how: str, group: tuple, _rows: pd.DataFrame) -> pd.DataFrame:
    """CIs of one metric group, cached by the content of what they read: unchanged columns are not resampled again."""
    return stats.bootstrap_summary_ci(_rows, list(group), how)


@st.cache_data(show_spinner=False, max_entries=32)
def _cis(key: tuple, how: str, movie: str, models: tuple, metrics: tuple, _scores: pd.DataFrame) -> pd.DataFrame:
    parts = []
    for model in models:
        rows = _scores[_scores["model"] == model]
        groups = [_group_cis(ci_digest(rows, g, how), how, tuple(g), rows) for g in ci_groups(list(metrics))]
        parts.append(pd.concat(groups).set_index("metric").reindex(list(metrics)).reset_index().assign(model=model))
    return pd.concat(parts, ignore_index=True)


def summary_cis(ctx: Ctx, scope: str, scores: pd.DataFrame) -> pd.DataFrame:
    """Bootstrap 95% CIs of every metric per selected model over `scores` (the rows of `scope`)."""
    sel = ctx.selection
    return _cis(ctx.key, sel.agg, scope, tuple(sel.models), tuple(ctx.evaluation.metric_names), scores)


@st.cache_data(show_spinner=False, max_entries=16)
def _slice_labels(
    data_hash: str, rows: str, by: str, _scores: pd.DataFrame, _reviews: pd.DataFrame
) -> pd.Series | None:
    """Labels of the evaluated rows `rows` (`row_identity`): the same after a τ change or with sentiment on."""
    return slices.slice_labels(_scores, _reviews, by)


@st.cache_data(show_spinner=False, max_entries=32)
def _sliced(key: tuple, how: str, by: str, _evaluation, _reviews: pd.DataFrame) -> pd.DataFrame | None:
    scores = _evaluation.scores
    labels = _slice_labels(key[0], row_identity(scores), by, scores, _reviews)
    return None if labels is None else aggregate_by(_evaluation, labels, how)


def sliced(ctx: Ctx, by: str) -> pd.DataFrame | None:
    """Every metric per slice of the reviews by `by` ("rating" or "length"); None when the data has no such field."""
    return _sliced(ctx.key, ctx.selection.agg, by, ctx.evaluation, ctx.dataset.reviews)


@st.cache_data(show_spinner="Bootstrapping the intervals…", max_entries=16)
def _intervals(key: tuple, how: str, models: tuple, columns: tuple, _evaluation) -> pd.DataFrame:
    return report.summary_intervals(_evaluation.scores[_evaluation.scores["model"].isin(models)], list(columns), how)


def latex_intervals(ctx: Ctx, columns: Sequence[str]) -> pd.DataFrame:
    """The CIs the LaTeX table prints beside `columns`."""
    sel = ctx.selection
    return _intervals(ctx.key, sel.agg, tuple(sel.models), tuple(columns), ctx.evaluation)


@st.cache_data(show_spinner=False, max_entries=32)
def _exports(
    key: tuple,
    how: str,
    models: tuple,
    columns: tuple,
    ci_style: str,
    meta: tuple,
    _table: pd.DataFrame,
    _intervals: pd.DataFrame | None,
) -> tuple[str, str, str]:
    latex = report.to_latex(
        _table,
        columns=list(columns) or None,
        ci=_intervals,
        ci_style=ci_style if ci_style != "none" else "brackets",
        caption=report.latex_caption(dict(meta)),
    )
    return report.to_csv(_table), report.to_markdown(_table), latex


def summary_exports(
    ctx: Ctx, table: pd.DataFrame, columns: Sequence[str], ci_style: str, meta: dict, intervals: pd.DataFrame | None
) -> tuple[str, str, str]:
    """CSV, Markdown and LaTeX of the summary `table`, built once per selection (their cost grows with the number of
    movies)."""
    sel = ctx.selection
    return _exports(
        ctx.key, sel.agg, tuple(sel.models), tuple(columns), ci_style, tuple(meta.items()), table, intervals
    )


# ---------------------------------------------------------------------------------------------
# Compare

SIDES = {"mean_a": "mean A", "mean_b": "mean B"}  # the tables' names of each side's mean


def compare_metrics(ctx: Ctx) -> list[str]:
    """The metrics Compare tests (per review: gt_coverage is per movie)."""
    return [m for m in ctx.evaluation.metric_names if m != "gt_coverage"]


@st.cache_data(show_spinner="Bootstrap and randomization tests…", max_entries=32)
def _compare(key: tuple, movie: str, a: str, others: tuple, metrics: tuple, _scores: pd.DataFrame) -> pd.DataFrame:
    parts = [stats.compare_models(_scores, a, b, list(metrics)).rename(columns=SIDES).assign(model=b) for b in others]
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()


def comparisons(ctx: Ctx, a: str, others: Sequence[str]) -> pd.DataFrame:
    """Every other model against `a` on every metric, over the selected movie's reviews."""
    return _compare(ctx.key, ctx.selection.movie, a, tuple(others), tuple(compare_metrics(ctx)), ctx.scores())


@st.cache_data(show_spinner="Per-movie tests…", max_entries=32)
def _per_movie(key: tuple, a: str, b: str, metric: str, metrics: tuple, _scores: pd.DataFrame) -> pd.DataFrame:
    both = stats.paired_scores(_scores, a, b, list(metrics))
    parts = []
    for movie, grp in both.groupby("movie", sort=False):
        res = stats.paired_comparison(
            grp[[f"{metric}_a"]].set_axis([metric], axis=1), grp[[f"{metric}_b"]].set_axis([metric], axis=1), [metric]
        )
        parts.append(res.rename(columns=SIDES).assign(movie=movie))
    if not parts:
        return pd.DataFrame()
    out = pd.concat(parts, ignore_index=True)
    out["p_randomization_holm"] = stats.holm(out["p_randomization"])  # across the movies shown
    out["p_ttest_holm"] = stats.holm(out["p_ttest"])
    return out


def per_movie(ctx: Ctx, a: str, b: str, metric: str) -> pd.DataFrame:
    """B − A on `metric` per movie (every movie), Holm-corrected across the movies."""
    scores = ctx.evaluation.scores
    return _per_movie(ctx.key, a, b, metric, tuple(compare_metrics(ctx)), scores[scores["model"].isin([a, b])])


# ---------------------------------------------------------------------------------------------
# Notebook parity


@st.cache_data(show_spinner="Replaying the notebooks…", max_entries=16)
def _side_by_side(key: tuple, movie: str, models: tuple, _dataset, _options) -> pd.DataFrame:
    # the notebooks' semantic replay runs their own uncached encoder over every keyword: too slow for a page
    # view; the semantic defect has its own on-demand example instead
    return legacy.legacy_vs_corrected(_dataset, replace(_options, semantic=False))


def parity_table(ctx: Ctx, dataset) -> pd.DataFrame:
    """The notebooks' numbers beside the corrected ones for `dataset` (the selection's subset)."""
    sel = ctx.selection
    return _side_by_side(ctx.key, sel.movie, tuple(sel.models), dataset, ctx.options)


@st.cache_data(show_spinner="Looking for a real example…", max_entries=64)
def _example(key: tuple, movie: str, models: tuple, finder_name: str, _finder: Callable, _dataset) -> object | None:
    return _finder(_dataset)


def parity_example(ctx: Ctx, finder: Callable, dataset) -> object | None:
    """`finder`'s example of a notebook defect in `dataset` (None when the data holds none)."""
    sel = ctx.selection
    return _example(ctx.key, sel.movie, tuple(sel.models), finder.__name__, finder, dataset)


# ---------------------------------------------------------------------------------------------
# Failures: categories per keyword, slices


@st.cache_resource(show_spinner="Sorting every keyword into its failure category…", max_entries=4)
def _failure_table(key: tuple, _dataset, _evaluation) -> pd.DataFrame:
    # shared, read-only (the DNLP table has millions of rows: not pickled per rerun)
    return failures.failure_table(_dataset, _evaluation)


def failure_table(ctx: Ctx) -> pd.DataFrame:
    """Every keyword's failure category under the evaluation's options (`kweval.explain.failures.failure_table`);
    all movies and models (read only)."""
    return _failure_table(ctx.key, ctx.dataset, ctx.evaluation)


def _scoped(ctx: Ctx, table: pd.DataFrame) -> pd.DataFrame:
    sel = ctx.selection
    rows = table["model"].isin(sel.models).to_numpy()
    if sel.movie != "ALL":
        rows = rows & (table["movie"] == sel.movie).to_numpy()
    return table[rows]


@st.cache_data(show_spinner=False, max_entries=32)
def _failure_counts(key: tuple, movie: str, models: tuple, _ctx: Ctx) -> pd.DataFrame:
    return failures.failure_summary(_scoped(_ctx, failure_table(_ctx)), by=["model"])


def failure_counts(ctx: Ctx) -> pd.DataFrame:
    """Counts and shares per model × side × category over the selection's movie (every movie for ALL)."""
    sel = ctx.selection
    return _failure_counts(ctx.key, sel.movie, tuple(sel.models), ctx)


@st.cache_data(show_spinner=False, max_entries=64)
def _category_reviews(key: tuple, movie: str, models: tuple, category: str, model: str | None, _ctx: Ctx) -> set:
    found = failures.reviews_with(_scoped(_ctx, failure_table(_ctx)), category, model)
    return set(zip(found["movie"].astype(str), found["review_id"].astype(str)))


def category_reviews(ctx: Ctx, category: str, model: str | None) -> set[tuple[str, str]]:
    """The (movie, review_id) pairs of the selection holding a keyword of `category` (of `model`, when given)."""
    sel = ctx.selection
    return _category_reviews(ctx.key, sel.movie, tuple(sel.models), category, model, ctx)


def review_failures(ctx: Ctx, movie: str, review: str, model: str) -> pd.DataFrame:
    """The failure rows (both sides) of one review × model."""
    table = failure_table(ctx)
    rows = (table["movie"] == movie) & (table["review_id"] == review) & (table["model"] == model)
    return table[rows.to_numpy()].astype({"keyword": object, "detail": object, "category": object})


@st.cache_resource(show_spinner=False, max_entries=4)
def _slice_features(key: tuple, _dataset, _evaluation) -> pd.DataFrame:
    return slice_features.slice_features(_evaluation, _dataset)


def slice_feature_table(ctx: Ctx) -> pd.DataFrame:
    """The slice features of every evaluated row (`kweval.evaluation.slice_features`), aligned with the scores."""
    return _slice_features(ctx.key, ctx.dataset, ctx.evaluation)


@st.cache_data(show_spinner="Searching the slices (SliceLine) and bootstrapping their CIs…", max_entries=32)
def _worst(key: tuple, model: str, metric: str, _ctx: Ctx) -> pd.DataFrame:
    return stats_slices.worst_slices(
        _ctx.evaluation, _ctx.dataset, model, metric, features=slice_feature_table(_ctx), n_boot=1000
    )


def worst_slices(ctx: Ctx, model: str, metric: str) -> pd.DataFrame:
    """The slices where `model` does worst on `metric` (`kweval.stats.slices.worst_slices`), overall row first."""
    return _worst(ctx.key, model, metric, ctx)


def slice_reviews(ctx: Ctx, spec: str, model: str | None) -> set[tuple[str, str]]:
    """The (movie, review_id) pairs in the slice `spec` (of `model`'s rows, when given); ValueError for a bad spec."""
    features = slice_feature_table(ctx)
    mask = slice_features.slice_mask(features, spec)
    if model is not None:
        mask = mask & (features["model"].astype(str).to_numpy() == model)
    rows = features[mask]
    return set(zip(rows["movie"].astype(str), rows["review_id"].astype(str)))
