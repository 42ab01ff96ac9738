"""Failures: where each model's keyword slots go and what happens to the GT keywords (docs/metrics.md §10), each
segment a link to the explorer filtered to its reviews; then the slices where a model does worst."""

from __future__ import annotations

import streamlit as st

from dashboard import charts
from dashboard import failure_caches as caches
from dashboard import failures_view as view
from dashboard.escape import md
from dashboard.sidebar import open_page
from kweval.data.vocabulary import vocabulary
from kweval.metrics.categories import GT, PREDICTION

ctx = open_page(__file__)
sel = ctx.selection
words = vocabulary(ctx.dataset)
reviews_word = words.reviews.lower()
models = list(sel.models)

st.title("Why did my model fail?")
if ctx.preset is not None:
    st.info(
        f"Under the **{ctx.preset}** preset (chosen on Summary or Compare; it travels in every link): every "
        f"prediction and gold phrase as `kweval evaluate DATA --protocol {ctx.preset}` scores it — dropped by the "
        "preset's filter (invalid) or as a repeat (duplicate), a match within k (hit) or beyond, or no gold phrase "
        "with the same words (off the reference); a gold phrase found, or missed in / not in the text by its present "
        "rule (just missed under a preset without one: pke). The preset matches exactly on its own words, so no "
        "keyword is 'taken' or 'near'.",
        icon=":material/rule:",
    )
st.caption(
    f"{md(ctx.movie_title(sel.movie))} · k = {sel.k} · {md(ctx.match_text())}"
    + (f" · semantic τ = {ctx.options.threshold:g}" if ctx.options.semantic and ctx.preset is None else "")
    + ". Every predicted keyword (before cleaning) and every GT keyword of each "
    f"{words.review.lower()} × model in one failure category (docs/metrics.md §10). "
    "Click a segment (or its link below the chart) to open those "
    f"{reviews_word} in the explorer, filtered."
)

counts = caches.failure_counts(ctx)
st.markdown(view.headline(counts, models, reviews_word))

for side, title, unit in (
    (PREDICTION, "Where the predicted keywords go", "predicted keywords"),
    (GT, "What happens to the GT keywords", "GT keywords"),
):
    frame = view.bar_frame(counts, side, models)
    keys = view.segment_keys(models, side)
    urls = ctx.urls("explorer", category=[c for _, c in keys], model=[m for m, _ in keys], hl=[m for m, _ in keys])
    charts.show_svg(charts.failure_bars(frame, title, unit, dict(zip(keys, urls))))  # a segment: a link to its rows
    if side == PREDICTION and ctx.options.grounding:  # off the reference: a gap in it, or a hallucination?
        st.markdown(view.off_reference_sentences(caches.off_reference_grades(ctx), models))
    with st.expander(f"Open a segment in the explorer ({unit})", expanded=side == PREDICTION):
        st.markdown(view.links_markdown(view.segment_links(counts, models, urls, side), unit=unit.split()[-1][:-1]))

st.header("Slices where a model does worst")
metric_names = caches.slice_metrics(ctx)  # the evaluation's, or the preset's per-document metrics
c1, c2 = st.columns(2)
model = ctx.url_widget(
    c1.selectbox,
    "Model",
    "model",
    models[0],
    options=models,
    format_func=md,
)
metric = ctx.url_widget(
    c2.selectbox,
    "Metric",
    "metric",
    next((m for m in (ctx.ndcg_at_k, f"f1@{sel.k}") if m in metric_names), metric_names[0]),
    options=metric_names,
)
try:
    found = caches.worst_slices(ctx, model, metric)
except ImportError as exc:  # sliceline not installed
    st.warning(f"Slice discovery unavailable: {md(exc)}")
    found = None
if found is not None:
    st.caption(view.slices_caption(found, model, metric, words, ctx.preset))
    shown = found.iloc[1:].copy()
    if shown.empty:
        st.info(f"No slice of {md(model)}'s {reviews_word} is worse on {md(metric)} beyond its CI.")
    else:
        shown["open"] = ctx.urls(
            "explorer", slice=shown["slice"].tolist(), model=[model] * len(shown), hl=[model] * len(shown)
        )
        st.dataframe(
            shown[["open", "slice", "n_reviews", "value", "ci_low", "ci_high", "overall", "gap"]],
            hide_index=True,
            key="slices_table",
            column_config={
                "open": st.column_config.LinkColumn("open", display_text="explorer ↗"),
                **{
                    c: st.column_config.NumberColumn(c, format="%.3f")
                    for c in ("value", "ci_low", "ci_high", "overall", "gap")
                },
            },
        )

ctx.finish()
