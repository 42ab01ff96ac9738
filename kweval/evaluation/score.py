"""The score stage: the per-review table, every metric computed once over all review × model groups.

docs/metrics.md §3 "Per-review metrics" and §9 "Keyphrase benchmarks": the
metric families (`kweval.metrics`) turn the counts and matched pairs of
`count.Counts` into columns; the present/absent metrics also read which GT
keywords occur in each review's text (`presence.present_gt`) and are NaN for
a review without text, or without the GT keywords they divide by (`kweval.metrics.undefined`).
"""

from __future__ import annotations

import pandas as pd

from kweval._arrays import object_array, object_column
from kweval.data.dataset import Dataset
from kweval.evaluation.clean import CleanGroundTruth
from kweval.evaluation.count import Counts
from kweval.evaluation.match import Matches
from kweval.evaluation.options import EvalOptions
from kweval.evaluation.presence import present_gt
from kweval.metrics import registry, undefined
from kweval.metrics.inputs import ReviewCounts, Settings


def score_stage(
    dataset: Dataset, gt: CleanGroundTruth, matches: Matches, counts: Counts, options: EvalOptions
) -> pd.DataFrame:
    """The per-review table: one row per review × model group, its counts and every metric asked for.

    The metrics are those `kweval.metrics.registry` lists for `options`, each
    family computed once and its columns named by the registry.
    """
    c, pairs = counts.counts, counts.pairs
    n_gt_present = pair_present = None
    if options.present:  # first: its working memory comes and goes before the columns are built
        n_gt_present, pair_present = present_gt(
            dataset.reviews,
            gt.norms,
            gt.movies,
            matches.group_movie,
            matches.group_review,
            matches.group_gt_start,
            matches.n_gt,
            pairs.grp,
            pairs.gt_pos,
            options.match,
        )
    inputs = ReviewCounts(
        **{name: c[name] for name in _COUNTS},
        pair_review=pairs.grp,
        pair_position=pairs.position,
        pair_gt_rank=pairs.gt_rank,
        ranked=counts.group_ranked,
        n_gt_present=n_gt_present,
        pair_present=pair_present,
        pair_relevance=pairs.relevance,
        ideal_relevance=counts.ideal,
    )
    model_names = object_array(dataset.models["model"].tolist())
    columns = {
        "movie": object_column(object_array(gt.movies)[matches.group_movie]),
        "review_id": object_column(matches.group_review),
        "model": object_column(model_names[matches.group_model]),
    }
    columns.update(c)
    settings = Settings(options.k, options.gain, options.discount)
    for family in registry.families(options):
        for template, values in family(inputs, settings).items():
            columns[registry.column(template, options.k)] = values
    undefined.apply(columns)  # an empty denominator is no value, not 0 (kweval.metrics.undefined)
    return pd.DataFrame(columns, copy=False)  # copy=False: no copy into consolidated blocks


_COUNTS = ("n_pred", "n_gt", "n_matched", "score_sum", "matched_score", "gain_sum", "matched_gain")
