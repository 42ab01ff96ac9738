"""Which comparisons Holm's correction counts together: one fixed family per kind of metric (docs/metrics.md §7).

A comparison of two models on one metric is Holm-corrected with the other
metrics of its **family**, never with whatever else a page happens to show:
the set-based and weighted metrics are one family, the ranking metrics at k
another, and each optional group (the keyphrase metrics, the present/absent
split, semantic, sentiment, and any group registered later) its own.  The
family of a metric is read from the registry: its docs section (`group`)
and the option that turns it on.  So the same comparison has the same
p-value and interval on the Summary, Compare, the report and the CLI, and
turning semantic matching on (a family of its own) or changing k (the
ranking family) leaves F1's p-value as it was.

Under a keyphrase preset (`preset_family`) the preset's P, R and F1 at its cut-offs are one family, its
present-only and absent-only columns one family each.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from kweval.metrics import registry
from kweval.metrics.docs_table import group_title

if TYPE_CHECKING:
    import pandas as pd

Family = Callable[[str], str]  # a metric's name -> the key of its family
PRESET = "preset"  # the one family of a keyphrase preset's columns
OTHER = "other"  # a column the registry does not know


def metric_family(metric: str) -> str:
    """The family key of `metric`: "<group>" or "<group>:<option>" when the option is not the always-on one
    (``f1`` -> "set", ``ndcg@10`` -> "ranking", ``recall_absent`` -> "keyphrase:present"); OTHER if unknown."""
    entry = registry.info(metric)
    if entry is None:
        return OTHER
    return entry.group if not entry.option or entry.option == entry.group else f"{entry.group}:{entry.option}"


def preset_family(metric: str) -> str:
    """Under a keyphrase preset: the preset's P, R and F1 at its cut-offs are one family, its present-only and
    absent-only columns (``f1@5_present``, ``r@50_absent``) one family each."""
    for part in ("present", "absent"):
        if metric.endswith(f"_{part}"):
            return f"{PRESET}:{part}"
    return PRESET


def family_label(key: str) -> str:
    """A family in words: "set-based and weighted", "ranking (cut off at k)", "keyphrase benchmarks (--present)"."""
    if key.startswith(PRESET):
        part = key.partition(":")[2]
        return f"the preset's {part} metrics" if part else "the preset's metrics"
    if key == OTHER:
        return "other columns"
    group, _, option = key.partition(":")
    title = group_title(group).lower()
    if option:
        title = title.split(" (")[0] + f" (--{option})"
    return title


def family_keys(metrics: Sequence[str], family: Family = metric_family) -> list[str]:
    """The family key of each of `metrics`, in order."""
    return [family(m) for m in metrics]


def members(metric: str, metrics: Sequence[str], family: Family = metric_family) -> list[str]:
    """The metrics of `metrics` in `metric`'s family (`metric` among them, first if it is not in `metrics`)."""
    key = family(metric)
    same = [m for m in metrics if family(m) == key]
    return same if metric in same else [metric, *same]


def families_in(metrics: Sequence[str], family: Family = metric_family) -> list[str]:
    """The families of `metrics` in words, each once, in order (for the one sentence a page says about Holm)."""
    return [family_label(k) for k in dict.fromkeys(family_keys(metrics, family))]


def compared_metrics(metrics: Sequence[str], scores: pd.DataFrame) -> list[str]:
    """The metrics of `metrics` a view compares, in order: the per-review columns of `scores` (a movie-level one such
    as gt_coverage has no per-review pairs) with a value on some row (`kweval.metrics.undefined`: one undefined
    everywhere is "—", not compared).  One definition for the Summary's headline, Compare, the report, `kweval
    compare`, the verdict under every preset and run comparisons, so that a family's members, and with them a
    comparison's Holm p, are the same on every surface."""
    from kweval.metrics.undefined import undefined_everywhere

    per_review = [m for m in metrics if m in scores.columns and _level(m) != "movie"]
    gone = set(undefined_everywhere(scores, per_review))
    return [m for m in per_review if m not in gone]


def _level(metric: str) -> str:
    entry = registry.info(metric)
    return entry.level if entry is not None else "review"
