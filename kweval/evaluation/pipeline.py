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

from dataclasses import dataclass

from kweval.data.dataset import Dataset, Problem
from kweval.evaluation.beyond_columns import add_beyond_columns
from kweval.evaluation.clean import CleanGroundTruth, clean_ground_truth, clean_stage, ranked_movies
from kweval.evaluation.combine import combine_evaluations
from kweval.evaluation.count import count_stage, report_bad_scores, report_dropped, without_row_arrays
from kweval.evaluation.match import Matches, match_stage
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
    "Matched",
    "Progress",
    "SentimentScores",
    "add_semantic",
    "clean_ground_truth",
    "combine_evaluations",
    "evaluate",
    "match_dataset",
    "matching_key",
    "ranked_movies",
    "semantic_texts",
    "sentiment_scores",
    "with_semantic",
    "with_sentiment",
    "with_threshold",
]


@dataclass(frozen=True)
class Matched:
    """What `evaluate` computes before k, the gain or any add-on matters: the dataset with its missing predictions
    filled, the cleaned GT and the predictions matched to it, and what those stages noted.

    Speed trick "matching shared across k": the dashboard keeps one per data and `matching_key`, so a new k (or
    gain) counts and scores again without cleaning and matching again.  Read only: `evaluate` copies the notes and
    builds every table anew.  Reference: `evaluate` without it (tests/test_shared_matching.py)."""

    key: tuple  # `matching_key`: the options it was made under
    dataset: Dataset  # with the missing predictions filled (EvalOptions.missing)
    gt: CleanGroundTruth
    matches: Matches
    problems: dict[str, tuple[Problem, ...]]  # per movie (in the data's order), what cleaning and matching noted
    missing_problems: tuple[Problem, ...]

    @property
    def keeps_texts(self) -> bool:
        """Whether the matches keep each row's keyword text (the last part of `matching_key`)."""
        return bool(self.key[-1])


def matching_key(dataset: Dataset, options: EvalOptions, keywords: bool = True) -> tuple:
    """The options cleaning and matching read (the match mode in force, the GT order, missing predictions, whether
    the rows' texts are kept): a `Matched` serves every evaluation with the same key."""
    options = options.for_data(dataset.per_document)
    keep_texts = keywords or options.semantic or options.sentiment or options.grounding
    return (options.match, options.gt_order, options.missing, bool(keep_texts))


def match_dataset(
    dataset: Dataset, options: EvalOptions | None = None, progress: Progress | None = None, keywords: bool = True
) -> Matched:
    """The stages of `evaluate` that do not depend on k: missing predictions filled, GT cleaned, predictions matched."""
    options = (options or EvalOptions()).for_data(dataset.per_document)
    key = matching_key(dataset, options, keywords)
    filled, missing_problems = fill_missing(dataset, options.missing)
    lexical_progress = _lexical_progress(options, progress or no_progress)
    movie_problems: dict[str, list[Problem]] = {m: [] for m in filled.movies["movie"].tolist()}
    lexical_progress("ground truth", 0.0)
    gt = clean_stage(filled, options.gt_order, movie_problems)
    lexical_progress("cleaning", 0.1)
    matches = match_stage(filled, gt, options.match, movie_problems, lexical_progress, key[-1])
    problems = {m: tuple(found) for m, found in movie_problems.items()}
    return Matched(key, filled, gt, matches, problems, tuple(missing_problems))


def evaluate(
    dataset: Dataset,
    options: EvalOptions | None = None,
    progress: Progress | None = None,
    keywords: bool = True,
    matched: Matched | None = None,
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
    `matched`: `match_dataset`'s stages of this dataset, done before (used when made under the same `matching_key`).
    """
    options = (options or EvalOptions()).for_data(dataset.per_document)  # match "auto": the data's mode
    progress = progress or no_progress
    if matched is None or matched.key != matching_key(dataset, options, keywords):
        matched = match_dataset(dataset, options, progress, keywords)
    dataset, gt, matches = matched.dataset, matched.gt, matched.matches
    movie_order = dataset.movies["movie"].tolist()
    # reported movie by movie, at the end (a copy: `matched` may serve other evaluations)
    movie_problems = {m: list(found) for m, found in matched.problems.items()}
    counts = count_stage(dataset, gt, matches, options.gain, options.k)
    report_dropped(matches, movie_problems)
    report_bad_scores(gt, matches, counts, dataset.models["model"].tolist(), movie_problems)
    if not matched.keeps_texts:  # no per-keyword table: the per-row arrays go before the per-review table is built
        matches, counts = without_row_arrays(matches, counts)
    _lexical_progress(options, progress)("metrics", 0.8)
    scores = score_stage(dataset, gt, matches, counts, options)
    evaluation = tables_stage(dataset, gt, matches, counts, scores, options)
    evaluation.problems = (
        list(dataset.problems) + [p for m in movie_order for p in movie_problems[m]] + list(matched.missing_problems)
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
