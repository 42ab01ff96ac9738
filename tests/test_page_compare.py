"""The Compare page (AppTest): its tests equal kweval.stats."""

from __future__ import annotations

from urllib.parse import parse_qsl

import numpy as np
import pytest

from kweval import stats
from kweval.evaluation.pipeline import EvalOptions, evaluate
from kweval.stats.families import family_keys
from tests.apptest import run, table
from tests.helpers import DNLP


@pytest.mark.dnlp
def test_compare_page_equals_stats(monkeypatch, cores):
    ds = cores["dnlp"]
    at = run(
        monkeypatch,
        DNLP,
        {"movie": "SW_Episode6", "models": "base,sentiment", "a": "base"},
        "pages/compare.py",
    )
    shown = table(at, "compare_table")
    ev = evaluate(ds, EvalOptions(k=5))
    sc = ev.scores[ev.scores["movie"] == "SW_Episode6"]
    metrics = [m for m in ev.metric_names if m != "gt_coverage"]
    a = sc[sc["model"] == "base"].set_index("review_id")[metrics]
    b = sc[sc["model"] == "sentiment"].set_index("review_id").reindex(a.index)[metrics]
    core = stats.paired_comparison(a, b, metrics, families=family_keys(metrics))  # Holm within each family
    np.testing.assert_allclose(shown["diff"], core["diff"])
    np.testing.assert_allclose(shown["mean A"], a.mean().to_numpy())  # base
    np.testing.assert_allclose(shown["mean B"], b.mean().to_numpy())  # sentiment
    np.testing.assert_allclose(shown["ci_low"], core["ci_low"])
    np.testing.assert_allclose(shown["p_ttest_holm"], core["p_ttest_holm"])
    assert shown["wins"].tolist() == core["wins"].tolist()
    diffs = table(at, "review_diffs")
    assert len(diffs) == len(a)
    assert diffs["open"].str.startswith("./explorer?").all()
    linked = [dict(parse_qsl(link.split("?", 1)[1])) for link in diffs["open"]]  # each row opens its own review
    assert [(q["movie"], q["review"], q["models"]) for q in linked] == [
        (m, r, "base,sentiment") for m, r in zip(diffs["movie"], diffs["review_id"])
    ]
    assert (np.diff(diffs["difference"].abs().to_numpy()) <= 1e-12).all()
    assert set(table(at, "per_movie_table")["movie"]) == set(ds.movie_ids)
