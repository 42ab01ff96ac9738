"""The count stage: confidences and the per-review × model counts every metric reads (docs/metrics.md §1, §3).

A score becomes a confidence (the score itself; 1 / (1 + score) for a
"lower is better" model; 0 when missing, non-numeric, non-finite or
negative), and each review × model group gets |P|, |G|, |M|, the sums of
confidences and of gains, matched and in all.  The matched rows alone
(`MatchedPairs`) are all that scoring and GT coverage read afterwards, so
the per-row arrays can go (`without_row_arrays`) before the per-review
table, about as large, is built.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from kweval._arrays import group_sum, object_array
from kweval.data.dataset import Dataset, Problem
from kweval.evaluation.clean import CleanGroundTruth
from kweval.evaluation.combine import summable
from kweval.evaluation.explicit import ExplicitRelevance
from kweval.evaluation.match import Matches, RowBuffers
from kweval.metrics import ranking
from kweval.metrics.weighted import gt_gain_total, relevance


@dataclass
class MatchedPairs:
    """The matched rows alone (the pairs M): all that scoring and GT coverage read once the counts are made."""

    grp: np.ndarray  # per pair: its review × model group
    position: np.ndarray  # per pair: the predicted keyword's position in its list (0-based rank after cleaning)
    gt_rank: np.ndarray  # per pair: the GT keyword's rank in the group's own list
    gt_pos: np.ndarray  # per pair: the GT row's position among the movie's GT rows
    relevance: np.ndarray | None = None  # per pair: its GT keyword's explicit relevance (judged GT), else None


@dataclass
class Counts:
    """Per-row confidences, the matched pairs and per-group counts and sums: the inputs of every per-review metric."""

    bad_score: np.ndarray  # per row: the score was missing, non-numeric, non-finite or negative
    confidence: np.ndarray  # per row: s_i
    pairs: MatchedPairs
    group_ranked: np.ndarray | None  # per group: whether its GT is ranked; None when all are
    counts: dict[str, np.ndarray]  # n_pred, n_gt, n_matched, n_bad_scores, score_sum, matched_score, gain_sum, ...
    score_exponent: int  # score_sum and matched_score are in units of 2**score_exponent
    ideal: np.ndarray | None = None  # explicit relevances: per group, its list's top-k relevances (else None)


def confidences(dataset: Dataset, matches: Matches) -> tuple[np.ndarray, np.ndarray]:
    """(per row: the confidence s_i; per row: whether its score was invalid and counted as 0) (docs/metrics.md §1).

    The confidence is the score, 1 / (1 + score) for "lower is better" models, 0 for an invalid score.
    """
    grp, score_raw = matches.rows.grp, matches.rows.score
    direction = dict(zip(dataset.models["model"], dataset.models["score_direction"]))
    model_order = dataset.models["model"].tolist()
    lower_model = np.array(
        [d == "lower" for d in pd.Series(model_order, dtype=object).map(direction).tolist()], dtype=bool
    )
    with np.errstate(invalid="ignore"):
        bad_score = ~np.isfinite(score_raw) | (score_raw < 0)
    confidence = score_raw.copy()
    if lower_model.any() and len(grp):
        lower_rows = np.flatnonzero(lower_model[matches.group_model[grp]])
        with np.errstate(invalid="ignore", divide="ignore"):
            confidence[lower_rows] = 1.0 / (1.0 + score_raw[lower_rows])
    confidence[bad_score] = 0.0
    return confidence, bad_score


def count_stage(dataset: Dataset, gt: CleanGroundTruth, matches: Matches, gain: str, k: int = 5) -> Counts:
    """Confidences (docs/metrics.md §1: invalid scores count as 0) and the per-group counts and sums of §3.

    Relevances come from GT ranks, or from the GT's explicit relevances (a judged GT, §11: then `k` sizes the
    per-group ideal lists the ranking family reads)."""
    rows, n_groups, n_gt = matches.rows, matches.n_groups, matches.n_gt
    grp = rows.grp
    confidence, bad_score = confidences(dataset, matches)
    weight, score_exponent = summable(confidence)
    ranked_movie = np.array([gt.ranked.get(m, True) for m in gt.movies], dtype=bool)
    group_ranked = None if ranked_movie.all() else ranked_movie[matches.group_movie]  # None: all ranked (graded gains)
    matched = matches.gt_rank >= 0
    pairs = MatchedPairs(
        grp=grp[matched].astype(np.int64),
        position=rows.position[matched].astype(np.int64),
        gt_rank=matches.gt_rank[matched].astype(np.int64),
        gt_pos=matches.gt_pos[matched].astype(np.int64),
    )
    m_grp = pairs.grp
    explicit = ExplicitRelevance.of(gt.relevance, gt.movies)
    ideal = None
    if explicit is None:
        rel = relevance(pairs.gt_rank, None if group_ranked is None else group_ranked[m_grp])
        gain_sum = gt_gain_total(n_gt, gain, group_ranked)
    else:
        starts = explicit.list_starts(matches.group_movie, matches.group_gt_start)
        rel = pairs.relevance = explicit.of_pairs(matches.group_movie, m_grp, pairs.gt_pos)
        gain_sum, ideal = explicit.gain_sums(starts, n_gt, gain), explicit.ideal(starts, n_gt, k)
    gains = ranking.apply_gain(rel, gain)
    counts = {
        "n_pred": np.bincount(grp, minlength=n_groups).astype("int64"),
        "n_gt": n_gt,
        "n_matched": np.bincount(m_grp, minlength=n_groups).astype("int64"),
        "n_bad_scores": np.bincount(grp[bad_score], minlength=n_groups).astype("int64"),
        "score_sum": group_sum(grp, weight, n_groups),
        "matched_score": group_sum(m_grp, weight[matched], n_groups),
        "gain_sum": gain_sum,
        "matched_gain": group_sum(m_grp, gains, n_groups),
    }
    return Counts(bad_score, confidence, pairs, group_ranked, counts, score_exponent, ideal)


def report_dropped(matches: Matches, movie_problems: dict[str, list[Problem]]) -> None:
    """Note, per movie, the predicted keywords cleaning dropped (empty after normalization, repeated in a list)."""
    for movie, n_empty, n_repeated in matches.dropped:
        if n_empty or n_repeated:
            reason = (
                f"{n_empty} keyword(s) empty after normalization and {n_repeated} repeated keyword(s) within a "
                f"review were dropped"
            )
            movie_problems[movie].append(Problem(movie, reason, "evaluate"))


def report_bad_scores(
    gt: CleanGroundTruth,
    matches: Matches,
    counts: Counts,
    model_order: list[str],
    movie_problems: dict[str, list[Problem]],
) -> None:
    """Note, per movie and model, the scores counted as 0 (docs/metrics.md §1)."""
    if not counts.bad_score.any():
        return
    model_names = object_array(model_order)
    group_movie, group_model = matches.group_movie, matches.group_model
    bad_groups = matches.rows.grp[counts.bad_score]
    for mi in np.unique(group_movie[bad_groups]).tolist():
        in_movie = bad_groups[group_movie[bad_groups] == mi]
        per_model = pd.Series(model_names[group_model[in_movie]]).value_counts()
        reason = (
            f"{len(in_movie)} score(s) missing, non-numeric, non-finite or negative were counted as 0 ("
            + ", ".join(f"{m}: {c}" for m, c in per_model.items())
            + ")"
        )
        movie_problems[gt.movies[mi]].append(Problem(gt.movies[mi], reason, "evaluate"))


def without_row_arrays(matches: Matches, counts: Counts) -> tuple[Matches, Counts]:
    """`matches` and `counts` without their per-row arrays (a row per predicted keyword).

    Only the per-keyword table reads them after counting.  At a million
    reviews they are about as large as the per-review table; dropping them
    first keeps the two from adding up at the peak.  (Memory only: no number
    changes.)
    """
    return (
        replace(matches, rows=RowBuffers(0, texts=False)),
        replace(counts, bad_score=np.zeros(0, bool), confidence=np.zeros(0, "float64")),
    )
