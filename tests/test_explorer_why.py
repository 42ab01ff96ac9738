"""The explorer's "why" on the demo, in the running app: per-model highlights, taken-by reasons, top-k GT, nDCG link,
verdicts."""

from __future__ import annotations

import re

from dashboard.escape import esc, md
from dashboard.highlight import highlight, matched_tooltips
from kweval.data import load_dataset
from kweval.evaluation.pipeline import EvalOptions, evaluate
from kweval.explain import why
from tests.apptest import run, texts

EXPLORER = "pages/explorer.py"


def _taken_case():
    """A demo review × model with a keyword whose GT keyword an earlier keyword took."""
    ev = evaluate(load_dataset(None), EvalOptions(k=5))
    for (movie, review), rows in ev.keywords.groupby(["movie", "review_id"], sort=False):
        out = why.match_reasons(rows, ev.ground_truth[ev.ground_truth["movie"] == movie])
        taken = out[out["status"] == why.TAKEN]
        if len(taken) and rows["model"].nunique() > 1:
            return ev, movie, review, taken.iloc[0]
    raise AssertionError("the demo has no taken GT keyword")


def test_open_review_says_why_marks_one_model_and_links_to_ndcg(monkeypatch):
    ev, movie, review, row = _taken_case()
    models = list(
        dict.fromkeys(ev.keywords.loc[(ev.keywords["movie"] == movie) & (ev.keywords["review_id"] == review), "model"])
    )
    at = run(
        monkeypatch, None, {"movie": movie, "models": ",".join(models), "review": review, "hl": row["model"]}, EXPLORER
    )
    body = at.html[0].proto.body
    assert f"— {esc(row['reason'])}" in body and "already taken by #" in row["reason"]
    # top-k GT beside the review, with ranks as text (no hover needed)
    gt = ev.ground_truth[ev.ground_truth["movie"] == movie].sort_values("rank")
    assert "Top 5 GT keywords" in body and f"<b>{esc(gt['keyword'].iloc[0])}</b>" in body
    # highlights: only the chosen model's matches appear in the tooltips of the review text
    tips = re.findall(r'<mark title="([^"]*)">', body)
    assert tips and all(t.startswith(f"{row['model']}:") for tip in tips for t in tip.split("; "))
    other = next(m for m in models if m != row["model"])
    at.radio(key="qp_hl").set_value(other).run()
    assert at.query_params["hl"] == other
    tips = re.findall(r'<mark title="([^"]*)">', at.html[0].proto.body)
    assert all(t.startswith(f"{other}:") for tip in tips for t in tip.split("; "))
    # a link to the nDCG walkthrough of this review and each model
    links = [(p.proto.page, p.proto.label) for p in at.get("page_link")]
    assert any("nDCG step by step: " + row["model"] == label for _, label in links)


def test_directional_sort_names_the_direction(monkeypatch):
    ds = load_dataset(None)
    a, b = ds.model_names[:2]
    at = run(
        monkeypatch,
        None,
        {"movie": ds.movie_ids[0], "models": f"{a},{b}", "sort": "A worse than B", "a": a, "b": b},
        EXPLORER,
    )
    assert f"Only reviews where {md(a)} scores lower than {md(b)}" in texts(at)


def test_compare_verdicts_on_screen(monkeypatch):
    ds = load_dataset(None)
    a, b = ds.model_names[:2]
    at = run(monkeypatch, None, {"movie": "ALL", "models": f"{a},{b}", "a": a}, "pages/compare.py")
    shown = texts(at)
    assert "on nDCG@5" in shown and ("beats" in shown or "No significant difference" in shown)
    assert "significant" in [df.value for df in at.dataframe if "p_ttest_holm" in df.value.columns][0].columns


def test_ndcg_page_names_examples_and_shows_the_review(monkeypatch):
    from kweval.explain import ndcg as explain

    ds = load_dataset(None)
    ev = evaluate(ds, EvalOptions(k=5))
    row = ev.keywords[ev.keywords["gt_rank"] >= 0].iloc[0]
    at = run(
        monkeypatch,
        None,
        {"movie": row["movie"], "models": row["model"], "review": row["review_id"]},
        "pages/ndcg.py",
    )
    shown = texts(at)
    assert explain.EXAMPLE_TITLES["seed000"] in shown and "seed" not in shown.lower()
    assert at.radio(key="qp_gain").options == [explain.GAIN_LABELS["linear"], explain.GAIN_LABELS["exponential"]]
    text = ds.reviews.loc[
        (ds.reviews["movie"] == row["movie"]) & (ds.reviews["review_id"] == row["review_id"]), "text"
    ].iloc[0]
    assert (
        highlight(
            text,
            matched_tooltips(
                ev.keywords[(ev.keywords["movie"] == row["movie"]) & (ev.keywords["review_id"] == row["review_id"])],
                model=row["model"],
            ),
        )
        in shown
    )
