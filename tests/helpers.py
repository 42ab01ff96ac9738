"""Small builders for datasets made inside tests."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from kweval.data.dataset import Dataset


def make_dataset(
    gt: dict[str, list[str]],
    preds: dict[tuple[str, str, str], list | None],
    directions: dict[str, str] | None = None,
    texts: dict[tuple[str, str], str] | None = None,
) -> Dataset:
    """A Dataset from plain Python: gt[movie] = ranked keywords; preds[(movie, review, model)] = [(kw, score)] or None."""
    rows = []
    for (movie, review, model), entries in preds.items():
        if entries is None:
            continue
        if len(entries) == 0:
            rows.append((movie, review, model, 0, None, math.nan))
        for rank, entry in enumerate(entries):
            kw, score = entry
            rows.append((movie, review, model, rank, kw if isinstance(kw, str) else None, score if isinstance(score, (int, float)) else math.nan))
    predictions = pd.DataFrame(rows, columns=["movie", "review_id", "model", "rank", "keyword", "score"])
    predictions["score"] = predictions["score"].astype("float64")
    gt_rows = [(m, r, kw, np.nan, np.nan) for m, kws in gt.items() for r, kw in enumerate(kws)]
    ground_truth = pd.DataFrame(gt_rows, columns=["movie", "rank", "keyword", "helpful", "not_helpful"])
    movies = list(dict.fromkeys([m for m, _, _ in preds] + list(gt)))
    reviews = pd.DataFrame(
        [(m, r, (texts or {}).get((m, r)), None, np.nan) for m, r in dict.fromkeys((m, r) for m, r, _ in preds)],
        columns=["movie", "review_id", "text", "title", "rating"],
    )
    models = list(dict.fromkeys(md for _, _, md in preds))
    return Dataset(
        movies=pd.DataFrame({"movie": movies, "title": movies}),
        reviews=reviews,
        predictions=predictions,
        ground_truth=ground_truth,
        models=pd.DataFrame({"model": models, "score_direction": [(directions or {}).get(m, "higher") for m in models]}),
    )
