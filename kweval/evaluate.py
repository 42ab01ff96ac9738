"""Evaluation: a Dataset and options in, the per-review table (the single source of truth) out.

Steps, each vectorised over all rows (METRICS.md §1–3):
clean the GT and the predictions (normalize, drop empty and duplicate
keywords, invalid scores count as 0), match each movie's *unique* keywords
once against its GT, assign one-to-one per review, then compute every metric
from the assigned pairs.
"""

from __future__ import annotations

import math
import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, fields

import numpy as np
import pandas as pd

from kweval import metrics, ranking
from kweval.data.dataset import KEY, Dataset, Problem
from kweval.matching import MATCH_MODES, assign_matches_table, candidate_table
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
    norms = normalize_many(keywords)
    frame = frame.assign(norm=norms)
    frame = frame[frame["norm"] != ""]
    frame = frame.drop_duplicates(["movie", "norm"], keep="first")
    frame = frame.assign(rank=frame.groupby("movie", sort=False).cumcount().astype("int64"))
    return frame[["movie", "rank", "keyword", "norm"]].reset_index(drop=True)


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
    gt_rank: np.ndarray


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
    report = progress or (lambda stage, fraction: None)
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
    n_groups = 0
    dropped: list[tuple[str, int, int]] = []  # per movie: keywords empty after normalization, repeated
    for mi, movie in enumerate(movies):
        lo, hi = movie_bounds[mi], movie_bounds[mi + 1]
        part, n_invalid, n_dup = _clean_and_match_movie(
            rows[lo:hi], review_col, row_model, rank_col, keyword_col, score_col, n_models,
            gt_norm_by_movie[movie], options.match,
        )
        out.add(part, movie, n_groups, model_names, gt_keyword_by_movie[movie])
        group_reviews.append(part.group_review)
        group_models.append(part.group_model)
        n_groups += len(part.group_model)
        dropped.append((movie, n_invalid, n_dup))
        report("matching", 0.1 + 0.7 * (mi + 1) / max(len(movies), 1))
    del rows, row_movie, row_model, review_col, rank_col, keyword_col, score_col

    rows_out = out.trimmed()
    group_movie = np.repeat(np.arange(len(movies), dtype=np.int64), [len(g) for g in group_models])
    group_model = _concat(group_models, np.int64)
    group_review = _concat(group_reviews, object)
    del group_models, group_reviews
    grp = rows_out.grp
    score_raw = rows_out.score
    position = rows_out.position
    gt_rank = rows_out.gt_rank

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
    gt_size_of_movie = np.array([int(gt_sizes[m]) for m in movies], dtype=np.int64)
    n_gt = gt_size_of_movie[group_movie] if n_groups else np.zeros(0, np.int64)
    matched = gt_rank >= 0
    m_grp = grp[matched]
    gains = ranking.apply_gain(metrics.graded_relevance(gt_rank[matched]), options.gain)
    counts = {
        "n_pred": np.bincount(grp, minlength=n_groups).astype("int64"),
        "n_gt": n_gt,
        "n_matched": np.bincount(m_grp, minlength=n_groups).astype("int64"),
        "n_bad_scores": np.bincount(grp[bad_score], minlength=n_groups).astype("int64"),
        "score_sum": _group_sum(grp, weight, n_groups),
        "matched_score": _group_sum(m_grp, weight[matched], n_groups),
        "gain_sum": metrics.gt_gain_total(n_gt, options.gain),
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
        metrics.ranking_metrics(m_grp, position[matched], gt_rank[matched], n_gt, options.k, options.gain, options.discount)
    )
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

    coverage = _coverage(group_movie[m_grp], group_model[m_grp], gt_rank[matched], gt_sizes, movies, model_order)
    skipped = _skipped(dataset, group_movie, group_review, group_model, movies, model_order)

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
) -> tuple[_MovieRows, int, int]:
    """Group one movie's rows by review × model, order them, clean them, match them.

    Groups are ordered by the review's first appearance, then model order;
    rows by rank, ties in the reader's order.  Returns the movie's rows and
    the numbers of keywords dropped as empty and as repeated.
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
    if len(grp):
        local_ids, inverse = np.unique(norm_id, return_inverse=True)
        bounds, flat = candidate_table(norm_values[local_ids].tolist(), gt_norms, match)
        gt_rank = assign_matches_table(grp, inverse.astype(np.int64).reshape(-1), bounds, flat)
    rows_out = _MovieRows(
        group_review=group_review,
        group_model=group_model,
        grp=grp,
        keyword=raw_kw[keep],
        norm=norm_values[norm_id] if len(norm_id) else np.zeros(0, dtype=object),
        score=raw_score[keep],
        position=position.astype(np.int64),
        gt_rank=gt_rank,
    )
    return rows_out, n_invalid, n_dup


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


def _skipped(
    dataset: Dataset,
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
    rv_movie = _positions(dataset.reviews["movie"].to_numpy(dtype=object), movie_pos)
    rv_review = dataset.reviews["review_id"].to_numpy(dtype=object)
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
        try:
            store: EmbeddingStore | bool = EmbeddingStore(model_id)
        except (OSError, sqlite3.Error) as exc:  # e.g. a read-only cache folder: slower, not wrong
            evaluation.problems.append(
                Problem("embedding cache", f"not usable ({exc}); embeddings are computed without caching", "evaluate")
            )
            store = False
        vectors = semantic.embed_texts(
            texts,
            model_id=model_id,
            store=store,
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
