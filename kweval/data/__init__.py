"""Datasets: the `Dataset` tables and `load_dataset`, which detects the layout."""

from __future__ import annotations

from pathlib import Path

from kweval.data.dataset import Dataset, Problem

__all__ = ["Dataset", "Problem", "DatasetError", "load_dataset", "demo_path", "detect_layout"]

DEMO_DIR = Path(__file__).parent / "demo"


class DatasetError(Exception):
    """The path given cannot be read as any dataset layout (a usage error, not a data problem)."""


def demo_path() -> Path:
    """Folder of the embedded demo dataset (tidy layout)."""
    return DEMO_DIR


def detect_layout(path: Path) -> str:
    """'tidy' or 'dnlp' for a folder holding a dataset; raises DatasetError otherwise."""
    from kweval.data import dnlp, tidy

    if not path.exists():
        raise DatasetError(f"{path}: no such file or folder")
    if not path.is_dir():
        raise DatasetError(f"{path}: expected a folder (tidy tables, or the DNLP Dataset/ layout)")
    if tidy.is_tidy(path):
        return "tidy"
    if dnlp.find_root(path) is not None:
        return "dnlp"
    raise DatasetError(
        f"{path}: not a dataset folder: expected predictions.parquet/.csv (tidy layout) "
        "or Extracted_Keywords/ (DNLP layout)"
    )


def load_dataset(path: str | Path | None = None) -> Dataset:
    """Load a dataset folder (layout auto-detected), or the embedded demo when `path` is None."""
    from kweval.data import dnlp, tidy

    folder = Path(path) if path is not None else DEMO_DIR
    layout = detect_layout(folder)
    if layout == "tidy":
        ds = tidy.read_tidy(folder)
        if path is None:
            ds.source = "demo"
        return ds
    return dnlp.read_dnlp(folder)
