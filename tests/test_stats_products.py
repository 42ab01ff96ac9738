"""Speed trick "small products" (kweval._arrays.small_products) against its plain definition, and the randomization
test's permuted statistics and p-values against the reference ``np.unpackbits(bits) @ d`` on the data shapes users
have: the demo, DNLP, random values with ties and zeros."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kweval import _arrays
from kweval._arrays import small_products
from kweval.evaluation.pipeline import EvalOptions, evaluate
from kweval.stats import swaps
from kweval.stats.paired import N_PERM, SEED, paired_randomization_test, swap_bits, swap_sums
from tests.helpers import DNLP


def _close(got: np.ndarray, want: np.ndarray, values: np.ndarray) -> None:
    """Equal up to rounding: 1e-12 relative, the scale of a sum being the sum of the |values| it may add."""
    scale = np.abs(values).sum(axis=0)[None, :]
    assert got.shape == want.shape
    assert np.all(np.abs(got - want) <= 1e-12 * np.maximum(np.abs(want), scale) + 1e-300)


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(1, 300),
    c=st.integers(1, 12),
    m=st.integers(1, 40),
    seed=st.integers(0, 2**16),
    kind=st.sampled_from(["normal", "ties", "zeros"]),
    packed=st.booleans(),
)
def test_small_products_equal_the_plain_product(n, c, m, seed, kind, packed):
    """Blocks of up to 8 rows (and a last short block) against one plain product: packed swap bits and resample
    counts."""
    rng = np.random.default_rng(seed)
    values = {
        "normal": lambda: rng.standard_normal((n, c)),
        "ties": lambda: rng.integers(-3, 4, size=(n, c)) / 5.0,
        "zeros": lambda: np.where(rng.random((n, c)) < 0.7, 0.0, rng.standard_normal((n, c))),
    }[kind]()
    if packed:
        bits = rng.integers(0, 2, size=(m, n)).astype(np.uint8)
        got = small_products(np.packbits(bits, axis=1), values, lambda b: np.unpackbits(b, axis=1, count=n))
        want = bits.astype("float64") @ values
    else:
        counts = rng.integers(0, 4, size=(m, n)).astype(np.uint16)
        got, want = small_products(counts, values), counts.astype("float64") @ values
    _close(got, want, values)
    if kind == "ties":  # multiples of 1/5 summed in another order: still within rounding of the exact sums
        np.testing.assert_allclose(got * 5.0, np.round(want * 5.0), atol=1e-9)


@pytest.mark.parametrize("fits", [5, 3])
def test_small_products_of_wider_values_take_fewer_rows_a_block_or_one_product(monkeypatch, fits):
    """Values so wide that only `fits` rows make a small product: blocks of 5 rows (equal up to rounding), or, under
    4 rows, the plain product itself (bit-identical)."""
    rng = np.random.default_rng(fits)
    values, counts = rng.standard_normal((50, 3)), rng.integers(0, 3, size=(31, 50)).astype(np.uint16)
    monkeypatch.setattr(_arrays, "_SMALL_PRODUCT", fits * 50 * 3)
    got, want = small_products(counts, values), counts.astype("float64") @ values
    if fits < 4:
        np.testing.assert_array_equal(got, want)
    else:
        _close(got, want, values)


def _reference_p(d: np.ndarray, n_perm: int = N_PERM, seed: int = SEED) -> np.ndarray:
    """The randomization test's p-values with the plain permuted statistic (np.unpackbits(bits) @ d)."""
    n = d.shape[0]
    observed = np.abs(d.mean(axis=0))
    threshold = observed - 1e-12 * np.maximum(observed, 1e-300) - 1e-15
    extreme = np.zeros(d.shape[1])
    for bits in swaps._draw_bits(n, n_perm, seed):  # drawn afresh, not the kept ones
        sums = np.unpackbits(bits, axis=1, count=n).astype("float64") @ d
        extreme += (np.abs((d.sum(axis=0) - 2.0 * sums) / n) >= threshold).sum(axis=0)
    p = np.minimum((1.0 + extreme) / (1.0 + n_perm), 1.0)
    return np.where(np.all(d == 0, axis=0), 1.0, p)


def _check_against_reference(a: np.ndarray, b: np.ndarray) -> None:
    d = b - a
    times = swap_sums(d)
    for bits in swap_bits(d.shape[0], N_PERM, SEED):
        _close(times(bits), np.unpackbits(bits, axis=1, count=d.shape[0]).astype("float64") @ d, d)
    np.testing.assert_array_equal(paired_randomization_test(a, b), _reference_p(d))


def _model_pairs(scores, metrics: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Each pair of models' per-review metrics side by side (A's columns, B's columns), on their common reviews."""
    models = list(dict.fromkeys(scores["model"]))
    frames = {m: scores[scores["model"] == m][["movie", "review_id", *metrics]] for m in models}
    a_parts, b_parts = [], []
    for i, first in enumerate(models):
        for second in models[i + 1 :]:
            both = frames[first].merge(frames[second], on=["movie", "review_id"], suffixes=("_a", "_b")).dropna()
            a_parts.append(both[[f"{m}_a" for m in metrics]].to_numpy())
            b_parts.append(both[[f"{m}_b" for m in metrics]].to_numpy())
    n = min(len(p) for p in a_parts)
    return np.hstack([p[:n] for p in a_parts]), np.hstack([p[:n] for p in b_parts])


def test_permuted_statistics_and_p_values_equal_the_reference_on_random_data():
    """Ties (fifths), many zero differences, a column of zeros only, and values of every size."""
    rng = np.random.default_rng(11)
    n = 1003  # not a multiple of 8: the last byte's pad bits
    a = rng.integers(0, 6, size=(n, 6)) / 5.0
    b = a.copy()
    changed = rng.random((n, 6)) < 0.3
    b[changed] = rng.integers(0, 6, size=int(changed.sum())) / 5.0
    b[:, 4] = a[:, 4]  # every difference 0: p = 1
    b[:, 5] = a[:, 5] + rng.standard_normal(n) * 1e3
    _check_against_reference(a, b)
    _check_against_reference(a[:, :1], b[:, :1])  # one column: its own product
    _check_against_reference(a[:, 4:5], b[:, 4:5])  # zero differences only: nothing permuted, p = 1


def test_permuted_statistics_and_p_values_equal_the_reference_on_the_demo(demo_dataset):
    scores = evaluate(demo_dataset, EvalOptions()).scores
    _check_against_reference(*_model_pairs(scores, ["f1", "precision", "recall"]))


@pytest.mark.dnlp
def test_permuted_statistics_and_p_values_equal_the_reference_on_dnlp():
    from kweval.data import load_dataset

    scores = evaluate(load_dataset(DNLP), EvalOptions()).scores
    _check_against_reference(*_model_pairs(scores, ["f1", "precision"]))


@pytest.mark.parametrize("n, width", [(1, 1), (7, 3), (500, 1), (500, 4), (2001, 40)])
def test_resampled_sums_equal_the_bootstrap_products(n, width):
    """`resampled_sums` (small products of the kept counts) against the plain product of each chunk of counts."""
    from kweval.stats.bootstrap import bootstrap_statistics, resampled_sums

    rng = np.random.default_rng(n)
    values = np.where(rng.random((n, width)) < 0.4, 0.0, rng.integers(-5, 6, (n, width)) / 5.0)
    want = bootstrap_statistics(n, lambda w: w @ values, 2000, 0)
    _close(resampled_sums(n, values, 2000, 0), want, values)
    _close(resampled_sums(n, values[:, 0], 2000, 0)[:, None], want[:, :1], values[:, :1])
    with pytest.raises(ValueError):
        resampled_sums(0, np.zeros((0, width)))


def test_kept_swap_bits_are_the_draws_themselves(monkeypatch):
    """The swap bits kept for the next test of as many reviews equal a fresh draw, read-only; beyond the size kept
    they are drawn each time, the same."""
    swaps._kept_bits.cache_clear()
    fresh = list(swaps._draw_bits(1003, 3000, 7))
    first, again = list(swap_bits(1003, 3000, 7)), list(swap_bits(1003, 3000, 7))
    assert len(first) == len(fresh) and all(x is y for x, y in zip(first, again))  # kept: the same arrays
    assert all(np.array_equal(x, y) and not x.flags.writeable for x, y in zip(first, fresh))
    monkeypatch.setattr(swaps, "_KEPT_BITS", 0)
    assert all(np.array_equal(x, y) for x, y in zip(swap_bits(1003, 3000, 8), swaps._draw_bits(1003, 3000, 8)))
