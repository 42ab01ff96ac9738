"""Predictions lying with a keyphrase collection (issue 28, item 4): predictions/<model>.<ext>, one file per model,
read by every command; a predictions.jsonl beside docsutf8/ is no model called "predictions"."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from kweval.cli import main
from kweval.data import load_dataset
from kweval.data.beside import models_beside
from kweval.data.inputs import input_files
from tests.helpers import EDGE, EDGE_LISTS, SEMEVAL, edge_jsonl


def _collection(tmp_path: Path) -> Path:
    folder = tmp_path / "Edge"
    shutil.copytree(EDGE, folder)
    return folder


def _jsonl(path: Path, reverse: bool = False) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(edge_jsonl(reverse), encoding="utf-8")
    return path


def test_two_files_in_predictions_are_two_models_for_every_command(tmp_path, capsys):
    folder = _collection(tmp_path)
    _jsonl(folder / "predictions" / "first.jsonl")
    _jsonl(folder / "predictions" / "reversed.jsonl", reverse=True)
    (folder / "predictions" / ".DS_Store").write_bytes(b"\0")  # hidden: ignored without a word
    assert load_dataset(str(folder)).model_names == ["first", "reversed"]
    for argv in (
        ["evaluate", str(folder), "--format", "json"],
        ["evaluate", str(folder), "--protocol", "pke", "--format", "json"],
        ["compare", str(folder), "--format", "json"],
        ["compare", str(folder), "--protocol", "meng", "--format", "json"],
    ):
        assert main(argv) == 0, argv
        out = json.loads(capsys.readouterr().out)
        rows = out["rows"] if isinstance(out, dict) else out
        assert {r["model"] for r in rows} >= ({"reversed"} if argv[0] == "compare" else {"first", "reversed"}), argv
    assert main(["report", str(folder), "--protocol", "kpeval", "--out", str(tmp_path / "r.html")]) == 0
    page = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert '<td class="t">first</td>' in page and '<td class="t">reversed</td>' in page
    assert {p.name for p in input_files(folder)} >= {"first.jsonl", "reversed.jsonl"}  # the card hashes them


def test_the_rules_of_the_files_beside_docsutf8(tmp_path, capsys):
    folder = _collection(tmp_path)
    _jsonl(folder / "predictions.jsonl")  # names no model: not a model called "predictions"
    rows = [(x["id"], m, i, p) for x in EDGE_LISTS for m in ("a", "b") for i, p in enumerate(x["keyphrases"])]
    table = pd.DataFrame(rows, columns=["review_id", "model", "rank", "keyword"])
    table.to_csv(folder / "predictions.csv", index=False)  # a table beside: its models
    (folder / "predictions").mkdir()
    table[table["model"] == "a"].assign(model="other").to_csv(folder / "predictions" / "a.csv", index=False)
    table.to_csv(folder / "predictions" / "both.csv", index=False)  # two models in one model file: skipped
    (folder / "predictions" / "notes.txt").write_text("x")
    problems: list = []
    found = dict(models_beside(folder, problems))
    assert found == {"a": folder / "predictions" / "a.csv", "b": folder / "predictions.csv"}
    said = "\n".join(str(p) for p in problems)
    assert (
        "predictions.jsonl: a JSONL file is one model, named by its file: move it to predictions/<model>.jsonl" in said
    )
    assert "a.csv: model column says other: read as a, the file's name" in said
    assert "a.csv: model a is also in predictions.csv: this file is used" in said
    assert "both.csv: names 2 models in its model column" in said and "notes.txt: not a model's predictions" in said
    ds = load_dataset(str(folder))
    assert ds.model_names == ["a", "b"] and "predictions" not in ds.model_names
    assert any("move it to predictions/<model>.jsonl" in str(p) for p in ds.problems)
    assert main(["evaluate", str(folder), "--protocol", "pke", "--format", "json"]) == 0
    captured = capsys.readouterr()
    assert [r["model"] for r in json.loads(captured.out)["rows"]] == ["a", "b"]
    assert "move it to predictions/<model>.jsonl" in captured.err


@pytest.mark.keyphrase
def test_semeval_with_two_extractors_in_predictions(tmp_path, capsys, semeval_extracted):
    folder = tmp_path / "SemEval2017"
    shutil.copytree(SEMEVAL, folder)
    (folder / "predictions").mkdir(exist_ok=True)
    for extractor in ("yake", "firstphrases"):  # `kweval extract`'s output, made once a run (YAKE: ~13 s of CPU)
        shutil.copyfile(semeval_extracted(extractor), folder / "predictions" / f"{extractor}.jsonl")
    capsys.readouterr()
    assert main(["evaluate", str(folder), "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    assert sorted({r["model"] for r in rows}) == ["firstphrases", "yake"]
