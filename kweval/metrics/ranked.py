"""The ranking family per review, from the matched pairs: nDCG@k, P@k, AP@k, RR (docs/metrics.md §3).

Each review's relevance list has, at position i, the relevance of the GT
keyword matched there (graded by its rank, `weighted.relevance`; 1 for
unranked GT) and 0 elsewhere; the ideal list is the GT's own top k in order.
The metrics are the plain relevance-list functions of `kweval.metrics.ranking`
applied to the (reviews × k) matrix of those lists, so each has one definition.
Keys of the result are the registry's name templates (``ndcg@{k}``), which
`kweval.metrics.registry.column` fills in.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from kweval.metrics import checks, ranking
from kweval.metrics.cutoff import check_k
from kweval.metrics.inputs import ReviewCounts, Settings
from kweval.metrics.weighted import graded_relevance, relevance

_CHUNK = 1 << 18  # reviews per slice: the (reviews × k) matrices of one slice stay small


def _ranking_scores(
    review: np.ndarray,
    position: np.ndarray,
    gt_rank: np.ndarray,
    n_gt: np.ndarray,
    k: int,
    gain: str,
    discount: str,
    ranked: np.ndarray | None,
    explicit: tuple[np.ndarray, np.ndarray] | None = None,
) -> dict[str, np.ndarray]:
    """`ranking_scores`; `explicit`: (per pair its relevance, per review its ideal top-k relevances) of a judged GT."""
    if ranked is not None and np.all(ranked):
        ranked = None
    n_reviews = len(n_gt)
    if n_reviews > _CHUNK:
        return _in_slices(review, position, gt_rank, n_gt, k, gain, discount, ranked, explicit)
    # Columns past the longest list (predicted or GT) hold only zeros, which change no metric
    # (ranking treats positions past a row's end as non-relevant): a huge k costs nothing.
    top = position < k
    n_ideal = np.minimum(np.asarray(n_gt, dtype="int64"), k)
    width = max(int(position[top].max()) + 1 if top.any() else 0, int(n_ideal.max()) if len(n_ideal) else 0, 1)
    rel = np.zeros((n_reviews, width), dtype="float64")
    if explicit is None:
        rel[review[top], position[top]] = relevance(gt_rank[top], None if ranked is None else ranked[review[top]])
        ideal_row = graded_relevance(np.arange(width))[None, :]
        if ranked is not None:
            ideal_row = np.where(np.asarray(ranked, dtype=bool)[:, None], ideal_row, 1.0)
        ideal = np.where(np.arange(width)[None, :] < n_ideal[:, None], ideal_row, 0.0)
    else:
        rel[review[top], position[top]] = explicit[0][top]
        ideal = explicit[1]
    hits = (rel > 0).astype("float64")
    return {
        "ndcg@{k}": ranking.ndcg(rel, k=k, ideal=ideal, gain=gain, discount=discount),
        "p@{k}": ranking.precision_at_k(hits, k),
        "ap@{k}": ranking.average_precision(hits, k=k, n_relevant=n_ideal),
        "rr": ranking.reciprocal_rank(hits, k=k),
    }


def _in_slices(
    review: np.ndarray,
    position: np.ndarray,
    gt_rank: np.ndarray,
    n_gt: np.ndarray,
    k: int,
    gain: str,
    discount: str,
    ranked: np.ndarray | None,
    explicit: tuple[np.ndarray, np.ndarray] | None = None,
) -> dict[str, np.ndarray]:
    """`_ranking_scores` slice by slice of `_CHUNK` reviews (rows are independent): memory only, the same numbers."""
    n_reviews = len(n_gt)
    if len(review) > 1 and (review[1:] < review[:-1]).any():
        by_review = np.argsort(review, kind="stable")
        review, position, gt_rank = review[by_review], position[by_review], gt_rank[by_review]
        explicit = None if explicit is None else (explicit[0][by_review], explicit[1])
    bounds = np.searchsorted(review, np.arange(0, n_reviews + _CHUNK, _CHUNK).clip(max=n_reviews))
    parts = [
        _ranking_scores(
            review[bounds[i] : bounds[i + 1]] - lo,
            position[bounds[i] : bounds[i + 1]],
            gt_rank[bounds[i] : bounds[i + 1]],
            n_gt[lo : lo + _CHUNK],
            k,
            gain,
            discount,
            None if ranked is None else ranked[lo : lo + _CHUNK],
            None if explicit is None else (explicit[0][bounds[i] : bounds[i + 1]], explicit[1][lo : lo + _CHUNK]),
        )
        for i, lo in enumerate(range(0, n_reviews, _CHUNK))
    ]
    return {name: np.concatenate([p[name] for p in parts]) for name in parts[0]}


def ranking_scores(
    review: ArrayLike,
    position: ArrayLike,
    gt_rank: ArrayLike,
    n_gt: ArrayLike,
    k: int,
    gain: str = "linear",
    discount: str = "log2",
    ranked: ArrayLike | None = None,
) -> dict[str, np.ndarray]:
    """nDCG@k, P@k, AP@k and RR of every review from its matched pairs.

    Parameters
    ----------
    review, position, gt_rank : array-like of int, one entry per matched pair (i, j) ∈ M
        The pair's review (0-based index into `n_gt`), the prediction's
        0-based position i after cleaning and the GT keyword's 0-based rank j
        in the review's GT list.
    n_gt : array-like of int, one entry per review
        |G|: the ideal list is the GT's own top min(k, |G|).
    k : int
        The cut-off, a positive integer; any size (columns past the longest list cost nothing).
    gain, discount : str
        nDCG's gain (``linear``, ``exponential``) and discount (``log2``, ``jarvelin``).
    ranked : array-like of bool, one entry per review, optional
        False where the review's GT is unranked: every relevance is 1 (binary-relevance nDCG).

    Returns
    -------
    dict of str to ndarray of float64
        ``ndcg@{k}``, ``p@{k}`` (matched among the first k / k), ``ap@{k}``
        (Σ precision at each matched position < k / min(k, |G|)) and ``rr``
        (1 / (i + 1) of the first matched position < k; 0 if none), keyed by
        the registry's name templates.  A review without pairs scores 0.

    Raises
    ------
    ValueError
        For a cut-off that is not a positive integer, an unknown gain or
        discount, pairs of different lengths, negative values, or a pair
        pointing past the reviews.

    Examples
    --------
    One review with |G| = 3 whose predictions at positions 0 and 2 matched the
    GT keywords of rank 1 and 0:

    >>> scores = ranking_scores(review=[0, 0], position=[0, 2], gt_rank=[1, 0], n_gt=[3], k=3)
    >>> {name: round(float(v[0]), 4) for name, v in scores.items()}
    {'ndcg@{k}': 0.6862, 'p@{k}': 0.6667, 'ap@{k}': 0.5556, 'rr': 1.0}
    """
    k = check_k(k)
    n_gt_arr = checks.counts("n_gt", n_gt)
    review_arr, position_arr = checks.pairs(review, position, len(n_gt_arr))
    gt_rank_arr = checks.counts("gt_rank", gt_rank)
    checks.same_length(review=review_arr, gt_rank=gt_rank_arr)
    if gain not in ranking.GAINS or discount not in ranking.DISCOUNTS:
        raise ValueError(f"gain must be one of {ranking.GAINS} and discount one of {ranking.DISCOUNTS}")
    ranked_arr = checks.optional_flags("ranked", ranked, len(n_gt_arr))
    return _ranking_scores(review_arr, position_arr, gt_rank_arr, n_gt_arr, k, gain, discount, ranked_arr)


def from_counts(counts: ReviewCounts, settings: Settings) -> dict[str, np.ndarray]:
    """The family's columns for the evaluation pipeline (`kweval.metrics.registry`); a judged GT's explicit
    relevances (docs/metrics.md §11) replace those of GT ranks."""
    if counts.pair_relevance is not None and counts.ideal_relevance is not None:
        review, position = checks.pairs(counts.pair_review, counts.pair_position, len(counts.n_gt))
        explicit = (np.asarray(counts.pair_relevance, dtype="float64"), counts.ideal_relevance)
        n_gt = np.asarray(counts.n_gt, dtype="int64")
        gt_rank = np.asarray(counts.pair_gt_rank, dtype="int64")
        k, gain, discount = settings.k, settings.gain, settings.discount
        return _ranking_scores(review, position, gt_rank, n_gt, k, gain, discount, None, explicit)
    return ranking_scores(
        counts.pair_review,
        counts.pair_position,
        counts.pair_gt_rank,
        counts.n_gt,
        settings.k,
        settings.gain,
        settings.discount,
        counts.ranked,
    )
