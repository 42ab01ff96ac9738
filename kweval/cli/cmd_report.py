"""`kweval report DATA --out report.html`: one self-contained HTML page to send to people who will not run anything.

The headline card, the summary table with CIs, the charts (plotly.js inline:
nothing is fetched from any host), the verdict matrix, three worked examples
and the protocol card (`kweval.io.report_data`, `kweval.io.html_report`).
Under ``--protocol pke|kpeval|meng`` the numbers are the preset's (as
``kweval evaluate --protocol``), per document, and the comparisons test
per-document means.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from kweval.cli import record
from kweval.cli.common import (
    USAGE_ERROR,
    UsageError,
    add_predictions_argument,
    add_view_options,
    eval_options,
    positive_int,
    prediction_files,
    problem_lines,
    select,
)
from kweval.cli.fast import PRESETS
from kweval.messages import line, say


def add_parser(sub) -> None:
    """Register `report` on the CLI's subparsers."""
    rp = sub.add_parser(
        "report",
        help="write one self-contained HTML report (headline, summary with CIs, charts, verdicts, examples, protocol)",
        description="Write one self-contained HTML page: the headline card, the summary table with bootstrap CIs, the "
        "charts (plotly embedded), the verdict matrix, three worked examples and the protocol card.",
    )
    rp.add_argument("data", nargs="?", help="dataset folder (default: the embedded demo)")
    rp.add_argument("--out", required=True, help="the HTML file to write (.html)")
    add_view_options(
        rp,
        PRESETS,
        "conventions of the numbers: kweval (default) or a keyphrase preset (pke, kpeval, meng; per-document data)",
    )
    rp.add_argument("--resamples", type=positive_int, default=2000, help="bootstrap resamples (default 2000)")
    add_predictions_argument(rp)
    rp.add_argument("--quiet", action="store_true", help="do not print skipped/cleaned data messages")
    record.add_arguments(rp)


def _options(args: argparse.Namespace, per_document: bool):
    """The evaluation's options from the command line; keyphrase metrics on per-document data."""
    return eval_options(args, keyphrase=per_document, present=per_document)


def cmd_report(args: argparse.Namespace) -> int:
    """`kweval report`: evaluate (or score under a preset), gather the report's data, write the page."""
    from kweval.io import html_report
    from kweval.io.output import check_output_file, write_output

    if not args.out.lower().endswith((".html", ".htm")):
        raise UsageError(f"{args.out}: --out must end in .html")
    check_output_file(args.out)
    unusable = record.check(args)  # a damaged or foreign runs store: said before the work
    if unusable is not None:
        return unusable
    plotly = html_report.plotly_js()  # a missing extra is said before the work
    if args.protocol != "kweval":
        if args.grounding or args.diversity:
            raise UsageError("--grounding and --diversity: the report shows them under --protocol kweval (the default)")
        data, keep = _protocol_report_data(args)
    else:
        data, keep = _kweval_report_data(args)
    if data is None:
        return USAGE_ERROR
    if not args.quiet:
        for line in problem_lines_of(data.problems):
            print(line, file=sys.stderr)
    write_output(html_report.render_html(data, plotly), args.out)
    say(f"report of {len(data.models)} model(s) -> {args.out}")
    return keep() if record.wanted(args) else 0


def problem_lines_of(problems: list[str]) -> list[str]:
    """The `kweval: SOURCE: REASON` lines of the report's problems (already `str(Problem)`)."""
    return [line(p) for p in problems]


def _kweval_report_data(args: argparse.Namespace):
    """(the report's data, a function recording its run) under the kweval preset: load, select, evaluate (keywords
    kept for the examples); (None, None) when nothing could be evaluated."""
    from kweval.data import demo_path, load_dataset
    from kweval.data.dataset import text_of
    from kweval.evaluation.pipeline import evaluate
    from kweval.io import card as cards
    from kweval.io.preset_headlines import report_with_presets
    from kweval.io.report_data import report_data

    dataset = load_dataset(args.data, predictions=prediction_files(args))
    movies = select(dataset.movie_ids, args.movies, "movie(s)")
    models = select(dataset.model_names, args.models, "model(s)")
    dataset = dataset.subset(movies, models)
    options = _options(args, dataset.per_document)
    evaluation = evaluate(dataset, options, keywords=True)
    if evaluation.scores.empty:
        for line in problem_lines(evaluation.problems):
            print(line, file=sys.stderr)
        print("kweval: nothing could be evaluated (no review with both predictions and ground truth)", file=sys.stderr)
        return None, None
    folder = Path(args.data) if args.data else demo_path()  # the card `kweval evaluate` writes for the same run
    predictions = [Path(p) for p in (prediction_files(args) or {}).values()]
    content = cards.dataset_hash(folder, args.movies, predictions) if folder.exists() else "unknown"
    card = cards.evaluation_card(
        options, str(dataset.source), content, aggregation=args.aggregate, per_document=dataset.per_document
    )
    name = text_of(Path(str(dataset.source)).name, [0]) or "demo"  # a folder name that is not UTF-8: U+FFFD
    data = report_data(dataset, evaluation, args.aggregate, card, title=f"kweval report: {name}", n_boot=args.resamples)
    data = report_with_presets(data, "kweval", dataset, args.k, n_boot=args.resamples)  # the verdict under each
    return data, lambda: record.record_evaluation(args, evaluation, args.aggregate, card, dataset.per_document)


def _protocol_report_data(args: argparse.Namespace):
    """(the report's data, a function recording its run) under a keyphrase preset: the collection and prediction
    files read as `kweval evaluate --protocol` reads them (`kweval.io.report_protocol`)."""
    from kweval.data import load_dataset, read_per_document
    from kweval.data.predictions import prediction_lists
    from kweval.io import card as cards
    from kweval.io.preset_headlines import report_with_presets
    from kweval.io.report_protocol import protocol_report_data
    from kweval.keyphrase.protocols import CUTOFFS

    problems: list = []
    documents = None if args.data is None else read_per_document(args.data, problems)
    if documents is None:
        raise UsageError(
            f"--protocol {args.protocol} needs per-document ground truth: a folder with docsutf8/ and keys/, or one "
            ".json/.jsonl file with title, abstract and keywords"
        )
    files = prediction_files(args) or {}
    if not files and Path(args.data).is_dir():  # the files lying with the collection (kweval.data.beside)
        from kweval.data.beside import models_beside

        files = {m: str(p) for m, p in models_beside(Path(args.data), problems)}
    if len(files) < 2:
        raise UsageError(
            "--protocol: give at least two models' predictions with --predictions NAME=PATH (or one file per model "
            "in predictions/ beside docsutf8/)"
        )
    wanted = select(list(files), args.models, "model(s)") or list(files)
    predictions = {m: prediction_lists(Path(files[m]), m, problems) for m in wanted}
    paths = [*documents.files, *(Path(files[m]) for m in wanted)]
    folder = Path(args.data)
    cutoffs = tuple(dict.fromkeys((*CUTOFFS[:1], args.k, *CUTOFFS[1:])))
    card = cards.protocol_card(
        args.protocol,
        str(args.data),
        cards.files_hash(paths, folder if folder.is_dir() else None),
        k=args.k,
        aggregation="macro",
        cutoffs=cutoffs,
    )
    data = protocol_report_data(
        documents,
        predictions,
        args.protocol,
        args.k,
        card,
        cutoffs=cutoffs,
        problems=[str(p) for p in problems],
        n_boot=args.resamples,
    )
    dataset = load_dataset(args.data, predictions={m: files[m] for m in wanted})  # kweval's view and the others'
    data = report_with_presets(data, args.protocol, dataset, args.k, n_boot=args.resamples)
    return data, lambda: record.record_protocol_lists(args, documents, predictions, cutoffs, card)
