"""The keyphrase-generation JSON layout (title, abstract, keywords) read as a per-document collection."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kweval.data import DatasetError, detect_layout, load_dataset, read_per_document
from kweval.data.meng import read_file
from kweval.keyphrase.protocols import PROTOCOLS, score_documents, summarize

RECORDS = [
    {"id": "a", "title": "Topic models", "abstract": "We study topic models; neural networks too.",
     "keywords": "topic models;neural networks;absent phrase"},
    {"name": "b", "title": "Graph ranking", "abstract": "Graph-based ranking of candidate phrases.",
     "keywords": ["graph-based ranking", "candidate phrases"]},
    {"title": "No id", "abstract": "A third document about text.", "keywords": "text"},
]  # fmt: skip
PREDICTIONS = {"a": ["topic models", "neural network", "study"], "b": ["graph based ranking"], "data-3": ["text"]}


def _jsonl(path: Path, records: list) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def _predictions(path: Path) -> Path:
    return _jsonl(path, [{"id": d, "keyphrases": k} for d, k in PREDICTIONS.items()])


def test_json_lines_and_json_array_read_alike(tmp_path):
    lines = read_file(_jsonl(tmp_path / "data.jsonl", RECORDS), [])
    (tmp_path / "array").mkdir()
    array_file = tmp_path / "array" / "data.json"
    array_file.write_text(json.dumps(RECORDS, indent=2))
    array = read_file(array_file, [])
    for docs in (lines, array):
        assert docs.name == "data" and docs.doc_ids == ("a", "b", "data-3")  # id, name, else file + line/position
        assert docs.texts["a"] == "Topic models\nWe study topic models; neural networks too."
        assert docs.titles["b"] == "Graph ranking"
        assert docs.keys["a"] == ["topic models", "neural networks", "absent phrase"]  # a ';'-joined string
        assert docs.keys["b"] == ["graph-based ranking", "candidate phrases"]  # a list, as it is


def test_detected_as_a_file_or_a_folder_of_files(tmp_path):
    (tmp_path / "split").mkdir()
    file = _jsonl(tmp_path / "split" / "test.jsonl", RECORDS)
    _jsonl(tmp_path / "split" / "valid.json", RECORDS[:1])
    assert detect_layout(file) == "meng" and detect_layout(tmp_path / "split") == "meng"
    ds = load_dataset(tmp_path / "split")
    assert ds.movie_ids == ["test", "valid"] and ds.per_document and not ds.movies["ranked"].any()
    assert len(ds.reviews) == 4 and ds.problems == []
    assert ds.reviews.loc[ds.reviews["review_id"] == "b", "title"].item() == "Graph ranking"
    (tmp_path / "other").mkdir()
    _jsonl(tmp_path / "other" / "preds.jsonl", [{"id": "a", "keyphrases": ["x"]}])
    with pytest.raises(DatasetError, match="title, abstract and keywords"):
        detect_layout(tmp_path / "other")
    assert read_per_document(tmp_path / "split", []) is None  # two collections: the --protocol path needs one


@pytest.mark.parametrize("name", ["pke", "kpeval", "meng"])
def test_the_same_documents_score_alike_as_json_and_as_docsutf8(name, tmp_path):
    json_docs = read_file(_jsonl(tmp_path / "data.jsonl", RECORDS), [])
    folder = tmp_path / "data"
    (folder / "docsutf8").mkdir(parents=True)
    (folder / "keys").mkdir()
    for doc in json_docs.doc_ids:
        (folder / "docsutf8" / f"{doc}.txt").write_text(json_docs.texts[doc])
        (folder / "keys" / f"{doc}.key").write_text("".join(k + "\n" for k in json_docs.keys[doc]))
    key_docs = read_per_document(folder, [])
    protocol = PROTOCOLS[name]
    got = [summarize(protocol, score_documents(protocol, d.gold, PREDICTIONS, d.texts)) for d in (json_docs, key_docs)]
    assert json.dumps(got[0]) == json.dumps(got[1]) and got[0]["f1@M"] > 0  # (NaN for pke's present columns)


HOSTILE = [
    ("not a JSON object", "[1, 2]"),
    ("no `keywords`", json.dumps({"id": "x1", "title": "t", "abstract": "a"})),
    ("`keywords` is not a string or a list", json.dumps({"id": "x2", "title": "t", "keywords": 5})),
    ("2 keyword(s) that are not strings left out", json.dumps({"id": "x3", "title": "t", "keywords": ["k", 1, None]})),
    ("document a again; the first wins", json.dumps({"id": "a", "title": "t", "keywords": "k"})),
    ("`title` is not a string; read as empty", json.dumps({"id": "x4", "title": ["t"], "keywords": "k"})),
    ("no `title` or `abstract`; document x5 has no text", json.dumps({"id": "x5", "keywords": "k"})),
    ("document x6 holds no keyphrase", json.dumps({"id": "x6", "title": "t", "keywords": " ; "})),
]  # fmt: skip


@pytest.mark.parametrize(("reason", "line"), HOSTILE, ids=[r for r, _ in HOSTILE])
def test_a_bad_record_is_one_problem_and_the_rest_is_read(reason, line, tmp_path):
    path = tmp_path / "data.jsonl"
    path.write_text(json.dumps(RECORDS[0]) + "\n" + line + "\n" + json.dumps(RECORDS[1]) + "\n")
    problems: list = []
    docs = read_file(path, problems)
    assert [str(p) for p in problems] == [f"{path}: line 2: {reason}" + _tail(reason)]
    assert {"a", "b"} <= set(docs.doc_ids)


def _tail(reason: str) -> str:
    """The consequence each message states after its reason."""
    if reason.startswith(("not a JSON object", "no `keywords`", "`keywords` is not")):
        return "; skipped"
    return "; it has no ground truth" if "holds no keyphrase" in reason else ""


def test_a_line_that_is_not_json_names_the_parser_message(tmp_path):
    path = tmp_path / "data.jsonl"
    path.write_text("{not json\n" + json.dumps(RECORDS[1]) + "\n")
    problems: list = []
    docs = read_file(path, problems)
    assert len(problems) == 1 and "line 1: not JSON (Expecting property name" in str(problems[0])
    assert str(problems[0]).endswith("; skipped") and docs.doc_ids == ("b",)


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (b"", "holds no document"),
        (b"\n  \n", "holds no document"),
        (b'[{"title": "t", "keywords": "k"', "a JSON array that is not valid JSON"),
    ],
)
def test_an_empty_or_broken_file_is_one_problem(content, reason, tmp_path):
    path = tmp_path / "data.json"
    path.write_bytes(content)
    ds = load_dataset(path)
    assert len(ds.problems) == 1 and reason in ds.problems[0].reason and ds.reviews.empty


def test_undecodable_bytes_are_replaced_and_said(tmp_path):
    path = tmp_path / "data.jsonl"
    path.write_bytes(json.dumps(RECORDS[0]).encode().replace(b"We study", b"We \xff study") + b"\n")
    problems: list = []
    docs = read_file(path, problems)
    assert docs.texts["a"].startswith("Topic models\nWe \ufffd study") and "not valid UTF-8" in problems[0].reason


def test_cli_protocol_extract_and_convert_on_the_json_file(tmp_path, capsys):
    from kweval.cli import main

    data = _jsonl(tmp_path / "data.jsonl", RECORDS + [{"id": "z", "keywords": 3}])
    preds = _predictions(tmp_path / "preds.jsonl")
    assert main(["evaluate", str(data), "--protocol", "meng", "--predictions", f"m={preds}", "--format", "json"]) == 0
    out, err = capsys.readouterr()
    assert err.splitlines() == [f"kweval: {data}: line 4: `keywords` is not a string or a list; skipped"]
    assert json.loads(out)["rows"][0]["n_documents"] == 3
    assert main(["extract", str(data), "--extractor", "firstphrases", "--out", str(tmp_path / "fp.jsonl")]) == 0
    capsys.readouterr()
    assert [json.loads(x)["id"] for x in (tmp_path / "fp.jsonl").read_text().splitlines()] == ["a", "b", "data-3"]
    assert main(["convert", str(data), str(tmp_path / "tidy"), "--predictions", f"m={preds}"]) == 0
    capsys.readouterr()
    tidy = load_dataset(tmp_path / "tidy")
    assert sorted(tidy.ground_truth["keyword"]) == sorted(k for r in RECORDS for k in _keys(r["keywords"]))


def _keys(keywords) -> list[str]:
    return keywords.split(";") if isinstance(keywords, str) else keywords
