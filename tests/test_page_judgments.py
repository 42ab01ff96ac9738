"""Judgments in the explorer (AppTest): two sessions grading the same review under two names both land in the store;
undo removes only the undoer's latest; the judged metrics table shows both columns."""

from __future__ import annotations

from kweval import judgments
from kweval.data import load_dataset
from tests.apptest import run

REVIEW = {"movie": "night_heist", "review": "m1-r01", "hl": "yake"}


def _grader(monkeypatch, name: str):
    at = run(monkeypatch, None, dict(REVIEW), "pages/explorer.py", env={"KWEVAL_JUDGMENTS_DIR": _grader.folder})
    at.sidebar.text_input(key="annotator").input(name).run()
    return at


def test_two_sessions_grade_and_undo(monkeypatch, tmp_path):
    _grader.folder = str(tmp_path / "judgments")
    a = _grader(monkeypatch, "ann")
    b = _grader(monkeypatch, "bob")
    a.selectbox(key="judge_grade").set_value(3).run()
    keyword = a.selectbox(key="judge_keyword").value
    a.button(key="judge_save").click().run()
    b.radio(key="judge_side").set_value("gt").run()
    gt_keyword = b.selectbox(key="judge_keyword").value
    b.radio(key="judge_scope").set_value("movie").run()
    b.button(key="judge_save").click().run()
    a.selectbox(key="judge_grade").set_value(1).run()
    a.button(key="judge_save").click().run()  # a second grade by ann
    assert not a.exception and not b.exception
    store = judgments.JudgmentStore.for_dataset(load_dataset(None), None)
    assert str(store.path).startswith(_grader.folder)
    rows = store.list()
    assert sorted(zip(rows["annotator"], rows["grade"], rows["side"])) == [
        ("ann", 1, "prediction"),
        ("ann", 3, "prediction"),
        ("bob", 0, "gt"),
    ]
    assert set(rows["keyword"]) == {keyword, gt_keyword}
    assert rows.loc[rows["annotator"] == "bob", "review_id"].isna().all()  # the whole movie
    assert (rows.loc[rows["annotator"] == "ann", "review_id"] == "m1-r01").all()
    a.button(key="judge_undo").click().run()
    rows = store.list()
    assert sorted(zip(rows["annotator"], rows["grade"])) == [("ann", 3), ("bob", 0)]  # bob's untouched
    a.toggle(key="judged_toggle").set_value(True).run()
    table = next(d.value for d in a.dataframe if "ndcg@5_judged" in d.value.columns)
    assert set(table["model"]) == {"keybert", "yake", "keybert_vader"}


def test_saving_without_a_name_says_so(monkeypatch, tmp_path):
    at = run(monkeypatch, None, dict(REVIEW), "pages/explorer.py", env={"KWEVAL_JUDGMENTS_DIR": str(tmp_path)})
    at.button(key="judge_save").click().run()
    assert any("annotator name" in w.value for w in at.warning)
    assert judgments.JudgmentStore.for_dataset(load_dataset(None), None).list().empty


def test_summary_shows_judged_metrics_beside_the_reference(monkeypatch, tmp_path):
    monkeypatch.setenv("KWEVAL_JUDGMENTS_DIR", str(tmp_path))
    ds = load_dataset(None)
    gt = ds.ground_truth[ds.ground_truth["movie"] == "night_heist"]
    store = judgments.JudgmentStore.for_dataset(ds, None)
    store.add("night_heist", None, str(gt["keyword"].iloc[0]), 0, "ann", side="gt")  # a GT keyword marked wrong
    at = run(monkeypatch, None, {"movie": "ALL"}, "pages/summary.py", env={"KWEVAL_JUDGMENTS_DIR": str(tmp_path)})
    toggle = at.toggle(key="summary_judged_toggle")
    assert "1 judgment(s) stored" in toggle.label
    toggle.set_value(True).run()
    table = next(d.value for d in at.dataframe if "n_judgments" in d.value.columns)
    assert (
        "ndcg@5_judged" in table.columns
        and list(table.columns).index("ndcg@5_judged") == list(table.columns).index("ndcg@5") + 1
    )
    heist = table[table["movie"] == "night_heist"]
    assert (heist["n_judgments"] == 1).all()
    other = table[(table["movie"] != "night_heist") & (table["movie"] != "ALL")]
    assert (other["ndcg@5"] - other["ndcg@5_judged"]).abs().max() < 1e-12  # untouched movies: the same numbers


def test_summary_without_judgments_has_no_toggle(monkeypatch, tmp_path):
    at = run(monkeypatch, None, {"movie": "ALL"}, "pages/summary.py", env={"KWEVAL_JUDGMENTS_DIR": str(tmp_path)})
    assert not [t for t in at.toggle if t.key == "summary_judged_toggle"]
