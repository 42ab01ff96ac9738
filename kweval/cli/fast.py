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
from kweval.messages import problem_line, say

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
    stays small (bench/bench_keyphrase.py).  Every other option of the full CLI
    is applied or refused in one line (kweval.cli.protocol_options).
    """
    from kweval.cli import protocol_options as opts
    from kweval.data import read_per_document
    from kweval.keyphrase.protocols import CUTOFFS, PROTOCOLS, document_problems

    try:
        opts.refuse_options(args, args.protocol)
    except opts.ProtocolOptionError as exc:
        raise KeyphraseUsageError(str(exc)) from None
    problems: list = []
    documents = None if args.data is None else read_per_document(args.data, problems)
    if documents is None:
        raise KeyphraseUsageError(
            f"--protocol {args.protocol} needs per-document ground truth: a folder with docsutf8/ and keys/, or one "
            ".json/.jsonl file with title, abstract and keywords"
        )
    if not args.predictions and Path(args.data).is_dir():  # the files lying with the collection
        from kweval.data.beside import models_beside

        args.predictions = [(m, str(p)) for m, p in models_beside(Path(args.data), problems)]
    if not args.predictions:
        _report(problems, getattr(args, "quiet", False))
        raise KeyphraseUsageError(
            "give each model's predictions with --predictions NAME=PATH (or put one file per model in predictions/ "
            "beside docsutf8/)"
        )
    names = [name for name, _ in args.predictions]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise KeyphraseUsageError(f"--predictions: NAME {', '.join(twice)} given more than once; each NAME once")
    try:
        chosen = opts.selected_models(args.predictions, getattr(args, "models", None))
        opts.check_movies(documents.name, getattr(args, "movies", None))
    except opts.ProtocolOptionError as exc:
        raise KeyphraseUsageError(str(exc)) from None
    per_review = getattr(args, "per_review", None)
    for out in (args.out, per_review):
        if out is not None:
            check_output_file(out)
    quiet = getattr(args, "quiet", False)
    protocol = PROTOCOLS[args.protocol]
    folder = Path(args.data)
    for doc, reason in document_problems(protocol, documents.texts):
        problems.append(_problem(f"{folder}: document {doc}", reason))
    cutoffs = tuple(dict.fromkeys((*CUTOFFS[:1], args.k, *CUTOFFS[1:])))
    beyond = _beyond(args, problems)
    rows, per_model, paths, lines = _score_models(protocol, documents, chosen, cutoffs, problems, quiet, args.k, beyond)
    problems.extend(_stem_cache_problems())  # a full disk: the stems are not kept, the numbers stand
    _report(problems, quiet)
    if not rows:
        say("nothing could be evaluated (no readable predictions)")
        return 2
    card = _card(args, list(documents.files) + paths, folder, cutoffs, lines)
    _write_summary(args, rows, card)
    if per_review is not None:
        write_output(opts.per_document_csv(documents.name, per_model, raw=getattr(args, "raw_csv", False)), per_review)
    try:
        failures = opts.failed_thresholds(rows, getattr(args, "fail_under", None) or [])
    except opts.ProtocolOptionError as exc:
        raise KeyphraseUsageError(str(exc)) from None
    for failure in failures:
        say(failure)
    if getattr(args, "record", None) is not None:  # --record: the full CLI's (kweval.cli.record)
        from kweval.cli import record

        return record.record_protocol(args, documents, per_model, rows, card) or (1 if failures else 0)
    return 1 if failures else 0


def _card(args: argparse.Namespace, files: list[Path], folder: Path, cutoffs: tuple, lines: list[str]) -> dict:
    """The protocol card of the run: its settings, the hash of the `files` read, the other presets' lines."""
    from kweval.io import card as cards

    card = cards.protocol_card(
        args.protocol,
        str(args.data),
        cards.files_hash(files, folder if folder.is_dir() else None),
        k=args.k,
        aggregation="macro",
        cutoffs=cutoffs,
    )
    if getattr(args, "grounding", False) or getattr(args, "diversity", False):
        card.update(cards.beyond_card(args.grounding, args.diversity, args.grounding_threshold, args.embedding_model))
    return cards.with_other_presets(card, lines)


def _report(problems: list, quiet: bool) -> None:
    """Print each problem's one line (unless quiet) and forget them."""
    if not quiet:
        for problem in problems:
            print(problem_line(problem), file=sys.stderr)
    problems.clear()


def _beyond(args: argparse.Namespace, problems: list):
    """With --grounding or --diversity: a function adding their per-document columns to a model's scores (the
    preset's present rule; `kweval.keyphrase.protocol_beyond`), else None."""
    grounded, diverse = getattr(args, "grounding", False), getattr(args, "diversity", False)
    if not (grounded or diverse):
        return None
    from kweval.beyond.grounding import store_embedder
    from kweval.keyphrase import protocol_beyond

    embed, notes = store_embedder(args.embedding_model, args.embedding_backend)

    def add(protocol, documents, predictions, per_doc: dict, summary: dict) -> None:
        columns = protocol_beyond.beyond_columns(
            protocol,
            per_doc["doc"],
            documents.texts,
            predictions,
            embed,
            grounded=grounded,
            diverse=diverse,
            threshold=args.grounding_threshold,
        )
        per_doc.update(columns)
        summary.update(protocol_beyond.means(columns))
        problems.extend(_problem("embedding cache", note) for note in notes)
        notes.clear()

    return add


def _score_models(protocol, documents, chosen, cutoffs, problems: list, quiet: bool, k: int, beyond=None):
    """(summary rows, {model: per-document columns}, prediction files read, the card's lines on the other presets)
    of each model's predictions file; `beyond` (`_beyond`) adds the grounding and diversity columns.

    A file that is not readable, or holds no usable line, is one problem and no row (not a model scoring 0).
    """
    from kweval.data.predictions import prediction_lists
    from kweval.keyphrase.protocols import score_documents, summarize
    from kweval.lattice.lines import gap_lines, preset_summaries

    gold = documents.gold
    rows: list[dict] = []
    per_model: dict[str, dict] = {}
    paths: list[Path] = []
    lines: list[str] = []
    for model, path_text in chosen:
        path = Path(path_text)
        if not path.is_file():
            problems.append(_problem(str(path), f"not a readable file; model {model} skipped"))
            continue
        predictions = prediction_lists(path, model, problems)
        if not predictions:
            problems.append(_problem(str(path), f"no usable predictions; model {model} not evaluated"))
            continue
        unknown = sorted(set(predictions) - set(gold))
        if unknown:
            problems.append(
                _problem(
                    str(path), f"{len(unknown)} document id(s) not in {documents.name} (e.g. {unknown[0]}); ignored"
                )
            )
        _report(problems, quiet)
        per_doc = score_documents(protocol, gold, predictions, documents.texts, cutoffs)
        summary = summarize(protocol, per_doc)
        others = [p for p in PRESETS if p != protocol.name]
        summaries = {protocol.name: summary, **preset_summaries(gold, predictions, documents.texts, cutoffs, others)}
        lines += gap_lines(protocol.name, summaries, k, f"{model}: " if len(chosen) > 1 else "")
        if beyond is not None:
            beyond(protocol, documents, predictions, per_doc, summary)
        n_documents = int(summary.pop("n_documents"))
        rows.append(
            {
                "movie": documents.name,
                "model": model,
                "n_documents": n_documents,
                **{k: v for k, v in summary.items() if not math.isnan(v)},
            }
        )
        per_model[model] = per_doc
        paths.append(path)
    return rows, per_model, paths, lines


def _write_summary(args: argparse.Namespace, rows: list[dict], card: dict) -> None:
    """The protocol's summary rows with their protocol `card`: JSON without pandas, other formats through it."""
    from kweval.io import card as cards

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
        say("error", exc)
        return 2
    except OutputError as exc:
        say(exc)
        return 2
    except BrokenPipeError:
        return 0
