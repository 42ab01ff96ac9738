"""kweval.stats.verdict: the Compare page's significance column and one-sentence verdicts."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from kweval.stats import verdict
from kweval.stats.paired import paired_comparison


def _row(metric="ndcg@5", mean_a=0.40, mean_b=0.435, diff=None, lo=0.030, hi=0.040, p=0.0004, n=100):
    diff = mean_b - mean_a if diff is None else diff
    return {
        "metric": metric,
        "n": n,
        "mean_a": mean_a,
        "mean_b": mean_b,
        "diff": diff,
        "ci_low": lo,
        "ci_high": hi,
        "p_randomization_holm": p,
    }


def test_sentence_names_winner_metric_interval_and_p():
    assert (
        verdict.verdict(_row(), "base", "reranker")
        == "reranker beats base on nDCG@5 by 0.035 [0.030, 0.040], p < 0.001 (Holm)."
    )
    # A higher: the interval is turned into A's advantage
    row = _row(mean_a=0.435, mean_b=0.40, lo=-0.040, hi=-0.030, p=0.012)
    assert (
        verdict.verdict(row, "base", "reranker")
        == "base beats reranker on nDCG@5 by 0.035 [0.030, 0.040], p = 0.012 (Holm)."
    )


def test_either_sign_convention_of_diff_reads_the_same():
    b_minus_a = _row(mean_a=0.435, mean_b=0.40, lo=-0.040, hi=-0.030)
    a_minus_b = _row(mean_a=0.435, mean_b=0.40, diff=0.035, lo=0.030, hi=0.040)
    assert verdict.b_minus_a(a_minus_b) == pytest.approx(verdict.b_minus_a(b_minus_a))
    assert verdict.verdict(a_minus_b, "x", "y") == verdict.verdict(b_minus_a, "x", "y")


def test_not_significant_and_undefined():
    s = verdict.verdict(_row(lo=-0.01, hi=0.08, p=0.21), "base", "reranker")
    assert (
        s == "No significant difference between base and reranker on nDCG@5: reranker − base = 0.035 [-0.010, "
        "0.080], p = 0.210 (Holm)."
    )
    undefined = _row(mean_a=np.nan, mean_b=np.nan, diff=np.nan, lo=np.nan, hi=np.nan, p=np.nan, n=0)
    assert verdict.verdict(undefined, "a", "b") == "a and b share no reviews where nDCG@5 is defined."


def test_lower_is_better_metric_flips_the_winner():
    row = _row(metric="n_skipped", mean_a=3.0, mean_b=1.0, lo=-2.5, hi=-1.5, p=0.001)
    assert verdict.verdict(row, "a", "b").startswith(
        "b beats a on Skipped by 2.000 [1.500, 2.500]"
    )  # b's lower count wins


def test_on_a_real_comparison():
    rng = np.random.default_rng(0)
    a = pd.DataFrame({"f1": rng.uniform(0, 0.5, 300), "rr": rng.uniform(0, 1, 300)})
    b = pd.DataFrame({"f1": a["f1"] + 0.1, "rr": a["rr"] + rng.normal(0, 0.01, 300)})
    comp = verdict.with_significance(paired_comparison(a, b, ["f1", "rr"], n_boot=200, n_perm=200))
    assert comp["significant"].tolist() == [True, False]
    assert list(comp.columns).index("significant") == list(comp.columns).index("p_randomization_holm") + 1
    says = verdict.verdicts(comp, "A", "B")
    assert says[0].startswith("B beats A on F1 by 0.100 [0.100, 0.100]")
    assert says[1].startswith("No significant difference between A and B on Reciprocal rank")
