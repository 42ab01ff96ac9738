"""Evaluation: a Dataset and options in, the per-review table (the single source of truth) out.

`evaluate` is a short pipeline of named stages, each a module of this
package and each vectorised over all rows (docs/metrics.md §1–3, §9):

1. `clean`: the GT cleaned (normalize, drop empty and repeated keywords) and split into lists;
2. `match`: each movie's predictions grouped, cleaned by the same rule and matched one-to-one to their GT list;
3. `count`: scores turned into confidences, counts and sums per review × model;
4. `score`: every per-review metric from those counts and the matched pairs (`presence` for present/absent);
5. `tables`: the keywords, coverage and skipped tables;

then the add-ons when asked: `semantic_columns` (§4, any τ from kept
similarities), `sentiment_columns` (§5) and `beyond_columns` (grounding and
diversity, §12).  `combine` joins evaluations of
disjoint movie sets.  The names other modules import from here
(`EvalOptions`, `Evaluation`, `evaluate`, `AGGREGATIONS`, ...) stay
importable from this module.
"""

from __future__ import annotations

from kweval.data.dataset import Dataset, Problem
from kweval.evaluation.beyond_columns import add_beyond_columns
from kweval.evaluation.clean import clean_ground_truth, clean_stage, ranked_movies
from kweval.evaluation.combine import combine_evaluations
from kweval.evaluation.count import count_stage, report_bad_scores, report_dropped, without_row_arrays
from kweval.evaluation.match import match_stage
from kweval.evaluation.missing import fill_missing
from kweval.evaluation.options import AGGREGATIONS, GT_ORDERS, EvalOptions, Evaluation, Progress, no_progress
from kweval.evaluation.score import score_stage
from kweval.evaluation.semantic_columns import (
    add_semantic,
    add_semantic_columns,
    semantic_texts,
    with_semantic,
    with_threshold,
)
from kweval.evaluation.sentiment_columns import (
    SENTIMENT_COLUMNS,
    SENTIMENT_OPTIONS,
    SentimentScores,
    add_sentiment_columns,
    sentiment_scores,
    with_sentiment,
)
from kweval.evaluation.tables import tables_stage
from kweval.text.stemming import save_shared_stems

__all__ = [
    "AGGREGATIONS",
    "GT_ORDERS",
    "SENTIMENT_COLUMNS",
    "SENTIMENT_OPTIONS",
    "EvalOptions",
    "Evaluation",
    "Progress",
    "SentimentScores",
    "add_semantic",
    "clean_ground_truth",
    "combine_evaluations",
    "evaluate",
    "ranked_movies",
    "semantic_texts",
    "sentiment_scores",
    "with_semantic",
    "with_sentiment",
    "with_threshold",
]


def evaluate(
    dataset: Dataset, options: EvalOptions | None = None, progress: Progress | None = None, keywords: bool = True
) -> Evaluation:
    """Score every review × model of `dataset` (docs/metrics.md §1–3 and §9, and §4–5 when asked).

    Predictions are cleaned and matched one movie at a time, so the
    temporary arrays stay the size of one movie; the per-review metrics are
    then computed once over all groups.  `keywords=False` leaves
    `Evaluation.keywords` empty (its columns and dtypes kept): a summary
    needs only the per-review scores, and the per-keyword table, a row per
    predicted keyword, is the largest part of an evaluation; it is built
    anyway when the semantic or sentiment metrics read it.  Every other
    table is the same either way.  `Evaluation.options` holds the match
    mode in force (`EvalOptions.for_data`: "auto" made the data's mode).
    """
    options = (options or EvalOptions()).for_data(dataset.per_document)  # match "auto": the data's mode
    dataset, missing_problems = fill_missing(dataset, options.missing)
    progress = progress or no_progress
    lexical_progress = _lexical_progress(options, progress)
    movie_order = dataset.movies["movie"].tolist()
    movie_problems: dict[str, list[Problem]] = {m: [] for m in movie_order}  # reported movie by movie, at the end
    keep_texts = keywords or options.semantic or options.sentiment or options.grounding

    lexical_progress("ground truth", 0.0)
    gt = clean_stage(dataset, options.gt_order, movie_problems)
    lexical_progress("cleaning", 0.1)
    matches = match_stage(dataset, gt, options.match, movie_problems, lexical_progress, keep_texts)
    counts = count_stage(dataset, gt, matches, options.gain, options.k)
    report_dropped(matches, movie_problems)
    report_bad_scores(gt, matches, counts, dataset.models["model"].tolist(), movie_problems)
    if not keep_texts:  # no per-keyword table: the per-row arrays go before the per-review table, as large, is built
        matches, counts = without_row_arrays(matches, counts)
    lexical_progress("metrics", 0.8)
    scores = score_stage(dataset, gt, matches, counts, options)
    evaluation = tables_stage(dataset, gt, matches, counts, scores, options)
    evaluation.problems = (
        list(dataset.problems) + [p for m in movie_order for p in movie_problems[m]] + missing_problems
    )
    # the stems stem matching or the present rule computed, kept for the next run (nothing new: nothing written)
    evaluation.problems += [Problem("stem cache", note, "evaluate") for note in save_shared_stems()]
    known = add_semantic_columns(evaluation, progress) if options.semantic else None  # the keywords' vectors
    if options.sentiment:
        progress("sentiment", 0.95)
        add_sentiment_columns(evaluation, dataset)
    if options.grounding or options.diversity:
        add_beyond_columns(evaluation, dataset, progress, known)
    if not keywords:
        evaluation.keywords = evaluation.keywords.iloc[:0]  # built only for the semantic or sentiment metrics
    progress("done", 1.0)
    return evaluation


def _lexical_progress(options: EvalOptions, progress: Progress) -> Progress:
    """The progress of the lexical stages: with semantic/sentiment they are a small share of the work (the bar follows
    the work)."""
    if not (options.semantic or options.sentiment or options.grounding or options.diversity):
        return progress
    return lambda stage, fraction: progress(stage, 0.1 * fraction)
