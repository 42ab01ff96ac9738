"""The match stage: each movie's predictions grouped, cleaned and matched one-to-one to its GT (docs/metrics.md §1–2).

Movie by movie (grouping, cleaning and matching need only that movie's rows,
so the temporary arrays stay the size of one movie): the rows are grouped by
review × model and put in rank order, cleaned by the rule GT lists follow
too (`clean.clean_keyword_lists`), and each group's keywords are assigned
one-to-one, greedily in rank order, to its GT list (`kweval.text.matching`):
the movie's list, or the review's own one (per-document GT).  The kept rows
go into `RowBuffers`, allocated once for all movies.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from kweval._arrays import (
    concat_or_empty,
    factorize_runs,
    index_dtype,
    object_array,
    position_in_run,
    positions,
    run_heads,
    stable_order,
    unique_codes,
)
from kweval.data.dataset import Dataset, Problem
from kweval.evaluation.clean import CleanGroundTruth, GtLists, clean_keyword_lists
from kweval.evaluation.options import Progress
from kweval.text.matching import assign_matches_table, candidate_table, keywords_match_indexed


@dataclass
class _PredictionColumns:
    """The predictions table's columns as arrays, read once for every movie."""

    review: np.ndarray  # object
    model: np.ndarray  # per row: the model's position in the models, -1 if not evaluated
    rank: np.ndarray
    keyword: np.ndarray  # object
    score: np.ndarray  # float64


@dataclass
class _MovieRows:
    """The cleaned, matched prediction rows of one movie (grouped by review × model, in rank order)."""

    group_review: np.ndarray  # per group: review id
    group_model: np.ndarray  # per group: model position
    grp: np.ndarray  # per kept row: group index within the movie
    keyword: np.ndarray
    norm: np.ndarray
    score: np.ndarray
    position: np.ndarray
    gt_pos: np.ndarray  # the matched GT row's position among the movie's cleaned GT rows, or -1
    group_gt_start: np.ndarray  # per group: where its GT list starts among the movie's GT rows
    group_n_gt: np.ndarray  # per group: |G| of its GT list
    n_empty: int  # keywords dropped as empty after normalization
    n_repeated: int  # keywords dropped as repeated within a review × model
    n_without_gt: int  # reviews skipped for want of their own GT list (movies without a movie-level list)


class RowBuffers:
    """Per-row output columns for all movies, allocated once and filled movie by movie.

    The metrics read only the numeric columns (grp, score, position, gt_pos,
    list_rank); the text columns (movie, review, model, keyword, norm,
    gt_keyword) exist for the per-keyword table and are allocated only when
    it is asked for (`texts`): at a million reviews they are the larger part.
    Without them they stay empty.  The integer columns take `index_dtype`
    (int32 where the row count allows), and `list_rank` is `gt_pos` itself
    unless reviews have GT lists of their own (`own_lists`).
    """

    def __init__(self, n: int, texts: bool = True, own_lists: bool = False) -> None:
        self.texts = texts
        self.own_lists = own_lists
        index = index_dtype(n)
        self.grp = np.empty(n, dtype=index)  # per row: its review × model group
        self.score = np.empty(n, dtype="float64")  # per row: the score as given
        self.position = np.empty(n, dtype=index)  # per row: 0-based rank after cleaning
        self.gt_pos = np.empty(n, dtype=index)  # per row: the matched GT row among the movie's, or -1
        self.list_rank = np.empty(n, dtype=index) if own_lists else self.gt_pos  # its rank in the group's list
        n_text = n if texts else 0
        self.movie = np.empty(n_text, dtype=object)
        self.review = np.empty(n_text, dtype=object)
        self.model = np.empty(n_text, dtype=object)
        self.keyword = np.empty(n_text, dtype=object)
        self.norm = np.empty(n_text, dtype=object)
        self.gt_keyword = np.empty(n_text, dtype=object)
        self.filled = 0

    def add(
        self, part: _MovieRows, movie: str, group_offset: int, model_names: np.ndarray, gt_keywords: np.ndarray
    ) -> None:
        sl = slice(self.filled, self.filled + len(part.grp))
        self.grp[sl] = part.grp + group_offset
        self.score[sl] = part.score
        self.position[sl] = part.position
        self.gt_pos[sl] = part.gt_pos
        if self.own_lists:  # the matched GT keyword's rank in the group's own list
            self.list_rank[sl] = np.where(part.gt_pos >= 0, part.gt_pos - part.group_gt_start[part.grp], -1)
        self.filled = sl.stop
        if not self.texts:
            return
        self.movie[sl] = movie
        self.review[sl] = part.group_review[part.grp]
        self.model[sl] = model_names[part.group_model[part.grp]]
        self.keyword[sl] = part.keyword
        self.norm[sl] = part.norm
        gt_keyword = np.full(len(part.gt_pos), None, dtype=object)
        hit = part.gt_pos >= 0
        gt_keyword[hit] = gt_keywords[part.gt_pos[hit]]
        self.gt_keyword[sl] = gt_keyword

    def trimmed(self) -> RowBuffers:
        """The buffers cut to the rows filled (cleaning drops rows, so fewer than allocated)."""
        stop = self.filled
        self.grp, self.score, self.position, self.gt_pos = (
            self.grp[:stop],
            self.score[:stop],
            self.position[:stop],
            self.gt_pos[:stop],
        )
        self.list_rank = self.list_rank[:stop] if self.own_lists else self.gt_pos
        if self.texts:
            self.movie, self.review, self.model = self.movie[:stop], self.review[:stop], self.model[:stop]
            self.keyword, self.norm, self.gt_keyword = self.keyword[:stop], self.norm[:stop], self.gt_keyword[:stop]
        return self


@dataclass
class Matches:
    """Every kept prediction row with its one-to-one match, and the review × model groups they belong to."""

    rows: RowBuffers  # per kept row, grouped by review × model, in rank order
    group_movie: np.ndarray  # per group: position in the evaluated movies
    group_model: np.ndarray  # per group: position in the models
    group_review: np.ndarray  # per group: review id
    group_gt_start: np.ndarray  # per group: where its GT list starts among the movie's GT rows
    n_gt: np.ndarray  # per group: |G|
    dropped: list[tuple[str, int, int]]  # per movie: keywords empty after normalization, repeated

    @property
    def gt_pos(self) -> np.ndarray:
        """Per row: the matched GT row's position among the movie's GT rows, or -1."""
        return self.rows.gt_pos

    @property
    def gt_rank(self) -> np.ndarray:
        """Per row: the matched GT keyword's rank in the group's own list, or -1."""
        return self.rows.list_rank

    @property
    def n_groups(self) -> int:
        return len(self.group_model)


def _rows_by_movie(dataset: Dataset, movies: list[str]) -> tuple[np.ndarray, np.ndarray, _PredictionColumns]:
    """The evaluated prediction rows, movie by movie (the reader's order within), each movie's bounds among them, and
    the columns.

    Only the evaluated movies and models are kept.
    """
    pred = dataset.predictions
    model_order = dataset.models["model"].tolist()
    row_movie = positions(pred["movie"].to_numpy(dtype=object), {m: i for i, m in enumerate(movies)})
    row_model = positions(pred["model"].to_numpy(dtype=object), {m: i for i, m in enumerate(model_order)})
    rows = np.flatnonzero((row_movie >= 0) & (row_model >= 0))
    rows = rows[np.argsort(row_movie[rows], kind="stable")]
    movie_bounds = np.searchsorted(row_movie[rows], np.arange(len(movies) + 1))
    columns = _PredictionColumns(
        review=pred["review_id"].to_numpy(dtype=object),
        model=row_model.astype(np.int32),
        rank=pred["rank"].to_numpy(),
        keyword=pred["keyword"].to_numpy(dtype=object),
        score=pred["score"].to_numpy(dtype="float64"),
    )
    return rows, movie_bounds, columns


def match_stage(
    dataset: Dataset,
    gt: CleanGroundTruth,
    match: str,
    movie_problems: dict[str, list[Problem]],
    progress: Progress,
    keywords: bool = True,
) -> Matches:
    """Clean the predictions (docs/metrics.md §1) and assign them one-to-one to the GT (§2 "Matching"), movie by movie.

    A movie whose reviews have their own GT lists and no movie-level list
    scores only those reviews.  The rows' text columns are kept only for the
    per-keyword table (`keywords`).
    """
    movies = gt.movies
    model_names = object_array(dataset.models["model"].tolist())
    rows, movie_bounds, columns = _rows_by_movie(dataset, movies)
    out = RowBuffers(len(rows), texts=keywords, own_lists=bool(gt.lists))
    # per movie, its groups' arrays and what cleaning dropped (its rows are in `out`: the parts are not kept)
    review, model, gt_start, n_gt, dropped = [], [], [], [], []
    n_groups = 0
    for mi, movie in enumerate(movies):
        movie_rows = rows[movie_bounds[mi] : movie_bounds[mi + 1]]
        part = _clean_and_match_movie(
            movie_rows, columns, len(model_names), gt.norms[movie], match, gt.lists.get(movie)
        )
        if part.n_without_gt:
            reason = f"{part.n_without_gt} review(s) without their own ground truth are skipped"
            movie_problems[movie].append(Problem(movie, reason, "evaluate"))
        out.add(part, movie, n_groups, model_names, gt.keywords[movie])
        n_groups += len(part.group_model)
        review.append(part.group_review)
        model.append(part.group_model)
        gt_start.append(part.group_gt_start)
        n_gt.append(part.group_n_gt)
        dropped.append((movie, part.n_empty, part.n_repeated))
        progress("matching", 0.1 + 0.7 * (mi + 1) / max(len(movies), 1))
    return Matches(
        rows=out.trimmed(),
        group_movie=np.repeat(np.arange(len(movies), dtype=np.int64), [len(m) for m in model]),
        group_model=concat_or_empty(model, np.int64),
        group_review=concat_or_empty(review, object),
        group_gt_start=concat_or_empty(gt_start, np.int64),
        n_gt=concat_or_empty(n_gt, np.int64),
        dropped=dropped,
    )


@dataclass
class _Groups:
    """One movie's scored rows and their review × model groups, numbered in key order (review, then model)."""

    rows: np.ndarray  # the movie's rows that are scored (positions in the predictions table)
    of_row: np.ndarray  # per row: its group
    review: np.ndarray  # per group: review id
    review_code: np.ndarray  # per group: the review's position in `reviews`
    model: np.ndarray  # per group: model position
    reviews: np.ndarray  # the movie's distinct reviews, in order of first appearance
    n_without_gt: int  # reviews skipped for want of their own GT list


def _groups(rows: np.ndarray, columns: _PredictionColumns, n_models: int, lists: GtLists | None) -> _Groups:
    """Number one movie's review × model groups: reviews by first appearance, then model order.

    Without a movie-level list (`lists.movie_level` None) only the reviews
    with their own GT list are scored.
    """
    review_code, reviews = factorize_runs(columns.review[rows], use_na_sentinel=False)
    n_without_gt = 0
    if lists is not None and lists.movie_level is None:  # only reviews with their own GT are scored
        has = lists.find(reviews) >= 0
        keep = has[review_code]
        rows, review_code, n_without_gt = rows[keep], review_code[keep], int((~has & pd.notna(reviews)).sum())
    group_key = review_code.astype(np.int64) * n_models + columns.model[rows]
    sorted_keys, of_row = unique_codes(group_key, len(reviews) * n_models)  # groups in key order
    group_review_code = sorted_keys // n_models
    return _Groups(
        rows=rows,
        of_row=of_row,
        review=reviews[group_review_code] if len(sorted_keys) else np.zeros(0, dtype=object),
        review_code=group_review_code,
        model=(sorted_keys % n_models).astype(np.int64),
        reviews=reviews,
        n_without_gt=n_without_gt,
    )


def _clean_and_match_movie(
    rows: np.ndarray,
    columns: _PredictionColumns,
    n_models: int,
    gt_norms: list[str],
    match: str,
    lists: GtLists | None = None,
) -> _MovieRows:
    """Group one movie's rows by review × model, order them, clean them, match them.

    Groups are ordered by the review's first appearance, then model order;
    rows by rank, ties in the reader's order.  `lists`, when given, says which
    slice of `gt_norms` each review is scored against (reviews with their own
    GT; without a movie-level list, the other reviews are skipped);
    otherwise every review is scored against all of it.
    """
    groups = _groups(rows, columns, n_models, lists)
    order = stable_order(None, len(groups.rows), groups.of_row, columns.rank[groups.rows])
    order = np.arange(len(groups.rows)) if order is None else order  # None: in order already (as readers give them)
    row_group = groups.of_row[order]
    taken = groups.rows[order]
    raw_kw = columns.keyword[taken]
    cleaned = clean_keyword_lists(raw_kw, row_group)
    grp = row_group[cleaned.keep]
    norm_id = cleaned.norm[cleaned.keep]
    if lists is None:
        group_gt_start = np.zeros(len(groups.model), dtype=np.int64)
        group_n_gt = np.full(len(groups.model), len(gt_norms), dtype=np.int64)
    else:
        review_gt_start, review_n_gt = lists.ranges(groups.reviews)  # looked up once per review, not per group
        group_gt_start, group_n_gt = review_gt_start[groups.review_code], review_n_gt[groups.review_code]
    gt_pos = np.full(len(grp), -1, dtype=np.int64)
    if len(grp):
        local_ids, inverse = unique_codes(norm_id, len(cleaned.norm_values))
        preds = cleaned.norm_values[local_ids].tolist()
        if lists is None:
            gt_pos = assign_matches_table(grp, inverse, *candidate_table(preds, gt_norms, match))
        else:
            gt_pos = _assign_within_lists(grp, inverse, preds, gt_norms, match, group_gt_start, group_n_gt)
    return _MovieRows(
        group_review=groups.review,
        group_model=groups.model,
        grp=grp,
        keyword=raw_kw[cleaned.keep],
        norm=cleaned.norm_values[norm_id] if len(norm_id) else np.zeros(0, dtype=object),
        score=columns.score[taken][cleaned.keep],
        position=position_in_run(run_heads(grp)),  # rows are in group order: the rank after cleaning
        gt_pos=gt_pos,
        group_gt_start=group_gt_start,
        group_n_gt=group_n_gt,
        n_empty=cleaned.n_empty,
        n_repeated=cleaned.n_repeated,
        n_without_gt=groups.n_without_gt,
    )


def _assign_within_lists(
    grp: np.ndarray,
    pred_id: np.ndarray,
    preds: list[str],
    gt_norms: list[str],
    match: str,
    group_gt_start: np.ndarray,
    group_n_gt: np.ndarray,
) -> np.ndarray:
    """`assign_matches_table` where each group has its own GT list, a slice of `gt_norms` (per-review GT).

    Each distinct (GT list, keyword) pair of the rows keeps the positions of
    its own list holding a matching string (`keywords_match_indexed` on the
    movie's distinct keywords and GT strings), so the one-to-one assignment is
    the movie-level one, list by list.
    """
    gt_codes, gt_uniques = pd.factorize(object_array(gt_norms))
    # the distinct (GT list, keyword) pairs of the rows; lists are told apart by their start
    pair_of_row, pair_keys = pd.factorize(group_gt_start[grp] * len(preds) + pred_id)
    n_pairs = len(pair_keys)
    pair_start, pair_pred = np.divmod(pair_keys, len(preds))
    pair_size = np.zeros(n_pairs, dtype=np.int64)
    pair_size[pair_of_row] = group_n_gt[grp]
    # every GT position of each pair's list (pair i's are entries pair_end[i] - pair_size[i] .. pair_end[i] - 1),
    # kept where its string matches the pair's keyword
    pair_end = np.cumsum(pair_size)
    position = np.arange(int(pair_end[-1]) if n_pairs else 0, dtype=np.int64) - np.repeat(
        pair_end - pair_size - pair_start, pair_size
    )
    hit = np.flatnonzero(
        keywords_match_indexed(preds, gt_uniques.tolist(), np.repeat(pair_pred, pair_size), gt_codes[position], match)
    )
    owner = np.searchsorted(pair_end, hit, side="right")  # the pair of each hit, in pair order
    pair_bounds = np.concatenate(([0], np.cumsum(np.bincount(owner, minlength=n_pairs))))
    return assign_matches_table(grp, pair_of_row.astype(np.int64), pair_bounds, position[hit])
