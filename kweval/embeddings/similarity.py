"""Semantic similarities and metrics from keyword vectors (docs/metrics.md §4), whatever computed the vectors.

`similarities` keeps, per review × model, the best cosine of each predicted
keyword to the GT and of each GT keyword to the predictions, with one matrix
product per movie; any τ is then a comparison and a count
(`Similarities.at_threshold`): ``sem_precision = #{i : max_j S_ij > τ} / |P|``
and ``sem_recall = #{j : max_i S_ij > τ} / |G|``.  The numeric contract the
embedder shares: unit float32 rows (`unit_rows`) and τ compared in the
cosines' own float32 precision with strict ``>`` (`threshold_like`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from kweval._arrays import segment_max_rows
from kweval.data.dataset import KEY
from kweval.metrics.ratios import harmonic_mean, safe_ratio

SEMANTIC_COLUMNS = [
    "sem_n_pred",
    "sem_pred_matched",
    "sem_n_gt",
    "sem_gt_matched",
    "sem_precision",
    "sem_recall",
    "sem_f1",
]
# Reviews × GT cells of the recall reduction's maxima handled at once.
_BLOCK_CELLS = 1 << 24

Vectors = Mapping[str, np.ndarray] | Callable[[list[str]], np.ndarray]


def unit_rows(mat: np.ndarray) -> np.ndarray:
    """Each row scaled to length 1, as float32 (a zero row stays zero)."""
    mat = np.asarray(mat, dtype=np.float32)
    norms = np.linalg.norm(mat, axis=1, keepdims=True)
    return np.divide(mat, norms, out=np.zeros_like(mat), where=norms > 0)


def _matrix(texts: list[str], vectors: Vectors) -> np.ndarray:
    """Unit-row float32 matrix for `texts` from a mapping or an embedder function."""
    return unit_rows(_vectors_of(texts, vectors))


def _vectors_of(texts: list[str], vectors: Vectors) -> np.ndarray:
    """The float32 vectors of `texts` as given (not scaled), from a mapping or an embedder function."""
    if not texts:
        return np.zeros((0, 0), dtype=np.float32)
    if callable(vectors) and not isinstance(vectors, Mapping):
        mat = np.asarray(vectors(list(texts)), dtype=np.float32)
        if mat.ndim != 2 or mat.shape[0] != len(texts):
            raise ValueError(f"the embedder returned shape {mat.shape} for {len(texts)} text(s)")
    else:
        rows = []
        for t in texts:
            try:
                rows.append(np.asarray(vectors[t], dtype=np.float32))
            except KeyError:
                raise KeyError(f"no vector for keyword {t!r}") from None
        mat = np.stack(rows)
    return mat


def semantic_counts(sim: np.ndarray, threshold: float) -> tuple[int, int]:
    """For one review's |P|×|G| cosine matrix: (#predictions with max_j S_ij > τ, #GT with max_i S_ij > τ).

    Strict ``>``; τ is compared in the matrix's own precision.
    """
    sim = np.asarray(sim)
    if sim.ndim != 2:
        raise ValueError(f"sim must be a 2-d matrix, got shape {sim.shape}")
    if sim.size == 0:
        return 0, 0
    above = sim > threshold_like(threshold, sim.dtype)
    return int(above.any(axis=1).sum()), int(above.any(axis=0).sum())


def threshold_like(threshold: float, dtype) -> np.floating:
    """τ in the precision of similarities of `dtype` (float64 for non-float dtypes)."""
    # Compare in the similarities' precision: a float32 cosine of exactly 0.75
    # is not "> 0.75", whatever float64 rounding of the threshold says.
    dtype = np.dtype(dtype) if np.issubdtype(np.dtype(dtype), np.floating) else np.dtype(np.float64)
    return dtype.type(threshold)


@dataclass(frozen=True)
class Similarities:
    """What every threshold needs, computed once per embedding set (docs/metrics.md §4).

    Per review × model group (``keys``, first-appearance order): ``n_pred`` |P|
    and ``n_gt`` |G|; per distinct predicted keyword of a group, its best
    cosine to the movie's GT (``pred_best``, grouped by ``pred_group``); per
    GT keyword of a group, its best cosine to the group's keywords
    (``gt_best``: one run of ``n_gt[g]`` values per group g of ``gt_runs``, in
    that order; a group without GT has none).  ``max_j S_ij > τ`` is the same
    test as ``∃j S_ij > τ``, so any τ is then a comparison and a count
    (`at_threshold`).  The GT side is held as runs, not a group per value: on
    DNLP it has 13 million values (every GT keyword of a movie, for each of its
    reviews × models), whose group numbers took 107 MB.
    """

    keys: pd.DataFrame
    n_pred: np.ndarray
    n_gt: np.ndarray
    pred_group: np.ndarray
    pred_best: np.ndarray
    gt_runs: np.ndarray
    gt_best: np.ndarray

    def _gt_matched(self, thr: np.floating) -> np.ndarray:
        """Per group, its GT values above `thr`: a count per run (`gt_runs`), 0 for a group without one."""
        out = np.zeros(len(self.keys), dtype=np.int64)
        if len(self.gt_runs):
            ends = np.cumsum(self.n_gt[self.gt_runs])  # run r holds values ends[r - 1] .. ends[r] - 1
            above = np.flatnonzero(self.gt_best > thr)
            out[self.gt_runs] = np.bincount(np.searchsorted(ends, above, side="right"), minlength=len(self.gt_runs))
        return out

    def columns_at(self, threshold: float) -> dict[str, np.ndarray]:
        """The semantic counts and metrics at `threshold` (strict ``>``, in float32 as the cosines), one array per
        column of `at_threshold`, in the groups' order (no key columns: a τ step needs only these)."""
        thr = threshold_like(float(threshold), np.float32)
        n = len(self.keys)
        pred_matched = np.bincount(self.pred_group[self.pred_best > thr], minlength=n).astype(np.int64)
        gt_matched = self._gt_matched(thr)
        precision = safe_ratio(pred_matched, self.n_pred)
        recall = safe_ratio(gt_matched, self.n_gt)
        return {
            "sem_n_pred": self.n_pred,
            "sem_pred_matched": pred_matched,
            "sem_n_gt": self.n_gt,
            "sem_gt_matched": gt_matched,
            "sem_precision": precision,
            "sem_recall": recall,
            "sem_f1": harmonic_mean(precision, recall),
        }

    def aligned(self, keys: pd.DataFrame) -> Similarities:
        """The same similarities with one group per row of `keys` (movie, review_id, model; unique rows), in its
        order; a row without a group here gets |P| = |G| = 0 and no cosines.

        Speed trick, "aligned similarities": ``aligned(keys).at_threshold(τ)`` equals the plain definition
        ``at_threshold(τ)`` reindexed to `keys` with missing rows 0 (tests/test_semantic.py), so that each later τ
        is a count in the scores' own row order, with no join (the dashboard's τ slider).
        """
        keys = keys[KEY].reset_index(drop=True)
        if keys.duplicated().any():
            raise ValueError("aligned needs unique (movie, review_id, model) rows")
        where = pd.MultiIndex.from_frame(self.keys[KEY]).get_indexer(pd.MultiIndex.from_frame(keys))
        if len(where) == len(self.keys) and np.array_equal(where, np.arange(len(where))):
            return Similarities(
                keys, self.n_pred, self.n_gt, self.pred_group, self.pred_best, self.gt_runs, self.gt_best
            )
        found = where >= 0
        new_of_old = np.full(len(self.keys), -1, dtype=np.int64)
        new_of_old[where[found]] = np.flatnonzero(found)
        n_pred, n_gt = np.zeros(len(keys), np.int64), np.zeros(len(keys), np.int64)
        n_pred[found], n_gt[found] = self.n_pred[where[found]], self.n_gt[where[found]]
        pred_group, gt_runs = new_of_old[self.pred_group], new_of_old[self.gt_runs]
        pred_kept, run_kept = pred_group >= 0, gt_runs >= 0
        gt_best = self.gt_best  # shared when every run is kept (the runs renumbered, their values in place)
        if not run_kept.all():
            gt_best = gt_best[np.repeat(run_kept, self.n_gt[self.gt_runs])]
        return Similarities(
            keys, n_pred, n_gt, pred_group[pred_kept], self.pred_best[pred_kept], gt_runs[run_kept], gt_best
        )

    def at_threshold(self, threshold: float) -> pd.DataFrame:
        """The semantic counts and metrics at `threshold` (strict ``>``, in float32 as the cosines), per group."""
        return self.keys.assign(**self.columns_at(threshold))


def similarities(pred: pd.DataFrame, gt: pd.DataFrame, vectors: Vectors) -> Similarities:
    """The best cosines of `semantic_metrics`, for every threshold at once.

    `pred`: movie, review_id, model, norm (rows without a usable norm are
    ignored; a norm repeated within a review counts once).  `gt`: movie,
    rank, norm (repeated norms count once).  `vectors`: a mapping text → vector
    or a function list[str] → [n, d] (called once with every distinct text).
    One matrix product per movie (its distinct keywords × its GT), reduced per
    review with `segment_max_rows` in slices of at most `_BLOCK_CELLS` cells.
    """
    p = pred[KEY + ["norm"]]
    p = p[p["norm"].map(lambda t: isinstance(t, str) and t != "").to_numpy(dtype=bool)].drop_duplicates(KEY + ["norm"])
    g = gt[["movie", "rank", "norm"]]
    g = g[g["norm"].map(lambda t: isinstance(t, str) and t != "").to_numpy(dtype=bool)]
    g = g.sort_values(["movie", "rank"], kind="stable").drop_duplicates(["movie", "norm"])
    keys = p[KEY].drop_duplicates().reset_index(drop=True)
    empty = np.zeros(0, dtype=np.int64)
    if p.empty:
        return Similarities(keys, empty, empty, empty, np.zeros(0, np.float32), empty, np.zeros(0, np.float32))

    text_codes, texts = pd.factorize(pd.concat([p["norm"], g["norm"]], ignore_index=True), sort=False)
    raw = _vectors_of(list(texts), vectors)
    p_text, g_text = text_codes[: len(p)], text_codes[len(p) :]
    group = p.groupby(KEY, sort=False, dropna=False).ngroup().to_numpy()
    n_groups = len(keys)
    movie_codes, movies = pd.factorize(p["movie"], sort=False)
    gt_by_movie = dict(g.groupby("movie", sort=False).indices.items())
    n_pred = np.bincount(group, minlength=n_groups).astype(np.int64)
    first_row = np.unique(group, return_index=True)[1]
    n_gt = np.array([len(gt_by_movie.get(m, ())) for m in movies], dtype=np.int64)[movie_codes[first_row]]

    pred_best = np.full(len(p), -np.inf, dtype=np.float32)
    gt_best = np.empty(int(n_gt.sum()), dtype=np.float32)  # |G| values per group, filled in the runs' order
    filled = 0
    gt_runs: list[np.ndarray] = []
    order = np.lexsort((group, movie_codes))  # each movie a block, each review a sub-block
    for block in np.split(order, np.flatnonzero(np.diff(movie_codes[order])) + 1):
        gt_rows = gt_by_movie.get(movies[movie_codes[block[0]]])
        if gt_rows is None or len(gt_rows) == 0:
            continue
        uniq, local = np.unique(p_text[block], return_inverse=True)
        # speed trick "unit rows per movie": unit_rows(raw[rows]) is unit_rows(raw)[rows] (row by row, the same
        # bits: tests/test_semantic.py), so the whole matrix is never scaled and copied: on DNLP ~58 MB a copy
        sim = unit_rows(raw[uniq]) @ unit_rows(raw[g_text[gt_rows]]).T
        pred_best[block] = sim.max(axis=1)[local]
        rows_group = group[block]
        starts = np.concatenate(([0], np.flatnonzero(np.diff(rows_group)) + 1))
        step = max(1, _BLOCK_CELLS // sim.shape[1])  # reviews a slice: its maxima hold at most _BLOCK_CELLS cells
        for s in range(0, len(starts), step):
            lo, e = starts[s], min(s + step, len(starts))
            hi = starts[e] if e < len(starts) else len(block)
            part = gt_best[filled : filled + (e - s) * sim.shape[1]].reshape(e - s, sim.shape[1])
            segment_max_rows(sim, local[lo:hi], starts[s:e] - lo, out=part)  # each GT keyword's best in each review
            filled += part.size
            gt_runs.append(rows_group[starts[s:e]])  # one run of |G| values per review group, in this order
    runs = np.concatenate(gt_runs) if gt_runs else empty
    return Similarities(keys, n_pred, n_gt, group, pred_best, runs, gt_best)


def semantic_metrics(
    pred: pd.DataFrame,
    gt: pd.DataFrame,
    vectors: Vectors,
    threshold: float = 0.75,
) -> pd.DataFrame:
    """Per review × model semantic counts and metrics (docs/metrics.md §4): ``similarities(...).at_threshold(τ)``.

    Returns one row per (movie, review_id, model) of `pred` with a usable
    keyword, in order of first appearance: ``sem_n_pred`` |P|,
    ``sem_pred_matched``, ``sem_n_gt`` |G|, ``sem_gt_matched``,
    ``sem_precision``, ``sem_recall``, ``sem_f1`` (0 where a denominator is 0;
    a movie without GT scores 0 everywhere).
    """
    if not 0.0 <= float(threshold) <= 1.0:
        raise ValueError(f"threshold must be within [0, 1], got {threshold!r}")
    return similarities(pred, gt, vectors).at_threshold(threshold)


def nearest_gt(pred_norms: Sequence[str], gt_norms: Sequence[str], vectors: Vectors) -> tuple[np.ndarray, np.ndarray]:
    """For each predicted keyword: the index of its most similar GT keyword (first on ties) and that cosine.

    With no GT keyword: index -1 and cosine NaN.  For the dashboard's
    "closest GT keyword" column.
    """
    pred_norms = list(pred_norms)
    gt_norms = list(gt_norms)
    if not pred_norms:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64)
    if not gt_norms:
        return np.full(len(pred_norms), -1, dtype=np.int64), np.full(len(pred_norms), np.nan)
    texts = list(dict.fromkeys(pred_norms + gt_norms))
    pos = {t: i for i, t in enumerate(texts)}
    emb = _matrix(texts, vectors)
    sim = emb[[pos[t] for t in pred_norms]] @ emb[[pos[t] for t in gt_norms]].T
    idx = sim.argmax(axis=1)
    return idx.astype(np.int64), sim[np.arange(len(pred_norms)), idx].astype(np.float64)


def above_threshold(cosine: np.ndarray, threshold: float) -> np.ndarray:
    """``cosine > threshold`` as `semantic_metrics` counts it: `nearest_gt`'s cosines are float32 products widened
    to float64, compared in float32 (NaN: False).  `nearest_gt_table`'s ``above``; the explorer re-thresholds
    its cosines with it on a τ change."""
    return np.asarray(cosine, dtype=np.float64).astype(np.float32) > threshold_like(threshold, np.float32)


def nearest_gt_table(pred: pd.DataFrame, gt: pd.DataFrame, vectors: Vectors, threshold: float = 0.75) -> pd.DataFrame:
    """One review's predicted keywords, each with its most similar GT keyword of the movie (the explorer's view).

    `pred`: one model's cleaned keywords of one review (``norm`` and any other
    columns, e.g. position and keyword, which are kept).  `gt`: the movie's
    cleaned GT (``rank``, ``keyword``, ``norm``); as in `semantic_metrics` it is
    taken in rank order and a repeated norm counts once.  Adds
    ``nearest_gt`` (the raw GT keyword), ``nearest_rank`` (its 0-based GT
    rank), ``cosine`` and ``above`` (``cosine > threshold``, strict and in the
    vectors' float32 precision, as `semantic_metrics` counts it).  A keyword
    without a usable norm, or a movie without GT, gets None / -1 / NaN / False.
    """
    out = pred.reset_index(drop=True).copy()
    usable = out["norm"].map(lambda s: isinstance(s, str) and s != "").to_numpy(dtype=bool)
    g = gt[gt["norm"].map(lambda s: isinstance(s, str) and s != "").to_numpy(dtype=bool)]
    g = g.sort_values("rank", kind="stable").drop_duplicates("norm")
    nearest = np.full(len(out), None, dtype=object)
    rank = np.full(len(out), -1, dtype=np.int64)
    cosine = np.full(len(out), np.nan, dtype=np.float64)
    above = np.zeros(len(out), dtype=bool)
    rows = np.flatnonzero(usable)
    if len(rows) and len(g):
        idx, cos = nearest_gt(out["norm"].to_numpy()[rows].tolist(), g["norm"].tolist(), vectors)
        gt_kw = g["keyword"].to_numpy(dtype=object) if "keyword" in g.columns else g["norm"].to_numpy(dtype=object)
        nearest[rows] = gt_kw[idx]
        rank[rows] = g["rank"].to_numpy(dtype=np.int64)[idx]
        cosine[rows] = cos
        above[rows] = above_threshold(cos, threshold)
    out["nearest_gt"] = nearest
    out["nearest_rank"] = rank
    out["cosine"] = cosine
    out["above"] = above
    return out
