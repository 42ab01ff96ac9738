"""`kweval extract`: run a baseline extractor (YAKE, KeyBERT, FirstPhrases) over every document of a collection."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from kweval.cli.common import UsageError
from kweval.io.output import check_output_file, write_output
from kweval.keyphrase.extract import EXTRACTORS, SCORE_DIRECTION
from kweval.messages import problem_line, say


def add_parser(sub) -> None:
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
    from kweval.embeddings.semantic import BACKENDS as EMBEDDING_BACKENDS
    from kweval.embeddings.semantic import DEFAULT_BACKEND

    ex.add_argument(
        "--embedding-backend",
        choices=EMBEDDING_BACKENDS,
        default=DEFAULT_BACKEND,
        help="KeyBERT's embedding backend (vectors go through kweval's embedding store)",
    )


def cmd_extract(args: argparse.Namespace) -> int:
    """Run one extractor over every document of a collection and write its ranked predictions."""
    from kweval.data import read_per_document
    from kweval.data.dataset import Problem
    from kweval.data.meng import holds_predictions
    from kweval.keyphrase.extract import prediction_rows, run_extractor

    folder = Path(args.data)
    problems: list[Problem] = []
    collection = read_per_document(folder, problems)
    if collection is None:
        predictions = folder.is_file() and holds_predictions(folder)
        what = "a predictions file (keyphrases by document id), " if predictions else ""
        raise UsageError(
            f"{folder}: {what}not a collection (needs docsutf8/ and keys/, or one .json/.jsonl file with title, "
            "abstract and keywords)"
        )
    if args.top < 1:
        raise UsageError("--top must be at least 1")
    out = Path(args.out)
    if out.suffix not in (".csv", ".parquet", ".jsonl"):
        raise UsageError(f"{out}: --out must end in .csv, .parquet or .jsonl")
    check_output_file(str(out))
    for problem in problems:
        print(problem_line(problem), file=sys.stderr)
    doc_ids = collection.doc_ids
    if not doc_ids:
        raise UsageError(f"{folder}: no document could be read; nothing to extract")
    texts = [collection.texts[d] for d in doc_ids]
    from tqdm import tqdm

    with tqdm(total=len(texts), desc=f"{args.extractor}", unit="doc", file=sys.stderr, disable=None) as bar:
        try:
            lists = run_extractor(
                args.extractor,
                texts,
                args.top,
                collection.language or "en",
                progress=lambda n: bar.update(1),
                backend=args.embedding_backend,
            )
        except ImportError as exc:
            extra = "extract,semantic" if args.extractor == "keybert" else "extract"
            raise UsageError(f"{args.extractor} needs {exc.name or exc}: pip install 'kweval[{extra}]'") from None
    empty = [d for d, e in zip(doc_ids, lists) if not e]
    if empty:
        say(
            args.data,
            f"{len(empty)} document(s) without any keyphrase from {args.extractor} (e.g. {empty[0]}); each written "
            "with an empty list",
        )
    model = args.model_name or args.extractor
    direction = SCORE_DIRECTION[args.extractor]  # travels with the predictions (kweval.data.predictions)
    if out.suffix == ".jsonl":
        lines = [
            json.dumps(
                {"id": d, "keyphrases": [k for k, _ in e], "scores": [s for _, s in e], "score_direction": direction},
                ensure_ascii=False,
            )
            for d, e in zip(doc_ids, lists)
        ]
        write_output("\n".join(lines) + "\n", str(out))
    else:
        import pandas as pd

        from kweval.data.tidy import csv_quoting
        from kweval.io.report import neutralise_formulas

        table = pd.DataFrame(prediction_rows(collection.name, doc_ids, model, lists)).assign(score_direction=direction)
        if out.suffix == ".parquet":
            write_output(table.to_parquet(index=False), str(out))
        else:
            table = neutralise_formulas(table)
            write_output(table.to_csv(index=False, lineterminator="\n", quoting=csv_quoting(table)), str(out))
    say(
        f"{len(texts)} documents, {sum(map(len, lists))} keyphrases by {args.extractor} "
        f"(scores: {SCORE_DIRECTION[args.extractor]} is better) -> {out}"
    )
    return 0
