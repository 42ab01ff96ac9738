"""Evaluation: a Dataset and options in, the per-review table (the single source of truth) out.

Steps, each vectorised over all rows (METRICS.md §1–3):
clean the GT and the predictions (normalize, drop empty and duplicate
keywords, invalid scores count as 0), match each movie's *unique* keywords
once against its GT, assign one-to-one per review, then compute every metric
from the assigned pairs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, fields

import numpy as np
import pandas as pd

from kweval import metrics, ranking
from kweval.data.dataset import Dataset, Problem
from kweval.matching import MATCH_MODES, assign_matches_grouped, candidate_lists
from kweval.text import normalize

GT_ORDERS = ("file", "helpful")
AGGREGATIONS = ("macro", "micro")
KEY = ["movie", "review_id", "model"]

Progress = Callable[[str, float], None]


@dataclass(frozen=True)
class EvalOptions:
    """Everything that changes a number.  Defaults follow METRICS.md."""

    k: int = 5
    match: str = "approx"
    gt_order: str = "file"
    gain: str = "linear"
    discount: str = "log2"
    semantic: bool = False
    threshold: float = 0.75
    embedding_model: str = "all-MiniLM-L6-v2"
    sentiment: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.k, (int, np.integer)) or self.k < 1:
            raise ValueError(f"k must be a positive integer, got {self.k!r}")
        for name, value, allowed in (
            ("match", self.match, MATCH_MODES),
            ("gt_order", self.gt_order, GT_ORDERS),
            ("gain", self.gain, ranking.GAINS),
            ("discount", self.discount, ranking.DISCOUNTS),
        ):
            if value not in allowed:
                raise ValueError(f"{name} must be one of {', '.join(allowed)}; got {value!r}")
        if not 0.0 <= float(self.threshold) <= 1.0:
            raise ValueError(f"threshold must be within [0, 1], got {self.threshold!r}")

    def as_dict(self) -> dict:
        return {f.name: getattr(self, f.name) for f in fields(self)}

    def lexical_metrics(self) -> list[str]:
        """Per-review lexical metric columns, in report order."""
        k = self.k
        return ["precision", "recall", "f1", "w_precision", "w_recall", "w_f1", f"ndcg@{k}", f"p@{k}", f"ap@{k}", "rr"]

    def extra_metrics(self) -> list[str]:
        cols = []
        if self.semantic:
            cols += ["sem_precision", "sem_recall", "sem_f1"]
        if self.sentiment:
            cols += ["sas_keywords", "sas_text"]
        return cols

    def metric_names(self) -> list[str]:
        """Every reported metric column, per-review ones then movie-level `gt_coverage`."""
        return self.lexical_metrics() + self.extra_metrics() + ["gt_coverage"]


@dataclass
class Evaluation:
    """The result of `evaluate`.

    - ``scores``: one row per evaluated movie × review × model: the counts micro
      aggregation needs (n_pred, n_gt, n_matched, score_sum, matched_score,
      gain_sum, matched_gain, n_bad_scores) and every per-review metric.
    - ``keywords``: one row per cleaned predicted keyword: position (0-based
      rank after cleaning), keyword (raw), norm, score (raw), confidence,
      gt_rank (-1 if unmatched) and gt_keyword: the matched pairs M.
    - ``ground_truth``: the cleaned GT: movie, rank, keyword, norm.
    - ``coverage``: movie × model: n_gt, n_covered, gt_coverage.
    - ``skipped``: movie × review × model pairs without output, with the reason.
    - ``problems``: what loading and cleaning dropped or changed.
    """

    scores: pd.DataFrame
    keywords: pd.DataFrame
    ground_truth: pd.DataFrame
    coverage: pd.DataFrame
    skipped: pd.DataFrame
    options: EvalOptions
    movies: list[str]
    models: list[str]
    problems: list[Problem] = field(default_factory=list)

    @property
    def metric_names(self) -> list[str]:
        return self.options.metric_names()


def clean_ground_truth(gt: pd.DataFrame, order: str = "file") -> pd.DataFrame:
    """Per movie: order (file rank, or helpful desc then not_helpful asc), normalize, drop empty and duplicates; re-rank 0..n-1."""
    frame = gt.sort_values(["movie", "rank"], kind="stable")
    if order == "helpful":
        helpful = pd.to_numeric(frame["helpful"], errors="coerce").fillna(0.0)
        not_helpful = pd.to_numeric(frame["not_helpful"], errors="coerce").fillna(0.0)
        frame = frame.assign(_h=-helpful, _n=not_helpful).sort_values(["movie", "_h", "_n"], kind="stable")
    keywords = frame["keyword"].tolist()
    norms = [normalize(k) if isinstance(k, str) else "" for k in keywords]
    frame = frame.assign(norm=norms)
    frame = frame[frame["norm"] != ""]
    frame = frame.drop_duplicates(["movie", "norm"], keep="first")
    frame = frame.assign(rank=frame.groupby("movie", sort=False).cumcount().astype("int64"))
    return frame[["movie", "rank", "keyword", "norm"]].reset_index(drop=True)


def _group_sum(group: np.ndarray, values: np.ndarray | None, n: int) -> np.ndarray:
    return np.bincount(group, weights=values, minlength=n).astype("float64") if len(group) else np.zeros(n)


def evaluate(dataset: Dataset, options: EvalOptions | None = None, progress: Progress | None = None) -> Evaluation:
    """Score every review × model of `dataset` (METRICS.md §1–3, and §4–5 when asked)."""
    options = options or EvalOptions()
    report = progress or (lambda stage, fraction: None)
    problems: list[Problem] = list(dataset.problems)
    movie_order = [m for m in dataset.movies["movie"].tolist()]
    model_order = dataset.models["model"].tolist()

    # --- ground truth -------------------------------------------------------------------------
    report("ground truth", 0.0)
    gt = clean_ground_truth(dataset.ground_truth, options.gt_order)
    gt_sizes = gt.groupby("movie", sort=False).size()
    movies = [m for m in movie_order if gt_sizes.get(m, 0) > 0]
    for m in movie_order:
        if m not in gt_sizes.index:
            n_rev = int((dataset.reviews["movie"] == m).sum())
            problems.append(Problem(m, f"no ground-truth keywords; its {n_rev} review(s) are skipped"))

    # --- predictions: group, order, clean ------------------------------------------------------
    report("cleaning", 0.1)
    pred = dataset.predictions
    pred = pred[pred["movie"].isin(movies) & pred["model"].isin(model_order)]
    groups = pred[KEY].drop_duplicates().reset_index(drop=True)
    movie_pos = {m: i for i, m in enumerate(movies)}
    model_pos = {m: i for i, m in enumerate(model_order)}
    groups = groups.assign(
        _m=groups["movie"].map(movie_pos).to_numpy(), _d=groups["model"].map(model_pos).to_numpy()
    )
    groups["_r"] = np.arange(len(groups))  # first appearance keeps the reader's review order
    first_seen = groups.groupby(["movie", "review_id"], sort=False)["_r"].transform("min")
    groups = groups.assign(_r=first_seen).sort_values(["_m", "_r", "_d"], kind="stable").reset_index(drop=True)
    n_groups = len(groups)
    group_index = pd.MultiIndex.from_frame(groups[KEY])
    row_group = group_index.get_indexer(pd.MultiIndex.from_frame(pred[KEY]))

    order = np.lexsort((pred["rank"].to_numpy(), row_group))
    row_group = row_group[order]
    raw_kw = pred["keyword"].to_numpy(dtype=object)[order]
    raw_score = pred["score"].to_numpy(dtype="float64")[order]

    codes, uniques = pd.factorize(pd.Series(raw_kw, dtype=object), use_na_sentinel=True)
    unique_norms = np.array([normalize(u) if isinstance(u, str) else "" for u in uniques] + [""], dtype=object)
    norm_codes, norm_values = pd.factorize(pd.Series(unique_norms, dtype=object))
    row_norm = norm_codes[codes]  # code -1 (NA) picks the trailing "" entry
    empty_code = norm_codes[-1]
    valid = row_norm != empty_code
    dup = pd.Series(row_group.astype("int64") * (len(norm_values) + 1) + row_norm).duplicated().to_numpy()
    keep = valid & ~dup
    n_dropped_invalid = int((~valid & ~pd.isna(raw_kw)).sum())  # strings that normalize to nothing
    n_dropped_dup = int((valid & dup).sum())

    grp = row_group[keep]
    kw_kept = raw_kw[keep]
    norm_id = row_norm[keep]
    score_raw = raw_score[keep]
    bad_score = ~np.isfinite(score_raw) | (score_raw < 0)
    lower = groups["model"].map(dict(zip(dataset.models["model"], dataset.models["score_direction"]))).to_numpy() == "lower"
    row_lower = lower[grp] if len(grp) else np.zeros(0, dtype=bool)
    with np.errstate(invalid="ignore", divide="ignore"):
        confidence = np.where(bad_score, 0.0, np.where(row_lower, 1.0 / (1.0 + score_raw), score_raw))
    starts = np.searchsorted(grp, np.arange(n_groups))
    position = np.arange(len(grp)) - starts[grp] if len(grp) else np.zeros(0, dtype=np.int64)
    if n_dropped_invalid or n_dropped_dup:
        problems.append(
            Problem(
                "predictions",
                f"{n_dropped_invalid} keyword(s) empty after normalization and {n_dropped_dup} repeated keyword(s) within a review were dropped",
            )
        )

    # --- matching, one movie at a time, on unique keywords -----------------------------------------
    report("matching", 0.3)
    group_movie = groups["_m"].to_numpy()
    row_movie = group_movie[grp] if len(grp) else np.zeros(0, dtype=np.int64)
    gt_rank = np.full(len(grp), -1, dtype=np.int64)
    gt_norm_by_movie = {m: frame["norm"].tolist() for m, frame in gt.groupby("movie", sort=False)}
    movie_bounds = np.searchsorted(row_movie, np.arange(len(movies) + 1))  # rows are grouped by movie
    for mi, movie in enumerate(movies):
        lo, hi = movie_bounds[mi], movie_bounds[mi + 1]
        if lo == hi:
            continue
        local_ids, inverse = np.unique(norm_id[lo:hi], return_inverse=True)
        cands = candidate_lists(norm_values[local_ids].tolist(), gt_norm_by_movie[movie], options.match)
        gt_rank[lo:hi] = assign_matches_grouped(grp[lo:hi], inverse.astype(np.int64), cands)
        report("matching", 0.3 + 0.5 * (mi + 1) / len(movies))

    # --- per-review metrics ---------------------------------------------------------------------
    report("metrics", 0.8)
    n_gt = gt_sizes.reindex(groups["movie"]).to_numpy(dtype="int64") if n_groups else np.zeros(0, np.int64)
    matched = gt_rank >= 0
    m_grp = grp[matched]
    gains = ranking.apply_gain(metrics.graded_relevance(gt_rank[matched]), options.gain)
    counts = {
        "n_pred": np.bincount(grp, minlength=n_groups).astype("int64"),
        "n_gt": n_gt,
        "n_matched": np.bincount(m_grp, minlength=n_groups).astype("int64"),
        "n_bad_scores": np.bincount(grp[bad_score], minlength=n_groups).astype("int64"),
        "score_sum": _group_sum(grp, confidence, n_groups),
        "matched_score": _group_sum(m_grp, confidence[matched], n_groups),
        "gain_sum": metrics.gt_gain_total(n_gt, options.gain),
        "matched_gain": _group_sum(m_grp, gains, n_groups),
    }
    scores = groups[KEY].copy()
    for name, values in counts.items():
        scores[name] = values
    columns = {}
    columns.update(metrics.set_metrics(counts["n_pred"], counts["n_gt"], counts["n_matched"]))
    columns.update(
        metrics.weighted_metrics(counts["score_sum"], counts["matched_score"], counts["gain_sum"], counts["matched_gain"])
    )
    columns.update(
        metrics.ranking_metrics(m_grp, position[matched], gt_rank[matched], n_gt, options.k, options.gain, options.discount)
    )
    for name, values in columns.items():
        scores[name] = values

    n_bad = int(bad_score.sum())
    if n_bad:
        per_model = pd.Series(groups["model"].to_numpy()[grp[bad_score]]).value_counts()
        problems.append(
            Problem(
                "predictions",
                f"{n_bad} score(s) missing, non-numeric, non-finite or negative were counted as 0 ("
                + ", ".join(f"{m}: {c}" for m, c in per_model.items())
                + ")",
            )
        )

    # --- keywords table (the matched pairs) and GT coverage -----------------------------------------
    gt_keyword_lookup = gt.set_index(["movie", "rank"])["keyword"]
    keywords = pd.DataFrame(
        {
            "movie": groups["movie"].to_numpy()[grp],
            "review_id": groups["review_id"].to_numpy()[grp],
            "model": groups["model"].to_numpy()[grp],
            "position": position.astype("int64"),
            "keyword": kw_kept,
            "norm": norm_values[norm_id],
            "score": score_raw,
            "confidence": confidence,
            "gt_rank": gt_rank,
        }
    )
    keywords["gt_keyword"] = None
    if matched.any():
        keys = pd.MultiIndex.from_arrays([keywords["movie"].to_numpy()[matched], gt_rank[matched]])
        keywords.loc[matched, "gt_keyword"] = gt_keyword_lookup.reindex(keys).to_numpy()

    coverage = _coverage(keywords[matched], gt_sizes, movies, model_order)
    skipped = _skipped(dataset, groups, movies, model_order)

    evaluation = Evaluation(
        scores=scores,
        keywords=keywords,
        ground_truth=gt,
        coverage=coverage,
        skipped=skipped,
        options=options,
        movies=movies,
        models=model_order,
        problems=problems,
    )
    if options.semantic or options.sentiment:
        _add_semantic_and_sentiment(evaluation, dataset, report)
    report("done", 1.0)
    return evaluation


def _coverage(matched_kw: pd.DataFrame, gt_sizes: pd.Series, movies: list[str], models: list[str]) -> pd.DataFrame:
    """Movie × model: how many of the movie's GT keywords were matched in at least one review."""
    covered = matched_kw.drop_duplicates(["movie", "model", "gt_rank"]).groupby(["movie", "model"]).size()
    index = pd.MultiIndex.from_product([movies, models], names=["movie", "model"])
    out = pd.DataFrame(index=index).reset_index()
    out["n_gt"] = gt_sizes.reindex(out["movie"]).to_numpy(dtype="int64") if len(out) else np.zeros(0, np.int64)
    out["n_covered"] = covered.reindex(index, fill_value=0).to_numpy(dtype="int64") if len(out) else np.zeros(0, np.int64)
    out["gt_coverage"] = metrics.safe_ratio(out["n_covered"].to_numpy(), out["n_gt"].to_numpy())
    return out


def _skipped(dataset: Dataset, groups: pd.DataFrame, movies: list[str], models: list[str]) -> pd.DataFrame:
    """Review × model pairs of movies with GT for which the model gave no output."""
    reviews = pd.concat(
        [dataset.reviews[["movie", "review_id"]], groups[["movie", "review_id"]]], ignore_index=True
    ).drop_duplicates()
    reviews = reviews[reviews["movie"].isin(movies)]
    if reviews.empty or not models:
        return pd.DataFrame({"movie": [], "review_id": [], "model": [], "reason": []})
    every = reviews.merge(pd.DataFrame({"model": models}), how="cross")
    present = pd.MultiIndex.from_frame(groups[KEY])
    missing = every[~pd.MultiIndex.from_frame(every[KEY]).isin(present)]
    return missing.assign(reason="no output from the model").reset_index(drop=True)


def _add_semantic_and_sentiment(evaluation: Evaluation, dataset: Dataset, report: Progress) -> None:
    """Add sem_* and sas_* columns (METRICS.md §4–5); imports the heavy parts only when asked."""
    scores = evaluation.scores
    kw = evaluation.keywords
    if evaluation.options.semantic:
        from kweval import semantic
        from kweval.cache import EmbeddingStore

        report("embedding", 0.85)
        gt = evaluation.ground_truth
        texts = list(dict.fromkeys(kw["norm"].tolist() + gt["norm"].tolist()))
        model_id = evaluation.options.embedding_model
        vectors = semantic.embed_texts(
            texts,
            model_id=model_id,
            store=EmbeddingStore(model_id),
            progress=lambda done, total: report("embedding", 0.85 + 0.1 * done / max(total, 1)),
        )
        sem = semantic.semantic_metrics(
            kw[KEY + ["norm"]], gt[["movie", "rank", "norm"]], dict(zip(texts, vectors)), evaluation.options.threshold
        )
        sem = sem.set_index(KEY).reindex(pd.MultiIndex.from_frame(scores[KEY]))
        # reviews with an empty prediction list have no row: |P| = 0, nothing matched, |G| still counts
        for col in ("sem_n_pred", "sem_pred_matched", "sem_gt_matched"):
            scores[col] = sem[col].fillna(0).to_numpy(dtype="int64")
        scores["sem_n_gt"] = scores["n_gt"].to_numpy()
        for col in ("sem_precision", "sem_recall", "sem_f1"):
            scores[col] = sem[col].fillna(0.0).to_numpy(dtype="float64")
    if evaluation.options.sentiment:
        from kweval import sentiment

        report("sentiment", 0.95)
        sas = sentiment.sas_metrics(kw[KEY + ["keyword", "norm"]], evaluation.ground_truth[["movie", "keyword"]], dataset.reviews)
        sas = sas.set_index(KEY).reindex(pd.MultiIndex.from_frame(scores[KEY]))
        for col in ("sent_pred", "sas_keywords", "sas_text"):
            scores[col] = sas[col].to_numpy()
