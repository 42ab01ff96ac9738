"""The sentiment add-on: sas_keywords and sas_text from VADER values (docs/metrics.md §5).

The sentiment columns read only the cleaned keywords and GT (never k, the
match mode, τ or the semantic metrics: `SENTIMENT_OPTIONS`), so one
`SentimentScores` serves an evaluation under any of those (the dashboard
turns sentiment on this way: `with_sentiment`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import pandas as pd

from kweval.data.dataset import KEY, Dataset, Problem
from kweval.evaluation.clean import gt_list_keys
from kweval.evaluation.options import Evaluation

SENTIMENT_COLUMNS = ("sent_pred", "sas_keywords", "sas_text")

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

    by_list = gt_list_keys(evaluation.ground_truth)
    notes: list[str] = []
    table = sentiment.sas_metrics(
        by_list(evaluation.keywords[KEY + ["keyword", "norm"]]),
        by_list(evaluation.ground_truth[["movie", "keyword", "review_id"]])[["movie", "keyword"]],
        by_list(dataset.reviews),
        store=sentiment.vader_store(on_note=notes.append),
    )
    return SentimentScores(table, tuple(Problem("sentiment cache", note, "evaluate") for note in notes))


def add_sentiment_columns(evaluation: Evaluation, dataset: Dataset) -> None:
    """Score the sentiment columns of `evaluation`'s data and add them to its per-review table (as `evaluate` does)."""
    sas = sentiment_scores(evaluation, dataset)
    evaluation.problems.extend(sas.problems)
    _set_sentiment_columns(evaluation.scores, sas.table, gt_list_keys(evaluation.ground_truth))


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
    _set_sentiment_columns(scores, sas.table, gt_list_keys(evaluation.ground_truth))
    return replace(
        evaluation,
        scores=scores,
        options=replace(evaluation.options, sentiment=True),
        problems=list(evaluation.problems) + list(sas.problems),
    )
