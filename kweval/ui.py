"""Helpers for the dashboard that need no Streamlit: escaping, highlighting, URL state, explorer tables.

Review text, keywords, titles, movie and model names and file names are user
content.  Everything here that returns HTML escapes that content with
`html.escape` first; `md` makes a value safe inside Markdown as well (HTML
escaped, Markdown and LaTeX punctuation backslash-escaped).  Nothing here
computes a metric: the explorer tables only reshape `Evaluation.scores` and
`Evaluation.keywords`; the semantic and sentiment views (`keyword_details`)
call `kweval.semantic.nearest_gt_table` and `kweval.sentiment.keyword_values`.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from urllib.parse import quote_plus, urlencode

import numpy as np
import pandas as pd

from kweval import registry
from kweval.evaluate import AGGREGATIONS
from kweval.matching import MATCH_MODES

TAU_DEFAULT = 0.75  # METRICS.md §4's default cosine threshold
TAU_MIN, TAU_MAX, TAU_STEP = 0.50, 0.95, 0.01  # the sidebar slider's range

# ----------------------------------------------------------------------------------------------
# escaping


def esc(value: object) -> str:
    """HTML-escaped text of `value` (None and NaN become "")."""
    if value is None or (isinstance(value, float) and value != value):
        return ""
    return html.escape(str(value), quote=True)


_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|~>$^=:])")


# GFM turns bare URLs, www. names and e-mail addresses into links after escapes are decoded: an
# invisible WORD JOINER (U+2060) inside each pattern keeps them text (issue 15, item 8).
_AUTOLINK = re.compile(r"(?i)(https?:|ftp:)(?=//)|\bwww(?=\.)|(?<=[\w.+-])@(?=[-\w]+\.[-\w])")


def md(value: object) -> str:
    """`value` as literal text inside Markdown: HTML escaped, Markdown/LaTeX punctuation backslash-escaped,
    never an autolink."""
    if value is None or (isinstance(value, float) and value != value):
        return ""
    text = _AUTOLINK.sub(lambda m: m.group(0) + "\u2060", str(value))
    text = _MD_SPECIAL.sub(r"\\\1", text).replace("\n", " ")
    return html.escape(text, quote=True)


# ----------------------------------------------------------------------------------------------
# highlighting

_STOPWORDS = frozenset(
    "a an and are as at be but by for from has he her his i in is it its of on or she so that the their they "
    "this to was were what when which who will with you your not no".split()
)
_WORD = re.compile(r"\w+")


def _text_words(text: str) -> tuple[list[tuple[int, int]], list[str], dict[str, list[int]]]:
    """The text's words: their spans, their casefolded forms, and word → indices of its occurrences."""
    spans = [m.span() for m in _WORD.finditer(text)]
    words = [text[a:b].casefold() for a, b in spans]
    index: dict[str, list[int]] = {}
    for i, w in enumerate(words):
        index.setdefault(w, []).append(i)
    return spans, words, index


def _keyword_hits(keyword: str, spans, words, index) -> list[tuple[int, int]]:
    """Spans of the text where `keyword` occurs: the whole phrase (consecutive words), then each content word.

    Word lookups in the text's index, no regex per keyword: the cost is the
    keyword's length plus the occurrences found in the text, however long
    the keyword is.
    """
    kw_words = [w.casefold() for w in _WORD.findall(keyword or "")]
    if not kw_words:
        return []
    hits: list[tuple[int, int]] = []
    n = len(kw_words)
    if n <= len(words):  # a phrase longer than the text cannot occur in it
        for i in index.get(kw_words[0], ()):
            if words[i : i + n] == kw_words:
                hits.append((spans[i][0], spans[i + n - 1][1]))
    if n > 1:
        for w in dict.fromkeys(kw_words):
            if len(w) > 1 and w not in _STOPWORDS:
                hits.extend(spans[i] for i in index.get(w, ()))
    return hits


def match_spans(text: str, keywords: Mapping[str, str] | Iterable[str]) -> list[tuple[int, int, str]]:
    """Merged, sorted (start, end, tooltip) spans of `text` where the keywords' words occur (any case).

    `keywords` maps each keyword to its tooltip (or is a plain iterable of
    keywords).  A keyword marks its whole phrase and, when it has several
    words, each content word.  Overlapping spans are merged and their
    tooltips joined.
    """
    if not text:
        return []
    items = keywords.items() if isinstance(keywords, Mapping) else ((k, k) for k in keywords)
    spans, words, index = _text_words(text)
    raw: list[tuple[int, int, str]] = []
    for keyword, tip in items:
        raw.extend((a, b, tip) for a, b in _keyword_hits(keyword, spans, words, index))
    raw.sort()
    merged: list[list] = []
    for start, end, tip in raw:
        if merged and start < merged[-1][1]:
            last = merged[-1]
            last[1] = max(last[1], end)
            if tip not in last[2]:
                last[2].append(tip)
        else:
            merged.append([start, end, [tip]])
    return [(s, e, "; ".join(t)) for s, e, t in merged]


def highlight(text: str | None, keywords: Mapping[str, str] | Iterable[str]) -> str:
    """`text` as escaped HTML with every matched keyword's words wrapped in <mark title=...>."""
    if not isinstance(text, str) or not text:
        return ""
    out: list[str] = []
    pos = 0
    for start, end, tip in match_spans(text, keywords):
        out.append(esc(text[pos:start]))
        out.append(f'<mark title="{esc(tip)}">{esc(text[start:end])}</mark>')
        pos = end
    out.append(esc(text[pos:]))
    return "".join(out)


def review_html(text: str | None, keywords: Mapping[str, str] | Iterable[str], max_height: int = 320) -> str:
    """A scrollable block of the highlighted review text (newlines kept)."""
    body = highlight(text, keywords) or "<em>(no review text in this dataset)</em>"
    return (
        f'<div class="kw-review" style="white-space:pre-wrap;max-height:{int(max_height)}px;overflow-y:auto;'
        f'line-height:1.5;padding:0.25rem 0">{body}</div>'
    )


def keyword_list_html(rows: pd.DataFrame, k: int) -> str:
    """One model's ranked keywords (rows with position, keyword, gt_rank, gt_keyword) as an escaped HTML list.

    Matched keywords show the GT keyword they took and its 0-based GT rank;
    unmatched ones say so; positions at or beyond k are marked (they do not
    count for the @k metrics).
    """
    if rows.empty:
        return '<div class="kw-list"><em>empty output</em></div>'
    items = []
    for row in rows.to_dict("records"):
        pos, kw, rank, gt_kw = row["position"], row["keyword"], row["gt_rank"], row["gt_keyword"]
        beyond = ' <span style="opacity:0.6">(beyond k)</span>' if int(pos) >= k else ""
        if int(rank) >= 0:
            items.append(
                f'<li><mark>{esc(kw)}</mark> → <b>{esc(gt_kw)}</b> '
                f'<span class="kw-gt">(GT rank {int(rank)})</span>{beyond}</li>'
            )
        else:
            items.append(f'<li><span style="opacity:0.75">{esc(kw)}</span> {unmatched_html(row)}{beyond}</li>')
    return f'<ol class="kw-list" start="0" style="margin:0;padding-left:1.6rem">{"".join(items)}</ol>'


def keyword_details(
    rows: pd.DataFrame,
    gt: pd.DataFrame,
    vectors=None,
    threshold: float = TAU_DEFAULT,
    sentiment: bool = False,
) -> pd.DataFrame:
    """One review's keywords (every model) with the semantic and sentiment views of the explorer.

    `rows`: the review's rows of `Evaluation.keywords` (model, position,
    keyword, norm, gt_rank, gt_keyword).  `gt`: the movie's rows of
    `Evaluation.ground_truth`.  With `vectors` (a mapping norm → vector, or an
    embedder function, as `kweval.semantic.nearest_gt` takes) each keyword
    gets its nearest GT keyword, that GT keyword's rank, the cosine and
    whether it is above `threshold` (`kweval.semantic.nearest_gt_table`);
    with `sentiment`, its VADER value ``v`` (`kweval.sentiment.keyword_values`).
    Nothing is computed here beyond calling those.
    """
    out = rows.reset_index(drop=True)
    if vectors is not None:
        from kweval.semantic import nearest_gt_table

        parts = [nearest_gt_table(grp, gt, vectors, threshold) for _, grp in out.groupby("model", sort=False)]
        out = pd.concat(parts, ignore_index=True) if parts else out.assign(nearest_gt=None, nearest_rank=-1, cosine=float("nan"), above=False)
    if sentiment:
        from kweval.sentiment import keyword_values

        out = out.assign(v=keyword_values(out[[c for c in ("keyword", "norm") if c in out.columns]]) if len(out) else [])
    return out


def fmt_num(value: object, digits: int = 3) -> str:
    try:
        x = float(value)
    except (TypeError, ValueError):
        return "n/a"
    return "n/a" if x != x else f"{x:.{digits}f}"


_TABLE_STYLE = (
    "<style>.kw-table{border-collapse:collapse;font-size:0.85em;width:100%;margin-top:0.2rem}"
    ".kw-table th{text-align:left;font-weight:600;padding:0.1rem 0.35rem}"
    ".kw-table td{padding:0.1rem 0.35rem;border-bottom:1px solid rgba(128,128,128,0.25);vertical-align:top}</style>"
)


def keyword_table_html(rows: pd.DataFrame, k: int, semantic: bool = False, sentiment: bool = False,
                       threshold: float = TAU_DEFAULT) -> str:
    """One model's ranked keywords as an escaped HTML table: the lexical match, then (from `keyword_details`)
    the nearest GT keyword and its cosine (marked when above `threshold`) and the VADER value v(x).

    Positions at or beyond k are dimmed and say so.
    """
    if rows.empty:
        return '<div class="kw-list"><em>empty output</em></div>'
    head = ["#", "keyword", "lexical match"]
    if semantic:
        head += ["nearest GT", "cosine"]
    if sentiment:
        head += ["v(x)"]
    lines = []
    for _, r in rows.iterrows():
        pos = int(r["position"])
        beyond = pos >= k
        matched = int(r["gt_rank"]) >= 0
        kw = f"<mark>{esc(r['keyword'])}</mark>" if matched else esc(r["keyword"])
        lex = (f'<b>{esc(r["gt_keyword"])}</b> <span class="kw-gt">(GT rank {int(r["gt_rank"])})</span>' if matched
               else unmatched_html(r))
        cells = [f"{pos} <span class='kw-beyond'>(beyond k)</span>" if beyond else str(pos), kw, lex]
        if semantic:
            near = r.get("nearest_gt")
            if near is None or (isinstance(near, float) and near != near):
                cells += ['<span class="kw-near">—</span>', '<span class="kw-cos">n/a</span>']
            else:
                cells.append(f'<span class="kw-near">{esc(near)}</span> <span class="kw-gt">(GT rank {int(r["nearest_rank"])})</span>')
                cos = fmt_num(r["cosine"])
                if bool(r["above"]):
                    cells.append(f'<mark class="kw-cos kw-above" title="cosine &gt; τ = {format_tau(threshold)}">{cos} ✓</mark>')
                else:
                    cells.append(f'<span class="kw-cos">{cos}</span>')
        if sentiment:
            cells.append(f'<span class="kw-v">{fmt_num(r.get("v"))}</span>')
        style = ' style="opacity:0.6"' if beyond else ""
        lines.append(f"<tr{style}>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    th = "".join(f"<th>{esc(h)}</th>" for h in head)
    return (f"{_TABLE_STYLE}<table class=\"kw-table\"><thead><tr>{th}</tr></thead><tbody>{''.join(lines)}</tbody></table>")


def sentiment_line(text_v: float, gt_v: float) -> str:
    """The review's reference sentiments as escaped HTML: v(review text) and the movie's GT mean."""
    return (f'<div class="kw-sentiment" style="font-size:0.9em;margin-top:0.3rem">Sentiment (VADER, v = pos + ½·neu): '
            f'review text v = <b>{fmt_num(text_v)}</b> · GT keywords mean v = <b>{fmt_num(gt_v)}</b></div>')


def matched_tooltips(keywords: pd.DataFrame, model: str | None = None) -> dict[str, str]:
    """{predicted keyword: "model: GT keyword (GT rank j)"} for the matched rows of `keywords`.

    With `model`, only that model's matches: the review text then marks what
    that model found, never what another model found (highlights are per model).
    """
    tips: dict[str, list[str]] = {}
    matched = keywords[keywords["gt_rank"] >= 0]
    if model is not None:
        matched = matched[matched["model"] == model]
    for name, kw, rank, gt_kw in zip(matched["model"], matched["keyword"], matched["gt_rank"], matched["gt_keyword"]):
        tips.setdefault(str(kw), []).append(f"{name}: {gt_kw} (GT rank {int(rank)})")
    return {kw: ", ".join(v) for kw, v in tips.items()}


def unmatched_html(row: Mapping) -> str:
    """The 'unmatched' cell of a keyword: the reason from `kweval.why.match_reasons` when the row has one."""
    status = row.get("status") if hasattr(row, "get") else None
    if status == "taken":
        return f'<span class="kw-unmatched kw-taken">— {esc(row["reason"])}</span>'
    return '<span class="kw-unmatched">— unmatched</span>'


# ----------------------------------------------------------------------------------------------
# selection <-> URL query parameters

AGG_DEFAULT = "macro"
MATCH_DEFAULT = "approx"
K_DEFAULT = 5
K_MAX = 50


@dataclass(frozen=True)
class Selection:
    """What the sidebar selects; it round-trips through the URL query parameters.

    `semantic` / `threshold` / `sentiment` are the optional METRICS.md §4–§5
    metrics (URL ``sem=1``, ``tau=0.75``, ``sas=1``).
    """

    movie: str
    models: tuple[str, ...]
    k: int = K_DEFAULT
    agg: str = AGG_DEFAULT
    match: str = MATCH_DEFAULT
    semantic: bool = False
    threshold: float = TAU_DEFAULT
    sentiment: bool = False
    notes: tuple[str, ...] = field(default=(), compare=False)

    def params(self) -> dict[str, str]:
        return {
            "movie": self.movie, "models": ",".join(self.models), "k": str(self.k), "agg": self.agg, "match": self.match,
            "sem": "1" if self.semantic else "0", "tau": format_tau(self.threshold), "sas": "1" if self.sentiment else "0",
        }


SELECTION_KEYS = ("movie", "models", "k", "agg", "match", "sem", "tau", "sas")
_TRUE = frozenset({"1", "true", "on", "yes"})
_FALSE = frozenset({"0", "false", "off", "no"})


def format_tau(tau: float) -> str:
    """The threshold as the URL writes it (two decimals: the slider's step)."""
    return f"{float(tau):.2f}"


def parse_flag(raw: str) -> bool | None:
    """``1/true/on/yes`` → True, ``0/false/off/no`` → False (any case), else None."""
    text = str(raw).strip().casefold()
    return True if text in _TRUE else False if text in _FALSE else None


def parse_tau(raw: str) -> float | None:
    """A threshold within the slider's range, rounded to its step; else None."""
    try:
        tau = round(float(raw), 2)
    except (TypeError, ValueError):
        return None
    return tau if TAU_MIN <= tau <= TAU_MAX else None  # NaN fails both comparisons


def _first(value: object) -> str | None:
    if isinstance(value, (list, tuple)):
        value = value[-1] if value else None
    return None if value is None else str(value)


def resolve_selection(
    sources: Sequence[Mapping[str, object]],
    movies: Sequence[str],
    models: Sequence[str],
) -> Selection:
    """The selection from the first source that holds a valid value for each key (URL first, then session).

    Invalid values are skipped with a note (shown to the user); defaults:
    the first movie (``ALL`` stands for every movie), every model, k=5,
    macro, approx, semantic and sentiment off, threshold 0.75.
    """
    notes: list[str] = []

    def pick(key: str, parse, default):
        for src in sources:
            raw = _first(src.get(key))
            if raw is None or raw == "":
                continue
            value = parse(raw)
            if value is None:
                notes.append(f"ignored {key}={raw!r}")
                continue
            return value
        return default

    def parse_movie(raw: str):
        return raw if raw in movies or raw == "ALL" else None

    def parse_models(raw: str):
        chosen = [m for m in dict.fromkeys(s.strip() for s in raw.split(",")) if m in models]
        return tuple(chosen) or None

    def parse_k(raw: str):
        try:
            k = int(raw)
        except ValueError:
            return None
        return k if 1 <= k <= K_MAX else None

    movie = pick("movie", parse_movie, movies[0] if movies else "ALL")
    chosen = pick("models", parse_models, tuple(models))
    k = pick("k", parse_k, K_DEFAULT)
    agg = pick("agg", lambda r: r if r in AGGREGATIONS else None, AGG_DEFAULT)
    match = pick("match", lambda r: r if r in MATCH_MODES else None, MATCH_DEFAULT)
    semantic = pick("sem", parse_flag, False)
    tau = pick("tau", parse_tau, TAU_DEFAULT)
    sentiment = pick("sas", parse_flag, False)
    return Selection(movie, chosen, k, agg, match, semantic, tau, sentiment, tuple(notes))


def page_params(selection: Selection, **extra: object) -> dict[str, str]:
    """Query parameters of a link to a page with this selection plus page-specific ones (None dropped)."""
    out = selection.params()
    out.update({k: str(v) for k, v in extra.items() if v is not None and v != ""})
    return out


def page_links(path: str, selection: Selection, **per_row: Sequence[object]) -> list[str]:
    """Relative links ``./path?query`` to a page, one per row: the selection plus each row's values of `per_row`.

    Link ``i`` is ``./path?`` + urlencode(page_params(selection, name=values[i], ...)),
    but the selection is encoded once and each distinct row value once: a
    table of every review gets its links without re-encoding the selection
    thousands of times.
    """
    fixed = page_params(selection)
    segments: list[str | tuple[str, Sequence[object]]] = []  # encoded constant runs, or (name, one value per row)
    for name in page_params(selection, **{name: "-" for name in per_row}):  # page_params's order of the keys
        if name in per_row:
            segments.append((name, per_row[name]))
        elif segments and isinstance(segments[-1], str):
            segments[-1] += "&" + urlencode({name: fixed[name]})
        else:
            segments.append(urlencode({name: fixed[name]}))
    encoded: dict[tuple[str, object], str] = {}

    def pair(name: str, value: object) -> str:
        if value is None or value == "":  # dropped, as page_params drops it
            return ""
        if (name, value) not in encoded:
            encoded[(name, value)] = f"{quote_plus(name)}={quote_plus(str(value))}"  # urlencode({name: value})
        return encoded[(name, value)]

    n_rows = len(next(iter(per_row.values()))) if per_row else 1
    links = []
    for i in range(n_rows):
        parts = [seg if isinstance(seg, str) else pair(seg[0], seg[1][i]) for seg in segments]
        links.append(f"./{path}?" + "&".join(part for part in parts if part))
    return links


# ----------------------------------------------------------------------------------------------
# explorer tables (reshaping only)

SORTS = ("review order", "lowest nDCG", "largest disagreement", "A worse than B", "B worse than A", "most matched")
DIRECTIONAL_SORTS = {"A worse than B": (0, 1), "B worse than A": (1, 0)}  # (worse, better) index into `pair`


def review_table(
    scores: pd.DataFrame,
    reviews: pd.DataFrame,
    movie: str,
    models: Sequence[str],
    metric: str,
) -> pd.DataFrame:
    """One row per evaluated review of `movie` (every movie for ALL): its metadata and each model's `metric`.

    Columns: movie, review_id, title, rating, length, text, then
    ``{metric}·{model}`` and ``matched·{model}`` per model (NaN where the model
    skipped the review), and ``n_matched_total``.
    """
    sc = scores[scores["model"].isin(models)]
    if movie != "ALL":
        sc = sc[sc["movie"] == movie]
    wide = sc.pivot_table(index=["movie", "review_id"], columns="model", values=[metric, "n_matched"], sort=False, aggfunc="first")
    keys = sc[["movie", "review_id"]].drop_duplicates()
    out = keys.reset_index(drop=True)
    index = pd.MultiIndex.from_frame(out)
    for model in models:
        out[f"{metric}·{model}"] = wide[(metric, model)].reindex(index).to_numpy() if (metric, model) in wide else float("nan")
        out[f"matched·{model}"] = wide[("n_matched", model)].reindex(index).to_numpy() if ("n_matched", model) in wide else float("nan")
    out["n_matched_total"] = out[[f"matched·{m}" for m in models]].sum(axis=1, min_count=0) if models else 0
    rv = reviews.drop_duplicates(["movie", "review_id"]).set_index(["movie", "review_id"])
    meta = rv.reindex(index)
    out.insert(2, "title", meta["title"].to_numpy() if "title" in meta else None)
    out.insert(3, "rating", meta["rating"].to_numpy() if "rating" in meta else float("nan"))
    text = meta["text"] if "text" in meta else pd.Series([None] * len(out))
    out.insert(4, "length", text.map(lambda t: len(t) if isinstance(t, str) else 0).to_numpy())
    out.insert(5, "text", text.to_numpy())
    return out


def filter_reviews(
    table: pd.DataFrame,
    metric: str,
    models: Sequence[str],
    sort: str = "review order",
    query: str = "",
    nothing_matched: bool = False,
    pair: tuple[str, str] | None = None,
) -> pd.DataFrame:
    """Filter and sort a `review_table`.

    - ``query``: case-insensitive substring of the text, title or review id.
    - ``nothing_matched``: only reviews where no selected model matched a GT keyword.
    - sorts: review order; lowest `metric` (mean over the models); largest
      disagreement (|A − B| for `pair`, else max − min over the models);
      "A worse than B" / "B worse than A" (only the reviews where that model of
      `pair` scores strictly lower, the largest gap first); most matched keywords.
    """
    out = table
    if query:
        q = query.casefold()
        hay = (
            out["text"].fillna("").astype(str).str.casefold()
            + "\x00" + out["title"].fillna("").astype(str).str.casefold()
            + "\x00" + out["review_id"].astype(str).str.casefold()
        )
        out = out[hay.str.contains(q, regex=False)]
    if nothing_matched:
        out = out[out["n_matched_total"].fillna(0) == 0]
    cols = [f"{metric}·{m}" for m in models if f"{metric}·{m}" in out]
    if sort == "lowest nDCG" and cols:
        key = out[cols].mean(axis=1)
        out = out.assign(_key=key).sort_values("_key", kind="stable", na_position="last").drop(columns="_key")
    elif sort == "largest disagreement" and cols:
        if pair and all(f"{metric}·{m}" in out for m in pair):
            key = (out[f"{metric}·{pair[0]}"] - out[f"{metric}·{pair[1]}"]).abs()
        else:
            key = out[cols].max(axis=1) - out[cols].min(axis=1)
        out = out.assign(_key=key).sort_values("_key", ascending=False, kind="stable", na_position="last").drop(columns="_key")
    elif sort in DIRECTIONAL_SORTS and pair and all(f"{metric}·{m}" in out for m in pair):
        worse, better = (f"{metric}·{pair[i]}" for i in DIRECTIONAL_SORTS[sort])
        gap = out[better] - out[worse]
        out = out.assign(_key=gap)[gap > 0].sort_values("_key", ascending=False, kind="stable").drop(columns="_key")
    elif sort == "most matched":
        out = out.sort_values("n_matched_total", ascending=False, kind="stable")
    return out


def paginate(table: pd.DataFrame, page: int, per_page: int) -> tuple[pd.DataFrame, int, int]:
    """(rows of `page` (1-based, clamped), the clamped page, the number of pages)."""
    n_pages = max(1, -(-len(table) // per_page))
    page = min(max(1, int(page)), n_pages)
    return table.iloc[(page - 1) * per_page : page * per_page], page, n_pages


# ----------------------------------------------------------------------------------------------
# dataset identity and overview


def dataset_overview(dataset, evaluation) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(per movie: title, reviews, GT keywords, evaluated review × model pairs, skipped;
    per model: score direction, predicted keywords, evaluated reviews, skipped reviews)."""
    movies = dataset.movies[["movie", "title"]].copy()
    n_rev = dataset.reviews.groupby("movie").size()
    n_gt = evaluation.ground_truth.groupby("movie").size()
    n_pairs = evaluation.scores.groupby("movie").size()
    n_skip = evaluation.skipped.groupby("movie").size() if len(evaluation.skipped) else pd.Series(dtype="int64")
    movies["reviews"] = movies["movie"].map(n_rev).fillna(0).astype("int64")
    movies["gt_keywords"] = movies["movie"].map(n_gt).fillna(0).astype("int64")
    movies["evaluated_pairs"] = movies["movie"].map(n_pairs).fillna(0).astype("int64")
    movies["skipped_pairs"] = movies["movie"].map(n_skip).fillna(0).astype("int64")
    models = dataset.models[["model", "score_direction"]].copy()
    kw = evaluation.keywords.groupby("model").size()
    ev = evaluation.scores.groupby("model").size()
    sk = evaluation.skipped.groupby("model").size() if len(evaluation.skipped) else pd.Series(dtype="int64")
    models["keywords"] = models["model"].map(kw).fillna(0).astype("int64")
    models["evaluated_reviews"] = models["model"].map(ev).fillna(0).astype("int64")
    models["skipped_reviews"] = models["model"].map(sk).fillna(0).astype("int64")
    return movies, models


# ----------------------------------------------------------------------------------------------
# presentation: colours, labels, best values, explorer blocks

# Mid-luminance hues: contrast ≥ 3 against both a white and Streamlit's dark background (#0E1117),
# so one map serves both themes and a model keeps its colour when the theme changes.
MODEL_PALETTE = ("#4E79A7", "#D95F02", "#1B9E77", "#E7298A", "#7570B3", "#A6761D", "#D62728", "#CC79A7")


FLAG_BACKGROUND = "rgba(214, 39, 40, 0.22)"  # rows to notice: translucent, so legible on light and dark themes


def model_colors(models: Sequence[str]) -> dict[str, str]:
    """{model: colour} by the model's place in the dataset's model list (not the selection), so it never shifts."""
    return {m: MODEL_PALETTE[i % len(MODEL_PALETTE)] for i, m in enumerate(dict.fromkeys(models))}


def metric_label(metric: str) -> str:
    """The registry's label of a column (the column name when unregistered)."""
    entry = registry.info(metric)
    return entry.label if entry is not None else metric


def axis_title(metric: str, agg: str) -> str:
    """An axis title naming the metric and how reviews were aggregated (ranking metrics and SAS are means in both modes)."""
    entry = registry.info(metric)
    if agg == "micro" and entry is not None and entry.group in ("set", "semantic"):
        how = "micro: from counts summed over reviews"
    elif entry is not None and entry.group == "coverage":
        how = "per movie"
    else:
        how = "mean over reviews"
    return f"{metric_label(metric)} ({how})"


def best_mask(table: pd.DataFrame) -> pd.DataFrame:
    """True where a cell holds its column's best value among its movie's rows (`kweval.report.best_rows`)."""
    from kweval.report import best_rows

    frame = table.reset_index(drop=True)
    mask = pd.DataFrame(False, index=frame.index, columns=frame.columns)
    for col, rows in best_rows(frame).items():
        mask.loc[sorted(rows), col] = True
    mask.index = table.index
    return mask


def best_styles(table: pd.DataFrame) -> pd.DataFrame:
    """CSS per cell for `DataFrame.style.apply(..., axis=None)`: the best value per movie and column in bold."""
    return best_mask(table).replace({True: "font-weight: 700", False: ""}).astype(object)


def gt_top_html(gt: pd.DataFrame, k: int, keywords: pd.DataFrame, colors: Mapping[str, str] | None = None) -> str:
    """The movie's top-k GT keywords with their rank, each followed by the models that matched it in this review.

    `gt`: the movie's rows of `Evaluation.ground_truth`; `keywords`: the
    review's rows of `Evaluation.keywords`.  Visible text, not a tooltip
    (touch screens have no hover).  Everything escaped.
    """
    top = gt.sort_values("rank").head(max(int(k), 0))
    matched = keywords[keywords["gt_rank"] >= 0]
    by_rank: dict[int, list[str]] = {}
    for model, rank in zip(matched["model"], matched["gt_rank"]):
        by_rank.setdefault(int(rank), []).append(str(model))
    items = []
    for rank, kw in zip(top["rank"], top["keyword"]):
        who = by_rank.get(int(rank), [])
        tags = "".join(
            f' <span class="kw-by" style="border:1px solid {esc((colors or {}).get(m, "currentColor"))};border-radius:0.6em;'
            f'padding:0 0.35em;font-size:0.8em">{esc(m)}</span>' for m in who
        )
        items.append(f'<li><span class="kw-gt-rank" style="opacity:0.7">{int(rank)}.</span> <b>{esc(kw)}</b>{tags}</li>')
    more = f'<div style="opacity:0.7;font-size:0.85em">{len(gt) - len(top)} more GT keyword(s) below rank {int(k) - 1}</div>' if len(gt) > len(top) else ""
    return (f'<div class="kw-gt-top"><div style="font-weight:600">Top {len(top)} GT keywords</div>'
            f'<ul style="list-style:none;margin:0;padding-left:0">{"".join(items)}</ul>{more}</div>')


def model_grid_html(cells: Sequence[str], min_width_rem: float = 16) -> str:
    """Model columns side by side that wrap to one column on a narrow (phone) screen."""
    return (f'<div class="kw-models" style="display:grid;grid-template-columns:repeat(auto-fit,minmax(min({float(min_width_rem):g}rem,100%),1fr));'
            f'gap:0.8rem;margin-top:0.4rem">{"".join(cells)}</div>')


def jitter(values: Sequence[float], amount: float = 0.01, seed: int = 0) -> list[float]:
    """`values` plus seeded uniform noise in [−amount, amount]: overlapping scatter points become visible."""
    x = np.asarray(values, dtype="float64")
    return (x + np.random.default_rng(seed).uniform(-amount, amount, size=x.shape)).tolist()
