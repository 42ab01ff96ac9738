"""Summary: movie × model tables of every metric, bars with bootstrap CIs, heatmap, slices, downloads."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from dashboard import caches, charts
from dashboard.escape import md
from dashboard.protocol import show_protocol_card
from dashboard.sidebar import open_page
from dashboard.style import metric_label
from dashboard.tables import best_in_bold, number_columns
from kweval.evaluation.aggregate import ALL
from kweval.io import report

ctx = open_page(__file__)
sel = ctx.selection
ev = ctx.evaluation
metrics = ev.metric_names


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


intervals = caches.latex_intervals(ctx, tex_columns) if tex_ci != "none" and tex_columns else None
csv_text, md_text, tex_text = caches.summary_exports(ctx, table, tex_columns, tex_ci, meta, intervals)
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
cis = caches.summary_cis(ctx, scope, scores)
fig = charts.metric_bars(ctx, scope, table[table["movie"] == scope].set_index("model"), cis)
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
heat = charts.movie_heatmap(ctx, metric, movies_only)
st.plotly_chart(heat, key="heatmap", config={"displaylogo": False})

# --- slices --------------------------------------------------------------------------------------
st.subheader(f"{metric} by review rating and length")
cols = st.columns(2)
for col, by in zip(cols, ("rating", "length")):
    sliced = caches.sliced(ctx, by)
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
