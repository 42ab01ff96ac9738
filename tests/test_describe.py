"""`kweval describe`: a dataset's statistics under each preset's present rule, and the lint of its gold.

The `meng` rule is the processing behind OpenNMT-kpg's published statistics (kweval.keyphrase.meng17):
each step has a hand-made test here, and on Inspec (test) the six numbers must equal the README's
row exactly (skipped, with its reason, when the file is not beside the checkout).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kweval.data import load_dataset
from kweval.data.keyphrase import Documents
from kweval.data.meng import read_file
from kweval.keyphrase import meng17
from kweval.keyphrase.describe import STATISTICS, describe, describe_dataset, title_and_abstract
from kweval.keyphrase.protocols import PROTOCOLS, prepare_document
from tests.helpers import INSPEC

# ------------------------------------------------------------------ meng17: each step on its own


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Gauss' inequality", ["gauss", "'", "inequality"]),  # ' is a token of its own
        ("a legacy, text-based system", ["a", "legacy", ",", "text", "based", "system"]),  # , alone; - separates
        ("language (HTML) pages", ["language", "(", "html", ")", "pages"]),  # lower-cased, ( ) alone
        ("x_y <z> 5% a.b", ["x", "_", "y", "<", "z", ">", "5", "%", "a", ".", "b"]),
        ("C++ & C# *nix", ["c++", "&", "c#", "*nix"]),  # + # & * stay inside words
        ('a/b:c;d"e', ["a", "b", "c", "d", "e"]),  # / : ; " separate
        ("naïve\tline\r\nbreak", ["na", "ve", "line", "break"]),  # non-ASCII separates; tab and CR/LF are spaces
        ("15 GHz, 3 dB, 2024", ["<digit>", "ghz", ",", "3", "db", ",", "<digit>"]),  # 2+ digits only
        ("x1 12a 007", ["x1", "12a", "<digit>"]),  # only a token of digits alone
        ("\u212a", ["k"]),  # lower-cased before splitting: the Kelvin sign becomes an ASCII k
    ],
)
def test_meng17_tokens(text, expected):
    assert meng17.tokens(text) == expected


@pytest.mark.parametrize(
    ("phrase", "expected"),
    [
        ("reed elsevier (uk) limited", "reed elsevier  limited"),
        ("who wants to be a millionaire(r)", "who wants to be a millionaire"),
        ("a (b) c (d)", "a  c "),  # each span, the shortest
        ("x [y] {z} w", "x   w"),
        ("unclosed (bracket", "unclosed (bracket"),
    ],
)
def test_meng17_brackets_removed_from_keyphrases_only(phrase, expected):
    assert meng17.without_brackets(phrase) == expected


def test_meng17_document_is_title_dot_abstract():
    assert meng17.document_tokens("Estimation of admissible", "Measurement errors.") == [
        "estimation",
        "of",
        "admissible",
        ".",
        "measurement",
        "errors",
        ".",
    ]
    assert meng17.document_tokens("", "Text") == [".", "text"]


def test_meng17_occurs_is_a_consecutive_run_and_the_empty_phrase_is_everywhere():
    assert meng17.occurs(["a", "b", "c"], ["b", "c"]) and not meng17.occurs(["a", "b", "c"], ["a", "c"])
    assert meng17.occurs(["a"], []) and meng17.occurs([], [])
    assert not meng17.occurs(["a"], ["a", "b"])


# FINDINGS-style look-alikes of the Inspec documents whose status differs between the two readings:
# (title, abstract, keyphrase, present under meng17, present under the meng preset's \W split)
LOOK_ALIKES = [
    ("Estimation of admissible", "Measurement errors are studied.", "admissible measurement errors", False, True),
    ("Web pages", "Hypertext markup language (HTML) pages are parsed.", "html pages", False, True),
    ("Bounds", "A generalization of Gauss' inequality.", "gauss inequality", False, True),
    ("Migration", "Moving a legacy, text-based system.", "legacy text-based system", False, True),
    ("Antennas", "Bands of 15, 21.225, and 38 GHz; 10 to 80 GHz.", "15 ghz", True, False),  # <digit> ghz
    ("Publishing", "Reed Elsevier (UK) Limited publishes.", "reed elsevier (uk) limited", False, True),
    ("Runtimes", "The NET Common Language Runtime runs it.", ".net common language runtime", False, True),
    ("Plain", "Topic models are studied.", "topic models", True, True),
]


@pytest.mark.parametrize(("title", "abstract", "phrase", "meng17_present", "plain_present"), LOOK_ALIKES)
def test_meng17_and_the_plain_reading_on_look_alikes(title, abstract, phrase, meng17_present, plain_present):
    assert meng17.present_flags(title, abstract, [phrase]) == [meng17_present]
    plain = prepare_document(PROTOCOLS["meng"], [phrase], [], title + "\n" + abstract)
    assert plain.n_present_gold == int(plain_present)


# ------------------------------------------------------------------ the card


def _documents() -> Documents:
    texts = {
        "d1": "Topic models\nWe study topic models and neural networks.",
        "d2": "   ",
        "d3": "Graph-based ranking of phrases.",
    }
    keys = {
        "d1": ["topic models", "Topic Models", "absent thing", "neural network"],
        "d3": ["graph based ranking", "ranking"],
    }
    raw = {
        "d1": ["topic models", "", "Topic Models", "absent thing", "neural network"],
        "d3": ["graph based ranking\t", "ranking", " ".join(["w"] * 11)],
    }
    return Documents("c", texts, keys, None, raw_keys=raw, titles={"d1": "Topic models"})


def test_card_counts_under_each_preset():
    docs = _documents()
    # kweval: normalized, the repeated 'Topic Models' left out: d1 'topic models' present, 'absent thing' and (as
    # whole words) 'neural network' absent; d3 'graphbased' is one normalized word: 'graph based ranking' absent
    card = describe(docs, "kweval", "exact")
    assert card.statistics() == dict(zip(STATISTICS, [3, 5, 2, 2, 2, 3]))
    assert describe(docs, "kweval", "approx").present_keyphrases == 3  # a substring of 'neural networks'
    assert describe(docs, "kweval", "stem").present_keyphrases == 3  # network = stem of networks
    pke = describe(docs, "pke")
    assert pke.keyphrases == 6 and pke.present_keyphrases is None and pke.absent_documents is None
    # kpeval: stems de-duplicated (d1: 3 keys, 'networks.' keeps its period: only 'topic models' present); d2 has
    # KPEval's one empty, absent gold phrase; d3: 'graph-based' is one word, 'ranking' present
    kpeval = describe(docs, "kpeval")
    assert kpeval.statistics() == dict(zip(STATISTICS, [3, 6, 2, 2, 3, 4]))
    # meng: every key counted (both 'topic models' present), '-' and '.' separate words; d3 read as an abstract
    meng = describe(docs, "meng")
    assert meng.statistics() == dict(zip(STATISTICS, [3, 6, 2, 5, 1, 1]))
    assert meng.plain_reading == {
        "present_documents": 2,
        "present_keyphrases": 5,
        "absent_documents": 1,
        "absent_keyphrases": 1,
    }


def test_lint_names_each_kind_of_suspect_gold():
    lint = describe(_documents(), "pke").lint
    assert {check: finding.count for check, finding in lint.items()} == {
        "blank_lines": 1,
        "duplicate_keys": 1,
        "keys_with_tab_or_cr": 1,
        "documents_without_text": 1,
        "documents_without_keys": 1,
        "long_keys": 1,
    }
    assert lint["duplicate_keys"].examples == (("d1", "Topic Models"),)
    assert lint["documents_without_keys"].examples == (("d2", ""),)


def test_raw_key_lines_keep_what_the_readers_drop(tmp_path):
    from kweval.data.keyphrase import raw_key_lines

    assert raw_key_lines("a\r\n\r\nb\tc\rd\n") == ["a", "", "b\tc\rd"]
    assert raw_key_lines("") == [] and raw_key_lines("x") == ["x"]


def test_title_and_abstract_undo_the_join():
    assert title_and_abstract("T\nA b", "T") == ("T", "A b")
    assert title_and_abstract("T", "T") == ("T", "")
    assert title_and_abstract("Only text", "") == ("", "Only text")


def test_describe_dataset_equals_describe_on_the_collection(tmp_path):
    records = [
        {"id": "a", "title": "Estimation of admissible", "abstract": "Measurement errors.", "keywords": "admissible "
         "measurement errors;estimation"},
        {"id": "b", "title": "Web", "abstract": "HTML pages (HTML) pages.", "keywords": ["html pages", "web"]},
    ]  # fmt: skip
    path = tmp_path / "data.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    for protocol in PROTOCOLS:
        cards = describe_dataset(load_dataset(path), protocol)
        assert len(cards) == 1
        assert cards[0].statistics() == describe(read_file(path, []), protocol).statistics(), protocol
    assert describe_dataset(load_dataset(None)) == []  # the demo's gold is a movie's, not a document's


# ------------------------------------------------------------------ the command


def _main(*argv, capsys):
    from kweval.cli import main

    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def test_cli_json_keys_and_problems(tmp_path, capsys):
    path = tmp_path / "data.jsonl"
    path.write_text(
        json.dumps({"id": "a\x1b[31m![i](http://e/x.png)", "title": "T", "abstract": "x y", "keywords": "x;;<b>z</b>"})
        + "\n{broken\n"
    )
    status, out, err = _main("describe", str(path), "--protocol", "meng", "--format", "json", capsys=capsys)
    card = json.loads(out)
    assert status == 0 and err.count("kweval: ") == 1 and "line 2: not JSON" in err
    assert [k for k in card if k in STATISTICS] == list(STATISTICS)
    assert card["documents"] == 1 and card["keyphrases"] == 2 and card["present_keyphrases"] == 1
    status, out, _ = _main("describe", str(path), "--protocol", "kweval", "--format", "text", capsys=capsys)
    assert status == 0 and "\x1b" not in out and "a\\x1b[31m" in out  # the id (a blank line's) ESC shown, not sent
    status, out, _ = _main("describe", str(path), "--format", "markdown", capsys=capsys)
    assert status == 0 and "| present_keyphrases | 1 |" in out and "![" not in out and "\x1b" not in out


def test_cli_refuses_what_it_cannot_describe(tmp_path, capsys):
    status, _, err = _main("describe", str(tmp_path / "none"), capsys=capsys)
    assert status == 2 and "no such file or folder" in err
    status, _, err = _main("describe", "--match", "stem", "--protocol", "meng", str(tmp_path), capsys=capsys)
    assert status == 2 and "--match applies to --protocol kweval" in err
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    status, _, err = _main("describe", str(empty), capsys=capsys)
    assert status == 2 and "holds no document" in err and "nothing to describe" in err


# ------------------------------------------------------------------ the published row


@pytest.mark.inspec
def test_inspec_test_reproduces_opennmt_kpg_readme_row(capsys):
    """OpenNMT-kpg README, Inspec (test): 500 documents, 4,913 keyphrases, 497 / 3,858 present, 381 / 1,055 absent."""
    status, out, err = _main("describe", str(INSPEC), "--protocol", "meng", "--format", "json", capsys=capsys)
    card = json.loads(out)
    assert status == 0 and err == ""
    assert [card[name] for name in STATISTICS] == [500, 4913, 497, 3858, 381, 1055]
    # the meng preset's own \W-split rule (what `evaluate --protocol meng` scores): 67 keyphrases change status
    assert card["plain_reading"] == {
        "present_documents": 497,
        "present_keyphrases": 3921,
        "absent_documents": 363,
        "absent_keyphrases": 992,
    }


def test_inspec_location_is_documented():
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    assert "KWEVAL_INSPEC" in readme and "EMBEDDIA/tnt_kid" in readme
