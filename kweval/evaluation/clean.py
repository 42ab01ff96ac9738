"""The clean stage: the ground truth cleaned and split into GT lists (docs/metrics.md §1 "Inputs and cleaning").

`clean_keyword_lists` is the one definition of the cleaning rule that GT
lists and predicted lists share: normalize each keyword, drop those empty
after normalization and those repeated within their list (the first is
kept).  `clean_ground_truth` orders each GT list (file rank, or helpful
votes), applies the rule and re-ranks 0..n-1; `clean_stage` then tells the
later stages where each movie's GT rows and each review's own list lie
(`CleanGroundTruth`, `GtLists`).  Keys are sorted and compared as integer
codes: per-document GT has millions of rows.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from kweval._arrays import (
    empty_as_missing,
    factorize_runs,
    mapped_codes,
    object_array,
    object_column,
    position_in_run,
    repeated,
    run_heads,
    sort_key,
    stable_order,
    take_codes,
    text_rank,
)
from kweval.data.dataset import Dataset, Problem
from kweval.text.normalize import normalize_many


@dataclass
class CleanKeywords:
    """Keywords given in lists, cleaned: which rows are kept and every row's normalized form (as a code)."""

    keep: np.ndarray  # per row: kept (not empty after normalization, not repeated within its list)
    norm: np.ndarray  # per row: code of its normalized keyword in `norm_values`; -1 for a missing keyword
    norm_values: np.ndarray  # the distinct normalized keywords (object)
    n_empty: int  # keywords (not missing) that normalize to nothing
    n_repeated: int  # keywords repeated within their list (after normalization)


def clean_keyword_lists(keywords: np.ndarray, list_id: np.ndarray) -> CleanKeywords:
    """Normalize each keyword, drop those empty after normalization and those repeated within their list.

    `list_id` numbers each row's list (rows of a list need not be adjacent);
    within a list the first occurrence of a normalized keyword is kept.  Each
    distinct keyword is normalized once (`_arrays.mapped_codes`).
    """
    norm, norm_values = mapped_codes(keywords, normalize_many)
    empty_code = np.flatnonzero(norm_values == "")
    empty = (norm < 0) | (norm == empty_code[0]) if len(empty_code) else norm < 0
    again = repeated(np.asarray(list_id, dtype=np.int64) * (len(norm_values) + 1) + norm)
    return CleanKeywords(
        keep=~empty & ~again,
        norm=norm,
        norm_values=norm_values,
        n_empty=int((empty & (norm >= 0)).sum()),
        n_repeated=int((~empty & again).sum()),
    )


def clean_ground_truth(gt: pd.DataFrame, order: str = "file") -> pd.DataFrame:
    """Per GT list: order (file rank, or helpful desc then not_helpful asc), normalize, drop empty and duplicates;
    re-rank 0..n-1.

    A GT list is a movie's (rows without `review_id`) or one review's own
    (rows with it); the result keeps `review_id` (None for a movie's list),
    each movie's lists together, its movie-level list first.
    """
    return cleaned_gt_rows(gt, order).table


@dataclass
class CleanGtRows:
    """clean_ground_truth's table and the per-row arrays it was built from (one Python string per distinct value)."""

    table: pd.DataFrame  # clean_ground_truth's result
    movie: np.ndarray  # per row: its movie's sort code (a movie's rows are contiguous)
    doc: np.ndarray  # per row: its review_id's sort code (equal codes: the same list within a movie)
    per_review: np.ndarray  # per row: belongs to a review's own list (has a review_id)
    review_id: np.ndarray  # per row: review_id, None for the movie's own list
    keyword: np.ndarray  # per row: the keyword as given
    norm: np.ndarray  # per row: the normalized keyword


def _list_order(gt: pd.DataFrame, movie_code: np.ndarray, doc_code: np.ndarray, order: str) -> np.ndarray | None:
    """The rows in list order (movie, then list, then rank or helpful votes; ties in file order); None: in order."""
    keys = [sort_key(gt["rank"].to_numpy())]  # least significant first, as np.lexsort takes them
    if order == "helpful":
        helpful = pd.to_numeric(gt["helpful"], errors="coerce").fillna(0.0).to_numpy()
        not_helpful = pd.to_numeric(gt["not_helpful"], errors="coerce").fillna(0.0).to_numpy()
        keys = [keys[0], sort_key(not_helpful), sort_key(-helpful)]
    return stable_order(None, len(gt), movie_code, doc_code, *keys[::-1])


def cleaned_gt_rows(gt: pd.DataFrame, order: str) -> CleanGtRows:
    """clean_ground_truth, with the arrays the evaluation stages split by movie and list."""
    doc, ids = _gt_review_ids(gt)  # code -1: the movie's own list, which sorts first; then the ids as text
    movie_code = sort_key(gt["movie"].to_numpy())
    doc_code = text_rank(ids, missing_first=True)[doc]
    sorted_rows = _list_order(gt, movie_code, doc_code, order)
    rows = np.arange(len(gt)) if sorted_rows is None else sorted_rows
    keyword = gt["keyword"].to_numpy(dtype=object)
    keyword = keyword if sorted_rows is None else keyword[rows]
    list_id = np.cumsum(run_heads(movie_code[rows], doc_code[rows])) - 1
    cleaned = clean_keyword_lists(keyword, list_id)
    keep = cleaned.keep
    rows, row_norm, list_id, keyword = rows[keep], cleaned.norm[keep], list_id[keep], keyword[keep]
    doc = doc[rows]
    table = gt[["movie", "keyword"]].iloc[rows].reset_index(drop=True)
    table.insert(1, "rank", position_in_run(run_heads(list_id)))
    table["norm"] = _text_column(row_norm, cleaned.norm_values, empty_dtype="float64")  # an empty list's dtype
    table["review_id"] = _text_column(doc, ids, empty_dtype=object)
    if "relevance" in gt.columns:  # explicit relevances (judged GT, docs/metrics.md §11), carried with their rows
        table["relevance"] = pd.to_numeric(gt["relevance"], errors="coerce").to_numpy(dtype="float64")[rows]
    return CleanGtRows(
        table,
        movie_code[rows],
        doc_code[rows],
        doc >= 0,
        take_codes(ids, doc),
        keyword,
        cleaned.norm_values[row_norm],
    )


def _text_column(codes: np.ndarray, values: np.ndarray, empty_dtype: str | type) -> pd.Series:
    """The column `values[codes]` (code -1: None) with the dtype pandas infers for it (pandas 3: its Arrow `str`),
    `empty_dtype` without rows.

    Built from the distinct values: converting millions of rows' strings one by
    one into Arrow costs seconds, taking from the converted distinct values does not.
    """
    if len(codes) == 0:
        return pd.Series([], dtype=empty_dtype)
    values = object_array([None, *values])  # code -1 picks the leading None
    at = codes + 1
    used = np.bincount(at, minlength=len(values)) > 0
    distinct = pd.Series(values[used])  # the rows' distinct values, converted (and their dtype inferred) once
    return pd.Series(distinct.array.take((np.cumsum(used) - 1)[at]), copy=False)


def _gt_review_ids(gt: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """The GT table's `review_id` as (codes, distinct ids as text); code -1: no id (the row belongs to the movie's
    list).

    Text ids (as the readers give them) are hashed once per run of equal
    neighbours; other values become their text.  No id, NA and "" are no id.
    """
    if "review_id" not in gt.columns:
        return np.full(len(gt), -1, dtype=np.int64), np.zeros(0, dtype=object)
    values = gt["review_id"].to_numpy(dtype=object)
    if pd.api.types.infer_dtype(values, skipna=True) not in ("string", "empty"):
        values = object_array(
            [None if v is None or v is pd.NA or (isinstance(v, float) and v != v) else str(v) for v in values.tolist()]
        )
    codes, ids = factorize_runs(values)
    codes, ids = empty_as_missing(codes.astype(np.int64), np.asarray(ids, dtype=object))
    return codes, ids


def ranked_movies(movies: pd.DataFrame) -> dict[str, bool]:
    """Movie -> whether its GT is ranked (the `movies` table's optional `ranked` column; ranked when absent or
    unreadable)."""
    if "ranked" not in movies.columns:
        return {}
    out = {}
    for movie, flag in zip(movies["movie"], movies["ranked"]):
        if isinstance(flag, str):
            flag = {"true": True, "1": True, "yes": True, "false": False, "0": False, "no": False}.get(
                flag.strip().lower()
            )
        if isinstance(flag, (bool, np.bool_)) or (
            isinstance(flag, (int, float, np.integer, np.floating)) and flag in (0, 1)
        ):
            out[movie] = bool(flag)
    return out


@dataclass
class GtLists:
    """Where one movie's GT lists lie in its cleaned GT rows (movie-level list first, then one per review)."""

    movie_level: tuple[int, int] | None  # (start, size) of the movie's own list, if it has one
    review_ids: pd.Index  # the reviews with their own list (distinct), hashed once for every lookup
    review_start: np.ndarray  # per review in review_ids: where its list starts among the movie's GT rows
    review_size: np.ndarray  # per review in review_ids: its list's size

    def find(self, reviews: np.ndarray) -> np.ndarray:
        """Per review, its position in `review_ids` (-1: no list of its own)."""
        return self.review_ids.get_indexer(reviews) if len(reviews) else np.zeros(0, np.int64)

    def ranges(self, reviews: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(start, size) of the list each review is scored against: its own, else the movie's, else (0, 0)."""
        fallback_start, fallback_size = self.movie_level or (0, 0)
        at = self.find(reviews)
        own = at >= 0
        start = np.where(own, self.review_start[np.where(own, at, 0)] if len(self.review_start) else 0, fallback_start)
        size = np.where(own, self.review_size[np.where(own, at, 0)] if len(self.review_size) else 0, fallback_size)
        return start.astype(np.int64), size.astype(np.int64)


def _gt_lists(
    rows: CleanGtRows, movie_names: list, movie_start: np.ndarray, movie_end: np.ndarray
) -> dict[str, GtLists]:
    """Movie -> its GT lists, for the movies with at least one review's own list.

    `movie_names`, `movie_start`, `movie_end`: the movies of `rows` and their
    rows (each movie's rows are contiguous; rows of no movie belong to none).
    """
    per_review = rows.per_review
    if not per_review.any():
        return {}
    n = len(per_review)
    heads = np.flatnonzero(run_heads(rows.movie, rows.doc))
    sizes = np.diff(np.append(heads, n))
    head_movie = np.searchsorted(movie_start, heads, side="right") - 1  # position in movie_names
    in_movie = (
        (head_movie >= 0) & (heads < movie_end[np.maximum(head_movie, 0)])
        if len(movie_end)
        else np.zeros(len(heads), bool)
    )
    heads, sizes, head_movie = heads[in_movie], sizes[in_movie], head_movie[in_movie]
    head_own = per_review[heads]
    out: dict[str, GtLists] = {}
    for m in np.unique(head_movie[head_own]).tolist():
        of_movie = head_movie == m
        own, shared = of_movie & head_own, of_movie & ~head_own
        offset = int(movie_start[m])
        movie_level = (int(heads[shared][-1]) - offset, int(sizes[shared][-1])) if shared.any() else None
        _, first = np.unique(rows.doc[heads[own]], return_index=True)  # a review's list is one run
        first.sort()
        out[movie_names[m]] = GtLists(
            movie_level,
            pd.Index(rows.review_id[heads[own]][first], dtype=object),
            (heads[own][first] - offset).astype(np.int64),
            sizes[own][first].astype(np.int64),
        )
    return out


@dataclass
class CleanGroundTruth:
    """The cleaned GT and what every later stage looks up in it, per evaluated movie."""

    table: pd.DataFrame  # clean_ground_truth's rows
    sizes: pd.Series  # movie -> number of cleaned GT rows
    movies: list[str]  # the evaluated movies (those with GT), in dataset order
    norms: dict[str, list[str]]  # movie -> its GT rows' normalized keywords
    keywords: dict[str, np.ndarray]  # movie -> its GT rows' keywords as given
    lists: dict[str, GtLists]  # movies whose reviews have their own GT lists
    ranked: dict[str, bool]  # movie -> whether its GT is ranked (absent: ranked)
    relevance: dict[str, np.ndarray] | None = None  # movie -> its GT rows' explicit relevances (judged GT, §11)


def clean_stage(dataset: Dataset, order: str, movie_problems: dict[str, list[Problem]]) -> CleanGroundTruth:
    """Clean the GT (docs/metrics.md §1 "Inputs and cleaning") and note the movies without GT, which are skipped."""
    rows = cleaned_gt_rows(dataset.ground_truth, order)
    gt = rows.table
    starts = np.flatnonzero(run_heads(rows.movie))
    ends = np.append(starts[1:], len(rows.movie))
    names = gt["movie"].iloc[starts].to_numpy(dtype=object)
    with_movie = pd.notna(names)  # as groupby: rows without a movie belong to none
    starts, ends, names = starts[with_movie], ends[with_movie], names[with_movie].tolist()
    gt_sizes = pd.Series(ends - starts, index=pd.Index(names, name="movie"), dtype=np.int64)
    movie_order = dataset.movies["movie"].tolist()
    for m in movie_order:
        if m not in gt_sizes.index:
            n_rev = int((dataset.reviews["movie"] == m).sum())
            movie_problems[m].append(
                Problem(m, f"no ground-truth keywords; its {n_rev} review(s) are skipped", "evaluate")
            )
    return CleanGroundTruth(
        table=gt,
        sizes=gt_sizes,
        movies=[m for m in movie_order if gt_sizes.get(m, 0) > 0],
        norms={m: rows.norm[a:b].tolist() for m, a, b in zip(names, starts.tolist(), ends.tolist())},
        keywords={m: rows.keyword[a:b] for m, a, b in zip(names, starts.tolist(), ends.tolist())},
        lists=_gt_lists(rows, names, starts, ends),
        ranked=ranked_movies(dataset.movies),
        relevance=_explicit_relevance(gt, names, starts, ends),
    )


def _explicit_relevance(gt: pd.DataFrame, names: list, starts: np.ndarray, ends: np.ndarray) -> dict | None:
    """Movie -> its GT rows' explicit relevances when the GT gives them (a `relevance` column), else None."""
    if "relevance" not in gt.columns:
        return None
    values = gt["relevance"].to_numpy(dtype="float64")
    return {m: values[a:b] for m, a, b in zip(names, starts.tolist(), ends.tolist())}


def gt_list_keys(gt: pd.DataFrame) -> Callable[[pd.DataFrame], pd.DataFrame]:
    """A function giving a table (movie, review_id, ...) whose `movie` names the GT list its rows are scored against.

    For the movie-keyed semantic and sentiment metrics: a review with its own
    GT list gets the key "movie\\x00review_id" (the separator never survives
    normalization); everything else keeps its movie, so movie-level data
    passes through unchanged.  Applied to `gt` itself it keys each list alike.
    """
    own = gt["review_id"].notna().to_numpy()
    if not own.any():
        return lambda frame: frame
    lists = set(zip(gt["movie"][own].tolist(), gt["review_id"][own].tolist()))

    def rekey(frame: pd.DataFrame) -> pd.DataFrame:
        pairs = zip(frame["movie"].tolist(), frame["review_id"].tolist())
        return frame.assign(movie=object_column([f"{m}\x00{r}" if (m, r) in lists else m for m, r in pairs]).to_numpy())

    return rekey
