"""Paired comparisons of two models over the same reviews: paired CIs and tests, Holm, win/tie/loss.

Pure numpy/scipy, vectorised and seeded.  Every function takes per-review
values (1-D: one metric; 2-D: reviews × metrics, resampled *jointly*, so the
same resamples serve every column) and never loops over reviews in Python.

- Paired bootstrap CIs resample the per-review differences
  (`kweval.stats.bootstrap`).
- The paired randomization test flips the sign of each review's difference
  (the null hypothesis: the two models are exchangeable on every review).
  With ``2**n <= n_perm`` every sign vector is enumerated (exact p-value);
  otherwise ``n_perm`` random ones are drawn and p = (1 + #extreme) / (1 + n_perm).
  It is the test of ``scipy.stats.permutation_test(permutation_type="samples")``
  (tests/test_stats.py checks equal exact p-values and agreeing Monte Carlo
  ones), kept here because scipy, even vectorised over every metric at once
  (``vectorized=True, axis=0``, best ``batch=100``), builds every sign-flipped
  copy of the data, where this one is one sign-matrix product (BLAS): far
  faster (`python bench/bench_randomization.py`; figures in bench/RESULTS.md).
- Comparisons of model A with model B report **B − A** everywhere
  (differences, intervals, wins counted from B's side).
- The paired t-test is ``scipy.stats.ttest_rel``'s (computed from ``scipy.special.stdtr``: `paired_t_test`).
- Holm's step-down correction controls the family-wise error rate within a
  family of comparisons (`holm_within`; which metrics form one family:
  `kweval.stats.families`).  The interval shown beside a Holm-adjusted p is adjusted the
  same way (`holm_levels`): the comparison with the r-th smallest p gets the
  confidence level 1 − α/(m − r + 1) of Holm's r-th step, read from the same
  bootstrap draws as the unadjusted 95 % interval (both are reported).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from operator import attrgetter

import numpy as np
import pandas as pd

from kweval.stats.aligned import PAIR_KEY, AlignedPair, align_pair
from kweval.stats.bootstrap import (
    CONFIDENCE,
    N_BOOT,
    SEED,
    Estimate,
    as_columns,
    bootstrap_ci,
    resampled_sums,
)
from kweval.stats.increments import grid_exponents, on_grid, rounding
from kweval.stats.remembered import Remembered, digest, read_only
from kweval.stats.swaps import sign_matrix_exact, swapped_sums
from kweval.stats.swaps import swap_bits as swap_bits  # re-exported: kweval.stats.aggregated reads it here
from kweval.stats.swaps import swap_sums as swap_sums

N_PERM = 10000


def paired_differences(a: np.ndarray | Sequence[float], b: np.ndarray | Sequence[float]) -> np.ndarray:
    """b − a per review: the one sign convention of every paired statistic here (positive: B higher)."""
    return np.asarray(b, dtype="float64") - np.asarray(a, dtype="float64")


def paired_bootstrap_ci(
    a: np.ndarray | Sequence[float],
    b: np.ndarray | Sequence[float],
    n_boot: int = N_BOOT,
    confidence: float = CONFIDENCE,
    seed: int = SEED,
) -> Estimate:
    """(mean(b − a), low, high): reviews resampled as pairs."""
    return bootstrap_ci(paired_differences(a, b), n_boot, confidence, seed)


def paired_randomization_test(
    a: np.ndarray | Sequence[float],
    b: np.ndarray | Sequence[float],
    n_perm: int = N_PERM,
    seed: int = SEED,
) -> np.ndarray | float:
    """Two-sided p-value of mean(b − a) under random sign flips of the paired differences.

    Exact (all 2**n sign vectors) when that is at most `n_perm`; otherwise
    Monte Carlo with the +1 correction.  All-zero differences give p = 1.
    The test of ``scipy.stats.permutation_test(permutation_type="samples")``,
    computed as one sign-matrix product (see the module docstring and bench/bench_randomization.py).
    """
    d, flat = as_columns(paired_differences(a, b))
    n = d.shape[0]
    if n == 0:
        p = np.full(d.shape[1], np.nan)
        return float(p[0]) if flat else p
    extreme = np.zeros(d.shape[1])
    if n < 63 and 2**n <= n_perm:
        observed = np.abs(d.mean(axis=0))
        signs = sign_matrix_exact(n)
        stats_ = np.abs(signs @ d / n)
        extreme += (stats_ >= _tie_threshold(observed, 0.0)).sum(axis=0)
        p = extreme / signs.shape[0]
    else:
        live = np.flatnonzero(np.any(d != 0, axis=0))  # a column of zero differences only has p = 1: not permuted
        grids = grid_exponents(n, d[:, live])
        moved = np.ascontiguousarray(on_grid(d[:, live], grids))  # on the grid: every sum below is exact
        total = moved.sum(axis=0)
        # a real tie moved apart by the rounding (a mean by ≤ 2^-(g+1) each) still counts: slack 2^-g
        threshold = _tie_threshold(np.abs(total) / n, 2.0 * rounding(grids))
        for sums in swapped_sums(moved, grids, n_perm, seed) if len(live) else ():
            # one random bit per review and permutation: sign = 1 − 2·bit, so Σ sign·d = Σd − 2·(bits @ d)
            extreme[live] += (np.abs((total - 2.0 * sums) / n) >= threshold).sum(axis=0)
        p = (1.0 + extreme) / (1.0 + n_perm)
    p = np.where(np.all(d == 0, axis=0), 1.0, np.minimum(p, 1.0))
    return float(p[0]) if flat else p


def _tie_threshold(observed: np.ndarray, slack: np.ndarray | float) -> np.ndarray:
    """The least permuted statistic counted as extreme: the observed one less floating-point ties' tolerance and
    `slack` (what rounding to the grid can move a tie apart by)."""
    return observed - 1e-12 * np.maximum(observed, 1e-300) - 1e-15 - slack


def paired_t_test(a: np.ndarray | Sequence[float], b: np.ndarray | Sequence[float]) -> np.ndarray | float:
    """Two-sided p-value of the paired t-test; 1 where all differences are 0.

    Speed trick "t-test from the t distribution alone": ``scipy.stats.ttest_rel``'s statistic (mean of a − b over
    its standard error, n − 1 degrees of freedom) and two-sided p from ``scipy.special.stdtr``, because importing
    scipy.stats costs about a second of CPU (`kweval runs compare` and the first Compare page pay it otherwise).
    Reference: ``scipy.stats.ttest_rel`` (tests/test_stats.py).
    """
    a2, flat = as_columns(a)
    b2, _ = as_columns(b)
    d = a2 - b2
    n = d.shape[0]
    if n < 2:
        p = np.full(d.shape[1], np.nan)
    else:
        from scipy.special import stdtr

        with np.errstate(invalid="ignore", divide="ignore"):  # constant differences: t = ±inf, p = 0
            t = d.mean(axis=0) / (d.std(axis=0, ddof=1) / np.sqrt(n))
            p = 2.0 * stdtr(n - 1, -np.abs(t))
        p = np.where(np.all(d == 0, axis=0), 1.0, p)
    return float(p[0]) if flat else p


def holm(pvalues: np.ndarray | Sequence[float]) -> np.ndarray:
    """Holm–Bonferroni adjusted p-values (step-down, monotone, capped at 1); NaNs stay NaN and are not counted."""
    p = np.asarray(pvalues, dtype="float64")
    out = np.full(p.shape, np.nan)
    ok = np.flatnonzero(~np.isnan(p))
    m = len(ok)
    if m == 0:
        return out
    order = ok[np.argsort(p[ok], kind="stable")]
    scaled = p[order] * (m - np.arange(m))
    out[order] = np.minimum(np.maximum.accumulate(scaled), 1.0)
    return out


def holm_levels(pvalues: np.ndarray | Sequence[float], confidence: float = CONFIDENCE) -> np.ndarray:
    """Per comparison, the confidence level of Holm's step at its rank: 1 − α/(m − r + 1), α = 1 − `confidence`,
    r = 1 for the smallest p (the m comparisons with a p; NaN where p is NaN).

    An interval at that level excludes 0 about when the raw p passes Holm's threshold at that step, so the
    interval beside a Holm-adjusted p tells the same story (Bonferroni's 1 − α/m for the smallest p, the plain
    level for the largest).  Equal p-values share the level of the first of them (as they share one adjusted p),
    so the levels do not depend on the order the comparisons are listed in.
    """
    p = np.asarray(pvalues, dtype="float64")
    out = np.full(p.shape, np.nan)
    ok = np.flatnonzero(~np.isnan(p))
    m = len(ok)
    order = ok[np.argsort(p[ok], kind="stable")]
    ranks = np.searchsorted(p[order], p[order], side="left")  # a tie's rank is its first's
    out[order] = 1.0 - (1.0 - confidence) / (m - ranks)
    return out


def _within(adjust: Callable[[np.ndarray], np.ndarray], pvalues, families: Sequence[str] | None) -> np.ndarray:
    """`adjust` applied to the p-values of each family apart (`families`: one key per p-value; None: one family)."""
    p = np.asarray(pvalues, dtype="float64")
    if families is None:
        return adjust(p)
    keys = np.asarray(list(families), dtype=object)
    if keys.shape != p.shape:
        raise ValueError("one family key per p-value")
    out = np.full(p.shape, np.nan)
    for key in dict.fromkeys(keys.tolist()):
        where = np.flatnonzero(keys == key)
        out[where] = adjust(p[where])
    return out


def holm_within(pvalues: np.ndarray | Sequence[float], families: Sequence[str] | None = None) -> np.ndarray:
    """`holm` within each family of comparisons (kweval.stats.families): a p-value is adjusted for the m
    comparisons of its own family only."""
    return _within(holm, pvalues, families)


def holm_levels_within(
    pvalues: np.ndarray | Sequence[float], families: Sequence[str] | None = None, confidence: float = CONFIDENCE
) -> np.ndarray:
    """`holm_levels` within each family of comparisons (the levels that go with `holm_within`)."""
    return _within(lambda p: holm_levels(p, confidence), pvalues, families)


def _level_intervals(samples: dict[int, np.ndarray], levels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(low, high) percentile intervals of each column's bootstrap draws (`samples`: column -> draws) at its level."""
    lo = np.full(len(levels), np.nan)
    hi = np.full(len(levels), np.nan)
    for col, draws in samples.items():
        if np.isfinite(levels[col]):
            tail = (1.0 - levels[col]) / 2.0
            lo[col], hi[col] = np.quantile(draws, [tail, 1.0 - tail])
    return lo, hi


def win_tie_loss(
    a: np.ndarray | Sequence[float], b: np.ndarray | Sequence[float], tol: float = 1e-12
) -> tuple[np.ndarray, np.ndarray, np.ndarray] | tuple[int, int, int]:
    """How many reviews b beats a on (b − a > tol), ties (|b − a| ≤ tol), loses (b − a < −tol)."""
    d, flat = as_columns(paired_differences(a, b))
    wins = (d > tol).sum(axis=0)
    losses = (d < -tol).sum(axis=0)
    ties = d.shape[0] - wins - losses
    if flat:
        return int(wins[0]), int(ties[0]), int(losses[0])
    return wins, ties, losses


def paired_comparison(
    a: pd.DataFrame | np.ndarray,
    b: pd.DataFrame | np.ndarray,
    metrics: Sequence[str],
    n_boot: int = N_BOOT,
    n_perm: int = N_PERM,
    confidence: float = CONFIDENCE,
    seed: int = SEED,
    families: Sequence[str] | None = None,
) -> pd.DataFrame:
    """One row per metric comparing model A with model B on the same reviews (rows of `a` and `b` aligned; frames
    holding `metrics`, or their (reviews × metrics) values as arrays, as `aligned.AlignedPair` holds them).

    Columns: metric, n, mean_a, mean_b, diff (B − A), ci_low, ci_high (at
    `confidence`), p_randomization, p_ttest, their Holm-adjusted versions
    within each family of `families` (one key per metric; None: across all
    `metrics`), ci_level_holm, ci_low_holm, ci_high_holm (the interval
    at Holm's level for that metric, `holm_levels`, from the same draws),
    wins, ties, losses (from B's side: wins are reviews where B is higher).

    A review where a metric is NaN on either side (e.g. ``sas_text`` of a
    review without text) is left out of that metric only: ``n`` counts the
    pairs used per metric, and a metric with no pair gets NaN (not counted by
    Holm).  Metrics defined on every review are resampled jointly; a metric compared before on the same values
    is read back (`remembered_columns`).
    """
    metrics = list(metrics)
    xa, xb = (
        x.astype("float64", copy=False) if isinstance(x, np.ndarray) else x[metrics].to_numpy("float64") for x in (a, b)
    )
    if xa.shape != xb.shape or xa.shape[1:] != (len(metrics),):
        raise ValueError("paired_comparison: A and B must hold the same reviews, one column per metric")
    valid = ~(
        np.isnan(xa) | np.isnan(xb)
    )  # a metric undefined for a review on either side (e.g. sas_text without text)
    found: dict[int, ColumnComparison] = {}
    complete = np.flatnonzero(valid.all(axis=0))
    if len(complete):  # every review: all such metrics resampled jointly
        found |= remembered_columns(xa[:, complete], xb[:, complete], complete, n_boot, n_perm, seed)
    for col in np.flatnonzero(~valid.all(axis=0)):  # only the reviews where both values exist
        rows = np.flatnonzero(valid[:, col])
        if len(rows):
            found |= remembered_columns(xa[rows][:, [col]], xb[rows][:, [col]], np.array([col]), n_boot, n_perm, seed)
    out: dict[str, object] = {"metric": metrics, "n": valid.sum(axis=0).astype("int64")}  # one frame made at the end
    for name in ("mean_a", "mean_b", "diff"):
        out[name] = _per_metric(found, len(metrics), attrgetter(name))
    alpha = (1.0 - confidence) / 2.0  # bootstrap_ci's interval, from the draws kept
    bounds = {col: np.quantile(c.draws, [alpha, 1.0 - alpha]) for col, c in found.items()}
    out["ci_low"] = np.array([bounds[col][0] if col in bounds else np.nan for col in range(len(metrics))], "float64")
    out["ci_high"] = np.array([bounds[col][1] if col in bounds else np.nan for col in range(len(metrics))], "float64")
    p_randomization = out["p_randomization"] = _per_metric(found, len(metrics), attrgetter("p_randomization"))
    p_ttest = out["p_ttest"] = _per_metric(found, len(metrics), attrgetter("p_ttest"))
    out["p_randomization_holm"] = holm_within(p_randomization, families)
    out["p_ttest_holm"] = holm_within(p_ttest, families)
    levels = holm_levels_within(p_randomization, families, confidence)
    out["ci_level_holm"] = levels
    out["ci_low_holm"], out["ci_high_holm"] = _level_intervals({col: c.draws for col, c in found.items()}, levels)
    for name in ("wins", "ties", "losses"):
        out[name] = np.array([getattr(found[c], name) if c in found else 0 for c in range(len(metrics))], "int64")
    return pd.DataFrame(out)


def _per_metric(found: dict[int, ColumnComparison], m: int, value: Callable[[ColumnComparison], float]) -> np.ndarray:
    """`value` of each of the `m` metrics' comparison, NaN for a metric without one."""
    return np.array([value(found[col]) if col in found else np.nan for col in range(m)], dtype="float64")


@dataclass(frozen=True)
class ColumnComparison:
    """One metric's paired comparison of B with A (`paired_comparison`'s row before Holm), whatever else was
    compared beside it: the bootstrap draws and the swap bits depend only on the seed and the number of reviews."""

    mean_a: float
    mean_b: float
    diff: float
    p_randomization: float
    p_ttest: float
    wins: int
    ties: int
    losses: int
    draws: np.ndarray  # the bootstrap means of B − A (read-only)

    def mirrored(self) -> ColumnComparison:
        """A against B: the same p-values, −diff and −draws (exactly: a − b is −(b − a) in floating point)."""
        return ColumnComparison(
            self.mean_b,
            self.mean_a,
            -self.diff,
            self.p_randomization,
            self.p_ttest,
            self.losses,
            self.ties,
            self.wins,
            read_only(-self.draws),
        )


def compare_columns(ya: np.ndarray, yb: np.ndarray, n_boot: int, n_perm: int, seed: int) -> list[ColumnComparison]:
    """Each column of (reviews × metrics) `ya` against `yb`, resampled and permuted jointly."""
    d = paired_differences(ya, yb)
    samples = resampled_sums(d.shape[0], d, n_boot, seed) / d.shape[0]
    wins, ties, losses = (np.asarray(x) for x in win_tie_loss(ya, yb))
    p_rand = np.asarray(paired_randomization_test(ya, yb, n_perm, seed))
    p_t = np.asarray(paired_t_test(ya, yb))
    mean_a, mean_b, diff = ya.mean(axis=0), yb.mean(axis=0), d.mean(axis=0)
    return [
        ColumnComparison(
            float(mean_a[i]),
            float(mean_b[i]),
            float(diff[i]),
            float(p_rand[i]),
            float(p_t[i]),
            int(wins[i]),
            int(ties[i]),
            int(losses[i]),
            read_only(samples[:, i]),
        )
        for i in range(d.shape[1])
    ]


# Speed trick "remembered comparisons" (`kweval.stats.remembered`), per metric: the headline's pairs are Compare's
# and the report's again (also in reverse), a τ step leaves the lexical metrics and a k change F1 as they were.
# Reference: `compare_columns` itself (tests/test_stats.py).  16 kB of draws a column.
_COLUMNS: Remembered[ColumnComparison] = Remembered(1024)


def remembered_columns(
    ya: np.ndarray, yb: np.ndarray, columns: np.ndarray, n_boot: int, n_perm: int, seed: int
) -> dict[int, ColumnComparison]:
    """{columns[i]: column i of `ya` against `yb`}: read back when those values (or the reverse pair's) were
    compared before with the same settings, the others computed together (`compare_columns`)."""
    if ya.shape[0] == 0:
        return {}
    keys = [digest("paired", n_boot, n_perm, seed, ya[:, i], yb[:, i]) for i in range(ya.shape[1])]
    out: dict[int, ColumnComparison] = {}
    todo = []
    for i, key in enumerate(keys):
        hit = _COLUMNS.get(key)
        if hit is None and (mirror := _COLUMNS.get(digest("paired", n_boot, n_perm, seed, yb[:, i], ya[:, i]))):
            hit = mirror.mirrored()
        if hit is None:
            todo.append(i)
        else:
            out[int(columns[i])] = hit
    if todo:
        for i, result in zip(todo, compare_columns(ya[:, todo], yb[:, todo], n_boot, n_perm, seed)):
            out[int(columns[i])] = _COLUMNS.put(keys[i], result)
    return out


def remember_pairs(
    scores: pd.DataFrame,
    needed: Mapping[tuple[str, str], Sequence[str]],
    n_boot: int = N_BOOT,
    n_perm: int = N_PERM,
    seed: int = SEED,
) -> dict[tuple[str, str], AlignedPair]:
    """Speed trick "pairs together": the metrics of several pairs of models (`needed`: (A, B) -> metrics) compared in
    one pass of the bootstrap and of the swap bits wherever the pairs have the same number of reviews (the draws
    depend only on it and the seed), and remembered (`remembered_columns`): the `compare_models` calls that follow
    read them back.  Only the metrics defined on every review of a pair (the others are compared on their own rows).
    Reference: each pair alone (tests/test_stats.py).  Returns each pair's values (`aligned.align_pair`, of its
    metrics), for those calls (`compare_models`' `aligned`: the pairs are not found twice)."""
    by_size: dict[int, list[tuple[np.ndarray, np.ndarray]]] = {}
    aligned: dict[tuple[str, str], AlignedPair] = {}
    for (a, b), metrics in needed.items():
        pair = aligned[(a, b)] = align_pair(scores, a, b, metrics)
        complete = ~(np.isnan(pair.a) | np.isnan(pair.b)).any(axis=0)
        by_size.setdefault(len(pair.a), []).append((pair.a[:, complete], pair.b[:, complete]))
    for parts in by_size.values():
        ya, yb = np.hstack([a for a, _ in parts]), np.hstack([b for _, b in parts])
        if ya.shape[0] and ya.shape[1]:
            remembered_columns(ya, yb, np.arange(ya.shape[1]), n_boot, n_perm, seed)
    return aligned


def paired_scores(
    scores: pd.DataFrame, a: str, b: str, metrics: Sequence[str], metric: str | None = None
) -> pd.DataFrame:
    """Reviews both models were evaluated on, with A's and B's metrics side by side (suffixes _a, _b).

    With `metric`, adds ``difference`` = B − A of that metric (for sorting and plotting).
    """
    left = scores[scores["model"] == a][PAIR_KEY + list(metrics)]
    right = scores[scores["model"] == b][PAIR_KEY + list(metrics)]
    both = left.merge(right, on=PAIR_KEY, suffixes=("_a", "_b"))
    if metric is not None:
        both["difference"] = both[f"{metric}_b"] - both[f"{metric}_a"]
    return both


def compare_models(
    scores: pd.DataFrame,
    a: str,
    b: str,
    metrics: Sequence[str],
    aligned: AlignedPair | None = None,
    **options,
) -> pd.DataFrame:
    """`paired_comparison` of model `b` against model `a` on the reviews of `scores` both were evaluated on (B − A).

    `aligned`: ``align_pair(scores, a, b, …)`` of these metrics (or more) where the caller has it (`remember_pairs`
    returns it), else it is made here.  `options` are paired_comparison's (n_boot, n_perm, confidence, seed).
    """
    metrics = list(metrics)
    pair = align_pair(scores, a, b, metrics) if aligned is None else aligned
    xa, xb = pair.columns(metrics)
    return paired_comparison(xa, xb, metrics, **options)
