"""Ranking metrics on plain relevance lists, vectorised over queries (in the style of ranx).

A *relevance list* gives, for each position of a ranking (0-based, best
first), the relevance of the item placed there.  Every metric accepts either

- one list (a 1-D array-like) and returns a Python ``float``, or
- a 2-D array with one query per row, shorter rows padded with zeros at the
  end, and returns a 1-D ``float64`` array with one value per row.

Zero padding never changes a result: a zero is a non-relevant item, and
positions past the end of a list count as non-relevant.  Binary metrics
(precision, average precision, reciprocal rank) treat relevance ``> 0`` as
relevant.  Relevances must be finite and non-negative; a cut-off ``k`` must be
a positive integer (``None`` means the whole list).  Invalid input raises
``ValueError``.

Gains (``gain=``):

- ``"linear"``: g(r) = r
- ``"exponential"``: g(r) = 2**r - 1 (Burges et al. 2005)

Discounts (``discount=``), the weight of 0-based position i:

- ``"log2"``: 1 / log2(i + 2)  (the usual DCG, = 1/log2(rank + 1) for 1-based rank)
- ``"jarvelin"`` (Järvelin & Kekäläinen 2000): 1 for i == 0, 1 / log2(i + 1)
  for i >= 1, so the first two positions are undiscounted.

docs/metrics.md §3 defines the review-level metrics in terms of these functions.
"""

from __future__ import annotations

import numbers

import numpy as np

from kweval.metrics.cutoff import check_k

__all__ = [
    "GAINS",
    "DISCOUNTS",
    "discount_weights",
    "apply_gain",
    "dcg",
    "ndcg",
    "average_precision",
    "reciprocal_rank",
    "precision_at_k",
]

GAINS = ("linear", "exponential")
DISCOUNTS = ("log2", "jarvelin")


# --------------------------------------------------------------------------- helpers


def _check_values(arr: np.ndarray, what: str) -> None:
    if arr.size and not np.isfinite(arr).all():
        raise ValueError(f"{what} must be finite (found NaN or infinity)")
    if arr.size and (arr < 0).any():
        raise ValueError(f"{what} must be non-negative (found {arr.min()!r})")


def _to_float_array(values, what: str) -> np.ndarray:
    try:
        arr = np.asarray(values, dtype="float64")
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{what} must be numeric and rectangular (one list, or equal-length rows): {exc}") from None
    return arr


def _as_matrix(values, what: str = "relevances") -> tuple[np.ndarray, bool]:
    """``(2-D float64 array, whether the input was a single 1-D list)``, validated."""
    arr = _to_float_array(values, what)
    if arr.ndim not in (1, 2):
        raise ValueError(f"{what} must be a 1-D list or a 2-D array (one row per query), got {arr.ndim} dimension(s)")
    _check_values(arr, what)
    single = arr.ndim == 1
    return (arr[None, :] if single else arr), single


def _result(values: np.ndarray, single: bool):
    return float(values[0]) if single else values


def _check_k(k: object) -> int | None:
    """`k` checked as every cut-off is (`kweval.metrics.cutoff.check_k`); None means the whole list."""
    return None if k is None else check_k(k)


def _head(arr: np.ndarray, k: int | None) -> np.ndarray:
    """The first ``min(k, width)`` columns: positions past a list's end are non-relevant,
    so they never need to be materialised (k may be far larger than the lists)."""
    return arr if k is None else arr[:, : min(k, arr.shape[1])]


def _dcg_rows(arr: np.ndarray, k: int | None, gain: str, discount: str) -> np.ndarray:
    head = _head(arr, k)
    with np.errstate(over="ignore", invalid="ignore"):
        out = apply_gain(head, gain) @ discount_weights(head.shape[1], discount)
    if not np.isfinite(out).all():
        raise ValueError(f"DCG overflows float64 (the {gain} gains of these relevances sum beyond 1.8e308)")
    return out


# --------------------------------------------------------------------------- building blocks


def discount_weights(n: int, discount: str = "log2") -> np.ndarray:
    """The weights of the first ``n`` positions (0-based) under ``discount``.

    ``"log2"``: ``1 / log2(i + 2)``; ``"jarvelin"``: ``1`` for ``i == 0`` and
    ``1 / log2(i + 1)`` for ``i >= 1``.  ``n == 0`` gives an empty array.

    Raises ``ValueError`` for an unknown discount or a negative / non-integer ``n``.
    """
    if discount not in DISCOUNTS:
        raise ValueError(f"unknown discount {discount!r}; choose one of {', '.join(map(repr, DISCOUNTS))}")
    if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 0:
        raise ValueError(f"n must be a non-negative integer, got {n!r}")
    positions = np.arange(int(n), dtype="float64")
    if discount == "log2":
        return 1.0 / np.log2(positions + 2.0)
    weights = np.ones(int(n), dtype="float64")
    weights[1:] = 1.0 / np.log2(positions[1:] + 1.0)
    return weights


def apply_gain(relevances, gain: str = "linear") -> np.ndarray:
    """Relevances (any shape) mapped through the gain function, as a float64 array.

    ``"linear"``: ``r``; ``"exponential"``: ``2**r - 1`` (0 stays 0).

    Raises ``ValueError`` for an unknown gain, for relevances that are not
    finite and non-negative, and when the exponential gain overflows float64
    (relevance >= 1024).
    """
    if gain not in GAINS:
        raise ValueError(f"unknown gain {gain!r}; choose one of {', '.join(map(repr, GAINS))}")
    rel = _to_float_array(relevances, "relevances")
    _check_values(rel, "relevances")
    if gain == "linear":
        return rel
    with np.errstate(over="ignore"):
        out = np.exp2(rel) - 1.0
    if not np.isfinite(out).all():
        raise ValueError("exponential gain 2**r - 1 overflows float64 for relevance >= 1024")
    return out


# --------------------------------------------------------------------------- graded metrics


def dcg(relevances, k: int | None = None, gain: str = "linear", discount: str = "log2"):
    """Discounted cumulative gain of the first ``k`` positions: ``Σ_{i<k} gain(r_i) · disc(i)``.

    ``k=None`` (or any ``k`` at least the list's length) uses the whole list.
    An empty list gives 0.

    Returns a float for a 1-D list, a 1-D array (one value per row) for a 2-D array.
    """
    arr, single = _as_matrix(relevances)
    k = _check_k(k)
    return _result(_dcg_rows(arr, k, gain, discount), single)


def ndcg(relevances, k: int | None = None, ideal=None, gain: str = "linear", discount: str = "log2"):
    """Normalised DCG: ``DCG@k(relevances) / DCG@k(sorted(ideal, descending))``.

    ``ideal`` is the pool of relevances an ideal ranking could use:

    - ``None`` (default): ``relevances`` itself (the classic definition, which
      cannot see relevant items that were never retrieved).  The result is
      then in [0, 1] (clipped at 1 to absorb float rounding) and is exactly 1
      when ``relevances`` is already sorted descending.
    - a list (1-D case) or a 2-D array with one row per query (2-D case), e.g.
      every judged relevance of the query.  Rows may be longer or shorter
      than those of ``relevances``; shorter ones are zero-padded.  It is
      sorted here, so order does not matter.  The result is not clipped: a
      value above 1 means ``ideal`` does not contain the retrieved relevances.

    ``k=None`` uses the full length of the longer of the two lists.  When the
    ideal DCG is 0 (nothing relevant), the result is 0.

    Returns a float for a 1-D list, a 1-D array (one value per row) for a 2-D array.
    """
    arr, single = _as_matrix(relevances)
    k = _check_k(k)
    if ideal is None:
        ideal_arr = arr
    else:
        ideal_arr, _ = _as_matrix(ideal, "ideal")
        if ideal_arr.shape[0] != arr.shape[0]:
            raise ValueError(
                f"ideal must have one row per query: relevances has {arr.shape[0]} row(s), ideal {ideal_arr.shape[0]}"
            )
    ideal_sorted = -np.sort(-ideal_arr, axis=1)  # descending, per row
    actual = _dcg_rows(arr, k, gain, discount)
    best = _dcg_rows(ideal_sorted, k, gain, discount)
    out = np.zeros_like(actual)
    np.divide(actual, best, out=out, where=best > 0)
    if ideal is None:
        np.minimum(out, 1.0, out=out)
    return _result(out, single)


# --------------------------------------------------------------------------- binary metrics


def precision_at_k(relevances, k: int):
    """``(number of relevant items among the first k positions) / k``.

    Lists shorter than ``k`` count the missing positions as non-relevant
    (the denominator is always ``k``, as in trec_eval's ``P_k``).  ``k`` is
    required.

    Returns a float for a 1-D list, a 1-D array (one value per row) for a 2-D array.
    """
    arr, single = _as_matrix(relevances)
    if k is None:
        raise ValueError("k is required (a positive integer)")
    k = check_k(k)
    hits = (_head(arr, k) > 0).sum(axis=1)
    return _result(hits / float(k), single)


def reciprocal_rank(relevances, k: int | None = None):
    """``1 / (i + 1)`` for the first relevant position ``i < k``; 0 when there is none.

    ``k=None`` searches the whole list.  Its mean over queries is MRR(@k).

    Returns a float for a 1-D list, a 1-D array (one value per row) for a 2-D array.
    """
    arr, single = _as_matrix(relevances)
    k = _check_k(k)
    hits = _head(arr, k) > 0
    # 1/(i+1) decreases with i, so the largest over relevant positions is the first one's
    inverse_rank = 1.0 / np.arange(1.0, hits.shape[1] + 1.0)
    return _result(np.max(hits * inverse_rank, axis=1, initial=0.0), single)


def average_precision(relevances, k: int | None = None, n_relevant=None):
    """``Σ_{relevant i < k} precision@(i+1)``, divided by ``n_relevant``.

    ``precision@(i+1)`` is the number of relevant items among positions
    ``0..i`` over ``i + 1``.  ``n_relevant`` is the number of relevant items
    that exist for the query:

    - ``None`` (default): the number of relevant items in the whole given list
      (not only the first ``k``);
    - a number, or in the 2-D case a 1-D array with one value per row: e.g.
      the number of relevant judgements, so relevant items never retrieved
      lower the score (trec_eval's ``map``), or ``min(k, |G|)`` for AP@k as in
      docs/metrics.md §3.

    The result is 0 where ``n_relevant`` is 0.  It is not clipped: an
    ``n_relevant`` smaller than the relevant items found gives values above 1.

    Returns a float for a 1-D list, a 1-D array (one value per row) for a 2-D array.
    """
    arr, single = _as_matrix(relevances)
    k = _check_k(k)
    relevant = arr > 0
    hits = _head(relevant, k).astype("float64")
    precision = np.cumsum(hits, axis=1) / np.arange(1.0, hits.shape[1] + 1.0)
    total = (precision * hits).sum(axis=1)
    if n_relevant is None:
        denom = relevant.sum(axis=1).astype("float64")
    else:
        given = _to_float_array(n_relevant, "n_relevant")
        if given.ndim > 1 or (given.ndim == 1 and given.shape[0] not in (1, arr.shape[0])):
            raise ValueError(
                f"n_relevant must be a number or one value per row ({arr.shape[0]}), got shape {given.shape}"
            )
        _check_values(given, "n_relevant")
        denom = np.broadcast_to(given, total.shape)
    out = np.zeros_like(total)
    np.divide(total, denom, out=out, where=denom > 0)
    return _result(out, single)
