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

import gc
import itertools
import math
import numbers
import operator
import os
from pathlib import Path
from typing import cast

import numpy as np
import pandas as pd

from kweval._arrays import object_array, object_column
from kweval.data.dataset import (
    GROUND_TRUTH_COLUMNS,
    MODEL_COLUMNS,
    MOVIE_COLUMNS,
    PREDICTION_COLUMNS,
    REVIEW_COLUMNS,
    Dataset,
    Problem,
    duplicate_lists_problem,
)
from kweval.files import os_error_reason

GT_FILE = "keywords_ground_truth.pkl"
KW_DIR = "Extracted_Keywords"
REVIEWS_DIR = "Reviews_By_Movie"
MODEL_PREFIX = "keywords_"


def find_root(path: Path) -> Path | None:
    """The folder holding `Extracted_Keywords/`: `path` itself or its `Dataset/` child."""
    for candidate in (path, path / "Dataset"):
        if os.path.isdir(candidate / KW_DIR):  # False, not an error, for an over-long path or a link loop
            return candidate
    return None


def file_size(path: Path) -> int:
    """Size of the file at `path`, 0 when it cannot be read (the reader names the problem)."""
    try:
        return path.stat().st_size
    except OSError:
        return 0


def movie_files(root: Path) -> dict[str, Path]:
    """Movie -> its predictions file (`Extracted_Keywords/kw_<Movie>.pkl`), in file-name order."""
    return {path.stem[len("kw_") :]: path for path in sorted((root / KW_DIR).glob("kw_*.pkl"))}


def _read_pickle(path: Path, problems: list[Problem], what: str) -> pd.DataFrame | None:
    try:
        frame = pd.read_pickle(path)
    except OSError as exc:
        problems.append(Problem(path.name, f"unreadable {what}: {os_error_reason(path, exc)}; skipped"))
        return None
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


_NUMERIC_TYPES = {float, int, np.float64, np.float32, np.float16, np.int64, np.int32}
_LIST_TYPES = (list, tuple, np.ndarray)
_FIRST, _SECOND = operator.itemgetter(0), operator.itemgetter(1)


def _split_entries(entries: list) -> tuple[np.ndarray, np.ndarray, int]:
    """Keywords (object array: str or None), scores (float64 array, NaN where missing) of raw entries,
    and how many entries have no string keyword.

    The common case, `(str, number, ...)` tuples, is split with C-level
    itemgetters and type sets; any other shape falls back to the careful
    per-entry path.
    """
    n = len(entries)
    if n and set(map(type, entries)) == {tuple}:
        try:
            kws = list(map(_FIRST, entries))
            score_types = set(map(type, map(_SECOND, entries)))
        except IndexError:  # a tuple with fewer than two items
            score_types = set()
        if score_types and score_types <= _NUMERIC_TYPES and set(map(type, kws)) == {str}:
            return object_array(kws), np.fromiter(map(_SECOND, entries), dtype="float64", count=n), 0
    pairs = [_entry(e) for e in entries]
    n_bad = sum(1 for kw, _ in pairs if kw is None)
    return object_array([kw for kw, _ in pairs]), np.fromiter((sc for _, sc in pairs), dtype="float64", count=n), n_bad


def _flatten(
    review_ids: np.ndarray, model: str, cells: list[object], source: str, problems: list[Problem]
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(review_id, rank, keyword, score) arrays of one model's column, one row per entry.

    Missing cells give no rows (the review is skipped); an empty list gives one
    row with no keyword (a real, empty prediction).
    """
    n_cells = len(cells)
    lists: list[list | tuple | np.ndarray]
    if set(map(type, cells)) == {list}:  # the usual case: every cell is a list
        lists = cast("list[list | tuple | np.ndarray]", cells)  # every cell is a list: checked just above
        lengths = np.fromiter(map(len, lists), dtype=np.int64, count=n_cells)
        not_list = 0
    else:
        lengths = np.full(n_cells, -1, dtype=np.int64)
        lists = []
        not_list = 0
        for i, cell in enumerate(cells):
            if isinstance(cell, _LIST_TYPES):
                lengths[i] = len(cell)
                lists.append(cell)
            elif not _is_missing(cell):
                not_list += 1
    entries = list(itertools.chain.from_iterable(lists))
    kws, scores, bad_entries = _split_entries(entries)

    rows_per_cell = np.where(lengths == 0, 1, np.maximum(lengths, 0))
    n_rows = int(rows_per_cell.sum())
    starts = np.cumsum(rows_per_cell) - rows_per_cell
    rank = np.arange(n_rows, dtype=np.int64) - np.repeat(starts, rows_per_cell)
    rid = np.repeat(review_ids, rows_per_cell)
    if len(entries) == n_rows:
        keyword, score = kws, scores
    else:  # an empty list's row: no keyword, no score
        is_entry = np.repeat(lengths > 0, rows_per_cell)
        keyword = np.full(n_rows, None, dtype=object)
        keyword[is_entry] = kws
        score = np.full(n_rows, np.nan)
        score[is_entry] = scores
    if not_list:
        problems.append(
            Problem(
                f"{source} [{MODEL_PREFIX}{model}]",
                f"{not_list} cell(s) are not lists; those reviews are skipped for {model}",
            )
        )
    if bad_entries:
        problems.append(
            Problem(f"{source} [{MODEL_PREFIX}{model}]", f"{bad_entries} entr(y/ies) without a string keyword; dropped")
        )
    return rid, rank, keyword, score


def _as_strings(column: pd.Series) -> list:
    """The column's values as strings, missing ones as NaN: `column.astype(str)`, without building a str-dtype array."""
    values = column.tolist()
    if set(map(type, values)) <= {str}:
        return values
    return [math.nan if _is_missing(v) else str(v) for v in values]


def _lookup(column: pd.Series, where: np.ndarray, found: np.ndarray) -> np.ndarray:
    """column's values at rows `where` (an object array), NaN where a review was not found."""
    out = np.full(len(where), np.nan, dtype=object)
    out[found] = column.to_numpy(dtype=object)[where[found]]
    return out


def read_dnlp(path: Path, movies: list[str] | None = None) -> Dataset:
    """Load a DNLP-layout folder (only the files of `movies`, when given); every unreadable part is skipped and named in
    `problems`."""
    # Unpickling and flattening allocate millions of small tuples, each allocation
    # counting towards a cyclic-GC pass over everything loaded so far; none of it
    # forms cycles, so collection waits until the tables are built.
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        return _read_dnlp(path, movies)
    finally:
        if was_enabled:
            gc.enable()


def _read_dnlp(path: Path, only: list[str] | None) -> Dataset:
    """`read_dnlp` with the garbage collector paused: the movie files one by one, then the tables concatenated once."""
    root = find_root(path) or path
    problems: list[Problem] = []
    gt_raw = _read_gt_file(root, problems)
    gt_movie_ids = np.array(_as_strings(gt_raw["Movie_ID"]), dtype=object) if gt_raw is not None else None
    movies: list[dict] = []
    reviews: list[pd.DataFrame] = []
    gt_frames: list[pd.DataFrame] = []
    pred_parts: list[tuple] = []
    models_seen: list[str] = []
    wanted = None if only is None else set(only)
    for movie, kw_path in movie_files(root).items():
        if wanted is not None and movie not in wanted:
            continue
        frame = _read_pickle(kw_path, problems, "predictions file")
        if frame is None:
            continue
        model_cols = [c for c in frame.columns if isinstance(c, str) and c.startswith(MODEL_PREFIX)]
        if "Review_ID" not in frame.columns or not model_cols:
            problems.append(Problem(kw_path.name, "lacks a Review_ID column or any keywords_<model> column; skipped"))
            continue
        frame, review_ids = _first_row_of_each_review(frame, model_cols, kw_path.name, problems)
        imdb_id = None
        if "Movie_ID" in frame.columns and frame["Movie_ID"].notna().any():
            imdb_id = str(frame["Movie_ID"].dropna().iloc[0])
        rv, title = _movie_reviews(root, movie, frame, object_array(review_ids), problems)
        reviews.append(rv)
        movies.append({"movie": movie, "title": title, "imdb_id": imdb_id})
        ids = object_array(review_ids)
        for col in model_cols:
            model = col[len(MODEL_PREFIX) :]
            if model not in models_seen:
                models_seen.append(model)
            rid, rank, keyword, score = _flatten(ids, model, frame[col].tolist(), kw_path.name, problems)
            pred_parts.append((movie, model, rid, rank, keyword, score))
        if gt_raw is not None and gt_movie_ids is not None:
            if imdb_id is None:
                problems.append(
                    Problem(movie, "no Movie_ID in its predictions file, so its ground truth cannot be found")
                )
            else:
                gt_frames.append(_movie_gt(gt_raw[gt_movie_ids == imdb_id], movie))

    def concat(parts: list[pd.DataFrame], columns: list[str]) -> pd.DataFrame:
        if not parts:
            return pd.DataFrame({c: pd.Series(dtype="object") for c in columns})
        return pd.concat(parts, ignore_index=True)

    return Dataset(
        movies=pd.DataFrame(movies, columns=MOVIE_COLUMNS + ["imdb_id"]),
        reviews=concat(reviews, REVIEW_COLUMNS),
        predictions=_predictions_table(pred_parts),
        ground_truth=concat(gt_frames, GROUND_TRUTH_COLUMNS),
        models=pd.DataFrame({"model": models_seen, "score_direction": "higher"}, columns=MODEL_COLUMNS),
        problems=problems,
        source=str(root),
    )


def _read_gt_file(root: Path, problems: list[Problem]) -> pd.DataFrame | None:
    """The ground-truth pickle (Movie_ID, Keyword, Helpful, Not_Helpful), or None (the reason in `problems`)."""
    gt_path = root / GT_FILE
    if not os.path.lexists(gt_path):  # a link loop or a folder is read, so its problem is named
        problems.append(Problem(GT_FILE, "not found; no movie has ground truth"))
        return None
    gt_raw = _read_pickle(gt_path, problems, "ground-truth file")
    if gt_raw is not None and not {"Movie_ID", "Keyword"} <= set(gt_raw.columns):
        problems.append(Problem(GT_FILE, "lacks the Movie_ID/Keyword columns; no ground truth"))
        return None
    if gt_raw is not None:
        cells = gt_raw["Keyword"].tolist()
        not_text = np.array([not isinstance(c, str) and not _is_missing(c) for c in cells], dtype=bool)
        if not_text.any():  # a list, a number: no keyword (the tidy reader's rule and message)
            example = cells[int(np.flatnonzero(not_text)[0])]
            problems.append(
                Problem(
                    GT_FILE,
                    f"{int(not_text.sum())} keyword cell(s) are not text (e.g. {type(example).__name__} "
                    f"{str(example)[:40]}); those GT rows are dropped",
                )
            )
            gt_raw = gt_raw[~not_text]
    return gt_raw


def _first_row_of_each_review(
    frame: pd.DataFrame, model_cols: list[str], source: str, problems: list[Problem]
) -> tuple[pd.DataFrame, list]:
    """The predictions file's rows with a Review_ID, a repeated review's first row only (as in the tidy reader; the
    lists dropped are counted in `problems`), and their review ids as text."""
    frame = frame[frame["Review_ID"].notna()]
    review_ids = _as_strings(frame["Review_ID"])
    repeated = pd.Series(review_ids, dtype=object).duplicated(keep="first").to_numpy()
    if repeated.any():
        dropped_cells = [
            cell for col in model_cols for cell in frame.loc[repeated, col].tolist() if not _is_missing(cell)
        ]
        n_rows = sum(max(len(c), 1) if isinstance(c, _LIST_TYPES) else 0 for c in dropped_cells)
        problems.append(duplicate_lists_problem(source, len(dropped_cells), n_rows))
        frame = frame[~repeated]
        review_ids = [rid for rid, again in zip(review_ids, repeated.tolist()) if not again]
    return frame, review_ids


def _movie_reviews(
    root: Path, movie: str, frame: pd.DataFrame, ids: np.ndarray, problems: list[Problem]
) -> tuple[pd.DataFrame, str]:
    """One movie's reviews table and title: texts from its predictions file, the rest (title, rating, date, missing
    texts) from Reviews_By_Movie/ when that file is there."""
    n_rv = len(ids)
    columns: dict[str, np.ndarray] = {"movie": np.full(n_rv, movie, dtype=object), "review_id": ids}
    if "Preprocessed_Review" in frame.columns:
        texts = frame["Preprocessed_Review"].tolist()
        columns["text"] = object_array([t if isinstance(t, str) else None for t in texts])
    else:
        columns["text"] = np.full(n_rv, None, dtype=object)
    columns["title"] = np.full(n_rv, None, dtype=object)
    columns["rating"] = np.full(n_rv, np.nan)
    title = movie
    extra_path = root / REVIEWS_DIR / f"{movie}.pkl"
    extra = _read_pickle(extra_path, problems, "reviews file") if os.path.lexists(extra_path) else None
    if extra is not None and "Review_ID" in extra.columns:
        extra = extra.drop_duplicates("Review_ID")
        # each review's row in the reviews file (-1: not there), as Series.map would look it up
        where = pd.Index(_as_strings(extra["Review_ID"]), dtype=object).get_indexer(ids)
        found = where >= 0
        if "Movie_Title" in extra.columns and extra["Movie_Title"].notna().any():
            title = str(extra["Movie_Title"].dropna().iloc[0])
        for src, dst in (("Review_Title", "title"), ("Rating", "rating"), ("Review_Date", "date")):
            if src in extra.columns:
                columns[dst] = _lookup(extra[src], where, found)
        if "Review_Text" in extra.columns:
            text = columns["text"]
            missing = np.flatnonzero(pd.isna(text))
            text[missing] = _lookup(extra["Review_Text"], where[missing], found[missing])
    rv = pd.DataFrame({name: (object_column(v) if v.dtype == object else v) for name, v in columns.items()}, copy=False)
    rv["rating"] = pd.to_numeric(rv["rating"], errors="coerce")
    return rv, title


def _movie_gt(g: pd.DataFrame, movie: str) -> pd.DataFrame:
    """One movie's GT rows of the ground-truth file, ranked in file order."""
    return pd.DataFrame(
        {
            "movie": movie,
            "rank": np.arange(len(g)),
            "keyword": g["Keyword"].tolist(),
            "helpful": pd.to_numeric(g["Helpful"], errors="coerce").tolist() if "Helpful" in g else np.nan,
            "not_helpful": pd.to_numeric(g["Not_Helpful"], errors="coerce").tolist() if "Not_Helpful" in g else np.nan,
        }
    )


def _predictions_table(parts: list[tuple]) -> pd.DataFrame:
    """One predictions table from per (movie, model) column arrays, concatenated once."""
    if not parts:
        return pd.DataFrame({c: pd.Series(dtype="object") for c in PREDICTION_COLUMNS})
    sizes = [len(p[2]) for p in parts]
    movies = object_array([p[0] for p in parts])
    models = object_array([p[1] for p in parts])
    return pd.DataFrame(
        {
            "movie": object_column(np.repeat(movies, sizes)),
            "review_id": object_column(np.concatenate([p[2] for p in parts])),
            "model": object_column(np.repeat(models, sizes)),
            "rank": np.concatenate([p[3] for p in parts]).astype("int64"),
            "keyword": object_column(np.concatenate([p[4] for p in parts])),
            "score": np.concatenate([p[5] for p in parts]).astype("float64"),
        },
        columns=PREDICTION_COLUMNS,
        copy=False,
    )
