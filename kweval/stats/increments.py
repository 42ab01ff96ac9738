"""Speed trick "exact increments": sums over seeded draws updated by the rows that changed, equal bit for bit to the
sums computed from scratch.

The randomization test's swap sums (``bits @ d``, bits 0 or 1) and the bootstrap's resampled sums (``counts @ v``,
counts summing to n) read per-review values rounded to a dyadic grid (`on_grid`): multiples of 2^-g, with g chosen
per column from the number of reviews n and the largest |value| (`grid_exponents`) so that every partial sum of
weighted values, or of weighted changes of values, stays below 2^53 grid units.  Float64 adds such numbers exactly,
in any order (BLAS blocking, FMA, threads).  So a column's sums are a remembered column's sums plus the draws of the
changed rows times the change, ``W @ v_new == W @ v_old + W[:, J] @ (v_new - v_old)[J]``, bit for bit: no path
dependence.  `KeptSums` remembers columns with their sums per draw (n, draws, seed) and starts a new column from the
remembered one with the fewest changed rows (a τ step changes about a third of a pair's differences); above
`CHANGED` of the rows it computes from scratch (it would not pay: bench/bench_randomization.py --kernel).

Plain reference definition: ``W.astype(float64) @ on_grid(v, grid_exponents(n, v))`` from scratch
(tests/test_stats_increments.py).  The rounding moves a value, and so a mean, by at most 2^-(g+1) (`rounding`):
3.6e-12 for 9,362 reviews with values within ±1 (and beyond ±1/256).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from kweval.stats.remembered import digest, read_only

CHANGED = 0.7  # the largest share of changed rows an update starts from (more: from scratch; swap sums at 9,362 ×
# 10,000: 3.0× faster than from scratch at 20 %, 2.9× at 33 %, 1.6× at 50 %, 1.2× at 70 %)
_CANDIDATES = 64  # the most recent remembered columns of a draw compared with a new one
_SAMPLE = 256  # rows compared with each of them (the closest on those is compared on every row)
_LIMIT = 64_000_000  # bytes of remembered columns and sums together
_MAX_GRID = 1074  # 2^-1074 is the smallest float64 step: a finer grid is every float64
_GRID_STEP = 8  # grids 2^-g change in steps of 2^8 (rounding: at most 2^-(g+1) ≤ 2^8·n·2^-53·max|value|)


def grid_exponents(n: int, values: np.ndarray) -> np.ndarray:
    """Per column of (reviews × columns) `values`, the g of its grid 2^-g: every value times a weight (0/1 bits, or
    counts summing to `n`), summed in any order, and such sums of changes (|change| ≤ 2·max|value|), stay below
    4·n·2^e ≤ 2^(53 - g) where 2^e ≥ max|value|, e a multiple of `_GRID_STEP`: a column's grid stays put while
    its largest value moves within a factor of 256 (a τ step: every column within ±1 and beyond ±1/256 keeps the
    same grid, whether or not one value is ±1, so it can start from the last one's sums)."""
    top = np.abs(values).max(axis=0) if values.shape[0] else np.zeros(values.shape[1])
    m, e = np.frexp(np.where(np.isfinite(top), top, 0.0))  # top = m·2^e with 0.5 ≤ m < 1
    e = e.astype(np.int64) - (m == 0.5)  # a power of two is its own bound
    e = -((-e) // _GRID_STEP) * _GRID_STEP  # up to a multiple of the step
    span = (4 * max(n, 1) - 1).bit_length()  # 2^span ≥ 4n
    return np.minimum(53 - span - e, _MAX_GRID)


def on_grid(values: np.ndarray, grids: np.ndarray) -> np.ndarray:
    """`values` rounded to the nearest multiple of 2^-g of their column's g (`grids`; half to even)."""
    g = np.asarray(grids, dtype=np.int64)
    return np.ldexp(np.rint(np.ldexp(values, g)), -g)


def rounding(grids: np.ndarray) -> np.ndarray:
    """The most `on_grid` moves a value (and so a mean, or a mean's sign-flipped copy) per column: 2^-(g+1)."""
    return np.ldexp(1.0, -np.asarray(grids, dtype=np.int64) - 1)


# m·n·k of a product below which OpenBLAS computes it with one thread (interface/gemm.c: 2 × SMP_THRESHOLD_MIN 65,536
# × GEMM_MULTITHREAD_THRESHOLD 4); above it, it wakes its thread pool, which on a busy machine spins waiting
ONE_THREAD_PRODUCT = 524_288


def one_thread_rows(columns: int, width: int, most: int) -> int:
    """Speed trick "one-thread blocks": the rows of a block of `by_review_products` (at most `most`, at least 1) whose
    product, ``(columns × rows) @ (rows × width)``, stays below `ONE_THREAD_PRODUCT`: one thread's work in cache.  A
    block of 32 reviews of the τ step's 9 or 12 columns × 2,000 resamples was above it: OpenBLAS split each of ~90
    small products between threads: 0.33-0.57 s of CPU (0.8-1.3 s wall) at load 22 on 2 cores, against 0.015-0.021 s
    in blocks of 29 and 21 (bench/bench_tau_kernels.py).  The block changes no sum: the values are on their grid (the
    module docstring), so `by_review_products` is equal bit for bit whatever the block (tests/test_stats_increments.py
    against the plain product)."""
    return max(1, min(most, (ONE_THREAD_PRODUCT - 1) // max(columns * width, 1)))


def by_review_products(
    by_review: np.ndarray,
    rows: np.ndarray,
    change: np.ndarray,
    expand: Callable[[np.ndarray], np.ndarray] | None = None,
    block: int = 32,
) -> np.ndarray:
    """``W[:, rows] @ change`` (draws × columns) from the draws stored one row per review (`by_review`: W
    transposed, e.g. bits packed along the draws, `expand` unpacking them), up to `block` reviews at a time
    (`one_thread_rows`: fewer where a block's product would take OpenBLAS's threads): the work is proportional to the
    changed rows (a gather of whole rows), not to every review."""
    if not len(rows):
        raise ValueError("by_review_products: no rows")
    width = by_review.shape[1] if expand is None else expand(by_review[rows[:1]]).shape[1]
    return _blocked_products(by_review, rows, change, expand, one_thread_rows(change.shape[1], width, block))


def _blocked_products(
    by_review: np.ndarray,
    rows: np.ndarray,
    change: np.ndarray,
    expand: Callable[[np.ndarray], np.ndarray] | None,
    block: int,
) -> np.ndarray:
    """The kernel of `by_review_products`: its product in blocks of exactly `block` reviews (the last one shorter),
    whatever their size (bench/bench_tau_kernels.py times it at the blocks used before "one-thread blocks")."""
    out: np.ndarray | None = None
    for start in range(0, len(rows), block):
        part = by_review[rows[start : start + block]]
        part = (part if expand is None else expand(part)).astype("float64")
        product = change[start : start + block].T @ part
        out = product if out is None else np.add(out, product, out=out)
    assert out is not None
    return out.T


def bits_by_review(packed: tuple[np.ndarray, ...], n: int) -> np.ndarray:
    """Chunks of packed bits (rows: draws; `n` reviews, 8 a byte as np.packbits) as one row per review, packed
    along the draws: built 64 reviews at a time (their unpacked bits stay in cache: 5× faster than 1,024)."""
    whole = np.concatenate(packed)
    out = np.empty((n, (whole.shape[0] + 7) // 8), dtype=np.uint8)
    for start in range(0, n, 64):
        bits = np.unpackbits(whole[:, start // 8 : (start + 64) // 8], axis=1, count=min(64, n - start))
        out[start : start + bits.shape[1]] = np.packbits(np.ascontiguousarray(bits.T), axis=1)
    return out


@dataclass(frozen=True)
class _Kept:
    grid: int
    values: np.ndarray  # on the grid, read-only
    sums: np.ndarray  # over the draws, read-only


class KeptSums:
    """Columns of values on their grid and their sums over one draw, the least recently used dropped beyond `limit`
    bytes; safe across threads (the dashboard's sessions)."""

    def __init__(self, limit: int = _LIMIT, changed: float = CHANGED) -> None:
        self.limit, self.changed = limit, changed
        self._items: OrderedDict[tuple, _Kept] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self._bytes = 0

    def sums(
        self,
        draw: tuple,
        values: np.ndarray,
        grids: np.ndarray,
        scratch: Callable[[np.ndarray], np.ndarray],
        increment: Callable[[np.ndarray, np.ndarray], np.ndarray],
    ) -> np.ndarray:
        """The sums of each column of (reviews × columns) `values` (on their grids `grids`) over the draw `draw`
        (rows: draws): ``scratch(values)``, or for columns close to remembered ones, their sums plus
        ``increment(rows, changes)`` (rows: the changed reviews; changes: new − remembered values there).  Equal
        bit for bit either way (the module docstring)."""
        n, c = values.shape
        base = self._bases(draw, values, grids)
        rows = np.zeros(0, np.int64)
        if base:
            rows = np.flatnonzero(np.logical_or.reduce([b.values != values[:, i] for i, b in base.items()]))
            if len(rows) > self.changed * n:  # the changed rows together: from scratch pays better
                base, rows = {}, np.zeros(0, np.int64)
        fresh = [i for i in range(c) if i not in base]
        parts: dict[int, np.ndarray] = {}
        if fresh:
            computed = scratch(np.ascontiguousarray(values[:, fresh]))
            parts |= {i: computed[:, j] for j, i in enumerate(fresh)}
        if base:
            before = np.column_stack([b.sums for b in base.values()])
            if len(rows):
                change = np.column_stack([values[rows, i] - b.values[rows] for i, b in base.items()])
                before = before + increment(rows, change)
            parts |= {i: before[:, j] for j, i in enumerate(base)}
        out = np.column_stack([parts[i] for i in range(c)])
        self._remember(draw, values, grids, out)
        return out

    def _bases(self, draw: tuple, values: np.ndarray, grids: np.ndarray) -> dict[int, _Kept]:
        """{column: the remembered column of the same draw and grid with the fewest changed rows on a sample of rows}
        where its changed rows are
        at most `changed` of the rows (none for a column with a non-finite value)."""
        with self._lock:
            kept = [item for key, item in reversed(self._items.items()) if key[0] == draw][:_CANDIDATES]
        base: dict[int, _Kept] = {}
        finite = np.isfinite(values).all(axis=0)
        sample = np.arange(0, values.shape[0], max(1, values.shape[0] // _SAMPLE))
        for grid in set(np.asarray(grids)[finite].tolist()):
            same = [item for item in kept if item.grid == grid]
            if not same:
                continue
            sampled = np.column_stack([item.values[sample] for item in same])
            for i in np.flatnonzero(finite & (np.asarray(grids) == grid)):
                # the fewest changed rows among a sample of rows, then counted on every row for that one only
                best = same[int(np.argmin(np.count_nonzero(sampled != values[sample, i][:, None], axis=0)))]
                if np.count_nonzero(best.values != values[:, i]) <= self.changed * values.shape[0]:
                    base[int(i)] = best
        return base

    def _remember(self, draw: tuple, values: np.ndarray, grids: np.ndarray, sums: np.ndarray) -> None:
        for i in np.flatnonzero(np.isfinite(values).all(axis=0)):
            key = (draw, digest(values[:, i]))
            item = _Kept(int(grids[i]), read_only(values[:, i]), read_only(sums[:, i]))
            with self._lock:
                if key in self._items:
                    self._items.move_to_end(key)
                    continue
                self._items[key] = item
                self._bytes += item.values.nbytes + item.sums.nbytes
                while self._bytes > self.limit and len(self._items) > 1:
                    _, old = self._items.popitem(last=False)
                    self._bytes -= old.values.nbytes + old.sums.nbytes


# Process-wide: the randomization tests' swap sums and the bootstrap's resampled sums (keys name which).
kept_sums = KeptSums()
