"""What the standalone HTML report shows, computed once, as plain data (`ReportData`).

`report_data` reads an evaluated dataset and gathers, with the engines the
CLI and the dashboard use (no number computed on the side):

- the summary (`kweval.evaluation.aggregate.aggregate`) and its bootstrap CIs
  (`kweval.io.report.summary_intervals`);
- the headline (`kweval.stats.headline`): per key metric the best model, its
  margin over the runner-up, the interval at Holm's level, significance; the
  models that lead elsewhere and a clearly worse one;
- the verdicts of every model against the reference (the best model on the
  first key metric), micro honoured (`kweval.stats.aggregated`), as
  `kweval.stats.verdict.verdict_table` rows;
- three worked examples: the reviews where the best model most gains and
  most loses against the runner-up on the first key metric, and a typical one
  (the median difference), each with its text, both models' keywords and the GT.

`kweval.io.html_report` renders it; the dashboard's "Download report" can call the same two functions.
Both take a `progress(stage, fraction)` callback (`REPORT_STAGES`, in order), which the CLI leaves out and the
dashboard shows while a large report is built (~12 s on the DNLP data).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from kweval.data.dataset import Dataset
from kweval.data.vocabulary import Vocabulary, vocabulary
from kweval.evaluation.aggregate import ALL, aggregate
from kweval.evaluation.options import Evaluation, Progress, no_progress
from kweval.io.report import summary_intervals
from kweval.metrics import registry, undefined
from kweval.stats import verdict as verdicts
from kweval.stats.aggregated import compare_against
from kweval.stats.bootstrap import N_BOOT
from kweval.stats.families import Family, compared_metrics, metric_family
from kweval.stats.headline import headline, key_metrics
from kweval.stats.paired import N_PERM

N_GT_SHOWN = 15  # GT keywords listed under a worked example

# The report's stages, in the order they are built: `report_data` reports the first four, `html_report` the last.
REPORT_STAGES = (
    "summary table and bootstrap intervals",
    "headline",
    "verdicts against the best model",
    "worked examples",
    "charts and HTML",
)


def stage(progress: Progress, name: str) -> None:
    """Tell `progress` that stage `name` (one of REPORT_STAGES) begins: its share of the stages done before it."""
    progress(name, REPORT_STAGES.index(name) / len(REPORT_STAGES))


@dataclass
class Example:
    """One worked example: a review, why it was chosen, both models' keywords and the GT."""

    kind: str  # "Biggest win", "Biggest loss", "Typical" (a review with the median difference)
    movie: str
    movie_title: str
    review_id: str
    text: str | None
    metric: str
    values: dict[str, float]  # model -> the metric on this review
    keywords: dict[str, pd.DataFrame]  # model -> its cleaned keywords (position, keyword, gt_rank, gt_keyword)
    ground_truth: list[tuple[int, str]]  # (rank, keyword) of the review's (or its movie's) GT


@dataclass
class ReportData:
    """Everything the HTML report shows (see the module docstring)."""

    title: str
    words: Vocabulary
    how: str
    models: list[str]
    metrics: list[str]
    summary: pd.DataFrame
    intervals: pd.DataFrame
    headline: pd.DataFrame
    reference: str
    verdicts: pd.DataFrame
    examples: list[Example]
    card: dict
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    family: Family = metric_family  # which metrics Holm corrects together (a preset's: `preset_family`)


def shown_metrics(evaluation: Evaluation, scores: pd.DataFrame) -> list[str]:
    """The per-review metric columns of the evaluation present in `scores` (gt_coverage, movie-level, left out)."""
    return [m for m in evaluation.metric_names if m in scores.columns and m != "gt_coverage"]


def report_data(
    dataset: Dataset,
    evaluation: Evaluation,
    how: str,
    card: dict,
    title: str = "",
    n_boot: int = N_BOOT,
    n_perm: int = N_PERM,
    progress: Progress = no_progress,
) -> ReportData:
    """The report of `evaluation` (of `dataset`, aggregated `how`), with its protocol `card`; `progress` is told
    each of the first four REPORT_STAGES as it begins."""
    scores = evaluation.scores
    models = [m for m in evaluation.models if m in set(scores["model"])]
    metrics = shown_metrics(evaluation, scores)
    words = vocabulary(dataset)
    stage(progress, REPORT_STAGES[0])
    summary = aggregate(evaluation, how)
    intervals = summary_intervals(scores, metrics, how, n_boot=n_boot)
    stage(progress, REPORT_STAGES[1])
    gone = undefined.undefined_everywhere(scores, metrics)  # "—" in the table, said, not compared
    compared = compared_metrics(metrics, scores)  # the families' members, as on every surface
    keys = key_metrics(compared, evaluation.options.k)
    top = headline(scores, keys, how, words, n_boot=n_boot, n_perm=n_perm, compared=compared)
    stage(progress, REPORT_STAGES[2])
    reference = str(top["best"].iloc[0]) if len(top) else (models[0] if models else "")
    comparisons = compare_against(scores, reference, models, compared, how, n_boot=n_boot, n_perm=n_perm)
    units = words.reviews.lower()
    table = verdicts.verdict_table(comparisons, reference, reviews=units) if len(comparisons) else pd.DataFrame()
    stage(progress, REPORT_STAGES[3])
    examples = worked_examples(dataset, evaluation, top) if len(top) else []
    notes = [
        f"{words.count(int(scores[['movie', 'review_id']].drop_duplicates().shape[0]))} evaluated, "
        f"{words.count(int(scores['movie'].nunique()), 'movie')}; aggregation: {how}.",
        *(undefined.everywhere_note(m, words.review.lower()) + "." for m in gone),
    ]
    return ReportData(
        title=title or f"kweval report: {dataset.source or 'data'}",
        words=words,
        how=how,
        models=models,
        metrics=metrics,
        summary=summary,
        intervals=intervals,
        headline=top,
        reference=reference,
        verdicts=table,
        examples=examples,
        card=dict(card),
        problems=[str(p) for p in evaluation.problems],
        notes=notes,
    )


def example_reviews(scores: pd.DataFrame, best: str, runner: str, metric: str) -> list[tuple[str, str, str]]:
    """(kind, movie, review_id) of the biggest win, the biggest loss and a typical review (median difference) of
    `best` against `runner` on `metric` (in its better direction); each review once, ties broken by table order."""
    key = ["movie", "review_id"]
    a = scores[scores["model"] == runner][[*key, metric]]
    b = scores[scores["model"] == best][[*key, metric]]
    both = b.merge(a, on=key, suffixes=("_best", "_runner")).dropna()
    if both.empty:
        return []
    sign = -1.0 if registry.better(metric) == registry.LOWER else 1.0
    diff = sign * (both[f"{metric}_best"] - both[f"{metric}_runner"]).to_numpy()
    order = np.argsort(diff, kind="stable")
    picks = [("Biggest win", int(order[-1])), ("Biggest loss", int(order[0]))]
    picks.append(("Typical", int(order[len(order) // 2])))
    chosen: list[tuple[str, str, str]] = []
    seen: set[int] = set()
    for kind, i in picks:
        if i not in seen:
            seen.add(i)
            chosen.append((kind, str(both["movie"].iloc[i]), str(both["review_id"].iloc[i])))
    return chosen


def _review_gt(evaluation: Evaluation, movie: str, review: str) -> list[tuple[int, str]]:
    """The review's own GT (per-document data) or its movie's, in rank order, at most N_GT_SHOWN."""
    gt = evaluation.ground_truth
    rows = gt[gt["movie"] == movie]
    if "review_id" in rows.columns and rows["review_id"].notna().any():
        rows = rows[rows["review_id"] == review]
    rows = rows.sort_values("rank", kind="stable").head(N_GT_SHOWN)
    return [(int(r), str(k)) for r, k in zip(rows["rank"], rows["keyword"])]


def worked_examples(dataset: Dataset, evaluation: Evaluation, top: pd.DataFrame) -> list[Example]:
    """The three worked examples of the headline's first metric (its best model against its runner-up)."""
    first = top.iloc[0]
    best, runner, metric = str(first["best"]), str(first["runner_up"]), str(first["metric"])
    scores, kw = evaluation.scores, evaluation.keywords
    texts = dataset.reviews.set_index(["movie", "review_id"])["text"]
    titles = dict(zip(dataset.movies["movie"], dataset.movies["title"]))
    out = []
    for kind, movie, review in example_reviews(scores, best, runner, metric):
        here = scores[(scores["movie"] == movie) & (scores["review_id"] == review)]
        mine = kw[(kw["movie"] == movie) & (kw["review_id"] == review)] if len(kw) else kw
        text = texts.get((movie, review))
        out.append(
            Example(
                kind=kind,
                movie=movie,
                movie_title=str(titles.get(movie, movie)),
                review_id=review,
                text=text if isinstance(text, str) else None,
                metric=metric,
                values={m: float(v) for m, v in zip(here["model"], here[metric]) if m in (best, runner)},
                keywords={
                    m: mine[mine["model"] == m].sort_values("position")[
                        ["position", "keyword", "gt_rank", "gt_keyword"]
                    ]
                    for m in (best, runner)
                },
                ground_truth=_review_gt(evaluation, movie, review),
            )
        )
    return out


def _keywords_of(keywords: pd.DataFrame, model: str) -> pd.DataFrame:
    """One model's cleaned keywords of a review, in rank order: position, keyword, gt_rank, gt_keyword."""
    rows = keywords[keywords["model"] == model].sort_values("position", kind="stable")
    return rows[["position", "keyword", "gt_rank", "gt_keyword"]]


def all_rows_first(summary: pd.DataFrame) -> pd.DataFrame:
    """The summary with the ALL rows first (the answer), then each movie's rows; a single movie's rows, equal to
    ALL, are left out."""
    all_rows = summary[summary["movie"] == ALL]
    rest = summary[summary["movie"] != ALL]
    if rest["movie"].nunique() <= 1:
        return all_rows.reset_index(drop=True)
    return pd.concat([all_rows, rest], ignore_index=True)
