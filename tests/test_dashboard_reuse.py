"""Issue 11 "Performance": what a sidebar change leaves unchanged is reused, with the same numbers."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import streamlit as st

from kweval import registry, report, slices
from kweval.aggregate import aggregate_by
from kweval.data import load_dataset
from kweval.evaluate import EvalOptions, evaluate
from tests.test_app import run


def _best_rows_by_loop(table: pd.DataFrame) -> dict[str, set[int]]:
    """The reference: per column and movie, the rows equal to the movie's best non-NaN value."""
    best = {}
    for col in report.metric_columns(table):
        direction = registry.better(col) if registry.info(col) is not None else registry.HIGHER
        if direction == registry.NEITHER:
            continue
        best[col] = set()
        for _, rows in table.groupby("movie", sort=False):
            if rows[col].notna().any():
                top = rows[col].max() if direction == registry.HIGHER else rows[col].min()
                best[col].update(int(i) for i in rows.index[rows[col] == top])
    return best


def test_best_rows_match_the_per_movie_loop_with_ties_nan_and_any_index():
    rng = np.random.default_rng(1)
    for trial in range(60):
        n = int(rng.integers(0, 10))
        table = pd.DataFrame({"movie": rng.choice(["a", "b", "ALL"], n), "model": "m",
                              "f1": np.where(rng.random(n) < 0.3, np.nan, rng.integers(0, 3, n) / 2),
                              "gt_coverage": rng.random(n)})
        if trial % 2:
            table.index = rng.permutation(n) + 7
        assert report.best_rows(table) == _best_rows_by_loop(table)


def test_aggregate_by_categorical_labels_equal_string_labels():
    ds = load_dataset(None)
    ev = evaluate(ds, EvalOptions())
    for by in slices.SLICES:
        labels = slices.slice_labels(ev.scores, ds.reviews, by)
        if labels is None:
            continue
        labels = labels.cat.add_categories(["unused"])  # a category no row has: no group
        labels.iloc[0] = np.nan  # a row without a label: in no group
        for how in ("macro", "micro"):
            by_codes = aggregate_by(ev, labels, how)
            as_text = pd.Series(labels.astype(object).where(labels.notna(), None)).astype(str).where(labels.notna(), "\0")
            by_text = aggregate_by(ev, as_text.where(as_text != "\0", "zzz-none"), how)
            by_text = by_text[by_text["slice"] != "zzz-none"].reset_index(drop=True)
            order = {g: i for i, g in enumerate(labels.cat.categories)}
            by_text = by_text.sort_values("slice", key=lambda s: s.map(order), kind="stable").reset_index(drop=True)
            assert "unused" not in set(by_codes["slice"])
            pd.testing.assert_frame_equal(by_codes, by_text, check_exact=True)


def test_summary_slice_labels_are_reused_when_the_rows_stay(monkeypatch):
    """A k change keeps the evaluated rows: the Summary's slice labels are not computed again."""
    st.cache_data.clear()
    calls = []
    original = slices.slice_labels
    monkeypatch.setattr(slices, "slice_labels", lambda *a, **kw: calls.append(a[2]) or original(*a, **kw))
    at = run(monkeypatch, None)
    assert sorted(calls) == ["length", "rating"]
    at.sidebar.number_input(key="sel_k").set_value(7).run()
    assert not at.exception
    assert sorted(calls) == ["length", "rating"]
    assert any(df.value.index.name == "rating" for df in at.dataframe)
