"""Reader and writer for the tidy layout: one Parquet (or CSV) file per table.

See ARCHITECTURE.md for the columns.  Tables may come from a folder or from
in-memory uploads (name → bytes); only Parquet and CSV are ever parsed, never
pickles.

The reader parses each file (`_parse`: Parquet through Arrow for the large
tables, CSV with text key columns), hands each table to its cleaning step
(`kweval.data.tidy_tables`, reading columns by `kweval.data.columns`) and
derives the optional tables (movies, models) from the others.
"""

from __future__ import annotations

import csv
import io
import os
from collections.abc import Callable, Mapping
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa

from kweval._arrays import (
    factorize_runs,
)
from kweval._arrays import object_column as object_column
from kweval.data import columns as cols
from kweval.data.dataset import (
    GROUND_TRUTH_COLUMNS,
    MODEL_COLUMNS,
    MOVIE_COLUMNS,
    PREDICTION_COLUMNS,
    SCORE_DIRECTIONS,
    Dataset,
    Problem,
)
from kweval.data.formulas import unguard_column
from kweval.data.tidy_tables import clean_gt_table, clean_predictions_table, clean_reviews_table
from kweval.files import replace_all_or_none

TABLES = {
    "predictions": PREDICTION_COLUMNS,
    "ground_truth": ["movie", "rank", "keyword"],  # helpful, not_helpful optional (NaN); review_id optional
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
            if os.path.isfile(candidate):
                found[name] = candidate
                break
    return found


def is_tidy(folder: Path) -> bool:
    return "predictions" in table_files(folder)


_ARROW_TABLES = (
    "predictions",
    "reviews",
    "ground_truth",
)  # large tables: kept as Arrow tables and cleaned column by column


def _parse(name: str, data: bytes | Path, problems: list[Problem]) -> pd.DataFrame | pa.Table | None:
    source = data.name if isinstance(data, Path) else name
    table = Path(source).stem
    try:
        if source.endswith(".csv"):
            raw = data.read_bytes() if isinstance(data, Path) else data
            frame = pd.read_csv(io.BytesIO(raw), dtype={c: "string" for c in _STRING_COLUMNS}, keep_default_na=True)
            frame = frame.apply(unguard_column)  # cells guarded against formulas by kweval's writers, as written
        elif (
            table == "ground_truth"
        ):  # read as pd.read_parquet read it: its index columns are no columns, its errors name the source
            frame = cols.without_pandas_index(cols.read_arrow(data, name_source_in_errors=True))
        elif table in _ARROW_TABLES:
            frame = cols.read_arrow(data)
        else:
            frame = pd.read_parquet(data if isinstance(data, Path) else io.BytesIO(data))
    except Exception as exc:  # unreadable table: a data problem, reported and skipped
        problems.append(Problem(source, f"unreadable ({type(exc).__name__}: {str(exc)[:200]}); skipped"))
        return None
    columns = frame.column_names if isinstance(frame, pa.Table) else frame.columns
    missing = [c for c in TABLES.get(table, []) if c not in columns]
    if missing:
        problems.append(Problem(source, f"lacks column(s) {', '.join(missing)}; skipped"))
        return None
    if (frame.num_rows == 0 or frame.num_columns == 0) if isinstance(frame, pa.Table) else frame.empty:
        problems.append(Problem(source, "is empty; skipped"))
        return None
    return frame


def _in_order_of_appearance(column: pd.Series) -> list:
    """The distinct values of a key column in order of first appearance (`pd.unique`), hashing one value per run of
    equal rows."""
    return factorize_runs(column.to_numpy(), use_na_sentinel=False)[1].tolist()


def read_tidy_tables(sources: Mapping[str, bytes | Path], origin: str = "upload") -> Dataset:
    """Build a Dataset from tidy tables given as {file name: bytes or Path}.

    File names decide the table (`predictions.csv`, `ground_truth.parquet`, ...).
    Missing optional tables are derived; every unusable file is named in `problems`.
    """
    problems: list[Problem] = []
    frames = _parse_all(sources, problems)
    if "predictions" in frames:  # popped: the cleaning step drops the last reference to the Arrow table
        predictions, pair_start, pred_movies, pred_models = clean_predictions_table(
            frames.pop("predictions"), "predictions", problems
        )
    else:
        predictions = pd.DataFrame({c: pd.Series(dtype="object") for c in PREDICTION_COLUMNS})
        pair_start = np.zeros(0, dtype=np.int64)
        pred_movies, pred_models = [], []
    if "ground_truth" in frames:
        ground_truth, unranked = clean_gt_table(frames.pop("ground_truth"), "ground_truth", problems)
    else:
        ground_truth, unranked = pd.DataFrame({c: pd.Series(dtype="object") for c in GROUND_TRUTH_COLUMNS}), set()
    if "reviews" in frames:
        reviews = clean_reviews_table(frames.pop("reviews"))
    else:
        keys = predictions[["movie", "review_id"]].iloc[pair_start]
        reviews = keys.assign(text=None, title=None, rating=np.nan).reset_index(drop=True)
    seen = [*pred_movies, *_in_order_of_appearance(reviews["movie"]), *_in_order_of_appearance(ground_truth["movie"])]
    movies = _movies_table(frames.get("movies"), list(dict.fromkeys(seen)), unranked)
    models = _models_table(frames.get("models"), pred_models, problems)
    del frames
    # the Arrow tables are consumed: hand their freed buffers back to the system
    pa.default_memory_pool().release_unused()
    return Dataset(movies, reviews, predictions, ground_truth, models, problems, source=origin)


def _parse_all(sources: Mapping[str, bytes | Path], problems: list[Problem]) -> dict[str, pd.DataFrame | pa.Table]:
    """Each usable file as its table (name -> frame); files that are no tidy table, or unreadable, in `problems`."""
    frames: dict[str, pd.DataFrame | pa.Table] = {}
    for name, data in sources.items():
        table = Path(name).stem
        if table not in TABLES or Path(name).suffix not in SUFFIXES:
            problems.append(
                Problem(
                    name,
                    "not a tidy table (expected predictions/ground_truth/reviews/movies/models .parquet or .csv); "
                    "ignored",
                )
            )
            continue
        frame = _parse(name, data, problems)
        if frame is not None:
            frames[table] = frame
    for table in REQUIRED:
        if table not in frames and not any(p.source.startswith(table) for p in problems):
            problems.append(Problem(f"{table}.parquet", "not found"))
    return frames


def _movies_table(mv: pd.DataFrame | None, movie_order: list[str], unranked: set[str]) -> pd.DataFrame:
    """The movies table: the given one's movies first (then those only the other tables name), its titles and its
    optional columns (ranked: GT order matters; language); unranked GT read from the GT where not given."""
    titles: dict[str, str] = {}
    extra: dict[str, dict] = {}
    if mv is not None:
        title_col = mv["title"] if "title" in mv else mv["movie"]
        titles = {str(m): str(t) for m, t in zip(mv["movie"], title_col) if isinstance(m, str) and isinstance(t, str)}
        movie_order = list(dict.fromkeys([str(m) for m in mv["movie"] if isinstance(m, str)] + movie_order))
        for col in ("ranked", "language"):
            if col in mv:
                extra[col] = {
                    m: v
                    for m, v in zip(mv["movie"], mv[col])
                    if isinstance(m, str) and not (isinstance(v, float) and v != v)
                }
    movies = pd.DataFrame(
        {"movie": movie_order, "title": [titles.get(m, m) for m in movie_order]}, columns=MOVIE_COLUMNS
    )
    if unranked or "ranked" in extra:
        given = extra.pop("ranked", {})
        movies["ranked"] = [given.get(m, m not in unranked) for m in movie_order]
    for col, values in extra.items():
        movies[col] = [values.get(m) for m in movie_order]
    return movies


def _models_table(md: pd.DataFrame | None, pred_models: list, problems: list[Problem]) -> pd.DataFrame:
    """The models table: the given one decides the display order (then the models only the predictions name), and
    each model's score direction (higher where missing or unreadable, said in `problems`)."""
    model_order = list(pred_models)
    directions: dict[str, str] = {}
    if md is not None:
        model_order = [m for m in dict.fromkeys(md["model"]) if isinstance(m, str)] + [
            m for m in model_order if m not in set(md["model"])
        ]
        for name, direction in zip(
            md["model"], md["score_direction"] if "score_direction" in md else ["higher"] * len(md)
        ):
            if not isinstance(name, str):
                continue
            if not isinstance(direction, str) or direction.strip() == "":
                problems.append(Problem("models", f"model {name!r}: no score_direction; using higher"))
                direction = "higher"
            elif direction.strip().lower() not in SCORE_DIRECTIONS:
                problems.append(
                    Problem(
                        "models", f"model {name!r}: score_direction {direction!r} is not higher/lower; using higher"
                    )
                )
                direction = "higher"
            directions[name] = direction.strip().lower()
    return pd.DataFrame(
        {"model": model_order, "score_direction": [directions.get(m, "higher") for m in model_order]},
        columns=MODEL_COLUMNS,
    )


def read_tidy(folder: Path) -> Dataset:
    """Load a tidy-layout folder."""
    return read_tidy_tables({p.name: p for p in table_files(folder).values()}, origin=str(folder))


def csv_quoting(table: pd.DataFrame) -> int:
    """The `csv` quoting mode that keeps `table` readable: QUOTE_MINIMAL, or QUOTE_ALL when a text cell holds a CR.

    The csv module quotes a field holding "\n" but not one holding a lone "\r"
    (with "\n" line ends), which readers take as a line break; quoting every
    field then is rare and leaves the usual output unchanged.
    """
    for col in table.columns:
        if isinstance(col, str) and "\r" in col:
            return csv.QUOTE_ALL
        if table[col].dtype == object or pd.api.types.is_string_dtype(table[col]):
            try:
                if table[col].str.contains("\r", regex=False, na=False).any():
                    return csv.QUOTE_ALL
            except AttributeError:  # no string in the column
                continue
    return csv.QUOTE_MINIMAL


def write_tidy(dataset: Dataset, folder: Path, fmt: str = "parquet") -> list[Path]:
    """Write `dataset` in the tidy layout; returns the files written.

    The tables are renamed into place only once all are written
    (`kweval.files.replace_all_or_none`), so a failed write (full disk,
    file-size limit) leaves no truncated table and no mix of old and new
    tables; the OSError is raised.
    """
    if fmt not in ("parquet", "csv"):
        raise ValueError(f"unknown format {fmt!r}; choose parquet or csv")
    folder.mkdir(parents=True, exist_ok=True)
    tables = (
        ("movies", dataset.movies),
        ("reviews", dataset.reviews),
        ("predictions", dataset.predictions),
        ("ground_truth", dataset.ground_truth),
        ("models", dataset.models),
    )

    def writer(frame: pd.DataFrame) -> Callable[[str], None]:
        if fmt == "parquet":
            return lambda tmp: frame.to_parquet(tmp, index=False)
        return lambda tmp: frame.to_csv(tmp, index=False, quoting=csv_quoting(frame))

    return replace_all_or_none([(folder / f"{name}.{fmt}", writer(frame)) for name, frame in tables])
