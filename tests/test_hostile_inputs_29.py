"""The last hostile inputs (issue 29, item 5): each one `kweval:` line, no traceback, the rest evaluated.

A collection folder whose own name is not UTF-8, `kweval extract` pointed at a predictions file, a key file
without its document, entries of keys/ that are no files (the UCX scheduler: tests/test_scheduler_address.py; a
damaged embedding store in `kweval cache info`: tests/test_cache.py and tests/test_onnx_export.py).  Every input is
built in tmp_path; each test fails without its fix.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.test_hostile_surfaces import TEXTS, kweval_lines, run, write_collection, write_jsonl

PREDICTIONS = [
    {"id": "plain", "keyphrases": ["graph ranking", "documents"]},
    {"id": "=cmd", "keyphrases": ["topic models", "mining"]},
    {"id": "-neg", "keyphrases": ["deep learning"]},
    {"id": "+plus", "keyphrases": ["keyphrase extraction", "graph"]},
]
OTHER = [{"id": d["id"], "keyphrases": d["keyphrases"][::-1]} for d in PREDICTIONS]


def _only_problem_lines(err: str) -> list[str]:
    lines = kweval_lines(err)
    assert "Traceback" not in err and len(lines) == len(err.strip().splitlines()), err
    return lines


@pytest.mark.parametrize("protocol", ["kweval", "pke"])
def test_a_collection_folder_named_in_no_utf8_is_one_line_and_evaluated(tmp_path, capsys, protocol):
    """UnicodeEncodeError writing the protocol card beside --out and the HTML report: the folder's name went into
    both as a lone surrogate."""
    bad = write_collection(tmp_path / os.fsdecode(b"semeval\xff"), TEXTS)
    good = write_collection(tmp_path / "semeval", TEXTS)
    a = write_jsonl(tmp_path / "a.jsonl", PREDICTIONS)
    b = write_jsonl(tmp_path / "b.jsonl", OTHER)
    tables = {}
    for name, root in (("bad", bad), ("good", good)):
        out = tmp_path / f"{name}.csv"
        status, _, err = run(
            capsys, "evaluate", str(root), "--protocol", protocol, "--predictions", f"a={a}", "--out", str(out)
        )
        lines = _only_problem_lines(err)
        assert status == 0 and out.is_file(), err
        said = [line for line in lines if "name is not UTF-8" in line]
        assert len(said) == (name == "bad") and all("semeval\ufffd" in line for line in said), lines
        card = Path(f"{out}.protocol.json").read_text(encoding="utf-8")  # UTF-8 text: no surrogate in it
        assert ("semeval\ufffd" in card) == (name == "bad")
        tables[name] = out.read_text(encoding="utf-8").replace("semeval\ufffd", "semeval")
        report = tmp_path / f"{name}.html"
        extra = ["--protocol", protocol] if protocol != "kweval" else []
        status, _, err = run(
            capsys,
            "report",
            str(root),
            *extra,
            "--predictions",
            f"a={a}",
            "--predictions",
            f"b={b}",
            "--out",
            str(report),
        )
        _only_problem_lines(err)
        assert status == 0 and "semeval" in report.read_text(encoding="utf-8"), err
    assert tables["bad"] == tables["good"]  # the rest evaluated exactly as under a UTF-8 name


def test_extract_pointed_at_a_predictions_file_is_a_usage_error(tmp_path, capsys):
    """It read the JSONL as a collection without `keywords`: a line per record skipped, then an empty output and 0."""
    predictions = write_jsonl(tmp_path / "yake.jsonl", PREDICTIONS)
    out = tmp_path / "out.jsonl"
    status, _, err = run(capsys, "extract", str(predictions), "--extractor", "firstphrases", "--out", str(out))
    assert status == 2 and not out.exists()
    lines = _only_problem_lines(err)
    assert len(lines) == 1 and "a predictions file" in lines[0] and "not a collection" in lines[0], lines


def test_extract_over_a_collection_without_documents_is_a_usage_error(tmp_path, capsys):
    root = write_collection(tmp_path / "empty", {})
    out = tmp_path / "out.jsonl"
    status, _, err = run(capsys, "extract", str(root), "--extractor", "firstphrases", "--out", str(out))
    lines = _only_problem_lines(err)
    assert status == 2 and not out.exists() and len(lines) == 1 and "nothing to extract" in lines[0], lines


@pytest.mark.parametrize("protocol", ["kweval", "pke"])
def test_a_key_file_without_its_document_is_one_true_line(tmp_path, capsys, protocol):
    """It was "still read" (its keyphrases in the GT table, counted in gt_coverage) while its predictions were "not
    in the collection; ignored": now it is not read, says so once, and the numbers are those without it."""
    with_orphan = write_collection(tmp_path / "with" / "C", TEXTS)
    (with_orphan / "keys" / "orphan.key").write_text("graph ranking\ndocuments\n", encoding="utf-8")
    without = write_collection(tmp_path / "without" / "C", TEXTS)
    a = write_jsonl(tmp_path / "a.jsonl", [*PREDICTIONS, {"id": "orphan", "keyphrases": ["graph ranking"]}])
    outs, said = [], []
    for root in (with_orphan, without):
        status, out, err = run(capsys, "evaluate", str(root), "--protocol", protocol, "--predictions", f"a={a}")
        said.append([line for line in _only_problem_lines(err) if "key file(s) without a document" in line])
        assert status == 0, err
        outs.append(out)
    assert len(said[0]) == 1 and not said[1], said
    assert "1 key file(s) without a document in docsutf8/ (orphan); not read" in said[0][0]
    assert outs[0] == outs[1]


@pytest.mark.parametrize("protocol", ["kweval", "pke"])
def test_entries_of_keys_that_are_no_files_are_each_named(tmp_path, capsys, protocol):
    """A link loop, a dangling link and a folder were counted in one line naming only the first."""
    root = write_collection(tmp_path / "C", TEXTS)
    keys = root / "keys"
    (keys / "loop.key").symlink_to(keys / "loop.key")
    (keys / "dangling.key").symlink_to(tmp_path / "gone.key")
    (keys / "folder.key").mkdir()
    a = write_jsonl(tmp_path / "a.jsonl", PREDICTIONS)
    status, out, err = run(capsys, "evaluate", str(root), "--protocol", protocol, "--predictions", f"a={a}")
    lines = _only_problem_lines(err)
    [said] = [line for line in lines if "not a readable file" in line]
    assert status == 0 and out and "3 *.key name(s)" in said, lines
    for name, kind in (
        ("loop.key", "a symbolic link loop"),
        ("dangling.key", f"a dangling symbolic link (to {tmp_path / 'gone.key'})"),
        ("folder.key", "a folder"),
    ):
        assert f"{name} ({kind})" in said, said
    for i in range(5):  # a handful named, the rest counted
        (keys / f"more{i}.key").mkdir()
    _, _, err = run(capsys, "evaluate", str(root), "--protocol", protocol, "--predictions", f"a={a}")
    [said] = [line for line in kweval_lines(err) if "not a readable file" in line]
    assert "8 *.key name(s)" in said and said.endswith("and 3 more"), said
