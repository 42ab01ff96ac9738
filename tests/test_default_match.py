"""The match mode follows the data when none is chosen: the keyphrase field's exact match of stems on per-document
ground truth, the seed notebooks' approx on movie-level lists; the CLI, the library and the dashboard alike, and the
protocol card says which mode is in force and why."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from kweval.data import load_dataset
from kweval.evaluation.options import EvalOptions, default_match, match_reason
from kweval.evaluation.pipeline import evaluate
from kweval.io.card import evaluation_card
from tests.apptest import run, texts
from tests.helpers import SEMEVAL
from tests.test_page_headline import _collection

METRICS = ["p@5", "r@5", "f1@5", "f1@M", "ndcg@5", "recall_present"]


def test_auto_is_stem_on_per_document_gt_and_approx_on_movie_level():
    assert EvalOptions().match == "auto"
    assert (default_match(True), default_match(False)) == ("stem", "approx")
    assert EvalOptions().for_data(True).match == "stem" and EvalOptions().for_data(False).match == "approx"
    assert EvalOptions(match="approx").for_data(True).match == "approx"  # a chosen mode is kept
    with pytest.raises(ValueError, match="match must be one of auto, approx"):
        EvalOptions(match="fuzzy")
    assert "the default on per-document ground truth" in match_reason("stem", True)
    assert match_reason("approx", True).startswith("chosen (the default on per-document ground truth is stem")
    assert "the default on movie-level" in match_reason("approx", False)


def test_evaluate_resolves_auto_by_the_data(tmp_path, demo_dataset):
    collection = load_dataset(str(_collection(tmp_path)))
    auto = evaluate(collection, EvalOptions(keyphrase=True, present=True))
    stem = evaluate(collection, EvalOptions(match="stem", keyphrase=True, present=True))
    approx = evaluate(collection, EvalOptions(match="approx", keyphrase=True, present=True))
    assert auto.options.match == "stem"
    pd.testing.assert_frame_equal(auto.scores[METRICS], stem.scores[METRICS])
    assert not auto.scores[METRICS].equals(approx.scores[METRICS])  # the fixture tells them apart
    movie_level = evaluate(demo_dataset)
    assert movie_level.options.match == "approx"
    pd.testing.assert_frame_equal(movie_level.scores, evaluate(demo_dataset, EvalOptions(match="approx")).scores)


def _cli_json(capsys, *argv: str) -> dict:
    from kweval.cli import main

    assert main(["evaluate", *argv, "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_the_cli_defaults_to_stem_on_per_document_data_and_its_card_says_why(tmp_path, capsys):
    folder = _collection(tmp_path)
    default = _cli_json(capsys, str(folder))
    stem = _cli_json(capsys, str(folder), "--match", "stem")
    approx = _cli_json(capsys, str(folder), "--match", "approx")
    assert default["rows"] == stem["rows"] and default["rows"] != approx["rows"]
    card = default["meta"]["protocol"]
    assert card["match"].startswith("stem (docs/metrics.md §2): the default on per-document ground truth")
    assert "exact match of Porter stems" in card["match"] and card["stemming"].startswith("Porter")
    assert approx["meta"]["protocol"]["match"].startswith(
        "approx (docs/metrics.md §2): chosen (the default on per-document"
    )
    demo = _cli_json(capsys)
    assert demo["meta"]["protocol"]["match"].startswith(
        "approx (docs/metrics.md §2): the default on movie-level ground truth"
    )


def test_the_card_of_an_evaluation_names_the_data_default(demo_dataset):
    card = evaluation_card(EvalOptions(), "d", "h", aggregation="macro", per_document=True)
    assert card["match"].startswith("stem (docs/metrics.md §2): the default on per-document ground truth")
    card = evaluation_card(EvalOptions(), "d", "h", aggregation="macro")
    assert card["match"].startswith("approx (docs/metrics.md §2): the default on movie-level ground truth")


def test_the_dashboard_defaults_to_the_datas_mode_and_says_why(monkeypatch, tmp_path):
    at = run(monkeypatch, _collection(tmp_path), {"movie": "ALL"})
    assert at.sidebar.selectbox(key="sel_match").value == "stem"
    assert at.session_state["ctx"].evaluation.options.match == "stem"
    shown = texts(at)
    assert "match stem (the default on per-document ground truth, the keyphrase field" in shown.replace("\\", "")
    demo = run(monkeypatch, None, {"movie": "ALL"})
    assert demo.sidebar.selectbox(key="sel_match").value == "approx"
    assert "match approx (the default on movie-level ground truth" in texts(demo).replace("\\", "")


@pytest.mark.keyphrase
def test_semeval_default_matches_stems_not_word_fragments(tmp_path, capsys, semeval_extracted):
    """The issue's document: under approx YAKE's 'theories' is a hit of 'nonabelian gauge theories' (P@5 0.4); under
    the default (stem) it is not, and P@5 is pke's 0.0."""
    from kweval.cli import main

    yake = semeval_extracted("yake")  # `kweval extract`'s output
    per_review = {}
    for name, extra in (("default", []), ("approx", ["--match", "approx"]), ("pke", ["--protocol", "pke"])):
        out = tmp_path / f"{name}.csv"
        argv = ["evaluate", str(SEMEVAL), "--predictions", f"yake={yake}", "--per-review", str(out), "--out", "-"]
        assert main(argv + extra) == 0
        table = pd.read_csv(out, dtype={"review_id": str})
        per_review[name] = table[table["review_id"] == "S0003491613001516"].iloc[0]
    capsys.readouterr()
    assert per_review["approx"]["p@5"] == pytest.approx(0.4)
    assert per_review["default"]["p@5"] == per_review["pke"]["p@5"] == 0.0
    ev = evaluate(load_dataset(str(SEMEVAL), predictions={"yake": str(yake)}), EvalOptions(match="approx"))
    kw = ev.keywords[ev.keywords["review_id"] == "S0003491613001516"]
    assert "nonabelian gauge theories" in set(kw.loc[kw["keyword"] == "theories", "gt_keyword"])
    kw = evaluate(load_dataset(str(SEMEVAL), predictions={"yake": str(yake)})).keywords
    kw = kw[(kw["review_id"] == "S0003491613001516") & (kw["gt_rank"] >= 0)]
    assert "theories" not in set(kw["keyword"]) and len(kw) == 3


def test_legacy_mode_does_not_call_an_unchosen_match_ignored(demo_dataset):
    from kweval.legacy import legacy_summary

    _, problems = legacy_summary(demo_dataset, EvalOptions())
    assert not [p for p in problems if "ignored" in str(p)]
    _, problems = legacy_summary(demo_dataset, EvalOptions(match="stem"))
    assert [str(p) for p in problems if "ignored" in str(p)] == [
        "legacy mode: --match stem is ignored: the notebooks use approx"
    ]
