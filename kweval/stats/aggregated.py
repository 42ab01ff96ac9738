"""Paired comparisons of the aggregated numbers the summary reports, micro included.

`kweval.stats.paired` compares per-review means.  Under ``--aggregate micro``
the summary's precision, recall, F1 (and their weighted, semantic and
present/absent kin) are ratios of sums over reviews, not means, so a
comparison of means would test another number than the one shown.  Here the
statistic is the summary's own (`kweval.stats.bootstrap.aggregated_statistic`):

- the bootstrap resamples reviews as pairs and recomputes both models'
  aggregated values on each resample (B − A);
- the randomization test swaps the two models' rows of randomly chosen
  reviews (the null hypothesis: the models are exchangeable on every review)
  and recomputes the difference; for a mean this is exactly the sign-flip
  test of `paired`.  Exact (every swap set) when ``2**n <= n_perm``, else
  Monte Carlo with the +1 correction.

`compare_aggregated` gives `paired.paired_comparison`'s table (the same
columns, Holm within each family of metrics, `kweval.stats.families`, and
the Holm-level intervals) with a ``basis`` column saying what was compared.
It is the one comparison of two models every surface shows: the headline,
Compare, the HTML report and `kweval compare`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from kweval.metrics import registry
from kweval.stats.aligned import AlignedPair
from kweval.stats.bootstrap import (
    CONFIDENCE,
    N_BOOT,
    SEED,
    aggregated_statistic,
    resampled_sums,
    statistic_columns,
)
from kweval.stats.families import Family, family_keys, metric_family
from kweval.stats.paired import (
    N_PERM,
    compare_models,
    holm,
    holm_levels,
    holm_levels_within,
    holm_within,
    paired_scores,
    remember_pairs,
    swap_bits,
    swap_sums,
)
from kweval.stats.remembered import Remembered, digest, read_only

BASIS_MEANS = "per-review means"
BASIS_MICRO = "ratio of sums (micro)"


def basis(metric: str, how: str) -> str:
    """What a comparison of `metric` under aggregation `how` compares: the micro ratio or the per-review means."""
    micro = how == "micro" and (registry.micro_ratio(metric) is not None or registry.micro_f1(metric) is not None)
    return BASIS_MICRO if micro else BASIS_MEANS


def aggregated_difference(
    a: pd.DataFrame,
    b: pd.DataFrame,
    metric: str,
    how: str,
    n_boot: int = N_BOOT,
    n_perm: int = N_PERM,
    seed: int = SEED,
) -> tuple[float, float, np.ndarray, float]:
    """(A's and B's aggregated `metric`, the bootstrap draws of B − A, the randomization p) over aligned rows of
    `a` and `b`.

    Rows where the metric is NaN on either side are left out (as `paired.paired_comparison` does).
    """
    columns = statistic_columns([metric], how, [c for c in a.columns if c in b.columns])
    ok = a[metric].notna().to_numpy() & b[metric].notna().to_numpy()
    xa = a[columns].to_numpy(dtype="float64")[ok]
    xb = b[columns].to_numpy(dtype="float64")[ok]
    key = digest("aggregated", columns, metric, how, n_boot, n_perm, seed, xa, xb)
    return _REMEMBERED(key, lambda: _kept(_difference(xa, xb, columns, metric, how, n_boot, n_perm, seed)))


# Speed trick "remembered comparisons" (`kweval.stats.remembered`): a k change leaves F1 and weighted F1 as they
# were; Compare and the report ask for the headline's pairs again.  Reference: the computation itself
# (tests/test_headline.py).
_REMEMBERED: Remembered[tuple[float, float, np.ndarray, float]] = Remembered(64)  # a few kB each


def _kept(result: tuple[float, float, np.ndarray, float]) -> tuple[float, float, np.ndarray, float]:
    value_a, value_b, draws, p = result
    return value_a, value_b, read_only(draws), p


def _difference(
    xa: np.ndarray,
    xb: np.ndarray,
    columns: list[str],
    metric: str,
    how: str,
    n_boot: int,
    n_perm: int,
    seed: int,
) -> tuple[float, float, np.ndarray, float]:
    """`aggregated_difference` on the rows' statistic columns (NaN rows left out)."""
    n = xa.shape[0]
    if n == 0:
        return np.nan, np.nan, np.zeros(0), np.nan
    stat = aggregated_statistic([metric], {c: i for i, c in enumerate(columns)}, {}, how)

    def value(sums: np.ndarray) -> np.ndarray:
        return stat(sums, np.full(sums.shape[0], float(n)))[:, 0]

    def diff(sums_a: np.ndarray, sums_b: np.ndarray) -> np.ndarray:
        return value(sums_b) - value(sums_a)

    value_a, value_b = float(value(xa.sum(axis=0)[None, :])[0]), float(value(xb.sum(axis=0)[None, :])[0])
    observed = value_b - value_a
    sums = resampled_sums(n, np.hstack([xa, xb]), n_boot, seed)
    draws = diff(sums[:, : xa.shape[1]], sums[:, xa.shape[1] :])
    d = xb - xa
    if not d.any():
        return value_a, value_b, draws, 1.0
    threshold = abs(observed) - 1e-12 * max(abs(observed), 1e-300) - 1e-15
    sum_a, sum_b, times = xa.sum(axis=0), xb.sum(axis=0), swap_sums(d)
    extreme = total = 0
    for bits in swap_bits(n, n_perm, seed):
        moved = times(bits)  # what the swapped reviews move from B's sums to A's
        extreme += int((np.abs(diff(sum_a + moved, sum_b - moved)) >= threshold).sum())
        total += bits.shape[0]
    exact = n < 63 and 2**n <= n_perm
    p = extreme / total if exact else (1.0 + extreme) / (1.0 + n_perm)
    return value_a, value_b, draws, float(min(p, 1.0))


def paired_sides(scores: pd.DataFrame, a: str, b: str, columns: Sequence[str]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(A's rows, B's rows) of `columns` on the reviews both were evaluated on, aligned (`paired.paired_scores`)."""
    both = paired_scores(scores, a, b, list(columns))
    a_rows = both[[f"{c}_a" for c in columns]].set_axis(list(columns), axis=1)
    b_rows = both[[f"{c}_b" for c in columns]].set_axis(list(columns), axis=1)
    return a_rows, b_rows


def _mean_draws(a: pd.Series, b: pd.Series, n_boot: int, seed: int) -> np.ndarray:
    """Bootstrap means of B − A over the reviews where both are defined (empty when none)."""
    d = (b - a).dropna().to_numpy(dtype="float64")
    if not len(d):
        return np.zeros(0)
    return resampled_sums(len(d), d, n_boot, seed) / len(d)


def compare_aggregated(
    scores: pd.DataFrame,
    a: str,
    b: str,
    metrics: Sequence[str],
    how: str = "macro",
    n_boot: int = N_BOOT,
    n_perm: int = N_PERM,
    confidence: float = CONFIDENCE,
    seed: int = SEED,
    family: Family = metric_family,
    aligned: AlignedPair | None = None,
) -> pd.DataFrame:
    """`paired.compare_models` of `b` against `a`, with each metric that has a micro rule compared on its micro value
    when `how` is "micro" (diff, intervals and randomization p of the ratio of sums; the t-test stays on the
    per-review values and says so through ``basis``).  Holm and the Holm-level intervals are computed within each
    `family` of `metrics` (`kweval.stats.families`; a ``family`` column names it).  Adds ``basis``: "per-review
    means" or "ratio of sums (micro)".  `aligned`: the pair's values (`aligned.align_pair`) where the caller has it
    (`paired.remember_pairs` returns it)."""
    metrics = list(metrics)
    keys = family_keys(metrics, family)
    out = compare_models(
        scores, a, b, metrics, aligned, n_boot=n_boot, n_perm=n_perm, confidence=confidence, seed=seed, families=keys
    )
    out["basis"] = [basis(m, how) for m in metrics]
    out["family"] = keys
    micro = [m for m in metrics if basis(m, how) == BASIS_MICRO]
    if not micro:
        return out
    xa, xb = paired_sides(scores, a, b, statistic_columns(metrics, how, list(scores.columns)))
    draws: dict[int, np.ndarray] = {}
    tail = (1.0 - confidence) / 2.0
    for i, metric in enumerate(metrics):
        if metric in micro:
            value_a, value_b, draws[i], p = aggregated_difference(xa, xb, metric, how, n_boot, n_perm, seed)
            lo, hi = np.quantile(draws[i], [tail, 1.0 - tail]) if len(draws[i]) else (np.nan, np.nan)
            out.loc[i, ["mean_a", "mean_b", "diff", "ci_low", "ci_high", "p_randomization"]] = [
                value_a,
                value_b,
                value_b - value_a,
                lo,
                hi,
                p,
            ]
        elif metric in xa.columns:  # paired_comparison's draws (same reviews, same seed), read at the new level
            draws[i] = _mean_draws(xa[metric], xb[metric], n_boot, seed)
    out["p_randomization_holm"] = holm_within(out["p_randomization"].to_numpy(), keys)
    levels = holm_levels_within(out["p_randomization"].to_numpy(), keys, confidence)
    out["ci_level_holm"] = levels
    for i, samples in draws.items():
        if len(samples) and np.isfinite(levels[i]):
            t = (1.0 - levels[i]) / 2.0
            out.loc[i, ["ci_low_holm", "ci_high_holm"]] = np.quantile(samples, [t, 1.0 - t])
    return out


def compare_against(
    scores: pd.DataFrame,
    reference: str,
    others: Sequence[str],
    metrics: Sequence[str],
    how: str = "macro",
    family: Family = metric_family,
    **options,
) -> pd.DataFrame:
    """Every model of `others` against `reference` (`compare_aggregated`, A = `reference`), one table with a ``model``
    column naming B: what Compare shows, the report's verdicts read and `kweval compare` prints."""
    settings = {k: v for k, v in options.items() if k in ("n_boot", "n_perm", "seed")}
    aligned = remember_pairs(scores, {(reference, b): list(metrics) for b in others if b != reference}, **settings)
    parts = [
        compare_aggregated(
            scores, reference, b, metrics, how, family=family, aligned=aligned[(reference, b)], **options
        ).assign(model=b)
        for b in others
        if b != reference
    ]
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()


def compare_groups(
    scores: pd.DataFrame,
    a: str,
    b: str,
    metric: str,
    how: str = "macro",
    by: str = "movie",
    n_boot: int = N_BOOT,
    n_perm: int = N_PERM,
    confidence: float = CONFIDENCE,
    seed: int = SEED,
) -> pd.DataFrame:
    """One metric, `b` against `a`, in each group of reviews (`by`: "movie"), Holm across the groups.

    Columns: the group, n, mean_a, mean_b (the aggregated values, micro honoured), diff (B − A), ci_low, ci_high
    (at `confidence`), p_randomization, p_randomization_holm (across the groups), ci_level_holm, ci_low_holm,
    ci_high_holm (each group's interval at its Holm level: the one to show beside the Holm p), basis.
    """
    columns = statistic_columns([metric], how, list(scores.columns))
    both = paired_scores(scores, a, b, columns)  # keyed by movie and review_id
    xa = both[[f"{c}_a" for c in columns]].set_axis(columns, axis=1)
    xb = both[[f"{c}_b" for c in columns]].set_axis(columns, axis=1)
    rows, draws = [], []
    tail = (1.0 - confidence) / 2.0
    for group, index in both.groupby(by, sort=False).groups.items():
        value_a, value_b, samples, p = aggregated_difference(
            xa.loc[index], xb.loc[index], metric, how, n_boot, n_perm, seed
        )
        lo, hi = np.quantile(samples, [tail, 1.0 - tail]) if len(samples) else (np.nan, np.nan)
        n = int((xa.loc[index, metric].notna() & xb.loc[index, metric].notna()).sum())
        rows.append({by: group, "n": n, "mean_a": value_a, "mean_b": value_b, "diff": value_b - value_a})
        rows[-1] |= {"ci_low": lo, "ci_high": hi, "p_randomization": p}
        draws.append(samples)
    out = pd.DataFrame(rows, columns=[by, "n", "mean_a", "mean_b", "diff", "ci_low", "ci_high", "p_randomization"])
    p_values = out["p_randomization"].to_numpy(dtype="float64")
    out["p_randomization_holm"] = holm(p_values)
    levels = holm_levels(p_values, confidence)
    out["ci_level_holm"] = levels
    bounds = [
        np.quantile(d, [(1 - lv) / 2, (1 + lv) / 2]) if len(d) and np.isfinite(lv) else (np.nan, np.nan)
        for d, lv in zip(draws, levels)
    ]
    out["ci_low_holm"] = [lo for lo, _ in bounds]
    out["ci_high_holm"] = [hi for _, hi in bounds]
    out["basis"] = basis(metric, how)
    return out
