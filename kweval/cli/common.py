"""What every `kweval` command shares: exit statuses, usage errors, argument types, the help's epilog."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from kweval.evaluation.pipeline import EvalOptions

DEFAULTS = EvalOptions()  # the CLI's defaults are the library's

USAGE_ERROR = 2
THRESHOLD_FAILED = 1

EPILOG_TEMPLATE = """\
DATA is a folder in the tidy layout (predictions.parquet|csv, ground_truth.parquet|csv,
optional reviews, movies, models) or the DNLP layout (Extracted_Keywords/kw_<Movie>.pkl,
keywords_ground_truth.pkl, optional Reviews_By_Movie/) or a keyphrase benchmark
(docsutf8/*.txt + keys/*.key: GT per document, unranked; predictions with
--predictions NAME=PATH); the layout is detected.
Without DATA the embedded demo dataset is used.

Metrics (docs/metrics.md; keyphrase ones need --keyphrase/--present, semantic ones --semantic, sentiment ones \
--sentiment, grounding and diversity ones --grounding/--diversity):
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
    """The help's closing text, its metric list read from `kweval.metrics.registry`."""
    from kweval.metrics import registry

    return EPILOG_TEMPLATE.replace("{metrics}", registry.help_text())


class UsageError(Exception):
    """A mistake in the command line (exit 2)."""


def comma_list(value: str) -> list[str]:
    """argparse type of A,B,C."""
    items = [v.strip() for v in value.split(",") if v.strip()]
    if not items:
        raise argparse.ArgumentTypeError("expected a comma-separated list")
    return items


def threshold(value: str) -> tuple[str, float]:
    """argparse type of METRIC=VALUE with VALUE within [0, 1] (--fail-under)."""
    metric, sep, number = value.partition("=")
    if not sep or not metric.strip():
        raise argparse.ArgumentTypeError(f"expected METRIC=VALUE, got {value!r}")
    try:
        minimum = float(number)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{number!r} is not a number") from None
    if not 0.0 <= minimum <= 1.0:  # also NaN and infinities: a threshold never or always met
        raise argparse.ArgumentTypeError(
            f"{metric.strip()}: {number.strip()!r} is outside [0, 1], where every metric lies"
        )
    return metric.strip(), minimum


def positive_seconds(value: str) -> float:
    """argparse type of a time limit: a finite number of seconds > 0."""
    try:
        seconds = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a number of seconds") from None
    if not 0 < seconds < 86400 * 365:
        raise argparse.ArgumentTypeError("must be a number of seconds above 0")
    return seconds


def positive_int(value: str) -> int:
    """argparse type of an integer ≥ 1."""
    try:
        k = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not an integer") from None
    if k < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return k


def jobs(value: str) -> int | str:
    """argparse type of --jobs: auto or an integer ≥ 1."""
    return value if value == "auto" else positive_int(value)


def prediction_file(value: str) -> tuple[str, str]:
    """argparse type of --predictions NAME=PATH."""
    from kweval.data.predictions import parse_spec

    try:
        name, path = parse_spec(value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return name, str(path)


def add_predictions_argument(parser: argparse.ArgumentParser) -> None:
    """--predictions NAME=PATH, the same on every command that reads a dataset."""
    parser.add_argument(
        "--predictions",
        type=prediction_file,
        action="append",
        default=[],
        metavar="NAME=PATH",
        help='model NAME\'s predictions from a JSONL file ({"id": doc, "keyphrases": [...], "scores": [...]}; '
        "doc_id/predictions accepted too) or a tidy predictions .parquet/.csv; repeatable, any layout",
    )


def prediction_files(args: argparse.Namespace) -> dict[str, str] | None:
    """{model: path} of the --predictions options (None without any); each NAME once."""
    files = dict(args.predictions or ())
    if len(files) < len(args.predictions or ()):
        names = [name for name, _ in args.predictions]
        twice = sorted({n for n in names if names.count(n) > 1})
        raise UsageError(f"--predictions: NAME {', '.join(twice)} given more than once; each NAME once")
    return files or None


def problem_lines(problems) -> list[str]:
    """The one `kweval: SOURCE: REASON` line of each data problem, user strings escaped (`kweval.messages`)."""
    from kweval.messages import problem_line

    return [problem_line(p) for p in problems]


def select(available: list[str], wanted: list[str] | None, what: str) -> list[str] | None:
    """`wanted` when all of it is `available` (None when nothing was asked for); else a UsageError naming the rest."""
    if wanted is None:
        return None
    unknown = [w for w in wanted if w not in available]
    if unknown:
        raise UsageError(f"unknown {what}: {', '.join(unknown)} (available: {', '.join(available) or 'none'})")
    return wanted


# The EvalOptions fields a command's parser may carry under the same name (`eval_options` reads those it has).
OPTION_ARGS = (
    "k",
    "match",
    "gt_order",
    "gain",
    "discount",
    "semantic",
    "threshold",
    "embedding_model",
    "embedding_backend",
    "sentiment",
    "missing",
    "grounding",
    "grounding_threshold",
    "diversity",
)


def eval_options(args: argparse.Namespace, **fixed: object) -> EvalOptions:
    """The evaluation's options from the arguments a command's parser has (`OPTION_ARGS`, None: the default) and
    `fixed` ones; a value `EvalOptions` refuses is a usage error (one line), never a traceback."""
    given = {name: getattr(args, name) for name in OPTION_ARGS if getattr(args, name, None) is not None}
    try:
        return EvalOptions(**{**given, **fixed})
    except ValueError as exc:
        raise UsageError(str(exc)) from None


# The option-adding helpers of the options every evaluating command shares: one name, one help, one default each.
def add_cutoff_option(parser: argparse.ArgumentParser, what: str = "cut-off of the ranking metrics") -> None:
    """--k, an integer ≥ 1 (default the library's)."""
    parser.add_argument("--k", type=positive_int, default=DEFAULTS.k, help=f"{what} (default {DEFAULTS.k})")


def add_match_option(parser: argparse.ArgumentParser) -> None:
    """--match; None when not given (the library's default then; `kweval evaluate --protocol` tells it apart)."""
    from kweval.text.matching import MATCH_MODES

    parser.add_argument(
        "--match",
        choices=MATCH_MODES,
        default=None,
        help="keyword match mode (default: stem on per-document ground truth, the keyphrase field's exact match of "
        "Porter stems; approx, equal or substring, on movie-level GT, the seed notebooks' rule)",
    )


def add_semantic_options(parser: argparse.ArgumentParser, adds: str) -> None:
    """--semantic (`adds`: what it adds), --threshold, --embedding-model and --embedding-backend."""
    parser.add_argument("--semantic", action="store_true", help=f"{adds} (sentence embeddings, cached)")
    parser.add_argument(
        "--threshold",
        type=float,
        default=DEFAULTS.threshold,
        help=f"cosine threshold τ of the semantic metrics (default {DEFAULTS.threshold})",
    )
    add_embedding_options(parser, "how --semantic embeds: ")


def add_embedding_options(parser: argparse.ArgumentParser, backend_lead: str = "") -> None:
    """--embedding-model and --embedding-backend (`backend_lead` opens the backend's help)."""
    from kweval.evaluation.options import EMBEDDING_BACKENDS

    parser.add_argument(
        "--embedding-model", default=DEFAULTS.embedding_model, help="sentence-transformers model id or local path"
    )
    parser.add_argument(
        "--embedding-backend",
        choices=EMBEDDING_BACKENDS,
        default=DEFAULTS.embedding_backend,
        help=f"{backend_lead}auto (default: onnx on the CPU, torch on a GPU), torch, onnx (ONNX Runtime, "
        "same vectors) or onnx-int8 (quantized, approximate)",
    )


def add_view_options(parser: argparse.ArgumentParser, protocols: Sequence[str], protocol_help: str) -> None:
    """The options that choose a view of the data, as the dashboard's sidebar does (`report`, `compare`): --models,
    --movies, --k, --match, --aggregate, the semantic options, --sentiment, --grounding/--diversity and --protocol
    (one of `protocols`)."""
    from kweval.evaluation.pipeline import AGGREGATIONS

    parser.add_argument("--models", type=comma_list, help="comma-separated models (default: all)")
    parser.add_argument("--movies", type=comma_list, help="comma-separated movies / collections (default: all)")
    add_cutoff_option(parser)
    add_match_option(parser)
    parser.add_argument("--aggregate", choices=AGGREGATIONS, default=AGGREGATIONS[0], help="macro (default) or micro")
    add_semantic_options(parser, adds="add the semantic metrics")
    parser.add_argument("--sentiment", action="store_true", help="add the sentiment metrics (VADER)")
    add_beyond_options(parser)
    parser.add_argument("--protocol", choices=list(protocols), default=protocols[0], help=protocol_help)


def add_beyond_options(parser: argparse.ArgumentParser) -> None:
    """--grounding, --grounding-threshold and --diversity: the metrics beyond the reference list (§12)."""
    parser.add_argument(
        "--grounding",
        action="store_true",
        help="add grounded_present, grounded_supported, unsupported: each prediction graded present (in the text), "
        "supported (its words in one sentence, or cosine ≥ τ_g to a sentence or phrase) or unsupported "
        "(sentence embeddings, cached; docs/metrics.md §12)",
    )
    parser.add_argument(
        "--grounding-threshold",
        type=float,
        default=DEFAULTS.grounding_threshold,
        metavar="TAU_G",
        help=f"cosine τ_g at which a sentence or phrase of the text supports a prediction (default "
        f"{DEFAULTS.grounding_threshold})",
    )
    parser.add_argument(
        "--diversity",
        action="store_true",
        help="add dup_token_ratio, self_similarity: KPEval's diversity of each list as given (all-MiniLM-L6-v2)",
    )


def add_gt_order_option(parser: argparse.ArgumentParser) -> None:
    """--gt-order: the GT list's rank, file order (default) or by helpful votes."""
    from kweval.evaluation.options import GT_ORDERS

    parser.add_argument(
        "--gt-order",
        choices=GT_ORDERS,
        default=DEFAULTS.gt_order,
        help="GT rank: file order (default) or by helpful votes",
    )


def evaluate_args(args: argparse.Namespace, dataset, options: EvalOptions, progress=None, keywords: bool = True):
    """`evaluate(dataset, options)` for a command: an embedding model that cannot be loaded under --semantic is a
    usage error (one line); a missing extra goes on to main(), which names the extra to install."""
    from kweval.evaluation.pipeline import evaluate
    from kweval.extras import missing_extra

    try:
        return evaluate(dataset, options, progress=progress, keywords=keywords)
    except (OSError, ImportError) as exc:
        embeds = options.semantic or options.grounding or options.diversity
        if not embeds or isinstance(exc, ImportError) and missing_extra(exc, "") is not None:
            raise
        raise UsageError(f"cannot load the embedding model {options.embedding_model!r}: {exc}") from None
