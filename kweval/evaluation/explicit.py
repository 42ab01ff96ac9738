"""Explicit GT relevances (a judged ground truth, docs/metrics.md §11), as the count stage and ranking family read them.

A GT table with a `relevance` column gives each GT keyword its relevance
instead of `1 / log2(j + 2)` of its rank (`kweval.metrics.weighted.relevance`).
Each list must be ordered by relevance, highest first (the judged GT is:
`kweval.judgments.combine`), so its first k rows are its ideal top k.  The
pipeline is otherwise unchanged: one metric engine for reference and judged GT.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kweval.metrics import ranking


@dataclass
class ExplicitRelevance:
    """Every evaluated GT row's relevance, movie after movie, and where each movie's rows start."""

    values: np.ndarray  # float64, the evaluated movies' GT rows in evaluation order
    movie_start: np.ndarray  # per evaluated movie: where its rows start in `values`

    @classmethod
    def of(cls, relevance: dict[str, np.ndarray] | None, movies: list[str]) -> ExplicitRelevance | None:
        """From `CleanGroundTruth.relevance` (None: the GT has none, relevances come from ranks)."""
        if relevance is None:
            return None
        parts = [np.nan_to_num(np.asarray(relevance[m], dtype="float64"), nan=0.0).clip(min=0.0) for m in movies]
        sizes = np.array([len(p) for p in parts], dtype=np.int64)
        start = np.concatenate(([0], np.cumsum(sizes)[:-1])).astype(np.int64)
        return cls(np.concatenate(parts) if parts else np.zeros(0), start)

    def of_pairs(self, group_movie: np.ndarray, pair_group: np.ndarray, pair_gt_pos: np.ndarray) -> np.ndarray:
        """Per matched pair: its GT keyword's relevance."""
        return self.values[self.movie_start[group_movie[pair_group]] + pair_gt_pos]

    def gain_sums(self, starts: np.ndarray, n_gt: np.ndarray, gain: str) -> np.ndarray:
        """Per group: Σ gain over its list (the denominator of w_recall); `starts` from `list_starts`."""
        cumulative = np.concatenate(([0.0], np.cumsum(ranking.apply_gain(self.values, gain))))
        return cumulative[starts + n_gt] - cumulative[starts]

    def list_starts(self, group_movie: np.ndarray, group_gt_start: np.ndarray) -> np.ndarray:
        """Per group: where its GT list starts in `values`."""
        return (self.movie_start[group_movie] + group_gt_start).astype(np.int64)

    def ideal(self, starts: np.ndarray, n_gt: np.ndarray, k: int) -> np.ndarray:
        """(groups × min(k, longest list)): each list's first k relevances (its largest), zero-padded."""
        width = max(min(k, int(n_gt.max()) if len(n_gt) else 0), 1)
        column = np.arange(width)[None, :]
        inside = column < np.asarray(n_gt)[:, None]
        at = np.where(inside, starts[:, None] + column, 0)
        return np.where(inside, self.values[at] if len(self.values) else 0.0, 0.0)
