"""Live examples: one finder per notebook defect, each returning the first real review that shows it.

Each finder returns a frozen dataclass (None when the data holds no
example); the parity page and docs/notebook-parity.md read its attributes.
Each result type stands beside the finder that fills it; the finders of the
lexical defects (seed 000's weighted metrics and nDCG, seed 001's counts and
normalization) are here (the review each shows is chosen in
`kweval.legacy.scans`, with the one-to-one relevance they contrast with the
notebooks'); the semantic and sentiment ones (defects 6 and 7) are in
`kweval.legacy.examples_seed001`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import pandas as pd

from kweval.data.dataset import Dataset
from kweval.legacy.kernels import (
    group_lists,
    gt_lists,
    legacy_idcg,
    legacy_normalize,
    legacy_relevance,
    review_lists,
    seed000_global_ndcg,
    seed000_predictions,
    seed000_review_ndcg,
    seed000_review_weighted,
    seed000_weighted,
    shared_matcher,
    spec_idcg,
)
from kweval.legacy.scans import best_one_to_one_dcg, dcg, most_credited, one_to_one_relevance, recall_gap
from kweval.text.normalize import normalize

if TYPE_CHECKING:  # kweval.evaluate is only needed for the corrected side-by-side
    from kweval.evaluation.pipeline import EvalOptions


@dataclass(frozen=True)
class ReviewExample:
    """Where an example was found: a review of a movie, as one model ranked its keywords."""

    movie: str
    model: str
    review_id: str


@dataclass(frozen=True)
class ZipLegacyScores:
    """Seed 000's numbers for one review scored against the characters of one GT keyword (defect 1)."""

    score_sum: float
    matched_score: float
    pairs: list[tuple[str, float, str | None]]  # (keyword, score, character credited or None)
    n_gt_entries: int
    relevance: list[float]
    dcg: float
    idcg: float
    ndcg: float


@dataclass(frozen=True)
class IntendedScores:
    """Seed 000's own functions called with the whole GT list for this one review."""

    w_precision: float
    w_recall: float
    w_f1: float
    ndcg: float


@dataclass(frozen=True)
class ZipPairingExample(ReviewExample):
    """Defect 1: what seed 000 compares a review against (the letters of GT keyword i, or nothing past the GT's
    length)."""

    review_index: int
    n_reviews: int
    n_gt: int
    paired: bool  # False: beyond the GT's length, dropped by zip
    gt_keyword: str | None
    predictions: list[tuple[str, float]]
    compared_against: list[str] | None  # the GT keyword's normalized characters
    legacy: ZipLegacyScores | None
    intended: IntendedScores
    corrected: dict[str, float] | None  # kweval's per-review value of each lexical metric


@dataclass(frozen=True)
class UndiscountedIdcgExample(ReviewExample):
    """Defect 2: nDCG@k under the notebook's undiscounted IDCG and under the defined one."""

    predictions: list[str]
    gt_top: list[str]
    relevance_notebook: list[float]
    relevance_one_to_one: list[float]
    dcg_notebook: float
    dcg_one_to_one: float
    idcg_notebook: float
    idcg_spec: float
    idcg_ratio: float
    ndcg_notebook: float
    ndcg_notebook_spec_idcg: float  # notebook relevance over the defined IDCG: can exceed 1
    ndcg_spec: float


@dataclass(frozen=True)
class ManyToOneExample(ReviewExample):
    """Defect 3: one GT keyword credited at several positions of the top k."""

    predictions: list[str]
    gt_keyword: str
    gt_rank: int
    positions: list[int]
    times_credited: int
    relevance_notebook: list[float]
    relevance_one_to_one: list[float]
    ndcg_notebook: float
    ndcg_spec: float
    n_reviews_affected: int
    n_reviews_scanned: int


@dataclass(frozen=True)
class AsciiNormalizationExample:
    """Defect 4: a keyword the notebooks' ASCII-only normalization changes (not tied to one review)."""

    source: str  # "ground truth" or "predictions"
    keyword: str
    legacy: str
    unicode: str
    n_keywords_affected: int
    n_keywords_checked: int


@dataclass(frozen=True)
class RecallCountsPredictionsExample(ReviewExample):
    """Defect 5: seed 001's recall counts matched predictions, not matched GT keywords."""

    predictions: list[str]
    matches: dict[str, list[str]]  # prediction -> the GT keywords it can match
    n_gt: int
    matched_predictions: int
    matched_gt: int
    recall_notebook: float
    recall_one_to_one: float
    precision_notebook: float
    n_reviews_affected: int
    n_reviews_scanned: int


def reviews_of(dataset: Dataset, movie: str, model: str) -> pd.DataFrame:
    """The review lists of one movie × model: the rows of `dataset`'s own (shared) lists, which are
    ``review_lists(dataset.subset([movie], [model]))`` without building a subset's."""
    lists = review_lists(dataset)
    return lists[(lists["movie"] == movie).to_numpy() & (lists["model"] == model).to_numpy()].reset_index(drop=True)


def first_pair(dataset: Dataset, movie: str | None, model: str | None) -> tuple[str, str]:
    gts = gt_lists(dataset)
    if movie is None:
        movie = next((m for m in dataset.movies["movie"] if gts.get(m)), None)
    if model is None:
        model = dataset.models["model"].iloc[0] if len(dataset.models) else None
    if movie is None or model is None:
        raise ValueError("the dataset has no movie with ground truth or no model")
    return movie, model


def _corrected_review_scores(
    dataset: Dataset, movie: str, model: str, review_id: str, options: EvalOptions | None
) -> dict[str, float] | None:
    from kweval.evaluation.pipeline import EvalOptions, evaluate

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
) -> ZipPairingExample:
    """What seed 000 compares review `review_index` (0-based, among the reviews with a list) against (defect 1).

    `corrected` adds kweval's per-review values (one evaluation of the movie × model).
    """
    reviews = reviews_of(dataset, movie, model)
    if not 0 <= review_index < len(reviews):
        raise IndexError(f"{movie} [{model}] has {len(reviews)} reviews with predictions; no index {review_index}")
    gt = gt_lists(dataset).get(movie, [])
    row = reviews.iloc[review_index]
    preds = seed000_predictions(row["entries"])
    paired = review_index < len(gt)
    chars = legacy = None
    if paired:
        gt_kw = gt[review_index]
        chars = [legacy_normalize(c) for c in gt_kw]
        score_sum, pairs, n_entries = seed000_review_weighted(preds, gt_kw)
        dcg, idcg, ndcg = seed000_review_ndcg([kw for kw, _ in preds], chars, k)
        legacy = ZipLegacyScores(
            score_sum=score_sum,
            matched_score=sum(s for _, s, hit in pairs if hit is not None),
            pairs=pairs,
            n_gt_entries=n_entries,
            relevance=legacy_relevance([kw for kw, _ in preds[:k]], chars),
            dcg=dcg,
            idcg=idcg,
            ndcg=ndcg,
        )
    wp, wr, wf = seed000_weighted([preds], [gt])
    return ZipPairingExample(
        movie=movie,
        model=model,
        review_id=row["review_id"],
        review_index=review_index,
        n_reviews=len(reviews),
        n_gt=len(gt),
        paired=paired,
        gt_keyword=gt[review_index] if paired else None,
        predictions=preds,
        compared_against=chars,
        legacy=legacy,
        intended=IntendedScores(wp, wr, wf, seed000_global_ndcg([preds], [gt], k)),
        corrected=_corrected_review_scores(dataset, movie, model, row["review_id"], options) if corrected else None,
    )


def find_zip_pairing_example(
    dataset: Dataset, model: str | None = None, k: int = 5, corrected: bool = True
) -> ZipPairingExample | None:
    """Defect 1 on a real review: the first paired review that the zip credits with a match although,
    scored against the whole GT list, none of its keywords matches anything."""
    gts = gt_lists(dataset)
    lists = review_lists(dataset)
    models = [model] if model is not None else dataset.models["model"].tolist()
    for (movie, md), frame in group_lists(lists).items():
        if md not in models or not gts.get(movie):
            continue
        gt = gts[movie]
        matcher = shared_matcher(gt)
        for i, entries in enumerate(frame["entries"].tolist()[: len(gt)]):
            preds = seed000_predictions(entries)
            _, pairs, _ = seed000_review_weighted(preds, gt[i])
            if any(hit is not None for *_, hit in pairs) and not any(matcher.any(kw) for kw, _ in preds):
                return zip_pairing_example(dataset, movie, md, i, k, corrected=corrected)
    return None


def find_undiscounted_idcg_example(
    dataset: Dataset, k: int = 5, model: str | None = None
) -> UndiscountedIdcgExample | None:
    """Defect 2 on a real review: the review with the best one-to-one DCG@k, scored against its whole GT list.

    Returns its predictions, both relevance lists, dcg_notebook (many-to-one),
    dcg_one_to_one, idcg_notebook (undiscounted), idcg_spec, ndcg_notebook,
    ndcg_notebook_spec_idcg (notebook relevance over the spec IDCG: can exceed 1)
    and ndcg_spec (one-to-one over the spec IDCG), plus the IDCG ratio.
    """
    best = best_one_to_one_dcg(dataset, k, model)
    if best is None or best[0] == 0:
        return None
    dcg_1, movie, md, rid, top, gt, matcher, rel_1 = best
    rel_nb = legacy_relevance(top, matcher.gt, matcher.first)
    dcg_nb = dcg(rel_nb)
    idcg_nb, idcg_sp = legacy_idcg(len(gt), k), spec_idcg(len(gt), k)
    return UndiscountedIdcgExample(
        movie=movie,
        model=md,
        review_id=rid,
        predictions=top,
        gt_top=gt[:k],
        relevance_notebook=rel_nb,
        relevance_one_to_one=rel_1,
        dcg_notebook=dcg_nb,
        dcg_one_to_one=dcg_1,
        idcg_notebook=idcg_nb,
        idcg_spec=idcg_sp,
        idcg_ratio=idcg_sp / idcg_nb,
        ndcg_notebook=dcg_nb / idcg_nb,
        ndcg_notebook_spec_idcg=dcg_nb / idcg_sp,
        ndcg_spec=dcg_1 / idcg_sp,
    )


def find_many_to_one_example(dataset: Dataset, k: int = 5, model: str | None = None) -> ManyToOneExample | None:
    """Defect 3 on a real review: top-k predictions credited with the same GT keyword (scored against the whole GT
    list).

    Picks the review where one GT keyword is credited most often (the first
    such review on ties).  Returns the predictions, the GT keyword and the
    positions credited with it, both relevance lists and nDCG@k under each
    (notebook IDCG for the notebook relevance, spec IDCG for one-to-one), plus
    n_reviews_affected / n_reviews_scanned.
    """
    best, affected, scanned = most_credited(dataset, k, model)
    if best is None:
        return None
    n, j, movie, md, rid, top, gt, matcher = best
    rel_nb = legacy_relevance(top, matcher.gt, matcher.first)
    rel_1 = one_to_one_relevance(top, matcher)
    return ManyToOneExample(
        movie=movie,
        model=md,
        review_id=rid,
        predictions=top,
        gt_keyword=gt[j],
        gt_rank=j,
        positions=[i for i, p in enumerate(top) if matcher.first(p) == j],
        times_credited=n,
        relevance_notebook=rel_nb,
        relevance_one_to_one=rel_1,
        ndcg_notebook=dcg(rel_nb) / legacy_idcg(len(gt), k),
        ndcg_spec=dcg(rel_1) / spec_idcg(len(gt), k),
        n_reviews_affected=affected,
        n_reviews_scanned=scanned,
    )


def find_ascii_normalization_example(dataset: Dataset) -> AsciiNormalizationExample | None:
    """Defect 4 on real data: a GT or predicted keyword whose notebook normalization differs from docs/metrics.md §1's.

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
    return AsciiNormalizationExample(
        source=src,
        keyword=kw,
        legacy=legacy_normalize(kw),
        unicode=normalize(kw),
        n_keywords_affected=len(hits),
        n_keywords_checked=len(candidates),
    )


def find_recall_counts_predictions_example(
    dataset: Dataset, model: str | None = None
) -> RecallCountsPredictionsExample | None:
    """Defect 5 on a real review: seed 001's recall (matched predictions / |G|) above the one-to-one recall (matched GT
    / |G|).

    Same normalization and matching on both sides, so only the counting
    differs.  Picks the review with the largest gap (first on ties).  Returns
    predictions with the GT keywords each can match, both counts and recalls,
    and n_reviews_affected / n_reviews_scanned.
    """
    best, affected, scanned = recall_gap(dataset, model)
    if best is None:
        return None
    _, movie, md, rid, preds, gt, matcher, n_legacy, n_one = best
    return RecallCountsPredictionsExample(
        movie=movie,
        model=md,
        review_id=rid,
        predictions=preds,
        matches={p: [gt[j] for j in matcher.all(p)] for p in preds if matcher.any(p)},
        n_gt=len(gt),
        matched_predictions=n_legacy,
        matched_gt=n_one,
        recall_notebook=n_legacy / len(gt),
        recall_one_to_one=n_one / len(gt),
        precision_notebook=n_legacy / len(preds),
        n_reviews_affected=affected,
        n_reviews_scanned=scanned,
    )
