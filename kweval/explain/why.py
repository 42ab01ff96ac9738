"""Why a predicted keyword did or did not match: the explorer's reasons, computed from the matching itself.

The evaluation records which GT keyword each prediction took (`gt_rank`).
A prediction left unmatched may still *match* a GT keyword under the match
mode: the one-to-one assignment (docs/metrics.md §2) gave that GT keyword to an
earlier prediction.  `match_reasons` tells the two cases apart with
`kweval.text.matching.candidate_lists` (the same candidates the evaluation used)
and names the earlier prediction: "GT ‘comedy’ already taken by #2".
"""

from __future__ import annotations

import pandas as pd

from kweval.text.matching import candidate_lists

MATCHED, TAKEN, NO_MATCH = "matched", "taken", "no match"


def _one_list(rows: pd.DataFrame, gt_keyword: dict[int, str], gt_norms: list[str], mode: str) -> pd.DataFrame:
    """Reasons for one review × model's keywords (rows sorted by position)."""
    norms = rows["norm"].astype(str).tolist()
    unique = list(dict.fromkeys(norms))
    candidates = dict(zip(unique, candidate_lists(unique, gt_norms, mode)))
    owner = {int(r): int(p) for p, r in zip(rows["position"], rows["gt_rank"]) if int(r) >= 0}
    status, reason, taken_rank, taken_by = [], [], [], []
    for pos, norm, rank in zip(rows["position"], norms, rows["gt_rank"]):
        rank = int(rank)
        if rank >= 0:
            status.append(MATCHED)
            reason.append(f"matches GT ‘{gt_keyword[rank]}’ (GT rank {rank})")
            taken_rank.append(-1)
            taken_by.append(-1)
            continue
        blocked = [int(j) for j in candidates[norm] if owner.get(int(j), pos) < pos]
        if blocked:
            j = blocked[0]  # the best-ranked GT keyword it would have taken
            status.append(TAKEN)
            reason.append(f"GT ‘{gt_keyword[j]}’ already taken by #{owner[j]}")
            taken_rank.append(j)
            taken_by.append(owner[j])
        else:
            status.append(NO_MATCH)
            reason.append(f"no GT keyword matches ({mode})")
            taken_rank.append(-1)
            taken_by.append(-1)
    return rows.assign(status=status, reason=reason, taken_gt_rank=taken_rank, taken_by=taken_by)


def match_reasons(keywords: pd.DataFrame, ground_truth: pd.DataFrame, mode: str = "approx") -> pd.DataFrame:
    """`keywords` (one review's rows of `Evaluation.keywords`, any number of models) with the reason of each.

    `ground_truth`: the movie's rows of `Evaluation.ground_truth` (rank, keyword, norm).
    `mode`: the match mode the evaluation used.  Added columns:
    ``status`` (matched / taken / no match), ``reason`` (one sentence),
    ``taken_gt_rank`` and ``taken_by`` (for ``taken``: the GT rank it would
    have matched and the position of the earlier keyword holding it; else -1).
    Each model's list is explained on its own (never pooled).
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
        )
    parts = [
        _one_list(rows.sort_values("position"), gt_keyword, gt_norms, mode)
        for _, rows in keywords.groupby(["review_id", "model"] if "review_id" in keywords else ["model"], sort=False)
    ]
    return pd.concat(parts).loc[keywords.index]
