"""What the per-review metric families read: one bundle of counts and matched pairs, and the ranking settings.

The evaluation pipeline's count stage fills a `ReviewCounts` (one entry per
review × model, or per matched pair); every family of `kweval.metrics`
turns it into its columns through a `from_counts` function, which the
registry names for each metric (`MetricInfo.compute`).  A family is a plain
function of these arrays, so a new metric is one registry entry.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class ReviewCounts:
    """Per review (one entry per review × model) and per matched pair (i, j) ∈ M, the inputs of every metric."""

    n_pred: np.ndarray  # |P|
    n_gt: np.ndarray  # |G|
    n_matched: np.ndarray  # |M|
    score_sum: np.ndarray  # Σ confidences of the predictions
    matched_score: np.ndarray  # Σ confidences of the matched predictions
    gain_sum: np.ndarray  # Σ gains of the GT keywords
    matched_gain: np.ndarray  # Σ gains of the matched GT keywords
    pair_review: np.ndarray  # per pair: its review
    pair_position: np.ndarray  # per pair: i, the prediction's 0-based rank after cleaning
    pair_gt_rank: np.ndarray  # per pair: j, the GT keyword's 0-based rank in the review's list
    ranked: np.ndarray | None = None  # per review: whether its GT is ranked (None: all are)
    n_gt_present: np.ndarray | None = None  # per review: GT keywords in its text, -1 without text (--present)
    pair_present: np.ndarray | None = None  # per pair: its GT keyword occurs in the review's text (--present)
    pair_relevance: np.ndarray | None = None  # per pair: explicit relevance (judged GT, §11); None: from gt_rank
    ideal_relevance: np.ndarray | None = None  # per review: its list's top-k explicit relevances (with pair_relevance)


@dataclass(frozen=True)
class Settings:
    """The options metrics depend on besides the data: the cut-off and nDCG's gain and discount."""

    k: int = 5
    gain: str = "linear"
    discount: str = "log2"
