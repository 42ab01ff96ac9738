"""Slices (kweval.evaluation.slices + aggregate.aggregate_by) and the dataset content hash on Dataset."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest

from kweval.data import load_dataset
from kweval.evaluation.aggregate import aggregate, aggregate_by
from kweval.evaluation.pipeline import EvalOptions, evaluate
from kweval.evaluation.slices import slice_labels


@pytest.fixture(scope="module")
def demo():
    ds = load_dataset()
    return ds, evaluate(ds, EvalOptions(k=3))


@pytest.mark.parametrize("how", ["macro", "micro"])
def test_aggregate_by_is_aggregate_over_the_rows_of_each_label(demo, how):
    ds, ev = demo
    labels = slice_labels(ev.scores, ds.reviews, "length")
    out = aggregate_by(ev, labels, how)
    assert list(out.columns[:3]) == ["slice", "model", "n_reviews"] and "movie" not in out.columns
    assert list(pd.unique(out["slice"])) == [c for c in labels.cat.categories if c in set(labels.astype(str))]
    assert ev.scores["movie"].isin(ds.movie_ids).all()  # the evaluation is not rewritten
    for (label, model), row in out.set_index(["slice", "model"]).iterrows():
        rows = ev.scores[(labels.astype(str) == label).to_numpy() & (ev.scores["model"] == model).to_numpy()]
        assert row["n_reviews"] == len(rows)
        if how == "macro":
            assert row["f1"] == pytest.approx(rows["f1"].mean())
            assert row["ndcg@3"] == pytest.approx(rows["ndcg@3"].mean())
        else:
            p = rows["n_matched"].sum() / rows["n_pred"].sum()
            r = rows["n_matched"].sum() / rows["n_gt"].sum()
            assert row["precision"] == pytest.approx(p) and row["f1"] == pytest.approx(2 * p * r / (p + r))
    assert out["gt_coverage"].isna().all()  # movie-level: no meaning per slice


@pytest.mark.parametrize("how", ["macro", "micro"])
def test_aggregate_by_some_metrics_gives_their_numbers_alone(demo, how):
    """The Summary's slices compute the shown metric only: the same numbers as every metric at once (a micro F1
    reads its micro pair, not shown)."""
    ds, ev = demo
    labels = slice_labels(ev.scores, ds.reviews, "rating")
    every = aggregate_by(ev, labels, how)
    for chosen in (["f1"], ["ndcg@3", "precision"], ["gt_coverage"]):
        some = aggregate_by(ev, labels, how, metrics=chosen)
        assert list(some.columns) == ["slice", "model", "n_reviews"] + [m for m in ev.metric_names if m in chosen]
        pd.testing.assert_frame_equal(some, every[list(some.columns)], check_exact=True)


def test_one_label_for_everything_is_the_all_row(demo):
    _, ev = demo
    one = aggregate_by(ev, pd.Series(["every review"] * len(ev.scores)), "micro").set_index("model")
    all_rows = aggregate(ev, "micro").query("movie == 'ALL'").set_index("model")
    metrics = [m for m in ev.metric_names if m != "gt_coverage"]
    pd.testing.assert_frame_equal(one[metrics], all_rows[metrics], check_exact=True)
    with pytest.raises(ValueError, match="one label per row"):
        aggregate_by(ev, pd.Series(["x"]))


def test_content_hash_follows_the_content(demo):
    ds, _ = demo
    h = ds.content_hash()
    assert h == load_dataset().content_hash() and len(h) == 64
    gt = ds.ground_truth.copy()
    gt.loc[gt.index[0], "keyword"] = gt["keyword"].iloc[0] + " "
    assert dataclasses.replace(ds, ground_truth=gt).content_hash() != h
    assert dataclasses.replace(ds, source="elsewhere").content_hash() != h
    reviews = ds.reviews.copy()
    reviews.loc[reviews.index[0], "rating"] = np.nan
    assert dataclasses.replace(ds, reviews=reviews).content_hash() != h
