"""METRICS.md §1–3 and §6: the test vectors, the matching rules, and a cross-check against tests/reference.py."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kweval.evaluation.aggregate import ALL, aggregate
from kweval.evaluation.pipeline import EvalOptions, evaluate
from kweval.text.matching import candidate_lists, keywords_match
from kweval.text.normalize import normalize, normalize_many
from tests import reference
from tests.helpers import make_dataset

GT = ["fraud", "poverty", "scam"]


def one_review(preds, gt=GT, **opts):
    ds = make_dataset({"m": gt}, {("m", "r1", "model"): [(p, 1.0) if isinstance(p, str) else p for p in preds]})
    ev = evaluate(ds, EvalOptions(**opts))
    return ev.scores.iloc[0], ev


# --- §1 cleaning -------------------------------------------------------------------------------


def test_normalize_spec_example():
    assert normalize("Darth-Vader's  FALL!") == "darthvaders fall"


def test_normalize_unicode_nfkc_and_casefold():
    assert normalize("ＳＴＲＡẞE  Café") == "strasse café"
    assert normalize("  --  ") == ""


def test_normalize_many_equals_normalize_on_edge_cases():
    values = [
        "star wars",
        "",
        " star",
        "star ",
        "star  wars",
        "Star",
        "a\nb",
        "x_y",
        "\tgo",
        "ok",
        None,
        3.5,
        "é",
        "ＳＴＡＲ",
    ]
    expected = [normalize(v) if isinstance(v, str) else "" for v in values]
    assert normalize_many(values) == expected
    assert normalize_many([v for v in values if v != "a\nb"]) == [e for v, e in zip(values, expected) if v != "a\nb"]
    assert normalize_many([]) == []


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.text(alphabet="aB \n_-É\t\x00\x1f\r.", max_size=6), st.none()), max_size=8))
def test_normalize_many_equals_normalize(values):
    """ASCII values are normalized joined by "\\x00" (which normalize drops), the rest one by one: the same either
    way."""
    assert normalize_many(values) == [normalize(v) if isinstance(v, str) else "" for v in values]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(alphabet=st.characters(max_codepoint=127), max_size=30), max_size=6))
def test_normalize_many_equals_normalize_on_any_ascii(values):
    assert normalize_many(values) == [normalize(v) for v in values]


def test_normalize_many_returns_already_normal_values_themselves():
    """A keyword and its norm stay one object in memory when the keyword is already normal."""
    values = ["star wars", "Star Wars", "café", "dark  knight", "x" * 3 + " y"]
    for value, norm in zip(values, normalize_many(values)):
        assert (norm is value) == (normalize(value) == value)


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=st.characters(max_codepoint=127), max_size=12))
def test_normalize_ascii_shortcut_follows_the_unicode_definition(text):
    """ASCII text takes a translate() shortcut; it must equal NFKC + casefold + keep L/N/M and whitespace."""
    import unicodedata

    folded = unicodedata.normalize("NFKC", text).casefold()
    kept = "".join(ch for ch in folded if ch.isspace() or unicodedata.category(ch)[0] in "LNM")
    assert normalize(text) == " ".join(kept.split())
    assert normalize(text + "é") == " ".join((kept + "é").split())  # the Unicode path, for comparison


def test_duplicates_after_normalization_keep_the_first():
    row, ev = one_review([("Scam!", 0.9), ("scam", 0.5), ("fraud", 0.4)])
    kept = ev.keywords["keyword"].tolist()
    assert kept == ["Scam!", "fraud"]
    assert ev.keywords["position"].tolist() == [0, 1]
    assert row["n_pred"] == 2


def test_invalid_scores_count_as_zero_and_are_reported():
    row, ev = one_review([("scam", float("nan")), ("fraud", -1.0), ("poverty", 2.0), ("family", float("inf"))])
    assert row["n_bad_scores"] == 3
    assert row["w_precision"] == pytest.approx(1.0)  # only poverty has weight, and it matches
    assert any("counted as 0" in p.reason for p in ev.problems)


def test_missing_cell_is_skipped_and_empty_list_scores_zero():
    ds = make_dataset(
        {"m": GT},
        {
            ("m", "r1", "a"): [("scam", 1.0)],
            ("m", "r2", "a"): [],
            ("m", "r1", "b"): None,
            ("m", "r2", "b"): [("fraud", 1.0)],
        },
    )
    ev = evaluate(ds)
    got = {(r, m) for r, m in zip(ev.scores["review_id"], ev.scores["model"])}
    assert got == {("r1", "a"), ("r2", "a"), ("r2", "b")}
    empty = ev.scores[(ev.scores["review_id"] == "r2") & (ev.scores["model"] == "a")].iloc[0]
    assert empty["n_pred"] == 0 and empty["precision"] == 0 and empty["ndcg@5"] == 0
    assert ev.skipped[["review_id", "model"]].values.tolist() == [["r1", "b"]]
    summary = aggregate(ev)
    b = summary[(summary["movie"] == "m") & (summary["model"] == "b")].iloc[0]
    assert b["n_reviews"] == 1 and b["n_skipped"] == 1


def test_movie_without_gt_is_skipped_and_named():
    ds = make_dataset({"m": GT, "empty": []}, {("m", "r1", "a"): [("scam", 1.0)], ("empty", "r9", "a"): [("x", 1.0)]})
    ev = evaluate(ds)
    assert set(ev.scores["movie"]) == {"m"}
    assert any(p.source == "empty" and "no ground-truth" in p.reason for p in ev.problems)


# --- §2 matching ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "p,g,mode,expected",
    [
        ("war", "star war", "word", True),
        ("war", "star wars", "word", False),
        ("wars", "war", "approx", True),
        ("war", "star wars", "approx", True),
        ("star", "star", "exact", True),
        ("star", "stars", "exact", False),
        ("lightsaber duels", "lightsaber duel", "stem", True),
        ("lightsaber", "lightsaber duel", "stem", False),
        ("star war", "war", "word", True),
    ],
)
def test_match_modes(p, g, mode, expected):
    assert keywords_match(p, g, mode) is expected
    got = candidate_lists([p], [g], mode)[0]
    assert (len(got) == 1) is expected


def test_candidate_lists_agree_with_pairwise_rule():
    preds = ["star wars", "war", "wars", "star", "darth vader", "vader", "luke", "x"]
    gt = ["star war", "darth vader", "star wars saga", "war", "sith"]
    for mode in ("approx", "exact", "word", "stem"):
        got = candidate_lists(preds, gt, mode)
        for i, p in enumerate(preds):
            expected = [j for j, g in enumerate(gt) if keywords_match(p, g, mode)]
            assert got[i].tolist() == expected, (mode, p)


def test_one_to_one_assignment_never_credits_a_gt_keyword_twice():
    # all three match GT 0; the second has no other candidate, the third takes its next free one
    gt = ["luke skywalker", "han solo", "young luke"]
    preds = ["luke", "skywalker", "luke skywalker han solo"]
    assert [c.tolist() for c in candidate_lists(preds, gt)] == [[0, 2], [0], [0, 1]]
    row, ev = one_review(preds, gt=gt)
    assert ev.keywords.sort_values("position")["gt_rank"].tolist() == [0, -1, 1]
    assert row["n_matched"] == 2


# --- §3 test vectors -----------------------------------------------------------------------------


def test_ndcg_seed_000_first_list():
    row, _ = one_review(["scam", "family", "poverty", "cinematography", "fraud"], k=5)
    dcg = 0.5 + (1 / math.log2(3)) / 2 + 1 / math.log2(6)
    idcg = 1 + (1 / math.log2(3)) / math.log2(3) + 0.5 / 2
    assert dcg == pytest.approx(1.20232, abs=1e-5)
    assert idcg == pytest.approx(1.64807, abs=1e-5)
    assert row["ndcg@5"] == pytest.approx(0.72953, abs=1e-5)
    assert row["ndcg@5"] == pytest.approx(dcg / idcg, abs=1e-12)


def test_ndcg_seed_000_second_list_is_perfect():
    row, _ = one_review(["fraud", "poverty", "scam", "family", "cinematography"], k=5)
    assert row["ndcg@5"] == pytest.approx(1.0, abs=1e-12)


def test_all_per_review_metrics_on_seed_example():
    row, ev = one_review(
        [("scam", 0.4), ("family", 0.3), ("poverty", 0.2), ("cinematography", 0.05), ("fraud", 0.05)], k=5
    )
    expected = reference.review_metrics(
        [("scam", 0.4), ("family", 0.3), ("poverty", 0.2), ("cinematography", 0.05), ("fraud", 0.05)], GT, k=5
    )
    assert row["precision"] == pytest.approx(3 / 5)
    assert row["recall"] == pytest.approx(1.0)
    assert row["w_precision"] == pytest.approx(0.65)
    assert row["p@5"] == pytest.approx(3 / 5)
    assert row["ap@5"] == pytest.approx((1 / 1 + 2 / 3 + 3 / 5) / 3)
    assert row["rr"] == pytest.approx(1.0)
    for name in ("precision", "recall", "f1", "w_precision", "w_recall", "w_f1", "ndcg@5", "p@5", "ap@5", "rr"):
        assert row[name] == pytest.approx(expected[name], abs=1e-12), name
    assert ev.keywords["gt_rank"].tolist() == [2, -1, 1, -1, 0]


@pytest.mark.parametrize("gain", ["linear", "exponential"])
@pytest.mark.parametrize("discount", ["log2", "jarvelin"])
@pytest.mark.parametrize("k", [1, 3, 5, 10])
def test_variants_match_reference(gain, discount, k):
    preds = [("scam", 0.4), ("family", 0.3), ("fraud", 0.2), ("poverty", 0.1)]
    row, _ = one_review(preds, k=k, gain=gain, discount=discount)
    expected = reference.review_metrics(preds, GT, k=k, gain=gain, discount=discount)
    for name in (f"ndcg@{k}", f"p@{k}", f"ap@{k}", "rr", "w_recall"):
        assert row[name] == pytest.approx(expected[name], abs=1e-12), name


def test_lower_is_better_scores_use_the_documented_transform():
    ds = make_dataset({"m": GT}, {("m", "r", "yake"): [("scam", 0.1), ("family", 0.9)]}, directions={"yake": "lower"})
    row = evaluate(ds).scores.iloc[0]
    assert row["w_precision"] == pytest.approx((1 / 1.1) / (1 / 1.1 + 1 / 1.9))


# --- §6 aggregation -------------------------------------------------------------------------------


def test_micro_and_macro_and_all_rows():
    ds = make_dataset(
        {"m1": GT, "m2": ["alpha", "beta"]},
        {
            ("m1", "r1", "a"): [("scam", 1.0), ("qq", 1.0)],
            ("m1", "r2", "a"): [("qq", 1.0)],
            ("m2", "r3", "a"): [("alpha", 2.0), ("beta", 1.0), ("qq", 1.0)],
        },
    )
    ev = evaluate(ds)
    macro = aggregate(ev, "macro").set_index(["movie", "model"])
    micro = aggregate(ev, "micro").set_index(["movie", "model"])
    assert macro.loc[("m1", "a"), "precision"] == pytest.approx((0.5 + 0.0) / 2)
    assert micro.loc[("m1", "a"), "precision"] == pytest.approx(1 / 3)
    assert micro.loc[(ALL, "a"), "precision"] == pytest.approx(3 / 6)
    assert micro.loc[(ALL, "a"), "recall"] == pytest.approx(3 / (3 + 3 + 2))
    assert macro.loc[(ALL, "a"), "precision"] == pytest.approx((0.5 + 0 + 2 / 3) / 3)
    assert micro.loc[(ALL, "a"), "w_precision"] == pytest.approx((1 + 3) / (2 + 1 + 4))
    # ranking metrics are means over reviews in both modes
    assert micro.loc[(ALL, "a"), "ndcg@5"] == pytest.approx(macro.loc[(ALL, "a"), "ndcg@5"])
    assert macro.loc[(ALL, "a"), "n_reviews"] == 3
    # coverage: m1 covers 1 of 3, m2 2 of 2
    assert macro.loc[("m1", "a"), "gt_coverage"] == pytest.approx(1 / 3)
    assert micro.loc[(ALL, "a"), "gt_coverage"] == pytest.approx(3 / 5)
    assert macro.loc[(ALL, "a"), "gt_coverage"] == pytest.approx((1 / 3 + 1) / 2)
    f = micro.loc[(ALL, "a")]
    assert f["f1"] == pytest.approx(2 * f["precision"] * f["recall"] / (f["precision"] + f["recall"]))


# --- properties -------------------------------------------------------------------------------------

WORDS = ["star", "war", "wars", "jedi", "dark", "side", "luke", "vader", "Star-Wars", "DARK side!", "the", "a"]
keyword = st.lists(st.sampled_from(WORDS), min_size=1, max_size=3).map(" ".join)
pred_entry = st.tuples(keyword, st.one_of(st.floats(0, 1), st.just(float("nan")), st.just(-0.5)))
METRIC_COLS = ["precision", "recall", "f1", "w_precision", "w_recall", "w_f1", "ndcg@5", "p@5", "ap@5", "rr"]


@settings(max_examples=150, deadline=None)
@given(
    gt=st.lists(keyword, min_size=1, max_size=8),
    reviews=st.lists(st.lists(pred_entry, max_size=8), min_size=1, max_size=5),
    mode=st.sampled_from(["approx", "exact", "word"]),
    gain=st.sampled_from(["linear", "exponential"]),
    discount=st.sampled_from(["log2", "jarvelin"]),
)
def test_evaluate_equals_reference_and_stays_in_unit_interval(gt, reviews, mode, gain, discount):
    ds = make_dataset({"m": gt}, {("m", f"r{i}", "x"): r for i, r in enumerate(reviews)})
    ev = evaluate(ds, EvalOptions(match=mode, gain=gain, discount=discount))
    assert len(ev.scores) == len(reviews)
    for i, r in enumerate(reviews):
        got = ev.scores.iloc[i]
        exp = reference.review_metrics(r, gt, k=5, mode=mode, gain=gain, discount=discount)
        for name in METRIC_COLS:
            assert 0.0 <= got[name] <= 1.0 + 1e-12, name
            assert got[name] == pytest.approx(exp[name], abs=1e-9), (name, r, gt)


@settings(max_examples=60, deadline=None)
@given(gt=st.lists(keyword, min_size=1, max_size=8, unique_by=reference.norm))
def test_gt_own_order_has_ndcg_one(gt):
    gt = [g for g in gt if reference.norm(g)]
    if not gt:
        return
    # exact matching: substring rules could let an earlier keyword take a later one's GT slot
    row, _ = one_review([(g, 1.0) for g in gt], gt=gt, match="exact")
    assert row["ndcg@5"] == pytest.approx(1.0)


@settings(max_examples=60, deadline=None)
@given(reviews=st.lists(pred_entry, max_size=6), gt=st.lists(keyword, min_size=1, max_size=6))
def test_case_and_punctuation_do_not_change_scores(reviews, gt):
    shouted = [(kw.upper() + "!", s) for kw, s in reviews]
    a, _ = one_review(reviews, gt=gt)
    b, _ = one_review(shouted, gt=[g.title() + "." for g in gt])
    for name in METRIC_COLS:
        assert a[name] == pytest.approx(b[name], abs=1e-12)


@settings(max_examples=60, deadline=None)
@given(r=st.lists(pred_entry, max_size=6), gt=st.lists(keyword, min_size=1, max_size=6))
def test_micro_equals_macro_for_a_single_review(r, gt):
    ds = make_dataset({"m": gt}, {("m", "r", "x"): r})
    ev = evaluate(ds)
    macro = aggregate(ev, "macro", include_all=False).iloc[0]  # the movie's row (the ALL row is not read here)
    micro = aggregate(ev, "micro", include_all=False).iloc[0]
    for name in METRIC_COLS + ["gt_coverage"]:
        assert macro[name] == pytest.approx(micro[name], abs=1e-12), name


def test_assignment_fast_path_matches_the_walk_on_many_lists():
    rng = np.random.default_rng(7)
    gt = [f"kw{j}" for j in range(12)] + ["kw1 kw2", "kw"]
    words = [f"kw{j}" for j in range(15)] + ["kw", "kw1 kw2 kw3"]
    preds = {("m", f"r{i}", "x"): [(str(w), 1.0) for w in rng.choice(words, size=6, replace=False)] for i in range(300)}
    ds = make_dataset({"m": gt}, preds)
    ev = evaluate(ds)
    for (_movie, rid, _model), entries in preds.items():
        exp = reference.review_metrics(entries, gt)
        got = ev.scores[(ev.scores["review_id"] == rid)].iloc[0]
        assert got["n_matched"] == exp["_counts"][0]
        assert got["ndcg@5"] == pytest.approx(exp["ndcg@5"], abs=1e-12)
