"""The semantic add-on: sem_precision, sem_recall, sem_f1 from keyword embeddings (docs/metrics.md §4).

Every distinct normalized keyword is embedded once (through the persistent
store), and the best cosine of each prediction and each GT keyword within
its GT list is kept (`Evaluation.similarities`), so any other τ is a
threshold on those (`with_threshold`: no embedding, no matching).  Lexical
parts evaluated apart and combined get the columns afterwards (`add_semantic`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import numpy as np
import pandas as pd

from kweval.data.dataset import KEY, Problem
from kweval.embeddings.similarity import SEMANTIC_COLUMNS, Similarities, similarities
from kweval.evaluation.clean import gt_list_keys
from kweval.evaluation.options import Evaluation, Progress, no_progress
from kweval.evaluation.sentiment_columns import SENTIMENT_COLUMNS
from kweval.metrics import registry

# The columns `with_threshold` writes: every other column of a semantic evaluation is the same at every τ (the
# dashboard's caches read those back across τ steps; tests/test_semantic.py).
THRESHOLD_COLUMNS = frozenset(SEMANTIC_COLUMNS)


def moves_with_tau(metric: str) -> bool:
    """Whether a τ change can move `metric`'s value, per review or aggregated, or where it is defined: it, the counts
    of its micro value (`registry.micro_counts`) or the count that leaves it undefined are among `THRESHOLD_COLUMNS`;
    every other metric is the same at every τ."""
    entry = registry.info(metric)
    rule = entry.undefined_when[0] if entry is not None and entry.undefined_when is not None else metric
    read = {metric, rule, *(registry.micro_f1(metric) or ()), *registry.micro_counts(metric)}
    return not read.isdisjoint(THRESHOLD_COLUMNS)


def semantic_texts(evaluation: Evaluation) -> list[str]:
    """The distinct normalized keywords (predicted, then GT) that the semantic metrics embed."""
    return list(dict.fromkeys(evaluation.keywords["norm"].tolist() + evaluation.ground_truth["norm"].tolist()))


def add_semantic(evaluation: Evaluation, progress: Progress | None = None) -> Evaluation:
    """`evaluation` (made with semantic=False) with the semantic columns added as `evaluate` adds them, its options
    marked semantic; for lexical parts evaluated apart and combined (kweval.scale.distributed), the keywords then
    embedded."""
    evaluation.options = replace(evaluation.options, semantic=True)
    add_semantic_columns(evaluation, progress or no_progress)
    scores = evaluation.scores
    added_after = [
        c for c in SENTIMENT_COLUMNS if c in scores
    ]  # evaluate adds the sentiment columns after the semantic ones
    evaluation.scores = scores[[c for c in scores.columns if c not in added_after] + added_after]
    return evaluation


def with_semantic(evaluation: Evaluation, progress: Progress | None = None) -> Evaluation:
    """A lexical evaluation (semantic=False, its keywords kept) with the semantic columns, as a new Evaluation (the
    given one left unchanged) equal to ``evaluate(dataset, replace(options, semantic=True))``: the matching is not
    done again.  Not with grounding or diversity, whose columns read the vectors: evaluate those whole."""
    options = evaluation.options
    if options.semantic or options.grounding or options.diversity:
        raise ValueError("with_semantic needs an evaluation without semantic, grounding and diversity columns")
    if evaluation.keywords.empty and not evaluation.scores.empty:
        raise ValueError("with_semantic needs the evaluation's keywords (evaluate with keywords=True)")
    copy = replace(evaluation, scores=evaluation.scores.copy(), problems=list(evaluation.problems))
    return add_semantic(copy, progress)


def add_semantic_columns(evaluation: Evaluation, progress: Progress) -> dict[str, np.ndarray]:
    """Embed every distinct keyword (store first), keep the best cosines, then threshold them (`with_threshold`);
    returns the vectors read ({normalized keyword: vector}: the grounding and diversity add-on reads them too)."""
    from kweval.embeddings import semantic  # the embedder: its heavy parts only when asked
    from kweval.embeddings.store import EmbeddingStore

    options = evaluation.options
    kw, gt = evaluation.keywords, evaluation.ground_truth
    texts = semantic_texts(evaluation)
    backend, precision = semantic.variant(options.embedding_backend)
    notes: list[str] = []
    store = EmbeddingStore(options.embedding_model, backend=backend, precision=precision, on_note=notes.append)
    vectors = semantic.embed_texts(
        texts,
        model_id=options.embedding_model,
        store=store,
        backend=options.embedding_backend,
        progress=semantic.progress_with_estimate(progress, "keywords"),
    )
    evaluation.problems.extend(Problem("embedding cache", note, "evaluate") for note in notes)
    progress("similarities", 0.97)
    by_list = gt_list_keys(gt)
    known = dict(zip(texts, vectors))
    matrix = np.asarray(vectors)

    def rows_of(wanted: list[str]) -> np.ndarray:
        """The rows of `known` for `wanted`, gathered at once; the matrix as it is for the same texts in the same
        order (on DNLP they are: a 58 MB copy, and the index of every text, saved)."""
        if wanted == texts:
            return matrix
        row = {t: i for i, t in enumerate(texts)}
        return matrix[[row[t] for t in wanted]]

    sims = similarities(
        by_list(kw[KEY + ["norm"]]),
        by_list(gt[["movie", "rank", "norm", "review_id"]])[["movie", "rank", "norm"]],
        rows_of,
    )
    rows = by_list(evaluation.scores[KEY])
    # in the scores' row order once, so that every other τ (`with_threshold`) is a count with no join
    evaluation.similarities = sims if rows.duplicated().any() else sims.aligned(rows)
    _set_semantic_columns(evaluation.scores, evaluation.similarities, options.threshold, by_list)
    return known


def _set_semantic_columns(
    scores: pd.DataFrame, sims: Similarities, threshold: float, by_list: Callable[[pd.DataFrame], pd.DataFrame]
) -> None:
    rows = by_list(scores[KEY]).reset_index(drop=True)
    if sims.keys.reset_index(drop=True).equals(rows):  # aligned similarities: the scores' own rows
        sem = pd.DataFrame(sims.columns_at(threshold))
    else:  # the plain definition: the per-group table joined to the scores' rows
        sem = sims.at_threshold(threshold).set_index(KEY).reindex(pd.MultiIndex.from_frame(rows))
    # reviews with an empty prediction list have no row: |P| = 0, nothing matched, |G| still counts
    for col in ("sem_n_pred", "sem_pred_matched", "sem_gt_matched"):
        scores[col] = sem[col].fillna(0).to_numpy(dtype="int64")
    scores["sem_n_gt"] = scores["n_gt"].to_numpy()
    for col in ("sem_precision", "sem_recall", "sem_f1"):
        scores[col] = sem[col].fillna(0.0).to_numpy(dtype="float64")


def with_threshold(evaluation: Evaluation, threshold: float) -> Evaluation:
    """The same semantic evaluation at another τ, from its kept similarities (no embedding, no matching).

    Returns a new Evaluation (the given one is left unchanged) equal to
    ``evaluate(dataset, replace(options, threshold=threshold))``.
    """
    if not evaluation.options.semantic or evaluation.similarities is None:
        raise ValueError("with_threshold needs an evaluation made with semantic=True")
    options = replace(evaluation.options, threshold=threshold)
    scores = evaluation.scores.copy(deep=False)  # copy-on-write: the semantic columns are replaced, the rest shared
    _set_semantic_columns(scores, evaluation.similarities, options.threshold, gt_list_keys(evaluation.ground_truth))
    return replace(evaluation, scores=scores, options=options, problems=list(evaluation.problems))
