"""kweval.metrics.registry: every reported column explained and computed from one entry.

docs/metrics.md, --help, --fail-under, aggregation and the pipeline's columns all read it: a metric
registered here (and nowhere else) is computed, aggregated under both rules, listed and documented.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from kweval.cli import build_parser
from kweval.cli.dispatch import main as cli_main
from kweval.data import load_dataset
from kweval.evaluation.aggregate import aggregate
from kweval.evaluation.pipeline import EvalOptions, evaluate
from kweval.metrics import docs_table, registry
from kweval.metrics.inputs import ReviewCounts, Settings
from kweval.metrics.ratios import safe_ratio
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
        assert "`zz@k`" in docs_table.markdown_table(["ranking"])
    finally:
        registry._REGISTRY.pop(entry.name)
    assert registry.info("zz@4") is None


def test_docs_metrics_md_is_the_registry():
    text = DOC.read_text(encoding="utf-8")
    assert docs_table.DOC_MARKER in text
    assert text == docs_table.with_doc_reference(text), (
        "docs/metrics.md is stale: run python -m kweval.metrics.docs_table docs/metrics.md"
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


def _toy_family(counts: ReviewCounts, settings: Settings) -> dict[str, np.ndarray]:
    """A metric family made up for the test: matched GT keywords among the first k predictions / |G|."""
    hits = np.bincount(counts.pair_review[counts.pair_position < settings.k], minlength=len(counts.n_gt))
    return {"toy@{k}": safe_ratio(hits, counts.n_gt)}


@pytest.fixture
def toy_metric():
    """A metric registered by one `register` call and nothing else (a micro rule of its own: Σ n_matched / Σ n_pred)."""
    entry = registry.register(
        registry.MetricInfo(
            "toy@{k}",
            "Toy@{k}",
            "toy: matched GT keywords among the first {k} / |G|",
            "[0, 1]",
            registry.HIGHER,
            "ranking",
            option="",
            compute=_toy_family,
            micro=("n_matched", "n_pred"),
        )
    )
    yield entry
    registry._REGISTRY.pop(entry.name)


def test_a_metric_registered_once_is_computed_aggregated_listed_and_documented(toy_metric, capsys):
    ev = evaluate(load_dataset(None), EvalOptions(k=3))
    assert ev.metric_names[-2:] == ["toy@3", "gt_coverage"] and "toy@3" in ev.scores  # the pipeline's columns
    kw = ev.keywords
    hits = kw[(kw["gt_rank"] >= 0) & (kw["position"] < 3)].groupby(["movie", "review_id", "model"]).size()
    per_review = ev.scores.set_index(["movie", "review_id", "model"])
    expected = hits.reindex(per_review.index, fill_value=0) / per_review["n_gt"]
    np.testing.assert_allclose(per_review["toy@3"], expected.to_numpy())

    macro, micro = aggregate(ev, "macro"), aggregate(ev, "micro")
    all_rows = ev.scores.groupby("model", sort=False)
    macro_all = macro[macro["movie"] == "ALL"].set_index("model")["toy@3"]
    np.testing.assert_allclose(macro_all, all_rows["toy@3"].mean().reindex(macro_all.index))
    micro_all = micro[micro["movie"] == "ALL"].set_index("model")["toy@3"]  # its registered micro rule
    sums = all_rows[["n_matched", "n_pred"]].sum().reindex(micro_all.index)
    np.testing.assert_allclose(micro_all, sums["n_matched"] / sums["n_pred"])

    assert "toy@k" in build_parser().format_help() and "toy@k" in registry.help_text()  # --help
    assert (
        "`toy@k`" in docs_table.markdown_table(["ranking"]) and "Σ n_matched / Σ n_pred" in docs_table.doc_reference()
    )
    assert "higher is better" in registry.column_help(["toy@7"])["toy@7"]  # the dashboard's column help
    assert cli_main(["evaluate", "--k", "3", "--fail-under", "toy@3=1.0", "--quiet"]) == 1  # --fail-under knows it
    assert "toy@3 = " in capsys.readouterr().err


def test_metric_columns_follow_the_registry_and_the_options():
    everything = EvalOptions(
        k=7, keyphrase=True, present=True, semantic=True, sentiment=True, grounding=True, diversity=True
    )
    names = everything.metric_names()
    assert names == [
        registry.column(e.name, 7) for e in registry.entries() if e.option is not None and e.level == "review"
    ] + ["gt_coverage"]
    assert EvalOptions(k=7).metric_names() == [*EvalOptions(k=7).lexical_metrics(), "gt_coverage"]
    assert set(everything.extra_metrics()) == set(names) - set(everything.lexical_metrics()) - {"gt_coverage"}
    assert registry.column("ndcg@{k}", 7) == "ndcg@7" and "ndcg@7" in names


def test_every_evaluated_metric_has_a_family_or_a_stage_and_a_micro_rule_in_words():
    for e in registry.entries():
        if e.option is None:
            assert e.compute is None and e.micro is None and e.micro_f1 is None and e.micro_rule() == ""
            continue
        assert e.micro_rule(), e.name
        if e.group in ("set", "ranking", "keyphrase"):
            assert e.compute is not None, e.name  # the pipeline's score stage computes it
        for part in e.micro_f1 or ():
            assert registry.micro_ratio(part) is not None, e.name
