"""The paired randomization test's swap bits and their sums (`kweval.stats.paired`, `kweval.stats.aggregated`).

A permutation swaps each review's A and B values or not: one bit per review, 8 reviews a byte (np.packbits), drawn
from the seed, so the same bits serve every test of as many reviews (kept: `_kept_bits`).  Their sums with the
differences are one product (`swap_sums`, speed trick "small products") or, on kept bits, a remembered column's sums
plus its changed rows' (`swapped_sums`, speed trick "exact increments", kweval.stats.increments).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import numpy as np

from kweval._arrays import small_products
from kweval.stats.bootstrap import KeptDraws, chunk_sizes
from kweval.stats.increments import bits_by_review, by_review_products, kept_sums


def _every_swap(n: int) -> np.ndarray:
    """Every one of the 2**n sets of swaps of `n` reviews, one row each (0/1 per review)."""
    codes = np.arange(2**n, dtype=np.int64)[:, None]
    return (codes >> np.arange(n, dtype=np.int64)[None, :]) & 1


def sign_matrix_exact(n: int) -> np.ndarray:
    """Every one of the 2**n sign vectors (rows) of `n` reviews: the exact randomization test's."""
    return 1.0 - 2.0 * _every_swap(n)


def swap_sums(values: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
    """A function of packed swap bits (rows: permutations, 8 reviews a byte as np.packbits) giving bits @ `values`:
    unpacked and multiplied a few rows at a time (`small_products`)."""
    n = values.shape[0]
    return lambda packed: small_products(packed, values, lambda block: np.unpackbits(block, axis=1, count=n))


def swap_bits(n: int, n_perm: int, seed: int):
    """Chunks of swap indicators, packed 8 reviews a byte as np.packbits (rows: permutations; bit 1 = the review's
    A and B rows swapped; the last byte's pad bits 0): every one of the 2**n sets when that is at most `n_perm`,
    else `n_perm` random ones (the draws of `paired_randomization_test` and of `aggregated`), kept for the next
    test of as many reviews (`_kept_bits`: a τ step tests again on the same draws)."""
    if n < 63 and 2**n <= n_perm:
        yield np.packbits(_every_swap(n).astype(np.uint8), axis=1)
        return
    if n_perm * ((n + 7) // 8) <= _KEPT_BITS:
        yield from _kept_bits(n, n_perm, seed)
    else:
        yield from _draw_bits(n, n_perm, seed)


def _draw_bits(n: int, n_perm: int, seed: int) -> Iterator[np.ndarray]:
    """`n_perm` random rows of `n` packed swap bits, in chunks (`chunk_sizes`)."""
    rng = np.random.default_rng(seed)
    for size in chunk_sizes(n_perm, n):
        raw = rng.integers(0, 256, size=(size, (n + 7) // 8), dtype=np.uint8)
        if n % 8:
            raw[:, -1] &= np.uint8((0xFF << (8 - n % 8)) & 0xFF)
        yield raw


_KEPT_BITS = 20_000_000  # bytes of one kept draw (DNLP ALL's 9,362 reviews × 10,000 permutations: 11.7 MB)
_kept_bits = KeptDraws(_draw_bits, 2 * _KEPT_BITS)


def swapped_sums(values: np.ndarray, grids: np.ndarray, n_perm: int, seed: int) -> Iterator[np.ndarray]:
    """``bits @ values`` for each chunk of `n_perm` random swap bits (`values` on their grids `grids`): on kept
    bits, from remembered columns' sums where few rows changed (speed trick "exact increments", `kept_sums`)."""
    n = values.shape[0]
    if n_perm * ((n + 7) // 8) > _KEPT_BITS:
        times = swap_sums(values)
        yield from (times(bits) for bits in _draw_bits(n, n_perm, seed))
        return
    chunks = _kept_bits(n, n_perm, seed)

    def scratch(v: np.ndarray) -> np.ndarray:
        return np.concatenate([swap_sums(v)(bits) for bits in chunks], axis=0)

    def increment(rows: np.ndarray, change: np.ndarray) -> np.ndarray:
        unpack = lambda part: np.unpackbits(part, axis=1, count=n_perm)  # noqa: E731
        return by_review_products(_bits_by_review(n, n_perm, seed)[0], rows, change, unpack, block=8)

    yield kept_sums.sums(("swap", n, n_perm, seed), values, grids, scratch, increment)


# the kept swap bits one row per review, packed along the permutations (`by_review_products` reads whole rows)
_bits_by_review = KeptDraws(lambda n, n_perm, seed: (bits_by_review(_kept_bits(n, n_perm, seed), n),), _KEPT_BITS)
