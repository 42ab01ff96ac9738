"""The pages' charts, built once per evaluation and selection and shared (`st.cache_resource`).

The Summary's small multiples and heatmap and the Failures page's stacked bars are static SVG drawn by the server
(`dashboard.svg_charts`): a visitor's browser loads no chart library for them (issues 28 item 7, 29 item 4); tooltips
are SVG titles, a Failures segment is a link.  Compare's per-review scatter is a Vega-Lite specification
(`dashboard.vega_specs`: a click selects a review, and Vega draws thousands of points on a canvas where plotly makes
an SVG element of each); the other pages' are plotly figures.  `st.plotly_chart` and `st.vega_lite_chart` copy what
they are given, so sharing one is safe and a warm rerun (any widget) reuses it.  User strings are escaped in plotly
figures (plotly renders some HTML in labels) and in the SVG (`svg_charts` escapes them), not in Vega specs (Vega
draws plain SVG text).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping

import numpy as np
import pandas as pd
import streamlit as st

from dashboard import svg_charts, vega_specs
from dashboard.state import Ctx
from dashboard.style import axis_title, jitter, metric_label, model_colors
from kweval import stats
from kweval.data.vocabulary import Vocabulary
from kweval.io import charts as report_charts


@st.cache_resource(show_spinner=False, max_entries=32)
def _bars(
    key: tuple, agg: str, scope: str, models: tuple, metrics: tuple, all_models: tuple, _rows: pd.DataFrame, _cis
) -> list[str]:
    """Small multiples (`svg_charts.bars_svg`): one panel and one y-scale from 0 per metric, so a recall of 0.004 is
    not flat beside a precision of 0.4; no axis title to clip and no legend (the models are each panel's x-axis; how
    values are aggregated is in the page's caption).  Metrics without a value (undefined) have no panel."""
    shown = [m for m in metrics if m in _rows.columns]
    values = {m: {str(model): float(_rows.loc[model, m]) for model in models if model in _rows.index} for m in shown}
    intervals: dict[str, dict[str, tuple[float, float]]] = {}
    for model, metric, lo, hi in _cis[["model", "metric", "ci_low", "ci_high"]].itertuples(index=False):
        intervals.setdefault(str(metric), {})[str(model)] = (float(lo), float(hi))
    labels = {m: metric_label(m) for m in shown}
    colors = model_colors(all_models)  # by the dataset's model list: a model keeps its colour on every page
    svgs = []
    for half in report_charts.halves(values):  # two charts: side by side, or one under the other at 400 px
        # only this half's values, intervals and labels: a τ change leaves the other half's content, so its chart
        part, cis = {m: values[m] for m in half}, {m: intervals[m] for m in half if m in intervals}
        names = {m: labels[m] for m in half}
        content = hashlib.blake2b(
            json.dumps([part, cis, names, models, colors], sort_keys=True, default=str).encode(), digest_size=16
        )
        svgs.append(_bars_svg(content.hexdigest(), part, cis, names, models, colors))
    return svgs


@st.cache_resource(show_spinner=False, max_entries=64)
def _bars_svg(content: str, _values: dict, _intervals: dict, _labels: dict, _models: tuple, _colors: dict) -> str:
    """One chart of small multiples, cached by what it shows (`content`): a τ change rebuilds only the chart holding
    the semantic metrics."""
    return svg_charts.bars_svg(_values, _intervals, _labels, _models, _colors, columns=PANELS)


PANELS = report_charts.PANEL_COLUMNS


def metric_bars(ctx: Ctx, scope: str, rows: pd.DataFrame, cis: pd.DataFrame) -> list[str]:
    """Each selected model's value of every metric in `scope` (`rows`: the summary rows by model) with its CI: the
    small multiples in two charts (`show_bars`)."""
    sel = ctx.selection
    metrics, all_models = tuple(ctx.evaluation.metric_names), tuple(ctx.dataset.model_names)
    return _bars(ctx.key, sel.agg, scope, tuple(sel.models), metrics, all_models, rows, cis)


def protocol_bars(ctx: Ctx, protocol: str, movie: str, rows: pd.DataFrame, cis: pd.DataFrame) -> list[str]:
    """The small multiples of a keyphrase preset's table (`rows`: its rows of collection `movie`, one per model) with
    each value's CI (`caches.protocol_cis`), in two charts (`show_bars`)."""
    sel = ctx.selection
    metrics = tuple(c for c in rows.columns if c not in ("movie", "model", "n_documents"))
    key = (ctx.data_hash, protocol, sel.k)
    all_models = tuple(ctx.dataset.model_names)
    return _bars(key, "macro", movie, tuple(sel.models), metrics, all_models, rows.set_index("model"), cis)


def show_bars(svgs: list[str]) -> None:
    """The small multiples' charts (SVG) in two columns, which Streamlit stacks on a narrow screen."""
    for column, svg in zip(st.columns(2), svgs):
        show_svg(svg, column)


def show_svg(svg: str, place=st) -> None:
    """One of `svg_charts`' charts on the page.  Not `st.html`: its DOMPurify keeps only HTML tags and drops the SVG;
    Markdown's HTML keeps it (every user string in it is escaped by `svg_charts`)."""
    place.markdown(svg, unsafe_allow_html=True)


@st.cache_resource(show_spinner=False, max_entries=32)
def _heatmap(content: str, agg: str, models: tuple, metric: str, words: Vocabulary, _movies_only: pd.DataFrame) -> str:
    movies = [str(m) for m in pd.unique(_movies_only["movie"])]
    shown = _movies_only[_movies_only["model"].isin(models)]
    cells = list(zip(shown["movie"].astype(str), shown["model"].astype(str), shown[metric].astype("float64")))
    return svg_charts.heatmap_svg(cells, movies, models, axis_title(metric, agg, words), words.movie.lower())


def movie_heatmap(ctx: Ctx, metric: str, movies_only: pd.DataFrame) -> str:
    """`metric` per movie × selected model (`movies_only`: the summary rows without ALL), cached by the content it
    shows: a τ change leaves a lexical metric's heatmap as it was."""
    sel = ctx.selection
    shown = pd.util.hash_pandas_object(movies_only[["movie", "model", metric]], index=False).to_numpy()
    content = hashlib.blake2b(shown.tobytes(), digest_size=16).hexdigest()
    return _heatmap(content, sel.agg, tuple(sel.models), metric, ctx.words, movies_only)


def show_heatmap(svg: str) -> None:
    """The movie × model heatmap (SVG)."""
    show_svg(svg)


@st.cache_resource(show_spinner=False, max_entries=16)
def _per_review(
    key: tuple,
    params: tuple,
    a: str,
    b: str,
    metric: str,
    metrics: tuple,
    color: str | None,
    words: Vocabulary,
    _scores,
    _links,
) -> tuple[pd.DataFrame, tuple[pd.DataFrame, dict], pd.DataFrame]:
    both = stats.paired_scores(_scores, a, b, list(metrics), metric)
    scatter = (
        scatter_points(both, metric),
        vega_specs.scatter_spec(a, b, metric_label(metric), color, words.movie.lower(), words.review.lower()),
    )
    listing = both.reindex(both["difference"].abs().sort_values(ascending=False, kind="stable").index)
    listing["open"] = _links(listing)
    return both, scatter, listing


def scatter_points(both: pd.DataFrame, metric: str) -> pd.DataFrame:
    """The scatter's rows (`vega_specs.SCATTER_FIELDS`) of `both` (`stats.paired_scores` with ``difference``): each
    review's row, A's and B's `metric` jittered (many reviews share the same values, 0, 1/k, ...: a little seeded
    noise, ±0.012, shows how many points sit on each), its names and exact values for the tooltip."""
    return pd.DataFrame(
        {
            "row": np.arange(len(both), dtype="int64"),
            "x": jitter(both[f"{metric}_a"], 0.012, seed=1),
            "y": jitter(both[f"{metric}_b"], 0.012, seed=2),
            "movie": both["movie"].astype(str).to_numpy(),
            "review": both["review_id"].astype(str).to_numpy(),
            "difference": both["difference"].to_numpy(dtype="float64"),
            "a": both[f"{metric}_a"].to_numpy(dtype="float64"),
            "b": both[f"{metric}_b"].to_numpy(dtype="float64"),
        },
        columns=list(vega_specs.SCATTER_FIELDS),
    )


def show_scatter(scatter: tuple[pd.DataFrame, dict], both: pd.DataFrame, key: str) -> tuple[str, str] | None:
    """Draw the per-review scatter (`per_review`'s) as wide as the page; (movie, review_id) of a clicked point."""
    points, spec = scatter
    event = st.vega_lite_chart(
        points, spec, on_select="rerun", selection_mode=vega_specs.SCATTER_PICK, key=key, width="stretch"
    )
    picked = event.selection.get(vega_specs.SCATTER_PICK) if event and event.selection else None
    return clicked_review(both, picked[0]) if picked else None


def clicked_review(both: pd.DataFrame, point: dict) -> tuple[str, str]:
    """(movie, review_id) of a clicked point of the scatter (its ``row`` in `both`)."""
    row = both.iloc[int(point["row"])]
    return str(row["movie"]), str(row["review_id"])


def per_review(
    ctx: Ctx, a: str, b: str, metric: str, metrics: list[str]
) -> tuple[pd.DataFrame, tuple[pd.DataFrame, dict], pd.DataFrame]:
    """(A's and B's `metric` per review of the selection, the scatter of them (its rows and Vega-Lite spec:
    `show_scatter`), the reviews by |B − A| with explorer links)."""

    def links(listing: pd.DataFrame) -> list[str]:
        return ctx.urls("explorer", movie=listing["movie"].tolist(), review=listing["review_id"].tolist())

    color = model_colors(ctx.dataset.model_names).get(b)
    params = tuple(ctx.params().items())
    return _per_review(ctx.key, params, a, b, metric, tuple(metrics), color, ctx.words, ctx.scores(), links)


def failure_bars(frame: pd.DataFrame, title: str, unit: str, links: Mapping[tuple[str, str], str]) -> str:
    """Stacked horizontal bars (SVG, `svg_charts.stacked_bars_svg`), one per model, one segment per failure category
    (`failures_view.bar_frame` rows): the share of the model's keywords (or GT keywords) in each category, its count in
    the tooltip; a click on a segment follows its link (`links[(model, category)]`: the explorer, filtered)."""
    from dashboard.failures_view import COLORS

    rows = [
        {
            "model": str(r.model),
            "category": str(r.category),
            "label": str(r.label),
            "percent": float(r.percent),
            "count": int(r.count),
            "color": COLORS.get(str(r.category), "grey"),
            "href": links.get((str(r.model), str(r.category))),
        }
        for r in frame.itertuples(index=False)
    ]
    models = [str(m) for m in pd.unique(frame["model"].astype(str))]
    return svg_charts.stacked_bars_svg(rows, models, title, unit)
