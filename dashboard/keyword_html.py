"""HTML blocks of the explorer: a model's ranked keywords, the top-k GT list, the sentiment line, the model grid.

Everything user-supplied is escaped with `dashboard.escape.esc`; nothing here
computes a metric (the rows come from `Evaluation.keywords` and
`dashboard.review_tables.keyword_details`).
"""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from dashboard.escape import esc, fmt_num
from dashboard.grounding_html import grounding_mark
from dashboard.html_holes import CosineCell, Part, fill
from dashboard.selection import TAU_DEFAULT
from kweval.data.vocabulary import MOVIE_WORDS, Vocabulary
from kweval.metrics.categories import CATEGORIES

CATEGORY_LABELS = {c.name: c.label for c in CATEGORIES}  # docs/metrics.md §10's labels


def keyword_list_html(rows: pd.DataFrame | list[dict], k: int, words: Vocabulary = MOVIE_WORDS) -> str:
    """One model's ranked keywords (rows with position, keyword, gt_rank, gt_keyword) as an escaped HTML list.

    Matched keywords show the GT keyword they took and its 0-based GT rank (`words.gt_position`: no rank for an
    unranked GT);
    unmatched ones say so; positions at or beyond k are marked (they do not
    count for the @k metrics).  `rows` may be given as its `records`.
    """
    rows = rows if isinstance(rows, list) else records(rows)
    if not rows:
        return '<div class="kw-list"><em>empty output</em></div>'
    items = []
    for row in rows:
        pos, kw, rank, gt_kw = row["position"], row["keyword"], row["gt_rank"], row["gt_keyword"]
        beyond = ' <span style="opacity:0.6">(beyond k)</span>' if int(pos) >= k else ""
        ground = grounding_mark(row)  # with grounding: present / supported / unsupported by the text
        if int(rank) >= 0:
            items.append(
                f"<li><mark>{esc(kw)}</mark> → <b>{esc(gt_kw)}</b> "
                f'<span class="kw-gt">({esc(words.gt_position(int(rank)))})</span>{ground}{beyond}</li>'
            )
        else:
            items.append(f'<li><span style="opacity:0.75">{esc(kw)}</span> {unmatched_html(row)}{ground}{beyond}</li>')
    return f'<ol class="kw-list" start="0" style="margin:0;padding-left:1.6rem">{"".join(items)}</ol>'


def records(rows: pd.DataFrame) -> list[dict]:
    """`rows.to_dict("records")` (Python values, NaN kept), column by column: pandas' own takes each column apart
    again per call, a good share of a card's build when a page has 40 keyword tables.  Speed trick "records", tested
    against `to_dict` (tests/test_ui.py)."""
    columns = list(rows.columns)
    return [dict(zip(columns, values)) for values in zip(*(rows[c].tolist() for c in columns))]


TABLE_STYLE = (
    "<style>.kw-table{border-collapse:collapse;font-size:0.85em;width:100%;margin-top:0.2rem}"
    ".kw-table th{text-align:left;font-weight:600;padding:0.1rem 0.35rem}"
    ".kw-table td{padding:0.1rem 0.35rem;border-bottom:1px solid rgba(128,128,128,0.25);vertical-align:top}"
    ".kw-table tr.kw-dim{opacity:0.6}.kw-table .kw-category{opacity:0.75;font-size:0.9em}</style>"
)


def keyword_table_html(
    rows: pd.DataFrame,
    k: int,
    semantic: bool = False,
    sentiment: bool = False,
    threshold: float = TAU_DEFAULT,
    words: Vocabulary = MOVIE_WORDS,
) -> str:
    """One model's ranked keywords as an escaped HTML table: the lexical match, then (from `keyword_details`)
    the nearest GT keyword and its cosine (marked when above `threshold`) and the VADER value v(x).

    Positions at or beyond k are dimmed and say so.
    """
    return TABLE_STYLE + fill(keyword_table_parts(rows, k, semantic, sentiment, words), threshold)


def keyword_table_parts(
    rows: pd.DataFrame | list[dict],
    k: int,
    semantic: bool = False,
    sentiment: bool = False,
    words: Vocabulary = MOVIE_WORDS,
) -> list[Part]:
    """`keyword_table_html` before τ and without its `TABLE_STYLE` (a card holding several tables gives it once):
    escaped HTML with a `CosineCell` hole per cosine (`dashboard.html_holes`).  `rows` may be given as its `records`."""
    rows = rows if isinstance(rows, list) else records(rows)
    if not rows:
        return ['<div class="kw-list"><em>empty output</em></div>']
    head = ["#", "keyword", "lexical match"]
    if semantic:
        head += ["nearest GT", "cosine"]
    if sentiment:
        head += ["v(x)"]
    th = "".join(f"<th>{esc(h)}</th>" for h in head)
    parts: list[Part] = [f'<table class="kw-table"><thead><tr>{th}</tr></thead><tbody>']
    for r in rows:  # one element per cell where it can be (the cell carries the class): a page has 40
        pos = int(r["position"])
        beyond = pos >= k
        matched = int(r["gt_rank"]) >= 0
        kw = (f"<mark>{esc(r['keyword'])}</mark>" if matched else esc(r["keyword"])) + grounding_mark(r)
        lex = (
            f"<td><b>{esc(r['gt_keyword'])}</b> ({esc(words.gt_position(int(r['gt_rank'])))})</td>"
            if matched
            else unmatched_html(r, cell=True)
        )
        parts.append('<tr class="kw-dim">' if beyond else "<tr>")
        parts.append(f"<td>{pos} <span class='kw-beyond'>(beyond k)</span></td>" if beyond else f"<td>{pos}</td>")
        parts += [f"<td>{kw}</td>", lex]
        if semantic:
            near = r.get("nearest_gt")
            if near is None or (isinstance(near, float) and near != near):
                parts.append('<td class="kw-near">—</td><td class="kw-cos">n/a</td>')
            else:
                parts.append(f'<td class="kw-near">{esc(near)} ({esc(words.gt_position(int(r["nearest_rank"])))})</td>')
                parts.append(CosineCell(float(r["cosine"])))  # its own <td>: `html_holes.cosine_cell`
        if sentiment:
            parts.append(f'<td class="kw-v">{fmt_num(r.get("v"))}</td>')
        parts.append("</tr>")
    parts.append("</tbody></table>")
    return parts


def sentiment_line(text_v: float, gt_v: float, review: str = "review") -> str:
    """The review's reference sentiments as escaped HTML: v(review text) and the movie's GT mean (`review`: the
    data's word for the text, "document" on per-document data)."""
    return (
        f'<div class="kw-sentiment" style="font-size:0.9em;margin-top:0.3rem">Sentiment (VADER, v = pos + ½·neu): '
        f"{review} text v = <b>{fmt_num(text_v)}</b> · GT keywords mean v = <b>{fmt_num(gt_v)}</b></div>"
    )


def unmatched_html(row: Mapping, cell: bool = False) -> str:
    """The 'unmatched' cell of a keyword: the reason from `kweval.explain.why.match_reasons` when the row has one;
    `cell`: as a keyword table's ``<td>`` (classes only: the table's `TABLE_STYLE` styles them)."""
    status = row.get("status") if hasattr(row, "get") else None
    category = row.get("category") if hasattr(row, "get") else None
    label = ""
    if status == "taken":
        kind, text = "kw-unmatched kw-taken", f"— {esc(row['reason'])}"
    else:
        kind, text = "kw-unmatched", "— unmatched"
        if isinstance(category, str) and category in CATEGORY_LABELS and category not in ("hit", "hit_beyond_k"):
            detail = row.get("detail")
            near = f": {esc(detail)}" if isinstance(detail, str) and detail else ""
            style = "" if cell else ' style="opacity:0.75;font-size:0.9em"'
            label = (
                f' <span class="kw-category kw-{esc(category)}"{style}>[{esc(CATEGORY_LABELS[category])}{near}]</span>'
            )
    if cell:
        return f'<td class="{kind}">{text}{label}</td>'
    return f'<span class="{kind}">{text}</span>{label}'


def gt_top_html(
    gt: pd.DataFrame,
    k: int,
    keywords: pd.DataFrame,
    colors: Mapping[str, str] | None = None,
    words: Vocabulary = MOVIE_WORDS,
) -> str:
    """The movie's top-k GT keywords with their rank, each followed by the models that matched it in this review.

    `gt`: the movie's rows of `Evaluation.ground_truth`; `keywords`: the
    review's rows of `Evaluation.keywords`.  Visible text, not a tooltip
    (touch screens have no hover).  Everything escaped.  An unranked GT (`words.gt_ranked` False: keyphrase
    benchmarks) is a set: every keyword is listed, with no rank and no "top".
    """
    ranked = words.gt_ranked
    top = gt.sort_values("rank").head(max(int(k), 0)) if ranked else gt.sort_values("rank")
    by_rank: dict[int, list[str]] = {}
    for model, rank in zip(keywords["model"].tolist(), keywords["gt_rank"].tolist()):  # the matched ones
        if rank >= 0:
            by_rank.setdefault(int(rank), []).append(str(model))
    items = []
    for rank, kw in zip(top["rank"], top["keyword"]):
        who = by_rank.get(int(rank), [])
        tags = "".join(
            f' <span class="kw-by" style="border:1px solid '
            f"{esc((colors or {}).get(m, 'currentColor'))};border-radius:0.6em;"
            f'padding:0 0.35em;font-size:0.8em">{esc(m)}</span>'
            for m in who
        )
        number = f'<span class="kw-gt-rank" style="opacity:0.7">{int(rank)}.</span> ' if ranked else ""
        items.append(f"<li>{number}<b>{esc(kw)}</b>{tags}</li>")
    more = (
        f'<div style="opacity:0.7;font-size:0.85em">{len(gt) - len(top)} more GT keyword(s) below rank '
        f"{int(k) - 1}</div>"
        if len(gt) > len(top)
        else ""
    )
    heading = f"Top {len(top)} GT keywords" if ranked else f"GT keywords ({len(top)}, unranked)"
    return (
        f'<div class="kw-gt-top"><div style="font-weight:600">{heading}</div>'
        f'<ul style="list-style:none;margin:0;padding-left:0">{"".join(items)}</ul>{more}</div>'
    )


def model_grid_start(min_width_rem: float = 16) -> str:
    """The opening tag of the model grid: model columns side by side that wrap to one column on a narrow (phone)
    screen (a card template puts its model cells after it, then ``</div>``)."""
    return (
        f'<div class="kw-models" '
        f'style="display:grid;grid-template-columns:repeat(auto-fit,minmax(min({float(min_width_rem):g}rem,100%),1fr));'
        f'gap:0.8rem;margin-top:0.4rem">'
    )
