"""The score direction a prediction file declares: a JSONL line's ``score_direction``, a table's column.

"higher" (the default) or "lower" is better.  The first value a file gives
for a model is used; a line or row that contradicts it, or a value other than
higher/lower, is a problem.  The direction decides the order of the weighted
metrics' scores (`kweval.evaluation.count`), never the ranking.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from kweval.data.dataset import SCORE_DIRECTIONS, Problem

if TYPE_CHECKING:  # pandas only where a table is read
    import pandas as pd

DIRECTION_KEY = "score_direction"  # a JSONL field and a table column: "higher" (default) or "lower" is better


def declared_direction(value: object, where: str, first: str | None, bad: list[str]) -> str | None:
    """The score direction a line or row declares (`value`), checked: "higher"/"lower", or None (not declared).

    `first` is the direction the file declared first; a different one, or a
    value that is neither, is one message in `bad` and is not used.
    """
    if value is None or (isinstance(value, float) and value != value):
        return None
    direction = value.strip().lower() if isinstance(value, str) else None
    if direction not in SCORE_DIRECTIONS:
        bad.append(f"{where}: {DIRECTION_KEY} {str(value)[:40]!r} is not higher/lower; ignored")
        return None
    if first is not None and direction != first:
        bad.append(f"{where}: {DIRECTION_KEY} {direction} contradicts the file's first ({first}); the first is used")
        return None
    return direction


def table_directions(models: pd.Series, column: pd.Series | None, path: Path, problems: list[Problem]) -> dict:
    """{model: direction} from a table's ``score_direction`` column (each model's first value; conflicts reported)."""
    if column is None:
        return {}
    directions: dict[str, str] = {}
    bad: list[str] = []
    pairs = dict.fromkeys(zip(models, column))  # distinct (model, value) pairs in file order
    for name, value in pairs:
        if not isinstance(name, str) or (isinstance(value, str) and not value.strip()):
            continue
        found = declared_direction(value, f"model {name}", directions.get(name), bad)
        if found is not None:
            directions[name] = found
    for message in dict.fromkeys(bad):
        where, reason = message.split(": ", 1)
        problems.append(Problem(f"{path}: {where}", reason))
    return directions
