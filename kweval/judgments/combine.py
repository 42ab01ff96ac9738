"""The judged ground truth G' and the judged evaluation (docs/metrics.md §11), by the one evaluation pipeline.

Grades combine per item (movie, review or the whole movie, normalized
keyword): each annotator's latest grade, then the median over annotators,
rounded down.  A review's own grade for a keyword wins over the whole
movie's.  Each GT list then becomes G': a GT keyword graded 0 is removed, a
keyword graded g ≥ 1 that is no GT keyword of the list is added with
relevance g / 3 (a GT keyword keeps 1 / log2(j + 2) of its rank j, 1 when the
GT is unranked), and the list is ordered by relevance, highest first (ties:
GT keywords first, then judgment order).  Reviews judged on their own get a
list of their own (their movie's list, judged).  The result is a GT table
with a `relevance` column, which `kweval.evaluation.pipeline.evaluate`
scores like any other (`kweval.evaluation.explicit`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from kweval.data.dataset import Dataset
from kweval.evaluation.clean import clean_ground_truth, ranked_movies
from kweval.evaluation.options import EvalOptions, Evaluation
from kweval.evaluation.pipeline import evaluate
from kweval.metrics.weighted import graded_relevance

WHOLE_MOVIE = "\x00movie"  # the review key of a whole-movie judgment (never a real review id: ids are text)
GT_COLUMNS = ["movie", "review_id", "rank", "keyword", "norm", "relevance", "judged_grade", "source"]


def combined_grades(judgments: pd.DataFrame) -> pd.DataFrame:
    """One grade per item (movie, review_id or None, norm): each annotator's latest, then the median over annotators
    rounded down; `keyword` and `order` are those of the item's first judgment, `n_annotators` how many graded it."""
    if judgments.empty:
        return pd.DataFrame(columns=["movie", "review_key", "norm", "keyword", "grade", "order", "n_annotators"])
    keys = [WHOLE_MOVIE if r is None or pd.isna(r) or r == "" else str(r) for r in judgments["review_id"].tolist()]
    frame = judgments.assign(review_key=keys)
    frame = frame.assign(movie=frame["movie"].astype(str), order=np.arange(len(frame)))
    item = ["movie", "review_key", "norm"]
    latest = frame.drop_duplicates(item + ["annotator"], keep="last")
    grouped = latest.groupby(item, sort=False)
    out = grouped.agg(grade=("grade", lambda g: int(np.floor(np.median(g)))), n_annotators=("annotator", "size"))
    first = frame.drop_duplicates(item, keep="first").set_index(item)[["keyword", "order"]]
    return out.join(first).reset_index().sort_values("order", kind="stable").reset_index(drop=True)


@dataclass
class JudgedGroundTruth:
    """G' as a GT table the pipeline reads, and how many judgments it used (in all and per movie)."""

    table: pd.DataFrame  # GT_COLUMNS, helpful and not_helpful (-rank and 0: the `helpful` GT order keeps G's order)
    n_used: int  # judged items (after combining annotators) that apply to a scored list
    used_per_movie: dict[str, int]


def _reference_rows(dataset: Dataset, gt_order: str) -> pd.DataFrame:
    """The cleaned GT with each row's list key (`review_key`: WHOLE_MOVIE for the movie's list) and relevance."""
    gt = clean_ground_truth(dataset.ground_truth, gt_order)
    ranked = ranked_movies(dataset.movies)
    flat = np.array([ranked.get(m, True) is False for m in gt["movie"]], dtype=bool)
    relevance = np.where(flat, 1.0, graded_relevance(gt["rank"].to_numpy(dtype=np.int64)))
    review_key = [WHOLE_MOVIE if r is None or pd.isna(r) else str(r) for r in gt["review_id"].tolist()]
    return gt.assign(
        movie=gt["movie"].astype(object),
        review_key=pd.Series(review_key, dtype=object, index=gt.index),
        relevance=relevance,
        judged_grade=pd.array([pd.NA] * len(gt), dtype="Int64"),
        source="reference",  # a GT keyword; "judged": one the readers added
        tie=gt["rank"].to_numpy(dtype=np.int64),  # GT keywords keep their order; added ones follow, in judgment order
    )


def _has(frame: pd.DataFrame, keys: pd.DataFrame, on: list[str]) -> np.ndarray:
    """Per row of `frame`: its `on` values are a row of `keys`."""
    index = pd.MultiIndex.from_frame(keys[on].astype(object))
    return pd.MultiIndex.from_frame(frame[on].astype(object)).isin(index)


def judged_ground_truth(dataset: Dataset, judgments: pd.DataFrame, gt_order: str = "file") -> JudgedGroundTruth:
    """G' of every GT list (docs/metrics.md §11) from checked judgments (`kweval.judgments.table.checked`).

    Only the lists judgments reach are rebuilt, all at once (no loop over lists)."""
    gt = _reference_rows(dataset, gt_order)
    key = ["movie", "review_key"]
    grades = combined_grades(judgments).astype({"movie": object, "review_key": object})
    whole = grades["review_key"] == WHOLE_MOVIE
    movie_level, review_level = grades[whole].drop(columns="review_key"), grades[~whole]
    lists = gt[key].drop_duplicates()
    reached = lists[lists["movie"].isin(movie_level["movie"]) | _has(lists, review_level, key)]
    new_keys = review_level[key].drop_duplicates()
    new_keys = new_keys[~_has(new_keys, lists, key)]  # reviews judged on their own without a list of their own
    movie_lists = gt[gt["review_key"] == WHOLE_MOVIE].drop(columns="review_key")
    copies = new_keys.merge(movie_lists, on="movie")  # their movie's list (none: the review is never scored)
    targets = pd.concat([reached, copies[key].drop_duplicates()], ignore_index=True)
    in_target = _has(gt, reached, key)
    base = pd.concat([gt[in_target], copies], ignore_index=True)
    applicable = pd.concat(
        [
            targets.merge(movie_level, on="movie").assign(level=0),
            review_level.merge(targets, on=key).assign(level=1),  # a review's own grade wins over the movie's
        ],
        ignore_index=True,
    )
    applicable = applicable.sort_values("level", kind="stable").drop_duplicates(key + ["norm"], keep="last")
    base = base.merge(applicable[key + ["norm", "grade"]], on=key + ["norm"], how="left")
    base = base[base["grade"].to_numpy() != 0]  # a GT keyword graded 0 leaves the list
    base["judged_grade"] = pd.array(base["grade"].tolist(), dtype="Int64")
    new = applicable[(applicable["grade"] >= 1) & ~_has(applicable, base, key + ["norm"])]
    added = new[key + ["keyword", "norm"]].assign(
        relevance=new["grade"].to_numpy(dtype="float64") / 3.0,
        judged_grade=pd.array(new["grade"].tolist(), dtype="Int64"),
        source="judged",
        tie=(1 << 40) + new["order"].to_numpy(dtype=np.int64),
    )
    judged = pd.concat([base.drop(columns=["grade", "rank"]), added], ignore_index=True)
    judged = judged.sort_values(key + ["relevance", "tie"], ascending=[True, True, False, True], kind="stable")
    judged["rank"] = judged.groupby(key, sort=False).cumcount().to_numpy()
    table = pd.concat([gt[~in_target], judged], ignore_index=True)
    table["review_id"] = table["review_key"].where(table["review_key"] != WHOLE_MOVIE, None)
    table = table.assign(helpful=-table["rank"].astype("float64"), not_helpful=0.0)
    used = pd.concat(
        [review_level.merge(targets, on=key)[["movie"]], movie_level[movie_level["movie"].isin(targets["movie"])]]
    )
    per_movie = {str(m): int(n) for m, n in used["movie"].value_counts(sort=False).items()}
    return JudgedGroundTruth(table[GT_COLUMNS + ["helpful", "not_helpful"]], len(used), per_movie)


def judged_evaluation(
    dataset: Dataset, judgments: pd.DataFrame, options: EvalOptions | None = None, keywords: bool = False
) -> tuple[Evaluation, JudgedGroundTruth]:
    """The evaluation of `dataset` against G' (the same pipeline, a GT with explicit relevances) and G' itself.
    The match mode is `dataset`'s ("auto" resolved on it, not on G', which a judgment for one review makes per
    document), so the judged numbers differ from the reference's only by the judgments."""
    options = (options or EvalOptions()).for_data(dataset.per_document)
    judged = judged_ground_truth(dataset, judgments, options.gt_order)
    evaluation = evaluate(replace(dataset, ground_truth=judged.table), options, keywords=keywords)
    evaluation.problems = []  # the reference evaluation reports the data's problems once
    return evaluation, judged
