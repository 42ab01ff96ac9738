"""`kweval judgments`: grade keywords from the command line, undo, list, agreement and export (docs/metrics.md §11).

The store is the dataset's SQLite file (`kweval.judgments.default_path`:
beside the kweval cache, named per dataset content hash) or `--db PATH`;
`agreement` and `export` also read a CSV/Parquet judgments table.  The
dashboard calls the same `kweval.judgments` functions.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from kweval.cli.common import UsageError
from kweval.messages import line, say


def add_parser(sub) -> None:
    """Register `judgments` and its actions on the CLI's subparsers."""
    jp = sub.add_parser(
        "judgments",
        help="reader judgments that correct the reference: add, undo, list, agreement, export (docs/metrics.md §11)",
        description="Grade keywords 0-3 (a GT keyword marked wrong is 0), per review or for a whole movie; "
        "`kweval evaluate DATA --judgments PATH` reports each metric against the judged GT beside the original.",
    )
    actions = jp.add_subparsers(dest="action", metavar="ACTION", required=True)
    add = actions.add_parser("add", help="store one judgment")
    undo = actions.add_parser("undo", help="delete the latest judgment of --annotator (or --id N)")
    listing = actions.add_parser("list", help="print the judgments as CSV")
    agree = actions.add_parser(
        "agreement",
        help="agreement on shared items: Cohen's kappa (quadratic weights) for two annotators, Krippendorff's "
        "alpha (ordinal) for more",
    )
    export = actions.add_parser("export", help="the judged GT as TREC qrels (and runs) and/or a tidy GT table")
    for parser in (add, undo, listing, agree, export):
        parser.add_argument("data", nargs="?", help="dataset folder (default: the embedded demo)")
        parser.add_argument("--db", metavar="PATH", help="the judgments file (default: the dataset's store)")
    add.add_argument("--movie", required=True)
    add.add_argument("--review", help="review id (default: the whole movie)")
    add.add_argument("--keyword", required=True)
    add.add_argument("--grade", type=int, required=True, help="0 (not relevant) to 3 (as relevant as the best GT)")
    add.add_argument("--annotator", required=True)
    add.add_argument("--side", choices=["prediction", "gt"], default="prediction")
    undo.add_argument("--annotator")
    undo.add_argument("--id", type=int, dest="judgment_id")
    listing.add_argument("--movie")
    listing.add_argument("--review")
    export.add_argument("--qrels", metavar="DIR", help="write qrels.txt (graded by G' relevance) and run.<model>.txt")
    export.add_argument("--ground-truth", metavar="FILE", help="write G' as a tidy table (.csv or .parquet)")
    export.add_argument(
        "--match",
        choices=["approx", "exact", "word", "stem"],
        default="auto",
        help="match mode (default: the data's, as `kweval evaluate`: stem on per-document GT, approx on movie-level)",
    )


def cmd_judgments(args: argparse.Namespace) -> int:
    """Run one `kweval judgments` action."""
    from kweval.data import load_dataset
    from kweval.judgments import JudgmentsError

    dataset = load_dataset(args.data)
    try:
        return _ACTIONS[args.action](args, dataset)
    except JudgmentsError as exc:
        raise UsageError(f"{exc.source}: {exc.reason}") from None


def _path(args: argparse.Namespace, dataset) -> Path:
    from kweval.judgments import default_path

    return Path(args.db) if args.db else default_path(dataset.content_hash())


def _add(args: argparse.Namespace, dataset) -> int:
    from kweval.judgments import JudgmentStore, checked

    path = _path(args, dataset)
    import pandas as pd

    row = {"id": 0, "movie": args.movie, "review_id": args.review, "keyword": args.keyword, "norm": None}
    from kweval.text.normalize import normalize

    row.update(norm=normalize(args.keyword), side=args.side, grade=args.grade, annotator=args.annotator, time="")
    kept, problems = checked(pd.DataFrame([row]), dataset, "judgment")
    if problems:
        raise UsageError(f"{problems[0].source}: {problems[0].reason}; nothing was stored")
    store = JudgmentStore(path, dataset.content_hash())
    new_id = store.add(args.movie, args.review, args.keyword, args.grade, args.annotator, args.side)
    say(path, f"judgment {new_id} stored")
    return 0


def _undo(args: argparse.Namespace, dataset) -> int:
    from kweval.judgments import JudgmentStore

    path = _path(args, dataset)
    removed = JudgmentStore(path, dataset.content_hash()).undo(args.annotator, args.judgment_id)
    if removed is None:
        say(path, "no judgment to undo")
        return 1
    print(line(path, f"judgment {removed['id']} ({removed['keyword']!r}, grade {removed['grade']}) removed"))
    return 0


def _list(args: argparse.Namespace, dataset) -> int:
    from kweval.io.report import to_csv
    from kweval.judgments import load_judgments

    frame = load_judgments(_path(args, dataset), dataset.content_hash())
    if args.movie is not None:
        frame = frame[frame["movie"] == args.movie]
        if args.review is not None:
            frame = frame[frame["review_id"].isna() | (frame["review_id"] == args.review)]
    sys.stdout.write(to_csv(frame))
    return 0


def _checked(args: argparse.Namespace, dataset):
    from kweval.cli.judged import load_checked

    kept = load_checked(str(_path(args, dataset)), dataset, dataset.content_hash(), quiet=True)
    if kept is None:
        raise UsageError(f"{_path(args, dataset)}: no usable judgments")
    return kept


def _agreement(args: argparse.Namespace, dataset) -> int:
    from kweval.judgments import agreement

    result = agreement(_checked(args, dataset))
    print(result.line())
    return 0


def _export(args: argparse.Namespace, dataset) -> int:
    from kweval.evaluation.options import EvalOptions
    from kweval.io.export import write_trec
    from kweval.io.output import check_output_file, check_output_folder
    from kweval.io.table_files import write_table
    from kweval.judgments import judged_evaluation, judged_ground_truth_table

    if not (args.qrels or args.ground_truth):
        raise UsageError("judgments export: give --qrels DIR and/or --ground-truth FILE")
    if args.qrels:
        check_output_folder(args.qrels)
    if args.ground_truth:
        check_output_file(args.ground_truth)
    evaluation, judged = judged_evaluation(dataset, _checked(args, dataset), EvalOptions(match=args.match), True)
    written = write_trec(evaluation, Path(args.qrels)) if args.qrels else []
    if args.ground_truth:
        write_table(judged_ground_truth_table(judged), args.ground_truth)
        written.append(Path(args.ground_truth))
    print(f"kweval: wrote {', '.join(str(p) for p in written)} ({judged.n_used} judgment(s) used)", file=sys.stderr)
    return 0


_ACTIONS = {"add": _add, "undo": _undo, "list": _list, "agreement": _agreement, "export": _export}
