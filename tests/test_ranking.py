"""kweval.metrics.ranking: seed worked examples, scikit-learn / trec_eval cross-checks, properties."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kweval.metrics import ranking
from kweval.metrics.ranking import (
    apply_gain,
    average_precision,
    dcg,
    discount_weights,
    ndcg,
    precision_at_k,
    reciprocal_rank,
)


def _pad(rows: list[list[float]], width: int | None = None) -> np.ndarray:
    width = max([len(r) for r in rows] + [width or 0])
    out = np.zeros((len(rows), width))
    for i, r in enumerate(rows):
        out[i, : len(r)] = r
    return out


# --------------------------------------------------------------------------- building blocks


def test_discount_weights():
    np.testing.assert_allclose(discount_weights(4), [1.0, 1 / math.log2(3), 0.5, 1 / math.log2(5)])
    np.testing.assert_allclose(discount_weights(4, "jarvelin"), [1.0, 1.0, 1 / math.log2(3), 0.5])
    assert discount_weights(0).shape == (0,)
    assert discount_weights(0, "jarvelin").shape == (0,)
    assert discount_weights(np.int64(3)).shape == (3,)


def test_apply_gain():
    np.testing.assert_array_equal(apply_gain([0, 1, 2, 3]), [0, 1, 2, 3])
    np.testing.assert_array_equal(apply_gain([0, 1, 2, 3], "exponential"), [0, 1, 3, 7])
    assert apply_gain(np.zeros((2, 3)), "exponential").shape == (2, 3)


def test_scalar_and_batched_return_types():
    assert type(dcg([1, 0, 2])) is float
    assert type(ndcg([1, 0, 2])) is float
    assert type(average_precision([1, 0, 2])) is float
    assert type(reciprocal_rank([0, 2])) is float
    assert type(precision_at_k([1, 0], 5)) is float
    for fn in (dcg, ndcg, average_precision, reciprocal_rank):
        out = fn(np.array([[1.0, 0.0], [0.0, 1.0]]))
        assert isinstance(out, np.ndarray) and out.dtype == np.float64 and out.shape == (2,)
    out = precision_at_k(np.zeros((3, 4)), 2)
    assert out.shape == (3,) and out.dtype == np.float64


def test_empty_and_all_zero_inputs():
    assert dcg([]) == 0.0
    assert ndcg([]) == 0.0
    assert ndcg([0, 0, 0]) == 0.0  # IDCG == 0 -> 0
    assert ndcg([0, 0], ideal=[0, 0, 0]) == 0.0
    assert average_precision([]) == 0.0
    assert average_precision([0, 0]) == 0.0  # n_relevant == 0 -> 0
    assert average_precision([0, 0], n_relevant=0) == 0.0
    assert reciprocal_rank([]) == 0.0
    assert precision_at_k([], 3) == 0.0
    assert dcg(np.zeros((0, 5))).shape == (0,)
    assert ndcg(np.zeros((2, 0))).tolist() == [0.0, 0.0]


def test_huge_k_does_not_allocate():
    assert dcg([3, 2, 1], k=10**12) == dcg([3, 2, 1])
    assert precision_at_k([1, 1], 10**9) == 2e-9


# --------------------------------------------------------------------------- seed 002 (plain relevance lists)


def test_seed002_dcg_idcg_ndcg():
    rel = [2, 4, 5, 3, 1, 1]
    assert round(dcg(rel), 6) == 9.058809
    assert round(dcg(sorted(rel, reverse=True)), 6) == 10.628132
    assert round(ndcg(rel), 6) == 0.852342
    # the seed's 1-based 1/log2(i + 1) is our 0-based "log2" discount
    assert dcg(rel) == pytest.approx(sum(r / math.log2(i + 1) for i, r in enumerate(rel, start=1)), rel=1e-12)


def test_seed002_classic_vs_exponential_gain():
    rel = [4, 3, 3, 4, 2, 2, 0, 0]
    ideal = [4, 3, 3, 4, 2, 2, 2, 1]  # sorted inside ndcg, as in the seed
    assert round(ndcg(rel, ideal=ideal), 6) == 0.899662
    assert round(ndcg(rel, ideal=ideal, gain="exponential"), 6) == 0.915492
    # ideal given in any order gives the same
    assert ndcg(rel, ideal=sorted(ideal)) == ndcg(rel, ideal=ideal)


# --------------------------------------------------------------------------- seed 004 (binary and graded)

BINARY_RANKINGS = {
    "q1": [1, 2, 4, 5, 3, 6, 9, 8, 10, 7],
    "q2": [1, 2, 4, 5, 3, 9, 8, 6, 10, 7],
    "q3": [1, 7, 4, 5, 3, 6, 9, 8, 10, 2],
}
BINARY_GT = {"q1": [1, 3], "q2": [2, 4, 5, 6], "q3": [7]}
# qid: (P@5, P@10, AP, RR) as printed by the seed (3 decimals)
BINARY_EXPECTED = {"q1": (0.4, 0.2, 0.7, 1.0), "q2": (0.6, 0.4, 0.604, 0.5), "q3": (0.2, 0.1, 0.5, 0.5)}


def _binary(qid: str) -> list[int]:
    return [int(doc in BINARY_GT[qid]) for doc in BINARY_RANKINGS[qid]]


@pytest.mark.parametrize("qid", sorted(BINARY_RANKINGS))
def test_seed004_binary_per_query(qid):
    rel = _binary(qid)
    p5, p10, ap, rr = BINARY_EXPECTED[qid]
    assert round(precision_at_k(rel, 5), 3) == p5
    assert round(precision_at_k(rel, 10), 3) == p10
    assert round(average_precision(rel, n_relevant=len(BINARY_GT[qid])), 3) == ap
    assert round(reciprocal_rank(rel), 3) == rr


def test_seed004_binary_averages_batched():
    qids = sorted(BINARY_RANKINGS)
    rel = np.array([_binary(q) for q in qids])
    n_rel = np.array([len(BINARY_GT[q]) for q in qids])
    assert round(precision_at_k(rel, 5).mean(), 3) == 0.4
    assert round(precision_at_k(rel, 10).mean(), 3) == 0.233
    assert round(average_precision(rel, n_relevant=n_rel).mean(), 3) == 0.601
    assert round(reciprocal_rank(rel).mean(), 3) == 0.667
    # every relevant doc is retrieved here, so the default n_relevant agrees
    np.testing.assert_allclose(average_precision(rel), average_precision(rel, n_relevant=n_rel))


GRADED_RANKINGS = {
    "q1": [2, 1, 3, 4, 5, 6, 10, 7, 9, 8],
    "q2": [1, 2, 9, 4, 5, 6, 7, 8, 3, 10],
    "q3": [1, 7, 4, 5, 3, 6, 9, 8, 10, 2],
    "rA": [10, 7, 9, 8, 2, 1, 3, 4, 5, 6],
    "rB": [3, 2, 1, 4, 5, 7, 8, 10, 9, 6],
}
GRADED_GT = {
    "q1": {4: 3, 1: 2, 2: 1},
    "q2": {3: 3, 4: 3, 1: 2, 2: 1, 8: 1},
    "q3": {1: 3, 4: 3, 7: 2, 5: 2, 6: 1, 8: 1},
    "rA": {1: 3, 7: 3, 2: 2, 3: 1},
    "rB": {1: 3, 7: 3, 2: 2, 3: 1},
}
# qid: (NDCG@5, NDCG@10)
GRADED_EXPECTED = {
    "q1": (0.799, 0.799),
    "q2": (0.549, 0.705),
    "q3": (0.908, 0.949),
    "rA": (0.497, 0.693),
    "rB": (0.630, 0.780),
}
JARVELIN = dict(gain="linear", discount="jarvelin")


def _graded(qid: str) -> tuple[list[int], list[int]]:
    gt = GRADED_GT[qid]
    return [gt.get(doc, 0) for doc in GRADED_RANKINGS[qid]], sorted(gt.values(), reverse=True)


@pytest.mark.parametrize("qid", sorted(GRADED_RANKINGS))
def test_seed004_graded_per_query(qid):
    gains, ideal = _graded(qid)
    at5, at10 = GRADED_EXPECTED[qid]
    assert round(ndcg(gains, k=5, ideal=ideal, **JARVELIN), 3) == at5
    assert round(ndcg(gains, k=10, ideal=ideal, **JARVELIN), 3) == at10


def test_seed004_graded_dcg_values():
    # DCG@5 / DCG@10 printed by the seed
    expected = {"q1": (4.5, 4.5), "q2": (4.5, 5.78), "q3": (7.893, 8.613), "rA": (3.861, 5.378), "rB": (4.893, 6.053)}
    for qid, (d5, d10) in expected.items():
        gains, _ = _graded(qid)
        assert round(dcg(gains, k=5, **JARVELIN), 3) == d5
        assert round(dcg(gains, k=10, **JARVELIN), 3) == d10


@pytest.mark.parametrize(("qids", "avg5", "avg10"), [(["q1", "q2", "q3"], 0.752, 0.818), (["rA", "rB"], 0.564, 0.736)])
def test_seed004_graded_batched_equals_row_by_row(qids, avg5, avg10):
    pairs = [_graded(q) for q in qids]
    gains = np.array([g for g, _ in pairs], dtype=float)
    ideal = _pad([i for _, i in pairs])  # ragged ideals (3, 5, 6 items): zero-padded
    for k, avg in ((5, avg5), (10, avg10)):
        batched = ndcg(gains, k=k, ideal=ideal, **JARVELIN)
        rows = [ndcg(g, k=k, ideal=i, **JARVELIN) for g, i in pairs]
        np.testing.assert_allclose(batched, rows, rtol=0, atol=1e-15)
        assert [round(v, 3) for v in batched] == [GRADED_EXPECTED[q][k == 10] for q in qids]
        assert round(batched.mean(), 3) == avg


# --------------------------------------------------------------------------- scikit-learn cross-check


@pytest.mark.parametrize("k", [None, 1, 3, 5, 10, 40])
def test_ndcg_matches_sklearn(k):
    from sklearn.metrics import ndcg_score

    rng = np.random.default_rng(2024 + (k or 0))
    for _ in range(60):
        n = int(rng.integers(2, 30))
        y_true = rng.integers(0, 5, n).astype(float) if rng.random() < 0.5 else rng.exponential(1.0, n)
        if not y_true.any():
            y_true[0] = 1.0
        y_score = rng.random(n)  # continuous, untied
        order = np.argsort(-y_score)
        ours = ndcg(y_true[order], k=k, ideal=y_true)
        ref = ndcg_score(y_true[None, :], y_score[None, :], k=k)
        assert ours == pytest.approx(ref, abs=1e-9)
        assert dcg(y_true[order], k=k) == pytest.approx(
            float(np.sum(y_true[order][: k or n] / np.log2(np.arange(min(k or n, n)) + 2))), abs=1e-9
        )


def test_ndcg_batched_matches_sklearn():
    from sklearn.metrics import ndcg_score

    rng = np.random.default_rng(7)
    y_true = rng.integers(0, 4, (50, 12)).astype(float)
    y_true[:, 0] += 1  # no all-zero row
    y_score = rng.random((50, 12))
    ranked = np.take_along_axis(y_true, np.argsort(-y_score, axis=1), axis=1)
    for k in (None, 3, 8):
        assert ndcg(ranked, k=k, ideal=y_true).mean() == pytest.approx(ndcg_score(y_true, y_score, k=k), abs=1e-9)


# --------------------------------------------------------------------------- trec_eval cross-check


def test_binary_metrics_match_trec_eval():
    import pytrec_eval

    rng = np.random.default_rng(11)
    pool = [f"d{j:02d}" for j in range(40)]
    qrels, run, rel_lists, n_rel = {}, {}, {}, {}
    for q in range(80):
        qid = f"q{q}"
        judged = rng.choice(pool, size=int(rng.integers(1, 15)), replace=False)
        # graded judgements, some explicitly non-relevant (0); some queries with no relevant doc at all
        qrels[qid] = {str(d): int(rng.integers(0, 3)) for d in judged}
        retrieved = rng.choice(pool, size=int(rng.integers(1, 25)), replace=False)
        scores = np.cumsum(rng.random(len(retrieved)) + 0.01)[::-1]  # strictly decreasing: no ties
        run[qid] = {str(d): float(s) for d, s in zip(retrieved, scores)}
        rel_lists[qid] = [int(qrels[qid].get(str(d), 0) > 0) for d in retrieved]
        n_rel[qid] = sum(v > 0 for v in qrels[qid].values())  # includes never-retrieved relevant docs
    assert any(n == 0 for n in n_rel.values())
    assert any(n > sum(rel_lists[q]) for q, n in n_rel.items())  # some relevant docs never retrieved

    results = pytrec_eval.RelevanceEvaluator(qrels, {"P", "recip_rank", "map"}).evaluate(run)
    for qid, rel in rel_lists.items():
        ref = results[qid]
        assert precision_at_k(rel, 5) == pytest.approx(ref["P_5"], abs=1e-9)
        assert precision_at_k(rel, 10) == pytest.approx(ref["P_10"], abs=1e-9)
        assert reciprocal_rank(rel) == pytest.approx(ref["recip_rank"], abs=1e-9)
        assert average_precision(rel, n_relevant=n_rel[qid]) == pytest.approx(ref["map"], abs=1e-9)

    # and batched over all queries at once
    qids = list(rel_lists)
    matrix = _pad([rel_lists[q] for q in qids])
    np.testing.assert_allclose(precision_at_k(matrix, 10), [results[q]["P_10"] for q in qids], atol=1e-9)
    np.testing.assert_allclose(reciprocal_rank(matrix), [results[q]["recip_rank"] for q in qids], atol=1e-9)
    np.testing.assert_allclose(
        average_precision(matrix, n_relevant=np.array([n_rel[q] for q in qids])),
        [results[q]["map"] for q in qids],
        atol=1e-9,
    )


# --------------------------------------------------------------------------- hand-checked binary edge cases


def test_binary_metrics_by_hand():
    rel = [0, 2, 0, 1, 0]
    assert precision_at_k(rel, 2) == 0.5
    assert precision_at_k(rel, 8) == 2 / 8  # missing positions are non-relevant
    assert reciprocal_rank(rel) == 0.5
    assert reciprocal_rank(rel, k=1) == 0.0
    assert average_precision(rel) == pytest.approx((1 / 2 + 2 / 4) / 2)
    # k cuts the sum, the default denominator still counts the whole list
    assert average_precision(rel, k=3) == pytest.approx((1 / 2) / 2)
    assert average_precision(rel, k=3, n_relevant=1) == pytest.approx(1 / 2)
    # n_relevant per row
    out = average_precision(np.array([[1, 0], [0, 1]]), n_relevant=np.array([1, 4]))
    np.testing.assert_allclose(out, [1.0, 0.5 / 4])


# --------------------------------------------------------------------------- properties

relevance = st.one_of(
    st.integers(0, 5).map(float), st.floats(0, 50, allow_nan=False, allow_infinity=False, allow_subnormal=False)
)
lists = st.lists(relevance, min_size=0, max_size=15)
gains = st.sampled_from(ranking.GAINS)
discounts = st.sampled_from(ranking.DISCOUNTS)
ks = st.one_of(st.none(), st.integers(1, 20))
FAST = settings(max_examples=80, deadline=None)


@FAST
@given(lists, ks, gains, discounts)
def test_ndcg_in_unit_interval(rel, k, gain, discount):
    assert 0.0 <= ndcg(rel, k=k, gain=gain, discount=discount) <= 1.0


@FAST
@given(lists, lists, ks, gains, discounts)
def test_ndcg_with_a_superset_ideal_is_at_most_one(rel, extra, k, gain, discount):
    value = ndcg(rel, k=k, ideal=rel + extra, gain=gain, discount=discount)
    assert 0.0 <= value <= 1.0 + 1e-12
    # more ideal material never raises the score
    assert value <= ndcg(rel, k=k, gain=gain, discount=discount) + 1e-12


@FAST
@given(lists, ks, gains, discounts)
def test_ndcg_is_one_when_sorted(rel, k, gain, discount):
    ordered = sorted(rel, reverse=True)
    expected = 1.0 if dcg(ordered, k=k, gain=gain, discount=discount) > 0 else 0.0
    assert ndcg(ordered, k=k, gain=gain, discount=discount) == expected


@FAST
@given(lists, st.integers(0, 10), gains, discounts)
def test_k_at_least_length_equals_none(rel, extra, gain, discount):
    k = max(len(rel), 1) + extra
    assert dcg(rel, k=k, gain=gain, discount=discount) == dcg(rel, gain=gain, discount=discount)
    assert ndcg(rel, k=k, gain=gain, discount=discount) == ndcg(rel, gain=gain, discount=discount)
    assert average_precision(rel, k=k) == average_precision(rel)
    assert reciprocal_rank(rel, k=k) == reciprocal_rank(rel)


@FAST
@given(
    st.lists(lists, min_size=1, max_size=6),
    st.lists(lists, min_size=6, max_size=6),
    ks,
    st.integers(1, 12),
    gains,
    discounts,
)
def test_batched_equals_row_by_row(rows, ideals, k, pk, gain, discount):
    ideals = ideals[: len(rows)]
    matrix, ideal_matrix = _pad(rows), _pad(ideals)
    n_rel = np.arange(len(rows))
    checks = [
        (dcg(matrix, k=k, gain=gain, discount=discount), [dcg(r, k=k, gain=gain, discount=discount) for r in rows]),
        (ndcg(matrix, k=k, gain=gain, discount=discount), [ndcg(r, k=k, gain=gain, discount=discount) for r in rows]),
        (
            ndcg(matrix, k=k, ideal=ideal_matrix, gain=gain, discount=discount),
            [ndcg(r, k=k, ideal=i, gain=gain, discount=discount) for r, i in zip(rows, ideals)],
        ),
        (average_precision(matrix, k=k), [average_precision(r, k=k) for r in rows]),
        (
            average_precision(matrix, k=k, n_relevant=n_rel),
            [average_precision(r, k=k, n_relevant=n) for r, n in zip(rows, n_rel)],
        ),
        (reciprocal_rank(matrix, k=k), [reciprocal_rank(r, k=k) for r in rows]),
        (precision_at_k(matrix, pk), [precision_at_k(r, pk) for r in rows]),
    ]
    for batched, single in checks:
        assert batched.shape == (len(rows),)
        np.testing.assert_allclose(batched, single, rtol=1e-12, atol=0)


@FAST
@given(lists, ks)
def test_binary_metrics_in_unit_interval(rel, k):
    for value in (average_precision(rel, k=k), reciprocal_rank(rel, k=k), precision_at_k(rel, k or 5)):
        assert 0.0 <= value <= 1.0


# --------------------------------------------------------------------------- errors


@pytest.mark.parametrize(
    "call",
    [
        lambda: dcg([1, 2], gain="quadratic"),
        lambda: ndcg([1, 2], discount="log10"),
        lambda: apply_gain([1], "nope"),
        lambda: discount_weights(3, "nope"),
        lambda: discount_weights(-1),
        lambda: dcg([1, 2], k=0),
        lambda: ndcg([1, 2], k=-3),
        lambda: average_precision([1, 2], k=0),
        lambda: reciprocal_rank([1, 2], k=0),
        lambda: precision_at_k([1, 2], 0),
        lambda: precision_at_k([1, 2], None),
        lambda: dcg([1, 2], k=2.5),
        lambda: dcg([1, 2], k=True),
        lambda: dcg([1, -1]),
        lambda: ndcg([1, float("nan")]),
        lambda: average_precision([float("inf")]),
        lambda: reciprocal_rank(np.array([[1.0, -0.5]])),
        lambda: precision_at_k([1, "x"], 1),
        lambda: ndcg([1, 2], ideal=[1, -2]),
        lambda: ndcg(np.ones((3, 2)), ideal=np.ones((2, 2))),
        lambda: dcg(np.ones((2, 2, 2))),
        lambda: dcg(3.0),
        lambda: dcg([[1, 2], [3]]),
        lambda: average_precision(np.ones((3, 2)), n_relevant=[1, 2]),
        lambda: average_precision([1, 0], n_relevant=-1),
        lambda: average_precision([1, 0], n_relevant=float("nan")),
        lambda: apply_gain([1, -1]),
        lambda: apply_gain([2000.0], "exponential"),
    ],
)
def test_value_errors(call):
    with pytest.raises(ValueError):
        call()


def test_error_messages_name_the_choices():
    with pytest.raises(ValueError, match="linear"):
        dcg([1], gain="quadratic")
    with pytest.raises(ValueError, match="jarvelin"):
        dcg([1], discount="log10")
    with pytest.raises(ValueError, match="k must be"):
        ndcg([1], k=0)
    with pytest.raises(ValueError, match="non-negative"):
        ndcg([-1])
    with pytest.raises(ValueError, match="finite"):
        ndcg([math.inf])
