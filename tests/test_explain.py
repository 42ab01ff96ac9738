"""kweval.explain.ndcg: the worked examples of METRICS.md / the seeds, term by term."""

from __future__ import annotations

import math

import numpy as np
import pytest

from kweval.evaluation.pipeline import EvalOptions, evaluate
from kweval.explain import ndcg as explain
from tests.helpers import make_dataset


def test_seed_000_keyword_example():
    s = explain.ndcg_steps(**explain.SEED_000, k=5)
    assert s.dcg == pytest.approx(1.20232, abs=1e-5)
    assert s.idcg == pytest.approx(1.64807, abs=1e-5)
    assert s.ndcg == pytest.approx(0.72953, abs=1e-5)
    t = s.terms
    assert t["keyword"].tolist() == explain.SEED_000["predictions"]
    assert t["gt_keyword"].tolist() == ["scam", None, "poverty", None, "fraud"]
    assert t["gt_rank"].tolist() == [2, -1, 1, -1, 0]
    # gain(j) = 1/log2(j+2), disc(i) = 1/log2(i+2)
    assert t["gain"].tolist() == pytest.approx([1 / math.log2(4), 0, 1 / math.log2(3), 0, 1.0])
    assert t["discount"].tolist() == pytest.approx([1 / math.log2(i + 2) for i in range(5)])
    assert t["contribution"].sum() == pytest.approx(s.dcg)
    assert s.ideal["contribution"].sum() == pytest.approx(s.idcg)
    assert s.ideal["keyword"].tolist() == ["fraud", "poverty", "scam"]
    perfect = explain.ndcg_steps(
        ["fraud", "poverty", "scam", "family", "cinematography"], explain.SEED_000["ground_truth"]
    )
    assert perfect.ndcg == pytest.approx(1.0)
    tex = s.latex()
    assert "0.7295" in tex["ndcg"] and "1.2023" in tex["dcg"] and "1.6481" in tex["idcg"]
    assert r"{0.5000\cdot1.0000} + " in tex["dcg"]  # a term is one group: a narrow page wraps between terms


def test_k_cuts_terms():
    s = explain.ndcg_steps(**explain.SEED_000, k=3)
    assert s.terms["counted"].tolist() == [True, True, True, False, False]
    assert s.terms.loc[4, "contribution"] == 0.0  # fraud at position 4 is beyond k
    assert s.dcg == pytest.approx(1 / math.log2(4) + 1 / math.log2(3) / math.log2(4))


def test_seed_002_relevance_lists():
    s = explain.relevance_steps(**explain.SEED_002["classic"])
    assert (round(s.dcg, 6), round(s.idcg, 6), round(s.ndcg, 6)) == (9.058809, 10.628132, 0.852342)
    lin = explain.relevance_steps(**explain.SEED_002["versus_ideal"], gain="linear")
    exp = explain.relevance_steps(**explain.SEED_002["versus_ideal"], gain="exponential")
    assert round(lin.ndcg, 6) == 0.899662
    assert round(exp.ndcg, 6) == 0.915492
    assert exp.terms["gain"].tolist() == [2.0**r - 1 for r in [4, 3, 3, 4, 2, 2, 0, 0]]


@pytest.mark.parametrize(
    "query,n5,n10",
    [("q1", 0.799, 0.799), ("q2", 0.549, 0.705), ("q3", 0.908, 0.949), ("rA", 0.497, 0.693), ("rB", 0.630, 0.780)],
)
def test_seed_004_jarvelin(query, n5, n10):
    ex = explain.SEED_004[query]
    assert round(explain.relevance_steps(**ex, k=5, discount="jarvelin").ndcg, 3) == n5
    assert round(explain.relevance_steps(**ex, k=10, discount="jarvelin").ndcg, 3) == n10
    s = explain.relevance_steps(**ex, k=5, discount="jarvelin")
    assert s.terms["discount"].tolist()[:3] == pytest.approx([1.0, 1.0, 1 / math.log2(3)])
    assert s.terms["contribution"].sum() == pytest.approx(s.dcg)


@pytest.mark.parametrize("gain", ["linear", "exponential"])
@pytest.mark.parametrize("discount", ["log2", "jarvelin"])
def test_keyword_steps_equal_the_evaluation(gain, discount):
    ds = make_dataset(
        {"m": ["luke skywalker", "darth vader", "the force", "rebel alliance"]},
        {
            ("m", "r1", "a"): [("vader", 0.9), ("force", 0.8), ("yoda", 0.7), ("luke", 0.5)],
            ("m", "r2", "a"): [("ewok", 0.9), ("rebel alliance", 0.8)],
            ("m", "r3", "a"): [],
        },
    )
    ev = evaluate(ds, EvalOptions(k=3, gain=gain, discount=discount))
    gt = ev.ground_truth["keyword"].tolist()
    for rid in ("r1", "r2", "r3"):
        rows = ev.keywords[ev.keywords["review_id"] == rid]
        s = explain.keyword_steps(rows, gt, k=3, gain=gain, discount=discount)
        expected = ev.scores.set_index("review_id").loc[rid, "ndcg@3"]
        assert s.ndcg == pytest.approx(expected)
        assert s.terms["contribution"].sum() == pytest.approx(s.dcg)
        if s.idcg:
            assert s.dcg / s.idcg == pytest.approx(s.ndcg)


def test_discounts_and_formulas():
    np.testing.assert_allclose(explain.discounts(4, "log2"), [1 / math.log2(i + 2) for i in range(4)])
    np.testing.assert_allclose(explain.discounts(4, "jarvelin"), [1, 1, 1 / math.log2(3), 1 / math.log2(4)])
    assert "log_2(j+2)" in explain.formulas()["gain"]
    assert "2^" in explain.formulas("exponential")["gain"]
    with pytest.raises(ValueError):
        explain.ndcg_steps(["a"], ["a"], k=0)


def test_every_example_has_a_plain_title_and_gains_are_named():
    assert set(explain.EXAMPLE_TITLES) == {"seed000", *explain.SEED_002, *explain.SEED_004}
    assert not any("seed" in t.lower() for t in explain.EXAMPLE_TITLES.values())
    assert (
        explain.GAIN_LABELS["linear"].startswith("GT-rank gain") and "exponential" in explain.GAIN_LABELS["exponential"]
    )
    assert set(explain.GAIN_LABELS) == set(__import__("kweval.metrics.ranking", fromlist=["GAINS"]).GAINS)
