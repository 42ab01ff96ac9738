"""The minor defects of issue 28 (item 8), each with a test that fails without its fix: Failures' slices by gap and
clear of their CI, the features this data has, "0% … never occur", "1 reviews", the legend over the axis title; the
preset table's tooltips and its bold best values."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd

from dashboard import charts
from dashboard import failures_view as view
from kweval.data import load_dataset
from kweval.data.vocabulary import DOCUMENT_WORDS, MOVIE_WORDS
from kweval.evaluation.pipeline import EvalOptions, evaluate
from kweval.explain.failures import failure_summary, failure_table
from kweval.stats.slices import worst_slices
from tests.apptest import run, texts
from tests.helpers import edge_collection


def _collection(tmp_path: Path) -> Path:
    return edge_collection(tmp_path / "Edge")


def test_worst_slices_are_clear_of_their_ci_and_sorted_by_gap(demo_dataset):
    ev = evaluate(demo_dataset, EvalOptions())  # the dashboard's options on the demo
    table = worst_slices(ev, demo_dataset, "yake", "ndcg@5")
    found = table.iloc[1:]
    assert len(found) >= 3 and found["gap"].is_monotonic_increasing  # the largest gap first
    assert (found["ci_high"] < found["overall"]).all()  # worse beyond the CI, every one
    assert table.attrs["not_clear"] >= 1  # SliceLine found some whose CI holds the overall value: counted, not listed
    assert found["slice"].iloc[0] == "movie=night_heist;rating=mid"  # the README's link (tests/test_readme_urls.py)


def test_failures_page_says_which_slices_and_features(monkeypatch, tmp_path, demo_dataset):
    at = run(monkeypatch, None, {"movie": "ALL", "model": "yake", "metric": "ndcg@5"}, "pages/failures.py")
    shown = texts(at).replace("\\", "")
    assert "rating band" in shown and "not listed: their CI contains the overall value" in shown
    slices = next(df.value for df in at.dataframe if "gap" in df.value.columns)
    assert slices["gap"].is_monotonic_increasing and (slices["ci_high"] < slices["overall"]).all()
    at = run(monkeypatch, _collection(tmp_path), {"movie": "ALL"}, "pages/failures.py")
    assert "rating band" not in texts(at)  # no ratings in a keyphrase collection: not offered


def test_no_0_percent_that_never_occur_and_no_1_reviews(tmp_path):
    root = tmp_path / "c"
    (root / "docsutf8").mkdir(parents=True)
    (root / "keys").mkdir()
    (root / "predictions").mkdir()
    (root / "docsutf8" / "d1.txt").write_text("Graph ranking of keyphrases.")
    (root / "keys" / "d1.key").write_text("graph ranking\n")
    (root / "predictions" / "m.jsonl").write_text(json.dumps({"id": "d1", "keyphrases": ["keyphrases"]}) + "\n")
    ds = load_dataset(str(root))
    counts = failure_summary(failure_table(ds, evaluate(ds, EvalOptions(keyphrase=True, present=True))), by=["model"])
    said = view.headline(counts, ["m"], "documents")
    assert "every GT keyword occurs in the text" in said and "0% of the GT keywords" not in said
    assert view.share(1, 400) == "<1%" and view.share(399, 400) == ">99%" and view.share(1, 4) == "25%"
    assert view.category_caption("hit", "m", 1, DOCUMENT_WORDS).startswith("Filtered: 1 document with keywords")
    assert view.category_caption("hit", None, 2, MOVIE_WORDS).startswith("Filtered: 2 reviews with keywords")


def test_the_failure_bars_legend_stays_off_the_axis_title():
    frame = pd.DataFrame(
        {"model": ["a", "a"], "category": ["hit", "off_reference"], "count": [3, 7], "share": [0.3, 0.7]}
    )
    svg = charts.failure_bars(view.bar_frame(frame.assign(side="prediction"), "prediction", ["a"]), "t", "keywords", {})
    y = {
        kind: [float(v) for v in re.findall(pattern, svg)]
        for kind, pattern in (
            ("axis title", r'<text class="kw-axis-title" x="[\d.]+" y="([\d.]+)"'),
            ("legend", r'<rect x="[\d.]+" y="([\d.]+)" width="10" height="10"'),
        )
    }
    # the legend's swatches below the axis title's baseline: never over it
    assert len(y["axis title"]) == 1 and len(y["legend"]) == 2 and min(y["legend"]) > y["axis title"][0]


def test_preset_table_has_a_tooltip_on_every_column_and_bold_best_values(monkeypatch, tmp_path):
    at = run(monkeypatch, _collection(tmp_path), {"movie": "ALL", "k": "5"})
    at.radio(key="qp_protocol").set_value("meng").run()
    assert not at.exception
    frame = next(df for df in at.dataframe if "n_documents" in df.value.columns)
    config = json.loads(frame.proto.columns)
    metrics = [c for c in frame.value.columns if c not in ("movie", "model", "n_documents")]
    assert {"p@M", "r@O", "p@5_present", "r@M_absent"} & set(metrics)
    missing = [c for c in metrics if not config.get(c, {}).get("help")]
    assert not missing, missing  # p@M, r@O, *_present: a definition each
    assert "font-weight" in frame.proto.arrow_data.styler.styles  # "Bold: the best value", true here too
