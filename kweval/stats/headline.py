"""The answer at a glance: per key metric, the best model, its margin over the runner-up, and whether it holds.

One sentence a stakeholder can repeat, e.g. "On 9,362 reviews, KeyBERT leads
on F1@5 by 0.0031 (98.3% CI 0.0012–0.0050, Holm), significant after Holm
correction."  Everything comes from the engines already here: the aggregated
value the summary reports (`bootstrap.aggregate_values`), the paired
comparison of the two leaders on their shared reviews (`aggregated.
compare_aggregated`, micro honoured), Holm across the key metrics (the
comparisons made), the interval at each comparison's Holm level
(`paired.holm_levels`), and `verdict.disagreement` when interval and verdict part.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from kweval.data.vocabulary import MOVIE_WORDS, Vocabulary
from kweval.metrics import registry
from kweval.metrics.registry import column
from kweval.stats.aggregated import aggregated_difference, basis, paired_sides, statistic_columns
from kweval.stats.bootstrap import CONFIDENCE, N_BOOT, SEED, aggregate_values
from kweval.stats.numbers import decimals_for_interval, format_interval, format_level, format_number
from kweval.stats.paired import N_PERM, holm, holm_levels
from kweval.stats.verdict import ALPHA, disagreement, format_p

HEADLINE_COLUMNS = [
    "metric",
    "label",
    "best",
    "runner_up",
    "best_value",
    "runner_up_value",
    "margin",
    "ci_level",
    "ci_low",
    "ci_high",
    "p",
    "p_holm",
    "significant",
    "n",
    "basis",
    "note",
    "sentence",
]


def key_metrics(columns: Sequence[str], k: int) -> list[str]:
    """The metrics a headline leads with, among `columns`: F1@k (or F1), nDCG@k, weighted F1, semantic F1."""
    candidates = [[column("f1@{k}", k), "f1"], [column("ndcg@{k}", k)], ["w_f1"], ["sem_f1"]]
    chosen = [next((c for c in group if c in columns), None) for group in candidates]
    return [c for c in chosen if c is not None]


def _leaders(values: pd.DataFrame, metric: str) -> tuple[str, str] | None:
    """(best, runner-up) model of `metric` by the registry's better direction; None with fewer than two values."""
    col = values[metric].dropna()
    if len(col) < 2 or registry.better(metric) == registry.NEITHER:
        return None
    ordered = col.sort_values(ascending=registry.better(metric) == registry.LOWER, kind="stable")
    return str(ordered.index[0]), str(ordered.index[1])


def headline(
    scores: pd.DataFrame,
    metrics: Sequence[str],
    how: str = "macro",
    words: Vocabulary = MOVIE_WORDS,
    n_boot: int = N_BOOT,
    n_perm: int = N_PERM,
    confidence: float = CONFIDENCE,
    alpha: float = ALPHA,
    seed: int = SEED,
) -> pd.DataFrame:
    """One row per key metric (HEADLINE_COLUMNS): the best model, the runner-up, the best's margin (in the metric's
    better direction) on the reviews both were evaluated on, its interval at Holm's level, the raw and
    Holm-adjusted randomization p across the metrics compared, and the sentence.

    `scores`: `Evaluation.scores` (the reviews in scope); `how`: the summary's aggregation, which the comparison
    honours.  A metric with fewer than two models is left out.
    """
    models = list(dict.fromkeys(scores["model"]))
    values = pd.DataFrame(
        {m: aggregate_values(scores[scores["model"] == m], metrics, how) for m in models}
    ).T  # model × metric
    rows = []
    for metric in metrics:
        leaders = _leaders(values, metric) if metric in values.columns else None
        if leaders is None:
            continue
        best, runner = leaders
        xa, xb = paired_sides(scores, runner, best, statistic_columns([metric], how, list(scores.columns)))
        value_a, value_b, draws, p = aggregated_difference(xa, xb, metric, how, n_boot, n_perm, seed)
        sign = -1.0 if registry.better(metric) == registry.LOWER else 1.0
        rows.append(
            {
                "metric": metric,
                "label": _label(metric),
                "best": best,
                "runner_up": runner,
                "best_value": float(values.loc[best, metric]),
                "runner_up_value": float(values.loc[runner, metric]),
                "margin": sign * (value_b - value_a),
                "p": p,
                "n": int((xa[metric].notna() & xb[metric].notna()).sum()),
                "basis": basis(metric, how),
                "_draws": sign * draws,
            }
        )
    table = pd.DataFrame(rows, columns=[*HEADLINE_COLUMNS, "_draws"])
    if table.empty:
        return table[HEADLINE_COLUMNS]
    table["p_holm"] = holm(table["p"].to_numpy(dtype="float64"))
    table["ci_level"] = holm_levels(table["p"].to_numpy(dtype="float64"), confidence)
    table["significant"] = table["p_holm"].lt(alpha).fillna(False).astype(bool)
    bounds = [
        np.quantile(d, [(1 - lv) / 2, (1 + lv) / 2]) if len(d) and np.isfinite(lv) else (np.nan, np.nan)
        for d, lv in zip(table["_draws"], table["ci_level"])
    ]
    table["ci_low"] = [b[0] for b in bounds]
    table["ci_high"] = [b[1] for b in bounds]
    table["note"] = [disagreement(_as_comparison(row), alpha) for row in table.to_dict("records")]
    table["sentence"] = [headline_sentence(row, words, alpha) for row in table.to_dict("records")]
    return table[HEADLINE_COLUMNS].reset_index(drop=True)


def _label(metric: str) -> str:
    entry = registry.info(metric)
    return entry.label if entry is not None else metric


def _as_comparison(row: dict) -> dict:
    """A headline row in `paired_comparison`'s terms (A = runner-up, B = best, B − A = the margin)."""
    return {
        "metric": row["metric"],
        "mean_a": 0.0,
        "mean_b": row["margin"],
        "diff": row["margin"],
        "ci_low_holm": row["ci_low"],
        "ci_high_holm": row["ci_high"],
        "ci_level_holm": row["ci_level"],
        "p_randomization": row["p"],
        "p_randomization_holm": row["p_holm"],
    }


def headline_sentence(row: dict, words: Vocabulary = MOVIE_WORDS, alpha: float = ALPHA) -> str:
    """ "On 9,362 reviews, KeyBERT leads on F1@5 by 0.0031 (98.3% CI 0.0012–0.0050, Holm), significant after
    Holm correction." (the margin and interval with enough decimals never to read 0.000)."""
    places = decimals_for_interval(row["margin"], row["ci_low"], row["ci_high"])
    interval = format_interval(row["ci_low"], row["ci_high"], places, sep="–")
    level = format_level(row["ci_level"])
    verdict = (
        "significant after Holm correction"
        if row["significant"]
        else f"not significant after Holm correction ({format_p(row['p_holm'])})"
    )
    note = f" ({row['note']})" if row.get("note") else ""
    micro = " (micro: ratio of sums)" if row.get("basis") == "ratio of sums (micro)" else ""
    return (
        f"On {words.count(int(row['n']))}, {row['best']} leads on {row['label']}{micro} over {row['runner_up']} by "
        f"{format_number(row['margin'], places)} ({level} CI {interval}, Holm), {verdict}{note}."
    )
