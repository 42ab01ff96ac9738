"""The present/absent stage: which GT keywords occur in their review's own text (docs/metrics.md §9).

A GT keyword is *present* when its normalized form occurs in the review's
normalized text under the match mode (`kweval.text.present`); the
present/absent metrics split recall by it and are undefined (NaN) for a
review without text.  A list several reviews share (a movie's) is searched
once in all their texts; a review's own list is tested keyword by keyword in
its one text.  Texts are normalized `_PRESENT_CHUNK` reviews at a time, so the
stage holds no copy of all the texts.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
import pandas as pd

from kweval._arrays import concat_or_empty, factorize_runs, object_array, positions
from kweval.text import present

_PRESENT_CHUNK = 1 << 16  # reviews whose texts are normalized and searched at once: bounds what the stage holds


@dataclass
class _ScoredReviews:
    """The distinct reviews of the groups (numbered by their first group), each with its GT list and text."""

    of_group: np.ndarray  # per group, its review
    movie: np.ndarray  # per review, its movie (position in `movies`)
    gt_start: np.ndarray  # its GT list: positions gt_start .. gt_start + n_gt - 1 among the movie's GT rows
    n_gt: np.ndarray
    text: np.ndarray  # object: the text, None where the reviews table has no row for it
    has_text: np.ndarray  # a text that is not blank: present/absent are defined


def present_gt(
    reviews: pd.DataFrame,
    gt_norm_by_movie: dict[str, list[str]],
    movies: list[str],
    group_movie: np.ndarray,
    group_review: np.ndarray,
    group_gt_start: np.ndarray,
    group_n_gt: np.ndarray,
    pair_group: np.ndarray,
    pair_gt_pos: np.ndarray,
    match: str,
) -> tuple[np.ndarray, np.ndarray]:
    """Per group, how many keywords of its GT list occur in its review's text (-1: no text); per matched pair, whether
    its GT keyword does.

    `pair_group` are the pairs' groups, `pair_gt_pos` positions among the
    movie's GT rows.  A list several reviews share (a movie's) is searched
    once in all their texts (kweval.text.present.occurrences); a review's own list
    is tested keyword by keyword in its one text (kweval.text.present.contained).
    Texts are normalized once per review, `_PRESENT_CHUNK` reviews at a time,
    so the stage holds no copy of all the texts.
    """
    rv = _scored_reviews(reviews, movies, group_movie, group_review, group_gt_start, group_n_gt)
    # every GT keyword once, indexed by movie offset + position
    gt_offset = np.concatenate(([0], np.cumsum([len(gt_norm_by_movie[m]) for m in movies]))).astype(np.int64)
    gt_norms = np.fromiter(
        itertools.chain.from_iterable(gt_norm_by_movie[m] for m in movies), dtype=object, count=int(gt_offset[-1])
    )
    width = int(max(np.diff(gt_offset).max(initial=0), 1)) + 1
    list_codes, _ = pd.factorize(rv.movie * width + rv.gt_start)
    shared = np.bincount(list_codes)[list_codes] > 1

    n_present = np.where(rv.has_text, 0, -1)
    own_row_present = _own_lists_present(
        rv, np.flatnonzero(~shared & rv.has_text), gt_norms, gt_offset, match, n_present
    )
    scan = np.flatnonzero(shared & rv.has_text)
    found = _shared_lists_present(
        rv, scan[np.argsort(list_codes[scan], kind="stable")], gt_norms, gt_offset, width, match, n_present
    )

    pair_review = rv.of_group[pair_group]
    pair_present = own_row_present[gt_offset[group_movie[pair_group]] + pair_gt_pos]
    in_shared = np.flatnonzero(shared[pair_review])
    if len(in_shared):
        pair_present[in_shared] = np.isin(pair_review[in_shared] * width + pair_gt_pos[in_shared], found)
    return n_present[rv.of_group], pair_present


def _scored_reviews(
    reviews: pd.DataFrame,
    movies: list[str],
    group_movie: np.ndarray,
    group_review: np.ndarray,
    group_gt_start: np.ndarray,
    group_n_gt: np.ndarray,
) -> _ScoredReviews:
    """The distinct (movie, review) of the groups, their GT lists and texts."""
    review_codes, review_uniques = factorize_runs(group_review, use_na_sentinel=False)
    n_rev = max(len(review_uniques), 1)
    of_group, _ = factorize_runs(group_movie * n_rev + review_codes)
    first = np.flatnonzero(~pd.Series(of_group).duplicated().to_numpy())  # factorize numbers by first appearance
    movie = group_movie[first]
    text = _review_texts(reviews, movies, review_uniques, movie * n_rev + review_codes[first], n_rev)
    return _ScoredReviews(
        of_group, movie, group_gt_start[first], group_n_gt[first], text, present.has_text(text.tolist())
    )


def _review_texts(
    reviews: pd.DataFrame, movies: list[str], review_uniques: np.ndarray, keys: np.ndarray, n_rev: int
) -> np.ndarray:
    """The text of each review `keys` names (movie position * `n_rev` + position in `review_uniques`), None where it has
    no row.

    Looked up by hashing codes (no dict of every review); a review given
    twice takes its last row's text.
    """
    movie_code = positions(reviews["movie"].to_numpy(dtype=object), {m: i for i, m in enumerate(movies)})
    # one factorize of the review ids after the (distinct) review_uniques, which take codes 0 .. n - 1
    # (cheaper than Index.get_indexer on strings: docs/scaling.md)
    codes, _ = pd.factorize(
        np.concatenate([review_uniques, reviews["review_id"].to_numpy(dtype=object)]), use_na_sentinel=False
    )
    review_code = codes[len(review_uniques) :]
    review_code[review_code >= len(review_uniques)] = -1
    of_row = pd.Index(keys).get_indexer(
        np.where((movie_code >= 0) & (review_code >= 0), movie_code * n_rev + review_code, -1)
    )
    rows = np.flatnonzero(of_row >= 0)
    rows = rows[~pd.Series(of_row[rows]).duplicated(keep="last").to_numpy()]
    texts = np.full(len(keys), None, dtype=object)
    texts[of_row[rows]] = reviews["text"].to_numpy(dtype=object)[rows]
    return texts


def _own_lists_present(
    rv: _ScoredReviews, own: np.ndarray, gt_norms: np.ndarray, gt_offset: np.ndarray, match: str, n_present: np.ndarray
) -> np.ndarray:
    """Per GT row, whether it occurs in its review's text, for the `own` reviews (each the one user of its list): each
    keyword tested in its text.

    Adds each review's count to `n_present`.
    """
    row_present = np.zeros(len(gt_norms), dtype=bool)
    for chunk in (own[s : s + _PRESENT_CHUNK] for s in range(0, len(own), _PRESENT_CHUNK)):
        sizes = rv.n_gt[chunk]
        owner = np.repeat(np.arange(len(chunk)), sizes)
        row = np.repeat(
            gt_offset[rv.movie[chunk]] + rv.gt_start[chunk] - (np.cumsum(sizes) - sizes), sizes
        ) + np.arange(len(owner))
        texts = object_array(present.searchable(rv.text[chunk].tolist(), match))
        hit = present.contained(texts[owner], present.searchable_keywords(gt_norms[row].tolist(), match))
        row_present[row[hit]] = True
        n_present[chunk] += np.bincount(owner[hit], minlength=len(chunk))
    return row_present


def _shared_lists_present(
    rv: _ScoredReviews,
    scan: np.ndarray,
    gt_norms: np.ndarray,
    gt_offset: np.ndarray,
    width: int,
    match: str,
    n_present: np.ndarray,
) -> np.ndarray:
    """review * `width` + position of each GT keyword found in the `scan` reviews' texts, whose lists others share
    (given list by list).

    Each list is searched once in the texts of all its reviews joined; adds each review's count to `n_present`.
    """
    found: list[np.ndarray] = []
    list_start = rv.movie[scan] * width + rv.gt_start[scan]
    for part in np.split(scan, np.flatnonzero(np.diff(list_start)) + 1) if len(scan) else []:
        m, start, size = int(rv.movie[part[0]]), int(rv.gt_start[part[0]]), int(rv.n_gt[part[0]])
        keywords = present.searchable_keywords(
            gt_norms[gt_offset[m] + start : gt_offset[m] + start + size].tolist(), match
        )
        kw_idx, text_idx = present.occurrences(keywords, present.searchable(rv.text[part].tolist(), match))
        n_present[part] += np.bincount(text_idx, minlength=len(part))
        found.append(part[text_idx] * width + start + kw_idx)
    return concat_or_empty(found, np.int64)
