"""Undefined is not zero: a metric whose denominator is empty for a review has no value there (NaN), not 0.

The registry says which metrics have such a case (`MetricInfo.undefined_when`: the per-review count whose 0
leaves the metric undefined, and why, in the data's words): recall_absent of a review none of whose GT keywords
is absent from its text, recall_present and f1@k_present of one none of whose GT keywords occurs in it.  The
score stage applies the rule (`apply`); means skip the NaN, a micro ratio of an empty sum is NaN, and a metric
undefined on every review of a view (`undefined_everywhere`) is "—" with its reason on every surface, left out
of charts, headlines and comparisons, and empty (not 0) in CSV and JSON.  A metric with a zero rule of its own
(precision of a model that predicted nothing is 0, docs/metrics.md §3) has no such case.

The same rule covers a keyphrase preset's present and absent recall and F1 (the kweval preset: NaN per document;
the tools' presets score 0 there, as the tools do: such a column is `undefined_everywhere` when no document has such
gold, whatever the tool prints) and the grounding and diversity columns (no keyword graded or given).
"""

from __future__ import annotations

from collections.abc import Iterable, MutableMapping

import numpy as np
import pandas as pd

from kweval.metrics import registry


def rules(columns: Iterable[str]) -> dict[str, str]:
    """{metric: the count column whose 0 makes its per-review value undefined}, for the metrics among `columns`
    that have such a case."""
    out = {}
    for name in columns:
        entry = registry.info(name)
        if entry is not None and entry.undefined_when is not None:
            out[name] = entry.undefined_when[0]
    return out


def apply(columns: MutableMapping[str, np.ndarray]) -> None:
    """Set each ruled metric of `columns` (name -> per-review values, the counts among them) to NaN where its count
    is 0 (`rules`); a metric whose count is not among `columns` is left as it is."""
    for metric, count in rules(list(columns)).items():
        if count in columns:
            values = np.asarray(columns[metric], dtype="float64")
            columns[metric] = np.where(np.asarray(columns[count]) == 0, np.nan, values)


def reason(metric: str, review: str = "review") -> str:
    """Why `metric` is undefined for a review ("" for a metric that always has a value)."""
    entry = registry.info(metric)
    return "" if entry is None else entry.undefined_reason(review)


def undefined_everywhere(table: pd.DataFrame, metrics: Iterable[str]) -> list[str]:
    """The metrics among `metrics` with no value in any row of `table` (per-review scores or a summary): NaN in every
    row, or a count of `rules` 0 in every row (a keyphrase preset of a tool scores 0 there, as the tool does, where
    kweval says undefined)."""
    counts = rules(metrics)
    return [
        m
        for m in metrics
        if m in table.columns
        and len(table)
        and (table[m].isna().all() or counts.get(m) in table.columns and not table[counts[m]].fillna(0).any())
    ]


def everywhere_note(metric: str, review: str = "review") -> str:
    """ "Recall (absent): — on every document: every GT keyword of the document occurs in its text (none is
    absent)." (the line a surface shows for a metric `undefined_everywhere`)."""
    entry = registry.info(metric)
    label = entry.label if entry is not None else metric
    why = reason(metric, review) or "no value"
    return f"{label} ({metric}): — (undefined) on every {review}: {why}; left out of charts and comparisons"
