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
import weakref
from functools import lru_cache

import numpy as np
import pandas as pd

from kweval.data.dataset import KEY
from kweval.extras import require

__all__ = ["sentiment_value", "keyword_values", "text_value", "gt_mean_value", "sas_metrics", "WEIGHTS"]

WEIGHTS = {"pos": 1.0, "neu": 0.5, "neg": 0.0}


@lru_cache(maxsize=1)
def _analyzer():
    vader = require("vaderSentiment.vaderSentiment", "sentiment", "sentiment (VADER)")
    return vader.SentimentIntensityAnalyzer()


# v(x) already computed, per analyzer object, for the life of the process: VADER takes ~2 ms per review
# text, so a dashboard that re-evaluates (another k, match mode or τ) would otherwise rescore every text.
_MEMO: "weakref.WeakKeyDictionary[object, dict[str, float]]" = weakref.WeakKeyDictionary()
_MEMO_MAX = 1_000_000  # strings per analyzer; past this the memo starts over


def _memo(analyzer) -> dict[str, float]:
    try:
        values = _MEMO.get(analyzer)
        if values is None or len(values) > _MEMO_MAX:
            values = _MEMO[analyzer] = {}
        return values
    except TypeError:  # an analyzer that cannot be weakly referenced: memo for this call only
        return {}


def sentiment_value(texts: Sequence[str]) -> np.ndarray:
    """v(x) for each text (float64); NaN for a non-string.

    Each distinct string is scored once, and remembered for the process (per analyzer).
    """
    texts = list(texts)
    analyzer = _analyzer() if texts else None
    values = _memo(analyzer) if texts else {}
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


def keyword_values(frame: pd.DataFrame) -> np.ndarray:
    """v(x) per row of a keyword table (``keyword`` and/or ``norm``), on the string `sas_metrics` scores.

    The raw keyword when it is a non-empty string, else the norm; NaN where neither is usable.
    """
    return sentiment_value(_keyword_text(frame).tolist())


def text_value(text: object) -> float:
    """v(review text), NaN for a missing or blank text (as `sas_metrics` treats it)."""
    if not isinstance(text, str) or not text.strip():
        return float("nan")
    return float(sentiment_value([text])[0])


def gt_mean_value(gt: pd.DataFrame) -> float:
    """Mean v over one movie's GT keywords (the reference of ``sas_keywords``); NaN when none is usable.

    Scores the raw ``keyword`` column when there is one (as `kweval.evaluate` hands the GT to `sas_metrics`).
    """
    frame = gt[["keyword"]] if "keyword" in gt.columns else gt
    values = keyword_values(frame)
    values = values[~np.isnan(values)]
    return float(values.mean()) if len(values) else float("nan")


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
