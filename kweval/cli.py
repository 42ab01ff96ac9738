"""The `kweval` command: the same numbers as the dashboard, for scripts and CI pipelines.

Exit status: 0 when something was evaluated; 1 when a --fail-under threshold
is not met; 2 for usage errors or when nothing could be evaluated.  Data
problems never raise: each is one line on stderr and the rest is evaluated.
Without --semantic nothing imports torch or sentence-transformers.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

USAGE_ERROR = 2
THRESHOLD_FAILED = 1

EPILOG = """\
DATA is a folder in the tidy layout (predictions.parquet|csv, ground_truth.parquet|csv,
optional reviews, movies, models) or the DNLP layout (Extracted_Keywords/kw_<Movie>.pkl,
keywords_ground_truth.pkl, optional Reviews_By_Movie/); the layout is detected.
Without DATA the embedded demo dataset is used.

Metrics (METRICS.md): precision recall f1 w_precision w_recall w_f1 ndcg@k p@k ap@k rr
gt_coverage; with --semantic sem_precision sem_recall sem_f1; with --sentiment
sas_keywords sas_text.

Examples:
  kweval evaluate                                   # the demo, CSV on stdout
  kweval evaluate data/ --models base,reranker --format markdown
  kweval evaluate data/ --aggregate micro --out summary.csv --per-review reviews.csv
  kweval evaluate data/ --fail-under ndcg@5=0.3 --fail-under f1=0.1   # for CI
  kweval convert Dataset/ tidy/                     # DNLP pickles -> tidy Parquet
"""


class UsageError(Exception):
    """A mistake in the command line (exit 2)."""


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
        return metric.strip(), float(number)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{number!r} is not a number") from None


def _positive_int(value: str) -> int:
    try:
        k = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not an integer") from None
    if k < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return k


def build_parser() -> argparse.ArgumentParser:
    from kweval import __version__

    parser = argparse.ArgumentParser(
        prog="kweval",
        description="Evaluate keyword-extraction models against ranked ground-truth keywords.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"kweval {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    ev = sub.add_parser(
        "evaluate",
        help="score models and print a movie × model summary with ALL rows",
        description="Score every review × model and print a movie × model summary (plus ALL rows).",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ev.add_argument("data", nargs="?", help="dataset folder (default: the embedded demo)")
    ev.add_argument("--models", type=_comma_list, help="comma-separated models to evaluate (default: all)")
    ev.add_argument("--movies", type=_comma_list, help="comma-separated movies to evaluate (default: all)")
    ev.add_argument("--k", type=_positive_int, default=5, help="cut-off of the ranking metrics (default 5)")
    ev.add_argument("--aggregate", choices=["macro", "micro"], default="macro", help="mean over reviews (macro, default) or ratio of sums (micro)")
    ev.add_argument("--match", choices=["approx", "exact", "word", "stem"], default="approx", help="keyword match mode (default approx: equal or substring)")
    ev.add_argument("--gt-order", choices=["file", "helpful"], default="file", help="GT rank: file order (default) or by helpful votes")
    ev.add_argument("--gain", choices=["linear", "exponential"], default="linear", help="nDCG gain (default linear)")
    ev.add_argument("--discount", choices=["log2", "jarvelin"], default="log2", help="nDCG discount (default log2)")
    ev.add_argument("--semantic", action="store_true", help="add sem_precision, sem_recall, sem_f1 (sentence embeddings, cached)")
    ev.add_argument("--threshold", type=float, default=0.75, help="cosine threshold of the semantic metrics (default 0.75)")
    ev.add_argument("--embedding-model", default="all-MiniLM-L6-v2", help="sentence-transformers model id or local path")
    ev.add_argument("--sentiment", action="store_true", help="add sas_keywords, sas_text (VADER)")
    ev.add_argument("--legacy", action="store_true", help="reproduce the seed notebooks' numbers, defects included (see docs/notebook-parity.md)")
    ev.add_argument("--out", default="-", help="output file, or - for stdout (default)")
    ev.add_argument("--format", choices=["csv", "markdown", "latex", "json"], help="output format (default: from --out's suffix, else csv)")
    ev.add_argument("--per-review", metavar="PATH", help="also write the per-review table (every metric and the matched pairs) as CSV")
    ev.add_argument("--fail-under", type=_threshold, action="append", default=[], metavar="METRIC=VALUE", help="exit 1 if an ALL row's METRIC is below VALUE (repeatable)")
    ev.add_argument("--quiet", action="store_true", help="do not print skipped/cleaned data messages")

    cv = sub.add_parser("convert", help="convert a dataset (e.g. DNLP pickles) to the tidy layout")
    cv.add_argument("src", help="dataset folder (any layout)")
    cv.add_argument("dst", help="output folder")
    cv.add_argument("--format", choices=["parquet", "csv"], default="parquet")
    return parser


def _problem_lines(problems) -> list[str]:
    return [f"kweval: skipped {p.source}: {p.reason}" for p in problems]


def _select(available: list[str], wanted: list[str] | None, what: str) -> list[str] | None:
    if wanted is None:
        return None
    unknown = [w for w in wanted if w not in available]
    if unknown:
        raise UsageError(f"unknown {what}: {', '.join(unknown)} (available: {', '.join(available) or 'none'})")
    return wanted


def _write(text: str, out: str) -> None:
    if out == "-":
        sys.stdout.write(text)
    else:
        Path(out).parent.mkdir(parents=True, exist_ok=True)
        Path(out).write_text(text, encoding="utf-8")


def cmd_evaluate(args: argparse.Namespace) -> int:
    from kweval.data import load_dataset
    from kweval.evaluate import EvalOptions, evaluate
    from kweval.aggregate import aggregate
    from kweval import report

    dataset = load_dataset(args.data)
    movies = _select(dataset.movie_ids, args.movies, "movie(s)")
    models = _select(dataset.model_names, args.models, "model(s)")
    dataset = dataset.subset(movies, models)
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
            sentiment=args.sentiment,
        )
    except ValueError as exc:
        raise UsageError(str(exc)) from None

    if args.legacy:
        from kweval import legacy

        summary, problems = legacy.legacy_summary(dataset, options)
        n_evaluated = int(summary["n_reviews"].sum()) if len(summary) else 0
        per_review = None
    else:
        progress = None
        if args.semantic and not args.quiet and sys.stderr.isatty():
            progress = _tqdm_progress()
        evaluation = evaluate(dataset, options, progress=progress)
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
    meta = {"data": dataset.source, "aggregate": args.aggregate, "legacy": args.legacy, **options.as_dict()}
    _write(report.render(summary, fmt, meta), args.out)
    if args.per_review and per_review is not None:
        _write(report.to_csv(report.per_review_table(per_review)), args.per_review)

    return _check_thresholds(summary, args.fail_under)


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

    dataset = load_dataset(args.src)
    for line in _problem_lines(dataset.problems):
        print(line, file=sys.stderr)
    if dataset.predictions.empty:
        print(f"kweval: {args.src}: no predictions could be read; nothing written", file=sys.stderr)
        return USAGE_ERROR
    written = write_tidy(dataset, Path(args.dst), args.format)
    for path in written:
        print(path)
    return 0


COMMANDS = {"evaluate": cmd_evaluate, "convert": cmd_convert}


def main(argv: list[str] | None = None) -> int:
    from kweval.data import DatasetError

    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return USAGE_ERROR
    try:
        return COMMANDS[args.command](args)
    except (UsageError, DatasetError) as exc:
        print(f"kweval: error: {exc}", file=sys.stderr)
        return USAGE_ERROR
    except BrokenPipeError:  # e.g. `kweval evaluate | head`
        return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
