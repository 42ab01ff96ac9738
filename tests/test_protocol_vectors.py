"""The presets on unusual input equal the tools' own runs (issue 22; tests/data/protocols_vectors.json).

Every vector is one document: its text file, its key file's exact characters and a JSONL
prediction list.  They are read by the readers the CLI uses (`read_documents`,
`prediction_lists`), so the reader rules are tested too: lines end at \\r / \\n only, an empty-string
prediction is a prediction.  Where the tool itself fails, the vector says what kweval does
instead (docs/protocols.md).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kweval.data.keyphrase import read_documents
from kweval.data.predictions import prediction_lists
from kweval.keyphrase.protocols import (
    CUTOFFS,
    PROTOCOLS,
    document_problems,
    kpeval_document_words,
    kpeval_phrases,
    prepare_document,
    score_documents,
    summarize,
)
from kweval.text.stemming import nltk_version

DATA = Path(__file__).parent / "data"
VECTORS = json.loads((DATA / "protocols_vectors.json").read_text())["vectors"]


def _collection(tmp_path: Path, vector: dict) -> tuple[Path, Path]:
    root = tmp_path / "collection"
    (root / "docsutf8").mkdir(parents=True)
    (root / "keys").mkdir()
    (root / "docsutf8" / "d.txt").write_bytes(vector["text"].encode())
    (root / "keys" / "d.key").write_bytes(vector["key_file"].encode())  # exact characters: no newline translation
    predictions = tmp_path / "predictions.jsonl"
    predictions.write_text(json.dumps({"id": "d", "keyphrases": vector["predictions"]}) + "\n")
    return root, predictions


def _summary(tmp_path: Path, vector: dict) -> tuple[dict[str, float], list]:
    root, path = _collection(tmp_path, vector)
    problems: list = []
    documents = read_documents(root, problems)
    predictions = prediction_lists(path, "m", problems)
    protocol = PROTOCOLS[vector["protocol"]]
    per_doc = score_documents(protocol, documents.gold, predictions, documents.texts, CUTOFFS)
    return summarize(protocol, per_doc), document_problems(protocol, documents.texts)


def _nltk_at_least_3_10() -> bool:
    major, minor = (int(part) for part in nltk_version().split(".")[:2])
    return (major, minor) >= (3, 10)


@pytest.mark.parametrize("vector", VECTORS, ids=[f"{v['id']}-{v['protocol']}" for v in VECTORS])
def test_preset_equals_the_tools_own_run(vector, tmp_path):
    summary, notes = _summary(tmp_path, vector)
    if "tool_error" in vector:  # the tool stops; kweval scores the document and says so where it reads it its way
        expected = vector["kweval"]["scores"]
        reported = vector["kweval"]["reported"]
        assert (reported is None and notes == []) or (len(notes) == 1 and reported in notes[0][1])
    elif "nltk>=3.10" in vector["tool"]:
        expected = vector["tool"]["nltk>=3.10" if _nltk_at_least_3_10() else "nltk<3.10"]
    else:
        expected = vector["tool"]
    assert expected
    for column, value in expected.items():
        assert summary[column] == pytest.approx(value, abs=1e-6), column


# ---------------------------------------------------------------- each rule on its own


def test_key_and_text_lines_end_at_cr_and_lf_only(tmp_path):
    root, _ = _collection(
        tmp_path, {"text": "a\x85b\u2028c", "key_file": "form\x85feeds\r\nx\u2028y\x0cz\rlast\n", "predictions": []}
    )
    documents = read_documents(root, [])
    assert documents.gold["d"] == ["form\x85feeds", "x\u2028y\x0cz", "last"]
    assert kpeval_document_words("we study\r\nform\x85feeds") == ["we", "study", "form\x85feeds"]


def test_empty_string_prediction_reaches_the_presets(tmp_path):
    path = tmp_path / "p.jsonl"
    path.write_text(json.dumps({"id": "d", "keyphrases": ["", "  ", "topic models"]}) + "\n")
    assert prediction_lists(path, "m", []) == {"d": ["", "  ", "topic models"]}
    kweval = prepare_document(PROTOCOLS["kweval"], ["topic models"], ["", "  ", "topic models"], None)
    assert kweval.matched == [True]  # kweval's own preset drops what is empty after normalization


def test_kpeval_reads_lists_in_its_one_line_format():
    assert kpeval_phrases([]) == [""]
    assert kpeval_phrases(["alpha; beta", "gamma"]) == ["alpha", " beta", "gamma"]
    lists = prepare_document(PROTOCOLS["kpeval"], [], [], "we study topic models")
    assert lists.matched == [True] and lists.n_gold == 1 and lists.n_absent_gold == 1 and lists.n_present_gold == 0


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("Deep learning [SEP] neural nets", ["deep", "learning", "neural", "nets"]),
        ("deep learning[sep]neural", ["deep", "learning", "neural"]),
        ("a  [Sep]  b", ["a", "b"]),
        ("no separator here", ["no", "separator", "here"]),
        ("a [sep] b [sep] c", ["a", "b", "c"]),  # KPEval stops here; kweval removes every one and reports it
    ],
)
def test_kpeval_title_separator(text, words):
    assert kpeval_document_words(text) == words


def test_two_title_separators_are_reported_once_per_document():
    notes = document_problems(PROTOCOLS["kpeval"], {"a": "x [SEP] y [sep] z", "b": "x [sep] y", "c": "plain"})
    assert [doc for doc, _ in notes] == ["a"] and "2 '[sep]'" in notes[0][1]
    assert document_problems(PROTOCOLS["meng"], {"a": "x [sep] y [sep] z"}) == []


@pytest.mark.parametrize(
    ("predictions", "kept"),
    [
        (["UNK model", "topic models"], 2),  # raw, case-sensitive: 'UNK' is a word like any other
        (["unks", "topic models"], 2),  # not stemmed: 'unks' stays valid
        (["<unk>", "topic models"], 1),  # '<unk>' splits to the word 'unk'
        (["unk model", "Unk models", "topic models"], 1),  # the second repeats the invalid first: dropped too
        (["topic models", "Topic model"], 1),  # a repeat after stemming
        (["", "...", "topic models"], 1),  # no words
    ],
)
def test_meng_validity_and_duplicates(predictions, kept):
    lists = prepare_document(PROTOCOLS["meng"], ["topic models"], predictions, None)
    assert len(lists.matched) == kept and lists.matched[-1] is True


def test_cli_reports_the_separator_rule_and_scores_the_rest(tmp_path, capsys):
    from kweval.cli.fast import fast_main

    vector = next(v for v in VECTORS if v["id"] == "q5-two-sep")
    root, path = _collection(tmp_path, vector)
    status = fast_main(
        ["evaluate", str(root), "--protocol", "kpeval", "--predictions", f"m={path}", "--format", "json"]
    )
    out, err = capsys.readouterr()
    assert status == 0 and err.count("kweval: ") == 1 and "'[sep]'" in err and "document d" in err
    assert json.loads(out)["rows"][0]["f1@M"] == pytest.approx(1.0)
