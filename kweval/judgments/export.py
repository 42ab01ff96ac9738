"""Judgments out: the judged ground truth G' as a tidy table (`kweval judgments export --ground-truth`).

One row per keyword of each judged list: `movie, review_id` (empty for the
movie's list), `rank` in G', `keyword`, `norm`, `relevance`, `judged_grade`
(empty where nobody judged it) and `source` (`reference` for a GT keyword,
`judged` for one the readers added).  The TREC qrels of G' are written by
`kweval.io.export.write_trec` from the judged evaluation, whose ground truth
carries these relevances.
"""

from __future__ import annotations

import pandas as pd

from kweval.judgments.combine import JudgedGroundTruth

TIDY_COLUMNS = ["movie", "review_id", "rank", "keyword", "norm", "relevance", "judged_grade", "source"]


def judged_ground_truth_table(judged: JudgedGroundTruth) -> pd.DataFrame:
    """G' as a tidy `ground_truth` table (`TIDY_COLUMNS`), list by list in rank order."""
    out = judged.table[TIDY_COLUMNS]
    out = out.assign(review_id=out["review_id"].astype(object).where(out["review_id"].notna(), None))
    return out.sort_values(["movie", "review_id", "rank"], kind="stable", na_position="first").reset_index(drop=True)
