"""Grounding (docs/metrics.md §12): each prediction present, supported or unsupported by its own document.

Hand-made vectors fix every cosine for the rules; the pipeline, the CLI, the
failure table and the `--protocol` path run with the real all-MiniLM-L6-v2.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys

import numpy as np
import pytest

from kweval.beyond import grounding
from kweval.beyond.grounding import GRADES, UNGRADED, counts, ground, match_mode_rule, shares
from kweval.beyond.units import document_units, phrases, sentences, words
from kweval.evaluation.aggregate import aggregate
from kweval.evaluation.pipeline import EvalOptions, evaluate
from kweval.text.normalize import normalize_many
from kweval.text.present import present_flags
from tests.helpers import REPO, run_in_process

TEXT = "The cat sat on the mat. Dogs bark loudly, all night!\nStone–Wales defects form in 3mm sheets."


def test_sentences_phrases_and_words():
    assert sentences(TEXT) == [
        "The cat sat on the mat.",
        "Dogs bark loudly, all night!",
        "Stone–Wales defects form in 3mm sheets.",
    ]
    assert phrases("Dogs bark loudly, all night (mostly) – or so!") == [
        "Dogs bark loudly",
        "all night",
        "mostly",
        "or so",
    ]
    assert words("Stone–Wales defects, 3mm") == {"stone", "wales", "defects", "3", "mm"}
    units = document_units(TEXT).units
    assert units[:3] == tuple(sentences(TEXT)) and "Dogs bark loudly" in units and len(set(units)) == len(units)


def _unit(*pairs: tuple[int, float]) -> np.ndarray:
    v = np.zeros(8, dtype=np.float64)
    for axis, value in pairs:
        v[axis] = value
    return (v / np.linalg.norm(v)).astype(np.float32)


class Embedder:
    """Hand-made vectors of the normalized texts; counts what it was asked."""

    def __init__(self) -> None:
        self.asked: list[str] = []
        self.vectors = {
            "the cat sat on the mat": _unit((0, 1.0)),
            "dogs bark loudly all night": _unit((1, 1.0)),
            "dogs bark loudly": _unit((1, 1.0), (2, 0.2)),
            "all night": _unit((3, 1.0)),
            "stonewales defects form in 3mm sheets": _unit((4, 1.0)),
            "feline": _unit((0, 0.9), (5, math.sqrt(1 - 0.81))),  # cos 0.9 with the first sentence
            "stock market": _unit((6, 1.0)),  # orthogonal to every unit
        }

    def __call__(self, texts: list[str]) -> np.ndarray:
        self.asked += texts
        return np.stack([self.vectors.get(t, _unit((7, 1.0))) for t in texts])  # other units: one more axis


def test_each_rule_of_the_grades():
    embed = Embedder()
    lists = [["cat sat", "mat cat", "Wales defects", "mm sheets", "feline", "stock market", "—"], ["cat"], []]
    found = ground([TEXT, None, TEXT], lists, match_mode_rule("exact"), embed, threshold=0.5)
    assert [GRADES[g] if g >= 0 else None for g in found.grade] == [
        "present",  # a run of the text's words
        "supported",  # its words in one sentence
        "supported",  # "Stone–Wales": two words once punctuation separates them
        "supported",  # "3mm": digits and letters are two words
        "supported",  # cosine 0.9 to a sentence
        "unsupported",  # cosine 0 to every unit
        "unsupported",  # no word to ground
        None,  # no text: not graded
    ]
    assert found.via[1:5] == ["words", "words", "words", "cosine"]
    assert found.support[1] == "The cat sat on the mat." and found.support[4] == "The cat sat on the mat."
    assert found.cosine[4] == pytest.approx(0.9, abs=1e-6) and math.isnan(found.cosine[1])
    assert found.support[5] != "" and found.cosine[5] == pytest.approx(0.0, abs=1e-6)  # the nearest unit, named
    assert "cat sat" not in embed.asked and "mat cat" not in embed.asked  # only what reaches the cosine test
    assert sorted(embed.asked) == sorted(set(embed.asked))  # each text once
    n = counts(found, [len(x) for x in lists])
    assert n["n_grounded"].tolist() == [7, 0, 0] and n["n_unsupported"].tolist() == [2, 0, 0]
    got = shares(n)
    assert got["grounded_present"][0] == pytest.approx(1 / 7) and np.isnan(got["unsupported"][1:]).all()


def test_the_threshold_is_inclusive_and_settable():
    embed = Embedder()
    cos = float(np.float32(embed.vectors["feline"] @ embed.vectors["the cat sat on the mat"]))
    at = ground([TEXT], [["feline"]], match_mode_rule("approx"), embed, threshold=cos)
    above = ground([TEXT], [["feline"]], match_mode_rule("approx"), embed, threshold=min(1.0, cos + 1e-6))
    assert GRADES[at.grade[0]] == "supported" and GRADES[above.grade[0]] == "unsupported"


@pytest.mark.parametrize("mode", ["approx", "exact", "word", "stem"])
def test_the_match_mode_rule_is_the_present_rule(demo_dataset, mode):
    rule = match_mode_rule(mode)
    pred = demo_dataset.predictions
    for text, review in zip(demo_dataset.reviews["text"][:20], demo_dataset.reviews["review_id"][:20]):
        phrases_ = [k for k in pred.loc[pred["review_id"] == review, "keyword"] if isinstance(k, str)]
        assert rule(phrases_, text) == present_flags(normalize_many(phrases_), text, mode)


@pytest.fixture(scope="module")
def grounded(demo_dataset):
    return evaluate(demo_dataset, EvalOptions(grounding=True))


def test_the_grounding_columns_of_the_demo(grounded):
    s = grounded.scores
    shares_ = s[["grounded_present", "grounded_supported", "unsupported"]]
    defined = shares_.notna().all(axis=1)
    assert np.allclose(shares_[defined].sum(axis=1), 1.0)
    assert (s.loc[defined, "n_grounded"] == s.loc[defined, "n_pred"]).all()  # every kept prediction graded
    assert (~defined == (s["n_pred"] == 0)).all()
    kw = grounded.keywords
    assert set(kw["grounding"]) == set(GRADES)
    assert (kw.loc[kw["grounding"] == "supported", "support"] != "").all()
    yake = s[s["model"] == "yake"]
    assert yake["n_grounded_present"].sum() / yake["n_grounded"].sum() > 0.95  # an extractive model
    micro = aggregate(grounded, "micro")
    (row,) = micro[(micro["movie"] == "ALL") & (micro["model"] == "keybert")].to_dict("records")
    mine = s[s["model"] == "keybert"]
    assert row["unsupported"] == pytest.approx(mine["n_unsupported"].sum() / mine["n_grounded"].sum())


def test_a_higher_threshold_only_turns_supported_into_unsupported(demo_dataset, grounded):
    strict = evaluate(demo_dataset, EvalOptions(grounding=True, grounding_threshold=0.9))
    a, b = grounded.keywords["grounding"].tolist(), strict.keywords["grounding"].tolist()
    changed = [(x, y) for x, y in zip(a, b) if x != y]
    assert changed and set(changed) == {("supported", "unsupported")}
    assert (strict.keywords.loc[strict.keywords["grounding"] == "supported", "support_cosine"].dropna() >= 0.9).all()


def test_failures_tell_a_reference_gap_from_an_unsupported_phrase(demo_dataset, grounded):
    from kweval.explain.failures import failure_table

    table = failure_table(demo_dataset, grounded)
    off = table[(table["category"] == "off_reference")]
    assert set(off["grounding"]) == set(GRADES)
    for grade, words_ in (("present", "present in the text"), ("unsupported", "unsupported by the text")):
        assert off.loc[off["grounding"] == grade, "detail"].astype(str).str.contains(words_).all()
    assert (table.loc[table["side"] == "gt", "grounding"] == "").all()


def _kweval(args, tmp_path):
    """`python -m kweval ARGS` with the tests' own environment (their embedding store: warm after the first)."""
    env = dict(os.environ, PYTHONPATH=str(REPO), HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    return subprocess.run(
        [sys.executable, "-m", "kweval", *args], capture_output=True, text=True, env=env, cwd=tmp_path
    )


def _kweval_in_process(args, tmp_path):
    """`kweval ARGS` through `kweval.cli.main` in this process (no fast path involved: no --protocol)."""
    return run_in_process(*args, env_extra={"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}, cwd=tmp_path)


def test_the_cli_reports_grounding_and_refuses_what_it_cannot_do(tmp_path):
    proc = _kweval_in_process(["evaluate", "--grounding", "--format", "json"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    row = json.loads(proc.stdout)["rows"][-1]
    assert {"grounded_present", "grounded_supported", "unsupported"} <= set(row)
    for args, says in (
        (["--grounding-threshold", "2"], "grounding_threshold must be within [0, 1]"),
        (["--scheduler", "local:1"], "--scheduler evaluates the lexical"),
    ):
        bad = _kweval_in_process(["evaluate", "--grounding", *args], tmp_path)
        assert bad.returncode == 2 and bad.stderr.startswith("kweval: ") and says in bad.stderr, bad.stderr
        assert "Traceback" not in bad.stderr


def test_a_preset_grounds_with_its_own_present_rule(tmp_path):
    folder = REPO / "tests" / "data" / "keyphrase_edge"
    preds = REPO / "tests" / "data" / "keyphrase_edge_predictions.jsonl"
    per_doc = tmp_path / "docs.csv"
    args = ["evaluate", str(folder), "--predictions", f"m={preds}", "--grounding", "--diversity", "--format", "json"]
    proc = _kweval([*args, "--protocol", "kpeval", "--per-review", str(per_doc)], tmp_path)
    assert proc.returncode == 0, proc.stderr
    (row,) = json.loads(proc.stdout)["rows"]
    assert 0 <= row["grounded_present"] <= 1 and 0 <= row["dup_token_ratio"] <= 1
    header = per_doc.read_text().splitlines()[0].split(",")
    assert {"grounded_present", "unsupported", "self_similarity"} <= set(header)
    meng = json.loads(_kweval([*args, "--protocol", "meng"], tmp_path).stdout)["rows"][0]
    assert meng["grounded_present"] >= row["grounded_present"]  # \\W words find more than KPEval's single spaces


def test_grounding_needs_no_model_when_every_text_is_in_the_store(demo_dataset, grounded, monkeypatch):
    from kweval.embeddings import semantic

    def refuse(*args, **kwargs):
        raise AssertionError("the model was loaded although every vector is in the store")

    monkeypatch.setattr(semantic, "load_encoder", refuse)
    again = evaluate(demo_dataset, EvalOptions(grounding=True))
    assert again.keywords["grounding"].tolist() == grounded.keywords["grounding"].tolist()


def test_store_embedder_reads_the_store(grounded):
    embed, notes = grounding.store_embedder("all-MiniLM-L6-v2", "auto")
    vectors = embed(["cat", "cat", "dog"])
    assert vectors.shape[0] == 3 and np.allclose(vectors[0], vectors[1]) and notes == []
    assert UNGRADED == -1


def test_the_worked_examples_of_the_docs():
    """docs/metrics.md §12's two worked examples, computed by the functions the pipeline calls."""
    from kweval.beyond import diversity

    doc = (REPO / "docs" / "metrics.md").read_text(encoding="utf-8")
    text = "The cat sat on the mat. Dogs bark loudly, all night."
    vectors = {
        "the cat sat on the mat": _unit((0, 1.0)),
        "feline": _unit((0, 0.9), (5, math.sqrt(1 - 0.81))),
        "stock market": _unit((0, 0.12), (6, math.sqrt(1 - 0.12**2))),
    }
    found = ground(
        [text, text],
        [["cat sat", "mat cat", "feline", "stock market"], ["cat", "mat", "dogs", "bark", "night", "loudly"]],
        match_mode_rule("approx"),
        lambda texts: np.stack([vectors.get(t, _unit((7, 1.0))) for t in texts]),
    )
    n = counts(found, [4, 6])
    got = shares(n)
    assert [got[name][0] for name in ("grounded_present", "grounded_supported", "unsupported")] == [0.25, 0.5, 0.25]
    assert n["n_unsupported"].sum() / n["n_grounded"].sum() == 0.1 and np.mean(got["unsupported"]) == 0.125
    for said in ("`grounded_present = 1/4 = 0.25`", "micro `unsupported = 1 / 10 = 0.1`", "(0.25 + 0) / 2 ="):
        assert said in doc
    found = diversity.lists_diversity(
        [["neural network", "Neural Networks", "image"]], lambda texts: np.eye(len(texts), 8, dtype=np.float32)
    )
    assert found["dup_token_ratio"][0] == pytest.approx(0.4)
    cosines = np.array([[1, 0.95, 0.20], [0.95, 1, 0.25], [0.20, 0.25, 1]])
    assert diversity.self_similarity(np.linalg.cholesky(cosines)) == pytest.approx(0.4667, abs=5e-5)
    assert "`dup_token_ratio = 1 − 3/5 = 0.4`" in doc and "= 0.4667`" in doc
