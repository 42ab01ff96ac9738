"""Compare verdicts: a "significant (Holm, α = 0.05)" column and one sentence per metric.

Reads the table of `kweval.stats.paired.paired_comparison` (one row per metric:
mean_a, mean_b, diff, ci_low, ci_high, p_randomization_holm, ...) and says
in words what it shows, e.g. "base beats reranker on nDCG@5 by 0.035
[0.030, 0.040], p < 0.001".  Which model "beats" the other follows the
metric's better direction in `kweval.metrics.registry`; the interval is always the
winner's advantage, so its sign needs no decoding.

The statistics agree with themselves: when the table has Holm-level intervals
(`kweval.stats.paired.holm_levels`: ci_low_holm, ci_high_holm) the sentence
shows that interval, labelled with its level, beside the Holm-adjusted p; a
"not significant" beside an interval that excludes 0 (or the reverse) says why
(`disagreement`).  Numbers get enough decimals never to read 0.000
(`kweval.stats.numbers`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np
import pandas as pd

from kweval.metrics import registry
from kweval.stats.numbers import decimals_for_interval, format_interval, format_level, format_number

ALPHA = 0.05
P_COLUMN = "p_randomization_holm"
# a comparison table's columns as Compare and `kweval compare` show them (`with_significance` adds "significant")
TABLE_COLUMNS = [
    "model",
    "metric",
    "family",
    "basis",
    "n",
    "mean_a",
    "mean_b",
    "diff",
    "ci_level_holm",
    "ci_low_holm",
    "ci_high_holm",
    "p_randomization_holm",
    "significant",
    "ci_low",
    "ci_high",
    "p_randomization",
    "p_ttest",
    "p_ttest_holm",
    "wins",
    "ties",
    "losses",
]


def significant(comparison: pd.DataFrame, alpha: float = ALPHA) -> pd.Series:
    """Per row: the Holm-adjusted randomization p-value is below `alpha` (False where it is NaN)."""
    return comparison[P_COLUMN].lt(alpha).fillna(False).astype(bool)


def with_significance(comparison: pd.DataFrame, alpha: float = ALPHA) -> pd.DataFrame:
    """`comparison` with a boolean ``significant`` column after the p-values."""
    out = comparison.copy()
    out.insert(out.columns.get_loc(P_COLUMN) + 1, "significant", significant(comparison, alpha))
    return out


def b_minus_a(row: Mapping, holm: bool = False) -> tuple[float, float, float]:
    """(difference, CI low, CI high) of B − A, whichever sign convention the table's ``diff`` uses.

    The paired difference of means equals mean_b − mean_a (or its negative),
    so the means tell the convention; an exact tie keeps B − A, kweval's convention.
    `holm`: the Holm-level interval (ci_low_holm, ci_high_holm) instead of the plain one.
    """
    low, high = ("ci_low_holm", "ci_high_holm") if holm else ("ci_low", "ci_high")
    d, lo, hi = float(row["diff"]), float(row[low]), float(row[high])
    expected = float(row["mean_b"]) - float(row["mean_a"])
    if expected != 0 and math.isclose(d, -expected, rel_tol=1e-6, abs_tol=1e-12):
        return -d, -hi, -lo
    return d, lo, hi


def has_holm_interval(row: Mapping) -> bool:
    """Whether the row carries the interval at Holm's level (a finite ci_low_holm and ci_high_holm)."""
    try:
        return bool(np.isfinite([float(row["ci_low_holm"]), float(row["ci_high_holm"])]).all())
    except (KeyError, TypeError, ValueError):
        return False


def disagreement(row: Mapping, alpha: float = ALPHA) -> str:
    """Why the verdict and the interval shown beside it disagree, or "" when they agree.

    Significance is the Holm-adjusted randomization p; the interval is the
    paired bootstrap at Holm's level (or the plain one without it).  They can
    part when Holm's step-down stopped at a metric with a smaller p, or near
    the threshold, where two different methods (sign flips, resampling) differ.
    """
    holm = has_holm_interval(row)
    _d, lo, hi = b_minus_a(row, holm)
    p = float(row.get(P_COLUMN, np.nan))
    if not all(np.isfinite([lo, hi, p])):
        return ""
    excludes_zero = lo > 0 or hi < 0
    if p < alpha and not excludes_zero:
        return "significant by the randomization test, though the bootstrap interval (another method) reaches 0"
    if p >= alpha and excludes_zero:
        raw = float(row.get("p_randomization", np.nan))
        level = float(row.get("ci_level_holm", np.nan))
        if holm and np.isfinite(raw) and np.isfinite(level) and raw < 1.0 - level:
            return "not significant because Holm's step-down stopped at a metric with a smaller p"
        if not holm:
            return "the interval is unadjusted; with Holm's correction the difference is not significant"
        return "not significant by the randomization test, though the bootstrap interval (another method) excludes 0"
    return ""


def format_p(p: float) -> str:
    """``p < 0.001`` or ``p = 0.012`` (``p n/a`` when undefined)."""
    if p is None or not np.isfinite(p):
        return "p n/a"
    return "p < 0.001" if p < 0.001 else f"p = {p:.3f}"


def verdict(
    row: Mapping, a: str, b: str, alpha: float = ALPHA, digits: int | None = None, reviews: str = "reviews"
) -> str:
    """One sentence on one metric's comparison of model `a` with model `b`.

    The interval is the Holm-level one when the row has it (labelled with its
    level), else the plain one; `digits` decimals (default: enough that no
    non-zero number reads 0.000).  A disagreement between the verdict and its
    interval is said in the sentence (`disagreement`).
    """
    metric = str(row["metric"])
    entry = registry.info(metric)
    label = entry.label if entry is not None else metric
    n = row.get("n", 1)
    holm = has_holm_interval(row)
    d, lo, hi = b_minus_a(row, holm)
    if not n or not all(np.isfinite([d, lo, hi])):
        return f"{a} and {b} share no {reviews} where {label} is defined."
    p = float(row[P_COLUMN])
    places = decimals_for_interval(d, lo, hi) if digits is None else digits
    f = lambda x: format_number(x, places)  # noqa: E731
    level = f" ({format_level(float(row['ci_level_holm']))} CI, Holm)" if holm else ""
    why = disagreement(row, alpha)
    tail = f"{format_p(p)} (Holm)" + (f"; {why}" if why else "") + "."
    if not (np.isfinite(p) and p < alpha):
        return (
            f"No significant difference between {a} and {b} on {label}: "
            f"{b} − {a} = {f(d)} {format_interval(lo, hi, places)}{level}, {tail}"
        )
    if entry is not None and entry.better == registry.LOWER:  # B's advantage is then A − B
        d, lo, hi = -d, -hi, -lo
    winner, loser = (b, a) if d > 0 else (a, b)
    adv, adv_lo, adv_hi = (d, lo, hi) if winner == b else (-d, -hi, -lo)  # the winner's advantage and its interval
    return f"{winner} beats {loser} on {label} by {f(adv)} {format_interval(adv_lo, adv_hi, places)}{level}, {tail}"


def verdicts(comparison: pd.DataFrame, a: str, b: str, alpha: float = ALPHA) -> pd.Series:
    """`verdict` for every row of a `paired_comparison` table (index kept)."""
    return pd.Series(
        [verdict(row, a, b, alpha) for row in comparison.to_dict("records")], index=comparison.index, dtype=object
    )


# A comparison's outcome from model B's side against the reference A: the codes a page colours by.
WIN, LOSS, AHEAD, BEHIND, TIE, UNDEFINED = "win", "loss", "ahead (n.s.)", "behind (n.s.)", "tie", "n/a"
OUTCOMES = (WIN, LOSS, AHEAD, BEHIND, TIE, UNDEFINED)


def verdict_table(
    comparison: pd.DataFrame, reference: str, alpha: float = ALPHA, reviews: str = "reviews"
) -> pd.DataFrame:
    """One row per model × metric of a long comparison table (`paired_comparison` rows of each model B against the
    `reference` A, a ``model`` column naming B): model, metric, label, winner, advantage (B's, in the metric's better
    direction), significant, outcome (OUTCOMES, B's side), cell ("keybert ✓" / "keybert (n.s.)" / "tie"), sentence
    (`reviews`: the data's word for what is compared, "documents" on per-document data).
    """
    rows = []
    for row in comparison.to_dict("records"):
        b = str(row["model"])
        entry = registry.info(str(row["metric"]))
        d = b_minus_a(row)[0]
        p = float(row.get(P_COLUMN, np.nan))
        sign = -1.0 if entry is not None and entry.better == registry.LOWER else 1.0
        advantage = sign * d
        sig = bool(np.isfinite(p) and p < alpha)
        if not np.isfinite(advantage) or not row.get("n", 1):
            outcome, winner = UNDEFINED, ""
        elif advantage == 0:
            outcome, winner = TIE, ""
        else:
            winner = b if advantage > 0 else reference
            outcome = (WIN if advantage > 0 else LOSS) if sig else (AHEAD if advantage > 0 else BEHIND)
        cell = {UNDEFINED: "n/a", TIE: "tie"}.get(outcome, f"{winner} {'✓' if sig else '(n.s.)'}")
        rows.append(
            {
                "model": b,
                "metric": row["metric"],
                "label": entry.label if entry is not None else str(row["metric"]),
                "winner": winner,
                "advantage": advantage,
                "significant": sig,
                "outcome": outcome,
                "cell": cell,
                "sentence": verdict(row, reference, b, alpha, reviews=reviews),
            }
        )
    return pd.DataFrame(
        rows,
        columns=["model", "metric", "label", "winner", "advantage", "significant", "outcome", "cell", "sentence"],
    )


def verdict_matrix(table: pd.DataFrame, value: str = "cell") -> pd.DataFrame:
    """`verdict_table` as a models × metrics matrix of one of its columns (cell, outcome, advantage, significant):
    rows in the table's model order, columns in its metric order, labelled with the metrics' labels."""
    if table.empty:
        return pd.DataFrame()
    wide = table.pivot(index="model", columns="metric", values=value)
    wide = wide.reindex(index=list(dict.fromkeys(table["model"])), columns=list(dict.fromkeys(table["metric"])))
    labels = dict(zip(table["metric"], table["label"]))
    wide.columns = [labels[m] for m in wide.columns]
    wide.index.name = "model"
    return wide
