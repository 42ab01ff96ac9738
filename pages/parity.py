"""Notebook parity: the seed notebooks' numbers beside the corrected ones, and why they differ."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import streamlit as st

from dashboard import caches
from dashboard.escape import md
from dashboard.sidebar import open_page
from dashboard.style import FLAG_BACKGROUND
from kweval import legacy

ctx = open_page(__file__)
sel = ctx.selection
dataset = ctx.dataset.subset(None if sel.movie == "ALL" else [sel.movie], list(sel.models))


st.title("Notebook parity")
st.markdown(
    "The seed notebooks published numbers that kweval does not reproduce in its normal mode, because their code "
    "has defects (docs/metrics.md §8). `kweval evaluate --legacy` replays their code exactly, defects included; "
    "this page "
    "puts both side by side and shows each defect on a review of the loaded data. "
    f"Scope: **{md(ctx.movie_title(sel.movie))}**, models {md(', '.join(sel.models))}."
)

table = caches.parity_table(ctx, dataset)
if table.empty:
    st.info("Nothing to compare for this selection.")
    st.stop()
flips = table.drop_duplicates(["movie", "metric"])
flips = flips[flips["flips"]][["movie", "metric", "legacy_winner", "corrected_winner"]]
c1, c2 = st.columns([3, 2])
c1.subheader("Legacy vs corrected (macro)")
c1.dataframe(
    # a translucent red reads on light and dark themes alike (the text keeps the theme's own colour)
    table.style.apply(lambda row: [f"background-color: {FLAG_BACKGROUND}" if row["flips"] else ""] * len(row), axis=1),
    hide_index=True,
    column_config={c: st.column_config.NumberColumn(c, format="%.4f") for c in ("legacy", "corrected", "difference")},
    key="parity_table",
)
c2.subheader("Conclusions that flip")
if flips.empty:
    c2.success("No winner changes between the two modes for this selection.")
else:
    c2.dataframe(flips, hide_index=True, key="flips_table")
    c2.caption(
        "Rows in red above: the best model of a metric is a different one once the metric is computed as defined."
    )

st.subheader("Each defect, on a real review")


def fmt(value: object) -> str:
    return f"{value:.4f}" if isinstance(value, float) else md(value)


def defect(
    title: str,
    finder: Callable,
    lines: Callable[[Any], list[str]],
    expanded: bool = False,
    intro: str = "",
    button: str = "",
    button_key: str = "",
) -> None:
    """One defect's expander: `finder`'s example on the selection (on a button press when `button`), told by `lines`."""
    with st.expander(title, expanded=expanded):
        if intro:
            st.markdown(intro)
        if button and not st.button(button, key=button_key):
            return
        example = caches.parity_example(ctx, finder, dataset)
        if example is None:
            st.info(
                "The loaded data holds no review that shows this defect; see docs/notebook-parity.md for a made-up "
                "case."
            )
            return
        if isinstance(example, legacy.ReviewExample):
            st.markdown(
                f"Movie **{md(example.movie)}**, model **{md(example.model)}**, review **{md(example.review_id)}**."
            )
        st.markdown("\n".join(f"- {line}" for line in lines(example) if line))


def zip_lines(ex: legacy.ZipPairingExample) -> list[str]:
    lines = [
        f"The notebook pairs review #{fmt(ex.review_index)} with GT keyword #{fmt(ex.review_index)} "
        f"**{md(ex.gt_keyword)}** and compares its predictions with its characters: "
        f"{md(', '.join(repr(c) for c in ex.compared_against[:12]))} …",
        f"Only the first {fmt(ex.n_gt)} of {fmt(ex.n_reviews)} reviews are scored at all; the rest are dropped by "
        f"`zip`.",
    ]
    if ex.corrected:  # the finder scores at its own k (5), whatever the sidebar's k
        lines.append(
            f"Legacy: {fmt(ex.legacy.matched_score)} of {fmt(ex.legacy.score_sum)} score units count as matched; "
            f"scored as defined: w_precision {fmt(ex.corrected['w_precision'])}, "
            + ", ".join(f"{md(name)} {fmt(value)}" for name, value in ex.corrected.items() if name.startswith("ndcg@"))
            + "."
        )
    return lines


defect(
    "1 · Each review is scored against the letters of one GT keyword (zip)",
    legacy.find_zip_pairing_example,
    zip_lines,
    expanded=True,
)
defect(
    "2 · IDCG without the discount",
    legacy.find_undiscounted_idcg_example,
    lambda ex: [
        f"IDCG in the code: {fmt(ex.idcg_notebook)}; IDCG as the notebook's prose defines it: {fmt(ex.idcg_spec)}.",
        f"nDCG: notebook {fmt(ex.ndcg_notebook)}, with the defined IDCG {fmt(ex.ndcg_notebook_spec_idcg)} (above "
        f"1), as defined {fmt(ex.ndcg_spec)}.",
    ],
)
defect(
    "3 · One GT keyword credited many times",
    legacy.find_many_to_one_example,
    lambda ex: [
        f"GT keyword **{md(ex.gt_keyword)}** (rank {fmt(ex.gt_rank)}) is credited {fmt(ex.times_credited)} times, "
        f"at positions {md(ex.positions)}.",
        f"nDCG: notebook {fmt(ex.ndcg_notebook)}, one-to-one {fmt(ex.ndcg_spec)}. {fmt(ex.n_reviews_affected)} of "
        f"{fmt(ex.n_reviews_scanned)} reviews scanned are affected.",
    ],
)
defect(
    "4 · ASCII-only normalization",
    legacy.find_ascii_normalization_example,
    lambda ex: [
        f"The {md(ex.source)} keyword **{md(ex.keyword)}** becomes {md(repr(ex.legacy))} in the notebooks and "
        f"{md(repr(ex.unicode))} as defined.",
        f"{fmt(ex.n_keywords_affected)} of {fmt(ex.n_keywords_checked)} distinct keywords checked normalize "
        f"differently.",
    ],
)
defect(
    "5 · Recall counts matched predictions, not matched GT keywords",
    legacy.find_recall_counts_predictions_example,
    lambda ex: [
        f"{fmt(ex.matched_predictions)} predictions match, but only {fmt(ex.matched_gt)} distinct GT keywords: "
        f"recall {fmt(ex.recall_notebook)} in the notebook, {fmt(ex.recall_one_to_one)} one-to-one.",
    ],
)
defect(
    "6 · Semantic pooling over padding, and two thresholds",
    legacy.find_semantic_padding_example,
    lambda ex: [
        f"Keyword **{md(ex.keyword)}** among {md(ex.keywords)} gets {fmt(ex.padding_tokens)} padding token(s) in "
        f"its review's batch.",
        f"Its best cosine to the GT: {fmt(ex.best_gt_cosine_padded)} padded, {fmt(ex.best_gt_cosine_alone)} alone"
        + (f" (it crosses the notebook's {legacy.LEGACY_SEMANTIC_THRESHOLD})." if ex.crosses_threshold else "."),
        f"The review's semantic P/R/F1: {', '.join(fmt(v) for v in ex.sem_prf_at_low)} at "
        f"{legacy.LEGACY_SEMANTIC_THRESHOLD}, "
        f"{', '.join(fmt(v) for v in ex.sem_prf_at_default)} at {legacy.NOTEBOOK_DEFAULT_THRESHOLD}.",
    ],
    intro="The notebook mean-pools token states without the attention mask, so padding tokens enter each keyword's "
    "vector, and its cells use threshold 0.75 in one place and 0.5 in another. kweval uses the model's own pooling "
    "and one threshold.",
    button="Find a live example (loads the embedding model)",
    button_key="semantic_example",
)
defect(
    "7 · SAS averages the model's own scores as if they were sentiments",
    legacy.find_sas_score_example,
    lambda ex: [
        f"Scores {', '.join(fmt(v) for v in ex.scores)} are averaged as sentiment {fmt(ex.sentiment_pred_notebook)}; "
        f"VADER on the keywords gives {', '.join(fmt(v) for v in ex.vader_values)}, mean "
        f"{fmt(ex.sentiment_pred_spec)}.",
        f"sas_keywords: notebook {fmt(ex.sas_keywords_notebook)}, as defined {fmt(ex.sas_keywords_spec)}.",
    ],
)
st.caption(
    "Reproduce the published table: `kweval evaluate DATA --legacy --models base,reranker --movies SW_Episode6`. "
    "More in docs/notebook-parity.md."
)

ctx.finish()
