"""Grounding as a detail of the failure categories (docs/metrics.md §10 and §12).

With `--grounding`, every kept prediction has a grade (`Evaluation.keywords`:
``grounding``, ``support``, ``support_cosine``).  The failure table carries
it (column ``grounding``), and the detail of an `off_reference` prediction
says it, so that "off the reference but present in the text" (a possible
gap in the reference) and "off the reference and unsupported" (a candidate
hallucination) are told apart; `off_reference_grades` counts them (the Failures page).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from kweval.beyond.grounding import GRADES
from kweval.data.dataset import KEY
from kweval.evaluation.options import Evaluation

SHOWN_CHARS = 80  # a supporting sentence in a detail is cut after this many characters


def grades_of(evaluation: Evaluation, group: np.ndarray, position: np.ndarray) -> tuple[np.ndarray, list[str]] | None:
    """(per prediction row: its grade or "" (dropped by cleaning), per row: the grounding detail) for rows given by
    their group (a row of `Evaluation.scores`) and position after cleaning (-1: dropped); None without grounding."""
    kw = evaluation.keywords
    if "grounding" not in kw.columns:
        return None
    groups = pd.MultiIndex.from_frame(evaluation.scores[KEY].reset_index(drop=True))
    kw_group = groups.get_indexer(pd.MultiIndex.from_frame(kw[KEY].astype(object)))
    width = int(max(kw["position"].max() if len(kw) else 0, position.max(initial=0))) + 1
    keys = kw_group.astype(np.int64) * width + kw["position"].to_numpy(dtype=np.int64)
    lookup = pd.Index(keys).get_indexer(group.astype(np.int64) * width + position.astype(np.int64))
    lookup[position < 0] = -1
    grade = np.full(len(group), "", dtype=object)
    found = lookup >= 0
    grade[found] = kw["grounding"].to_numpy(dtype=object)[lookup[found]]
    grade[pd.isna(grade)] = ""
    support = kw["support"].to_numpy(dtype=object)
    cosine = kw["support_cosine"].to_numpy(dtype=np.float64)
    details = [detail(g, support[i], cosine[i]) if i >= 0 else "" for g, i in zip(grade.tolist(), lookup.tolist())]
    return grade, details


def detail(grade: object, support: object, cosine: float) -> str:
    """The words of one prediction's grade: in the text, supported by a sentence (its words, or a cosine), or not."""
    shown = _cut(str(support)) if isinstance(support, str) and support else ""
    if grade == "present":
        return "present in the text"
    if grade == "supported":
        how = f"cosine {cosine:.3f}" if cosine == cosine else "its words in one sentence"
        return f"supported by the text ({how}): ‘{shown}’"
    if grade == "unsupported":
        nearest = f" (nearest ‘{shown}’, cosine {cosine:.3f})" if shown else ""
        return f"unsupported by the text{nearest}"
    return ""


def _cut(text: str) -> str:
    return text if len(text) <= SHOWN_CHARS else text[: SHOWN_CHARS - 1].rstrip() + "…"


def off_reference_grades(table: pd.DataFrame, by: Sequence[str] = ("model",)) -> pd.DataFrame:
    """The off-the-reference predictions of a failure table counted per `by` × grade (present, supported,
    unsupported; every grade, zeros included), with each count's share of its `by` group; empty without a grounding
    column."""
    by = list(by)
    columns = [*by, "grounding", "count", "share"]
    if "grounding" not in table.columns:
        return pd.DataFrame(columns=columns)
    off = table.loc[(table["category"] == "off_reference").to_numpy(), [*by, "grounding"]].astype(object)
    counts = off.groupby([*by, "grounding"], sort=False).size()
    keys = off[by].drop_duplicates()
    full = keys.merge(pd.DataFrame({"grounding": list(GRADES)}), how="cross")
    full["count"] = [int(counts.get((*k, g), 0)) for k, g in zip(full[by].itertuples(index=False), full["grounding"])]
    total = full.groupby(by, sort=False)["count"].transform("sum")
    full["share"] = np.where(total > 0, full["count"] / total.clip(lower=1), 0.0)
    return full[columns].reset_index(drop=True)
