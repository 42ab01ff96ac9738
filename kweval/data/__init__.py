"""Datasets: the `Dataset` tables and `load_dataset`, which detects the layout."""

from __future__ import annotations

import errno
from collections.abc import Mapping
from pathlib import Path

from kweval.data.dataset import Dataset, Problem

__all__ = ["Dataset", "Problem", "DatasetError", "load_dataset", "movie_file_sizes", "demo_path", "detect_layout"]

DEMO_DIR = Path(__file__).parent / "demo"


class DatasetError(Exception):
    """The path given cannot be read as any dataset layout (a usage error, not a data problem)."""


def demo_path() -> Path:
    """Folder of the embedded demo dataset (tidy layout)."""
    return DEMO_DIR


def detect_layout(path: Path) -> str:
    """'tidy', 'dnlp' or 'keyphrase' (docsutf8/ + keys/) for a folder holding a dataset; raises DatasetError
    otherwise."""
    from kweval.data import dnlp, keyphrase, tidy

    try:
        path.stat()
    except FileNotFoundError:
        raise DatasetError(f"{path}: no such file or folder") from None
    except OSError as exc:
        reason = "a path longer than the system allows" if exc.errno == errno.ENAMETOOLONG else exc.strerror or str(exc)
        raise DatasetError(f"{path}: cannot be read ({reason})") from None
    if not path.is_dir():
        raise DatasetError(f"{path}: expected a folder (tidy tables, or the DNLP Dataset/ layout)")
    if tidy.is_tidy(path):
        return "tidy"
    if dnlp.find_root(path) is not None:
        return "dnlp"
    if keyphrase.find_collections(path):
        return "keyphrase"
    raise DatasetError(
        f"{path}: not a dataset folder: expected predictions.parquet/.csv (tidy layout), "
        "Extracted_Keywords/ (DNLP layout) or docsutf8/ + keys/ (keyphrase benchmark layout)"
    )


def load_dataset(
    path: str | Path | None = None, movies: list[str] | None = None, predictions: Mapping[str, str | Path] | None = None
) -> Dataset:
    """Load a dataset folder (layout auto-detected), or the embedded demo when `path` is None.

    `movies`, when given, keeps only those movies (a layout with a file per
    movie reads only their files).  `predictions` ({model name: JSONL or tidy
    predictions file}) adds (or replaces) those models' predictions, in any layout.
    """
    from kweval.data import dnlp, keyphrase, tidy
    from kweval.data.predictions import attach_predictions

    folder = Path(path) if path is not None else DEMO_DIR
    layout = detect_layout(folder)
    if layout == "tidy":
        ds = tidy.read_tidy(folder)
        if path is None:
            ds.source = "demo"
    elif layout == "keyphrase":
        ds = keyphrase.read_keyphrase(folder)
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
