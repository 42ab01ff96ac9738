"""The review explorer's cards: a review's text with one model's matches, its GT and each model's keywords and
metrics, built once per evaluation, review, models and marked model (a rerun does not rebuild the cards it shows).

Everything user-made is escaped (`dashboard.escape`, `dashboard.keyword_html`).
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from dashboard import keyword_html
from dashboard.escape import esc, fmt_num
from dashboard.highlight import matched_tooltips, review_html
from dashboard.review_tables import keyword_details, review_table
from dashboard.state import Ctx
from dashboard.style import model_colors
from kweval.explain import why
from kweval.metrics.registry import column
from kweval.text import present


def review_metrics(ctx: Ctx) -> list[str]:
    """The metrics a card shows per model (the options' extra metrics too; with sentiment, the keywords' mean v)."""
    k = ctx.selection.k
    names = [
        "precision",
        "recall",
        "f1",
        "w_f1",
        ctx.ndcg_at_k,
        column("p@{k}", k),
        column("ap@{k}", k),
        "rr",
        *ctx.options.extra_metrics(),
    ]
    # mean v over the model's keywords: what sas_* compare with the references
    return names + (["sent_pred"] if ctx.options.sentiment else [])


def reviews_table(ctx: Ctx) -> pd.DataFrame:
    """The evaluated reviews of the selection with their text, rating, length and each model's nDCG@k."""
    sel = ctx.selection
    return _table(ctx.key, sel.movie, tuple(sel.models), ctx.ndcg_at_k, ctx.evaluation.scores, ctx.dataset.reviews)


def keywords(ctx: Ctx) -> pd.DataFrame:
    """The selection's predicted keywords with their GT match, indexed by (movie, review_id)."""
    sel = ctx.selection
    return _keywords(ctx.key, sel.movie, tuple(sel.models), ctx.evaluation.keywords)


# Shared, not copied on every rerun (cache_data would unpickle ≈100 ms of tables for all DNLP movies): read-only here.
@st.cache_resource(show_spinner=False, max_entries=16)
def _table(
    key: tuple, movie: str, models: tuple, metric: str, _scores: pd.DataFrame, _reviews: pd.DataFrame
) -> pd.DataFrame:
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
    key: tuple, movie: str, review: str, models: tuple, _ctx: Ctx, _rows: pd.DataFrame, text: object
) -> tuple[pd.DataFrame, float, float]:
    """(the review's keywords with nearest GT keyword, cosine and v(x); v(review text); the movie's GT mean v).

    The vectors come from the persistent embedding store the evaluation filled (no model load when warm).
    """
    from kweval.embeddings import semantic
    from kweval.evaluation import sentiment

    ctx = _ctx
    gt = ctx.own_gt(movie, review)
    rows = _rows.reset_index()
    vectors = None
    if ctx.options.semantic:
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
    sas = ctx.options.sentiment
    details = keyword_details(rows, gt, vectors, ctx.options.threshold, sentiment=sas)
    if not sas:
        return details, float("nan"), float("nan")
    return details, sentiment.text_value(text), sentiment.gt_mean_value(gt)


def own_gt_html(ctx: Ctx, movie: str, review: str, text: object) -> str:
    """A document's own GT list, each keyword marked present (● occurs in the text) or absent (○); '' for movie-level
    GT."""
    gt = ctx.own_gt(movie, review)
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
def _reasons(key: tuple, movie: str, review: str, models: tuple, _ctx: Ctx, _rows: pd.DataFrame) -> pd.DataFrame:
    """The review's keywords with why each matched or not (kweval.explain.why: per model, from the matching itself)."""
    return why.match_reasons(_rows.reset_index(), _ctx.own_gt(movie, review), _ctx.options.match, _ctx.options.k)


@st.cache_data(show_spinner=False, max_entries=512)
def _card_html(
    key: tuple,
    movie: str,
    review: str,
    models: tuple,
    marked: str | None,
    _ctx: Ctx,
    _row: pd.Series,
    _kw: pd.DataFrame,
    _scores: pd.DataFrame,
) -> tuple[str, tuple]:
    """(a review card's HTML, the models with output for the review): one per evaluation, review, models and
    marked model, so a rerun (another page of the list, a widget) does not rebuild the cards it shows again."""
    ctx, row, kw, scores = _ctx, _row, _kw, _scores
    sel, sem, sas = ctx.selection, ctx.options.semantic, ctx.options.sentiment
    words = ctx.words  # Movie/Review or Collection/Document; no GT rank for an unranked GT
    colors = model_colors(ctx.dataset.model_names)
    key = (row["movie"], row["review_id"])
    rows = kw.loc[[key]] if key in kw.index else kw.iloc[0:0]
    rows = _reasons(ctx.key, row["movie"], row["review_id"], tuple(sel.models), ctx, rows)
    mine = scores[(scores["movie"] == row["movie"]) & (scores["review_id"] == row["review_id"])].set_index("model")
    rating = "" if pd.isna(row["rating"]) else f" · rating {row['rating']:g}"
    title = f" · “{esc(row['title'])}”" if isinstance(row["title"], str) else ""
    head = (
        f'<div style="font-weight:600">{esc(words.review)} {esc(row["review_id"])}{title}<span '
        f'style="font-weight:400;opacity:0.7"> · {esc(ctx.movie_title(row["movie"]))}{rating} · '
        f"{int(row['length'])} chars</span></div>"
    )
    extra = ""
    if sem or sas:
        details, text_v, gt_v = _details(
            ctx.key, row["movie"], row["review_id"], tuple(sel.models), ctx, rows, row["text"]
        )
        extra = keyword_html.sentiment_line(text_v, gt_v) if sas else ""
    cells = []
    for model in sel.models:
        swatch = (
            '<span style="display:inline-block;width:0.7em;height:0.7em;border-radius:50%;'
            f'background:{colors.get(model, "grey")};margin-right:0.3em"></span>'
        )
        if model not in mine.index:
            cells.append(
                f'<div>{swatch}<b>{esc(model)}</b><div style="opacity:0.7">skipped: no output for this '
                f"{esc(words.review.lower())}</div></div>"
            )
            continue
        m = mine.loc[model]
        vals = " · ".join(f"{esc(name)} {fmt_num(m[name])}" for name in review_metrics(ctx) if name in m)
        if sem or sas:
            listing = keyword_html.keyword_table_html(
                details[details["model"] == model], sel.k, sem, sas, ctx.options.threshold, words=words
            )
        else:
            listing = keyword_html.keyword_list_html(rows[rows["model"] == model], sel.k, words=words)
        cells.append(
            f'<div>{swatch}<b>{esc(model)}</b><div style="font-size:0.85em;opacity:0.8">{vals}</div>{listing}</div>'
        )
    gt = ctx.own_gt(row["movie"], row["review_id"])
    marks = (
        f'<div style="font-size:0.85em;opacity:0.75">Marked: the words of {esc(marked)}’s matched keywords.</div>'
        if marked
        else ""
    )
    text = review_html(row["text"], matched_tooltips(rows, model=marked, words=words) if marked else {})
    own = own_gt_html(ctx, row["movie"], row["review_id"], row["text"])
    side = (
        f'<div style="display:flex;flex-wrap:wrap;gap:1rem"><div style="flex:3 1 '
        f'18rem;min-width:0">{marks}{text}{own}</div>'
        f'<div style="flex:1 1 12rem">{keyword_html.gt_top_html(gt, sel.k, rows, colors, words=words)}</div></div>'
    )
    return head + side + extra + keyword_html.model_grid_html(cells, 22 if (sem or sas) else 16), tuple(
        m for m in sel.models if m in mine.index
    )


def review_card(
    ctx: Ctx, row: pd.Series, kw: pd.DataFrame, scores: pd.DataFrame, marked: str | None, links: bool = False
) -> None:
    """One review: header, the text with `marked`'s matches, the movie's top-k GT, per model its metrics and keywords
    (all escaped)."""
    sel = ctx.selection
    html, evaluated = _card_html(
        ctx.key, row["movie"], row["review_id"], tuple(sel.models), marked, ctx, row, kw, scores
    )
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
