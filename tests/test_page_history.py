"""The History page and the Summary's "Record this run" (AppTest): the page's comparison is `kweval runs compare`'s."""

from __future__ import annotations

from urllib.parse import parse_qsl

import numpy as np
import pandas as pd

import kweval
from kweval.runs import RunSource, RunStore, compare_runs, evaluation_tables, record_run
from tests.apptest import run, texts


def _dataframe(at, key: str) -> pd.DataFrame:
    found = [d.value for d in at.dataframe if d.key == key] if hasattr(at.dataframe[0], "key") else []
    if not found:  # older AppTest: pick by columns
        wanted = {"history_compare": "p_holm", "history_worse": "open", "runs_table": "settings"}[key]
        found = [d.value for d in at.dataframe if wanted in d.value.columns]
    assert found, f"no dataframe {key}"
    return found[0]


def _record_demo(path, model: str, options: kweval.EvalOptions, name: str):
    dataset = kweval.load_dataset(None)
    evaluation = kweval.evaluate(dataset.subset(models=[model]), options)
    source = RunSource("demo", "tidy", False, "0" * 64, [], {})
    tables = evaluation_tables(evaluation, "macro", n_boot=100)
    in_force = evaluation.options.as_dict()  # match auto resolved (approx on the demo), as --record and the button
    return record_run(RunStore(path), tables, source, protocol="kweval", aggregate="macro", options=in_force, name=name)


def test_history_page_shows_the_runs_and_compares_them_as_the_cli(monkeypatch, tmp_path):
    path = tmp_path / "runs.sqlite"
    a = _record_demo(path, "keybert", kweval.EvalOptions(), "first")
    b = _record_demo(path, "yake", kweval.EvalOptions(k=3, match="exact"), "second")
    at = run(monkeypatch, None, {"a": a.id, "b": b.id}, "pages/history.py", env={"KWEVAL_RUNS": str(path)})
    shown = texts(at).replace("\\", "")  # Markdown escapes
    assert "Run history" in shown and "2 of the 2 runs recorded" in shown
    assert "settings that differ (A→B): k 5→3; match approx→exact" in shown
    assert len(at.get("plotly_chart")) == 1
    table = _dataframe(at, "history_compare")
    expected = compare_runs(RunStore(path), a, b).table  # `kweval runs compare first second`
    assert table["metric"].tolist() == expected["metric"].tolist()
    for column in ("a", "b", "difference", "ci_low", "ci_high", "p_holm"):
        np.testing.assert_allclose(table[column].to_numpy(float), expected[column].to_numpy(float), rtol=1e-12)
    worse = _dataframe(at, "history_worse")
    query = dict(parse_qsl(worse["open"].iloc[0].split("?", 1)[1]))  # the explorer at run B's settings
    assert worse["open"].iloc[0].startswith("./explorer?")
    assert query["k"] == "3" and query["match"] == "exact" and query["review"] == worse["review_id"].iloc[0]
    assert query["models"] == "keybert,yake"


def test_history_page_without_runs_says_how_to_record(monkeypatch, tmp_path):
    at = run(monkeypatch, None, {}, "pages/history.py", env={"KWEVAL_RUNS": str(tmp_path / "none.sqlite")})
    assert "No run recorded yet here" in texts(at)
    garbage = tmp_path / "garbage.sqlite"
    garbage.write_bytes(b"no database" * 100)
    at = run(monkeypatch, None, {}, "pages/history.py", env={"KWEVAL_RUNS": str(garbage)})
    assert "not a kweval runs database, or damaged" in texts(at)


def test_record_this_run_keeps_the_summary_on_screen(monkeypatch, tmp_path):
    path = tmp_path / "runs.sqlite"
    params = {"models": "keybert,yake", "k": "3", "agg": "micro"}
    at = run(monkeypatch, None, params, "pages/summary.py", env={"KWEVAL_RUNS": str(path)})
    at.text_input(key="record_name").input("from the page").run()
    at.button(key="record_run").click().run()
    assert not at.exception, [e.message for e in at.exception]
    (info,) = RunStore(path).runs()
    assert info.name == "from the page" and info.models == ["keybert", "yake"] and info.aggregate == "micro"
    assert info.options["k"] == 3 and info.data == "demo" and "--k" in info.arguments
    assert "Recorded run" in texts(at)
    dataset = kweval.load_dataset(None)
    evaluation = kweval.evaluate(dataset, kweval.EvalOptions(k=3, keyphrase=False, present=False))
    assert info.dataset_sha256 == kweval.runs.evaluation_reference(evaluation)
    stored = RunStore(path).scores(info)
    expected = evaluation.scores[evaluation.scores["model"].isin(["keybert", "yake"])]
    np.testing.assert_allclose(stored["ndcg@3"].to_numpy(), expected["ndcg@3"].to_numpy())
