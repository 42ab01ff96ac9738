"""The regression gate: a candidate run fails against a baseline only on a drop that is both large and real.

A metric fails when the candidate is worse than the baseline by more than the allowed drop (in the metric's own
units, by the registry's better direction) **and** the change is significant after Holm's correction within its
family of metrics (the paired randomization test of `kweval.runs.compare`, the same p as `kweval runs compare`).
A re-run of the same model, or a drop within the noise, passes.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from kweval.data.vocabulary import vocabulary_for
from kweval.metrics import registry
from kweval.runs.compare import RunComparison
from kweval.stats.verdict import ALPHA, format_p


@dataclass(frozen=True)
class GateResult:
    """Whether the gate failed, the one line saying why, and per metric its drop and verdict."""

    failed: bool
    line: str
    rows: pd.DataFrame  # metric, baseline, candidate, drop (worse > 0), ci_low, ci_high, p_holm, failed


def drops(table: pd.DataFrame) -> pd.Series:
    """How much worse the candidate (B) is than the baseline (A) per metric: A − B where higher is better,
    B − A where lower is; negative: better."""
    lower = table["metric"].map(lambda m: registry.better(str(m)) == registry.LOWER)
    return (-table["difference"]).where(~lower, table["difference"])


def gate(comparison: RunComparison, max_drop: float = 0.0, alpha: float = ALPHA) -> GateResult:
    """Fail when some metric dropped by more than `max_drop` with a Holm-adjusted p below `alpha`."""
    table = comparison.table
    rows = pd.DataFrame(
        {
            "metric": table["metric"],
            "baseline": table["a"],
            "candidate": table["b"],
            "drop": drops(table),
            "ci_low": table["ci_low"],
            "ci_high": table["ci_high"],
            "p_holm": table["p_holm"],
        }
    )
    rows["failed"] = (rows["drop"] > max_drop) & (rows["p_holm"] < alpha)
    units = f"{vocabulary_for(comparison.a.per_document).count(comparison.n_common)} (paired)"
    if rows["failed"].any():
        worst = rows[rows["failed"]].sort_values("drop", ascending=False).iloc[0]
        others = int(rows["failed"].sum()) - 1
        line = (
            f"gate failed: {worst['metric']} dropped by {worst['drop']:.4f} ({worst['baseline']:.4f} → "
            f"{worst['candidate']:.4f}, 95% CI of B − A [{worst['ci_low']:+.4f}, {worst['ci_high']:+.4f}], Holm "
            f"{format_p(worst['p_holm'])}) on {units}: more than the allowed {max_drop:g} and significant"
            + (f"; {others} more metric(s) failed" if others else "")
        )
        return GateResult(True, line, rows)
    if rows.empty or rows["drop"].isna().all():
        return GateResult(False, f"gate passed: no metric to compare on {units}", rows)
    largest = rows.sort_values("drop", ascending=False, na_position="last").iloc[0]
    if not largest["drop"] > 0:
        line = f"gate passed: no gated metric got worse on {units} ({', '.join(rows['metric'])})"
    elif largest["drop"] <= max_drop:
        line = (
            f"gate passed: the largest drop, {largest['metric']} by {largest['drop']:.4f}, is within the allowed "
            f"{max_drop:g} (Holm {format_p(largest['p_holm'])}, {units})"
        )
    else:
        line = (
            f"gate passed: {largest['metric']} dropped by {largest['drop']:.4f}, within the noise (Holm "
            f"{format_p(largest['p_holm'])}, not below {alpha:g}; 95% CI of B − A [{largest['ci_low']:+.4f}, "
            f"{largest['ci_high']:+.4f}], {units})"
        )
    return GateResult(False, line, rows)
