"""Speed trick "matching shared across k" (kweval.evaluation.pipeline.Matched): an evaluation built on the cleaning
and matching done for another k or gain equals `evaluate` alone, table for table and note for note, on movie-level
(ranked GT) and per-document (unranked GT) data; a `Matched` made under other matching options is not used."""

from __future__ import annotations

from dataclasses import replace

import pandas as pd
import pytest

from kweval.data import load_dataset
from kweval.evaluation.pipeline import EvalOptions, evaluate, match_dataset, matching_key
from tests.helpers import edge_collection


def _same(got, expected) -> None:
    for name in ("scores", "keywords", "ground_truth", "coverage", "skipped"):
        pd.testing.assert_frame_equal(getattr(got, name), getattr(expected, name), check_exact=True, obj=name)
    assert got.problems == expected.problems and got.options == expected.options
    assert (got.movies, got.models, got.score_exponent) == (expected.movies, expected.models, expected.score_exponent)


@pytest.fixture(scope="module")
def datasets(tmp_path_factory):
    return {
        "demo": load_dataset(None),
        "per-document": load_dataset(edge_collection(tmp_path_factory.mktemp("edge") / "edge")),
    }


@pytest.mark.parametrize("data", ["demo", "per-document"])
@pytest.mark.parametrize("change", [{"k": 7}, {"k": 1}, {"gain": "exponential"}, {"k": 3, "keyphrase": True}])
def test_an_evaluation_on_shared_matching_equals_evaluate(datasets, data, change):
    ds = datasets[data]
    first = EvalOptions(k=5)
    matched = match_dataset(ds, first)
    _same(evaluate(ds, first, matched=matched), evaluate(ds, first))
    options = replace(first, **change)
    assert matching_key(ds, options) == matched.key
    _same(evaluate(ds, options, matched=matched), evaluate(ds, options))
    _same(evaluate(ds, options, matched=matched), evaluate(ds, options))  # the notes are not added up across uses


def test_a_matching_under_other_options_is_not_used(datasets):
    ds = datasets["demo"]
    matched = match_dataset(ds, EvalOptions(match="exact"))
    options = EvalOptions(match="approx", k=7)
    assert matching_key(ds, options) != matched.key
    _same(evaluate(ds, options, matched=matched), evaluate(ds, options))
    summary = evaluate(ds, options, keywords=False)  # no per-keyword table: its own key
    assert matching_key(ds, options, keywords=False) != match_dataset(ds, options).key
    _same(evaluate(ds, options, keywords=False, matched=match_dataset(ds, options)), summary)
