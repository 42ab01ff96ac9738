"""Prediction files added in the sidebar, and the preset Summary's command runnable as shown (issue 28, item 4)."""

from __future__ import annotations

import json
import shlex
import shutil

import pytest

from dashboard.protocol_select import protocol_command
from kweval.cli import main
from tests.apptest import run, texts
from tests.helpers import EDGE, edge_jsonl


def _jsonl(reverse: bool = False) -> bytes:
    return edge_jsonl(reverse).encode()


def test_two_uploaded_prediction_files_are_two_models(monkeypatch, tmp_path):
    folder = tmp_path / "Edge"
    shutil.copytree(EDGE, folder)  # a collection without predictions
    at = run(monkeypatch, folder, {"movie": "ALL"})
    assert "no predictions to evaluate" in texts(at)
    files = [("first.jsonl", _jsonl(), "application/json"), ("reversed.jsonl", _jsonl(True), "application/json")]
    at.sidebar.file_uploader(key="prediction_upload").set_value(files).run()
    assert not at.exception, [e.message for e in at.exception]
    ctx = at.session_state["ctx"]
    assert ctx.dataset.model_names == ["first", "reversed"] and list(ctx.selection.models) == ["first", "reversed"]
    assert ctx.added == {"first": "first.jsonl", "reversed": "reversed.jsonl"}
    shown = texts(at).replace("\\", "")
    assert "Added model(s): first (first.jsonl" in shown and "At a glance" in shown
    at.switch_page("pages/compare.py").run()  # the session's uploads hold on another page
    assert not at.exception and at.session_state["ctx"].dataset.model_names == ["first", "reversed"]
    at.switch_page("pages/data.py").run()
    assert "Added predictions (sidebar ▸ Dataset ▸ Add predictions" in texts(at).replace("\\", "").replace("*", "")


def test_the_preset_command_is_runnable_as_shown(monkeypatch, tmp_path, capsys):
    folder = tmp_path / "Edge"
    shutil.copytree(EDGE, folder)
    (folder / "predictions").mkdir()
    (folder / "predictions" / "first.jsonl").write_bytes(_jsonl())
    (folder / "predictions" / "reversed.jsonl").write_bytes(_jsonl(True))
    at = run(monkeypatch, folder, {"movie": "ALL", "k": "5"})
    at.radio(key="qp_protocol").set_value("pke").run()
    assert not at.exception
    (code,) = [c.value for c in at.code]
    assert "…" not in code and code == shlex.join(["kweval", "evaluate", str(folder), "--protocol", "pke", "--k", "5"])
    shown = next(df for df in at.dataframe if "n_documents" in df.value.columns).value
    assert main([*shlex.split(code)[1:], "--format", "json"]) == 0  # run as shown: the table's numbers
    rows = json.loads(capsys.readouterr().out)["rows"]
    assert [r["f1@5"] for r in rows] == pytest.approx(list(shown["f1@5"]), abs=1e-12)  # JSON's 15 digits
    at.sidebar.multiselect(key="sel_models").set_value(["reversed"]).run()
    at.sidebar.multiselect(key="sel_models").set_value(["reversed", "first"]).run()
    assert "--models reversed,first" not in [c.value for c in at.code][0]  # the same set: no option needed


def test_protocol_command_rules():
    beside = ["a", "b"]
    files = {"a": "/d/predictions/a.jsonl", "b": "/d/predictions.csv", "c": "c file.jsonl"}
    assert protocol_command("/d", "pke", 5, ["a", "b"], files, beside) == "kweval evaluate /d --protocol pke --k 5"
    assert protocol_command("/d", "pke", 5, ["b"], files, beside).endswith("--k 5 --models b")
    mixed = protocol_command("/d", "meng", 10, ["a", "c"], files, beside)  # c added in the sidebar
    assert mixed == "kweval evaluate /d --protocol meng --k 10 " + (
        "--predictions a=/d/predictions/a.jsonl --predictions 'c=c file.jsonl'"
    )
    assert protocol_command("/d", "pke", 5, ["a", "x"], files, beside) is None  # x's file is unknown: no command
