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


def test_parity_is_hidden_and_says_why_on_per_document_data(monkeypatch, tmp_path):
    """Issue 23: the page was offered for SemEval2017-like data (rows flagged red, 22–38 s); now it is not linked
    there, and a direct visit says in one line that it applies only to the DNLP layout."""
    from tests.test_keyphrase import DOCS, PREDS, run_cli, write_collection, write_jsonl

    root = write_collection(tmp_path / "Toy", DOCS)
    preds = write_jsonl(tmp_path / "model.jsonl", PREDS)
    data = tmp_path / "tidy"
    assert run_cli("convert", str(root), str(data), "--predictions", f"m={preds}").returncode == 0
    at = run(monkeypatch, data, {}, page="pages/parity.py")
    assert [i.value for i in at.main.info] == [
        "Notebook parity applies only to the DNLP layout (one ranked GT list shared by a group of texts, the "
        "notebooks' data); this data has a GT list per document."  # in the data's words: no "movie" here
    ]
    assert not at.dataframe and not at.main.expander  # nothing replayed
    links = [e.proto.page for e in at.get("page_link")]
    assert links and not any("parity" in link for link in links), links
    # on movie-level data the page is linked
    demo = run(monkeypatch, None, {})
    assert any("parity" in e.proto.page for e in demo.get("page_link"))
