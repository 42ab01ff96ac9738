"""The set-based family: precision, recall and F1 of the matched pairs (docs/metrics.md §3).

precision = |M| / |P|, recall = |M| / |G|, f1 their harmonic mean; each 0
where its denominator is 0 (no predictions, or no GT keywords).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from kweval.metrics import checks
from kweval.metrics.inputs import ReviewCounts, Settings
from kweval.metrics.ratios import harmonic_mean, safe_ratio


def _set_scores(n_pred: np.ndarray, n_gt: np.ndarray, n_matched: np.ndarray) -> dict[str, np.ndarray]:
    precision = safe_ratio(n_matched, n_pred)
    recall = safe_ratio(n_matched, n_gt)
    return {"precision": precision, "recall": recall, "f1": harmonic_mean(precision, recall)}


def set_scores(n_pred: ArrayLike, n_gt: ArrayLike, n_matched: ArrayLike) -> dict[str, np.ndarray]:
    """Per review: ``precision`` = |M| / |P|, ``recall`` = |M| / |G|, ``f1``.

    Parameters
    ----------
    n_pred, n_gt, n_matched : array-like of int, one entry per review
        The predictions |P|, the GT keywords |G| and the matched pairs |M|
        (one-to-one, so |M| <= |P| and |M| <= |G|).

    Returns
    -------
    dict of str to ndarray of float64
        ``precision``, ``recall`` and ``f1``; 0 where the denominator is 0.

    Raises
    ------
    ValueError
        For arrays of different lengths, negative or fractional counts, or |M| above |P| or |G|.

    Examples
    --------
    >>> scores = set_scores([4, 0, 5], [2, 3, 5], [1, 0, 5])
    >>> scores["precision"].tolist(), scores["recall"].tolist()
    ([0.25, 0.0, 1.0], [0.5, 0.0, 1.0])
    >>> scores["f1"].round(4).tolist()
    [0.3333, 0.0, 1.0]
    """
    n_pred, n_gt, n_matched = (
        checks.counts(n, v) for n, v in (("n_pred", n_pred), ("n_gt", n_gt), ("n_matched", n_matched))
    )
    checks.same_length(n_pred=n_pred, n_gt=n_gt, n_matched=n_matched)
    checks.at_most("n_matched", n_matched, "n_pred", n_pred)
    checks.at_most("n_matched", n_matched, "n_gt", n_gt)
    return _set_scores(n_pred, n_gt, n_matched)


def from_counts(counts: ReviewCounts, settings: Settings) -> dict[str, np.ndarray]:
    """The family's columns for the evaluation pipeline (`kweval.metrics.registry`)."""
    return set_scores(counts.n_pred, counts.n_gt, counts.n_matched)
