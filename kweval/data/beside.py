"""The prediction files that lie with a keyphrase collection, read by every command and the dashboard.

Beside ``docsutf8/`` and ``keys/`` a collection may hold:

- a folder ``predictions/`` with **one file per model**, the file's name the model's name:
  ``predictions/yake.jsonl``, ``predictions/firstphrases.csv`` (JSONL or a tidy table, as
  ``--predictions NAME=PATH`` reads them).  A table there whose ``model`` column names one other
  model is still read as the file's model (said in one line); one that names several is skipped
  (said), since a file there is one model.
- a tidy table ``predictions.parquet`` (preferred) or ``predictions.csv`` whose ``model`` column
  names its models.

A ``predictions.jsonl`` beside ``docsutf8/`` names no model (a JSONL file is one model, named by
its file), so it is not read as a model called "predictions": one line says to move it to
``predictions/<model>.jsonl``.  A model found in both places is read from ``predictions/`` (said).
Other files in ``predictions/`` are named and ignored; hidden ones (``.DS_Store``) silently.
"""

from __future__ import annotations

from pathlib import Path

from kweval.data.dataset import Problem

PREDICTIONS_DIR = "predictions"
TABLE_NAMES = ("predictions.parquet", "predictions.csv")
MODEL_SUFFIXES = (".jsonl", ".json", ".ndjson", ".parquet", ".csv")  # a model's file in predictions/


def table_beside(folder: Path) -> Path | None:
    """The predictions table beside docsutf8/ (`TABLE_NAMES`, the first found), or None."""
    return next((folder / name for name in TABLE_NAMES if (folder / name).is_file()), None)


def folder_files(folder: Path, problems: list[Problem] | None = None) -> list[Path]:
    """The model files of `folder`/predictions/, sorted by name; other visible files are named in `problems`."""
    where = folder / PREDICTIONS_DIR
    try:
        found = sorted(p for p in where.iterdir() if not p.name.startswith("."))
    except OSError:  # no such folder (or unreadable: said by the files it would have held)
        return []
    files = [p for p in found if p.is_file() and p.suffix.lower() in MODEL_SUFFIXES]
    if problems is not None:
        for other in (p for p in found if p not in files):
            problems.append(
                Problem(str(other), f"not a model's predictions file ({', '.join(MODEL_SUFFIXES)}); ignored")
            )
    return files


def input_files(folder: Path) -> list[Path]:
    """Every prediction file read with the collection in `folder` (what its protocol card hashes)."""
    table = table_beside(folder)
    return [*([table] if table is not None else []), *folder_files(folder)]


def _folder_model(path: Path, problems: list[Problem]) -> tuple[str, Path] | None:
    """(model, file) of one file of predictions/: the model is the file's name; a table naming several models in its
    ``model`` column is skipped, one naming another model is read as the file's (both said)."""
    from kweval.data.predictions import TABLE_SUFFIXES, read_predictions

    name = path.stem
    if path.suffix.lower() in TABLE_SUFFIXES:
        named = [str(m) for m in dict.fromkeys(read_predictions(path, None, []).get("model", []))]
        if len(named) > 1:
            problems.append(
                Problem(
                    str(path),
                    f"names {len(named)} models in its model column; a file in predictions/ is one "
                    "model (its file name): skipped",
                )
            )
            return None
        if named and named[0] != name:
            problems.append(Problem(str(path), f"model column says {named[0]}: read as {name}, the file's name"))
    return name, path


def models_beside(folder: Path, problems: list[Problem]) -> list[tuple[str, Path]]:
    """(model, file) of every model whose predictions lie with the collection in `folder`: those of its predictions
    table, then one per file of predictions/ (which wins over the table for the same model); reasons in
    `problems`."""
    from kweval.data.predictions import read_predictions

    if (folder / "predictions.jsonl").is_file():
        problems.append(
            Problem(
                str(folder / "predictions.jsonl"),
                "a JSONL file is one model, named by its file: move it to predictions/<model>.jsonl; not read",
            )
        )
    found: dict[str, Path] = {}
    table = table_beside(folder)
    if table is not None:
        attempt: list[Problem] = []  # said when its rows are read; here only when it gives no model at all
        for model in dict.fromkeys(read_predictions(table, None, attempt)["model"]):
            found[str(model)] = table
        if not found:
            problems.extend(attempt)
    for path in folder_files(folder, problems):
        entry = _folder_model(path, problems)
        if entry is None:
            continue
        model, file = entry
        if model in found and found[model] != file:
            problems.append(Problem(str(file), f"model {model} is also in {found[model].name}: this file is used"))
        found[model] = file
    return list(found.items())
