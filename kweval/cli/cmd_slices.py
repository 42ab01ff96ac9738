"""`kweval slices`: the slices of the data where a model does worst relative to its overall score."""

from __future__ import annotations

import argparse
import sys

from kweval.cli.common import (
    USAGE_ERROR,
    UsageError,
    add_cutoff_option,
    add_gt_order_option,
    add_match_option,
    add_predictions_argument,
    add_semantic_options,
    eval_options,
    evaluate_args,
    positive_int,
    prediction_files,
    problem_lines,
    select,
)
from kweval.messages import say

DESCRIPTION = """\
Find the slices of the reviews where --model does worst on --metric relative to its overall score
(SliceLine, the `sliceline` package), over the data's own columns, each binned:

  movie (or collection), rating (low ≤ 4, mid 5-7, high ≥ 8, none), text_len (short/medium/long
  by tertiles), gt_size (small/medium/large), present_share (the share of GT keywords occurring in
  the text: low/medium/high), pred_len (short/medium/long), disagreement between the models
  (low/medium/high)

A slice is up to --max-level of these conditions.  Each row: slice (a URL-safe spec such as
text_len=long;gt_size=small, which the dashboard's explorer filters by), n_reviews, value (the
metric's mean over the slice) with its bootstrap CI (ci_low, ci_high), overall, gap (value -
overall) and SliceLine's score; the first row is all of the model's reviews, then the slices worse
than it beyond their CI, the largest gap first (the others are counted on stderr).  A review's
error for the search is the share of the model's other reviews that score better on the metric.
"""


def add_parser(sub) -> None:
    """Register `slices` on the CLI's subparsers."""
    sp = sub.add_parser(
        "slices",
        help="the slices where a model does worst relative to its overall score (SliceLine, bootstrap CIs)",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sp.add_argument("data", nargs="?", help="dataset folder (default: the embedded demo)")
    sp.add_argument("--model", required=True, help="the model whose slices are searched")
    sp.add_argument("--metric", default="f1", help="per-review metric (default f1; e.g. ndcg@5, f1@5, p@5)")
    add_cutoff_option(sp)
    add_match_option(sp)
    add_gt_order_option(sp)
    add_semantic_options(sp, adds="add sem_precision, sem_recall, sem_f1 as --metric choices")
    sp.add_argument("--top", type=positive_int, default=10, help="how many slices (default 10)")
    sp.add_argument("--max-level", type=positive_int, default=2, help="most conditions in a slice (default 2)")
    sp.add_argument("--min-support", type=positive_int, help="fewest reviews in a slice (default 2%%, at least 10)")
    sp.add_argument("--format", choices=["csv", "markdown"], help="output format (default: from --out, else csv)")
    sp.add_argument("--out", default="-", help="output file, or - for stdout (default)")
    add_predictions_argument(sp)
    sp.add_argument("--quiet", action="store_true", help="do not print data problems")


def cmd_slices(args: argparse.Namespace) -> int:
    """`kweval slices DATA --model M [--metric f1@5] [--out FILE]`."""
    from kweval.data import load_dataset
    from kweval.io.output import check_output_file, write_output
    from kweval.io.report import format_for_path, to_csv, to_markdown
    from kweval.stats.slices import worst_slices

    check_output_file(args.out)
    files = prediction_files(args)
    dataset = load_dataset(args.data, predictions=files)
    select(dataset.model_names, [args.model], "model(s)")
    options = eval_options(args, keyphrase=True, present=True)
    metrics = options.lexical_metrics() + options.extra_metrics()
    if args.metric not in metrics:
        raise UsageError(f"--metric: unknown metric {args.metric!r} (available: {', '.join(metrics)})")
    evaluation = evaluate_args(args, dataset, options)
    if not args.quiet:
        for line in problem_lines(evaluation.problems):
            print(line, file=sys.stderr)
    if not (evaluation.scores["model"] == args.model).any():
        say(args.model, "no review could be evaluated")
        return USAGE_ERROR
    table = worst_slices(
        evaluation,
        dataset,
        args.model,
        args.metric,
        top=args.top,
        max_level=args.max_level,
        min_support=args.min_support,
    )
    fmt = args.format or (format_for_path(args.out) if args.out != "-" else "csv")
    write_output(to_markdown(table, bold_best=False) if fmt == "markdown" else to_csv(table), args.out)
    unclear = table.attrs.get("not_clear", 0)
    if unclear and not args.quiet:
        say(f"{unclear} slice(s) SliceLine found are not listed: their CI contains the overall value")
    if len(table) == 1 and not args.quiet:
        say("no slice does worse than the whole beyond its CI")
    return 0
