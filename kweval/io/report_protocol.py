"""The HTML report's data under a keyphrase preset (`kweval report --protocol pke|kpeval|meng`).

The numbers are the preset's own, as `kweval evaluate --protocol` prints
them: `kweval.keyphrase.protocols.score_documents` per document, then
`summarize` (the table's values; KPEval's F1 is the F1 of mean P and R).
Intervals, the headline and the verdicts resample and compare the
per-document values (their means; under KPEval's F1 of mean P and R the
F1's interval resamples that statistic, and the headline's F1 is the mean
per-document F1, labelled so), which the page says.  The dashboard's
Summary under a preset uses the same `protocol_headline` and
`protocol_intervals`.  The worked
examples mark each prediction that the preset counts as a match (each
scored on its own under the preset's rules).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from kweval.data.vocabulary import DOCUMENT_WORDS
from kweval.evaluation.aggregate import ALL
from kweval.evaluation.options import Progress, no_progress
from kweval.io.card import with_other_presets
from kweval.io.report_data import REPORT_STAGES, Example, ReportData, example_reviews, stage
from kweval.keyphrase.protocols import CUTOFFS, PROTOCOLS, prepare_document, score_documents, summarize
from kweval.lattice.lines import gap_lines, preset_summaries
from kweval.stats import verdict as verdicts
from kweval.stats.aggregated import compare_against
from kweval.stats.bootstrap import CONFIDENCE, N_BOOT, SEED, bootstrap_summary_ci, resampled_sums
from kweval.stats.families import preset_family
from kweval.stats.headline import headline
from kweval.stats.paired import N_PERM
from kweval.stats.story import headline_sentence, plain_sentence


def protocol_metrics(k: int, cutoffs: Sequence[int | str]) -> list[str]:
    """The preset's columns the report shows: P, R and F1 at each cut-off (the --k one first)."""
    order = list(dict.fromkeys([k, *cutoffs]))
    return [f"{m}@{c}" for c in order for m in ("p", "r", "f1")]


def _matches(preset: str, gold: Sequence[str], phrases: Sequence[str], text: str | None) -> pd.DataFrame:
    """A document's predictions (rank order) with gt_rank 0 where the preset counts the phrase as a match, else -1."""
    protocol = PROTOCOLS[preset]
    hits = [bool(prepare_document(protocol, gold, [p], text).matched[:1] == [True]) for p in phrases]
    return pd.DataFrame(
        {"position": range(len(phrases)), "keyword": list(phrases), "gt_rank": [0 if h else -1 for h in hits]}
    ).assign(gt_keyword="")


def protocol_scores(
    documents, predictions: Mapping[str, Mapping[str, Sequence[str]]], preset: str, metrics: Sequence[str], cutoffs
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(per-document scores: movie, review_id, model and `metrics`; the summary rows, ALL per model, with the preset's
    own aggregation, the numbers `kweval evaluate --protocol` prints)."""
    protocol = PROTOCOLS[preset]
    frames, rows = [], []
    for model, lists in predictions.items():
        per_doc = score_documents(protocol, documents.gold, lists, documents.texts, list(cutoffs))
        summary = summarize(protocol, per_doc)
        frames.append(pd.DataFrame({c: per_doc[c] for c in metrics}).assign(review_id=per_doc["doc"], model=model))
        rows.append({"movie": ALL, "model": model, "n_reviews": len(per_doc["doc"])} | {m: summary[m] for m in metrics})
    return pd.concat(frames, ignore_index=True).assign(movie=documents.name), pd.DataFrame(rows)


def f1_of_means(preset: str) -> bool:
    """Whether the preset's macro F1 is the F1 of mean P and R (KPEval's), not a mean of per-document F1s."""
    return PROTOCOLS[preset].macro == "f1_of_means"


def headline_metrics(k: int, columns: Sequence[str]) -> list[str]:
    """The preset's metrics a headline leads with, among `columns`: F1@k and F1@M."""
    return [m for m in (f"f1@{k}", "f1@M") if m in columns]


def compared_metrics(k: int, columns: Sequence[str], cutoffs: Sequence[int | str] = CUTOFFS) -> list[str]:
    """The preset's columns every view compares (the Summary's headline, Compare, the report): P, R and F1 at `k`
    and the presets' cut-offs, among `columns` (`kweval.stats.families.preset_family`: one family)."""
    return [m for m in protocol_metrics(k, cutoffs) if m in columns]


def protocol_comparisons(
    scores: pd.DataFrame,
    reference: str,
    others: Sequence[str],
    metrics: Sequence[str],
    n_boot: int = N_BOOT,
    n_perm: int = N_PERM,
) -> pd.DataFrame:
    """Each of `others` against `reference` on the preset's per-document `metrics` (means), Holm within the preset's
    families (`compare_against`, a ``model`` column naming B): the one comparison of models under a preset (Compare,
    the report's verdicts, `kweval compare --protocol`)."""
    return compare_against(
        scores, reference, others, metrics, "macro", family=preset_family, n_boot=n_boot, n_perm=n_perm
    )


def protocol_headline(
    scores: pd.DataFrame, preset: str, k: int, words=DOCUMENT_WORDS, n_boot: int = N_BOOT, n_perm: int = N_PERM
) -> pd.DataFrame:
    """`kweval.stats.headline` of the preset's per-document `scores` (movie, review_id, model, metrics): the best model
    per key metric, its margin over the runner-up on their shared documents, the interval at Holm's level, the Holm
    p, other leaders and a clearly worse model among `compared_metrics`.  Under a preset whose F1 is the F1 of mean
    P and R (kpeval) a paired test resamples documents, so the headline's F1 is the mean per-document F1: its label
    and sentences say so."""
    columns = list(scores.columns)
    top = headline(
        scores,
        headline_metrics(k, columns),
        "macro",
        words,
        n_boot=n_boot,
        n_perm=n_perm,
        compared=compared_metrics(k, columns),
        family=preset_family,
    )
    if f1_of_means(preset) and len(top):
        f1 = top["metric"].astype(str).str.startswith("f1@")
        top.loc[f1, "label"] = "mean per-document " + top.loc[f1, "label"].astype(str)
        records = top.to_dict("records")
        top["sentence"] = [headline_sentence(row, words) for row in records]
        top["plain"] = [plain_sentence(row, words) for row in records]
    return top


def protocol_intervals(
    scores: pd.DataFrame,
    preset: str,
    metrics: Sequence[str],
    n_boot: int = N_BOOT,
    confidence: float = CONFIDENCE,
    seed: int = SEED,
) -> pd.DataFrame:
    """Bootstrap CIs (over documents) of each model's preset value of every metric (columns model, metric, ci_low,
    ci_high): the mean per-document value, and under a preset whose F1 is the F1 of mean P and R that statistic, so
    each interval is about the number the table shows."""
    parts = []
    for model in dict.fromkeys(scores["model"]):
        rows = scores[scores["model"] == model]
        cis = bootstrap_summary_ci(rows, list(metrics), "macro", n_boot=n_boot, confidence=confidence, seed=seed)
        if f1_of_means(preset) and len(rows):
            for i, metric in enumerate(cis["metric"]):
                if str(metric).startswith("f1@") and {"p" + metric[2:], "r" + metric[2:]} <= set(rows.columns):
                    low, high = _f1_of_means_ci(rows, metric[2:], n_boot, confidence, seed)
                    cis.loc[i, ["ci_low", "ci_high"]] = [low, high]
        parts.append(cis[["metric", "ci_low", "ci_high"]].assign(model=model))
    columns = ["model", "metric", "ci_low", "ci_high"]
    return pd.concat(parts, ignore_index=True)[columns] if parts else pd.DataFrame(columns=columns)


def _f1_of_means_ci(rows: pd.DataFrame, cutoff: str, n_boot: int, confidence: float, seed: int) -> tuple[float, float]:
    """The percentile interval of F1(mean P@cutoff, mean R@cutoff) over document resamples (NaN values skipped)."""
    x = rows[["p" + cutoff, "r" + cutoff]].to_numpy(dtype="float64")
    defined = np.isfinite(x)
    sums = resampled_sums(len(rows), np.hstack([np.where(defined, x, 0.0), defined]), n_boot, seed)  # values, counts
    with np.errstate(invalid="ignore", divide="ignore"):
        p, r = (sums[:, :2] / sums[:, 2:]).T
        samples = np.where(p + r > 0, 2 * p * r / (p + r), 0.0)
    alpha = (1.0 - confidence) / 2.0
    low, high = np.nanquantile(samples, [alpha, 1.0 - alpha])
    return float(low), float(high)


def protocol_examples(documents, predictions, preset: str, scores: pd.DataFrame, top: pd.DataFrame) -> list[Example]:
    """The three worked examples of the headline's first metric, each prediction marked when the preset matches it."""
    if top.empty:
        return []
    best, runner, metric = (str(top[c].iloc[0]) for c in ("best", "runner_up", "metric"))
    out = []
    for kind, _movie, doc in example_reviews(scores, best, runner, metric):
        here = scores[scores["review_id"] == doc]
        text = documents.texts.get(doc)
        gold = documents.gold[doc]
        out.append(
            Example(
                kind=kind,
                movie=documents.name,
                movie_title=documents.name,
                review_id=doc,
                text=text,
                metric=metric,
                values={m: float(v) for m, v in zip(here["model"], here[metric]) if m in (best, runner)},
                keywords={m: _matches(preset, gold, predictions[m].get(doc, []), text) for m in (best, runner)},
                ground_truth=[(0, g) for g in gold],
            )
        )
    return out


def other_preset_lines(documents, predictions: Mapping[str, Mapping[str, Sequence[str]]], preset: str, k: int, cutoffs):
    """One line per model and key metric: the preset's value and every other preset's (`kweval.lattice.lines`)."""
    cutoffs = list(dict.fromkeys([k, *cutoffs]))
    lines: list[str] = []
    for model, lists in predictions.items():
        summaries = preset_summaries(documents.gold, lists, documents.texts, cutoffs)
        lines += gap_lines(preset, summaries, k, f"{model}: " if len(predictions) > 1 else "")
    return lines


def protocol_report_data(
    documents,
    predictions: Mapping[str, Mapping[str, Sequence[str]]],
    preset: str,
    k: int,
    card: dict,
    cutoffs: Sequence[int | str] = CUTOFFS,
    problems: Sequence[str] = (),
    n_boot: int = N_BOOT,
    n_perm: int = N_PERM,
    progress: Progress = no_progress,
) -> ReportData:
    """The report of `predictions` ({model: {document: phrases}}) on `documents` (a `kweval.data.keyphrase.
    Documents`) under `preset`; `progress` is told each of the first four REPORT_STAGES as it begins."""
    metrics = protocol_metrics(k, cutoffs)
    stage(progress, REPORT_STAGES[0])
    scores, summary = protocol_scores(documents, predictions, preset, metrics, list(dict.fromkeys([k, *cutoffs])))
    models = list(predictions)
    intervals = protocol_intervals(scores, preset, metrics, n_boot=n_boot).assign(movie=ALL)
    stage(progress, REPORT_STAGES[1])
    top = protocol_headline(scores, preset, k, DOCUMENT_WORDS, n_boot=n_boot, n_perm=n_perm)
    stage(progress, REPORT_STAGES[2])
    reference = str(top["best"].iloc[0]) if len(top) else models[0]
    comparisons = protocol_comparisons(scores, reference, models, metrics, n_boot=n_boot, n_perm=n_perm)
    f1_note = (
        " F1 in the table is the F1 of mean P and mean R (KPEval's convention); the comparisons test mean per-document "
        "values."
        if PROTOCOLS[preset].macro == "f1_of_means"
        else " The comparisons test mean per-document values."
    )
    stage(progress, REPORT_STAGES[3])
    examples = protocol_examples(documents, predictions, preset, scores, top)
    card = with_other_presets(card, other_preset_lines(documents, predictions, preset, k, cutoffs))
    return ReportData(
        title=f"kweval report: {documents.name} under the {preset} preset",
        words=DOCUMENT_WORDS,
        how="macro",
        models=models,
        metrics=metrics,
        summary=summary,
        intervals=intervals,
        headline=top,
        reference=reference,
        verdicts=verdicts.verdict_table(comparisons, reference, reviews="documents")
        if len(comparisons)
        else pd.DataFrame(),
        examples=examples,
        card=dict(card),
        problems=list(problems),
        notes=[
            f"{DOCUMENT_WORDS.count(len(documents.gold))} in {documents.name}; the {preset} preset's numbers.{f1_note}"
        ],
        family=preset_family,
    )
