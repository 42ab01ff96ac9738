"""The weighted family: confidence-weighted precision, GT-importance-weighted recall, their F1 (docs/metrics.md §3).

w_precision = Σ s_i over matched predictions / Σ s_i over all (s_i the
confidence); w_recall = Σ gain(rel_j) over matched GT keywords / Σ over all
GT keywords, with rel_j = 1 / log2(j + 2) for the GT keyword of 0-based rank
j (1 for unranked GT).  The relevance and the GT's total gain are defined
here and read by the count stage and the ranking family too.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from kweval.metrics import checks, ranking
from kweval.metrics.inputs import ReviewCounts, Settings
from kweval.metrics.ratios import harmonic_mean, safe_ratio


def graded_relevance(gt_rank: ArrayLike) -> np.ndarray:
    """A GT keyword's relevance from its 0-based rank j: 1 / log2(j + 2).

    >>> graded_relevance([0, 1, 2]).round(4).tolist()
    [1.0, 0.6309, 0.5]
    """
    return 1.0 / np.log2(np.asarray(gt_rank, dtype="float64") + 2.0)


def relevance(gt_rank: ArrayLike, ranked: ArrayLike | None = None) -> np.ndarray:
    """A matched GT keyword's relevance: graded by rank for ranked GT, 1 for unranked GT (`ranked[i]` False).

    >>> relevance([0, 2], ranked=[True, False]).tolist()
    [1.0, 1.0]
    """
    graded = graded_relevance(gt_rank)
    if ranked is None or np.all(ranked):
        return graded
    return np.where(np.asarray(ranked, dtype=bool), graded, 1.0)


def gt_gain_total(n_gt: ArrayLike, gain: str = "linear", ranked: ArrayLike | None = None) -> np.ndarray:
    """Σ_{j<|G|} gain(rel_j) for each |G| in `n_gt` (the denominator of w_recall); |G| · gain(1) where unranked.

    >>> gt_gain_total([0, 1, 2]).round(4).tolist()
    [0.0, 1.0, 1.6309]
    """
    n_gt = np.asarray(n_gt, dtype="int64")
    top = int(n_gt.max()) if n_gt.size else 0
    cumulative = np.concatenate(([0.0], np.cumsum(ranking.apply_gain(graded_relevance(np.arange(top)), gain))))
    total = cumulative[n_gt]
    if ranked is None or np.all(ranked):
        return total
    flat = n_gt * float(ranking.apply_gain(np.ones(1), gain)[0])
    return np.where(np.asarray(ranked, dtype=bool), total, flat)


def _weighted_scores(
    score_sum: np.ndarray, matched_score: np.ndarray, gain_sum: np.ndarray, matched_gain: np.ndarray
) -> dict[str, np.ndarray]:
    w_precision = safe_ratio(matched_score, score_sum)
    w_recall = safe_ratio(matched_gain, gain_sum)
    return {"w_precision": w_precision, "w_recall": w_recall, "w_f1": harmonic_mean(w_precision, w_recall)}


def weighted_scores(
    score_sum: ArrayLike, matched_score: ArrayLike, gain_sum: ArrayLike, matched_gain: ArrayLike
) -> dict[str, np.ndarray]:
    """Per review: ``w_precision``, ``w_recall`` and ``w_f1`` from sums of confidences and of gains.

    Parameters
    ----------
    score_sum, matched_score : array-like of float, one entry per review
        Σ s_i over all predictions, and over the matched ones.
    gain_sum, matched_gain : array-like of float, one entry per review
        Σ gain over all GT keywords (`gt_gain_total`), and over the matched ones.

    Returns
    -------
    dict of str to ndarray of float64
        ``w_precision`` = matched_score / score_sum (0 when the sum is 0: no
        prediction, or every score 0), ``w_recall`` = matched_gain /
        gain_sum, ``w_f1`` their harmonic mean.

    Raises
    ------
    ValueError
        For arrays of different lengths, or sums that are negative or not finite.

    Examples
    --------
    >>> scores = weighted_scores([2.0, 0.0], [1.5, 0.0], [1.6309, 1.0], [1.0, 0.0])
    >>> scores["w_precision"].tolist(), scores["w_recall"].round(4).tolist()
    ([0.75, 0.0], [0.6132, 0.0])
    """
    named = (
        ("score_sum", score_sum),
        ("matched_score", matched_score),
        ("gain_sum", gain_sum),
        ("matched_gain", matched_gain),
    )
    s, ms, g, mg = (checks.sums(name, values) for name, values in named)
    checks.same_length(score_sum=s, matched_score=ms, gain_sum=g, matched_gain=mg)
    return _weighted_scores(s, ms, g, mg)


def from_counts(counts: ReviewCounts, settings: Settings) -> dict[str, np.ndarray]:
    """The family's columns for the evaluation pipeline (`kweval.metrics.registry`)."""
    return weighted_scores(counts.score_sum, counts.matched_score, counts.gain_sum, counts.matched_gain)
