"""A table's columns read as codes, texts and numbers, from Arrow or pandas alike (the tidy reader's column rules).

Large tables stay Arrow tables and are read column by column: key columns as
integer codes into their distinct values (`key_codes`, `arrow_codes`: one
Python string per distinct value), text columns with "an empty cell is a
missing cell" (`text_values`, `as_str`), numbers as `pd.to_numeric(errors=
"coerce")` reads them but booleans are no numbers (`numbers`).  Cells that
are not what the layout expects (lists, records, numbers for keywords) are
reported, never silently read as something else.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from kweval._arrays import empty_as_missing, take_codes, with_missing
from kweval.data.dataset import Problem

_KEY_COLUMNS = {"movie", "review_id", "model", "keyword"}  # repeated values: read dictionary-encoded


def read_arrow(data: bytes | Path, name_source_in_errors: bool = False) -> pa.Table:
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


def without_pandas_index(table: pa.Table) -> pa.Table:
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


def is_text(kind: pa.DataType) -> bool:
    if pa.types.is_dictionary(kind):
        kind = kind.value_type
    return pa.types.is_string(kind) or pa.types.is_large_string(kind)


def arrow_codes(column: pa.ChunkedArray, empty_is_missing: bool = True) -> tuple[np.ndarray, np.ndarray]:
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


def key_codes(
    frame: pd.DataFrame | pa.Table, name: str, empty_is_missing: bool = True
) -> tuple[np.ndarray, np.ndarray]:
    """(codes, distinct values) of a key column read as text (`column.astype("string")`); code -1 for NA and
    (`empty_is_missing`) the empty string.

    With `empty_is_missing` the values are those `as_str(column.astype("string"))` gives.
    """
    if isinstance(frame, pa.Table):
        column = frame.column(name)
        if is_text(column.type):
            return arrow_codes(column, empty_is_missing)
        series = column.to_pandas()
    else:
        series = frame[name]
    codes, uniques = pd.factorize(series.astype("string"))
    codes, uniques = codes.astype(np.int64), np.asarray(uniques, dtype=object)
    return empty_as_missing(codes, uniques) if empty_is_missing else (codes, uniques)


def text_values(frame: pd.DataFrame | pa.Table, name: str, as_string: bool) -> np.ndarray:
    """A text column as an object array: str values stay, NA, empty and non-string cells become None.

    `as_string`: convert other types to text first (`astype("string")`), as for ids and titles.
    """
    if isinstance(frame, pa.Table):
        column = frame.column(name)
        if is_text(column.type):
            if pa.types.is_dictionary(column.type):
                codes, uniques = arrow_codes(column)
                return take_codes(uniques, codes)
            values = column.to_numpy(zero_copy_only=False).astype(object)
            values[pd.isna(values) | (values == "")] = None
            return values
        series = column.to_pandas()
    else:
        series = frame[name]
    if as_string:
        series = series.astype("string")
    return as_str(series).to_numpy(dtype=object)


def numbers(frame: pd.DataFrame | pa.Table, name: str) -> np.ndarray:
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


def keyword_texts(series: pd.Series) -> pd.Series:
    """Strings stay strings (the empty one too), anything else becomes None; one Python string per distinct keyword."""
    if isinstance(series.dtype, pd.StringDtype):
        codes, uniques = pd.factorize(series)
        values = take_codes(np.asarray(uniques, dtype=object), codes)
        return pd.Series(values, index=series.index, dtype=object, copy=False)
    return series.map(lambda v: v if isinstance(v, str) else None).astype(object)


def as_str(series: pd.Series) -> pd.Series:
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


def neither_text_nor_missing(value: object) -> bool:
    """A cell holding something other than text (a list, a number), as opposed to text or nothing."""
    if isinstance(value, str) or value is None or value is pd.NA:
        return False
    return not (isinstance(value, float) and np.isnan(value))


def is_nested(kind: pa.DataType) -> bool:
    return pa.types.is_list(kind) or pa.types.is_large_list(kind) or pa.types.is_struct(kind) or pa.types.is_map(kind)


def report_nested_keys(
    frame: pd.DataFrame | pa.Table, columns: tuple[str, ...], source: str, problems: list[Problem]
) -> None:
    """Name key columns whose cells are lists or records: they are read as their text, which is rarely what was
    meant."""
    if not isinstance(frame, pa.Table):
        return  # CSV cells are always text
    for name in columns:
        column = frame.column(name)
        if is_nested(column.type):
            n = len(column) - column.null_count
            problems.append(
                Problem(source, f"{n} {name} cell(s) hold {column.type}, not one value per row; read as their text")
            )


def report_non_text_keywords(frame: pd.DataFrame | pa.Table, source: str, problems: list[Problem]) -> None:
    """Name keyword cells that are not text (lists, numbers): they count as no keyword, which must not pass silently."""
    if isinstance(frame, pa.Table):
        column = frame.column("keyword")
        if is_text(column.type):
            return
        n_bad = len(column) - column.null_count
        kind = "lists" if pa.types.is_list(column.type) or pa.types.is_large_list(column.type) else str(column.type)
    else:
        n_bad = int(frame["keyword"].map(neither_text_nor_missing).sum())
        kind = "not text"
    if n_bad:
        problems.append(
            Problem(source, f"{n_bad} keyword cell(s) hold {kind}, not one keyword per row; those rows have no keyword")
        )


def keyword_codes(frame: pd.DataFrame | pa.Table) -> tuple[np.ndarray, np.ndarray]:
    """The keyword column as (codes, values): str values stay, NA, empty and non-string cells are None (the last
    value)."""
    if isinstance(frame, pa.Table) and is_text(frame.column("keyword").type):
        codes, uniques = arrow_codes(frame.column("keyword"))
        return codes, with_missing(uniques)  # code -1 reads None
    values = text_values(frame, "keyword", as_string=False)
    return np.arange(len(values)), values


def column_names(frame: pd.DataFrame | pa.Table) -> list[str]:
    return frame.column_names if isinstance(frame, pa.Table) else list(frame.columns)
