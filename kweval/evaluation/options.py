"""What an evaluation is asked (`EvalOptions`) and what it gives (`Evaluation`).

`EvalOptions` holds everything that changes a number and checks it once, when
it is made: every stage after it trusts `k`, the match mode, the GT order, the
gain, the discount and τ.  `Evaluation` is the result of
`kweval.evaluation.pipeline.evaluate`: the per-review table (the single
source of truth) and the tables beside it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, fields, replace
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from kweval.beyond.grounding import TAU_G
from kweval.data.dataset import Problem
from kweval.embeddings.semantic import BACKENDS as EMBEDDING_BACKENDS
from kweval.evaluation.missing import MISSING_MODES
from kweval.metrics import ranking, registry
from kweval.metrics.cutoff import check_k
from kweval.text.matching import MATCH_MODES

if TYPE_CHECKING:  # pragma: no cover
    from kweval.embeddings.similarity import Similarities

GT_ORDERS = ("file", "helpful")
AGGREGATIONS = ("macro", "micro")

# The match mode when none is chosen ("auto"): the data decides.  Per-document ground truth (keyphrase benchmarks)
# matches as the field's tools do, exact match of Porter stems; a movie-level list keeps the seed notebooks' approx.
MATCH_AUTO = "auto"
DATA_MATCH = {True: "stem", False: "approx"}  # per_document -> the match mode "auto" resolves to


def default_match(per_document: bool) -> str:
    """The match mode `auto` stands for on this kind of ground truth (`DATA_MATCH`)."""
    return DATA_MATCH[bool(per_document)]


def match_reason(match: str, per_document: bool) -> str:
    """Why `match` is in force, in one clause for the protocol card and the captions: the data's default, or chosen
    over it (naming the default)."""
    data = "per-document ground truth" if per_document else "movie-level ground truth"
    field = (
        "the keyphrase field's rule: exact match of Porter stems"
        if per_document
        else "the original notebooks' rule (equal or substring)"
    )
    default = default_match(per_document)
    if match == default:
        return f"the default on {data}, {field}"
    return f"chosen (the default on {data} is {default}, {field})"


Progress = Callable[[str, float], None]


def no_progress(stage: str, fraction: float) -> None:
    """The progress callback of a caller that shows none."""


@dataclass(frozen=True)
class EvalOptions:
    """Everything that changes a number.  Defaults follow docs/metrics.md; every value is checked here, once."""

    k: int = 5
    match: str = MATCH_AUTO  # "auto": `default_match` of the data (stem on per-document GT, else approx)
    gt_order: str = "file"
    gain: str = "linear"
    discount: str = "log2"
    semantic: bool = False
    threshold: float = 0.75
    embedding_model: str = "all-MiniLM-L6-v2"
    sentiment: bool = False
    embedding_backend: str = "auto"  # onnx on the CPU, torch on a GPU: semantic.resolve_backend
    keyphrase: bool = False  # r@k, f1@k (hard), f1@k_flex, f1@M, f1@O, r_precision
    present: bool = False  # recall_present, f1@k_present, recall_absent (needs review texts)
    # documents a model left out: "zero" scores them 0 and counts them, "skip" leaves them out (n_skipped);
    # "auto": zero on per-document ground truth (the field's rule), skip on movie-level GT (kweval.evaluation.missing)
    missing: str = "auto"
    grounding: bool = False  # grounded_present, grounded_supported, unsupported (docs/metrics.md §12)
    grounding_threshold: float = TAU_G  # τ_g: the cosine at which a sentence or phrase supports a prediction
    diversity: bool = False  # dup_token_ratio, self_similarity (KPEval's, §12)

    def __post_init__(self) -> None:
        check_k(self.k)  # the one check of k: every stage after this trusts it
        for name in ("threshold", "grounding_threshold"):
            value = getattr(self, name)
            if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
                raise ValueError(f"{name} must be a number within [0, 1], got {value!r}")
            if not 0.0 <= float(value) <= 1.0:
                raise ValueError(f"{name} must be within [0, 1], got {value!r}")
        for name, value, allowed in (
            ("match", self.match, (MATCH_AUTO, *MATCH_MODES)),
            ("gt_order", self.gt_order, GT_ORDERS),
            ("gain", self.gain, ranking.GAINS),
            ("discount", self.discount, ranking.DISCOUNTS),
            ("missing", self.missing, MISSING_MODES),
        ):
            if value not in allowed:
                raise ValueError(f"{name} must be one of {', '.join(allowed)}; got {value!r}")
        if self.embedding_backend not in EMBEDDING_BACKENDS:
            raise ValueError(
                f"embedding_backend must be one of {', '.join(EMBEDDING_BACKENDS)}; got {self.embedding_backend!r}"
            )

    def as_dict(self) -> dict:
        return {f.name: getattr(self, f.name) for f in fields(self)}

    def for_data(self, per_document: bool) -> EvalOptions:
        """These options with `match` "auto" made the data's mode (`default_match`); every other value kept."""
        if self.match != MATCH_AUTO:
            return self
        return replace(self, match=default_match(per_document))

    def lexical_metrics(self) -> list[str]:
        """The per-review metrics always reported, in report order (`kweval.metrics.registry`)."""
        return registry.metric_columns(self, of=[""], levels=["review"])

    def keyphrase_metrics(self) -> list[str]:
        """The keyphrase field's metrics (--keyphrase) and the present/absent ones (--present), when asked."""
        return registry.metric_columns(self, of=["keyphrase", "present"])

    def extra_metrics(self) -> list[str]:
        """The per-review metrics reported only when asked: keyphrase, present/absent, semantic, sentiment, grounding,
        diversity."""
        return registry.metric_columns(
            self, of=["keyphrase", "present", "semantic", "sentiment", "grounding", "diversity"]
        )

    def metric_names(self) -> list[str]:
        """Every reported metric column, per-review ones then movie-level `gt_coverage` (`kweval.metrics.registry`)."""
        return registry.metric_columns(self)


@dataclass
class Evaluation:
    """The result of `evaluate`.

    - ``scores``: one row per evaluated movie × review × model: the counts micro
      aggregation needs (n_pred, n_gt, n_matched, score_sum, matched_score,
      gain_sum, matched_gain, n_bad_scores) and every per-review metric.
    - ``keywords``: one row per cleaned predicted keyword: position (0-based
      rank after cleaning), keyword (raw), norm, score (raw), confidence,
      gt_rank (-1 if unmatched) and gt_keyword: the matched pairs M.
    - ``ground_truth``: the cleaned GT: movie, rank, keyword, norm.
    - ``coverage``: movie × model: n_gt, n_covered, gt_coverage.
    - ``skipped``: movie × review × model pairs without output, with the reason.
    - ``problems``: what loading and cleaning dropped or changed.
    - ``similarities``: a semantic evaluation's best cosines, which any τ re-thresholds (`with_threshold`).
    - ``score_exponent``: ``score_sum`` and ``matched_score`` are in units of 2**score_exponent
      (huge scores: `kweval.evaluation.combine.summable`).
    """

    scores: pd.DataFrame
    keywords: pd.DataFrame
    ground_truth: pd.DataFrame
    coverage: pd.DataFrame
    skipped: pd.DataFrame
    options: EvalOptions
    movies: list[str]
    models: list[str]
    problems: list[Problem] = field(default_factory=list)
    similarities: Similarities | None = None
    score_exponent: int = 0

    @property
    def metric_names(self) -> list[str]:
        return self.options.metric_names()
