"""Summary: movie × model tables of every metric, bars with bootstrap CIs, heatmap, slices, downloads."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.express as px
import plotly.graph_objects as go
import streamlit as st

from dashboard.escape import esc, md
from dashboard.protocol import show_protocol_card
from dashboard.sidebar import open_page
from dashboard.state import ci_digest, ci_groups, row_identity
from dashboard.style import axis_title, metric_label, model_colors
from dashboard.tables import best_in_bold, number_columns
from kweval import stats
from kweval.evaluation.aggregate import ALL, aggregate_by
from kweval.evaluation.slices import slice_labels
from kweval.io import report

ctx = open_page(__file__)
sel = ctx.selection
ev = ctx.evaluation
metrics = ev.metric_names


@st.cache_data(show_spinner="Bootstrapping 95% CIs…", max_entries=256)
def _group_cis(digest: str, how: str, group: tuple, _rows: pd.DataFrame) -> pd.DataFrame:
    """CIs of one metric group, cached by the content of what they read: unchanged columns are not resampled again."""
    return stats.bootstrap_summary_ci(_rows, list(group), how)


@st.cache_data(show_spinner=False, max_entries=32)
def _cis(key: tuple, how: str, movie: str, models: tuple, _scores: pd.DataFrame) -> pd.DataFrame:
    parts = []
    for model in models:
        rows = _scores[_scores["model"] == model]
        groups = [_group_cis(ci_digest(rows, group, how), how, tuple(group), rows) for group in ci_groups(metrics)]
        parts.append(pd.concat(groups).set_index("metric").reindex(metrics).reset_index().assign(model=model))
    return pd.concat(parts, ignore_index=True)


@st.cache_data(show_spinner=False, max_entries=16)
def _slice_labels(data_hash: str, rows: str, by: str, _scores: pd.DataFrame) -> pd.Series | None:
    """Labels of the evaluated rows `rows` (`row_identity`): the same after a τ change or with sentiment on."""
    return slice_labels(_scores, ctx.dataset.reviews, by)


@st.cache_data(show_spinner=False, max_entries=32)
def _sliced(key: tuple, how: str, by: str, _evaluation) -> pd.DataFrame | None:
    labels = _slice_labels(ctx.data_hash, row_identity(_evaluation.scores), by, _evaluation.scores)
    return None if labels is None else aggregate_by(_evaluation, labels, how)


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
    """CSV, Markdown and LaTeX of the summary, built once per selection (their cost grows with the number of movies)."""
    latex = report.to_latex(
        _table,
        columns=list(columns) or None,
        ci=_intervals,
        ci_style=ci_style if ci_style != "none" else "brackets",
        caption=report.latex_caption(dict(meta)),
    )
    return report.to_csv(_table), report.to_markdown(_table), latex


# Figures are shared, not copied (st.plotly_chart copies them): a warm rerun reuses them.
@st.cache_resource(show_spinner=False, max_entries=32)
def _bars(key: tuple, agg: str, scope: str, models: tuple, _rows: pd.DataFrame, _cis: pd.DataFrame) -> go.Figure:
    """Each model's value of every metric in `scope` with its bootstrap CI."""
    rows, cis = _rows, _cis
    colors = model_colors(ctx.dataset.model_names)  # by the dataset's model list: a model keeps its colour
    labels = [metric_label(m) for m in metrics]
    fig = go.Figure()
    for model in models:
        ci = cis[cis["model"] == model].set_index("metric").reindex(metrics)
        value = (
            rows.loc[model, metrics].to_numpy(dtype="float64") if model in rows.index else np.full(len(metrics), np.nan)
        )
        fig.add_bar(
            name=esc(model),
            x=metrics,
            y=value,
            marker_color=colors.get(model),  # plotly renders some HTML in labels: escaped
            error_y=dict(
                type="data",
                symmetric=False,
                array=np.clip(ci["ci_high"].to_numpy() - value, 0, None),
                arrayminus=np.clip(value - ci["ci_low"].to_numpy(), 0, None),
            ),
        )
    how = (
        "micro: ratios of summed counts; ranking metrics and SAS: mean over reviews"
        if agg == "micro"
        else "macro: mean over reviews"
    )
    fig.update_layout(
        barmode="group",
        yaxis_title=f"value ({how})",
        xaxis_title="metric",
        height=420,
        margin=dict(t=40, b=10),
        legend=dict(title_text="model", orientation="h", yanchor="bottom", y=1.02, x=0),
    )  # above the plot, clear of the toolbar
    fig.update_xaxes(tickvals=metrics, ticktext=[esc(label) for label in labels])  # registry labels under the bars
    return fig


@st.cache_resource(show_spinner=False, max_entries=32)
def _heatmap(key: tuple, agg: str, models: tuple, metric: str, _movies_only: pd.DataFrame) -> go.Figure:
    """`metric` per movie × model."""
    movies_only = _movies_only
    per_movie = movies_only.pivot(index="movie", columns="model", values=metric).reindex(
        index=pd.unique(movies_only["movie"]), columns=list(models)
    )
    heat = px.imshow(
        per_movie.rename(index=esc, columns=esc),
        text_auto=".3f",
        aspect="auto",
        color_continuous_scale="Viridis",
        labels=dict(color=esc(axis_title(metric, agg)), x="model", y="movie"),
    )
    # a colour bar needs room to be read even for one or two movies; the toolbar sits in the top margin, off the cells
    heat.update_layout(
        height=max(280, 90 + 40 * len(per_movie)),
        margin=dict(t=40, b=10),
        coloraxis_colorbar=dict(title=dict(side="right"), thickness=14, len=1.0, tickformat=".2f"),
    )
    return heat


st.title("Summary")
st.caption(
    f"{md(ctx.source_label)} · {sel.agg} aggregation · match {sel.match} · k = {sel.k} · "
    f"{len(sel.models)} model(s). **Bold**: the best value of each movie (and of ALL) per column, here and in the "
    f"downloads. "
    "Hover a column name for its definition (docs/metrics.md)."
)
show_protocol_card(ctx, key="summary_protocol_card")

table = ctx.summary()
table = table[table["model"].isin(sel.models)].reset_index(drop=True)
st.subheader(f"Every metric, movies × models ({sel.agg})")
config = number_columns([*metrics, "n_reviews", "n_skipped"], formats={"n_reviews": "%d", "n_skipped": "%d"})
st.dataframe(best_in_bold(table), hide_index=True, column_config=config, key="summary_table")
meta = {"data": ctx.dataset.source, "k": sel.k, "match": sel.match, "aggregate": sel.agg}
c1, c2, c3, c4 = st.columns([1, 1, 1, 5])
with c4.popover("LaTeX options"):
    tex_columns = st.multiselect("Columns", metrics, default=metrics, format_func=metric_label, key="tex_columns")
    tex_ci = st.radio(
        "Confidence intervals",
        ["none", "brackets", "pm"],
        horizontal=True,
        key="tex_ci",
        format_func={"none": "none", "brackets": "0.612 [0.58, 0.64]", "pm": "0.612 ± 0.03"}.get,
    )
    st.caption(
        "booktabs table; the best value per movie in bold; the caption names dataset, k, match mode and aggregation."
    )


@st.cache_data(show_spinner="Bootstrapping the intervals…", max_entries=16)
def _intervals(key: tuple, how: str, models: tuple, columns: tuple, _evaluation) -> pd.DataFrame:
    return report.summary_intervals(_evaluation.scores[_evaluation.scores["model"].isin(models)], list(columns), how)


intervals = (
    _intervals(ctx.key, sel.agg, tuple(sel.models), tuple(tex_columns), ev)
    if tex_ci != "none" and tex_columns
    else None
)
csv_text, md_text, tex_text = _exports(
    ctx.key, sel.agg, tuple(sel.models), tuple(tex_columns), tex_ci, tuple(meta.items()), table, intervals
)
c1.download_button("CSV", csv_text, report.download_name("summary", meta, "csv"), "text/csv")
c2.download_button("Markdown", md_text, report.download_name("summary", meta, "md"), "text/markdown")
c3.download_button("LaTeX", tex_text, report.download_name("summary", meta, "tex"), "text/x-tex")
skipped = int(table.loc[table["movie"] == ALL, "n_skipped"].sum())
if skipped:
    st.caption(f"{skipped} review × model pair(s) without model output are skipped (counted in n_skipped; see Data).")

# --- bars with CIs for the selected movie (or all movies) ---------------------------------------
scope = sel.movie if sel.movie in set(table["movie"]) else ALL
st.subheader(f"Per metric, with bootstrap 95% CIs — {md(ctx.movie_title(scope))}")
scores = ctx.scores() if scope != ALL else ev.scores[ev.scores["model"].isin(sel.models)]
cis = _cis(ctx.key, sel.agg, scope, tuple(sel.models), scores)
fig = _bars(ctx.key, sel.agg, scope, tuple(sel.models), table[table["movie"] == scope].set_index("model"), cis)
st.plotly_chart(fig, key="bars", config={"displaylogo": False})
st.caption(
    "Error bars: percentile bootstrap over reviews (2000 resamples, seed 0); gt_coverage is movie-level and has none."
)

# --- heatmap -------------------------------------------------------------------------------------
metric = ctx.url_widget(
    st.selectbox,
    "Metric for the heatmap and slices",
    "metric",
    ctx.ndcg_at_k,
    parse=lambda s: s if s in metrics else None,
    options=metrics,
)
movies_only = table[table["movie"] != ALL]
st.subheader(f"{metric_label(metric)}: movie × model")
heat = _heatmap(ctx.key, sel.agg, tuple(sel.models), metric, movies_only)
st.plotly_chart(heat, key="heatmap", config={"displaylogo": False})

# --- slices --------------------------------------------------------------------------------------
st.subheader(f"{metric} by review rating and length")
cols = st.columns(2)
for col, by in zip(cols, ("rating", "length")):
    sliced = _sliced(ctx.key, sel.agg, by, ev)
    if sliced is None:
        col.caption(f"This dataset has no review {by}s.")
        continue
    sliced = sliced[sliced["model"].isin(sel.models)]
    wide = sliced.pivot(index="slice", columns="model", values=metric).reindex(
        index=pd.unique(sliced["slice"]), columns=list(sel.models)
    )
    wide.insert(0, "reviews", sliced.groupby("slice", sort=False)["n_reviews"].max())
    wide.index.name = by
    # each model's column holds `metric`: its help is the metric's; "reviews" is the slice's review count
    col.dataframe(
        wide,
        column_config=number_columns(sel.models, aliases={m: metric for m in sel.models})
        | number_columns(["reviews"], fmt="%d", aliases={"reviews": "n_reviews"}),
        key=f"slices_{by}",
    )

ctx.finish()
