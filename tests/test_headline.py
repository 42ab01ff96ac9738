"""The headline, the verdict matrix and statistics that agree with themselves (issue 23, items 3-4)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest

from kweval.data.vocabulary import MOVIE_WORDS
from kweval.evaluation.aggregate import ALL, aggregate
from kweval.evaluation.pipeline import EvalOptions, evaluate
from kweval.stats import verdict
from kweval.stats.aggregated import BASIS_MEANS, BASIS_MICRO, aggregated_difference, compare_aggregated
from kweval.stats.headline import headline, key_metrics
from kweval.stats.numbers import decimals_for, format_interval, format_level, format_number
from kweval.stats.paired import holm, holm_levels, paired_comparison


def test_numbers_never_read_zero_for_a_non_zero_value():
    for value in (0.00031, 0.0049, -0.00004, 1.2e-7, 0.4408, 0.0005):
        assert float(format_number(value)) != 0.0
    d, lo, hi = 0.0031, 0.0012, 0.0050
    places = decimals_for([d, lo, hi])
    assert format_number(d, places) == "0.0031" and format_interval(lo, hi, places, "–") == "0.0012–0.0050"
    assert format_interval(-0.0019, 0.0098, 4, "–") == "-0.0019 to 0.0098"
    assert format_level(0.95) == "95%" and format_level(1 - 0.05 / 3) == "98.3%"


def test_holm_levels_follow_the_step_down():
    p = np.array([0.04, 0.001, np.nan, 0.02])
    levels = holm_levels(p)
    assert levels[1] == pytest.approx(1 - 0.05 / 3) and levels[3] == pytest.approx(1 - 0.05 / 2)
    assert levels[0] == pytest.approx(0.95) and np.isnan(levels[2])


def _moderate_effect(n: int = 200, seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame, list[str]]:
    """Six metrics: five without an effect, one ("x") with a moderate one (raw p ≈ 0.01-0.05)."""
    rng = np.random.default_rng(seed)
    metrics = ["f1", "rr", "precision", "recall", "w_f1", "x"]
    a = pd.DataFrame({m: rng.uniform(0, 1, n) for m in metrics})
    b = a + rng.normal(0, 0.3, (n, len(metrics)))
    b["x"] = a["x"] + rng.normal(0.07, 0.3, n)
    return a, b, metrics


def test_the_issue_inconsistency_cannot_recur():
    """The issue: "No significant difference … 0.067 [0.020, 0.120], p = 0.202 (Holm)": an unadjusted CI beside a
    Holm p.  Now the interval beside the Holm p is at Holm's level, and a disagreement is said."""
    issue_row = {
        "metric": "f1",
        "n": 100,
        "mean_a": 0.4,
        "mean_b": 0.467,
        "diff": 0.067,
        "ci_low": 0.020,
        "ci_high": 0.120,
        "p_randomization_holm": 0.202,
    }
    said = verdict.verdict(issue_row, "a", "b")
    assert "0.067 [0.020, 0.120]" in said and "unadjusted" in said  # an old table: the page says why
    a, b, metrics = _moderate_effect()
    comp = paired_comparison(a, b, metrics, n_boot=2000, n_perm=5000)
    x = comp.set_index("metric").loc["x"]
    assert x["p_randomization"] < 0.05 <= x["p_randomization_holm"]  # the issue's situation
    assert x["ci_low"] > 0  # its unadjusted interval excludes 0 ...
    assert x["ci_level_holm"] > 0.95 and x["ci_low_holm"] < x["ci_low"]  # ... the Holm-level one is wider
    for row in comp.to_dict("records"):
        said = verdict.verdict(row, "A", "B")
        significant = row["p_randomization_holm"] < 0.05
        excludes = row["ci_low_holm"] > 0 or row["ci_high_holm"] < 0
        _d, lo, hi = verdict.b_minus_a(row, holm=True)
        shown = [f"[{x:.{places}f}, {y:.{places}f}]" for x, y in ((lo, hi), (-hi, -lo)) for places in (3, 4)]
        assert any(s in said for s in shown) and "CI, Holm)" in said  # the Holm interval is the one shown
        if significant != excludes:
            assert verdict.disagreement(row) and verdict.disagreement(row) in said


def test_verdict_matrix_says_who_wins():
    a, b, metrics = _moderate_effect()
    b["f1"] = a["f1"] + 0.2  # B clearly better on F1
    b["rr"] = a["rr"] - 0.2  # clearly worse on RR
    comp = paired_comparison(a, b, metrics, n_boot=500, n_perm=2000).assign(model="B")
    table = verdict.verdict_table(comp, "A")
    matrix = verdict.verdict_matrix(table)
    assert matrix.shape == (1, len(metrics)) and matrix.index.tolist() == ["B"]
    assert matrix.loc["B", "F1"] == "B ✓" and matrix.loc["B", "Reciprocal rank"] == "A ✓"
    outcomes = verdict.verdict_matrix(table, "outcome")
    assert outcomes.loc["B", "F1"] == verdict.WIN and outcomes.loc["B", "Reciprocal rank"] == verdict.LOSS
    assert set(outcomes.to_numpy().ravel()) <= set(verdict.OUTCOMES)


def test_micro_comparison_is_the_ratio_of_sums_with_an_exact_test():
    """Six reviews: every one of the 2**6 swap sets enumerated by hand gives the same p."""
    a = pd.DataFrame({"precision": [0.5, 0.0, 1.0, 0.2, 0.5, 0.0], "n_matched": [1, 0, 2, 1, 1, 0]})
    a["n_pred"] = [2, 3, 2, 5, 2, 4]
    b = pd.DataFrame({"n_matched": [2, 1, 2, 2, 1, 1], "n_pred": [2, 3, 2, 5, 3, 2]})
    b["precision"] = b["n_matched"] / b["n_pred"]
    value_a, value_b, draws, p = aggregated_difference(a, b, "precision", "micro", n_boot=200, n_perm=10000)
    assert value_a == pytest.approx(5 / 18) and value_b == pytest.approx(9 / 17)
    ma, pa, mb, pb = (np.array(x, dtype=float) for x in (a["n_matched"], a["n_pred"], b["n_matched"], b["n_pred"]))
    observed = value_b - value_a
    extreme = 0
    for swap in itertools.product([0, 1], repeat=6):
        s = np.array(swap, dtype=bool)
        ra = np.where(s, mb, ma).sum() / np.where(s, pb, pa).sum()
        rb = np.where(s, ma, mb).sum() / np.where(s, pa, pb).sum()
        extreme += abs(rb - ra) >= abs(observed) - 1e-12
    assert p == pytest.approx(extreme / 64) and len(draws) == 200


def test_compare_honours_micro(demo_dataset):
    ev = evaluate(demo_dataset.subset(models=["keybert", "keybert_vader"]), EvalOptions())  # both on all 180 reviews
    models = ["keybert", "keybert_vader"]
    metrics = ["precision", "f1", "ndcg@5"]
    comp = compare_aggregated(ev.scores, models[0], models[1], metrics, "micro", n_boot=300, n_perm=1000)
    assert comp["basis"].tolist() == [BASIS_MICRO, BASIS_MICRO, BASIS_MEANS]
    summary = aggregate(ev, "micro").set_index(["movie", "model"])
    for metric in ("precision", "f1"):
        row = comp.set_index("metric").loc[metric]
        expected = summary.loc[(ALL, models[1]), metric] - summary.loc[(ALL, models[0]), metric]
        assert row["diff"] == pytest.approx(expected)  # the summary's own numbers, not per-review means
        assert row["ci_low"] <= row["diff"] <= row["ci_high"]
    # Holm within each family: precision and F1 together (set-based), nDCG@5 alone (ranking)
    assert comp["family"].tolist() == ["set", "set", "ranking"]
    p = comp["p_randomization"].to_numpy()
    assert comp["p_randomization_holm"].tolist() == pytest.approx([*holm(p[:2]), *holm(p[2:])])
    macro = compare_aggregated(ev.scores, models[0], models[1], metrics, "macro", n_boot=300, n_perm=1000)
    assert set(macro["basis"]) == {BASIS_MEANS}


@pytest.mark.parametrize("how", ["macro", "micro"])
def test_headline_on_the_demo(demo_dataset, how):
    ev = evaluate(demo_dataset, EvalOptions())
    with_yake = headline(ev.scores, ["f1"], how, n_boot=200, n_perm=500).iloc[0]
    shared = 179 if "yake" in (with_yake["best"], with_yake["runner_up"]) else 180  # yake skipped one review
    assert with_yake["n"] == shared and with_yake["sentence"].startswith(f"On {shared} reviews")
    ev = evaluate(demo_dataset.subset(models=["keybert", "keybert_vader"]), EvalOptions())
    metrics = key_metrics(ev.scores.columns, 5)
    assert metrics == ["f1", "ndcg@5", "w_f1"]
    table = headline(ev.scores, metrics, how, MOVIE_WORDS, n_boot=500, n_perm=2000)
    summary = aggregate(ev, how)
    all_rows = summary[summary["movie"] == ALL].set_index("model")
    assert table["metric"].tolist() == metrics
    for row in table.to_dict("records"):
        ranked = all_rows[row["metric"]].sort_values(ascending=False)
        assert row["best"] == ranked.index[0] and row["runner_up"] == ranked.index[1]
        assert row["best_value"] == pytest.approx(ranked.iloc[0])
        assert row["margin"] == pytest.approx(ranked.iloc[0] - ranked.iloc[1])
        assert row["ci_low"] <= row["margin"] <= row["ci_high"]
        assert row["sentence"].startswith(f"On 180 reviews, {row['best']} leads on ")
        assert ("not significant" in row["sentence"]) == (not row["significant"])
        assert "0.000 " not in row["sentence"] and "0.000)" not in row["sentence"]
    # Holm within the families of the metrics compared: F1 and weighted F1 together, nDCG@5 alone
    assert table["family"].tolist() == ["set-based and weighted", "ranking (cut off at k)", "set-based and weighted"]
    assert table["p_holm"].tolist() == pytest.approx(
        [*holm(table["p"][[0, 2]])[:1], table["p"][1], holm(table["p"][[0, 2]])[1]]
    )
    assert not math.isnan(table["ci_level"].iloc[0])


def test_per_movie_comparison_adjusts_its_intervals_across_movies(demo_dataset):
    """The Compare page's per-movie table: Holm across the movies, and each interval at its Holm level."""
    from kweval.stats.aggregated import compare_groups
    from kweval.stats.paired import paired_randomization_test

    ev = evaluate(demo_dataset.subset(models=["keybert", "yake"]), EvalOptions())
    table = compare_groups(ev.scores, "yake", "keybert", "f1", "micro", n_boot=300, n_perm=2000)
    assert table["movie"].tolist() == demo_dataset.movie_ids and set(table["basis"]) == {BASIS_MICRO}
    assert table["p_randomization_holm"].tolist() == pytest.approx(holm(table["p_randomization"]).tolist())
    assert (table["ci_level_holm"] >= 0.95 - 1e-12).all()
    assert (
        (table["ci_low_holm"] <= table["ci_low"] + 1e-12) & (table["ci_high_holm"] >= table["ci_high"] - 1e-12)
    ).all()
    summary = aggregate(ev, "micro").set_index(["movie", "model"])
    movie = demo_dataset.movie_ids[0]
    full = table[table["n"] == 30]  # the movies where yake skipped no review: the values are the summary's
    assert len(full) == 5
    for row in full.to_dict("records"):
        assert row["mean_b"] == pytest.approx(summary.loc[(row["movie"], "keybert"), "f1"])
        assert row["mean_a"] == pytest.approx(summary.loc[(row["movie"], "yake"), "f1"])
    macro = compare_groups(ev.scores, "yake", "keybert", "ndcg@5", "macro", n_boot=300, n_perm=2000)
    scores = ev.scores[ev.scores["movie"] == movie]
    a = scores[scores["model"] == "yake"].set_index("review_id")["ndcg@5"]
    b = scores[scores["model"] == "keybert"].set_index("review_id")["ndcg@5"].reindex(a.index)
    assert macro.set_index("movie").loc[movie, "diff"] == pytest.approx((b - a).mean())
    assert macro.set_index("movie").loc[movie, "p_randomization"] == pytest.approx(
        paired_randomization_test(a.to_numpy(), b.to_numpy(), n_perm=2000), abs=0.05
    )


def test_remembered_comparisons_equal_the_computation():
    """Speed trick "remembered comparisons": the same values again give the computation's result (read-only draws);
    other values, another metric or another aggregation are computed, not read from the memo."""
    from kweval.stats import aggregated

    rng = np.random.default_rng(5)
    a = pd.DataFrame({"f1": rng.random(40), "n_pred": 5.0, "n_matched": rng.integers(0, 5, 40).astype(float)})
    b = a.assign(f1=a["f1"] + rng.normal(0.05, 0.1, 40))
    aggregated._REMEMBERED.clear()
    first = aggregated_difference(a, b, "f1", "macro", n_boot=300, n_perm=500)
    assert len(aggregated._REMEMBERED) == 1
    again = aggregated_difference(a.copy(), b.copy(), "f1", "macro", n_boot=300, n_perm=500)
    assert len(aggregated._REMEMBERED) == 1 and again[2] is first[2] and not again[2].flags.writeable
    aggregated._REMEMBERED.clear()
    fresh = aggregated_difference(a, b, "f1", "macro", n_boot=300, n_perm=500)
    assert fresh[:2] == first[:2] and fresh[3] == first[3] and np.array_equal(fresh[2], first[2])
    other = aggregated_difference(a, b.assign(f1=b["f1"] + 0.01), "f1", "macro", n_boot=300, n_perm=500)
    assert other[1] == pytest.approx(first[1] + 0.01) and len(aggregated._REMEMBERED) == 2
    aggregated_difference(a, b, "f1", "macro", n_boot=300, n_perm=400)  # another n_perm: computed
    assert len(aggregated._REMEMBERED) == 3


def _coded_keys_cases():
    from tests.apptest import DNLP

    yield pytest.param("demo", None, id="demo")
    yield pytest.param("per-document", "edge", id="per-document")
    yield pytest.param("dnlp", str(DNLP), id="dnlp", marks=pytest.mark.dnlp)


@pytest.mark.parametrize(("name", "source"), list(_coded_keys_cases()))
def test_coded_keys_give_the_headline_of_the_rows_themselves(name, source, tmp_path, monkeypatch):
    """Speed trick "coded keys" (`headline.coded_keys`): the comparisons read movie and review_id as integer codes
    and model as categories; the headline equals the one of the rows themselves, macro and micro, on the demo, a
    per-document collection and DNLP (ids repeated across movies included: the codes keep each column's equalities)."""
    import kweval.stats.headline as module
    from kweval.data import load_dataset
    from tests.helpers import edge_collection

    if source == "edge":
        source = str(edge_collection(tmp_path / "edge"))
    scores = evaluate(load_dataset(source), EvalOptions()).scores
    coded = module.coded_keys(scores)
    assert coded["movie"].dtype.kind == coded["review_id"].dtype.kind == "i"
    assert coded.groupby(["movie", "review_id"]).ngroups == scores.groupby(["movie", "review_id"]).ngroups
    keys = key_metrics(list(scores.columns), 5)
    for how in ("macro", "micro"):
        fast = headline(scores, keys, how)
        monkeypatch.setattr(module, "coded_keys", lambda frame: frame)
        pd.testing.assert_frame_equal(fast, headline(scores, keys, how))
        monkeypatch.undo()
        assert len(fast) >= 2, name
