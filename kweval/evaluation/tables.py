"""The tables stage: the Evaluation's tables beside the per-review one (docs/metrics.md §1, §3).

The per-keyword table (every kept prediction and its match, when the rows'
text columns were kept), GT coverage per movie × model (how many of the
movie's GT keywords some review matched) and the skipped review × model
pairs (no output from the model).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from kweval._arrays import object_array, object_column, positions
from kweval.data.dataset import Dataset
from kweval.evaluation.clean import CleanGroundTruth, GtLists
from kweval.evaluation.count import Counts
from kweval.evaluation.match import Matches
from kweval.evaluation.options import EvalOptions, Evaluation
from kweval.metrics.ratios import safe_ratio


def tables_stage(
    dataset: Dataset,
    gt: CleanGroundTruth,
    matches: Matches,
    counts: Counts,
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
    coverage = gt_coverage_table(
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


def gt_coverage_table(
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
    out["gt_coverage"] = safe_ratio(out["n_covered"].to_numpy(), out["n_gt"].to_numpy())
    return out


def _reviews_with_gt(reviews: pd.DataFrame, gt_lists: dict[str, GtLists]) -> pd.DataFrame:
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
