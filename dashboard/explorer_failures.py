"""The explorer's failure views: the category / slice filter read from the URL (links of the Failures page) and the
whole GT list of a review with found / missed marks.  The categories come from `kweval.explain.failures` through
`dashboard.caches`; nothing is decided here."""

from __future__ import annotations

import streamlit as st

from dashboard import failure_caches as caches
from dashboard import failures_view as view
from dashboard.escape import md
from dashboard.state import Ctx
from dashboard.url_state import query_param, set_query_param, url_notice
from kweval.data.vocabulary import vocabulary
from kweval.metrics.categories import CATEGORY_NAMES, GT

FILTER_PARAMS = ("category", "model", "slice")


def _clear() -> None:
    for name in FILTER_PARAMS:
        set_query_param(name, None)
    st.session_state.pop("qp_p", None)


def url_filter(ctx: Ctx) -> set[tuple[str, str]] | None:
    """The (movie, review_id) pairs the URL's ``category`` (with ``model``) and ``slice`` keep, None when the URL has
    neither; a caption says what is filtered, with a button to clear it.  A bad value: one warning, not applied."""
    category, model, spec = (query_param(n) for n in FILTER_PARAMS)
    if model is not None and model not in ctx.selection.models:
        url_notice(f"URL parameter **model**: {md(model)} is not among the selected models; ignored.")
        model = None
    if category is not None and category not in CATEGORY_NAMES:
        url_notice(
            f"URL parameter **category**: unknown category {md(category)} (known: {md(', '.join(CATEGORY_NAMES))}); "
            "ignored."
        )
        category = None
    pairs: set[tuple[str, str]] | None = None
    said = []
    words = vocabulary(ctx.dataset)
    if category is not None:
        pairs = caches.category_reviews(ctx, category, model)
        said.append(view.category_caption(category, model, len(pairs), words))
    if spec:
        try:
            in_slice = caches.slice_reviews(ctx, spec, model)
        except ValueError as exc:
            url_notice(f"URL parameter **slice**: {md(exc)}; ignored.")
        else:
            pairs = in_slice if pairs is None else pairs & in_slice
            who = f" ({md(model)}'s)" if model else ""
            said.append(f"Filtered to the slice **{md(spec)}**{who}: {words.count(len(in_slice))}.")
    if said:
        c1, c2 = st.columns([5, 1], vertical_alignment="center")
        c1.info(" ".join(said))
        c2.button("Clear the filter", on_click=_clear, key="clear_failure_filter")
    return pairs


def gt_marks(ctx: Ctx, movie: str, review: str, model: str | None) -> None:
    """Under a toggle: the review's whole GT list for `model`, each keyword found / missed in the text / absent."""
    if not model:
        return
    if not st.toggle(f"Whole GT list with {md(model)}'s found / missed marks", key=f"gt_all_{movie}_{review}"):
        return
    rows = caches.review_failures(ctx, movie, review, model)
    rows = rows[rows["side"] == GT]
    ranked = ctx.gt_ranked(movie) and vocabulary(ctx.dataset).gt_ranked
    st.html(view.gt_marks_html(rows, ranked))
