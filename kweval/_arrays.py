"""The speed idioms of kweval, each named once (private: plain numpy/pandas, no kweval imports).

Keys are handled as integer codes into their distinct values, so a table of
millions of rows holds one Python object per distinct value.  The idioms:

- codes: `factorize_runs` (hash one value per run of equal neighbours),
  `positions`, `unique_codes`, `mapped_codes` (a function of the distinct
  values, e.g. normalized codes), `empty_as_missing`, and codes with a fill
  value (`with_missing`, `take_codes`: code -1 reads the fill);
- order: `text_rank` (distinct texts in code-point order), `sort_key`,
  `stable_order` (several keys, no sort when rows are in order already),
  `repeated` (later rows with an earlier row's key);
- runs: `run_heads`, `position_in_run`;
- building: `object_array`, `object_column`, `concat_or_empty`, `group_sum`,
  `index_dtype` (int32 row indexes where they fit: half the memory);
- products: `small_products` (rows times a few columns of values, a block of up to 8 rows at a time: one thread's
  work in cache instead of a pool of threads over one large product; the randomization tests' swap sums, the bootstrap's
  resampled sums);
- segments: `segment_max_rows` (the row-wise maximum of each segment of gathered rows, a pass per position in
  the segment instead of one reduction per segment: the semantic metrics' best cosine of each GT keyword).

Each has a plain definition it is tested against (tests/test_arrays.py).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

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
    lookup = np.array([pos.get(u, -1) for u in uniques.tolist()], dtype=np.int64)
    return take_codes(lookup, codes, -1)


def with_missing(values: np.ndarray, fill: object = None) -> np.ndarray:
    """`values` with one more slot holding `fill`: indexed by codes, code -1 (missing) reads `fill`."""
    return np.concatenate((np.ravel(values), np.array([fill])))


def take_codes(values: np.ndarray, codes: np.ndarray, fill: object = None) -> np.ndarray:
    """`values[codes]`, `fill` where the code is -1 (missing): codes with a fill value."""
    return with_missing(values, fill)[codes]


def empty_as_missing(codes: np.ndarray, uniques: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The codes with the empty string's code (if any) made -1, the code for no value (changed in place and returned).

    The readers' rule "an empty cell is a missing cell" for key and text columns.
    """
    empty = np.flatnonzero(np.asarray(uniques, dtype=object) == "")
    if len(empty):  # values are distinct: at most one empty string
        codes[codes == empty[0]] = -1
    return codes, uniques


def text_rank(uniques: np.ndarray, missing_first: bool = False) -> np.ndarray:
    """Each distinct text's position in code-point order, and one slot more for code -1 (missing).

    `rank[codes]` sorts rows as their texts sort; a missing value sorts last,
    or first with `missing_first` (the others then take positions 1..n).
    """
    n = len(uniques)
    rank = np.zeros(n + 1, dtype=np.int64)
    first = 1 if missing_first else 0
    rank[np.argsort(uniques, kind="stable")] = np.arange(first, n + first)
    rank[n] = 0 if missing_first else n
    return rank


def mapped_codes(values: np.ndarray, fn: Callable[[list], list]) -> tuple[np.ndarray, np.ndarray]:
    """(per row, the code of ``fn(value)`` among fn's distinct results; those results in order of first appearance).

    `fn` maps a list of distinct values to a list of results (e.g.
    `normalize_many`) and is called once, on the distinct values: keywords
    repeat across reviews.  A missing value (None, NaN) has code -1.
    """
    codes, uniques = pd.factorize(values)
    result_codes, results = pd.factorize(object_array(fn(uniques.tolist())))
    return take_codes(result_codes, codes, -1), np.asarray(results, dtype=object)


def index_dtype(n: int) -> type[np.signedinteger]:
    """The integer type of row indexes into `n` rows: int32 while it can hold them (half of int64's memory)."""
    return np.int32 if n < 2**31 else np.int64


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


_BLOCK_ROWS = (4, 8)  # the fewest and most rows of a block (fewer than 4: one product does better)
# rows × inner × columns of a block's product: OpenBLAS computes a product up to 100³ with one thread and its
# small-matrix kernel (no packing, no thread pool)
_SMALL_PRODUCT = 1_000_000


def small_products(
    rows: np.ndarray, values: np.ndarray, expand: Callable[[np.ndarray], np.ndarray] | None = None
) -> np.ndarray:
    """``expand(rows).astype(float64) @ values`` (`expand`: none when None, e.g. ``np.unpackbits`` of packed bits),
    up to 8 rows at a time where such a block's product is small (rows × inner × columns ≤ `_SMALL_PRODUCT` with at
    least 4 rows), else in one product.

    Speed trick "small products": a block of a few expanded rows stays in cache, and its product is one thread's work
    (OpenBLAS's small-matrix kernel), where one large product of a few columns is memory-bound and shared by a pool
    of threads that, on a busy machine, spin waiting for each other (bench/bench_randomization.py --kernel).  Sums in
    another order: equal up to rounding (tests/test_stats_products.py)."""
    inner, columns = values.shape
    block = min(_BLOCK_ROWS[1], _SMALL_PRODUCT // max(inner * columns, 1))
    if block < _BLOCK_ROWS[0] or rows.shape[0] <= block:
        return (rows if expand is None else expand(rows)).astype("float64") @ values
    out = np.empty((rows.shape[0], columns))
    for start in range(0, rows.shape[0], block):
        part = rows[start : start + block]
        part = (part if expand is None else expand(part)).astype("float64")
        np.matmul(part, values, out=out[start : start + block])
    return out


def segment_max_rows(
    values: np.ndarray, rows: np.ndarray, starts: np.ndarray, out: np.ndarray | None = None
) -> np.ndarray:
    """``np.maximum.reduceat(values[rows], starts, axis=0)`` for increasing `starts` (starts[0] == 0, every
    segment non-empty): the maximum of each segment's rows, taken position by position over the segments longest
    first (the first rows of every segment, then the second rows of those that have one, ...: a prefix each time,
    maximised in place).  A maximum involves no rounding: equal.  Written into `out` when given (one row per
    segment, `values`' columns and dtype), so that a caller gathering many can fill one array."""
    sizes = np.diff(np.append(starts, len(rows)))
    order = np.argsort(-sizes, kind="stable")
    first, sizes = starts[order], sizes[order]
    best = values[rows[first]]
    for k in range(1, int(sizes[0]) if len(sizes) else 0):
        m = int(np.count_nonzero(sizes > k))
        np.maximum(best[:m], values[rows[first[:m] + k]], out=best[:m])
    if out is None:
        out = np.empty_like(best)
    out[order] = best
    return out


_TRANSPOSE_COLUMNS = 256  # columns of a chunk copied at a time by `stacked_transposed`


def stacked_transposed(chunks: Sequence[np.ndarray]) -> np.ndarray:
    """``np.concatenate(chunks).T.copy()``: the chunks (same columns) stacked, then one row per column.

    Speed trick "blocked transpose": each chunk is copied `_TRANSPOSE_COLUMNS` columns at a time into its place
    (what a block reads and writes stays in cache), with no stacked copy first; a plain transposed copy strides
    through memory: on DNLP's resample counts (2,000 draws × 9,362 reviews) 4x slower.  Equal (tests/test_arrays.py).
    """
    if not chunks or any(c.ndim != 2 or c.shape[1] != chunks[0].shape[1] for c in chunks):
        raise ValueError("stacked_transposed: needs 2-d chunks of the same columns")
    columns = chunks[0].shape[1]
    out = np.empty((columns, sum(len(c) for c in chunks)), dtype=np.result_type(*chunks))
    at = 0
    for chunk in chunks:
        for start in range(0, columns, _TRANSPOSE_COLUMNS):
            block = slice(start, start + _TRANSPOSE_COLUMNS)
            out[block, at : at + len(chunk)] = chunk[:, block].T
        at += len(chunk)
    return out
