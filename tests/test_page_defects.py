"""Issue 23's smaller dashboard defects, each with the test that failed before its fix (AppTest)."""

from __future__ import annotations

import io
import json

import pandas as pd

from dashboard.uploads import one_per_table
from tests.apptest import _upload, run, xss_files


def test_uploading_predictions_csv_and_parquet_says_which_is_used(monkeypatch):
    files = [f for f in xss_files() if not f[0].startswith("<")]
    csv_frame = pd.read_csv(io.BytesIO(files[0][1]))
    parquet = io.BytesIO()
    csv_frame.assign(model="from_parquet").to_parquet(parquet, index=False)
    files.append(("predictions.parquet", parquet.getvalue(), "application/octet-stream"))
    at = _upload(run(monkeypatch, None, {}), files)
    said = "\n".join(str(i.value) for i in at.sidebar.info).replace("\\", "")
    assert "predictions.parquet and predictions.csv are the same table (predictions): predictions.parquet is used" in (
        said
    )
    assert at.session_state["ctx"].dataset.model_names == ["from_parquet"]  # and it is the one evaluated


def test_one_per_table_keeps_parquet_and_leaves_other_tables_alone():
    kept, notes = one_per_table([("ground_truth.csv", b"g"), ("predictions.csv", b"c"), ("predictions.parquet", b"p")])
    assert kept == (("ground_truth.csv", b"g"), ("predictions.parquet", b"p")) and len(notes) == 1
    assert one_per_table([("predictions.csv", b"c")]) == ((("predictions.csv", b"c"),), [])


def test_nothing_matched_label_has_room(monkeypatch):
    at = run(monkeypatch, None, {"movie": "ALL"}, page="pages/explorer.py")
    box = at.checkbox(key="qp_none")
    assert box.label == "Nothing matched"
    columns = list(at.main.columns)
    i = next(i for i, c in enumerate(columns) if any(b.key == "qp_none" for b in c.checkbox))
    weights = [c.weight for c in columns[i - 2 : i + 1]]  # the row: sort, search, nothing matched
    assert weights[-1] / sum(weights) >= 2 / 7  # 1/6 of the row truncated the label to "Nothing matc…"


def test_metrics_doc_is_readable_on_the_summary(monkeypatch):
    at = run(monkeypatch, None, {"movie": "ALL"})
    doc = next(e for e in at.expander if "docs/metrics.md" in e.label)
    assert not doc.markdown  # drawn only when opened: not on a new session's first screen (issue 28 item 7)
    at.session_state["metrics_doc"] = True  # the visitor opens it: a rerun draws it
    at.run()
    doc = next(e for e in at.expander if "docs/metrics.md" in e.label)
    with open("docs/metrics.md", encoding="utf-8") as fh:
        assert doc.markdown[0].value.strip() == fh.read().strip()


def test_keyphrase_metrics_have_tooltips_on_per_document_data(monkeypatch, tmp_path):
    from tests.test_page_headline import _collection

    at = run(monkeypatch, _collection(tmp_path), {"movie": "ALL"})
    summary = next(df for df in at.dataframe if "n_skipped" in df.value.columns)
    config = json.loads(summary.proto.columns)
    for column in ("f1@O", "f1@5_flex", "r_precision"):
        assert column in summary.value.columns and config[column].get("help"), column


def test_compare_tables_show_titles_beside_ids(monkeypatch, demo_dataset):
    at = run(monkeypatch, None, {"movie": "ALL"}, page="pages/compare.py")
    titles = dict(zip(demo_dataset.movies["movie"], demo_dataset.movies["title"]))
    for columns in (["movie", "diff", "p_ttest_holm"], ["open", "review_id", "difference"]):
        frame = next(df.value for df in at.dataframe if all(c in df.value.columns for c in columns))
        assert frame["title"].tolist() == [titles[m] for m in frame["movie"]]  # the names the sidebar shows


def test_compare_caption_names_every_setting(monkeypatch):
    at = run(monkeypatch, None, {"movie": "star_tide", "agg": "micro"}, page="pages/compare.py")
    said = "\n".join(str(c.value) for c in at.caption).replace("\\", "")
    assert "micro aggregation · semantic matching off · sentiment off · movie " in said and "protocol kweval" in said
