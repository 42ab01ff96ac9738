"""Issue 29: what a τ step recomputes.  Speed trick "τ-free summary" (`aggregate.summary_at_threshold`): the summary
at a new τ is the summary at any other τ with the semantic metrics aggregated again.  Reference: `aggregate` of the
evaluation at that τ, on the demo, a per-document collection and DNLP, macro and micro, whatever τ came first."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from kweval.data import load_dataset
from kweval.embeddings import semantic
from kweval.embeddings.store import EmbeddingStore
from kweval.evaluation.aggregate import aggregate, summary_at_threshold
from kweval.evaluation.pipeline import EvalOptions, evaluate, with_threshold
from kweval.evaluation.semantic_columns import THRESHOLD_COLUMNS, moves_with_tau
from kweval.metrics.undefined import undefined_everywhere
from kweval.stats.families import compared_metrics
from tests.apptest import DNLP
from tests.helpers import edge_collection

TAUS = (0.3, 0.5, 0.75, 0.9)


def _semantic(dataset, folder: Path, monkeypatch):
    """`dataset` evaluated with semantic on, from deterministic stand-in vectors stored first (no model loaded)."""
    monkeypatch.setenv("KWEVAL_CACHE_DIR", str(folder))
    lexical = evaluate(dataset, EvalOptions())
    texts = list(dict.fromkeys(lexical.keywords["norm"].tolist() + lexical.ground_truth["norm"].tolist()))
    rng = np.random.default_rng(5)
    base = rng.standard_normal((7, 16))
    vectors = np.stack([base[i % 7] + 0.8 * rng.standard_normal(16) for i in range(len(texts))])
    backend, precision = semantic.variant(EvalOptions().embedding_backend)
    EmbeddingStore(semantic.DEFAULT_MODEL, backend=backend, precision=precision).put_many(texts, vectors)
    return evaluate(dataset, EvalOptions(semantic=True))


def _check_every_order(evaluation) -> None:
    at = {tau: with_threshold(evaluation, tau) for tau in TAUS}
    names = evaluation.metric_names
    fixed, moving = [m for m in names if not moves_with_tau(m)], [m for m in names if moves_with_tau(m)]
    for ev in at.values():  # the dashboard's compared and undefined metrics, the τ-free ones found from any τ
        for answer in (compared_metrics, lambda ms, s: undefined_everywhere(s, ms)):
            both = set(answer(fixed, at[TAUS[0]].scores)) | set(answer(moving, ev.scores))
            assert [m for m in names if m in both] == answer(names, ev.scores)
    for how in ("macro", "micro"):
        plain = {tau: aggregate(ev, how) for tau, ev in at.items()}
        assert not plain[0.3]["sem_f1"].equals(plain[0.9]["sem_f1"])  # τ moves the semantic metrics here
        for first in TAUS:  # the summary of whichever τ came first
            for tau in TAUS:
                pd.testing.assert_frame_equal(summary_at_threshold(plain[first], at[tau], how), plain[tau])


def test_the_tau_free_summary_equals_the_summary_on_the_demo(demo_dataset, tmp_path, monkeypatch):
    evaluation = _semantic(demo_dataset, tmp_path, monkeypatch)
    moving = [m for m in evaluation.metric_names if moves_with_tau(m)]
    assert moving == ["sem_precision", "sem_recall", "sem_f1"]
    assert not any(moves_with_tau(m) for m in evaluation.scores.columns if m not in THRESHOLD_COLUMNS | set(moving))
    _check_every_order(evaluation)
    only = aggregate(evaluation, "micro", metrics=["sem_f1"])  # a micro F1 reads its pair, shows itself only
    pd.testing.assert_frame_equal(only, aggregate(evaluation, "micro")[[*only.columns[:4], "sem_f1"]])


def test_the_tau_free_summary_equals_the_summary_per_document(tmp_path, monkeypatch):
    dataset = load_dataset(str(edge_collection(tmp_path / "edge")))
    assert dataset.per_document
    _check_every_order(_semantic(dataset, tmp_path / "cache", monkeypatch))


@pytest.mark.dnlp  # 9,362 reviews × 4 models with stand-in vectors: seconds
@pytest.mark.slow
def test_the_tau_free_summary_equals_the_summary_on_dnlp(tmp_path, monkeypatch):
    evaluation = _semantic(load_dataset(str(DNLP)), tmp_path, monkeypatch)
    _check_every_order(evaluation)
