"""Metrics: one unit per metric family and the registry of what every reported number means (docs/metrics.md §3, §9).

Each family (`set_based`, `weighted`, `ranked`, `keyphrase`, `present_absent`)
has a private unchecked vectorised kernel and a checked public function
(numpydoc, runnable examples), as scikit-learn's `_dcg_sample_scores` and
`ndcg_score`; `ranking` holds the plain relevance-list functions the ranked
family applies, `ratios` and `cutoff` the shared arithmetic (`cutoff` without
numpy), `registry` every column's meaning, name, family and micro rule.
"""
