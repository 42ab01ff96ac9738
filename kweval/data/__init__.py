"""Datasets: the `Dataset` tables and `load_dataset`, which detects the layout."""

from __future__ import annotations

import errno
from collections.abc import Mapping
from pathlib import Path

from kweval.data.dataset import Dataset, Problem

__all__ = [
    "Dataset",
    "Problem",
    "DatasetError",
    "load_dataset",
    "movie_file_sizes",
    "demo_path",
    "detect_layout",
    "read_per_document",
    "read_per_document_collections",
]

DEMO_DIR = Path(__file__).parent / "demo"


class DatasetError(Exception):
    """The path given cannot be read as any dataset layout (a usage error, not a data problem)."""


def demo_path() -> Path:
    """Folder of the embedded demo dataset (tidy layout)."""
    return DEMO_DIR


def detect_layout(path: Path) -> str:
    """'tidy', 'dnlp', 'keyphrase' (docsutf8/ + keys/) or 'meng' (JSON with title, abstract, keywords: a
    .json/.jsonl file, or a folder of them) for a path holding a dataset; raises DatasetError otherwise."""
    from kweval.data import dnlp, keyphrase, meng, tidy

    try:
        path.stat()
    except FileNotFoundError:
        raise DatasetError(f"{path}: no such file or folder") from None
    except OSError as exc:
        reason = "a path longer than the system allows" if exc.errno == errno.ENAMETOOLONG else exc.strerror or str(exc)
        raise DatasetError(f"{path}: cannot be read ({reason})") from None
    if not path.is_dir():
        if path.suffix.lower() in meng.SUFFIXES:
            return "meng"
        raise DatasetError(
            f"{path}: expected a folder (tidy tables, the DNLP Dataset/ layout, docsutf8/ + keys/) or a .json/.jsonl "
            "file of documents with title, abstract and keywords"
        )
    if tidy.is_tidy(path) and not (keyphrase.is_collection(path) and "ground_truth" not in tidy.table_files(path)):
        return "tidy"  # a collection's own predictions table (docsutf8/ + keys/ + predictions.csv) is no tidy dataset
    if dnlp.find_root(path) is not None:
        return "dnlp"
    if keyphrase.find_collections(path):
        return "keyphrase"
    if meng.looks_like_meng(path):
        return "meng"
    raise DatasetError(
        f"{path}: not a dataset folder: expected predictions.parquet/.csv (tidy layout), "
        "Extracted_Keywords/ (DNLP layout), docsutf8/ + keys/ (keyphrase benchmark layout) or .json/.jsonl files "
        "with title, abstract and keywords (keyphrase-generation layout)"
    )


def load_dataset(
    path: str | Path | None = None, movies: list[str] | None = None, predictions: Mapping[str, str | Path] | None = None
) -> Dataset:
    """Load a dataset folder or Meng-layout JSON file (layout auto-detected), or the embedded demo when `path` is None.

    `movies`, when given, keeps only those movies (a layout with a file per
    movie reads only their files).  `predictions` ({model name: JSONL or tidy
    predictions file}) adds (or replaces) those models' predictions, in any layout.
    """
    from kweval.data import dnlp, keyphrase, meng, tidy
    from kweval.data.predictions import attach_predictions

    folder = Path(path) if path is not None else DEMO_DIR
    layout = detect_layout(folder)
    if layout == "tidy":
        ds = tidy.read_tidy(folder)
        if path is None:
            ds.source = "demo"
    elif layout == "keyphrase":
        ds = keyphrase.read_keyphrase(folder)
    elif layout == "meng":
        ds = meng.read_meng(folder)
    else:
        ds = dnlp.read_dnlp(folder, movies)
    if predictions:
        ds = attach_predictions(ds, {name: Path(p) for name, p in predictions.items()})
    return ds if movies is None or layout == "dnlp" else ds.subset(movies)


def movie_file_sizes(path: str | Path | None) -> dict[str, int] | None:
    """Movie -> size in bytes of its own file, for a layout with a file per movie (DNLP); None otherwise.

    Lets a caller share out movies (kweval.scale.parallel) before reading anything.
    """
    from kweval.data import dnlp

    if path is None or detect_layout(Path(path)) != "dnlp":
        return None
    root = dnlp.find_root(Path(path)) or Path(path)
    return {movie: dnlp.file_size(file) for movie, file in dnlp.movie_files(root).items()}


def read_per_document(path: str | Path, problems: list[Problem]):
    """The one per-document collection at `path` as plain Python (`kweval.data.keyphrase.Documents`), or None.

    A docsutf8/ + keys/ folder, or a Meng-layout .json/.jsonl file (or a folder
    holding exactly one); not a predictions file (`meng.holds_predictions`).
    No pandas: the `--protocol` path, `kweval describe` and `kweval extract`
    read through this.
    """
    from kweval.data import keyphrase, meng

    folder = Path(path)
    if folder.is_dir() and keyphrase.is_collection(folder):
        return keyphrase.read_documents(folder, problems)
    files = meng.layout_files(folder) if folder.is_file() or meng.looks_like_meng(folder) else []
    if len(files) != 1 or meng.holds_predictions(files[0]):
        return None
    return meng.read_file(files[0], problems)


def read_per_document_collections(path: str | Path, problems: list[Problem]):
    """Every per-document collection at `path` as `Documents` (docsutf8/ + keys/ folders, or Meng-layout JSON
    files); None when `path` holds neither.  No pandas."""
    from kweval.data import keyphrase, meng

    folder = Path(path)
    found = keyphrase.find_collections(folder) if folder.is_dir() else []
    if found:
        return [keyphrase.read_documents(collection, problems) for collection in found]
    if (folder.is_file() and folder.suffix.lower() in meng.SUFFIXES) or (
        folder.is_dir() and meng.looks_like_meng(folder)
    ):
        return meng.read_collections(folder, problems)
    return None
