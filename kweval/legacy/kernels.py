"""The seed notebooks' computations, number for number: normalization and matching, seed 000's
weighted metrics and nDCG, seed 001's P/R/F1 and SAS, and the per-review lists they read (defects
numbered as in docs/metrics.md's legacy section, named where they happen)."""

from __future__ import annotations

import bisect
import functools
import math
import re
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from kweval.data.dataset import Dataset
from kweval.evaluation import sentiment

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


@functools.lru_cache(maxsize=1 << 17)
def legacy_normalize(keyword: str) -> str:
    """The notebooks' `normalize_kw`: lower, remove `[^a-zA-Z0-9\\s]`, strip (defect 4).  Each string's answer is
    remembered (a bounded cache: the parity page's finders normalize the same keywords again and again)."""
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


def seed000_review_weighted(
    preds: Sequence[Pred], gt_kw: Iterable[str]
) -> tuple[float, list[tuple[str, float, str | None]], int]:
    """One zipped pair of ``evaluate_keywords_weighted``: (score sum, [(keyword, score, GT entry credited or None)], |GT
    entries|).

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


def legacy_relevance(
    pred_norms: Sequence[str], gt_norms: Sequence[str], first_match: Callable[[str], int] | None = None
) -> list[float]:
    """Seed 000's graded relevance of each prediction: 1/log2(j+2) for the earliest matching GT j.

    Defect 3: there is no one-to-one assignment, so several predictions can all
    be credited with the same GT keyword (typically the top one).
    """
    rel = []
    for p in pred_norms:
        j = (
            first_match(p)
            if first_match is not None
            else next((j for j, g in enumerate(gt_norms) if legacy_match(p, g)), -1)
        )
        rel.append(1 / math.log2(j + 2) if j >= 0 else 0.0)
    return rel


def legacy_idcg(n_gt: int, k: int) -> float:
    """Seed 000's IDCG@k: Σ_{i<min(k,|G|)} 1/log2(i+2) — the gains without the discount (defect 2).

    The prose (and docs/metrics.md §3) defines IDCG@k = Σ gain(j)·disc(j) = Σ 1/log2(j+2)².
    """
    return sum(1 / math.log2(i + 2) for i in range(min(k, n_gt)))


def spec_idcg(n_gt: int, k: int) -> float:
    """IDCG@k as docs/metrics.md §3 (and the notebook's own prose) define it: Σ_{j<min(k,|G|)} gain(j)·disc(j)."""
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


_SUBSTRINGS_MAX = 1_000_000  # substrings of a GT list `AnyMatcher.any_of` puts in a set (a movie's: ~30,000)


class AnyMatcher:
    """`is_approx_match(kw, gt_norms)` and the earliest matching GT index, cached per keyword.

    Speed trick "matches by substring search": `all` finds the GT keywords inside `kw` with the Aho–Corasick
    automaton of `gt_within` and the GT keywords containing `kw` by searching the joined list, not by testing
    every GT keyword (a movie's list has ~300).  Reference: `all_plain`, its definition (tests/test_legacy.py).
    """

    def __init__(self, gt_norms: Sequence[str]):
        self.gt = list(gt_norms)
        self._blob = "\x00".join(self.gt)  # "\x00" never survives legacy_normalize
        self._starts = [0]
        for g in self.gt[:-1]:
            self._starts.append(self._starts[-1] + len(g) + 1)
        self._within = gt_within(self.gt)
        self._inside = gt_inside(self.gt)
        self._any: dict[str, bool] = {}
        self._all: dict[str, list[int]] = {}

    def any(self, kw: str) -> bool:
        hit = self._any.get(kw)
        if hit is None:
            hit = bool(self.gt) and ((kw in self._blob) or self._within(kw))
            self._any[kw] = hit
        return hit

    def any_of(self, keywords: Sequence[str]) -> list[bool]:
        """`any` of each of `keywords` (remembered as `any` remembers its answers).

        Speed trick "substrings of the GT": every substring of the GT keywords in one set answers "is `kw` inside
        some GT keyword" by a lookup instead of a search of the joined list; `any` itself where that set would be
        large (long GT keywords).  Reference: `any` (tests/test_legacy_flat.py)."""
        inside = self._substrings()
        if inside is None:
            return [self.any(kw) for kw in keywords]
        out = [bool(self.gt) and (kw in inside or self._within(kw)) for kw in keywords]
        self._any.update(zip(keywords, out))
        return out

    def _substrings(self) -> set[str] | None:
        if sum(len(g) * (len(g) + 1) // 2 for g in self.gt) > _SUBSTRINGS_MAX:
            return None
        return {""} | {g[i:j] for g in self.gt for i in range(len(g)) for j in range(i + 1, len(g) + 1)}

    def first(self, kw: str) -> int:
        js = self.all(kw)
        return js[0] if js else -1

    def all(self, kw: str) -> list[int]:
        js = self._all.get(kw)
        if js is None:
            js = self._all[kw] = self._matches(kw) if self.any(kw) else []
        return js

    def all_plain(self, kw: str) -> list[int]:
        """`all` by its definition: every j with ``legacy_match(kw, gt[j])``, in order."""
        return [j for j, g in enumerate(self.gt) if legacy_match(kw, g)]

    def _matches(self, kw: str) -> list[int]:
        if self._inside is None or kw == "":  # no automaton, or "" (in every GT keyword)
            return self.all_plain(kw)
        found = set(self._inside(kw))  # GT keywords inside kw (kw == g among them)
        at = self._blob.find(kw)
        while at >= 0:  # GT keywords containing kw: each occurrence lies inside one of them
            found.add(bisect.bisect_right(self._starts, at) - 1)
            at = self._blob.find(kw, at + 1)
        return sorted(found)


def gt_inside(gt: Sequence[str]) -> Callable[[str], list[int]] | None:
    """The indices of the keywords of `gt` that occur in a given keyword (one Aho–Corasick scan), or None without
    pyahocorasick or with an empty keyword in `gt` (which occurs everywhere: the plain scan says so)."""
    try:
        import ahocorasick
    except ImportError:
        return None
    if any(g == "" for g in gt):
        return None
    automaton = ahocorasick.Automaton()
    for j, g in enumerate(gt):
        if automaton.exists(g):
            automaton.get(g).append(j)
        else:
            automaton.add_word(g, [j])
    if not len(automaton):
        return lambda kw: []
    automaton.make_automaton()
    return lambda kw: [j for _, js in automaton.iter(kw) for j in js]


@functools.lru_cache(maxsize=32)
def _shared_matcher(gt_norms: tuple[str, ...]) -> AnyMatcher:
    return AnyMatcher(gt_norms)


_CACHE_LOCK = threading.Lock()  # the shared matchers' and lists' caches


def shared_matcher(gt: Sequence[str]) -> AnyMatcher:
    """The AnyMatcher of a raw GT list (normalized here), shared by every caller with the same list: the finders of
    the parity page and the legacy summary fill one matcher's per-keyword answers instead of one each.  Reference:
    a fresh ``AnyMatcher([legacy_normalize(g) for g in gt])`` (the same answers)."""
    with _CACHE_LOCK:  # the dashboard's sessions are threads; a matcher's memo is filled under the GIL
        return _shared_matcher(tuple(legacy_normalize(g) for g in gt))


def gt_within(gt: Sequence[str]) -> Callable[[str], bool]:
    """A test of whether some keyword of `gt` is a substring of a given keyword (``any(g in kw for g in gt)``, its
    plain definition, used without pyahocorasick).  Speed: one Aho–Corasick automaton of the GT keywords scans the
    keyword once, however long the list (a movie's list has ~300; seed 001 tests tens of thousands of keywords)."""
    try:
        import ahocorasick
    except ImportError:
        return lambda kw: any(g in kw for g in gt)
    if any(g == "" for g in gt):  # the empty string is in every keyword
        return lambda kw: True
    automaton = ahocorasick.Automaton()
    for g in gt:
        automaton.add_word(g, None)
    if not len(automaton):
        return lambda kw: False
    automaton.make_automaton()
    return lambda kw: next(automaton.iter(kw), None) is not None


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


def one_to_one_count(
    pred_norms: Sequence[str], gt_norms: Sequence[str], candidates: Callable[[str], list[int]] | None = None
) -> int:
    """|M| under docs/metrics.md §2's one-to-one assignment, on already normalized strings (for comparisons)."""
    taken: set[int] = set()
    for p in pred_norms:
        cands = candidates(p) if candidates is not None else [j for j, g in enumerate(gt_norms) if legacy_match(p, g)]
        for j in cands:
            if j not in taken:
                taken.add(j)
                break
    return len(taken)


def vader_sentiment(text: str) -> float:
    """VADER's 1.0·pos + 0.5·neu value of `text`: `kweval.evaluation.sentiment`'s v(x), which the notebooks compute
    too."""
    return float(sentiment.sentiment_value([text])[0])


def vader_sentiments(texts: Sequence[str]) -> list[float]:
    """`vader_sentiment` of each of `texts`, in one call (each distinct text scored once)."""
    return [float(v) for v in sentiment.sentiment_value(list(texts))]


def seed001_structured(entries: Iterable[Entry]) -> list[Pred]:
    """Seed 001's ``predicted_kw_structured``: entries with a string keyword and a numeric score.

    The Dataset stores every number as float64, so NaN stands for "not a number".
    (The notebook's ``isinstance(score, (float, int))`` also rejects numpy float32
    scores — which is every reranker score of SW_Episode6 — a detail the Dataset no
    longer carries; see docs/notebook-parity.md.)
    """
    return [
        (kw, float(s)) for kw, s in entries if isinstance(kw, str) and isinstance(s, (int, float)) and not math.isnan(s)
    ]


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


_MEMO: OrderedDict[tuple, tuple[tuple[weakref.ref, ...], Any]] = OrderedDict()
_MEMO_KEPT = 8  # (builder, dataset) results kept: the page's selection and the one-movie subsets its finders read


def per_dataset(dataset: Dataset, build: Callable[[Dataset], Any]) -> Any:
    """`build(dataset)`, remembered while the dataset's tables (the same objects) live; the parity page's finders
    and the legacy summary each ask for the same tables.  Reference: `build(dataset)` (read-only: shared)."""
    tables = (dataset.movies, dataset.models, dataset.reviews, dataset.predictions, dataset.ground_truth)
    key = (build.__module__, build.__qualname__) + tuple(id(t) for t in tables)
    with _CACHE_LOCK:
        hit = _MEMO.get(key)
        if hit is not None and all(ref() is t for ref, t in zip(hit[0], tables)):
            _MEMO.move_to_end(key)
            return hit[1]
    value = build(dataset)
    with _CACHE_LOCK:
        _MEMO[key] = (tuple(weakref.ref(t) for t in tables), value)
        while len(_MEMO) > _MEMO_KEPT:
            _MEMO.popitem(last=False)
    return value


def review_lists(dataset: Dataset) -> pd.DataFrame:
    """One row per movie × model × review that has a prediction list, in file order (read-only: shared).

    Columns: movie, model, review_id, entries (the raw ``(keyword, score)`` list in
    rank order; ``[]`` for an empty list).  Reviews whose cell was missing have
    no row — the notebooks' ``isinstance(cell, list)`` test skips them too.

    Speed trick "lists remembered per dataset" (`per_dataset`).  Reference: `build_review_lists`.
    """
    return per_dataset(dataset, build_review_lists)


def build_review_lists(dataset: Dataset) -> pd.DataFrame:
    """`review_lists`, computed."""
    pr = dataset.predictions
    cols = ["movie", "model", "review_id", "entries"]
    if pr.empty:
        return pd.DataFrame({c: pd.Series(dtype="object") for c in cols})
    # review order: the reviews table (file order), then first appearance in the predictions
    rv_keys = pd.MultiIndex.from_frame(dataset.reviews[["movie", "review_id"]].astype({"review_id": str}))
    pr_keys = pd.MultiIndex.from_frame(pr[["movie", "review_id"]].astype({"review_id": str}))
    rv_pos = rv_keys.get_indexer(pr_keys).astype("int64")
    missing = rv_pos < 0
    if missing.any():  # in order of first appearance, after the table's reviews
        rv_pos[missing] = len(rv_keys) + pd.factorize(pr_keys[missing])[0]
    mv = _positions(pr["movie"], dataset.movies["movie"])
    md = _positions(pr["model"], dataset.models["model"])
    order = np.lexsort((pr["rank"].to_numpy("int64"), rv_pos, md, mv))
    key = np.stack([mv[order], md[order], rv_pos[order]], axis=1)
    starts = np.flatnonzero(np.r_[True, (key[1:] != key[:-1]).any(axis=1)])
    kws = pr["keyword"].to_numpy(dtype=object)[order]
    scores = pr["score"].to_numpy(dtype="float64")[order]
    bounds = np.r_[starts, len(order)].tolist()
    pairs = list(zip(kws.tolist(), scores.tolist()))  # every (keyword, score) once; each list a slice of them
    # the Dataset's placeholder row of an empty list: one row without a string keyword or a score
    single = (np.diff(bounds) == 1) & pd.isna(scores[starts]) & ~pd.Series(kws[starts]).map(type).eq(str).to_numpy()
    entries = [[] if empty else pairs[a:b] for a, b, empty in zip(bounds[:-1], bounds[1:], single.tolist())]
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


def _positions(values: pd.Series, table: pd.Series) -> np.ndarray:
    """Each value's position in `table` (the last, when repeated), len(table) for one not in it or missing: looked
    up once per distinct value (``values.map(positions)`` looks up every row)."""
    at = {v: i for i, v in enumerate(table.tolist())}
    codes, uniques = pd.factorize(values)
    pos = np.array([at.get(u, len(at)) for u in uniques.tolist()] + [len(at)], dtype="int64")
    return pos[codes]  # code -1 (missing) reads the last entry


def gt_lists(dataset: Dataset) -> dict[str, list[str]]:
    """Each movie's raw GT keywords in file (rank) order — the notebooks' ``kw_ground_truth["Keyword"].tolist()``."""
    gt = dataset.ground_truth.sort_values(["movie", "rank"], kind="stable")
    out: dict[str, list[str]] = {m: [] for m in dataset.movies["movie"].tolist()}
    for m, frame in gt.groupby("movie", sort=False):
        out[m] = frame["keyword"].tolist()
    return out


def group_lists(lists: pd.DataFrame) -> dict[tuple[str, str], pd.DataFrame]:
    return {(mv, md): frame for (mv, md), frame in lists.groupby(["movie", "model"], sort=False)}
