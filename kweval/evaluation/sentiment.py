"""Sentiment alignment (SAS) with VADER (docs/metrics.md §5).

``v(x) = 1.0·pos + 0.5·neu + 0.0·neg`` from VADER's ``polarity_scores(x)``;
``sent_pred`` is the mean v over a review's predicted keywords,
``sas_keywords = 1 − |sent_pred − mean v(GT keywords of the movie)|`` and
``sas_text = 1 − |sent_pred − v(review text)|``.

Which string VADER sees: docs/metrics.md §5 scores "the predicted keywords", and VADER
reads case and punctuation ("GREAT!" scores higher than "great"), so the
*raw* keyword strings are scored whenever a ``keyword`` column is given (for
predictions and for GT alike); the normalized ``norm`` is the fallback when it
is not (or where the raw cell is not a non-empty string).  Unlike the seed
notebook (legacy defect 7), the model's own keyword scores are never used.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from kweval._arrays import object_array, take_codes
from kweval.data.dataset import KEY
from kweval.extras import require

if TYPE_CHECKING:  # pragma: no cover
    from kweval.embeddings.store import EmbeddingStore

__all__ = ["sentiment_value", "vader_store", "keyword_values", "text_value", "gt_mean_value", "sas_metrics", "WEIGHTS"]

WEIGHTS = {"pos": 1.0, "neu": 0.5, "neg": 0.0}


@lru_cache(maxsize=1)
def _analyzer():
    vader = require("vaderSentiment.vaderSentiment", "sentiment", "sentiment (VADER)")
    return vader.SentimentIntensityAnalyzer()


# v(x) already computed, per analyzer object, for the life of the process: VADER is slow on a review text
# (docs/scaling.md), so a dashboard that re-evaluates (another k, match mode or τ) would otherwise rescore every text.
# VADER's scores of texts scored without a store are kept as unsaved, so the next call with a store persists them.
_MEMO: weakref.WeakKeyDictionary[object, tuple[dict[str, float], dict[str, tuple]]] = weakref.WeakKeyDictionary()
_MEMO_MAX = 1_000_000  # strings per analyzer; past this the memo starts over


def _memo(analyzer) -> tuple[dict[str, float], dict[str, tuple]]:
    """(v per text, VADER's (pos, neu, neg) per text not yet written to a store) remembered for `analyzer`."""
    try:
        memo = _MEMO.get(analyzer)
        if memo is None or len(memo[0]) > _MEMO_MAX:
            memo = _MEMO[analyzer] = ({}, {})
        return memo
    except TypeError:  # an analyzer that cannot be weakly referenced: memo for this call only
        return {}, {}


def vader_store(on_note: Callable[[str], None] | None = None) -> EmbeddingStore:
    """The persistent store of VADER's (pos, neu, neg) per text, in `kweval.embeddings.store.cache_dir()`.

    Keyed by the exact text and VADER's version, so a second evaluation of the same data reads
    every value instead of scoring it again (VADER's cost per review text: docs/scaling.md).
    """
    from importlib.metadata import PackageNotFoundError, version

    from kweval.embeddings.store import EmbeddingStore

    try:
        release = version("vaderSentiment")
    except PackageNotFoundError:  # pragma: no cover - vendored copies
        release = "unknown"
    return EmbeddingStore(f"vaderSentiment-{release}", backend="vader", precision="fp64", on_note=on_note)


def sentiment_value(texts: Sequence[str], store: EmbeddingStore | None = None) -> np.ndarray:
    """v(x) for each text (float64); NaN for a non-string.

    Each distinct string is scored once and remembered for the process (per
    analyzer); with `store` (see `vader_store`), VADER's scores are also read
    from and written to it.
    """
    codes, uniques = pd.factorize(object_array(list(texts)))  # per distinct text: fast on a keyword table's rows
    if not len(codes):
        return np.zeros(0, dtype=np.float64)
    analyzer = _analyzer()
    values, unsaved = _memo(analyzer)
    distinct = dict.fromkeys(t for t in uniques.tolist() if isinstance(t, str))
    todo = [t for t in distinct if t not in values]
    if store is not None and todo:
        scores, found = store.get_many(todo)
    else:
        scores, found = np.zeros((len(todo), 3)), np.zeros(len(todo), dtype=bool)
    fresh: dict[str, tuple[float, float, float]] = {}
    for i, text in enumerate(todo):
        if found[i]:
            pos, neu, neg = scores[i]
        else:
            s = analyzer.polarity_scores(text)
            pos, neu, neg = fresh[text] = (s["pos"], s["neu"], s["neg"])
        values[text] = WEIGHTS["pos"] * pos + WEIGHTS["neu"] * neu + WEIGHTS["neg"] * neg
    if store is None:
        unsaved.update(fresh)
    else:  # what this call scored, and what earlier calls without a store scored, is persisted now
        owed = unsaved.keys() & distinct.keys()
        fresh.update((t, unsaved.pop(t)) for t in owed)
        if fresh:
            store.put_many(list(fresh), np.array(list(fresh.values()), dtype=np.float64))
    per_unique = np.array([values[t] if isinstance(t, str) else np.nan for t in uniques.tolist()], dtype=np.float64)
    return take_codes(per_unique, codes, np.nan)  # code -1 (None, NaN): NaN


def _keyword_text(frame: pd.DataFrame) -> pd.Series:
    """The string VADER scores per row: raw `keyword` when it is a non-empty string, else `norm`."""

    def usable(s: pd.Series) -> np.ndarray:
        codes, uniques = pd.factorize(s.to_numpy(dtype=object))
        ok = [isinstance(x, str) and x.strip() != "" for x in uniques.tolist()] + [False]
        return np.array(ok, dtype=bool)[codes]

    raw = frame["keyword"] if "keyword" in frame.columns else None
    norm = frame["norm"] if "norm" in frame.columns else None
    if raw is None and norm is None:
        raise KeyError("need a 'keyword' or a 'norm' column")
    if raw is None:
        assert norm is not None  # one of the two columns is there (checked above)
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


def sas_metrics(
    pred: pd.DataFrame, gt: pd.DataFrame, reviews: pd.DataFrame, store: EmbeddingStore | None = None
) -> pd.DataFrame:
    """Per review × model: ``sent_pred``, ``sas_keywords``, ``sas_text``.

    `pred`: movie, review_id, model and ``keyword`` (raw, preferred) and/or
    ``norm``, one row per cleaned predicted keyword.  `gt`: movie and
    ``keyword`` (raw) and/or ``norm``.  `reviews`: movie, review_id, text.

    One output row per (movie, review_id, model) of `pred`, in order of first
    appearance.  A review whose rows hold no usable keyword gets NaN in all
    three columns; ``sas_keywords`` is NaN for a movie without GT keywords and
    ``sas_text`` is NaN where the review has no text (missing or blank).
    `store`: VADER's persistent store (`vader_store`), or None for the process memo only.
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
    v = sentiment_value(kw_text.tolist(), store)
    ok = ~np.isnan(v)
    count = np.bincount(group[ok], minlength=n_groups)
    total = np.bincount(group[ok], weights=v[ok], minlength=n_groups)
    sent_pred = np.divide(total, count, out=np.full(n_groups, np.nan), where=count > 0)

    # reference 1: mean v over each movie's GT keywords
    gt_text = _keyword_text(gt)
    gv = sentiment_value(gt_text.tolist(), store)
    gt_mean = pd.Series(gv, index=gt["movie"].to_numpy()).dropna().groupby(level=0).mean()
    ref_kw = gt_mean.reindex(keys["movie"]).to_numpy(dtype=np.float64)

    # reference 2: v(review text) for the reviews that have text
    rv = reviews[["movie", "review_id", "text"]].drop_duplicates(["movie", "review_id"])
    rv = rv[rv["text"].map(lambda t: isinstance(t, str) and t.strip() != "").to_numpy(dtype=bool)]
    rv = rv.merge(keys[["movie", "review_id"]].drop_duplicates(), on=["movie", "review_id"])
    text_v = pd.Series(
        sentiment_value(rv["text"].tolist(), store), index=pd.MultiIndex.from_frame(rv[["movie", "review_id"]])
    )
    ref_text = text_v.reindex(pd.MultiIndex.from_frame(keys[["movie", "review_id"]])).to_numpy(dtype=np.float64)

    out = keys.copy()
    out["sent_pred"] = sent_pred
    out["sas_keywords"] = 1.0 - np.abs(sent_pred - ref_kw)
    out["sas_text"] = 1.0 - np.abs(sent_pred - ref_text)
    return out
