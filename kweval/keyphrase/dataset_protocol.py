"""The keyphrase presets (pke, kpeval, meng) on a loaded per-document `Dataset`: the numbers of
`kweval evaluate DATA --protocol P --predictions ...`, for callers that hold the data in memory (the dashboard).

The CLI reads each collection's files (`kweval.data.keyphrase.read_documents`) and each model's
file (`kweval.data.predictions.prediction_lists`); here the same lists come from the dataset's
tables: every document of a collection with its gold keyphrases in file order ([] without a key
file) and its text, and each model's keyphrases in rank order (strings only, an empty one kept, as
`prediction_lists` keeps it).  Scoring and the macro summary are the presets' own
(`protocols.score_documents`, `protocols.summarize`), so the numbers are the CLI's.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace

import pandas as pd

from kweval.data.dataset import Dataset
from kweval.data.keyphrase import Documents
from kweval.evaluation.options import Evaluation
from kweval.keyphrase.protocols import COUNT_COLUMNS, CUTOFFS, PROTOCOLS, score_documents, summarize


def collection_lists(dataset: Dataset, movie: str) -> tuple[dict[str, list[str]], dict[str, str]]:
    """(gold keyphrases by document, texts by document) of one collection of `dataset`, documents in its order."""
    reviews = dataset.reviews[dataset.reviews["movie"] == movie]
    gt = dataset.ground_truth[dataset.ground_truth["movie"] == movie]
    gt = gt.sort_values(["review_id", "rank"], kind="stable")
    by_doc: dict[str, list[str]] = {}
    for doc, keyword in zip(gt["review_id"], gt["keyword"]):
        if isinstance(keyword, str):
            by_doc.setdefault(str(doc), []).append(keyword)
    docs = [str(d) for d in reviews["review_id"]]
    texts = {str(d): t for d, t in zip(reviews["review_id"], reviews["text"]) if isinstance(t, str)}
    return {d: by_doc.get(d, []) for d in docs}, texts


def collection_documents(dataset: Dataset, movie: str) -> Documents:
    """One collection of `dataset` as `kweval.data.keyphrase.read_documents` gives it (texts, gold keyphrases in
    file order), for the preset's report (`kweval.io.report_protocol.protocol_report_data`).  A document without a
    text is left out, as the reader leaves out one it cannot read."""
    gold, texts = collection_lists(dataset, movie)
    return Documents(name=str(movie), texts={d: texts[d] for d in gold if d in texts}, keys=gold, language=None)


def model_lists(dataset: Dataset, movie: str, model: str) -> dict[str, list[str]]:
    """{document id: `model`'s keyphrases in rank order} in one collection (as `prediction_lists` gives them)."""
    pred = dataset.predictions
    rows = pred[(pred["movie"] == movie) & (pred["model"] == model)].sort_values(["review_id", "rank"], kind="stable")
    out: dict[str, list[str]] = {}
    for doc, keyword in zip(rows["review_id"], rows["keyword"]):
        phrases = out.setdefault(str(doc), [])
        if isinstance(keyword, str):
            phrases.append(keyword)
    return out


def cutoffs_for(k: int) -> tuple:
    """The cut-offs the CLI scores with `--k k`: the presets' own plus k."""
    return tuple(dict.fromkeys((*CUTOFFS[:1], k, *CUTOFFS[1:])))


def protocol_scores(dataset: Dataset, protocol: str, k: int, models: Sequence[str] | None = None) -> pd.DataFrame:
    """Per-document scores under the preset `protocol`: one row per collection × document × model (columns movie,
    review_id, model, then the preset's metrics), for paired comparisons."""
    preset = PROTOCOLS[protocol]
    parts = []
    for movie in dataset.movie_ids:
        gold, texts = collection_lists(dataset, movie)
        for model in models if models is not None else dataset.model_names:
            per_doc = score_documents(preset, gold, model_lists(dataset, movie, model), texts, cutoffs_for(k))
            frame = pd.DataFrame(per_doc).rename(columns={"doc": "review_id"})
            parts.append(frame.assign(movie=movie, model=model))
    if not parts:
        return pd.DataFrame(columns=["movie", "review_id", "model"])
    out = pd.concat(parts, ignore_index=True)
    return out[["movie", "review_id", "model", *[c for c in out.columns if c not in ("movie", "review_id", "model")]]]


def preset_metrics(scores: pd.DataFrame) -> list[str]:
    """The metric columns of per-document preset `scores` (`protocol_scores`): all but the keys and the counts
    (`protocols.COUNT_COLUMNS`)."""
    return [c for c in scores.columns if c not in ("movie", "review_id", "model", *COUNT_COLUMNS)]


def with_preset_scores(evaluation: Evaluation, scores: pd.DataFrame, metrics: Sequence[str]) -> Evaluation:
    """`evaluation` with its per-review `metrics` columns holding the preset's per-document values (`scores`, from
    `protocol_scores`) of the same rows (movie, review_id, model; NaN where the preset scored none), in its row
    order: what is computed over the evaluation's rows (its slice features) reads the preset's numbers."""
    keys = ["movie", "review_id", "model"]
    own = evaluation.scores.drop(columns=[m for m in metrics if m in evaluation.scores.columns])
    index = pd.MultiIndex.from_frame(own[keys].astype({"review_id": str}))
    values = scores.astype({"review_id": str}).drop_duplicates(keys).set_index(keys)[list(metrics)].reindex(index)
    joined = own.assign(**{m: values[m].to_numpy() for m in metrics})
    return replace(evaluation, scores=joined)


def protocol_summary(dataset: Dataset, protocol: str, k: int, models: Sequence[str] | None = None) -> pd.DataFrame:
    """The rows `kweval evaluate --protocol protocol --k k` writes for each collection × model of `dataset`:
    movie, model, n_documents, then the preset's macro scores (metrics undefined on every document left out)."""
    preset = PROTOCOLS[protocol]
    rows = []
    for movie in dataset.movie_ids:
        gold, texts = collection_lists(dataset, movie)
        for model in models if models is not None else dataset.model_names:
            per_doc = score_documents(preset, gold, model_lists(dataset, movie, model), texts, cutoffs_for(k))
            summary = summarize(preset, per_doc)
            n_documents = int(summary.pop("n_documents"))
            values = {name: v for name, v in summary.items() if not math.isnan(v)}
            rows.append({"movie": movie, "model": model, "n_documents": n_documents, **values})
    return pd.DataFrame(rows)
