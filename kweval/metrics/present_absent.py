"""The present/absent family: recall split by whether a GT keyword occurs in the review's own text (§9).

- ``recall_present`` = |{(i,j) ∈ M : j present}| / |G_present|
- ``recall_absent`` = |{(i,j) ∈ M : j absent}| / |G_absent|
- ``f1@k_present``: F1 of |{(i,j) ∈ M : i < k, j present}| / k and that count / |G_present|.

All predictions take part (no filtering of predictions by presence; the
protocol presets that filter them do so themselves).  A review without text
has no present/absent split: its three metrics are NaN and its counts 0, so
micro aggregation reads only the reviews that define them.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from kweval.metrics import checks
from kweval.metrics.cutoff import check_k
from kweval.metrics.inputs import ReviewCounts, Settings
from kweval.metrics.ratios import harmonic_mean, safe_ratio

METRICS = ("recall_present", "f1@{k}_present", "recall_absent")  # undefined (NaN) for a review without text


def _present_absent_scores(
    n_gt_present: np.ndarray, n_gt: np.ndarray, review: np.ndarray, position: np.ndarray, present: np.ndarray, k: int
) -> dict[str, np.ndarray]:
    n_reviews = len(n_gt_present)
    without_text = n_gt_present < 0
    n_present = np.where(without_text, 0, n_gt_present)
    hit_present = np.bincount(review[present], minlength=n_reviews).astype("float64")
    hit_absent = np.bincount(review[~present], minlength=n_reviews).astype("float64")
    hit_present_k = np.bincount(review[present & (position < k)], minlength=n_reviews).astype("float64")
    recall_present_k = safe_ratio(hit_present_k, n_gt_present)
    columns = {
        "recall_present": safe_ratio(hit_present, n_gt_present),
        "f1@{k}_present": harmonic_mean(hit_present_k / float(k), recall_present_k),
        "recall_absent": safe_ratio(hit_absent, n_gt - n_gt_present),
        "n_matched_present": hit_present,
        "n_matched_absent": hit_absent,
    }
    for name in METRICS:
        columns[name] = np.where(without_text, np.nan, columns[name])
    # the counts of micro recall_present / recall_absent: 0 where there is no text
    columns["n_gt_present"] = n_present
    columns["n_gt_absent"] = np.where(without_text, 0, n_gt - n_gt_present)
    for name in ("n_matched_present", "n_matched_absent"):
        columns[name] = np.where(without_text, 0.0, columns[name])
    return columns


def present_absent_scores(
    n_gt_present: ArrayLike, n_gt: ArrayLike, review: ArrayLike, position: ArrayLike, present: ArrayLike, k: int
) -> dict[str, np.ndarray]:
    """Per review: recall of the GT keywords present in its text, of the absent ones, and F1@k of the present ones.

    Parameters
    ----------
    n_gt_present : array-like of int, one entry per review
        How many of its GT keywords occur in its text; -1 for a review without text.
    n_gt : array-like of int, one entry per review
        |G|.
    review, position : array-like of int, one entry per matched pair
        The pair's review and the prediction's 0-based position i.
    present : array-like of bool, one entry per matched pair
        Whether the pair's GT keyword occurs in the review's text.
    k : int
        The cut-off of ``f1@{k}_present``.

    Returns
    -------
    dict of str to ndarray of float64
        ``recall_present``, ``f1@{k}_present``, ``recall_absent`` (NaN for a
        review without text; 0 where a denominator is 0), then the counts
        micro aggregation sums: ``n_matched_present``, ``n_matched_absent``,
        ``n_gt_present``, ``n_gt_absent`` (0 for a review without text).

    Raises
    ------
    ValueError
        For a cut-off that is not a positive integer, arrays of different
        lengths, or |G_present| outside -1..|G|.

    Examples
    --------
    Two reviews with |G| = 3; the first has 2 GT keywords in its text and
    matched one present and one absent keyword; the second has no text:

    >>> s = present_absent_scores([2, -1], [3, 3], review=[0, 0], position=[0, 1], present=[True, False], k=5)
    >>> s["recall_present"].tolist(), s["recall_absent"].tolist(), s["n_gt_absent"].tolist()
    ([0.5, nan], [1.0, nan], [1, 0])
    """
    k = check_k(k)
    n_gt_a = checks.counts("n_gt", n_gt)
    n_gt_present_a = checks.counts("n_gt_present", n_gt_present, minimum=-1)  # -1: no text
    checks.same_length(n_gt_present=n_gt_present_a, n_gt=n_gt_a)
    checks.at_most("n_gt_present", n_gt_present_a, "n_gt", n_gt_a)
    review_a, position_a = checks.pairs(review, position, len(n_gt_a))
    present_a = checks.flags("present", present, len(review_a))
    return _present_absent_scores(n_gt_present_a, n_gt_a, review_a, position_a, present_a, k)


def from_counts(counts: ReviewCounts, settings: Settings) -> dict[str, np.ndarray]:
    """The family's columns for the evaluation pipeline (`kweval.metrics.registry`)."""
    if counts.n_gt_present is None or counts.pair_present is None:
        raise ValueError("the present/absent metrics need n_gt_present and pair_present (evaluate with present=True)")
    return present_absent_scores(
        counts.n_gt_present, counts.n_gt, counts.pair_review, counts.pair_position, counts.pair_present, settings.k
    )
