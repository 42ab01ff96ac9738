"""Two recorded runs compared unit by unit: the Compare page's statistics on the units both runs scored.

Run A's rows of one model and run B's rows of one model are paired on (movie, review_id) and handed to
`kweval.stats.aggregated.compare_aggregated`, the function behind the Compare page, under run A's aggregation:
the difference B − A per metric with its paired bootstrap interval and randomization p, Holm within each family of
the metrics both runs hold (`kweval.stats.families`: the registry's families under kweval, a preset's own under a
preset), as Compare and the report correct: a metric's p is the same whichever metrics are asked (`--metric`,
the gate's key metrics).  A metric with no value on any unit of either run (undefined there,
not 0) is left out and said.  Runs under different protocols, of different data (unless asked), or without a
metric or a unit in common are refused in one `RunsError`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import pandas as pd

from kweval.data.vocabulary import MOVIE_WORDS, Vocabulary
from kweval.runs.run import RunInfo, changes_text, option_changes
from kweval.runs.store import RunsError, RunStore
from kweval.stats.aggregated import compare_aggregated
from kweval.stats.bootstrap import N_BOOT
from kweval.stats.families import compared_metrics, members, metric_family, preset_family
from kweval.stats.headline import key_metrics
from kweval.stats.paired import N_PERM, paired_scores
from kweval.stats.verdict import format_p

SOURCE = "runs compare"
SIDE_A, SIDE_B = "A", "B"  # the two sides' model labels inside the paired table
COLUMNS = {  # compare_aggregated's names -> the comparison's
    "mean_a": "a",
    "mean_b": "b",
    "diff": "difference",
    "p_randomization": "p",
    "p_randomization_holm": "p_holm",
}
TABLE_COLUMNS = [
    "metric",
    "n",
    "a",
    "b",
    "difference",
    "ci_low",
    "ci_high",
    "p",
    "p_holm",
    "ci_level_holm",
    "ci_low_holm",
    "ci_high_holm",
    "wins",
    "ties",
    "losses",
    "basis",
]


@dataclass
class RunComparison:
    """Run B against run A (B − A everywhere): one row per metric, the units' changes of the first metric, and what
    differs between the runs."""

    a: RunInfo
    b: RunInfo
    model_a: str
    model_b: str
    how: str
    table: pd.DataFrame  # TABLE_COLUMNS
    metric: str  # the metric whose per-unit changes `changed` holds
    changed: pd.DataFrame  # movie, review_id, a, b, difference (B − A of `metric`), most worse first
    options: dict[str, tuple[object, object]] = field(default_factory=dict)
    n_a: int = 0  # units of run A's model
    n_b: int = 0
    notes: list[str] = field(default_factory=list)

    @property
    def n_common(self) -> int:
        return len(self.changed)

    def worst(self, n: int = 10) -> pd.DataFrame:
        """The `n` units that got most worse (B − A lowest first; only those that got worse)."""
        return self.changed[self.changed["difference"] < 0].head(n)

    def best(self, n: int = 10) -> pd.DataFrame:
        """The `n` units that got most better (B − A highest first; only those that got better)."""
        better = self.changed[self.changed["difference"] > 0]
        return better.iloc[::-1].head(n)

    def as_dict(self, n: int = 10) -> dict:
        """Plain data for `--format json`: the runs, models, settings that differ, the table, the units."""
        return {
            "a": {"id": self.a.id, "name": self.a.name, "model": self.model_a},
            "b": {"id": self.b.id, "name": self.b.name, "model": self.model_b},
            "aggregate": self.how,
            "n_common": self.n_common,
            "n_a": self.n_a,
            "n_b": self.n_b,
            "options_differ": {k: {"a": a, "b": b} for k, (a, b) in self.options.items()},
            "metrics": _records(self.table),
            "metric": self.metric,
            "most_worse": _records(self.worst(n)),
            "most_better": _records(self.best(n)),
            "notes": list(self.notes),
        }


def _records(frame: pd.DataFrame) -> list[dict]:
    """Rows as dicts with NaN as None (JSON null)."""
    return frame.astype(object).where(frame.notna(), None).to_dict("records")


def choose_models(a: RunInfo, b: RunInfo, model: str | None) -> tuple[str, str]:
    """(A's model, B's model): `model` (``NAME`` for both sides or ``A_NAME:B_NAME``), else the one model both
    runs hold, else each run's only model; anything else is ambiguous and asks for --model."""
    if model:
        left, sep, right = model.partition(":")
        pair = (left, right) if sep else (model, model)
        for run, wanted in zip((a, b), pair):
            if wanted not in run.models:
                raise RunsError(SOURCE, f"run {run.id} holds no model {wanted!r} (its models: {', '.join(run.models)})")
        return pair
    common = [m for m in a.models if m in b.models]
    if len(common) == 1:
        return common[0], common[0]
    if not common and len(a.models) == 1 and len(b.models) == 1:
        return a.models[0], b.models[0]
    held = f"A holds {', '.join(a.models)}; B holds {', '.join(b.models)}"
    raise RunsError(SOURCE, f"which model? {held}: give --model NAME (or --model A_NAME:B_NAME)")


def check_comparable(a: RunInfo, b: RunInfo, allow_different_data: bool) -> None:
    """Refuse runs whose numbers do not compare: other protocols, other data (unless allowed)."""
    if a.protocol != b.protocol:
        raise RunsError(
            SOURCE,
            f"run {a.id} is under the {a.protocol} protocol and run {b.id} under {b.protocol}: their numbers follow "
            "other conventions and are not compared",
        )
    if a.dataset_sha256 != b.dataset_sha256 and not allow_different_data:
        raise RunsError(
            SOURCE,
            f"the runs scored different data (reference SHA-256 {a.dataset_sha256[:12]}… and "
            f"{b.dataset_sha256[:12]}…); --allow-different-data compares them on the units both scored",
        )


def choose_metrics(a: RunInfo, b: RunInfo, metrics: Sequence[str] | None) -> list[str]:
    """The metrics compared: `metrics` (each must be in both runs), else every metric both runs hold."""
    if metrics:
        for run in (a, b):
            missing = [m for m in metrics if m not in run.metrics]
            if missing:
                raise RunsError(
                    SOURCE,
                    f"run {run.id} has no {', '.join(missing)} (its metrics: {', '.join(run.metrics)})",
                )
        return list(dict.fromkeys(metrics))
    common = [m for m in a.metrics if m in b.metrics]
    if not common:
        raise RunsError(SOURCE, f"runs {a.id} and {b.id} have no metric in common (different metric sets)")
    return common


def primary_metric(metrics: Sequence[str], k: object) -> str:
    """The metric whose per-unit changes are listed: the headline's first key metric among `metrics`, else the
    first one."""
    found = key_metrics(list(metrics), int(k) if isinstance(k, int) else 5)
    return found[0] if found else metrics[0]


def paired_rows(scores_a: pd.DataFrame, scores_b: pd.DataFrame, model_a: str, model_b: str) -> pd.DataFrame:
    """One per-review table of both sides: A's model's rows labelled `SIDE_A`, B's `SIDE_B` (what the comparison
    functions of `kweval.stats` take)."""
    left = scores_a[scores_a["model"] == model_a].assign(model=SIDE_A)
    right = scores_b[scores_b["model"] == model_b].assign(model=SIDE_B)
    return pd.concat([left, right], ignore_index=True)


def compare_runs(
    store: RunStore,
    a: RunInfo,
    b: RunInfo,
    metrics: Sequence[str] | None = None,
    model: str | None = None,
    allow_different_data: bool = False,
    n_boot: int = N_BOOT,
    n_perm: int = N_PERM,
) -> RunComparison:
    """Run `b` against run `a` (B − A): `compare_aggregated` on the units both scored, under A's aggregation."""
    check_comparable(a, b, allow_different_data)
    model_a, model_b = choose_models(a, b, model)
    chosen = choose_metrics(a, b, metrics)
    rows = paired_rows(store.scores(a), store.scores(b), model_a, model_b)
    return compare_rows(rows, a, b, model_a, model_b, chosen, n_boot, n_perm, held=choose_metrics(a, b, None))


def compare_rows(
    rows: pd.DataFrame,
    a: RunInfo,
    b: RunInfo,
    model_a: str,
    model_b: str,
    metrics: list[str],
    n_boot: int = N_BOOT,
    n_perm: int = N_PERM,
    held: Sequence[str] | None = None,
) -> RunComparison:
    """`compare_runs` on the paired table `rows` (`paired_rows`) of `metrics`, each Holm-corrected within its family
    among `held` (every metric both runs hold; default `metrics`), so its p does not depend on which are asked."""
    gone = [m for m in metrics if m not in compared_metrics(metrics, rows)]
    metrics = [m for m in metrics if m not in gone]
    if not metrics:
        raise RunsError(SOURCE, f"{', '.join(gone)}: undefined on every unit of both runs; nothing to compare")
    metric = primary_metric(metrics, a.options.get("k", 5))
    changed = paired_scores(rows, SIDE_A, SIDE_B, [metric], metric=metric)
    if changed.empty:
        raise RunsError(SOURCE, f"runs {a.id} and {b.id} have no unit in common: nothing to pair")
    n_a = int((rows["model"] == SIDE_A).sum())
    n_b = len(rows) - n_a
    table = _family_table(rows, a, metrics, held or metrics, n_boot, n_perm)
    changed = changed.rename(columns={f"{metric}_a": "a", f"{metric}_b": "b"})
    changed = changed.sort_values(["difference", "movie", "review_id"], kind="stable").reset_index(drop=True)
    notes = [f"{m}: undefined on every unit (no value, not 0); not compared" for m in gone]
    if a.dataset_sha256 != b.dataset_sha256:
        notes.append(
            f"different data: compared on the {len(changed):,} units both runs scored ({n_a:,} in A, {n_b:,} in B)"
        )
    if a.aggregate != b.aggregate:
        notes.append(f"A's aggregation ({a.aggregate}) is used; B was recorded under {b.aggregate}")
    options = option_changes(a, b)
    return RunComparison(a, b, model_a, model_b, a.aggregate, table, metric, changed, options, n_a, n_b, notes)


def _family_table(
    rows: pd.DataFrame, a: RunInfo, metrics: Sequence[str], held: Sequence[str], n_boot: int, n_perm: int
) -> pd.DataFrame:
    """`compare_aggregated`'s rows of `metrics` (`TABLE_COLUMNS`), computed with the other members of their families
    among the `held` metrics defined on `rows` (the registry's families under kweval, a preset's own under a
    preset: what Compare and the report correct within)."""
    family = metric_family if a.protocol == "kweval" else preset_family
    defined = compared_metrics(held, rows)
    needed = list(dict.fromkeys(x for m in metrics for x in members(m, defined, family)))
    table = compare_aggregated(rows, SIDE_A, SIDE_B, needed, a.aggregate, n_boot, n_perm, family=family)
    table = table.set_index("metric").loc[list(metrics)].reset_index()
    return table.rename(columns=COLUMNS)[TABLE_COLUMNS]


def options_line(comparison: RunComparison) -> str:
    """`settings that differ: k 5→10; match approx→stem` (or none)."""
    return f"settings that differ (A→B): {changes_text(comparison.options)}"


def lead_sentence(comparison: RunComparison, words: Vocabulary = MOVIE_WORDS) -> str:
    """The answer first: B's change on the comparison's first metric against A, its interval and Holm p
    (`yake-run [ce10…, yake] against kb [6bc7…, keybert] on 179 reviews: f1 0.0404 → 0.0202, B − A −0.0202 …`)."""
    row = comparison.table[comparison.table["metric"] == comparison.metric].iloc[0]
    a, b = comparison.a, comparison.b
    return (
        f"{b.name} [{b.id}, {comparison.model_b}] against {a.name} [{a.id}, {comparison.model_a}] on "
        f"{words.count(comparison.n_common)}: {comparison.metric} {row['a']:.4f} → {row['b']:.4f}, B − A "
        f"{row['difference']:+.4f} (95% CI [{row['ci_low']:+.4f}, {row['ci_high']:+.4f}], "
        f"Holm {format_p(row['p_holm'])})"
    )
