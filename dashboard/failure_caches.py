"""The Failures page's and the explorer's cached failure views: every keyword's failure category
(`kweval.explain.failures`; under a keyphrase preset, its decisions: `dashboard.preset_caches.fate_table`), the
counts per model, the reviews of a segment, the slice features and the worst slices (`kweval.stats.slices`).  Keys
come from `Ctx.key` (the data's content hash and the evaluation options) and the preset, as in `dashboard.caches`;
the big tables are shared read-only (`st.cache_resource`)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from dashboard import preset_caches
from dashboard.state import Ctx
from kweval.evaluation import slice_features
from kweval.explain import failure_grounding, failures
from kweval.keyphrase.dataset_protocol import preset_metrics, with_preset_scores
from kweval.stats import slices as stats_slices


@st.cache_resource(show_spinner="Sorting every keyword into its failure category…", max_entries=2)
def _failure_parts(key: tuple, _dataset, _evaluation) -> failures.FailureParts:
    # shared, read-only: the categories of both sides; the counts and segments read them without the rows
    return failures.failure_parts(_dataset, _evaluation)


@st.cache_resource(show_spinner="Laying out the failure rows…", max_entries=2)
def _failure_table(key: tuple, _parts: failures.FailureParts) -> pd.DataFrame:
    # shared, read-only (DNLP: 13.6 M rows, 316 MiB: made only when a review's whole GT list is asked for)
    return failures.parts_table(_parts)


def failure_table(ctx: Ctx) -> pd.DataFrame:
    """Every keyword's failure category under the evaluation's options (`kweval.explain.failures.failure_table`),
    or under the preset the page computes under (`Ctx.preset`: `kweval.keyphrase.fates`); all movies and models
    (read only)."""
    if ctx.preset is not None:
        return preset_caches.fate_table(ctx)
    return _failure_table(ctx.key, _parts(ctx))


def _parts(ctx: Ctx) -> failures.FailureParts:
    """The categories of both sides under the evaluation's options (no preset), shared read-only."""
    return _failure_parts(ctx.key, ctx.dataset, ctx.evaluation)


def _key(ctx: Ctx) -> tuple:
    """The cache key of what is derived from `failure_table` or the slice metrics: the evaluation's and the preset."""
    return (*ctx.key, ctx.preset)


def _scoped(ctx: Ctx, table: pd.DataFrame) -> pd.DataFrame:
    """The rows of `table` in the selection (its models, its movie or ALL)."""
    sel = ctx.selection
    rows = table["model"].isin(sel.models).to_numpy()
    if sel.movie != "ALL":
        rows = rows & (table["movie"] == sel.movie).to_numpy()
    return table[rows]


def _scope(ctx: Ctx, parts: failures.FailureParts) -> np.ndarray:
    """Per group (review × model) of the parts, whether it is in the selection (its models, its movie or ALL)."""
    sel = ctx.selection
    groups = parts.lists.groups
    keep = groups["model"].isin(sel.models).to_numpy()
    if sel.movie != "ALL":
        keep = keep & (groups["movie"] == sel.movie).to_numpy()
    return keep


@st.cache_data(show_spinner=False, max_entries=32)
def _failure_counts(key: tuple, movie: str, models: tuple, _ctx: Ctx) -> pd.DataFrame:
    if _ctx.preset is not None:  # the preset's decisions: a table per collection, no parts
        return failures.failure_summary(_scoped(_ctx, failure_table(_ctx)), by=["model"])
    parts = _parts(_ctx)
    return failures.parts_summary(parts, by=["model"], groups=_scope(_ctx, parts))


def failure_counts(ctx: Ctx) -> pd.DataFrame:
    """Counts and shares per model × side × category over the selection's movie (every movie for ALL)."""
    sel = ctx.selection
    return _failure_counts(_key(ctx), sel.movie, tuple(sel.models), ctx)


@st.cache_data(show_spinner=False, max_entries=32)
def _off_reference_grades(key: tuple, movie: str, models: tuple, _ctx: Ctx) -> pd.DataFrame:
    return failure_grounding.off_reference_grades(_scoped(_ctx, failure_table(_ctx)))


def off_reference_grades(ctx: Ctx) -> pd.DataFrame:
    """With grounding: the off-the-reference keywords per model × grade (present / supported / unsupported by the
    text) over the selection's movie; empty without grounding."""
    sel = ctx.selection
    return _off_reference_grades(_key(ctx), sel.movie, tuple(sel.models), ctx)


@st.cache_data(show_spinner=False, max_entries=64)
def _category_reviews(key: tuple, movie: str, models: tuple, category: str, model: str | None, _ctx: Ctx) -> set:
    if _ctx.preset is not None:
        found = failures.reviews_with(_scoped(_ctx, failure_table(_ctx)), category, model)
    else:
        parts = _parts(_ctx)
        found = failures.parts_reviews_with(parts, category, model, groups=_scope(_ctx, parts))
    return set(zip(found["movie"].astype(str), found["review_id"].astype(str)))


def category_reviews(ctx: Ctx, category: str, model: str | None) -> set[tuple[str, str]]:
    """The (movie, review_id) pairs of the selection holding a keyword of `category` (of `model`, when given)."""
    sel = ctx.selection
    return _category_reviews(_key(ctx), sel.movie, tuple(sel.models), category, model, ctx)


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
        slice_evaluation(_ctx), _ctx.dataset, model, metric, features=slice_feature_table(_ctx), n_boot=1000
    )


def worst_slices(ctx: Ctx, model: str, metric: str) -> pd.DataFrame:
    """The slices where `model` does worst on `metric` (`kweval.stats.slices.worst_slices`), overall row first."""
    return _worst(_key(ctx), model, metric, ctx)


@st.cache_resource(show_spinner=False, max_entries=4)
def _slice_evaluation(key: tuple, _ctx: Ctx):
    ctx = _ctx
    assert ctx.preset is not None
    scores = preset_caches.all_scores(ctx)
    return with_preset_scores(ctx.evaluation, scores, slice_metrics(ctx))


def slice_evaluation(ctx: Ctx):
    """The evaluation whose per-review metrics the slices search: the evaluation, or under a preset the same rows
    with the preset's per-document values (`kweval.keyphrase.dataset_protocol.with_preset_scores`)."""
    return ctx.evaluation if ctx.preset is None else _slice_evaluation(_key(ctx), ctx)


def slice_metrics(ctx: Ctx) -> list[str]:
    """The metrics the slices may search: the evaluation's, or the preset's per-document metrics with values."""
    if ctx.preset is None:
        return list(ctx.evaluation.metric_names)
    scores = preset_caches.all_scores(ctx)
    return [c for c in preset_metrics(scores) if c != "n_matched" and scores[c].notna().any()]


def slice_reviews(ctx: Ctx, spec: str, model: str | None) -> set[tuple[str, str]]:
    """The (movie, review_id) pairs in the slice `spec` (of `model`'s rows, when given); ValueError for a bad spec."""
    features = slice_feature_table(ctx)
    mask = slice_features.slice_mask(features, spec)
    if model is not None:
        mask = mask & (features["model"].astype(str).to_numpy() == model)
    rows = features[mask]
    return set(zip(rows["movie"].astype(str), rows["review_id"].astype(str)))
