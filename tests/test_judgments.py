"""Judgments (docs/metrics.md §11): the judged GT G', its test vectors, the judged columns, agreement, export."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from kweval.evaluation.aggregate import aggregate
from kweval.evaluation.pipeline import EvalOptions, evaluate
from kweval.io.export import GRADE_SCALE, trec_qrels
from kweval.judgments import (
    agreement,
    checked,
    combined_grades,
    judged_evaluation,
    judged_ground_truth,
    judged_ground_truth_table,
    judged_summary,
)
from kweval.text.normalize import normalize
from tests.helpers import make_dataset

SECTION3 = ["scam", "family", "poverty", "cinematography", "fraud"]


def judgments(*rows: tuple) -> pd.DataFrame:
    """A judgments table from (movie, review_id or None, keyword, grade, annotator) rows, in judgment order."""
    frame = pd.DataFrame(rows, columns=["movie", "review_id", "keyword", "grade", "annotator"])
    frame["review_id"] = frame["review_id"].astype(object)
    frame.insert(0, "id", np.arange(1, len(frame) + 1))
    frame["norm"] = [normalize(k) for k in frame["keyword"]]
    frame["side"], frame["time"] = "prediction", ""
    return frame


def section3(extra_reviews: int = 0):
    preds = {("m", "r1", "A"): [(k, 1.0) for k in SECTION3]}
    for i in range(extra_reviews):
        preds[("m", f"r{i + 2}", "A")] = [(k, 1.0) for k in SECTION3]
    return make_dataset({"m": ["fraud", "poverty", "scam"]}, preds)


def judged_scores(dataset, table, **options):
    kept, problems = checked(table, dataset, "judgments")
    assert problems == []
    evaluation, judged = judged_evaluation(dataset, kept, EvalOptions(**options))
    return evaluation.scores, judged


@pytest.mark.parametrize("family, expected", [(3, 0.684983), (1, 0.583246)])
def test_section9_vectors(family, expected):
    ds = section3()
    scores, judged = judged_scores(ds, judgments(("m", "r1", "family", family, "ann"), ("m", "r1", "scam", 0, "ann")))
    assert scores["ndcg@5"].iloc[0] == pytest.approx(expected, abs=5e-7)
    assert scores["precision"].iloc[0] == pytest.approx(3 / 5)
    own = judged.table[judged.table["review_id"] == "r1"].sort_values("rank")
    gains = [1.0, 1.0, 1 / math.log2(3)] if family == 3 else [1.0, 1 / math.log2(3), 1 / 3]
    assert own["relevance"].tolist() == pytest.approx(gains)
    assert "scam" not in own["norm"].tolist()
    # w_recall's denominator is the gains of G': family, poverty and fraud are all matched
    assert scores["w_recall"].iloc[0] == pytest.approx(1.0)
    assert evaluate(ds).scores["ndcg@5"].iloc[0] == pytest.approx(0.72953, abs=5e-6)  # the reference is unchanged


def test_section9_vector_for_the_whole_movie_and_other_reviews_untouched():
    ds = section3(extra_reviews=1)
    table = judgments(("m", None, "family", 3, "ann"), ("m", "r1", "scam", 0, "ann"))
    scores, judged = judged_scores(ds, table)
    by_review = scores.set_index("review_id")
    assert by_review.loc["r1", "ndcg@5"] == pytest.approx(0.684983, abs=5e-7)
    # r2 gets only the whole-movie judgment: G' = fraud (1), family (1), poverty, scam
    gains = np.array([1.0, 1.0, 1 / math.log2(3), 0.5])
    disc = 1 / np.log2(np.arange(5) + 2)
    dcg = gains[3] * disc[0] + gains[1] * disc[1] + gains[2] * disc[2] + gains[0] * disc[4]
    assert by_review.loc["r2", "ndcg@5"] == pytest.approx(dcg / (gains * disc[:4]).sum())
    assert judged.n_used == 2 and judged.used_per_movie == {"m": 2}


def test_no_judgments_changes_nothing(demo_dataset):
    """G' without judgments is G: the explicit-relevance path gives every reference number (any gain/discount)."""
    for options in ({}, {"gain": "exponential", "discount": "jarvelin", "k": 3, "match": "word"}):
        ref = evaluate(demo_dataset, EvalOptions(**options)).scores
        judged, _ = judged_evaluation(demo_dataset, judgments(), EvalOptions(**options))
        metrics = [c for c in ref.columns if c not in ("movie", "review_id", "model")]
        pd.testing.assert_frame_equal(ref[metrics], judged.scores[metrics], check_exact=False, rtol=1e-12)


def test_grades_combine_by_median_rounded_down_latest_per_annotator():
    table = judgments(
        ("m", "r1", "family", 3, "a"),
        ("m", "r1", "family", 1, "a"),  # a's latest
        ("m", "r1", "family", 2, "b"),
        ("m", None, "cinematography", 0, "a"),
        ("m", None, "cinematography", 1, "b"),
        ("m", None, "cinematography", 3, "c"),
    )
    grades = combined_grades(table).set_index("norm")
    assert grades.loc["family", "grade"] == 1  # median(1, 2) = 1.5 -> 1
    assert grades.loc["cinematography", "grade"] == 1  # median(0, 1, 3)
    assert grades.loc["family", "n_annotators"] == 2


def test_a_reviews_own_grade_wins_over_the_whole_movies():
    ds = section3(extra_reviews=1)
    table = judgments(("m", None, "scam", 0, "a"), ("m", "r1", "scam", 2, "a"))
    _, judged = judged_scores(ds, table)
    lists = judged.table.groupby(judged.table["review_id"].fillna("-"))["norm"].agg(list)
    assert "scam" in lists["r1"] and "scam" not in lists["-"]  # r2 reads the movie's judged list


def test_unranked_gt_keeps_gain_one():
    ds = section3()
    ds.movies["ranked"] = False
    scores, judged = judged_scores(ds, judgments(("m", "r1", "family", 3, "a"), ("m", "r1", "cinematography", 1, "a")))
    own = judged.table[judged.table["review_id"] == "r1"].sort_values("rank")
    assert own["norm"].tolist() == ["fraud", "poverty", "scam", "family", "cinematography"]
    assert own["relevance"].tolist() == pytest.approx([1, 1, 1, 1, 1 / 3])
    assert scores["precision"].iloc[0] == 1.0


def test_bad_judgments_are_reported_and_the_rest_used():
    ds = section3()
    table = judgments(
        ("m", "r1", "family", 3, "a"),
        ("m", "r1", "family", 7, "b"),
        ("m", "r1", "family", "x", "c"),
        ("m", "r1", "family", 2.5, "c"),
        ("nope", None, "family", 1, "a"),
        ("m", "r9", "family", 1, "a"),
        ("m", "r1", "never said\u202e", 1, "a"),
        ("m", "r1", "   ", 1, "a"),
    )
    kept, problems = checked(table, ds, "j.csv")
    assert kept["grade"].tolist() == [3]
    text = "\n".join(str(p) for p in problems)
    assert "3 judgment(s) with a grade outside 0–3" in text
    assert "movie not evaluated" in text and "unknown review" in text and "neither a GT keyword" in text
    assert "without a keyword" in text
    assert "\u202e" not in text and "\\u202e" in text  # the bidi override is escaped
    assert all(p.source == "j.csv" for p in problems) and all("\n" not in p.reason for p in problems)


def test_summary_puts_judged_twins_beside_the_metrics(demo_dataset):
    movie = demo_dataset.movies["movie"].iloc[0]
    gt_keyword = demo_dataset.ground_truth.query("movie == @movie")["keyword"].iloc[0]
    ref = evaluate(demo_dataset)
    table = judgments((movie, None, gt_keyword, 0, "a"))
    judged, ground_truth = judged_evaluation(demo_dataset, checked(table, demo_dataset, "j")[0])
    summary = judged_summary(aggregate(ref), judged, ground_truth)
    columns = summary.columns.tolist()
    assert columns[columns.index("precision") + 1] == "precision_judged"
    assert columns[columns.index("ndcg@5") + 1] == "ndcg@5_judged" and "gt_coverage_judged" not in columns
    assert columns[-1] == "n_judgments"
    other = summary[(summary["movie"] != movie) & (summary["movie"] != "ALL")]
    assert (other["ndcg@5"] == other["ndcg@5_judged"]).all() and (other["n_judgments"] == 0).all()
    mine = summary[summary["movie"] == movie]
    assert (mine["n_judgments"] == 1).all() and (mine["recall"] != mine["recall_judged"]).any()
    assert (summary.loc[summary["movie"] == "ALL", "n_judgments"] == 1).all()


def test_agreement_two_annotators_is_quadratic_kappa():
    from sklearn.metrics import cohen_kappa_score

    a, b = [0, 1, 2, 3, 3, 2], [0, 2, 2, 3, 1, 2]
    keywords = SECTION3 + ["extra"]
    table = judgments(
        *[("m", "r1", k, g, "a") for k, g in zip(keywords, a)], *[("m", "r1", k, g, "b") for k, g in zip(keywords, b)]
    )
    result = agreement(table)
    assert result.method == "cohen_kappa (quadratic)" and result.n_items == 6
    assert result.value == pytest.approx(cohen_kappa_score(a, b, weights="quadratic"))
    assert result.value != pytest.approx(cohen_kappa_score(a, b))  # the weighting matters


def test_agreement_three_annotators_is_ordinal_alpha_on_shared_items():
    import krippendorff

    grades = {"a": [0, 1, 2, 3], "b": [0, 1, 3, 3], "c": [1, 1, 2, None]}
    rows = [("m", "r1", SECTION3[i], g, who) for who, gs in grades.items() for i, g in enumerate(gs) if g is not None]
    rows.append(("m", "r1", "lonely", 2, "a"))  # graded by one annotator: shared by none
    result = agreement(judgments(*rows))
    expected = krippendorff.alpha(
        reliability_data=[[0, 1, 2, 3], [0, 1, 3, 3], [1, 1, 2, np.nan]], level_of_measurement="ordinal"
    )
    assert result.method == "krippendorff_alpha (ordinal)" and result.n_items == 4
    assert result.value == pytest.approx(expected)
    assert agreement(judgments(("m", "r1", "scam", 1, "a"))).method == "none"


def test_export_qrels_and_tidy_ground_truth():
    ds = section3()
    kept, _ = checked(judgments(("m", "r1", "family", 3, "a"), ("m", "r1", "scam", 0, "a")), ds, "j")
    evaluation, judged = judged_evaluation(ds, kept, keywords=True)
    lines = trec_qrels(evaluation)
    assert [line.split()[2].split(":")[1] for line in lines] == ["fraud", "family", "poverty"]
    assert [int(line.split()[3]) for line in lines] == [GRADE_SCALE, GRADE_SCALE, round(GRADE_SCALE / math.log2(3))]
    tidy = judged_ground_truth_table(judged)
    r1 = tidy[tidy["review_id"] == "r1"]
    assert r1["source"].tolist() == ["reference", "judged", "reference"]
    assert r1["judged_grade"].tolist()[1] == 3 and pd.isna(r1["judged_grade"].tolist()[0])


def test_judged_ground_truth_keeps_unjudged_lists_as_they_are(demo_dataset):
    g = judged_ground_truth(demo_dataset, judgments())
    assert len(g.table) == len(evaluate(demo_dataset).ground_truth) and g.n_used == 0
    assert (g.table["source"] == "reference").all()


def test_confirming_gt_keywords_changes_no_number(demo_dataset):
    """A GT keyword graded ≥ 1 keeps its rank's gain: G' is G, so every judged number is the reference one."""
    gt = evaluate(demo_dataset).ground_truth
    rows = [(m, None, k, 1 + i % 3, "ann") for i, (m, k) in enumerate(zip(gt["movie"], gt["keyword"]))]
    kept, problems = checked(judgments(*rows), demo_dataset, "j")
    assert problems == [] and len(kept) == len(gt)
    judged, ground_truth = judged_evaluation(demo_dataset, kept)
    reference = evaluate(demo_dataset).scores
    metrics = [c for c in reference.columns if c not in ("movie", "review_id", "model")]
    pd.testing.assert_frame_equal(reference[metrics], judged.scores[metrics], check_exact=False, rtol=1e-12)
    assert ground_truth.n_used == len(gt)
