"""Array helpers shared by the evaluation stages (private: plain numpy/pandas, no kweval imports).

Object arrays built without numpy's shape inference, factorizing that hashes
one value per run of equal neighbours, sums per group, and stable sort orders
by several integer keys that skip the sort when rows are already in order.
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


def run_heads(*codes: np.ndarray) -> np.ndarray:
    """Per row: whether any of the arrays changes value there, i.e. a run (a GT list, a movie's rows) starts; the first
    row always does."""
    n = len(codes[0])
    head = np.ones(n, dtype=bool)
    if n > 1:
        head[1:] = np.logical_or.reduce([c[1:] != c[:-1] for c in codes])
    return head


def position_in_run(head: np.ndarray) -> np.ndarray:
    """Per row: its position (0, 1, ...) within its run, the runs starting where `head` is True (as `run_heads` gives
    it)."""
    n = len(head)
    if n == 0:
        return np.zeros(0, np.int64)
    at = np.arange(n, dtype=np.int64)
    return at - np.maximum.accumulate(np.where(head, at, 0))


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


def stable_order(rows: np.ndarray | None, n_all: int, *keys) -> np.ndarray | None:
    """The stable sort order of `rows` (None: all `n_all` rows) by several keys, most significant first.

    Each key is (rank table, codes) — the row's key is ``table[codes[row]]`` —
    or a plain array of integers (taken as int64; floats or a negative value
    make it a plain np.lexsort).  The keys are combined into one integer
    when they fit.  Returns None when the rows are
    already in order (readers and stages often get them so: checking costs a
    pass, sorting much more); else the order `np.lexsort` gives.
    """
    n = n_all if rows is None else len(rows)
    if n == 0:
        return None

    def column(key) -> np.ndarray:
        if isinstance(key, tuple):
            table, codes = key
            return table[codes if rows is None else codes[rows]]
        return (key if rows is None else key[rows]).astype("int64")

    spans = []
    for key in keys:
        if isinstance(key, tuple):
            spans.append(int(key[0].max()) + 1 if len(key[0]) else 1)
        else:
            values = key if rows is None else key[rows]
            if values.dtype.kind not in "iu" or values.min() < 0:  # a key that does not combine: np.lexsort
                return np.lexsort([column(k) for k in keys][::-1])
            spans.append(int(values.max()) + 1)
    if float(np.prod([float(s) for s in spans])) >= 2.0**62:
        return np.lexsort([column(k) for k in keys][::-1])
    combined = column(keys[0])
    for key, span in zip(keys[1:], spans[1:]):
        combined *= span
        combined += column(key)
    if not (combined[1:] < combined[:-1]).any():
        return None
    return np.argsort(combined, kind="stable")


def repeated(keys: np.ndarray) -> np.ndarray:
    """Per row: whether an earlier row has the same key (`pd.Series(keys).duplicated(keep="first")`).

    By a stable sort rather than hashing: keys built as (group, value) with
    rows grouped already are nearly sorted, which the sort runs through.
    """
    out = np.zeros(len(keys), dtype=bool)
    if len(keys) > 1:
        order = np.argsort(keys, kind="stable")
        ordered = keys[order]
        out[order[1:]] = ordered[1:] == ordered[:-1]
    return out


def sort_key(values: np.ndarray) -> np.ndarray:
    """Non-negative integers that sort as `values` do under a stable sort_values (missing values last).

    Non-negative integers are their own key (GT ranks, mostly); any other
    values are ranked among their distinct values.
    """
    if values.dtype.kind in "iu" and (len(values) == 0 or values.min() >= 0):
        return values
    codes, uniques = factorize_runs(values)
    sorted_position = pd.factorize(uniques, sort=True)[0]
    return np.where(codes < 0, len(uniques), np.append(sorted_position, 0)[codes])


def unique_codes(codes: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """`np.unique(codes, return_inverse=True)` for integer codes within 0..n-1, without sorting.

    A presence mask over the n possible codes takes O(len(codes) + n) instead of a sort.
    """
    present = np.zeros(n, dtype=bool)
    present[codes] = True
    rank = np.cumsum(present, dtype=np.int64) - 1  # each present code's position among the present ones
    return np.flatnonzero(present), rank[codes]
