"""Reader for the DNLP-KeyBert layout (the one the seed notebooks read).

    Dataset/
      keywords_ground_truth.pkl          Movie_ID, Keyword, Helpful, Not_Helpful (ranked per movie)
      Extracted_Keywords/kw_<Movie>.pkl  Movie_ID, Review_ID, Preprocessed_Review, keywords_<model>
      Reviews_By_Movie/<Movie>.pkl       Review_ID, Movie_Title, Rating, Review_Title, ... (optional)

These are pandas pickles: they are read only because they are local files the
user points at.  Uploaded bytes are never unpickled (the dashboard accepts
tidy Parquet/CSV only).
"""

from __future__ import annotations

import math
import numbers
from pathlib import Path

import numpy as np
import pandas as pd

from kweval.data.dataset import (
    GROUND_TRUTH_COLUMNS,
    MODEL_COLUMNS,
    MOVIE_COLUMNS,
    PREDICTION_COLUMNS,
    REVIEW_COLUMNS,
    Dataset,
    Problem,
)

GT_FILE = "keywords_ground_truth.pkl"
KW_DIR = "Extracted_Keywords"
REVIEWS_DIR = "Reviews_By_Movie"
MODEL_PREFIX = "keywords_"


def find_root(path: Path) -> Path | None:
    """The folder holding `Extracted_Keywords/`: `path` itself or its `Dataset/` child."""
    for candidate in (path, path / "Dataset"):
        if (candidate / KW_DIR).is_dir():
            return candidate
    return None


def _read_pickle(path: Path, problems: list[Problem], what: str) -> pd.DataFrame | None:
    try:
        frame = pd.read_pickle(path)
    except Exception as exc:  # any unreadable file is a data problem, not a crash
        problems.append(Problem(path.name, f"unreadable {what} ({type(exc).__name__}: {exc}); skipped"))
        return None
    if not isinstance(frame, pd.DataFrame):
        problems.append(Problem(path.name, f"holds a {type(frame).__name__}, not a table; skipped"))
        return None
    if frame.empty:
        problems.append(Problem(path.name, "is empty; skipped"))
        return None
    return frame


def _score(value: object) -> float:
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        return float(value)
    return math.nan


def _entry(entry: object) -> tuple[object, float]:
    """(keyword or None, score or NaN) of one raw list entry."""
    if isinstance(entry, str):
        return entry, math.nan
    if isinstance(entry, (tuple, list, np.ndarray)) and len(entry) >= 1:
        kw = entry[0] if isinstance(entry[0], str) else None
        return kw, _score(entry[1]) if len(entry) >= 2 else math.nan
    return None, math.nan


def _is_missing(cell: object) -> bool:
    return cell is None or (isinstance(cell, float) and math.isnan(cell)) or cell is pd.NA


_EMPTY_OUTPUT = ("", 0.0)  # placeholder row of an empty list, keeps the fast path; patched to (None, NaN)
_NUMERIC_TYPES = {float, int, np.float64, np.float32, np.float16, np.int64, np.int32}


def _split_entries(entries: list) -> tuple[list, list[float]]:
    """Keywords (str or None) and scores (float or NaN) of raw entries.

    The common case, `(str, number)` pairs, is split with C-level zips; any
    other shape falls back to the careful per-entry path.
    """
    if entries and set(map(type, entries)) == {tuple} and set(map(len, entries)) == {2}:
        kws, scores = zip(*entries)
        if set(map(type, kws)) == {str} and set(map(type, scores)) <= _NUMERIC_TYPES:
            return list(kws), np.asarray(scores, dtype="float64").tolist()
    pairs = [_entry(e) for e in entries]
    return [kw for kw, _ in pairs], [sc for _, sc in pairs]


def flatten_cells(
    movie: str, review_ids: list[str], model: str, cells: list[object], source: str, problems: list[Problem]
) -> pd.DataFrame:
    """Prediction rows of one model's column; missing cells give no rows (the review is skipped)."""
    rid_out: list[str] = []
    rank_out: list[int] = []
    entries: list[object] = []
    empty_at: list[int] = []
    not_list = 0
    for rid, cell in zip(review_ids, cells):
        if isinstance(cell, (list, tuple, np.ndarray)):
            n = len(cell)
            if n == 0:  # an empty output is a real (empty) prediction: one row, no keyword
                empty_at.append(len(entries))
                rid_out.append(rid)
                rank_out.append(0)
                entries.append(_EMPTY_OUTPUT)
                continue
            rid_out.extend([rid] * n)
            rank_out.extend(range(n))
            entries.extend(cell)
        elif not _is_missing(cell):
            not_list += 1
    kws, scores = _split_entries(entries)
    bad_entries = sum(1 for kw in kws if kw is None)
    for i in empty_at:
        kws[i], scores[i] = None, math.nan
    if not_list:
        problems.append(
            Problem(f"{source} [{MODEL_PREFIX}{model}]", f"{not_list} cell(s) are not lists; those reviews are skipped for {model}")
        )
    if bad_entries:
        problems.append(
            Problem(f"{source} [{MODEL_PREFIX}{model}]", f"{bad_entries} entr(y/ies) without a string keyword; dropped")
        )
    return pd.DataFrame(
        {"movie": movie, "review_id": rid_out, "model": model, "rank": rank_out, "keyword": kws, "score": scores},
        columns=PREDICTION_COLUMNS,
    )


def read_dnlp(path: Path) -> Dataset:
    """Load a DNLP-layout folder; every unreadable part is skipped and named in `problems`."""
    root = find_root(path) or path
    problems: list[Problem] = []

    gt_frames: list[pd.DataFrame] = []
    gt_raw = None
    gt_path = root / GT_FILE
    if gt_path.is_file():
        gt_raw = _read_pickle(gt_path, problems, "ground-truth file")
        if gt_raw is not None and not {"Movie_ID", "Keyword"} <= set(gt_raw.columns):
            problems.append(Problem(GT_FILE, "lacks the Movie_ID/Keyword columns; no ground truth"))
            gt_raw = None
    else:
        problems.append(Problem(GT_FILE, "not found; no movie has ground truth"))

    movies, reviews, pred_parts, models_seen = [], [], [], []
    for kw_path in sorted((root / KW_DIR).glob("kw_*.pkl")):
        movie = kw_path.stem[len("kw_") :]
        frame = _read_pickle(kw_path, problems, "predictions file")
        if frame is None:
            continue
        model_cols = [c for c in frame.columns if isinstance(c, str) and c.startswith(MODEL_PREFIX)]
        if "Review_ID" not in frame.columns or not model_cols:
            problems.append(Problem(kw_path.name, "lacks a Review_ID column or any keywords_<model> column; skipped"))
            continue
        frame = frame[frame["Review_ID"].notna()]
        frame = frame.drop_duplicates("Review_ID", keep="first")
        review_ids = frame["Review_ID"].astype(str).tolist()
        imdb_id = None
        if "Movie_ID" in frame.columns and frame["Movie_ID"].notna().any():
            imdb_id = str(frame["Movie_ID"].dropna().iloc[0])

        rv = pd.DataFrame({"movie": movie, "review_id": review_ids})
        text = frame["Preprocessed_Review"] if "Preprocessed_Review" in frame.columns else None
        rv["text"] = text.where(text.map(lambda t: isinstance(t, str)), None).tolist() if text is not None else None
        rv["title"] = None
        rv["rating"] = np.nan
        title = movie
        extra_path = root / REVIEWS_DIR / f"{movie}.pkl"
        if extra_path.is_file():
            extra = _read_pickle(extra_path, problems, "reviews file")
            if extra is not None and "Review_ID" in extra.columns:
                extra = extra.drop_duplicates("Review_ID").assign(Review_ID=lambda d: d["Review_ID"].astype(str))
                extra = extra.set_index("Review_ID")
                if "Movie_Title" in extra.columns and extra["Movie_Title"].notna().any():
                    title = str(extra["Movie_Title"].dropna().iloc[0])
                for src, dst in (("Review_Title", "title"), ("Rating", "rating"), ("Review_Date", "date")):
                    if src in extra.columns:
                        rv[dst] = rv["review_id"].map(extra[src]).tolist()
                if "Review_Text" in extra.columns:
                    missing = rv["text"].isna()
                    rv.loc[missing, "text"] = rv.loc[missing, "review_id"].map(extra["Review_Text"])
        rv["rating"] = pd.to_numeric(rv["rating"], errors="coerce")
        reviews.append(rv)
        movies.append({"movie": movie, "title": title, "imdb_id": imdb_id})

        for col in model_cols:
            model = col[len(MODEL_PREFIX) :]
            if model not in models_seen:
                models_seen.append(model)
            pred_parts.append(flatten_cells(movie, review_ids, model, frame[col].tolist(), kw_path.name, problems))

        if gt_raw is not None:
            if imdb_id is None:
                problems.append(Problem(movie, "no Movie_ID in its predictions file, so its ground truth cannot be found"))
            else:
                g = gt_raw[gt_raw["Movie_ID"].astype(str) == imdb_id]
                gt_frames.append(
                    pd.DataFrame(
                        {
                            "movie": movie,
                            "rank": np.arange(len(g)),
                            "keyword": g["Keyword"].tolist(),
                            "helpful": pd.to_numeric(g["Helpful"], errors="coerce").tolist() if "Helpful" in g else np.nan,
                            "not_helpful": pd.to_numeric(g["Not_Helpful"], errors="coerce").tolist() if "Not_Helpful" in g else np.nan,
                        }
                    )
                )

    def concat(parts: list[pd.DataFrame], columns: list[str]) -> pd.DataFrame:
        if not parts:
            return pd.DataFrame({c: pd.Series(dtype="object") for c in columns})
        return pd.concat(parts, ignore_index=True)

    predictions = concat(pred_parts, PREDICTION_COLUMNS)
    predictions["rank"] = predictions["rank"].astype("int64")
    predictions["score"] = predictions["score"].astype("float64")
    return Dataset(
        movies=pd.DataFrame(movies, columns=MOVIE_COLUMNS + ["imdb_id"]),
        reviews=concat(reviews, REVIEW_COLUMNS),
        predictions=predictions,
        ground_truth=concat(gt_frames, GROUND_TRUTH_COLUMNS),
        models=pd.DataFrame({"model": models_seen, "score_direction": "higher"}, columns=MODEL_COLUMNS),
        problems=problems,
        source=str(root),
    )
