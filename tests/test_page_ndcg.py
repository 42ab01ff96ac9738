"""The nDCG worked-example page (AppTest): its terms equal kweval.explain.ndcg."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from kweval.explain import ndcg as explain
from tests.apptest import KNOWN, run, table, texts
from tests.helpers import DNLP


@pytest.mark.dnlp
def test_ndcg_page(monkeypatch):
    at = run(
        monkeypatch,
        DNLP,
        {"movie": KNOWN["movie"], "models": "base", "review": KNOWN["review"]},
        "pages/ndcg.py",
    )
    latex = [e.value for e in at.latex]
    assert any("0.7295" in t and "nDCG" in t for t in latex)  # seed 000 (METRICS.md: 0.72953)
    assert any("1.2023" in t for t in latex) and any("1.6481" in t for t in latex)
    assert any(r"\mathrm{nDCG}@5" in t and "0.3487" in t for t in latex)  # the known review (core: 0.348651)
    seed000 = table(at, "terms")
    assert [None if pd.isna(v) else v for v in seed000["gt_keyword"]] == ["scam", None, "poverty", None, "fraud"]
    seeds = table(at, "seed_table").set_index(["example", "gain", "k"])
    title = explain.EXAMPLE_TITLES  # examples are named by what they are, not by seed file
    assert round(seeds.loc[(title["classic"], "linear", 6), "nDCG"], 6) == 0.852342
    assert round(seeds.loc[(title["versus_ideal"], "exponential", 8), "nDCG"], 6) == 0.915492
    assert round(seeds.loc[(title["q2"], "linear", 10), "nDCG"], 3) == 0.705
    assert "seed" not in texts(at).lower()
    # toggles: exponential gain, Järvelin discount, k = 3 — the numbers follow kweval.explain.ndcg
    at.radio(key="qp_gain").set_value("exponential").run()
    at.radio(key="qp_disc").set_value("jarvelin").run()
    at.slider(key="qp_ek").set_value(3).run()
    assert (
        at.query_params["gain"] == "exponential"
        and at.query_params["disc"] == "jarvelin"
        and at.query_params["ek"] == "3"
    )
    s = explain.ndcg_steps(**explain.SEED_000, k=3, gain="exponential", discount="jarvelin")
    assert any(f"{s.ndcg:.4f}" in e.value and "nDCG}@3" in e.value for e in at.latex)
    shown = table(at, "terms")
    np.testing.assert_allclose(
        shown[["gain", "discount", "contribution"]].to_numpy(dtype=float),
        s.terms[["gain", "discount", "contribution"]].to_numpy(dtype=float),
    )
    assert shown["keyword"].tolist() == s.terms["keyword"].tolist()
