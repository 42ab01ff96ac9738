"""Large row tables (millions of rows, e.g. `kweval failures`) written to CSV or Parquet by the file's extension.

The table goes to Arrow with its categorical columns as dictionaries (each
distinct text once), then to the file through Arrow's writers (C++, in
batches): a 13-million-row CSV in seconds, where `report.to_csv` builds one
Python string.  CSV text cells that a spreadsheet would run as a formula are
neutralised as `report.neutralise_formulas` does (on each column's distinct
values, not its rows).  The file is replaced whole or not at all
(`kweval.files.replace_all_or_none`); a failed write is an `OutputError`.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from kweval.files import replace_all_or_none
from kweval.io.output import OutputError, os_reason
from kweval.io.report import neutralise_formulas

TABLE_FORMATS = ("csv", "parquet")


def table_format(path: str) -> str:
    """parquet for a `.parquet` / `.pq` file, else csv."""
    return "parquet" if Path(path).suffix.lower() in (".parquet", ".pq") else "csv"


def to_arrow(frame: pd.DataFrame, raw: bool = False):
    """`frame` as an Arrow table, categorical columns as dictionary arrays; text neutralised unless `raw`."""
    import pyarrow as pa

    columns = {}
    for name in frame.columns:
        col = frame[name]
        if isinstance(col.dtype, pd.CategoricalDtype):
            values = pd.Series(col.cat.categories.to_numpy(dtype=object), dtype=object)
            if not raw:
                values = neutralise_formulas(values.to_frame("v"))["v"]
            codes = col.cat.codes.to_numpy()
            indices = pa.array(codes.astype(np.int32), mask=codes < 0)
            columns[name] = pa.DictionaryArray.from_arrays(indices, pa.array(values.tolist(), type=pa.string()))
        elif pd.api.types.is_extension_array_dtype(col) and pd.api.types.is_integer_dtype(col):
            columns[name] = pa.array(col.array, type=pa.int64())  # nullable integers: NA is an empty cell
        elif pd.api.types.is_numeric_dtype(col) or pd.api.types.is_bool_dtype(col):
            columns[name] = pa.array(col.to_numpy())
        else:
            text = col if raw else neutralise_formulas(col.to_frame("v"))["v"]
            columns[name] = pa.array(text.astype(object).where(text.notna(), None).tolist(), type=pa.string())
    header = list(frame.columns) if raw else list(neutralise_formulas(frame.iloc[:0]).columns)
    return pa.table(list(columns.values()), names=header)


def write_table(frame: pd.DataFrame, out: str, raw: bool = False) -> None:
    """Write `frame` to the file `out`: Parquet for `.parquet`, else CSV (formulas neutralised unless `raw`)."""
    import pyarrow.csv as pa_csv
    import pyarrow.parquet as pq

    table = to_arrow(frame, raw=raw if table_format(out) == "csv" else True)

    def write(tmp: str) -> None:
        if table_format(out) == "parquet":
            pq.write_table(table, tmp)
        else:
            pa_csv.write_csv(table, tmp, write_options=pa_csv.WriteOptions(quoting_style="needed"))

    try:
        replace_all_or_none([(Path(out), write)])
    except OSError as exc:
        raise OutputError(out, f"writing failed ({os_reason(exc)})") from None
