"""The τ step's increment kernel (`kweval.stats.increments.by_review_products`) at the Summary's shapes on DNLP ALL:
fixed blocks (before: 32 reviews of resample counts, 8 of swap bits) against speed trick "one-thread blocks"
(`one_thread_rows`: each block's product below OpenBLAS's one-thread bound), CPU and wall seconds, and whether the
sums are equal bit for bit.

The shapes: 9,362 reviews, ~3,000 of them changed by a τ step of 0.01 (bench/bench_tau_stages.py's session counted
2,883-3,217), 9 or 12 columns × 2,000 bootstrap resamples (the headline's pair differences, the per-model intervals),
6 columns × 10,000 swap bits (the randomization test).  The product is multi-threaded above ONE_THREAD_PRODUCT:
on a busy machine its threads spin waiting for each other, so run it under the load being studied.

Usage: python bench/bench_tau_kernels.py [--repeat 5]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from timing import best_of  # noqa: E402  (bench/timing.py, beside this script)

from kweval.stats.increments import _blocked_products, by_review_products, one_thread_rows  # noqa: E402

REVIEWS, CHANGED = 9362, 3000
SHAPES = [("counts", 9, 2000, 32), ("counts", 12, 2000, 32), ("bits", 6, 10000, 8), ("bits", 9, 10000, 8)]


def _timed(repeat: int, work: Callable[..., np.ndarray], *args: object) -> tuple[float, float, np.ndarray]:
    """(least CPU s, least wall s, the result) of `repeat` runs of `work(*args)` on each clock (`best_of`)."""
    cpu, out = best_of(lambda: work(*args), repeat, time.process_time)
    wall, _ = best_of(lambda: work(*args), repeat)
    return cpu, wall, out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    rows = np.sort(rng.choice(REVIEWS, CHANGED, replace=False))
    load = os.getloadavg()[0]
    print(
        f"Command: `python bench/bench_tau_kernels.py {' '.join(sys.argv[1:])}` — load average {load:.1f} on "
        f"{os.cpu_count()} cores; {CHANGED:,} of {REVIEWS:,} reviews changed, best of {args.repeat} on each clock\n"
    )
    print("| draws | columns × draws | fixed block | CPU s | wall s | one-thread block | CPU s | wall s | equal |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
    for kind, columns, width, fixed in SHAPES:
        change = rng.integers(-3, 4, size=(CHANGED, columns)) * 2.0**-40  # on a grid: exact sums
        if kind == "counts":
            by_review = np.ascontiguousarray(rng.multinomial(REVIEWS, np.full(REVIEWS, 1 / REVIEWS), size=width).T)
            by_review, expand = by_review.astype(np.uint16), None
        else:
            by_review = np.packbits(rng.integers(0, 2, size=(REVIEWS, width), dtype=np.uint8), axis=1)
            expand = lambda part, w=width: np.unpackbits(part, axis=1, count=w)  # noqa: E731
        # `block=fixed` with the bound lifted: the kernel before the trick
        before = _timed(args.repeat, _blocked_products, by_review, rows, change, expand, fixed)
        after = _timed(args.repeat, by_review_products, by_review, rows, change, expand)
        block = one_thread_rows(columns, width, fixed)
        print(
            f"| {kind} | {columns} × {width:,} | {fixed} | {before[0]:.3f} | {before[1]:.3f} | {block} | "
            f"{after[0]:.3f} | {after[1]:.3f} | {np.array_equal(before[2], after[2])} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
