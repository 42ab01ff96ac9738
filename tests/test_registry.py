"""kweval.metrics.registry: every reported column explained once; docs/metrics.md and --help read it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kweval.cli import build_parser
from kweval.data import load_dataset
from kweval.evaluation.aggregate import aggregate
from kweval.evaluation.pipeline import EvalOptions, evaluate
from kweval.metrics import registry
from kweval.stats.paired import paired_comparison

DOC = Path(__file__).resolve().parents[1] / "docs" / "metrics.md"


@pytest.mark.parametrize("k", [1, 3, 5, 10, 20, 50])
def test_every_metric_column_at_every_k_has_an_entry(k):
    names = EvalOptions(k=k, semantic=True, sentiment=True, keyphrase=True, present=True).metric_names()
    missing = [n for n in names if registry.info(n) is None]
    assert not missing
    e = registry.info(f"ndcg@{k}")
    assert e.name == f"ndcg@{k}" and f"IDCG@{k}" in e.definition and e.label == f"nDCG@{k}"
    assert registry.info(f"p@{k}").better == registry.HIGHER


def test_summary_and_comparison_columns_have_entries():
    ev = evaluate(load_dataset(None), EvalOptions(k=3))
    summary = aggregate(ev, "macro")
    numeric = [c for c in summary.columns if c not in ("movie", "model")]
    assert all(registry.info(c) is not None for c in numeric), numeric
    a = ev.scores[ev.scores["model"] == ev.models[0]].reset_index(drop=True)
    comp = paired_comparison(a, a, ["f1", "ndcg@3"], n_boot=50, n_perm=50)
    assert all(registry.info(c) is not None for c in comp.columns if c != "metric")
    assert registry.info("p_randomization_holm").better == registry.LOWER


def test_unknown_columns_and_templates_do_not_leak():
    assert registry.info("ndcg@x") is None and registry.info("nonsense") is None
    assert registry.better("nonsense") == registry.NEITHER
    assert "{k}" not in registry.info("ap@7").definition
    help_ = registry.column_help(["f1", "ndcg@10", "movie"])
    assert set(help_) == {"f1", "ndcg@10"} and "higher is better" in help_["f1"] and "range [0, 1]" in help_["ndcg@10"]


def test_registering_a_new_metric_is_one_call():
    entry = registry.register(
        registry.MetricInfo("zz@{k}", "ZZ@{k}", "toy metric at {k}", "[0, 1]", registry.HIGHER, "ranking")
    )
    try:
        assert registry.info("zz@4").definition == "toy metric at 4"
        assert "`zz@k`" in registry.markdown_table(["ranking"])
    finally:
        registry._REGISTRY.pop(entry.name)
    assert registry.info("zz@4") is None


def test_docs_metrics_md_is_the_registry():
    text = DOC.read_text(encoding="utf-8")
    assert registry.DOC_MARKER in text
    assert text == registry.with_doc_reference(text), (
        "docs/metrics.md is stale: run python -m kweval.metrics.registry docs/metrics.md"
    )
    # every section an entry cites exists as a heading of the document
    anchors = {
        re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in re.findall(r"^##+ (.+)$", text, re.M)
    }
    assert {e.section for e in registry.entries()} <= anchors


def test_cli_help_lists_every_metric_from_the_registry():
    text = build_parser().format_help()
    for e in registry.entries():
        if e.group in ("set", "ranking", "coverage", "keyphrase", "semantic", "sentiment"):
            assert e.for_k("k").name in text and e.for_k("k").definition[:30] in text
