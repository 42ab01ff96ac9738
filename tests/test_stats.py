"""kweval.stats.paired against scipy and hand-computed values."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sp

from kweval import stats


def _rng(seed=1):
    return np.random.default_rng(seed)


def test_bootstrap_ci_matches_scipy_percentile():
    x = _rng().beta(2, 5, size=300)
    mean, lo, hi = stats.bootstrap_ci(x, n_boot=4000, seed=3)
    ref = sp.bootstrap((x,), np.mean, n_resamples=4000, method="percentile", random_state=3).confidence_interval
    assert mean == pytest.approx(x.mean())
    # different resamples: agree to Monte Carlo precision (se of the mean ≈ 0.009 here)
    assert lo == pytest.approx(ref.low, abs=3e-3)
    assert hi == pytest.approx(ref.high, abs=3e-3)
    # and the normal-theory interval is close too
    se = x.std(ddof=1) / np.sqrt(len(x))
    assert lo == pytest.approx(x.mean() - 1.96 * se, abs=4e-3)
    assert hi == pytest.approx(x.mean() + 1.96 * se, abs=4e-3)


def test_bootstrap_is_seeded_and_columnwise():
    x = _rng(2).normal(size=(50, 3))
    a = stats.bootstrap_ci(x, n_boot=500, seed=7)
    b = stats.bootstrap_ci(x, n_boot=500, seed=7)
    for u, v in zip(a, b):
        np.testing.assert_array_equal(u, v)
    # a column on its own gets the same interval as inside the matrix (same resamples)
    single = stats.bootstrap_ci(x[:, 1], n_boot=500, seed=7)
    assert single[1] == pytest.approx(a[1][1])
    assert single[2] == pytest.approx(a[2][1])
    assert np.all(a[1] <= a[0]) and np.all(a[0] <= a[2])


def test_bootstrap_constant_and_chunking(monkeypatch):
    mean, lo, hi = stats.bootstrap_ci([0.5] * 10, n_boot=100)
    assert (mean, lo, hi) == (0.5, 0.5, 0.5)
    x = _rng(3).random(40)
    whole = stats.bootstrap_ci(x, n_boot=300, seed=1)
    from kweval.stats import bootstrap

    monkeypatch.setattr(bootstrap, "_CHUNK_CELLS", 40 * 7)  # chunks of 7 resamples
    chunked = stats.bootstrap_ci(x, n_boot=300, seed=1)
    assert whole == pytest.approx(chunked)
    with pytest.raises(ValueError):
        stats.bootstrap_ci([1.0, np.nan])


def test_bootstrap_ratio():
    """A micro ratio's CI (reviews resampled, Σ num / Σ den per resample), as the summary's CIs compute it."""
    num = np.array([1, 0, 2, 3, 1.0])
    den = np.array([5, 5, 5, 5, 5.0])
    scores = pd.DataFrame({"precision": num / den, "n_matched": num, "n_pred": den})
    ci = stats.bootstrap_summary_ci(scores, ["precision"], "micro", n_boot=1000).iloc[0]
    point, lo, hi = ci["value"], ci["ci_low"], ci["ci_high"]
    assert point == pytest.approx(7 / 25)
    assert 0 <= lo <= point <= hi <= 3 / 5
    # equal denominators: the ratio of sums is the mean of num/den, so the intervals coincide
    m2 = stats.bootstrap_ci(num / den, n_boot=1000)
    assert (lo, hi) == pytest.approx(m2[1:])


def test_paired_bootstrap_is_bootstrap_of_differences():
    a = _rng(4).random(60)
    b = a - 0.1 + _rng(5).normal(scale=0.05, size=60)
    diff, lo, hi = stats.paired_bootstrap_ci(a, b, n_boot=2000)
    assert diff == pytest.approx(np.mean(b - a))  # B − A
    assert lo < diff < hi
    assert hi < 0  # B is clearly worse


def test_randomization_exact_equals_scipy():
    a = np.array([0.9, 0.4, 0.7, 0.3, 0.8, 0.65, 0.2, 0.55])
    b = np.array([0.5, 0.45, 0.6, 0.1, 0.7, 0.6, 0.3, 0.2])
    p = stats.paired_randomization_test(a, b, n_perm=10_000)
    ref = sp.permutation_test(
        (a, b),
        lambda x, y, axis: np.mean(x - y, axis=axis),
        permutation_type="samples",
        alternative="two-sided",
        n_resamples=10_000,
    ).pvalue
    assert p == pytest.approx(ref, abs=1e-12)
    # hand check: 2**8 sign vectors, count |mean| >= observed
    d = a - b
    signs = np.array([[1 - 2 * ((c >> i) & 1) for i in range(8)] for c in range(256)])
    assert p == pytest.approx(np.mean(np.abs(signs @ d) >= abs(d.sum()) - 1e-12))


def test_randomization_monte_carlo_agrees_with_scipy_on_every_column():
    rng = _rng(11)
    a = rng.random((300, 3))
    b = a + np.c_[rng.normal(0.02, 0.2, 300), rng.normal(0, 0.2, 300), rng.normal(0.08, 0.2, 300)]
    p = stats.paired_randomization_test(a, b, n_perm=4000, seed=3)
    ref = sp.permutation_test(
        (b - a,),
        lambda d, axis: np.mean(d, axis=axis),
        permutation_type="samples",
        n_resamples=4000,
        vectorized=True,
        axis=0,
        random_state=3,
    ).pvalue
    np.testing.assert_allclose(p, ref, atol=0.03)  # different random sign vectors, the same test
    assert p[2] < 0.001 and p[1] > 0.01


def test_randomization_known_values_and_monte_carlo():
    # one review, difference 1: the two sign vectors are equally extreme
    assert stats.paired_randomization_test([1.0], [0.0]) == 1.0
    # three equal positive differences: only all-plus and all-minus are as extreme: 2/8
    assert stats.paired_randomization_test([1, 1, 1.0], [0, 0, 0.0]) == pytest.approx(0.25)
    assert stats.paired_randomization_test([0.3, 0.3], [0.3, 0.3]) == 1.0
    rng = _rng(6)
    a = rng.random(200)
    b = a - 0.2 * rng.random(200)
    p = stats.paired_randomization_test(a, b, n_perm=2000, seed=1)
    assert p == pytest.approx(1 / 2001)  # nothing as extreme: the +1 correction
    a = rng.random(200)
    b = rng.random(200)
    p_mc = stats.paired_randomization_test(a, b, n_perm=5000, seed=2)
    p_t = sp.ttest_rel(a, b).pvalue
    assert p_mc == pytest.approx(p_t, abs=0.03)  # large n: the two tests agree
    cols = stats.paired_randomization_test(np.c_[a, a], np.c_[b, a], n_perm=5000, seed=2)
    assert cols[0] == pytest.approx(p_mc) and cols[1] == 1.0


def test_t_test_is_scipy():
    rng = _rng(7)
    a, b = rng.random(30), rng.random(30)
    assert stats.paired_t_test(a, b) == pytest.approx(sp.ttest_rel(a, b).pvalue)
    assert stats.paired_t_test([0.2, 0.4], [0.2, 0.4]) == 1.0
    both = stats.paired_t_test(np.c_[a, b], np.c_[b, b])
    assert both[0] == pytest.approx(sp.ttest_rel(a, b).pvalue) and both[1] == 1.0


@pytest.mark.parametrize("n", [2, 3, 17, 400, 9362])
def test_t_test_from_stdtr_equals_ttest_rel_column_by_column(n):
    """The speed trick "t-test from the t distribution alone" against its reference, scipy.stats.ttest_rel: every
    column of a 2-D input, small and large samples, tiny and large effects, constant differences (t = ±inf)."""
    rng = _rng(n)
    a = rng.random((n, 6))
    b = a + rng.normal(0, 0.1, (n, 6)) + np.array([0.0, 1e-3, 0.05, -0.2, 0.0, 0.0])
    b[:, 4] = a[:, 4] + 0.25  # a constant difference
    b[:, 5] = a[:, 5]  # no difference: p = 1 by definition
    mine = stats.paired_t_test(a, b)
    with np.errstate(invalid="ignore", divide="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # scipy warns about the constant columns
        reference = sp.ttest_rel(a, b, axis=0).pvalue
    reference[5] = 1.0
    np.testing.assert_allclose(mine, reference, rtol=1e-9, atol=1e-300)
    assert stats.paired_t_test(a[:, 0], b[:, 0]) == pytest.approx(float(reference[0]), rel=1e-9)
    assert np.isnan(stats.paired_t_test(a[:1, 0], b[:1, 0]))


def test_holm_known_values():
    # sorted 0.005, 0.01, 0.03, 0.04 → ×4, ×3, ×2, ×1 = 0.02, 0.03, 0.06, 0.04 → monotone: 0.02, 0.03, 0.06, 0.06
    np.testing.assert_allclose(stats.holm([0.01, 0.04, 0.03, 0.005]), [0.03, 0.06, 0.06, 0.02])
    np.testing.assert_allclose(stats.holm([0.5, 0.9]), [1.0, 1.0])
    out = stats.holm([0.01, np.nan, 0.02])
    assert np.isnan(out[1])
    np.testing.assert_allclose(out[[0, 2]], [0.02, 0.02])
    assert stats.holm([]).shape == (0,)


def test_win_tie_loss():
    # from B's side: B wins where b > a
    assert stats.win_tie_loss([0.5, 0.5, 0.4, 0.3], [1, 0.5, 0.2, 0.3]) == (1, 2, 1)
    wins, ties, losses = stats.win_tie_loss(np.c_[[0, 0.0], [1, 0.0]], np.c_[[1, 0.0], [0, 0.0]])
    assert list(wins) == [1, 0] and list(ties) == [1, 1] and list(losses) == [0, 1]


def test_paired_comparison_table():
    rng = _rng(8)
    a = pd.DataFrame({"ndcg@5": rng.random(80), "recall": rng.random(80)})
    b = pd.DataFrame({"ndcg@5": a["ndcg@5"] - 0.2, "recall": rng.random(80)})
    out = stats.paired_comparison(a, b, ["ndcg@5", "recall"], n_boot=500, n_perm=2000)
    row = out.set_index("metric").loc["ndcg@5"]
    assert row["diff"] == pytest.approx(-0.2)  # B − A: B is 0.2 lower
    assert row["ci_low"] == pytest.approx(-0.2) and row["ci_high"] == pytest.approx(-0.2)
    assert row["mean_b"] - row["mean_a"] == pytest.approx(row["diff"])
    assert row["wins"] == 0 and row["ties"] == 0 and row["losses"] == 80  # B loses on every review
    assert row["p_ttest"] < 1e-10
    np.testing.assert_allclose(out["p_ttest_holm"], stats.holm(out["p_ttest"]))
    assert (out["p_randomization_holm"] >= out["p_randomization"]).all()
    # the same columns handed as arrays (as `compare_models` hands them): the same table; a column short, an error
    names = ["recall", "ndcg@5"]
    as_arrays = stats.paired_comparison(a[names].to_numpy(), b[names].to_numpy(), names, n_boot=500, n_perm=2000)
    pd.testing.assert_frame_equal(as_arrays, stats.paired_comparison(a, b, names, n_boot=500, n_perm=2000))
    with pytest.raises(ValueError, match="one column per metric"):
        stats.paired_comparison(a.to_numpy(), b.to_numpy(), ["recall"])


def test_bootstrap_summary_ci_macro_and_micro():
    scores = pd.DataFrame(
        {
            "precision": [0.5, 0.0, 1.0],
            "recall": [0.25, 0.0, 0.5],
            "f1": [1 / 3, 0.0, 2 / 3],
            "ndcg@5": [0.7, 0.1, 0.9],
            "n_matched": [1, 0, 2],
            "n_pred": [2, 5, 2],
            "n_gt": [4, 4, 4],
        }
    )
    macro = stats.bootstrap_summary_ci(
        scores, ["precision", "f1", "ndcg@5", "gt_coverage"], "macro", n_boot=300
    ).set_index("metric")
    assert macro.loc["precision", "value"] == pytest.approx(0.5)
    assert macro.loc["ndcg@5", "value"] == pytest.approx(1.7 / 3)
    assert np.isnan(macro.loc["gt_coverage", "value"])
    micro = stats.bootstrap_summary_ci(scores, ["precision", "recall", "f1", "ndcg@5"], "micro", n_boot=300).set_index(
        "metric"
    )
    p, r = 3 / 9, 3 / 12
    assert micro.loc["precision", "value"] == pytest.approx(p)
    assert micro.loc["recall", "value"] == pytest.approx(r)
    assert micro.loc["f1", "value"] == pytest.approx(2 * p * r / (p + r))
    assert micro.loc["ndcg@5", "value"] == pytest.approx(1.7 / 3)
    for _, row in micro.iterrows():
        assert row["ci_low"] <= row["value"] + 1e-12 and row["value"] <= row["ci_high"] + 1e-12


def test_paired_comparison_drops_nan_pairs_per_metric():
    """sas_* are NaN for reviews without text / without keywords: those pairs are left out of that metric only."""
    rng = _rng(7)
    a = pd.DataFrame({"x": rng.random(40), "sas_text": rng.random(40)})
    b = pd.DataFrame({"x": rng.random(40), "sas_text": rng.random(40)})
    a.loc[[3, 10], "sas_text"] = np.nan
    b.loc[[10, 25], "sas_text"] = np.nan
    res = stats.paired_comparison(a, b, ["x", "sas_text"]).set_index("metric")
    assert res.loc["x", "n"] == 40 and res.loc["sas_text", "n"] == 37
    keep = a["sas_text"].notna() & b["sas_text"].notna()
    alone = stats.paired_comparison(a[keep], b[keep], ["sas_text"]).set_index("metric")
    for col in (
        "mean_a",
        "mean_b",
        "diff",
        "ci_low",
        "ci_high",
        "p_randomization",
        "p_ttest",
        "wins",
        "ties",
        "losses",
    ):
        assert res.loc["sas_text", col] == pytest.approx(alone.loc["sas_text", col]), col
    # the complete metric is what it is without the other one
    x_only = stats.paired_comparison(a, b, ["x"]).set_index("metric")
    for col in ("diff", "ci_low", "ci_high", "p_randomization", "p_ttest"):
        assert res.loc["x", col] == pytest.approx(x_only.loc["x", col]), col
    assert res.loc["sas_text", "wins"] + res.loc["sas_text", "ties"] + res.loc["sas_text", "losses"] == 37
    # Holm across both metrics, on finite p-values
    np.testing.assert_allclose(res["p_ttest_holm"], stats.holm(res["p_ttest"].to_numpy()))
    assert np.isfinite(res[["diff", "ci_low", "ci_high", "p_randomization_holm", "p_ttest_holm"]].to_numpy()).all()
    # a metric without any complete pair: NaN, n = 0, not counted by Holm
    a["none"] = np.nan
    b["none"] = 1.0
    res = stats.paired_comparison(a, b, ["x", "none"]).set_index("metric")
    assert res.loc["none", "n"] == 0 and np.isnan(res.loc["none", "diff"]) and np.isnan(res.loc["none", "p_ttest_holm"])
    assert res.loc["x", "p_ttest_holm"] == pytest.approx(res.loc["x", "p_ttest"])


def test_bootstrap_summary_ci_skips_nan_like_aggregate():
    rng = _rng(8)
    scores = pd.DataFrame({"f1": rng.random(60), "sas_text": rng.random(60), "sas_keywords": np.nan})
    scores.loc[[0, 5, 9], "sas_text"] = np.nan
    res = stats.bootstrap_summary_ci(scores, ["f1", "sas_text", "sas_keywords"], "macro").set_index("metric")
    assert res.loc["sas_text", "value"] == pytest.approx(scores["sas_text"].mean())  # pandas mean skips NaN
    assert res.loc["sas_text", "ci_low"] < res.loc["sas_text", "value"] < res.loc["sas_text", "ci_high"]
    assert res[["value", "ci_low", "ci_high"]].loc["sas_keywords"].isna().all()  # defined nowhere
    # the same resamples serve every column: f1's CI is the one computed without the NaN columns
    alone = stats.bootstrap_summary_ci(scores, ["f1"], "macro").set_index("metric")
    assert res.loc["f1", ["value", "ci_low", "ci_high"]].tolist() == pytest.approx(
        alone.loc["f1", ["value", "ci_low", "ci_high"]].tolist()
    )
    # and the interval is close to a plain bootstrap of the defined values
    _, lo, hi = stats.bootstrap_ci(scores["sas_text"].dropna().to_numpy(), n_boot=2000)
    assert res.loc["sas_text", "ci_low"] == pytest.approx(lo, abs=0.02) and res.loc[
        "sas_text", "ci_high"
    ] == pytest.approx(hi, abs=0.02)


@pytest.mark.parametrize("how", ["macro", "micro"])
def test_grouped_summary_cis_equal_one_call_per_group(how):
    """The speed trick "one product per size" (`bootstrap_summary_cis`) against its reference, one
    `bootstrap_summary_ci` per group: groups of one size resampled together, another size apart, NaN skipped."""
    rng = _rng(11)

    def group(n: int) -> pd.DataFrame:
        frame = pd.DataFrame(
            {
                "n_matched": rng.integers(0, 4, n),
                "n_pred": rng.integers(4, 8, n),
                "n_gt": rng.integers(4, 9, n),
                "ndcg@5": rng.random(n),
                "sas_text": rng.random(n),
            }
        )
        frame["precision"] = frame["n_matched"] / frame["n_pred"]
        frame["recall"] = frame["n_matched"] / frame["n_gt"]
        frame["f1"] = (
            2
            * frame["precision"]
            * frame["recall"]
            / (frame["precision"] + frame["recall"]).where(frame["n_matched"] > 0, 1.0)
        )
        frame.loc[frame.index[:3], "sas_text"] = np.nan
        return frame

    groups = {"a": group(50), "b": group(50), "c": group(31), "empty": group(0)}
    metrics = ["precision", "recall", "f1", "ndcg@5", "sas_text", "gt_coverage", "absent"]
    together = stats.bootstrap_summary_cis(groups, metrics, how, n_boot=400)
    assert together["group"].tolist() == [g for g in groups for _ in metrics]
    for name, rows in groups.items():
        alone = stats.bootstrap_summary_ci(rows, metrics, how, n_boot=400)
        mine = together[together["group"] == name].drop(columns="group").reset_index(drop=True)
        assert mine["metric"].tolist() == metrics
        np.testing.assert_allclose(
            mine[["value", "ci_low", "ci_high"]], alone[["value", "ci_low", "ci_high"]], rtol=1e-12, atol=1e-15
        )
    assert together[together["group"] == "empty"][["value", "ci_low", "ci_high"]].isna().all().all()


def test_compare_models_pairs_reviews_and_reports_b_minus_a():
    scores = pd.DataFrame(
        {
            "movie": ["m1", "m1", "m1", "m2", "m1", "m1", "m2", "m2"],
            "review_id": ["r1", "r2", "r3", "r1", "r1", "r2", "r1", "r9"],
            "model": ["A", "A", "A", "A", "B", "B", "B", "B"],
            "f1": [0.2, 0.4, 0.9, 0.5, 0.6, 0.4, 0.8, 1.0],
        }
    )
    both = stats.paired_scores(scores, "A", "B", ["f1"], "f1")
    assert list(zip(both["movie"], both["review_id"])) == [
        ("m1", "r1"),
        ("m1", "r2"),
        ("m2", "r1"),
    ]  # r3 and r9 unpaired
    assert both["difference"].tolist() == pytest.approx([0.4, 0.0, 0.3])
    res = stats.compare_models(scores, "A", "B", ["f1"], n_boot=200).set_index("metric").loc["f1"]
    assert res["n"] == 3 and res["diff"] == pytest.approx(0.7 / 3)
    assert (res["wins"], res["ties"], res["losses"]) == (2, 1, 0)
    swapped = stats.compare_models(scores, "B", "A", ["f1"], n_boot=200).set_index("metric").loc["f1"]
    assert swapped["diff"] == pytest.approx(-res["diff"]) and swapped["losses"] == 2
    assert swapped["p_randomization"] == pytest.approx(res["p_randomization"])


def _paired_frames(seed: int, n: int = 400):
    rng = _rng(seed)
    metrics = [f"m{i}" for i in range(6)]
    a = pd.DataFrame(rng.integers(0, 6, (n, 6)) / 5.0, columns=metrics)
    b = pd.DataFrame(rng.integers(0, 6, (n, 6)) / 5.0, columns=metrics)
    a.loc[:9, "m2"] = np.nan  # one metric undefined on some reviews: compared on its own rows
    return a, b, metrics


def test_remembered_comparisons_per_metric_equal_the_computation():
    """Speed trick "remembered comparisons" per metric (`paired.remembered_columns`): the same values again, a
    subset of the metrics, the reverse pair (B against A, mirrored) and other settings give what the computation
    gives with nothing remembered; the draws kept are read-only."""
    from kweval.stats import paired

    a, b, metrics = _paired_frames(4)
    families = ["x", "x", "y", "y", "z", "z"]

    def fresh(*args, **kwargs):
        paired._COLUMNS.clear()
        return stats.paired_comparison(*args, n_boot=300, n_perm=999, **kwargs)

    first = fresh(a, b, metrics, families=families)
    assert len(paired._COLUMNS) == len(metrics)
    again = stats.paired_comparison(a, b, metrics, n_boot=300, n_perm=999, families=families)
    pd.testing.assert_frame_equal(again, first, check_exact=True)
    assert len(paired._COLUMNS) == len(metrics)  # read back, none computed
    reverse = stats.paired_comparison(b, a, metrics, n_boot=300, n_perm=999, families=families)
    assert len(paired._COLUMNS) == len(metrics)  # the mirror image of the kept ones
    pd.testing.assert_frame_equal(reverse, fresh(b, a, metrics, families=families), check_exact=True)
    stats.paired_comparison(a, b, metrics, n_boot=300, n_perm=999)
    subset = stats.paired_comparison(a, b, ["m4", "m0"], n_boot=300, n_perm=999)
    pd.testing.assert_frame_equal(subset, fresh(a, b, ["m4", "m0"]), rtol=1e-12)
    stats.paired_comparison(a, b, metrics, n_boot=300, n_perm=499)  # other settings: computed, kept beside
    assert len(paired._COLUMNS) == 2 + len(metrics)
    kept = next(iter(paired._COLUMNS._items.values()))
    assert not kept.draws.flags.writeable
    paired._COLUMNS.clear()


def test_remembered_keeps_the_last_results_and_digests_values():
    from kweval.stats.remembered import Remembered, digest

    memo: Remembered[int] = Remembered(2)
    calls = []
    for key in ("a", "b", "a", "c", "b"):
        memo(key, lambda key=key: calls.append(key) or len(calls))
    assert calls == ["a", "b", "c", "b"]  # "a" read back; "b" dropped when "c" came (least recently used)
    x = np.arange(4.0)
    assert digest(x, 1) == digest(x.copy(), 1) != digest(x, 2)
    assert digest(x) != digest(x.astype("float32")) and digest(x) != digest(x.reshape(2, 2))


def test_pairs_together_equal_each_pair_alone():
    """Speed trick "pairs together" (`paired.remember_pairs`): several pairs' metrics compared in one pass, then read
    back by `compare_models`, equal each pair compared alone with nothing remembered (a metric undefined on some
    reviews is left to its own rows)."""
    from kweval.stats import paired

    rng = _rng(9)
    rows = []
    for model, shift in (("A", 0.0), ("B", 0.1), ("C", -0.05)):
        for r in range(300):
            rows.append({"movie": "m", "review_id": f"r{r}", "model": model, "f1": rng.integers(0, 6) / 5 + shift})
    scores = pd.DataFrame(rows)
    scores["ndcg@5"] = rng.random(len(scores))
    scores["sas_text"] = np.where(rng.random(len(scores)) < 0.1, np.nan, rng.random(len(scores)))
    metrics = ["f1", "ndcg@5", "sas_text"]
    pairs = {("A", "B"): metrics, ("A", "C"): metrics, ("C", "B"): ["ndcg@5"]}
    alone = {}
    for (a, b), names in pairs.items():
        paired._COLUMNS.clear()
        alone[(a, b)] = stats.compare_models(scores, a, b, names, n_boot=300, n_perm=999)
    paired._COLUMNS.clear()
    aligned = paired.remember_pairs(scores, pairs, n_boot=300, n_perm=999)
    assert len(paired._COLUMNS) == 2 + 2 + 1  # the complete metrics of every pair, computed together
    for (a, b), names in pairs.items():
        together = stats.compare_models(scores, a, b, names, n_boot=300, n_perm=999)
        pd.testing.assert_frame_equal(together, alone[(a, b)], rtol=1e-12)
        assert together["p_randomization"].tolist() == alone[(a, b)]["p_randomization"].tolist()
        # the values it returns are those of `paired_scores`' frame, and comparing on them changes no number
        frame = paired.paired_scores(scores, a, b, names)
        assert aligned[(a, b)].metrics == tuple(names)
        np.testing.assert_array_equal(aligned[(a, b)].a, frame[[f"{m}_a" for m in names]].to_numpy())
        np.testing.assert_array_equal(aligned[(a, b)].b, frame[[f"{m}_b" for m in names]].to_numpy())
        handed = stats.compare_models(scores, a, b, names, aligned[(a, b)], n_boot=300, n_perm=999)
        pd.testing.assert_frame_equal(handed, together, check_exact=True)
    paired._COLUMNS.clear()


def _keyed(rng, models: dict[str, list[tuple[str, str]]]) -> pd.DataFrame:
    """Rows of (movie, review_id) per model, in the order given, a random f1 each."""
    rows = [(movie, review, model) for model, keys in models.items() for movie, review in keys]
    frame = pd.DataFrame(rows, columns=["movie", "review_id", "model"])
    return frame.assign(f1=rng.random(len(frame)))


@pytest.mark.parametrize("case", ["same order", "shuffled", "missing", "twice", "coded"])
def test_pair_rows_pair_as_the_merge_does(case, monkeypatch):
    """Speed trick "same reviews, same order" (`aligned.pair_rows`): the rows it pairs are the merge's
    (`aligned.merged_rows`, the reference), whether or not the two models hold the same reviews in the same order,
    each once; and `paired_scores`' frame holds those rows' values."""
    from kweval.stats import aligned, paired
    from kweval.stats.headline import coded_keys

    rng = _rng(4)
    keys = [(f"m{i % 3}", f"r{i}") for i in range(40)]
    b_keys = {
        "same order": keys,
        "shuffled": [keys[i] for i in rng.permutation(len(keys))],
        "missing": keys[:10] + keys[15:],
        "twice": keys[:20] + [keys[3]] + keys[20:39],  # as many rows, not the same reviews: one of them twice
        "coded": keys,
    }[case]
    a_keys = keys if case != "twice" else keys[:39] + [keys[7]]
    scores = _keyed(rng, {"A": a_keys, "B": b_keys, "C": keys[::-1]})
    if case == "coded":
        scores = coded_keys(scores)
    for a, b in (("A", "B"), ("B", "A"), ("A", "C"), ("A", "nobody")):
        found, reference = aligned.pair_rows(scores, a, b), aligned.merged_rows(scores, a, b)
        np.testing.assert_array_equal(found[0], reference[0])
        np.testing.assert_array_equal(found[1], reference[1])
        frame = paired.paired_scores(scores, a, b, ["f1"])
        np.testing.assert_array_equal(frame["f1_a"].to_numpy(), scores["f1"].to_numpy()[found[0]])
        np.testing.assert_array_equal(frame["f1_b"].to_numpy(), scores["f1"].to_numpy()[found[1]])
    assert len(aligned.pair_rows(scores, "A", "B")[0]) == {"missing": 35, "twice": 41}.get(
        case, 40
    )  # twice: paired every way
    # the trick answers where it may (no merge), and only there
    merges, merge = [], aligned.merged_rows
    monkeypatch.setattr(aligned, "merged_rows", lambda *args: merges.append(args) or merge(*args))
    aligned.pair_rows(scores, "A", "B")
    assert (not merges) == (case in ("same order", "coded"))
