"""The speed tricks "flat review lists" (kweval.legacy.flat) and "bounded scans" (kweval.legacy.scans) against
their plain definitions: the per-review kernels and the finders' plain scans, on the demo, on the DNLP data and on
small hostile shapes (ties, empty lists, non-string keywords, keywords normalizing to "", a movie without GT)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kweval import legacy
from kweval.legacy import flat as flat_module
from kweval.legacy import scans
from kweval.legacy.kernels import AnyMatcher, legacy_match, legacy_normalize, seed000_predictions, seed001_prf
from tests.helpers import DNLP, make_dataset


def assert_flat_matches_kernels(ds) -> None:
    """Every entry's arrays and every row's seed 001 P/R/F1 equal the per-review kernels' answers."""
    flat = flat_module.flat_lists(ds)
    precision, recall, f1 = flat_module.seed001_prf_rows(flat)
    at = 0
    for r, (movie, entries) in enumerate(zip(flat.lists["movie"].tolist(), flat.lists["entries"].tolist())):
        gt = flat.gts.get(movie, [])
        gt_norms = [legacy_normalize(g) for g in gt]
        span = range(at, at + len(entries))
        assert flat.row[span].tolist() == [r] * len(entries)
        kept = [flat.words[flat.word[i]] for i in span if flat.kept[i]]
        assert kept == [kw for kw, _ in seed000_predictions(entries)]
        assert [flat.rank[i] for i in span if flat.kept[i]] == list(range(len(kept)))
        assert all(flat.rank[i] == -1 for i in span if not flat.kept[i])
        for i, (kw, _) in zip(span, entries):
            norm = legacy_normalize(kw) if isinstance(kw, str) else None
            assert (flat.words[flat.word[i]] if flat.word[i] >= 0 else None) == norm
            js = [j for j, g in enumerate(gt_norms) if norm is not None and legacy_match(norm, g)]  # by definition
            assert flat.any_match[i] == bool(js)
            assert flat.first_match[i] == (js[0] if js else -1)
        expected = seed001_prf([kw for kw, _ in entries if isinstance(kw, str)], gt)  # the plain match test
        assert (precision[r], recall[r], f1[r]) == expected  # the same numbers, not close ones
        at += len(entries)
    assert at == len(flat.row)


def assert_scans_match_plain(ds, ks=(1, 3, 5)) -> None:
    """Each bounded scan picks the same review with the same numbers and counts as its plain definition."""
    for model in [None] + ds.models["model"].tolist():
        for k in ks:
            assert scans.best_one_to_one_dcg(ds, k, model) == scans.best_one_to_one_dcg_plain(ds, k, model)
            assert scans.most_credited(ds, k, model) == scans.most_credited_plain(ds, k, model)
        assert scans.recall_gap(ds, model) == scans.recall_gap_plain(ds, model)


def test_flat_lists_and_scans_equal_their_definitions_on_the_demo():
    from kweval.data import load_dataset

    ds = load_dataset()
    assert_flat_matches_kernels(ds)
    assert_scans_match_plain(ds)
    assert legacy.find_many_to_one_example(ds) is not None  # the demo has something to find


@pytest.mark.dnlp
def test_scans_equal_their_definitions_on_dnlp():
    from kweval.data import load_dataset

    ds = load_dataset(DNLP)
    assert_scans_match_plain(ds, ks=(5,))


def hostile():
    """Ties between identical reviews, an empty list, a missing cell, None keywords, repeats, "" after
    normalization on both sides, a movie without GT."""
    same = [("luke", 0.9), ("luke skywalker", 0.8), ("sky", 0.7), ("luke", 0.1)]
    return make_dataset(
        {"m": ["luke skywalker", "luke", "!!", "han"], "n": ["solo", "so"], "empty": []},
        {
            ("m", "r1", "x"): same,
            ("m", "r2", "x"): list(same),
            ("m", "r3", "x"): [],
            ("m", "r4", "x"): None,
            ("m", "r5", "x"): [(None, 0.5), ("?!", 0.4), ("Han", math.nan), ("han", 0.3)],
            ("n", "r1", "x"): [("so", 0.5), ("solo", 0.4), ("o", 0.3), ("s", 0.2)],
            ("n", "r1", "y"): [("o", 0.5), ("s", 0.4)],
            ("empty", "r1", "x"): [("luke", 0.5)],
            ("empty", "r2", "y"): [],
        },
    )


def test_flat_lists_and_scans_equal_their_definitions_on_hostile_shapes():
    ds = hostile()
    assert_flat_matches_kernels(ds)
    assert_scans_match_plain(ds)
    best, affected, scanned = scans.most_credited(ds, 5, "x")
    assert best[4] == "r1" and affected >= 2  # r1 and r2 tie: the first is shown


def test_scans_of_data_without_matches_or_lists():
    ds = make_dataset({"m": ["luke"]}, {("m", "r1", "x"): [("vader", 0.5)], ("m", "r2", "x"): []})
    assert_flat_matches_kernels(ds)
    assert_scans_match_plain(ds)
    assert legacy.find_undiscounted_idcg_example(ds) is None
    assert legacy.find_many_to_one_example(ds) is None
    assert legacy.find_recall_counts_predictions_example(ds) is None
    nothing = make_dataset({"m": []}, {("m", "r1", "x"): [("vader", 0.5)]})
    assert_flat_matches_kernels(nothing)
    assert_scans_match_plain(nothing)


WORDS = st.sampled_from(["a", "ab", "b", "ba", "abc", "A!", "?", "c", "cab", None])


@settings(max_examples=60, deadline=None)
@given(
    gt=st.lists(st.sampled_from(["a", "ab", "abc", "b", "c!", "", "ca"]), max_size=5),
    reviews=st.lists(st.lists(st.tuples(WORDS, st.sampled_from([0.5, 0.25, math.nan])), max_size=6), max_size=6),
)
def test_flat_lists_and_scans_equal_their_definitions_on_random_lists(gt, reviews):
    preds = {("m", f"r{i}", "xy"[i % 2]): entries for i, entries in enumerate(reviews)}
    preds[("other", "r0", "x")] = [("a", 0.5)]  # a movie without GT beside
    ds = make_dataset({"m": gt}, preds)
    assert_flat_matches_kernels(ds)
    assert_scans_match_plain(ds, ks=(2, 5))


def test_flat_lists_are_remembered_per_dataset():
    ds = hostile()
    flat = flat_module.flat_lists(ds)
    assert flat_module.flat_lists(ds) is flat and flat.lists is legacy.review_lists(ds)
    assert flat_module.flat_lists(ds.subset(["n"])) is not flat
    scanned = flat.lists.iloc[flat.scan_rows("y")]  # the GT-less movie's rows are not scanned
    assert list(zip(scanned["movie"], scanned["model"], scanned["review_id"])) == [("n", "y", "r1")]
    assert len(flat.scan_rows(None)) == 6 and np.all(np.diff(flat.scan_rows(None)) > 0)


@pytest.mark.parametrize(
    "gt",
    [
        ["luke skywalker", "han", "so"],
        ["luke", ""],  # "" is inside every keyword
        [],
        ["x" * 2000, "han solo"],  # too many substrings for a set: `any` itself answers
    ],
)
def test_any_of_equals_any(gt):
    """The speed trick "substrings of the GT" against `any`'s definition, on a fresh matcher each."""
    keywords = ["luke", "sky", "skywalker luke", "", "han solo", "o", "xx", "vader", "luke skywalker"]
    expected = [bool(gt) and any(legacy_match(kw, g) for g in gt) for kw in keywords]
    assert AnyMatcher(gt).any_of(keywords) == expected
    matcher = AnyMatcher(gt)
    matcher.any_of(keywords)
    assert [matcher.any(kw) for kw in keywords] == expected  # what it remembers


@pytest.mark.parametrize("which", ["demo", "hostile"])
def test_reviews_of_equals_the_subsets_lists(which):
    """One movie × model's rows of the dataset's lists are the lists of that subset (what `reviews_of` read
    before)."""
    from kweval.data import load_dataset
    from kweval.legacy.examples import reviews_of

    ds = load_dataset() if which == "demo" else hostile()
    pairs = ds.predictions[["movie", "model"]].drop_duplicates().itertuples(index=False)
    for movie, model in pairs:
        expected = legacy.review_lists(ds.subset([movie], [model])).reset_index(drop=True)
        pd.testing.assert_frame_equal(reviews_of(ds, movie, model), expected)
