"""Speed trick "exact increments" (kweval.stats.increments) against its plain reference definition: sums updated from
remembered ones equal, bit for bit, the plain product of the draws with the values on their grid; p-values equal the
unrounded test's (ties included, exact real ties counted); interval ends move by rounding only."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kweval.evaluation.pipeline import EvalOptions, evaluate
from kweval.stats import bootstrap, increments, swaps
from kweval.stats.bootstrap import resampled_sums
from kweval.stats.increments import (
    ONE_THREAD_PRODUCT,
    KeptSums,
    by_review_products,
    grid_exponents,
    on_grid,
    one_thread_rows,
    rounding,
)
from kweval.stats.paired import N_PERM, SEED, paired_randomization_test
from tests.helpers import DNLP

KINDS = {
    "normal": lambda rng, shape: rng.standard_normal(shape),
    "ties": lambda rng, shape: rng.integers(-3, 4, size=shape) / 6.0,
    "zeros": lambda rng, shape: np.where(rng.random(shape) < 0.7, 0.0, rng.standard_normal(shape)),
    "large": lambda rng, shape: rng.standard_normal(shape) * 1e12,
    "tiny": lambda rng, shape: rng.standard_normal(shape) * 1e-200,
    "negative": lambda rng, shape: -rng.random(shape),
}


def _changed(rng: np.random.Generator, values: np.ndarray, kind: str, fraction: float) -> np.ndarray:
    """`values` with about `fraction` of its rows drawn anew (of the same kind)."""
    where = np.broadcast_to(rng.random((values.shape[0], 1)) < fraction, values.shape)
    return np.where(where, KINDS[kind](rng, values.shape), values)


def _plain(weights: np.ndarray, values: np.ndarray) -> np.ndarray:
    """The reference: the plain product with the values on their grid."""
    return weights.astype("float64") @ on_grid(values, grid_exponents(weights.shape[1], values))


def test_the_grid_holds_every_value_within_half_a_step():
    rng = np.random.default_rng(3)
    for kind, draw in KINDS.items():
        for n in (1, 7, 9362):
            values = draw(rng, (n, 3))
            grids = grid_exponents(n, values)
            gridded = on_grid(values, grids)
            steps = np.ldexp(gridded, grids)
            assert np.array_equal(steps, np.round(steps)), kind  # multiples of 2^-g
            assert np.all(np.abs(steps) * 4 * n < 2.0**53), kind  # n of them (and changes) stay below 2^53 steps
            assert np.all(np.abs(gridded - values) <= rounding(grids)), kind
    # semantic differences (|d| ≤ 1) of DNLP ALL's 9,362 reviews: one grid whether or not a difference is ±1, and
    # a mean moves by less than 1e-11
    # (and a column whose largest difference moves from 0.06 to 0.9, or to 1, keeps its grid: a τ step's increment)
    grids = grid_exponents(9362, np.array([[1.0, 0.6, 0.06], [-0.3, -0.9, 0.01]]))
    assert len(set(grids.tolist())) == 1 and rounding(grids)[0] < 1e-11


@settings(max_examples=40, deadline=None)
@given(
    n=st.sampled_from([1, 5, 8, 13, 100, 1003]),
    c=st.integers(1, 5),
    kind=st.sampled_from(sorted(KINDS)),
    fractions=st.lists(st.sampled_from([0.0, 0.05, 0.3, 0.6, 1.0]), min_size=1, max_size=5),
    counts=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_sums_updated_by_changed_rows_equal_the_plain_product_bit_for_bit(n, c, kind, fractions, counts, seed):
    """A random sequence of updates (no change, a few rows, most rows) through one `KeptSums`: every result is
    np.array_equal to the plain product, whichever path (scratch, read back, increment) gave it."""
    rng = np.random.default_rng(seed)
    draws = 37
    weights = rng.multinomial(n, np.ones(n) / n, size=draws) if counts else rng.integers(0, 2, size=(draws, n))
    by_review = np.ascontiguousarray(weights.T)
    kept, paths = KeptSums(), []

    def scratch(v: np.ndarray) -> np.ndarray:
        paths.append("scratch")
        return weights.astype("float64") @ v

    def increment(rows: np.ndarray, change: np.ndarray) -> np.ndarray:
        paths.append("increment")
        return by_review_products(by_review, rows, change, block=3)

    values = KINDS[kind](rng, (n, c))
    for fraction in [0.0, *fractions]:
        values = _changed(rng, values, kind, fraction)
        grids = grid_exponents(n, values)
        got = kept.sums(("w", n), on_grid(values, grids), grids, scratch, increment)
        assert np.array_equal(got, _plain(weights, values))


def test_a_few_changed_rows_are_an_increment_and_most_rows_from_scratch():
    rng = np.random.default_rng(5)
    weights = rng.integers(0, 2, size=(50, 400))
    paths: list[str] = []
    kept = KeptSums(changed=0.5)

    def run(values: np.ndarray) -> np.ndarray:
        grids = grid_exponents(400, values)
        return kept.sums(
            ("w",),
            on_grid(values, grids),
            grids,
            lambda v: paths.append("scratch") or weights.astype("float64") @ v,
            lambda rows, change: paths.append("increment") or by_review_products(weights.T.copy(), rows, change),
        )

    values = -rng.random((400, 2))
    run(values)
    for fraction, path in ((0.2, "increment"), (0.9, "scratch")):
        values = _changed(rng, values, "negative", fraction)
        paths.clear()
        assert np.array_equal(run(values), _plain(weights, values)) and paths == [path]
    paths.clear()
    run(values)  # the same values again: read back, nothing computed
    assert paths == []


@pytest.mark.parametrize(("columns", "width"), [(9, 2000), (12, 2000), (6, 10000), (1, 10), (80, 10000)])
def test_one_thread_blocks_keep_each_product_below_the_bound_and_every_sum(columns, width):
    """Speed trick "one-thread blocks": every block product of `by_review_products` stays below ONE_THREAD_PRODUCT
    (m·n·k; one row at least), and the sums equal the plain product bit for bit (the τ step's shapes: 9 and 12
    columns × 2,000 resamples, 6 × 10,000 swap bits; and the extremes)."""
    rng = np.random.default_rng(columns)
    n = 300
    weights = rng.integers(0, 4, size=(width, n)).astype(np.uint16)
    values = on_grid(v := rng.integers(-3, 4, size=(n, columns)) / 6.0, grid_exponents(n, v))
    rows = np.sort(rng.choice(n, 200, replace=False))
    block = one_thread_rows(columns, width, 32)
    assert 1 <= block <= 32 and (block == 1 or block * columns * width < ONE_THREAD_PRODUCT)
    assert block == 32 or (block + 1) * columns * width >= ONE_THREAD_PRODUCT  # as large as the bound allows
    blocks: list[int] = []  # the rows of each block, as `expand` sees them (after one row for the width)
    got = by_review_products(np.ascontiguousarray(weights.T), rows, values[rows], lambda p: blocks.append(len(p)) or p)
    assert np.array_equal(got, weights[:, rows].astype("float64") @ values[rows])
    assert blocks[1:] == [min(block, len(rows) - start) for start in range(0, len(rows), block)]


def test_kept_sums_stay_within_their_bytes_and_are_safe_across_threads():
    rng = np.random.default_rng(9)
    weights = rng.integers(0, 2, size=(64, 300))
    kept = KeptSums(limit=10 * (300 + 64) * 8)
    columns = [rng.random((300, 1)) for _ in range(30)]

    def one(values: np.ndarray) -> bool:
        grids = grid_exponents(300, values)
        got = kept.sums(
            ("w",),
            on_grid(values, grids),
            grids,
            lambda v: weights.astype("float64") @ v,
            lambda rows, change: by_review_products(weights.T.copy(), rows, change),
        )
        return bool(np.array_equal(got, _plain(weights, values)))

    with ThreadPoolExecutor(4) as pool:
        assert all(pool.map(one, columns * 3))
    assert len(kept._items) <= 10


def _counting(monkeypatch, module) -> list[int]:
    """Counts the increments `module` computes (its `by_review_products`)."""
    calls: list[int] = []

    def counted(*args, **kwargs):
        calls.append(1)
        return by_review_products(*args, **kwargs)

    monkeypatch.setattr(module, "by_review_products", counted)
    return calls


@pytest.mark.parametrize("n", [1003, 2000])
def test_resampled_sums_through_increments_equal_the_kept_counts_product(monkeypatch, n):
    calls = _counting(monkeypatch, bootstrap)
    increments.kept_sums.clear()
    rng = np.random.default_rng(n)
    counts = np.concatenate(bootstrap._resample_counts(n, 2000, SEED))
    values = rng.integers(-3, 4, size=(n, 3)) / 6.0
    for fraction in (0.0, 0.3, 0.1):
        values = _changed(rng, values, "ties", fraction)
        got = resampled_sums(n, values, 2000, SEED)
        assert np.array_equal(got, _plain(counts, values))
        unrounded = counts.astype("float64") @ values / n
        assert np.abs(got / n - unrounded).max() <= 1e-11  # interval ends move by rounding only
    assert len(calls) == 2


def _tie_reference(sixths: np.ndarray, n_perm: int = N_PERM, seed: int = SEED) -> np.ndarray:
    """The randomization test in integers (differences counted in sixths): exact statistics, exact ties."""
    n = sixths.shape[0]
    observed = np.abs(sixths.sum(axis=0))
    extreme = np.zeros(sixths.shape[1])
    for bits in swaps._draw_bits(n, n_perm, seed):
        flips = np.unpackbits(bits, axis=1, count=n).astype(np.int64) @ sixths
        extreme += (np.abs(sixths.sum(axis=0) - 2 * flips) >= observed).sum(axis=0)
    return np.minimum((1.0 + extreme) / (1.0 + n_perm), 1.0)


def test_exact_real_ties_still_count_as_ties(monkeypatch):
    """Differences of 1/3, 1/6 and −1/2 (not dyadic: the grid rounds each one) whose sign-flipped sums tie exactly in
    the reals; p equals the integer test's, from scratch and through increments."""
    calls = _counting(monkeypatch, swaps)
    increments.kept_sums.clear()
    rng = np.random.default_rng(1)
    n = 301
    sixths = rng.choice([2, 1, -3, 0], size=(n, 4))
    for fraction in (0.0, 0.3):
        moved = rng.random((n, 1)) < fraction
        sixths = np.where(moved, rng.choice([2, 1, -3, 0], size=sixths.shape), sixths)
        got = paired_randomization_test(np.zeros((n, 4)), sixths / 6.0)
        assert np.array_equal(got, _tie_reference(sixths))
    assert len(calls) == 1


def _unrounded_p(d: np.ndarray) -> np.ndarray:
    """The randomization test's p-values from the unrounded differences (the tie rule of floating-point sums)."""
    n = d.shape[0]
    observed = np.abs(d.mean(axis=0))
    threshold = observed - 1e-12 * np.maximum(observed, 1e-300) - 1e-15
    extreme = np.zeros(d.shape[1])
    for bits in swaps._draw_bits(n, N_PERM, SEED):
        sums = np.unpackbits(bits, axis=1, count=n).astype("float64") @ d
        extreme += (np.abs((d.sum(axis=0) - 2.0 * sums) / n) >= threshold).sum(axis=0)
    p = np.minimum((1.0 + extreme) / (1.0 + N_PERM), 1.0)
    return np.where(np.all(d == 0, axis=0), 1.0, p)


def _steps_equal_the_unrounded_test(monkeypatch, d: np.ndarray, rng: np.random.Generator) -> None:
    """A τ step's sequence: `d`, then a third of its rows changed (to other rows' values), then a few more; each p
    equal to the unrounded test's and each bootstrap mean within 1e-11 of the unrounded one, the later ones through
    increments."""
    calls, resampled = _counting(monkeypatch, swaps), _counting(monkeypatch, bootstrap)
    increments.kept_sums.clear()
    n = d.shape[0]
    for fraction in (0.0, 0.3, 0.05):
        moved = rng.random((n, 1)) < fraction
        d = np.where(moved, d[rng.permutation(n)], d)
        np.testing.assert_array_equal(paired_randomization_test(np.zeros_like(d), d), _unrounded_p(d))
        unrounded = bootstrap.bootstrap_statistics(n, lambda w, d=d: w @ d / n)
        assert np.abs(resampled_sums(n, d) / n - unrounded).max() <= 1e-11 * max(1.0, np.abs(d).max())
    assert len(calls) == 2 and len(resampled) == 2


def test_p_values_through_increments_equal_the_unrounded_test_on_random_data_with_ties(monkeypatch):
    rng = np.random.default_rng(4)
    n = 1003
    d = np.where(rng.random((n, 4)) < 0.5, 0.0, rng.integers(-5, 6, (n, 4)) / 5.0)
    d[:, 3] = rng.standard_normal(n) * 1e3
    _steps_equal_the_unrounded_test(monkeypatch, d, rng)


def _pair_differences(scores, metrics: list[str]) -> np.ndarray:
    models = list(dict.fromkeys(scores["model"]))
    a, b = (scores[scores["model"] == m][["movie", "review_id", *metrics]] for m in models[:2])
    both = a.merge(b, on=["movie", "review_id"], suffixes=("_a", "_b")).dropna()
    return both[[f"{m}_b" for m in metrics]].to_numpy() - both[[f"{m}_a" for m in metrics]].to_numpy()


def test_p_values_through_increments_equal_the_unrounded_test_on_the_demo(monkeypatch, demo_dataset):
    scores = evaluate(demo_dataset, EvalOptions()).scores
    _steps_equal_the_unrounded_test(monkeypatch, _pair_differences(scores, ["f1", "recall"]), np.random.default_rng(2))


@pytest.mark.dnlp
def test_p_values_through_increments_equal_the_unrounded_test_on_dnlp(monkeypatch):
    from kweval.data import load_dataset

    scores = evaluate(load_dataset(DNLP), EvalOptions()).scores
    d = _pair_differences(scores, ["f1", "precision", "ndcg@5"])
    _steps_equal_the_unrounded_test(monkeypatch, d, np.random.default_rng(3))


@pytest.mark.parametrize("n, draws", [(1, 9), (63, 16), (130, 77), (1003, 40)])
def test_bits_by_review_are_the_packed_bits_transposed(n, draws):
    from kweval.stats.increments import bits_by_review

    bits = np.random.default_rng(n).integers(0, 2, size=(draws, n)).astype(np.uint8)
    packed = np.packbits(bits, axis=1)
    chunks = (packed[: draws // 2], packed[draws // 2 :])
    assert np.array_equal(bits_by_review(chunks, n), np.packbits(bits.T, axis=1))
