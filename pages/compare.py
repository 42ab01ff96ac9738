"""Compare models: paired differences with CIs and tests per metric, per movie, and per review."""

from __future__ import annotations

import streamlit as st

from dashboard import caches, charts
from dashboard.escape import md
from dashboard.protocol_select import choose_protocol, show_protocol_compare, show_verdict_matrix
from dashboard.sidebar import open_page
from dashboard.tables import decimal_formats, number_columns, text_columns
from kweval.io.settings import setting_texts
from kweval.metrics import undefined
from kweval.stats import verdict
from kweval.stats.families import families_in

ctx = open_page(__file__)
sel = ctx.selection
ev = ctx.evaluation
METRICS = caches.compare_metrics(ctx)


st.title("Compare models")
if len(sel.models) < 2:
    st.info("Select at least two models in the sidebar.")
    st.stop()
models = list(sel.models)
c1, c2, c3 = st.columns(3)
a = ctx.url_widget(c1.selectbox, "Reference model A", "a", models[0], options=models)
others = [m for m in models if m != a]
b = ctx.url_widget(
    c2.selectbox,
    f"Model B (scatter, per {ctx.words.movie.lower()}, {ctx.words.reviews.lower()})",
    "b",
    others[0],
    options=others,
)
metric = ctx.url_widget(
    c3.selectbox,
    f"Metric (scatter, per {ctx.words.movie.lower()}, {ctx.words.reviews.lower()})",
    "metric",
    ctx.ndcg_at_k,
    options=METRICS,
)
WORDS = ctx.words
REVIEWS = WORDS.reviews.lower()
MICRO = sel.agg == "micro"
st.caption(
    f"{md(ctx.movie_title(sel.movie))}: differences are B − A over the {REVIEWS} both models were evaluated on "
    "(positive: B higher). "
    + (
        f"Micro aggregation: the set-based and weighted metrics compare their ratio of sums over those {REVIEWS} "
        f"(basis column); ranking metrics compare per-{WORDS.review.lower()} means. "
        if MICRO
        else f"Macro aggregation: every metric compares per-{WORDS.review.lower()} means. "
    )
    + "p: paired randomization test (10 000 sign flips) and paired t-test, Holm-corrected within each family of "
    f"metrics ({md(', '.join(families_in(METRICS)))}; the family column), for each model against A: the same "
    "p-values and intervals as the Summary's headline, the report and `kweval compare`. The interval beside the "
    "Holm p is the paired bootstrap at Holm's level for that metric (CI (Holm)); ci_low / ci_high are the "
    "unadjusted 95% interval. Wins/ties/losses from B's side."
)

for gone in caches.undefined_metrics(ctx):  # undefined is not zero: not compared, said why
    st.caption(md(undefined.everywhere_note(gone, WORDS.review.lower())) + ".")
protocol = choose_protocol(ctx)  # per-document data: kweval or a keyphrase preset (the CLI's --protocol)
st.caption(  # every setting behind these numbers (kweval.io.settings), as the Summary and the downloads say them
    f"k = {sel.k} · {md(ctx.match_text())} · {sel.agg} aggregation · "
    + md(" · ".join(setting_texts(ctx.meta(protocol=protocol), WORDS)))
)
if protocol != "kweval":
    show_protocol_compare(ctx, protocol, a, others)
    ctx.finish()
    st.stop()
res = caches.comparisons(ctx, a, others)
ALIASES = {"mean A": "mean_a", "mean B": "mean_b"}
res = verdict.with_significance(res) if not res.empty else res
st.subheader(f"Verdicts: each model against {md(a)}")
show_verdict_matrix(res.rename(columns=ALIASES), a)
st.subheader(f"Every metric, each model against {md(a)}")
shown = res[[caches.SIDES.get(c, c) for c in verdict.TABLE_COLUMNS]]  # `kweval compare`'s columns, in its order
num = number_columns(
    [c for c in shown.columns if c.startswith(("mean", "diff", "ci_"))],
    aliases=ALIASES,
    formats={**decimal_formats(shown), "ci_level_holm": "%.4f"},
)
num["ci_low"] = {**num["ci_low"], "label": "ci_low (95%, unadjusted)"}
num["ci_high"] = {**num["ci_high"], "label": "ci_high (95%, unadjusted)"}
num |= number_columns([c for c in shown.columns if c.startswith("p_")], fmt="%.2g")
num |= number_columns(["n", "wins", "ties", "losses"], fmt="%d")
num |= text_columns(["significant"])
num["family"] = st.column_config.TextColumn(
    "family", help="the family of metrics Holm's correction counts together (kweval.stats.families)"
)
num["basis"] = st.column_config.TextColumn(
    "basis",
    help=f"what is compared: per-{WORDS.review.lower()} means, or under micro aggregation the ratio of sums of the "
    "metrics that have a micro rule (kweval.stats.aggregated)",
)
st.dataframe(shown, hide_index=True, column_config=num, key="compare_table")

st.subheader(f"{metric} per {WORDS.movie.lower()}: {md(b)} − {md(a)}")
per_movie = caches.per_movie(ctx, a, b, metric)
if not per_movie.empty:
    per_movie = per_movie.assign(title=per_movie["movie"].map(ctx.movie_title))  # the sidebar's names beside the ids
    st.dataframe(
        per_movie[
            [
                "movie",
                "title",
                "n",
                "mean A",
                "mean B",
                "diff",
                "ci_low",
                "ci_high",
                "p_randomization_holm",
                "p_ttest_holm",
                "wins",
                "ties",
                "losses",
            ]
        ],
        hide_index=True,
        column_config=num | {"movie": st.column_config.TextColumn(WORDS.header("movie"))},
        key="per_movie_table",
    )
    st.caption(
        f"Per-{WORDS.review.lower()} means; Holm correction here is across the {WORDS.movies.lower()}; "
        "ci_low / ci_high "
        "are the unadjusted 95% interval."
    )

st.subheader(f"Per {WORDS.review.lower()}: {metric} of {md(a)} (x) vs {md(b)} (y)")
both, scatter, listing = charts.per_review(ctx, a, b, metric, METRICS)
picked = charts.show_scatter(scatter, both, key="scatter")
if picked:
    movie, review = picked
    st.switch_page(ctx.pages["explorer"], query_params=ctx.params(movie=movie, review=review))
st.caption(
    f"Points are jittered slightly (±0.012) so that {REVIEWS} with equal values stay visible; hover shows the exact "
    f"values. Click a point to open that {WORDS.review.lower()} in the explorer."
)

st.subheader(f"{WORDS.reviews} by difference (B − A)")
st.dataframe(
    listing.assign(title=listing["movie"].map(ctx.movie_title))[
        ["open", "movie", "title", "review_id", f"{metric}_a", f"{metric}_b", "difference"]
    ],
    hide_index=True,
    key="review_diffs",
    column_config={
        "open": st.column_config.LinkColumn("open", display_text="explorer ↗"),
        "movie": st.column_config.TextColumn(WORDS.header("movie")),
        "review_id": st.column_config.TextColumn(WORDS.header("review_id")),
        f"{metric}_a": st.column_config.NumberColumn(f"{a} (A)", format="%.4f"),
        f"{metric}_b": st.column_config.NumberColumn(f"{b} (B)", format="%.4f"),
        "difference": st.column_config.NumberColumn("B − A", format="%+.4f"),
    },
)

ctx.finish()
