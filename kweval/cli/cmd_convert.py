"""`kweval convert`: any layout to the tidy layout (Parquet, or CSV with formulas neutralised)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from kweval.cli.common import USAGE_ERROR, add_predictions_argument, prediction_files, problem_lines
from kweval.io.output import OutputError, check_output_folder, os_reason
from kweval.messages import say


def add_parser(sub) -> None:
    """Register `convert` on the CLI's subparsers."""
    cv = sub.add_parser("convert", help="convert a dataset (e.g. DNLP pickles) to the tidy layout")
    cv.add_argument("src", help="dataset folder (any layout)")
    cv.add_argument("dst", help="output folder")
    cv.add_argument("--format", choices=["parquet", "csv"], default="parquet")
    cv.add_argument(
        "--raw-csv",
        action="store_true",
        help="with --format csv: write cells verbatim (default: text cells that a spreadsheet would run as "
        "formulas get a leading ')",
    )
    add_predictions_argument(cv)


def cmd_convert(args: argparse.Namespace) -> int:
    """Read a dataset in any layout and write its tables in the tidy layout; prints the files written."""
    from kweval.data import load_dataset
    from kweval.data.tidy import write_tidy

    check_output_folder(args.dst)
    dataset = load_dataset(args.src, predictions=prediction_files(args))
    for line in problem_lines(dataset.problems):
        print(line, file=sys.stderr)
    if dataset.predictions.empty:
        say(args.src, "no predictions could be read; nothing written")
        return USAGE_ERROR
    if args.format == "csv" and not args.raw_csv:
        dataset = _without_formulas(dataset)
    try:
        written = write_tidy(dataset, Path(args.dst), args.format)
    except OSError as exc:  # (pyarrow's write errors are OSErrors too)
        raise OutputError(args.dst, f"writing failed ({os_reason(exc)})") from None
    for path in written:
        print(path)
    return 0


def _without_formulas(dataset):
    """The dataset with every table's formula-like text cells neutralised (kweval.io.report.neutralise_formulas)."""
    import dataclasses

    from kweval.io.report import neutralise_formulas

    tables = ("movies", "reviews", "predictions", "ground_truth", "models")
    return dataclasses.replace(dataset, **{name: neutralise_formulas(getattr(dataset, name)) for name in tables})
