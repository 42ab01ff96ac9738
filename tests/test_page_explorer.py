"""The review explorer page (AppTest): a known DNLP review, the core's matches, filters and paging."""

from __future__ import annotations

import re

import pytest

from dashboard.escape import esc
from dashboard.review_tables import PER_PAGE
from kweval.evaluation.pipeline import EvalOptions, evaluate
from kweval.explain.failures import failure_table
from tests.apptest import DATA, DATASETS, KNOWN, explorer_cards, run, texts
from tests.helpers import DNLP


@pytest.mark.dnlp
def test_explorer_known_review(monkeypatch):
    at = run(
        monkeypatch,
        DNLP,
        {"movie": KNOWN["movie"], "models": "base,sentiment", "review": KNOWN["review"]},
        "pages/explorer.py",
    )
    assert len(at.html) == 1
    body = at.html[0].proto.body
    assert f"Review {KNOWN['review']}" in body
    # base matched "return jedi" to GT rank 0; its text span is marked; unmatched keywords say so
    assert (
        f'<mark>{KNOWN["keyword"]}</mark> → <b>{KNOWN["keyword"]}</b> <span class="kw-gt">(GT rank '
        f"{KNOWN['gt_rank']})</span>" in body
    )
    assert re.search(r'<mark title="base: return jedi \(GT rank 0\)[^"]*">Return</mark>', body)
    assert 'prequel films</span> <span class="kw-unmatched">— unmatched' in body
    assert "ndcg@5 0.349" in body  # the core's 0.348651
    at.button[0].click().run()  # back to the list
    assert "review" not in at.query_params and len(at.html) == PER_PAGE[0]


@pytest.mark.parametrize("data", DATA)
def test_explorer_shows_the_cores_matches(monkeypatch, cores, data):
    ds = cores[data]
    ev = evaluate(ds, EvalOptions(k=5))
    kw = ev.keywords[ev.keywords["gt_rank"] >= 0]
    row = kw.iloc[len(kw) // 2]  # some matched keyword of some review
    at = run(
        monkeypatch,
        DATASETS[data],
        {"movie": row["movie"], "models": row["model"], "review": row["review_id"]},
        "pages/explorer.py",
    )
    body = at.html[0].proto.body
    assert (
        f'<mark>{esc(row["keyword"])}</mark> → <b>{esc(row["gt_keyword"])}</b> <span class="kw-gt">(GT rank '
        f"{row['gt_rank']})</span>" in body
    )
    score = ev.scores[
        (ev.scores["movie"] == row["movie"])
        & (ev.scores["review_id"] == row["review_id"])
        & (ev.scores["model"] == row["model"])
    ]
    assert f"ndcg@5 {score['ndcg@5'].iloc[0]:.3f}" in body


@pytest.mark.dnlp
def test_explorer_filters_and_pages(monkeypatch, cores):
    ds = cores["dnlp"]
    ev = evaluate(ds, EvalOptions(k=5))
    sc = ev.scores[(ev.scores["movie"] == "SW_Episode6") & ev.scores["model"].isin(["base", "sentiment"])]
    nothing = int((sc.groupby("review_id")["n_matched"].sum() == 0).sum())
    at = run(
        monkeypatch,
        DNLP,
        {"movie": "SW_Episode6", "models": "base,sentiment", "none": "1"},
        "pages/explorer.py",
    )
    assert f"{nothing} review(s) match" in texts(at)
    at = run(
        monkeypatch,
        DNLP,
        {"movie": "SW_Episode6", "models": "base,sentiment", "sort": "lowest nDCG", "p": "3"},
        "pages/explorer.py",
    )
    n_reviews = sc["review_id"].nunique()  # the reviews of SW_Episode6 with output of base or sentiment
    assert n_reviews > 1000 and f"page 3 of {-(-n_reviews // PER_PAGE[0])}" in texts(at)
    at.text_input(key="qp_q").input("Ewok").run()
    reviews = ds.reviews[(ds.reviews["movie"] == "SW_Episode6") & ds.reviews["review_id"].isin(set(sc["review_id"]))]
    hay = reviews["text"].fillna("") + " " + reviews["title"].fillna("") + " " + reviews["review_id"]
    n_ewok = int(hay.str.casefold().str.contains("ewok", regex=False).sum())
    assert at.query_params["q"] == "Ewok" and "p" not in at.query_params  # a new filter starts at page 1
    assert f"{n_ewok} review(s) match · page 1" in texts(at)
    at.button[0].click().run()  # open the first review of the list
    assert at.query_params["review"] and len(at.html) == 1


def test_the_whole_gt_list_toggle_is_the_opened_reviews(monkeypatch, demo_dataset):
    """A page of cards carries one button per card and no toggle (each widget is part of a page turn's cost, issue
    28 item 7); the opened review has the toggle for its whole GT list with the marked model's marks (one item per
    GT keyword of `kweval.explain.failures`; the marks themselves: tests/test_page_failures.py)."""
    at = run(monkeypatch, None, {"movie": "ALL", "models": "keybert,yake", "hl": "yake"}, "pages/explorer.py")
    opens = [b for b in at.button if b.label == "Open this review"]
    assert len(opens) == len(at.html) == PER_PAGE[0]  # a card and its button each
    assert not [t for t in at.toggle if "Whole GT list" in t.label]
    opens[1].click().run()
    review = at.query_params["review"]
    assert review and [h for h in at.html if f"Review {review}" in h.proto.body]
    (toggle,) = [t for t in at.toggle if "Whole GT list" in t.label]
    assert toggle.label == "Whole GT list with yake's found / missed marks"
    toggle.set_value(True).run()
    table = failure_table(demo_dataset, evaluate(demo_dataset, EvalOptions(k=5)))
    gt = table[(table["side"] == "gt") & (table["model"] == "yake") & (table["review_id"] == review)]
    assert len(gt) and at.html[-1].proto.body.count("<li") == len(gt)


def test_per_page_is_a_choice_kept_in_the_url(monkeypatch, demo_dataset):
    """The explorer's "Per page" (issue 28 item 7: a page turn's time grows with its cards): 5 cards by default, with
    or without the keyword tables; another choice shows that many, goes into the URL and starts again at page 1; a
    link's value is used, one that is not a choice is named and replaced by the default."""
    n = len(demo_dataset.reviews)
    for query in ({"movie": "ALL"}, {"movie": "ALL", "sem": "1", "sas": "1"}):
        at = run(monkeypatch, None, {**query, "p": "2"}, "pages/explorer.py")
        assert len(explorer_cards(at)) == 5 and f"page 2 of {-(-n // 5)}" in texts(at), query
    at.selectbox(key="qp_pp").select(20).run()
    assert len(explorer_cards(at)) == 20 and f"page 1 of {-(-n // 20)}" in texts(at)
    assert at.query_params["pp"] == "20" and "p" not in at.query_params
    at = run(monkeypatch, None, {"movie": "ALL", "pp": "50", "p": "2"}, "pages/explorer.py")
    assert len(explorer_cards(at)) == 50 and f"page 2 of {-(-n // 50)}" in texts(at)
    at = run(monkeypatch, None, {"movie": "ALL", "pp": "7"}, "pages/explorer.py")
    assert len(explorer_cards(at)) == 5 and "pp" not in at.query_params
    assert any("pp" in w.value and "7" in w.value for w in at.warning), [w.value for w in at.warning]
