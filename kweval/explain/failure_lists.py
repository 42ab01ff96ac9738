"""Where each evaluated review × model's GT list lies, for the failure categories (docs/metrics.md §10).

An evaluation scores each review × model (a *group*, one row of
`Evaluation.scores`) against one GT list: its review's own list
(per-document GT) or its movie's.  `group_lists` numbers those lists, lays
their cleaned keywords end to end (each list in rank order) and tells every
group and every review which list it reads, so both sides of the categories
index the same arrays.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from kweval.data.dataset import KEY
from kweval.evaluation.clean import gt_list_keys
from kweval.evaluation.options import Evaluation


@dataclass
class GroupLists:
    """The evaluated groups, their reviews, and the GT lists they are scored against."""

    groups: pd.DataFrame  # movie, review_id, model: one row per group (Evaluation.scores' order)
    group_list: np.ndarray  # per group: its list (-1: none)
    group_review: np.ndarray  # per group: its review (a position in `review_keys`)
    review_keys: pd.DataFrame  # movie, review_id: one row per distinct review of the groups
    review_list: np.ndarray  # per review: its list
    list_start: np.ndarray  # per list: where its keywords start in `gt_keyword` / `gt_norm`
    list_size: np.ndarray  # per list: |G|
    gt_keyword: np.ndarray  # every list's keywords as given, list after list, each in rank order (object)
    gt_norm: np.ndarray  # the same, normalized (object)

    def sizes(self) -> np.ndarray:
        """Per group: |G| of its list (0 without one)."""
        return np.where(self.group_list >= 0, self.list_size[np.maximum(self.group_list, 0)], 0)

    def starts(self) -> np.ndarray:
        """Per group: where its list starts in `gt_keyword`."""
        return np.where(self.group_list >= 0, self.list_start[np.maximum(self.group_list, 0)], 0)


def group_lists(evaluation: Evaluation) -> GroupLists:
    """The groups of `evaluation` with their GT lists (`Evaluation.ground_truth`, keyed as the semantic metrics key
    them: `gt_list_keys`)."""
    gt = evaluation.ground_truth
    by_list = gt_list_keys(gt)
    keyed = by_list(gt[["movie", "review_id", "rank", "keyword", "norm"]])
    order = np.lexsort((keyed["rank"].to_numpy(), pd.factorize(keyed["movie"], sort=False)[0]))
    keyed = keyed.iloc[order]
    list_code, list_names = pd.factorize(keyed["movie"], sort=False)
    heads = np.flatnonzero(np.r_[True, list_code[1:] != list_code[:-1]]) if len(list_code) else np.zeros(0, np.int64)
    list_start = heads.astype(np.int64)
    list_size = np.diff(np.append(heads, len(list_code))).astype(np.int64)
    groups = evaluation.scores[KEY].reset_index(drop=True)
    group_key = by_list(groups)["movie"]
    group_list = pd.Index(list_names).get_indexer(group_key) if len(list_names) else np.full(len(groups), -1)
    review_code, review_first = _first_codes(groups)
    review_keys = groups[["movie", "review_id"]].iloc[review_first].reset_index(drop=True)
    return GroupLists(
        groups=groups,
        group_list=np.asarray(group_list, dtype=np.int64),
        group_review=review_code,
        review_keys=review_keys,
        review_list=np.asarray(group_list, dtype=np.int64)[review_first],
        list_start=list_start,
        list_size=list_size,
        gt_keyword=keyed["keyword"].to_numpy(dtype=object),
        gt_norm=keyed["norm"].to_numpy(dtype=object),
    )


def _first_codes(groups: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """Per group, its review's code (reviews numbered by first appearance), and each review's first group."""
    codes = pd.MultiIndex.from_frame(groups[["movie", "review_id"]]).factorize()[0].astype(np.int64)
    _, first = np.unique(codes, return_index=True)
    return codes, first


def group_index(groups: pd.DataFrame, frame: pd.DataFrame) -> np.ndarray:
    """Per row of `frame` (movie, review_id, model), its group's position in `groups`, or -1."""
    if len(frame) == 0:
        return np.zeros(0, dtype=np.int64)
    index = pd.MultiIndex.from_frame(groups[KEY])
    keys = pd.MultiIndex.from_arrays([frame[c].to_numpy(dtype=object) for c in KEY])
    return np.asarray(index.get_indexer(keys), dtype=np.int64)
