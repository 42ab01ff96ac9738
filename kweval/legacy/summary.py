"""The legacy summary table (what the notebooks print) and its comparison with kweval's corrected numbers."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from kweval.data.dataset import Dataset, Problem
from kweval.legacy.encoder import legacy_encoder, seed001_semantic
from kweval.legacy.flat import flat_lists, seed001_prf_rows
from kweval.legacy.kernels import (
    LEGACY_SEMANTIC_THRESHOLD,
    NOTEBOOK_DEFAULT_THRESHOLD,
    Entry,
    group_lists,
    seed000_global_ndcg,
    seed000_predictions,
    seed000_weighted,
    seed001_sas,
    seed001_structured,
    vader_sentiment,
)
from kweval.metrics import registry

if TYPE_CHECKING:  # kweval.evaluate is only needed for the corrected side-by-side
    from kweval.evaluation.pipeline import EvalOptions


def _metric_columns(options: EvalOptions | None) -> list[str]:
    """The corrected mode's metric columns (its defaults without options): legacy mode reports the same columns."""
    from kweval.evaluation.options import EvalOptions

    return (options or EvalOptions()).metric_names()


def legacy_summary(dataset: Dataset, options: EvalOptions | None = None) -> tuple[pd.DataFrame, list[Problem]]:
    """Movie × model table of the notebooks' numbers (no ALL rows: the notebooks print none).

    Columns: movie, model, n_reviews (reviews with a prediction list: seed 001's
    P/R/F1 average over them), n_skipped (reviews whose cell is missing), then
    the corrected mode's metric columns:

    - precision, recall, f1: seed 001's per-review ``evaluate_keywords``, averaged (defects 4, 5);
    - w_precision, w_recall, w_f1, ndcg@k: seed 000's global functions called with
      the movie's GT list (defects 1–4), predictions prepared as its all-movies cell;
    - sem_* (options.semantic): seed 001's all-movies cell, threshold 0.5, unmasked
      mean pooling (defect 6); sas_* (options.sentiment): seed 001, scores as
      sentiments (defect 7);
    - p@k, ap@k, rr, gt_coverage: NaN (no notebook computes them).

    Options other than k, semantic and sentiment do not apply (the notebooks
    fix them); each one set to a non-default value is named in the problems.
    """
    k = options.k if options is not None else 5
    columns = _metric_columns(options)
    problems: list[Problem] = list(dataset.problems) + _ignored_options(options)
    flat = flat_lists(dataset)
    groups = group_lists(flat.lists)
    gts = flat.gts
    prf_rows = seed001_prf_rows(flat)  # seed 001's per-review P/R/F1 of every review at once
    reviews_per_movie = dataset.reviews.groupby("movie").size()
    rows = []
    sem_needed = []
    for movie in dataset.movies["movie"].tolist():
        gt = gts.get(movie, [])
        if not gt:
            problems.append(
                Problem(movie, "no ground-truth keywords: the notebooks score its reviews as 0", "evaluate")
            )
        n_movie_reviews = int(reviews_per_movie.get(movie, 0))
        dropped: list[tuple[str, int]] = []
        for model in dataset.models["model"].tolist():
            frame = groups.get((movie, model))
            entries = frame["entries"].tolist() if frame is not None else []
            row: dict[str, Any] = {"movie": movie, "model": model, "n_reviews": len(entries)}
            row["n_skipped"] = max(n_movie_reviews - len(entries), 0)
            row.update({c: math.nan for c in columns})
            if entries and frame is not None:
                # seed 001, per review, averaged (its loop skips non-list cells only)
                at = frame.index.to_numpy()
                row["precision"], row["recall"], row["f1"] = (float(np.mean(v[at])) for v in prf_rows)
                # seed 000, all-movies cell: called with the movie's GT list (defect 1)
                prepared = [seed000_predictions(e) for e in entries[: len(gt)]]  # zip would drop the rest anyway
                row["w_precision"], row["w_recall"], row["w_f1"] = seed000_weighted(prepared, gt)
                row[registry.column("ndcg@{k}", k)] = seed000_global_ndcg(prepared, gt, k)
                if len(entries) > len(gt):
                    dropped.append((model, len(entries) - len(gt)))
            rows.append(row)
            if entries and options is not None and (options.semantic or options.sentiment):
                sem_needed.append((len(rows) - 1, movie, frame))
        problems.extend(_zip_dropped(movie, dropped, dataset.models["model"].tolist(), len(gt), k))
    table = pd.DataFrame(rows, columns=["movie", "model", "n_reviews", "n_skipped"] + columns)
    if options is not None and options.sentiment:
        _add_legacy_sas(table, sem_needed, gts, dataset)
    if options is not None and options.semantic:
        _add_legacy_semantic(table, sem_needed, gts)
    for col in columns:
        table[col] = table[col].astype("float64")
    return table, problems


def _ignored_options(options: EvalOptions | None) -> list[Problem]:
    """The options legacy mode ignores (the notebooks fix them), each set to another value named as a problem."""
    from kweval.evaluation.options import MATCH_AUTO

    if options is None:
        return []
    problems = []
    fixed = {"match": "approx", "gt_order": "file", "gain": "linear", "discount": "log2"}
    for name, value in fixed.items():
        if getattr(options, name) not in (value, MATCH_AUTO):  # "auto": not chosen (only match has it)
            problems.append(
                Problem(
                    "legacy mode",
                    f"--{name.replace('_', '-')} {getattr(options, name)} is ignored: the notebooks use {value}",
                    "evaluate",
                )
            )
    if options.semantic and (
        options.threshold != NOTEBOOK_DEFAULT_THRESHOLD or options.embedding_model != "all-MiniLM-L6-v2"
    ):
        problems.append(
            Problem(
                "legacy mode",
                "semantic metrics use the notebook's threshold 0.5 and all-MiniLM-L6-v2; "
                "--threshold/--embedding-model are ignored",
                "evaluate",
            )
        )
    return problems


def _zip_dropped(movie: str, dropped: list[tuple[str, int]], models: list[str], n_gt: int, k: int) -> list[Problem]:
    """Defect 1 said per movie: the reviews seed 000's zip leaves unscored, models with the same count together."""
    by_count: dict[int, list[str]] = {}
    for model, n in dropped:
        by_count.setdefault(n, []).append(model)
    return [
        Problem(
            f"{movie} [{', '.join(m for m in models if m in group)}]",
            f"legacy w_*/{registry.column('ndcg@{k}', k)}: zip pairs reviews with the {n_gt} GT keywords, so {n} "
            f"later review(s) are not scored (defect 1)",
            "evaluate",
        )
        for n, group in sorted(by_count.items())
    ]


def seed001_cell_entries(frame: pd.DataFrame) -> tuple[list[str], list[list[Entry]]]:
    """Reviews seed 001's all-movies cell keeps: a string keyword and a numeric score present."""
    ids, kept = [], []
    for rid, e in zip(frame["review_id"].tolist(), frame["entries"].tolist()):
        if any(isinstance(kw, str) for kw, _ in e) and seed001_structured(e):
            ids.append(rid)
            kept.append(e)
    return ids, kept


def _add_legacy_sas(table: pd.DataFrame, todo: list, gts: dict[str, list[str]], dataset: Dataset) -> None:
    texts = dataset.reviews.assign(review_id=dataset.reviews["review_id"].astype(str)).set_index(
        ["movie", "review_id"]
    )["text"]
    text_value: dict[tuple[str, str], float | None] = {}
    gt_value: dict[str, float | None] = {}
    for pos, movie, frame in todo:
        if movie not in gt_value:
            gt = gts.get(movie, [])
            gt_value[movie] = sum(vader_sentiment(g) for g in gt) / len(gt) if gt else None
        sas_kw, sas_txt = [], []
        for rid, e in zip(*seed001_cell_entries(frame)):
            structured = seed001_structured(e)
            v = seed001_sas(structured, gt_value[movie])
            if v is not None:
                sas_kw.append(v)
            key = (movie, rid)
            if key not in text_value:
                t = texts.get(key)
                text_value[key] = vader_sentiment(t) if isinstance(t, str) and t else None
            v = seed001_sas(structured, text_value[key])
            if v is not None:
                sas_txt.append(v)
        table.loc[pos, "sas_keywords"] = float(np.mean(sas_kw)) if sas_kw else math.nan
        table.loc[pos, "sas_text"] = float(np.mean(sas_txt)) if sas_txt else math.nan


def _add_legacy_semantic(table: pd.DataFrame, todo: list, gts: dict[str, list[str]]) -> None:
    encoder = legacy_encoder()
    gt_emb: dict[str, np.ndarray] = {}
    for pos, movie, frame in todo:
        if movie not in gt_emb:
            gt_emb[movie] = encoder.embed_batches([[g for g in gts.get(movie, [])]])[0]
        _, kept = seed001_cell_entries(frame)
        batches = [[kw for kw, _ in e if isinstance(kw, str)] for e in kept]
        embs = encoder.embed_batches(batches)
        values = [seed001_semantic(emb, gt_emb[movie], LEGACY_SEMANTIC_THRESHOLD) for emb in embs]
        if values:
            for col, v in zip(("sem_precision", "sem_recall", "sem_f1"), zip(*values)):
                table.loc[pos, col] = float(np.mean(v))


# --------------------------------------------------------------------------------------------
# Legacy next to corrected
# --------------------------------------------------------------------------------------------


def _winner(values: pd.Series, models: pd.Series, decimals: int | None = 4) -> str:
    """The model with the highest value ("a = b" for a tie at `decimals` places; "" when all are NaN)."""
    if values.isna().all():
        return ""
    shown = values.round(decimals) if decimals is not None else values
    return " = ".join(models[(shown == shown.max()).to_numpy()].tolist())


def legacy_vs_corrected(
    dataset: Dataset,
    options: EvalOptions | None = None,
    decimals: int | None = 4,
    corrected: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Legacy and corrected (macro) values side by side, one row per movie × metric × model.

    Columns: movie, metric, model, legacy, corrected, difference (corrected − legacy),
    legacy_winner, corrected_winner (the best model of that movie × metric under
    each mode; models equal at `decimals` places — the precision tables are
    published with — tie, "a = b"), flips (the winner differs).  Only metrics
    legacy mode computes.

    `corrected`: the corrected side when the caller has it, the macro summary (``aggregate(evaluate(D, options),
    "macro")``) of data D holding `dataset`'s movies and models (the dashboard's cached one); only the rows of
    `dataset`'s movie × model pairs are read.  Default: `dataset` evaluated here.
    """
    from kweval.evaluation.aggregate import aggregate
    from kweval.evaluation.pipeline import EvalOptions, evaluate

    options = options or EvalOptions()
    legacy, _ = legacy_summary(dataset, options)
    if corrected is None:
        corrected = aggregate(evaluate(dataset, options), "macro", include_all=False)
    metrics = [c for c in legacy.columns[4:] if legacy[c].notna().any() and c in corrected.columns]
    key = ["movie", "model"]
    left = legacy.melt(id_vars=key, value_vars=metrics, var_name="metric", value_name="legacy")
    right = corrected.melt(id_vars=key, value_vars=metrics, var_name="metric", value_name="corrected")
    out = left.merge(right, on=key + ["metric"], how="left")
    out["difference"] = out["corrected"] - out["legacy"]
    order = {m: i for i, m in enumerate(metrics)}
    movie_order = {m: i for i, m in enumerate(dataset.movies["movie"].tolist())}
    out = out.assign(_mv=out["movie"].map(movie_order), _mt=out["metric"].map(order))
    out = out.sort_values(["_mv", "_mt"], kind="stable").drop(columns=["_mv", "_mt"]).reset_index(drop=True)
    winners = []
    for (movie, metric), frame in out.groupby(["movie", "metric"], sort=False):
        winners.append(
            {
                "movie": movie,
                "metric": metric,
                "legacy_winner": _winner(frame["legacy"], frame["model"], decimals),
                "corrected_winner": _winner(frame["corrected"], frame["model"], decimals),
            }
        )
    out = out.merge(pd.DataFrame(winners), on=["movie", "metric"], how="left")
    out["flips"] = out["legacy_winner"] != out["corrected_winner"]
    return out[
        ["movie", "metric", "model", "legacy", "corrected", "difference", "legacy_winner", "corrected_winner", "flips"]
    ]
