"""Summary: the headline card, movie × model tables of every metric (ALL first), small multiples with bootstrap CIs,
heatmap, slices, downloads (the HTML report among them)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from dashboard import caches, charts, explorer_judgments, look_ahead
from dashboard.escape import md
from dashboard.headline_card import across_lines, show_headline_card, significance_caption
from dashboard.links import METRICS_DOC, metrics_doc
from dashboard.protocol import show_protocol_card
from dashboard.protocol_select import choose_protocol, show_protocol_summary
from dashboard.record_button import record_button
from dashboard.report_button import report_button
from dashboard.sidebar import open_page
from dashboard.style import metric_label
from dashboard.tables import best_in_bold, decimal_formats, number_columns
from kweval.evaluation.aggregate import ALL
from kweval.io import report
from kweval.io.settings import setting_texts
from kweval.metrics import undefined

ctx = open_page(__file__)
sel = ctx.selection
ev = ctx.evaluation
metrics = ev.metric_names
words = ctx.words  # Movie/Review or Collection/Document (kweval.data.vocabulary)
MOVIE, REVIEWS = words.movie.lower(), words.reviews.lower()


def show_headline(scores: pd.DataFrame, scope: str) -> None:
    """The answer at a glance: the story in plain words (`kweval.stats.headline`), the statistics in an expander."""
    top = caches.summary_headline(ctx, scope, scores) if len(sel.models) >= 2 else None
    top = caches.headline_across_presets(ctx, "kweval", top)  # per-document data: the verdict under every preset
    caption = significance_caption(REVIEWS, caches.compare_metrics(ctx))
    show_headline_card(md(ctx.movie_title(scope)), top, caption, words, extra=across_lines(top))


st.title("Summary")
protocol = choose_protocol(ctx)  # per-document data: kweval or a keyphrase preset (the CLI's --protocol)
meta = ctx.meta(protocol=protocol)
settings = " · ".join(setting_texts(meta, words))
st.caption(
    f"{md(ctx.source_label)} · {sel.agg} aggregation · {md(ctx.match_text())} · k = {sel.k} · {md(settings)} · "
    f"{len(sel.models)} model(s). **Bold**: the best value of each {MOVIE} (and of ALL) per column, here and in the "
    f"downloads. "
    "Hover a column name for its definition; every definition: **docs/metrics.md** below the table."
)
if protocol != "kweval":
    show_protocol_summary(ctx, protocol, meta)
    ctx.finish()
    st.stop()
show_protocol_card(ctx, key="summary_protocol_card")

look_ahead.claim_summary(ctx)  # this τ's work made ahead (speed trick "τ look-ahead"): waited for, or taken back
table, scope, scores = caches.summary_rows(ctx)
show_headline(scores, scope)

st.subheader(f"Every metric, {words.movies.lower()} × models ({sel.agg}) — ALL first")
shown = pd.concat([table[table["movie"] == ALL], table[table["movie"] != ALL]], ignore_index=True)  # the answer first
titles = dict(zip(ctx.dataset.movies["movie"], ctx.dataset.movies["title"]))
if any(str(titles.get(m, m)) != str(m) for m in shown["movie"] if m != ALL):  # the sidebar's names beside the ids
    shown.insert(1, "title", [ctx.movie_title(m) for m in shown["movie"]])
config = number_columns(
    [*metrics, "n_reviews", "n_skipped"], formats={**decimal_formats(shown), "n_reviews": "%d", "n_skipped": "%d"}
)
for column in ("movie", "n_reviews"):  # the data's words on screen; the downloads keep the stable column names
    if words.header(column) != column:
        help_ = (config.get(column) or {}).get("help")
        config[column] = st.column_config.Column(words.header(column), help=help_)
st.dataframe(best_in_bold(shown), hide_index=True, column_config=config, key="summary_table")
UNDEFINED = caches.undefined_metrics(ctx)  # undefined is not zero: "—" in the table, said why, out of charts
for gone in UNDEFINED:
    st.caption(md(undefined.everywhere_note(gone, words.review.lower())) + ".")
explorer_judgments.judged_summary_table(ctx, table)  # the readers' judgments (docs/metrics.md §11), when any
# drawn only when opened (a rerun): 43 kB of Markdown rendered in a closed expander cost a new session's first
# Summary about a second of the browser's time under load (issue 28 item 7; bench/bench_browser.py --only sessions)
doc_box = st.expander(
    f"{METRICS_DOC}: every metric's definition", icon=":material/menu_book:", key="metrics_doc", on_change="rerun"
)
if doc_box.open:
    doc = metrics_doc()
    doc_box.markdown(words.say(doc) if doc is not None else f"{METRICS_DOC} is not shipped with this installation.")
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


intervals = caches.latex_intervals(ctx, tex_columns) if tex_ci != "none" and tex_columns else None  # its spinner here


def export(i: int):
    """The `i`-th of the CSV, Markdown and LaTeX files, made when its button is clicked (a deferred download, in a
    thread without the page: only the formatting, no spinner): a rerun or a τ step builds none of them."""
    return lambda: caches.summary_exports(ctx, table, tex_columns, tex_ci, meta, intervals)[i]


c1.download_button("CSV", export(0), report.download_name("summary", meta, "csv"), "text/csv")
c2.download_button("Markdown", export(1), report.download_name("summary", meta, "md"), "text/markdown")
c3.download_button("LaTeX", export(2), report.download_name("summary", meta, "tex"), "text/x-tex")
report_button(ctx, scope, meta, c4)  # built on request, its stages shown, then offered for download
record_button(ctx, protocol)  # this evaluation kept in the run history (the History page compares runs)
skipped = int(table.loc[table["movie"] == ALL, "n_skipped"].sum())
if skipped:
    st.caption(
        f"{skipped} {words.review.lower()} × model pair(s) without model output are skipped (counted in n_skipped; "
        "see Data)."
    )

# --- small multiples with CIs for the selected movie (or all movies) ---------------------------
st.subheader(f"Per metric, with bootstrap 95% CIs — {md(ctx.movie_title(scope))}")
cis = caches.summary_cis(ctx, scope, scores)
charts.show_bars(charts.metric_bars(ctx, scope, table[table["movie"] == scope].set_index("model"), cis))
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
    options=[m for m in metrics if m not in UNDEFINED],
)
movies_only = table[table["movie"] != ALL]
st.subheader(f"{metric_label(metric)}: {MOVIE} × model")
charts.show_heatmap(charts.movie_heatmap(ctx, metric, movies_only))

# --- slices --------------------------------------------------------------------------------------
st.subheader(f"{metric} by {words.review.lower()} rating and length")
cols = st.columns(2)
for col, by in zip(cols, ("rating", "length")):
    sliced = caches.sliced(ctx, by, metric)
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

look_ahead.plan_summary(ctx, metric, tex_columns if intervals is not None else ())  # τ ± 0.01, in the background
ctx.finish()
