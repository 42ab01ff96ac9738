"""The Notebook parity page (issue 5): legacy beside corrected, flips, and live defect examples."""

from __future__ import annotations

import pandas as pd
import pytest

from kweval import legacy
from kweval.data import load_dataset
from tests.apptest import DNLP, run, texts


@pytest.mark.dnlp
def test_parity_page_on_sw_episode6_shows_the_flips(monkeypatch):
    at = run(monkeypatch, DNLP, {"movie": "SW_Episode6", "models": "base,reranker"}, page="pages/parity.py")
    frames = [df.value for df in at.dataframe]
    side = next(f for f in frames if {"legacy", "corrected", "flips"} <= set(f.columns))
    side = side.data if hasattr(side, "data") else side  # a Styler carries its frame in .data
    expected = legacy.legacy_vs_corrected(load_dataset(DNLP).subset(["SW_Episode6"], ["base", "reranker"]))
    pd.testing.assert_frame_equal(side.reset_index(drop=True), expected.reset_index(drop=True))
    ndcg = side[(side["metric"] == "ndcg@5") & (side["model"] == "base")].iloc[0]
    assert round(ndcg["legacy"], 4) == 0.6973 and ndcg["flips"]
    flips = next(f for f in frames if list(f.columns) == ["movie", "metric", "legacy_winner", "corrected_winner"])
    assert {"ndcg@5", "w_precision"} <= set(flips["metric"])
    text = " ".join(m.value for m in at.markdown)
    assert "inconsistent pacing" in text  # review 4 is scored against the letters of GT keyword 4
    assert "credited" in text and "jedi" in text  # one GT keyword credited many times


def test_parity_page_on_the_demo_renders(monkeypatch):
    at = run(monkeypatch, None, page="pages/parity.py")
    assert any({"legacy", "corrected"} <= set(getattr(df.value, "data", df.value).columns) for df in at.dataframe)
    shown = texts(at)
    for title in ("IDCG without the discount", "One GT keyword credited many times", "SAS averages"):
        assert title in " ".join(e.label for e in at.expander)
    assert "IDCG in the code:" in shown and "sas_keywords: notebook" in shown  # read from the examples' attributes


def test_parity_page_semantic_example_on_demand(monkeypatch):
    """Defect 6 runs the notebook encoder only when asked; its lines come from the example's attributes."""
    at = run(monkeypatch, None, page="pages/parity.py")
    assert "padding token(s)" not in texts(at)
    at.button(key="semantic_example").click().run()
    assert not at.exception, [e.message for e in at.exception]
    shown = texts(at)
    assert "padding token(s) in its review" in shown and "best cosine to the GT" in shown, shown[-2000:]
