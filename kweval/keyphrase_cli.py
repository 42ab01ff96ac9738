"""CLI commands for keyphrase benchmarks: `evaluate --protocol`, `extract`.

Kept apart from kweval/cli.py, which only registers them.  Data problems are
one `kweval: SOURCE: REASON` line each; the rest is evaluated.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

from kweval.extract import EXTRACTORS, SCORE_DIRECTION
from kweval.output import check_output_file, write_output

PRESETS = ("kweval", "pke", "kpeval", "meng")


class KeyphraseUsageError(Exception):
    """A command-line mistake (exit 2); cli.py reports it like its own usage errors."""


def named_path(value: str) -> tuple[str, str]:
    """argparse type of NAME=PATH."""
    name, sep, path = value.partition("=")
    if not sep or not name.strip() or not path.strip():
        raise argparse.ArgumentTypeError(f"expected NAME=PATH, got {value!r}")
    return name.strip(), path.strip()


def add_evaluate_arguments(ev: argparse.ArgumentParser) -> None:
    ev.add_argument(
        "--protocol",
        choices=PRESETS,
        default="kweval",
        help="conventions of the numbers: kweval (docs/metrics.md, default), pke, kpeval, meng (OpenNMT-kpg); "
        "the presets other than kweval need per-document ground truth (docs/protocols.md)",
    )
    # --predictions NAME=PATH is the CLI's own (kweval/cli.py), shared by every layout.


def add_commands(sub) -> None:
    """Register `extract` on the CLI's subparsers."""
    ex = sub.add_parser(
        "extract",
        help="run a baseline extractor (yake, keybert, firstphrases) over every document and write tidy predictions",
    )
    ex.add_argument("data", help="collection folder (docsutf8/ + keys/)")
    ex.add_argument("--extractor", choices=EXTRACTORS, required=True)
    ex.add_argument("--top", type=int, default=20, help="keyphrases per document (default 20)")
    ex.add_argument("--out", required=True, help="predictions file: .csv, .parquet or .jsonl")
    ex.add_argument("--model-name", help="model name written in the table (default: the extractor's)")
    from kweval.semantic import BACKENDS as EMBEDDING_BACKENDS, DEFAULT_BACKEND

    ex.add_argument("--embedding-backend", choices=EMBEDDING_BACKENDS, default=DEFAULT_BACKEND,
                    help="KeyBERT's embedding backend (vectors go through kweval's embedding store)")

    xp = sub.add_parser("export", help="write a TREC run per model and qrels (graded from GT gain) for trec_eval, pytrec_eval, ranx")
    xp.add_argument("data", nargs="?", help="dataset folder (default: the embedded demo)")
    xp.add_argument("--format", choices=["trec"], default="trec")
    xp.add_argument("--out", required=True, help="output folder (qrels.txt, run.<model>.txt)")
    xp.add_argument("--match", choices=["approx", "exact", "word", "stem"], default="approx", help="match mode whose pairs the run carries")


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
    from kweval import card as cards
    from kweval.data.keyphrase import is_collection, read_documents
    from kweval.data.predictions import prediction_lists
    from kweval.protocols import CUTOFFS, PROTOCOLS, score_documents, summarize

    if args.data is None or not is_collection(Path(args.data)):
        raise KeyphraseUsageError(
            f"--protocol {args.protocol} needs per-document ground truth: a folder with docsutf8/ and keys/"
        )
    if not args.predictions:
        raise KeyphraseUsageError("give each model's predictions with --predictions NAME=PATH")
    check_output_file(args.out)
    quiet = getattr(args, "quiet", False)
    problems: list = []

    def report() -> None:
        if not quiet:
            for problem in problems:
                print(f"kweval: {problem.source}: {problem.reason}", file=sys.stderr)
        problems.clear()

    folder = Path(args.data)
    documents = read_documents(folder, problems)
    report()
    gold = documents.gold
    protocol = PROTOCOLS[args.protocol]
    cutoffs = tuple(dict.fromkeys((*CUTOFFS[:1], args.k, *CUTOFFS[1:])))
    rows = []
    paths = [folder / "docsutf8" / f"{d}.txt" for d in documents.texts]
    paths += [p for p in (folder / "keys").glob("*.key")]
    for model, path_text in args.predictions:
        path = Path(path_text)
        if not path.is_file():
            problems.append(_problem(str(path), f"not a readable file; model {model} skipped"))
            report()
            continue
        predictions = prediction_lists(path, model, problems)
        unknown = sorted(set(predictions) - set(gold))
        if unknown:
            problems.append(_problem(str(path), f"{len(unknown)} document id(s) not in {documents.name} (e.g. {unknown[0]}); ignored"))
        report()
        per_doc = score_documents(protocol, gold, predictions, documents.texts, cutoffs)
        summary = summarize(protocol, per_doc)
        n_documents = int(summary.pop("n_documents"))
        rows.append({"movie": documents.name, "model": model, "n_documents": n_documents,
                     **{k: v for k, v in summary.items() if not math.isnan(v)}})
        paths.append(path)
    if not rows:
        print("kweval: nothing could be evaluated (no readable predictions)", file=sys.stderr)
        return 2
    card = cards.protocol_card(
        args.protocol, str(args.data), cards.files_hash(paths, folder), k=args.k, aggregation="macro", cutoffs=cutoffs
    )
    fmt = args.format or _format_for_path(args.out)
    if fmt == "json":
        text = cards.rows_json_with_card(rows, card)
    else:
        import pandas as pd

        text = cards.render_with_card(pd.DataFrame(rows), fmt, None, card, raw_csv=getattr(args, "raw_csv", False))
    write_output(text, args.out)
    cards.write_sidecar(fmt, args.out, card)
    return 0


def _problem(source: str, reason: str):
    from kweval.data.dataset import Problem

    return Problem(source, reason)


def _format_for_path(out: str) -> str:
    from kweval.report import format_for_path

    return format_for_path(out)


# ------------------------------------------------------------------ the --protocol fast path
# `python -m kweval evaluate DATA --protocol P ...` parsed by a parser of its own, before
# kweval.cli (whose options import pandas and numpy for their choices) is imported.
# Anything it does not know (other options, --help, a bad value) goes to the full CLI,
# which parses the same command line again and answers as always.

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
    if not argv or argv[0] != "evaluate" or not any(a.startswith("--protocol") for a in argv) or {"-h", "--help"} & set(argv):
        return None
    try:
        args, unknown = _fast_parser().parse_known_args(argv[1:])
    except (argparse.ArgumentError, ValueError, TypeError):
        return None
    if unknown:
        return None
    from kweval.output import OutputError

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


def kweval_card(args: argparse.Namespace, options, source: str) -> dict[str, object]:
    """The card of a `kweval evaluate` run on movie-level data (the kweval preset)."""
    from kweval import card as cards

    folder = Path(args.data) if args.data else Path(__file__).parent / "data" / "demo"
    content = cards.folder_hash(folder) if folder.is_dir() else "unknown"
    return cards.evaluation_card(
        options, source, content,
        aggregation="legacy: each column as its notebook (docs/notebook-parity.md)" if args.legacy else args.aggregate,
    )


def cmd_extract(args: argparse.Namespace) -> int:
    """Run one extractor over every document of a collection and write its ranked predictions."""
    from kweval.data.dataset import Problem
    from kweval.data.keyphrase import is_collection, read_documents
    from kweval.extract import prediction_rows, run_extractor

    folder = Path(args.data)
    if not is_collection(folder):
        raise KeyphraseUsageError(f"{folder}: not a collection folder (needs docsutf8/ and keys/)")
    if args.top < 1:
        raise KeyphraseUsageError("--top must be at least 1")
    out = Path(args.out)
    if out.suffix not in (".csv", ".parquet", ".jsonl"):
        raise KeyphraseUsageError(f"{out}: --out must end in .csv, .parquet or .jsonl")
    check_output_file(str(out))
    problems: list[Problem] = []
    collection = read_documents(folder, problems)
    for problem in problems:
        print(f"kweval: {problem.source}: {problem.reason}", file=sys.stderr)
    doc_ids = collection.doc_ids
    texts = [collection.texts[d] for d in doc_ids]
    from tqdm import tqdm

    with tqdm(total=len(texts), desc=f"{args.extractor}", unit="doc", file=sys.stderr, disable=None) as bar:
        try:
            lists = run_extractor(args.extractor, texts, args.top, collection.language or "en", progress=lambda n: bar.update(1),
                                  backend=args.embedding_backend)
        except ImportError as exc:
            extra = "extract,semantic" if args.extractor == "keybert" else "extract"
            raise KeyphraseUsageError(f"{args.extractor} needs {exc.name or exc}: pip install 'kweval[{extra}]'") from None
    model = args.model_name or args.extractor
    if out.suffix == ".jsonl":
        lines = [
            json.dumps({"id": d, "keyphrases": [k for k, _ in e], "scores": [s for _, s in e]}, ensure_ascii=False)
            for d, e in zip(doc_ids, lists)
        ]
        write_output("\n".join(lines) + "\n", str(out))
    else:
        import pandas as pd

        from kweval.data.tidy import csv_quoting
        from kweval.report import neutralise_formulas

        table = pd.DataFrame(prediction_rows(collection.name, doc_ids, model, lists))
        if out.suffix == ".parquet":
            write_output(table.to_parquet(index=False), str(out))
        else:
            table = neutralise_formulas(table)
            write_output(table.to_csv(index=False, lineterminator="\n", quoting=csv_quoting(table)), str(out))
    print(
        f"kweval: {len(texts)} documents, {sum(map(len, lists))} keyphrases by {args.extractor} "
        f"(scores: {SCORE_DIRECTION[args.extractor]} is better) -> {out}",
        file=sys.stderr,
    )
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    """`kweval export DATA --format trec --out DIR`: kweval's matches as a TREC run and graded qrels."""
    from kweval.data import load_dataset
    from kweval.evaluate import EvalOptions, evaluate
    from kweval.export import write_trec

    from kweval.output import check_output_folder

    check_output_folder(args.out)
    dataset = load_dataset(args.data)
    evaluation = evaluate(dataset, EvalOptions(match=args.match))
    for problem in evaluation.problems:
        print(f"kweval: {problem.source}: {problem.reason}", file=sys.stderr)
    try:
        written = write_trec(evaluation, Path(args.out))
    except OSError as exc:
        raise KeyphraseUsageError(f"{args.out}: cannot write: {exc.strerror or exc}") from None
    print(f"kweval: wrote {', '.join(str(p) for p in written)}", file=sys.stderr)
    return 0
