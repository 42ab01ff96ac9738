"""The `kweval` command: the same numbers as the dashboard, for scripts and CI pipelines.

Exit status: 0 when something was evaluated; 1 when a --fail-under threshold
is not met; 2 for usage errors or when nothing could be evaluated.  Data
problems never raise: each is one line on stderr and the rest is evaluated.
Without --semantic nothing imports torch or sentence-transformers.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

from kweval import keyphrase_cli
from kweval.evaluate import AGGREGATIONS, GT_ORDERS, EvalOptions
from kweval.extras import MissingExtra, missing_extra
from kweval.matching import MATCH_MODES
from kweval.output import OutputError, check_output_file, check_output_folder, os_reason, write_output
from kweval.ranking import DISCOUNTS, GAINS

_DEFAULTS = EvalOptions()  # the CLI's defaults are the library's

if TYPE_CHECKING:
    from kweval.evaluate import Evaluation

USAGE_ERROR = 2
THRESHOLD_FAILED = 1

EPILOG_TEMPLATE = """\
DATA is a folder in the tidy layout (predictions.parquet|csv, ground_truth.parquet|csv,
optional reviews, movies, models) or the DNLP layout (Extracted_Keywords/kw_<Movie>.pkl,
keywords_ground_truth.pkl, optional Reviews_By_Movie/) or a keyphrase benchmark
(docsutf8/*.txt + keys/*.key: GT per document, unranked; predictions with
--predictions NAME=PATH); the layout is detected.
Without DATA the embedded demo dataset is used.

Metrics (docs/metrics.md; keyphrase ones need --keyphrase/--present, semantic ones --semantic, sentiment ones --sentiment):
{metrics}

Examples:
  kweval evaluate                                   # the demo, CSV on stdout
  kweval evaluate data/ --models base,reranker --format markdown
  kweval evaluate data/ --aggregate micro --out summary.csv --per-review reviews.csv
  kweval evaluate data/ --fail-under ndcg@5=0.3 --fail-under f1=0.1   # for CI
  kweval convert Dataset/ tidy/                     # DNLP pickles -> tidy Parquet
  kweval evaluate SemEval2017/ --predictions yake=yake.jsonl --predictions kb=kb.parquet
"""


def epilog() -> str:
    """The help's closing text, its metric list read from `kweval.registry`."""
    from kweval import registry

    return EPILOG_TEMPLATE.replace("{metrics}", registry.help_text())


class UsageError(Exception):
    """A mistake in the command line (exit 2)."""


def _latex_options(args: argparse.Namespace, summary, evaluation) -> dict:
    """`report.to_latex`'s column choice and intervals from --columns / --ci."""
    from kweval import report

    available = report.metric_columns(summary)
    columns = args.columns or available
    unknown = [c for c in columns if c not in available]
    if unknown:
        raise UsageError(f"--columns: unknown metric(s) {', '.join(unknown)} (available: {', '.join(available)})")
    if not args.ci:
        return {"columns": columns}
    if evaluation is None:
        raise UsageError("--ci needs the per-review scores, which legacy mode does not keep")
    return {"columns": columns, "ci": report.summary_intervals(evaluation.scores, columns, args.aggregate), "ci_style": args.ci}


def _comma_list(value: str) -> list[str]:
    items = [v.strip() for v in value.split(",") if v.strip()]
    if not items:
        raise argparse.ArgumentTypeError("expected a comma-separated list")
    return items


def _threshold(value: str) -> tuple[str, float]:
    metric, sep, number = value.partition("=")
    if not sep or not metric.strip():
        raise argparse.ArgumentTypeError(f"expected METRIC=VALUE, got {value!r}")
    try:
        minimum = float(number)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{number!r} is not a number") from None
    if not 0.0 <= minimum <= 1.0:  # also NaN and infinities: a threshold never or always met
        raise argparse.ArgumentTypeError(f"{metric.strip()}: {number.strip()!r} is outside [0, 1], where every metric lies")
    return metric.strip(), minimum


def _positive_int(value: str) -> int:
    try:
        k = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not an integer") from None
    if k < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return k


def _jobs(value: str) -> int | str:
    return value if value == "auto" else _positive_int(value)


def build_parser() -> argparse.ArgumentParser:
    from kweval import __version__

    parser = argparse.ArgumentParser(
        prog="kweval",
        description="Evaluate keyword-extraction models against ranked ground-truth keywords.",
        epilog=epilog(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"kweval {__version__}")
    from kweval.semantic import BACKENDS as EMBEDDING_BACKENDS  # numpy/pandas only; torch stays unimported
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    ev = sub.add_parser(
        "evaluate",
        help="score models and print a movie × model summary with ALL rows",
        description="Score every review × model and print a movie × model summary (plus ALL rows).",
        epilog=epilog(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ev.add_argument("data", nargs="?", help="dataset folder (default: the embedded demo)")
    ev.add_argument("--models", type=_comma_list, help="comma-separated models to evaluate (default: all)")
    ev.add_argument("--movies", type=_comma_list, help="comma-separated movies to evaluate (default: all)")
    ev.add_argument("--k", type=_positive_int, default=_DEFAULTS.k, help=f"cut-off of the ranking metrics (default {_DEFAULTS.k})")
    ev.add_argument("--aggregate", choices=AGGREGATIONS, default=AGGREGATIONS[0], help="mean over reviews (macro, default) or ratio of sums (micro)")
    ev.add_argument("--match", choices=MATCH_MODES, default=_DEFAULTS.match, help="keyword match mode (default approx: equal or substring)")
    ev.add_argument("--gt-order", choices=GT_ORDERS, default=_DEFAULTS.gt_order, help="GT rank: file order (default) or by helpful votes")
    ev.add_argument("--gain", choices=GAINS, default=_DEFAULTS.gain, help="nDCG gain (default linear)")
    ev.add_argument("--discount", choices=DISCOUNTS, default=_DEFAULTS.discount, help="nDCG discount (default log2)")
    ev.add_argument("--semantic", action="store_true", help="add sem_precision, sem_recall, sem_f1 (sentence embeddings, cached)")
    ev.add_argument("--threshold", type=float, default=_DEFAULTS.threshold, help=f"cosine threshold of the semantic metrics (default {_DEFAULTS.threshold})")
    ev.add_argument("--embedding-model", default=_DEFAULTS.embedding_model, help="sentence-transformers model id or local path")
    ev.add_argument("--embedding-backend", choices=EMBEDDING_BACKENDS, default=_DEFAULTS.embedding_backend,
                    help="how --semantic embeds: torch, onnx (ONNX Runtime, same vectors) or onnx-int8 (quantized, approximate)")
    ev.add_argument("--sentiment", action="store_true", help="add sas_keywords, sas_text (VADER)")
    _add_predictions_argument(ev)
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
    ev.add_argument("--legacy", action="store_true", help="reproduce the seed notebooks' numbers, defects included (see docs/notebook-parity.md); each column keeps its notebook's own averaging, so --aggregate does not apply")
    ev.add_argument("--out", default="-", help="output file, or - for stdout (default)")
    ev.add_argument("--format", choices=["csv", "markdown", "latex", "json"], help="output format (default: from --out's suffix, else csv)")
    ev.add_argument("--columns", type=_comma_list, metavar="METRIC,...", help="LaTeX output: the metric columns to show, in order (default: all)")
    ev.add_argument("--ci", choices=["brackets", "pm"], help="LaTeX output: 95%% bootstrap interval after each value, as [low, high] (brackets) or ± half-width (pm)")
    ev.add_argument("--per-review", metavar="PATH", help="also write the per-review table (every metric and the matched pairs) as CSV")
    ev.add_argument("--fail-under", type=_threshold, action="append", default=[], metavar="METRIC=VALUE", help="exit 1 if an ALL row's METRIC is below VALUE (repeatable)")
    ev.add_argument("--raw-csv", action="store_true", help="write CSV cells verbatim (default: text cells starting with = + - @ TAB or CR get a leading ' so spreadsheets do not run them as formulas)")
    ev.add_argument("--quiet", action="store_true", help="do not print skipped/cleaned data messages")
    ev.add_argument(
        "--jobs",
        type=_jobs,
        default="auto",
        metavar="N",
        help="processes sharing the movies of a dataset with a file per movie (DNLP) for the lexical metrics "
        "(default auto: one per CPU core when the files exceed a few MB; 1: this process only); the output is the same",
    )
    ev.add_argument(
        "--scheduler",
        metavar="ADDRESS|local[:N]",
        help="evaluate movie partitions on a dask.distributed cluster (a scheduler address such as tcp://host:8786, "
        "or local[:N] for N local worker processes; needs kweval[dask]); --semantic embeds the keywords on the workers; the output is the same",
    )

    keyphrase_cli.add_evaluate_arguments(ev)

    em = sub.add_parser("embed", help="precompute the embedding cache for a dataset (makes --semantic and the dashboard instant)")
    em.add_argument("data", nargs="?", help="dataset folder (default: the embedded demo)")
    em.add_argument("--embedding-model", default=_DEFAULTS.embedding_model, help="sentence-transformers model id or local path")
    em.add_argument("--embedding-backend", choices=EMBEDDING_BACKENDS, default=_DEFAULTS.embedding_backend, help="torch, onnx or onnx-int8")
    em.add_argument("--batch-size", type=_positive_int, default=256)

    ca = sub.add_parser("cache", help="inspect or clear the embedding cache (KWEVAL_CACHE_DIR)")
    ca.add_argument("action", choices=["info", "clear"])
    ca.add_argument("--embedding-model", help="with clear: only this model's store")

    cv = sub.add_parser("convert", help="convert a dataset (e.g. DNLP pickles) to the tidy layout")
    cv.add_argument("src", help="dataset folder (any layout)")
    cv.add_argument("dst", help="output folder")
    cv.add_argument("--format", choices=["parquet", "csv"], default="parquet")
    cv.add_argument("--raw-csv", action="store_true", help="with --format csv: write cells verbatim (default: text cells that a spreadsheet would run as formulas get a leading ')")
    _add_predictions_argument(cv)

    sy = sub.add_parser("synth", help="write a synthetic dataset (for benchmarks and tests)")
    sy.add_argument("out", help="output folder")
    sy.add_argument("--movies", type=_positive_int, default=6, help="number of movies (default 6)")
    sy.add_argument("--reviews-per-movie", type=_positive_int, default=1000, help="reviews per movie (default 1000)")
    sy.add_argument("--models", type=_positive_int, default=3, help="number of models (default 3)")
    sy.add_argument("--seed", type=int, default=0, help="random seed; the same seed gives the same dataset (default 0)")
    sy.add_argument("--layout", choices=["tidy", "dnlp"], default="tidy", help="tidy Parquet tables (default) or DNLP pickles")
    sy.add_argument("--gt", choices=["movie", "per-document"], default="movie", help="one ranked GT list per movie (default) or each review's own unranked GT (tidy layout)")
    keyphrase_cli.add_commands(sub)
    return parser


def _prediction_file(value: str) -> tuple[str, str]:
    from kweval.data.predictions import parse_spec

    try:
        name, path = parse_spec(value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return name, str(path)


def _add_predictions_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--predictions",
        type=_prediction_file,
        action="append",
        default=[],
        metavar="NAME=PATH",
        help="model NAME's predictions from a JSONL file ({\"id\": doc, \"keyphrases\": [...], \"scores\": [...]}; "
        "doc_id/predictions accepted too) or a tidy predictions .parquet/.csv; repeatable, any layout",
    )


def _prediction_files(args: argparse.Namespace) -> dict[str, str] | None:
    files = dict(args.predictions or ())
    if len(files) < len(args.predictions or ()):
        raise UsageError("--predictions: each NAME once")
    return files or None


def _problem_lines(problems) -> list[str]:
    return [f"kweval: {p.source}: {p.reason}" for p in problems]


def _select(available: list[str], wanted: list[str] | None, what: str) -> list[str] | None:
    if wanted is None:
        return None
    unknown = [w for w in wanted if w not in available]
    if unknown:
        raise UsageError(f"unknown {what}: {', '.join(unknown)} (available: {', '.join(available) or 'none'})")
    return wanted


def cmd_evaluate(args: argparse.Namespace) -> int:
    if keyphrase_cli.wants_protocol_path(args):
        return keyphrase_cli.evaluate_protocol(args)
    from kweval.data import load_dataset
    from kweval.evaluate import evaluate
    from kweval.aggregate import aggregate
    from kweval import report
    from kweval.card import render_with_card as card_render, write_sidecar

    try:
        options = EvalOptions(
            k=args.k,
            match=args.match,
            gt_order=args.gt_order,
            gain=args.gain,
            discount=args.discount,
            semantic=args.semantic,
            threshold=args.threshold,
            embedding_model=args.embedding_model,
            embedding_backend=args.embedding_backend,
            sentiment=args.sentiment,
            keyphrase=bool(args.keyphrase),
            present=bool(args.present),
        )
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    for out in (args.out, args.per_review):
        if out is not None:
            check_output_file(out)

    if args.scheduler is not None and args.legacy:
        raise UsageError("--scheduler evaluates the lexical, semantic and sentiment metrics; run --legacy without it")
    in_groups = None
    files = _prediction_files(args)
    if args.scheduler is None and not (args.legacy or args.semantic or args.sentiment or files):  # the lexical metrics: shared out over processes
        in_groups = _evaluate_in_groups(args, options)
    elif args.scheduler is not None and not files:  # workers read their own movie files when the layout has them
        in_groups = _evaluate_files_on_scheduler(args, options)
    if in_groups is not None:
        source, evaluation = in_groups
        dataset = None
    else:
        dataset = load_dataset(args.data, movies=args.movies, predictions=files)  # files of other movies are not read
        if args.movies and not set(args.movies) <= set(dataset.movie_ids):
            dataset = load_dataset(args.data, predictions=files)  # to say which movies there are
        options = _keyphrase_options(options, args, dataset)
        movies = _select(dataset.movie_ids, args.movies, "movie(s)")
        models = _select(dataset.model_names, args.models, "model(s)")
        dataset = dataset.subset(movies, models)
        source = dataset.source

    if args.legacy:
        from kweval import legacy

        if args.fail_under:
            raise UsageError("--fail-under needs ALL rows, which legacy mode (like the notebooks) does not produce")

        summary, problems = legacy.legacy_summary(dataset, options)
        n_evaluated = int(summary["n_reviews"].sum()) if len(summary) else 0
        per_review = None
    else:
        if dataset is not None and args.scheduler is not None:
            evaluation = _evaluate_on_scheduler(args.scheduler, dataset, options)
        elif dataset is not None:  # not evaluated in groups already
            progress = None
            if args.semantic and not args.quiet and sys.stderr.isatty():
                progress = _tqdm_progress()
            try:
                evaluation = evaluate(dataset, options, progress=progress)
            except (OSError, ImportError) as exc:
                if not args.semantic or isinstance(exc, ImportError) and missing_extra(exc, "") is not None:
                    raise  # main() names the extra to install
                raise UsageError(f"cannot load the embedding model {args.embedding_model!r}: {exc}") from None
        summary = aggregate(evaluation, args.aggregate)
        problems = evaluation.problems
        n_evaluated = len(evaluation.scores)
        per_review = evaluation

    if not args.quiet:
        for line in _problem_lines(problems):
            print(line, file=sys.stderr)
    if n_evaluated == 0:
        print("kweval: nothing could be evaluated (no review with both predictions and ground truth)", file=sys.stderr)
        return USAGE_ERROR

    fmt = args.format or report.format_for_path(args.out)
    meta = {"data": source, "aggregate": args.aggregate, "legacy": args.legacy, **options.as_dict()}
    latex = _latex_options(args, summary, per_review) if fmt == "latex" else {}
    card = keyphrase_cli.kweval_card(args, options, str(source))
    write_output(card_render(summary, fmt, meta, card, raw_csv=args.raw_csv, **latex), args.out)
    write_sidecar(fmt, args.out, card)
    if args.per_review and per_review is not None:
        write_output(report.to_csv(report.per_review_table(per_review), raw=args.raw_csv), args.per_review)

    return _check_thresholds(summary, args.fail_under)


def _evaluate_on_scheduler(spec: str, dataset, options: EvalOptions) -> Evaluation:
    """`evaluate` with the dataset's movies shared out over a dask cluster (kweval.distributed), their rows sent from here."""
    from kweval import distributed

    with _scheduler_client(spec) as client:
        return distributed.evaluate_on_cluster(client, dataset, options)


def _evaluate_files_on_scheduler(args: argparse.Namespace, options: EvalOptions) -> tuple[str, Evaluation] | None:
    """(dataset source, evaluation) of a dataset with a file per movie, each dask worker reading its own movie files;
    None when the layout has no file per movie, the workers do not see the same files, or a movie or model asked for is missing."""
    from kweval import distributed, file_groups

    if not file_groups.movie_file_sizes(args.data, args.movies):
        return None
    with _scheduler_client(args.scheduler) as client:
        return distributed.evaluate_files_on_cluster(
            client, args.data, options, movies=args.movies, models=args.models, keywords=bool(args.per_review)
        )


@contextlib.contextmanager
def _scheduler_client(spec: str):
    """distributed.connect(spec), with a bad spec or an unreachable scheduler as a usage error."""
    from kweval import distributed

    try:
        distributed.parse_scheduler(spec)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    try:
        with distributed.connect(spec) as client:
            yield client
    except distributed.EmbeddingError as exc:  # a worker could not load the embedding model
        raise UsageError(f"--scheduler {spec}: {exc}") from None
    except OSError as exc:  # no scheduler at that address, or it went away
        raise UsageError(f"--scheduler {spec}: cannot reach the dask scheduler ({exc})") from None


def _keyphrase_options(options: EvalOptions, args: argparse.Namespace, dataset) -> EvalOptions:
    """The keyphrase and present/absent metrics default to on for a dataset whose GT is per document."""
    from dataclasses import replace

    per_document = dataset.per_document
    return replace(
        options,
        keyphrase=per_document if args.keyphrase is None else args.keyphrase,
        present=per_document if args.present is None else args.present,
    )


def _evaluate_in_groups(args: argparse.Namespace, options: EvalOptions) -> tuple[str, Evaluation] | None:
    """(dataset source, evaluation) of a dataset with a file per movie, its movie files shared out over --jobs processes.

    None when the layout, the size or --jobs 1 calls for one process, and when the
    groups' models differ or a movie or model asked for is missing (then one
    process evaluates everything, or reports the mistake); see kweval.file_groups.
    """
    from functools import partial

    from kweval import file_groups, parallel

    sizes = file_groups.movie_file_sizes(args.data, args.movies)
    if not sizes:
        return None
    jobs = parallel.auto_jobs(list(sizes.values())) if args.jobs == "auto" else min(args.jobs, len(sizes))
    if jobs < 2 or not parallel.can_fork():
        return None
    evaluate_group = partial(file_groups.evaluate_movie_files, path=args.data, options=options, models=args.models,
                             keywords=bool(args.per_review))
    parts = parallel.fork_map(evaluate_group, file_groups.movie_groups(sizes, jobs))
    return file_groups.combine_groups(parts, args.movies, args.models)


def _check_thresholds(summary, thresholds: list[tuple[str, float]]) -> int:
    if not thresholds:
        return 0
    from kweval.aggregate import ALL

    all_rows = summary[summary["movie"] == ALL]
    failed = False
    for metric, minimum in thresholds:
        if metric not in summary.columns:
            raise UsageError(f"--fail-under: unknown metric {metric!r} (available: {', '.join(summary.columns[4:])})")
        for _, row in all_rows.iterrows():
            value = row[metric]
            if not value >= minimum:  # NaN fails too
                failed = True
                print(f"kweval: {row['model']}: {metric} = {value:.6f} is below {minimum}", file=sys.stderr)
    return THRESHOLD_FAILED if failed else 0


def _tqdm_progress():
    from tqdm import tqdm

    bar = tqdm(total=100, desc="kweval", unit="%", file=sys.stderr)

    def update(stage: str, fraction: float) -> None:
        bar.set_description(stage)
        bar.n = int(100 * fraction)
        bar.refresh()
        if fraction >= 1.0:
            bar.close()

    return update


def cmd_convert(args: argparse.Namespace) -> int:
    from kweval.data import load_dataset
    from kweval.data.tidy import write_tidy

    check_output_folder(args.dst)
    dataset = load_dataset(args.src, predictions=_prediction_files(args))
    for line in _problem_lines(dataset.problems):
        print(line, file=sys.stderr)
    if dataset.predictions.empty:
        print(f"kweval: {args.src}: no predictions could be read; nothing written", file=sys.stderr)
        return USAGE_ERROR
    if args.format == "csv" and not args.raw_csv:
        dataset = _without_formulas(dataset)
    try:
        written = write_tidy(dataset, Path(args.dst), args.format)
    except OSError as exc:  # (pyarrow's write errors are OSErrors too)
        raise OutputError(args.dst, f"writing failed ({os_reason(exc)})") from None
    for path in written:
        print(path)
    return 0


def _without_formulas(dataset):
    """The dataset with every table's formula-like text cells neutralised (kweval.report.neutralise_formulas)."""
    import dataclasses

    from kweval.report import neutralise_formulas

    tables = ("movies", "reviews", "predictions", "ground_truth", "models")
    return dataclasses.replace(dataset, **{name: neutralise_formulas(getattr(dataset, name)) for name in tables})


def cmd_embed(args: argparse.Namespace) -> int:
    from kweval.data import load_dataset
    from kweval.evaluate import clean_ground_truth
    from kweval.text import normalize
    from kweval import semantic
    from kweval.cache import EmbeddingStore

    dataset = load_dataset(args.data)
    for line in _problem_lines(dataset.problems):
        print(line, file=sys.stderr)
    keywords = dataset.predictions["keyword"].dropna().unique().tolist()
    texts = [normalize(k) for k in keywords if isinstance(k, str)]
    texts += clean_ground_truth(dataset.ground_truth)["norm"].tolist()
    texts = [t for t in dict.fromkeys(texts) if t]
    backend, precision = semantic.variant(args.embedding_backend)
    store = EmbeddingStore(args.embedding_model, backend=backend, precision=precision,
                           on_note=lambda note: print(f"kweval: embedding cache: {note}", file=sys.stderr))
    progress = _tqdm_counter(len(texts)) if sys.stderr.isatty() else None
    semantic.embed_texts(texts, model_id=args.embedding_model, store=store, batch_size=args.batch_size,
                         progress=progress, backend=args.embedding_backend)
    print(f"{len(texts)} keyword(s): {store.hits} already cached, {store.misses} embedded; store {store.path}")
    return 0


def _tqdm_counter(total: int):
    from tqdm import tqdm

    bar = tqdm(total=total, desc="embedding", unit="kw", file=sys.stderr)

    def update(done: int, _total: int) -> None:
        bar.n = done
        bar.refresh()
        if done >= _total:
            bar.close()

    return update


def cmd_cache(args: argparse.Namespace) -> int:
    from kweval.cache import cache_clear, cache_dir, cache_info, describe

    if args.action == "clear":
        removed = cache_clear(model_id=args.embedding_model)
        print(f"removed {removed} store(s) from {cache_dir()}")
        return 0
    stores = cache_info()
    print(f"cache directory: {cache_dir()}")
    if not stores:
        print("no embedding store yet (run `kweval embed DATA`)")
    for info in stores:
        print(describe(info))
    return 0


def cmd_synth(args: argparse.Namespace) -> int:
    import time

    from kweval.synth import synthesize, write_synthetic

    check_output_folder(args.out)
    start = time.perf_counter()
    if args.gt != "movie" and args.layout != "tidy":
        raise UsageError("--gt per-document needs --layout tidy (the DNLP layout has one GT list per movie)")
    dataset = synthesize(args.movies, args.reviews_per_movie, args.models, seed=args.seed, gt=args.gt)
    made = time.perf_counter()
    written = write_synthetic(dataset, Path(args.out), args.layout)
    done = time.perf_counter()
    for path in written:
        print(path)
    print(
        f"kweval: synth: {len(dataset.reviews)} review(s), {len(dataset.models)} model(s), "
        f"{len(dataset.predictions)} prediction row(s), {len(dataset.ground_truth)} GT keyword(s) "
        f"({args.layout}; generated in {made - start:.1f} s, written in {done - made:.1f} s)",
        file=sys.stderr,
    )
    return 0


COMMANDS = {"evaluate": cmd_evaluate, "convert": cmd_convert, "embed": cmd_embed, "cache": cmd_cache, "synth": cmd_synth, "extract": keyphrase_cli.cmd_extract, "export": keyphrase_cli.cmd_export}


def main(argv: list[str] | None = None) -> int:
    from kweval.data import DatasetError

    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return USAGE_ERROR
    try:
        return COMMANDS[args.command](args)
    except (UsageError, DatasetError, keyphrase_cli.KeyphraseUsageError) as exc:
        print(f"kweval: error: {exc}", file=sys.stderr)
        return USAGE_ERROR
    except (MissingExtra, OutputError) as exc:  # an optional feature without its extra, or an unusable output path
        print(f"kweval: {exc}", file=sys.stderr)
        return USAGE_ERROR
    except ImportError as exc:  # an optional package imported directly (not through extras.require)
        missing = missing_extra(exc, args.command)
        if missing is None:
            raise
        print(f"kweval: {missing}", file=sys.stderr)
        return USAGE_ERROR
    except BrokenPipeError:  # e.g. `kweval evaluate | head`
        return 0


def run() -> NoReturn:
    """The `kweval` console script and `python -m kweval`: `main()` in a process of its own, then exit."""
    # The cyclic GC's full passes walk every live object.  Freezing moves the
    # imported modules (pandas alone is ~100k objects, none of them garbage)
    # into a generation it never walks.
    gc.freeze()
    exit_without_teardown(main())


def exit_without_teardown(status: int) -> NoReturn:
    """Flush the standard streams and end the process, skipping the interpreter's teardown.

    Everything kweval writes is closed by the time `main()` returns (output
    files, the embedding store's connection), so the teardown would only free,
    one by one, the objects of the tables just evaluated (≈60 ms of a DNLP
    evaluation), and the OS frees them at once.  mypy ends its runs the same
    way.  Not for `main()` called in-process: only the console script uses it.
    """
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (BrokenPipeError, ValueError):  # a reader that went away (`| head`), a closed stream
            pass
        except OSError as exc:  # e.g. stdout on a full device
            name = "stdout" if stream is sys.stdout else "stderr"
            try:
                sys.stderr.write(f"kweval: {name}: writing failed ({os_reason(exc)})\n")
                sys.stderr.flush()
            except (OSError, ValueError):
                pass
            status = USAGE_ERROR
    os._exit(status)


if __name__ == "__main__":  # pragma: no cover
    run()
