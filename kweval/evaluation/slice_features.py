"""Per-review features for slice discovery, and the URL-safe string that names a slice.

`slice_features(evaluation, dataset)` labels each row of `Evaluation.scores`
(one review × model) by the data's own columns, each binned into a few
named values:

- ``movie``: the movie (the collection, for a keyphrase benchmark);
- ``rating``: low (≤ 4), mid (5–7), high (≥ 8), none;
- ``text_len``: the review text's length in characters, by tertiles (of mid-ranks: ties share a bin): short,
  medium, long (none: no text);
- ``gt_size``: |G| of the review's GT list, by tertiles: small, medium, large;
- ``present_share``: the share of the GT list occurring in the text (`n_gt_present / n_gt`, an evaluation made with
  ``present=True``), by tertiles: low, medium, high (none: no text);
- ``pred_len``: the number of kept predictions of this model, by tertiles: short, medium, long;
- ``disagreement``: how little the models agree on the review's keywords, by tertiles: low, medium, high.
  With `c(q)` the number of models proposing normalized keyword `q`, over the union `U` of the review's
  keywords: ``1 − Σ_q (c(q) − 1) / (|U| · (n_models − 1))`` (0: every model gave the same set).

A feature with one value only (e.g. one movie, no ratings) is left out.  A
slice is a conjunction of feature = value; its spec is
``text_len=long;gt_size=small`` (features in `FEATURES` order, values
percent-encoded), which `parse_slice` reads back and `slice_mask` applies,
so a page can put it in a URL and filter the explorer with it.
"""

from __future__ import annotations

from urllib.parse import quote, unquote

import numpy as np
import pandas as pd

from kweval.data.dataset import KEY, Dataset
from kweval.evaluation.options import Evaluation

FEATURES = ("movie", "rating", "text_len", "gt_size", "present_share", "pred_len", "disagreement")
NONE = "none"
_TERTILE_NAMES = {
    "text_len": ("short", "medium", "long"),
    "gt_size": ("small", "medium", "large"),
    "present_share": ("low", "medium", "high"),
    "pred_len": ("short", "medium", "long"),
    "disagreement": ("low", "medium", "high"),
}


def slice_features(evaluation: Evaluation, dataset: Dataset) -> pd.DataFrame:
    """movie, review_id, model and one label column per usable feature, one row per row of `evaluation.scores`."""
    scores = evaluation.scores
    out = scores[KEY].reset_index(drop=True).astype(object)
    reviews = _review_columns(dataset, out)
    columns: dict[str, pd.Series] = {"movie": out["movie"].astype(str)}
    columns["rating"] = _rating_bands(reviews["rating"])
    text_len = reviews["text"].map(lambda t: len(t) if isinstance(t, str) and t.strip() else np.nan)
    columns["text_len"] = _tertiles(text_len.astype("float64"), "text_len")
    columns["gt_size"] = _tertiles(scores["n_gt"].astype("float64").reset_index(drop=True), "gt_size")
    if "n_gt_present" in scores:
        share = (scores["n_gt_present"] / scores["n_gt"].where(scores["n_gt"] > 0)).reset_index(drop=True)
        columns["present_share"] = _tertiles(share.astype("float64"), "present_share")
    columns["pred_len"] = _tertiles(scores["n_pred"].astype("float64").reset_index(drop=True), "pred_len")
    if len(evaluation.models) > 1 and len(evaluation.keywords):
        columns["disagreement"] = _tertiles(_disagreement(evaluation, out), "disagreement")
    for name in FEATURES[1:]:  # movie is the key column itself
        if name in columns and columns[name].nunique(dropna=False) > 1:
            out[name] = columns[name].to_numpy(dtype=object)
    return out


def feature_names(features: pd.DataFrame) -> list[str]:
    """The usable features of a `slice_features` table (more than one value), in `FEATURES` order."""
    return [f for f in FEATURES if f in features.columns and features[f].nunique(dropna=False) > 1]


def _review_columns(dataset: Dataset, keys: pd.DataFrame) -> pd.DataFrame:
    """Each row's review text and rating (None / NaN where the reviews table has none)."""
    rv = dataset.reviews.drop_duplicates(["movie", "review_id"], keep="last")
    index = pd.MultiIndex.from_arrays([rv[c].to_numpy(dtype=object) for c in ("movie", "review_id")])
    at = index.get_indexer(pd.MultiIndex.from_arrays([keys[c].to_numpy(dtype=object) for c in ("movie", "review_id")]))
    text = np.full(len(keys), None, dtype=object)
    rating = np.full(len(keys), np.nan)
    found = at >= 0
    if "text" in rv:
        text[found] = rv["text"].to_numpy(dtype=object)[at[found]]
    if "rating" in rv:
        rating[found] = pd.to_numeric(rv["rating"], errors="coerce").to_numpy(dtype="float64")[at[found]]
    return pd.DataFrame({"text": pd.Series(text, dtype=object), "rating": rating})


def _rating_bands(rating: pd.Series) -> pd.Series:
    labels = pd.cut(rating, bins=[-np.inf, 4, 7, np.inf], labels=["low", "mid", "high"])
    return labels.astype(object).where(labels.notna(), NONE)


def _tertiles(values: pd.Series, feature: str) -> pd.Series:
    """Values binned by the tertile of their mid-rank (equal values share a bin), named low to high; NaN: none.

    A value's bin is ``⌊3 (r − ½) / n⌋`` with r its average rank among the n defined values, so two values
    split half and half fall into the outer bins, and one value only into the middle one.
    """
    names = _TERTILE_NAMES[feature]
    defined = values.dropna()
    out = pd.Series(NONE, index=values.index, dtype=object)
    if len(defined) == 0:
        return out
    ranks = defined.rank(method="average").to_numpy()
    bins = np.minimum(np.floor(3 * (ranks - 0.5) / len(defined)).astype(np.int64), 2)
    out[defined.index] = np.asarray(names, dtype=object)[bins]
    return out


def _disagreement(evaluation: Evaluation, keys: pd.DataFrame) -> pd.Series:
    """Per row, 1 − the mean share of the other models proposing each keyword of the review's union (see above)."""
    kw = evaluation.keywords[["movie", "review_id", "model", "norm"]].astype(object).drop_duplicates()
    n_models = kw.groupby(["movie", "review_id"])["model"].nunique()
    per_kw = kw.groupby(["movie", "review_id", "norm"]).size().rename("c").reset_index()
    per_kw = per_kw.join(n_models.rename("m"), on=["movie", "review_id"])
    per_kw["agree"] = np.where(per_kw["m"] > 1, (per_kw["c"] - 1) / (per_kw["m"] - 1).clip(lower=1), np.nan)
    review = 1.0 - per_kw.groupby(["movie", "review_id"])["agree"].mean()
    index = pd.MultiIndex.from_frame(keys[["movie", "review_id"]])
    return pd.Series(review.reindex(index).to_numpy(dtype="float64"))


def format_slice(conditions: dict[str, str]) -> str:
    """The spec of a slice: ``feature=value`` joined by ``;`` in `FEATURES` order, values percent-encoded ("" = all)."""
    unknown = [f for f in conditions if f not in FEATURES]
    if unknown:
        raise ValueError(f"unknown slice feature(s): {', '.join(unknown)} (known: {', '.join(FEATURES)})")
    return ";".join(f"{f}={quote(str(conditions[f]), safe='')}" for f in FEATURES if f in conditions)


def parse_slice(spec: str) -> dict[str, str]:
    """The conditions of a slice spec (`format_slice`'s inverse); a malformed spec is a ValueError naming the part."""
    out: dict[str, str] = {}
    for part in filter(None, (spec or "").split(";")):
        feature, sep, value = part.partition("=")
        if not sep or not value:
            raise ValueError(f"slice condition {part!r} is not FEATURE=VALUE")
        if feature not in FEATURES:
            raise ValueError(f"unknown slice feature {feature!r} (known: {', '.join(FEATURES)})")
        if feature in out:
            raise ValueError(f"slice feature {feature!r} given twice")
        out[feature] = unquote(value)
    return out


def slice_mask(features: pd.DataFrame, spec: str) -> np.ndarray:
    """Which rows of a `slice_features` table are in the slice `spec` (a feature the table lacks: no row)."""
    mask = np.ones(len(features), dtype=bool)
    for feature, value in parse_slice(spec).items():
        if feature not in features.columns:
            return np.zeros(len(features), dtype=bool)
        mask &= features[feature].astype(str).to_numpy() == value
    return mask
