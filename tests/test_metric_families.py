"""The metric families against their plain definitions, and their checks.

Each family's vectorised kernel gives, review by review, what the scalar
definitions of `kweval.metrics.cutoff` (plain Python, the ones the keyphrase
protocols use) give for that review's ranked match list; the public functions
refuse input that would give a wrong number.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kweval.metrics import cutoff
from kweval.metrics.keyphrase import keyphrase_scores
from kweval.metrics.present_absent import present_absent_scores
from kweval.metrics.ranked import ranking_scores
from kweval.metrics.set_based import set_scores
from kweval.metrics.weighted import weighted_scores


@st.composite
def reviews(draw):
    """Reviews as ranked match lists: per review |G|, and per kept prediction whether (and what) it matched."""
    out = []
    for _ in range(draw(st.integers(0, 6))):
        n_gt = draw(st.integers(0, 6))
        n_pred = draw(st.integers(0, 8))
        ranks = draw(st.permutations(range(n_gt)))  # a one-to-one assignment: each GT keyword at most once
        slots = draw(st.lists(st.booleans(), min_size=n_pred, max_size=n_pred))
        matched, it = [], iter(ranks)
        for slot in slots:
            rank = next(it, None) if slot else None
            matched.append(rank)
        present = draw(st.lists(st.booleans(), min_size=n_gt, max_size=n_gt))
        has_text = draw(st.booleans())
        out.append((n_gt, matched, present, has_text))
    return out


def _arrays(data):
    n_gt = np.array([r[0] for r in data], dtype=np.int64)
    n_pred = np.array([len(r[1]) for r in data], dtype=np.int64)
    pairs = [(i, pos, rank) for i, r in enumerate(data) for pos, rank in enumerate(r[1]) if rank is not None]
    review, position, gt_rank = (np.array([p[j] for p in pairs], dtype=np.int64) for j in range(3))
    n_matched = np.bincount(review, minlength=len(data)).astype(np.int64)
    return n_pred, n_gt, n_matched, review, position, gt_rank


@settings(max_examples=200, deadline=None)
@given(data=reviews(), k=st.integers(1, 9))
def test_set_and_keyphrase_families_are_the_scalar_definitions_review_by_review(data, k):
    n_pred, n_gt, n_matched, review, position, _ = _arrays(data)
    s = set_scores(n_pred, n_gt, n_matched)
    kp = keyphrase_scores(n_pred, n_gt, n_matched, review, position, k)
    for i, (g, matched, _, _) in enumerate(data):
        hits = [m is not None for m in matched]
        n = len(matched)
        p, r, f = cutoff.precision_recall_f1(sum(hits), n, g)
        assert (s["precision"][i], s["recall"][i], s["f1"][i]) == pytest.approx((p, r, f))
        assert kp["f1@M"][i] == pytest.approx(f)
        hits_k = sum(hits[:k])
        assert kp["r@{k}"][i] == pytest.approx(cutoff.ratio(hits_k, g))
        assert kp["f1@{k}"][i] == pytest.approx(cutoff.precision_recall_f1(hits_k, k, g)[2])
        flex = cutoff.precision_denominator(k, n, flexible=True)
        assert kp["f1@{k}_flex"][i] == pytest.approx(cutoff.precision_recall_f1(hits_k, flex, g)[2])
        hits_o = sum(hits[:g])
        assert kp["f1@O"][i] == pytest.approx(cutoff.precision_recall_f1(hits_o, min(g, n), g)[2])
        assert kp["r_precision"][i] == pytest.approx(cutoff.ratio(hits_o, g))


@settings(max_examples=200, deadline=None)
@given(data=reviews(), k=st.integers(1, 9))
def test_present_absent_family_is_the_definition_review_by_review(data, k):
    _, n_gt, _, review, position, gt_rank = _arrays(data)
    n_gt_present = np.array([sum(r[2]) if r[3] else -1 for r in data], dtype=np.int64)
    present = np.array([data[i][2][j] for i, j in zip(review.tolist(), gt_rank.tolist())], dtype=bool)
    out = present_absent_scores(n_gt_present, n_gt, review, position, present, k)
    for i, (g, matched, flags, has_text) in enumerate(data):
        if not has_text:
            assert np.isnan([out[m][i] for m in ("recall_present", "f1@{k}_present", "recall_absent")]).all()
            assert out["n_gt_present"][i] == 0 and out["n_gt_absent"][i] == 0
            continue
        hit_p = sum(1 for m in matched if m is not None and flags[m])
        hit_a = sum(1 for m in matched if m is not None and not flags[m])
        hit_pk = sum(1 for m in matched[:k] if m is not None and flags[m])
        assert out["recall_present"][i] == pytest.approx(cutoff.ratio(hit_p, sum(flags)))
        assert out["recall_absent"][i] == pytest.approx(cutoff.ratio(hit_a, g - sum(flags)))
        assert out["f1@{k}_present"][i] == pytest.approx(cutoff.precision_recall_f1(hit_pk, k, sum(flags))[2])


@settings(max_examples=100, deadline=None)
@given(data=reviews(), k=st.integers(1, 9))
def test_ranking_family_is_the_relevance_list_definition(data, k):
    """nDCG@k of one review: Σ rel_i / log2(i + 2) over its first k positions, over the GT's own top k."""
    _, n_gt, _, review, position, gt_rank = _arrays(data)
    out = ranking_scores(review, position, gt_rank, n_gt, k)
    for i, (g, matched, _, _) in enumerate(data):
        rel = [0.0 if m is None else 1 / np.log2(m + 2) for m in matched[:k]]
        dcg = sum(r / np.log2(p + 2) for p, r in enumerate(rel))
        idcg = sum((1 / np.log2(j + 2)) / np.log2(j + 2) for j in range(min(k, g)))
        assert out["ndcg@{k}"][i] == pytest.approx(cutoff.ratio(dcg, idcg))
        assert out["p@{k}"][i] == pytest.approx(sum(r > 0 for r in rel) / k)
        first = next((p for p, r in enumerate(rel) if r > 0), None)
        assert out["rr"][i] == pytest.approx(0.0 if first is None else 1 / (first + 1))


@pytest.mark.parametrize(
    "call",
    [
        lambda: set_scores([1, 2], [1], [0, 0]),  # lengths differ
        lambda: set_scores([1], [1], [2]),  # |M| > |P|
        lambda: set_scores([-1], [1], [0]),  # a negative count
        lambda: set_scores([1.5], [1], [0]),  # a fractional count
        lambda: weighted_scores([np.nan], [0.0], [1.0], [0.0]),  # not finite
        lambda: ranking_scores([0], [0], [0], [1], k=0),  # k not positive
        lambda: ranking_scores([0], [0], [0], [1], k=True),  # a bool is no cut-off
        lambda: ranking_scores([1], [0], [0], [1], k=5),  # a pair past the reviews
        lambda: ranking_scores([0], [0], [0], [1], k=5, gain="square"),
        lambda: keyphrase_scores([1], [1], [1], [0, 0], [0], k=5),  # pairs of different lengths
        lambda: present_absent_scores([2], [1], [], [], [], k=5),  # more present than |G|
        lambda: present_absent_scores([-2], [1], [], [], [], k=5),
    ],
)
def test_the_public_functions_refuse_what_would_give_a_wrong_number(call):
    with pytest.raises(ValueError):
        call()
