"""Reader for the keyphrase-benchmark layout (the LIAAD collection of 20 datasets, SemEval, Inspec, ...).

    <Collection>/
      docsutf8/<doc_id>.txt   the document text (UTF-8)
      keys/<doc_id>.key       its gold keyphrases, one per line (unranked)
      lan.txt                 language code (optional)

The collection plays the part of a movie and each document that of a review
with its own ground truth: the GT rows carry the document's `review_id`, and
the movie is marked unranked (`ranked` False), so every keyphrase has gain 1.
A folder holding several such collections is read as several movies.  The
layout has no predictions: they come from `--predictions NAME=PATH`
(kweval.data.predictions) or the files that lie with the collection
(`kweval.data.beside`: predictions/<model>.<ext>, a predictions table).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from kweval.data.dataset import MODEL_COLUMNS, PREDICTION_COLUMNS, Dataset, Problem, text_of
from kweval.files import not_a_file_reason
from kweval.messages import listed

if TYPE_CHECKING:
    import pandas as pd

DOCS_DIR = "docsutf8"
KEYS_DIR = "keys"
LANGUAGE_FILE = "lan.txt"

# A line ends at \r\n, \r or \n only, as Python's universal newlines and the field's tools read files
# (pke, KPEval, OpenNMT-kpg); str.splitlines would also split on U+0085, U+2028, U+2029, \x0b, \x0c, \x1c-\x1e.
_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def split_lines(text: str) -> list[str]:
    """`text`'s physical lines: split at \\r\\n, \\r and \\n only (docs/protocols.md, "Lines").

    >>> split_lines("form\\x85feeds\\r\\ntopic models\\n")
    ['form\\x85feeds', 'topic models', '']
    """
    return _LINE_BREAK.split(text)


def is_collection(folder: Path) -> bool:
    """Whether `folder` holds `docsutf8/` and `keys/`."""
    return (folder / DOCS_DIR).is_dir() and (folder / KEYS_DIR).is_dir()


def find_collections(folder: Path) -> list[Path]:
    """`folder` itself when it is a collection, else its sub-folders that are (sorted by name); [] if none."""
    if is_collection(folder):
        return [folder]
    try:
        children = sorted(p for p in folder.iterdir() if p.is_dir())
    except OSError:
        return []
    return [p for p in children if is_collection(p)]


def _read_text(path: Path, problems: list[Problem], what: str) -> str | None:
    """The file's UTF-8 text (undecodable bytes replaced, with a note), or None with a problem when unreadable."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        problems.append(Problem(str(path), f"unreadable {what} ({exc.strerror or type(exc).__name__}); skipped"))
        return None
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        problems.append(Problem(str(path), f"{what} is not valid UTF-8; undecodable bytes replaced"))
        return raw.decode("utf-8-sig", errors="replace")


def _language(collection: Path, problems: list[Problem]) -> str | None:
    path = collection / LANGUAGE_FILE
    if not path.is_file():
        return None
    text = _read_text(path, problems, "language file")
    return (text or "").strip() or None


@dataclass(frozen=True)
class Documents:
    """One collection as plain Python: texts and gold keyphrases (file order) by document id, and its language.

    `keys` are the phrases evaluation scores (stripped, blank ones left out); `files` what was read (what the
    protocol card hashes); `raw_keys` the key lists as written (for the ground-truth lint,
    kweval.keyphrase.describe); `titles` the documents' titles where the layout has them apart (the Meng JSON
    layout: `texts` hold title and abstract).
    """

    name: str
    texts: dict[str, str]
    keys: dict[str, list[str]]
    language: str | None
    files: tuple[Path, ...] = ()  # the files read (texts, keys, language): what the protocol card hashes
    raw_keys: dict[str, list[str]] = field(default_factory=dict)
    titles: dict[str, str] = field(default_factory=dict)

    @property
    def doc_ids(self) -> tuple[str, ...]:
        """The documents (those with a readable text), in file-name order."""
        return tuple(self.texts)

    @property
    def gold(self) -> dict[str, list[str]]:
        """Every document's gold keyphrases; [] for one without a key file."""
        return {doc: self.keys.get(doc, []) for doc in self.texts}


def read_documents(collection: Path, problems: list[Problem]) -> Documents:
    """Texts and key lists of one collection (no pandas: the `--protocol` path reads through this alone).

    Documents without a key file get no GT; key files without a document are
    not read (a collection's documents are its texts: nothing would score
    against them); both are reported, naming a handful.  Unreadable files are
    skipped, reported.
    """
    docs = _files(collection / DOCS_DIR, ".txt", problems)
    key_files = _files(collection / KEYS_DIR, ".key", problems)
    texts: dict[str, str] = {}
    for doc_id, path in docs.items():
        text = _read_text(path, problems, "document")
        if text is not None:
            texts[doc_id] = text
    without_keys = [d for d in docs if d not in key_files]
    if without_keys:
        problems.append(
            Problem(
                f"{collection / KEYS_DIR}",
                f"{len(without_keys)} document(s) without a .key file ({listed(without_keys)}); they have no "
                f"ground truth",
            )
        )
    orphans = [d for d in key_files if d not in docs]
    if orphans:
        problems.append(
            Problem(
                f"{collection / KEYS_DIR}",
                f"{len(orphans)} key file(s) without a document in {DOCS_DIR}/ ({listed(orphans)}); not read: "
                "they are no documents of the collection",
            )
        )
        key_files = {d: path for d, path in key_files.items() if d in docs}
    keys: dict[str, list[str]] = {}
    raw_keys: dict[str, list[str]] = {}
    for doc_id, path in key_files.items():
        text = _read_text(path, problems, "key file")
        if text is None:
            continue
        phrases = [line.strip() for line in split_lines(text) if line.strip()]
        if not phrases:
            problems.append(Problem(str(path), "holds no keyphrase; the document has no ground truth"))
        keys[doc_id] = phrases
        raw_keys[doc_id] = raw_key_lines(text)
    read = [p for d, p in docs.items() if d in texts] + [p for d, p in key_files.items() if d in keys]
    language = _language(collection, problems)
    if language is not None:
        read.append(collection / LANGUAGE_FILE)
    return Documents(_collection_name(collection, problems), texts, keys, language, tuple(read), raw_keys=raw_keys)


def _collection_name(collection: Path, problems: list[Problem]) -> str:
    """The folder's name as text: a name that is not UTF-8 gets U+FFFD for its bad bytes (one problem), as every
    table, card and report names the collection."""
    replaced = [0]
    name = text_of(collection.name, replaced)
    if replaced[0]:
        problems.append(Problem(str(collection), f"the folder's name is not UTF-8; the collection is named {name}"))
    return name


def _files(folder: Path, suffix: str, problems: list[Problem]) -> dict[str, Path]:
    """{document id: file} of the `*suffix` files of `folder`, in name order.

    What is not a regular file (a folder named `x.key`, a dangling link, a
    link loop) is left out, in one problem naming a handful of them, each with
    what it is; a file name that is not UTF-8
    gives an id with U+FFFD for its undecodable bytes (one problem), so its
    text and key file still pair up.
    """
    found: dict[str, Path] = {}
    not_files: list[str] = []
    replaced = [0]
    try:
        paths = sorted(folder.glob(f"*{suffix}"))
    except OSError as exc:
        problems.append(Problem(str(folder), f"cannot be listed ({exc.strerror or type(exc).__name__}); skipped"))
        return found
    for path in paths:
        if not path.is_file():  # a folder, a dangling link or a link loop (is_file is False for each)
            not_files.append(f"{path.name} ({not_a_file_reason(path)})")
            continue
        found[text_of(path.stem, replaced)] = path
    if not_files:
        problems.append(
            Problem(
                str(folder),
                f"{len(not_files)} *{suffix} name(s) not a readable file, skipped: {listed(not_files)}",
            )
        )
    if replaced[0]:
        problems.append(
            Problem(str(folder), f"{replaced[0]} file name(s) not UTF-8; their ids have U+FFFD for the bad bytes")
        )
    return found


def raw_key_lines(text: str) -> list[str]:
    """A key file's lines as written, for the lint: split at \\n (a CRLF's \\r dropped, a lone \\r kept inside
    its line, where a reader that splits on \\n alone would leave it), no final empty line."""
    lines = [line[:-1] if line.endswith("\r") else line for line in text.split("\n")]
    return lines[:-1] if lines and lines[-1] == "" else lines


def documents_tables(docs: Documents) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(reviews, ground_truth) of one collection read as `Documents`, as tables (titles where it has them)."""
    import pandas as pd

    reviews = pd.DataFrame(
        [(docs.name, d, t, docs.titles.get(d)) for d, t in docs.texts.items()],
        columns=["movie", "review_id", "text", "title"],
    )
    gt_rows = [(docs.name, d, 0, phrase) for d, phrases in docs.keys.items() for phrase in phrases]
    ground_truth = pd.DataFrame(gt_rows, columns=["movie", "review_id", "rank", "keyword"])
    return reviews, ground_truth


def read_collection(collection: Path, problems: list[Problem]) -> tuple[pd.DataFrame, pd.DataFrame, str | None]:
    """(reviews, ground_truth, language) of one collection, as tables (`read_documents`)."""
    docs = read_documents(collection, problems)
    return (*documents_tables(docs), docs.language)


def read_keyphrase(folder: Path) -> Dataset:
    """Load one collection, or a folder of collections, as a Dataset with per-document, unranked GT.

    GT ranks are positions in the key file (kept for display; the movie's
    `ranked` flag False makes every gain 1).  The prediction files lying with a
    collection are read too (`kweval.data.beside`); otherwise the dataset has no predictions yet.
    """
    from kweval.data.beside import models_beside
    from kweval.data.response_lines import responses_frame

    problems: list[Problem] = []
    collections, predictions, responses = [], [], []
    directions: dict[str, str] = {}
    for collection in find_collections(folder):
        docs = read_documents(collection, problems)
        collections.append(docs)
        files: dict[Path, list[str]] = {}
        for model, path in models_beside(collection, problems):  # kweval.data.beside: which file holds which model
            files.setdefault(path, []).append(model)
        for path, models in files.items():
            one = models[0] if path.parent != collection else None  # a file of predictions/ is one model
            records: list[tuple] = []  # a JSONL file of raw responses: each one's parse, for the explorer
            rows, declared = _predictions_beside(path, docs, problems, one, records)
            rows = rows[rows["model"].isin(models)]
            predictions.append(rows)
            responses += [responses_frame([(docs.name, *r[1:]) for r in records], rows)] if records else []
            directions = {m: d for m, d in declared.items() if m in models} | directions  # the first word wins
    dataset = documents_dataset(collections, predictions, problems, str(folder), directions)
    if responses:
        import pandas as pd

        dataset.responses = pd.concat(responses, ignore_index=True)
    return dataset


def _predictions_beside(
    path: Path, docs: Documents, problems: list[Problem], model: str | None = None, responses: list | None = None
) -> tuple[pd.DataFrame, dict[str, str]]:
    """(rows, declared score directions) of a predictions file lying with a collection (`model`: the model a file of
    predictions/ is; None: a table naming its models): all of its rows are that collection's documents
    (`responses`: as `read_prediction_file`'s)."""
    from kweval.data import predictions as pred_files

    rows, declared = pred_files.read_prediction_file(path, model, problems, docs.name, responses)
    other = sorted({str(m) for m in rows["movie"] if m != docs.name})
    if other:  # the table lies in this collection: its rows are this collection's documents
        problems.append(Problem(str(path), f"movie {other[0]} read as this collection, {docs.name}"))
    known = set(docs.texts)
    unknown = rows["review_id"].map(lambda d: d not in known)
    if unknown.any():
        ids = rows.loc[unknown, "review_id"].drop_duplicates()
        problems.append(
            Problem(str(path), f"{len(ids)} document id(s) not in {docs.name} (e.g. {ids.iloc[0]}); skipped")
        )
        rows = rows[~unknown]
    return rows.assign(movie=docs.name), declared


def documents_dataset(
    collections: list[Documents],
    predictions: list[pd.DataFrame],
    problems: list[Problem],
    source: str,
    directions: Mapping[str, str] | None = None,
) -> Dataset:
    """A Dataset of per-document collections (each one movie, unranked) and the prediction tables found with them.

    `directions`: {model: score direction} the prediction files declare (higher for the others)."""
    import numpy as np
    import pandas as pd

    reviews, gts, movies = [], [], []
    for docs in collections:
        rv, gt = documents_tables(docs)
        reviews.append(rv)
        gts.append(gt)
        movies.append((docs.name, docs.name, False, docs.language))
    review_table = (
        pd.concat(reviews, ignore_index=True)
        if reviews
        else pd.DataFrame(columns=["movie", "review_id", "text", "title"])
    )
    review_table = review_table.assign(rating=np.nan)[["movie", "review_id", "text", "title", "rating"]]
    gt_table = (
        pd.concat(gts, ignore_index=True) if gts else pd.DataFrame(columns=["movie", "review_id", "rank", "keyword"])
    )
    gt_table["rank"] = gt_table.groupby(["movie", "review_id"], sort=False).cumcount().astype("int64")
    gt_table = gt_table.assign(helpful=np.nan, not_helpful=np.nan)[
        ["movie", "rank", "keyword", "helpful", "not_helpful", "review_id"]
    ]
    pred_table = (
        pd.concat(predictions, ignore_index=True)
        if predictions
        else pd.DataFrame({c: pd.Series(dtype="object") for c in PREDICTION_COLUMNS})
    )
    models = list(dict.fromkeys(pred_table["model"].tolist()))
    return Dataset(
        movies=pd.DataFrame(movies, columns=["movie", "title", "ranked", "language"]),
        reviews=review_table,
        predictions=pred_table,
        ground_truth=gt_table.reset_index(drop=True),
        models=pd.DataFrame(
            {"model": models, "score_direction": [(directions or {}).get(m, "higher") for m in models]},
            columns=MODEL_COLUMNS,
        ),
        problems=problems,
        source=source,
    )
