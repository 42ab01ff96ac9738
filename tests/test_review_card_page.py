"""Speed tricks of the explorer's cards (issue 23 "Speed"), each against its plain reference: the GT lists split
once equal the per-call filter; a page's card data computed together equals each review's computed alone."""

from __future__ import annotations

import hashlib

import numpy as np
import pandas as pd
import pytest

from dashboard import keyword_html, review_card
from dashboard.gt_lists import gt_lists
from dashboard.selection import Selection
from dashboard.state import Ctx
from kweval.evaluation.pipeline import EvalOptions, evaluate
from tests.helpers import make_dataset


def _per_document():
    """Two documents of one collection, each with its own GT list, and a third scored against the movie-level list."""
    ds = make_dataset(
        {"c": ["star war", "war", "comedy"]},
        {
            ("c", "d1", "a"): [("war", 1.0), ("star war", 0.9), ("wars", 0.8)],
            ("c", "d1", "b"): [("comedy", 1.0)],
            ("c", "d2", "a"): [("dark comedy", 1.0), ("comedy", 0.5)],
            ("c", "d3", "a"): [("war", 1.0)],
        },
        texts={("c", "d1"): "star wars and war", ("c", "d2"): "a dark comedy", ("c", "d3"): "war"},
    )
    own = pd.DataFrame(
        {"movie": "c", "review_id": ["d1", "d1", "d2"], "rank": [0, 1, 0], "keyword": ["war", "star war", "comedy"]}
    )
    ds.ground_truth = pd.concat([ds.ground_truth.assign(review_id=None), own], ignore_index=True)
    return ds


def _ctx(dataset, **options) -> Ctx:
    ev = evaluate(dataset, EvalOptions(k=3))
    models = tuple(dataset.model_names)
    opts = EvalOptions(k=3, **options)
    sel = Selection(movie="ALL", models=models, k=3, semantic=opts.semantic, sentiment=opts.sentiment)
    return Ctx(dataset, dataset.content_hash(), ev, sel, opts, {}, "test")


def _filter_reference(gt: pd.DataFrame, movie: str, review: str) -> pd.DataFrame:
    mine = gt[gt["movie"] == movie]
    own = mine[mine["review_id"] == review]
    return own if len(own) else mine[mine["review_id"].isna()]


@pytest.mark.parametrize("source", ["demo", "per-document"])
def test_gt_lists_equal_the_filter(demo_dataset, source):
    ds = demo_dataset if source == "demo" else _per_document()
    ctx = _ctx(ds)
    gt = ctx.evaluation.ground_truth
    for movie, review in [*zip(ds.reviews["movie"], ds.reviews["review_id"]), ("nope", "x")]:
        pd.testing.assert_frame_equal(ctx.own_gt(movie, review), _filter_reference(gt, movie, review))
    assert sum(len(rows) for rows in gt_lists(ctx.key, gt).values()) == len(gt)


def _fake_vectors(texts, model_id=None, backend=None):
    """A deterministic embedder standing in for the model (the test checks the grouping, not the model)."""
    out = []
    for t in texts:
        seed = int.from_bytes(hashlib.blake2b(t.encode(), digest_size=4).digest(), "little")
        v = np.random.default_rng(seed).normal(size=8).astype("float32")
        out.append(v / np.linalg.norm(v))
    return np.stack(out)


@pytest.mark.parametrize("source", ["demo", "per-document"])
@pytest.mark.parametrize("extras", [{}, {"semantic": True, "threshold": 0.3, "sentiment": True}])
def test_page_card_data_equals_each_review_alone(demo_dataset, monkeypatch, source, extras):
    from kweval.embeddings import semantic

    monkeypatch.setattr(semantic, "embed_texts", _fake_vectors)
    ds = demo_dataset if source == "demo" else _per_document()
    ctx = _ctx(ds, **extras)
    page = review_card.reviews_table(ctx).groupby("movie", sort=False).head(4)  # a page across several movies' lists
    kw, scores = review_card.keywords(ctx), ctx.scores()
    together = review_card.card_data(ctx, page, kw, scores)
    assert len(together) == len(page)
    for i in range(len(page)):
        row = page.iloc[i]
        alone = review_card.card_data(ctx, page.iloc[[i]], kw, scores)[(row["movie"], row["review_id"])]
        got = together[(row["movie"], row["review_id"])]
        pd.testing.assert_frame_equal(got.rows, alone.rows)
        assert got.evaluated == alone.evaluated and got.evaluated
        np.testing.assert_equal([got.text_v, got.gt_v], [alone.text_v, alone.gt_v])
        if extras:
            cos = ["cosine"]
            pd.testing.assert_frame_equal(got.details.drop(columns=cos), alone.details.drop(columns=cos))
            np.testing.assert_allclose(got.details["cosine"], alone.details["cosine"], atol=1e-6)
            assert got.details["v"].notna().any()
        else:
            assert got.details is None
        review_card._card_parts.clear()
        html_page, _ = review_card.card_html(ctx, row, kw, scores, ctx.selection.models[0], page=page)
        review_card._card_parts.clear()
        html_alone, _ = review_card.card_html(ctx, row, kw, scores, ctx.selection.models[0])
        assert html_page == html_alone and "<table" in html_page if extras else html_page == html_alone
        if extras:  # no style block in a card: the page gives the tables' style once (`card_style`)
            assert "<style>" not in html_page and review_card.card_style(ctx) == keyword_html.TABLE_STYLE
        else:
            assert review_card.card_style(ctx) == ""
    review_card._card_parts.clear()  # the explorer's page of cards: each card as `card_html` builds it with the page
    cards = review_card.page_cards(ctx, page, kw, scores, ctx.selection.models[0])
    review_card._card_parts.clear()
    marked = ctx.selection.models[0]
    assert cards == [
        review_card.card_html(ctx, page.iloc[i], kw, scores, marked, page=page)[0] for i in range(len(page))
    ]
    # a search that matches no review: an empty page has no card (its metrics lines asked for no review)
    assert review_card.page_cards(ctx, page.iloc[:0], kw, scores, marked) == []
    assert review_card.metric_lines(ctx, scores, ()) == {}


def _semantic_ctx(dataset, threshold: float, base=None) -> Ctx:
    """A semantic evaluation at `threshold` (or `base` re-thresholded to it, as the dashboard does on a τ step)."""
    from dataclasses import replace

    from kweval.evaluation.pipeline import with_threshold

    opts = EvalOptions(k=3, semantic=True, threshold=threshold)
    ev = with_threshold(base, threshold) if base is not None else evaluate(dataset, opts)
    models = tuple(dataset.model_names)
    sel = Selection(movie="ALL", models=models, k=3, semantic=True, threshold=threshold)
    return Ctx(dataset, dataset.content_hash(), replace(ev, options=opts), sel, opts, {}, "test")


def _fake_store_vectors(texts, model_id=None, backend=None, **_):
    return _fake_vectors(texts)


@pytest.mark.parametrize("source", ["demo", "per-document"])
def test_a_tau_step_fills_the_cached_template_as_a_fresh_card(demo_dataset, monkeypatch, tmp_path, source):
    """Speed trick "card template": after τ 0.2 is shown, the card at τ 0.5 (its τ-free template from the cache, the
    marks and metrics filled at 0.5) equals the card rendered from nothing at 0.5, and differs from the card at 0.2
    (marks and semantic metrics move: a stale template would show)."""
    from kweval.embeddings import semantic

    monkeypatch.setenv("KWEVAL_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(semantic, "embed_texts", _fake_store_vectors)
    ds = demo_dataset if source == "demo" else _per_document()
    first = _semantic_ctx(ds, 0.2)
    ctx = _semantic_ctx(ds, 0.5, base=first.evaluation)
    assert ctx.tau_free_key == first.tau_free_key and ctx.key != first.key
    page = review_card.reviews_table(first).groupby("movie", sort=False).head(3)
    kw = review_card.keywords(first)
    review_card._card_parts.clear()
    changed = 0
    for i in range(len(page)):
        row, marked = page.iloc[i], ctx.selection.models[0]
        at_02, _ = review_card.card_html(first, row, kw, first.scores(), marked, page=page)
        stepped, models = review_card.card_html(ctx, row, kw, ctx.scores(), marked, page=page)
        review_card._card_parts.clear()
        review_card._page_base.clear()
        fresh, fresh_models = review_card.card_html(ctx, row, kw, ctx.scores(), marked, page=page)
        assert stepped == fresh and models == fresh_models
        assert "cosine &gt; τ = 0.5" in fresh or "kw-above" not in fresh
        changed += stepped != at_02
    assert changed  # τ 0.2 → 0.5 changes some cards: the test can see a stale template


def test_movie_title_equals_the_movies_table(demo_dataset):
    """Speed: the titles are read once per run (`Ctx._titles`); reference: the movies table's lookup per call."""
    ctx = _ctx(demo_dataset)
    movies = demo_dataset.movies
    for movie in [*movies["movie"], "not a movie"]:
        expected = dict(zip(movies["movie"], movies["title"])).get(movie, movie)
        assert ctx.movie_title(movie) == str(expected)
    assert ctx.movie_title("ALL").startswith("All ")
