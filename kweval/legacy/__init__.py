"""Legacy mode: what the seed notebooks compute, defects included (docs/metrics.md, legacy section).

Nothing here is a correct metric.  These functions replay, number for number,
the computations of two notebooks so that a published table can be put next
to kweval's corrected one and every difference explained:

- seed ``000_341d8dbafcd82217`` ("global" weighted P/R/F1 and nDCG@5): its
  all-movies cell builds, per review, the list of ``(normalized keyword, score)``
  for entries with a string keyword, drops repeated normalized keywords
  (keeping the first), and calls ``evaluate_keywords_weighted(preds, gt_list)``
  and ``compute_global_ndcg(preds, gt_list, 5)`` with the movie's GT list;
- seed ``001_4018a1396f56c16e`` (per-review ``evaluate_keywords`` averaged over
  reviews, semantic P/R/F1 with hand-written mean pooling, SAS).

The defects, numbered as in docs/metrics.md, legacy section, are named in comments where they
happen.  Legacy mode has no ``ALL`` rows (the notebooks print none), and the
metrics the notebooks never compute (``p@k``, ``ap@k``, ``rr``,
``gt_coverage``) are NaN.  The pages and docs/notebook-parity.md use the
``find_*`` functions (kweval.legacy.examples) to show each defect on a real review.

The package: `kernels` (the notebooks' computations), `flat` (every review's
list as flat arrays, for scans over all reviews), `encoder` (seed 001's torch
encoder), `summary` (the legacy table and legacy vs corrected), `examples` and
`examples_seed001` (one finder per defect) and `scans` (the review each
lexical finder shows).
"""

from __future__ import annotations

from kweval.legacy.encoder import (
    LegacyEncoder,
    legacy_encoder,
    seed001_semantic,
)
from kweval.legacy.examples import (
    AsciiNormalizationExample,
    IntendedScores,
    ManyToOneExample,
    RecallCountsPredictionsExample,
    ReviewExample,
    UndiscountedIdcgExample,
    ZipLegacyScores,
    ZipPairingExample,
    find_ascii_normalization_example,
    find_many_to_one_example,
    find_recall_counts_predictions_example,
    find_undiscounted_idcg_example,
    find_zip_pairing_example,
    zip_pairing_example,
)
from kweval.legacy.examples_seed001 import (
    SasScoreExample,
    SemanticPaddingExample,
    find_sas_score_example,
    find_semantic_padding_example,
)
from kweval.legacy.kernels import (
    LEGACY_SEMANTIC_THRESHOLD,
    NOTEBOOK_DEFAULT_THRESHOLD,
    Entry,
    Pred,
    gt_lists,
    legacy_idcg,
    legacy_match,
    legacy_normalize,
    legacy_relevance,
    one_to_one_count,
    review_lists,
    seed000_global_ndcg,
    seed000_predictions,
    seed000_review_ndcg,
    seed000_review_weighted,
    seed000_weighted,
    seed001_prf,
    seed001_sas,
    seed001_structured,
    spec_idcg,
    vader_sentiment,
)
from kweval.legacy.summary import (
    legacy_summary,
    legacy_vs_corrected,
)

__all__ = [
    "Entry",
    "Pred",
    "LEGACY_SEMANTIC_THRESHOLD",
    "NOTEBOOK_DEFAULT_THRESHOLD",
    "legacy_normalize",
    "legacy_match",
    "seed000_predictions",
    "seed000_review_weighted",
    "seed000_weighted",
    "legacy_relevance",
    "legacy_idcg",
    "spec_idcg",
    "seed000_review_ndcg",
    "seed000_global_ndcg",
    "seed001_prf",
    "one_to_one_count",
    "vader_sentiment",
    "seed001_structured",
    "seed001_sas",
    "review_lists",
    "gt_lists",
    "LegacyEncoder",
    "legacy_encoder",
    "seed001_semantic",
    "legacy_summary",
    "legacy_vs_corrected",
    "zip_pairing_example",
    "find_zip_pairing_example",
    "find_undiscounted_idcg_example",
    "find_many_to_one_example",
    "find_ascii_normalization_example",
    "find_recall_counts_predictions_example",
    "find_semantic_padding_example",
    "find_sas_score_example",
    "ReviewExample",
    "ZipPairingExample",
    "ZipLegacyScores",
    "IntendedScores",
    "UndiscountedIdcgExample",
    "ManyToOneExample",
    "AsciiNormalizationExample",
    "RecallCountsPredictionsExample",
    "SemanticPaddingExample",
    "SasScoreExample",
]
