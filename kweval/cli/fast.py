"""`kweval evaluate DATA --protocol pke|kpeval|meng`: the keyphrase field's presets, without pandas or numpy.

`python -m kweval` tries `fast_main` first: it parses with a parser of its
own, before the full CLI (whose options import pandas and numpy for their
choices) is imported.  Anything it does not know (other options, --help, a
bad value) goes to the full CLI, which parses the same command line again and
answers as always.  Data problems are one `kweval: SOURCE: REASON` line each;
the rest is evaluated.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

from kweval.io.output import check_output_file, write_output

PRESETS = ("kweval", "pke", "kpeval", "meng")


class KeyphraseUsageError(Exception):
    """A command-line mistake (exit 2); the CLI reports it like its own usage errors."""


def add_evaluate_arguments(ev: argparse.ArgumentParser) -> None:
    ev.add_argument(
        "--protocol",
        choices=PRESETS,
        default="kweval",
        help="conventions of the numbers: kweval (docs/metrics.md, default), pke, kpeval, meng (OpenNMT-kpg); "
        "the presets other than kweval need per-document ground truth (docs/protocols.md)",
    )
    # --predictions NAME=PATH is the CLI's own (kweval/cli.py), shared by every layout.


def wants_protocol_path(args: argparse.Namespace) -> bool:
    """Whether `kweval evaluate` goes through the keyphrase protocols (per-document data or a non-kweval preset)."""
    return args.protocol != "kweval"


def evaluate_protocol(args: argparse.Namespace) -> int:
    """`kweval evaluate DATA --protocol P --predictions NAME=PATH ...` on a docsutf8 collection.

    Documents come from `kweval.data.keyphrase.read_documents` and predictions
    from `kweval.data.predictions.prediction_lists` (the data layer's readers,
    its messages); JSON output is written without pandas, so the whole process
    stays small (bench/bench_keyphrase.py).
    """
    from kweval.data import read_per_document
    from kweval.data.predictions import prediction_lists
    from kweval.io import card as cards
    from kweval.keyphrase.protocols import CUTOFFS, PROTOCOLS, document_problems, score_documents, summarize

    problems: list = []
    documents = None if args.data is None else read_per_document(args.data, problems)
    if documents is None:
        raise KeyphraseUsageError(
            f"--protocol {args.protocol} needs per-document ground truth: a folder with docsutf8/ and keys/, or one "
            ".json/.jsonl file with title, abstract and keywords"
        )
    if not args.predictions:
        raise KeyphraseUsageError("give each model's predictions with --predictions NAME=PATH")
    check_output_file(args.out)
    quiet = getattr(args, "quiet", False)

    def report() -> None:
        if not quiet:
            for problem in problems:
                print(f"kweval: {problem.source}: {problem.reason}", file=sys.stderr)
        problems.clear()

    folder = Path(args.data)
    protocol = PROTOCOLS[args.protocol]
    for doc, reason in document_problems(protocol, documents.texts):
        problems.append(_problem(f"{folder}: document {doc}", reason))
    report()
    gold = documents.gold
    cutoffs = tuple(dict.fromkeys((*CUTOFFS[:1], args.k, *CUTOFFS[1:])))
    rows = []
    paths = list(documents.files)
    for model, path_text in args.predictions:
        path = Path(path_text)
        if not path.is_file():
            problems.append(_problem(str(path), f"not a readable file; model {model} skipped"))
            report()
            continue
        predictions = prediction_lists(path, model, problems)
        unknown = sorted(set(predictions) - set(gold))
        if unknown:
            problems.append(
                _problem(
                    str(path), f"{len(unknown)} document id(s) not in {documents.name} (e.g. {unknown[0]}); ignored"
                )
            )
        report()
        per_doc = score_documents(protocol, gold, predictions, documents.texts, cutoffs)
        summary = summarize(protocol, per_doc)
        n_documents = int(summary.pop("n_documents"))
        rows.append(
            {
                "movie": documents.name,
                "model": model,
                "n_documents": n_documents,
                **{k: v for k, v in summary.items() if not math.isnan(v)},
            }
        )
        paths.append(path)
    problems.extend(_stem_cache_problems())  # a full disk: the stems are not kept, the numbers stand
    report()
    if not rows:
        print("kweval: nothing could be evaluated (no readable predictions)", file=sys.stderr)
        return 2
    _write_summary(args, rows, cards.files_hash(paths, folder if folder.is_dir() else None), cutoffs)
    return 0


def _write_summary(args: argparse.Namespace, rows: list[dict], content_hash: str, cutoffs: tuple) -> None:
    """The protocol's summary rows with their protocol card: JSON without pandas, other formats through it."""
    from kweval.io import card as cards

    card = cards.protocol_card(
        args.protocol, str(args.data), content_hash, k=args.k, aggregation="macro", cutoffs=cutoffs
    )
    fmt = args.format or _format_for_path(args.out)
    if fmt == "json":
        text = cards.rows_json_with_card(rows, card)
    else:
        import pandas as pd

        from kweval.data.vocabulary import DOCUMENT_WORDS

        table = pd.DataFrame(rows)
        text = cards.render_with_card(
            table, fmt, None, card, raw_csv=getattr(args, "raw_csv", False), words=DOCUMENT_WORDS
        )
    write_output(text, args.out)
    cards.write_sidecar(fmt, args.out, card)


def _stem_cache_problems() -> list:
    from kweval.keyphrase.protocols import stem_cache_notes

    return [_problem("stem cache", note) for note in stem_cache_notes()]


def _problem(source: str, reason: str):
    from kweval.data.dataset import Problem

    return Problem(source, reason)


def _format_for_path(out: str) -> str:
    from kweval.io.report import format_for_path

    return format_for_path(out)


DEFAULT_K = 5  # EvalOptions().k (a test checks they agree)
FORMATS = ("csv", "markdown", "latex", "json")


def _fast_parser() -> argparse.ArgumentParser:
    from kweval.data.predictions import parse_spec

    def spec(value: str) -> tuple[str, str]:
        name, path = parse_spec(value)
        return name, str(path)

    def positive(value: str) -> int:
        k = int(value)
        if k < 1:
            raise ValueError(value)
        return k

    parser = argparse.ArgumentParser(prog="kweval evaluate", add_help=False, exit_on_error=False)
    parser.add_argument("data")
    parser.add_argument("--protocol", choices=[p for p in PRESETS if p != "kweval"], required=True)
    parser.add_argument("--predictions", type=spec, action="append", default=[])
    parser.add_argument("--k", type=positive, default=DEFAULT_K)
    parser.add_argument("--out", default="-")
    parser.add_argument("--format", choices=FORMATS)
    parser.add_argument("--raw-csv", action="store_true")
    parser.add_argument("--quiet", action="store_true")
    return parser


def fast_main(argv: list[str]) -> int | None:
    """Run `evaluate --protocol pke|kpeval|meng` without kweval.cli; None when the full CLI must take `argv`."""
    if (
        not argv
        or argv[0] != "evaluate"
        or not any(a.startswith("--protocol") for a in argv)
        or {"-h", "--help"} & set(argv)
    ):
        return None
    try:
        args, unknown = _fast_parser().parse_known_args(argv[1:])
    except (argparse.ArgumentError, ValueError, TypeError):
        return None
    if unknown:
        return None
    from kweval.io.output import OutputError

    try:
        return evaluate_protocol(args)
    except KeyphraseUsageError as exc:
        print(f"kweval: error: {exc}", file=sys.stderr)
        return 2
    except OutputError as exc:
        print(f"kweval: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0
