"""`kweval gap`: why two keyphrase protocols give one model different numbers, and which protocols reproduce a
published one (docs/protocols.md, "Where a gap comes from").

`--from P --to Q` decomposes the gap of `--metric` into the conventions P and Q set differently (exact
Shapley values, `kweval.lattice.gap`); `--reported METRIC=VALUE` searches every combination of the
presets' conventions for the value (`kweval.lattice.search`).  Data is read as `kweval evaluate
--protocol` reads it; every fault is one `kweval:` line and exit 2.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from kweval.cli.common import UsageError, add_match_option, add_predictions_argument, positive_int, prediction_files
from kweval.messages import problem_line, say


def add_parser(sub) -> None:
    """Register `gap` on the CLI's subparsers."""
    from kweval.io.gap_text import FORMATS

    gp = sub.add_parser(
        "gap",
        help="where the gap between two keyphrase protocols comes from, or which protocols give a published number",
        description="Decompose a metric's gap between two keyphrase protocols into their conventions (exact Shapley "
        "values), or find the protocols whose value rounds to a reported number (docs/protocols.md).",
    )
    gp.add_argument("data", nargs="?", help="per-document data: docsutf8/ + keys/, a Meng-layout .json/.jsonl file")
    gp.add_argument("--model", help="the model whose numbers are explained (default: the only one given)")
    gp.add_argument("--movie", help="the collection, where DATA (a tidy folder) holds several")
    gp.add_argument(
        "--from",
        dest="start",
        metavar="P",
        help="a protocol: a preset (kweval, pke, kpeval, meng), then any CONVENTION=SETTING changes, comma-separated "
        "(e.g. kpeval,cutoff=pke)",
    )
    gp.add_argument("--to", dest="end", metavar="Q", help="the protocol to compare with, in --from's form")
    gp.add_argument(
        "--metric",
        default="f1@5",
        help="the metric explained (default f1@5): p@K, r@K, f1@K "
        "(K a number, M or O), their _present forms, r@K_absent",
    )
    gp.add_argument(
        "--reported",
        metavar="METRIC=VALUE",
        help="find the protocols whose METRIC rounds to VALUE at its decimals (a VALUE above 1 is a percentage)",
    )
    gp.add_argument(
        "--k", type=positive_int, action="append", default=[], help="with --reported: also try cut-off K (repeatable)"
    )
    add_match_option(gp)  # the kweval preset's match mode
    gp.add_argument("--top", type=positive_int, default=10, help="documents that move most, listed (default 10)")
    add_predictions_argument(gp)
    gp.add_argument("--format", choices=FORMATS, default="text")
    gp.add_argument("--out", default="-", help="output file, or - for stdout (default)")


def cmd_gap(args: argparse.Namespace) -> int:
    """Answer one gap or reported-number question about one model; data problems are `kweval:` lines."""
    from kweval.io.gap_text import render
    from kweval.io.output import check_output_file, write_output
    from kweval.keyphrase.conventions import KWEVAL_MATCH
    from kweval.keyphrase.phrases import save_stems, stem_cache_notes
    from kweval.lattice.explain import GapError, explain_gap, explain_reported

    _check_question(args)
    check_output_file(args.out)
    problems: list = []
    collection = _collection(args, problems)
    for problem in problems:
        print(problem_line(problem), file=sys.stderr)
    model = _model(args, list(collection.predictions))
    match = args.match or KWEVAL_MATCH
    try:
        if args.reported is not None:
            result = explain_reported(collection, model, args.reported, args.k, match)
        else:
            result = explain_gap(collection, model, args.metric, args.start, args.end, match, args.top)
    except GapError as exc:
        raise UsageError(str(exc)) from None
    finally:
        save_stems()  # the stems read, kept for the next run
    for note in stem_cache_notes():  # a full disk: the stems are not kept, the answer stands
        say("stem cache", note)
    write_output(render(result, args.format), args.out)
    return 0


def _check_question(args: argparse.Namespace) -> None:
    """Exactly one question: --from and --to, or --reported."""
    pair = args.start is not None or args.end is not None
    if args.reported is not None and pair:
        raise UsageError("ask one question: --from P --to Q, or --reported METRIC=VALUE")
    if args.reported is None and (args.start is None or args.end is None):
        raise UsageError("give --from P and --to Q (e.g. --from pke --to kpeval), or --reported METRIC=VALUE")
    if args.k and args.reported is None:
        raise UsageError("--k applies to --reported (the cut-offs searched); the gap's cut-off is --metric's")


def _collection(args: argparse.Namespace, problems: list):
    """The per-document collection and every model's prediction lists (as `kweval evaluate --protocol` reads them)."""
    from kweval.data import read_per_document
    from kweval.data.beside import models_beside
    from kweval.data.predictions import prediction_lists
    from kweval.lattice.explain import NEEDS_PER_DOCUMENT, collection_of_dataset, collection_of_documents

    documents = None if args.data is None else read_per_document(args.data, problems)
    if documents is None:
        from kweval.data import load_dataset

        dataset = load_dataset(args.data, predictions=prediction_files(args))  # a tidy folder, DNLP, the demo
        problems.extend(dataset.problems)
        if not dataset.per_document:
            raise UsageError(f"{args.data or 'the embedded demo'}: {NEEDS_PER_DOCUMENT}")
        collections = list(dataset.movie_ids)
        if args.movie is None and len(collections) > 1 or args.movie not in (None, *collections):
            raise UsageError(f"--movie: choose one collection of {', '.join(collections)}")
        return collection_of_dataset(dataset, args.movie)
    files = prediction_files(args) or {}
    if not files and Path(args.data).is_dir():  # the files lying with the collection (kweval.data.beside)
        files = {m: str(p) for m, p in models_beside(Path(args.data), problems)}
    if not files:
        raise UsageError(
            "give each model's predictions with --predictions NAME=PATH (or put one file per model in predictions/ "
            "beside docsutf8/)"
        )
    wanted = [args.model] if args.model in files else list(files)
    lists = {m: prediction_lists(Path(files[m]), m, problems) for m in wanted}
    return collection_of_documents(documents, lists)


def _model(args: argparse.Namespace, models: list[str]) -> str:
    if args.model is None:
        if len(models) != 1:
            raise UsageError(f"--model: choose one of {', '.join(models)}")
        return models[0]
    if args.model not in models:
        raise UsageError(f"--model: unknown model {args.model!r} (available: {', '.join(models) or 'none'})")
    return args.model
