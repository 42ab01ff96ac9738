"""Table presentation shared by the pages: column help from `kweval.metrics.registry` and the best value per column in
bold."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import pandas as pd
import streamlit as st

from dashboard.style import best_styles
from kweval.data.vocabulary import MOVIE_WORDS, Vocabulary
from kweval.metrics import registry
from kweval.stats.numbers import decimals_for


def number_columns(
    columns: Iterable[str],
    fmt: str = "%.4f",
    aliases: Mapping[str, str] | None = None,
    formats: Mapping[str, str] | None = None,
) -> dict:
    """`st.dataframe` column_config for `columns`: each column's help is its registry definition.

    `aliases` maps a shown column name to its registry name (e.g. "mean A" → "mean_a");
    `formats` overrides `fmt` per column.  Unregistered columns get no help.
    """
    config = {}
    for col in columns:
        entry = registry.info((aliases or {}).get(col, col))
        help_ = column_help(entry) if entry is not None else None
        label = page_words().header(col)
        config[col] = st.column_config.NumberColumn(label, format=(formats or {}).get(col, fmt), help=help_)
    return config


def page_words() -> Vocabulary:
    """The words of the data on this page (`Ctx.words`, set by `open_page` before the page draws), movie-level
    words before any."""
    ctx = st.session_state.get("ctx")
    return ctx.words if ctx is not None else MOVIE_WORDS


def column_help(entry: registry.MetricInfo) -> str:
    """A registered column's help in the data's words ("documents" on per-document data)."""
    return page_words().say(f"{entry.label}: {entry.help()}")


def text_columns(columns: Iterable[str], aliases: Mapping[str, str] | None = None) -> dict:
    """Column help for non-numeric registered columns (e.g. ``significant``)."""
    config = {}
    for col in columns:
        entry = registry.info((aliases or {}).get(col, col))
        if entry is not None:
            config[col] = st.column_config.Column(page_words().header(col), help=column_help(entry))
    return config


def column_decimals(table: pd.DataFrame, minimum: int = 4) -> dict[str, int]:
    """Per float column of `table`, the decimals that show its smallest non-zero value with two significant digits
    (`kweval.stats.numbers.decimals_for`, at least `minimum`): a recall of 0.00004 never reads 0.0000."""
    return {
        c: decimals_for(table[c].dropna().abs().tolist(), minimum=minimum)
        for c in table.columns
        if pd.api.types.is_float_dtype(table[c])
    }


def decimal_formats(table: pd.DataFrame, minimum: int = 4) -> dict[str, str]:
    """`column_decimals` as `number_columns` formats (``"%.5f"``)."""
    return {c: f"%.{d}f" for c, d in column_decimals(table, minimum).items()}


def _fixed(decimals: int):
    """A cell formatter: `decimals` fixed places, "—" for NaN (a value that is undefined, never a blank read as 0)."""
    return lambda v: "—" if pd.isna(v) else f"{v:.{decimals}f}"


def best_in_bold(table: pd.DataFrame, decimals: int = 4):
    """`table` styled with each movie's best value per metric column in bold (`kweval.best_styles`), each float column
    with enough decimals (at least `decimals`) that no non-zero value reads 0 (`column_decimals`)."""
    styles = best_styles(table)
    places = column_decimals(table, decimals)
    formats = {c: _fixed(d) for c, d in places.items()}
    return table.style.apply(lambda _: styles, axis=None).format(formats, na_rep="—")  # —: no value (undefined)
