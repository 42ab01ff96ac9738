"""Each tidy table's cleaning step: predictions, ground truth and reviews as the evaluation expects them.

Rows without their keys are dropped and counted; predictions come in list
order (movie by first appearance, then review_id and model as text, then
rank), a review × model pair's second list is dropped (`later_lists`); GT
lists are sorted (movie, its own list first, then reviews; rank; file order)
and re-ranked 0..n-1, and a movie whose every list gives one rank is
unranked (`unranked_movies`).  Keys are handled as integer codes throughout
(`kweval.data.columns`); strings are looked up once per kept row.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pandas as pd
import pyarrow as pa

from kweval._arrays import (
    object_column,
    position_in_run,
    run_heads,
    sort_key,
    stable_order,
    take_codes,
    text_rank,
    with_missing,
)
from kweval.data import columns as cols
from kweval.data.dataset import PREDICTION_COLUMNS, REVIEW_COLUMNS, Problem, duplicate_lists_problem


def clean_predictions_table(
    frame: pd.DataFrame | pa.Table, source: str, problems: list[Problem]
) -> tuple[pd.DataFrame, np.ndarray, list, list]:
    """The predictions table in list order, the row where each (movie, review_id) pair starts, and its movies and models
    in order of appearance.

    Rows without movie, review_id or model, or with a missing or negative rank,
    are dropped (and counted in `problems`).  Order: movies by first
    appearance in the file, then review_id and model (as text), then rank,
    then file order.  Keys are handled as integer codes; strings are only
    looked up at the end, once per kept row.
    """
    movie_c, movie_u = cols.key_codes(frame, "movie")
    review_c, review_u = cols.key_codes(frame, "review_id")
    model_c, model_u = cols.key_codes(frame, "model")
    rank = cols.numbers(frame, "rank")
    cols.report_nested_keys(frame, ("movie", "review_id", "model"), source, problems)
    cols.report_non_text_keywords(frame, source, problems)
    keyword_c, keyword_u = cols.keyword_codes(frame)
    score = cols.numbers(frame, "score").astype("float64", copy=False)
    del frame  # the caller's last reference: the Arrow table goes now

    bad_key = (movie_c < 0) | (review_c < 0) | (model_c < 0)
    if bad_key.any():
        problems.append(Problem(source, f"{int(bad_key.sum())} row(s) without movie, review_id or model; dropped"))
    with np.errstate(invalid="ignore"):
        bad_rank = ~bad_key & (pd.isna(rank) | (rank < 0))
    if bad_rank.any():
        problems.append(Problem(source, f"{int(bad_rank.sum())} row(s) with a missing or negative rank; dropped"))
    dropped = bad_key | bad_rank
    keep = np.flatnonzero(~dropped) if dropped.any() else None  # None: every row
    del bad_key, bad_rank, dropped

    # movies in order of first appearance in the file (every row counts); ids and models as text
    movie_rank = np.zeros(len(movie_u) + 1, dtype=np.int64)
    seen = pd.unique(movie_c)
    seen = seen[seen >= 0]
    movie_rank[seen] = np.arange(len(seen))
    order = stable_order(
        keep,
        len(movie_c),
        (movie_rank, movie_c),
        (text_rank(review_u), review_c),
        (text_rank(model_u), model_c),
        rank,
    )
    rows = keep if order is None else (order if keep is None else keep[order])  # None: every row, in file order
    del keep, order

    def take(values: np.ndarray) -> np.ndarray:
        return values if rows is None else values[rows]

    m, r, d = take(movie_c), take(review_c), take(model_c)
    later = _later_lists(m, r, d, take(rank), np.arange(len(movie_c)) if rows is None else rows)
    if later.any():
        n_lists = _count_pairs_with(later, m, r, d)
        problems.append(duplicate_lists_problem(source, n_lists, int(later.sum())))
        rows = np.flatnonzero(~later) if rows is None else rows[~later]
        m, r, d = take(movie_c), take(review_c), take(model_c)
    n = len(m)
    pair_start = (
        np.flatnonzero(np.concatenate(([True], (m[1:] != m[:-1]) | (r[1:] != r[:-1])))) if n else np.zeros(0, np.int64)
    )
    out = pd.DataFrame(
        {
            "movie": object_column(movie_u[m]),
            "review_id": object_column(review_u[r]),
            "model": object_column(model_u[d]),
            "rank": take(rank).astype("int64"),
            "keyword": object_column(keyword_u[take(keyword_c)]),
            "score": take(score),
        },
        columns=PREDICTION_COLUMNS,
        copy=False,
    )
    movie_order = movie_u[pd.unique(m)].tolist() if n else []
    model_order = model_u[pd.unique(d)].tolist() if n else []
    return out, pair_start, movie_order, model_order


def _later_lists(m: np.ndarray, r: np.ndarray, d: np.ndarray, rank: np.ndarray, file_row: np.ndarray) -> np.ndarray:
    """Which rows (sorted by pair, then rank) belong to a review × model pair's second or later list.

    A pair holds more than one list when a rank repeats.  Its rows are then
    read in file order, a new list starting wherever a rank repeats one of the
    current list; only the first list is kept (the first wins, as for a repeated keyword in
    docs/metrics.md §1 and for a repeated review in the DNLP reader).
    """
    n = len(m)
    later = np.zeros(n, dtype=bool)
    if n < 2:
        return later
    same_pair = (m[1:] == m[:-1]) & (r[1:] == r[:-1]) & (d[1:] == d[:-1])
    repeats = np.flatnonzero(same_pair & (rank[1:] == rank[:-1]))
    if len(repeats) == 0:
        return later
    pair_start = np.flatnonzero(np.concatenate(([True], ~same_pair)))
    pair_end = np.append(pair_start[1:], n)
    for p in np.unique(np.searchsorted(pair_start, repeats + 1, side="right") - 1).tolist():
        lo, hi = int(pair_start[p]), int(pair_end[p])
        in_file_order = lo + np.argsort(file_row[lo:hi], kind="stable")
        seen: set = set()
        first_list = True
        for i in in_file_order.tolist():
            if rank[i] in seen:
                first_list = False
            seen.add(rank[i])
            later[i] = not first_list
    return later


def _count_pairs_with(flags: np.ndarray, m: np.ndarray, r: np.ndarray, d: np.ndarray) -> int:
    """Number of distinct (m, r, d) pairs among the flagged rows."""
    keys = pd.DataFrame({"m": m[flags], "r": r[flags], "d": d[flags]})
    return int(len(keys.drop_duplicates()))


@dataclass
class _GtRows:
    """The GT table's rows with a movie and a rank, in list order, and what the cleaning and the unranked rule read of
    them.

    Keys are integer codes (one Python string per distinct value): per-document
    GT has millions of rows.  Rows whose movie is the empty string are still
    here (the unranked rule counts that movie; the cleaning drops it).
    """

    rows: (
        np.ndarray
    )  # positions in the table, sorted by movie, then review_id (none first), then rank; ties in file order
    movie: np.ndarray  # per sorted row: movie code (into movie_values)
    doc: np.ndarray  # per sorted row: review_id code (into doc_values); -1: the movie's own list
    rank: np.ndarray  # per sorted row: a non-negative integer that sorts as its rank (`sort_key`)
    movie_values: np.ndarray
    doc_values: np.ndarray
    rankless_movies: np.ndarray  # movie codes with a row but no rank (NaN) in some row


def _gt_numbers(frame: pd.DataFrame | pa.Table) -> dict[str, pd.Series]:
    """rank, helpful and not_helpful (those present) as `pd.to_numeric(errors="coerce")` reads pandas' reading of the
    table."""
    names = [c for c in ("rank", "helpful", "not_helpful") if c in cols.column_names(frame)]
    table = (
        frame.select(names).to_pandas() if isinstance(frame, pa.Table) else frame[names]
    )  # Arrow: dtypes as pd.read_parquet gives them
    return {c: pd.to_numeric(table[c], errors="coerce").reset_index(drop=True) for c in names}


def _gt_keywords(frame: pd.DataFrame | pa.Table) -> tuple[np.ndarray, np.ndarray, int]:
    """The GT keyword column as (codes, values, number of cells that are not text): str values stay (the empty one too),
    anything else is None (the last value)."""
    if isinstance(frame, pa.Table) and cols.is_text(frame.column("keyword").type):
        codes, uniques = cols.arrow_codes(frame.column("keyword"), empty_is_missing=False)
        return codes, with_missing(uniques), 0  # code -1 (null) reads None
    series = frame.select(["keyword"]).to_pandas()["keyword"] if isinstance(frame, pa.Table) else frame["keyword"]
    values = cols.keyword_texts(series).to_numpy(dtype=object)
    # a string column holds text or NA only
    n_not_text = 0 if isinstance(series.dtype, pd.StringDtype) else int(series.map(cols.neither_text_nor_missing).sum())
    return np.arange(len(values)), values, n_not_text


def _gt_rows(frame: pd.DataFrame | pa.Table, rank: pd.Series) -> _GtRows:
    """The GT rows with a movie (the empty string counts) and a rank, sorted into lists (see `_GtRows`)."""
    movie_c, movie_u = cols.key_codes(frame, "movie", empty_is_missing=False)
    if "review_id" in cols.column_names(frame):
        doc_c, doc_u = cols.key_codes(frame, "review_id")  # no id and the empty one: the movie's own list
    else:
        doc_c, doc_u = np.full(len(movie_c), -1, dtype=np.int64), np.zeros(0, dtype=object)
    no_rank = rank.isna().to_numpy(dtype=bool)
    keep = np.flatnonzero((movie_c >= 0) & ~no_rank)
    rank_c = np.zeros(len(movie_c), dtype=np.int64)
    rank_c[keep] = sort_key(rank.iloc[keep].to_numpy())  # numeric order, as sort_values
    doc_rank = text_rank(doc_u, missing_first=True)  # code -1 (the movie's own list) sorts first
    order = stable_order(keep, len(movie_c), (text_rank(movie_u), movie_c), (doc_rank, doc_c), rank_c)
    rows = keep if order is None else keep[order]
    return _GtRows(
        rows, movie_c[rows], doc_c[rows], rank_c[rows], movie_u, doc_u, np.unique(movie_c[no_rank & (movie_c >= 0)])
    )


def clean_gt_table(
    frame: pd.DataFrame | pa.Table, source: str, problems: list[Problem]
) -> tuple[pd.DataFrame, set[str]]:
    """The GT table as movie, rank (positions 0..n-1 per GT list), keyword, helpful, not_helpful (+ review_id: a
    review's own list), and its unranked movies.

    Rows without movie or rank are dropped; lists are sorted by movie and
    review_id (as text; a movie's own list first), rows by rank, ties in file
    order.  Read as codes from Arrow or pandas columns alike.
    """
    numbers = _gt_numbers(frame)
    keyword_c, keyword_values, n_not_text = _gt_keywords(frame)
    has_doc = "review_id" in cols.column_names(frame)
    gt = _gt_rows(frame, numbers["rank"])
    unranked = _unranked_rows(gt)
    n_all = len(keyword_c)
    del frame

    empty_movie = np.flatnonzero(gt.movie_values == "")
    if len(empty_movie):  # the empty string is no movie
        kept = gt.movie != empty_movie[0]
        gt = replace(gt, rows=gt.rows[kept], movie=gt.movie[kept], doc=gt.doc[kept], rank=gt.rank[kept])
    if len(gt.rows) < n_all:
        problems.append(Problem(source, f"{n_all - len(gt.rows)} row(s) without movie or rank; dropped"))
    if n_not_text:
        problems.append(
            Problem(source, f"{n_not_text} keyword cell(s) are not text (e.g. lists); those GT rows are dropped")
        )
    rows = gt.rows
    missing = np.nan  # an absent helpful / not_helpful column
    out = pd.DataFrame(
        {
            "movie": object_column(gt.movie_values[gt.movie]),
            "rank": position_in_run(run_heads(gt.movie, gt.doc)),  # positions 0..n-1 within each GT list
            "keyword": object_column(keyword_values[keyword_c[rows]]),
            "helpful": numbers["helpful"].take(rows).reset_index(drop=True) if "helpful" in numbers else missing,
            "not_helpful": numbers["not_helpful"].take(rows).reset_index(drop=True)
            if "not_helpful" in numbers
            else missing,
        }
    )
    if has_doc:
        out["review_id"] = object_column(take_codes(gt.doc_values, gt.doc))
    return out, unranked


def _unranked_rows(gt: _GtRows) -> set[str]:
    """Movies whose every GT list gives all its keywords the same rank (or none): unranked GT."""
    head = run_heads(gt.movie, gt.doc)  # where each GT list starts
    new_rank = np.ones(len(gt.rows), dtype=bool)
    new_rank[1:] = gt.rank[1:] != gt.rank[:-1]
    ranks_in_list = (
        np.add.reduceat((new_rank | head).astype(np.int64), np.flatnonzero(head))
        if len(head)
        else np.zeros(0, np.int64)
    )
    list_movie = gt.movie[head]
    ranked = np.unique(list_movie[ranks_in_list > 1])
    with_rows = np.union1d(np.unique(gt.movie), gt.rankless_movies)
    return set(gt.movie_values[np.setdiff1d(with_rows, ranked)].tolist())


def unranked_movies(frame: pd.DataFrame) -> set[str]:
    """Movies whose every GT list gives all its keywords the same rank: unranked GT (before ranks become positions)."""
    return _unranked_rows(_gt_rows(frame, pd.to_numeric(frame["rank"], errors="coerce").reset_index(drop=True)))


def clean_reviews_table(frame: pd.DataFrame | pa.Table) -> pd.DataFrame:
    """movie, review_id, text, title, rating (+ any other columns): rows without movie or review_id dropped, first of
    each pair kept."""
    movie_c, movie_u = cols.key_codes(frame, "movie")
    review_c, review_u = cols.key_codes(frame, "review_id")
    key = movie_c * (len(review_u) + 1) + review_c
    keep = np.flatnonzero((movie_c >= 0) & (review_c >= 0))
    keep = keep[~pd.Series(key[keep]).duplicated().to_numpy()]
    columns = frame.column_names if isinstance(frame, pa.Table) else list(frame.columns)
    n = len(keep)
    out = {
        "movie": object_column(movie_u[movie_c[keep]]),
        "review_id": object_column(review_u[review_c[keep]]),
    }
    for col in ("text", "title"):
        out[col] = object_column(
            cols.text_values(frame, col, as_string=True)[keep] if col in columns else np.full(n, None, dtype=object)
        )
    out["rating"] = cols.numbers(frame, "rating")[keep] if "rating" in columns else np.full(n, np.nan)
    extra = [c for c in columns if c not in REVIEW_COLUMNS]
    if extra:
        rest = frame.select(extra).to_pandas() if isinstance(frame, pa.Table) else frame[extra]
        for col in extra:
            out[col] = rest[col].iloc[keep].reset_index(drop=True)
    return pd.DataFrame(out, copy=False)
