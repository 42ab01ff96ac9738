"""`kweval export`: kweval's matches as a TREC run per model and graded qrels (trec_eval, pytrec_eval, ranx)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from kweval.cli.common import USAGE_ERROR, UsageError, add_predictions_argument, prediction_files
from kweval.messages import problem_line, say


def add_parser(sub) -> None:
    """Register `export` on the CLI's subparsers."""
    xp = sub.add_parser(
        "export", help="write a TREC run per model and qrels (graded from GT gain) for trec_eval, pytrec_eval, ranx"
    )
    xp.add_argument("data", nargs="?", help="dataset folder (default: the embedded demo)")
    xp.add_argument("--format", choices=["trec"], default="trec")
    xp.add_argument("--out", required=True, help="output folder (qrels.txt, run.<model>.txt)")
    xp.add_argument(
        "--match",
        choices=["approx", "exact", "word", "stem"],
        default="auto",
        help="match mode whose pairs the run carries (default: the data's, as `kweval evaluate`: stem on "
        "per-document ground truth, approx on movie-level GT)",
    )
    add_predictions_argument(xp)


def cmd_export(args: argparse.Namespace) -> int:
    """`kweval export DATA --format trec --out DIR`: kweval's matches as a TREC run and graded qrels."""
    from kweval.data import load_dataset
    from kweval.evaluation.clean import ranked_movies
    from kweval.evaluation.pipeline import EvalOptions, evaluate
    from kweval.io.export import write_trec
    from kweval.io.output import check_output_folder

    check_output_folder(args.out)
    dataset = load_dataset(args.data, predictions=prediction_files(args))
    evaluation = evaluate(dataset, EvalOptions(match=args.match))
    for problem in evaluation.problems:
        print(problem_line(problem), file=sys.stderr)
    if not len(evaluation.scores) or not len(evaluation.ground_truth):
        say(
            args.data or "demo",
            "nothing could be evaluated (no review with both predictions and ground truth); nothing written",
        )
        return USAGE_ERROR
    try:
        written = write_trec(evaluation, Path(args.out), ranked_movies(dataset.movies))
    except OSError as exc:
        raise UsageError(f"{args.out}: cannot write: {exc.strerror or exc}") from None
    say("wrote " + ", ".join(str(p) for p in written))
    return 0
