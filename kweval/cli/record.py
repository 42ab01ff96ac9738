"""`--record [RUNS]` and `--run-name` of `kweval evaluate` and `kweval report`: the run kept in the run history.

The store is checked before the work (a damaged or foreign file is one line, nothing evaluated); the run is
recorded after the outputs are written.  A failure to record is one `kweval:` line and exit 2, and leaves the
store as it was (`kweval.runs.store`).
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from pathlib import Path

from kweval.cli.common import USAGE_ERROR
from kweval.messages import say


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """--record [RUNS] and --run-name NAME."""
    parser.add_argument(
        "--record",
        nargs="?",
        const="",
        default=None,
        metavar="RUNS",
        help="keep this run in the run history (`kweval runs`): the SQLite file RUNS, else $KWEVAL_RUNS, else "
        "runs/runs.sqlite beside the kweval cache; write it after DATA (or as --record=RUNS)",
    )
    parser.add_argument("--run-name", metavar="NAME", help="the recorded run's name (default: its models and time)")


def wanted(args: argparse.Namespace) -> bool:
    return getattr(args, "record", None) is not None


def store(args: argparse.Namespace):
    """The store --record names (None: the default one)."""
    from kweval.runs import RunStore

    return RunStore(args.record or None)


def check(args: argparse.Namespace) -> int | None:
    """Before the work: an unusable store (a folder, a damaged or foreign file) is one line and USAGE_ERROR."""
    if not wanted(args):
        return None
    from kweval.runs import RunsError

    try:
        store(args).runs()
    except RunsError as exc:
        say(exc.source, exc.reason)
        return USAGE_ERROR
    return None


def inputs_sha256(data: str | None, movies: Sequence[str] | None, predictions: Mapping[str, str] | None) -> str:
    """The SHA-256 of the files a run reads (`kweval.io.card.dataset_hash`): the protocol card's, and what
    `runs rerun` checks again."""
    from kweval.data import demo_path
    from kweval.io.card import dataset_hash

    folder = Path(data) if data else demo_path()
    return dataset_hash(folder, movies, [Path(p) for p in (predictions or {}).values()]) if folder.exists() else ""


def _layout(data: str | None) -> str:
    from kweval.data import DatasetError, detect_layout

    try:
        return detect_layout(Path(data)) if data else "tidy"
    except DatasetError:
        return "unknown"


def _save(args: argparse.Namespace, tables, source, protocol: str, aggregate: str, options: Mapping) -> int:
    """Store the run; its id and name on stderr, or one line on failure (USAGE_ERROR)."""
    from kweval.runs import RunsError, record_run

    try:
        runs = store(args)
        info = record_run(
            runs, tables, source, protocol=protocol, aggregate=aggregate, options=options, name=args.run_name
        )
    except RunsError as exc:
        say(exc.source, exc.reason)
        return USAGE_ERROR
    if not getattr(args, "quiet", False):
        say(f"recorded run {info.id} ({info.name}) in {runs.path}")
    return 0


def record_evaluation(
    args: argparse.Namespace, evaluation, aggregate: str, card: Mapping[str, object], per_document: bool, summary=None
) -> int:
    """Record an evaluation of the one engine (`kweval evaluate`, `kweval report`; `summary`: its aggregate table
    when already made): 0, or USAGE_ERROR after one line."""
    from kweval.runs import RunSource, evaluate_arguments, evaluation_tables

    predictions = dict(args.predictions or ())
    movies = getattr(args, "movies", None)
    arguments = evaluate_arguments(
        args.data, evaluation.options, aggregate=aggregate, movies=movies, models=args.models, predictions=predictions
    )
    source = RunSource(
        data=str(Path(args.data).resolve()) if args.data else "demo",
        layout=_layout(args.data),
        per_document=per_document,
        inputs_sha256=str(card.get("dataset_sha256") or inputs_sha256(args.data, movies, predictions)),
        arguments=arguments,
        card=card,
    )
    tables = evaluation_tables(evaluation, aggregate, summary)
    return _save(args, tables, source, "kweval", aggregate, evaluation.options.as_dict())


def record_protocol(
    args: argparse.Namespace,
    documents,
    per_model: Mapping[str, Mapping[str, Sequence]],
    rows: Sequence[Mapping[str, object]],
    card: Mapping[str, object],
) -> int:
    """Record a run under a keyphrase preset (`kweval evaluate --protocol P`): each model's per-document columns
    and the preset's own summary rows."""
    from kweval.runs import RunSource, evaluate_arguments, protocol_tables

    predictions = {m: str(Path(p).resolve()) for m, p in args.predictions if m in per_model}
    arguments = evaluate_arguments(
        args.data, None, protocol=args.protocol, k=args.k, models=list(per_model), predictions=predictions
    )
    source = RunSource(
        data=str(Path(args.data).resolve()),
        layout=_layout(args.data),
        per_document=True,
        inputs_sha256=inputs_sha256(args.data, None, predictions),
        arguments=arguments,
        card=card,
    )
    tables = protocol_tables(documents.name, per_model, rows, args.protocol, documents.gold)
    return _save(args, tables, source, args.protocol, "macro", {"k": args.k})


def record_protocol_lists(
    args: argparse.Namespace, documents, predictions: Mapping[str, Mapping[str, Sequence[str]]], cutoffs, card
) -> int:
    """`record_protocol` of each model's prediction lists, scored as `kweval evaluate --protocol` scores them
    (`kweval report --protocol P --record`)."""
    from kweval.keyphrase.protocols import PROTOCOLS, score_documents, summarize

    protocol = PROTOCOLS[args.protocol]
    per_model = {
        m: score_documents(protocol, documents.gold, lists, documents.texts, cutoffs)
        for m, lists in predictions.items()
    }
    rows = []
    for model, per_doc in per_model.items():
        summary = summarize(protocol, per_doc)
        rows.append(
            {"movie": documents.name, "model": model, "n_documents": int(summary.pop("n_documents")), **summary}
        )
    return record_protocol(args, documents, per_model, rows, card)
