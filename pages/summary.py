"""Summary: the headline card, movie × model tables of every metric (ALL first), small multiples with bootstrap CIs,
heatmap, slices, downloads (the HTML report among them)."""

from __future__ import annotations

import pandas as pd
import plotly.express as px
import plotly.graph_objects as go
import streamlit as st

from dashboard.escape import esc, md
from dashboard.protocol import page_card, show_protocol_card
from dashboard.report_view import report_html
from dashboard.sidebar import open_page
from dashboard.state import ci_digest, ci_groups, row_identity
from dashboard.style import axis_title, metric_label
from dashboard.tables import best_in_bold, decimal_formats, number_columns
from kweval import stats
from kweval.evaluation.aggregate import ALL, aggregate_by
from kweval.evaluation.slices import slice_labels
from kweval.io import charts, report
from kweval.io.report_data import all_rows_first
from kweval.io.settings import setting_texts
from kweval.stats.headline import headline, key_metrics
from kweval.stats.numbers import decimals_for

ctx = open_page(__file__)
sel = ctx.selection
ev = ctx.evaluation
metrics = ev.metric_names
words = ctx.words  # Movie/Review or Collection/Document (kweval.data.vocabulary)
MOVIE, REVIEWS = words.movie.lower(), words.reviews.lower()


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
        caption=report.latex_caption(dict(meta), words),
    )
    return report.to_csv(_table), report.to_markdown(_table, words=words), latex


# Figures are shared, not copied (st.plotly_chart copies them): a warm rerun reuses them.
@st.cache_resource(show_spinner=False, max_entries=32)
def _bars(key: tuple, agg: str, scope: str, models: tuple, _rows: pd.DataFrame, _cis: pd.DataFrame) -> go.Figure:
    """Each model's value of every metric in `scope` with its bootstrap CI: small multiples, one panel and one y-axis
    per metric (`kweval.io.charts.small_multiples`, the report's charts), so a recall of 0.004 is not flat beside a
    precision of 0.4."""
    shown = [m for m in metrics if m in _rows.columns]
    values = {m: {str(model): float(_rows.loc[model, m]) for model in models if model in _rows.index} for m in shown}
    intervals: dict[str, dict[str, tuple[float, float]]] = {}
    for model, metric, lo, hi in _cis[["model", "metric", "ci_low", "ci_high"]].itertuples(index=False):
        intervals.setdefault(str(metric), {})[str(model)] = (float(lo), float(hi))
    figure = charts.small_multiples(values, intervals, {m: metric_label(m) for m in shown}, list(models))
    return go.Figure(figure)


@st.cache_resource(show_spinner=False, max_entries=32)
def _heatmap(key: tuple, agg: str, models: tuple, metric: str, _movies_only: pd.DataFrame) -> go.Figure:
    """`metric` per movie × model."""
    movies_only = _movies_only
    per_movie = movies_only.pivot(index="movie", columns="model", values=metric).reindex(
        index=pd.unique(movies_only["movie"]), columns=list(models)
    )
    heat = px.imshow(
        per_movie.rename(index=esc, columns=esc),
        text_auto=f".{decimals_for(per_movie.to_numpy(dtype='float64').ravel().tolist())}f",  # never 0.000 if not 0
        aspect="auto",
        color_continuous_scale="Viridis",
        labels=dict(color=esc(axis_title(metric, agg)), x="model", y=words.movie),
    )
    # a colour bar needs room to be read even for one or two movies; the toolbar sits in the top margin, off the cells
    heat.update_layout(
        height=max(280, 90 + 40 * len(per_movie)),
        margin=dict(t=40, b=10),
        coloraxis_colorbar=dict(title=dict(side="right"), thickness=14, len=1.0, tickformat=".2f"),
    )
    return heat


@st.cache_data(show_spinner="The headline: comparing the leaders…", max_entries=32)
def _headline(key: tuple, how: str, scope: str, models: tuple, keys: tuple, _scores: pd.DataFrame) -> pd.DataFrame:
    """Per key metric the best model, its margin over the runner-up, the interval at Holm's level, significance."""
    return headline(_scores, list(keys), how, words)


def _show_headline(scores: pd.DataFrame, scope: str) -> None:
    """The answer at a glance: one sentence per key metric (`kweval.stats.headline`), significant ones marked."""
    keys = tuple(key_metrics([m for m in metrics if m in scores.columns], sel.k))
    with st.container(border=True, key="headline_card"):
        st.markdown(f"#### At a glance — {md(ctx.movie_title(scope))}")
        if len(sel.models) < 2:
            st.markdown("One model selected: nothing to compare. Select two or more in the sidebar (Models).")
            return
        top = _headline(ctx.key, sel.agg, scope, tuple(sel.models), keys, scores)
        if top.empty:
            st.markdown("No key metric has values for two models here.")
            return
        lines = [("✅ " if row["significant"] else "▫️ ") + md(row["sentence"]) for row in top.to_dict("records")]
        st.markdown("\n".join(f"- {line}" for line in lines))
        st.caption(
            f"✅ significant: paired randomization test on the {REVIEWS} both models were evaluated on, Holm-corrected "
            f"across these {len(top)} metrics; each interval is the paired bootstrap at its Holm step's level, so "
            "interval and verdict agree. Every pair of models: Compare."
        )


meta = ctx.meta()
settings = " · ".join(setting_texts(meta, words))
st.title("Summary")
st.caption(
    f"{md(ctx.source_label)} · {sel.agg} aggregation · match {sel.match} · k = {sel.k} · {md(settings)} · "
    f"{len(sel.models)} model(s). **Bold**: the best value of each {MOVIE} (and of ALL) per column, here and in the "
    f"downloads. "
    "Hover a column name for its definition (docs/metrics.md)."
)
show_protocol_card(ctx, key="summary_protocol_card")

table = ctx.summary()
table = table[table["model"].isin(sel.models)].reset_index(drop=True)
scope = sel.movie if sel.movie in set(table["movie"]) else ALL
scores = ctx.scores() if scope != ALL else ev.scores[ev.scores["model"].isin(sel.models)]
_show_headline(scores, scope)

st.subheader(f"Every metric, {words.movies.lower()} × models ({sel.agg}) — ALL first")
shown = all_rows_first(table)
titles = dict(zip(ctx.dataset.movies["movie"], ctx.dataset.movies["title"]))
if any(str(titles.get(m, m)) != str(m) for m in shown["movie"] if m != ALL):  # the sidebar's names beside the ids
    shown.insert(1, "title", [ctx.movie_title(m) for m in shown["movie"]])
config = number_columns(
    [*metrics, "n_reviews", "n_skipped"], formats={**decimal_formats(shown), "n_reviews": "%d", "n_skipped": "%d"}
)
for column in ("movie", "n_reviews"):  # the data's words on screen; the downloads keep the stable column names
    if words.header(column) != column:
        base = config.get(column)
        help_ = getattr(base, "get", lambda _k: None)("help") if base is not None else None
        config[column] = st.column_config.Column(words.header(column), help=help_)
st.dataframe(best_in_bold(shown), hide_index=True, column_config=config, key="summary_table")
c1, c2, c3, c4, c5 = st.columns([1, 1, 1, 2, 3])
with c5.popover("LaTeX options"):
    tex_columns = st.multiselect("Columns", metrics, default=metrics, format_func=metric_label, key="tex_columns")
    tex_ci = st.radio(
        "Confidence intervals",
        ["none", "brackets", "pm"],
        horizontal=True,
        key="tex_ci",
        format_func={"none": "none", "brackets": "0.612 [0.58, 0.64]", "pm": "0.612 ± 0.03"}.get,
    )
    st.caption(
        f"booktabs table; the best value per {MOVIE} in bold; the caption names dataset, k, match mode, aggregation, "
        "semantic matching (τ, backend), sentiment, scope and protocol."
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


@st.cache_data(show_spinner=False, max_entries=8)
def _report(key: tuple, how: str, scope: str, models: tuple, meta_items: tuple) -> str:
    """`kweval report`'s HTML page of this view (built when the button is pressed, then cached)."""
    said = "; ".join(setting_texts(dict(meta_items), words))
    title = f"kweval report: {report.dataset_name(dict(meta_items))} ({said})"
    return report_html(ctx.dataset, ev, list(models), scope, how, page_card(ctx), title)


c4.download_button(
    "Download report",
    lambda: _report(ctx.key, sel.agg, scope, tuple(sel.models), tuple(meta.items())),
    report.download_name("report", meta, "html"),
    "text/html",
    key="download_report",
    on_click="ignore",
    icon=":material/description:",
    help="One self-contained HTML page of this view (headline, summary with CIs, charts, verdicts, worked examples, "
    "protocol card): the file `kweval report` writes. Built when pressed (a few seconds on large data).",
)
skipped = int(table.loc[table["movie"] == ALL, "n_skipped"].sum())
if skipped:
    st.caption(
        f"{skipped} {words.review.lower()} × model pair(s) without model output are skipped (counted in n_skipped; "
        "see Data)."
    )

# --- small multiples with CIs for the selected movie (or all movies) ---------------------------
st.subheader(f"Per metric, with bootstrap 95% CIs — {md(ctx.movie_title(scope))}")
cis = _cis(ctx.key, sel.agg, scope, tuple(sel.models), scores)
fig = _bars(ctx.key, sel.agg, scope, tuple(sel.models), table[table["movie"] == scope].set_index("model"), cis)
st.plotly_chart(fig, key="bars", config={"displaylogo": False})
how_text = (
    f"micro: ratios of counts summed over {REVIEWS} (set-based and weighted metrics); ranking metrics and SAS: mean "
    f"over {REVIEWS}"
    if sel.agg == "micro"
    else f"macro: mean over {REVIEWS}"
)
st.caption(
    f"One panel per metric, each with its own scale from 0: compare the bars within a panel. Values: {how_text}. "
    f"Error bars: percentile bootstrap over {REVIEWS} (2000 resamples, seed 0); gt_coverage is per {MOVIE} and has "
    f"none. {md(settings)}."
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
st.subheader(f"{metric_label(metric)}: {MOVIE} × model")
heat = _heatmap(ctx.key, sel.agg, tuple(sel.models), metric, movies_only)
st.plotly_chart(heat, key="heatmap", config={"displaylogo": False})

# --- slices --------------------------------------------------------------------------------------
st.subheader(f"{metric} by {words.review.lower()} rating and length")
cols = st.columns(2)
for col, by in zip(cols, ("rating", "length")):
    sliced = _sliced(ctx.key, sel.agg, by, ev)
    if sliced is None:
        col.caption(f"This dataset has no {words.review.lower()} {by}s.")
        continue
    sliced = sliced[sliced["model"].isin(sel.models)]
    wide = sliced.pivot(index="slice", columns="model", values=metric).reindex(
        index=pd.unique(sliced["slice"]), columns=list(sel.models)
    )
    wide.insert(0, REVIEWS, sliced.groupby("slice", sort=False)["n_reviews"].max())
    wide.index.name = by
    # each model's column holds `metric`: its help is the metric's; "reviews" is the slice's review count
    col.dataframe(
        wide,
        column_config=number_columns(sel.models, aliases={m: metric for m in sel.models})
        | number_columns([REVIEWS], fmt="%d", aliases={REVIEWS: "n_reviews"}),
        key=f"slices_{by}",
    )

ctx.finish()
