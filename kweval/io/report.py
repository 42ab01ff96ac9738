"""Output formats for summaries and per-review tables: CSV, Markdown, LaTeX, JSON."""

from __future__ import annotations

import json
import math
import re

import pandas as pd

from kweval.data.formulas import FORMULA_STARTS as FORMULA_STARTS  # re-exported: the one rule is data.formulas
from kweval.data.formulas import GUARD, guard_mask, needs_guard
from kweval.data.tidy import csv_quoting
from kweval.data.vocabulary import MOVIE_WORDS, Vocabulary
from kweval.io.settings import setting_slugs, setting_texts
from kweval.metrics import registry

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
    """Per metric column, the row positions holding the best value among the rows of each movie.

    Best follows the column's better direction in `kweval.metrics.registry` (highest
    unless it says lower; columns where neither is better are left out).
    Bold marks the best model per movie, which is the comparison a reader makes.
    """
    ways = {
        col: registry.better(col) if registry.info(col) is not None else registry.HIGHER
        for col in metric_columns(table)
    }
    movies = table.groupby("movie", sort=False)  # a movie's NaN-only column has a NaN top, equal to nothing
    tops: dict[str, pd.Series] = {}
    for direction, reduce in ((registry.HIGHER, "max"), (registry.LOWER, "min")):  # one pass per direction
        columns = [col for col, way in ways.items() if way == direction]
        if columns:
            tops.update(movies[columns].transform(reduce).items())
    return {
        col: {int(i) for i in table.index[table[col].to_numpy() == tops[col].to_numpy()]} for col in ways if col in tops
    }


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


# A spreadsheet reads a cell starting with FORMULA_STARTS as a formula (OWASP "CSV injection"); the rule and its
# inverse (for reading back) are kweval.data.formulas'.


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
            risky = guard_mask(values)
        except AttributeError:  # no string in the column
            continue
        if risky.any():
            if out is table:
                out = table.copy()
            fixed = values.astype(object).copy()
            fixed[risky] = GUARD + values[risky].astype(str)
            out[col] = fixed
    renamed = {c: GUARD + c for c in out.columns if isinstance(c, str) and needs_guard(c)}
    return out.rename(columns=renamed) if renamed else out


def to_csv(table: pd.DataFrame, decimals: int = 6, raw: bool = False) -> str:
    """The table as CSV; text cells that would run as spreadsheet formulas are neutralised unless `raw`."""
    if not raw:
        table = neutralise_formulas(table)
    return table.to_csv(index=False, float_format=f"%.{decimals}f", lineterminator="\n", quoting=csv_quoting(table))


UNDEFINED = "—"  # a metric cell without a value (undefined: kweval.metrics.undefined) in a table for people


def _cell_rows(table: pd.DataFrame, decimals: int, escape, bold, bold_best: bool) -> list[list[str]]:
    """Every row's cells as text: escaped, with the best value of each metric per movie in bold; an undefined metric
    value reads "—" (CSV and JSON leave it empty / null)."""
    best = best_rows(table) if bold_best else {}
    metrics = set(metric_columns(table))
    rows = []
    for i, values in zip(table.index, table.itertuples(index=False, name=None)):
        cells = []
        for col, value in zip(table.columns, values):
            text = escape(_fmt(value, decimals)) or (UNDEFINED if col in metrics else "")
            if col in best and i in best[col] and text:
                text = bold(text)
            cells.append(text)
        rows.append(cells)
    return rows


def _numeric_columns(table: pd.DataFrame) -> set[str]:
    return set(metric_columns(table)) | {"n_reviews", "n_skipped", "n_documents"}


def to_markdown(table: pd.DataFrame, decimals: int = 4, bold_best: bool = True, words: Vocabulary = MOVIE_WORDS) -> str:
    """The table as a Markdown table (text escaped, best per movie bold); headers in the data's `words`."""
    table = table.reset_index(drop=True)
    numeric = _numeric_columns(table)
    lines = [
        "| " + " | ".join(escape_markdown(words.header(str(c))) for c in table.columns) + " |",
        "| " + " | ".join("---:" if c in numeric else "---" for c in table.columns) + " |",
    ]
    for cells in _cell_rows(table, decimals, escape_markdown, lambda t: f"**{t}**", bold_best):
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


CI_STYLES = ("brackets", "pm")


def dataset_name(meta: dict) -> str:
    """The dataset's name for captions and file names: the last part of its folder ("demo" without one)."""
    data = str(meta.get("data") or "demo").rstrip("/\\")
    return re.split(r"[/\\]", data)[-1] or "data"


def latex_caption(meta: dict, words: Vocabulary = MOVIE_WORDS) -> str:
    """A caption naming dataset, k, match mode and aggregation (from the CLI's/dashboard's meta dict), and every other
    setting the meta names (`kweval.io.settings`), in the data's `words` ("average over documents", "best value per
    collection")."""
    data = dataset_name(meta)
    parts = [
        f"k = {meta['k']}" if "k" in meta else "",
        f"{meta['match']} matching" if "match" in meta else "",
        f"{meta['aggregate']} average over {words.reviews.lower()}" if "aggregate" in meta else "",
        *setting_texts(meta, words),  # backend, τ, sentiment, scope, protocol: when the meta names them
    ]
    detail = ", ".join(p for p in parts if p)
    best = f"Best value per {words.movie.lower()} in bold."
    return f"Keyword extraction on {data}" + (f" ({detail})" if detail else "") + ". " + best


def download_name(kind: str, meta: dict, suffix: str) -> str:
    """A file name saying what the file holds: ``kweval_summary_demo_k5_approx_macro.tex``."""
    parts = [
        "kweval",
        kind,
        dataset_name(meta),
        f"k{meta['k']}" if "k" in meta else "",
        str(meta.get("match", "")),
        str(meta.get("aggregate", "")),
        *setting_slugs(meta),
    ]
    stem = "_".join(re.sub(r"[^\w.-]+", "-", p).strip("-.") for p in parts if p)
    return f"{stem}.{suffix.lstrip('.')}"


def _ci_cells(
    table: pd.DataFrame, ci: pd.DataFrame | None, columns: list[str], decimals: int, style: str
) -> dict[tuple[int, str], str]:
    """The CI text after each value, per (row position, column): `` [0.58, 0.64]`` or `` ± 0.03``."""
    if ci is None or ci.empty:
        return {}
    lookup = {
        (str(m), str(md), str(mt)): (lo, hi)
        for m, md, mt, lo, hi in zip(ci["movie"], ci["model"], ci["metric"], ci["ci_low"], ci["ci_high"])
    }
    out = {}
    for i, movie, model in zip(table.index, table["movie"].astype(str), table["model"].astype(str)):
        for col in columns:
            lo, hi = lookup.get((movie, model, col), (math.nan, math.nan))
            if math.isfinite(lo) and math.isfinite(hi):
                out[(i, col)] = (
                    f" [{lo:.{decimals}f}, {hi:.{decimals}f}]"
                    if style == "brackets"
                    else f" $\\pm$ {(hi - lo) / 2:.{decimals}f}"
                )
    return out


def to_latex(
    table: pd.DataFrame,
    decimals: int = 3,
    bold_best: bool = True,
    caption: str | None = None,
    columns: list[str] | None = None,
    ci: pd.DataFrame | None = None,
    ci_style: str = "brackets",
    label: str | None = "tab:kweval",
    words: Vocabulary = MOVIE_WORDS,
) -> str:
    """A paper-ready booktabs table of a summary.

    - ``columns``: the metric columns to show, in order (default: every
      metric column); movie and model always lead.
    - ``ci``: rows (movie, model, metric, ci_low, ci_high), e.g. from
      `kweval.stats.paired.bootstrap_summary_ci`, written after each value as
      ``0.612 [0.580, 0.640]`` (``brackets``) or ``0.612 ± 0.030`` (``pm``).
    - the best value per movie and column is bold (`best_rows`); headers are
      the registry's labels (movie and model in the data's `words`); a rule
      separates movies.  Needs ``\\usepackage{booktabs}``.
    """
    if ci_style not in CI_STYLES:
        raise ValueError(f"unknown CI style {ci_style!r}; choose one of {', '.join(CI_STYLES)}")
    table = table.reset_index(drop=True)
    chosen = [c for c in (columns if columns is not None else metric_columns(table)) if c in table.columns]
    ids = [c for c in ("movie", "model") if c in table.columns]
    best = best_rows(table[ids + [c for c in chosen if c not in ids]]) if bold_best else {}
    intervals = _ci_cells(table, ci, chosen, decimals, ci_style)
    numeric = _numeric_columns(table)
    spec = "".join("r" if c in numeric else "l" for c in ids + chosen)

    def header(col: str) -> str:
        entry = registry.info(col)
        return escape_latex(entry.label if entry is not None and col not in ("movie", "model") else words.header(col))

    lines = [
        "% requires \\usepackage{booktabs}",
        "\\begin{table}[t]",
        "\\centering",
    ]
    if caption:
        lines.append(f"\\caption{{{escape_latex(caption)}}}")
    if label:
        lines.append(f"\\label{{{escape_latex(label)}}}")
    lines += [
        f"\\begin{{tabular}}{{{spec}}}",
        "\\toprule",
        " & ".join(header(c) for c in ids + chosen) + " \\\\",
        "\\midrule",
    ]
    previous = None
    for i, row in table.iterrows():
        if "movie" in table and previous is not None and row["movie"] != previous:
            lines.append("\\midrule")
        previous = row["movie"] if "movie" in table else None
        cells = [escape_latex(_fmt(row[c], decimals)) for c in ids]
        for col in chosen:
            text = escape_latex(_fmt(row[col], decimals))
            if col in best and i in best[col] and text:
                text = f"\\textbf{{{text}}}"
            cells.append(text + intervals.get((i, col), "") if text else "---")  # ---: an undefined value
        lines.append(" & ".join(cells) + " \\\\")
    lines += ["\\bottomrule", "\\end{tabular}", "\\end{table}"]
    return "\n".join(lines) + "\n"


def to_json(table: pd.DataFrame, meta: dict | None = None) -> str:
    rows = json.loads(table.to_json(orient="records", double_precision=15))
    return json.dumps({"meta": meta or {}, "rows": rows}, indent=2) + "\n"


def render(
    table: pd.DataFrame,
    fmt: str,
    meta: dict | None = None,
    raw_csv: bool = False,
    words: Vocabulary = MOVIE_WORDS,
    **latex,
) -> str:
    """The summary `table` in one of FORMATS (CSV formulas neutralised unless `raw_csv`; `latex`: `to_latex`'s columns,
    ci, ci_style).  Markdown and LaTeX headers speak the data's `words`; CSV and JSON keep the stable column names."""
    if fmt == "csv":
        return to_csv(table, raw=raw_csv)
    if fmt == "markdown":
        return to_markdown(table, words=words)
    if fmt == "latex":
        return to_latex(table, caption=latex_caption(meta or {}, words), words=words, **latex)
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


def summary_intervals(
    scores: pd.DataFrame, metrics: list[str], how: str = "macro", n_boot: int | None = None
) -> pd.DataFrame:
    """Bootstrap CIs of every movie × model row of the summary and of each model's ALL row, for `to_latex(ci=...)`.

    `scores`: `Evaluation.scores` (or the rows of the models shown).  Calls
    `kweval.stats.paired.bootstrap_summary_ci` on each row's reviews (the statistic
    the summary reports).  Columns: movie, model, metric, ci_low, ci_high.
    """
    from kweval import stats
    from kweval.evaluation.aggregate import ALL

    kwargs = {} if n_boot is None else {"n_boot": n_boot}
    parts = []
    for (movie, model), rows in scores.groupby(["movie", "model"], sort=False):
        parts.append(stats.bootstrap_summary_ci(rows, metrics, how, **kwargs).assign(movie=movie, model=model))
    for model, rows in scores.groupby("model", sort=False):
        parts.append(stats.bootstrap_summary_ci(rows, metrics, how, **kwargs).assign(movie=ALL, model=model))
    if not parts:
        return pd.DataFrame(columns=["movie", "model", "metric", "ci_low", "ci_high"])
    return pd.concat(parts, ignore_index=True)[["movie", "model", "metric", "ci_low", "ci_high"]]
