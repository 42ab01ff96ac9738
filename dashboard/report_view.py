"""The Summary's "Download report": `kweval report`'s self-contained HTML page for the view on screen (under a
keyphrase preset: `kweval report --protocol P`'s page of the collection in scope).

No second report: the page is `kweval.io.html_report.report_page` (what
`kweval report` writes) of the evaluation restricted to the view (the
selected models, the movie in scope).  Plain functions, no streamlit
(tests/test_imports.py).
"""

from __future__ import annotations

from dataclasses import replace

import pandas as pd

from kweval.data.dataset import Dataset
from kweval.evaluation.options import Evaluation, Progress, no_progress
from kweval.io import html_report
from kweval.io.preset_headlines import report_with_presets
from kweval.io.report_protocol import protocol_report_data
from kweval.keyphrase import dataset_protocol

ALL = "ALL"


def _rows(frame: pd.DataFrame, models: list[str], movie: str) -> pd.DataFrame:
    """The rows of `frame` of the `models` and, unless `movie` is ALL, of that movie (columns it lacks: no filter)."""
    keep = pd.Series(True, index=frame.index)
    if "model" in frame.columns:
        keep &= frame["model"].isin(models)
    if movie != ALL and "movie" in frame.columns:
        keep &= frame["movie"] == movie
    return frame[keep]


def view_evaluation(evaluation: Evaluation, models: list[str], movie: str = ALL) -> Evaluation:
    """`evaluation` restricted to `models` (in the evaluation's order) and to `movie` (ALL: every movie)."""
    chosen = [m for m in evaluation.models if m in set(models)]
    return replace(
        evaluation,
        scores=_rows(evaluation.scores, chosen, movie),
        keywords=_rows(evaluation.keywords, chosen, movie),
        ground_truth=_rows(evaluation.ground_truth, chosen, movie),
        coverage=_rows(evaluation.coverage, chosen, movie),
        skipped=_rows(evaluation.skipped, chosen, movie),
        models=chosen,
        movies=list(evaluation.movies) if movie == ALL else [movie],
    )


def report_html(
    dataset: Dataset,
    evaluation: Evaluation,
    models: list[str],
    movie: str,
    how: str,
    card: dict,
    title: str,
    progress: Progress = no_progress,
) -> str:
    """The standalone HTML report of the view (`models`, `movie`, aggregation `how`) with its protocol `card`:
    what `kweval report` writes for the same data and settings (`kweval.io.html_report.report_page`); `progress`
    is told each stage as it begins (`kweval.io.report_data.REPORT_STAGES`)."""
    view = view_evaluation(evaluation, models, movie)
    return html_report.report_page(dataset, view, how, card, title=title, progress=progress)


def protocol_report_html(
    dataset: Dataset,
    protocol: str,
    k: int,
    models: list[str],
    movie: str,
    card: dict,
    progress: Progress = no_progress,
) -> str:
    """The standalone HTML report of collection `movie` under the keyphrase preset `protocol` (`models`, `k`): what
    `kweval report DATA --protocol P --k K` writes for the same documents and predictions
    (`kweval.io.report_protocol.protocol_report_data`), the lists read from the dataset's tables
    (`kweval.keyphrase.dataset_protocol`, as the preset's Summary reads them)."""
    documents = dataset_protocol.collection_documents(dataset, movie)
    predictions = {m: dataset_protocol.model_lists(dataset, movie, m) for m in models}
    data = protocol_report_data(
        documents, predictions, protocol, k, card, cutoffs=dataset_protocol.cutoffs_for(k), progress=progress
    )
    data = report_with_presets(data, protocol, dataset.subset([movie], models), k)  # the verdict under each preset
    return html_report.render_page(data, progress)


def file_size(n_bytes: int) -> str:
    """A file's size for people: "812 bytes", "48 KB", "3.6 MB" (powers of 1000, as browsers' download lists).

    >>> file_size(812), file_size(48_213), file_size(3_612_000)
    ('812 bytes', '48 KB', '3.6 MB')
    """
    if n_bytes < 1000:
        return f"{n_bytes} bytes"
    if n_bytes < 1_000_000:
        return f"{n_bytes / 1000:.0f} KB"
    return f"{n_bytes / 1_000_000:.1f} MB"
