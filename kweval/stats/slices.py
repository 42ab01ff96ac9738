"""Slice discovery: where a model does worst relative to its overall score, with bootstrap CIs.

The search is SliceLine (Sagadeeva & Boehm, SIGMOD 2021; the `sliceline`
package): over the review features of `kweval.evaluation.slice_features`
(movie, rating band, text length, GT list size, share of present GT,
prediction length, disagreement between models) it finds the conjunctions of
up to `max_level` feature values whose mean *error* most exceeds the overall
mean, weighed against their size (`alpha`).  The error of a review is its
rank-based shortfall on the metric: the share of the model's other reviews
that score better (ties count half), so it lies in [0, 1], averages 0.5, and
does not depend on the metric's scale (on DNLP, where most reviews score 0,
`1 − value` would make every slice look alike).  Each slice found is then
reported on the metric itself: its mean with a percentile bootstrap CI
(`kweval.stats.bootstrap.bootstrap_ci`), the overall mean and the gap, and a
URL-safe spec (`slice_features.format_slice`) that filters the explorer; only
the slices worse than the overall value beyond their CI are listed, the
largest gap first.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.stats import rankdata

from kweval.data.dataset import Dataset
from kweval.evaluation.options import Evaluation
from kweval.evaluation.slice_features import feature_names, format_slice, slice_features
from kweval.extras import require
from kweval.metrics import registry
from kweval.stats.bootstrap import CONFIDENCE, N_BOOT, SEED, bootstrap_ci

COLUMNS = ["slice", "n_reviews", "value", "ci_low", "ci_high", "overall", "gap", "score"]


def review_errors(values: np.ndarray, higher_is_better: bool = True) -> np.ndarray:
    """Per review, the share of the other reviews that score better on the metric (ties count half)."""
    values = np.asarray(values, dtype="float64")
    n = len(values)
    if n < 2:
        return np.full(n, 0.5)
    worse_first = rankdata(values if higher_is_better else -values, method="average")  # 1 = worst
    return (n - worse_first) / (n - 1)


def worst_slices(
    evaluation: Evaluation,
    dataset: Dataset,
    model: str,
    metric: str,
    top: int = 10,
    max_level: int = 2,
    alpha: float = 0.99,
    min_support: int | None = None,
    n_boot: int = N_BOOT,
    confidence: float = CONFIDENCE,
    seed: int = SEED,
    features: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """The slices where `model` does worst on `metric`, after a first row for all its reviews (spec "").

    Columns: slice (spec), n_reviews, value (the metric's mean over the
    slice's reviews), ci_low, ci_high (bootstrap), overall (the mean over all
    of the model's reviews), gap (value − overall), score (SliceLine's; NaN
    for the first row).  The slices are those SliceLine finds whose interval
    lies wholly on the worse side of the overall value (a slice whose CI
    contains it may be no worse at all: not listed, counted in
    ``attrs["not_clear"]``), sorted by gap, the worst first.
    ``attrs["features"]``: the features searched (those with more than one
    value in this data).  `min_support`: the fewest reviews a slice may have
    (default: 2% of the model's reviews, at least 10).  Reviews where the
    metric is undefined (NaN) are left out.  `features`: a `slice_features`
    table of `evaluation` when the caller has one already.
    """
    if metric not in evaluation.scores.columns:
        raise ValueError(f"unknown metric {metric!r} for this evaluation")
    if model not in evaluation.models:
        raise ValueError(f"unknown model {model!r} (evaluated: {', '.join(evaluation.models)})")
    table = features if features is not None else slice_features(evaluation, dataset)
    rows = np.flatnonzero(
        (evaluation.scores["model"].to_numpy(dtype=object) == model) & evaluation.scores[metric].notna().to_numpy()
    )
    values = evaluation.scores[metric].to_numpy(dtype="float64")[rows]
    table = table.iloc[rows].reset_index(drop=True)
    names = feature_names(table)
    out = [_row("", values, np.ones(len(values), bool), values, np.nan, n_boot, confidence, seed)]
    if len(values) == 0 or not names:
        return _table(out, [], names, registry.better(metric) != registry.LOWER)
    support = min_support if min_support is not None else max(10, len(values) // 50)
    higher = registry.better(metric) != registry.LOWER
    found = _search(table[names], review_errors(values, higher), top, max_level, alpha, support)
    x = table[names].to_numpy(dtype=object)
    seen: set[bytes] = set()
    for conditions, score in sorted(found, key=lambda f: (-f[1], sum(c is not None for c in f[0]))):
        mask = np.ones(len(values), dtype=bool)
        for i, condition in enumerate(conditions):
            if condition is not None:
                mask &= x[:, i] == condition
        if mask.tobytes() in seen:  # the same reviews as a slice already listed with fewer conditions
            continue
        seen.add(mask.tobytes())
        spec = format_slice({n: c for n, c in zip(names, conditions) if c is not None})
        out.append(_row(spec, values[mask], mask, values, score, n_boot, confidence, seed))
    return _table(out[:1], out[1:], names, higher)


def _table(first: list, found: list, names: list[str], higher: bool) -> pd.DataFrame:
    """The overall row, then the slices of `found` worse than the overall value beyond their CI, worst gap first."""
    rows = pd.DataFrame(found, columns=COLUMNS)
    clear = rows["ci_high"] < rows["overall"] if higher else rows["ci_low"] > rows["overall"]
    worst_first = rows[clear].sort_values("gap", ascending=higher, kind="stable")
    table = pd.concat([pd.DataFrame(first, columns=COLUMNS), worst_first], ignore_index=True)
    table.attrs.update(not_clear=int((~clear).sum()), features=list(names))
    return table


def _search(
    x: pd.DataFrame, errors: np.ndarray, top: int, max_level: int, alpha: float, support: int
) -> list[tuple[list, float]]:
    """SliceLine's top slices: (per feature the value or None, score), best first."""
    sliceline = require("sliceline.slicefinder", "slices", "slice discovery")
    finder = sliceline.Slicefinder(alpha=alpha, k=top, max_l=max_level, min_sup=support, verbose=False)
    finder.fit(x.to_numpy(dtype=object), errors)
    slices = finder.top_slices_
    stats = finder.top_slices_statistics_
    return [(list(s), float(st["slice_score"])) for s, st in zip(slices, stats)][:top]


def load_search() -> bool:
    """Import SliceLine and load its compiled kernels (numba's on-disk cache) on a tiny search, so that the first
    real search does not pay them (~2 s of CPU); False without the `slices` extra."""
    try:
        _search(pd.DataFrame({"a": ["x", "y"] * 8, "b": ["u"] * 8 + ["v"] * 8}), np.linspace(0, 1, 16), 2, 2, 0.95, 2)
    except ImportError:
        return False
    return True


def _row(
    spec: str, part: np.ndarray, mask: np.ndarray, values: np.ndarray, score: float, n_boot: int, conf: float, seed: int
) -> list:
    overall = float(values.mean()) if len(values) else float("nan")
    if len(part) == 0:
        return [spec, 0, np.nan, np.nan, np.nan, overall, np.nan, score]
    mean, lo, hi = bootstrap_ci(part, n_boot=n_boot, confidence=conf, seed=seed)
    return [spec, int(mask.sum()), mean, lo, hi, overall, mean - overall, score]
