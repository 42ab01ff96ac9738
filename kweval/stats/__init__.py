"""Statistics over reviews: bootstrap confidence intervals, paired tests, Holm, verdicts, the headline.

The public functions of `bootstrap` and `paired` are re-exported here, as
scikit-learn's `sklearn.metrics` does: `from kweval import stats`, then
`stats.bootstrap_ci(...)`, `stats.paired_comparison(...)`.
"""

from kweval.stats.aggregated import compare_aggregated, compare_groups
from kweval.stats.bootstrap import (
    CONFIDENCE,
    N_BOOT,
    SEED,
    aggregate_values,
    bootstrap_ci,
    bootstrap_statistics,
    bootstrap_summary_ci,
    bootstrap_summary_cis,
)
from kweval.stats.headline import headline, key_metrics
from kweval.stats.paired import (
    N_PERM,
    compare_models,
    holm,
    holm_levels,
    paired_bootstrap_ci,
    paired_comparison,
    paired_differences,
    paired_randomization_test,
    paired_scores,
    paired_t_test,
    win_tie_loss,
)

__all__ = [
    "CONFIDENCE",
    "N_BOOT",
    "N_PERM",
    "SEED",
    "aggregate_values",
    "bootstrap_ci",
    "bootstrap_statistics",
    "bootstrap_summary_ci",
    "bootstrap_summary_cis",
    "compare_aggregated",
    "compare_groups",
    "compare_models",
    "headline",
    "holm",
    "holm_levels",
    "key_metrics",
    "paired_bootstrap_ci",
    "paired_comparison",
    "paired_differences",
    "paired_randomization_test",
    "paired_scores",
    "paired_t_test",
    "win_tie_loss",
]
