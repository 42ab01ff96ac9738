"""`kweval failures`: the failure category of every keyword (docs/metrics.md §10), or their counts (--summary)."""

from __future__ import annotations

import argparse
import sys

from kweval.cli.common import (
    USAGE_ERROR,
    UsageError,
    add_beyond_options,
    add_cutoff_option,
    add_gt_order_option,
    add_match_option,
    add_predictions_argument,
    add_semantic_options,
    comma_list,
    eval_options,
    evaluate_args,
    prediction_files,
    problem_lines,
    select,
)
from kweval.cli.fast import PRESETS
from kweval.evaluation.pipeline import EvalOptions
from kweval.messages import say
from kweval.metrics.categories import GT_CATEGORIES, PREDICTION_CATEGORIES

DESCRIPTION = """\
One row per keyword of every evaluated review × model: every predicted keyword as given (before
cleaning) and every GT keyword of the review's list, each with the first failure category that
applies (docs/metrics.md §10) under --match, --k and, with --semantic, --threshold:

  predictions: {prediction}
  GT keywords: {gt}

Columns: movie, review_id, model, side (prediction/gt), position (after cleaning; -1 for a
keyword cleaning drops; a GT keyword's rank), keyword, category, detail (the GT keyword it
matches or would match, the mode that would match, the cosine, the position it repeats; with
--grounding, an off-the-reference prediction's grade: present in the text, supported, unsupported)
and, with --grounding, grounding (each kept prediction's grade, docs/metrics.md §12).
Per review × model the hit rows are p@k·k and hit + hit_beyond_k = found + found_beyond_k =
n_matched.  --summary writes the counts per movie × model × category instead (with each
count's share of its side).  The file is CSV (spreadsheet formulas neutralised) or Parquet
(.parquet) by --out's extension.  --protocol pke|kpeval|meng (per-document data) writes that
preset's decisions instead, read off its own scorer (kweval.keyphrase.fates): what its filter and
de-duplication drop, its matches within k or beyond, each gold phrase found or missed by its present
rule (the dashboard's Failures page under that preset).
""".format(prediction=", ".join(PREDICTION_CATEGORIES), gt=", ".join(GT_CATEGORIES))


def add_parser(sub) -> None:
    """Register `failures` on the CLI's subparsers."""
    fp = sub.add_parser(
        "failures",
        help="the failure category of every predicted and GT keyword (why a model loses points)",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    fp.add_argument("data", nargs="?", help="dataset folder (default: the embedded demo)")
    fp.add_argument("--models", type=comma_list, help="comma-separated models (default: all)")
    fp.add_argument("--movies", type=comma_list, help="comma-separated movies (default: all)")
    add_cutoff_option(fp, what="cut-off of hit/found")
    add_match_option(fp)
    add_gt_order_option(fp)
    add_semantic_options(fp, adds="add near_semantic (cosine ≥ --threshold)")
    add_beyond_options(fp)
    add_predictions_argument(fp)
    fp.add_argument(
        "--protocol",
        choices=PRESETS,
        default="kweval",
        help="whose decisions: kweval (default, under --match) or a keyphrase preset's (pke, kpeval, meng; "
        "per-document data), as `kweval evaluate --protocol` scores them",
    )
    fp.add_argument("--out", required=True, help="output file: .csv, or .parquet")
    fp.add_argument("--summary", action="store_true", help="write counts per movie × model × category instead")
    fp.add_argument("--quiet", action="store_true", help="do not print data problems")


def cmd_failures(args: argparse.Namespace) -> int:
    """`kweval failures DATA --out FILE [--summary]`."""
    from kweval.explain.failures import COLUMNS, failure_summary, failure_table
    from kweval.io.output import check_output_file
    from kweval.io.table_files import write_table

    if args.out == "-":
        raise UsageError("--out: give a file (.csv or .parquet); the table can be millions of rows")
    check_output_file(args.out)
    options = _options(args)
    dataset = _dataset(args)
    if args.protocol != "kweval":
        return _preset_failures(args, dataset)
    evaluation = evaluate_args(args, dataset, options)
    if not args.quiet:
        for line in problem_lines(evaluation.problems):
            print(line, file=sys.stderr)
    if len(evaluation.scores) == 0:
        print("kweval: nothing could be evaluated (no review with both predictions and ground truth)", file=sys.stderr)
        return USAGE_ERROR
    table = failure_table(dataset, evaluation)
    for note in table.attrs.get("notes", []):
        say("failures", note)
    out = failure_summary(table) if args.summary else table[COLUMNS + [c for c in ("grounding",) if c in table]]
    write_table(out, args.out)
    say(f"wrote {len(out):,} rows to {args.out}")
    return 0


def _preset_failures(args: argparse.Namespace, dataset) -> int:
    """`kweval failures --protocol P`: every prediction's and gold phrase's fate under the preset, or their counts."""
    from kweval.explain.failures import COLUMNS, failure_summary
    from kweval.io.table_files import write_table
    from kweval.keyphrase.fates import preset_failure_table

    if not dataset.per_document:
        raise UsageError(f"--protocol {args.protocol} needs per-document ground truth (a document's own keyphrases)")
    if args.match is not None or args.semantic:
        raise UsageError(f"--protocol {args.protocol} matches by its own rule; --match and --semantic do not apply")
    if not args.quiet:
        for line in problem_lines(dataset.problems):
            print(line, file=sys.stderr)
    table = preset_failure_table(dataset, args.protocol, args.k)
    out = failure_summary(table) if args.summary else table[COLUMNS]
    write_table(out, args.out)
    say(f"wrote {len(out):,} rows to {args.out} ({args.protocol} preset)")
    return 0


def _options(args: argparse.Namespace) -> EvalOptions:
    """The evaluation's options from the command line (`common.eval_options`)."""
    return eval_options(args)


def _dataset(args: argparse.Namespace):
    """The dataset with the asked movies and models (an unknown one is a usage error naming what there is)."""
    from kweval.data import load_dataset

    files = prediction_files(args)
    dataset = load_dataset(args.data, movies=args.movies, predictions=files)
    if args.movies and not set(args.movies) <= set(dataset.movie_ids):
        dataset = load_dataset(args.data, predictions=files)
    movies = select(dataset.movie_ids, args.movies, "movie(s)")
    models = select(dataset.model_names, args.models, "model(s)")
    return dataset.subset(movies, models)
