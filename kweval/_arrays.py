"""Array helpers shared by the evaluation stages (private: plain numpy/pandas, no kweval imports).

Object arrays built without numpy's shape inference, factorizing that hashes
one value per run of equal neighbours, and sums per group.
"""

from __future__ import annotations

import numpy as np
import pandas as pd


def group_sum(group: np.ndarray, values: np.ndarray | None, n: int) -> np.ndarray:
    """Per group 0..n-1, the sum of `values` over its rows (the row count when `values` is None), as float64."""
    return np.bincount(group, weights=values, minlength=n).astype("float64") if len(group) else np.zeros(n)


def object_array(values) -> np.ndarray:
    """A 1-D object array holding `values` as they are (np.asarray would build a 2-D array from tuples)."""
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out


def object_column(values) -> pd.Series:
    """A plain object column (no inference to the pyarrow-backed str dtype: cheaper to build and to hash)."""
    return pd.Series(values, dtype=object, copy=False)


def concat_or_empty(arrays: list[np.ndarray], dtype) -> np.ndarray:
    """`np.concatenate(arrays)`, or an empty array of `dtype` when there are none."""
    return np.concatenate(arrays) if arrays else np.zeros(0, dtype=dtype)


def factorize_runs(values: np.ndarray, use_na_sentinel: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """`pd.factorize(values)`, hashing one value per run of equal neighbours.

    Readers emit keys in long runs (a movie's rows, a review's rows), and
    comparing neighbours (by identity first) is much cheaper than hashing
    every string.
    """
    n = len(values)
    if n < 2:
        return pd.factorize(values, use_na_sentinel=use_na_sentinel)
    change = np.empty(n, dtype=bool)
    change[0] = True
    try:
        np.not_equal(values[1:], values[:-1], out=change[1:])
    except (TypeError, ValueError):  # values that do not compare as scalars
        return pd.factorize(values, use_na_sentinel=use_na_sentinel)
    heads = np.flatnonzero(change)
    if len(heads) > n // 2:
        return pd.factorize(values, use_na_sentinel=use_na_sentinel)
    codes, uniques = pd.factorize(values[heads], use_na_sentinel=use_na_sentinel)
    return np.repeat(codes, np.diff(np.append(heads, n))), uniques


def positions(values: np.ndarray, pos: dict) -> np.ndarray:
    """For each value, its position in `pos` (value -> index), or -1; hashed once per distinct value."""
    codes, uniques = factorize_runs(values)
    lookup = np.array([pos.get(u, -1) for u in uniques.tolist()] + [-1], dtype=np.int64)
    return lookup[codes]  # code -1 (NA) picks the trailing -1


def unique_codes(codes: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """`np.unique(codes, return_inverse=True)` for integer codes within 0..n-1, without sorting.

    A presence mask over the n possible codes takes O(len(codes) + n) instead of a sort.
    """
    present = np.zeros(n, dtype=bool)
    present[codes] = True
    rank = np.cumsum(present, dtype=np.int64) - 1  # each present code's position among the present ones
    return np.flatnonzero(present), rank[codes]


def lexsort_order(minor: np.ndarray, major: np.ndarray) -> np.ndarray:
    """`np.lexsort((minor, major))`: positions by `major`, then `minor`, ties in their order.

    Readers mostly emit rows already in that order; then the positions are
    0..n-1, found by one pass instead of a sort.
    """
    if len(major) > 1:
        step = np.diff(major)
        if ((step > 0) | ((step == 0) & (np.diff(minor) >= 0))).all():
            return np.arange(len(major), dtype=np.intp)
    return np.lexsort((minor, major))
