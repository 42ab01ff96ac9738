"""The keyphrase field's cut-off metrics per review: r@k, f1@k, f1@k_flex, f1@M, f1@O, r_precision (§9).

With |M_c| the matched pairs among the top c predictions (position i < c):
R@c = |M_c| / |G|; the *hard* P@c = |M_c| / c (the field's usual choice) or
the *flexible* P@c = |M_c| / min(c, |P|); F1@c their harmonic mean.  These
are `kweval.metrics.cutoff.precision_recall_f1` for every review at once
(tests/test_metric_families.py checks them against it).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from kweval.metrics import checks
from kweval.metrics.cutoff import check_k
from kweval.metrics.inputs import ReviewCounts, Settings
from kweval.metrics.ratios import harmonic_mean, safe_ratio
from kweval.metrics.set_based import set_scores


def _keyphrase_scores(
    n_pred: np.ndarray, n_gt: np.ndarray, n_matched: np.ndarray, review: np.ndarray, position: np.ndarray, k: int
) -> dict[str, np.ndarray]:
    n_reviews = len(n_gt)
    hit_k = np.bincount(review[position < k], minlength=n_reviews).astype("float64")
    hit_o = np.bincount(review[position < n_gt[review]], minlength=n_reviews).astype("float64")
    recall_k = safe_ratio(hit_k, n_gt)
    recall_o = safe_ratio(hit_o, n_gt)
    return {
        "r@{k}": recall_k,
        "f1@{k}": harmonic_mean(hit_k / float(k), recall_k),
        "f1@{k}_flex": harmonic_mean(safe_ratio(hit_k, np.minimum(n_pred, k)), recall_k),
        "f1@M": set_scores(n_pred, n_gt, n_matched)["f1"],
        "f1@O": harmonic_mean(safe_ratio(hit_o, np.minimum(n_pred, n_gt)), recall_o),
        "r_precision": recall_o,
    }


def keyphrase_scores(
    n_pred: ArrayLike, n_gt: ArrayLike, n_matched: ArrayLike, review: ArrayLike, position: ArrayLike, k: int
) -> dict[str, np.ndarray]:
    """The keyphrase field's cut-off metrics of every review from its matched pairs.

    Parameters
    ----------
    n_pred, n_gt, n_matched : array-like of int, one entry per review
        |P|, |G| and |M|.
    review, position : array-like of int, one entry per matched pair
        The pair's review (index into the per-review arrays) and the
        prediction's 0-based position i after cleaning.
    k : int
        The cut-off, a positive integer.

    Returns
    -------
    dict of str to ndarray of float64
        ``r@{k}`` = |M_k| / |G|; ``f1@{k}``: F1 of the hard P@k = |M_k| / k and
        R@k; ``f1@{k}_flex``: F1 of the flexible P@k = |M_k| / min(k, |P|) and
        R@k; ``f1@M``: F1 over all predictions (the same number as ``f1``);
        ``f1@O``: the oracle cut-off c = |G|, F1 of |M_c| / min(c, |P|) and
        |M_c| / |G|; ``r_precision`` = |M_c| / |G| at c = |G|.  Keys are the
        registry's name templates; each value is 0 where its denominators are.

    Raises
    ------
    ValueError
        For a cut-off that is not a positive integer, arrays of different
        lengths, negative counts, or a pair pointing past the reviews.

    Examples
    --------
    One review with 4 predictions and |G| = 2; the predictions at positions 0 and 3 matched:

    >>> s = keyphrase_scores(n_pred=[4], n_gt=[2], n_matched=[2], review=[0, 0], position=[0, 3], k=2)
    >>> {name: round(float(v[0]), 4) for name, v in s.items()}
    {'r@{k}': 0.5, 'f1@{k}': 0.5, 'f1@{k}_flex': 0.5, 'f1@M': 0.6667, 'f1@O': 0.5, 'r_precision': 0.5}
    """
    k = check_k(k)
    n_pred_a, n_gt_a, n_matched_a = (
        checks.counts(n, v) for n, v in (("n_pred", n_pred), ("n_gt", n_gt), ("n_matched", n_matched))
    )
    checks.same_length(n_pred=n_pred_a, n_gt=n_gt_a, n_matched=n_matched_a)
    review_a, position_a = checks.pairs(review, position, len(n_gt_a))
    return _keyphrase_scores(n_pred_a, n_gt_a, n_matched_a, review_a, position_a, k)


def from_counts(counts: ReviewCounts, settings: Settings) -> dict[str, np.ndarray]:
    """The family's columns for the evaluation pipeline (`kweval.metrics.registry`)."""
    return keyphrase_scores(
        counts.n_pred, counts.n_gt, counts.n_matched, counts.pair_review, counts.pair_position, settings.k
    )
