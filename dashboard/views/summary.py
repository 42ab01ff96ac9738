"""Summary: movie × model tables of every metric, bars with bootstrap CIs, heatmap, slices, downloads."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.express as px
import plotly.graph_objects as go
import streamlit as st

from dashboard import page_context

from kweval import report, stats, ui
from kweval.aggregate import ALL, aggregate

ctx = page_context()
sel = ctx.selection
ev = ctx.evaluation
metrics = ev.metric_names


@st.cache_data(show_spinner="Bootstrapping 95% CIs…", max_entries=32)
def _cis(key: tuple, how: str, movie: str, models: tuple, _scores: pd.DataFrame) -> pd.DataFrame:
    parts = [stats.bootstrap_summary_ci(_scores[_scores["model"] == m], metrics, how).assign(model=m) for m in models]
    return pd.concat(parts, ignore_index=True)


@st.cache_data(show_spinner=False, max_entries=32)
def _sliced(key: tuple, how: str, by: str, _evaluation) -> pd.DataFrame | None:
    labels = ui.slice_labels(_evaluation.scores, ctx.dataset.reviews, by)
    return None if labels is None else aggregate(ui.sliced_evaluation(_evaluation, labels), how, include_all=False)


# Rendered once per selection, not on every rerun: their cost grows with the number of movies.
@st.cache_data(show_spinner=False, max_entries=32)
def _exports(key: tuple, how: str, k: int, models: tuple, _table: pd.DataFrame) -> tuple[str, str, str]:
    return report.to_csv(_table), report.to_markdown(_table), report.to_latex(_table, caption=f"kweval summary ({how}, k={k})")


st.title("Summary")
st.caption(
    f"{ui.md(ctx.source_label)} · {sel.agg} aggregation · match {sel.match} · k = {sel.k} · "
    f"{len(sel.models)} model(s). Bold in the downloads: the best value of each movie."
)

table = ctx.summary()
table = table[table["model"].isin(sel.models)].reset_index(drop=True)
fmt = {m: st.column_config.NumberColumn(m, format="%.4f") for m in metrics}
st.subheader(f"Every metric, movies × models ({sel.agg})")
st.dataframe(table, hide_index=True, column_config=fmt, key="summary_table")
c1, c2, c3, _ = st.columns([1, 1, 1, 5])
csv_text, md_text, tex_text = _exports(ctx.key, sel.agg, sel.k, tuple(sel.models), table)
c1.download_button("CSV", csv_text, f"kweval_summary_{sel.agg}.csv", "text/csv")
c2.download_button("Markdown", md_text, f"kweval_summary_{sel.agg}.md", "text/markdown")
c3.download_button("LaTeX", tex_text, f"kweval_summary_{sel.agg}.tex", "text/x-tex")
skipped = int(table.loc[table["movie"] == ALL, "n_skipped"].sum())
if skipped:
    st.caption(f"{skipped} review × model pair(s) without model output are skipped (counted in n_skipped; see Data).")

# --- bars with CIs for the selected movie (or all movies) ---------------------------------------
scope = sel.movie if sel.movie in set(table["movie"]) else ALL
st.subheader(f"Per metric, with bootstrap 95% CIs — {ui.md(ctx.movie_title(scope))}")
scores = ctx.scores() if scope != ALL else ev.scores[ev.scores["model"].isin(sel.models)]
cis = _cis(ctx.key, sel.agg, scope, tuple(sel.models), scores)
rows = table[table["movie"] == scope].set_index("model")
fig = go.Figure()
for model in sel.models:
    ci = cis[cis["model"] == model].set_index("metric").reindex(metrics)
    value = rows.loc[model, metrics].to_numpy(dtype="float64") if model in rows.index else np.full(len(metrics), np.nan)
    fig.add_bar(
        name=ui.esc(model), x=metrics, y=value,  # plotly renders some HTML in labels: escaped
        error_y=dict(type="data", symmetric=False, array=np.clip(ci["ci_high"].to_numpy() - value, 0, None),
                     arrayminus=np.clip(value - ci["ci_low"].to_numpy(), 0, None)),
    )
fig.update_layout(barmode="group", yaxis_title=sel.agg, height=380, margin=dict(t=10, b=10), legend_title_text="model")
st.plotly_chart(fig, key="bars")
st.caption("Error bars: percentile bootstrap over reviews (2000 resamples, seed 0); gt_coverage is movie-level and has none.")

# --- heatmap -------------------------------------------------------------------------------------
metric = ctx.url_widget(st.selectbox, "Metric for the heatmap and slices", "metric", ctx.metric,
                        parse=lambda s: s if s in metrics else None, options=metrics)
movies_only = table[table["movie"] != ALL]
per_movie = movies_only.pivot(index="movie", columns="model", values=metric).reindex(index=pd.unique(movies_only["movie"]), columns=list(sel.models))
st.subheader(f"{metric}: movie × model")
heat = px.imshow(per_movie.rename(index=ui.esc, columns=ui.esc), text_auto=".3f", aspect="auto", color_continuous_scale="Viridis", labels=dict(color=metric))
heat.update_layout(height=80 + 40 * len(per_movie), margin=dict(t=10, b=10))
st.plotly_chart(heat, key="heatmap")

# --- slices --------------------------------------------------------------------------------------
st.subheader(f"{metric} by review rating and length")
cols = st.columns(2)
for col, by in zip(cols, ("rating", "length")):
    sliced = _sliced(ctx.key, sel.agg, by, ev)
    if sliced is None:
        col.caption(f"This dataset has no review {by}s.")
        continue
    sliced = sliced[sliced["model"].isin(sel.models)]
    wide = sliced.pivot(index="movie", columns="model", values=metric).reindex(index=pd.unique(sliced["movie"]), columns=list(sel.models))
    wide.insert(0, "reviews", sliced.groupby("movie", sort=False)["n_reviews"].max())
    wide.index.name = by
    col.dataframe(wide, column_config={m: st.column_config.NumberColumn(m, format="%.4f") for m in sel.models})
