"""Compare verdicts: a "significant (Holm, α = 0.05)" column and one sentence per metric.

Reads the table of `kweval.stats.paired.paired_comparison` (one row per metric:
mean_a, mean_b, diff, ci_low, ci_high, p_randomization_holm, ...) and says
in words what it shows, e.g. "base beats reranker on nDCG@5 by 0.035
[0.030, 0.040], p < 0.001".  Which model "beats" the other follows the
metric's better direction in `kweval.metrics.registry`; the interval is always the
winner's advantage, so its sign needs no decoding.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np
import pandas as pd

from kweval.metrics import registry

ALPHA = 0.05
P_COLUMN = "p_randomization_holm"


def significant(comparison: pd.DataFrame, alpha: float = ALPHA) -> pd.Series:
    """Per row: the Holm-adjusted randomization p-value is below `alpha` (False where it is NaN)."""
    return comparison[P_COLUMN].lt(alpha).fillna(False).astype(bool)


def with_significance(comparison: pd.DataFrame, alpha: float = ALPHA) -> pd.DataFrame:
    """`comparison` with a boolean ``significant`` column after the p-values."""
    out = comparison.copy()
    out.insert(out.columns.get_loc(P_COLUMN) + 1, "significant", significant(comparison, alpha))
    return out


def b_minus_a(row: Mapping) -> tuple[float, float, float]:
    """(difference, CI low, CI high) of B − A, whichever sign convention the table's ``diff`` uses.

    The paired difference of means equals mean_b − mean_a (or its negative),
    so the means tell the convention; an exact tie keeps B − A, kweval's convention.
    """
    d, lo, hi = float(row["diff"]), float(row["ci_low"]), float(row["ci_high"])
    expected = float(row["mean_b"]) - float(row["mean_a"])
    if expected != 0 and math.isclose(d, -expected, rel_tol=1e-6, abs_tol=1e-12):
        return -d, -hi, -lo
    return d, lo, hi


def format_p(p: float) -> str:
    """``p < 0.001`` or ``p = 0.012`` (``p n/a`` when undefined)."""
    if p is None or not np.isfinite(p):
        return "p n/a"
    return "p < 0.001" if p < 0.001 else f"p = {p:.3f}"


def verdict(row: Mapping, a: str, b: str, alpha: float = ALPHA, digits: int = 3) -> str:
    """One sentence on one metric's comparison of model `a` with model `b`."""
    metric = str(row["metric"])
    entry = registry.info(metric)
    label = entry.label if entry is not None else metric
    n = row.get("n", 1)
    d, lo, hi = b_minus_a(row)
    if not n or not all(np.isfinite([d, lo, hi])):
        return f"{a} and {b} share no reviews where {label} is defined."
    p = float(row[P_COLUMN])
    f = lambda x: f"{x:.{digits}f}"  # noqa: E731
    if not (np.isfinite(p) and p < alpha):
        return (
            f"No significant difference between {a} and {b} on {label}: "
            f"{b} − {a} = {f(d)} [{f(lo)}, {f(hi)}], {format_p(p)} (Holm)."
        )
    if entry is not None and entry.better == registry.LOWER:  # B's advantage is then A − B
        d, lo, hi = -d, -hi, -lo
    winner, loser = (b, a) if d > 0 else (a, b)
    adv, adv_lo, adv_hi = (d, lo, hi) if winner == b else (-d, -hi, -lo)  # the winner's advantage and its interval
    return f"{winner} beats {loser} on {label} by {f(adv)} [{f(adv_lo)}, {f(adv_hi)}], {format_p(p)} (Holm)."


def verdicts(comparison: pd.DataFrame, a: str, b: str, alpha: float = ALPHA) -> pd.Series:
    """`verdict` for every row of a `paired_comparison` table (index kept)."""
    return pd.Series(
        [verdict(row, a, b, alpha) for row in comparison.to_dict("records")], index=comparison.index, dtype=object
    )
