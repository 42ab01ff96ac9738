"""The paired randomization test: kweval.stats.paired.paired_randomization_test vs scipy.stats.permutation_test.

Issue 13 asked for `scipy.stats.permutation_test(permutation_type="samples")`, the same
sign-flip test, if it is within about 2x of kweval's own.  This measures both on the
Compare page's load: 2,000 reviews x 20 metrics, 10,000 random sign vectors, all metrics
in one call (scipy: vectorized=True, axis=0; its default batch and batch=100, the best
batch size found) and checks that their p-values agree.

`--kernel` measures only the permuted statistic's kernel, the swap sums (bits @ d), at the Summary's τ step shape
(DNLP ALL: 9,362 reviews, 3 pairs x 3 semantic metrics): `small_products` (8 rows a block) against the plain
product of each RNG chunk, CPU seconds (time.process_time), and their largest relative difference; then speed
trick "exact increments" (kweval.stats.increments): the same sums of values on their grid, updated from kept ones by
the `--changed` share of rows a τ step changes (`by_review_products` on the bits kept one row per review), and
whether they equal the sums from scratch bit for bit.

Usage: python bench/bench_randomization.py [--reviews 2000] [--metrics 20] [--perm 10000] [--kernel [--changed 0.33]]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np
from scipy import stats as sp

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from timing import best_of  # noqa: E402  (bench/timing.py, beside this script)

from kweval import stats  # noqa: E402

TARGET = 2.0  # scipy replaces ours if it is within this factor


def kernel(reviews: int, metrics: int, n_perm: int, changed: float) -> None:
    """`--kernel`: the swap sums by small products against one plain product per RNG chunk (the reference)."""
    from kweval.stats.paired import swap_bits, swap_sums

    rng = np.random.default_rng(0)
    d = np.where(rng.random((reviews, metrics)) < 0.3, 0.0, rng.integers(-5, 6, (reviews, metrics)) / 5.0)
    chunks = list(swap_bits(reviews, n_perm, 0))
    plain = lambda: [np.unpackbits(b, axis=1, count=reviews).astype("float64") @ d for b in chunks]  # noqa: E731
    small = lambda: [swap_sums(d)(b) for b in chunks]  # noqa: E731
    plain_s, want = best_of(plain, repeat=5, clock=time.process_time)
    small_s, got = best_of(small, repeat=5, clock=time.process_time)
    diff = max(float(np.max(np.abs(g - w) / np.maximum(np.abs(w), 1.0))) for g, w in zip(got, want))
    print("## Swap sums (the randomization test's permuted statistic): small products vs one plain product\n")
    print(
        f"Command: `python bench/bench_randomization.py --kernel --reviews {reviews} --metrics {metrics} --perm "
        f"{n_perm}` — CPU seconds, best of 5; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores\n"
    )
    print("| kernel | CPU s |\n| --- | ---: |")
    print(
        f"| one product per RNG chunk (reference) | {plain_s:.3f} |\n| small_products, 8 rows a block | {small_s:.3f} |"
    )
    print(f"\nreference / small products: **{plain_s / small_s:.1f}x**; largest relative difference {diff:.1e}.")
    increment_kernel(d, chunks, n_perm, changed, small_s)


def increment_kernel(d: np.ndarray, chunks: list[np.ndarray], n_perm: int, changed: float, small_s: float) -> None:
    """The swap sums of a column after a τ step: from scratch (small products) against the kept sums plus the
    changed rows' (`by_review_products`), on the grid; the bits one row per review built once (timed apart)."""
    from kweval.stats.increments import bits_by_review, by_review_products, grid_exponents, on_grid

    reviews = d.shape[0]
    rows = np.flatnonzero(np.random.default_rng(1).random(reviews) < changed)
    before = on_grid(d, grid_exponents(reviews, d))
    after = before.copy()
    after[rows] = before[rows[::-1]]
    build_s, by_review = best_of(lambda: bits_by_review(tuple(chunks), reviews), repeat=3, clock=time.process_time)
    kept = np.concatenate([np.unpackbits(b, axis=1, count=reviews).astype("float64") @ before for b in chunks])
    unpack = lambda part: np.unpackbits(part, axis=1, count=n_perm)  # noqa: E731
    step = lambda: kept + by_review_products(by_review, rows, after[rows] - before[rows], unpack)  # noqa: E731
    step_s, got = best_of(step, repeat=5, clock=time.process_time)
    want = np.concatenate([np.unpackbits(b, axis=1, count=reviews).astype("float64") @ after for b in chunks])
    print(f"\n### Exact increments: {len(rows) / reviews:.0%} of the rows changed\n")
    print("| kernel | CPU s |\n| --- | ---: |")
    print(f"| small_products from scratch | {small_s:.3f} |\n| kept sums + changed rows | {step_s:.3f} |")
    print(f"| bits one row per review (once per draw) | {build_s:.3f} |")
    print(
        f"\nfrom scratch / increment: **{small_s / step_s:.1f}x**; equal to the sums from scratch bit for bit: "
        f"{np.array_equal(got, want)}."
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reviews", type=int, help="2000 (--kernel: 9362)")
    parser.add_argument("--metrics", type=int, help="20 (--kernel: 9)")
    parser.add_argument("--perm", type=int, default=10_000)
    parser.add_argument("--kernel", action="store_true", help="only the swap sums' kernel (default shape: 9362 x 9)")
    parser.add_argument("--changed", type=float, default=0.33, help="--kernel: the share of rows a τ step changes")
    args = parser.parse_args()
    if args.kernel:
        return kernel(args.reviews or 9362, args.metrics or 9, args.perm, args.changed)
    args.reviews, args.metrics = args.reviews or 2000, args.metrics or 20
    rng = np.random.default_rng(0)
    a = rng.random((args.reviews, args.metrics))
    b = a + rng.normal(0.01, 0.2, a.shape)

    ours_s, p_ours = best_of(lambda: stats.paired_randomization_test(a, b, args.perm), repeat=3)

    def scipy_test(batch: int | None):
        return sp.permutation_test(
            (b - a,),
            lambda d, axis: np.mean(d, axis=axis),
            permutation_type="samples",
            n_resamples=args.perm,
            vectorized=True,
            axis=0,
            random_state=0,
            batch=batch,
        ).pvalue

    rows = [("kweval.stats.paired.paired_randomization_test", ours_s, 0.0)]
    for batch in (None, 100):
        took, p = best_of(lambda batch=batch: scipy_test(batch))
        rows.append(
            (
                f"scipy.stats.permutation_test (vectorized, batch={batch})",
                took,
                float(np.abs(np.asarray(p) - p_ours).max()),
            )
        )
    best_scipy = min(t for _, t, _ in rows[1:])
    ratio = best_scipy / ours_s

    print("## Paired randomization test: kweval vs scipy.stats.permutation_test\n")
    print(
        f"Command: `python bench/bench_randomization.py --reviews {args.reviews} --metrics {args.metrics} --perm "
        f"{args.perm}`\n"
    )
    print("| implementation | seconds | max \\|Δp\\| vs kweval (Monte Carlo: different sign vectors) |")
    print("| --- | ---: | ---: |")
    for name, took, dp in rows:
        print(f"| {name} | {took:.2f} | {dp:.4f} |")
    print(
        f"\nscipy's best / kweval: **{ratio:.1f}x** (target for switching to scipy: within {TARGET:.0f}x): "
        f"{'met' if ratio <= TARGET else 'not met'}; kweval keeps its own test "
        "(a sign-matrix product, BLAS) where scipy builds every sign-flipped copy of the data."
    )
    print("Exact p-values (2**n ≤ n_perm) equal scipy's to 1e-12: tests/test_stats.py.")


if __name__ == "__main__":
    main()
