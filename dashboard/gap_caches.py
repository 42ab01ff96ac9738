"""The Protocols page's cached answers: one collection's lattice (`kweval.lattice.explain.Collection`, shared
read-only), the presets' values, a gap between two protocols and a reported-number search, each the answer
`kweval gap` prints for the same data.  Keys: the data's content hash, the collection, the model and the question
(and the kweval preset's match mode), as in `dashboard.caches`."""

from __future__ import annotations

import math
from collections.abc import Sequence

import streamlit as st

from kweval.lattice import explain


@st.cache_resource(show_spinner="Reading the collection…", max_entries=4)
def _collection(data_hash: str, movie: str, _dataset) -> explain.Collection:
    # shared: its lattices keep every stage computed, so each question after the first is quick
    return explain.collection_of_dataset(_dataset, movie)


def collection(ctx, movie: str) -> explain.Collection:
    """The collection `movie` of the page's per-document data, with its models' predictions."""
    return _collection(ctx.data_hash, movie, ctx.dataset)


@st.cache_data(show_spinner="Scoring under every preset…", max_entries=32)
def _preset_values(data_hash: str, movie: str, model: str, metrics: tuple, match: str, _ctx) -> dict:
    values = explain.preset_values(collection(_ctx, movie), model, list(metrics), match)
    return {p: {m: (None if math.isnan(v) else v) for m, v in row.items()} for p, row in values.items()}


def preset_values(ctx, movie: str, model: str, metrics: Sequence[str], match: str) -> dict[str, dict[str, float]]:
    """{preset: {metric: value}} of `model` (NaN where a preset does not report the metric)."""
    found = _preset_values(ctx.data_hash, movie, model, tuple(metrics), match, ctx)
    return {p: {m: math.nan if v is None else v for m, v in row.items()} for p, row in found.items()}


@st.cache_data(show_spinner="Scoring every mixture of the two protocols…", max_entries=64)
def _gap(data_hash: str, movie: str, model: str, metric: str, start: str, end: str, match: str, _ctx) -> dict:
    return explain.explain_gap(collection(_ctx, movie), model, metric, start, end, match)


def gap(ctx, movie: str, model: str, metric: str, start: str, end: str, match: str) -> dict:
    """`kweval gap`'s answer for `metric` from `start` to `end` (GapError for a metric one of them does not
    report)."""
    return _gap(ctx.data_hash, movie, model, metric, start, end, match, ctx)


@st.cache_data(show_spinner="Searching every combination of the presets' conventions…", max_entries=32)
def _reported(data_hash: str, movie: str, model: str, reported: str, match: str, _ctx) -> dict:
    return explain.explain_reported(collection(_ctx, movie), model, reported, (), match)


def reported(ctx, movie: str, model: str, text: str, match: str) -> dict:
    """`kweval gap --reported`'s answer (GapError for a malformed METRIC=VALUE)."""
    return _reported(ctx.data_hash, movie, model, text, match, ctx)
