"""`kweval runs list|show|compare|gate|export|delete|rerun`: the run history of `kweval evaluate --record`.

The store is `--runs PATH`, else `$KWEVAL_RUNS`, else runs/runs.sqlite beside the kweval cache; a run is named by
its id (or a unique start of it) or its name (the latest run of that name).  Every fault (a damaged or foreign
store, an altered per-review table, an unknown run, runs that do not compare) is one `kweval:` line and exit 2;
`gate` exits 1 when the candidate dropped by more than allowed and significantly.
"""

from __future__ import annotations

import argparse
import os
import sys

from kweval.cli import runs_output as out
from kweval.cli.common import USAGE_ERROR, UsageError, comma_list, positive_int
from kweval.messages import say

FORMATS = ("text", "markdown", "json")


def add_parser(sub) -> None:
    """Register `runs` and its actions on the CLI's subparsers."""
    rp = sub.add_parser(
        "runs",
        help="the run history (kweval evaluate --record): list, show, compare, gate, export, delete, rerun",
        description="Recorded runs compared unit by unit with paired statistics (B − A, bootstrap CIs, randomization "
        "p, Holm within each family of metrics), and a regression gate for CI that fails only on a real, significant "
        "drop.",
    )
    actions = rp.add_subparsers(dest="action", metavar="ACTION", required=True)
    parsers = {
        "list": actions.add_parser("list", help="one row per recorded run, oldest first"),
        "show": actions.add_parser("show", help="a run's settings, identity and summary"),
        "compare": actions.add_parser("compare", help="run B against run A on the units both scored (B − A)"),
        "gate": actions.add_parser(
            "gate", help="exit 1 when the candidate dropped by more than allowed, significantly"
        ),
        "export": actions.add_parser("export", help="a run's tidy per-review table (CSV/Parquet), or to MLflow"),
        "delete": actions.add_parser("delete", help="remove a run and its per-review table"),
        "rerun": actions.add_parser("rerun", help="evaluate a run again and check its scores are the recorded ones"),
    }
    for name, parser in parsers.items():
        parser.add_argument("--runs", metavar="PATH", help="the runs database (default: $KWEVAL_RUNS or the cache's)")
        parser.add_argument("--format", choices=FORMATS, default="text", help="output format (default text)")
        if name in ("show", "export", "delete", "rerun"):
            parser.add_argument("run", help="run id (or a unique start of it) or name")
    parsers["compare"].add_argument("a", help="run A (the reference): id or name")
    parsers["compare"].add_argument("b", help="run B: id or name")
    parsers["gate"].add_argument("--baseline", required=True, help="the baseline run: id or name")
    parsers["gate"].add_argument("--candidate", required=True, help="the candidate run: id or name")
    parsers["gate"].add_argument(
        "--max-drop", type=float, default=0.0, help="the drop allowed before a significant one fails (default 0)"
    )
    for name in ("compare", "gate"):
        _add_comparison_options(parsers[name])
    parsers["export"].add_argument("--out", default="-", help="the table's file: .csv or .parquet (default stdout)")
    parsers["export"].add_argument("--mlflow", metavar="URI", help="log the run to this MLflow tracking URI instead")
    parsers["export"].add_argument("--experiment", help="the MLflow experiment (default MLflow's)")
    parsers["rerun"].add_argument("--record", action="store_true", help="record the new run in the same store")


def _add_comparison_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--metric",
        type=comma_list,
        action="extend",
        metavar="METRIC[,...]",
        help="the metrics compared, each Holm-corrected within its family (repeatable; default: compare every metric "
        "both runs hold, "
        "gate the key ones: F1@k, nDCG@k, weighted and semantic F1)",
    )
    parser.add_argument("--model", help="the model compared when a run holds several: NAME, or A_NAME:B_NAME")
    parser.add_argument(
        "--allow-different-data",
        action="store_true",
        help="compare runs of different data on the units both scored (said in the output)",
    )
    parser.add_argument("--top", type=positive_int, default=10, help="units listed most worse / most better (10)")
    parser.add_argument("--resamples", type=positive_int, default=2000, help="bootstrap resamples (default 2000)")


def cmd_runs(args: argparse.Namespace) -> int:
    """Run one `kweval runs` action; a RunsError is one line and exit 2."""
    from kweval.runs import RunsError, RunStore

    try:
        store = RunStore(args.runs)
        return ACTIONS[args.action](args, store)
    except RunsError as exc:
        say(exc.source, exc.reason)
        return USAGE_ERROR


def _list(args: argparse.Namespace, store) -> int:
    from kweval.runs import runs_table

    runs = store.runs()
    if args.format == "json":
        out.emit_json([r.as_dict() for r in runs])
    else:
        table = runs_table(runs)
        out.emit_table(table.assign(dataset_sha256=table["dataset_sha256"].str[:12]), args.format)
    if not runs and args.format != "json":
        say(f"no run recorded in {store.path} yet (kweval evaluate DATA --record)")
    return 0


def _show(args: argparse.Namespace, store) -> int:
    info = store.get(args.run)
    summary = store.summary([info.id])
    if args.format == "json":
        out.emit_json({**info.as_dict(), "summary": out.records(summary)})
    else:
        out.emit_run(info, summary, args.format)
    return 0


def _compare(args: argparse.Namespace, store) -> int:
    from kweval.runs import compare_runs

    comparison = compare_runs(
        store,
        store.get(args.a),
        store.get(args.b),
        metrics=args.metric,
        model=args.model,
        allow_different_data=args.allow_different_data,
        n_boot=args.resamples,
    )
    out.emit_comparison(comparison, args.format, args.top)
    return 0


def _gate(args: argparse.Namespace, store) -> int:
    from kweval.runs import compare_runs, gate
    from kweval.stats.headline import key_metrics

    baseline, candidate = store.get(args.baseline), store.get(args.candidate)
    if not 0.0 <= args.max_drop < 1.0:
        raise UsageError(f"--max-drop: {args.max_drop!r} is outside [0, 1)")
    metrics = args.metric
    if not metrics:
        common = [m for m in baseline.metrics if m in candidate.metrics]
        k = baseline.options.get("k", 5)
        metrics = key_metrics(common, int(k) if isinstance(k, int) else 5) or common
    comparison = compare_runs(
        store,
        baseline,
        candidate,
        metrics=metrics,
        model=args.model,
        allow_different_data=args.allow_different_data,
        n_boot=args.resamples,
    )
    result = gate(comparison, args.max_drop)
    out.emit_gate(comparison, result, args.format)
    return 1 if result.failed else 0


def _export(args: argparse.Namespace, store) -> int:
    from kweval.io.output import check_output_file
    from kweval.runs import log_to_mlflow, tidy_table, write_run_table

    info = store.get(args.run)
    if args.mlflow:
        mlflow_id = log_to_mlflow(info, store.scores(info), store.summary([info.id]), args.mlflow, args.experiment)
        say(f"run {info.id} logged to MLflow at {args.mlflow} (MLflow run {mlflow_id})")
        return 0
    if args.out == "-":
        out.emit_table(tidy_table(info, store.scores(info)), args.format, csv_for_text=True)
        return 0
    check_output_file(args.out)
    write_run_table(info, store.scores(info), args.out)
    say(f"run {info.id}: {info.n_rows:,} rows -> {args.out}")
    return 0


def _delete(args: argparse.Namespace, store) -> int:
    info = store.get(args.run)
    store.delete(info)
    say(f"deleted run {info.id} ({info.name})")
    return 0


def _rerun(args: argparse.Namespace, store) -> int:
    """Say what changed since the run (data, version) first, then evaluate with the recorded arguments into a
    scratch store (or this one, --record) and compare every score."""
    import tempfile

    from kweval import __version__
    from kweval.cli.cmd_evaluate import cmd_evaluate
    from kweval.cli.record import inputs_sha256
    from kweval.runs import RunStore, check_scores, what_differs

    info = store.get(args.run)
    if info.arguments is None:
        raise UsageError(f"run {info.id} was recorded from {info.data}, which cannot be read again; no rerun")
    parsed = _evaluate_arguments(info.arguments)
    predictions = dict(parsed.predictions or ())
    for line in what_differs(info, inputs_sha256(parsed.data, parsed.movies, predictions), __version__):
        say(f"run {info.id}", line)
    with tempfile.TemporaryDirectory() as scratch:
        target = str(store.path) if args.record else os.path.join(scratch, "rerun.sqlite")
        more = ["--out", os.devnull, "--quiet", f"--record={target}", "--run-name", f"rerun of {info.name}"]
        status = cmd_evaluate(_evaluate_arguments([*info.arguments, *more]))
        if status not in (0, 1):
            return status
        fresh = RunStore(target)
        new = fresh.runs()[-1]
        check = check_scores(store.scores(info), fresh.scores(new))
    if args.format == "json":
        out.emit_json({"run": info.id, "identical": check.identical, "sentence": check.sentence(), "new_run": new.id})
    else:
        print(f"run {info.id} ({out.plain(info.name)}): {check.sentence()}", file=sys.stdout)
    return 0 if check.identical else 1


def _evaluate_arguments(argv: list[str]) -> argparse.Namespace:
    """`kweval evaluate`'s parse of `argv` (a recorded run's arguments)."""
    from kweval.cli import cmd_evaluate

    parser = argparse.ArgumentParser(prog="kweval")
    cmd_evaluate.add_parser(parser.add_subparsers(dest="command"), "")
    return parser.parse_args(["evaluate", *argv])


ACTIONS = {
    "list": _list,
    "show": _show,
    "compare": _compare,
    "gate": _gate,
    "export": _export,
    "delete": _delete,
    "rerun": _rerun,
}
