"""Which review each lexical parity finder shows: the scans over every review, each with its plain definition.

A finder (kweval.legacy.examples) shows the review that maximises some quantity (the first on ties) and counts
the reviews affected.  Each `*_plain` scan is the definition: every review through the per-review kernels, in
`scan_reviews` order.  Speed trick "bounded scans": the scan of the same name computes that quantity, or a bound
of it, for every review at once on the flat lists (kweval.legacy.flat) and runs the plain per-review code only on
the reviews that can still win or change a count, in the same order and with the same comparisons, so it picks
the same review with the same numbers (tests/test_legacy_flat.py).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from kweval.data.dataset import Dataset
from kweval.legacy.flat import FlatLists, flat_lists
from kweval.legacy.kernels import AnyMatcher, legacy_normalize, one_to_one_count, seed000_predictions

# (movie, model, review_id, entries, gt, matcher) of one review with a list
Review = tuple[str, str, str, list, list[str], AnyMatcher]


def scan_reviews(dataset: Dataset, model: str | None, rows: np.ndarray | None = None) -> Iterator[Review]:
    """Every review with a list of a movie with GT keywords (`model`'s only, when given), movie by movie; only
    `rows` of them (in scan order) when given."""
    flat = flat_lists(dataset)
    movies, models, ids, entries = flat.columns
    for r in (flat.scan_rows(model) if rows is None else rows).tolist():
        yield movies[r], models[r], ids[r], entries[r], flat.gts[movies[r]], flat.matcher(movies[r])


def one_to_one_relevance(pred_norms: Sequence[str], matcher: AnyMatcher) -> list[float]:
    """Each prediction's gain 1/log2(j+2) for the earliest GT keyword j it matches that no earlier one took."""
    taken: set[int] = set()
    rel = []
    for p in pred_norms:
        j = next((j for j in matcher.all(p) if j not in taken), -1)
        if j >= 0:
            taken.add(j)
        rel.append(1 / math.log2(j + 2) if j >= 0 else 0.0)
    return rel


def dcg(rel: Sequence[float]) -> float:
    return sum(r / math.log2(i + 2) for i, r in enumerate(rel))


def top_keywords(entries: list, k: int) -> list[str]:
    """The first k keywords seed 000 prepares for a review (`seed000_predictions`)."""
    return [kw for kw, _ in seed000_predictions(entries)[:k]]


# --------------------------------------------------------------------------------------------
# Defect 2: the review with the best one-to-one DCG@k
# --------------------------------------------------------------------------------------------


def best_one_to_one_dcg_plain(dataset: Dataset, k: int, model: str | None, rows: np.ndarray | None = None) -> Any:
    """(dcg, movie, model, review_id, top, gt, matcher, relevance) of the first review with the highest one-to-one
    DCG@k, or None; every review (or `rows`)."""
    best = None
    for movie, md, rid, entries, gt, matcher in scan_reviews(dataset, model, rows):
        top = top_keywords(entries, k)
        rel = one_to_one_relevance(top, matcher)
        score = dcg(rel)
        if best is None or score > best[0]:
            best = (score, movie, md, rid, top, gt, matcher, rel)
    return best


def best_one_to_one_dcg(dataset: Dataset, k: int, model: str | None) -> Any:
    """`best_one_to_one_dcg_plain`, scanning only the reviews whose many-to-one DCG (an upper bound: one-to-one
    gives each keyword the same or a later GT keyword) reaches the largest lower bound of a one-to-one DCG: the
    many-to-one DCG of a review whose top keywords' earliest matches are all different (equal there), or the gain
    of a review's first matched keyword (which always gets its earliest match).  1e-9 absorbs numpy's rounding;
    the numbers returned are the plain scan's."""
    flat = flat_lists(dataset)
    rows = flat.scan_rows(model)
    if not len(rows):
        return None
    top = flat.kept & (flat.rank < k)
    first = flat.first_match
    gain = np.where(first >= 0, 1 / np.log2(np.maximum(first, 0) + 2.0), 0.0) / np.log2(np.maximum(flat.rank, 0) + 2.0)
    upper = flat.per_row(gain, top)[rows]
    if upper.max() <= 0:  # no top keyword of any review matches: every DCG is 0
        return best_one_to_one_dcg_plain(dataset, k, model, rows[:1])
    credited = top & (first >= 0)
    repeated = _rows_with_repeats(flat, credited, first)[rows]
    lead = _first_per_row(flat, credited, gain)[rows]
    known = max(float(np.max(np.where(repeated, 0.0, upper))), float(lead.max()))
    return best_one_to_one_dcg_plain(dataset, k, model, rows[upper >= known - 1e-9])


# --------------------------------------------------------------------------------------------
# Defect 3: the review where one GT keyword is credited most often in the top k
# --------------------------------------------------------------------------------------------


def most_credited_in(top: list[str], matcher: AnyMatcher) -> tuple[int, int] | None:
    """(times, GT index) of the GT keyword the notebook credits most often among `top` (the first such on ties),
    None when no GT keyword is credited twice."""
    credited = [j for j in (matcher.first(p) for p in top) if j >= 0]
    if len(credited) == len(set(credited)):
        return None
    j, n = max(((j, credited.count(j)) for j in dict.fromkeys(credited)), key=lambda t: t[1])
    return n, j


def most_credited_plain(dataset: Dataset, k: int, model: str | None) -> tuple[Any, int, int]:
    """((times, GT index, movie, model, review_id, top, gt, matcher) of the first review whose most credited GT
    keyword is credited most often, or None; reviews affected; reviews scanned)."""
    best = None
    affected = scanned = 0
    for movie, md, rid, entries, gt, matcher in scan_reviews(dataset, model):
        top = top_keywords(entries, k)
        scanned += 1
        hit = most_credited_in(top, matcher)
        if hit is not None:
            affected += 1
            if best is None or hit[0] > best[0]:
                best = (*hit, movie, md, rid, top, gt, matcher)
    return best, affected, scanned


def most_credited(dataset: Dataset, k: int, model: str | None) -> tuple[Any, int, int]:
    """`most_credited_plain`: every review's largest count of one credited GT keyword at once, then the first
    review reaching the largest one."""
    flat = flat_lists(dataset)
    rows = flat.scan_rows(model)
    credited = flat.kept & (flat.rank < k) & (flat.first_match >= 0)
    times = _largest_repeat(flat, credited, flat.first_match)[rows]
    affected = int((times >= 2).sum())
    if not affected:
        return None, 0, len(rows)
    best_row = rows[int(np.argmax(times))]  # the first of the largest
    (movie, md, rid, entries, gt, matcher), *_ = scan_reviews(dataset, model, np.array([best_row]))
    top = top_keywords(entries, k)
    hit = most_credited_in(top, matcher)
    assert hit is not None
    return (*hit, movie, md, rid, top, gt, matcher), affected, len(rows)


# --------------------------------------------------------------------------------------------
# Defect 5: the review whose matched predictions exceed its matched GT keywords the most
# --------------------------------------------------------------------------------------------


def recall_gap_plain(dataset: Dataset, model: str | None, rows: np.ndarray | None = None) -> tuple[Any, int, int]:
    """((gap, movie, model, review_id, preds, gt, matcher, matched predictions, matched GT) of the first review with
    the largest gap, or None; reviews affected; reviews scanned), over every review (or `rows`)."""
    best = None
    affected = scanned = 0
    for movie, md, rid, entries, gt, matcher in scan_reviews(dataset, model, rows):
        preds = [legacy_normalize(kw) for kw, _ in entries if isinstance(kw, str)]
        n_legacy = sum(matcher.any(p) for p in preds)
        scanned += 1
        if n_legacy == 0:
            continue
        n_one = one_to_one_count(preds, matcher.gt, matcher.all)
        if n_legacy > n_one:
            affected += 1
            if best is None or n_legacy - n_one > best[0]:
                best = (n_legacy - n_one, movie, md, rid, preds, gt, matcher, n_legacy, n_one)
    return best, affected, scanned


def recall_gap(dataset: Dataset, model: str | None) -> tuple[Any, int, int]:
    """`recall_gap_plain` over the reviews where two matched predictions share their earliest GT match: in the
    others each matched prediction takes its own earliest match, so both counts are equal (no gap)."""
    flat = flat_lists(dataset)
    rows = flat.scan_rows(model)
    shared = _rows_with_repeats(flat, flat.any_match, flat.first_match)[rows]
    best, affected, _ = recall_gap_plain(dataset, model, rows[shared])
    return best, affected, len(rows)


# --------------------------------------------------------------------------------------------
# Per-row counts on the flat lists
# --------------------------------------------------------------------------------------------


def _largest_repeat(flat: FlatLists, where: np.ndarray, value: np.ndarray) -> np.ndarray:
    """Per row: the largest number of entries (where `where` holds) sharing one `value` (0 for none)."""
    at = np.flatnonzero(where)
    out = np.zeros(len(flat.lists), dtype="int64")
    if len(at):
        span = int(value[at].max()) - int(value[at].min()) + 1
        pairs, counts = np.unique(flat.row[at] * span + (value[at] - value[at].min()), return_counts=True)
        np.maximum.at(out, pairs // span, counts)
    return out


def _rows_with_repeats(flat: FlatLists, where: np.ndarray, value: np.ndarray) -> np.ndarray:
    """Per row: whether two entries (where `where` holds) share one `value`."""
    return _largest_repeat(flat, where, value) >= 2


def _first_per_row(flat: FlatLists, where: np.ndarray, value: np.ndarray) -> np.ndarray:
    """Per row: `value` at its first entry where `where` holds (0 for none)."""
    at = np.flatnonzero(where)
    out = np.zeros(len(flat.lists), dtype="float64")
    rows, first = np.unique(flat.row[at], return_index=True)
    out[rows] = value[at[first]]
    return out
