"""Review explorer: reviews with highlighted matches, each model's ranked keywords and metrics."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from dashboard import cards_ahead, explorer_failures, explorer_judgments, explorer_responses, review_card
from dashboard.escape import md
from dashboard.review_tables import DIRECTIONAL_SORTS, PER_PAGE, SORTS, filter_reviews, keep_reviews, paginate
from dashboard.selection import format_tau
from dashboard.sidebar import open_page
from dashboard.url_state import query_param, set_query_param

ctx = open_page(__file__)
sel = ctx.selection
ev = ctx.evaluation
PRESET = ctx.preset  # a keyphrase preset carried by the links (Summary's choice): its numbers and decisions
metric = review_card.sort_metric(ctx)  # nDCG@k; F1@k under a preset
SEM = ctx.options.semantic and PRESET is None  # what was evaluated (the sidebar's choice, unless unavailable)
SAS = ctx.options.sentiment and PRESET is None
WORDS = ctx.words  # Movie/Review or Collection/Document, ranked GT or not (kweval.data.vocabulary)
REVIEWS = WORDS.reviews.lower()


st.title(f"{WORDS.review} explorer")
table = review_card.reviews_table(ctx)
keywords = review_card.keywords(ctx)
scores = review_card.card_scores(ctx)
if PRESET is not None:
    st.info(
        f"Under the **{PRESET}** preset (chosen on Summary or Compare; it travels in every link): each "
        f"{WORDS.review.lower()}'s metrics are those of `kweval evaluate DATA --protocol {PRESET} --per-review`, and "
        "each prediction is marked as that preset decides it: dropped by its filter or de-duplication, a match (→ the "
        "gold phrase it found) or not, and beyond k when its place in the preset's scored list is past the cut-off. "
        f"Its metrics are P, R and F1, so the sort's nDCG is its F1@{sel.k} here.",
        icon=":material/rule:",
    )
st.caption(
    f"{md(ctx.movie_title(sel.movie))} · {len(table):,} evaluated {REVIEWS} · k = {sel.k} · {md(ctx.match_text())}. "
    "Marked words: the chosen model's predicted keywords that matched a GT keyword (each model's list also names "
    + ("the GT keyword, its 0-based rank, " if WORDS.gt_ranked else "the GT keyword it matched, ")
    + "and why an unmatched keyword did not match, e.g. when an earlier keyword already took that GT keyword)."
    + (
        f" Semantic: each keyword's nearest GT keyword and their cosine, marked ✓ when above τ = "
        f"{format_tau(ctx.options.threshold)}."
        if SEM
        else ""
    )
    + (
        f" Sentiment: each keyword's VADER value v(x) beside the {WORDS.review.lower()} text's and the GT mean; the "
        f"{WORDS.review.lower()}'s "
        "`sas_keywords` / `sas_text` are among the metrics."
        if SAS
        else ""
    )
)

marked = ctx.url_widget(
    st.radio,
    "Mark the matches of",
    "hl",
    sel.models[0] if sel.models else None,
    options=list(sel.models),
    horizontal=True,
    format_func=md,
    help="Highlights are per model: a word is marked only if this model matched it.",
)

review = query_param("review")
if review:
    st.button(f"← All {REVIEWS}", on_click=set_query_param, args=("review", None))
    found = table[table["review_id"] == review]
    if found.empty:
        st.warning(
            f"{WORDS.review} {md(review)} is not among the evaluated {REVIEWS} of {md(ctx.movie_title(sel.movie))}."
        )
    for _, row in found.iterrows():
        review_card.review_card(ctx, row, keywords, scores, marked, links=True)
        explorer_responses.raw_responses(ctx, row["movie"], row["review_id"])
        explorer_failures.gt_marks(ctx, row["movie"], row["review_id"], marked)
    if not found.empty:  # grading: one review at a time
        explorer_judgments.judge_panel(ctx, str(found.iloc[0]["movie"]), review, marked, keywords)
    st.stop()

in_filter = explorer_failures.url_filter(ctx)  # a Failures page segment or slice: category / model / slice

c1, c2, c3, c4 = st.columns([2, 3, 2, 1], vertical_alignment="bottom")  # room for "Nothing matched" on one line
sort = ctx.url_widget(
    c1.selectbox,
    "Sort",
    "sort",
    "review order",
    options=list(SORTS),
    format_func=lambda s: WORDS.say(s if PRESET is None else s.replace("nDCG", f"F1@{sel.k}")),  # the data's words
    resets=("p",),
)
query = ctx.url_widget(
    c2.text_input,
    "Search the text",
    "q",
    "",
    placeholder=f"words in the {WORDS.review.lower()}, title or id",
    resets=("p",),
)
none = ctx.url_widget(
    c3.checkbox,
    "Nothing matched",
    "none",
    False,
    parse=lambda s: s == "1",
    fmt=lambda v: "1" if v else "0",
    resets=("p",),
    help=f"Only {REVIEWS} where no selected model matched any GT keyword.",
)
per_page = ctx.url_widget(
    c4.selectbox,
    "Per page",
    "pp",
    PER_PAGE[0],
    options=list(PER_PAGE),
    parse=int,
    resets=("p",),
    help=f"{WORDS.reviews} shown a page: the fewer, the quicker a page turn.",
)
pair = None
if sort in ("largest disagreement", *DIRECTIONAL_SORTS) and len(sel.models) >= 2:
    d1, d2, _ = st.columns([2, 2, 2])
    a = ctx.url_widget(
        d1.selectbox,
        "Model A",
        "a",
        sel.models[0],
        options=list(sel.models),
    )
    b = ctx.url_widget(
        d2.selectbox,
        "Model B",
        "b",
        sel.models[1],
        options=list(sel.models),
    )
    pair = (a, b)
    if sort in DIRECTIONAL_SORTS:
        worse, better = (pair[i] for i in DIRECTIONAL_SORTS[sort])
        st.caption(
            f"Only {REVIEWS} where {md(worse)} scores lower than {md(better)} on {md(metric)}, the largest gap first."
        )

shown = filter_reviews(table, metric, sel.models, sort=sort, query=query, nothing_matched=none, pair=pair)
shown = keep_reviews(shown, in_filter)


@st.fragment
def page_of_cards(shown: pd.DataFrame, sort: str, marked: str | None, per_page: int) -> None:
    """The pager and the page's cards: a page turn reruns only this fragment (the sidebar, the filters and the
    tables of the whole selection above are the last full run's, unchanged by the page number), so a turn builds
    and sends only the new page's cards.  `shown`: the filtered, sorted reviews; `sort` names their order; `per_page`:
    the cards a page (the "Per page" choice, outside: a new choice starts again at page 1)."""
    n_pages = max(1, -(-len(shown) // per_page))
    if st.session_state.get("qp_p", 1) > n_pages:
        st.session_state["qp_p"] = n_pages
    p1, p2 = st.columns([1, 5], vertical_alignment="bottom")
    page = ctx.url_widget(
        p1.number_input, f"Page (of {n_pages})", "p", 1, parse=int, min_value=1, max_value=n_pages, step=1
    )
    rows, page, n_pages = paginate(shown, page, per_page)
    p2.caption(
        f"{len(shown):,} {WORDS.review.lower()}(s) match · page {page} of {n_pages} · sorted by {md(WORDS.say(sort))}"
    )
    cards_ahead.claim(ctx, rows, marked)  # made ahead (speed trick "page look-ahead"): waited for, or taken back
    cards = review_card.page_cards(ctx, rows, keywords, scores, marked)  # the page's data asked for once
    for (_, row), card in zip(rows.iterrows(), cards):
        with st.container(border=True):
            st.html(card)
            explorer_responses.raw_responses(ctx, row["movie"], row["review_id"])
            # the whole GT list's toggle is the opened review's (above): one widget less per card, ~10% of a turn
            if st.button(f"Open this {WORDS.review.lower()}", key=f"open_{row['movie']}_{row['review_id']}"):
                set_query_param("review", str(row["review_id"]))
                st.rerun(scope="app")  # the single review's view is the page's, not this fragment's
    following = paginate(shown, page + 1, per_page)[0] if page < n_pages else shown.iloc[0:0]
    cards_ahead.plan(ctx, following, keywords, scores, marked)  # the next page's cards, in the background


style = review_card.card_style(ctx)  # the cards' table style: once, outside the fragment (a turn does not re-send it)
if style:
    st.html(style)
page_of_cards(shown, sort, marked, per_page)
ctx.finish()
