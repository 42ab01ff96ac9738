"""Review explorer: reviews with highlighted matches, each model's ranked keywords and metrics."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from dashboard.escape import esc, fmt_num, md
from dashboard.highlight import matched_tooltips, review_html
from dashboard.keyword_html import gt_top_html, keyword_list_html, keyword_table_html, model_grid_html, sentiment_line
from dashboard.review_tables import DIRECTIONAL_SORTS, SORTS, filter_reviews, keyword_details, paginate, review_table
from dashboard.selection import format_tau
from dashboard.sidebar import open_page
from dashboard.state import query_param
from dashboard.style import model_colors
from kweval.explain import why
from kweval.text import present

ctx = open_page(__file__)
sel = ctx.selection
ev = ctx.evaluation
metric = ctx.ndcg_at_k
REVIEW_METRICS = [
    "precision",
    "recall",
    "f1",
    "w_f1",
    metric,
    f"p@{sel.k}",
    f"ap@{sel.k}",
    "rr",
    *ctx.options.extra_metrics(),
]
SEM = ctx.options.semantic  # what was evaluated (the sidebar's choice, unless the metrics were unavailable)
SAS = ctx.options.sentiment
if SAS:
    REVIEW_METRICS.append("sent_pred")  # mean v over the model's keywords: what sas_* compare with the references


# Shared, not copied on every rerun (cache_data would unpickle ≈100 ms of tables for all DNLP movies): read-only here.
@st.cache_resource(show_spinner=False, max_entries=16)
def _table(key: tuple, movie: str, models: tuple, _scores: pd.DataFrame, _reviews: pd.DataFrame) -> pd.DataFrame:
    return review_table(_scores, _reviews, movie, list(models), metric)


@st.cache_resource(show_spinner=False, max_entries=16)
def _keywords(key: tuple, movie: str, models: tuple, _keywords: pd.DataFrame) -> pd.DataFrame:
    kw = _keywords[_keywords["model"].isin(models)]
    kw = kw if movie == "ALL" else kw[kw["movie"] == movie]
    return (
        kw[["movie", "review_id", "model", "position", "keyword", "norm", "gt_rank", "gt_keyword"]]
        .set_index(["movie", "review_id"])
        .sort_index()
    )


@st.cache_data(show_spinner=False, max_entries=256)
def _details(
    key: tuple, movie: str, review: str, models: tuple, _rows: pd.DataFrame, text: object
) -> tuple[pd.DataFrame, float, float]:
    """(the review's keywords with nearest GT keyword, cosine and v(x); v(review text); the movie's GT mean v).

    The vectors come from the persistent embedding store the evaluation filled (no model load when warm).
    """
    from kweval.embeddings import semantic
    from kweval.evaluation import sentiment

    gt = own_gt(movie, review)
    rows = _rows.reset_index()
    vectors = None
    if SEM:
        texts = list(dict.fromkeys(t for t in [*rows["norm"], *gt["norm"]] if isinstance(t, str) and t))
        vectors = (
            dict(
                zip(
                    texts,
                    semantic.embed_texts(
                        texts, model_id=ctx.options.embedding_model, backend=ctx.options.embedding_backend
                    ),
                )
            )
            if texts
            else {}
        )
    details = keyword_details(rows, gt, vectors, ctx.options.threshold, sentiment=SAS)
    if not SAS:
        return details, float("nan"), float("nan")
    return details, sentiment.text_value(text), sentiment.gt_mean_value(gt)


def own_gt(movie: str, review: str) -> pd.DataFrame:
    """The GT list the review is scored against: its own (per-document GT) or its movie's."""
    gt = ev.ground_truth[ev.ground_truth["movie"] == movie]
    own = gt[gt["review_id"] == review]
    return own if len(own) else gt[gt["review_id"].isna()]


def own_gt_html(movie: str, review: str, text: object) -> str:
    """A document's own GT list, each keyword marked present (● occurs in the text) or absent (○); '' for movie-level
    GT."""
    gt = own_gt(movie, review)
    if not len(gt) or gt["review_id"].isna().all():
        return ""
    flags = present.present_flags(gt["norm"].tolist(), text if isinstance(text, str) else None, ctx.options.match)
    items = " · ".join(f"{'●' if f else '○'} {esc(k)}" for k, f in zip(gt["keyword"], flags))
    return (
        f'<div style="font-size:0.85em;margin-top:0.3rem"><b>Own ground truth ({len(gt)}; ● in the text, ○ '
        f"absent):</b> "
        f"{items}</div>"
    )


@st.cache_data(show_spinner=False, max_entries=512)
def _reasons(key: tuple, movie: str, review: str, models: tuple, _rows: pd.DataFrame) -> pd.DataFrame:
    """The review's keywords with why each matched or not (kweval.explain.why: per model, from the matching itself)."""
    return why.match_reasons(_rows.reset_index(), own_gt(movie, review), ctx.options.match)


def _set(param: str, value: str | None) -> None:
    if value is None:
        st.query_params.pop(param, None)
    else:
        st.query_params[param] = value


@st.cache_data(show_spinner=False, max_entries=512)
def _card_html(
    key: tuple,
    movie: str,
    review: str,
    models: tuple,
    marked: str | None,
    _row: pd.Series,
    _kw: pd.DataFrame,
    _scores: pd.DataFrame,
) -> tuple[str, tuple]:
    """(a review card's HTML, the models with output for the review): one per evaluation, review, models and
    marked model, so a rerun (another page of the list, a widget) does not rebuild the cards it shows again."""
    row, kw, scores = _row, _kw, _scores
    key = (row["movie"], row["review_id"])
    rows = kw.loc[[key]] if key in kw.index else kw.iloc[0:0]
    rows = _reasons(ctx.key, row["movie"], row["review_id"], tuple(sel.models), rows)
    mine = scores[(scores["movie"] == row["movie"]) & (scores["review_id"] == row["review_id"])].set_index("model")
    rating = "" if pd.isna(row["rating"]) else f" · rating {row['rating']:g}"
    title = f" · “{esc(row['title'])}”" if isinstance(row["title"], str) else ""
    head = (
        f'<div style="font-weight:600">{esc(WORDS.review)} {esc(row["review_id"])}{title}<span '
        f'style="font-weight:400;opacity:0.7"> · {esc(ctx.movie_title(row["movie"]))}{rating} · '
        f"{int(row['length'])} chars</span></div>"
    )
    extra = ""
    if SEM or SAS:
        details, text_v, gt_v = _details(ctx.key, row["movie"], row["review_id"], tuple(sel.models), rows, row["text"])
        extra = sentiment_line(text_v, gt_v) if SAS else ""
    cells = []
    for model in sel.models:
        swatch = (
            '<span style="display:inline-block;width:0.7em;height:0.7em;border-radius:50%;'
            f'background:{COLORS.get(model, "grey")};margin-right:0.3em"></span>'
        )
        if model not in mine.index:
            cells.append(
                f'<div>{swatch}<b>{esc(model)}</b><div style="opacity:0.7">skipped: no output for this '
                f"{esc(WORDS.review.lower())}</div></div>"
            )
            continue
        m = mine.loc[model]
        vals = " · ".join(f"{esc(name)} {fmt_num(m[name])}" for name in REVIEW_METRICS if name in m)
        if SEM or SAS:
            listing = keyword_table_html(
                details[details["model"] == model], sel.k, SEM, SAS, ctx.options.threshold, words=WORDS
            )
        else:
            listing = keyword_list_html(rows[rows["model"] == model], sel.k, words=WORDS)
        cells.append(
            f'<div>{swatch}<b>{esc(model)}</b><div style="font-size:0.85em;opacity:0.8">{vals}</div>{listing}</div>'
        )
    gt = own_gt(row["movie"], row["review_id"])
    marks = (
        f'<div style="font-size:0.85em;opacity:0.75">Marked: the words of {esc(marked)}’s matched keywords.</div>'
        if marked
        else ""
    )
    text = review_html(row["text"], matched_tooltips(rows, model=marked, words=WORDS) if marked else {})
    own = own_gt_html(row["movie"], row["review_id"], row["text"])
    side = (
        f'<div style="display:flex;flex-wrap:wrap;gap:1rem"><div style="flex:3 1 '
        f'18rem;min-width:0">{marks}{text}{own}</div>'
        f'<div style="flex:1 1 12rem">{gt_top_html(gt, sel.k, rows, COLORS, words=WORDS)}</div></div>'
    )
    return head + side + extra + model_grid_html(cells, 22 if (SEM or SAS) else 16), tuple(
        m for m in sel.models if m in mine.index
    )


def review_card(
    row: pd.Series, kw: pd.DataFrame, scores: pd.DataFrame, marked: str | None, links: bool = False
) -> None:
    """One review: header, the text with `marked`'s matches, the movie's top-k GT, per model its metrics and keywords
    (all escaped)."""
    html, evaluated = _card_html(ctx.key, row["movie"], row["review_id"], tuple(sel.models), marked, row, kw, scores)
    st.html(html)
    if links:
        cols = st.columns(min(len(sel.models), 4) or 1)
        for i, model in enumerate(evaluated):
            cols[i % len(cols)].page_link(
                ctx.pages["ndcg"],
                label=f"nDCG step by step: {model}",
                icon=":material/calculate:",
                query_params=ctx.params(movie=row["movie"], review=row["review_id"], model=model),
            )


COLORS = model_colors(ctx.dataset.model_names)
WORDS = ctx.words  # Movie/Review or Collection/Document, ranked GT or not (kweval.data.vocabulary)
REVIEWS = WORDS.reviews.lower()


st.title(f"{WORDS.review} explorer")
table = _table(ctx.key, sel.movie, tuple(sel.models), ev.scores, ctx.dataset.reviews)
keywords = _keywords(ctx.key, sel.movie, tuple(sel.models), ev.keywords)
scores = ctx.scores()
st.caption(
    f"{md(ctx.movie_title(sel.movie))} · {len(table):,} evaluated {REVIEWS} · k = {sel.k} · match {sel.match}. "
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
    parse=lambda s: s if s in sel.models else None,
    options=list(sel.models),
    horizontal=True,
    format_func=md,
    help="Highlights are per model: a word is marked only if this model matched it.",
)

review = query_param("review")
if review:
    st.button(f"← All {REVIEWS}", on_click=_set, args=("review", None))
    found = table[table["review_id"] == review]
    if found.empty:
        st.warning(
            f"{WORDS.review} {md(review)} is not among the evaluated {REVIEWS} of {md(ctx.movie_title(sel.movie))}."
        )
    for _, row in found.iterrows():
        review_card(row, keywords, scores, marked, links=True)
    st.stop()

c1, c2, c3 = st.columns([2, 3, 1], vertical_alignment="bottom")
sort = ctx.url_widget(
    c1.selectbox,
    "Sort",
    "sort",
    "review order",
    parse=lambda s: s if s in SORTS else None,
    options=list(SORTS),
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
pair = None
if sort in ("largest disagreement", *DIRECTIONAL_SORTS) and len(sel.models) >= 2:
    d1, d2, _ = st.columns([2, 2, 2])
    a = ctx.url_widget(
        d1.selectbox,
        "Model A",
        "a",
        sel.models[0],
        parse=lambda s: s if s in sel.models else None,
        options=list(sel.models),
    )
    b = ctx.url_widget(
        d2.selectbox,
        "Model B",
        "b",
        sel.models[1],
        parse=lambda s: s if s in sel.models else None,
        options=list(sel.models),
    )
    pair = (a, b)
    if sort in DIRECTIONAL_SORTS:
        worse, better = (pair[i] for i in DIRECTIONAL_SORTS[sort])
        st.caption(
            f"Only {REVIEWS} where {md(worse)} scores lower than {md(better)} on {md(metric)}, the largest gap first."
        )

shown = filter_reviews(table, metric, sel.models, sort=sort, query=query, nothing_matched=none, pair=pair)
per_page = 10
n_pages = max(1, -(-len(shown) // per_page))
if st.session_state.get("qp_p", 1) > n_pages:
    st.session_state["qp_p"] = n_pages
p1, p2 = st.columns([1, 5], vertical_alignment="bottom")
page = ctx.url_widget(
    p1.number_input, f"Page (of {n_pages})", "p", 1, parse=int, min_value=1, max_value=n_pages, step=1
)
rows, page, n_pages = paginate(shown, page, per_page)
p2.caption(f"{len(shown):,} {REVIEWS} match · page {page} of {n_pages} · sorted by {md(sort)}")
for _, row in rows.iterrows():
    with st.container(border=True):
        review_card(row, keywords, scores, marked)
        st.button(
            f"Open this {WORDS.review.lower()}",
            key=f"open_{row['movie']}_{row['review_id']}",
            on_click=_set,
            args=("review", str(row["review_id"])),
        )

ctx.finish()
