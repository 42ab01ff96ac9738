"""The headline of every preset's view of per-document data, and a view's headline told whether its verdict holds
under all of them (`kweval.stats.across_presets`): `kweval report` (with or without `--protocol`) and the
dashboard's Summary call these, so the sentence is computed once, the same way.

kweval's view is the evaluation's headline (`kweval.stats.headline` over the key metrics, the data's match mode:
stem on per-document GT); each other preset's is `kweval.io.report_protocol.protocol_headline` of its per-document
scores (`kweval.keyphrase.dataset_protocol.protocol_scores`, the numbers of `kweval evaluate --protocol P
--per-review`).  The metric compared across presets is F1@k, the one every view's headline leads with.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd

from kweval.data.dataset import Dataset
from kweval.data.vocabulary import vocabulary
from kweval.evaluation.options import EvalOptions, Evaluation
from kweval.io.report_data import ReportData
from kweval.io.report_protocol import protocol_headline
from kweval.keyphrase.dataset_protocol import protocol_scores
from kweval.keyphrase.protocols import PROTOCOLS
from kweval.stats.across_presets import across_presets
from kweval.stats.bootstrap import N_BOOT
from kweval.stats.families import compared_metrics
from kweval.stats.headline import headline, key_metrics
from kweval.stats.paired import N_PERM

PRESETS = tuple(PROTOCOLS)  # kweval, pke, kpeval, meng


def across_metrics(k: int) -> list[str]:
    """The metrics whose verdicts are compared across presets: F1@k (every view's headline leads with it)."""
    return [f"f1@{k}"]


def kweval_headline(
    evaluation: Evaluation, models: Sequence[str], how: str, words, n_boot: int = N_BOOT, n_perm: int = N_PERM
) -> pd.DataFrame:
    """The kweval view's headline: `evaluation`'s per-review scores of `models`, its key metrics, aggregated `how`,
    with the metrics and families the Summary, Compare and the report compare (`families.compared_metrics`), so a
    verdict here has the p-value it has there."""
    scores = evaluation.scores[evaluation.scores["model"].isin(list(models))]
    compared = compared_metrics(evaluation.metric_names, scores)
    keys = key_metrics(compared, evaluation.options.k)
    return headline(scores, keys, how, words, n_boot=n_boot, n_perm=n_perm, compared=compared)


def preset_headlines(
    dataset: Dataset,
    k: int,
    models: Sequence[str],
    known: Mapping[str, pd.DataFrame] | None = None,
    n_boot: int = N_BOOT,
    n_perm: int = N_PERM,
) -> dict[str, pd.DataFrame]:
    """{preset: its view's headline of `models` on `dataset`} for every preset, those in `known` as given (a view
    already computed): kweval's of the evaluation with the keyphrase metrics on and the data's match mode (macro),
    each other's of its per-document scores."""
    words = vocabulary(dataset)
    out = dict(known or {})
    for preset in PRESETS:
        if preset in out:
            continue
        if preset == "kweval":
            from kweval.evaluation.pipeline import evaluate

            options = EvalOptions(k=k, keyphrase=True, present=True)
            evaluation = evaluate(dataset.subset(models=list(models)), options, keywords=False)
            out[preset] = kweval_headline(evaluation, models, "macro", words, n_boot, n_perm)
        else:
            scores = protocol_scores(dataset, preset, k, list(models))
            out[preset] = protocol_headline(scores, preset, k, words, n_boot, n_perm)
    return {preset: out[preset] for preset in PRESETS}


def with_presets(
    top: pd.DataFrame,
    view: str,
    dataset: Dataset,
    k: int,
    models: Sequence[str],
    n_boot: int = N_BOOT,
    n_perm: int = N_PERM,
) -> pd.DataFrame:
    """`top`, the headline of the `view` preset on per-document `dataset`, with the sentence saying whether each
    F1@k verdict holds under every preset (`kweval.stats.across_presets.ACROSS_COLUMNS`); unchanged on movie-level
    data (no preset applies)."""
    if not dataset.per_document or top.empty:
        return top
    headlines = preset_headlines(dataset, k, models, {view: top}, n_boot, n_perm)
    return across_presets(top, view, headlines, across_metrics(k))


def report_with_presets(
    data: ReportData, view: str, dataset: Dataset, k: int, n_boot: int = N_BOOT, n_perm: int = N_PERM
) -> ReportData:
    """`data` (an HTML report's, of the `view` preset on `dataset`: the collections and models it shows) with its
    headline told whether each F1@k verdict holds under every preset (`with_presets`): `kweval report`, with or
    without `--protocol`, and the dashboard's report of the view."""
    if len(data.models) >= 2:
        data.headline = with_presets(data.headline, view, dataset, k, data.models, n_boot, n_perm)
    return data
