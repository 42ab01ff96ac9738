"""The review explorer's cards: a review's text with one model's matches, its GT and each model's keywords and
metrics, built once per evaluation (but τ), review, models and marked model: a rerun or a τ step does not rebuild
the cards it shows (`dashboard.html_holes`).

Everything user-made is escaped (`dashboard.escape`, `dashboard.keyword_html`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np
import pandas as pd
import streamlit as st

from dashboard import html_holes, keyword_html, preset_caches
from dashboard.escape import esc, fmt_num
from dashboard.grounding_html import support_html
from dashboard.gt_lists import gt_lists
from dashboard.highlight import matched_tooltips, review_html
from dashboard.html_holes import MetricsLine, Part
from dashboard.review_tables import keyword_details, review_table
from dashboard.state import Ctx
from dashboard.style import model_colors
from kweval.explain import why
from kweval.metrics import undefined
from kweval.metrics.registry import column
from kweval.text import present


def _view(ctx: Ctx, key: tuple) -> tuple:
    """A cache key of what the explorer shows: `key` (the evaluation's) and the preset the page computes under."""
    return (*key, ctx.preset)


def review_metrics(ctx: Ctx) -> list[str]:
    """The metrics a card shows per model (the options' extra metrics too; with sentiment, the keywords' mean v);
    under a preset, the preset's (`dashboard.preset_caches.metrics`)."""
    if ctx.preset is not None:
        return preset_caches.metrics(ctx)
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


def sort_metric(ctx: Ctx) -> str:
    """The metric the explorer sorts and compares reviews by: nDCG@k, or F1@k under a preset (nDCG is no preset's)."""
    return ctx.ndcg_at_k if ctx.preset is None else preset_caches.metric(ctx)


def reviews_table(ctx: Ctx) -> pd.DataFrame:
    """The evaluated reviews of the selection with their text, rating, length and each model's `sort_metric` (under
    a preset: its per-document scores, `kweval evaluate --protocol P --per-review`'s)."""
    sel = ctx.selection
    scores = ctx.evaluation.scores if ctx.preset is None else preset_caches.scores_with_matches(ctx)
    return _table(
        _view(ctx, ctx.tau_free_key), sel.movie, tuple(sel.models), sort_metric(ctx), scores, ctx.dataset.reviews
    )


def keywords(ctx: Ctx) -> pd.DataFrame:
    """The selection's predicted keywords with their GT match, indexed by (movie, review_id); under a preset, every
    prediction with the preset's decision (`dashboard.preset_caches.keywords`)."""
    sel = ctx.selection
    if ctx.preset is not None:
        return preset_caches.keywords(ctx)
    return _keywords(ctx.tau_free_key, sel.movie, tuple(sel.models), ctx.evaluation.keywords)


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
    grounded = [c for c in ("grounding", "support", "support_cosine") if c in kw.columns]  # with grounding on
    return (
        kw[["movie", "review_id", "model", "position", "keyword", "norm", "gt_rank", "gt_keyword", *grounded]]
        .set_index(["movie", "review_id"])
        .sort_index()
    )


class CardData(NamedTuple):
    """What a review card shows beyond the review row and its scores, whatever τ (a τ step changes only the cosine
    marks and the metrics: `dashboard.html_holes`)."""

    rows: pd.DataFrame  # the review's keywords (selected models) with why each matched or not (`why.match_reasons`)
    details: pd.DataFrame | None  # semantic or sentiment on: those rows with `keyword_details`, cosines unmarked
    text_v: float  # sentiment on: v(review text), else NaN
    gt_v: float  # sentiment on: the mean v of the review's GT list, else NaN
    evaluated: tuple[str, ...]  # the selected models with a score row for the review (the others: "skipped")


def card_data(ctx: Ctx, page: pd.DataFrame, kw: pd.DataFrame, scores: pd.DataFrame) -> dict[tuple[str, str], CardData]:
    """Per (movie, review_id) of `page` (rows of `reviews_table`), what its card shows, computed for the whole page
    at once and shared by every τ: one `why.match_reasons` and one `keyword_details` per GT list of the page (one
    embedding read), not one per card.  Reference: the same for a page of that one review
    (tests/test_review_card_page.py)."""
    ids = tuple(zip(page["movie"].tolist(), page["review_id"].tolist()))
    if ctx.preset is not None:
        return _preset_page_base(_view(ctx, ctx.tau_free_key), ids, tuple(ctx.selection.models), kw, scores)
    return _page_base(ctx.tau_free_key, ids, tuple(ctx.selection.models), ctx, kw, page["text"].tolist(), scores)


@st.cache_resource(show_spinner=False, max_entries=32)
def _preset_page_base(
    key: tuple, ids: tuple, models: tuple, _kw: pd.DataFrame, _scores: pd.DataFrame
) -> dict[tuple[str, str], CardData]:
    """Under a preset: each review's predictions with the preset's decisions (`dashboard.preset_caches.keywords`,
    reasons included) and the models it scored; no semantic or sentiment view (no preset has one)."""
    scored = set(_rows_of(_scores, ids, models)[["movie", "review_id", "model"]].itertuples(index=False, name=None))
    out: dict[tuple[str, str], CardData] = {}
    for review in ids:
        rows = _kw.loc[[review]].reset_index() if review in _kw.index else _kw.iloc[0:0].reset_index()
        rows = rows[rows["model"].isin(models)].reset_index(drop=True)
        evaluated = tuple(m for m in models if (*review, m) in scored)
        out[review] = CardData(rows, None, float("nan"), float("nan"), evaluated)
    return out


# Shared, read-only: a page's cards are built from it once (each card's template is cached on its own).
@st.cache_resource(show_spinner=False, max_entries=32)
def _page_base(
    tau_free_key: tuple, ids: tuple, models: tuple, _ctx: Ctx, _kw: pd.DataFrame, _texts: list, _scores: pd.DataFrame
) -> dict[tuple[str, str], CardData]:
    """What a τ change leaves unchanged: reasons, nearest GT keywords and cosines, sentiment, who was evaluated."""
    from kweval.evaluation import sentiment

    ctx, sem, sas = _ctx, _ctx.options.semantic, _ctx.options.sentiment
    lists = gt_lists(ctx.tau_free_key, ctx.evaluation.ground_truth)
    present = [i for i in ids if i in _kw.index]
    rows = (_kw.loc[present] if present else _kw.iloc[0:0]).reset_index()
    of_row = list(zip(rows["movie"].tolist(), rows["review_id"].tolist()))
    # each review's GT list: its own (per-document GT), else its movie's
    list_of = {(m, r): (m, r) if len(lists.get((m, r), ())) else (m, None) for m, r in ids}
    empty = ctx.evaluation.ground_truth.iloc[0:0]
    vectors = _page_vectors(ctx, rows, [lists.get(g, empty) for g in dict.fromkeys(list_of.values())]) if sem else None
    scored = set(_rows_of(_scores, ids, models)[["movie", "review_id", "model"]].itertuples(index=False, name=None))
    out: dict[tuple[str, str], CardData] = {}
    for gt_key in dict.fromkeys(list_of.values()):
        gt = lists.get(gt_key, empty)
        members = [i for i in ids if list_of[i] == gt_key]
        mask = np.fromiter((list_of[i] == gt_key for i in of_row), dtype=bool, count=len(of_row))
        reasons = why.match_reasons(rows[mask], gt, ctx.options.match, ctx.options.k)
        details = keyword_details(reasons, gt, vectors, ctx.options.threshold, sentiment=sas) if sem or sas else None
        if details is not None:  # the marks are τ's: `html_holes.fill`
            details = details.drop(columns="above", errors="ignore")
        gt_v = sentiment.gt_mean_value(gt) if sas else float("nan")
        review_of = [i for i, inside in zip(of_row, mask) if inside]
        for review in members:
            mine = np.fromiter((i == review for i in review_of), dtype=bool, count=len(review_of))
            text_v = sentiment.text_value(_texts[ids.index(review)]) if sas else float("nan")
            out[review] = CardData(
                reasons[mine].reset_index(drop=True),
                None if details is None else details[mine].reset_index(drop=True),
                text_v,
                gt_v,
                tuple(m for m in models if (*review, m) in scored),
            )
    return out


def _rows_of(scores: pd.DataFrame, ids: tuple, models: tuple) -> pd.DataFrame:
    """The rows of `scores` for the reviews `ids` ((movie, review_id) pairs) and `models`."""
    movies, reviews = {m for m, _ in ids}, {r for _, r in ids}
    near = scores[scores["movie"].isin(movies) & scores["review_id"].isin(reviews) & scores["model"].isin(models)]
    wanted = set(ids)
    keep = np.fromiter((pair in wanted for pair in zip(near["movie"].tolist(), near["review_id"].tolist())), bool)
    return near[keep]  # a boolean array: an empty list would select no columns (no review matched)


def metric_lines(ctx: Ctx, scores: pd.DataFrame, ids: tuple) -> dict[tuple[str, str], dict[str, str]]:
    """Per review of `ids`, per model with a score row: its metrics line (escaped HTML) at this evaluation's τ."""
    review = ctx.words.review.lower()
    return _metric_lines(
        _view(ctx, ctx.key), ids, tuple(ctx.selection.models), tuple(review_metrics(ctx)), review, scores
    )


def metric_value_html(name: str, value: object, review: str = "review") -> str:
    """One metric of a card's metrics line: its value, or "—" (hover: why) for a value undefined on this `review`
    (`kweval.metrics.undefined`), never a 0 or "n/a" that reads as a score."""
    why = undefined.reason(name, review)
    if why and value != value:  # NaN
        return f'{esc(name)} <span title="{esc("undefined: " + why)}">—</span>'
    return f"{esc(name)} {fmt_num(value)}"


@st.cache_resource(show_spinner=False, max_entries=32)
def _metric_lines(
    key: tuple, ids: tuple, models: tuple, names: tuple, review: str, _scores: pd.DataFrame
) -> dict[tuple[str, str], dict[str, str]]:
    mine = _rows_of(_scores, ids, models)
    shown = [name for name in names if name in mine.columns]
    out: dict[tuple[str, str], dict[str, str]] = {}
    for rec in mine[["movie", "review_id", "model", *shown]].to_dict("records"):
        line = " · ".join(metric_value_html(name, rec[name], review) for name in shown)
        out.setdefault((rec["movie"], rec["review_id"]), {})[rec["model"]] = line
    return out


def _page_vectors(ctx: Ctx, rows: pd.DataFrame, gts: list[pd.DataFrame]) -> dict:
    """norm → vector for the page's keywords and GT lists, from the persistent embedding store the evaluation
    filled (one read; no model load when warm)."""
    from kweval.embeddings import semantic

    norms = [*rows["norm"], *(n for gt in gts for n in gt["norm"])]
    texts = list(dict.fromkeys(t for t in norms if isinstance(t, str) and t))
    if not texts:
        return {}
    found = semantic.embed_texts(texts, model_id=ctx.options.embedding_model, backend=ctx.options.embedding_backend)
    return dict(zip(texts, found))


def card_scores(ctx: Ctx) -> pd.DataFrame:
    """The per-review scores the cards show: the evaluation's in the selection, or the preset's per-document scores
    (`kweval evaluate --protocol P --per-review`'s) under a preset."""
    return ctx.scores() if ctx.preset is None else preset_caches.scores_with_matches(ctx)


def card_gt(ctx: Ctx, movie: str, review: str) -> pd.DataFrame:
    """The GT list a card shows (rank, keyword): the cleaned list the review is scored against, or under a preset the
    document's gold phrases the preset counts (`dashboard.preset_caches.gold`)."""
    return ctx.own_gt(movie, review) if ctx.preset is None else preset_caches.gold(ctx, movie, review)


def own_gt_html(ctx: Ctx, movie: str, review: str, text: object) -> str:
    """A document's own GT list, each keyword marked present (● occurs in the text) or absent (○) under the match
    mode, or under a preset by its present rule (no marks under one without: pke); '' for movie-level GT."""
    if ctx.preset is not None:
        gt = preset_caches.gold(ctx, movie, review)
        if not len(gt) or gt["present"].isna().all():
            return ""
        flags = gt["present"].tolist()
    else:
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


@st.cache_resource(show_spinner=False, max_entries=512)
def _card_parts(
    tau_free_key: tuple,
    movie: str,
    review: str,
    models: tuple,
    marked: str | None,
    _ctx: Ctx,
    _row: pd.Series,
    _data: Callable[[], CardData],
) -> tuple[tuple[Part, ...], tuple[str, ...]]:
    """(a review card's template: HTML with τ's holes, the models with output for the review): one per evaluation
    but τ, review, models and marked model, so a rerun or a τ step does not rebuild the cards it shows again.
    `_data`: the card's `CardData`, asked for only when the template is not cached.  Shared and immutable."""
    ctx, row = _ctx, _row
    sel, sem, sas = ctx.selection, ctx.options.semantic and not ctx.preset, ctx.options.sentiment and not ctx.preset
    words = ctx.words  # Movie/Review or Collection/Document; no GT rank for an unranked GT
    colors = model_colors(ctx.dataset.model_names)
    data = _data()
    rows = data.rows
    rating = "" if pd.isna(row["rating"]) else f" · rating {row['rating']:g}"
    title = f" · “{esc(row['title'])}”" if isinstance(row["title"], str) else ""
    head = (
        f'<div style="font-weight:600">{esc(words.review)} {esc(row["review_id"])}{title}<span '
        f'style="font-weight:400;opacity:0.7"> · {esc(ctx.movie_title(row["movie"]))}{rating} · '
        f"{int(row['length'])} chars</span></div>"
    )
    shown = data.details if (sem or sas) else rows
    listed: dict[str, list[dict]] = {}  # each model's rows as `records`, read once for the card (not once per model)
    for record in keyword_html.records(shown):
        listed.setdefault(record["model"], []).append(record)
    cells: list[Part] = []
    for model in sel.models:
        swatch = (
            '<span style="display:inline-block;width:0.7em;height:0.7em;border-radius:50%;'
            f'background:{colors.get(model, "grey")};margin-right:0.3em"></span>'
        )
        if model not in data.evaluated:
            cells.append(
                f'<div>{swatch}<b>{esc(model)}</b><div style="opacity:0.7">skipped: no output for this '
                f"{esc(words.review.lower())}</div></div>"
            )
            continue
        own_rows = listed.get(model, [])
        if sem or sas:
            listing = keyword_html.keyword_table_parts(own_rows, sel.k, sem, sas, words=words)
        else:
            listing = [keyword_html.keyword_list_html(own_rows, sel.k, words=words)]
        cells += [
            f'<div>{swatch}<b>{esc(model)}</b><div style="font-size:0.85em;opacity:0.8">',
            MetricsLine(model),
            "</div>",
            *listing,
            "</div>",
        ]
    gt = card_gt(ctx, row["movie"], row["review_id"])
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
    extra = keyword_html.sentiment_line(data.text_v, data.gt_v, words.review.lower()) if sas else ""
    extra += support_html(rows, [m for m in sel.models if m in data.evaluated])  # with grounding: what supports each
    grid = keyword_html.model_grid_start(22 if (sem or sas) else 16)  # the tables' style: `card_style`, once
    return (head + side + extra + grid, *cells, "</div>"), data.evaluated


def card_style(ctx: Ctx) -> str:
    """The `<style>` the cards' keyword tables need (semantic or sentiment on), '' without: given once per page,
    outside the explorer's page of cards, so a page turn neither re-sends it nor swaps its stylesheet 10 times (each
    added or removed stylesheet restyles the whole page)."""
    shown = (ctx.options.semantic or ctx.options.sentiment) and ctx.preset is None
    return keyword_html.TABLE_STYLE if shown else ""


def card_html(
    ctx: Ctx,
    row: pd.Series,
    kw: pd.DataFrame,
    scores: pd.DataFrame,
    marked: str | None,
    page: pd.DataFrame | None = None,
) -> tuple[str, tuple]:
    """(the card's HTML, the models with output for the review); `page`: the rows of `reviews_table` shown with it
    (their `card_data` and metrics are computed together), by default the review alone.  The τ-free template is
    cached (`_card_parts`); the marks and metrics are filled at this evaluation's τ (`html_holes.fill`)."""
    shown = row.to_frame().T if page is None else page
    review = (row["movie"], row["review_id"])

    def data() -> CardData:
        return card_data(ctx, shown, kw, scores)[review]

    ids = tuple(zip(shown["movie"].tolist(), shown["review_id"].tolist()))
    return _filled(ctx, row, marked, data, metric_lines(ctx, scores, ids).get(review, {}))


def page_cards(ctx: Ctx, page: pd.DataFrame, kw: pd.DataFrame, scores: pd.DataFrame, marked: str | None) -> list[str]:
    """The HTML of each card of `page` (rows of `reviews_table`), in order: `card_html` of each row with `page`,
    with the page's metrics lines and card data asked of their caches once for the page, not once per card."""
    ids = tuple(zip(page["movie"].tolist(), page["review_id"].tolist()))
    lines = metric_lines(ctx, scores, ids)
    together: list[dict[tuple[str, str], CardData]] = []  # the page's card data, computed when a template needs it

    def data_of(review: tuple[str, str]) -> Callable[[], CardData]:
        def data() -> CardData:
            if not together:
                together.append(card_data(ctx, page, kw, scores))
            return together[0][review]

        return data

    rows = (page.iloc[i] for i in range(len(page)))
    return [_filled(ctx, row, marked, data_of(review), lines.get(review, {}))[0] for row, review in zip(rows, ids)]


def _filled(
    ctx: Ctx, row: pd.Series, marked: str | None, data: Callable[[], CardData], lines: dict[str, str]
) -> tuple[str, tuple]:
    """(a card's cached template filled at this evaluation's τ with the metrics `lines`, the models with output)."""
    parts, evaluated = _card_parts(
        _view(ctx, ctx.tau_free_key),
        row["movie"],
        row["review_id"],
        tuple(ctx.selection.models),
        marked,
        ctx,
        row,
        data,
    )
    return html_holes.fill(parts, ctx.options.threshold, lines), evaluated


def review_card(
    ctx: Ctx,
    row: pd.Series,
    kw: pd.DataFrame,
    scores: pd.DataFrame,
    marked: str | None,
    links: bool = False,
) -> None:
    """One review: header, the text with `marked`'s matches, the movie's top-k GT, per model its metrics and keywords
    (all escaped).  A page of cards: `page_cards`."""
    sel = ctx.selection
    html, evaluated = card_html(ctx, row, kw, scores, marked)
    st.html(card_style(ctx) + html)
    if links:
        cols = st.columns(min(len(sel.models), 4) or 1)
        for i, model in enumerate(evaluated):
            cols[i % len(cols)].page_link(
                ctx.pages["ndcg"],
                label=f"nDCG step by step: {model}",
                icon=":material/calculate:",
                query_params=ctx.params(movie=row["movie"], review=row["review_id"], model=model),
            )
