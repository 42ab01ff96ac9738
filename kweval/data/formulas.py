"""Spreadsheet formulas in CSV cells: the one rule kweval writes them by (neutralised) and reads them back by.

A text cell starting with = + - @ TAB or CR would run as a formula in a
spreadsheet, so kweval's CSV writers prefix it with `'` (`kweval.io.report.
neutralise_formulas`).  A cell that already starts with `'` before such a
character gets one more, so reading is the exact inverse: a cell of one `'`
followed by a guarded cell loses that `'`.  An id `=cmd` written by
`kweval extract` or `kweval convert` as `'=cmd` is read back as `=cmd` and
still names its document.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
GUARD = "'"


def needs_guard(text: str) -> bool:
    """Whether a CSV writer prefixes `text` with `'`: it starts, after any `'`, with a formula character.

    >>> needs_guard("=SUM(A1)"), needs_guard("'=x"), needs_guard("'quoted"), needs_guard("plain")
    (True, True, False, False)
    """
    return text.lstrip(GUARD).startswith(FORMULA_STARTS)


def unguard(text: str) -> str:
    """`text` as it was before a CSV writer guarded it (the inverse of `GUARD + text` when `needs_guard(text)`).

    >>> unguard("'=cmd"), unguard("''=cmd"), unguard("'quoted"), unguard("-x")
    ('=cmd', "'=cmd", "'quoted", '-x')
    """
    if text.startswith(GUARD) and needs_guard(text[1:]):
        return text[1:]
    return text


def guard_mask(values: pd.Series):
    """Boolean array: the cells of a text column that a CSV writer guards (NaN and non-text: False)."""
    return values.str.lstrip(GUARD).str.startswith(FORMULA_STARTS, na=False).to_numpy(dtype=bool)


def unguard_column(values: pd.Series) -> pd.Series:
    """A text column read from CSV with every guarded cell restored (`unguard`); other cells and dtypes unchanged."""
    try:
        quoted = values.str.startswith(GUARD, na=False).to_numpy(dtype=bool)
    except AttributeError:  # no string in the column
        return values
    if not quoted.any():
        return values
    out = values.copy()
    out[quoted] = values[quoted].map(lambda v: unguard(v) if isinstance(v, str) else v)
    return out
