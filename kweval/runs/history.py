"""The run history as tables: the list of runs, each model's value of a metric over its runs, the setting changes.

Plain data for `kweval runs list` and the dashboard's History page, read from the store's run rows and recorded
summaries (no per-review table is read, so a history of many large runs opens fast).
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from kweval.runs.run import RunInfo, changes_text, option_changes
from kweval.stats.headline import key_metrics

LIST_COLUMNS = ["id", "name", "time", "models", "data", "protocol", "aggregate", "settings", "dataset_sha256"]


def settings_text(info: RunInfo) -> str:
    """The settings people tell runs apart by: `k 5 · match approx · semantic τ 0.75`."""
    o = info.options
    parts = [f"k {o.get('k')}"] if o.get("k") is not None else []
    if o.get("match"):
        parts.append(f"match {o['match']}")
    if o.get("semantic"):
        parts.append(f"semantic τ {o.get('threshold')} ({o.get('embedding_backend')})")
    if o.get("sentiment"):
        parts.append("sentiment")
    return " · ".join(parts)


def runs_table(runs: Sequence[RunInfo]) -> pd.DataFrame:
    """One row per run (`LIST_COLUMNS`), oldest first."""
    rows = [
        {
            "id": r.id,
            "name": r.name,
            "time": r.short_time,
            "models": ",".join(r.models),
            "data": r.data,
            "protocol": r.protocol,
            "aggregate": r.aggregate,
            "settings": settings_text(r),
            "dataset_sha256": r.dataset_sha256,
        }
        for r in runs
    ]
    return pd.DataFrame(rows, columns=LIST_COLUMNS)


def history_metrics(runs: Sequence[RunInfo]) -> list[str]:
    """Every metric some run holds, the key metrics (F1@k, nDCG@k, weighted F1, semantic F1 of the latest run's
    k) first."""
    found = list(dict.fromkeys(m for r in runs for m in r.metrics))
    k = runs[-1].options.get("k", 5) if runs else 5
    keys = key_metrics(found, int(k) if isinstance(k, int) else 5)
    return [*keys, *(m for m in found if m not in keys)]


def metric_history(runs: Sequence[RunInfo], summary: pd.DataFrame, metric: str) -> pd.DataFrame:
    """One row per run × model holding `metric` (time order): run_id, name, time (UTC timestamps), model, value,
    ci_low, ci_high, from the recorded summaries (`RunStore.summary`, ALL rows)."""
    columns = ["run_id", "name", "time", "model", "value", "ci_low", "ci_high"]
    rows = summary[summary["metric"] == metric]
    if rows.empty or not runs:
        return pd.DataFrame(columns=columns)
    meta = pd.DataFrame({"run_id": [r.id for r in runs], "name": [r.name for r in runs], "order": range(len(runs))})
    meta["time"] = pd.to_datetime([r.time for r in runs], utc=True, format="ISO8601")
    out = rows.merge(meta, on="run_id").sort_values(["order", "model"], kind="stable")
    return out[columns].reset_index(drop=True)


def change_marks(runs: Sequence[RunInfo]) -> pd.DataFrame:
    """Where a setting changed between consecutive runs (time order): time (UTC), run_id, name and the changes as
    text (`k 5→10; match approx→stem`)."""
    rows = []
    for before, after in zip(runs, runs[1:]):
        changes = option_changes(before, after)
        if changes:
            rows.append(
                {
                    "time": pd.to_datetime(after.time, utc=True),
                    "run_id": after.id,
                    "name": after.name,
                    "changes": changes_text(changes),
                }
            )
    return pd.DataFrame(rows, columns=["time", "run_id", "name", "changes"])
