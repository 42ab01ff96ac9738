"""Statistics over reviews: bootstrap confidence intervals, paired tests, Holm, verdicts, the headline.

The public functions of `bootstrap` and `paired` are re-exported here, as
scikit-learn's `sklearn.metrics` does: `from kweval import stats`, then
`stats.bootstrap_ci(...)`, `stats.paired_comparison(...)`.  They are imported on first use, so a
module that needs only `kweval.stats.numbers` does not load scipy.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the names below are imported on first use (PEP 562): `kweval.stats.numbers` loads no scipy
    from kweval.stats.aggregated import compare_against, compare_aggregated, compare_groups
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
    "compare_against",
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

# where each public name lives
_HOME = {name: "aggregated" for name in ("compare_against", "compare_aggregated", "compare_groups")}
_HOME |= {name: "headline" for name in ("headline", "key_metrics")}
_HOME |= {
    name: "bootstrap"
    for name in ("CONFIDENCE", "N_BOOT", "SEED", "aggregate_values", "bootstrap_ci", "bootstrap_statistics")
}
_HOME |= {"bootstrap_summary_ci": "bootstrap", "bootstrap_summary_cis": "bootstrap"}
_HOME |= {name: "paired" for name in __all__ if name not in _HOME}


def __getattr__(name: str) -> object:
    if name not in _HOME:
        raise AttributeError(f"module 'kweval.stats' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"kweval.stats.{_HOME[name]}"), name)
    globals()[name] = value
    return value
