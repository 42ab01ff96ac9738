"""The embedded demo dataset (kweval/data/demo/*.parquet), read with plain pandas.

Fast: no model is loaded.  Regenerating the files (and `make_demo.py --check`)
needs the sentence-transformers model and is deliberately not run here.
"""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import pandas as pd
import pytest

REPO = Path(__file__).resolve().parents[1]
DEMO = REPO / "kweval" / "data" / "demo"
TABLES = ("movies", "reviews", "predictions", "ground_truth", "models")
COLUMNS = {
    "movies": ["movie", "title"],
    "reviews": ["movie", "review_id", "text", "title", "rating"],
    "predictions": ["movie", "review_id", "model", "rank", "keyword", "score"],
    "ground_truth": ["movie", "rank", "keyword", "helpful", "not_helpful"],
    "models": ["model", "score_direction"],
}
# The two deliberate edge cases documented in scripts/make_demo.py.
SKIPPED = ("hollow_pines", "m4-r12", "yake")  # no rows at all
EMPTY = ("night_heist", "m1-r08", "keybert_vader")  # one row: keyword null, rank 0, score NaN


@pytest.fixture(scope="module")
def demo() -> dict[str, pd.DataFrame]:
    return {name: pd.read_parquet(DEMO / f"{name}.parquet") for name in TABLES}


@pytest.fixture(scope="module")
def corpus():
    spec = importlib.util.spec_from_file_location("demo_corpus", REPO / "scripts" / "demo_corpus.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_files_columns_and_size(demo):
    for name in TABLES:
        assert list(demo[name].columns) == COLUMNS[name], name
    total = sum((DEMO / f"{name}.parquet").stat().st_size for name in TABLES)
    assert total < 2 * 1024 * 1024


def test_dtypes(demo):
    assert demo["predictions"]["rank"].dtype == "int64"
    assert demo["ground_truth"]["rank"].dtype == "int64"
    for table, col in [
        ("predictions", "score"),
        ("reviews", "rating"),
        ("ground_truth", "helpful"),
        ("ground_truth", "not_helpful"),
    ]:
        assert demo[table][col].dtype == "float64", (table, col)
    for col in ("movie", "review_id", "text", "title"):
        assert pd.api.types.is_string_dtype(demo["reviews"][col]), col


def test_movies_and_reviews(demo):
    movies, reviews = demo["movies"], demo["reviews"]
    assert len(movies) >= 6 and movies["movie"].is_unique
    assert movies["title"].notna().all()
    assert len(reviews) >= 150
    assert set(reviews["movie"]) == set(movies["movie"])
    assert not reviews.duplicated(["movie", "review_id"]).any()
    assert reviews["review_id"].str.fullmatch(r"m\d+-r\d{2}").all()
    assert reviews["text"].notna().all() and (reviews["text"].str.strip() != "").all()
    assert reviews["rating"].between(1, 10).all()
    assert (reviews.groupby("movie").size() >= 28).all()


def test_no_review_shorter_than_three_words(demo):
    words = demo["reviews"]["text"].str.split().str.len()
    assert words.min() >= 3
    # one deliberately short review; everything else is a real paragraph
    assert (words < 40).sum() == 1 and words.max() <= 160


def test_models(demo):
    models = demo["models"].set_index("model")["score_direction"]
    assert sorted(models.index) == ["keybert", "keybert_vader", "yake"]
    assert models["yake"] == "lower"
    assert models["keybert"] == "higher" and models["keybert_vader"] == "higher"
    assert set(demo["predictions"]["model"]) == set(models.index)


def test_ground_truth(demo):
    gt = demo["ground_truth"]
    assert set(gt["movie"]) == set(demo["movies"]["movie"])
    for movie, group in gt.groupby("movie"):
        assert len(group) >= 20, movie
        assert sorted(group["rank"]) == list(range(len(group))), movie
        assert group["keyword"].notna().all() and group["keyword"].is_unique, movie
    assert (gt["helpful"] >= 0).all() and (gt["not_helpful"] >= 0).all()
    assert (gt["helpful"] == gt["helpful"].round()).all()
    assert "Plot-Twist" in set(gt["keyword"])


def test_predictions_are_ranked_lists(demo):
    pred = demo["predictions"]
    keys = demo["reviews"][["movie", "review_id"]]
    assert not pred.merge(keys, how="left", indicator=True)["_merge"].eq("left_only").any()
    for (movie, review, model), group in pred.groupby(["movie", "review_id", "model"]):
        assert 1 <= len(group) <= 5, (movie, review, model)
        assert list(group["rank"]) == list(range(len(group))), (movie, review, model)
        if group["keyword"].isna().any():
            continue
        scores = list(group["score"])
        best_first = sorted(scores) if model == "yake" else sorted(scores, reverse=True)
        assert scores == best_first, (movie, review, model)


def test_edge_case_skipped_pair(demo):
    pred, reviews = demo["predictions"], demo["reviews"]
    pairs = pred[["movie", "review_id", "model"]].drop_duplicates()
    expected = len(reviews) * 3
    assert len(pairs) == expected - 1  # exactly one review x model pair has no rows
    present = set(map(tuple, pairs.to_numpy()))
    missing = [
        (m, r, model)
        for m, r in reviews[["movie", "review_id"]].itertuples(index=False)
        for model in ("keybert", "yake", "keybert_vader")
        if (m, r, model) not in present
    ]
    assert missing == [SKIPPED]
    assert ((reviews["movie"] == SKIPPED[0]) & (reviews["review_id"] == SKIPPED[1])).sum() == 1


def test_edge_case_empty_output(demo):
    pred = demo["predictions"]
    empty = pred[pred["keyword"].isna()]
    assert len(empty) == 1
    row = empty.iloc[0]
    assert (row["movie"], row["review_id"], row["model"]) == EMPTY
    assert row["rank"] == 0 and math.isnan(row["score"])
    same_pair = pred[(pred["movie"] == EMPTY[0]) & (pred["review_id"] == EMPTY[1]) & (pred["model"] == EMPTY[2])]
    assert len(same_pair) == 1
    assert EMPTY[:2] != SKIPPED[:2]
    # every other row has a keyword and a score
    assert pred.drop(empty.index)["score"].notna().all()


def test_awkward_inputs_kept_verbatim(demo):
    texts = demo["reviews"]["text"]
    assert texts.str.contains("<img src=x onerror=alert(1)>", regex=False).sum() == 1
    assert texts.str.contains('<script>alert("x")</script>', regex=False).sum() == 1
    joined = " ".join(texts)
    for char in ("é", "ü", "—", "“", "”", "’", "😭"):
        assert char in joined, char


def test_parquet_matches_corpus(demo, corpus):
    reviews = demo["reviews"]
    assert list(demo["movies"]["movie"]) == [m["movie"] for m in corpus.MOVIES]
    assert list(demo["movies"]["title"]) == [m["title"] for m in corpus.MOVIES]
    expected = [
        (m["movie"], corpus.review_id(i, j), text, title, float(rating))
        for i, m in enumerate(corpus.MOVIES, 1)
        for j, (title, rating, text) in enumerate(m["reviews"], 1)
    ]
    assert list(reviews.itertuples(index=False, name=None)) == expected
    gt = [
        (m["movie"], rank, k, float(h), float(n))
        for m in corpus.MOVIES
        for rank, (k, h, n) in enumerate(m["ground_truth"])
    ]
    assert list(demo["ground_truth"].itertuples(index=False, name=None)) == gt


def test_loads_as_the_default_dataset():
    from kweval.data import load_dataset

    ds = load_dataset()
    assert ds.source == "demo"
    assert ds.problems == []
    assert len(ds.movies) >= 6 and len(ds.reviews) >= 150
    assert dict(zip(ds.models["model"], ds.models["score_direction"]))["yake"] == "lower"
