"""Reader and writer for the tidy layout: one Parquet (or CSV) file per table.

See ARCHITECTURE.md for the columns.  Tables may come from a folder or from
in-memory uploads (name → bytes); only Parquet and CSV are ever parsed, never
pickles.
"""

from __future__ import annotations

import io
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from kweval.data.dataset import (
    GROUND_TRUTH_COLUMNS,
    MODEL_COLUMNS,
    MOVIE_COLUMNS,
    PREDICTION_COLUMNS,
    REVIEW_COLUMNS,
    SCORE_DIRECTIONS,
    Dataset,
    Problem,
)

TABLES = {
    "predictions": PREDICTION_COLUMNS,
    "ground_truth": GROUND_TRUTH_COLUMNS,
    "reviews": ["movie", "review_id"],
    "movies": ["movie"],
    "models": ["model"],
}
REQUIRED = ("predictions", "ground_truth")
SUFFIXES = (".parquet", ".csv")
_STRING_COLUMNS = {"movie", "review_id", "model", "keyword", "title", "text", "score_direction"}


def table_files(folder: Path) -> dict[str, Path]:
    """The tidy table files present in `folder` (Parquet preferred over CSV)."""
    found: dict[str, Path] = {}
    for name in TABLES:
        for suffix in SUFFIXES:
            candidate = folder / f"{name}{suffix}"
            if candidate.is_file():
                found[name] = candidate
                break
    return found


def is_tidy(folder: Path) -> bool:
    return "predictions" in table_files(folder)


def _parse(name: str, data: bytes | Path, problems: list[Problem]) -> pd.DataFrame | None:
    source = data.name if isinstance(data, Path) else name
    raw = data.read_bytes() if isinstance(data, Path) else data
    try:
        if source.endswith(".csv"):
            frame = pd.read_csv(io.BytesIO(raw), dtype={c: "string" for c in _STRING_COLUMNS}, keep_default_na=True)
        else:
            frame = pd.read_parquet(io.BytesIO(raw))
    except Exception as exc:  # unreadable table: a data problem, reported and skipped
        problems.append(Problem(source, f"unreadable ({type(exc).__name__}: {str(exc)[:200]}); skipped"))
        return None
    table = Path(source).stem
    missing = [c for c in TABLES.get(table, []) if c not in frame.columns]
    if missing:
        problems.append(Problem(source, f"lacks column(s) {', '.join(missing)}; skipped"))
        return None
    if frame.empty:
        problems.append(Problem(source, "is empty; skipped"))
        return None
    return frame


def _as_str(series: pd.Series) -> pd.Series:
    """Strings stay strings; NA, empty and non-string cells become None."""
    return series.map(lambda v: v if isinstance(v, str) and v != "" else None).astype(object)


def _clean_predictions(frame: pd.DataFrame, source: str, problems: list[Problem]) -> pd.DataFrame:
    out = pd.DataFrame(
        {
            "movie": _as_str(frame["movie"].astype("string")),
            "review_id": _as_str(frame["review_id"].astype("string")),
            "model": _as_str(frame["model"].astype("string")),
            "rank": pd.to_numeric(frame["rank"], errors="coerce"),
            "keyword": frame["keyword"].map(lambda v: v if isinstance(v, str) and v != "" else None).astype(object),
            "score": pd.to_numeric(frame["score"], errors="coerce").astype("float64"),
        }
    )
    bad_key = out["movie"].isna() | out["review_id"].isna() | out["model"].isna()
    if bad_key.any():
        problems.append(Problem(source, f"{int(bad_key.sum())} row(s) without movie, review_id or model; dropped"))
    bad_rank = ~bad_key & (out["rank"].isna() | (out["rank"] < 0))
    if bad_rank.any():
        problems.append(Problem(source, f"{int(bad_rank.sum())} row(s) with a missing or negative rank; dropped"))
    out = out[~(bad_key | bad_rank)].copy()
    out["rank"] = out["rank"].astype("int64")
    # keep the file's order for equal ranks; order lists by rank
    out = out.sort_values(["movie", "review_id", "model", "rank"], kind="stable")
    order = pd.unique(frame["movie"].astype("string").dropna())
    out["movie"] = pd.Categorical(out["movie"], categories=list(order), ordered=True)
    out = out.sort_values("movie", kind="stable")
    out["movie"] = out["movie"].astype(object)
    return out.reset_index(drop=True)


def _clean_ground_truth(frame: pd.DataFrame, source: str, problems: list[Problem]) -> pd.DataFrame:
    out = pd.DataFrame(
        {
            "movie": _as_str(frame["movie"].astype("string")),
            "rank": pd.to_numeric(frame["rank"], errors="coerce"),
            "keyword": frame["keyword"].map(lambda v: v if isinstance(v, str) else None).astype(object),
            "helpful": pd.to_numeric(frame["helpful"], errors="coerce") if "helpful" in frame else np.nan,
            "not_helpful": pd.to_numeric(frame["not_helpful"], errors="coerce") if "not_helpful" in frame else np.nan,
        }
    )
    bad = out["movie"].isna() | out["rank"].isna()
    if bad.any():
        problems.append(Problem(source, f"{int(bad.sum())} row(s) without movie or rank; dropped"))
    out = out[~bad].sort_values(["movie", "rank"], kind="stable")
    # ranks become positions 0..n-1 in rank order
    out["rank"] = out.groupby("movie", sort=False).cumcount().astype("int64")
    return out.reset_index(drop=True)


def read_tidy_tables(sources: Mapping[str, bytes | Path], origin: str = "upload") -> Dataset:
    """Build a Dataset from tidy tables given as {file name: bytes or Path}.

    File names decide the table (`predictions.csv`, `ground_truth.parquet`, ...).
    Missing optional tables are derived; every unusable file is named in `problems`.
    """
    problems: list[Problem] = []
    frames: dict[str, pd.DataFrame] = {}
    for name, data in sources.items():
        table = Path(name).stem
        if table not in TABLES or Path(name).suffix not in SUFFIXES:
            problems.append(Problem(name, "not a tidy table (expected predictions/ground_truth/reviews/movies/models .parquet or .csv); ignored"))
            continue
        frame = _parse(name, data, problems)
        if frame is not None:
            frames[table] = frame
    for table in REQUIRED:
        if table not in frames and not any(p.source.startswith(table) for p in problems):
            problems.append(Problem(f"{table}.parquet", "not found"))

    predictions = (
        _clean_predictions(frames["predictions"], "predictions", problems)
        if "predictions" in frames
        else pd.DataFrame({c: pd.Series(dtype="object") for c in PREDICTION_COLUMNS})
    )
    ground_truth = (
        _clean_ground_truth(frames["ground_truth"], "ground_truth", problems)
        if "ground_truth" in frames
        else pd.DataFrame({c: pd.Series(dtype="object") for c in GROUND_TRUTH_COLUMNS})
    )

    if "reviews" in frames:
        rv = frames["reviews"].copy()
        rv["movie"] = _as_str(rv["movie"].astype("string"))
        rv["review_id"] = _as_str(rv["review_id"].astype("string"))
        rv = rv[rv["movie"].notna() & rv["review_id"].notna()]
        for col in ("text", "title"):
            rv[col] = _as_str(rv[col].astype("string")) if col in rv else None
        rv["rating"] = pd.to_numeric(rv["rating"], errors="coerce") if "rating" in rv else np.nan
        rv = rv.drop_duplicates(["movie", "review_id"])
        reviews = rv[REVIEW_COLUMNS + [c for c in rv.columns if c not in REVIEW_COLUMNS]].reset_index(drop=True)
    else:
        keys = predictions[["movie", "review_id"]].drop_duplicates()
        reviews = keys.assign(text=None, title=None, rating=np.nan).reset_index(drop=True)

    movie_order = list(dict.fromkeys(list(predictions["movie"]) + list(reviews["movie"]) + list(ground_truth["movie"])))
    titles: dict[str, str] = {}
    if "movies" in frames:
        mv = frames["movies"]
        title_col = mv["title"] if "title" in mv else mv["movie"]
        titles = {str(m): str(t) for m, t in zip(mv["movie"], title_col) if isinstance(m, str) and isinstance(t, str)}
        movie_order = list(dict.fromkeys([str(m) for m in mv["movie"] if isinstance(m, str)] + movie_order))
    movies = pd.DataFrame({"movie": movie_order, "title": [titles.get(m, m) for m in movie_order]}, columns=MOVIE_COLUMNS)

    model_order = list(dict.fromkeys(predictions["model"]))
    directions: dict[str, str] = {}
    if "models" in frames:
        md = frames["models"]
        # the models table, when given, decides the display order
        model_order = [m for m in dict.fromkeys(md["model"]) if isinstance(m, str)] + [
            m for m in model_order if m not in set(md["model"])
        ]
        for name, direction in zip(md["model"], md["score_direction"] if "score_direction" in md else ["higher"] * len(md)):
            if not isinstance(name, str):
                continue
            if direction not in SCORE_DIRECTIONS:
                problems.append(Problem("models", f"model {name!r}: score_direction {direction!r} is not higher/lower; using higher"))
                direction = "higher"
            directions[name] = direction
    models = pd.DataFrame({"model": model_order, "score_direction": [directions.get(m, "higher") for m in model_order]}, columns=MODEL_COLUMNS)
    return Dataset(movies, reviews, predictions, ground_truth, models, problems, source=origin)


def read_tidy(folder: Path) -> Dataset:
    """Load a tidy-layout folder."""
    return read_tidy_tables({p.name: p for p in table_files(folder).values()}, origin=str(folder))


def write_tidy(dataset: Dataset, folder: Path, fmt: str = "parquet") -> list[Path]:
    """Write `dataset` in the tidy layout; returns the files written."""
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name, frame in (
        ("movies", dataset.movies),
        ("reviews", dataset.reviews),
        ("predictions", dataset.predictions),
        ("ground_truth", dataset.ground_truth),
        ("models", dataset.models),
    ):
        path = folder / f"{name}.{fmt}"
        if fmt == "parquet":
            frame.to_parquet(path, index=False)
        elif fmt == "csv":
            frame.to_csv(path, index=False)
        else:
            raise ValueError(f"unknown format {fmt!r}; choose parquet or csv")
        written.append(path)
    return written
