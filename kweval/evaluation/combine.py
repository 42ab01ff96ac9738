"""Evaluations of disjoint movie sets combined into one, and the score units that make their sums add up.

The CLI evaluates groups of movies in worker processes or on a dask cluster
(kweval.scale) and combines the parts here; the result is what `evaluate`
gives for all those movies at once.  Confidences are summed in units of
2**e (`summable`) so that huge scores cannot overflow a sum; parts scaled
differently are brought to one unit (`in_score_units`) before they are joined.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace

import numpy as np
import pandas as pd

from kweval.evaluation.options import Evaluation


def combine_evaluations(parts: Sequence[Evaluation]) -> Evaluation:
    """One evaluation from evaluations of disjoint sets of movies, given in movie order.

    Tables are concatenated, a loading problem that several parts report (one
    about a file they share, like the ground truth) is kept once, and loading
    problems come before evaluation problems.  The parts must share their
    options and models (the coverage table has a row per movie × model):
    ValueError otherwise.
    """
    if not parts:
        raise ValueError("no evaluations to combine")
    first = next(
        (p for p in parts if p.models), parts[0]
    )  # a part without models (unreadable files) adds only problems
    if any((p.models and p.models != first.models) or p.options != first.options for p in parts):
        raise ValueError("evaluations with different models or options cannot be combined")

    def concat(table: str) -> pd.DataFrame:
        frames = [getattr(p, table) for p in parts]
        filled = [f for f in frames if len(f)] or frames[:1]  # an empty table could change the columns' dtypes
        return pd.concat(filled, ignore_index=True)

    loading = list(dict.fromkeys(pr for p in parts for pr in p.problems if pr.stage == "load"))
    evaluating = [pr for p in parts for pr in p.problems if pr.stage != "load"]
    exponent = max(p.score_exponent for p in parts)
    parts = [in_score_units(p, exponent) for p in parts]
    return Evaluation(
        scores=concat("scores"),
        keywords=concat("keywords"),
        ground_truth=concat("ground_truth"),
        coverage=concat("coverage"),
        skipped=concat("skipped"),
        options=first.options,
        movies=[m for p in parts for m in p.movies],
        models=list(first.models),
        problems=loading + evaluating,
        score_exponent=exponent,
    )


def in_score_units(part: Evaluation, exponent: int) -> Evaluation:
    """`part` with its score sums in units of 2**exponent, so that parts scaled differently (`summable`) add up
    exactly."""
    if part.score_exponent == exponent or not len(part.scores):
        return part
    scores = part.scores.copy()
    for column in ("score_sum", "matched_score"):
        scores[column] = np.ldexp(scores[column].to_numpy(dtype="float64"), part.score_exponent - exponent)
    return replace(part, scores=scores, score_exponent=exponent)


_SUM_LIMIT_EXPONENT = 1000  # sums of confidences stay below 2**1000 (float64 overflows past 2**1024)


def summable(confidence: np.ndarray) -> tuple[np.ndarray, int]:
    """`confidence` scaled by 2**-e so that no sum of its values overflows, and e (itself and 0 when none can).

    Scores near 1e308 are finite but their sums are not, which would make
    w_precision NaN.  Scaling every confidence by the same power of two is
    exact and keeps every ratio (w_precision, macro and micro) unchanged; the
    per-review `score_sum` and `matched_score` are then in those units
    (`Evaluation.score_exponent`; `combine_evaluations` brings parts to one unit).
    """
    if len(confidence) == 0:
        return confidence, 0
    top = float(confidence.max())
    if top * len(confidence) < 2.0**_SUM_LIMIT_EXPONENT:
        return confidence, 0
    excess = math.frexp(top)[1] + math.frexp(float(len(confidence)))[1] - _SUM_LIMIT_EXPONENT
    return np.ldexp(confidence, -excess), excess
