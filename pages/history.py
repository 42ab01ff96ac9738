"""Run history: each model's key metrics over its recorded runs, the setting changes between runs, and any two runs
compared unit by unit with the statistics of `kweval runs compare`."""

from __future__ import annotations

import streamlit as st

from dashboard import history_chart, history_view
from dashboard.escape import md
from dashboard.sidebar import open_page
from dashboard.style import metric_label, model_colors
from dashboard.tables import number_columns
from kweval.data.vocabulary import vocabulary_for
from kweval.messages import line
from kweval.runs import (
    RunsError,
    change_marks,
    history_metrics,
    lead_sentence,
    metric_history,
    options_line,
    runs_table,
)

ctx = open_page(__file__)
WORDS = ctx.words
st.title("Run history")
try:
    store, every_run, summary = history_view.load_history()
except RunsError as exc:
    st.error(md(line(exc.source, exc.reason)))
    ctx.finish()
    st.stop()
here = history_view.data_reference(ctx)
scope = ctx.url_widget(
    st.radio,
    "Runs shown",
    "scope",
    "data",
    options=["data", "all"],
    format_func={"data": "of the data on screen", "all": "every recorded run"}.get,
    horizontal=True,
)
runs = every_run if scope == "all" else [r for r in every_run if r.dataset_sha256 == here]
st.caption(
    f"{len(runs)} of the {len(every_run)} runs recorded in {md(str(store.path))} (`$KWEVAL_RUNS` chooses the file). "
    "A run is recorded by **Record this run** on the Summary or by `kweval evaluate DATA --record`."
)
if not runs:
    st.info("No run recorded yet here: press **Record this run** on the Summary, or run `kweval evaluate --record`.")
    ctx.finish()
    st.stop()

metrics = history_metrics(runs)
metric = ctx.url_widget(st.selectbox, "Metric", "metric", metrics[0], options=metrics, format_func=metric_label)
models = list(dict.fromkeys(m for r in runs for m in r.models))
st.subheader(f"{metric_label(metric)} of each model over its runs")
figure = history_chart.history_figure(
    metric_history(runs, summary, metric), change_marks(runs), metric, model_colors([*ctx.dataset.model_names, *models])
)
st.plotly_chart(figure, key="history_chart", config={"displaylogo": False})
st.caption(
    f"Each point is a run's value over all its {WORDS.reviews.lower()}; bands: 95% bootstrap intervals over the "
    f"{WORDS.reviews.lower()} (recorded with the key metrics). ⚙ and a dotted line: a setting changed from the run "
    "before (hover for which)."
)
st.dataframe(runs_table(runs).iloc[::-1], hide_index=True, key="runs_table")

st.subheader("Compare two runs")
ids = [r.id for r in runs]
by_id = {r.id: r for r in runs}
label = {r.id: f"{r.name} [{r.id}]" for r in runs}.get
c1, c2, c3 = st.columns(3)
before_last = ids[max(len(ids) - 2, 0)]
a = ctx.url_widget(c1.selectbox, "Run A (the reference)", "a", before_last, options=ids, format_func=label)
b = ctx.url_widget(c2.selectbox, "Run B", "b", ids[-1], options=ids, format_func=label)
run_a, run_b = by_id[a], by_id[b]
common = [m for m in run_a.models if m in run_b.models]
model = None
if len(common) > 1 or (not common and (len(run_a.models) > 1 or len(run_b.models) > 1)):
    pairs = common or [f"{x}:{y}" for x in run_a.models for y in run_b.models]
    model = ctx.url_widget(c3.selectbox, "Model", "model", pairs[0], options=pairs)
try:
    comparison = history_view.comparison(store, run_a, run_b, model)
except RunsError as exc:
    st.warning(md(line(exc.source, exc.reason)))
    ctx.finish()
    st.stop()
words = vocabulary_for(run_a.per_document)
st.markdown(f"**{md(lead_sentence(comparison, words))}**")
st.caption(
    md(options_line(comparison))
    + f". B − A on the {words.reviews.lower()} both runs scored, under A's {comparison.how} aggregation: 95% paired "
    "bootstrap interval, randomization test (10 000 sign flips) Holm-corrected within each family of metrics; the same "
    "numbers "
    "as `kweval runs compare`." + "".join(f" {md(note)}." for note in comparison.notes)
)
COLUMNS = ["metric", "n", "a", "b", "difference", "ci_low", "ci_high", "p_holm", "wins", "ties", "losses"]
shown = comparison.table[COLUMNS]
config = number_columns(["a", "b", "difference", "ci_low", "ci_high"], fmt="%.4f")
config |= number_columns(["p_holm"], fmt="%.2g") | number_columns(["n", "wins", "ties", "losses"], fmt="%d")
st.dataframe(shown, hide_index=True, column_config=config, key="history_compare")
for title, rows, key in (
    ("got most worse", comparison.worst(10), "worse"),
    ("got most better", comparison.best(10), "better"),
):
    st.markdown(f"**{WORDS.reviews} that {title} on {md(comparison.metric)} (B − A)**")
    if rows.empty:
        st.caption("None.")
        continue
    links = history_view.run_links(ctx, run_b, [comparison.model_a, comparison.model_b], rows)
    st.dataframe(
        rows.assign(open=links)[["open", "movie", "review_id", "a", "b", "difference"]],
        hide_index=True,
        key=f"history_{key}",
        column_config={
            "open": st.column_config.LinkColumn("open", display_text="explorer ↗"),
            "movie": st.column_config.TextColumn(words.header("movie")),
            "review_id": st.column_config.TextColumn(words.header("review_id")),
            "a": st.column_config.NumberColumn(f"A ({comparison.model_a})", format="%.4f"),
            "b": st.column_config.NumberColumn(f"B ({comparison.model_b})", format="%.4f"),
            "difference": st.column_config.NumberColumn("B − A", format="%+.4f"),
        },
    )
st.caption(f"explorer ↗ opens the {WORDS.review.lower()} at run B's settings (k, match, aggregation, semantic τ).")
ctx.finish()
