"""Agreement between annotators on the items they share (docs/metrics.md §11): never hidden behind the median.

Two annotators: Cohen's κ (scikit-learn's `cohen_kappa_score`, quadratic
weights: grades 0–3 are ordered, and a 3 against a 2 is a smaller
disagreement than a 3 against a 0).  More: Krippendorff's α, ordinal (the
`krippendorff` package), which takes every item graded by at least two of
them.  An item is a movie, a review (or the whole movie) and a normalized
keyword; each annotator's latest grade counts.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from kweval.judgments.combine import WHOLE_MOVIE

KAPPA_WEIGHTS = "quadratic"


@dataclass
class Agreement:
    """The agreement of the annotators on shared items; `value` NaN when there is nothing to compare."""

    method: str  # "cohen_kappa (quadratic)", "krippendorff_alpha (ordinal)" or "none"
    value: float
    annotators: list[str]
    n_items: int  # items graded by at least two annotators

    def line(self) -> str:
        """One line for a terminal or a page."""
        if self.method == "none":
            return f"agreement: not computed ({len(self.annotators)} annotator(s), {self.n_items} shared item(s))"
        return (
            f"agreement: {self.method} = {self.value:.3f} over {self.n_items} shared item(s), "
            f"{len(self.annotators)} annotators"
        )


def grade_matrix(judgments: pd.DataFrame) -> pd.DataFrame:
    """Annotators × items: each annotator's latest grade of each item (NaN where they did not grade it)."""
    keys = [WHOLE_MOVIE if r is None or pd.isna(r) or r == "" else str(r) for r in judgments["review_id"].tolist()]
    frame = judgments.assign(review_key=keys, movie=judgments["movie"].astype(str))
    latest = frame.drop_duplicates(["movie", "review_key", "norm", "annotator"], keep="last")
    return latest.pivot_table(
        index="annotator", columns=["movie", "review_key", "norm"], values="grade", aggfunc="last"
    ).astype("float64")


def agreement(judgments: pd.DataFrame) -> Agreement:
    """Cohen's κ (quadratic) for two annotators, Krippendorff's α (ordinal) for more, on the items they share."""
    if judgments.empty:
        return Agreement("none", float("nan"), [], 0)
    matrix = grade_matrix(judgments)
    annotators = [str(a) for a in matrix.index]
    shared = matrix.loc[:, matrix.notna().sum(axis=0) >= 2]
    n_items = shared.shape[1]
    if len(annotators) < 2 or n_items == 0:
        return Agreement("none", float("nan"), annotators, n_items)
    if len(annotators) == 2:
        from sklearn.metrics import cohen_kappa_score

        a, b = shared.to_numpy()
        value = cohen_kappa_score(a.astype(int), b.astype(int), labels=[0, 1, 2, 3], weights=KAPPA_WEIGHTS)
        return Agreement(f"cohen_kappa ({KAPPA_WEIGHTS})", _finite(value), annotators, n_items)
    import krippendorff

    data = shared.to_numpy()
    if len(np.unique(data[~np.isnan(data)])) < 2:  # one grade everywhere: α is undefined, the agreement is total
        return Agreement("krippendorff_alpha (ordinal)", 1.0, annotators, n_items)
    value = krippendorff.alpha(reliability_data=data, level_of_measurement="ordinal", value_domain=[0, 1, 2, 3])
    return Agreement("krippendorff_alpha (ordinal)", _finite(value), annotators, n_items)


def _finite(value: float) -> float:
    return float(value) if np.isfinite(value) else float("nan")
