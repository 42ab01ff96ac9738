"""Evaluation: a Dataset and options in, the per-review table (the single source of truth) out.

`evaluate` is a pipeline of named stages, each vectorised over all rows
(docs/metrics.md §1–3, §9): `_clean_stage` cleans the GT (normalize, drop
empty and duplicate keywords); `_match_stage` cleans each movie's
predictions and matches its *unique* keywords once against its GT, then
assigns them one-to-one per review; `_count_stage` turns scores into
confidences (invalid scores count as 0) and counts per review × model;
`_score_stage` computes every metric from those counts and the assigned
pairs; `_tables_stage` builds the keywords, coverage and skipped tables.

Why one module (about 1,000 lines): the stages share private row layouts
(`_GtLists`, `_MovieRows`, `_RowBuffers`, `_Matches`, `_Counts`) whose
invariants (row order, one-to-one assignment within a GT list, the score
units `combine_evaluations` relies on) hold only together; split over
modules they would become an internal API with several readers.  The metric
arithmetic itself is in metrics.py, ranking.py and matching.py.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, fields, replace

import numpy as np
import pandas as pd

from kweval._arrays import (
    concat_or_empty,
    factorize_runs,
    group_sum,
    object_array,
    object_column,
    position_in_run,
    positions,
    repeated,
    run_heads,
    sort_key,
    stable_order,
    unique_codes,
)
from kweval.data.dataset import KEY, Dataset, Problem
from kweval.embeddings.semantic import BACKENDS as EMBEDDING_BACKENDS
from kweval.metrics import per_review as metrics
from kweval.metrics import ranking
from kweval.text.matching import MATCH_MODES, assign_matches_table, candidate_table, keywords_match_indexed
from kweval.text.normalize import normalize_many

GT_ORDERS = ("file", "helpful")
AGGREGATIONS = ("macro", "micro")

Progress = Callable[[str, float], None]


@dataclass(frozen=True)
class EvalOptions:
    """Everything that changes a number.  Defaults follow docs/metrics.md."""

    k: int = 5
    match: str = "approx"
    gt_order: str = "file"
    gain: str = "linear"
    discount: str = "log2"
    semantic: bool = False
    threshold: float = 0.75
    embedding_model: str = "all-MiniLM-L6-v2"
    sentiment: bool = False
    embedding_backend: str = "auto"  # onnx on the CPU, torch on a GPU: semantic.resolve_backend
    keyphrase: bool = False  # r@k, f1@k (hard), f1@k_flex, f1@M, f1@O, r_precision
    present: bool = False  # recall_present, f1@k_present, recall_absent (needs review texts)

    def __post_init__(self) -> None:
        if isinstance(self.k, (bool, np.bool_)) or not isinstance(self.k, (int, np.integer)) or self.k < 1:
            raise ValueError(f"k must be a positive integer, got {self.k!r}")
        if isinstance(self.threshold, (bool, np.bool_)) or not isinstance(
            self.threshold, (int, float, np.integer, np.floating)
        ):
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
            raise ValueError(
                f"embedding_backend must be one of {', '.join(EMBEDDING_BACKENDS)}; got {self.embedding_backend!r}"
            )
        if not 0.0 <= float(self.threshold) <= 1.0:
            raise ValueError(f"threshold must be within [0, 1], got {self.threshold!r}")

    def as_dict(self) -> dict:
        return {f.name: getattr(self, f.name) for f in fields(self)}

    def lexical_metrics(self) -> list[str]:
        """Per-review lexical metric columns, in report order."""
        k = self.k
        return ["precision", "recall", "f1", "w_precision", "w_recall", "w_f1", f"ndcg@{k}", f"p@{k}", f"ap@{k}", "rr"]

    def keyphrase_metrics(self) -> list[str]:
        """The keyphrase field's metrics (kweval.metrics.per_review.keyphrase_metrics / present_metrics), when asked."""
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
    similarities: object = (
        None  # kweval.embeddings.semantic.Similarities of a semantic evaluation: any τ re-thresholds them
    )
    score_exponent: int = (
        0  # scores' score_sum and matched_score are in units of 2**score_exponent (huge scores: `_summable`)
    )

    @property
    def metric_names(self) -> list[str]:
        return self.options.metric_names()


def clean_ground_truth(gt: pd.DataFrame, order: str = "file") -> pd.DataFrame:
    """Per GT list: order (file rank, or helpful desc then not_helpful asc), normalize, drop empty and duplicates;
    re-rank 0..n-1.

    A GT list is a movie's (rows without `review_id`) or one review's own
    (rows with it); the result keeps `review_id` (None for a movie's list),
    each movie's lists together, its movie-level list first.  Keys are sorted
    and compared as integer codes (per-document GT has millions of rows).
    """
    return _cleaned_gt_rows(gt, order).table


@dataclass
class _CleanGtRows:
    """clean_ground_truth's table and the per-row arrays it was built from (one Python string per distinct value)."""

    table: pd.DataFrame  # clean_ground_truth's result
    movie: np.ndarray  # per row: its movie's sort code (a movie's rows are contiguous)
    doc: np.ndarray  # per row: its review_id's sort code (equal codes: the same list within a movie)
    per_review: np.ndarray  # per row: belongs to a review's own list (has a review_id)
    review_id: np.ndarray  # per row: review_id, None for the movie's own list
    keyword: np.ndarray  # per row: the keyword as given
    norm: np.ndarray  # per row: the normalized keyword


def _cleaned_gt_rows(gt: pd.DataFrame, order: str) -> _CleanGtRows:
    """clean_ground_truth, with the arrays the evaluation stages split by movie and list."""
    doc, ids = _gt_review_ids(gt)  # code -1: the movie's own list
    id_rank = np.zeros(
        len(ids) + 1, dtype=np.int64
    )  # the movie's own list first (as the empty string), then ids as text
    id_rank[np.argsort(ids, kind="stable")] = np.arange(1, len(ids) + 1)
    movie_code = sort_key(gt["movie"].to_numpy())
    doc_code = id_rank[doc]
    keys = [sort_key(gt["rank"].to_numpy())]  # least significant first, as np.lexsort takes them
    if order == "helpful":
        helpful = pd.to_numeric(gt["helpful"], errors="coerce").fillna(0.0).to_numpy()
        not_helpful = pd.to_numeric(gt["not_helpful"], errors="coerce").fillna(0.0).to_numpy()
        keys = [keys[0], sort_key(not_helpful), sort_key(-helpful)]
    sorted_rows = stable_order(
        None, len(gt), movie_code, doc_code, *keys[::-1]
    )  # ties kept in file order; None: in order already
    rows = np.arange(len(gt)) if sorted_rows is None else sorted_rows
    keyword = gt["keyword"].to_numpy(dtype=object)
    keyword = keyword if sorted_rows is None else keyword[rows]
    keyword_codes, keyword_uniques = pd.factorize(keyword)
    unique_norms = normalize_many(keyword_uniques.tolist()) + [""]  # code -1 (NA) picks the trailing ""
    norm_codes, norm_values = pd.factorize(object_array(unique_norms))
    row_norm = norm_codes[keyword_codes]
    list_id = np.cumsum(run_heads(movie_code[rows], doc_code[rows])) - 1
    keep = ~repeated(list_id * len(norm_values) + row_norm) & (row_norm != int(np.flatnonzero(norm_values == "")[0]))
    rows, row_norm, list_id, keyword = rows[keep], row_norm[keep], list_id[keep], keyword[keep]
    doc = doc[rows]
    table = gt[["movie", "keyword"]].iloc[rows].reset_index(drop=True)
    table.insert(1, "rank", position_in_run(run_heads(list_id)))
    table["norm"] = _text_column(row_norm, norm_values, empty_dtype="float64")  # the dtype of an empty list, as before
    table["review_id"] = _text_column(doc, ids, empty_dtype=object)
    return _CleanGtRows(
        table, movie_code[rows], doc_code[rows], doc >= 0, np.append(ids, None)[doc], keyword, norm_values[row_norm]
    )


def _text_column(codes: np.ndarray, values: np.ndarray, empty_dtype) -> pd.Series:
    """The column `values[codes]` (code -1: None) with the dtype pandas infers for it (pandas 3: its Arrow `str`),
    `empty_dtype` without rows.

    Built from the distinct values: converting millions of rows' strings one by
    one into Arrow costs seconds, taking from the converted distinct values does not.
    """
    if len(codes) == 0:
        return pd.Series([], dtype=empty_dtype)
    values = object_array([None, *values])  # code -1 picks the leading None
    at = codes + 1
    used = np.bincount(at, minlength=len(values)) > 0
    distinct = pd.Series(values[used])  # the rows' distinct values, converted (and their dtype inferred) once
    return pd.Series(distinct.array.take((np.cumsum(used) - 1)[at]), copy=False)


def _gt_review_ids(gt: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """The GT table's `review_id` as (codes, distinct ids as text); code -1: no id (the row belongs to the movie's
    list).

    Text ids (as the readers give them) are hashed once per run of equal
    neighbours; other values become their text.  No id, NA and "" are no id.
    """
    if "review_id" not in gt.columns:
        return np.full(len(gt), -1, dtype=np.int64), np.zeros(0, dtype=object)
    values = gt["review_id"].to_numpy(dtype=object)
    if pd.api.types.infer_dtype(values, skipna=True) not in ("string", "empty"):
        values = object_array(
            [None if v is None or v is pd.NA or (isinstance(v, float) and v != v) else str(v) for v in values.tolist()]
        )
    codes, ids = factorize_runs(values)
    empty = np.flatnonzero(np.asarray(ids, dtype=object) == "")
    if len(empty):  # "" is no id
        codes = np.where(codes == empty[0], -1, codes)
    return codes.astype(np.int64, copy=False), np.asarray(ids, dtype=object)


def ranked_movies(movies: pd.DataFrame) -> dict[str, bool]:
    """Movie -> whether its GT is ranked (the `movies` table's optional `ranked` column; ranked when absent or
    unreadable)."""
    if "ranked" not in movies.columns:
        return {}
    out = {}
    for movie, flag in zip(movies["movie"], movies["ranked"]):
        if isinstance(flag, str):
            flag = {"true": True, "1": True, "yes": True, "false": False, "0": False, "no": False}.get(
                flag.strip().lower()
            )
        if isinstance(flag, (bool, np.bool_)) or (
            isinstance(flag, (int, float, np.integer, np.floating)) and flag in (0, 1)
        ):
            out[movie] = bool(flag)
    return out


@dataclass
class _GtLists:
    """Where one movie's GT lists lie in its cleaned GT rows (movie-level list first, then one per review)."""

    movie_level: tuple[int, int] | None  # (start, size) of the movie's own list, if it has one
    review_ids: pd.Index  # the reviews with their own list (distinct), hashed once for every lookup
    review_start: np.ndarray  # per review in review_ids: where its list starts among the movie's GT rows
    review_size: np.ndarray  # per review in review_ids: its list's size

    def find(self, reviews: np.ndarray) -> np.ndarray:
        """Per review, its position in `review_ids` (-1: no list of its own)."""
        return self.review_ids.get_indexer(reviews) if len(reviews) else np.zeros(0, np.int64)

    def ranges(self, reviews: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(start, size) of the list each review is scored against: its own, else the movie's, else (0, 0)."""
        fallback_start, fallback_size = self.movie_level or (0, 0)
        at = self.find(reviews)
        own = at >= 0
        start = np.where(own, self.review_start[np.where(own, at, 0)] if len(self.review_start) else 0, fallback_start)
        size = np.where(own, self.review_size[np.where(own, at, 0)] if len(self.review_size) else 0, fallback_size)
        return start.astype(np.int64), size.astype(np.int64)


def _gt_lists(
    rows: _CleanGtRows, movie_names: list, movie_start: np.ndarray, movie_end: np.ndarray
) -> dict[str, _GtLists]:
    """Movie -> its GT lists, for the movies with at least one review's own list.

    `movie_names`, `movie_start`, `movie_end`: the movies of `rows` and their
    rows (each movie's rows are contiguous; rows of no movie belong to none).
    """
    per_review = rows.per_review
    if not per_review.any():
        return {}
    n = len(per_review)
    heads = np.flatnonzero(run_heads(rows.movie, rows.doc))
    sizes = np.diff(np.append(heads, n))
    head_movie = np.searchsorted(movie_start, heads, side="right") - 1  # position in movie_names
    in_movie = (
        (head_movie >= 0) & (heads < movie_end[np.maximum(head_movie, 0)])
        if len(movie_end)
        else np.zeros(len(heads), bool)
    )
    heads, sizes, head_movie = heads[in_movie], sizes[in_movie], head_movie[in_movie]
    head_own = per_review[heads]
    out: dict[str, _GtLists] = {}
    for m in np.unique(head_movie[head_own]).tolist():
        of_movie = head_movie == m
        own, shared = of_movie & head_own, of_movie & ~head_own
        offset = int(movie_start[m])
        movie_level = (int(heads[shared][-1]) - offset, int(sizes[shared][-1])) if shared.any() else None
        _, first = np.unique(rows.doc[heads[own]], return_index=True)  # a review's list is one run
        first.sort()
        out[movie_names[m]] = _GtLists(
            movie_level,
            pd.Index(rows.review_id[heads[own]][first], dtype=object),
            (heads[own][first] - offset).astype(np.int64),
            sizes[own][first].astype(np.int64),
        )
    return out


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
    n_invalid: int  # keywords dropped as empty after normalization
    n_dup: int  # keywords dropped as repeated within a review × model
    n_without_gt: int  # reviews skipped for want of their own GT list (movies without a movie-level list)


class _RowBuffers:
    """Per-row output columns for all movies, allocated once and filled movie by movie.

    The metrics read only the numeric columns (grp, score, position,
    gt_rank, list_rank); the text columns (movie, review, model, keyword,
    norm, gt_keyword) exist for the per-keyword table and are allocated only
    when it is asked for (`texts`): at a million reviews they are the larger
    part.  Without them they stay empty.  The integer columns are int32 when
    the row count allows (half the memory; `_MatchedPairs` and the tables
    get int64), and `list_rank` is `gt_rank` itself unless reviews have GT
    lists of their own (`own_lists`).
    """

    TEXT_COLUMNS = ("movie", "review", "model", "keyword", "norm", "gt_keyword")

    def __init__(self, n: int, texts: bool = True, own_lists: bool = False) -> None:
        self.texts = texts
        self.own_lists = own_lists
        index = np.int32 if n < 2**31 else np.int64
        self.grp = np.empty(n, dtype=index)
        self.score = np.empty(n, dtype="float64")
        self.position = np.empty(n, dtype=index)
        self.gt_rank = np.empty(n, dtype=index)
        self.list_rank = np.empty(n, dtype=index) if own_lists else self.gt_rank
        for name in self.TEXT_COLUMNS:
            setattr(self, name, np.empty(n if texts else 0, dtype=object))
        self.filled = 0

    def add(
        self, part: _MovieRows, movie: str, group_offset: int, model_names: np.ndarray, gt_keywords: np.ndarray
    ) -> None:
        sl = slice(self.filled, self.filled + len(part.grp))
        self.grp[sl] = part.grp + group_offset
        self.score[sl] = part.score
        self.position[sl] = part.position
        self.gt_rank[sl] = part.gt_rank
        if self.own_lists:  # the matched GT keyword's rank in the group's own list
            self.list_rank[sl] = np.where(part.gt_rank >= 0, part.gt_rank - part.group_gt_start[part.grp], -1)
        self.filled = sl.stop
        if not self.texts:
            return
        self.movie[sl] = movie
        self.review[sl] = part.group_review[part.grp]
        self.model[sl] = model_names[part.group_model[part.grp]]
        self.keyword[sl] = part.keyword
        self.norm[sl] = part.norm
        gt_keyword = np.full(len(part.gt_rank), None, dtype=object)
        hit = part.gt_rank >= 0
        gt_keyword[hit] = gt_keywords[part.gt_rank[hit]]
        self.gt_keyword[sl] = gt_keyword

    def trimmed(self) -> _RowBuffers:
        for name in ("grp", "score", "position", "gt_rank") + (self.TEXT_COLUMNS if self.texts else ()):
            setattr(self, name, getattr(self, name)[: self.filled])
        self.list_rank = self.list_rank[: self.filled] if self.own_lists else self.gt_rank
        return self


@dataclass
class _CleanGroundTruth:
    """The cleaned GT and what every later stage looks up in it, per evaluated movie."""

    table: pd.DataFrame  # clean_ground_truth's rows
    sizes: pd.Series  # movie -> number of cleaned GT rows
    movies: list[str]  # the evaluated movies (those with GT), in dataset order
    norms: dict[str, list[str]]  # movie -> its GT rows' normalized keywords
    keywords: dict[str, np.ndarray]  # movie -> its GT rows' keywords as given
    lists: dict[str, _GtLists]  # movies whose reviews have their own GT lists
    ranked: dict[str, bool]  # movie -> whether its GT is ranked (absent: ranked)


@dataclass
class _Matches:
    """Every kept prediction row with its one-to-one match, and the review × model groups they belong to."""

    rows: _RowBuffers  # per kept row, grouped by review × model, in rank order
    group_movie: np.ndarray  # per group: position in the evaluated movies
    group_model: np.ndarray  # per group: position in the models
    group_review: np.ndarray  # per group: review id
    group_gt_start: np.ndarray  # per group: where its GT list starts among the movie's GT rows
    n_gt: np.ndarray  # per group: |G|
    gt_pos: np.ndarray  # per row: the matched GT row's position among the movie's GT rows, or -1
    gt_rank: np.ndarray  # per row: the matched GT keyword's rank in the group's own list, or -1
    dropped: list[tuple[str, int, int]]  # per movie: keywords empty after normalization, repeated

    @property
    def n_groups(self) -> int:
        return len(self.group_model)


@dataclass
class _MatchedPairs:
    """The matched rows alone (the pairs M): all that scoring and GT coverage read once the counts are made."""

    grp: np.ndarray  # per pair: its review × model group
    position: np.ndarray  # per pair: the predicted keyword's position in its list (0-based rank after cleaning)
    gt_rank: np.ndarray  # per pair: the GT keyword's rank in the group's own list
    gt_pos: np.ndarray  # per pair: the GT row's position among the movie's GT rows


@dataclass
class _Counts:
    """Per-row confidences, the matched pairs and per-group counts and sums: the inputs of every per-review metric."""

    bad_score: np.ndarray  # per row: the score was missing, non-numeric, non-finite or negative
    confidence: np.ndarray  # per row: s_i
    pairs: _MatchedPairs
    group_ranked: np.ndarray | None  # per group: whether its GT is ranked; None when all are
    counts: dict[
        str, np.ndarray
    ]  # n_pred, n_gt, n_matched, n_bad_scores, score_sum, matched_score, gain_sum, matched_gain
    score_exponent: int  # score_sum and matched_score are in units of 2**score_exponent


def evaluate(
    dataset: Dataset, options: EvalOptions | None = None, progress: Progress | None = None, keywords: bool = True
) -> Evaluation:
    """Score every review × model of `dataset` (docs/metrics.md §1–3 and §9, and §4–5 when asked).

    A pipeline of named stages: clean the GT (§1), clean and match the
    predictions movie by movie (§1–2), count per review × model (§3), score
    (§3, §9), then build the tables.  Predictions are processed one movie at a
    time (grouping, cleaning and matching only need that movie's rows), so the
    temporary arrays stay the size of one movie; the per-review metrics are
    then computed once over all groups.

    `keywords=False` leaves `Evaluation.keywords` empty (its columns and
    dtypes kept): a summary needs only the per-review scores, and the
    per-keyword table is the largest part of an evaluation (a row per
    predicted keyword), so it is not built unless the semantic or sentiment
    metrics read it.  Every other table is the same either way.
    """
    options = options or EvalOptions()
    progress = progress or (lambda stage, fraction: None)
    # with semantic/sentiment, the lexical stages are a small share of the work: the bar follows the work
    share = 0.1 if (options.semantic or options.sentiment) else 1.0
    lexical_progress = (lambda stage, fraction: progress(stage, share * fraction)) if share < 1 else progress
    movie_order = dataset.movies["movie"].tolist()
    movie_problems: dict[str, list[Problem]] = {m: [] for m in movie_order}  # reported movie by movie, at the end

    lexical_progress("ground truth", 0.0)
    gt = _clean_stage(dataset, options, movie_problems)
    lexical_progress("cleaning", 0.1)
    matches = _match_stage(
        dataset, gt, options, movie_problems, lexical_progress, keywords or options.semantic or options.sentiment
    )
    counts = _count_stage(dataset, gt, matches, options, movie_problems)
    _report_bad_scores(gt, matches, counts, dataset.models["model"].tolist(), movie_problems)
    if (
        not matches.rows.texts
    ):  # no per-keyword table: free the per-row arrays before the per-review table, as large, is built
        matches, counts = _without_row_arrays(matches, counts)
    lexical_progress("metrics", 0.8)
    scores = _score_stage(dataset, gt, matches, counts, options)
    evaluation = _tables_stage(dataset, gt, matches, counts, scores, options)
    evaluation.problems = list(dataset.problems) + [p for m in movie_order for p in movie_problems[m]]
    if options.semantic or options.sentiment:
        _add_semantic_and_sentiment(evaluation, dataset, progress)
    if not keywords:
        evaluation.keywords = evaluation.keywords.iloc[:0]  # built only for the semantic or sentiment metrics
    progress("done", 1.0)
    return evaluation


def _clean_stage(dataset: Dataset, options: EvalOptions, movie_problems: dict[str, list[Problem]]) -> _CleanGroundTruth:
    """Clean the GT (docs/metrics.md §1 "Inputs and cleaning") and note the movies without GT, which are skipped."""
    rows = _cleaned_gt_rows(dataset.ground_truth, options.gt_order)
    gt = rows.table
    starts = np.flatnonzero(run_heads(rows.movie))
    ends = np.append(starts[1:], len(rows.movie))
    names = gt["movie"].iloc[starts].to_numpy(dtype=object)
    with_movie = pd.notna(names)  # as groupby: rows without a movie belong to none
    starts, ends, names = starts[with_movie], ends[with_movie], names[with_movie].tolist()
    gt_sizes = pd.Series(ends - starts, index=pd.Index(names, name="movie"), dtype=np.int64)
    movie_order = dataset.movies["movie"].tolist()
    for m in movie_order:
        if m not in gt_sizes.index:
            n_rev = int((dataset.reviews["movie"] == m).sum())
            movie_problems[m].append(
                Problem(m, f"no ground-truth keywords; its {n_rev} review(s) are skipped", "evaluate")
            )
    return _CleanGroundTruth(
        table=gt,
        sizes=gt_sizes,
        movies=[m for m in movie_order if gt_sizes.get(m, 0) > 0],
        norms={m: rows.norm[a:b].tolist() for m, a, b in zip(names, starts.tolist(), ends.tolist())},
        keywords={m: rows.keyword[a:b] for m, a, b in zip(names, starts.tolist(), ends.tolist())},
        lists=_gt_lists(rows, names, starts, ends),
        ranked=ranked_movies(dataset.movies),
    )


def _match_stage(
    dataset: Dataset,
    gt: _CleanGroundTruth,
    options: EvalOptions,
    movie_problems: dict[str, list[Problem]],
    progress: Progress,
    keywords: bool = True,
) -> _Matches:
    """Clean the predictions (docs/metrics.md §1) and assign them one-to-one to the GT (§2 "Matching"), movie by movie.

    Only the evaluated movies and models are kept; a movie whose reviews have
    their own GT lists and no movie-level list scores only those reviews.
    The rows' text columns are kept only for the per-keyword table (`keywords`).
    """
    movies = gt.movies
    pred = dataset.predictions
    model_order = dataset.models["model"].tolist()
    n_models = len(model_order)
    row_movie = positions(pred["movie"].to_numpy(dtype=object), {m: i for i, m in enumerate(movies)})
    row_model = positions(pred["model"].to_numpy(dtype=object), {m: i for i, m in enumerate(model_order)}).astype(
        np.int32
    )
    rows = np.flatnonzero((row_movie >= 0) & (row_model >= 0))
    rows = rows[np.argsort(row_movie[rows], kind="stable")]  # movie by movie, the reader's order within
    movie_bounds = np.searchsorted(row_movie[rows], np.arange(len(movies) + 1))
    del row_movie  # a row per prediction: gone before the movies' working arrays come
    review_col = pred["review_id"].to_numpy(dtype=object)
    rank_col = pred["rank"].to_numpy()
    keyword_col = pred["keyword"].to_numpy(dtype=object)
    score_col = pred["score"].to_numpy(dtype="float64")

    model_names = object_array(model_order)
    out = _RowBuffers(len(rows), texts=keywords, own_lists=bool(gt.lists))
    groups: list[
        tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]
    ] = []  # per movie: review, model, GT start, |G| per group
    n_groups = 0
    dropped: list[tuple[str, int, int]] = []
    for mi, movie in enumerate(movies):
        movie_rows = rows[movie_bounds[mi] : movie_bounds[mi + 1]]
        part = _clean_and_match_movie(
            movie_rows,
            review_col,
            row_model,
            rank_col,
            keyword_col,
            score_col,
            n_models,
            gt.norms[movie],
            options.match,
            gt.lists.get(movie),
        )
        if part.n_without_gt:
            reason = f"{part.n_without_gt} review(s) without their own ground truth are skipped"
            movie_problems[movie].append(Problem(movie, reason, "evaluate"))
        out.add(part, movie, n_groups, model_names, gt.keywords[movie])
        groups.append(
            (part.group_review, part.group_model, part.group_gt_start, part.group_n_gt)
        )  # the rows are in `out`
        n_groups += len(part.group_model)
        dropped.append((movie, part.n_invalid, part.n_dup))
        progress("matching", 0.1 + 0.7 * (mi + 1) / max(len(movies), 1))

    rows_out = out.trimmed()
    return _Matches(
        rows=rows_out,
        group_movie=np.repeat(np.arange(len(movies), dtype=np.int64), [len(g[1]) for g in groups]),
        group_model=concat_or_empty([g[1] for g in groups], np.int64),
        group_review=concat_or_empty([g[0] for g in groups], object),
        group_gt_start=concat_or_empty([g[2] for g in groups], np.int64),
        n_gt=concat_or_empty([g[3] for g in groups], np.int64),
        gt_pos=rows_out.gt_rank,
        gt_rank=rows_out.list_rank,
        dropped=dropped,
    )


def _count_stage(
    dataset: Dataset,
    gt: _CleanGroundTruth,
    matches: _Matches,
    options: EvalOptions,
    movie_problems: dict[str, list[Problem]],
) -> _Counts:
    """Confidences (docs/metrics.md §1: invalid scores count as 0) and the per-group counts and sums of §3.

    The confidence is the score, 1 / (1 + score) for "lower is better"
    models, 0 for an invalid score; keywords dropped while cleaning are reported here.
    """
    rows, group_model, n_groups, n_gt = matches.rows, matches.group_model, matches.n_groups, matches.n_gt
    grp, score_raw = rows.grp, rows.score
    model_order = dataset.models["model"].tolist()
    direction = dict(zip(dataset.models["model"], dataset.models["score_direction"]))
    lower_model = np.array(
        [d == "lower" for d in pd.Series(model_order, dtype=object).map(direction).tolist()], dtype=bool
    )
    with np.errstate(invalid="ignore"):
        bad_score = ~np.isfinite(score_raw) | (score_raw < 0)
    confidence = score_raw.copy()
    if lower_model.any() and len(grp):
        lower_rows = np.flatnonzero(lower_model[group_model[grp]])
        with np.errstate(invalid="ignore", divide="ignore"):
            confidence[lower_rows] = 1.0 / (1.0 + score_raw[lower_rows])
    confidence[bad_score] = 0.0
    for movie, n_invalid, n_dup in matches.dropped:
        if n_invalid or n_dup:
            reason = (
                f"{n_invalid} keyword(s) empty after normalization and {n_dup} repeated keyword(s) within a "
                f"review were dropped"
            )
            movie_problems[movie].append(Problem(movie, reason, "evaluate"))

    weight, score_exponent = _summable(confidence)
    ranked_movie = np.array([gt.ranked.get(m, True) for m in gt.movies], dtype=bool)
    group_ranked = None if ranked_movie.all() else ranked_movie[matches.group_movie]  # None: all ranked (graded gains)
    matched = matches.gt_rank >= 0
    pairs = _MatchedPairs(
        grp=grp[matched].astype(np.int64),
        position=rows.position[matched].astype(np.int64),
        gt_rank=matches.gt_rank[matched].astype(np.int64),
        gt_pos=matches.gt_pos[matched].astype(np.int64),
    )
    m_grp = pairs.grp
    gains = ranking.apply_gain(
        metrics.relevance(pairs.gt_rank, None if group_ranked is None else group_ranked[m_grp]), options.gain
    )
    counts = {
        "n_pred": np.bincount(grp, minlength=n_groups).astype("int64"),
        "n_gt": n_gt,
        "n_matched": np.bincount(m_grp, minlength=n_groups).astype("int64"),
        "n_bad_scores": np.bincount(grp[bad_score], minlength=n_groups).astype("int64"),
        "score_sum": group_sum(grp, weight, n_groups),
        "matched_score": group_sum(m_grp, weight[matched], n_groups),
        "gain_sum": metrics.gt_gain_total(n_gt, options.gain, group_ranked),
        "matched_gain": group_sum(m_grp, gains, n_groups),
    }
    return _Counts(
        bad_score=bad_score,
        confidence=confidence,
        pairs=pairs,
        group_ranked=group_ranked,
        counts=counts,
        score_exponent=score_exponent,
    )


def _without_row_arrays(matches: _Matches, counts: _Counts) -> tuple[_Matches, _Counts]:
    """`matches` and `counts` without their per-row arrays (a row per predicted keyword), which only the per-keyword
    table reads after counting.

    At a million reviews they are about as large as the per-review table;
    dropping them first keeps the two from adding up at the peak.
    """
    empty_int, empty_float = np.zeros(0, np.int64), np.zeros(0, "float64")
    return (
        replace(matches, rows=_RowBuffers(0, texts=False), gt_pos=empty_int, gt_rank=empty_int),
        replace(counts, bad_score=np.zeros(0, bool), confidence=empty_float),
    )


def _score_stage(
    dataset: Dataset, gt: _CleanGroundTruth, matches: _Matches, counts: _Counts, options: EvalOptions
) -> pd.DataFrame:
    """The per-review table: docs/metrics.md §3 "Per-review metrics", and §9 "Keyphrase benchmarks" when asked.

    One row per review × model group; present/absent metrics are NaN for a
    review without text.
    """
    c, pairs, m_grp, n_gt = counts.counts, counts.pairs, counts.pairs.grp, matches.n_gt
    if options.present:  # first: its working memory comes and goes before the columns are built
        n_gt_present, pair_present = _present_gt(
            dataset.reviews,
            gt.norms,
            gt.movies,
            matches.group_movie,
            matches.group_review,
            matches.group_gt_start,
            n_gt,
            m_grp,
            pairs.gt_pos,
            options.match,
        )
    model_names = object_array(dataset.models["model"].tolist())
    columns = {
        "movie": object_column(object_array(gt.movies)[matches.group_movie]),
        "review_id": object_column(matches.group_review),
        "model": object_column(model_names[matches.group_model]),
    }
    columns.update(c)
    columns.update(metrics.set_metrics(c["n_pred"], c["n_gt"], c["n_matched"]))
    columns.update(metrics.weighted_metrics(c["score_sum"], c["matched_score"], c["gain_sum"], c["matched_gain"]))
    columns.update(
        metrics.ranking_metrics(
            m_grp, pairs.position, pairs.gt_rank, n_gt, options.k, options.gain, options.discount, counts.group_ranked
        )
    )
    if options.keyphrase:
        columns.update(metrics.keyphrase_metrics(c["n_pred"], n_gt, c["n_matched"], m_grp, pairs.position, options.k))
    if options.present:
        columns.update(metrics.present_metrics(n_gt_present, n_gt, m_grp, pairs.position, pair_present, options.k))
        without_text = n_gt_present < 0  # no text to look in: present/absent undefined
        for name in ("recall_present", f"f1@{options.k}_present", "recall_absent"):
            columns[name] = np.where(without_text, np.nan, columns[name])
        # the counts of micro recall_present / recall_absent (aggregate.MICRO_RATIOS): 0 where there is no text
        columns["n_gt_present"] = np.where(without_text, 0, n_gt_present)
        columns["n_gt_absent"] = np.where(without_text, 0, n_gt - n_gt_present)
        for name in ("n_matched_present", "n_matched_absent"):
            columns[name] = np.where(without_text, 0.0, columns[name])
    return pd.DataFrame(columns, copy=False)  # copy=False: no copy into consolidated blocks


def _report_bad_scores(
    gt: _CleanGroundTruth,
    matches: _Matches,
    counts: _Counts,
    model_order: list[str],
    movie_problems: dict[str, list[Problem]],
) -> None:
    """Note, per movie and model, the scores counted as 0 (docs/metrics.md §1)."""
    if not counts.bad_score.any():
        return
    model_names = object_array(model_order)
    group_movie, group_model = matches.group_movie, matches.group_model
    bad_groups = matches.rows.grp[counts.bad_score]
    for mi in np.unique(group_movie[bad_groups]).tolist():
        in_movie = bad_groups[group_movie[bad_groups] == mi]
        per_model = pd.Series(model_names[group_model[in_movie]]).value_counts()
        reason = (
            f"{len(in_movie)} score(s) missing, non-numeric, non-finite or negative were counted as 0 ("
            + ", ".join(f"{m}: {c}" for m, c in per_model.items())
            + ")"
        )
        movie_problems[gt.movies[mi]].append(Problem(gt.movies[mi], reason, "evaluate"))


def _tables_stage(
    dataset: Dataset,
    gt: _CleanGroundTruth,
    matches: _Matches,
    counts: _Counts,
    scores: pd.DataFrame,
    options: EvalOptions,
) -> Evaluation:
    """The Evaluation's tables: the keywords (every kept prediction and its match), GT coverage (docs/metrics.md §3) and
    the skipped reviews (§1).

    The keywords table is empty when the rows' text columns were not kept.
    Its `problems` are left empty for the caller to fill.
    """
    rows = matches.rows
    model_order = dataset.models["model"].tolist()
    kept = slice(None) if rows.texts else slice(0)  # without its text columns the per-keyword table is empty
    keywords = pd.DataFrame(
        {
            "movie": object_column(rows.movie),
            "review_id": object_column(rows.review),
            "model": object_column(rows.model),
            "position": rows.position[kept].astype(np.int64),
            "keyword": object_column(rows.keyword),
            "norm": object_column(rows.norm),
            "score": rows.score[kept],
            "confidence": counts.confidence[kept],
            "gt_rank": matches.gt_rank[kept].astype(np.int64),
            "gt_keyword": object_column(rows.gt_keyword),
        },
        copy=False,
    )
    m_grp = counts.pairs.grp
    coverage = _coverage(
        matches.group_movie[m_grp], matches.group_model[m_grp], counts.pairs.gt_pos, gt.sizes, gt.movies, model_order
    )
    skipped = _skipped(
        _reviews_with_gt(dataset.reviews, gt.lists),
        matches.group_movie,
        matches.group_review,
        matches.group_model,
        gt.movies,
        model_order,
    )
    return Evaluation(
        scores=scores,
        keywords=keywords,
        ground_truth=gt.table,
        coverage=coverage,
        skipped=skipped,
        options=options,
        movies=gt.movies,
        models=model_order,
        problems=[],
        score_exponent=counts.score_exponent,
    )


def combine_evaluations(parts: Sequence[Evaluation]) -> Evaluation:
    """One evaluation from evaluations of disjoint sets of movies, given in movie order.

    The result is what `evaluate` gives for all those movies at once (the
    CLI evaluates groups of movies in worker processes, kweval.scale.parallel):
    tables are concatenated, a loading problem that several parts report (one
    about a file they share, like the ground truth) is kept once, and loading
    problems come before evaluation problems.  The parts must share their
    options and models (the coverage table has a row per movie × model):
    ValueError otherwise.
    """
    if not parts:
        raise ValueError("no evaluations to combine")
    first = next(
        (p for p in parts if p.models), parts[0]
    )  # a part without models (unreadable files) adds only problems
    if any((p.models and p.models != first.models) or p.options != first.options for p in parts):
        raise ValueError("evaluations with different models or options cannot be combined")

    def concat(table: str) -> pd.DataFrame:
        frames = [getattr(p, table) for p in parts]
        filled = [f for f in frames if len(f)] or frames[:1]  # an empty table could change the columns' dtypes
        return pd.concat(filled, ignore_index=True)

    loading = list(dict.fromkeys(pr for p in parts for pr in p.problems if pr.stage == "load"))
    evaluating = [pr for p in parts for pr in p.problems if pr.stage != "load"]
    exponent = max(p.score_exponent for p in parts)
    parts = [_in_score_units(p, exponent) for p in parts]
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
        score_exponent=exponent,
    )


def _in_score_units(part: Evaluation, exponent: int) -> Evaluation:
    """`part` with its score sums in units of 2**exponent, so that parts scaled differently (`_summable`) add up
    exactly."""
    if part.score_exponent == exponent or not len(part.scores):
        return part
    scores = part.scores.copy()
    for column in ("score_sum", "matched_score"):
        scores[column] = np.ldexp(scores[column].to_numpy(dtype="float64"), part.score_exponent - exponent)
    return replace(part, scores=scores, score_exponent=exponent)


_SUM_LIMIT_EXPONENT = 1000  # sums of confidences stay below 2**1000 (float64 overflows past 2**1024)


def _summable(confidence: np.ndarray) -> tuple[np.ndarray, int]:
    """`confidence` scaled by 2**-e so that no sum of its values overflows, and e (itself and 0 when none can).

    Scores near 1e308 are finite but their sums are not, which would make
    w_precision NaN.  Scaling every confidence by the same power of two is
    exact and keeps every ratio (w_precision, macro and micro) unchanged; the
    per-review `score_sum` and `matched_score` are then in those units
    (`Evaluation.score_exponent`; `combine_evaluations` brings parts to one unit).
    """
    if len(confidence) == 0:
        return confidence, 0
    top = float(confidence.max())
    if top * len(confidence) < 2.0**_SUM_LIMIT_EXPONENT:
        return confidence, 0
    excess = math.frexp(top)[1] + math.frexp(float(len(confidence)))[1] - _SUM_LIMIT_EXPONENT
    return np.ldexp(confidence, -excess), excess


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
) -> _MovieRows:
    """Group one movie's rows by review × model, order them, clean them, match them.

    Groups are ordered by the review's first appearance, then model order;
    rows by rank, ties in the reader's order.  `lists`, when given, says which
    slice of `gt_norms` each review is scored against (reviews with their own
    GT; without a movie-level list, the other reviews are skipped);
    otherwise every review is scored against all of it.
    """
    review_code, review_uniques = factorize_runs(review_col[rows], use_na_sentinel=False)
    n_without_gt = 0
    if lists is not None and lists.movie_level is None:  # only reviews with their own GT are scored
        rows, review_code, n_without_gt = _rows_with_gt(rows, review_code, review_uniques, lists)
    model_of_row = row_model[rows]
    group_key = review_code.astype(np.int64) * n_models + model_of_row
    sorted_keys, local_group = unique_codes(group_key, len(review_uniques) * n_models)  # groups in key order
    group_review_code = sorted_keys // n_models
    group_review = review_uniques[group_review_code] if len(sorted_keys) else np.zeros(0, dtype=object)
    group_model = (sorted_keys % n_models).astype(np.int64)
    n_local = len(sorted_keys)

    order = stable_order(None, len(rows), local_group, rank_col[rows])
    order = np.arange(len(rows)) if order is None else order  # None: in order already (as readers give them)
    row_group = local_group[order]
    taken = rows[order]
    raw_kw = keyword_col[taken]
    raw_score = score_col[taken]

    codes, uniques = pd.factorize(raw_kw)
    unique_norms = normalize_many(uniques.tolist())
    norm_codes, norm_values = pd.factorize(object_array(unique_norms + [""]))
    row_norm = norm_codes[codes]  # code -1 (NA) picks the trailing "" entry
    empty_code = norm_codes[-1]
    valid = row_norm != empty_code
    dup = repeated(row_group * (len(norm_values) + 1) + row_norm)
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
        review_gt_start, review_n_gt = lists.ranges(review_uniques)  # looked up once per review, not per review × model
        group_gt_start, group_n_gt = review_gt_start[group_review_code], review_n_gt[group_review_code]
    if len(grp):
        local_ids, inverse = unique_codes(norm_id, len(norm_values))
        if lists is None:
            bounds, flat = candidate_table(norm_values[local_ids].tolist(), gt_norms, match)
            gt_rank = assign_matches_table(grp, inverse, bounds, flat)
        else:
            gt_rank = _assign_within_lists(
                grp, inverse, norm_values[local_ids].tolist(), gt_norms, match, group_gt_start, group_n_gt
            )
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
        n_invalid=n_invalid,
        n_dup=n_dup,
        n_without_gt=n_without_gt,
    )
    return rows_out


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

    Each distinct (GT list, keyword) pair of the rows keeps the positions of
    its own list holding a matching string (`keywords_match_indexed` on the
    movie's distinct keywords and GT strings), so the one-to-one assignment is
    the movie-level one, list by list.
    """
    gt_codes, gt_uniques = pd.factorize(object_array(gt_norms))
    # the distinct (GT list, keyword) pairs of the rows; lists are told apart by their start
    pair_of_row, pair_keys = pd.factorize(group_gt_start[grp] * len(preds) + pred_id)
    n_pairs = len(pair_keys)
    pair_start, pair_pred = np.divmod(pair_keys, len(preds))
    pair_size = np.zeros(n_pairs, dtype=np.int64)
    pair_size[pair_of_row] = group_n_gt[grp]
    # every GT position of each pair's list (pair i's are entries pair_end[i] - pair_size[i] .. pair_end[i] - 1),
    # kept where its string matches the pair's keyword
    pair_end = np.cumsum(pair_size)
    position = np.arange(int(pair_end[-1]) if n_pairs else 0, dtype=np.int64) - np.repeat(
        pair_end - pair_size - pair_start, pair_size
    )
    hit = np.flatnonzero(
        keywords_match_indexed(preds, gt_uniques.tolist(), np.repeat(pair_pred, pair_size), gt_codes[position], match)
    )
    owner = np.searchsorted(pair_end, hit, side="right")  # the pair of each hit, in pair order
    pair_bounds = np.concatenate(([0], np.cumsum(np.bincount(owner, minlength=n_pairs))))
    return assign_matches_table(grp, pair_of_row.astype(np.int64), pair_bounds, position[hit])


def _coverage(
    movie_of: np.ndarray,
    model_of: np.ndarray,
    gt_pos: np.ndarray,
    gt_sizes: pd.Series,
    movies: list[str],
    models: list[str],
) -> pd.DataFrame:
    """Movie × model: how many of the movie's GT keywords were matched in at least one review.

    `movie_of`, `model_of` (positions in `movies`, `models`) and `gt_pos` (the
    GT row's position among the movie's) describe the matched rows.  Each
    movie × model cell has a slot per GT row of its movie, marked when
    matched: a pass over the rows, no sort (there is a row per match).
    """
    index = pd.MultiIndex.from_product([movies, models], names=["movie", "model"])
    out = pd.DataFrame(index=index).reset_index()
    n_models = len(models)
    n_gt = gt_sizes.reindex(movies).to_numpy(dtype="int64") if len(movies) else np.zeros(0, np.int64)
    cell_size = np.repeat(n_gt, n_models)  # cell movie * n_models + model, in `out`'s order
    cell_start = np.cumsum(cell_size) - cell_size
    seen = np.zeros(int(cell_size.sum()), dtype=bool)
    seen[cell_start[movie_of * n_models + model_of] + gt_pos] = True
    slot_cell = np.searchsorted(cell_start, np.flatnonzero(seen), side="right") - 1
    out["n_gt"] = cell_size
    out["n_covered"] = np.bincount(slot_cell, minlength=len(cell_size)).astype(np.int64)
    out["gt_coverage"] = metrics.safe_ratio(out["n_covered"].to_numpy(), out["n_gt"].to_numpy())
    return out


def _rows_with_gt(
    rows: np.ndarray, review_code: np.ndarray, review_uniques: np.ndarray, lists: _GtLists
) -> tuple[np.ndarray, np.ndarray, int]:
    """The rows whose review has its own GT list and their review codes (into `review_uniques`),
    and how many reviews (missing ids aside) had none."""
    has = lists.find(review_uniques) >= 0
    keep = has[review_code]
    return rows[keep], review_code[keep], int((~has & pd.notna(review_uniques)).sum())


def _reviews_with_gt(reviews: pd.DataFrame, gt_lists: dict[str, _GtLists]) -> pd.DataFrame:
    """The reviews that are scored: all of a movie with a movie-level GT list, else only those with their own."""
    only_own = {m: lists for m, lists in gt_lists.items() if lists.movie_level is None}
    if not only_own:
        return reviews
    movie = reviews["movie"].to_numpy(dtype=object)
    review = reviews["review_id"].to_numpy(dtype=object)
    keep = np.ones(len(reviews), dtype=bool)
    for m, lists in only_own.items():
        rows = np.flatnonzero(movie == m)
        keep[rows] = lists.find(review[rows]) >= 0
    return reviews[keep]


_PRESENT_CHUNK = 1 << 16  # reviews whose texts are normalized and searched at once: bounds what the stage holds


@dataclass
class _ScoredReviews:
    """The distinct reviews of the groups (numbered by their first group), each with its GT list and text."""

    of_group: np.ndarray  # per group, its review
    movie: np.ndarray  # per review, its movie (position in `movies`)
    gt_start: np.ndarray  # its GT list: positions gt_start .. gt_start + n_gt - 1 among the movie's GT rows
    n_gt: np.ndarray
    text: np.ndarray  # object: the text, None where the reviews table has no row for it
    has_text: np.ndarray  # a text that is not blank: present/absent are defined


def _present_gt(
    reviews: pd.DataFrame,
    gt_norm_by_movie: dict[str, list[str]],
    movies: list[str],
    group_movie: np.ndarray,
    group_review: np.ndarray,
    group_gt_start: np.ndarray,
    group_n_gt: np.ndarray,
    pair_group: np.ndarray,
    pair_gt_pos: np.ndarray,
    match: str,
) -> tuple[np.ndarray, np.ndarray]:
    """Per group, how many keywords of its GT list occur in its review's text (-1: no text); per matched pair, whether
    its GT keyword does.

    `pair_group` are the pairs' groups, `pair_gt_pos` positions among the
    movie's GT rows.  A list several reviews share (a movie's) is searched
    once in all their texts (kweval.text.present.occurrences); a review's own list
    is tested keyword by keyword in its one text (kweval.text.present.contained).
    Texts are normalized once per review, `_PRESENT_CHUNK` reviews at a time,
    so the stage holds no copy of all the texts.
    """
    rv = _scored_reviews(reviews, movies, group_movie, group_review, group_gt_start, group_n_gt)
    # every GT keyword once, indexed by movie offset + position
    gt_offset = np.concatenate(([0], np.cumsum([len(gt_norm_by_movie[m]) for m in movies]))).astype(np.int64)
    gt_norms = np.fromiter(
        itertools.chain.from_iterable(gt_norm_by_movie[m] for m in movies), dtype=object, count=int(gt_offset[-1])
    )
    width = int(max(np.diff(gt_offset).max(initial=0), 1)) + 1
    list_codes, _ = pd.factorize(rv.movie * width + rv.gt_start)
    shared = np.bincount(list_codes)[list_codes] > 1

    n_present = np.where(rv.has_text, 0, -1)
    own_row_present = _own_lists_present(
        rv, np.flatnonzero(~shared & rv.has_text), gt_norms, gt_offset, match, n_present
    )
    scan = np.flatnonzero(shared & rv.has_text)
    found = _shared_lists_present(
        rv, scan[np.argsort(list_codes[scan], kind="stable")], gt_norms, gt_offset, width, match, n_present
    )

    pair_review = rv.of_group[pair_group]
    pair_present = own_row_present[gt_offset[group_movie[pair_group]] + pair_gt_pos]
    in_shared = np.flatnonzero(shared[pair_review])
    if len(in_shared):
        pair_present[in_shared] = np.isin(pair_review[in_shared] * width + pair_gt_pos[in_shared], found)
    return n_present[rv.of_group], pair_present


def _scored_reviews(
    reviews: pd.DataFrame,
    movies: list[str],
    group_movie: np.ndarray,
    group_review: np.ndarray,
    group_gt_start: np.ndarray,
    group_n_gt: np.ndarray,
) -> _ScoredReviews:
    """The distinct (movie, review) of the groups, their GT lists and texts."""
    from kweval.text import present

    review_codes, review_uniques = factorize_runs(group_review, use_na_sentinel=False)
    n_rev = max(len(review_uniques), 1)
    of_group, _ = factorize_runs(group_movie * n_rev + review_codes)
    first = np.flatnonzero(~pd.Series(of_group).duplicated().to_numpy())  # factorize numbers by first appearance
    movie = group_movie[first]
    text = _review_texts(reviews, movies, review_uniques, movie * n_rev + review_codes[first], n_rev)
    return _ScoredReviews(
        of_group, movie, group_gt_start[first], group_n_gt[first], text, present.has_text(text.tolist())
    )


def _review_texts(
    reviews: pd.DataFrame, movies: list[str], review_uniques: np.ndarray, keys: np.ndarray, n_rev: int
) -> np.ndarray:
    """The text of each review `keys` names (movie position * `n_rev` + position in `review_uniques`), None where it has
    no row.

    Looked up by hashing codes (no dict of every review); a review given
    twice takes its last row's text.
    """
    movie_code = positions(reviews["movie"].to_numpy(dtype=object), {m: i for i, m in enumerate(movies)})
    # one factorize of the review ids after the (distinct) review_uniques, which take codes 0 .. n - 1
    # (about twice as fast as Index.get_indexer on strings)
    codes, _ = pd.factorize(
        np.concatenate([review_uniques, reviews["review_id"].to_numpy(dtype=object)]), use_na_sentinel=False
    )
    review_code = codes[len(review_uniques) :]
    review_code[review_code >= len(review_uniques)] = -1
    of_row = pd.Index(keys).get_indexer(
        np.where((movie_code >= 0) & (review_code >= 0), movie_code * n_rev + review_code, -1)
    )
    rows = np.flatnonzero(of_row >= 0)
    rows = rows[~pd.Series(of_row[rows]).duplicated(keep="last").to_numpy()]
    texts = np.full(len(keys), None, dtype=object)
    texts[of_row[rows]] = reviews["text"].to_numpy(dtype=object)[rows]
    return texts


def _own_lists_present(
    rv: _ScoredReviews, own: np.ndarray, gt_norms: np.ndarray, gt_offset: np.ndarray, match: str, n_present: np.ndarray
) -> np.ndarray:
    """Per GT row, whether it occurs in its review's text, for the `own` reviews (each the one user of its list): each
    keyword tested in its text.

    Adds each review's count to `n_present`.
    """
    from kweval.text import present

    row_present = np.zeros(len(gt_norms), dtype=bool)
    for chunk in (own[s : s + _PRESENT_CHUNK] for s in range(0, len(own), _PRESENT_CHUNK)):
        sizes = rv.n_gt[chunk]
        owner = np.repeat(np.arange(len(chunk)), sizes)
        row = np.repeat(
            gt_offset[rv.movie[chunk]] + rv.gt_start[chunk] - (np.cumsum(sizes) - sizes), sizes
        ) + np.arange(len(owner))
        texts = object_array(present.searchable(rv.text[chunk].tolist(), match))
        hit = present.contained(texts[owner], present.searchable_keywords(gt_norms[row].tolist(), match))
        row_present[row[hit]] = True
        n_present[chunk] += np.bincount(owner[hit], minlength=len(chunk))
    return row_present


def _shared_lists_present(
    rv: _ScoredReviews,
    scan: np.ndarray,
    gt_norms: np.ndarray,
    gt_offset: np.ndarray,
    width: int,
    match: str,
    n_present: np.ndarray,
) -> np.ndarray:
    """review * `width` + position of each GT keyword found in the `scan` reviews' texts, whose lists others share
    (given list by list).

    Each list is searched once in the texts of all its reviews joined; adds each review's count to `n_present`.
    """
    from kweval.text import present

    found: list[np.ndarray] = []
    list_start = rv.movie[scan] * width + rv.gt_start[scan]
    for part in np.split(scan, np.flatnonzero(np.diff(list_start)) + 1) if len(scan) else []:
        m, start, size = int(rv.movie[part[0]]), int(rv.gt_start[part[0]]), int(rv.n_gt[part[0]])
        keywords = present.searchable_keywords(
            gt_norms[gt_offset[m] + start : gt_offset[m] + start + size].tolist(), match
        )
        kw_idx, text_idx = present.occurrences(keywords, present.searchable(rv.text[part].tolist(), match))
        n_present[part] += np.bincount(text_idx, minlength=len(part))
        found.append(part[text_idx] * width + start + kw_idx)
    return concat_or_empty(found, np.int64)


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
    rv_movie = positions(reviews["movie"].to_numpy(dtype=object), movie_pos)
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
            "movie": object_column(object_array(movies)[pair_movie[first_row[miss_pair]]]),
            "review_id": object_column(pair_review[first_row[miss_pair]]),
            "model": object_column(object_array(models)[miss_model]),
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
        return frame.assign(movie=object_column([f"{m}\x00{r}" if (m, r) in lists else m for m, r in pairs]).to_numpy())

    return rekey


SENTIMENT_COLUMNS = ("sent_pred", "sas_keywords", "sas_text")


def _add_semantic_and_sentiment(evaluation: Evaluation, dataset: Dataset, progress: Progress) -> None:
    """Add sem_* and sas_* columns (docs/metrics.md §4–5); imports the heavy parts only when asked."""
    if evaluation.options.semantic:
        _add_semantic(evaluation, progress)
    if evaluation.options.sentiment:
        progress("sentiment", 0.95)
        sas = sentiment_scores(evaluation, dataset)
        evaluation.problems.extend(sas.problems)
        _set_sentiment_columns(evaluation.scores, sas.table, _gt_list_keys(evaluation.ground_truth))


def semantic_texts(evaluation: Evaluation) -> list[str]:
    """The distinct normalized keywords (predicted, then GT) that the semantic metrics embed."""
    return list(dict.fromkeys(evaluation.keywords["norm"].tolist() + evaluation.ground_truth["norm"].tolist()))


def add_semantic(evaluation: Evaluation, progress: Progress | None = None) -> Evaluation:
    """`evaluation` (made with semantic=False) with the semantic columns added as `evaluate` adds them, its options
    marked semantic; for lexical parts evaluated apart and combined (kweval.scale.distributed), the keywords then
    embedded."""
    evaluation.options = replace(evaluation.options, semantic=True)
    _add_semantic(evaluation, progress or (lambda stage, fraction: None))
    scores = evaluation.scores
    added_after = [
        c for c in SENTIMENT_COLUMNS if c in scores
    ]  # evaluate adds the sentiment columns after the semantic ones
    evaluation.scores = scores[[c for c in scores.columns if c not in added_after] + added_after]
    return evaluation


def _add_semantic(evaluation: Evaluation, progress: Progress) -> None:
    """Embed every distinct keyword (store first), keep the best cosines, then threshold them (`with_threshold`)."""
    from kweval.embeddings import semantic
    from kweval.embeddings.store import EmbeddingStore

    options = evaluation.options
    kw, gt = evaluation.keywords, evaluation.ground_truth
    texts = semantic_texts(evaluation)
    backend, precision = semantic.variant(options.embedding_backend)
    notes: list[str] = []
    store = EmbeddingStore(options.embedding_model, backend=backend, precision=precision, on_note=notes.append)
    vectors = semantic.embed_texts(
        texts,
        model_id=options.embedding_model,
        store=store,
        backend=options.embedding_backend,
        progress=semantic.progress_with_estimate(progress, "keywords"),
    )
    evaluation.problems.extend(Problem("embedding cache", note, "evaluate") for note in notes)
    progress("similarities", 0.97)
    by_list = _gt_list_keys(gt)
    evaluation.similarities = semantic.similarities(
        by_list(kw[KEY + ["norm"]]),
        by_list(gt[["movie", "rank", "norm", "review_id"]])[["movie", "rank", "norm"]],
        dict(zip(texts, vectors)),
    )
    _set_semantic_columns(evaluation.scores, evaluation.similarities, options.threshold, by_list)


def _set_semantic_columns(
    scores: pd.DataFrame, sims, threshold: float, by_list: Callable[[pd.DataFrame], pd.DataFrame]
) -> None:
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


# Options the sentiment columns depend on (besides the data): they read only the cleaned keywords and GT,
# never k, the match mode, τ or the semantic metrics, so one `SentimentScores` serves all of those.
SENTIMENT_OPTIONS = ("gt_order",)


@dataclass(frozen=True)
class SentimentScores:
    """Per review × model ``sent_pred``, ``sas_keywords``, ``sas_text`` (docs/metrics.md §5), and what the VADER store
    noted."""

    table: pd.DataFrame
    problems: tuple[Problem, ...] = ()


def sentiment_scores(evaluation: Evaluation, dataset: Dataset) -> SentimentScores:
    """The sentiment columns of `evaluation`'s data, scored once for any k, match mode or τ (`SENTIMENT_OPTIONS`).

    VADER values come from the persistent store (`kweval.evaluation.sentiment.vader_store`) where known.
    """
    from kweval.evaluation import sentiment

    by_list = _gt_list_keys(evaluation.ground_truth)
    notes: list[str] = []
    table = sentiment.sas_metrics(
        by_list(evaluation.keywords[KEY + ["keyword", "norm"]]),
        by_list(evaluation.ground_truth[["movie", "keyword", "review_id"]])[["movie", "keyword"]],
        by_list(dataset.reviews),
        store=sentiment.vader_store(on_note=notes.append),
    )
    return SentimentScores(table, tuple(Problem("sentiment cache", note, "evaluate") for note in notes))


def _set_sentiment_columns(
    scores: pd.DataFrame, sas: pd.DataFrame, by_list: Callable[[pd.DataFrame], pd.DataFrame]
) -> None:
    by_key = sas.set_index(KEY).reindex(pd.MultiIndex.from_frame(by_list(scores[KEY])))
    for col in SENTIMENT_COLUMNS:
        scores[col] = by_key[col].to_numpy()


def with_sentiment(evaluation: Evaluation, sas: SentimentScores) -> Evaluation:
    """`evaluation` with the sentiment columns added from `sas` (no lexical work; the given evaluation is left
    unchanged).

    Equal to ``evaluate(dataset, replace(options, sentiment=True))`` when `sas` was scored from the
    same data under the same `SENTIMENT_OPTIONS` (the dashboard turns sentiment on this way).
    """
    if evaluation.options.sentiment:
        raise ValueError("with_sentiment needs an evaluation made without sentiment")
    scores = evaluation.scores.copy()
    _set_sentiment_columns(scores, sas.table, _gt_list_keys(evaluation.ground_truth))
    return replace(
        evaluation,
        scores=scores,
        options=replace(evaluation.options, sentiment=True),
        problems=list(evaluation.problems) + list(sas.problems),
    )
