"""Why a predicted keyword did or did not match: the explorer's reasons, computed from the matching itself.

The evaluation records which GT keyword each prediction took (`gt_rank`).
A prediction left unmatched may still *match* a GT keyword under the match
mode: the one-to-one assignment (docs/metrics.md §2) gave that GT keyword to an
earlier prediction.  `match_reasons` tells the two cases apart by the failure
categories (docs/metrics.md §10, `kweval.explain.failure_predictions`: the one
rule, which `kweval failures` applies too) and names the earlier prediction:
"GT ‘comedy’ already taken by #2".
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from kweval.explain.failure_predictions import kept_categories
from kweval.metrics.categories import NEAR_MODES, PREDICTION_CATEGORIES

MATCHED, TAKEN, NO_MATCH = "matched", "taken", "no match"


def _explain(
    rows: pd.DataFrame,
    group: np.ndarray,
    n_groups: int,
    gt_keyword: dict[int, str],
    gt_norms: list[str],
    mode: str,
    k: int,
) -> dict[str, list]:
    """Reasons for every list's keywords at once (`rows` sorted by `group` 0..n_groups-1, then position), from their
    failure categories: one `kept_categories` call (one candidate table for the shared GT list), not one per list."""
    found = kept_categories(
        group,
        rows["norm"].astype(str).tolist(),
        rows["gt_rank"].to_numpy(dtype=np.int64),
        [gt_norms] * n_groups,
        mode,
        k,
    )
    status, reason, taken_rank, taken_by, category, detail = [], [], [], [], [], []
    for rank, code, near, holder, mode_at in zip(
        rows["gt_rank"].astype(int).tolist(),
        found.category.tolist(),
        found.gt_rank.tolist(),
        found.holder.tolist(),
        found.mode.tolist(),
    ):
        name = PREDICTION_CATEGORIES[code]
        category.append(name)
        taken_rank.append(near if name == "taken" else -1)
        taken_by.append(holder if name == "taken" else -1)
        if rank >= 0:
            status.append(MATCHED)
            reason.append(f"matches GT ‘{gt_keyword[rank]}’ (GT rank {rank})")
            detail.append(reason[-1])
        elif name == "taken":
            status.append(TAKEN)
            reason.append(f"GT ‘{gt_keyword[near]}’ already taken by #{holder}")
            detail.append(reason[-1])
        else:
            status.append(NO_MATCH)
            reason.append(f"no GT keyword matches ({mode})")
            detail.append(f"{NEAR_MODES[mode_at]}: GT ‘{gt_keyword[near]}’" if name == "near_lexical" else "")
    return dict(
        status=status, reason=reason, taken_gt_rank=taken_rank, taken_by=taken_by, category=category, detail=detail
    )


def match_reasons(keywords: pd.DataFrame, ground_truth: pd.DataFrame, mode: str = "approx", k: int = 5) -> pd.DataFrame:
    """`keywords` (one review's rows of `Evaluation.keywords`, any number of models) with the reason of each.

    `ground_truth`: the movie's rows of `Evaluation.ground_truth` (rank, keyword, norm).
    `mode`: the match mode the evaluation used.  Added columns:
    ``status`` (matched / taken / no match), ``reason`` (one sentence),
    ``taken_gt_rank`` and ``taken_by`` (for ``taken``: the GT rank it would
    have matched and the position of the earlier keyword holding it; else -1),
    ``category`` (its failure category at cut-off `k`, docs/metrics.md §10:
    `kweval.explain.failure_predictions.kept_categories`, the rule
    `kweval failures` applies) and ``detail`` (for near_lexical: the mode and
    GT keyword that would match).  Each model's list is explained on its own (never pooled).
    """
    gt = ground_truth.sort_values("rank")
    gt_keyword = dict(zip(gt["rank"].astype(int), gt["keyword"].astype(str)))
    gt_norms = gt["norm"].astype(str).tolist()
    if keywords.empty:
        return keywords.assign(
            status=pd.Series(dtype=object),
            reason=pd.Series(dtype=object),
            taken_gt_rank=pd.Series(dtype="int64"),
            taken_by=pd.Series(dtype="int64"),
            category=pd.Series(dtype=object),
            detail=pd.Series(dtype=object),
        )
    keys = ["review_id", "model"] if "review_id" in keywords else ["model"]
    group = keywords.groupby(keys, sort=False, dropna=False).ngroup().to_numpy(dtype=np.int64)
    order = np.lexsort((keywords["position"].to_numpy(), group))  # each list's rows in rank order, list by list
    columns = _explain(keywords.iloc[order], group[order], int(group.max()) + 1, gt_keyword, gt_norms, mode, k)
    back = np.empty_like(order)
    back[order] = np.arange(len(order))  # the sorted rows back in the caller's order
    return keywords.assign(**{name: np.asarray(values, dtype=object)[back] for name, values in columns.items()}).astype(
        {"taken_gt_rank": "int64", "taken_by": "int64"}
    )
