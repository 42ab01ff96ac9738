"""Slice discovery: review features, the URL-safe slice spec, SliceLine's worst slices with bootstrap CIs, the CLI."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from kweval.cli import main
from kweval.data import load_dataset
from kweval.evaluation.pipeline import EvalOptions, evaluate
from kweval.evaluation.slice_features import (
    FEATURES,
    feature_names,
    format_slice,
    parse_slice,
    slice_features,
    slice_mask,
)
from kweval.stats.slices import COLUMNS, review_errors, worst_slices
from tests.helpers import DNLP, make_dataset


@given(st.dictionaries(st.sampled_from(FEATURES), st.text(min_size=1), max_size=len(FEATURES)))
def test_spec_round_trips_and_is_url_safe(conditions):
    spec = format_slice(conditions)
    assert parse_slice(spec) == conditions
    assert all(c.isalnum() or c in "_=;%-.~" for c in spec)  # nothing a URL query must escape again


def test_spec_reads_the_documented_form_and_rejects_bad_parts():
    assert parse_slice("text_len=long;gt_size=small") == {"text_len": "long", "gt_size": "small"}
    assert format_slice({"gt_size": "small", "text_len": "long"}) == "text_len=long;gt_size=small"
    assert parse_slice("") == {}
    for bad, needle in (
        ("colour=red", "unknown slice feature"),
        ("text_len", "not FEATURE=VALUE"),
        ("text_len=a;text_len=b", "given twice"),
        ("movie=", "not FEATURE=VALUE"),
    ):
        with pytest.raises(ValueError, match=needle):
            parse_slice(bad)


def _planted():
    """Two movies; in m1 long texts get nothing right (model a), short ones hit; model b echoes a on half."""
    gt = {"m1": ["fraud", "poverty", "scam"], "m2": ["jedi", "force", "empires"]}  # texts of equal lengths
    preds, texts = {}, {}
    for movie, words in gt.items():
        for i in range(60):
            review = f"{movie}-{i}"
            long_text = i % 2 == 0
            texts[(movie, review)] = ("word " * (200 if long_text else 5)) + " ".join(words)
            bad = long_text and movie == "m1"
            preds[(movie, review, "a")] = [("zzz", 1.0), ("yyy", 0.5)] if bad else [(words[0], 1.0), ("yyy", 0.5)]
            preds[(movie, review, "b")] = [(words[i % 3], 1.0), ("qqq", 0.5)]
    ds = make_dataset(gt, preds, texts=texts)
    return ds, evaluate(ds, EvalOptions(k=2, present=True))


def test_features_are_binned_by_the_data():
    ds, ev = _planted()
    f = slice_features(ev, ds)
    assert len(f) == len(ev.scores)
    assert set(f["text_len"]) == {"short", "long"}  # two lengths: two bins
    assert "rating" not in f  # no ratings: one value, left out
    names = feature_names(f)
    assert names[0] == "movie" and "text_len" in names and "disagreement" in names
    assert set(f["disagreement"]) <= {"low", "medium", "high"}
    mask = slice_mask(f, "movie=m1;text_len=long")
    assert mask.sum() == 60 and set(f.loc[mask, "review_id"].str[:2]) == {"m1"}
    assert not slice_mask(f, "rating=high").any()  # a feature the table lacks selects nothing


def test_disagreement_is_zero_when_models_agree():
    preds = {
        ("m", f"r{i}", model): [("a", 1.0), ("b", 1.0)] if i % 2 else [("c", 1.0)]
        for i in range(4)
        for model in ("x", "y")
    }
    preds[("m", "r0", "y")] = [("d", 1.0)]  # r0: no keyword shared; r1: one of three shared; r2, r3: the same sets
    preds[("m", "r1", "y")] = [("a", 1.0), ("e", 1.0)]
    ds = make_dataset({"m": ["a", "c"]}, preds)
    f = slice_features(evaluate(ds, EvalOptions()), ds)
    got = dict(zip(f["review_id"], f["disagreement"]))
    assert got == {"r0": "high", "r1": "medium", "r2": "low", "r3": "low"}  # 1, 2/3, 0, 0


def test_review_errors_are_shares_of_better_reviews():
    errors = review_errors(np.array([0.0, 0.5, 0.5, 1.0]))
    np.testing.assert_allclose(errors, [1.0, 0.5, 0.5, 0.0])
    assert review_errors(np.array([1.0, 0.0]), higher_is_better=False).tolist() == [1.0, 0.0]
    assert review_errors(np.array([0.3])).tolist() == [0.5]


def test_worst_slice_is_the_planted_one_with_a_ci():
    ds, ev = _planted()
    table = worst_slices(ev, ds, "a", "f1", top=3, n_boot=500)
    assert list(table.columns) == COLUMNS
    assert table["slice"].iloc[0] == "" and table["n_reviews"].iloc[0] == 120
    assert table["slice"].iloc[1] == "movie=m1;text_len=long"
    worst = table.iloc[1]
    assert worst["n_reviews"] == 30 and worst["value"] == 0.0 and worst["ci_high"] == 0.0
    overall = ev.scores.loc[ev.scores["model"] == "a", "f1"].mean()
    assert worst["overall"] == pytest.approx(overall) and worst["gap"] == pytest.approx(-overall)
    assert (table["ci_low"] <= table["value"]).all() and (table["value"] <= table["ci_high"]).all()
    f = slice_features(ev, ds)
    rows = (f["model"] == "a").to_numpy() & slice_mask(f, worst["slice"])
    assert ev.scores.loc[rows, "f1"].mean() == worst["value"]  # the spec selects the slice's reviews


def test_unknown_model_or_metric():
    ds, ev = _planted()
    with pytest.raises(ValueError, match="unknown model"):
        worst_slices(ev, ds, "zz", "f1")
    with pytest.raises(ValueError, match="unknown metric"):
        worst_slices(ev, ds, "a", "nope@5")


def _cli(capsys, *args):
    status = main(["slices", *args])
    out = capsys.readouterr()
    return status, out.out, out.err


def test_cli_on_the_demo(capsys):
    status, out, _ = _cli(capsys, "--model", "keybert", "--metric", "f1@5", "--top", "3")
    assert status == 0
    table = pd.read_csv(io.StringIO(out), keep_default_na=False)
    assert list(table.columns) == COLUMNS and table["slice"].iloc[0] == "" and len(table) >= 2
    for spec in table["slice"].iloc[1:]:
        parse_slice(spec)
    assert (pd.to_numeric(table["gap"].iloc[1:]) < 0).all()


@pytest.mark.parametrize("options", [["--match", "stem", "--k", "3"], ["--match", "exact", "--gt-order", "helpful"]])
def test_cli_options_give_evaluates_per_review_metric(capsys, tmp_path, options):
    """slices reads its options as evaluate does (`common.eval_options`): its overall value is the mean of the
    per-review metric `kweval evaluate` writes with the same options, and differs from the defaults' one."""
    k = options[options.index("--k") + 1] if "--k" in options else "5"
    status, out, _ = _cli(capsys, "--model", "keybert", "--metric", f"ndcg@{k}", "--top", "1", *options)
    assert status == 0
    overall = pd.read_csv(io.StringIO(out), keep_default_na=False)["overall"].iloc[0]
    per_review = tmp_path / "reviews.csv"
    assert main(["evaluate", *options, "--per-review", str(per_review), "--out", str(tmp_path / "s.csv")]) == 0
    capsys.readouterr()
    table = pd.read_csv(per_review)
    expected = table.loc[table["model"] == "keybert", f"ndcg@{k}"].mean()
    assert overall == pytest.approx(expected, abs=5e-7)  # the CSV holds 6 decimals
    status, out, _ = _cli(capsys, "--model", "keybert", "--metric", f"ndcg@{k}", "--top", "1", "--k", k)
    assert pd.read_csv(io.StringIO(out))["overall"].iloc[0] != pytest.approx(expected, abs=1e-6)


def test_cli_offers_the_shared_evaluation_options(capsys):
    with pytest.raises(SystemExit):
        main(["slices", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    for flag in (
        "--k",
        "--match {approx,exact,word,stem}",
        "--gt-order",
        "--semantic",
        "--threshold",
        "--embedding-model",
        "--embedding-backend {auto,torch,onnx,onnx-int8}",
    ):
        assert flag in text, flag
    status, _, err = _cli(capsys, "--model", "keybert", "--threshold", "2")
    assert status == 2 and err.startswith("kweval: ") and "threshold must be within [0, 1]" in err


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--model", "nope"], "unknown model(s): nope"),
        (["--model", "keybert", "--metric", "zz"], "unknown metric 'zz'"),
        (["/no/such", "--model", "x"], "no such file or folder"),
    ],
)
def test_cli_bad_input_is_one_line(capsys, args, needle):
    status, out, err = _cli(capsys, *args)
    assert status == 2 and out == ""
    (line,) = err.strip().splitlines()
    assert line.startswith("kweval: ") and needle in line


@pytest.mark.dnlp
def test_dnlp_slices():
    ds = load_dataset(DNLP)
    ev = evaluate(ds, EvalOptions(k=5, present=True, keyphrase=True))
    table = worst_slices(ev, ds, "base", "f1@5", top=5, n_boot=300)
    assert len(table) >= 3 and (table["gap"].iloc[1:] < 0).all()
    assert (table["ci_high"].iloc[1:] < table["overall"].iloc[1:]).any()  # some slice is worse beyond its CI


def test_load_search_loads_sliceline_for_the_first_real_search():
    """The dashboard loads SliceLine at the end of a server's first page (`load_search`): after it, the search's
    module is imported and a search runs."""
    import sys

    from kweval.stats import slices as stats_slices

    assert stats_slices.load_search() is True
    assert "sliceline.slicefinder" in sys.modules
