"""The failure category of every GT keyword of every review × model (docs/metrics.md §10, GT side).

A GT keyword in the matched pairs is `found` (matched at `i < k`) or
`found_beyond_k`; a missed one is `missed_present` when it occurs in the
review's text under the match mode (the present rule of §9, through
`kweval.text.present`), `missed_absent` when it does not, `missed_no_text`
when the review has no text.  Presence depends on the review, not the model,
so it is computed once per review: a list several reviews share (a movie's)
is searched once in all their texts joined, a review's own list keyword by
keyword in its one text.  Rows are built by numpy repeats, never a Python
loop over keywords (a movie-level list of ~300 keywords × 10,000 reviews ×
4 models is 12 million rows).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from kweval.data.dataset import Dataset
from kweval.explain.failure_lists import GroupLists
from kweval.metrics.categories import GT_CATEGORIES
from kweval.text import present

CODE = {name: i for i, name in enumerate(GT_CATEGORIES)}


@dataclass
class GtCategories:
    """One row per GT keyword of each group's list: groups in order, each list in rank order."""

    group: np.ndarray  # per row: its group (int32)
    rank: np.ndarray  # per row: the keyword's rank in its list (int32)
    gt_index: np.ndarray  # per row: the keyword's index in GroupLists.gt_keyword
    category: np.ndarray  # per row: a code of GT_CATEGORIES (int8)
    by_position: np.ndarray  # per row: found: the position of the prediction that matched it, else -1 (int32)
    offsets: np.ndarray  # per group: where its rows start (one more entry: the total)


def gt_categories(
    dataset: Dataset,
    lists: GroupLists,
    k: int,
    match: str,
    pair_group: np.ndarray,
    pair_rank: np.ndarray,
    pair_position: np.ndarray,
    before: ReviewCategories | None = None,
) -> GtCategories:
    """Every GT keyword of every group with its category; `pair_*`: the matched pairs (group, GT rank, position);
    `before`: `review_categories(dataset, lists, match)` when the caller has it already."""
    sizes = lists.sizes()
    offsets = np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)
    total = int(offsets[-1])
    index_type = np.int32 if total < np.iinfo(np.int32).max else np.int64
    group = np.repeat(np.arange(len(sizes), dtype=np.int32), sizes)
    row_in = np.arange(total, dtype=index_type)  # becomes each row's rank in its list
    np.subtract(row_in, np.repeat(offsets[:-1].astype(index_type), sizes), out=row_in)
    rank = row_in.astype(np.int32, copy=False)
    gt_index = np.repeat(lists.starts().astype(index_type), sizes) + rank
    # a review's categories are the same for all its models: made once per review, then repeated per group
    per_review, review_offset = before if before is not None else review_categories(dataset, lists, match)
    category = per_review[np.repeat(review_offset[:-1][lists.group_review].astype(index_type), sizes) + rank]
    by_position = np.full(total, -1, dtype=np.int32)
    at = offsets[pair_group] + pair_rank
    category[at] = np.where(pair_position < k, CODE["found"], CODE["found_beyond_k"])
    by_position[at] = pair_position
    return GtCategories(group, rank, gt_index, category, by_position, offsets)


# (codes, offsets): the category of GT keyword j of review r's list before the matches, ``codes[offsets[r] + j]``
ReviewCategories = tuple[np.ndarray, np.ndarray]


def review_categories(dataset: Dataset, lists: GroupLists, match: str) -> ReviewCategories:
    """Each review's GT keywords as missed_present / missed_absent / missed_no_text (int8 codes of GT_CATEGORIES):
    what every model of the review starts from, before its matched pairs become found / found_beyond_k."""
    present_at, review_offset, has_text = review_presence(dataset, lists, match)
    per_review = np.where(present_at, CODE["missed_present"], CODE["missed_absent"]).astype(np.int8)
    per_review[np.repeat(~has_text, np.diff(review_offset))] = CODE["missed_no_text"]
    return per_review, review_offset


def gt_category_counts(
    lists: GroupLists,
    before: ReviewCategories,
    k: int,
    pair_group: np.ndarray,
    pair_rank: np.ndarray,
    pair_position: np.ndarray,
) -> np.ndarray:
    """Per group × GT category (`GT_CATEGORIES` order), how many rows `gt_categories` gives it (int64).

    Speed trick "counts by review": a group's counts are its review's counts
    of `before` with each matched pair moved from its keyword's category to
    found / found_beyond_k, so no row is laid out per GT keyword × model (on
    DNLP 13.4 million rows).  Reference: ``np.bincount`` of `gt_categories`'
    (group, category), which the tests compare it with.
    """
    per_review, review_offset = before
    n_cat, n_reviews, n_groups = len(GT_CATEGORIES), len(review_offset) - 1, len(lists.group_review)
    review_of = np.repeat(np.arange(n_reviews, dtype=np.int64), np.diff(review_offset))
    by_review = np.bincount(review_of * n_cat + per_review, minlength=n_reviews * n_cat).reshape(n_reviews, n_cat)
    counts = by_review[lists.group_review] if n_groups else np.zeros((0, n_cat), dtype=np.int64)
    at = lists.sizes().astype(np.int64)  # a pair's row within all groups' rows, each pair once (the last, as assigned)
    at = np.concatenate(([0], np.cumsum(at)))[pair_group] + pair_rank
    last = len(at) - 1 - np.unique(at[::-1], return_index=True)[1]
    group = pair_group[last].astype(np.int64)
    old = per_review[review_offset[lists.group_review[group]] + pair_rank[last]]
    new = np.where(pair_position[last] < k, CODE["found"], CODE["found_beyond_k"])
    size = n_groups * n_cat
    moved = np.bincount(group * n_cat + new, minlength=size) - np.bincount(group * n_cat + old, minlength=size)
    return counts + moved.reshape(n_groups, n_cat)


def review_presence(dataset: Dataset, lists: GroupLists, match: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(flags, offsets, has_text): GT keyword j of review r's list occurs in r's text iff ``flags[offsets[r] + j]``.

    Per review, once (every model of a review reads the same flags).
    """
    review_list = lists.review_list
    sizes = np.where(review_list >= 0, lists.list_size[np.maximum(review_list, 0)], 0)
    offsets = np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)
    texts = review_texts(dataset, lists.review_keys)
    has_text = present.has_text(texts.tolist())
    flags = np.zeros(int(offsets[-1]), dtype=bool)
    users = np.bincount(review_list[review_list >= 0], minlength=len(lists.list_size))
    scan = np.flatnonzero(has_text & (review_list >= 0))
    shared = users[review_list[scan]] > 1
    _shared_lists(flags, offsets, scan[shared], texts, lists, match)
    _own_lists(flags, offsets, scan[~shared], texts, lists, match)
    return flags, offsets, has_text


def review_texts(dataset: Dataset, review_keys: pd.DataFrame) -> np.ndarray:
    """The text of each (movie, review_id) of `review_keys` (None where the reviews table has none; a review given
    twice takes its last row)."""
    reviews = dataset.reviews
    out = np.full(len(review_keys), None, dtype=object)
    if len(reviews) == 0 or "text" not in reviews.columns or len(review_keys) == 0:
        return out
    last = reviews.drop_duplicates(["movie", "review_id"], keep="last")
    index = pd.MultiIndex.from_arrays([last[c].to_numpy(dtype=object) for c in ("movie", "review_id")])
    keys = pd.MultiIndex.from_arrays([review_keys[c].to_numpy(dtype=object) for c in ("movie", "review_id")])
    at = index.get_indexer(keys)
    found = at >= 0
    out[found] = last["text"].to_numpy(dtype=object)[at[found]]
    return out


def _shared_lists(
    flags: np.ndarray, offsets: np.ndarray, reviews: np.ndarray, texts: np.ndarray, lists: GroupLists, match: str
) -> None:
    """Flags of the reviews whose list others share: each list searched once in all its reviews' texts."""
    if len(reviews) == 0:
        return
    review_list = lists.review_list[reviews]
    order = np.argsort(review_list, kind="stable")
    bounds = np.flatnonzero(np.r_[True, review_list[order][1:] != review_list[order][:-1], True])
    for a, b in zip(bounds[:-1].tolist(), bounds[1:].tolist()):
        part = reviews[order[a:b]]
        lst = int(lists.review_list[part[0]])
        start, size = int(lists.list_start[lst]), int(lists.list_size[lst])
        keywords = present.searchable_keywords(lists.gt_norm[start : start + size].tolist(), match)
        kw_idx, text_idx = present.occurrences(keywords, present.searchable(texts[part].tolist(), match))
        flags[offsets[part[text_idx]] + kw_idx] = True


def _own_lists(
    flags: np.ndarray, offsets: np.ndarray, reviews: np.ndarray, texts: np.ndarray, lists: GroupLists, match: str
) -> None:
    """Flags of the reviews with a list of their own: each keyword tested in its one text."""
    if len(reviews) == 0:
        return
    review_list = lists.review_list[reviews]
    sizes = lists.list_size[review_list]
    owner = np.repeat(np.arange(len(reviews)), sizes)
    within = np.arange(int(sizes.sum()), dtype=np.int64) - np.repeat(np.cumsum(sizes) - sizes, sizes)
    gt_at = np.repeat(lists.list_start[review_list], sizes) + within
    searchable_texts = np.empty(len(reviews), dtype=object)
    searchable_texts[:] = present.searchable(texts[reviews].tolist(), match)
    hit = present.contained(searchable_texts[owner], present.searchable_keywords(lists.gt_norm[gt_at].tolist(), match))
    flags[offsets[reviews[owner[hit]]] + within[hit]] = True
