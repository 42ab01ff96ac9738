"""The answer at a glance: who leads where, by how much, and whether it holds.

The whole story in rows (`headline`, HEADLINE_COLUMNS), each one comparison of two models on one metric:

- ``lead``: per key metric (`key_metrics`: F1@k or F1, nDCG@k, weighted F1, semantic F1; a preset's F1@k and
  F1@M) the best model against the runner-up;
- ``elsewhere``: every other compared metric whose leader is not the model that leads most key metrics (the
  pick), that leader against the pick: "base ranks its first correct keyword highest";
- ``behind``: with three models or more, the model last on every key metric, against the pick, kept only when
  it is significantly behind on each: the clearly worse model.

Each row carries both values, the margin in the metric's better direction (absolute and relative to the other
model), its interval at Holm's level and the Holm p: the row of `aggregated.compare_aggregated` for that pair,
Holm within the metric's family among the `compared` metrics (`kweval.stats.families`), so the numbers are the
ones Compare, the report and `kweval compare` show for the same pair.  `kweval.stats.story` says each row in
plain words (``plain``) and with its statistics (``sentence``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import numpy as np
import pandas as pd

from kweval.data.vocabulary import MOVIE_WORDS, Vocabulary
from kweval.metrics import registry
from kweval.metrics.registry import column
from kweval.stats.aggregated import compare_aggregated
from kweval.stats.bootstrap import CONFIDENCE, N_BOOT, SEED, aggregate_values
from kweval.stats.families import Family, family_label, members, metric_family
from kweval.stats.paired import N_PERM, remember_pairs
from kweval.stats.story import headline_sentence, plain_sentence
from kweval.stats.verdict import ALPHA, disagreement

LEAD, ELSEWHERE, BEHIND = "lead", "elsewhere", "behind"
KINDS = (LEAD, ELSEWHERE, BEHIND)
HEADLINE_COLUMNS = [
    "kind",
    "metric",
    "label",
    "family",
    "best",
    "runner_up",  # the model `best` is compared with: the runner-up, the pick (elsewhere) or the worse model (behind)
    "best_value",
    "runner_up_value",
    "margin",
    "relative",
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
    "plain",
]


def key_metrics(columns: Sequence[str], k: int) -> list[str]:
    """The metrics a headline leads with, among `columns`: F1@k (or F1), nDCG@k, weighted F1, semantic F1."""
    candidates = [[column("f1@{k}", k), "f1"], [column("ndcg@{k}", k)], ["w_f1"], ["sem_f1"]]
    chosen = [next((c for c in group if c in columns), None) for group in candidates]
    return [c for c in chosen if c is not None]


def _ranked(values: pd.DataFrame, metric: str) -> list[str]:
    """The models with a value of `metric`, best first by the registry's better direction ([] without one)."""
    if metric not in values.columns or registry.better(metric) == registry.NEITHER:
        return []
    col = values[metric]
    defined = [(str(m), v) for m, v in zip(col.index.tolist(), col.tolist()) if not np.isnan(v)]
    # a stable sort, ties in table order either way (as pandas' `sort_values(kind="stable")`), on a few floats
    ranked = sorted(defined, key=lambda mv: mv[1], reverse=registry.better(metric) != registry.LOWER)
    return [m for m, _ in ranked]


def plan(values: pd.DataFrame, keys: Sequence[str], compared: Sequence[str]) -> list[tuple[str, str, str, str]]:
    """(kind, metric, best, other) of every row of the story, from the aggregated `values` (model × metric)."""
    leads = [(LEAD, m, r[0], r[1]) for m in keys if len(r := _ranked(values, m)) >= 2]
    if not leads:
        return []
    wins = Counter(best for _, m, best, other in leads if values.at[best, m] != values.at[other, m])  # ties: no win
    firsts = [best for _, _, best, _ in leads]
    pick = max(firsts, key=lambda m: (wins[m], -firsts.index(m)))  # the model leading most key metrics
    rows = list(leads)
    for metric in compared:
        ranked = _ranked(values, metric)
        if metric not in keys and len(ranked) >= 2 and ranked[0] != pick and pick in ranked:
            if values.at[ranked[0], metric] != values.at[pick, metric]:
                rows.append((ELSEWHERE, metric, ranked[0], pick))
    if len(values.index) >= 3:
        lasts = {_ranked(values, m)[-1] for _, m, _, _ in leads}
        if len(lasts) == 1 and (worst := lasts.pop()) != pick:
            rows += [(BEHIND, m, pick, worst) for _, m, _, _ in leads]
    return rows


class _Comparisons:
    """The pairs' comparisons a story needs, each pair computed once over the families it needs
    (`compare_aggregated`: Holm within each family, whatever else is computed beside it), read in either direction:
    B − A of the reverse pair is the mirror image (−diff, the interval's ends swapped)."""

    def __init__(self, scores: pd.DataFrame, compared: Sequence[str], how: str, family: Family, **options) -> None:
        self.scores, self.compared, self.how, self.family, self.options = scores, list(compared), how, family, options
        self.done: dict[tuple[str, str], dict[str, dict]] = {}

    def compute(self, rows: Sequence[tuple[str, str, str, str]]) -> None:
        """Compare each pair of `rows` (`plan`'s) on every metric of the families its rows need."""
        needed: dict[tuple[str, str], list[str]] = {}
        for _kind, metric, best, other in rows:
            pair = (best, other) if (best, other) in needed else (other, best)
            needed.setdefault(pair, []).extend(members(metric, self.compared, self.family))
        settings = {k: v for k, v in self.options.items() if k in ("n_boot", "n_perm", "seed")}
        aligned = remember_pairs(self.scores, needed, **settings)  # every pair's metrics in one pass, read back below
        for (a, b), metrics in needed.items():
            table = compare_aggregated(
                self.scores,
                a,
                b,
                list(dict.fromkeys(metrics)),
                self.how,
                family=self.family,
                aligned=aligned[(a, b)],
                **self.options,
            )
            self.done[(a, b)] = {row["metric"]: row for row in _records(table)}  # read a row at a time below

    def advantage(self, best: str, other: str, metric: str) -> dict:
        """`best`'s advantage over `other` on `metric` (B − A with A = other), its Holm-level interval and p."""
        flip = (other, best) not in self.done
        row = self.done[(best, other) if flip else (other, best)][metric]
        diff, low, high = float(row["diff"]), float(row["ci_low_holm"]), float(row["ci_high_holm"])
        if flip:
            diff, low, high = -diff, -high, -low
        return {
            "diff": diff,
            "low": low,
            "high": high,
            "ci_level": float(row["ci_level_holm"]),
            "p": float(row["p_randomization"]),
            "p_holm": float(row["p_randomization_holm"]),
            "n": int(row["n"]),
            "basis": str(row["basis"]),
        }


def coded_keys(scores: pd.DataFrame) -> pd.DataFrame:
    """Speed trick "coded keys": `scores` with movie and review_id as integer codes (`pd.factorize`: one code per
    value) and model as categories, for the comparisons alone: two models' rows are then chosen by category and
    paired (`aligned.pair_rows`: their keys compared, or merged on) on integers, the same pairs in the same order at
    a fraction of the cost (DNLP).  Reference: the headline of `scores` itself (tests/test_headline.py)."""
    models, names = pd.factorize(scores["model"])  # names in order of appearance
    return scores.assign(
        movie=pd.factorize(scores["movie"])[0],
        review_id=pd.factorize(scores["review_id"])[0],
        model=pd.Categorical.from_codes(models, categories=names),
    )


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
    compared: Sequence[str] | None = None,
    family: Family = metric_family,
) -> pd.DataFrame:
    """The story's rows (HEADLINE_COLUMNS, in the order lead, elsewhere, behind; see the module docstring).

    `scores`: `Evaluation.scores` (the reviews in scope); `metrics`: the key metrics; `compared`: every metric the
    view compares (default: `metrics`), where other wins are looked for and whose families Holm corrects within;
    `how`: the summary's aggregation, which the comparisons honour.  A metric with fewer than two models, or
    undefined for all but one (NaN), is left out.
    """
    compared = list(dict.fromkeys([*(compared if compared is not None else metrics), *metrics]))
    rows = scores.groupby("model", sort=False)  # each model's rows in table order, models in order of appearance
    values = pd.DataFrame({m: aggregate_values(part, compared, how) for m, part in rows}).T
    comparisons = _Comparisons(
        coded_keys(scores), compared, how, family, n_boot=n_boot, n_perm=n_perm, confidence=confidence, seed=seed
    )
    story = plan(values, list(metrics), compared)
    comparisons.compute(story)
    rows = []
    for kind, metric, best, other in story:
        sign = -1.0 if registry.better(metric) == registry.LOWER else 1.0
        found = comparisons.advantage(best, other, metric)
        margin, low, high = sign * found["diff"], *sorted((sign * found["low"], sign * found["high"]))
        best_value, other_value = float(values.at[best, metric]), float(values.at[other, metric])
        base = other_value if kind != BEHIND else best_value  # relative to the model the sentence measures against
        rows.append(
            {
                "kind": kind,
                "metric": metric,
                "label": _label(metric),
                "family": family_label(family(metric)),
                "best": best,
                "runner_up": other,
                "best_value": best_value,
                "runner_up_value": other_value,
                "margin": margin,
                "relative": sign * (best_value - other_value) / abs(base) if base else np.nan,  # of the values shown
                "ci_level": found["ci_level"],
                "ci_low": low,
                "ci_high": high,
                "p": found["p"],
                "p_holm": found["p_holm"],
                "n": found["n"],
                "basis": found["basis"],
            }
        )
    table = pd.DataFrame(rows, columns=HEADLINE_COLUMNS)
    table["significant"] = table["p_holm"].lt(alpha).fillna(False).astype(bool)
    behind = table["kind"] == BEHIND
    if behind.any() and not table.loc[behind, "significant"].all():  # not clearly behind: no such row
        table = table[~behind]
    records = _records(table)
    table["note"] = [disagreement(_as_comparison(row), alpha) for row in records]
    records = _records(table)
    table["sentence"] = [headline_sentence(row, words, alpha) for row in records]
    table["plain"] = [plain_sentence(row, words) for row in records]
    return table[HEADLINE_COLUMNS].reset_index(drop=True)


def _records(table: pd.DataFrame) -> list[dict]:
    """`table.to_dict("records")` (Python scalars) read column by column: pandas' row-wise conversion of a few rows
    of many columns costs ~10 ms, a τ step's headline makes five."""
    names = list(table.columns)
    return [dict(zip(names, row)) for row in zip(*(table[name].tolist() for name in names))]


def _label(metric: str) -> str:
    entry = registry.info(metric)
    return entry.label if entry is not None else metric


def _as_comparison(row: dict) -> dict:
    """A headline row in `paired_comparison`'s terms (A = the other model, B = best, B − A = the margin)."""
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
