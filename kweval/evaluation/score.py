"""The score stage: the per-review table, every metric computed once over all review × model groups.

docs/metrics.md §3 "Per-review metrics" and §9 "Keyphrase benchmarks": the
metric families (`kweval.metrics`) turn the counts and matched pairs of
`count.Counts` into columns; the present/absent metrics also read which GT
keywords occur in each review's text (`presence.present_gt`) and are NaN for
a review without text.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from kweval._arrays import object_array, object_column
from kweval.data.dataset import Dataset
from kweval.evaluation.clean import CleanGroundTruth
from kweval.evaluation.count import Counts
from kweval.evaluation.match import Matches
from kweval.evaluation.options import EvalOptions
from kweval.evaluation.presence import present_gt
from kweval.metrics import per_review as metrics


def score_stage(
    dataset: Dataset, gt: CleanGroundTruth, matches: Matches, counts: Counts, options: EvalOptions
) -> pd.DataFrame:
    """The per-review table: one row per review × model group, its counts and every metric asked for."""
    c, pairs, m_grp, n_gt = counts.counts, counts.pairs, counts.pairs.grp, matches.n_gt
    if options.present:  # first: its working memory comes and goes before the columns are built
        n_gt_present, pair_present = present_gt(
            dataset.reviews,
            gt.norms,
            gt.movies,
            matches.group_movie,
            matches.group_review,
            matches.group_gt_start,
            n_gt,
            m_grp,
            pairs.gt_pos,
            options.match,
        )
    model_names = object_array(dataset.models["model"].tolist())
    columns = {
        "movie": object_column(object_array(gt.movies)[matches.group_movie]),
        "review_id": object_column(matches.group_review),
        "model": object_column(model_names[matches.group_model]),
    }
    columns.update(c)
    columns.update(metrics.set_metrics(c["n_pred"], c["n_gt"], c["n_matched"]))
    columns.update(metrics.weighted_metrics(c["score_sum"], c["matched_score"], c["gain_sum"], c["matched_gain"]))
    columns.update(
        metrics.ranking_metrics(
            m_grp, pairs.position, pairs.gt_rank, n_gt, options.k, options.gain, options.discount, counts.group_ranked
        )
    )
    if options.keyphrase:
        columns.update(metrics.keyphrase_metrics(c["n_pred"], n_gt, c["n_matched"], m_grp, pairs.position, options.k))
    if options.present:
        columns.update(metrics.present_metrics(n_gt_present, n_gt, m_grp, pairs.position, pair_present, options.k))
        without_text = n_gt_present < 0  # no text to look in: present/absent undefined
        for name in ("recall_present", f"f1@{options.k}_present", "recall_absent"):
            columns[name] = np.where(without_text, np.nan, columns[name])
        # the counts of micro recall_present / recall_absent (aggregate.MICRO_RATIOS): 0 where there is no text
        columns["n_gt_present"] = np.where(without_text, 0, n_gt_present)
        columns["n_gt_absent"] = np.where(without_text, 0, n_gt - n_gt_present)
        for name in ("n_matched_present", "n_matched_absent"):
            columns[name] = np.where(without_text, 0.0, columns[name])
    return pd.DataFrame(columns, copy=False)  # copy=False: no copy into consolidated blocks
