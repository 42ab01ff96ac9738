"""The pages' plotly figures, built once per evaluation and selection and shared (`st.cache_resource`).

`st.plotly_chart` copies a figure, so sharing one is safe and a warm rerun (any widget) reuses it.  User
strings are escaped: plotly renders some HTML in labels.
"""

from __future__ import annotations

import hashlib
import html
import json

import numpy as np
import pandas as pd
import plotly.express as px
import plotly.graph_objects as go
import streamlit as st

from dashboard.escape import esc
from dashboard.state import Ctx
from dashboard.style import axis_title, jitter, metric_label, model_colors
from kweval import stats
from kweval.data.vocabulary import MOVIE_WORDS, Vocabulary
from kweval.io import charts as report_charts
from kweval.stats.numbers import decimals_for


@st.cache_resource(show_spinner=False, max_entries=32)
def _bars(
    key: tuple, agg: str, scope: str, models: tuple, metrics: tuple, all_models: tuple, _rows: pd.DataFrame, _cis
) -> list[go.Figure]:
    """Small multiples (`kweval.io.charts.small_multiples`, the HTML report's charts): one panel and one y-axis from 0
    per metric, so a recall of 0.004 is not flat beside a precision of 0.4; no axis title to clip and no legend under
    the toolbar (the models are each panel's x-axis; how values are aggregated is in the page's caption)."""
    shown = [m for m in metrics if m in _rows.columns]
    values = {m: {str(model): float(_rows.loc[model, m]) for model in models if model in _rows.index} for m in shown}
    intervals: dict[str, dict[str, tuple[float, float]]] = {}
    for model, metric, lo, hi in _cis[["model", "metric", "ci_low", "ci_high"]].itertuples(index=False):
        intervals.setdefault(str(metric), {})[str(model)] = (float(lo), float(hi))
    labels = {m: metric_label(m) for m in shown}
    colors = model_colors(all_models)  # by the dataset's model list: a model keeps its colour on every page
    figures = []
    for half in report_charts.halves(values):  # two figures: side by side, or one under the other at 400 px
        part = {m: values[m] for m in half}
        spec = report_charts.small_multiples(part, intervals, labels, list(models), columns=PANELS)
        content = hashlib.blake2b(json.dumps([spec, colors], sort_keys=True, default=str).encode(), digest_size=16)
        figures.append(_bars_figure(content.hexdigest(), spec, colors))
    return figures


@st.cache_resource(show_spinner=False, max_entries=64)
def _bars_figure(content: str, _spec: dict, _colors: dict) -> go.Figure:
    """One figure of small multiples from its JSON-ready `_spec`, each bar in its model's colour, cached by what it
    shows (`content`): a τ change rebuilds only the figure holding the semantic metrics."""
    fig = go.Figure(_spec)
    for trace in fig.data:
        trace.marker.color = [_colors.get(html.unescape(str(m))) for m in trace.x]
    return fig


PANELS = report_charts.PANEL_COLUMNS


def metric_bars(ctx: Ctx, scope: str, rows: pd.DataFrame, cis: pd.DataFrame) -> list[go.Figure]:
    """Each selected model's value of every metric in `scope` (`rows`: the summary rows by model) with its CI: the
    small multiples in two figures (`show_bars`)."""
    sel = ctx.selection
    metrics, all_models = tuple(ctx.evaluation.metric_names), tuple(ctx.dataset.model_names)
    return _bars(ctx.key, sel.agg, scope, tuple(sel.models), metrics, all_models, rows, cis)


def protocol_bars(ctx: Ctx, protocol: str, movie: str, rows: pd.DataFrame, cis: pd.DataFrame) -> list[go.Figure]:
    """The small multiples of a keyphrase preset's table (`rows`: its rows of collection `movie`, one per model) with
    each value's CI (`caches.protocol_cis`), in two figures (`show_bars`)."""
    sel = ctx.selection
    metrics = tuple(c for c in rows.columns if c not in ("movie", "model", "n_documents"))
    key = (ctx.data_hash, protocol, sel.k)
    all_models = tuple(ctx.dataset.model_names)
    return _bars(key, "macro", movie, tuple(sel.models), metrics, all_models, rows.set_index("model"), cis)


def show_bars(figures: list[go.Figure], key: str) -> None:
    """The small multiples' figures in two columns, which Streamlit stacks on a narrow screen (keys `key`_1, _2)."""
    for i, (column, fig) in enumerate(zip(st.columns(2), figures), 1):
        column.plotly_chart(fig, key=f"{key}_{i}", config={"displaylogo": False})


@st.cache_resource(show_spinner=False, max_entries=32)
def _heatmap(
    content: str, agg: str, models: tuple, metric: str, words: Vocabulary, _movies_only: pd.DataFrame
) -> go.Figure:
    per_movie = _movies_only.pivot(index="movie", columns="model", values=metric).reindex(
        index=pd.unique(_movies_only["movie"]), columns=list(models)
    )
    heat = px.imshow(
        per_movie.rename(index=esc, columns=esc),
        text_auto=f".{decimals_for(per_movie.to_numpy(dtype='float64').ravel().tolist())}f",  # never 0.000 if not 0
        aspect="auto",
        color_continuous_scale="Viridis",
        labels=dict(color=esc(axis_title(metric, agg, words)), x="model", y=esc(words.movie.lower())),
    )
    # a colour bar needs room to be read even for one or two movies; the toolbar sits in the top margin, off the cells
    heat.update_layout(
        height=max(280, 90 + 40 * len(per_movie)),
        margin=dict(t=40, b=10),
        coloraxis_colorbar=dict(title=dict(side="right"), thickness=14, len=1.0, tickformat=".2f"),
    )
    return heat


def movie_heatmap(ctx: Ctx, metric: str, movies_only: pd.DataFrame) -> go.Figure:
    """`metric` per movie × selected model (`movies_only`: the summary rows without ALL), cached by the content it
    shows: a τ change leaves a lexical metric's heatmap as it was."""
    sel = ctx.selection
    shown = pd.util.hash_pandas_object(movies_only[["movie", "model", metric]], index=False).to_numpy()
    content = hashlib.blake2b(shown.tobytes(), digest_size=16).hexdigest()
    return _heatmap(content, sel.agg, tuple(sel.models), metric, ctx.words, movies_only)


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
) -> tuple[pd.DataFrame, go.Figure, pd.DataFrame]:
    both = stats.paired_scores(_scores, a, b, list(metrics), metric)
    both["movie "] = both["movie"].map(esc)  # plotly renders some HTML in hover labels: show escaped copies
    both["review "] = both["review_id"].map(esc)
    # many reviews share the same values (0, 1/k, ...): a little seeded jitter shows how many points sit on each
    both["x "] = jitter(both[f"{metric}_a"], 0.012, seed=1)
    both["y "] = jitter(both[f"{metric}_b"], 0.012, seed=2)
    fig = scatter_figure(both, metric, a, b, color, words)
    fig.add_shape(type="line", x0=0, y0=0, x1=1, y1=1, line=dict(dash="dot", color="grey"))
    fig.update_layout(height=460, margin=dict(t=40, b=10))
    listing = both.reindex(both["difference"].abs().sort_values(ascending=False, kind="stable").index)
    listing["open"] = _links(listing)
    return both, fig, listing


def scatter_figure(
    both: pd.DataFrame, metric: str, a: str, b: str, color: str | None, words: Vocabulary = MOVIE_WORDS
) -> go.Figure:
    """B's `metric` against A's per review (`both`: `stats.paired_scores` with the jittered "x " / "y " and escaped
    "movie " / "review " columns).  Numbers only go to the browser as arrays (plotly sends them as typed arrays, fast
    to serialise on every rerun): each point's customdata is its row in `both` (`clicked_review`), and its hover
    text (escaped, formatted once here) names movie, review, B − A and both values."""
    label = metric_label(metric)
    movie, review = words.movie.lower(), words.review.lower()
    hover = [
        f"{movie}={m}<br>{review}={r}<br>difference={d:.4f}<br>{esc(a)} (A)={va:.4f}<br>{esc(b)} (B)={vb:.4f}"
        for m, r, d, va, vb in zip(
            both["movie "], both["review "], both["difference"], both[f"{metric}_a"], both[f"{metric}_b"]
        )
    ]
    fig = go.Figure(
        go.Scatter(
            x=both["x "].to_numpy(dtype="float64"),
            y=both["y "].to_numpy(dtype="float64"),
            mode="markers",
            customdata=np.arange(len(both), dtype="float64")[:, None],
            text=hover,
            hovertemplate="%{text}<extra></extra>",
            opacity=0.45,
            marker=dict(color=color, size=7),
        )
    )
    fig.update_layout(xaxis_title=f"{label} of {esc(a)} (A)", yaxis_title=f"{label} of {esc(b)} (B)")
    return fig


def clicked_review(both: pd.DataFrame, point: dict) -> tuple[str, str]:
    """(movie, review_id) of a clicked point of `scatter_figure` (its customdata: the row in `both`)."""
    row = both.iloc[int(point["customdata"][0])]
    return str(row["movie"]), str(row["review_id"])


def per_review(
    ctx: Ctx, a: str, b: str, metric: str, metrics: list[str]
) -> tuple[pd.DataFrame, go.Figure, pd.DataFrame]:
    """(A's and B's `metric` per review of the selection, the scatter of them, the reviews by |B − A| with explorer
    links)."""

    def links(listing: pd.DataFrame) -> list[str]:
        return ctx.urls("explorer", movie=listing["movie"].tolist(), review=listing["review_id"].tolist())

    color = model_colors(ctx.dataset.model_names).get(b)
    params = tuple(ctx.params().items())
    return _per_review(ctx.key, params, a, b, metric, tuple(metrics), color, ctx.words, ctx.scores(), links)


def failure_bars(frame: pd.DataFrame, title: str, unit: str) -> go.Figure:
    """Stacked horizontal bars, one per model, one segment per failure category (`failures_view.bar_frame` rows):
    the share of the model's keywords (or GT keywords) in each category; hover gives the count."""
    from dashboard.failures_view import COLORS

    fig = go.Figure()
    for category, rows in frame.groupby("category", sort=False, observed=True):
        fig.add_bar(
            y=[esc(m) for m in rows["model"].astype(str)],
            x=rows["percent"],
            orientation="h",
            name=esc(rows["label"].iloc[0]),
            marker_color=COLORS.get(str(category), "grey"),
            # count, category, model: a click on the segment (on_select) names what to open in the explorer
            customdata=[[int(n), str(category), str(m)] for n, m in zip(rows["count"], rows["model"])],
            hovertemplate=f"%{{y}} · %{{fullData.name}}: %{{x:.1f}}% (%{{customdata[0]:,}} {unit})<extra></extra>",
        )
    fig.update_layout(
        barmode="stack",
        title=title,
        xaxis_title=f"% of {unit}",
        yaxis={"autorange": "reversed"},
        # the legend at the foot of the figure, below the axis title (plotly makes room for it): never over the title
        legend={"orientation": "h", "yref": "container", "y": 0, "yanchor": "bottom"},
        height=200 + 45 * frame["model"].nunique(),
        margin={"l": 10, "r": 10, "t": 40, "b": 10},
    )
    return fig
