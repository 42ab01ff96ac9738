"""Two models' values on the reviews both were evaluated on, row by row: what every paired comparison reads.

`paired.paired_scores` gives them as a frame (A's and B's metrics side by side, a merge on movie and review_id);
the comparisons themselves read arrays.  `align_pair` gives the arrays (`AlignedPair`) without the frame, with the
rows paired as that merge pairs them (`pair_rows`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

PAIR_KEY = ["movie", "review_id"]


@dataclass(frozen=True)
class AlignedPair:
    """A's and B's values of `metrics` (reviews × metrics, float64) on the reviews both were evaluated on, one row per
    review, in `pair_rows`' order."""

    metrics: tuple[str, ...]
    a: np.ndarray
    b: np.ndarray

    def columns(self, metrics: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """(A's, B's) columns of `metrics` (all among `self.metrics`), in that order."""
        where = {m: i for i, m in enumerate(self.metrics)}
        index = [where[m] for m in metrics]
        return self.a[:, index], self.b[:, index]


def pair_rows(scores: pd.DataFrame, a: str, b: str) -> tuple[np.ndarray, np.ndarray]:
    """(positions of A's rows, positions of B's rows) in `scores` on the reviews both were evaluated on, paired as the
    inner merge of A's rows with B's on movie and review_id pairs them (`merged_rows`: A's order, a review held twice
    on a side paired every way).

    Speed trick "same reviews, same order": where A and B hold the same reviews in the same order, each once (an
    evaluation of every model on every review), the pairs are A's rows and B's rows as they are, found by comparing
    the keys instead of merging on them (a merge is ~10 ms a pair on DNLP).  Reference: `merged_rows`
    (tests/test_stats.py)."""
    model = scores["model"]
    rows_a, rows_b = np.flatnonzero((model == a).to_numpy()), np.flatnonzero((model == b).to_numpy())
    if len(rows_a) == len(rows_b):
        keys = [scores[k].to_numpy() for k in PAIR_KEY]
        if all(np.array_equal(k[rows_a], k[rows_b]) for k in keys):
            if not pd.MultiIndex.from_arrays([k[rows_a] for k in keys]).has_duplicates:
                return rows_a, rows_b
    return merged_rows(scores, a, b)


def merged_rows(scores: pd.DataFrame, a: str, b: str) -> tuple[np.ndarray, np.ndarray]:
    """`pair_rows` by its definition: the rows' positions carried through the merge of A's keys with B's."""
    is_a, is_b = (scores["model"] == a).to_numpy(), (scores["model"] == b).to_numpy()
    left = scores.loc[is_a, PAIR_KEY].assign(_row_a=np.flatnonzero(is_a))
    right = scores.loc[is_b, PAIR_KEY].assign(_row_b=np.flatnonzero(is_b))
    both = left.merge(right, on=PAIR_KEY)
    return both["_row_a"].to_numpy(dtype="int64"), both["_row_b"].to_numpy(dtype="int64")


def align_pair(scores: pd.DataFrame, a: str, b: str, metrics: Sequence[str]) -> AlignedPair:
    """A's and B's values of `metrics` on the reviews both were evaluated on (the values of `paired_scores`' frame)."""
    metrics = list(dict.fromkeys(metrics))
    rows_a, rows_b = pair_rows(scores, a, b)
    values = scores[metrics].to_numpy(dtype="float64") if metrics else np.zeros((len(scores), 0))
    return AlignedPair(tuple(metrics), values[rows_a], values[rows_b])
