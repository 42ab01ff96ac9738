"""Metrics on plain relevance lists, vectorised over queries (in the style of ranx).

Every function takes either one ranked list (1-D array-like → a float) or a
2-D array with one query per row, padded with zeros (→ a 1-D float array).
Positions are 0-based.  Binary metrics treat relevance > 0 as relevant.

- ``gain``: ``linear`` g(r) = r, or ``exponential`` g(r) = 2**r − 1 (Burges et al. 2005).
- ``discount``: ``log2`` 1/log2(i + 2), or ``jarvelin`` (Järvelin & Kekäläinen
  2000): positions 0 and 1 undiscounted, position i ≥ 1 divided by log2(i + 1).
"""

from __future__ import annotations

import numpy as np

GAINS = ("linear", "exponential")
DISCOUNTS = ("log2", "jarvelin")


def _as_matrix(relevances) -> tuple[np.ndarray, bool]:
    """(2-D float array, whether the input was a single list)."""
    arr = np.asarray(relevances, dtype="float64")
    single = arr.ndim <= 1
    arr = np.atleast_2d(arr)
    if arr.ndim != 2:
        raise ValueError(f"relevances must be 1-D or 2-D, got {arr.ndim} dimensions")
    if arr.size and (not np.isfinite(arr).all() or (arr < 0).any()):
        raise ValueError("relevances must be finite and non-negative")
    return arr, single


def _result(values: np.ndarray, single: bool):
    return float(values[0]) if single else values


def _cut(k: int | None, width: int) -> int:
    if k is None:
        return width
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise ValueError(f"k must be a positive integer or None, got {k!r}")
    return int(k)


def _padded(arr: np.ndarray, width: int) -> np.ndarray:
    """`arr` cut or zero-padded to `width` columns."""
    if arr.shape[1] >= width:
        return arr[:, :width]
    return np.pad(arr, ((0, 0), (0, width - arr.shape[1])))


def discount_weights(n: int, discount: str = "log2") -> np.ndarray:
    """The weights of the first `n` positions under `discount`."""
    positions = np.arange(n, dtype="float64")
    if discount == "log2":
        return 1.0 / np.log2(positions + 2.0)
    if discount == "jarvelin":
        weights = np.ones(n)
        weights[1:] = 1.0 / np.log2(positions[1:] + 1.0)
        return weights
    raise ValueError(f"unknown discount {discount!r}; choose one of {', '.join(DISCOUNTS)}")


def apply_gain(relevances, gain: str = "linear") -> np.ndarray:
    """Relevance values mapped through the gain function."""
    rel = np.asarray(relevances, dtype="float64")
    if gain == "linear":
        return rel
    if gain == "exponential":
        return np.exp2(rel) - 1.0
    raise ValueError(f"unknown gain {gain!r}; choose one of {', '.join(GAINS)}")


def _dcg_matrix(arr: np.ndarray, k: int, gain: str, discount: str) -> np.ndarray:
    cut = _padded(arr, k)
    return apply_gain(cut, gain) @ discount_weights(k, discount)


def dcg(relevances, k: int | None = None, gain: str = "linear", discount: str = "log2"):
    """Discounted cumulative gain of the first k positions (all when k is None)."""
    arr, single = _as_matrix(relevances)
    k = _cut(k, arr.shape[1])
    return _result(_dcg_matrix(arr, k, gain, discount), single)


def ndcg(relevances, k: int | None = None, ideal=None, gain: str = "linear", discount: str = "log2"):
    """DCG@k / IDCG@k, where IDCG is the DCG of `ideal` sorted descending.

    `ideal` defaults to `relevances` itself (the classic definition); passing
    the full set of judged relevances lets missing relevant items count.
    IDCG = 0 gives 0.
    """
    arr, single = _as_matrix(relevances)
    ideal_arr = arr if ideal is None else _as_matrix(ideal)[0]
    if ideal_arr.shape[0] != arr.shape[0]:
        raise ValueError("ideal must have one row per query")
    k = _cut(k, max(arr.shape[1], ideal_arr.shape[1]) if k is None else k)
    ideal_sorted = -np.sort(-ideal_arr, axis=1)
    actual = _dcg_matrix(arr, k, gain, discount)
    best = _dcg_matrix(ideal_sorted, k, gain, discount)
    out = np.zeros_like(actual)
    np.divide(actual, best, out=out, where=best > 0)
    return _result(out, single)


def precision_at_k(relevances, k: int):
    """(number of relevant items among the first k) / k; missing positions count as non-relevant."""
    arr, single = _as_matrix(relevances)
    if k is None:
        raise ValueError("precision_at_k needs k")
    k = _cut(k, arr.shape[1])
    return _result((_padded(arr, k) > 0).sum(axis=1) / k, single)


def reciprocal_rank(relevances, k: int | None = None):
    """1 / (i + 1) for the first relevant position i < k; 0 if there is none."""
    arr, single = _as_matrix(relevances)
    k = _cut(k, arr.shape[1])
    hits = _padded(arr, k) > 0
    first = hits.argmax(axis=1)
    return _result(np.where(hits.any(axis=1), 1.0 / (first + 1.0), 0.0), single)


def average_precision(relevances, k: int | None = None, n_relevant=None):
    """Σ over relevant positions i < k of precision@(i+1), divided by `n_relevant`.

    `n_relevant` (a number, or one per row) is how many relevant items exist;
    by default the number of relevant items in the whole given list.  0 when
    it is 0.
    """
    arr, single = _as_matrix(relevances)
    hits_all = arr > 0
    k = _cut(k, arr.shape[1])
    hits = _padded(hits_all, k).astype("float64")
    precision = np.cumsum(hits, axis=1) / np.arange(1, k + 1)
    total = (precision * hits).sum(axis=1)
    denom = hits_all.sum(axis=1).astype("float64") if n_relevant is None else np.broadcast_to(
        np.asarray(n_relevant, dtype="float64"), total.shape
    )
    out = np.zeros_like(total)
    np.divide(total, denom, out=out, where=denom > 0)
    return _result(out, single)
