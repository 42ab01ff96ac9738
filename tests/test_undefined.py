"""Undefined is not zero (issue 28, item 3): a metric whose denominator is empty is "—" with its reason, left out of
charts, headline and comparisons, empty in CSV and null in JSON, per document too."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dashboard.review_card import metric_value_html
from kweval.cli import main
from kweval.data import load_dataset
from kweval.evaluation.aggregate import ALL, aggregate
from kweval.evaluation.pipeline import EvalOptions, evaluate
from kweval.metrics import registry, undefined
from kweval.metrics.docs_table import doc_reference
from tests.apptest import bar_charts, run, table, texts
from tests.helpers import SEMEVAL

# every GT keyphrase of every document occurs in its text: no absent gold, as in SemEval2017
DOCS = {
    "d1": ("Graph ranking of keyphrase extraction in documents.", ["keyphrase extraction", "graph ranking"]),
    "d2": ("Topic models of text collections.", ["topic models", "text collections"]),
    "d3": ("Neural networks for text.", ["neural networks"]),
}


def _collection(root: Path) -> Path:
    (root / "docsutf8").mkdir(parents=True)
    (root / "keys").mkdir()
    (root / "predictions").mkdir()
    for doc, (text, keys) in DOCS.items():
        (root / "docsutf8" / f"{doc}.txt").write_text(text, encoding="utf-8")
        (root / "keys" / f"{doc}.key").write_text("\n".join(keys) + "\n", encoding="utf-8")
    for model, picks in {"good": [0, 1], "poor": [1]}.items():
        lines = [{"id": d, "keyphrases": [k[i] for i in picks if i < len(k)] + ["text"]} for d, (_, k) in DOCS.items()]
        (root / "predictions" / f"{model}.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    return root


def test_the_rule_is_the_registry_s_and_documented():
    assert undefined.rules(["recall_absent", "recall_present", "f1@7_present", "precision", "recall"]) == {
        "recall_absent": "n_gt_absent",
        "recall_present": "n_gt_present",
        "f1@7_present": "n_gt_present",
    }
    columns = {"recall_absent": np.array([0.5, 0.0, 0.0]), "n_gt_absent": np.array([2, 0, 1]), "precision": [0.0]}
    undefined.apply(columns)
    assert np.isnan(columns["recall_absent"][1]) and columns["recall_absent"][[0, 2]].tolist() == [0.5, 0.0]
    assert "undefined (empty, not 0) where every GT keyword of the review occurs in its text" in doc_reference()
    assert "undefined (empty, not 0)" in registry.info("recall_absent").help()
    assert "document" in undefined.reason("recall_absent", "document")


def test_without_absent_gold_recall_absent_is_undefined_not_zero(tmp_path, capsys):
    root = _collection(tmp_path / "c")
    ds = load_dataset(str(root))
    ev = evaluate(ds, EvalOptions(keyphrase=True, present=True))
    assert ev.scores["recall_absent"].isna().all() and (ev.scores["n_gt_absent"] == 0).all()  # per document
    assert ev.scores["recall_present"].notna().all()
    for how in ("macro", "micro"):
        summary = aggregate(ev, how)
        assert summary["recall_absent"].isna().all() and summary["recall_present"].notna().all(), how
    assert main(["evaluate", str(root), "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    assert all(r["recall_absent"] is None for r in rows) and all(r["recall_present"] is not None for r in rows)
    out = ["--per-review", str(tmp_path / "per.csv"), "--out", str(tmp_path / "s.csv")]
    assert main(["evaluate", str(root), *out]) == 0
    capsys.readouterr()
    for name in ("s.csv", "per.csv"):  # empty, not 0, in the summary and per document
        frame = pd.read_csv(tmp_path / name, keep_default_na=False, dtype=str)
        assert set(frame["recall_absent"]) == {""}, name
    assert main(["evaluate", str(root), "--format", "markdown"]) == 0
    assert "| — |" in capsys.readouterr().out
    assert main(["evaluate", str(root), "--fail-under", "recall_absent=0.1"]) == 1
    assert (
        "recall_absent is undefined (—: every GT keyword of the document occurs in its text" in capsys.readouterr().err
    )
    assert main(["compare", str(root), "--format", "json"]) == 0
    assert "recall_absent" not in {r["metric"] for r in json.loads(capsys.readouterr().out)}


def test_dashboard_says_undefined_and_leaves_it_out(monkeypatch, tmp_path):
    root = _collection(tmp_path / "c")
    at = run(monkeypatch, root, {"movie": "ALL"})
    shown = texts(at).replace("\\", "")
    assert "Recall (absent) (recall_absent): — (undefined) on every document: every GT keyword of the document" in shown
    summary = next(df for df in at.dataframe if "n_skipped" in df.value.columns)
    assert summary.value["recall_absent"].isna().all()  # the value underneath; the cell reads "—" (tables.py)
    titles = {str(t) for _spec, rows in bar_charts(at) for t in rows["metric"]}  # the small multiples' panels
    assert "Recall (absent)" not in titles and "Recall (present)" in titles  # no empty panel
    card = "\n".join(m.value for m in at.markdown if ":material/" in m.value)  # the card's marked lines
    assert "Recall (absent)" not in card and "recall_absent" not in card
    heat = next(s for s in at.selectbox if s.label.startswith("Metric for the heatmap"))
    assert "recall_absent" not in heat.options
    at.switch_page("pages/compare.py").run()
    assert not at.exception
    compared = table(at, "compare_table")
    assert "recall_absent" not in set(compared["metric"]) and "recall_present" in set(compared["metric"])
    assert "Recall (absent) (recall_absent): — (undefined)" in texts(at).replace("\\", "")


def test_an_explorer_card_shows_a_dash_with_the_reason():
    html = metric_value_html("recall_absent", float("nan"), "document")
    assert html.startswith("recall_absent <span title=") and html.endswith(">—</span>")
    assert "every GT keyword of the document occurs in its text" in html
    assert metric_value_html("recall", 0.0) == "recall 0.000"  # a real 0 stays 0


@pytest.mark.keyphrase
def test_semeval_has_no_absent_gold_so_recall_absent_is_undefined(tmp_path, capsys):
    """Under approx matching (the issue's view) every gold phrase of SemEval2017 occurs in its text: recall_absent is
    undefined; under the per-document default (stem) 90 gold phrases of 63 documents are absent: it is the mean over
    those 63 documents, the 430 others undefined (not 0)."""
    assert main(["describe", str(SEMEVAL), "--match", "approx"]) == 0
    assert re.search(r"absent_keyphrases\s+0\n", capsys.readouterr().out)  # kweval describe: no absent gold
    ds = load_dataset(str(SEMEVAL), predictions={"first": _first_words(tmp_path)})
    summary = aggregate(evaluate(ds, EvalOptions(match="approx", keyphrase=True, present=True)))
    assert summary.loc[summary["movie"] == ALL, "recall_absent"].isna().all()
    assert main(["describe", str(SEMEVAL)]) == 0
    assert re.search(r"absent_documents\s+63\n", capsys.readouterr().out)  # stem: 63 documents with absent gold
    ev = evaluate(ds, EvalOptions(keyphrase=True, present=True))
    defined = ev.scores["recall_absent"].notna()
    assert int(defined.sum()) == 63 and (ev.scores.loc[~defined, "n_gt_absent"] == 0).all()
    mean = aggregate(ev).set_index("movie").at[ALL, "recall_absent"]
    assert mean == pytest.approx(ev.scores.loc[defined, "recall_absent"].mean(), abs=1e-12)


def _first_words(tmp_path: Path) -> Path:
    lines = []
    for doc in sorted((SEMEVAL / "docsutf8").glob("*.txt")):
        words = doc.read_text(encoding="utf-8").split()
        lines.append(json.dumps({"id": doc.stem, "keyphrases": [" ".join(words[i : i + 2]) for i in range(0, 20, 2)]}))
    path = tmp_path / "first.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path
