"""Writing a synthetic dataset: the tidy layout (Parquet), or the DNLP pickle layout the notebooks read.

The DNLP writer lives here because only synthetic data is ever written in
that layout (benchmarks and tests of the DNLP reader use it).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from kweval.data.dataset import Dataset
from kweval.data.tidy import write_tidy

LAYOUTS = ("tidy", "dnlp")


def _cells(keywords: list, scores: list, bounds: np.ndarray, lengths: np.ndarray, kind) -> list:
    """The DNLP cells of one model: a list of (keyword, score) tuples, [] or None per review."""
    out: list = []
    for a, b, n in zip(bounds[:-1].tolist(), bounds[1:].tolist(), lengths.tolist()):
        if n < 0:
            out.append(None)
        elif n == 0:
            out.append([])
        else:
            out.append(list(zip(keywords[a:b], map(kind, scores[a:b]))))
    return out


def write_dnlp_layout(dataset: Dataset, folder: Path) -> list[Path]:
    """The DNLP pickle layout the notebooks read (Dataset/keywords_ground_truth.pkl, Extracted_Keywords/,
    Reviews_By_Movie/).

    Scores are Python floats, except the second model's (np.float32) and the
    third's (np.float64), as in the real files.
    """
    kw_dir = folder / "Extracted_Keywords"
    rv_dir = folder / "Reviews_By_Movie"
    kw_dir.mkdir(parents=True, exist_ok=True)
    rv_dir.mkdir(parents=True, exist_ok=True)
    written = []
    imdb = dict(zip(dataset.movies["movie"], dataset.movies.get("imdb_id", dataset.movies["movie"])))
    titles = dict(zip(dataset.movies["movie"], dataset.movies["title"]))
    gt = dataset.ground_truth
    gt_out = pd.DataFrame(
        {
            "Movie_ID": pd.Series([imdb[m] for m in gt["movie"]], dtype=object),
            "Keyword": pd.Series(gt["keyword"].to_numpy(dtype=object), dtype=object),
            "Helpful": gt["helpful"].fillna(0).astype("int64").to_numpy(),
            "Not_Helpful": gt["not_helpful"].fillna(0).astype("int64").to_numpy(),
        }
    )
    path = folder / "keywords_ground_truth.pkl"
    gt_out.to_pickle(path)
    written.append(path)

    pred = dataset.predictions
    models = dataset.models["model"].tolist()
    kinds = {i: (np.float32 if i == 1 else np.float64 if i == 2 else float) for i in range(len(models))}
    for movie, rv in dataset.reviews.groupby("movie", sort=False):
        ids = rv["review_id"].tolist()
        frame = pd.DataFrame(
            {
                "Movie_ID": pd.Series([imdb[movie]] * len(ids), dtype=object),
                "Review_ID": pd.Series(ids, dtype=object),
                "Preprocessed_Review": pd.Series(rv["text"].to_numpy(dtype=object), dtype=object),
            }
        )
        p_movie = pred[pred["movie"].to_numpy() == movie]
        for mi, model in enumerate(models):
            p = p_movie[p_movie["model"].to_numpy() == model]
            # rows are grouped by review in the reviews' order; count each review's rows
            pos = pd.Index(ids).get_indexer(p["review_id"].to_numpy(dtype=object))
            counts = np.bincount(pos, minlength=len(ids))
            kw = p["keyword"].to_numpy(dtype=object)
            first = np.cumsum(counts) - counts
            has_kw = np.zeros(len(ids), dtype=bool)
            has_kw[counts > 0] = np.asarray([isinstance(v, str) for v in kw[first[counts > 0]]], dtype=bool)
            lengths = np.where(counts == 0, -1, np.where(has_kw, counts, 0))
            bounds = np.concatenate([[0], np.cumsum(counts)])
            frame[f"keywords_{model}"] = pd.Series(
                _cells(kw.tolist(), p["score"].tolist(), bounds, lengths, kinds[mi]), dtype=object
            )
        path = kw_dir / f"kw_{movie}.pkl"
        frame.to_pickle(path)
        written.append(path)
        extra = pd.DataFrame(
            {
                "Review_ID": pd.Series(ids, dtype=object),
                "Movie_ID": pd.Series([imdb[movie]] * len(ids), dtype=object),
                "Movie_Title": pd.Series([titles[movie]] * len(ids), dtype=object),
                "Rating": rv["rating"].to_numpy(),
                "Review_Title": pd.Series(rv["title"].to_numpy(dtype=object), dtype=object),
                "Review_Text": pd.Series(rv["text"].to_numpy(dtype=object), dtype=object),
            }
        )
        path = rv_dir / f"{movie}.pkl"
        extra.to_pickle(path)
        written.append(path)
    return written


def write_synthetic(dataset: Dataset, folder: str | Path, layout: str = "tidy") -> list[Path]:
    """Write `dataset` to `folder` in the tidy (Parquet) or DNLP (pickle) layout."""
    if layout not in LAYOUTS:
        raise ValueError(f"layout must be one of {', '.join(LAYOUTS)}; got {layout!r}")
    folder = Path(folder)
    return write_tidy(dataset, folder) if layout == "tidy" else write_dnlp_layout(dataset, folder)
