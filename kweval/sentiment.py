"""Sentiment alignment (SAS) with VADER (METRICS.md §5).

``v(x) = 1.0·pos + 0.5·neu + 0.0·neg`` from VADER's ``polarity_scores(x)``;
``sent_pred`` is the mean v over a review's predicted keywords,
``sas_keywords = 1 − |sent_pred − mean v(GT keywords of the movie)|`` and
``sas_text = 1 − |sent_pred − v(review text)|``.

Which string VADER sees: METRICS.md scores "the predicted keywords", and VADER
reads case and punctuation ("GREAT!" scores higher than "great"), so the
*raw* keyword strings are scored whenever a ``keyword`` column is given (for
predictions and for GT alike); the normalized ``norm`` is the fallback when it
is not (or where the raw cell is not a non-empty string).  Unlike the seed
notebook (legacy defect 7), the model's own keyword scores are never used.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

import numpy as np
import pandas as pd

__all__ = ["sentiment_value", "sas_metrics", "WEIGHTS"]

KEY = ["movie", "review_id", "model"]
WEIGHTS = {"pos": 1.0, "neu": 0.5, "neg": 0.0}


@lru_cache(maxsize=1)
def _analyzer():
    from vaderSentiment.vaderSentiment import SentimentIntensityAnalyzer

    return SentimentIntensityAnalyzer()


def sentiment_value(texts: Sequence[str]) -> np.ndarray:
    """v(x) for each text (float64); each distinct string is scored once; NaN for a non-string."""
    texts = list(texts)
    analyzer = _analyzer() if texts else None
    values: dict[str, float] = {}
    out = np.full(len(texts), np.nan, dtype=np.float64)
    for i, text in enumerate(texts):
        if not isinstance(text, str):
            continue
        v = values.get(text)
        if v is None:
            s = analyzer.polarity_scores(text)
            v = WEIGHTS["pos"] * s["pos"] + WEIGHTS["neu"] * s["neu"] + WEIGHTS["neg"] * s["neg"]
            values[text] = v
        out[i] = v
    return out


def _keyword_text(frame: pd.DataFrame) -> pd.Series:
    """The string VADER scores per row: raw `keyword` when it is a non-empty string, else `norm`."""

    def usable(s: pd.Series) -> pd.Series:
        return s.map(lambda x: isinstance(x, str) and x.strip() != "")

    raw = frame["keyword"] if "keyword" in frame.columns else None
    norm = frame["norm"] if "norm" in frame.columns else None
    if raw is None and norm is None:
        raise KeyError("need a 'keyword' or a 'norm' column")
    if raw is None:
        return norm.where(usable(norm), None)
    text = raw.where(usable(raw), None)
    if norm is not None:
        fallback = norm.where(usable(norm), None)
        text = text.where(text.notna(), fallback)
    return text


def sas_metrics(pred: pd.DataFrame, gt: pd.DataFrame, reviews: pd.DataFrame) -> pd.DataFrame:
    """Per review × model: ``sent_pred``, ``sas_keywords``, ``sas_text``.

    `pred`: movie, review_id, model and ``keyword`` (raw, preferred) and/or
    ``norm``, one row per cleaned predicted keyword.  `gt`: movie and
    ``keyword`` (raw) and/or ``norm``.  `reviews`: movie, review_id, text.

    One output row per (movie, review_id, model) of `pred`, in order of first
    appearance.  A review whose rows hold no usable keyword gets NaN in all
    three columns; ``sas_keywords`` is NaN for a movie without GT keywords and
    ``sas_text`` is NaN where the review has no text (missing or blank).
    """
    kw_text = _keyword_text(pred)
    keys = pred[KEY].drop_duplicates().reset_index(drop=True)
    if keys.empty:
        return keys.assign(
            sent_pred=pd.Series(dtype="float64"),
            sas_keywords=pd.Series(dtype="float64"),
            sas_text=pd.Series(dtype="float64"),
        )
    group = pred.groupby(KEY, sort=False, dropna=False).ngroup().to_numpy()
    n_groups = len(keys)
    v = sentiment_value(kw_text.tolist())
    ok = ~np.isnan(v)
    count = np.bincount(group[ok], minlength=n_groups)
    total = np.bincount(group[ok], weights=v[ok], minlength=n_groups)
    sent_pred = np.divide(total, count, out=np.full(n_groups, np.nan), where=count > 0)

    # reference 1: mean v over each movie's GT keywords
    gt_text = _keyword_text(gt)
    gv = sentiment_value(gt_text.tolist())
    gt_mean = pd.Series(gv, index=gt["movie"].to_numpy()).dropna().groupby(level=0).mean()
    ref_kw = gt_mean.reindex(keys["movie"]).to_numpy(dtype=np.float64)

    # reference 2: v(review text) for the reviews that have text
    rv = reviews[["movie", "review_id", "text"]].drop_duplicates(["movie", "review_id"])
    rv = rv[rv["text"].map(lambda t: isinstance(t, str) and t.strip() != "").to_numpy(dtype=bool)]
    rv = rv.merge(keys[["movie", "review_id"]].drop_duplicates(), on=["movie", "review_id"])
    text_v = pd.Series(sentiment_value(rv["text"].tolist()), index=pd.MultiIndex.from_frame(rv[["movie", "review_id"]]))
    ref_text = text_v.reindex(pd.MultiIndex.from_frame(keys[["movie", "review_id"]])).to_numpy(dtype=np.float64)

    out = keys.copy()
    out["sent_pred"] = sent_pred
    out["sas_keywords"] = 1.0 - np.abs(sent_pred - ref_kw)
    out["sas_text"] = 1.0 - np.abs(sent_pred - ref_text)
    return out
