"""Reader and writer for the tidy layout: one Parquet (or CSV) file per table.

See ARCHITECTURE.md for the columns.  Tables may come from a folder or from
in-memory uploads (name → bytes); only Parquet and CSV are ever parsed, never
pickles.

Why one module (about 600 lines): reading and writing share the layout's
rules (key columns, text and number checks, the stable row order, CSV
quoting), and each table's cleaning step works on Arrow or pandas columns
alike beside the reader that calls it; apart, the rules would be restated.
"""

from __future__ import annotations

import csv
import io
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from kweval._arrays import (
    empty_as_missing,
    factorize_runs,
    position_in_run,
    run_heads,
    sort_key,
    stable_order,
    take_codes,
    text_rank,
    with_missing,
)
from kweval._arrays import object_column as _object_column
from kweval.data.dataset import (
    GROUND_TRUTH_COLUMNS,
    MODEL_COLUMNS,
    MOVIE_COLUMNS,
    PREDICTION_COLUMNS,
    REVIEW_COLUMNS,
    SCORE_DIRECTIONS,
    Dataset,
    Problem,
    duplicate_lists_problem,
)
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
_KEY_COLUMNS = {"movie", "review_id", "model", "keyword"}  # repeated values: read dictionary-encoded


def _parse(name: str, data: bytes | Path, problems: list[Problem]) -> pd.DataFrame | pa.Table | None:
    source = data.name if isinstance(data, Path) else name
    table = Path(source).stem
    try:
        if source.endswith(".csv"):
            raw = data.read_bytes() if isinstance(data, Path) else data
            frame = pd.read_csv(io.BytesIO(raw), dtype={c: "string" for c in _STRING_COLUMNS}, keep_default_na=True)
        elif (
            table == "ground_truth"
        ):  # read as pd.read_parquet read it: its index columns are no columns, its errors name the source
            frame = _without_pandas_index(_read_arrow(data, name_source_in_errors=True))
        elif table in _ARROW_TABLES:
            frame = _read_arrow(data)
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


def _read_arrow(data: bytes | Path, name_source_in_errors: bool = False) -> pa.Table:
    """A Parquet table as Arrow, its string columns dictionary-encoded as stored (no Python strings yet).

    `name_source_in_errors`: an unreadable file raises `pq.read_table`'s error
    (which names the source, as `pd.read_parquet`'s does) rather than `pq.read_schema`'s.
    """
    import pyarrow.parquet as pq

    source = str(data) if isinstance(data, Path) else pa.BufferReader(data)
    try:
        schema = pq.read_schema(source)
    except Exception:
        if not name_source_in_errors:
            raise
        return pq.read_table(
            str(data) if isinstance(data, Path) else pa.BufferReader(data)
        )  # raises, naming the source
    strings = [
        f.name
        for f in schema
        if f.name in _KEY_COLUMNS and (pa.types.is_string(f.type) or pa.types.is_large_string(f.type))
    ]
    if not isinstance(data, Path):
        source = pa.BufferReader(data)
    return pq.read_table(source, read_dictionary=strings)


def _without_pandas_index(table: pa.Table) -> pa.Table:
    """The table without the columns its pandas metadata names as the index: `pd.read_parquet` made them the index, not
    columns."""
    import json

    meta = (table.schema.metadata or {}).get(b"pandas")
    if not meta:
        return table
    try:
        index = [c for c in json.loads(meta).get("index_columns", []) if isinstance(c, str)]  # a RangeIndex is a dict
    except (ValueError, AttributeError):
        return table
    return table.drop_columns([c for c in index if c in table.column_names])


def _is_text(kind: pa.DataType) -> bool:
    if pa.types.is_dictionary(kind):
        kind = kind.value_type
    return pa.types.is_string(kind) or pa.types.is_large_string(kind)


def _arrow_codes(column: pa.ChunkedArray, empty_is_missing: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """(codes, distinct values) of a string column; code -1 for null and (`empty_is_missing`) for the empty string."""
    if not pa.types.is_dictionary(column.type):
        column = pc.dictionary_encode(column)
    if column.num_chunks == 0:
        return np.zeros(0, dtype=np.int32), np.zeros(0, dtype=object)
    column = column.unify_dictionaries()
    uniques = column.chunk(0).dictionary.to_numpy(zero_copy_only=False).astype(object)
    codes = np.concatenate(
        [c.indices.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int32, copy=False) for c in column.chunks]
    )
    return empty_as_missing(codes, uniques) if empty_is_missing else (codes, uniques)


def _key_codes(
    frame: pd.DataFrame | pa.Table, name: str, empty_is_missing: bool = True
) -> tuple[np.ndarray, np.ndarray]:
    """(codes, distinct values) of a key column read as text (`column.astype("string")`); code -1 for NA and
    (`empty_is_missing`) the empty string.

    With `empty_is_missing` the values are those `_as_str(column.astype("string"))` gives.
    """
    if isinstance(frame, pa.Table):
        column = frame.column(name)
        if _is_text(column.type):
            return _arrow_codes(column, empty_is_missing)
        series = column.to_pandas()
    else:
        series = frame[name]
    codes, uniques = pd.factorize(series.astype("string"))
    codes, uniques = codes.astype(np.int64), np.asarray(uniques, dtype=object)
    return empty_as_missing(codes, uniques) if empty_is_missing else (codes, uniques)


def _text_values(frame: pd.DataFrame | pa.Table, name: str, as_string: bool) -> np.ndarray:
    """A text column as an object array: str values stay, NA, empty and non-string cells become None.

    `as_string`: convert other types to text first (`astype("string")`), as for ids and titles.
    """
    if isinstance(frame, pa.Table):
        column = frame.column(name)
        if _is_text(column.type):
            if pa.types.is_dictionary(column.type):
                codes, uniques = _arrow_codes(column)
                return take_codes(uniques, codes)
            values = column.to_numpy(zero_copy_only=False).astype(object)
            values[pd.isna(values) | (values == "")] = None
            return values
        series = column.to_pandas()
    else:
        series = frame[name]
    if as_string:
        series = series.astype("string")
    return _as_str(series).to_numpy(dtype=object)


def _numbers(frame: pd.DataFrame | pa.Table, name: str) -> np.ndarray:
    """A numeric column as `pd.to_numeric(column, errors="coerce")` gives it, as an array.

    Booleans are not numbers here (True is no score of 1.0): a boolean column
    is all NaN, as boolean entries are in the DNLP reader.
    """
    if isinstance(frame, pa.Table):
        column = frame.column(name)
        if pa.types.is_boolean(column.type):
            return np.full(len(column), np.nan)
        if pa.types.is_integer(column.type) or pa.types.is_floating(column.type):
            # nulls become NaN (an integer column with nulls becomes float64), as through pandas
            return np.asarray(column.to_numpy(zero_copy_only=False))
        series = column.to_pandas()
    else:
        series = frame[name]
    if pd.api.types.is_bool_dtype(series):
        return np.full(len(series), np.nan)
    if series.dtype == object:
        series = series.map(lambda v: np.nan if isinstance(v, (bool, np.bool_)) else v)
    return pd.to_numeric(series, errors="coerce").to_numpy()


def _keyword_texts(series: pd.Series) -> pd.Series:
    """Strings stay strings (the empty one too), anything else becomes None; one Python string per distinct keyword."""
    if isinstance(series.dtype, pd.StringDtype):
        codes, uniques = pd.factorize(series)
        values = take_codes(np.asarray(uniques, dtype=object), codes)
        return pd.Series(values, index=series.index, dtype=object, copy=False)
    return series.map(lambda v: v if isinstance(v, str) else None).astype(object)


def _as_str(series: pd.Series) -> pd.Series:
    """Strings stay strings; NA, empty and non-string cells become None."""
    if isinstance(
        series.dtype, pd.StringDtype
    ):  # every cell a str or NA: one Python string per distinct value, shared by its rows
        codes, uniques = pd.factorize(series)
        distinct = np.asarray(uniques, dtype=object)
        distinct[distinct == ""] = None
        values = take_codes(distinct, codes)
        return pd.Series(values, index=series.index, dtype=object, copy=False)
    return series.map(lambda v: v if isinstance(v, str) and v != "" else None).astype(object)


def _clean_predictions(
    frame: pd.DataFrame | pa.Table, source: str, problems: list[Problem]
) -> tuple[pd.DataFrame, np.ndarray, list, list]:
    """The predictions table in list order, the row where each (movie, review_id) pair starts, and its movies and models
    in order of appearance.

    Rows without movie, review_id or model, or with a missing or negative rank,
    are dropped (and counted in `problems`).  Order: movies by first
    appearance in the file, then review_id and model (as text), then rank,
    then file order.  Keys are handled as integer codes; strings are only
    looked up at the end, once per kept row.
    """
    movie_c, movie_u = _key_codes(frame, "movie")
    review_c, review_u = _key_codes(frame, "review_id")
    model_c, model_u = _key_codes(frame, "model")
    rank = _numbers(frame, "rank")
    _report_nested_keys(frame, ("movie", "review_id", "model"), source, problems)
    _report_non_text_keywords(frame, source, problems)
    keyword_c, keyword_u = _keyword_codes(frame)
    score = _numbers(frame, "score").astype("float64", copy=False)
    del frame  # the caller's last reference: the Arrow table goes now

    bad_key = (movie_c < 0) | (review_c < 0) | (model_c < 0)
    if bad_key.any():
        problems.append(Problem(source, f"{int(bad_key.sum())} row(s) without movie, review_id or model; dropped"))
    with np.errstate(invalid="ignore"):
        bad_rank = ~bad_key & (pd.isna(rank) | (rank < 0))
    if bad_rank.any():
        problems.append(Problem(source, f"{int(bad_rank.sum())} row(s) with a missing or negative rank; dropped"))
    dropped = bad_key | bad_rank
    keep = np.flatnonzero(~dropped) if dropped.any() else None  # None: every row
    del bad_key, bad_rank, dropped

    # movies in order of first appearance in the file (every row counts); ids and models as text
    movie_rank = np.zeros(len(movie_u) + 1, dtype=np.int64)
    seen = pd.unique(movie_c)
    seen = seen[seen >= 0]
    movie_rank[seen] = np.arange(len(seen))
    order = stable_order(
        keep,
        len(movie_c),
        (movie_rank, movie_c),
        (text_rank(review_u), review_c),
        (text_rank(model_u), model_c),
        rank,
    )
    rows = keep if order is None else (order if keep is None else keep[order])  # None: every row, in file order
    del keep, order

    def take(values: np.ndarray) -> np.ndarray:
        return values if rows is None else values[rows]

    m, r, d = take(movie_c), take(review_c), take(model_c)
    later = _later_lists(m, r, d, take(rank), np.arange(len(movie_c)) if rows is None else rows)
    if later.any():
        n_lists = _count_pairs_with(later, m, r, d)
        problems.append(duplicate_lists_problem(source, n_lists, int(later.sum())))
        rows = np.flatnonzero(~later) if rows is None else rows[~later]
        m, r, d = take(movie_c), take(review_c), take(model_c)
    n = len(m)
    pair_start = (
        np.flatnonzero(np.concatenate(([True], (m[1:] != m[:-1]) | (r[1:] != r[:-1])))) if n else np.zeros(0, np.int64)
    )
    out = pd.DataFrame(
        {
            "movie": _object_column(movie_u[m]),
            "review_id": _object_column(review_u[r]),
            "model": _object_column(model_u[d]),
            "rank": take(rank).astype("int64"),
            "keyword": _object_column(keyword_u[take(keyword_c)]),
            "score": take(score),
        },
        columns=PREDICTION_COLUMNS,
        copy=False,
    )
    movie_order = movie_u[pd.unique(m)].tolist() if n else []
    model_order = model_u[pd.unique(d)].tolist() if n else []
    return out, pair_start, movie_order, model_order


def _later_lists(m: np.ndarray, r: np.ndarray, d: np.ndarray, rank: np.ndarray, file_row: np.ndarray) -> np.ndarray:
    """Which rows (sorted by pair, then rank) belong to a review × model pair's second or later list.

    A pair holds more than one list when a rank repeats.  Its rows are then
    read in file order, a new list starting wherever a rank repeats one of the
    current list; only the first list is kept (the first wins, as for a repeated keyword in
    docs/metrics.md §1 and for a repeated review in the DNLP reader).
    """
    n = len(m)
    later = np.zeros(n, dtype=bool)
    if n < 2:
        return later
    same_pair = (m[1:] == m[:-1]) & (r[1:] == r[:-1]) & (d[1:] == d[:-1])
    repeats = np.flatnonzero(same_pair & (rank[1:] == rank[:-1]))
    if len(repeats) == 0:
        return later
    pair_start = np.flatnonzero(np.concatenate(([True], ~same_pair)))
    pair_end = np.append(pair_start[1:], n)
    for p in np.unique(np.searchsorted(pair_start, repeats + 1, side="right") - 1).tolist():
        lo, hi = int(pair_start[p]), int(pair_end[p])
        in_file_order = lo + np.argsort(file_row[lo:hi], kind="stable")
        seen: set = set()
        first_list = True
        for i in in_file_order.tolist():
            if rank[i] in seen:
                first_list = False
            seen.add(rank[i])
            later[i] = not first_list
    return later


def _count_pairs_with(flags: np.ndarray, m: np.ndarray, r: np.ndarray, d: np.ndarray) -> int:
    """Number of distinct (m, r, d) pairs among the flagged rows."""
    keys = pd.DataFrame({"m": m[flags], "r": r[flags], "d": d[flags]})
    return int(len(keys.drop_duplicates()))


def _neither_text_nor_missing(value: object) -> bool:
    """A cell holding something other than text (a list, a number), as opposed to text or nothing."""
    if isinstance(value, str) or value is None or value is pd.NA:
        return False
    return not (isinstance(value, float) and np.isnan(value))


def _is_nested(kind: pa.DataType) -> bool:
    return pa.types.is_list(kind) or pa.types.is_large_list(kind) or pa.types.is_struct(kind) or pa.types.is_map(kind)


def _report_nested_keys(
    frame: pd.DataFrame | pa.Table, columns: tuple[str, ...], source: str, problems: list[Problem]
) -> None:
    """Name key columns whose cells are lists or records: they are read as their text, which is rarely what was
    meant."""
    if not isinstance(frame, pa.Table):
        return  # CSV cells are always text
    for name in columns:
        column = frame.column(name)
        if _is_nested(column.type):
            n = len(column) - column.null_count
            problems.append(
                Problem(source, f"{n} {name} cell(s) hold {column.type}, not one value per row; read as their text")
            )


def _report_non_text_keywords(frame: pd.DataFrame | pa.Table, source: str, problems: list[Problem]) -> None:
    """Name keyword cells that are not text (lists, numbers): they count as no keyword, which must not pass silently."""
    if isinstance(frame, pa.Table):
        column = frame.column("keyword")
        if _is_text(column.type):
            return
        n_bad = len(column) - column.null_count
        kind = "lists" if pa.types.is_list(column.type) or pa.types.is_large_list(column.type) else str(column.type)
    else:
        n_bad = int(frame["keyword"].map(_neither_text_nor_missing).sum())
        kind = "not text"
    if n_bad:
        problems.append(
            Problem(source, f"{n_bad} keyword cell(s) hold {kind}, not one keyword per row; those rows have no keyword")
        )


def _keyword_codes(frame: pd.DataFrame | pa.Table) -> tuple[np.ndarray, np.ndarray]:
    """The keyword column as (codes, values): str values stay, NA, empty and non-string cells are None (the last
    value)."""
    if isinstance(frame, pa.Table) and _is_text(frame.column("keyword").type):
        codes, uniques = _arrow_codes(frame.column("keyword"))
        return codes, with_missing(uniques)  # code -1 reads None
    values = _text_values(frame, "keyword", as_string=False)
    return np.arange(len(values)), values


@dataclass
class _GtRows:
    """The GT table's rows with a movie and a rank, in list order, and what the cleaning and the unranked rule read of
    them.

    Keys are integer codes (one Python string per distinct value): per-document
    GT has millions of rows.  Rows whose movie is the empty string are still
    here (the unranked rule counts that movie; the cleaning drops it).
    """

    rows: (
        np.ndarray
    )  # positions in the table, sorted by movie, then review_id (none first), then rank; ties in file order
    movie: np.ndarray  # per sorted row: movie code (into movie_values)
    doc: np.ndarray  # per sorted row: review_id code (into doc_values); -1: the movie's own list
    rank: np.ndarray  # per sorted row: a non-negative integer that sorts as its rank (`sort_key`)
    movie_values: np.ndarray
    doc_values: np.ndarray
    rankless_movies: np.ndarray  # movie codes with a row but no rank (NaN) in some row


def _gt_numbers(frame: pd.DataFrame | pa.Table) -> dict[str, pd.Series]:
    """rank, helpful and not_helpful (those present) as `pd.to_numeric(errors="coerce")` reads pandas' reading of the
    table."""
    names = [c for c in ("rank", "helpful", "not_helpful") if c in _columns(frame)]
    table = (
        frame.select(names).to_pandas() if isinstance(frame, pa.Table) else frame[names]
    )  # Arrow: dtypes as pd.read_parquet gives them
    return {c: pd.to_numeric(table[c], errors="coerce").reset_index(drop=True) for c in names}


def _columns(frame: pd.DataFrame | pa.Table) -> list[str]:
    return frame.column_names if isinstance(frame, pa.Table) else list(frame.columns)


def _gt_keywords(frame: pd.DataFrame | pa.Table) -> tuple[np.ndarray, np.ndarray, int]:
    """The GT keyword column as (codes, values, number of cells that are not text): str values stay (the empty one too),
    anything else is None (the last value)."""
    if isinstance(frame, pa.Table) and _is_text(frame.column("keyword").type):
        codes, uniques = _arrow_codes(frame.column("keyword"), empty_is_missing=False)
        return codes, with_missing(uniques), 0  # code -1 (null) reads None
    series = frame.select(["keyword"]).to_pandas()["keyword"] if isinstance(frame, pa.Table) else frame["keyword"]
    values = _keyword_texts(series).to_numpy(dtype=object)
    # a string column holds text or NA only
    n_not_text = 0 if isinstance(series.dtype, pd.StringDtype) else int(series.map(_neither_text_nor_missing).sum())
    return np.arange(len(values)), values, n_not_text


def _gt_rows(frame: pd.DataFrame | pa.Table, rank: pd.Series) -> _GtRows:
    """The GT rows with a movie (the empty string counts) and a rank, sorted into lists (see `_GtRows`)."""
    movie_c, movie_u = _key_codes(frame, "movie", empty_is_missing=False)
    if "review_id" in _columns(frame):
        doc_c, doc_u = _key_codes(frame, "review_id")  # no id and the empty one: the movie's own list
    else:
        doc_c, doc_u = np.full(len(movie_c), -1, dtype=np.int64), np.zeros(0, dtype=object)
    no_rank = rank.isna().to_numpy(dtype=bool)
    keep = np.flatnonzero((movie_c >= 0) & ~no_rank)
    rank_c = np.zeros(len(movie_c), dtype=np.int64)
    rank_c[keep] = sort_key(rank.iloc[keep].to_numpy())  # numeric order, as sort_values
    doc_rank = text_rank(doc_u, missing_first=True)  # code -1 (the movie's own list) sorts first
    order = stable_order(keep, len(movie_c), (text_rank(movie_u), movie_c), (doc_rank, doc_c), rank_c)
    rows = keep if order is None else keep[order]
    return _GtRows(
        rows, movie_c[rows], doc_c[rows], rank_c[rows], movie_u, doc_u, np.unique(movie_c[no_rank & (movie_c >= 0)])
    )


def _clean_ground_truth(
    frame: pd.DataFrame | pa.Table, source: str, problems: list[Problem]
) -> tuple[pd.DataFrame, set[str]]:
    """The GT table as movie, rank (positions 0..n-1 per GT list), keyword, helpful, not_helpful (+ review_id: a
    review's own list), and its unranked movies.

    Rows without movie or rank are dropped; lists are sorted by movie and
    review_id (as text; a movie's own list first), rows by rank, ties in file
    order.  Read as codes from Arrow or pandas columns alike.
    """
    numbers = _gt_numbers(frame)
    keyword_c, keyword_values, n_not_text = _gt_keywords(frame)
    has_doc = "review_id" in _columns(frame)
    gt = _gt_rows(frame, numbers["rank"])
    unranked = _unranked_movies(gt)
    n_all = len(keyword_c)
    del frame

    empty_movie = np.flatnonzero(gt.movie_values == "")
    if len(empty_movie):  # the empty string is no movie
        kept = gt.movie != empty_movie[0]
        gt = replace(gt, rows=gt.rows[kept], movie=gt.movie[kept], doc=gt.doc[kept], rank=gt.rank[kept])
    if len(gt.rows) < n_all:
        problems.append(Problem(source, f"{n_all - len(gt.rows)} row(s) without movie or rank; dropped"))
    if n_not_text:
        problems.append(
            Problem(source, f"{n_not_text} keyword cell(s) are not text (e.g. lists); those GT rows are dropped")
        )
    rows = gt.rows
    missing = np.nan  # an absent helpful / not_helpful column
    out = pd.DataFrame(
        {
            "movie": _object_column(gt.movie_values[gt.movie]),
            "rank": position_in_run(run_heads(gt.movie, gt.doc)),  # positions 0..n-1 within each GT list
            "keyword": _object_column(keyword_values[keyword_c[rows]]),
            "helpful": numbers["helpful"].take(rows).reset_index(drop=True) if "helpful" in numbers else missing,
            "not_helpful": numbers["not_helpful"].take(rows).reset_index(drop=True)
            if "not_helpful" in numbers
            else missing,
        }
    )
    if has_doc:
        out["review_id"] = _object_column(take_codes(gt.doc_values, gt.doc))
    return out, unranked


def _unranked_movies(gt: _GtRows) -> set[str]:
    """Movies whose every GT list gives all its keywords the same rank (or none): unranked GT."""
    head = run_heads(gt.movie, gt.doc)  # where each GT list starts
    new_rank = np.ones(len(gt.rows), dtype=bool)
    new_rank[1:] = gt.rank[1:] != gt.rank[:-1]
    ranks_in_list = (
        np.add.reduceat((new_rank | head).astype(np.int64), np.flatnonzero(head))
        if len(head)
        else np.zeros(0, np.int64)
    )
    list_movie = gt.movie[head]
    ranked = np.unique(list_movie[ranks_in_list > 1])
    with_rows = np.union1d(np.unique(gt.movie), gt.rankless_movies)
    return set(gt.movie_values[np.setdiff1d(with_rows, ranked)].tolist())


def unranked_movies(frame: pd.DataFrame) -> set[str]:
    """Movies whose every GT list gives all its keywords the same rank: unranked GT (before ranks become positions)."""
    return _unranked_movies(_gt_rows(frame, pd.to_numeric(frame["rank"], errors="coerce").reset_index(drop=True)))


def _clean_reviews(frame: pd.DataFrame | pa.Table) -> pd.DataFrame:
    """movie, review_id, text, title, rating (+ any other columns): rows without movie or review_id dropped, first of
    each pair kept."""
    movie_c, movie_u = _key_codes(frame, "movie")
    review_c, review_u = _key_codes(frame, "review_id")
    key = movie_c * (len(review_u) + 1) + review_c
    keep = np.flatnonzero((movie_c >= 0) & (review_c >= 0))
    keep = keep[~pd.Series(key[keep]).duplicated().to_numpy()]
    columns = frame.column_names if isinstance(frame, pa.Table) else list(frame.columns)
    n = len(keep)
    out = {
        "movie": _object_column(movie_u[movie_c[keep]]),
        "review_id": _object_column(review_u[review_c[keep]]),
    }
    for col in ("text", "title"):
        out[col] = _object_column(
            _text_values(frame, col, as_string=True)[keep] if col in columns else np.full(n, None, dtype=object)
        )
    out["rating"] = _numbers(frame, "rating")[keep] if "rating" in columns else np.full(n, np.nan)
    extra = [c for c in columns if c not in REVIEW_COLUMNS]
    if extra:
        rest = frame.select(extra).to_pandas() if isinstance(frame, pa.Table) else frame[extra]
        for col in extra:
            out[col] = rest[col].iloc[keep].reset_index(drop=True)
    return pd.DataFrame(out, copy=False)


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
    frames: dict[str, pd.DataFrame] = {}
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

    if "predictions" in frames:
        predictions, pair_start, pred_movies, pred_models = _clean_predictions(
            frames.pop("predictions"), "predictions", problems
        )
    else:
        predictions = pd.DataFrame({c: pd.Series(dtype="object") for c in PREDICTION_COLUMNS})
        pair_start = np.zeros(0, dtype=np.int64)
        pred_movies, pred_models = [], []
    if "ground_truth" in frames:
        ground_truth, unranked = _clean_ground_truth(frames.pop("ground_truth"), "ground_truth", problems)
    else:
        ground_truth, unranked = pd.DataFrame({c: pd.Series(dtype="object") for c in GROUND_TRUTH_COLUMNS}), set()

    if "reviews" in frames:
        reviews = _clean_reviews(frames.pop("reviews"))
    else:
        keys = predictions[["movie", "review_id"]].iloc[pair_start]
        reviews = keys.assign(text=None, title=None, rating=np.nan).reset_index(drop=True)

    movie_order = list(
        dict.fromkeys(
            [*pred_movies, *_in_order_of_appearance(reviews["movie"]), *_in_order_of_appearance(ground_truth["movie"])]
        )
    )
    titles: dict[str, str] = {}
    extra: dict[str, dict] = {}  # optional movie columns: ranked (GT order matters), language
    if "movies" in frames:
        mv = frames["movies"]
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

    model_order = list(pred_models)
    directions: dict[str, str] = {}
    if "models" in frames:
        md = frames["models"]
        # the models table, when given, decides the display order
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
    models = pd.DataFrame(
        {"model": model_order, "score_direction": [directions.get(m, "higher") for m in model_order]},
        columns=MODEL_COLUMNS,
    )
    del frames
    # the Arrow tables are consumed: hand their freed buffers back to the system
    pa.default_memory_pool().release_unused()
    return Dataset(movies, reviews, predictions, ground_truth, models, problems, source=origin)


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
