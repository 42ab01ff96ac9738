"""The judged ground truth G' and the judged evaluation (docs/metrics.md §9), by the one evaluation pipeline.

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


def judged_ground_truth(dataset: Dataset, judgments: pd.DataFrame, gt_order: str = "file") -> JudgedGroundTruth:
    """G' of every GT list (docs/metrics.md §9) from checked judgments (`kweval.judgments.table.checked`)."""
    gt = clean_ground_truth(dataset.ground_truth, gt_order)
    ranked = ranked_movies(dataset.movies)
    flat = np.array([ranked.get(m, True) is False for m in gt["movie"]], dtype=bool)
    base = np.where(flat, 1.0, graded_relevance(gt["rank"].to_numpy(dtype=np.int64)))
    gt = gt.assign(review_id=gt["review_id"].astype(object).where(gt["review_id"].notna(), None), relevance=base)
    gt["judged_grade"] = pd.array([pd.NA] * len(gt), dtype="Int64")
    gt["source"] = "reference"  # a GT keyword; "judged": one the readers added
    grades = combined_grades(judgments)
    movie_grades = {m: g for m, g in grades[grades["review_key"] == WHOLE_MOVIE].groupby("movie", sort=False)}
    review_grades = {k: g for k, g in grades[grades["review_key"] != WHOLE_MOVIE].groupby(["movie", "review_key"])}
    lists = {
        (m, WHOLE_MOVIE if r is None else r): part
        for (m, r), part in gt.groupby(["movie", gt["review_id"].fillna(WHOLE_MOVIE)], sort=False)
    }
    touched = {key for key in lists if key[0] in movie_grades} | set(review_grades)
    parts, used = [], {}
    for key in touched:
        movie, review = key
        source = lists.get(key, lists.get((movie, WHOLE_MOVIE)))
        if source is None:  # a review without a list of its own in a movie without one: never scored
            continue
        item_grades = _merged(movie_grades.get(movie), review_grades.get(key) if review != WHOLE_MOVIE else None)
        parts.append(_judged_list(source, item_grades, None if review == WHOLE_MOVIE else review))
        used[key] = 0 if review == WHOLE_MOVIE else len(review_grades[key])
    untouched = [part for key, part in lists.items() if key not in touched]
    table = pd.concat(untouched + parts, ignore_index=True) if untouched or parts else gt.iloc[:0]
    table = table.assign(helpful=-table["rank"].astype("float64"), not_helpful=0.0)
    table = table[GT_COLUMNS + ["helpful", "not_helpful"]]
    per_movie: dict[str, int] = {}
    for (movie, _review), n in used.items():
        per_movie[movie] = per_movie.get(movie, 0) + n
    for movie, part in movie_grades.items():
        if any(key[0] == movie for key in used):
            per_movie[movie] = per_movie.get(movie, 0) + len(part)
    return JudgedGroundTruth(table, sum(per_movie.values()), per_movie)


def _merged(movie_level: pd.DataFrame | None, review_level: pd.DataFrame | None) -> pd.DataFrame:
    """The grades that apply to one list: the whole movie's, a review's own replacing them keyword by keyword."""
    parts = [p for p in (movie_level, review_level) if p is not None]
    merged = pd.concat(parts, ignore_index=True) if len(parts) > 1 else parts[0]
    return merged.drop_duplicates("norm", keep="last").sort_values("order", kind="stable")


def _judged_list(source: pd.DataFrame, grades: pd.DataFrame, review: str | None) -> pd.DataFrame:
    """One GT list judged: graded-0 GT keywords out, new keywords graded g ≥ 1 in at g / 3, ordered by relevance."""
    grade_of = dict(zip(grades["norm"], grades["grade"]))
    kept = source[[grade_of.get(n, 1) != 0 for n in source["norm"]]].copy()
    kept["judged_grade"] = pd.array([grade_of.get(n) for n in kept["norm"]], dtype="Int64")
    in_gt = set(source["norm"])
    new = grades[(grades["grade"] >= 1) & ~grades["norm"].isin(in_gt)]
    added = pd.DataFrame(
        {
            "movie": source["movie"].iloc[0],
            "review_id": [review] * len(new),
            "keyword": new["keyword"].tolist(),
            "norm": new["norm"].tolist(),
            "relevance": (new["grade"].to_numpy(dtype="float64") / 3.0),
            "judged_grade": pd.array(new["grade"].tolist(), dtype="Int64"),
            "source": "judged",
        }
    )
    kept["review_id"] = review
    kept["tie"] = np.arange(len(kept))  # GT keywords first (their rank order), then judgment order
    added["tie"] = len(kept) + np.arange(len(added))
    out = pd.concat([kept.drop(columns="rank"), added], ignore_index=True)
    out = out.sort_values(["relevance", "tie"], ascending=[False, True], kind="stable").reset_index(drop=True)
    out["rank"] = np.arange(len(out))
    return out.drop(columns="tie")


def judged_evaluation(
    dataset: Dataset, judgments: pd.DataFrame, options: EvalOptions | None = None, keywords: bool = False
) -> tuple[Evaluation, JudgedGroundTruth]:
    """The evaluation of `dataset` against G' (the same pipeline, a GT with explicit relevances) and G' itself."""
    options = options or EvalOptions()
    judged = judged_ground_truth(dataset, judgments, options.gt_order)
    evaluation = evaluate(replace(dataset, ground_truth=judged.table), options, keywords=keywords)
    evaluation.problems = []  # the reference evaluation reports the data's problems once
    return evaluation, judged
