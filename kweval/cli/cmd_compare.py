"""`kweval compare DATA --a MODEL`: every other model against model A, as the dashboard's Compare page shows it.

One row per model B × metric: the paired difference B − A on the reviews both were evaluated on, its interval at
Holm's level and the Holm p within the metric's family (`kweval.stats.families`), the unadjusted 95% interval, the
t-test and wins/ties/losses; under ``--aggregate micro`` the metrics with a micro rule compare their ratio of sums
(``basis``).  The same function (`kweval.stats.aggregated.compare_against`) gives the Compare page, the report's
verdicts and the Summary's headline their numbers, so a comparison has one p-value everywhere.  ``--headline``
prints the Summary's headline instead: the story in plain words, then each line's statistics.
"""

from __future__ import annotations

import argparse
import sys

import pandas as pd

from kweval.cli.common import (
    USAGE_ERROR,
    UsageError,
    add_predictions_argument,
    add_view_options,
    eval_options,
    evaluate_args,
    prediction_files,
    problem_lines,
    select,
)
from kweval.cli.fast import PRESETS
from kweval.messages import say


def add_parser(sub) -> None:
    """Register `compare` on the CLI's subparsers."""
    cp = sub.add_parser(
        "compare",
        help="every model against model A: paired differences, Holm-level intervals, p-values (the Compare page)",
        description=__doc__.split("\n\n", 1)[1] if __doc__ else None,
    )
    cp.add_argument("data", nargs="?", help="dataset folder (default: the embedded demo)")
    cp.add_argument("--a", dest="reference", help="reference model A (default: the first model)")
    add_view_options(
        cp,
        PRESETS,
        "kweval (default) or a keyphrase preset (pke, kpeval, meng): compare the preset's per-document values",
    )
    cp.add_argument("--headline", action="store_true", help="print the Summary's headline (the story) instead")
    cp.add_argument("--format", choices=["csv", "markdown", "json"], help="default: from --out, else csv")
    cp.add_argument("--out", default="-", help="output file, or - for stdout (default)")
    add_predictions_argument(cp)
    cp.add_argument("--quiet", action="store_true", help="do not print data problems")


def cmd_compare(args: argparse.Namespace) -> int:
    """`kweval compare`: load, select, score (kweval or a preset), compare, write."""
    from kweval.data import load_dataset
    from kweval.io.output import check_output_file, write_output

    check_output_file(args.out)
    dataset = load_dataset(args.data, predictions=prediction_files(args))
    movies = select(dataset.movie_ids, args.movies, "movie(s)")
    models = select(dataset.model_names, args.models, "model(s)") or dataset.model_names
    if args.reference is not None:
        select(models, [args.reference], "model (--a)")
    if len(models) < 2:
        raise UsageError("compare needs at least two models")
    dataset = dataset.subset(movies, models)
    scores, metrics, family, headline = _scores(args, dataset, models)
    if scores is None:
        return USAGE_ERROR
    if args.headline:
        write_output(headline(), args.out)
        return 0
    from kweval.stats import compare_against, verdict

    table = compare_against(scores, args.reference or models[0], models, metrics, args.aggregate, family=family)
    table = verdict.with_significance(table)[verdict.TABLE_COLUMNS]
    write_output(_formatted(table, args), args.out)
    return 0


def _scores(args: argparse.Namespace, dataset, models: list[str]):
    """(per-review scores, the metrics compared, their Holm family rule, a function writing the headline's text)."""
    from kweval.data.vocabulary import vocabulary
    from kweval.stats.families import compared_metrics, metric_family, preset_family
    from kweval.stats.headline import headline, key_metrics

    words = vocabulary(dataset)
    if args.protocol != "kweval":
        from kweval.io.report_protocol import protocol_headline
        from kweval.keyphrase.dataset_protocol import preset_metrics, protocol_scores

        if not dataset.per_document:
            raise UsageError(f"--protocol {args.protocol} needs per-document ground truth (docsutf8/ and keys/)")
        scores = protocol_scores(dataset, args.protocol, args.k, models)
        metrics = compared_metrics(preset_metrics(scores), scores)
        story = lambda: headline_text(protocol_headline(scores, args.protocol, args.k, words), words)  # noqa: E731
        return scores, metrics, preset_family, story
    options = eval_options(args, keyphrase=dataset.per_document, present=dataset.per_document)
    evaluation = evaluate_args(args, dataset, options, keywords=False)
    if not args.quiet:
        for text in problem_lines(evaluation.problems):
            print(text, file=sys.stderr)
    if evaluation.scores.empty:
        say("nothing could be evaluated (no review with both predictions and ground truth)")
        return None, [], metric_family, str
    scores = evaluation.scores
    metrics = compared_metrics(evaluation.metric_names, scores)  # no value on any review: not compared
    keys = key_metrics(metrics, args.k)
    story = lambda: headline_text(  # noqa: E731
        headline(scores, keys, args.aggregate, words, compared=metrics), words
    )
    return scores, metrics, metric_family, story


def headline_text(top: pd.DataFrame, words) -> str:
    """The headline as text: the story's lines, then "How sure:" and each line's statistical sentence."""
    from kweval.stats.story import story_lines

    if top.empty:
        return "Fewer than two models with values: nothing to compare.\n"
    plain = [f"- {line['text']}" for line in story_lines(top.to_dict("records"), words)]
    return "\n".join([*plain, "", "How sure:", *(f"- {s}" for s in top["sentence"])]) + "\n"


def _formatted(table: pd.DataFrame, args: argparse.Namespace) -> str:
    from kweval.io.report import format_for_path, to_csv, to_markdown

    fmt = args.format or (format_for_path(args.out) if args.out != "-" else "csv")
    if fmt == "json":
        return table.to_json(orient="records", indent=1, double_precision=15) + "\n"
    return to_markdown(table, bold_best=False) if fmt == "markdown" else to_csv(table)
