"""A recorded run taken elsewhere: its tidy per-review table as a file, or logged to an MLflow tracking server.

The table is the run's stored per-review table with the run's id and name in front (`kweval.io.table_files`:
CSV or Parquet by the file's extension, spreadsheet formulas neutralised in CSV).  MLflow (the optional extra
``mlflow``) gets the run's settings as params, each model's ALL values as metrics (``<model>/<metric>``, ``@``
written ``_at_``: MLflow's names allow no ``@``) and the per-review table as an artifact.
"""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

import pandas as pd

from kweval.extras import require
from kweval.io.table_files import write_table
from kweval.runs.run import RunInfo
from kweval.runs.store import RunsError


def tidy_table(info: RunInfo, scores: pd.DataFrame) -> pd.DataFrame:
    """The per-review table with ``run_id`` and ``run_name`` columns first."""
    return scores.assign(run_id=info.id, run_name=info.name)[["run_id", "run_name", *scores.columns]]


def write_run_table(info: RunInfo, scores: pd.DataFrame, out: str, raw: bool = False) -> None:
    """`tidy_table` to the file `out` (CSV or Parquet by its extension; an OutputError when it cannot be written)."""
    write_table(tidy_table(info, scores), out, raw=raw)


def mlflow_name(text: str) -> str:
    """A metric or param name MLflow accepts (alphanumerics, ``_ - . / `` and space): ``f1@5`` -> ``f1_at_5``."""
    return re.sub(r"[^\w\-. /]", "_", text.replace("@", "_at_"))


def mlflow_params(info: RunInfo) -> dict[str, str]:
    """The run's settings and identity as MLflow params (values as text, at most 500 characters each)."""
    params = {f"kweval.{k}": v for k, v in info.settings.items()}
    params |= {
        "kweval.run_id": info.id,
        "kweval.version": info.kweval_version,
        "kweval.dataset_sha256": info.dataset_sha256,
        "kweval.inputs_sha256": info.inputs_sha256,
        "kweval.data": info.data,
        "kweval.layout": info.layout,
        "kweval.models": ",".join(info.models),
    }
    return {mlflow_name(k): str(v)[:500] for k, v in params.items()}


def mlflow_metrics(summary: pd.DataFrame) -> dict[str, float]:
    """`<model>/<metric>` -> the ALL value of every metric with one (`RunStore.summary` rows)."""
    rows = summary.dropna(subset=["value"])
    return {mlflow_name(f"{m}/{k}"): float(v) for m, k, v in zip(rows["model"], rows["metric"], rows["value"])}


def log_to_mlflow(
    info: RunInfo, scores: pd.DataFrame, summary: pd.DataFrame, uri: str, experiment: str | None = None
) -> str:
    """Log the run to the MLflow tracking `uri` (in `experiment`, default MLflow's); returns MLflow's run id.  What
    MLflow refuses (an unreachable server, a backend it will not open) is one RunsError naming the URI."""
    mlflow = require("mlflow", "mlflow", "kweval runs export --mlflow")
    try:
        mlflow.set_tracking_uri(uri)
        if experiment:
            mlflow.set_experiment(experiment)
        with mlflow.start_run(run_name=info.name) as active, tempfile.TemporaryDirectory() as folder:
            mlflow.set_tags({"kweval.run_id": info.id, "kweval.time": info.time})
            mlflow.log_params(mlflow_params(info))
            mlflow.log_metrics(mlflow_metrics(summary))
            table = Path(folder) / f"kweval-run-{info.id}.parquet"
            write_run_table(info, scores, str(table))
            mlflow.log_artifact(str(table))
            return str(active.info.run_id)
    except Exception as exc:  # MLflow's own errors and its HTTP client's: the integration's one boundary
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise RunsError(f"MLflow {uri}", f"the run was not logged ({first[:300]})") from None
