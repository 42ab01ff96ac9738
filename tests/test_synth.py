"""kweval.data.synth: determinism, the shape of both layouts, round trips through the loaders and evaluate."""

from __future__ import annotations

import pickle
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from kweval.cli import main
from kweval.data import load_dataset
from kweval.data.dataset import GROUND_TRUTH_COLUMNS, PREDICTION_COLUMNS, REVIEW_COLUMNS
from kweval.data.synth import SynthOptions, synthesize, write_synthetic
from kweval.evaluation.pipeline import evaluate
from kweval.text.normalize import normalize

KEY = ["movie", "review_id", "model", "rank"]


@pytest.fixture(scope="module")
def small():
    # enough reviews that empty lists and missing cells occur
    return synthesize(
        movies=2, reviews_per_movie=400, models=4, seed=11, options=SynthOptions(p_empty=0.02, p_missing=0.02)
    )


def _canon(pred: pd.DataFrame) -> pd.DataFrame:
    """Predictions as plain objects in key order (readers may order rows differently)."""
    out = pd.DataFrame(
        {c: pd.Series(pred[c].to_numpy(dtype=object), dtype=object) for c in ["movie", "review_id", "model", "keyword"]}
    )
    out["keyword"] = [k if isinstance(k, str) else None for k in out["keyword"]]
    out["rank"] = pred["rank"].to_numpy(dtype="int64")
    out["score"] = pred["score"].to_numpy(dtype="float64")
    return out.sort_values(KEY, kind="stable").reset_index(drop=True)[PREDICTION_COLUMNS]


def test_same_seed_same_dataset_other_seed_other_dataset():
    a = synthesize(2, 60, 3, seed=5)
    b = synthesize(2, 60, 3, seed=5)
    c = synthesize(2, 60, 3, seed=6)
    for name in ("movies", "reviews", "predictions", "ground_truth", "models"):
        pd.testing.assert_frame_equal(getattr(a, name), getattr(b, name))
    assert not a.predictions["keyword"].equals(c.predictions["keyword"])
    # movie i's GT does not depend on how many movies there are
    d = synthesize(3, 10, 3, seed=5)
    pd.testing.assert_frame_equal(
        a.ground_truth[a.ground_truth["movie"] == "movie000"].reset_index(drop=True),
        d.ground_truth[d.ground_truth["movie"] == "movie000"].reset_index(drop=True),
    )


def test_tables_have_the_dataset_columns_and_sizes(small):
    ds = small
    assert list(ds.predictions.columns) == PREDICTION_COLUMNS
    assert list(ds.ground_truth.columns) == GROUND_TRUTH_COLUMNS
    assert list(ds.reviews.columns) == REVIEW_COLUMNS
    assert ds.models["model"].tolist() == ["base", "reranker", "sentiment", "metadata"]
    assert len(ds.reviews) == 800 and ds.reviews["review_id"].is_unique
    sizes = ds.ground_truth.groupby("movie").size()
    assert sizes.between(250, 650).all() and len(sizes) == 2
    assert (ds.ground_truth.groupby("movie")["rank"].apply(lambda r: (r.to_numpy() == np.arange(len(r))).all())).all()


def test_keywords_scores_and_lists_look_like_keybert(small):
    pred = small.predictions
    kws = pred["keyword"].dropna()
    words = kws.map(lambda k: len(normalize(k).split()))
    assert words.between(1, 3).all() and set(words) == {1, 2, 3}
    scores = pred["score"].dropna()
    assert scores.between(0.25, 0.75).all() and 0.4 < scores.mean() < 0.6
    # ranked lists: scores never increase with rank, ranks are 0..n-1
    g = pred.dropna(subset=["keyword"]).groupby(["movie", "review_id", "model"], sort=False)
    assert (g["score"].diff().dropna() <= 0).all()
    assert (g["rank"].transform(lambda r: r.to_numpy() - np.arange(len(r))) == 0).all()
    # occasional empty list (one row, no keyword) and missing cell (no row at all)
    empty = pred[pred["keyword"].isna()]
    assert len(empty) > 0 and (empty["rank"] == 0).all() and empty["score"].isna().all()
    pairs = pred.groupby(["movie", "review_id", "model"]).size()
    assert len(pairs) < len(small.reviews) * len(small.models)


def test_partial_matches_exist(small):
    gt = small.ground_truth
    pred = small.predictions.dropna(subset=["keyword"])
    m = "movie000"
    g = [normalize(k) for k in gt.loc[gt["movie"] == m, "keyword"]]
    gset = set(g)
    p = {normalize(k) for k in pred.loc[pred["movie"] == m, "keyword"]}
    exact = p & gset
    sub = {x for x in p - gset if any(x in y for y in g)}
    sup = {x for x in p - gset if any(y in x for y in g)}
    assert exact and sub and sup


def test_tidy_layout_round_trips_and_evaluates(small, tmp_path: Path):
    written = write_synthetic(small, tmp_path / "tidy")
    assert {p.name for p in written} == {
        "movies.parquet",
        "reviews.parquet",
        "predictions.parquet",
        "ground_truth.parquet",
        "models.parquet",
    }
    loaded = load_dataset(tmp_path / "tidy")
    assert loaded.problems == []
    pd.testing.assert_frame_equal(_canon(loaded.predictions), _canon(small.predictions))
    a = evaluate(small).scores.sort_values(["movie", "review_id", "model"]).reset_index(drop=True)
    b = evaluate(loaded).scores.sort_values(["movie", "review_id", "model"]).reset_index(drop=True)
    assert len(a) == len(b) > 0
    num = a.select_dtypes("number").columns
    np.testing.assert_array_equal(a[num].to_numpy(), b[num].to_numpy())


def test_dnlp_layout_has_the_notebooks_files_and_round_trips(small, tmp_path: Path):
    root = tmp_path / "Dataset"
    write_synthetic(small, root, layout="dnlp")
    gt = pd.read_pickle(root / "keywords_ground_truth.pkl")
    assert list(gt.columns) == ["Movie_ID", "Keyword", "Helpful", "Not_Helpful"]
    files = sorted(p.name for p in (root / "Extracted_Keywords").iterdir())
    assert files == ["kw_movie000.pkl", "kw_movie001.pkl"]
    with open(root / "Extracted_Keywords" / "kw_movie000.pkl", "rb") as fh:
        frame = pickle.load(fh)
    assert list(frame.columns)[:3] == ["Movie_ID", "Review_ID", "Preprocessed_Review"]
    assert [c for c in frame.columns if c.startswith("keywords_")] == [
        "keywords_base",
        "keywords_reranker",
        "keywords_sentiment",
        "keywords_metadata",
    ]
    cells = frame["keywords_base"].tolist()
    kinds = {type(c).__name__ for c in cells}
    assert kinds == {"list", "NoneType"}
    assert any(c == [] for c in cells)
    first = next(c for c in cells if c)
    assert isinstance(first[0], tuple) and isinstance(first[0][0], str) and 0.25 <= first[0][1] <= 0.75
    assert (root / "Reviews_By_Movie" / "movie000.pkl").is_file()

    loaded = load_dataset(root)
    assert loaded.problems == []
    a, b = _canon(small.predictions), _canon(loaded.predictions)
    pd.testing.assert_frame_equal(a.drop(columns="score"), b.drop(columns="score"))
    np.testing.assert_allclose(
        a["score"], b["score"], rtol=1e-6
    )  # one model's scores are float32, as in the real files
    ev = evaluate(loaded)
    assert len(ev.scores) == len(evaluate(small).scores) > 0


def test_cli_synth_writes_a_dataset_evaluate_can_read(tmp_path: Path, capsys):
    out = tmp_path / "s"
    assert main(["synth", str(out), "--movies", "2", "--reviews-per-movie", "30", "--models", "2", "--seed", "3"]) == 0
    assert (out / "predictions.parquet").is_file()
    assert main(["evaluate", str(out), "--quiet", "--out", str(tmp_path / "summary.csv")]) == 0
    summary = pd.read_csv(tmp_path / "summary.csv")
    assert set(summary["movie"]) == {"movie000", "movie001", "ALL"}
    assert (
        main(
            [
                "synth",
                str(tmp_path / "d"),
                "--movies",
                "1",
                "--reviews-per-movie",
                "5",
                "--models",
                "1",
                "--layout",
                "dnlp",
            ]
        )
        == 0
    )
    assert (tmp_path / "d" / "Extracted_Keywords" / "kw_movie000.pkl").is_file()
