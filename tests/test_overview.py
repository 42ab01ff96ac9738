"""kweval.evaluation.aggregate.dataset_overview: the Data page's per-movie and per-model counts."""

from __future__ import annotations

from kweval.evaluation.aggregate import dataset_overview
from kweval.evaluation.pipeline import evaluate
from tests.helpers import make_dataset


def test_counts_per_movie_and_model_including_skips_and_movies_without_gt():
    ds = make_dataset(
        {"m1": ["star wars", "yoda", "jedi"], "m2": ["fraud"]},
        {
            ("m1", "r1", "a"): [("yoda", 0.9), ("x", 0.1)],
            ("m1", "r1", "b"): None,  # b has no output for r1: skipped
            ("m1", "r2", "a"): [("jedi", 0.5)],
            ("m1", "r2", "b"): [("star", 0.4), ("wars", 0.3), ("y", 0.2)],
            ("m3", "r9", "a"): [("z", 1.0)],  # a movie without GT: skipped
        },
    )
    movies, models = dataset_overview(ds, evaluate(ds))
    by_movie = movies.set_index("movie")
    assert by_movie.loc["m1", ["reviews", "gt_keywords", "evaluated_pairs", "skipped_pairs"]].tolist() == [2, 3, 3, 1]
    assert by_movie.loc["m2", ["reviews", "gt_keywords", "evaluated_pairs", "skipped_pairs"]].tolist() == [0, 1, 0, 0]
    assert by_movie.loc["m3", ["gt_keywords", "evaluated_pairs"]].tolist() == [0, 0]
    by_model = models.set_index("model")
    assert by_model.loc["a", ["evaluated_reviews"]].tolist() == [2]
    assert by_model.loc["b", ["keywords", "evaluated_reviews", "skipped_reviews"]].tolist() == [3, 1, 1]
    assert all(str(t) == "int64" for t in movies.dtypes[2:]) and all(str(t) == "int64" for t in models.dtypes[2:])
