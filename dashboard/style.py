"""Colours, labels and emphasis shared by the pages' tables and charts (both themes)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from kweval.data.vocabulary import MOVIE_WORDS, Vocabulary
from kweval.io.report import best_rows
from kweval.metrics import registry

# Mid-luminance hues: contrast ≥ 3 against both a white and Streamlit's dark background (#0E1117),
# so one map serves both themes and a model keeps its colour when the theme changes.
MODEL_PALETTE = ("#4E79A7", "#D95F02", "#1B9E77", "#E7298A", "#7570B3", "#A6761D", "#D62728", "#CC79A7")


FLAG_BACKGROUND = "rgba(214, 39, 40, 0.22)"  # rows to notice: translucent, so legible on light and dark themes


def model_colors(models: Sequence[str]) -> dict[str, str]:
    """{model: colour} by the model's place in the dataset's model list (not the selection), so it never shifts."""
    return {m: MODEL_PALETTE[i % len(MODEL_PALETTE)] for i, m in enumerate(dict.fromkeys(models))}


def metric_label(metric: str) -> str:
    """The registry's label of a column (the column name when unregistered)."""
    entry = registry.info(metric)
    return entry.label if entry is not None else metric


def axis_title(metric: str, agg: str, words: Vocabulary = MOVIE_WORDS) -> str:
    """An axis title naming the metric and how reviews were aggregated (ranking metrics and SAS are means in both
    modes), in the data's `words`."""
    entry = registry.info(metric)
    if agg == "micro" and entry is not None and entry.group in ("set", "semantic"):
        how = "micro: from counts summed over reviews"
    elif entry is not None and entry.group == "coverage":
        how = "per movie"
    else:
        how = "mean over reviews"
    return words.say(f"{metric_label(metric)} ({how})")


def best_mask(table: pd.DataFrame) -> pd.DataFrame:
    """True where a cell holds its column's best value among its movie's rows (`kweval.io.report.best_rows`)."""
    frame = table.reset_index(drop=True)
    cells = np.zeros(frame.shape, dtype=bool)
    for col, rows in best_rows(frame).items():
        cells[sorted(rows), frame.columns.get_loc(col)] = True
    return pd.DataFrame(cells, index=table.index, columns=table.columns)


def best_styles(table: pd.DataFrame) -> pd.DataFrame:
    """CSS per cell for `DataFrame.style.apply(..., axis=None)`: the best value per movie and column in bold."""
    return best_mask(table).replace({True: "font-weight: 700", False: ""}).astype(object)


def jitter(values: Sequence[float], amount: float = 0.01, seed: int = 0) -> list[float]:
    """`values` plus seeded uniform noise in [−amount, amount]: overlapping scatter points become visible."""
    x = np.asarray(values, dtype="float64")
    return (x + np.random.default_rng(seed).uniform(-amount, amount, size=x.shape)).tolist()


# Compare's verdict matrix: B's outcome against the reference (kweval.stats.verdict.OUTCOMES), translucent so that the
# text stays legible on both themes; significant outcomes are stronger than the not-significant leanings.
OUTCOME_BACKGROUND = {
    "win": "rgba(27, 158, 119, 0.55)",
    "ahead (n.s.)": "rgba(27, 158, 119, 0.18)",
    "loss": "rgba(214, 39, 40, 0.50)",
    "behind (n.s.)": "rgba(214, 39, 40, 0.16)",
    "tie": "rgba(128, 128, 128, 0.15)",
}


def outcome_styles(outcomes: pd.DataFrame) -> pd.DataFrame:
    """CSS per cell of a verdict matrix (`kweval.stats.verdict.verdict_matrix(table, "outcome")`): its background."""
    return outcomes.apply(
        lambda col: [f"background-color: {OUTCOME_BACKGROUND[o]}" if o in OUTCOME_BACKGROUND else "" for o in col]
    ).astype(object)
