"""Uncertainty and significance over reviews: bootstrap CIs, paired tests, Holm, win/tie/loss.

Pure numpy/scipy, vectorised and seeded.  Every function takes per-review
values (1-D: one metric; 2-D: reviews × metrics, resampled *jointly*, so the
same resamples serve every column) and never loops over reviews in Python.

- Bootstrap CIs are percentile intervals of the statistic over `n_boot`
  resamples of the reviews with replacement.  Resampling is done through
  count matrices (resample × review) multiplied by the values, in chunks, so
  memory stays at ``chunk × n_reviews`` whatever the number of metrics.
- The paired randomization test flips the sign of each review's difference
  (the null hypothesis: the two models are exchangeable on every review).
  With ``2**n <= n_perm`` every sign vector is enumerated (exact p-value);
  otherwise ``n_perm`` random ones are drawn and p = (1 + #extreme) / (1 + n_perm).
  It is the test of ``scipy.stats.permutation_test(permutation_type="samples")``
  (tests/test_stats.py checks equal exact p-values and agreeing Monte Carlo
  ones), kept here because scipy, even vectorised over every metric at once
  (``vectorized=True, axis=0``, best ``batch=100``), builds every sign-flipped
  copy of the data: 16.7 s against 0.52 s here, 32× (2,000 reviews × 20
  metrics, 10,000 sign vectors, `python bench/bench_randomization.py`, loaded
  2-core machine), where this one is one sign-matrix product (BLAS).
- Comparisons of model A with model B report **B − A** everywhere
  (differences, intervals, wins counted from B's side).
- The paired t-test is ``scipy.stats.ttest_rel``.
- Holm's step-down correction controls the family-wise error rate across the
  metrics shown.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd
from scipy import stats as _sp

from kweval.metrics import harmonic_mean, safe_ratio

N_BOOT = 2000
N_PERM = 10000
CONFIDENCE = 0.95
SEED = 0
_CHUNK_CELLS = 2_000_000  # resamples per chunk × reviews


def _as_2d(values: np.ndarray | Sequence[float]) -> tuple[np.ndarray, bool]:
    arr = np.asarray(values, dtype="float64")
    if arr.ndim == 1:
        return arr[:, None], True
    if arr.ndim != 2:
        raise ValueError(f"expected a 1-D or 2-D array of per-review values, got shape {arr.shape}")
    return arr, False


def _chunks(total: int, n: int) -> list[int]:
    size = max(1, min(total, _CHUNK_CELLS // max(n, 1)))
    return [min(size, total - start) for start in range(0, total, size)]


def bootstrap_statistics(
    n: int,
    statistic: Callable[[np.ndarray], np.ndarray],
    n_boot: int = N_BOOT,
    seed: int = SEED,
) -> np.ndarray:
    """`statistic(W)` for `n_boot` resamples of `n` reviews, stacked on axis 0.

    `W` is a (chunk × n) matrix of how often each review was drawn in each
    resample; `statistic` returns one row per resample (e.g. ``W @ x / n``).
    """
    if n < 1:
        raise ValueError("bootstrap needs at least one review")
    if n_boot * n <= _KEPT_CELLS and n <= np.iinfo(np.uint16).max:
        counts = _resample_counts(n, n_boot, seed)  # the same draws again (e.g. every model of a movie): kept, not redrawn
    else:
        counts = _draw_counts(n, n_boot, seed)
    return np.concatenate([np.asarray(statistic(c.astype("float64"))) for c in counts], axis=0)


def _draw_counts(n: int, n_boot: int, seed: int):
    """Per chunk of resamples, how often each of the `n` reviews was drawn (a generator: one chunk in memory)."""
    rng = np.random.default_rng(seed)
    for size in _chunks(n_boot, n):
        idx = rng.integers(0, n, size=(size, n))
        flat = (idx + (np.arange(size) * n)[:, None]).ravel()
        yield np.bincount(flat, minlength=size * n).reshape(size, n)


_KEPT_CELLS = 20_000_000  # resamples × reviews of a kept draw: ≤ 40 MB as uint16


@functools.lru_cache(maxsize=2)
def _resample_counts(n: int, n_boot: int, seed: int) -> tuple[np.ndarray, ...]:
    """`_draw_counts`, kept as read-only uint16 (a count never exceeds n ≤ 65535) for the next call with the same draws."""
    kept = tuple(c.astype(np.uint16) for c in _draw_counts(n, n_boot, seed))
    for c in kept:
        c.setflags(write=False)
    return kept


def _percentile_ci(samples: np.ndarray, confidence: float) -> tuple[np.ndarray, np.ndarray]:
    alpha = (1.0 - confidence) / 2.0
    lo, hi = np.quantile(samples, [alpha, 1.0 - alpha], axis=0)
    return lo, hi


def bootstrap_ci(
    values: np.ndarray | Sequence[float],
    n_boot: int = N_BOOT,
    confidence: float = CONFIDENCE,
    seed: int = SEED,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(mean, low, high): the mean of each column and its percentile bootstrap CI.

    NaN values are not allowed (a review either has a value or is not a row).
    Scalars come back for 1-D input, arrays (one per column) for 2-D input.
    """
    x, flat = _as_2d(values)
    if np.isnan(x).any():
        raise ValueError("bootstrap_ci: values contain NaN")
    n = x.shape[0]
    mean = x.mean(axis=0)
    samples = bootstrap_statistics(n, lambda w: w @ x / n, n_boot, seed)
    lo, hi = _percentile_ci(samples, confidence)
    if flat:
        return float(mean[0]), float(lo[0]), float(hi[0])
    return mean, lo, hi


def paired_differences(a: np.ndarray | Sequence[float], b: np.ndarray | Sequence[float]) -> np.ndarray:
    """b − a per review: the one sign convention of every paired statistic here (positive: B higher)."""
    return np.asarray(b, dtype="float64") - np.asarray(a, dtype="float64")


def paired_bootstrap_ci(
    a: np.ndarray | Sequence[float],
    b: np.ndarray | Sequence[float],
    n_boot: int = N_BOOT,
    confidence: float = CONFIDENCE,
    seed: int = SEED,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(mean(b − a), low, high): reviews resampled as pairs."""
    return bootstrap_ci(paired_differences(a, b), n_boot, confidence, seed)


def _sign_matrix_exact(n: int) -> np.ndarray:
    codes = np.arange(2**n, dtype=np.int64)[:, None]
    bits = (codes >> np.arange(n, dtype=np.int64)[None, :]) & 1
    return 1.0 - 2.0 * bits


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
    32× faster here (see the module docstring and bench/bench_randomization.py).
    """
    d, flat = _as_2d(paired_differences(a, b))
    n = d.shape[0]
    if n == 0:
        p = np.full(d.shape[1], np.nan)
        return float(p[0]) if flat else p
    observed = np.abs(d.mean(axis=0))
    # floating-point ties: a permuted statistic equal to the observed one up to rounding counts as extreme
    threshold = observed - 1e-12 * np.maximum(observed, 1e-300) - 1e-15
    extreme = np.zeros(d.shape[1])
    if n < 63 and 2**n <= n_perm:
        signs = _sign_matrix_exact(n)
        stats_ = np.abs(signs @ d / n)
        extreme += (stats_ >= threshold).sum(axis=0)
        p = extreme / signs.shape[0]
    else:
        rng = np.random.default_rng(seed)
        total = d.sum(axis=0)
        for size in _chunks(n_perm, n):
            # one random bit per review and permutation: sign = 1 − 2·bit, so Σ sign·d = Σd − 2·(bits @ d)
            raw = rng.integers(0, 256, size=(size, (n + 7) // 8), dtype=np.uint8)
            bits = np.unpackbits(raw, axis=1, count=n).astype("float64")
            extreme += (np.abs((total - 2.0 * (bits @ d)) / n) >= threshold).sum(axis=0)
        p = (1.0 + extreme) / (1.0 + n_perm)
    p = np.where(np.all(d == 0, axis=0), 1.0, np.minimum(p, 1.0))
    return float(p[0]) if flat else p


def paired_t_test(a: np.ndarray | Sequence[float], b: np.ndarray | Sequence[float]) -> np.ndarray | float:
    """Two-sided p-value of the paired t-test (scipy.stats.ttest_rel); 1 where all differences are 0."""
    a2, flat = _as_2d(a)
    b2, _ = _as_2d(b)
    d = a2 - b2
    if d.shape[0] < 2:
        p = np.full(d.shape[1], np.nan)
    else:
        with np.errstate(invalid="ignore", divide="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # constant differences: scipy warns, the p-value is still right
            p = np.asarray(_sp.ttest_rel(a2, b2, axis=0).pvalue, dtype="float64")
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


def win_tie_loss(
    a: np.ndarray | Sequence[float], b: np.ndarray | Sequence[float], tol: float = 1e-12
) -> tuple[np.ndarray, np.ndarray, np.ndarray] | tuple[int, int, int]:
    """How many reviews b beats a on (b − a > tol), ties (|b − a| ≤ tol), loses (b − a < −tol)."""
    d, flat = _as_2d(paired_differences(a, b))
    wins = (d > tol).sum(axis=0)
    losses = (d < -tol).sum(axis=0)
    ties = d.shape[0] - wins - losses
    if flat:
        return int(wins[0]), int(ties[0]), int(losses[0])
    return wins, ties, losses


def paired_comparison(
    a: pd.DataFrame,
    b: pd.DataFrame,
    metrics: Sequence[str],
    n_boot: int = N_BOOT,
    n_perm: int = N_PERM,
    confidence: float = CONFIDENCE,
    seed: int = SEED,
) -> pd.DataFrame:
    """One row per metric comparing model A with model B on the same reviews (rows of `a` and `b` aligned).

    Columns: metric, n, mean_a, mean_b, diff (B − A), ci_low, ci_high,
    p_randomization, p_ttest, their Holm-adjusted versions across `metrics`,
    wins, ties, losses (from B's side: wins are reviews where B is higher).

    A review where a metric is NaN on either side (e.g. ``sas_text`` of a
    review without text) is left out of that metric only: ``n`` counts the
    pairs used per metric, and a metric with no pair gets NaN (not counted by
    Holm).  Metrics defined on every review are resampled jointly.
    """
    metrics = list(metrics)
    xa = a[metrics].to_numpy(dtype="float64")
    xb = b[metrics].to_numpy(dtype="float64")
    if xa.shape != xb.shape:
        raise ValueError("paired_comparison: A and B must hold the same reviews")
    valid = ~(np.isnan(xa) | np.isnan(xb))  # a metric undefined for a review on either side (e.g. sas_text without text)
    n = valid.sum(axis=0).astype("int64")
    columns = ("mean_a", "mean_b", "diff", "ci_low", "ci_high", "p_randomization", "p_ttest")
    res = {c: np.full(len(metrics), np.nan) for c in columns}
    res |= {c: np.zeros(len(metrics), dtype="int64") for c in ("wins", "ties", "losses")}

    def fill(cols: np.ndarray, rows: np.ndarray | slice) -> None:
        ya, yb = xa[rows][:, cols], xb[rows][:, cols]
        if ya.shape[0] == 0:
            return
        diff, lo, hi = paired_bootstrap_ci(ya, yb, n_boot, confidence, seed)
        wins, ties, losses = win_tie_loss(ya, yb)
        for name, value in (("mean_a", ya.mean(axis=0)), ("mean_b", yb.mean(axis=0)), ("diff", diff), ("ci_low", lo), ("ci_high", hi),
                            ("p_randomization", paired_randomization_test(ya, yb, n_perm, seed)), ("p_ttest", paired_t_test(ya, yb)),
                            ("wins", wins), ("ties", ties), ("losses", losses)):
            res[name][cols] = value

    complete = np.flatnonzero(valid.all(axis=0))
    if len(complete):
        fill(complete, slice(None))  # every review: all such metrics resampled jointly
    for col in np.flatnonzero(~valid.all(axis=0)):
        fill(np.array([col]), np.flatnonzero(valid[:, col]))  # only the reviews where both values exist
    out = pd.DataFrame({"metric": metrics, "n": n})
    for name in columns:
        out[name] = res[name]
    out["p_randomization_holm"] = holm(res["p_randomization"])
    out["p_ttest_holm"] = holm(res["p_ttest"])
    for name in ("wins", "ties", "losses"):
        out[name] = res[name]
    return out


def bootstrap_summary_ci(
    scores: pd.DataFrame,
    metrics: Sequence[str],
    how: str = "macro",
    n_boot: int = N_BOOT,
    confidence: float = CONFIDENCE,
    seed: int = SEED,
) -> pd.DataFrame:
    """Bootstrap CIs of the aggregated value of each metric over the reviews in `scores` (one model).

    The statistic is the one `kweval.aggregate` reports: the mean over
    reviews (macro, and ranking metrics under micro) or the ratio of sums
    (micro set-based/weighted metrics, F1s from the resampled pair).
    Movie-level metrics (gt_coverage) and columns absent from `scores` get NaN.
    NaN values (e.g. ``sas_text`` of a review without text) are skipped by the
    means, as `kweval.aggregate` skips them; a metric NaN everywhere gets NaN.
    Columns: metric, value, ci_low, ci_high.
    """
    from kweval.aggregate import MICRO_F1, MICRO_RATIOS  # the micro statistic is the one aggregate reports

    metrics = list(metrics)
    present = [m for m in metrics if m in scores.columns and m != "gt_coverage"]
    needed: set[str] = set()
    if how == "micro":
        for m in present:
            for part in (m, *MICRO_F1.get(m, ())):
                needed.update(MICRO_RATIOS.get(part, ()))
    counts = sorted(c for c in needed if c in scores.columns)
    columns = present + [c for c in counts if c not in present]
    out = pd.DataFrame({"metric": metrics, "value": np.nan, "ci_low": np.nan, "ci_high": np.nan})
    n = len(scores)
    if n == 0 or not present:
        return out
    x = scores[columns].to_numpy(dtype="float64")
    # a mean over reviews skips NaN (as kweval.aggregate's pandas mean does): Σ w·x over the defined
    # values / Σ w over them, so every column still shares the same resamples
    missing = np.isnan(x)
    defined: dict[str, int] = {}
    if missing.any():
        x = np.where(missing, 0.0, x)
        extra = [(~missing[:, i]).astype("float64") for i, c in enumerate(columns) if missing[:, i].any()]
        for i, c in enumerate(columns):
            if missing[:, i].any():
                defined[c] = len(columns) + len(defined)
        x = np.column_stack([x, *extra])
    pos = {c: i for i, c in enumerate(columns)}

    def statistic(sums: np.ndarray, total: np.ndarray) -> np.ndarray:
        """Aggregated metrics from column sums (rows: resamples) and resample sizes."""
        res = np.empty((sums.shape[0], len(present)))
        for i, m in enumerate(present):
            if how == "micro" and m in MICRO_RATIOS and all(c in pos for c in MICRO_RATIOS[m]):
                num, den = MICRO_RATIOS[m]
                res[:, i] = safe_ratio(sums[:, pos[num]], sums[:, pos[den]])
            elif how == "micro" and m in MICRO_F1 and all(c in pos for x_ in MICRO_F1[m] for c in MICRO_RATIOS[x_]):
                p_, r_ = (safe_ratio(sums[:, pos[MICRO_RATIOS[x_][0]]], sums[:, pos[MICRO_RATIOS[x_][1]]]) for x_ in MICRO_F1[m])
                res[:, i] = harmonic_mean(p_, r_)
            elif m in defined:
                with np.errstate(invalid="ignore", divide="ignore"):
                    res[:, i] = np.where(sums[:, defined[m]] > 0, sums[:, pos[m]] / sums[:, defined[m]], np.nan)
            else:
                res[:, i] = sums[:, pos[m]] / total
        return res

    point = statistic(x.sum(axis=0)[None, :], np.array([n], dtype="float64"))[0]
    samples = bootstrap_statistics(n, lambda w: statistic(w @ x, np.full(w.shape[0], float(n))), n_boot, seed)
    if defined:  # a resample that drew no defined value has no mean: left out of the percentiles
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # a metric defined nowhere: all-NaN, CI NaN
            alpha = (1.0 - confidence) / 2.0
            lo, hi = np.nanquantile(samples, [alpha, 1.0 - alpha], axis=0)
    else:
        lo, hi = _percentile_ci(samples, confidence)
    index = {m: i for i, m in enumerate(present)}
    rows = [row for row, m in enumerate(metrics) if m in index]
    cols = [index[metrics[row]] for row in rows]
    for name, values in (("value", point), ("ci_low", lo), ("ci_high", hi)):  # one column write each, not a .loc per metric
        column = out[name].to_numpy(dtype="float64", copy=True)
        column[rows] = np.asarray(values, dtype="float64")[cols]
        out[name] = column
    return out


def paired_scores(scores: pd.DataFrame, a: str, b: str, metrics: Sequence[str], metric: str | None = None) -> pd.DataFrame:
    """Reviews both models were evaluated on, with A's and B's metrics side by side (suffixes _a, _b).

    With `metric`, adds ``difference`` = B − A of that metric (for sorting and plotting).
    """
    key = ["movie", "review_id"]
    left = scores[scores["model"] == a][key + list(metrics)]
    right = scores[scores["model"] == b][key + list(metrics)]
    both = left.merge(right, on=key, suffixes=("_a", "_b"))
    if metric is not None:
        both["difference"] = both[f"{metric}_b"] - both[f"{metric}_a"]
    return both


def compare_models(scores: pd.DataFrame, a: str, b: str, metrics: Sequence[str], **options) -> pd.DataFrame:
    """`paired_comparison` of model `b` against model `a` on the reviews of `scores` both were evaluated on (B − A).

    `options` are paired_comparison's (n_boot, n_perm, confidence, seed).
    """
    metrics = list(metrics)
    both = paired_scores(scores, a, b, metrics)
    side = lambda suffix: both[[f"{m}{suffix}" for m in metrics]].set_axis(metrics, axis=1)  # noqa: E731
    return paired_comparison(side("_a"), side("_b"), metrics, **options)
