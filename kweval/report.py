"""Output formats for summaries and per-review tables: CSV, Markdown, LaTeX, JSON."""

from __future__ import annotations

import json
import math

import pandas as pd

FORMATS = ("csv", "markdown", "latex", "json")
_SUFFIX_FORMAT = {".csv": "csv", ".md": "markdown", ".markdown": "markdown", ".tex": "latex", ".json": "json"}
ID_COLUMNS = ("movie", "model", "n_reviews", "n_skipped")


def format_for_path(path: str) -> str:
    """The format implied by an output file name (CSV when unknown)."""
    for suffix, fmt in _SUFFIX_FORMAT.items():
        if path.lower().endswith(suffix):
            return fmt
    return "csv"


def metric_columns(table: pd.DataFrame) -> list[str]:
    return [c for c in table.columns if c not in ID_COLUMNS and pd.api.types.is_float_dtype(table[c])]


def best_rows(table: pd.DataFrame) -> dict[str, set[int]]:
    """Per metric column, the row positions holding the best (highest) value among non-ALL rows of each movie.

    Bold marks the best model per movie, which is the comparison a reader makes.
    """
    best: dict[str, set[int]] = {}
    for col in metric_columns(table):
        best[col] = set()
        for _, rows in table.groupby("movie", sort=False):
            values = rows[col]
            if values.notna().any():
                top = values.max()
                best[col].update(int(i) for i in rows.index[values == top])
    return best


def _fmt(value: object, decimals: int) -> str:
    if isinstance(value, float):
        return "" if math.isnan(value) else f"{value:.{decimals}f}"
    return str(value)


# Markdown characters that could start markup (emphasis, code, links, images, tables) are
# backslash-escaped; HTML's own specials become entities, so no tag or entity from the data is live.
_MARKDOWN_ESCAPES = {ch: "\\" + ch for ch in "\\`*_[]|!~#"}
_MARKDOWN_ESCAPES.update({"<": "&lt;", ">": "&gt;", "&": "&amp;", "\n": " ", "\r": " "})
_MARKDOWN_TABLE = str.maketrans(_MARKDOWN_ESCAPES)


def escape_markdown(text: str) -> str:
    """`text` as literal Markdown table-cell text: no markup, HTML, link or image from it is rendered."""
    return text.translate(_MARKDOWN_TABLE)


_LATEX_ESCAPES = {ch: "\\" + ch for ch in "&%$#_{}"}
_LATEX_ESCAPES.update(
    {
        "\\": "\\textbackslash{}",
        "~": "\\textasciitilde{}",
        "^": "\\textasciicircum{}",
        "<": "\\textless{}",
        ">": "\\textgreater{}",
        "|": "\\textbar{}",
        "\n": " ",
        "\r": " ",
    }
)
_LATEX_TEXT = str.maketrans(_LATEX_ESCAPES)


def escape_latex(text: str) -> str:
    """`text` as literal LaTeX text: its specials (& % $ # _ { } \\ ~ ^ < > |) typeset as themselves."""
    return text.translate(_LATEX_TEXT)


# A spreadsheet reads a cell starting with one of these as a formula (OWASP "CSV injection").
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def neutralise_formulas(table: pd.DataFrame) -> pd.DataFrame:
    """`table` with every text cell that a spreadsheet would run as a formula prefixed with `'`.

    Numeric columns are left alone (a negative number is not a formula);
    text columns are checked whatever they hold (ids, names, keywords).
    """
    out = table
    for col in table.columns:
        if pd.api.types.is_numeric_dtype(table[col]) or pd.api.types.is_bool_dtype(table[col]):
            continue
        values = table[col]
        try:
            risky = values.str.startswith(FORMULA_STARTS, na=False).to_numpy(dtype=bool)
        except AttributeError:  # no string in the column
            continue
        if risky.any():
            if out is table:
                out = table.copy()
            fixed = values.astype(object).copy()
            fixed[risky] = "'" + values[risky].astype(str)
            out[col] = fixed
    renamed = {c: "'" + c for c in out.columns if isinstance(c, str) and c.startswith(FORMULA_STARTS)}
    return out.rename(columns=renamed) if renamed else out


def to_csv(table: pd.DataFrame, decimals: int = 6, raw: bool = False) -> str:
    """The table as CSV; text cells that would run as spreadsheet formulas are neutralised unless `raw`."""
    if not raw:
        table = neutralise_formulas(table)
    return table.to_csv(index=False, float_format=f"%.{decimals}f", lineterminator="\n")


def _cell_rows(table: pd.DataFrame, decimals: int, escape, bold, bold_best: bool) -> list[list[str]]:
    """Every row's cells as text: escaped, with the best value of each metric per movie in bold."""
    best = best_rows(table) if bold_best else {}
    rows = []
    for i, row in table.iterrows():
        cells = []
        for col in table.columns:
            text = escape(_fmt(row[col], decimals))
            if col in best and i in best[col] and text:
                text = bold(text)
            cells.append(text)
        rows.append(cells)
    return rows


def _numeric_columns(table: pd.DataFrame) -> set[str]:
    return set(metric_columns(table)) | {"n_reviews", "n_skipped"}


def to_markdown(table: pd.DataFrame, decimals: int = 4, bold_best: bool = True) -> str:
    table = table.reset_index(drop=True)
    numeric = _numeric_columns(table)
    lines = [
        "| " + " | ".join(escape_markdown(str(c)) for c in table.columns) + " |",
        "| " + " | ".join("---:" if c in numeric else "---" for c in table.columns) + " |",
    ]
    for cells in _cell_rows(table, decimals, escape_markdown, lambda t: f"**{t}**", bold_best):
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def to_latex(table: pd.DataFrame, decimals: int = 4, bold_best: bool = True, caption: str | None = None) -> str:
    table = table.reset_index(drop=True)
    numeric = _numeric_columns(table)
    spec = "".join("r" if c in numeric else "l" for c in table.columns)
    lines = ["\\begin{table}[ht]", "\\centering", f"\\begin{{tabular}}{{{spec}}}", "\\hline"]
    lines.append(" & ".join(escape_latex(str(c)) for c in table.columns) + " \\\\")
    lines.append("\\hline")
    for cells in _cell_rows(table, decimals, escape_latex, lambda t: f"\\textbf{{{t}}}", bold_best):
        lines.append(" & ".join(cells) + " \\\\")
    lines += ["\\hline", "\\end{tabular}"]
    if caption:
        lines.append(f"\\caption{{{escape_latex(caption)}}}")
    lines.append("\\end{table}")
    return "\n".join(lines) + "\n"


def to_json(table: pd.DataFrame, meta: dict | None = None) -> str:
    rows = json.loads(table.to_json(orient="records", double_precision=15))
    return json.dumps({"meta": meta or {}, "rows": rows}, indent=2) + "\n"


def render(table: pd.DataFrame, fmt: str, meta: dict | None = None, raw_csv: bool = False) -> str:
    """The summary `table` in one of FORMATS (CSV formulas neutralised unless `raw_csv`)."""
    if fmt == "csv":
        return to_csv(table, raw=raw_csv)
    if fmt == "markdown":
        return to_markdown(table)
    if fmt == "latex":
        return to_latex(table)
    if fmt == "json":
        return to_json(table, meta)
    raise ValueError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")


def per_review_table(evaluation) -> pd.DataFrame:
    """The per-review scores with the matched pairs spelled out ("position:keyword→gt_rank:gt_keyword; ...")."""
    kw = evaluation.keywords
    matched = kw[kw["gt_rank"] >= 0]
    pairs = (
        matched["position"].astype(str)
        + ":"
        + matched["keyword"].astype(str)
        + "->"
        + matched["gt_rank"].astype(str)
        + ":"
        + matched["gt_keyword"].astype(str)
    )
    joined = pairs.groupby([matched["movie"], matched["review_id"], matched["model"]], sort=False).agg("; ".join)
    scores = evaluation.scores
    idx = pd.MultiIndex.from_frame(scores[["movie", "review_id", "model"]])
    out = scores.copy()
    out["matches"] = joined.reindex(idx).fillna("").to_numpy()
    return out
