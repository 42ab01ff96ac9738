"""Bootstrap confidence intervals over reviews (docs/metrics.md §6): percentile intervals of a statistic.

Pure numpy, vectorised and seeded.  Every function takes per-review values
(1-D: one metric; 2-D: reviews × metrics, resampled *jointly*, so the same
resamples serve every column) and never loops over reviews in Python.
Resampling is done through count matrices (resample × review) multiplied by
the values, in chunks, so memory stays at ``chunk × n_reviews`` whatever the
number of metrics; the last draws are kept (every model of a movie resamples
the same n reviews).
"""

from __future__ import annotations

import threading
import warnings
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from kweval._arrays import small_products, stacked_transposed
from kweval.metrics import registry
from kweval.metrics.ratios import harmonic_mean, safe_ratio
from kweval.stats.increments import by_review_products, grid_exponents, kept_sums, on_grid

N_BOOT = 2000
CONFIDENCE = 0.95
SEED = 0
_CHUNK_CELLS = 2_000_000  # resamples per chunk × reviews


def as_columns(values: np.ndarray | Sequence[float]) -> tuple[np.ndarray, bool]:
    """Per-review values as a (reviews × metrics) float array, and whether they came as one 1-D column."""
    arr = np.asarray(values, dtype="float64")
    if arr.ndim == 1:
        return arr[:, None], True
    if arr.ndim != 2:
        raise ValueError(f"expected a 1-D or 2-D array of per-review values, got shape {arr.shape}")
    return arr, False


def chunk_sizes(total: int, n: int) -> list[int]:
    """Sizes of the chunks of `total` resamples of `n` reviews that keep chunk × n under `_CHUNK_CELLS`."""
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
    return np.concatenate([np.asarray(statistic(c.astype("float64"))) for c in _counts(n, n_boot, seed)], axis=0)


def resampled_sums(n: int, values: np.ndarray, n_boot: int = N_BOOT, seed: int = SEED) -> np.ndarray:
    """``bootstrap_statistics(n, lambda w: w @ on_grid(values), n_boot, seed)``: each resample's sums of the `n`
    rows of `values` (1-D: one column, a 1-D result) rounded to their grid (`kweval.stats.increments`: the sums are
    then exact), by `small_products` (a few columns: 8 resamples at a time, one thread's work in cache), or, on kept
    draws, from a remembered column's sums plus its changed rows' (speed trick "exact increments")."""
    chunks, x = _counts(n, n_boot, seed), np.asarray(values, dtype="float64")
    columns = x if x.ndim == 2 else x[:, None]
    grids = grid_exponents(n, columns)
    columns = on_grid(columns, grids)

    def scratch(v: np.ndarray) -> np.ndarray:
        return np.concatenate([small_products(c, v) for c in chunks], axis=0)

    def increment(rows: np.ndarray, change: np.ndarray) -> np.ndarray:
        return by_review_products(_counts_by_review(n, n_boot, seed)[0], rows, change)

    if isinstance(chunks, tuple):  # kept draws
        sums = kept_sums.sums(("counts", n, n_boot, seed), columns, grids, scratch, increment)
    else:
        sums = scratch(columns)
    return sums[:, 0] if x.ndim == 1 else sums


def _counts(n: int, n_boot: int, seed: int):
    """The chunks of resample counts of `n` reviews: kept ones where they fit (`_resample_counts`), else drawn."""
    if n < 1:
        raise ValueError("bootstrap needs at least one review")
    if n_boot * n <= _KEPT_CELLS and n <= np.iinfo(np.uint16).max:
        return _resample_counts(n, n_boot, seed)  # the same draws again (e.g. every model of a movie): kept
    return _draw_counts(n, n_boot, seed)


def _draw_counts(n: int, n_boot: int, seed: int):
    """Per chunk of resamples, how often each of the `n` reviews was drawn (a generator: one chunk in memory)."""
    rng = np.random.default_rng(seed)
    for size in chunk_sizes(n_boot, n):
        idx = rng.integers(0, n, size=(size, n))
        flat = (idx + (np.arange(size) * n)[:, None]).ravel()
        yield np.bincount(flat, minlength=size * n).reshape(size, n)


_KEPT_CELLS = 20_000_000  # resamples × reviews of a kept draw: ≤ 40 MB as uint16


_KEPT_TOTAL = 4 * _KEPT_CELLS  # bytes of every kept draw together: ≤ 80 MB (on DNLP: each movie's and ALL's)


class KeptDraws:
    """Seeded draws (`draw(n, size, seed)`: chunks of arrays) of the sizes asked for last, kept read-only for the next
    call with the same draws, the least recently used dropped beyond `limit` bytes together: Compare's per-movie
    tests and the ALL-scope intervals then keep each other's resample counts, and a τ step's randomization tests
    the swap bits of the last (`paired.swap_bits`)."""

    def __init__(self, draw: Callable[[int, int, int], Iterable[np.ndarray]], limit: int = _KEPT_TOTAL) -> None:
        self._draw, self._limit = draw, limit
        self._items: OrderedDict[tuple[int, int, int], tuple[np.ndarray, ...]] = OrderedDict()
        self._lock = threading.Lock()

    def cache_clear(self) -> None:
        with self._lock:
            self._items.clear()

    def __call__(self, n: int, size: int, seed: int) -> tuple[np.ndarray, ...]:
        key = (n, size, seed)
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                return self._items[key]
        kept = tuple(self._draw(n, size, seed))
        for c in kept:
            c.setflags(write=False)
        with self._lock:
            self._items[key] = kept
            while sum(c.nbytes for k in self._items.values() for c in k) > self._limit and len(self._items) > 1:
                self._items.popitem(last=False)
        return kept


# `_draw_counts` as uint16 (a count never exceeds n ≤ 65535)
_resample_counts = KeptDraws(lambda n, n_boot, seed: (c.astype(np.uint16) for c in _draw_counts(n, n_boot, seed)))
# the same counts one row per review (the changed reviews' counts are whole rows: `by_review_products`)
_counts_by_review = KeptDraws(
    lambda n, n_boot, seed: (stacked_transposed(_resample_counts(n, n_boot, seed)),), _KEPT_TOTAL // 2
)


def _percentile_ci(samples: np.ndarray, confidence: float) -> tuple[np.ndarray, np.ndarray]:
    alpha = (1.0 - confidence) / 2.0
    lo, hi = np.quantile(samples, [alpha, 1.0 - alpha], axis=0)
    return lo, hi


# (value, low, high): floats for one column of values (1-D input), arrays (one entry per column) for 2-D input
Estimate = tuple[float, float, float] | tuple[np.ndarray, np.ndarray, np.ndarray]


def bootstrap_ci(
    values: np.ndarray | Sequence[float],
    n_boot: int = N_BOOT,
    confidence: float = CONFIDENCE,
    seed: int = SEED,
) -> Estimate:
    """(mean, low, high): the mean of each column and its percentile bootstrap CI.

    NaN values are not allowed (a review either has a value or is not a row).
    Scalars come back for 1-D input, arrays (one per column) for 2-D input.
    """
    x, flat = as_columns(values)
    if np.isnan(x).any():
        raise ValueError("bootstrap_ci: values contain NaN")
    n = x.shape[0]
    mean = x.mean(axis=0)
    samples = resampled_sums(n, x, n_boot, seed) / n
    lo, hi = _percentile_ci(samples, confidence)
    if flat:
        return float(mean[0]), float(lo[0]), float(hi[0])
    return mean, lo, hi


def _with_defined_counts(x: np.ndarray, columns: list[str]) -> tuple[np.ndarray, dict[str, int]]:
    """`x` with NaN as 0 and, per column holding a NaN, one more column counting its defined values; {column: the
    position of its count}.

    A mean over reviews skips NaN (as kweval.aggregate's pandas mean does): Σ w·x
    over the defined values / Σ w over them, so every column still shares the same resamples.
    """
    missing = np.isnan(x)
    defined: dict[str, int] = {}
    if not missing.any():
        return x, defined
    x = np.where(missing, 0.0, x)
    extra = [(~missing[:, i]).astype("float64") for i, c in enumerate(columns) if missing[:, i].any()]
    for i, c in enumerate(columns):
        if missing[:, i].any():
            defined[c] = len(columns) + len(defined)
    return np.column_stack([x, *extra]), defined


def aggregated_statistic(
    present: list[str], pos: dict[str, int], defined: dict[str, int], how: str
) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """The aggregated metrics as a function of column sums (rows: resamples) and resample sizes: aggregate's rules
    (the registry's micro ratio or F1 under micro, else the mean over the reviews that define the metric).

    `present`: the metrics; `pos`: column -> its position in the summed matrix (metrics and the micro counts);
    `defined`: metric -> the position of its count of defined values (`_with_defined_counts`)."""

    def ratio_of_sums(sums: np.ndarray, metric: str) -> np.ndarray:
        num, den = registry.micro_ratio(metric) or ("", "")
        return safe_ratio(sums[:, pos[num]], sums[:, pos[den]])

    def statistic(sums: np.ndarray, total: np.ndarray) -> np.ndarray:
        res = np.empty((sums.shape[0], len(present)))
        for i, m in enumerate(present):
            ratio, pair = registry.micro_ratio(m), registry.micro_f1(m)
            if how == "micro" and ratio is not None and all(c in pos for c in ratio):
                res[:, i] = ratio_of_sums(sums, m)
            elif how == "micro" and pair is not None and all(c in pos for c in registry.micro_counts(m)):
                res[:, i] = harmonic_mean(ratio_of_sums(sums, pair[0]), ratio_of_sums(sums, pair[1]))
            elif m in defined:
                with np.errstate(invalid="ignore", divide="ignore"):
                    res[:, i] = np.where(sums[:, defined[m]] > 0, sums[:, pos[m]] / sums[:, defined[m]], np.nan)
            else:
                res[:, i] = sums[:, pos[m]] / total
        return res

    return statistic


def statistic_columns(metrics: Sequence[str], how: str, available: Sequence[str]) -> list[str]:
    """The columns the aggregated value of `metrics` reads: the metrics, then (micro) their registry counts."""
    needed: set[str] = set()
    if how == "micro":  # the micro statistic is the one aggregate reports: the registry's micro rule
        for m in metrics:
            needed.update(registry.micro_counts(m))
    counts = sorted(c for c in needed if c in available)
    return list(metrics) + [c for c in counts if c not in metrics]


def aggregate_values(scores: pd.DataFrame, metrics: Sequence[str], how: str = "macro") -> pd.Series:
    """The aggregated value of each metric over the reviews of `scores` (one model): `kweval.aggregate`'s number
    (mean, or the micro ratio of sums / F1 of the micro pair), computed by the statistic the bootstrap resamples.
    NaN for a metric absent from `scores` or defined nowhere (gt_coverage, movie-level, included)."""
    out = pd.Series(np.nan, index=list(metrics), dtype="float64")
    if not len(scores) or not any(m in scores.columns and m != "gt_coverage" for m in metrics):
        return out
    s = _summary_statistic(scores, list(metrics), how)
    with np.errstate(invalid="ignore", divide="ignore"):
        out[s.present] = s.statistic(s.x.sum(axis=0)[None, :], np.array([len(scores)], dtype="float64"))[0]
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
    return bootstrap_summary_cis({"": scores}, metrics, how, n_boot, confidence, seed).drop(columns="group")


@dataclass(frozen=True)
class _SummaryStatistic:
    """One group's resampled summary: its metrics, its value columns and the statistic reading their sums."""

    present: list[str]
    x: np.ndarray
    defined: dict[str, int]
    statistic: Callable[[np.ndarray, np.ndarray], np.ndarray]


def _summary_statistic(scores: pd.DataFrame, metrics: list[str], how: str) -> _SummaryStatistic:
    present = [m for m in metrics if m in scores.columns and m != "gt_coverage"]
    columns = statistic_columns(present, how, list(scores.columns))
    x, defined = _with_defined_counts(scores[columns].to_numpy(dtype="float64"), columns)
    return _SummaryStatistic(
        present, x, defined, aggregated_statistic(present, {c: i for i, c in enumerate(columns)}, defined, how)
    )


def bootstrap_summary_cis(
    groups: Mapping[str, pd.DataFrame],
    metrics: Sequence[str],
    how: str = "macro",
    n_boot: int = N_BOOT,
    confidence: float = CONFIDENCE,
    seed: int = SEED,
) -> pd.DataFrame:
    """`bootstrap_summary_ci` of each group of rows (e.g. each model's), with a ``group`` column first.

    Speed trick "one product per size": groups with the same number of reviews draw the same resamples (the seed and
    the size fix them), so their value columns are put side by side and resampled in one matrix product instead of
    one per group.  Reference: `bootstrap_summary_ci` of each group alone (tests/test_stats.py).
    """
    metrics = list(metrics)
    parts: dict[str, pd.DataFrame] = {}
    by_size: dict[int, list[str]] = {}
    for name, rows in groups.items():
        by_size.setdefault(len(rows), []).append(name)
    for n, names in by_size.items():
        chosen = {name: _summary_statistic(groups[name], metrics, how) for name in names}
        parts |= _same_size_cis(n, chosen, metrics, n_boot, confidence, seed)
    frames = [parts[name].assign(group=name) for name in groups]
    columns = ["group", "metric", "value", "ci_low", "ci_high"]
    return pd.concat(frames, ignore_index=True)[columns] if frames else pd.DataFrame(columns=columns)


def _same_size_cis(
    n: int, chosen: dict[str, _SummaryStatistic], metrics: list[str], n_boot: int, confidence: float, seed: int
) -> dict[str, pd.DataFrame]:
    """The intervals of groups of `n` reviews each, their columns resampled together (one product a chunk)."""
    if n == 0 or all(not s.present for s in chosen.values()):
        return {name: _summary_frame(metrics, s, None, None, confidence) for name, s in chosen.items()}
    x = np.column_stack([s.x for s in chosen.values()])
    edges = np.cumsum([0, *(s.x.shape[1] for s in chosen.values())])

    def statistic(sums: np.ndarray) -> np.ndarray:
        total = np.full(sums.shape[0], float(n))
        return np.column_stack(
            [s.statistic(sums[:, lo:hi], total) for s, lo, hi in zip(chosen.values(), edges, edges[1:])]
        )

    samples = statistic(resampled_sums(n, x, n_boot, seed))
    point = statistic(x.sum(axis=0)[None, :])[0]
    starts = np.cumsum([0, *(len(s.present) for s in chosen.values())])
    return {
        name: _summary_frame(metrics, s, point[lo:hi], samples[:, lo:hi], confidence)
        for (name, s), lo, hi in zip(chosen.items(), starts, starts[1:])
    }


def _summary_frame(
    metrics: list[str],
    summary: _SummaryStatistic,
    point: np.ndarray | None,
    samples: np.ndarray | None,
    confidence: float,
) -> pd.DataFrame:
    """metric, value, ci_low, ci_high of one group from its point values and resampled values (None: all NaN)."""
    out = pd.DataFrame({"metric": metrics, "value": np.nan, "ci_low": np.nan, "ci_high": np.nan})
    if point is None or samples is None or not summary.present:
        return out
    if summary.defined:  # a resample that drew no defined value has no mean: left out of the percentiles
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # a metric defined nowhere: all-NaN, CI NaN
            alpha = (1.0 - confidence) / 2.0
            lo, hi = np.nanquantile(samples, [alpha, 1.0 - alpha], axis=0)
    else:
        lo, hi = _percentile_ci(samples, confidence)
    index = {m: i for i, m in enumerate(summary.present)}
    rows = [row for row, m in enumerate(metrics) if m in index]
    cols = [index[metrics[row]] for row in rows]
    for name, values in (
        ("value", point),
        ("ci_low", lo),
        ("ci_high", hi),
    ):  # one column write each, not a .loc per metric
        column = out[name].to_numpy(dtype="float64", copy=True)
        column[rows] = np.asarray(values, dtype="float64")[cols]
        out[name] = column
    return out
