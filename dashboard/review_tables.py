"""The explorer's tables: one row per review with each model's metric, filters, sorts, pages, keyword details.

Reshaping only: the numbers come from `Evaluation.scores` and
`Evaluation.keywords`; `keyword_details` calls
`kweval.embeddings.similarity.nearest_gt_table` and `kweval.evaluation.sentiment.keyword_values`.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from dashboard.selection import TAU_DEFAULT

SORTS = ("review order", "lowest nDCG", "largest disagreement", "A worse than B", "B worse than A", "most matched")
DIRECTIONAL_SORTS = {"A worse than B": (0, 1), "B worse than A": (1, 0)}  # (worse, better) index into `pair`
# The explorer's cards a page (its "Per page" choice), the first the default: a page turn's time grows with its cards
# (each a Streamlit element and ~250 HTML elements with semantic and sentiment on): on DNLP with a keyword table per
# model, both cores busy, 5 cards turned in 0.79-1.01 s where 10 took 1.15-1.39 s (issue 28; bench_browser page-turn).
PER_PAGE = (5, 10, 20, 50)


def review_table(
    scores: pd.DataFrame,
    reviews: pd.DataFrame,
    movie: str,
    models: Sequence[str],
    metric: str,
) -> pd.DataFrame:
    """One row per evaluated review of `movie` (every movie for ALL): its metadata and each model's `metric`.

    Columns: movie, review_id, title, rating, length, text, then
    ``{metric}·{model}`` and ``matched·{model}`` per model (NaN where the model
    skipped the review), and ``n_matched_total``.
    """
    sc = scores[scores["model"].isin(models)]
    if movie != "ALL":
        sc = sc[sc["movie"] == movie]
    wide = sc.pivot_table(
        index=["movie", "review_id"], columns="model", values=[metric, "n_matched"], sort=False, aggfunc="first"
    )
    keys = sc[["movie", "review_id"]].drop_duplicates()
    out = keys.reset_index(drop=True)
    index = pd.MultiIndex.from_frame(out)
    for model in models:
        out[f"{metric}·{model}"] = (
            wide[(metric, model)].reindex(index).to_numpy() if (metric, model) in wide else float("nan")
        )
        out[f"matched·{model}"] = (
            wide[("n_matched", model)].reindex(index).to_numpy() if ("n_matched", model) in wide else float("nan")
        )
    out["n_matched_total"] = out[[f"matched·{m}" for m in models]].sum(axis=1, min_count=0) if models else 0
    rv = reviews.drop_duplicates(["movie", "review_id"]).set_index(["movie", "review_id"])
    meta = rv.reindex(index)
    out.insert(2, "title", meta["title"].to_numpy() if "title" in meta else None)
    out.insert(3, "rating", meta["rating"].to_numpy() if "rating" in meta else float("nan"))
    text = meta["text"] if "text" in meta else pd.Series([None] * len(out))
    out.insert(4, "length", text.map(lambda t: len(t) if isinstance(t, str) else 0).to_numpy())
    out.insert(5, "text", text.to_numpy())
    return out


def filter_reviews(
    table: pd.DataFrame,
    metric: str,
    models: Sequence[str],
    sort: str = "review order",
    query: str = "",
    nothing_matched: bool = False,
    pair: tuple[str, str] | None = None,
) -> pd.DataFrame:
    """Filter and sort a `review_table`.

    - ``query``: case-insensitive substring of the text, title or review id.
    - ``nothing_matched``: only reviews where no selected model matched a GT keyword.
    - sorts: review order; lowest `metric` (mean over the models); largest
      disagreement (|A − B| for `pair`, else max − min over the models);
      "A worse than B" / "B worse than A" (only the reviews where that model of
      `pair` scores strictly lower, the largest gap first); most matched keywords.
    """
    out = table
    if query:
        q = query.casefold()
        hay = (
            out["text"].fillna("").astype(str).str.casefold()
            + "\x00"
            + out["title"].fillna("").astype(str).str.casefold()
            + "\x00"
            + out["review_id"].astype(str).str.casefold()
        )
        out = out[hay.str.contains(q, regex=False)]
    if nothing_matched:
        out = out[out["n_matched_total"].fillna(0) == 0]
    cols = [f"{metric}·{m}" for m in models if f"{metric}·{m}" in out]
    if sort == "lowest nDCG" and cols:
        key = out[cols].mean(axis=1)
        out = out.assign(_key=key).sort_values("_key", kind="stable", na_position="last").drop(columns="_key")
    elif sort == "largest disagreement" and cols:
        if pair and all(f"{metric}·{m}" in out for m in pair):
            key = (out[f"{metric}·{pair[0]}"] - out[f"{metric}·{pair[1]}"]).abs()
        else:
            key = out[cols].max(axis=1) - out[cols].min(axis=1)
        out = (
            out.assign(_key=key)
            .sort_values("_key", ascending=False, kind="stable", na_position="last")
            .drop(columns="_key")
        )
    elif sort in DIRECTIONAL_SORTS and pair and all(f"{metric}·{m}" in out for m in pair):
        worse, better = (f"{metric}·{pair[i]}" for i in DIRECTIONAL_SORTS[sort])
        gap = out[better] - out[worse]
        out = out.assign(_key=gap)[gap > 0].sort_values("_key", ascending=False, kind="stable").drop(columns="_key")
    elif sort == "most matched":
        out = out.sort_values("n_matched_total", ascending=False, kind="stable")
    return out


def paginate(table: pd.DataFrame, page: int, per_page: int) -> tuple[pd.DataFrame, int, int]:
    """(rows of `page` (1-based, clamped), the clamped page, the number of pages)."""
    n_pages = max(1, -(-len(table) // per_page))
    page = min(max(1, int(page)), n_pages)
    return table.iloc[(page - 1) * per_page : page * per_page], page, n_pages


def keyword_details(
    rows: pd.DataFrame,
    gt: pd.DataFrame,
    vectors=None,
    threshold: float = TAU_DEFAULT,
    sentiment: bool = False,
) -> pd.DataFrame:
    """Reviews' keywords (every model; one review's, or a page's sharing one GT list) with the semantic and
    sentiment views of the explorer, in the order of `rows`.

    `rows`: the reviews' rows of `Evaluation.keywords` (model, position,
    keyword, norm, gt_rank, gt_keyword).  `gt`: the movie's rows of
    `Evaluation.ground_truth`.  With `vectors` (a mapping norm → vector, or an
    embedder function, as `kweval.embeddings.similarity.nearest_gt` takes) each keyword
    gets its nearest GT keyword, that GT keyword's rank, the cosine and
    whether it is above `threshold` (`kweval.embeddings.similarity.nearest_gt_table`);
    with `sentiment`, its VADER value ``v`` (`kweval.evaluation.sentiment.keyword_values`).
    Nothing is computed here beyond calling those.
    """
    out = rows.reset_index(drop=True)
    if vectors is not None:
        from kweval.embeddings.similarity import nearest_gt_table

        # row by row (each keyword's nearest GT keyword reads no other row): every model and review in one call
        out = nearest_gt_table(out, gt, vectors, threshold)
    if sentiment:
        from kweval.evaluation.sentiment import keyword_values

        out = out.assign(
            v=keyword_values(out[[c for c in ("keyword", "norm") if c in out.columns]]) if len(out) else []
        )
    return out


def keep_reviews(table: pd.DataFrame, pairs: set[tuple[str, str]] | None) -> pd.DataFrame:
    """The rows of a `review_table` whose (movie, review_id) is in `pairs` (None: every row), in their order."""
    if pairs is None:
        return table
    keys = zip(table["movie"].astype(str), table["review_id"].astype(str))
    return table[[key in pairs for key in keys]]
