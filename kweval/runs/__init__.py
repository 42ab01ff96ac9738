"""Run history and regression gates: every evaluation kept, any two runs compared with paired statistics.

The API the CLI (`kweval evaluate --record`, `kweval runs ...`) and the dashboard (Record this run, History) call:

- `RunStore(path=None)` (`default_path()`: `$KWEVAL_RUNS`, else beside the kweval cache): `add`, `runs`, `get`
  (by id, unique id start or name), `scores` (checksum verified), `summary`, `delete`; every fault a `RunsError`;
- `evaluation_tables(evaluation, how)` / `protocol_tables(...)` and `record_run(store, tables, source, ...)`;
- `compare_runs(store, a, b, metrics, model, allow_different_data)`: `kweval.stats.aggregated.compare_aggregated`
  on the units both runs scored (B − A), the units most worse and most better, the settings that differ;
- `gate(comparison, max_drop)`: fails on a drop larger than allowed **and** significant after Holm;
- `what_differs` and `check_scores` (`runs rerun`); `runs_table`, `metric_history`, `change_marks` (the History
  page); `write_run_table`, `log_to_mlflow` (`runs export`).
"""

from kweval.runs.compare import (
    RunComparison,
    compare_rows,
    compare_runs,
    lead_sentence,
    options_line,
    paired_rows,
)
from kweval.runs.export import log_to_mlflow, tidy_table, write_run_table
from kweval.runs.gate import GateResult, gate
from kweval.runs.history import change_marks, history_metrics, metric_history, runs_table, settings_text
from kweval.runs.record import (
    RunSource,
    RunTables,
    evaluate_arguments,
    evaluation_reference,
    evaluation_tables,
    protocol_tables,
    record_run,
    reference_hash,
)
from kweval.runs.rerun import ScoreCheck, check_scores, what_differs
from kweval.runs.run import RunInfo, changes_text, option_changes
from kweval.runs.store import RunsError, RunStore, default_path

__all__ = [
    "GateResult",
    "RunComparison",
    "RunInfo",
    "RunSource",
    "RunStore",
    "RunTables",
    "RunsError",
    "ScoreCheck",
    "change_marks",
    "changes_text",
    "check_scores",
    "compare_rows",
    "compare_runs",
    "default_path",
    "evaluate_arguments",
    "evaluation_reference",
    "evaluation_tables",
    "gate",
    "history_metrics",
    "lead_sentence",
    "log_to_mlflow",
    "metric_history",
    "option_changes",
    "options_line",
    "paired_rows",
    "protocol_tables",
    "record_run",
    "reference_hash",
    "runs_table",
    "settings_text",
    "tidy_table",
    "what_differs",
    "write_run_table",
]
