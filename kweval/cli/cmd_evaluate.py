"""`kweval evaluate`: score every review × model and write the movie × model summary.

The lexical metrics of a dataset with a file per movie are shared out over
--jobs processes or a dask cluster (--scheduler); the output is the same.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from dataclasses import replace
from pathlib import Path

from kweval.cli import fast, judged, record
from kweval.cli.common import (
    DEFAULTS,
    THRESHOLD_FAILED,
    USAGE_ERROR,
    UsageError,
    add_beyond_options,
    add_cutoff_option,
    add_gt_order_option,
    add_match_option,
    add_predictions_argument,
    add_semantic_options,
    comma_list,
    eval_options,
    evaluate_args,
    jobs,
    positive_seconds,
    prediction_files,
    problem_lines,
    select,
    threshold,
)
from kweval.data.dataset import Dataset
from kweval.evaluation.missing import MISSING_MODES
from kweval.evaluation.pipeline import AGGREGATIONS, EvalOptions, Evaluation
from kweval.io.output import check_output_file, write_output
from kweval.messages import say
from kweval.metrics.ranking import DISCOUNTS, GAINS


def add_parser(sub, epilog: str) -> None:
    """Register `evaluate` on the CLI's subparsers."""
    ev = sub.add_parser(
        "evaluate",
        help="score models and print a movie × model summary with ALL rows",
        description="Score every review × model and print a movie × model summary (plus ALL rows).",
        epilog=epilog,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _add_data_and_metric_options(ev)
    _add_output_options(ev)
    _add_scale_options(ev)
    fast.add_evaluate_arguments(ev)
    judged.add_argument(ev)


def _add_data_and_metric_options(ev: argparse.ArgumentParser) -> None:
    """What is evaluated and how the numbers are made (`EvalOptions`), in --help's order."""
    ev.add_argument("data", nargs="?", help="dataset folder (default: the embedded demo)")
    ev.add_argument("--models", type=comma_list, help="comma-separated models to evaluate (default: all)")
    ev.add_argument("--movies", type=comma_list, help="comma-separated movies to evaluate (default: all)")
    add_cutoff_option(ev)
    ev.add_argument(
        "--aggregate",
        choices=AGGREGATIONS,
        default=None,  # macro; None tells --protocol that it was not given
        help="mean over reviews (macro, default) or ratio of sums (micro)",
    )
    add_match_option(ev)  # None when not given, which --protocol tells apart
    add_gt_order_option(ev)
    ev.add_argument("--gain", choices=GAINS, default=DEFAULTS.gain, help="nDCG gain (default linear)")
    ev.add_argument("--discount", choices=DISCOUNTS, default=DEFAULTS.discount, help="nDCG discount (default log2)")
    add_semantic_options(ev, adds="add sem_precision, sem_recall, sem_f1")
    ev.add_argument("--sentiment", action="store_true", help="add sas_keywords, sas_text (VADER)")
    add_beyond_options(ev)
    ev.add_argument(
        "--missing",
        choices=MISSING_MODES,
        default=DEFAULTS.missing,
        help="documents a model gave no predictions for: zero (score 0, counted: the field's rule), skip (left out, "
        "counted in n_skipped); default auto: zero on per-document ground truth, skip on movie-level GT",
    )
    add_predictions_argument(ev)
    ev.add_argument(
        "--keyphrase",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="add the keyphrase field's metrics r@k, f1@k (hard: P@k = hits/k), f1@k_flex (P@k = hits/min(k, |P|)), "
        "f1@M, f1@O, r_precision (default: on when the ground truth is per document)",
    )
    ev.add_argument(
        "--present",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="add recall_present, f1@k_present, recall_absent: GT keywords split by whether they occur in the "
        "review's own text under --match (default: on when the ground truth is per document)",
    )
    ev.add_argument(
        "--legacy",
        action="store_true",
        help="reproduce the seed notebooks' numbers, defects included (see docs/notebook-parity.md); each column "
        "keeps its notebook's own averaging, so --aggregate does not apply",
    )


def _add_output_options(ev: argparse.ArgumentParser) -> None:
    """Where and how the summary is written, and when the exit status fails, in --help's order."""
    ev.add_argument("--out", default="-", help="output file, or - for stdout (default)")
    ev.add_argument(
        "--format",
        choices=["csv", "markdown", "latex", "json"],
        help="output format (default: from --out's suffix, else csv)",
    )
    ev.add_argument(
        "--columns",
        type=comma_list,
        metavar="METRIC,...",
        help="LaTeX output: the metric columns to show, in order (default: all)",
    )
    ev.add_argument(
        "--ci",
        choices=["brackets", "pm"],
        help="LaTeX output: 95%% bootstrap interval after each value, as [low, high] (brackets) or ± half-width (pm)",
    )
    ev.add_argument(
        "--per-review",
        metavar="PATH",
        help="also write the per-review table (every metric and the matched pairs) as CSV",
    )
    ev.add_argument(
        "--fail-under",
        type=threshold,
        action="append",
        default=[],
        metavar="METRIC=VALUE",
        help="exit 1 if an ALL row's METRIC is below VALUE (repeatable)",
    )
    ev.add_argument(
        "--raw-csv",
        action="store_true",
        help="write CSV cells verbatim (default: text cells starting with = + - @ TAB or CR get a leading ' so "
        "spreadsheets do not run them as formulas)",
    )
    ev.add_argument("--quiet", action="store_true", help="do not print skipped/cleaned data messages")
    record.add_arguments(ev)


def _add_scale_options(ev: argparse.ArgumentParser) -> None:
    """Processes and dask clusters sharing out the movies (the output is the same), in --help's order."""
    ev.add_argument(
        "--jobs",
        type=jobs,
        default="auto",
        metavar="N",
        help="processes sharing the movies of a dataset with a file per movie (DNLP) for the lexical metrics "
        "(default auto: one per CPU core when the files exceed a few MB; 1: this process only); the output is the same",
    )
    ev.add_argument(
        "--scheduler",
        metavar="ADDRESS|local[:N]",
        help="evaluate movie partitions on a dask.distributed cluster (a scheduler address such as tcp://host:8786, "
        "or local[:N] for N local worker processes; needs kweval[dask]); --semantic embeds the keywords on the "
        "workers; the output is the same",
    )
    ev.add_argument(
        "--scheduler-timeout",
        type=positive_seconds,
        default=10.0,
        metavar="SECONDS",
        help="how long to wait for the dask scheduler's handshake (default 10)",
    )


def _latex_options(args: argparse.Namespace, summary, evaluation) -> dict:
    """`report.to_latex`'s column choice and intervals from --columns / --ci."""
    from kweval.io import report

    available = report.metric_columns(summary)
    columns = args.columns or available
    unknown = [c for c in columns if c not in available]
    if unknown:
        raise UsageError(f"--columns: unknown metric(s) {', '.join(unknown)} (available: {', '.join(available)})")
    if not args.ci:
        return {"columns": columns}
    if evaluation is None:
        raise UsageError("--ci needs the per-review scores, which legacy mode does not keep")
    return {
        "columns": columns,
        "ci": report.summary_intervals(evaluation.scores, columns, args.aggregate),
        "ci_style": args.ci,
    }


def cmd_evaluate(args: argparse.Namespace) -> int:
    """`kweval evaluate`: the summary (and --per-review table) of a dataset, or of a collection under --protocol."""
    if args.legacy and record.wanted(args):
        raise UsageError("--record keeps the per-review table, which legacy mode does not make")
    unusable = record.check(args)  # a damaged or foreign runs store: said before the work
    if unusable is not None:
        return unusable
    if fast.wants_protocol_path(args):
        return fast.evaluate_protocol(args)
    args.aggregate = args.aggregate or AGGREGATIONS[0]
    args.match = args.match or DEFAULTS.match
    options = _options(args)
    for out in (args.out, args.per_review):
        if out is not None:
            check_output_file(out)
    if args.scheduler is not None and (args.legacy or args.grounding or args.diversity):
        raise UsageError(
            "--scheduler evaluates the lexical, semantic and sentiment metrics; run --legacy, --grounding and "
            "--diversity without it"
        )
    judged.check_arguments(args)
    source, dataset, evaluation, options = _load_or_evaluate_in_groups(args, options)
    judged_tables = None
    if args.legacy:
        from kweval import legacy

        if args.fail_under:
            raise UsageError("--fail-under needs ALL rows, which legacy mode (like the notebooks) does not produce")
        assert dataset is not None  # legacy mode is never evaluated in groups (`_load_or_evaluate_in_groups`)
        summary, problems = legacy.legacy_summary(dataset, options)
        n_evaluated = int(summary["n_reviews"].sum()) if len(summary) else 0
        per_review = None
    else:
        from kweval.evaluation.aggregate import aggregate

        if evaluation is None:  # not evaluated in groups already
            assert dataset is not None
            evaluation = _evaluate(args, dataset, options)
        summary = aggregate(evaluation, args.aggregate)
        summary, judged_tables = judged.with_judgments(args, dataset, options, summary)
        problems = evaluation.problems
        n_evaluated = len(evaluation.scores)
        per_review = evaluation
    if not args.quiet:
        for line in problem_lines(problems):
            print(line, file=sys.stderr)
    if n_evaluated == 0:
        print("kweval: nothing could be evaluated (no review with both predictions and ground truth)", file=sys.stderr)
        return USAGE_ERROR
    card = _card(args, options, str(source), per_document=dataset is not None and dataset.per_document)
    _write_outputs(args, summary, per_review, options, card, _words(dataset), judged_tables)
    status = _check_thresholds(summary, args.fail_under, _words(dataset).review.lower())
    if record.wanted(args) and per_review is not None:
        per_document = dataset.per_document if dataset is not None else False  # in groups: DNLP, movie-level
        kept = summary[[c for c in summary.columns if not c.endswith("_judged") and c != "n_judgments"]]
        return record.record_evaluation(args, per_review, args.aggregate, card, per_document, kept) or status
    return status


def _options(args: argparse.Namespace) -> EvalOptions:
    """The evaluation's options from the command line (`common.eval_options`)."""
    return eval_options(args, keyphrase=bool(args.keyphrase), present=bool(args.present))


def _load_or_evaluate_in_groups(
    args: argparse.Namespace, options: EvalOptions
) -> tuple[str, Dataset | None, Evaluation | None, EvalOptions]:
    """(source, dataset, evaluation, options): the lexical metrics of a dataset with a file per movie evaluated in
    groups of movies (processes, or a dask cluster) when that applies, else the dataset loaded (its movies and models
    selected, the keyphrase options set from its GT) and no evaluation yet."""
    files = prediction_files(args)
    in_groups = None
    one_process = args.legacy or args.semantic or args.sentiment or args.grounding or args.diversity
    if args.scheduler is None and not (one_process or files or args.judgments):
        in_groups = _evaluate_in_groups(args, options)  # the lexical metrics: shared out over processes
    elif args.scheduler is not None and not files:  # workers read their own movie files when the layout has them
        in_groups = _evaluate_files_on_scheduler(args, options)
    if in_groups is not None:  # the match mode in force is the evaluation's ("auto" made the data's)
        return in_groups[0], None, in_groups[1], replace(options, match=in_groups[1].options.match)
    from kweval.data import load_dataset

    dataset = load_dataset(args.data, movies=args.movies, predictions=files)  # files of other movies are not read
    if args.movies and not set(args.movies) <= set(dataset.movie_ids):
        dataset = load_dataset(args.data, predictions=files)  # to say which movies there are
    options = _keyphrase_options(options, args, dataset)
    movies = select(dataset.movie_ids, args.movies, "movie(s)")
    models = select(dataset.model_names, args.models, "model(s)")
    dataset = dataset.subset(movies, models)
    if args.scheduler is not None:
        evaluation = _evaluate_on_scheduler(args.scheduler, dataset, options, args.scheduler_timeout)
        return dataset.source, dataset, evaluation, options
    return dataset.source, dataset, None, options


def _evaluate(args: argparse.Namespace, dataset: Dataset, options: EvalOptions) -> Evaluation:
    """`evaluate` in this process, with a progress bar for --semantic on a terminal; the per-keyword table only for
    --per-review (`common.evaluate_args`: an embedding model that cannot be loaded is a usage error)."""
    progress = None
    if (args.semantic or args.grounding or args.diversity) and not args.quiet and sys.stderr.isatty():
        progress = _tqdm_progress()
    return evaluate_args(args, dataset, options, progress=progress, keywords=bool(args.per_review))


def _words(dataset: Dataset | None):
    """The data's vocabulary (`kweval.data.vocabulary`); movie words when the movies were evaluated in groups (only a
    layout with a file per movie, DNLP, is: movie-level data)."""
    from kweval.data.vocabulary import MOVIE_WORDS, vocabulary

    return vocabulary(dataset) if dataset is not None else MOVIE_WORDS


def _write_outputs(
    args: argparse.Namespace, summary, per_review: Evaluation | None, options: EvalOptions, card: dict, words, judged
):
    """The summary (--out, --format, with its protocol card and sidecar, headers in the data's words) and the
    --per-review table."""
    from kweval.io import report
    from kweval.io.card import render_with_card as card_render
    from kweval.io.card import write_sidecar

    fmt = args.format or report.format_for_path(args.out)
    meta = {"data": card["data"], "aggregate": args.aggregate, "legacy": args.legacy, **options.as_dict()}
    latex = _latex_options(args, summary, per_review) if fmt == "latex" else {}
    write_output(card_render(summary, fmt, meta, card, raw_csv=args.raw_csv, words=words, **latex), args.out)
    write_sidecar(fmt, args.out, card)
    if args.per_review and per_review is not None:
        table = report.per_review_table(per_review)
        table = table if judged is None else judged.per_review(table)
        write_output(report.to_csv(table, raw=args.raw_csv), args.per_review)


def _evaluate_on_scheduler(spec: str, dataset, options: EvalOptions, timeout: float) -> Evaluation:
    """`evaluate` with the dataset's movies shared out over a dask cluster (kweval.scale.distributed), their rows sent
    from here."""
    from kweval.scale import distributed

    with _scheduler_client(spec, timeout) as client:
        return distributed.evaluate_on_cluster(client, dataset, options)


def _evaluate_files_on_scheduler(args: argparse.Namespace, options: EvalOptions) -> tuple[str, Evaluation] | None:
    """(dataset source, evaluation) of a dataset with a file per movie, each dask worker reading its own movie files;
    None when the layout has no file per movie, the workers do not see the same files, or a movie or model asked for
    is missing."""
    from kweval.scale import distributed, file_groups

    if not file_groups.movie_file_sizes(args.data, args.movies):
        return None
    with _scheduler_client(args.scheduler, args.scheduler_timeout) as client:
        return distributed.evaluate_files_on_cluster(
            client, args.data, options, movies=args.movies, models=args.models, keywords=bool(args.per_review)
        )


@contextlib.contextmanager
def _scheduler_client(spec: str, timeout: float):
    """distributed.connect(spec), with a bad spec, an unreachable or silent scheduler, or something else answering
    there (a web server) as a usage error."""
    from kweval.messages import shown
    from kweval.scale import distributed
    from kweval.scale.address import SchedulerAddressError

    try:
        distributed.parse_scheduler(spec)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    try:
        with distributed.connect(spec, timeout) as client:
            yield client
    except (distributed.EmbeddingError, SchedulerAddressError) as exc:  # a worker's model; no scheduler answers
        raise UsageError(f"--scheduler {shown(spec)}: {exc}") from None
    except OSError as exc:  # no scheduler at that address, or it went away
        raise UsageError(f"--scheduler {shown(spec)}: cannot reach the dask scheduler ({exc})") from None


def _keyphrase_options(options: EvalOptions, args: argparse.Namespace, dataset) -> EvalOptions:
    """The defaults that follow the data: for a dataset whose GT is per document the keyphrase and present/absent
    metrics are on and the match mode is the field's (`EvalOptions.for_data`: stem; approx on movie-level GT)."""
    per_document = dataset.per_document
    return replace(
        options.for_data(per_document),
        keyphrase=per_document if args.keyphrase is None else args.keyphrase,
        present=per_document if args.present is None else args.present,
    )


def _evaluate_in_groups(args: argparse.Namespace, options: EvalOptions) -> tuple[str, Evaluation] | None:
    """(dataset source, evaluation) of a dataset with a file per movie, its movie files shared out over --jobs
    processes.

    None when the layout, the size or --jobs 1 calls for one process, and when the
    groups' models differ or a movie or model asked for is missing (then one
    process evaluates everything, or reports the mistake); see kweval.scale.file_groups.
    """
    from functools import partial

    from kweval.scale import file_groups, parallel

    sizes = file_groups.movie_file_sizes(args.data, args.movies)
    if not sizes:
        return None
    jobs = parallel.auto_jobs(list(sizes.values())) if args.jobs == "auto" else min(args.jobs, len(sizes))
    if jobs < 2 or not parallel.can_fork():
        return None
    evaluate_group = partial(
        file_groups.evaluate_movie_files,
        path=args.data,
        options=options,
        models=args.models,
        keywords=bool(args.per_review),
    )
    parts = parallel.fork_map(evaluate_group, file_groups.movie_groups(sizes, jobs))
    return file_groups.combine_groups(parts, args.movies, args.models)


def threshold_failure(metric: str, value: float, minimum: float, review: str = "review") -> str:
    """Why `metric` = `value` fails --fail-under `minimum`: below it, or undefined (no value: said, not "nan")."""
    from kweval.metrics.undefined import reason

    if value != value:  # NaN
        why = reason(metric, review) or f"no {review} has a value"
        return f"{metric} is undefined (—: {why}), so it cannot meet {minimum}"
    return f"{metric} = {value:.6f} is below {minimum}"


def _check_thresholds(summary, thresholds: list[tuple[str, float]], review: str = "review") -> int:
    """THRESHOLD_FAILED when an ALL row's metric is below its --fail-under value (each said on stderr), else 0."""
    if not thresholds:
        return 0
    from kweval.evaluation.aggregate import ALL

    all_rows = summary[summary["movie"] == ALL]
    failed = False
    for metric, minimum in thresholds:
        if metric not in summary.columns:
            raise UsageError(f"--fail-under: unknown metric {metric!r} (available: {', '.join(summary.columns[4:])})")
        for _, row in all_rows.iterrows():
            value = row[metric]
            if not value >= minimum:  # an undefined value (NaN) cannot meet it either
                failed = True
                say(row["model"], threshold_failure(metric, value, minimum, review))
    return THRESHOLD_FAILED if failed else 0


def _tqdm_progress():
    """A progress bar on stderr for `evaluate(progress=...)` (stage, fraction done)."""
    from tqdm import tqdm

    bar = tqdm(total=100, desc="kweval", unit="%", file=sys.stderr)

    def update(stage: str, fraction: float) -> None:
        bar.set_description(stage)
        bar.n = int(100 * fraction)
        bar.refresh()
        if fraction >= 1.0:
            bar.close()

    return update


def _card(args: argparse.Namespace, options: EvalOptions, source: str, per_document: bool) -> dict[str, object]:
    """The protocol card of a `kweval evaluate` run under the kweval preset (on per-document GT or not: the match
    mode says why it is in force)."""
    from kweval.data import demo_path
    from kweval.io import card as cards

    folder = Path(args.data) if args.data else demo_path()
    predictions = [Path(p) for p in (prediction_files(args) or {}).values()]
    content = cards.dataset_hash(folder, args.movies, predictions) if folder.exists() else "unknown"
    return cards.evaluation_card(
        options,
        source,
        content,
        aggregation="legacy: each column as its notebook (docs/notebook-parity.md)" if args.legacy else args.aggregate,
        per_document=per_document,
    )
