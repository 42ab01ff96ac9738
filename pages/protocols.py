"""Protocols (per-document data): one model under every keyphrase preset, where the gap between two protocols comes
from, and which protocols give a published number: the answers of `kweval gap`."""

from __future__ import annotations

import streamlit as st

from dashboard import gap_caches
from dashboard.escape import md
from dashboard.gap_view import document_rows, factor_rows, key_metrics, match_rows, preset_table, waterfall
from dashboard.sidebar import open_page
from dashboard.tables import number_columns
from kweval.io.gap_text import reported_summary
from kweval.keyphrase.conventions import PRESETS
from kweval.lattice.explain import GapError
from kweval.lattice.gap import metric_label

ctx = open_page(__file__)
sel, words = ctx.selection, ctx.words
collections = list(ctx.dataset.movie_ids)
movie = sel.movie if sel.movie in collections else collections[0]
match = ctx.options.match  # the kweval preset is the sidebar's match mode, as on Summary

st.title("Protocols")
st.markdown(
    "The same predictions score differently under each tool's conventions (tokenisation, stemming, repeats, the "
    "P@k cut-off, the macro form, the present rule, …). This page puts one model's numbers under every preset side "
    "by side, splits the gap between two protocols into the conventions that make it, and finds the protocols "
    "behind a published number: the answers of `kweval gap` (docs/protocols.md)."
)
if sel.movie not in collections and len(collections) > 1:
    st.caption(f"{words.movie}: {md(ctx.movie_title(movie))} (choose another in the sidebar).")
model = ctx.url_widget(st.selectbox, "Model", "model", sel.models[0], options=list(sel.models))
metrics = key_metrics(sel.k)

st.subheader(f"{md(model)} under every preset")
values = gap_caches.preset_values(ctx, movie, model, metrics, match)
table = preset_table(values, match)
st.dataframe(table, hide_index=True, key="preset_values", column_config=number_columns(list(table.columns[1:])))
st.caption(
    f"Each cell: the macro value over the {words.reviews.lower()} of {md(ctx.movie_title(movie))} under that preset, "
    "the number `kweval evaluate --protocol P` prints (kweval: the pipeline under the sidebar's match mode); empty "
    "where a preset does not report the metric (pke has no present/absent split)."
)

st.subheader("Where a gap comes from")
c1, c2, c3 = st.columns(3)
with c1:
    start = ctx.url_widget(st.selectbox, "From", "from", "pke", options=list(PRESETS))
with c2:
    end = ctx.url_widget(st.selectbox, "To", "to", "kpeval", options=list(PRESETS))
with c3:
    metric = ctx.url_widget(st.selectbox, "Metric", "metric", "f1@5", options=metrics, format_func=metric_label)
try:
    gap = gap_caches.gap(ctx, movie, model, metric, start, end, match)
except GapError as exc:
    st.info(f"{md(exc)}; choose another metric or protocol.")
else:
    st.markdown(f"**{md(gap['sentence'])}**")
    st.plotly_chart(waterfall(gap), key="gap_waterfall", config={"displaylogo": False})
    st.caption(
        f"From {md(start)}'s value to {md(end)}'s, one step per convention the two set differently: its exact Shapley "
        "value (every mixture of the two protocols scored, so the steps sum to the gap and no order favours one). "
        "A convention that changes nothing on this data has no step."
    )
    rows = factor_rows(gap)
    st.dataframe(rows, hide_index=True, key="gap_factors", column_config=number_columns(["contribution"], fmt="%.6f"))
    documents = gap["documents"]
    if documents:
        st.markdown(f"**The {words.reviews.lower()} that move most** ({metric_label(metric)} of each)")
        ids = [d["id"] for d in documents]
        n = len(ids)
        links = ctx.urls("explorer", movie=[movie] * n, review=ids, protocol=[end] * n)
        st.dataframe(
            document_rows(gap, links),
            hide_index=True,
            key="gap_documents",
            column_config=number_columns(["from", "to", "change"])
            | {"open": st.column_config.LinkColumn("open", display_text="explorer ↗")},
        )
        st.caption(
            f"Each {words.review.lower()}'s own value under both protocols and the convention with the largest share "
            f"of its change; its link opens the explorer on it under {md(end)}."
        )

st.subheader("Which protocols give a published number?")
text = ctx.url_widget(
    st.text_input, "Reported METRIC=VALUE", "reported", "", placeholder="f1@10=0.1744 (or 17.44 as a percentage)"
)
if text:
    try:
        result = gap_caches.reported(ctx, movie, model, text, match)
    except GapError as exc:
        st.warning(md(exc))
    else:
        st.markdown(md(reported_summary(result)))
        found = match_rows(result)
        st.dataframe(found, hide_index=True, key="reported_matches", column_config=number_columns(["value"]))
        st.caption(
            "Every combination of the settings the presets use was scored; a combination matches when its value "
            "rounds to the reported one at its decimals. Rows group combinations with the same value: the settings "
            "they share, and those this data cannot tell apart. Only conventions that can change the metric here "
            "are listed."
        )
ctx.finish()
