"""`kweval synth`: a seeded synthetic dataset for benchmarks and tests."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from kweval.cli.common import UsageError, positive_int
from kweval.io.output import check_output_folder


def add_parser(sub) -> None:
    """Register `synth` on the CLI's subparsers."""
    sy = sub.add_parser("synth", help="write a synthetic dataset (for benchmarks and tests)")
    sy.add_argument("out", help="output folder")
    sy.add_argument("--movies", type=positive_int, default=6, help="number of movies (default 6)")
    sy.add_argument("--reviews-per-movie", type=positive_int, default=1000, help="reviews per movie (default 1000)")
    sy.add_argument("--models", type=positive_int, default=3, help="number of models (default 3)")
    sy.add_argument("--seed", type=int, default=0, help="random seed; the same seed gives the same dataset (default 0)")
    sy.add_argument(
        "--layout", choices=["tidy", "dnlp"], default="tidy", help="tidy Parquet tables (default) or DNLP pickles"
    )
    sy.add_argument(
        "--gt",
        choices=["movie", "per-document"],
        default="movie",
        help="one ranked GT list per movie (default) or each review's own unranked GT (tidy layout)",
    )


def cmd_synth(args: argparse.Namespace) -> int:
    """Generate and write the dataset; prints the files written and, on stderr, its size and timings."""
    import time

    from kweval.data.synth import synthesize, write_synthetic

    check_output_folder(args.out)
    start = time.perf_counter()
    if args.gt != "movie" and args.layout != "tidy":
        raise UsageError("--gt per-document needs --layout tidy (the DNLP layout has one GT list per movie)")
    dataset = synthesize(args.movies, args.reviews_per_movie, args.models, seed=args.seed, gt=args.gt)
    made = time.perf_counter()
    written = write_synthetic(dataset, Path(args.out), args.layout)
    done = time.perf_counter()
    for path in written:
        print(path)
    print(
        f"kweval: synth: {len(dataset.reviews)} review(s), {len(dataset.models)} model(s), "
        f"{len(dataset.predictions)} prediction row(s), {len(dataset.ground_truth)} GT keyword(s) "
        f"({args.layout}; generated in {made - start:.1f} s, written in {done - made:.1f} s)",
        file=sys.stderr,
    )
    return 0
