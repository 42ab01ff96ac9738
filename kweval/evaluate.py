"""Evaluation: a Dataset and options in, the per-review table (the single source of truth) out.

Steps, each vectorised over all rows (METRICS.md §1–3):
clean the GT and the predictions (normalize, drop empty and duplicate
keywords, invalid scores count as 0), match each movie's *unique* keywords
once against its GT, assign one-to-one per review, then compute every metric
from the assigned pairs.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, fields, replace

import numpy as np
import pandas as pd

from kweval import metrics, ranking
from kweval.data.dataset import KEY, Dataset, Problem
from kweval.matching import MATCH_MODES, assign_matches_table, candidate_table, keywords_match_pairs
from kweval.semantic import BACKENDS as EMBEDDING_BACKENDS
from kweval.text import normalize_many

GT_ORDERS = ("file", "helpful")
AGGREGATIONS = ("macro", "micro")

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
    embedding_backend: str = "torch"
    keyphrase: bool = False  # r@k, f1@k (hard), f1@k_flex, f1@M, f1@O, r_precision
    present: bool = False  # recall_present, f1@k_present, recall_absent (needs review texts)

    def __post_init__(self) -> None:
        if isinstance(self.k, (bool, np.bool_)) or not isinstance(self.k, (int, np.integer)) or self.k < 1:
            raise ValueError(f"k must be a positive integer, got {self.k!r}")
        if isinstance(self.threshold, (bool, np.bool_)) or not isinstance(self.threshold, (int, float, np.integer, np.floating)):
            raise ValueError(f"threshold must be a number within [0, 1], got {self.threshold!r}")
        for name, value, allowed in (
            ("match", self.match, MATCH_MODES),
            ("gt_order", self.gt_order, GT_ORDERS),
            ("gain", self.gain, ranking.GAINS),
            ("discount", self.discount, ranking.DISCOUNTS),
        ):
            if value not in allowed:
                raise ValueError(f"{name} must be one of {', '.join(allowed)}; got {value!r}")
        if self.embedding_backend not in EMBEDDING_BACKENDS:
            raise ValueError(f"embedding_backend must be one of {', '.join(EMBEDDING_BACKENDS)}; got {self.embedding_backend!r}")
        if not 0.0 <= float(self.threshold) <= 1.0:
            raise ValueError(f"threshold must be within [0, 1], got {self.threshold!r}")

    def as_dict(self) -> dict:
        return {f.name: getattr(self, f.name) for f in fields(self)}

    def lexical_metrics(self) -> list[str]:
        """Per-review lexical metric columns, in report order."""
        k = self.k
        return ["precision", "recall", "f1", "w_precision", "w_recall", "w_f1", f"ndcg@{k}", f"p@{k}", f"ap@{k}", "rr"]

    def keyphrase_metrics(self) -> list[str]:
        """The keyphrase field's metrics (kweval.metrics.keyphrase_metrics / present_metrics), when asked."""
        k = self.k
        cols = [f"r@{k}", f"f1@{k}", f"f1@{k}_flex", "f1@M", "f1@O", "r_precision"] if self.keyphrase else []
        if self.present:
            cols += ["recall_present", f"f1@{k}_present", "recall_absent"]
        return cols

    def extra_metrics(self) -> list[str]:
        cols = self.keyphrase_metrics()
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
    similarities: object = None  # kweval.semantic.Similarities of a semantic evaluation: any τ re-thresholds them

    @property
    def metric_names(self) -> list[str]:
        return self.options.metric_names()


def clean_ground_truth(gt: pd.DataFrame, order: str = "file") -> pd.DataFrame:
    """Per GT list: order (file rank, or helpful desc then not_helpful asc), normalize, drop empty and duplicates; re-rank 0..n-1.

    A GT list is a movie's (rows without `review_id`) or one review's own
    (rows with it); the result keeps `review_id` (None for a movie's list),
    each movie's lists together, its movie-level list first.
    """
    doc = _gt_review_ids(gt)
    frame = gt.assign(review_id=doc, _doc=doc.fillna("")).sort_values(["movie", "_doc", "rank"], kind="stable")
    if order == "helpful":
        helpful = pd.to_numeric(frame["helpful"], errors="coerce").fillna(0.0)
        not_helpful = pd.to_numeric(frame["not_helpful"], errors="coerce").fillna(0.0)
        frame = frame.assign(_h=-helpful, _n=not_helpful).sort_values(["movie", "_doc", "_h", "_n"], kind="stable")
    keywords = frame["keyword"].tolist()
    norms = normalize_many(keywords)
    frame = frame.assign(norm=norms)
    frame = frame[frame["norm"] != ""]
    frame = frame.drop_duplicates(["movie", "_doc", "norm"], keep="first")
    frame = frame.assign(
        rank=frame.groupby(["movie", "_doc"], sort=False).cumcount().astype("int64"),
        review_id=_object_column(frame["review_id"].where(frame["_doc"] != "", None).tolist()).to_numpy(),
    )
    return frame[["movie", "rank", "keyword", "norm", "review_id"]].reset_index(drop=True)


def _gt_review_ids(gt: pd.DataFrame) -> pd.Series:
    """The GT table's `review_id` as text (None: the row belongs to the movie's list); all None without the column."""
    if "review_id" not in gt.columns:
        return pd.Series([None] * len(gt), index=gt.index, dtype=object)
    return gt["review_id"].map(lambda v: None if v is None or v is pd.NA or (isinstance(v, float) and v != v) or v == "" else str(v)).astype(object)


def ranked_movies(movies: pd.DataFrame) -> dict[str, bool]:
    """Movie -> whether its GT is ranked (the `movies` table's optional `ranked` column; ranked when absent or unreadable)."""
    if "ranked" not in movies.columns:
        return {}
    out = {}
    for movie, flag in zip(movies["movie"], movies["ranked"]):
        if isinstance(flag, str):
            flag = {"true": True, "1": True, "yes": True, "false": False, "0": False, "no": False}.get(flag.strip().lower())
        if isinstance(flag, (bool, np.bool_)) or (isinstance(flag, (int, float, np.integer, np.floating)) and flag in (0, 1)):
            out[movie] = bool(flag)
    return out


@dataclass
class _GtLists:
    """Where one movie's GT lists lie in its cleaned GT rows (movie-level list first, then one per review)."""

    movie_level: tuple[int, int] | None  # (start, size) of the movie's own list, if it has one
    by_review: dict  # review id -> (start, size) of that review's own list

    def ranges(self, reviews: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(start, size) of the list each review is scored against: its own, else the movie's, else (0, 0)."""
        fallback = self.movie_level or (0, 0)
        spans = [self.by_review.get(r, fallback) for r in reviews.tolist()]
        if not spans:
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        arr = np.asarray(spans, dtype=np.int64).reshape(-1, 2)
        return arr[:, 0], arr[:, 1]


def _gt_lists(gt: pd.DataFrame) -> dict[str, _GtLists]:
    """Movie -> its GT lists, for the movies with at least one review's own list (`gt` as clean_ground_truth gives it)."""
    doc = gt["review_id"].to_numpy(dtype=object)
    per_review = pd.notna(doc)
    if not per_review.any():
        return {}
    movie_codes, movie_names = pd.factorize(gt["movie"].to_numpy(dtype=object), sort=False)  # each movie's rows are contiguous
    movie_start = np.searchsorted(movie_codes, np.arange(len(movie_names)))
    with_docs = set(np.unique(movie_codes[per_review]).tolist())
    n = len(doc)
    change = np.ones(n, dtype=bool)
    change[1:] = (movie_codes[1:] != movie_codes[:-1]) | (per_review[1:] != per_review[:-1]) | (per_review[1:] & (doc[1:] != doc[:-1]))
    heads = np.flatnonzero(change)
    sizes = np.diff(np.append(heads, n))
    out: dict[str, _GtLists] = {}
    for head, size in zip(heads.tolist(), sizes.tolist()):
        m = int(movie_codes[head])
        if m not in with_docs:
            continue
        lists = out.setdefault(movie_names[m], _GtLists(None, {}))
        span = (head - int(movie_start[m]), size)
        if pd.isna(doc[head]):
            lists.movie_level = span
        else:
            lists.by_review[doc[head]] = span
    return out


def _group_sum(group: np.ndarray, values: np.ndarray | None, n: int) -> np.ndarray:
    return np.bincount(group, weights=values, minlength=n).astype("float64") if len(group) else np.zeros(n)


def _object_array(values) -> np.ndarray:
    """A 1-D object array holding `values` as they are (np.asarray would build a 2-D array from tuples)."""
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out


def _object_column(values) -> pd.Series:
    """A plain object column (no inference to the pyarrow-backed str dtype: cheaper to build and to hash)."""
    return pd.Series(values, dtype=object, copy=False)


def _factorize_runs(values: np.ndarray, use_na_sentinel: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """`pd.factorize(values)`, hashing one value per run of equal neighbours.

    Readers emit keys in long runs (a movie's rows, a review's rows), and
    comparing neighbours (by identity first) is much cheaper than hashing
    every string.
    """
    n = len(values)
    if n < 2:
        return pd.factorize(values, use_na_sentinel=use_na_sentinel)
    change = np.empty(n, dtype=bool)
    change[0] = True
    try:
        np.not_equal(values[1:], values[:-1], out=change[1:])
    except (TypeError, ValueError):  # values that do not compare as scalars
        return pd.factorize(values, use_na_sentinel=use_na_sentinel)
    heads = np.flatnonzero(change)
    if len(heads) > n // 2:
        return pd.factorize(values, use_na_sentinel=use_na_sentinel)
    codes, uniques = pd.factorize(values[heads], use_na_sentinel=use_na_sentinel)
    return np.repeat(codes, np.diff(np.append(heads, n))), uniques


def _positions(values: np.ndarray, pos: dict) -> np.ndarray:
    """For each value, its position in `pos` (value -> index), or -1; hashed once per distinct value."""
    codes, uniques = _factorize_runs(values)
    lookup = np.array([pos.get(u, -1) for u in uniques.tolist()] + [-1], dtype=np.int64)
    return lookup[codes]  # code -1 (NA) picks the trailing -1


@dataclass
class _MovieRows:
    """The cleaned, matched prediction rows of one movie (grouped by review × model, in rank order)."""

    group_review: np.ndarray  # per group: review id
    group_model: np.ndarray  # per group: model position
    grp: np.ndarray  # per kept row: group index within the movie
    keyword: np.ndarray
    norm: np.ndarray
    score: np.ndarray
    position: np.ndarray
    gt_rank: np.ndarray  # the matched GT row's position among the movie's cleaned GT rows, or -1
    group_gt_start: np.ndarray  # per group: where its GT list starts among the movie's GT rows
    group_n_gt: np.ndarray  # per group: |G| of its GT list


class _RowBuffers:
    """Per-row output columns for all movies, allocated once and filled movie by movie."""

    def __init__(self, n: int) -> None:
        self.grp = np.empty(n, dtype=np.int64)
        self.movie = np.empty(n, dtype=object)
        self.review = np.empty(n, dtype=object)
        self.model = np.empty(n, dtype=object)
        self.keyword = np.empty(n, dtype=object)
        self.norm = np.empty(n, dtype=object)
        self.score = np.empty(n, dtype="float64")
        self.position = np.empty(n, dtype=np.int64)
        self.gt_rank = np.empty(n, dtype=np.int64)
        self.gt_keyword = np.empty(n, dtype=object)
        self.filled = 0

    def add(self, part: _MovieRows, movie: str, group_offset: int, model_names: np.ndarray, gt_keywords: np.ndarray) -> None:
        sl = slice(self.filled, self.filled + len(part.grp))
        self.grp[sl] = part.grp + group_offset
        self.movie[sl] = movie
        self.review[sl] = part.group_review[part.grp]
        self.model[sl] = model_names[part.group_model[part.grp]]
        self.keyword[sl] = part.keyword
        self.norm[sl] = part.norm
        self.score[sl] = part.score
        self.position[sl] = part.position
        self.gt_rank[sl] = part.gt_rank
        gt_keyword = np.full(len(part.gt_rank), None, dtype=object)
        hit = part.gt_rank >= 0
        gt_keyword[hit] = gt_keywords[part.gt_rank[hit]]
        self.gt_keyword[sl] = gt_keyword
        self.filled = sl.stop

    def trimmed(self) -> "_RowBuffers":
        for name in ("grp", "movie", "review", "model", "keyword", "norm", "score", "position", "gt_rank", "gt_keyword"):
            setattr(self, name, getattr(self, name)[: self.filled])
        return self


def evaluate(dataset: Dataset, options: EvalOptions | None = None, progress: Progress | None = None) -> Evaluation:
    """Score every review × model of `dataset` (METRICS.md §1–3, and §4–5 when asked).

    Predictions are processed one movie at a time (grouping, cleaning and
    matching only need that movie's rows), so the temporary arrays stay the
    size of one movie; the per-review metrics are then computed once over all
    groups.
    """
    options = options or EvalOptions()
    progress = progress or (lambda stage, fraction: None)
    # with semantic/sentiment, the lexical stages are a small share of the work: the bar follows the work
    share = 0.1 if (options.semantic or options.sentiment) else 1.0
    report = (lambda stage, fraction: progress(stage, share * fraction)) if share < 1 else progress
    problems: list[Problem] = list(dataset.problems)
    movie_order = [m for m in dataset.movies["movie"].tolist()]
    model_order = dataset.models["model"].tolist()

    # --- ground truth -------------------------------------------------------------------------
    report("ground truth", 0.0)
    gt = clean_ground_truth(dataset.ground_truth, options.gt_order)
    gt_sizes = gt.groupby("movie", sort=False).size()
    movies = [m for m in movie_order if gt_sizes.get(m, 0) > 0]
    movie_problems: dict[str, list[Problem]] = {m: [] for m in movie_order}  # reported movie by movie, at the end
    for m in movie_order:
        if m not in gt_sizes.index:
            n_rev = int((dataset.reviews["movie"] == m).sum())
            movie_problems[m].append(Problem(m, f"no ground-truth keywords; its {n_rev} review(s) are skipped", "evaluate"))
    gt_norm_by_movie = {m: frame["norm"].tolist() for m, frame in gt.groupby("movie", sort=False)}
    gt_lists = _gt_lists(gt)  # movies whose reviews have their own GT lists
    ranked_of = ranked_movies(dataset.movies)
    gt_keyword_by_movie = {m: _object_array(frame["keyword"].tolist()) for m, frame in gt.groupby("movie", sort=False)}

    # --- rows of the evaluated movies and models, movie by movie ------------------------------------
    report("cleaning", 0.1)
    pred = dataset.predictions
    movie_pos = {m: i for i, m in enumerate(movies)}
    model_pos = {m: i for i, m in enumerate(model_order)}
    n_models = len(model_order)
    row_movie = _positions(pred["movie"].to_numpy(dtype=object), movie_pos)
    row_model = _positions(pred["model"].to_numpy(dtype=object), model_pos)
    rows = np.flatnonzero((row_movie >= 0) & (row_model >= 0))
    rows = rows[np.argsort(row_movie[rows], kind="stable")]  # movie by movie, the reader's order within
    movie_bounds = np.searchsorted(row_movie[rows], np.arange(len(movies) + 1))
    review_col = pred["review_id"].to_numpy(dtype=object)
    rank_col = pred["rank"].to_numpy()
    keyword_col = pred["keyword"].to_numpy(dtype=object)
    score_col = pred["score"].to_numpy(dtype="float64")
    lower_model = np.array(
        [d == "lower" for d in pd.Series(model_order, dtype=object).map(dict(zip(dataset.models["model"], dataset.models["score_direction"]))).tolist()],
        dtype=bool,
    )

    model_names = _object_array(model_order)
    out = _RowBuffers(len(rows))
    group_reviews: list[np.ndarray] = []
    group_models: list[np.ndarray] = []
    group_gt_starts: list[np.ndarray] = []
    group_n_gts: list[np.ndarray] = []
    n_groups = 0
    dropped: list[tuple[str, int, int]] = []  # per movie: keywords empty after normalization, repeated
    for mi, movie in enumerate(movies):
        lo, hi = movie_bounds[mi], movie_bounds[mi + 1]
        movie_rows = rows[lo:hi]
        lists = gt_lists.get(movie)
        if lists is not None and lists.movie_level is None:  # only reviews with their own GT are scored
            movie_rows, n_without = _rows_with_gt(movie_rows, review_col, lists)
            if n_without:
                movie_problems[movie].append(Problem(movie, f"{n_without} review(s) without their own ground truth are skipped", "evaluate"))
        part, n_invalid, n_dup = _clean_and_match_movie(
            movie_rows, review_col, row_model, rank_col, keyword_col, score_col, n_models,
            gt_norm_by_movie[movie], options.match, lists,
        )
        out.add(part, movie, n_groups, model_names, gt_keyword_by_movie[movie])
        group_reviews.append(part.group_review)
        group_models.append(part.group_model)
        group_gt_starts.append(part.group_gt_start)
        group_n_gts.append(part.group_n_gt)
        n_groups += len(part.group_model)
        dropped.append((movie, n_invalid, n_dup))
        report("matching", 0.1 + 0.7 * (mi + 1) / max(len(movies), 1))
    del rows, row_movie, row_model, review_col, rank_col, keyword_col, score_col

    rows_out = out.trimmed()
    group_movie = np.repeat(np.arange(len(movies), dtype=np.int64), [len(g) for g in group_models])
    group_model = _concat(group_models, np.int64)
    group_review = _concat(group_reviews, object)
    group_gt_start = _concat(group_gt_starts, np.int64)
    n_gt = _concat(group_n_gts, np.int64)
    del group_models, group_reviews, group_gt_starts, group_n_gts
    grp = rows_out.grp
    score_raw = rows_out.score
    position = rows_out.position
    gt_pos = rows_out.gt_rank  # position among the movie's GT rows (for coverage)
    gt_rank = gt_pos if not gt_lists else np.where(gt_pos >= 0, gt_pos - group_gt_start[grp], -1)  # rank in its own list

    with np.errstate(invalid="ignore"):
        bad_score = ~np.isfinite(score_raw) | (score_raw < 0)
    # confidence: the score, 1 / (1 + score) for "lower is better" models, 0 for an invalid score
    confidence = score_raw.copy()
    if lower_model.any() and len(grp):
        lower_rows = np.flatnonzero(lower_model[group_model[grp]])
        with np.errstate(invalid="ignore", divide="ignore"):
            confidence[lower_rows] = 1.0 / (1.0 + score_raw[lower_rows])
    confidence[bad_score] = 0.0
    for movie, n_invalid, n_dup in dropped:
        if n_invalid or n_dup:
            reason = f"{n_invalid} keyword(s) empty after normalization and {n_dup} repeated keyword(s) within a review were dropped"
            movie_problems[movie].append(Problem(movie, reason, "evaluate"))

    # --- per-review metrics ---------------------------------------------------------------------
    report("metrics", 0.8)
    weight = _summable(confidence)
    movie_names = _object_array(movies)
    ranked_movie = np.array([ranked_of.get(m, True) for m in movies], dtype=bool)
    group_ranked = None if ranked_movie.all() else ranked_movie[group_movie]  # None: all ranked (graded gains)
    matched = gt_rank >= 0
    m_grp = grp[matched]
    gains = ranking.apply_gain(metrics.relevance(gt_rank[matched], None if group_ranked is None else group_ranked[m_grp]), options.gain)
    counts = {
        "n_pred": np.bincount(grp, minlength=n_groups).astype("int64"),
        "n_gt": n_gt,
        "n_matched": np.bincount(m_grp, minlength=n_groups).astype("int64"),
        "n_bad_scores": np.bincount(grp[bad_score], minlength=n_groups).astype("int64"),
        "score_sum": _group_sum(grp, weight, n_groups),
        "matched_score": _group_sum(m_grp, weight[matched], n_groups),
        "gain_sum": metrics.gt_gain_total(n_gt, options.gain, group_ranked),
        "matched_gain": _group_sum(m_grp, gains, n_groups),
    }
    columns = {
        "movie": _object_column(movie_names[group_movie]),
        "review_id": _object_column(group_review),
        "model": _object_column(model_names[group_model]),
    }
    columns.update(counts)
    columns.update(metrics.set_metrics(counts["n_pred"], counts["n_gt"], counts["n_matched"]))
    columns.update(
        metrics.weighted_metrics(counts["score_sum"], counts["matched_score"], counts["gain_sum"], counts["matched_gain"])
    )
    columns.update(
        metrics.ranking_metrics(m_grp, position[matched], gt_rank[matched], n_gt, options.k, options.gain, options.discount, group_ranked)
    )
    if options.keyphrase:
        columns.update(metrics.keyphrase_metrics(counts["n_pred"], n_gt, counts["n_matched"], m_grp, position[matched], options.k))
    if options.present:
        n_gt_present, pair_present = _present_gt(
            dataset.reviews, gt_norm_by_movie, movies, group_movie, group_review, group_gt_start, n_gt,
            group_movie[m_grp], group_review[m_grp], gt_pos[matched], options.match,
        )
        columns["n_gt_present"] = n_gt_present
        columns.update(metrics.present_metrics(n_gt_present, n_gt, m_grp, position[matched], pair_present, options.k))
        without_text = n_gt_present < 0  # no text to look in: present/absent undefined
        for name in ("recall_present", f"f1@{options.k}_present", "recall_absent"):
            columns[name] = np.where(without_text, np.nan, columns[name])
    scores = pd.DataFrame(columns, copy=False)  # copy=False: no copy into consolidated blocks

    if bad_score.any():
        bad_groups = grp[bad_score]
        for mi in np.unique(group_movie[bad_groups]).tolist():
            in_movie = bad_groups[group_movie[bad_groups] == mi]
            per_model = pd.Series(model_names[group_model[in_movie]]).value_counts()
            reason = (
                f"{len(in_movie)} score(s) missing, non-numeric, non-finite or negative were counted as 0 ("
                + ", ".join(f"{m}: {c}" for m, c in per_model.items())
                + ")"
            )
            movie_problems[movies[mi]].append(Problem(movies[mi], reason, "evaluate"))
    problems += [p for m in movie_order for p in movie_problems[m]]

    # --- keywords table (the matched pairs) and GT coverage -----------------------------------------
    keywords = pd.DataFrame(
        {
            "movie": _object_column(rows_out.movie),
            "review_id": _object_column(rows_out.review),
            "model": _object_column(rows_out.model),
            "position": position,
            "keyword": _object_column(rows_out.keyword),
            "norm": _object_column(rows_out.norm),
            "score": score_raw,
            "confidence": confidence,
            "gt_rank": gt_rank,
            "gt_keyword": _object_column(rows_out.gt_keyword),
        },
        copy=False,
    )
    del rows_out, out

    coverage = _coverage(group_movie[m_grp], group_model[m_grp], gt_pos[matched], gt_sizes, movies, model_order)
    skipped = _skipped(_reviews_with_gt(dataset.reviews, gt_lists), group_movie, group_review, group_model, movies, model_order)

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
        _add_semantic_and_sentiment(evaluation, dataset, progress)
    progress("done", 1.0)
    return evaluation


def combine_evaluations(parts: Sequence[Evaluation]) -> Evaluation:
    """One evaluation from evaluations of disjoint sets of movies, given in movie order.

    The result is what `evaluate` gives for all those movies at once (the
    CLI evaluates groups of movies in worker processes, kweval.parallel):
    tables are concatenated, a loading problem that several parts report (one
    about a file they share, like the ground truth) is kept once, and loading
    problems come before evaluation problems.  The parts must share their
    options and models (the coverage table has a row per movie × model):
    ValueError otherwise.
    """
    if not parts:
        raise ValueError("no evaluations to combine")
    first = next((p for p in parts if p.models), parts[0])  # a part without models (unreadable files) adds only problems
    if any((p.models and p.models != first.models) or p.options != first.options for p in parts):
        raise ValueError("evaluations with different models or options cannot be combined")

    def concat(table: str) -> pd.DataFrame:
        frames = [getattr(p, table) for p in parts]
        filled = [f for f in frames if len(f)] or frames[:1]  # an empty table could change the columns' dtypes
        return pd.concat(filled, ignore_index=True)

    loading = list(dict.fromkeys(pr for p in parts for pr in p.problems if pr.stage == "load"))
    evaluating = [pr for p in parts for pr in p.problems if pr.stage != "load"]
    return Evaluation(
        scores=concat("scores"),
        keywords=concat("keywords"),
        ground_truth=concat("ground_truth"),
        coverage=concat("coverage"),
        skipped=concat("skipped"),
        options=first.options,
        movies=[m for p in parts for m in p.movies],
        models=list(first.models),
        problems=loading + evaluating,
    )


_SUM_LIMIT_EXPONENT = 1000  # sums of confidences stay below 2**1000 (float64 overflows past 2**1024)


def _summable(confidence: np.ndarray) -> np.ndarray:
    """`confidence` scaled by a power of two so that no sum of its values overflows (itself when none can).

    Scores near 1e308 are finite but their sums are not, which would make
    w_precision NaN.  Scaling every confidence by the same power of two is
    exact and keeps every ratio (w_precision, macro and micro) unchanged; the
    per-review `score_sum` and `matched_score` are then in those units.
    """
    if len(confidence) == 0:
        return confidence
    top = float(confidence.max())
    if top * len(confidence) < 2.0**_SUM_LIMIT_EXPONENT:
        return confidence
    excess = math.frexp(top)[1] + math.frexp(float(len(confidence)))[1] - _SUM_LIMIT_EXPONENT
    return np.ldexp(confidence, -excess)


def _concat(arrays: list[np.ndarray], dtype) -> np.ndarray:
    return np.concatenate(arrays) if arrays else np.zeros(0, dtype=dtype)


def _clean_and_match_movie(
    rows: np.ndarray,
    review_col: np.ndarray,
    row_model: np.ndarray,
    rank_col: np.ndarray,
    keyword_col: np.ndarray,
    score_col: np.ndarray,
    n_models: int,
    gt_norms: list[str],
    match: str,
    lists: _GtLists | None = None,
) -> tuple[_MovieRows, int, int]:
    """Group one movie's rows by review × model, order them, clean them, match them.

    Groups are ordered by the review's first appearance, then model order;
    rows by rank, ties in the reader's order.  `lists`, when given, says which
    slice of `gt_norms` each review is scored against (reviews with their own
    GT); otherwise every review is scored against all of it.  Returns the
    movie's rows and the numbers of keywords dropped as empty and as repeated.
    """
    review_code, review_uniques = _factorize_runs(review_col[rows], use_na_sentinel=False)
    model_of_row = row_model[rows]
    group_key = review_code.astype(np.int64) * n_models + model_of_row
    key_codes, key_uniques = pd.factorize(group_key)
    by_key = np.argsort(key_uniques, kind="stable")
    rank_of_key = np.empty(len(key_uniques), dtype=np.int64)
    rank_of_key[by_key] = np.arange(len(key_uniques), dtype=np.int64)
    local_group = rank_of_key[key_codes]
    sorted_keys = key_uniques[by_key]
    group_review = review_uniques[sorted_keys // n_models] if len(sorted_keys) else np.zeros(0, dtype=object)
    group_model = (sorted_keys % n_models).astype(np.int64)
    n_local = len(sorted_keys)

    order = np.lexsort((rank_col[rows], local_group))
    row_group = local_group[order]
    taken = rows[order]
    raw_kw = keyword_col[taken]
    raw_score = score_col[taken]

    codes, uniques = pd.factorize(raw_kw)
    unique_norms = normalize_many(uniques.tolist())
    norm_codes, norm_values = pd.factorize(_object_array(unique_norms + [""]))
    row_norm = norm_codes[codes]  # code -1 (NA) picks the trailing "" entry
    empty_code = norm_codes[-1]
    valid = row_norm != empty_code
    dup = pd.Series(row_group * (len(norm_values) + 1) + row_norm).duplicated().to_numpy()
    keep = valid & ~dup
    n_invalid = int((~valid & (codes >= 0)).sum())  # keywords (not NA) that normalize to nothing
    n_dup = int((valid & dup).sum())

    grp = row_group[keep]
    norm_id = row_norm[keep]
    starts = np.searchsorted(grp, np.arange(n_local))
    position = np.arange(len(grp)) - starts[grp] if len(grp) else np.zeros(0, dtype=np.int64)

    gt_rank = np.full(len(grp), -1, dtype=np.int64)
    if lists is None:
        group_gt_start = np.zeros(n_local, dtype=np.int64)
        group_n_gt = np.full(n_local, len(gt_norms), dtype=np.int64)
    else:
        group_gt_start, group_n_gt = lists.ranges(group_review)
    if len(grp):
        local_ids, inverse = np.unique(norm_id, return_inverse=True)
        inverse = inverse.astype(np.int64).reshape(-1)
        if lists is None:
            bounds, flat = candidate_table(norm_values[local_ids].tolist(), gt_norms, match)
            gt_rank = assign_matches_table(grp, inverse, bounds, flat)
        else:
            gt_rank = _assign_within_lists(grp, inverse, norm_values[local_ids].tolist(), gt_norms, match, group_gt_start, group_n_gt)
    rows_out = _MovieRows(
        group_review=group_review,
        group_model=group_model,
        grp=grp,
        keyword=raw_kw[keep],
        norm=norm_values[norm_id] if len(norm_id) else np.zeros(0, dtype=object),
        score=raw_score[keep],
        position=position.astype(np.int64),
        gt_rank=gt_rank,
        group_gt_start=group_gt_start,
        group_n_gt=group_n_gt,
    )
    return rows_out, n_invalid, n_dup


def _assign_within_lists(
    grp: np.ndarray,
    pred_id: np.ndarray,
    preds: list[str],
    gt_norms: list[str],
    match: str,
    group_gt_start: np.ndarray,
    group_n_gt: np.ndarray,
) -> np.ndarray:
    """`assign_matches_table` where each group has its own GT list, a slice of `gt_norms` (per-review GT).

    Matching runs once on the movie's distinct keywords × distinct GT strings;
    each distinct (GT list, keyword) pair then keeps the positions of its own
    list holding a matching string, so the one-to-one assignment is the
    movie-level one, list by list.
    """
    gt_codes, gt_uniques = pd.factorize(_object_array(gt_norms))
    n_unique_gt = len(gt_uniques)
    # the distinct (GT list, keyword) pairs of the rows; lists are told apart by their start
    pair_of_row, pair_keys = pd.factorize(group_gt_start[grp] * len(preds) + pred_id)
    n_pairs = len(pair_keys)
    pair_start, pair_pred = np.divmod(pair_keys, len(preds))
    pair_size = np.zeros(n_pairs, dtype=np.int64)
    pair_size[pair_of_row] = group_n_gt[grp]
    # every GT position of each pair's list, kept where its string matches the pair's keyword
    owner = np.repeat(np.arange(n_pairs, dtype=np.int64), pair_size)
    offset = np.arange(len(owner), dtype=np.int64) - np.repeat(np.cumsum(pair_size) - pair_size, pair_size)
    position = np.repeat(pair_start, pair_size) + offset
    wanted = pair_pred[owner] * n_unique_gt + gt_codes[position]  # (keyword, GT string)
    if match in ("approx", "word"):
        # per-review lists are short: test each distinct (keyword, GT string) pair that shares a list
        distinct, inverse = np.unique(wanted, return_inverse=True)
        pred_of, gt_of = np.divmod(distinct, n_unique_gt)
        ok = keywords_match_pairs(_object_array(preds)[pred_of].tolist(), gt_uniques[gt_of].tolist(), match)
        hit = ok[inverse.reshape(-1)]
    else:  # exact, stem: one hashed lookup per distinct string
        bounds, flat = candidate_table(preds, gt_uniques.tolist(), match)
        cand_key = np.repeat(np.arange(len(preds), dtype=np.int64), np.diff(bounds)) * n_unique_gt + flat  # sorted
        at = np.minimum(np.searchsorted(cand_key, wanted), max(len(cand_key) - 1, 0))
        hit = cand_key[at] == wanted if len(cand_key) else np.zeros(len(wanted), dtype=bool)
    owner, position = owner[hit], position[hit]
    pair_bounds = np.searchsorted(owner, np.arange(n_pairs + 1))
    return assign_matches_table(grp, pair_of_row.astype(np.int64), pair_bounds, position)


def _coverage(
    movie_of: np.ndarray, model_of: np.ndarray, gt_rank: np.ndarray, gt_sizes: pd.Series, movies: list[str], models: list[str]
) -> pd.DataFrame:
    """Movie × model: how many of the movie's GT keywords were matched in at least one review.

    `movie_of`, `model_of` (positions in `movies`, `models`) and `gt_rank` describe the matched rows.
    """
    index = pd.MultiIndex.from_product([movies, models], names=["movie", "model"])
    out = pd.DataFrame(index=index).reset_index()
    n_cells = len(movies) * len(models)
    if len(gt_rank):
        width = int(gt_rank.max()) + 1
        distinct = np.unique((movie_of * len(models) + model_of) * width + gt_rank)
        covered = np.bincount(distinct // width, minlength=n_cells).astype(np.int64)
    else:
        covered = np.zeros(n_cells, dtype=np.int64)
    out["n_gt"] = gt_sizes.reindex(out["movie"]).to_numpy(dtype="int64") if len(out) else np.zeros(0, np.int64)
    out["n_covered"] = covered if len(out) else np.zeros(0, np.int64)
    out["gt_coverage"] = metrics.safe_ratio(out["n_covered"].to_numpy(), out["n_gt"].to_numpy())
    return out


def _rows_with_gt(rows: np.ndarray, review_col: np.ndarray, lists: _GtLists) -> tuple[np.ndarray, int]:
    """The rows whose review has its own GT list, and how many reviews had none."""
    codes, uniques = _factorize_runs(review_col[rows])
    has = np.array([u in lists.by_review for u in uniques.tolist()] + [False], dtype=bool)
    keep = has[codes]
    return rows[keep], int((~has[:-1]).sum())


def _reviews_with_gt(reviews: pd.DataFrame, gt_lists: dict[str, _GtLists]) -> pd.DataFrame:
    """The reviews that are scored: all of a movie with a movie-level GT list, else only those with their own."""
    only_own = {m: lists for m, lists in gt_lists.items() if lists.movie_level is None}
    if not only_own:
        return reviews
    keep = [
        m not in only_own or r in only_own[m].by_review
        for m, r in zip(reviews["movie"].tolist(), reviews["review_id"].tolist())
    ]
    return reviews[np.asarray(keep, dtype=bool)]


def _present_gt(
    reviews: pd.DataFrame,
    gt_norm_by_movie: dict[str, list[str]],
    movies: list[str],
    group_movie: np.ndarray,
    group_review: np.ndarray,
    group_gt_start: np.ndarray,
    group_n_gt: np.ndarray,
    pair_movie: np.ndarray,
    pair_review: np.ndarray,
    pair_gt_pos: np.ndarray,
    match: str,
) -> tuple[np.ndarray, np.ndarray]:
    """Per group, how many keywords of its GT list occur in its review's text (-1: no text); per matched pair, whether its GT keyword does.

    `pair_movie` are positions in `movies`, `pair_gt_pos` positions among the
    movie's GT rows.  A list several reviews share (a movie's) is searched
    once in all their texts (kweval.present.occurrences); a review's own list
    is tested keyword by keyword in its one text.  Texts are normalized once
    per review.
    """
    from kweval import present

    # the distinct scored reviews, with their GT list and searchable text
    review_codes, review_uniques = pd.factorize(group_review, use_na_sentinel=False)
    n_rev = max(len(review_uniques), 1)
    review_key = group_movie * n_rev + review_codes
    keys, first, of_group = np.unique(review_key, return_index=True, return_inverse=True)
    u_movie, u_review = group_movie[first], group_review[first]
    u_start, u_size = group_gt_start[first], group_n_gt[first]
    text_of = dict(zip(zip(reviews["movie"].tolist(), reviews["review_id"].tolist()), reviews["text"].tolist()))
    raw = [text_of.get((movies[m], r)) for m, r in zip(u_movie.tolist(), u_review.tolist())]
    has_text = np.fromiter((isinstance(t, str) and t.strip() != "" for t in raw), dtype=bool, count=len(raw))
    texts = present.searchable(raw, match)
    # every GT keyword once, searchable, indexed by movie offset + position
    movie_offset = np.concatenate(([0], np.cumsum([len(gt_norm_by_movie[m]) for m in movies]))).astype(np.int64)
    keywords = present.searchable_keywords([g for m in movies for g in gt_norm_by_movie[m]], match)
    width = int(max(np.diff(movie_offset).max(initial=0), 1)) + 1

    list_codes, _ = pd.factorize(u_movie * width + u_start)
    shared = np.bincount(list_codes)[list_codes] > 1
    found_review: list[np.ndarray] = []
    found_pos: list[np.ndarray] = []
    # lists several reviews share: one scan of their texts joined
    scan = np.flatnonzero(shared & has_text)
    scan = scan[np.argsort(list_codes[scan], kind="stable")]
    for part in np.split(scan, np.flatnonzero(np.diff(list_codes[scan])) + 1) if len(scan) else []:
        m, start, size = int(u_movie[part[0]]), int(u_start[part[0]]), int(u_size[part[0]])
        base = int(movie_offset[m]) + start
        kw_idx, text_idx = present.occurrences(keywords[base : base + size], [texts[i] for i in part.tolist()])
        found_review.append(part[text_idx])
        found_pos.append(start + kw_idx)
    # a review's own list: each keyword tested in its text
    own = np.flatnonzero(~shared & has_text)
    sizes = u_size[own]
    owner = np.repeat(own, sizes)
    pos = np.repeat(u_start[own], sizes) + np.arange(len(owner), dtype=np.int64) - np.repeat(np.cumsum(sizes) - sizes, sizes)
    flat = movie_offset[u_movie[owner]] + pos
    hit = np.fromiter(
        map(operator.contains, [texts[i] for i in owner.tolist()], [keywords[j] for j in flat.tolist()]), dtype=bool, count=len(owner)
    )
    found_review.append(owner[hit])
    found_pos.append(pos[hit])

    found_review_all = np.concatenate(found_review)
    n_present_u = np.where(has_text, np.bincount(found_review_all, minlength=len(keys)), -1)
    found = np.unique(found_review_all * width + np.concatenate(found_pos))
    pair_review_code = _positions(pair_review, {r: i for i, r in enumerate(review_uniques.tolist())})
    pair_u = np.searchsorted(keys, np.asarray(pair_movie, dtype=np.int64) * n_rev + pair_review_code)
    return n_present_u[of_group.reshape(-1)], np.isin(pair_u * width + pair_gt_pos, found)


def _skipped(
    reviews: pd.DataFrame,
    group_movie: np.ndarray,
    group_review: np.ndarray,
    group_model: np.ndarray,
    movies: list[str],
    models: list[str],
) -> pd.DataFrame:
    """Review × model pairs of movies with GT for which the model gave no output.

    Reviews come from the reviews table (its order), then from the predictions;
    each is paired with every model, in model order.
    """
    movie_pos = {m: i for i, m in enumerate(movies)}
    rv_movie = _positions(reviews["movie"].to_numpy(dtype=object), movie_pos)
    rv_review = reviews["review_id"].to_numpy(dtype=object)
    keep = rv_movie >= 0
    pair_movie = np.concatenate([rv_movie[keep], group_movie])
    pair_review = np.concatenate([rv_review[keep], group_review])
    if len(pair_movie) == 0 or not models:
        return pd.DataFrame({"movie": [], "review_id": [], "model": [], "reason": []})
    review_code, _ = pd.factorize(pair_review, use_na_sentinel=False)
    # the (movie, review) pairs in order of first appearance, and which of their review × model outputs exist
    key = pair_movie * (int(review_code.max()) + 1) + review_code
    pair_id, pair_keys = pd.factorize(key)
    first_row = np.empty(len(pair_keys), dtype=np.int64)
    first_row[pair_id[::-1]] = np.arange(len(key) - 1, -1, -1, dtype=np.int64)  # the earliest row of each pair wins
    n_models = len(models)
    present = np.zeros(len(pair_keys) * n_models, dtype=bool)
    n_rv = int(keep.sum())
    present[pair_id[n_rv:] * n_models + group_model] = True
    missing = np.flatnonzero(~present)
    miss_pair, miss_model = np.divmod(missing, n_models)
    return pd.DataFrame(
        {
            "movie": _object_column(_object_array(movies)[pair_movie[first_row[miss_pair]]]),
            "review_id": _object_column(pair_review[first_row[miss_pair]]),
            "model": _object_column(_object_array(models)[miss_model]),
            "reason": "no output from the model",
        }
    )


def _gt_list_keys(gt: pd.DataFrame) -> Callable[[pd.DataFrame], pd.DataFrame]:
    """A function giving a table (movie, review_id, ...) whose `movie` names the GT list its rows are scored against.

    For the movie-keyed semantic and sentiment metrics: a review with its own
    GT list gets the key "movie\x00review_id" (the separator never survives
    normalization); everything else keeps its movie, so movie-level data
    passes through unchanged.  Applied to `gt` itself it keys each list alike.
    """
    own = gt["review_id"].notna().to_numpy()
    if not own.any():
        return lambda frame: frame
    lists = set(zip(gt["movie"][own].tolist(), gt["review_id"][own].tolist()))

    def rekey(frame: pd.DataFrame) -> pd.DataFrame:
        pairs = zip(frame["movie"].tolist(), frame["review_id"].tolist())
        return frame.assign(movie=_object_column([f"{m}\x00{r}" if (m, r) in lists else m for m, r in pairs]).to_numpy())

    return rekey


def _add_semantic_and_sentiment(evaluation: Evaluation, dataset: Dataset, report: Progress) -> None:
    """Add sem_* and sas_* columns (METRICS.md §4–5); imports the heavy parts only when asked."""
    if evaluation.options.semantic:
        _add_semantic(evaluation, report)
    if evaluation.options.sentiment:
        from kweval import sentiment

        report("sentiment", 0.95)
        kw, scores = evaluation.keywords, evaluation.scores
        by_list = _gt_list_keys(evaluation.ground_truth)
        notes: list[str] = []
        sas = sentiment.sas_metrics(by_list(kw[KEY + ["keyword", "norm"]]), by_list(evaluation.ground_truth[["movie", "keyword", "review_id"]])[["movie", "keyword"]],
                                    by_list(dataset.reviews), store=sentiment.vader_store(on_note=notes.append))
        evaluation.problems.extend(Problem("sentiment cache", note, "evaluate") for note in notes)
        sas = sas.set_index(KEY).reindex(pd.MultiIndex.from_frame(by_list(scores[KEY])))
        for col in ("sent_pred", "sas_keywords", "sas_text"):
            scores[col] = sas[col].to_numpy()


def _add_semantic(evaluation: Evaluation, report: Progress) -> None:
    """Embed every distinct keyword (store first), keep the best cosines, then threshold them (`with_threshold`)."""
    from kweval import semantic
    from kweval.cache import EmbeddingStore

    options = evaluation.options
    kw, gt = evaluation.keywords, evaluation.ground_truth
    texts = list(dict.fromkeys(kw["norm"].tolist() + gt["norm"].tolist()))
    backend, precision = semantic.variant(options.embedding_backend)
    notes: list[str] = []
    store = EmbeddingStore(options.embedding_model, backend=backend, precision=precision, on_note=notes.append)
    vectors = semantic.embed_texts(texts, model_id=options.embedding_model, store=store, backend=options.embedding_backend,
                                   progress=semantic.progress_with_estimate(report, "keywords"))
    evaluation.problems.extend(Problem("embedding cache", note, "evaluate") for note in notes)
    report("similarities", 0.97)
    by_list = _gt_list_keys(gt)
    evaluation.similarities = semantic.similarities(
        by_list(kw[KEY + ["norm"]]), by_list(gt[["movie", "rank", "norm", "review_id"]])[["movie", "rank", "norm"]], dict(zip(texts, vectors))
    )
    _set_semantic_columns(evaluation.scores, evaluation.similarities, options.threshold, by_list)


def _set_semantic_columns(scores: pd.DataFrame, sims, threshold: float, by_list: Callable[[pd.DataFrame], pd.DataFrame]) -> None:
    sem = sims.at_threshold(threshold).set_index(KEY).reindex(pd.MultiIndex.from_frame(by_list(scores[KEY])))
    # reviews with an empty prediction list have no row: |P| = 0, nothing matched, |G| still counts
    for col in ("sem_n_pred", "sem_pred_matched", "sem_gt_matched"):
        scores[col] = sem[col].fillna(0).to_numpy(dtype="int64")
    scores["sem_n_gt"] = scores["n_gt"].to_numpy()
    for col in ("sem_precision", "sem_recall", "sem_f1"):
        scores[col] = sem[col].fillna(0.0).to_numpy(dtype="float64")


def with_threshold(evaluation: Evaluation, threshold: float) -> Evaluation:
    """The same semantic evaluation at another τ, from its kept similarities (no embedding, no matching).

    Returns a new Evaluation (the given one is left unchanged) equal to
    ``evaluate(dataset, replace(options, threshold=threshold))``.
    """
    if not evaluation.options.semantic or evaluation.similarities is None:
        raise ValueError("with_threshold needs an evaluation made with semantic=True")
    options = replace(evaluation.options, threshold=threshold)
    scores = evaluation.scores.copy()
    _set_semantic_columns(scores, evaluation.similarities, options.threshold, _gt_list_keys(evaluation.ground_truth))
    return replace(evaluation, scores=scores, options=options, problems=list(evaluation.problems))
