"""Documents a model gave no predictions for: scored 0 and counted, or left out (`EvalOptions.missing`).

A per-document benchmark must not reward omission: the field's tools (pke,
KPEval, OpenNMT-kpg) score a document without predictions 0 and average it
in, and so does kweval on per-document ground truth (docs/protocols.md,
"document without predictions").  Each such document × model pair becomes
an empty prediction list before the pipeline runs, and the count is said in
one line per model.  `missing="skip"` keeps the older rule, the movie-level
one: a review without output is skipped (the summary's `n_skipped`).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd

from kweval.data.dataset import PREDICTION_COLUMNS, Dataset, Problem

MISSING_MODES = ("auto", "zero", "skip")


def fills_missing(dataset: Dataset, mode: str) -> bool:
    """Whether documents without predictions score 0: `zero`, or `auto` on per-document ground truth."""
    return mode == "zero" or mode == "auto" and dataset.per_document


def fill_missing(dataset: Dataset, mode: str) -> tuple[Dataset, list[Problem]]:
    """`dataset` with an empty prediction list for every document with its own GT that a model left out.

    Returns the dataset unchanged when `fills_missing` is false (or nothing is
    missing), and one problem per model naming the count.
    """
    if not fills_missing(dataset, mode) or not len(dataset.models):
        return dataset, []
    gt = dataset.ground_truth
    if "review_id" not in gt.columns:
        return dataset, []
    own = gt.loc[gt["review_id"].notna(), ["movie", "review_id"]].drop_duplicates()
    # a key file without its document is no document (as the --protocol presets read it)
    texts = set(zip(dataset.reviews["movie"], dataset.reviews["review_id"].astype(str)))
    documents = [pair for pair in zip(own["movie"], own["review_id"].astype(str)) if pair in texts]
    if not documents:
        return dataset, []
    preds = dataset.predictions
    given = set(zip(preds["model"], preds["movie"], preds["review_id"].astype(str)))
    rows: list[tuple] = []
    problems: list[Problem] = []
    for model in dataset.models["model"]:
        missing = [(m, d) for m, d in documents if (model, m, d) not in given]
        if missing:
            rows.extend((m, d, model, 0, None, np.nan) for m, d in missing)
            problems.append(
                Problem(
                    f"model {model}",
                    f"{len(missing)} of {len(documents)} document(s) without predictions (e.g. {missing[0][1]}); "
                    "each scores 0 and is counted (--missing skip leaves them out)",
                    "evaluate",
                )
            )
    if not rows:
        return dataset, []
    added = pd.DataFrame(rows, columns=PREDICTION_COLUMNS)
    added["rank"] = added["rank"].astype(preds["rank"].dtype if len(preds) else "int64")
    added["score"] = added["score"].astype("float64")
    frames = [preds, added] if len(preds) else [added]
    predictions = pd.concat(frames, ignore_index=True)[PREDICTION_COLUMNS]
    return dataclasses.replace(dataset, predictions=predictions), problems
