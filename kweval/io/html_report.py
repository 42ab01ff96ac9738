"""The standalone HTML report (`kweval report`): one file to send to people who will not run anything.

`render_html(data, plotly_js)` writes a `kweval.io.report_data.ReportData` as
one self-contained page: the headline card, the summary table with CIs, the
charts (plotly.js embedded inline, nothing fetched from any host), the verdict
matrix, three worked examples with highlighted text, and the protocol card.

Safety: every string from the data is HTML-escaped (`escape_html`); figure
data is embedded as script-safe JSON (`charts.script_json`); and a
Content-Security-Policy admits only this page's own scripts, by their SHA-256
(no inline event handler, no remote script, image or font), so even a string
that escaped escaping could not run or load anything.
"""

from __future__ import annotations

import base64
import hashlib
import importlib.util
import math
from pathlib import Path

import pandas as pd

from kweval import __version__
from kweval.evaluation.options import Progress, no_progress
from kweval.extras import MissingExtra
from kweval.io import charts
from kweval.io.highlight import escape_html as esc
from kweval.io.highlight import highlight
from kweval.io.report import best_rows
from kweval.io.report_data import REPORT_STAGES, Example, ReportData, all_rows_first, stage
from kweval.messages import shown
from kweval.metrics import registry
from kweval.stats import verdict as verdicts
from kweval.stats.families import families_in
from kweval.stats.numbers import decimals_for, decimals_for_interval, format_interval, format_level, format_number
from kweval.stats.story import story_lines

STYLE = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0 auto;max-width:1200px;
padding:1rem 1.5rem;color:#1f2430;line-height:1.45}
h1{font-size:1.6rem;margin-bottom:0.2rem} h2{margin-top:2rem;border-bottom:1px solid #ddd;padding-bottom:0.2rem}
.sub{color:#666;margin-top:0}
.headline{background:#f4f7ff;border:1px solid #c9d5f5;border-radius:8px;padding:0.6rem 1.2rem}
.headline li{margin:0.35rem 0} .headline li.sig::marker{content:"✓ ";color:#1a7f37}
.headline li.ns::marker{content:"○ ";color:#888}
table{border-collapse:collapse;font-size:0.85rem;margin:0.5rem 0} th,td{padding:0.2rem 0.45rem;
border-bottom:1px solid #e3e3e3;text-align:right;vertical-align:top} th{background:#fafafa}
td.t,th.t{text-align:left} .ci{color:#777;font-size:0.78rem} .scroll{overflow-x:auto}
td.win{background:#b9e4c1} td.loss{background:#f3b8b8} td.ahead{background:#e6f5e9} td.behind{background:#fbe7e7}
td.tie,td.na{background:#f1f1f1;color:#777}
.example{border:1px solid #ddd;border-radius:8px;padding:0.5rem 1rem;margin:1rem 0}
.text{white-space:pre-wrap;max-height:320px;overflow-y:auto;background:#fcfcfc;padding:0.4rem;border-radius:4px}
mark{background:#ffe27a} .cols{display:grid;grid-template-columns:repeat(auto-fit,minmax(16rem,1fr));gap:0.8rem}
ol,ul{margin:0.2rem 0;padding-left:1.4rem} .miss{color:#999} .note{color:#555;font-size:0.85rem}
.charts{display:flex;flex-wrap:wrap;gap:0.5rem} .charts .chart{flex:1 1 20rem;min-width:0}
"""


def plotly_js() -> str:
    """plotly.js (minified) from the installed plotly package, to embed inline; MissingExtra when absent.

    The file is read as data (the package is located, never imported): the core imports no UI package.
    """
    spec = importlib.util.find_spec("plotly")
    origin = Path(spec.origin).parent if spec is not None and spec.origin else None
    path = origin / "package_data" / "plotly.min.js" if origin is not None else None
    if path is None or not path.is_file():
        raise MissingExtra("kweval report: needs plotly.js, from the plotly package: pip install 'kweval[app]'")
    return path.read_text(encoding="utf-8")


def _label(metric: str) -> str:
    entry = registry.info(metric)
    return entry.label if entry is not None else metric


def _help(metric: str) -> str:
    entry = registry.info(metric)
    return entry.definition if entry is not None else ""


def _across(row: dict) -> str:
    """A headline row's line on the other presets (`kweval.stats.across_presets`), under the story ("" without)."""
    text = row.get("across_presets")
    if not isinstance(text, str) or not text:
        return ""
    label = f"<b>{esc(row['label'])}</b>: "
    return f'<li class="across">{label}<span class="note across-presets">{esc(text)}</span></li>'


def headline_html(data: ReportData) -> str:
    """The headline card: the story in plain words (`kweval.stats.story.story_lines`), the statistics behind each
    line under "How sure" (a <details>, one click away)."""
    if data.headline.empty:
        return '<div class="headline"><p>Fewer than two models: nothing to compare.</p></div>'
    items = "".join(
        f'<li class="{"sig" if line["significant"] else "ns"}">{esc(line["text"])}</li>'
        for line in story_lines(data.headline.to_dict("records"), data.words)
    )
    details = "".join(
        f'<li class="{"sig" if row["significant"] else "ns"}">{esc(row["sentence"])}</li>'
        for row in data.headline.to_dict("records")
    )
    items += "".join(_across(row) for row in data.headline.to_dict("records"))  # the verdict under every preset
    units = esc(data.words.reviews.lower())
    families = esc(", ".join(families_in(data.metrics, data.family)))
    return (
        f'<div class="headline" id="headline"><h2 style="border:0;margin-top:0.4rem">At a glance</h2><ul>{items}</ul>'
        '<p class="note">✓ significant · ○ may be chance (not significant). Levels: the summary\'s values.</p>'
        f'<details id="how-sure"><summary>How sure: the statistics behind each line</summary><ul>{details}</ul>'
        f'<p class="note">Margin: the paired difference on the {units} both models were evaluated on. '
        f"Significance: paired randomization test, Holm-corrected within each family of metrics ({families}), as "
        "on the dashboard's Summary and Compare and in <code>kweval compare</code>; each interval is the paired "
        "bootstrap at its Holm step's confidence level, so interval and verdict tell the same story.</p></details>"
        "</div>"
    )


def _cell(value: float, low: float, high: float) -> str:
    if value is None or not math.isfinite(value):
        return '<span title="undefined: no value (see the notes)">—</span>'  # never a blank read as 0
    places = decimals_for_interval(value, low, high)
    ci = (
        f' <span class="ci">{format_interval(low, high, places)}</span>'
        if math.isfinite(low) and math.isfinite(high)
        else ""
    )
    return f"{format_number(value, places)}{ci}"


def summary_html(data: ReportData) -> str:
    """The summary table, ALL rows first, each value with its 95% bootstrap CI; the best per row group in bold."""
    table = all_rows_first(data.summary)
    metrics = [m for m in data.metrics if m in table.columns]
    best = best_rows(table[["movie", "model", *metrics]])
    lookup = {
        (str(a), str(b), str(c)): (lo, hi)
        for a, b, c, lo, hi in data.intervals[["movie", "model", "metric", "ci_low", "ci_high"]].itertuples(index=False)
    }
    head = [f'<th class="t">{esc(data.words.movie)}</th>', '<th class="t">Model</th>']
    head.append(f"<th>{esc(data.words.reviews)}</th>")
    head += [f'<th title="{esc(data.words.say(_help(m)))}">{esc(_label(m))}</th>' for m in metrics]
    rows = []
    for i, row in table.iterrows():
        cells = [f'<td class="t">{esc(row["movie"])}</td>', f'<td class="t">{esc(row["model"])}</td>']
        cells.append(f"<td>{int(row['n_reviews']):,}</td>")
        for m in metrics:
            lo, hi = lookup.get((str(row["movie"]), str(row["model"]), m), (math.nan, math.nan))
            text = _cell(float(row[m]), float(lo), float(hi))
            cells.append(f"<td><b>{text}</b></td>" if i in best.get(m, set()) and text else f"<td>{text}</td>")
        rows.append("<tr>" + "".join(cells) + "</tr>")
    return (
        f'<div class="scroll"><table id="summary"><thead><tr>{"".join(head)}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table></div>"
        f'<p class="note">Values: {esc(data.how)} aggregation over {esc(data.words.reviews.lower())}; grey: 95% '
        "bootstrap interval (2,000 resamples); bold: the best value per row group.</p>"
    )


def charts_html(data: ReportData) -> tuple[str, list[str]]:
    """(the charts' div, their scripts): the ALL rows as small multiples, one panel per metric, in two figures that
    wrap under each other on a narrow screen."""
    all_rows = data.summary[data.summary["movie"] == "ALL"].set_index("model")
    iv = data.intervals[data.intervals["movie"] == "ALL"]
    values = {m: {str(k): float(v) for k, v in all_rows[m].items()} for m in data.metrics if m in all_rows.columns}
    intervals: dict[str, dict[str, tuple[float, float]]] = {}
    for model, metric, lo, hi in iv[["model", "metric", "ci_low", "ci_high"]].itertuples(index=False):
        intervals.setdefault(str(metric), {})[str(model)] = (float(lo), float(hi))
    config = {"displaylogo": False, "responsive": True, "modeBarButtonsToRemove": ["sendDataToCloud"]}
    divs, scripts = [], []
    for i, half in enumerate(charts.halves(values), 1):  # side by side, or one under the other on a phone
        figure = charts.small_multiples(
            {m: values[m] for m in half}, intervals, {m: _label(m) for m in half}, data.models, charts.PANEL_COLUMNS
        )
        divs.append(f'<div id="chart-summary-{i}" class="chart"></div>')
        scripts.append(
            f"Plotly.newPlot('chart-summary-{i}',{charts.script_json(_clean(figure['data']))},"
            f"{charts.script_json(figure['layout'])},{charts.script_json(config)});"
        )
    return f'<div id="chart-summary" class="charts">{"".join(divs)}</div>', scripts


def _clean(value):
    """NaN and infinities as None (JSON null), recursively."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_clean(v) for v in value]
    return value


def verdicts_html(data: ReportData) -> str:
    """The verdict matrix (models × metrics, coloured by outcome) and the sentences on demand."""
    if data.verdicts.empty:
        return "<p>Only one model: no comparison.</p>"
    cells = verdicts.verdict_matrix(data.verdicts, "cell")
    outcomes = verdicts.verdict_matrix(data.verdicts, "outcome")
    css = {"win": "win", "loss": "loss", "ahead (n.s.)": "ahead", "behind (n.s.)": "behind", "tie": "tie"}
    head = '<th class="t">Model vs ' + esc(data.reference) + "</th>" + "".join(f"<th>{esc(c)}</th>" for c in cells)
    rows = []
    for model in cells.index:
        tds = "".join(
            f'<td class="{css.get(str(outcomes.loc[model, c]), "na")}">{esc(cells.loc[model, c])}</td>'
            for c in cells.columns
        )
        rows.append(f'<tr><td class="t">{esc(model)}</td>{tds}</tr>')
    sentences = "".join(f"<li>{esc(s)}</li>" for s in data.verdicts["sentence"])
    return (
        f'<div class="scroll"><table id="verdicts"><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody>'
        "</table></div>"
        '<p class="note">Each cell names the winner of that model against the reference on that metric: ✓ significant '
        "(paired randomization test, Holm-corrected across the metrics of the pair), (n.s.) not significant. "
        f"Comparisons under {esc(data.how)} aggregation"
        + (" compare the ratios of sums where a metric has one (micro)." if data.how == "micro" else " compare means.")
        + f"</p><details><summary>Every verdict in words</summary><ul>{sentences}</ul></details>"
    )


def _keyword_list(rows: pd.DataFrame, data: ReportData) -> str:
    if rows.empty:
        return '<p class="miss">(no keywords)</p>'
    items = []
    for _position, keyword, gt_rank, gt_keyword in rows.itertuples(index=False):
        if int(gt_rank) >= 0:
            where = esc(data.words.gt_position(int(gt_rank)))
            arrow = f" → <b>{esc(gt_keyword)}</b>" if gt_keyword else ""  # a preset's match names no GT phrase
            items.append(f"<li><mark>{esc(keyword)}</mark>{arrow} <span class='ci'>({where})</span>")
        else:
            items.append(f'<li class="miss">{esc(keyword)}</li>')
    return f"<ol start='0'>{''.join(items)}</ol>"


def example_html(example: Example, data: ReportData) -> str:
    """One worked example: why it was chosen, the text with the best model's matches marked, both lists, the GT."""
    models = list(example.keywords)
    best = models[0]
    kw = example.keywords[best]
    tips = {str(k): f"{best}: {g}" for k, r, g in zip(kw["keyword"], kw["gt_rank"], kw["gt_keyword"]) if int(r) >= 0}
    text = highlight(example.text, tips) if example.text else '<em class="miss">(no text in this dataset)</em>'
    values = ", ".join(
        f"{esc(m)} {format_number(v, decimals_for(example.values.values()))}" for m, v in example.values.items()
    )
    columns = "".join(f"<div><h4>{esc(m)}</h4>{_keyword_list(example.keywords[m], data)}</div>" for m in models)
    gt_tag = "ol start='0'" if data.words.gt_ranked else "ul"
    gt = "".join(f"<li>{esc(k)}</li>" for _r, k in example.ground_truth)
    kind = f"Typical {data.words.review.lower()}" if example.kind == "Typical" else example.kind
    return (
        f'<section class="example"><h3>{esc(kind)}: {esc(data.words.review)} {esc(example.review_id)} '
        f"({esc(data.words.movie)} {esc(example.movie_title)})</h3>"
        f"<p>{esc(_label(example.metric))}: {values}. Marked in the text: what {esc(best)} matched.</p>"
        f'<div class="text">{text}</div><div class="cols">{columns}'
        f"<div><h4>Ground truth</h4><{gt_tag}>{gt}</{gt_tag.split()[0]}></div></div></section>"
    )


def _card_value(value: object) -> str:
    """A card entry as HTML: a list one item a line, a mapping one `key: value` a line, else the escaped text."""
    if isinstance(value, dict):
        return "<br>".join(f"{esc(k)}: {esc(v)}" for k, v in value.items())
    if isinstance(value, list):
        return "<br>".join(esc(v) for v in value)
    return esc(value)


def card_html(card: dict) -> str:
    """The protocol card: every convention the numbers depend on, as a two-column table."""
    rows = "".join(
        f'<tr><th class="t">{esc(str(k).replace("_", " "))}</th><td class="t">{_card_value(v)}</td></tr>'
        for k, v in card.items()
        if v not in (None, "", [])
    )
    return f'<table id="card">{rows}</table>'


def other_presets_html(card: dict) -> str:
    """Under a keyphrase preset: one line per key metric with the other presets' values (the card's
    `other_presets`); nothing otherwise."""
    lines = card.get("other_presets") or []
    if not lines:
        return ""
    items = "".join(f"<li>{esc(line)}</li>" for line in lines)
    note = esc(card.get("other_presets_note", ""))
    return f'<h2>The same predictions under the other presets</h2><ul>{items}</ul><p class="note">{note}</p>'


def render_html(data: ReportData, plotly: str) -> str:
    """The whole report as one HTML document (`plotly`: plotly.js's source, embedded inline)."""
    chart, scripts = charts_html(data)
    all_scripts = [plotly, *scripts]
    hashes = " ".join(f"'sha256-{base64.b64encode(hashlib.sha256(s.encode()).digest()).decode()}'" for s in all_scripts)
    csp = f"default-src 'none'; script-src {hashes}; style-src 'unsafe-inline'; img-src data:; font-src data:"
    examples = "".join(example_html(e, data) for e in data.examples) or "<p>No example.</p>"
    problems = "".join(f"<li>{esc(data.words.say(shown(p)))}</li>" for p in data.problems[:50])  # quoted data kept
    more = f"<li>… {len(data.problems) - 50} more</li>" if len(data.problems) > 50 else ""
    level = format_level(0.95)
    body = (
        f"<h1>{esc(data.title)}</h1>"
        f'<p class="sub">{esc(" ".join(data.notes))} kweval {esc(__version__)}.</p>'
        f"{headline_html(data)}"
        f"<h2>Summary ({level} bootstrap intervals)</h2>{summary_html(data)}"
        f"{other_presets_html(data.card)}"
        f"<h2>Charts</h2>{chart}"
        '<p class="note">One panel per metric, each with its own scale from 0: compare the bars within a panel.</p>'
        f"<h2>Verdicts against {esc(data.reference)}</h2>{verdicts_html(data)}"
        f"<h2>Worked examples</h2>{examples}"
        f"<h2>Protocol card</h2>{card_html(data.card)}"
        + (f"<details><summary>Data problems ({len(data.problems)})</summary><ul>{problems}{more}</ul></details>")
    )
    script_tags = "".join(f"<script>{s}</script>" for s in all_scripts)
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{csp}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{esc(data.title)}</title><style>{STYLE}</style></head>"
        f"<body>{body}{script_tags}</body></html>\n"
    )


def report_page(
    dataset,
    evaluation,
    how: str,
    card: dict,
    title: str = "",
    n_boot: int | None = None,
    progress: Progress = no_progress,
) -> str:
    """The whole report of an evaluation as one HTML string: what `kweval report` writes, for any caller (the
    dashboard's "Download report" of the current view: its dataset subset, evaluation, aggregation and card).
    `progress(stage, fraction)` is told each of `report_data.REPORT_STAGES` as it begins, and (the last stage, 1.0)
    when the page is written."""
    from kweval.io.preset_headlines import report_with_presets
    from kweval.io.report_data import report_data

    extra = {} if n_boot is None else {"n_boot": n_boot}
    data = report_data(dataset, evaluation, how, card, title=title, progress=progress, **extra)
    shown = dataset.subset(list(evaluation.movies), list(evaluation.models))  # the collections and models reported
    data = report_with_presets(data, "kweval", shown, evaluation.options.k, **extra)  # per-document data
    return render_page(data, progress)


def render_page(data: ReportData, progress: Progress = no_progress) -> str:
    """`render_html` of `data` with plotly.js embedded, `progress` told of the last of REPORT_STAGES as it begins
    (its share of the stages) and when the page is written (1.0)."""
    stage(progress, REPORT_STAGES[-1])
    page = render_html(data, plotly_js())
    progress(REPORT_STAGES[-1], 1.0)
    return page
