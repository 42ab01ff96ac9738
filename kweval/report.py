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


def _escape_markdown(text: str) -> str:
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def _escape_latex(text: str) -> str:
    out = []
    for ch in text:
        if ch in "&%$#_{}":
            out.append("\\" + ch)
        elif ch == "\\":
            out.append("\\textbackslash{}")
        elif ch == "~":
            out.append("\\textasciitilde{}")
        elif ch == "^":
            out.append("\\textasciicircum{}")
        else:
            out.append(ch)
    return "".join(out)


def to_csv(table: pd.DataFrame, decimals: int = 6) -> str:
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
        "| " + " | ".join(_escape_markdown(str(c)) for c in table.columns) + " |",
        "| " + " | ".join("---:" if c in numeric else "---" for c in table.columns) + " |",
    ]
    for cells in _cell_rows(table, decimals, _escape_markdown, lambda t: f"**{t}**", bold_best):
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def to_latex(table: pd.DataFrame, decimals: int = 4, bold_best: bool = True, caption: str | None = None) -> str:
    table = table.reset_index(drop=True)
    numeric = _numeric_columns(table)
    spec = "".join("r" if c in numeric else "l" for c in table.columns)
    lines = ["\\begin{table}[ht]", "\\centering", f"\\begin{{tabular}}{{{spec}}}", "\\hline"]
    lines.append(" & ".join(_escape_latex(str(c)) for c in table.columns) + " \\\\")
    lines.append("\\hline")
    for cells in _cell_rows(table, decimals, _escape_latex, lambda t: f"\\textbf{{{t}}}", bold_best):
        lines.append(" & ".join(cells) + " \\\\")
    lines += ["\\hline", "\\end{tabular}"]
    if caption:
        lines.append(f"\\caption{{{_escape_latex(caption)}}}")
    lines.append("\\end{table}")
    return "\n".join(lines) + "\n"


def to_json(table: pd.DataFrame, meta: dict | None = None) -> str:
    rows = json.loads(table.to_json(orient="records", double_precision=15))
    return json.dumps({"meta": meta or {}, "rows": rows}, indent=2) + "\n"


def render(table: pd.DataFrame, fmt: str, meta: dict | None = None) -> str:
    """The summary `table` in one of FORMATS."""
    if fmt == "csv":
        return to_csv(table)
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
