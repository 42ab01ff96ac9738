"""The match stage's fast paths against their plain definitions, and `evaluate(keywords=False)`.

- `matching.keywords_match_indexed` (codes and character masks) is `keywords_match` on every pair;
- `_arrays.unique_codes` (a presence mask) is `np.unique(..., return_inverse=True)`, `_arrays.stable_order` is
`np.lexsort`;
- `tables.gt_coverage_table` (a slot per GT row) counts the distinct matched GT rows per movie × model;
- without the per-keyword table every other table of an evaluation is the same, in every match mode.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kweval._arrays import stable_order, unique_codes
from kweval.data import load_dataset
from kweval.data.dataset import Dataset
from kweval.data.synth import SynthOptions, synthesize
from kweval.evaluation.pipeline import EvalOptions, evaluate
from kweval.evaluation.tables import gt_coverage_table
from kweval.scale.file_groups import evaluate_movie_files, movie_file_sizes
from kweval.text.matching import MATCH_MODES, keywords_match, keywords_match_indexed
from tests.helpers import write_bad_dnlp

# characters whose code points collide modulo 64 (the masks' bits: "a" 97, "!" 33, "á" 225), an astral one, spaces,
# and an "s" for the stemmer; strings of any shape (empty, doubled or edge spaces) as well as normalized ones
_CHARS = 'ab! "ás' + "\U0001d41a"
_strings = st.one_of(
    st.text(alphabet=_CHARS, max_size=10),
    st.lists(st.text(alphabet="abs", min_size=1, max_size=5), min_size=1, max_size=3).map(" ".join),
)


@settings(max_examples=200, deadline=None)
@given(preds=st.lists(_strings, min_size=1, max_size=8), gts=st.lists(_strings, min_size=1, max_size=8), data=st.data())
def test_keywords_match_indexed_is_keywords_match(preds, gts, data):
    n = data.draw(st.integers(0, 40))
    pred_of = data.draw(st.lists(st.integers(0, len(preds) - 1), min_size=n, max_size=n))
    gt_of = data.draw(st.lists(st.integers(0, len(gts) - 1), min_size=n, max_size=n))
    for mode in MATCH_MODES:
        got = keywords_match_indexed(
            preds, gts, np.array(pred_of, dtype=np.int64), np.array(gt_of, dtype=np.int64), mode
        )
        assert got.dtype == bool and got.tolist() == [
            keywords_match(preds[i], gts[j], mode) for i, j in zip(pred_of, gt_of)
        ], mode


@pytest.mark.parametrize("mode", MATCH_MODES)
def test_keywords_match_indexed_on_every_pair_of_real_keywords(mode):
    """Equal strings, substrings, masks that agree without a match ("star" and "rats"), stems, colliding bits."""
    words = [
        "war",
        "star war",
        "star wars",
        "wars",
        "rats",
        "a",
        "star",
        "lightsaber duels",
        "lightsaber duel",
        "jedi",
        "!",
        "á",
        "",
    ]
    pred_of, gt_of = np.divmod(np.arange(len(words) ** 2), len(words))
    expected = [keywords_match(words[i], words[j], mode) for i, j in zip(pred_of.tolist(), gt_of.tolist())]
    assert keywords_match_indexed(words, words, pred_of, gt_of, mode).tolist() == expected
    assert any(expected) and not all(expected)


@settings(max_examples=200, deadline=None)
@given(codes=st.lists(st.integers(0, 30), max_size=60), spare=st.integers(0, 5))
def test_unique_codes_is_np_unique(codes, spare):
    codes = np.array(codes, dtype=np.int64)
    ids, inverse = unique_codes(codes, (int(codes.max()) + 1 if len(codes) else 0) + spare)
    want_ids, want_inverse = np.unique(codes, return_inverse=True)
    assert ids.tolist() == want_ids.tolist() and inverse.tolist() == want_inverse.reshape(-1).tolist()


@settings(max_examples=200, deadline=None)
@given(keys=st.lists(st.tuples(st.integers(0, 4), st.integers(-2, 3)), max_size=40), presorted=st.booleans())
def test_stable_order_of_the_match_stage_is_np_lexsort(keys, presorted):
    """As the match stage calls it (group, then rank, negative ranks too); also on rows already in order, where it skips
    the sort."""
    if presorted:
        keys = sorted(keys, key=lambda kv: kv)
    major = np.array([k[0] for k in keys], dtype=np.int64)
    minor = np.array([k[1] for k in keys], dtype=np.int64)
    order = stable_order(None, len(major), major, minor)
    got = np.arange(len(major)) if order is None else order
    assert got.tolist() == np.lexsort((minor, major)).tolist()


@settings(max_examples=150, deadline=None)
@given(sizes=st.lists(st.integers(1, 6), min_size=1, max_size=4), n_models=st.integers(1, 3), data=st.data())
def test_coverage_counts_the_distinct_matched_gt_rows_of_each_movie_and_model(sizes, n_models, data):
    movies = [f"m{i}" for i in range(len(sizes))]
    models = [f"M{i}" for i in range(n_models)]
    drawn = data.draw(
        st.lists(
            st.tuples(st.integers(0, len(movies) - 1), st.integers(0, n_models - 1), st.integers(0, 99)), max_size=40
        )
    )
    rows = [(mv, md, pos % sizes[mv]) for mv, md, pos in drawn]  # a matched row: its movie, model and GT row
    movie_of, model_of, gt_pos = (np.array([r[i] for r in rows], dtype=np.int64) for i in range(3))
    out = gt_coverage_table(movie_of, model_of, gt_pos, pd.Series(sizes, index=movies), movies, models)
    assert out[["movie", "model"]].values.tolist() == [[mv, md] for mv in movies for md in models]
    assert out["n_gt"].tolist() == [sizes[mv] for mv in range(len(movies)) for _ in models]
    assert out["n_covered"].tolist() == [
        len({r for r in rows if r[:2] == (mv, md)}) for mv in range(len(movies)) for md in range(n_models)
    ]
    assert out["gt_coverage"].tolist() == pytest.approx((out["n_covered"] / out["n_gt"]).tolist())


# --- evaluate(keywords=False) -------------------------------------------------------------------------------


def _per_document_with_a_review_without_gt() -> Dataset:
    """Synthetic per-document GT (each review its own list), one review's list removed, some empty and missing
    outputs."""
    ds = synthesize(
        movies=2,
        reviews_per_movie=40,
        models=3,
        seed=4,
        gt="per-document",
        options=SynthOptions(p_empty=0.05, p_missing=0.05),
    )
    gt = ds.ground_truth
    return Dataset(
        ds.movies,
        ds.reviews,
        ds.predictions,
        gt[gt["review_id"] != gt["review_id"].iloc[0]].reset_index(drop=True),
        ds.models,
    )


def _assert_same_but_the_keyword_table(lean, full):
    for table in ("scores", "coverage", "skipped", "ground_truth"):
        pd.testing.assert_frame_equal(getattr(lean, table), getattr(full, table), check_dtype=True)
    assert (lean.problems, lean.movies, lean.models, lean.score_exponent) == (
        full.problems,
        full.movies,
        full.models,
        full.score_exponent,
    )
    assert len(full.keywords) > 0
    pd.testing.assert_frame_equal(
        lean.keywords, full.keywords.iloc[:0], check_dtype=True
    )  # empty, same columns and dtypes


@pytest.mark.parametrize("match", MATCH_MODES)
def test_without_the_keyword_table_per_document_evaluations_are_the_same(match):
    ds = _per_document_with_a_review_without_gt()
    options = EvalOptions(k=3, match=match, keyphrase=True, present=True)
    full = evaluate(ds, options)
    _assert_same_but_the_keyword_table(evaluate(ds, options, keywords=False), full)
    assert any("review(s) without their own ground truth are skipped" in str(p) for p in full.problems)
    assert full.scores["n_matched"].sum() > 0


@pytest.mark.parametrize("match", ["approx", "exact"])
def test_without_the_keyword_table_movie_level_evaluations_are_the_same(match, tmp_path: Path):
    ds = load_dataset(write_bad_dnlp(tmp_path))  # every kind of cleaning problem
    options = EvalOptions(match=match, gt_order="helpful")
    _assert_same_but_the_keyword_table(evaluate(ds, options, keywords=False), evaluate(ds, options))
    movie_level = synthesize(movies=2, reviews_per_movie=30, models=2, seed=1)
    _assert_same_but_the_keyword_table(evaluate(movie_level, options, keywords=False), evaluate(movie_level, options))


def test_movie_file_groups_without_the_keyword_table(tmp_path: Path):
    root = write_bad_dnlp(tmp_path)
    movies = list(movie_file_sizes(root))
    full = evaluate_movie_files(movies, root, EvalOptions())
    lean = evaluate_movie_files(movies, root, EvalOptions(), keywords=False)
    assert (lean.movies, lean.models, lean.source) == (full.movies, full.models, full.source)
    _assert_same_but_the_keyword_table(lean.evaluation, full.evaluation)


def test_sentiment_reads_the_keyword_table_even_when_it_is_not_kept(tmp_path: Path, monkeypatch):
    pytest.importorskip("vaderSentiment")
    monkeypatch.setenv("KWEVAL_CACHE_DIR", str(tmp_path))
    ds = synthesize(movies=1, reviews_per_movie=20, models=2, seed=2, gt="per-document")
    options = EvalOptions(sentiment=True)
    full = evaluate(ds, options)
    assert full.scores["sas_keywords"].notna().any()
    _assert_same_but_the_keyword_table(evaluate(ds, options, keywords=False), full)


def test_substring_index_memo_equals_its_definition_and_keeps_no_long_list():
    """The speed trick (`_substrings_memo`) against the plain definition; a long list is never kept in the memo."""
    from kweval.text import matching

    short = ["star wars", "jedi", "wars"]
    expected = {s[a:b] for s in short for a in range(len(s)) for b in range(a + 1, len(s) + 1)}
    assert matching._substrings(short) == expected
    assert matching._substrings(list(short)) is matching._substrings(short)  # served by the memo
    long = [f"kw{i}" for i in range(matching._MEMO_ITEMS + 1)]
    before = matching._substrings_memo.cache_info().currsize
    assert matching._substrings(long) == {s[a:b] for s in long for a in range(len(s)) for b in range(a + 1, len(s) + 1)}
    assert matching._substrings_memo.cache_info().currsize == before
