"""A run made from an evaluation: its per-review table, its summary with intervals, its identity, then stored.

The CLI (`kweval evaluate --record`, `kweval report --record`) and the dashboard's "Record this run" call
`record_run` with what they evaluated; nothing is recomputed here but the intervals of the key metrics' ALL values
(the Summary page's `bootstrap_summary_ci`, every model in one product), which the History page draws as bands
instead of resampling every run it shows.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pandas as pd

from kweval.evaluation.aggregate import ALL
from kweval.evaluation.options import EvalOptions, Evaluation
from kweval.runs.run import RunInfo
from kweval.runs.store import SUMMARY_COLUMNS, RunStore
from kweval.stats.bootstrap import N_BOOT, bootstrap_summary_cis
from kweval.stats.headline import key_metrics

KEY = ["movie", "review_id", "model"]


@dataclass(frozen=True)
class RunSource:
    """Where a run's numbers come from: the data as given and how to evaluate it again."""

    data: str  # the dataset's path ("demo" for the embedded demo, "upload" for uploaded tables)
    layout: str  # tidy, dnlp, keyphrase, meng
    per_document: bool  # the GT is per document (Collection/Document words) or per movie (Movie/Review)
    inputs_sha256: str  # `kweval.io.card.dataset_hash` of the files read ("" when there are none)
    arguments: list[str] | None = None  # `kweval evaluate` arguments evaluating it again; None: not re-runnable
    card: Mapping[str, object] | None = None  # the protocol card of the run


@dataclass(frozen=True)
class RunTables:
    """What a run stores besides its identity: the per-review table, the metrics it holds, the summary (long form,
    `SUMMARY_COLUMNS`), and the hash of the reference the models were scored against."""

    scores: pd.DataFrame
    metrics: list[str]
    summary: pd.DataFrame
    dataset_sha256: str


def reference_hash(units: pd.DataFrame, ground_truth: pd.DataFrame) -> str:
    """SHA-256 of the units scored and the ground truth they were scored against: the sorted distinct (movie,
    review_id) of `units` and the sorted distinct (movie, review_id or "", normalized GT keyword) of `ground_truth`
    (a GT list per movie has no review_id).  The ranking of a GT list is an option (--gt-order), not part of it;
    the predictions are not either, so two models' runs on the same data have the same hash."""
    ids = sorted(set(zip(_texts(units["movie"]), _texts(units["review_id"]))))
    review = _texts(ground_truth["review_id"]) if "review_id" in ground_truth else [""] * len(ground_truth)
    gt = sorted(set(zip(_texts(ground_truth["movie"]), review, _texts(ground_truth["norm"]))))
    h = hashlib.sha256(b"units\0")
    h.update("\n".join("\t".join(pair) for pair in ids).encode("utf-8", "surrogatepass"))
    h.update(b"\0gt\0")
    h.update("\n".join("\t".join(row) for row in gt).encode("utf-8", "surrogatepass"))
    return h.hexdigest()


def _texts(column: pd.Series) -> list[str]:
    """A column's cells as text, a missing one (None, NaN) as ""."""
    return ["" if v is None or (isinstance(v, float) and v != v) else str(v) for v in column.tolist()]


def per_review_table(scores: pd.DataFrame) -> pd.DataFrame:
    """The stored per-review table: movie, review_id, model as text, then every numeric column (metrics and the
    counts micro aggregation sums), one row per unit × model."""
    numeric = [c for c in scores.columns if c not in KEY and pd.api.types.is_numeric_dtype(scores[c])]
    out = pd.DataFrame({c: _texts(scores[c]) for c in KEY})
    for c in numeric:
        out[c] = scores[c].to_numpy()
    return out


def long_summary(table: pd.DataFrame, intervals: pd.DataFrame) -> pd.DataFrame:
    """A movie × model summary (`kweval.aggregate`'s, ALL rows included) in long form, with the ALL rows' intervals
    (`intervals`: model, metric, ci_low, ci_high) beside their values."""
    value_columns = [
        c for c in table.columns if c not in ("movie", "model") and pd.api.types.is_numeric_dtype(table[c])
    ]
    long = table.melt(id_vars=["movie", "model"], value_vars=value_columns, var_name="metric", value_name="value")
    long["movie"] = long["movie"].astype(str)
    long["model"] = long["model"].astype(str)
    cis = intervals.assign(movie=ALL)[["movie", "model", "metric", "ci_low", "ci_high"]]
    return long.merge(cis, on=["movie", "model", "metric"], how="left")[SUMMARY_COLUMNS]


def summary_intervals(scores: pd.DataFrame, metrics: Sequence[str], how: str, n_boot: int = N_BOOT) -> pd.DataFrame:
    """Each model's bootstrap interval of every metric's aggregated value over all its units (model, metric,
    ci_low, ci_high): the Summary page's `bootstrap_summary_ci`, every model in one product
    (`kweval.stats.bootstrap_summary_cis`)."""
    groups = {str(m): rows for m, rows in scores.groupby("model", sort=False, observed=True)}
    cis = bootstrap_summary_cis(groups, list(metrics), how, n_boot=n_boot)
    return cis.rename(columns={"group": "model"})[["model", "metric", "ci_low", "ci_high"]]


def evaluation_tables(
    evaluation: Evaluation,
    how: str,
    summary: pd.DataFrame | None = None,
    models: Sequence[str] | None = None,
    n_boot: int = N_BOOT,
) -> RunTables:
    """The tables of a run of the one engine: its per-review table, its summary (`summary`, else `kweval.aggregate`
    under `how`) with the key metrics' intervals, and the hash of its units and cleaned GT; `models`: only theirs
    (the dashboard records the models selected)."""
    from kweval.evaluation.aggregate import aggregate

    rows = evaluation.scores if models is None else evaluation.scores[evaluation.scores["model"].isin(list(models))]
    scores = per_review_table(rows)
    metrics = [m for m in evaluation.metric_names if m in scores.columns]
    table = aggregate(evaluation, how) if summary is None else summary
    if models is not None:
        table = table[table["model"].isin(list(models))]
    intervals = summary_intervals(scores, key_metrics(metrics, evaluation.options.k), how, n_boot)
    return RunTables(scores, metrics, long_summary(table, intervals), evaluation_reference(evaluation))


def evaluation_reference(evaluation: Evaluation) -> str:
    """`reference_hash` of an evaluation: the units it scored or skipped and its cleaned GT (a run's dataset_sha256;
    the History page finds the runs of the data on screen by it)."""
    units = pd.concat([evaluation.scores[["movie", "review_id"]], evaluation.skipped[["movie", "review_id"]]])
    return reference_hash(units, evaluation.ground_truth)


def protocol_tables(
    collection: str,
    per_model: Mapping[str, Mapping[str, Sequence]],
    rows: Sequence[Mapping[str, object]],
    preset: str,
    gold: Mapping[str, Sequence[str]],
    n_boot: int = N_BOOT,
) -> RunTables:
    """The tables of a run under a keyphrase preset: the per-document columns of each model (`score_documents`),
    the preset's own summary `rows` (as `kweval evaluate --protocol` prints them) with the report's intervals
    (`kweval.io.report_protocol.protocol_intervals`), and the hash of the documents and their gold."""
    from kweval.io.report_protocol import protocol_intervals
    from kweval.keyphrase.dataset_protocol import preset_metrics
    from kweval.text.normalize import normalize

    frames = []
    for model, columns in per_model.items():
        frame = pd.DataFrame(dict(columns)).rename(columns={"doc": "review_id"})
        frames.append(frame.assign(movie=collection, model=model))
    scores = per_review_table(pd.concat(frames, ignore_index=True)) if frames else pd.DataFrame(columns=KEY)
    metrics = preset_metrics(scores)
    table = pd.DataFrame([{**row, "movie": ALL} for row in rows]).rename(columns={"n_documents": "n_reviews"})
    summary = long_summary(table, protocol_intervals(scores, preset, metrics, n_boot=n_boot))
    units = pd.DataFrame({"movie": collection, "review_id": list(gold)})
    ground_truth = pd.DataFrame(
        [(collection, doc, normalize(k)) for doc, keys in gold.items() for k in keys if normalize(k)],
        columns=["movie", "review_id", "norm"],
    )
    return RunTables(scores, metrics, summary, reference_hash(units, ground_truth))


def default_name(models: Sequence[str], when: datetime) -> str:
    """The name of a run not given one: its models and its time (`keybert,yake 2025-01-31 14:05:09`)."""
    return f"{','.join(models)} {when:%Y-%m-%d %H:%M:%S}"


def record_run(
    store: RunStore,
    tables: RunTables,
    source: RunSource,
    *,
    protocol: str,
    aggregate: str,
    options: Mapping[str, object],
    name: str | None = None,
    now: datetime | None = None,
) -> RunInfo:
    """Store one run (a new id, `name` or the default one) and return what was stored."""
    from kweval import __version__

    when = now or datetime.now(UTC)
    models = list(dict.fromkeys(tables.scores["model"].astype(str)))
    info = RunInfo(
        id=uuid.uuid4().hex[:12],
        name=(name or "").strip() or default_name(models, when),
        time=when.isoformat(timespec="microseconds"),
        kweval_version=__version__,
        dataset_sha256=tables.dataset_sha256,
        inputs_sha256=source.inputs_sha256,
        layout=source.layout,
        per_document=bool(source.per_document),
        data=source.data,
        protocol=protocol,
        aggregate=aggregate,
        options={k: _plain(v) for k, v in options.items()},
        models=models,
        metrics=list(tables.metrics),
        n_rows=len(tables.scores),
        arguments=None if source.arguments is None else list(source.arguments),
        card=dict(source.card or {}),
    )
    return store.add(info, tables.scores, tables.summary)


def _plain(value: object) -> object:
    """Option values as JSON keeps them (numpy scalars as Python numbers)."""
    return value.item() if isinstance(value, np.generic) else value


def evaluate_arguments(
    data: str | None,
    options: EvalOptions | None,
    *,
    aggregate: str = "macro",
    protocol: str = "kweval",
    k: int | None = None,
    movies: Sequence[str] | None = None,
    models: Sequence[str] | None = None,
    predictions: Mapping[str, str] | None = None,
) -> list[str]:
    """The `kweval evaluate` arguments evaluating the same data under the same settings again (`runs rerun`): every
    option spelled out (a later release's defaults do not change a rerun), paths absolute."""
    args = [] if data is None else [str(Path(data).resolve())]
    if protocol != "kweval":
        args += ["--protocol", protocol, "--k", str(k if k is not None else options.k if options else 5)]
    if options is not None:
        args += ["--k", str(options.k), "--aggregate", aggregate, "--match", options.match]
        args += ["--gt-order", options.gt_order, "--gain", options.gain, "--discount", options.discount]
        args += ["--missing", options.missing, "--keyphrase" if options.keyphrase else "--no-keyphrase"]
        args += ["--present" if options.present else "--no-present"]
        if options.semantic:
            args += ["--semantic", "--threshold", repr(float(options.threshold))]
            args += ["--embedding-model", options.embedding_model, "--embedding-backend", options.embedding_backend]
        if options.sentiment:
            args.append("--sentiment")
    if movies:
        args += ["--movies", ",".join(movies)]
    if models:
        args += ["--models", ",".join(models)]
    for model, path in (predictions or {}).items():
        args += ["--predictions", f"{model}={Path(path).resolve()}"]
    return args
