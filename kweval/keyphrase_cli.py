"""CLI commands for keyphrase benchmarks: `evaluate --protocol`, `extract`.

Kept apart from kweval/cli.py, which only registers them.  Data problems are
one `kweval: SOURCE: REASON` line each; the rest is evaluated.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Callable
from pathlib import Path

from kweval.extract import EXTRACTORS, SCORE_DIRECTION, is_docsutf8
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
        help="conventions of the numbers: kweval (METRICS.md, default), pke, kpeval, meng (OpenNMT-kpg); "
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
    from kweval.semantic import BACKENDS as EMBEDDING_BACKENDS

    ex.add_argument("--embedding-backend", choices=EMBEDDING_BACKENDS, default="torch",
                    help="KeyBERT's embedding backend (vectors go through kweval's embedding store)")

    xp = sub.add_parser("export", help="write a TREC run per model and qrels (graded from GT gain) for trec_eval, pytrec_eval, ranx")
    xp.add_argument("data", nargs="?", help="dataset folder (default: the embedded demo)")
    xp.add_argument("--format", choices=["trec"], default="trec")
    xp.add_argument("--out", required=True, help="output folder (qrels.txt, run.<model>.txt)")
    xp.add_argument("--match", choices=["approx", "exact", "word", "stem"], default="approx", help="match mode whose pairs the run carries")


def wants_protocol_path(args: argparse.Namespace) -> bool:
    """Whether `kweval evaluate` goes through the keyphrase protocols (per-document data or a non-kweval preset)."""
    return args.protocol != "kweval"


def read_predictions(path: Path, model: str, report: Callable[[str], None]) -> dict[str, list[str]]:
    """{document id: ranked keyphrases} from JSONL (id|doc_id, keyphrases|predictions, scores) or a tidy table."""
    if path.suffix == ".jsonl":
        out: dict[str, list[str]] = {}
        for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
                doc = str(obj.get("id", obj.get("doc_id")))
                phrases = obj.get("keyphrases", obj.get("predictions"))
                if isinstance(phrases, str):
                    phrases = [p for p in phrases.split(";")]
                if obj.get("id", obj.get("doc_id")) is None or not isinstance(phrases, list):
                    raise ValueError("needs an id (or doc_id) and a keyphrases (or predictions) list")
                out[doc] = [str(p) for p in phrases if isinstance(p, str)]
            except (ValueError, AttributeError) as exc:
                report(f"kweval: {path}:{number}: {exc}; line skipped")
        return out
    import pandas as pd

    table = pd.read_parquet(path) if path.suffix == ".parquet" else pd.read_csv(path, keep_default_na=False)
    missing = {"review_id", "keyword"} - set(table.columns)
    if missing:
        raise KeyphraseUsageError(f"{path}: missing column(s) {', '.join(sorted(missing))}")
    if "model" in table.columns and model in set(table["model"]):
        table = table[table["model"] == model]
    if "rank" in table.columns:
        table = table.sort_values(["review_id", "rank"], kind="stable")
    out = {}
    for doc, keyword in zip(table["review_id"].astype(str), table["keyword"]):
        phrases = out.setdefault(doc, [])
        if isinstance(keyword, str) and keyword:
            phrases.append(keyword)
    return out


def evaluate_protocol(args: argparse.Namespace) -> int:
    """`kweval evaluate DATA --protocol P --predictions NAME=PATH ...` on a docsutf8 collection."""
    from kweval import card as cards
    from kweval.extract import read_collection
    from kweval.protocols import CUTOFFS, PROTOCOLS, score_documents, summarize

    if args.data is None or not is_docsutf8(Path(args.data)):
        raise KeyphraseUsageError(
            f"--protocol {args.protocol} needs per-document ground truth: a folder with docsutf8/ and keys/"
        )
    if not args.predictions:
        raise KeyphraseUsageError("give each model's predictions with --predictions NAME=PATH")
    check_output_file(args.out)
    quiet = getattr(args, "quiet", False)

    def report(line: str) -> None:
        if not quiet:
            print(line, file=sys.stderr)

    collection = read_collection(Path(args.data))
    protocol = PROTOCOLS[args.protocol]
    cutoffs = tuple(dict.fromkeys((*CUTOFFS[:1], args.k, *CUTOFFS[1:])))
    rows = []
    paths = [Path(args.data) / "docsutf8" / f"{d}.txt" for d in collection.doc_ids]
    paths += [p for p in (Path(args.data) / "keys").glob("*.key")]
    for model, path_text in args.predictions:
        path = Path(path_text)
        if not path.is_file():
            report(f"kweval: {path}: not a readable file; model {model} skipped")
            continue
        predictions = read_predictions(path, model, report)
        unknown = sorted(set(predictions) - set(collection.doc_ids))
        if unknown:
            report(f"kweval: {path}: {len(unknown)} document id(s) not in {collection.name} (e.g. {unknown[0]}); ignored")
        per_doc = score_documents(protocol, collection.keys, predictions, collection.texts, cutoffs)
        summary = summarize(protocol, per_doc)
        n_documents = int(summary.pop("n_documents"))
        rows.append({"movie": collection.name, "model": model, "n_documents": n_documents,
                     **{k: v for k, v in summary.items() if not math.isnan(v)}})
        paths.append(path)
    if not rows:
        print("kweval: nothing could be evaluated (no readable predictions)", file=sys.stderr)
        return 2
    import pandas as pd

    from kweval import report as reports

    table = pd.DataFrame(rows)
    card = cards.protocol_card(
        args.protocol, str(args.data), cards.files_hash(paths), k=args.k, aggregation="macro", cutoffs=cutoffs
    )
    fmt = args.format or reports.format_for_path(args.out)
    write_output(cards.render_with_card(table, fmt, None, card, raw_csv=getattr(args, "raw_csv", False)), args.out)
    cards.write_sidecar(fmt, args.out, card)
    return 0


def kweval_card(args: argparse.Namespace, options, source: str) -> dict[str, object]:
    """The card of a `kweval evaluate` run on movie-level data (the kweval preset)."""
    from kweval import card as cards

    folder = Path(args.data) if args.data else Path(__file__).parent / "data" / "demo"
    content = cards.folder_hash(folder) if folder.is_dir() else "unknown"
    return cards.protocol_card(
        "kweval", source, content, k=options.k, match=options.match, gt_order=options.gt_order,
        aggregation="legacy: each column as its notebook (docs/notebook-parity.md)" if args.legacy else args.aggregate,
    )


def cmd_extract(args: argparse.Namespace) -> int:
    """Run one extractor over every document of a collection and write its ranked predictions."""
    from kweval.extract import prediction_rows, read_collection, run_extractor

    folder = Path(args.data)
    if not is_docsutf8(folder):
        raise KeyphraseUsageError(f"{folder}: not a collection folder (needs docsutf8/)")
    if args.top < 1:
        raise KeyphraseUsageError("--top must be at least 1")
    out = Path(args.out)
    if out.suffix not in (".csv", ".parquet", ".jsonl"):
        raise KeyphraseUsageError(f"{out}: --out must end in .csv, .parquet or .jsonl")
    check_output_file(str(out))
    collection = read_collection(folder)
    texts = [collection.texts[d] for d in collection.doc_ids]
    from tqdm import tqdm

    with tqdm(total=len(texts), desc=f"{args.extractor}", unit="doc", file=sys.stderr, disable=None) as bar:
        try:
            lists = run_extractor(args.extractor, texts, args.top, collection.language, progress=lambda n: bar.update(1),
                                  backend=args.embedding_backend)
        except ImportError as exc:
            extra = "extract,semantic" if args.extractor == "keybert" else "extract"
            raise KeyphraseUsageError(f"{args.extractor} needs {exc.name or exc}: pip install 'kweval[{extra}]'") from None
    model = args.model_name or args.extractor
    if out.suffix == ".jsonl":
        lines = [
            json.dumps({"id": d, "keyphrases": [k for k, _ in e], "scores": [s for _, s in e]}, ensure_ascii=False)
            for d, e in zip(collection.doc_ids, lists)
        ]
        write_output("\n".join(lines) + "\n", str(out))
    else:
        import pandas as pd

        from kweval.data.tidy import csv_quoting
        from kweval.report import neutralise_formulas

        table = pd.DataFrame(prediction_rows(collection.name, collection.doc_ids, model, lists))
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
