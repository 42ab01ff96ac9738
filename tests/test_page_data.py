"""The Data page (AppTest): what is loaded, column help."""

from __future__ import annotations

import pytest

from tests.apptest import _column_help, run, table, texts
from tests.helpers import DNLP


@pytest.mark.dnlp
def test_data_page(monkeypatch, cores):
    ds = cores["dnlp"]
    at = run(monkeypatch, DNLP, {}, "pages/data.py")
    movies = table(at, "movies_table")
    assert movies["movie"].tolist() == ds.movie_ids
    assert movies["reviews"].sum() == len(ds.reviews)
    assert "kweval convert" in at.code[0].value
    assert "predictions" in texts(at) and "score_direction" in texts(at)


def test_data_page_and_slices_tables_explain_their_columns(monkeypatch):
    """Issue 11 item 6: every column of the Data page's tables and of the slices tables has its registry help."""
    from kweval.metrics import registry

    at = run(monkeypatch, None, {"models": "yake,keybert_vader"}, "pages/data.py")
    shown = {
        "movies": next(df for df in at.dataframe if "gt_keywords" in df.value.columns),
        "models": next(df for df in at.dataframe if "score_direction" in df.value.columns),
    }
    identifiers = {"movie", "title", "model", "review_id"}
    for name, frame in shown.items():
        helps = _column_help(frame)
        wanted = [c for c in frame.value.columns if c not in identifiers]
        assert wanted and set(helps) == set(wanted), (name, helps)
        for col in wanted:
            entry = registry.info(col)
            assert helps[col] == f"{entry.label}: {entry.help()}"
    assert "without output from the model" in _column_help(shown["models"])["skipped_reviews"]

    at.query_params["metric"] = "ap@5"  # the Summary's metric for the heatmap and slices
    at.switch_page("pages/summary.py").run()
    slices = [
        df for df in at.dataframe if "reviews" in df.value.columns and df.value.index.name in ("rating", "length")
    ]
    assert len(slices) == 2
    for frame in slices:
        helps = _column_help(frame)
        assert helps["yake"] == helps["keybert_vader"] == f"AP@5: {registry.info('ap@5').help()}"
        assert helps["reviews"].startswith("Reviews: reviews evaluated for this row")
