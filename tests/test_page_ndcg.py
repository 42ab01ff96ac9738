"""The nDCG worked-example page (AppTest): its terms equal kweval.explain.ndcg."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from kweval.data import load_dataset
from kweval.evaluation.pipeline import EvalOptions, evaluate
from kweval.explain import ndcg as explain
from tests.apptest import KNOWN, run, table, texts
from tests.helpers import DNLP, SEMEVAL, run_in_process


def formulas(at) -> list[str]:
    """The page's formulas: Markdown of inline KaTeX in display style (it reflows at 400 px, st.latex scrolled)."""
    return [e.value for e in at.markdown if e.value.startswith(r"$\displaystyle ")]


@pytest.mark.dnlp
def test_ndcg_page(monkeypatch):
    at = run(
        monkeypatch,
        DNLP,
        {"movie": KNOWN["movie"], "models": "base", "review": KNOWN["review"]},
        "pages/ndcg.py",
    )
    latex = formulas(at)
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
    assert any(f"{s.ndcg:.4f}" in t and "nDCG}@3" in t for t in formulas(at))
    shown = table(at, "terms")
    np.testing.assert_allclose(
        shown[["gain", "discount", "contribution"]].to_numpy(dtype=float),
        s.terms[["gain", "discount", "contribution"]].to_numpy(dtype=float),
    )
    assert shown["keyword"].tolist() == s.terms["keyword"].tolist()


def test_the_sidebar_k_is_honoured_beyond_10(monkeypatch):
    """Issue 23: sidebar k = 20 gave nDCG@10 (the page's k slider stopped at 10, silently)."""
    at = run(monkeypatch, None, {"k": "20"}, "pages/ndcg.py")
    assert at.slider(key="qp_ek").value == 20
    assert any(r"\mathrm{nDCG}@20" in t for t in formulas(at))
    at.sidebar.number_input(key="sel_k").set_value(12).run()  # a change of the sidebar's k resets the page's
    assert at.slider(key="qp_ek").value == 12 and "ek" not in at.query_params


@pytest.fixture(scope="module")
def semeval_firstphrases(tmp_path_factory):
    """SemEval2017 with `kweval extract --extractor firstphrases` predictions, converted to tidy tables."""
    root = tmp_path_factory.mktemp("semeval")
    preds = root / "firstphrases.jsonl"
    for args in (
        ["extract", "--extractor", "firstphrases", str(SEMEVAL), "--out", str(preds)],
        ["convert", str(SEMEVAL), str(root / "tidy"), "--predictions", f"firstphrases={preds}"],
    ):
        done = run_in_process(*args)  # through kweval.cli.main, in this process
        assert done.returncode == 0, done.stderr
    return root / "tidy"


@pytest.mark.keyphrase
@pytest.mark.parametrize("k", [5, 20])
def test_a_documents_own_unranked_gt_gives_evaluates_ndcg(monkeypatch, semeval_firstphrases, k):
    """Issue 23: on per-document data the page scored S0003491613001516 against every document's keys, graded by
    rank (nDCG@5 0.5703); evaluate() scores it against its own unranked list (gain 1): 0.553."""
    doc = "S0003491613001516"
    ev = evaluate(load_dataset(semeval_firstphrases), EvalOptions(k=k, keyphrase=True, present=True))
    expected = float(ev.scores.loc[ev.scores["review_id"] == doc, f"ndcg@{k}"].iloc[0])
    if k == 5:
        assert round(expected, 3) == 0.553
    at = run(
        monkeypatch,
        semeval_firstphrases,
        {"movie": "SemEval2017", "models": "firstphrases", "k": str(k), "review": doc},
        "pages/ndcg.py",
    )
    assert any(rf"\mathrm{{nDCG}}@{k}" in t and f"= {expected:.4f}" in t for t in formulas(at)), formulas(at)
    shown = table(at, "terms", nth=2)  # the document's terms (after the made-up example's terms and ideal list)
    assert "gt_rank" not in shown.columns  # unranked GT is never shown with ranks
    assert set(shown.loc[shown["gt_keyword"].notna(), "gain"]) == {1.0}
    own = ev.ground_truth[ev.ground_truth["review_id"] == doc]
    page = texts(at).replace("\\", "")
    assert f"its own GT ({len(own)} keywords), unranked" in page and "8473" not in page
