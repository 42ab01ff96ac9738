"""Raw model responses: every parser rule's test vector, a file mixing every format, the counts, bad input.

The rule table is `kweval.data.response_rules.RULES`; each row's example must
parse to its expected phrases with its decision.  `examples/llm_responses.jsonl`
(the README's example, raw answers for documents of the embedded demo) must
exercise every rule, and `--predictions` must read what `kweval parse` writes.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from kweval.data import load_dataset
from kweval.data.response_rules import DECISIONS, MAX_RESPONSE_CHARS, RULES, markdown_table
from kweval.data.responses import parse_response
from tests.helpers import REPO, run_in_process

EXAMPLE = REPO / "examples" / "llm_responses.jsonl"


@pytest.mark.parametrize("rule", RULES, ids=[r.name for r in RULES])
def test_every_rule_has_a_test_vector_that_holds(rule):
    parsed = parse_response(rule.example)
    assert parsed.keyphrases == rule.expected
    assert parsed.decision == rule.decision
    if rule.sections is not None:
        assert parsed.sections == rule.sections


def test_the_rule_table_names_every_decision_and_is_in_the_docs():
    assert {r.decision for r in RULES} == set(DECISIONS)
    assert len({r.name for r in RULES}) == len(RULES)
    assert markdown_table() in (REPO / "docs" / "llm.md").read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("text", "phrases", "decision"),
    [
        ("None.", (), "abstention"),
        ("N/A", (), "abstention"),
        ("Keyphrases: none", (), "abstention"),
        ("Sure.\nKeywords: none", (), "abstention"),
        ("[]", (), "abstention"),
        ("```json\n[]\n```", (), "abstention"),
        ("As an AI language model, I cannot do that.", (), "abstention"),
        ("Present keyphrases: none\nAbsent keyphrases: none", (), "abstention"),
        ('{"keywords": [1, 2]}', (), "unparseable"),  # JSON, but no phrase in it
        ('{"a": [1], "b": [2]}', (), "unparseable"),
        ("We tested version 1. It was fine.", (), "unparseable"),  # a sentence, not a phrase
        ("[sign problem, fermions]", ("sign problem", "fermions"), "line"),
        ("Here are the keyphrases: 1. **Sign problem**: the main obstacle", ("Sign problem",), "list"),
        ("Keyphrases: 1. alpha 2. beta gamma 3. delta", ("alpha", "beta gamma", "delta"), "list"),
        ("## Present keyphrases\n- a\n- b\n## Absent keyphrases\n- c", ("a", "b", "c"), "sections"),
        ("</think>\n1. alpha\n2. beta", ("alpha", "beta"), "list"),
        ("<think>unfinished reasoning ...", (), "empty"),
        ("- non-linear model\n- state-of-the-art", ("non-linear model", "state-of-the-art"), "list"),
        ("1. C++ templates\n2. key_phrase", ("C++ templates", "key_phrase"), "list"),
    ],
)
def test_more_answers_the_models_give(text, phrases, decision):
    parsed = parse_response(text)
    assert (parsed.keyphrases, parsed.decision) == (phrases, decision)


def test_a_long_response_is_not_read_and_a_list_of_thousands_is():
    assert parse_response("x" * (MAX_RESPONSE_CHARS + 1)).decision == "unparseable"
    many = "\n".join(f"- phrase {i}" for i in range(5000))
    assert len(parse_response(many).keyphrases) == 5000


def _jsonl(path: Path, lines: list) -> Path:
    path.write_text("".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines))
    return path


# One document of the demo per format (and one list given as a list), each with what must come out.
MIXED = [
    ({"id": "m1-r01", "response": "<think>x</think>\n1. **caper**: a heist\n2. jazz – the score"}, ["caper", "jazz"]),
    ({"id": "m1-r02", "response": '```json\n{"keywords": ["robbery", "banter"]}\n```'}, ["robbery", "banter"]),
    (
        {"id": "m1-r03", "response": "Present keyphrases:\n- painting\nAbsent keyphrases:\n- twist"},
        ["painting", "twist"],
    ),
    ({"id": "m1-r04", "response": "Keywords: reversal; quips"}, ["reversal", "quips"]),
    ({"id": "m1-r05", "response": "I'm sorry, I can't help with that."}, [None]),
    ({"id": "m1-r06", "response": "  "}, [None]),
    ({"id": "m1-r07", "response": "A long sentence of prose that names no keyphrase at all, only words."}, [None]),
    ({"id": "m1-r08", "keyphrases": ["locksmith"]}, ["locksmith"]),
    ({"id": "m1-r09", "response": "- gala\n- villain"}, ["gala", "villain"]),
]


def test_a_file_mixing_every_format_gives_the_intended_lists(tmp_path):
    path = _jsonl(tmp_path / "llm.jsonl", [line for line, _ in MIXED])
    ds = load_dataset(None, predictions={"llm": path})
    rows = ds.predictions[ds.predictions["model"] == "llm"]
    for line, expected in MIXED:
        got = rows[rows["review_id"] == line["id"]].sort_values("rank")["keyword"].tolist()
        assert [k if isinstance(k, str) else None for k in got] == expected, line  # None: the empty list's row
    reasons = [p.reason for p in ds.problems if p.source == str(path)]
    assert reasons[0] == (
        "8 raw response(s) of llm read: 1 json, 2 list, 1 sections, 1 line, 1 abstention, 1 empty, 1 unparseable; "
        "the 3 abstention/empty/unparseable one(s) are empty lists (each scores 0 and is counted)"
    )
    kept = ds.responses
    assert list(kept["review_id"]) == [line["id"] for line, _ in MIXED if "response" in line]
    assert kept.set_index("review_id").loc["m1-r03", "sections"] == ("present", "absent")


def test_abstentions_and_unparseable_responses_score_zero_and_are_counted_apart(tmp_path):
    from kweval.evaluation.pipeline import EvalOptions, evaluate

    path = _jsonl(tmp_path / "llm.jsonl", [line for line, _ in MIXED])
    ds = load_dataset(None, predictions={"llm": path}).subset(models=["llm"])
    scores = evaluate(ds, EvalOptions()).scores.set_index("review_id")
    for doc in ("m1-r05", "m1-r06", "m1-r07"):  # abstention, empty, unparseable: evaluated, 0
        assert scores.loc[doc, "n_pred"] == 0 and scores.loc[doc, "recall"] == 0.0
    assert len(scores) == len(MIXED)
    decisions = dict(zip(ds.responses["review_id"], ds.responses["parse"]))
    assert (decisions["m1-r05"], decisions["m1-r06"], decisions["m1-r07"]) == ("abstention", "empty", "unparseable")


def _kweval(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    """`kweval ARGS` run in `cwd`, in this process (tests.helpers.run_in_process)."""
    return run_in_process(*args, env_extra={"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}, cwd=cwd)


def test_bad_lines_are_one_escaped_line_per_kind_and_the_rest_is_evaluated(tmp_path):
    lines = [
        "not json {",
        {"id": "m1-r01", "response": 42},
        {"id": "m1-r02", "response": "x" * (5 << 20)},  # 5 MB
        {"id": "m1-r03", "response": "- evil\u202e\x1b[31m name\n- gala"},
        {"id": "zz-404", "response": "- a phrase"},
        {"id": "m1-r04", "response": "- reversal"},
        {"id": "m1-r04", "response": "- again"},
        {"id": "m1-r05", "response": "- quips"},
    ]
    path = _jsonl(tmp_path / "llm.jsonl", lines)
    proc = _kweval("evaluate", "--predictions", f"llm={path}", "--models", "llm", "--format", "json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    err = proc.stderr.splitlines()
    assert all(line.startswith("kweval: ") for line in err)
    assert "\u202e" not in proc.stderr and "\x1b" not in proc.stderr
    for expected in (
        "line 1: not JSON",
        "1 response(s) not a string: read as unparseable (e.g. line 2)",
        "1 response(s) over 1,000,000 characters: not read (unparseable) (e.g. line 3)",
        "1 response(s) with control or bidi characters: removed before reading (e.g. line 4)",
        "line 7: document m1-r04 again; the first line wins",
        "1 document id(s) not found in the dataset, or in several of its collections (e.g. zz-404)",
    ):
        assert sum(expected in line for line in err) == 1, (expected, err)
    rows = json.loads(proc.stdout)["rows"]
    (all_row,) = [r for r in rows if r["movie"] == "ALL"]
    assert all_row["n_reviews"] == 5  # r01 (unparseable), r02 (too long), r03, r04, r05: none dropped
    ds = load_dataset(None, predictions={"llm": path})
    phrases = ds.predictions[(ds.predictions["model"] == "llm") & (ds.predictions["review_id"] == "m1-r03")]
    assert phrases["keyword"].tolist() == ["evil[31m name", "gala"]  # controls and bidi marks removed


def test_kweval_parse_writes_what_predictions_reads(tmp_path):
    out = tmp_path / "lists.jsonl"
    proc = _kweval("parse", str(EXAMPLE), "--out", str(out), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    written = [json.loads(line) for line in out.read_text().splitlines()]
    assert [w["parse"] for w in written] == [parse_response(json.loads(x)["response"]).decision for x in EXAMPLE.open()]
    assert {w["parse"] for w in written} == set(DECISIONS)
    assert sum("raw response(s) of llm_responses read" in line for line in proc.stderr.splitlines()) == 1
    raw = load_dataset(None, predictions={"llm": EXAMPLE}).predictions
    again = load_dataset(None, predictions={"llm": out}).predictions
    assert raw[raw["model"] == "llm"].equals(again[again["model"] == "llm"])


# What each line of the README's example shows (by document): the rules, how many phrases, the decision.
EXAMPLE_RULES = {
    "m1-r01": ({"reasoning", "numbered", "preamble", "bold term", "explanation", "emphasis"}, 4, "list"),
    "m1-r02": ({"json", "json fence"}, 3, "json"),
    "m1-r03": ({"sections", "bulleted"}, 5, "sections"),
    "m2-r01": ({"line", "quotes"}, 4, "line"),
    "m2-r02": ({"abstention"}, 0, "abstention"),
    "m3-r01": ({"controls", "bulleted", "emphasis"}, 4, "list"),
    "m4-r01": ({"lines"}, 3, "list"),
    "m5-r01": ({"json"}, 3, "json"),
    "m5-r02": ({"json sections"}, 3, "json"),
    "m6-r01": ({"empty"}, 0, "empty"),
    "m6-r02": ({"unparseable"}, 0, "unparseable"),
}


def test_the_readme_example_covers_every_parser_rule():
    lines = [json.loads(line) for line in EXAMPLE.read_text().splitlines()]
    assert [line["id"] for line in lines] == list(EXAMPLE_RULES)
    assert set().union(*(rules for rules, _, _ in EXAMPLE_RULES.values())) == {r.name for r in RULES}
    for line in lines:
        _, n, decision = EXAMPLE_RULES[line["id"]]
        parsed = parse_response(line["response"])
        assert (len(parsed.keyphrases), parsed.decision) == (n, decision), line
    notes = {line["id"]: parse_response(line["response"]).notes for line in lines}
    assert any("reasoning" in note for note in notes["m1-r01"])
    assert any("explanation dropped from 3" in note for note in notes["m1-r01"])
    assert any("control or bidi" in note for note in notes["m3-r01"])
