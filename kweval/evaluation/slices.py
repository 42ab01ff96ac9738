"""Review slices: a label per evaluated review (its rating band or text-length quartile).

`kweval.evaluation.aggregate.aggregate_by(evaluation, labels)` summarises an evaluation
per label × model, the way `aggregate` does per movie × model.
"""

from __future__ import annotations

import pandas as pd

SLICES = ("rating", "length")


def slice_labels(scores: pd.DataFrame, reviews: pd.DataFrame, by: str) -> pd.Series | None:
    """An ordered categorical label per row of `scores`: its review's rating band or text-length quartile.

    None when the data has no ratings (or no texts).
    """
    rv = reviews.drop_duplicates(["movie", "review_id"]).set_index(["movie", "review_id"])
    idx = pd.MultiIndex.from_frame(scores[["movie", "review_id"]])
    if by == "rating":
        if "rating" not in rv or pd.to_numeric(rv["rating"], errors="coerce").notna().sum() == 0:
            return None
        values = pd.Series(pd.to_numeric(rv["rating"], errors="coerce").reindex(idx).to_numpy())
        names = ["rating ≤ 4", "rating 5–7", "rating ≥ 8"]
        labels = pd.cut(values, bins=[-float("inf"), 4, 7, float("inf")], labels=names)
        missing = "no rating"
    elif by == "length":
        if "text" not in rv or rv["text"].notna().sum() == 0:
            return None
        values = pd.Series(
            rv["text"]
            .map(lambda t: len(t) if isinstance(t, str) else float("nan"))
            .reindex(idx)
            .to_numpy(dtype="float64")
        )
        if values.notna().sum() < 4:
            return None
        edges = sorted(set(int(round(e)) for e in values.quantile([0.25, 0.5, 0.75])))
        bins = [-float("inf"), *edges, float("inf")]
        names = (
            [f"≤ {edges[0]} chars"]
            + [f"{a + 1}–{b} chars" for a, b in zip(edges, edges[1:])]
            + [f"> {edges[-1]} chars"]
        )
        labels = pd.cut(values, bins=bins, labels=names)
        missing = "no text"
    else:
        raise ValueError(f"unknown slice {by!r}; choose rating or length")
    labels = labels.cat.add_categories([missing]).fillna(missing)
    return labels.set_axis(scores.index)
