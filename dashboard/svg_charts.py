"""The Summary's and the Failures page's charts as static SVG drawn by the server: plain rows in, one string out (no
streamlit here).

Why SVG and not Vega-Lite or plotly: a new visitor's browser spent ~0.9 s of CPU loading and compiling Streamlit's
Vega chunk for the Summary's two chart kinds, and Vega made ~800 elements of the page's 2,300 (issue 28 item 7); the
Failures page's two plotly bar charts cost chromium ~0.6-0.9 s of each view (issue 29 item 4: its first view with
the app open 2.7-3.1 s with them, 2.15 s without).  These charts need no interaction beyond a tooltip, which SVG's
`<title>` gives natively, and a link: a Failures segment opens its rows in the explorer (`<a>`).  Compare's
per-review scatter stays Vega-Lite (`dashboard.vega_specs`): a click selects a review.

Every user string (model, movie, metric label, axis title) is escaped (`dashboard.escape.esc`, controls written
visibly); numbers are formatted here.  Text is drawn in ``currentColor`` and lines in a neutral grey, legible on the
light and the dark theme.  Each bar and cell carries its exact numbers as ``data-`` attributes (repr of the float) for
the tests and the browser checks, beside the formatted tooltip.  Streamlit's `st.html` strips SVG (DOMPurify's HTML
profile), so the pages draw these as Markdown's HTML (`dashboard.charts.show_svg`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from plotly.colors import sample_colorscale

from dashboard.escape import esc, visible
from kweval.stats.numbers import decimals_for

PANEL_WIDTH, PANEL_HEIGHT = 130, 130  # each panel's plot; two panels a row fit a phone's 400 px column
AXIS_WIDTH = 42  # the y-axis' tick labels, left of each plot
TITLE_HEIGHT = 26  # the panel's title above its plot (clear of the top tick's label)
NAME_LIMIT = 120  # px of an upright model name under a panel (longer names end in "…"; the tooltip has it whole)
CHAR_WIDTH = 7.0  # px per character of 12 px text (an estimate: the server has no font metrics)
ERROR_BAR_COLOR = "#888888"  # legible on the light and the dark theme
VALUE_FORMAT = ".4g"
CELL_WIDTH, CELL_HEIGHT = 120, 40  # a heatmap cell: room for its value; 40 px a row keeps every movie's name
LABEL_LIMIT = 260  # px of a movie name left of the heatmap
LEGEND_WIDTH, LEGEND_STEPS = 220, 24
SCALE = "Viridis"
CHART_CLASS = "kw-svg-chart"  # the wrapper's class: tests and benches find the charts by it


def _finite(x: object) -> float | None:
    try:
        value = float(x)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return value if math.isfinite(value) else None


def _text(value: object) -> str:
    """A user string as SVG text or attribute value: controls written visibly, then HTML-escaped."""
    return esc(visible(str(value)))


def _num(value: float) -> str:
    """A coordinate: at most 2 decimals, no trailing zeros."""
    return f"{value:.2f}".rstrip("0").rstrip(".")


def _fit(text: str, limit: float, size: int = 12) -> str:
    """`text` in `size` px cut to about `limit` px (… at the end), before escaping."""
    chars = max(1, int(limit // (CHAR_WIDTH * size / 12)))
    return text if len(text) <= chars else text[: chars - 1] + "…"


def _wrap(svg: str, label: str, width: float, height: float) -> str:
    """One chart: an `<svg>` of `width` × `height` px that shrinks to a narrow column (viewBox), in a div of
    `CHART_CLASS`; one line, so Markdown reads it as a single HTML block."""
    return (
        f'<div class="{CHART_CLASS}"><svg xmlns="http://www.w3.org/2000/svg" role="img" aria-label="{label}" '
        f'width="{_num(width)}" height="{_num(height)}" viewBox="0 0 {_num(width)} {_num(height)}" '
        f'style="max-width:100%;height:auto;overflow:visible" font-size="12">{svg}</svg></div>'
    )


def bar_rows(
    values: Mapping[str, Mapping[str, float]],
    intervals: Mapping[str, Mapping[str, tuple[float, float]]],
    labels: Mapping[str, str],
    models: Sequence[str],
) -> list[dict]:
    """One row per (metric, model) with a finite value, metrics and models in order: the metric's label (the panel's
    title), the value and its interval; a missing interval end is the value itself (no whisker on that side)."""
    rows = []
    for metric, by_model in values.items():
        for model in models:
            value = _finite(by_model.get(model, math.nan))
            if value is None:
                continue
            low, high = intervals.get(metric, {}).get(model, (math.nan, math.nan))
            low_end, high_end = _finite(low), _finite(high)
            rows.append(
                {
                    "metric": labels.get(metric, metric),
                    "model": str(model),
                    "value": value,
                    "low": value if low_end is None else low_end,
                    "high": value if high_end is None else high_end,
                }
            )
    return rows


def nice_ticks(low: float, high: float, count: int = 4) -> list[float]:
    """About `count` round tick values covering [`low`, `high`] (steps of 1, 2 or 5 times a power of ten); the
    first is ≤ `low`, the last ≥ `high`."""
    if not high > low:
        high = low + 1.0
    raw = (high - low) / count
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    first, last = math.floor(low / step + 1e-9), math.ceil(high / step - 1e-9)
    return [round(i * step, 12) for i in range(first, last + 1)]


def tick_label(value: float) -> str:
    """A tick's label: two significant digits, no trailing zeros (Vega's ".2~g")."""
    text = f"{value:.2g}"
    return "0" if text in ("0", "-0") else text


def _title(lines: Sequence[str]) -> str:
    """A native tooltip (SVG `<title>`) of `lines`, each escaped."""
    return "<title>" + "&#10;".join(_text(line) for line in lines) + "</title>"


def _bar_tooltip(row: dict) -> str:
    lines = [f"{row['model']} · {row['metric']}", f"value: {row['value']:{VALUE_FORMAT}}"]
    if row["low"] < row["high"]:
        lines.append(f"95% CI: {row['low']:{VALUE_FORMAT}} – {row['high']:{VALUE_FORMAT}}")
    return _title(lines)


def _y_axis(ticks: Sequence[float], y_of) -> str:
    """Tick labels and faint grid lines of one panel, in its plot's coordinates."""
    parts = []
    for tick in ticks:
        y = _num(y_of(tick))
        parts.append(
            f'<line x1="0" x2="{PANEL_WIDTH}" y1="{y}" y2="{y}" stroke="{ERROR_BAR_COLOR}" stroke-opacity="0.3"/>'
            f'<text x="-5" y="{y}" text-anchor="end" dominant-baseline="middle" fill="currentColor" '
            f'font-size="10">{tick_label(tick)}</text>'
        )
    return "".join(parts)


def _whisker(x: float, low: str, high: str) -> str:
    return (
        f'<line x1="{_num(x)}" x2="{_num(x)}" y1="{low}" y2="{high}" stroke="{ERROR_BAR_COLOR}" stroke-width="1.5"/>'
        + "".join(
            f'<line x1="{_num(x - 4)}" x2="{_num(x + 4)}" y1="{y}" y2="{y}" stroke="{ERROR_BAR_COLOR}" '
            'stroke-width="1.5"/>'
            for y in (low, high)
        )
    )


def _bar(row: dict, x: float, band: float, y_of, zero: float, color: str) -> str:
    """One model's bar in a panel (band from `x`, `band` wide) with its CI whisker (none where the interval is empty),
    its name upright below, its tooltip, and its exact numbers as data attributes."""
    attrs = " ".join(f'data-{k}="{_text(row[k]) if k in ("metric", "model") else repr(row[k])}"' for k in row)
    value_y = y_of(row["value"])
    bar_top, bar_bottom = min(value_y, zero), max(value_y, zero)
    whisker = (
        _whisker(x + band / 2, _num(y_of(row["low"])), _num(y_of(row["high"]))) if row["low"] < row["high"] else ""
    )
    name_at = f"translate({_num(x + band / 2)},{_num(TITLE_HEIGHT + PANEL_HEIGHT + 6)}) rotate(-90)"
    return (
        f'<g class="kw-bar" {attrs}>{_bar_tooltip(row)}'
        f'<rect x="{_num(x)}" y="{TITLE_HEIGHT}" width="{_num(band)}" height="{PANEL_HEIGHT}" fill="#808080" '
        'fill-opacity="0"/>'  # the band's hit area: a tooltip also on a bar of 0
        f'<rect x="{_num(x + band * 0.1)}" y="{_num(bar_top)}" width="{_num(band * 0.8)}" '
        f'height="{_num(bar_bottom - bar_top)}" fill="{_text(color)}"/>{whisker}'
        f'<text class="kw-axis-label" transform="{name_at}" text-anchor="end" dominant-baseline="middle" '
        f'fill="currentColor" font-size="11">{_text(_fit(row["model"], NAME_LIMIT, 11))}</text></g>'
    )


def _panel(label: str, rows: Sequence[dict], colors: Mapping[str, str]) -> str:
    """One metric's panel at the origin: its title, a y-scale from 0 to its largest CI end, one bar per model in the
    model's colour (`_bar`)."""
    ticks = nice_ticks(min([0.0] + [r["low"] for r in rows]), max([0.0] + [r["high"] for r in rows]))
    bottom, top = ticks[0], ticks[-1]

    def y_of(v: float) -> float:
        return TITLE_HEIGHT + PANEL_HEIGHT * (top - v) / (top - bottom)

    band, zero = PANEL_WIDTH / max(1, len(rows)), y_of(max(bottom, 0.0))
    bars = "".join(
        _bar(row, band * i, band, y_of, zero, colors.get(row["model"], ERROR_BAR_COLOR)) for i, row in enumerate(rows)
    )
    return (
        f'<text class="kw-panel-title" x="{_num(AXIS_WIDTH + PANEL_WIDTH / 2)}" y="14" text-anchor="middle" '
        f'font-weight="bold" fill="currentColor">{_text(_fit(label, AXIS_WIDTH + PANEL_WIDTH))}'
        f"<title>{_text(label)}</title></text>"
        f'<g transform="translate({AXIS_WIDTH},0)">{_y_axis(ticks, y_of)}{bars}'
        f'<line x1="0" x2="{PANEL_WIDTH}" y1="{_num(zero)}" y2="{_num(zero)}" stroke="currentColor" '
        'stroke-opacity="0.6"/></g>'
    )


def bars_svg(
    values: Mapping[str, Mapping[str, float]],
    intervals: Mapping[str, Mapping[str, tuple[float, float]]],
    labels: Mapping[str, str],
    models: Sequence[str],
    colors: Mapping[str, str],
    columns: int = 2,
) -> str:
    """Small multiples: one bar panel per metric with a value (`values[metric][model]`), its CI as whiskers
    (`intervals[metric][model] = (low, high)`), each panel's own y-scale from 0 (a recall of 0.004 is not flat beside
    a precision of 0.4), titled with the metric's label (`labels`); each model in its colour (`colors`), no legend
    (the models are each panel's axis); `columns` panels a row.  A metric without a finite value has no panel."""
    rows = bar_rows(values, intervals, labels, models)
    panels: dict[str, list[dict]] = {}
    for row in rows:
        panels.setdefault(row["metric"], []).append(row)
    longest = max((len(r["model"]) for r in rows), default=1)
    name_height = min(NAME_LIMIT, longest * CHAR_WIDTH * 11 / 12) + 10
    panel_w, panel_h = AXIS_WIDTH + PANEL_WIDTH + 12, TITLE_HEIGHT + PANEL_HEIGHT + name_height + 14
    columns = max(1, min(columns, len(panels)))
    parts = [
        f'<g class="kw-panel" transform="translate({_num(panel_w * (i % columns))},{_num(panel_h * (i // columns))})">'
        f"{_panel(label, panel, colors)}</g>"
        for i, (label, panel) in enumerate(panels.items())
    ]
    shown = list(dict.fromkeys(r["model"] for r in rows))
    label = (
        f"Bar charts, one panel per metric ({', '.join(panels)}): the value of each model ({', '.join(shown)}) "
        "with its 95% confidence interval"
    )
    rows_of_panels = max(1, math.ceil(len(panels) / columns))
    return _wrap("".join(parts), _text(label), panel_w * columns, panel_h * rows_of_panels)


def _colors(values: Sequence[float], low: float, high: float) -> list[str]:
    """Viridis colour of each value on the scale from `low` to `high`."""
    span = high - low
    return sample_colorscale(SCALE, [0.5 if span <= 0 else min(1.0, max(0.0, (v - low) / span)) for v in values])


def _legend(title: str, low: float, high: float, places: int) -> str:
    """The colour scale at the chart's top: its title, a bar of `LEGEND_STEPS` colours, the ends' values."""
    step = LEGEND_WIDTH / LEGEND_STEPS
    shades = _colors([low + (high - low) * (i + 0.5) / LEGEND_STEPS for i in range(LEGEND_STEPS)], low, high)
    blocks = "".join(
        f'<rect x="{_num(i * step)}" y="20" width="{_num(step + 0.5)}" height="12" fill="{c}"/>'
        for i, c in enumerate(shades)
    )
    return (
        f'<g class="kw-legend"><text x="0" y="12" font-weight="bold" fill="currentColor">{_text(title)}</text>{blocks}'
        f'<text x="0" y="46" fill="currentColor" font-size="11">{low:.{places}f}</text>'
        f'<text x="{LEGEND_WIDTH}" y="46" text-anchor="end" fill="currentColor" font-size="11">{high:.{places}f}</text>'
        "</g>"
    )


def _axes(names: Sequence[str], models: Sequence[str], movie_word: str, label_w: float, top: float) -> str:
    """The heatmap's header row (`movie_word` above the names, each model's name above its column) and every movie's
    name left of its row; a cut name's tooltip has it whole."""
    header = f'<text class="kw-axis-title" x="0" y="{_num(top + 12)}" font-weight="bold" fill="currentColor">'
    header += f"{_text(movie_word)}</text>"
    for i, model in enumerate(models):
        header += (
            f'<text class="kw-axis-label" x="{_num(label_w + CELL_WIDTH * (i + 0.5))}" y="{_num(top + 12)}" '
            f'text-anchor="middle" fill="currentColor">{_text(_fit(str(model), CELL_WIDTH - 8))}'
            f"<title>{_text(model)}</title></text>"
        )
    for i, name in enumerate(names):
        header += (
            f'<text class="kw-axis-label" x="{_num(label_w - 8)}" y="{_num(top + 20 + CELL_HEIGHT * (i + 0.5))}" '
            f'text-anchor="end" dominant-baseline="middle" fill="currentColor">{_text(_fit(name, LABEL_LIMIT))}'
            f"<title>{_text(name)}</title></text>"
        )
    return header


def _cell(
    word: str, movie: str, model: str, value: float | None, text: str, fill: str, ink: str, x: float, y: float
) -> str:
    """One heatmap cell: its colour, its value written in it (`text`), its tooltip (`word`: the data's word for a
    movie), its exact value as data."""
    shown = "undefined" if value is None else f"{value:{VALUE_FORMAT}}"
    return (
        f'<g class="kw-cell" data-movie="{_text(movie)}" data-model="{_text(model)}" '
        f'data-value="{"" if value is None else repr(value)}" data-text="{text}">'
        + _title([f"{word}: {movie}", f"model: {model}", f"value: {shown}"])
        + f'<rect x="{_num(x)}" y="{_num(y)}" width="{CELL_WIDTH}" height="{CELL_HEIGHT}" fill="{fill}" '
        f'stroke="{ERROR_BAR_COLOR}" stroke-opacity="0.25"/>'
        f'<text x="{_num(x + CELL_WIDTH / 2)}" y="{_num(y + CELL_HEIGHT / 2)}" text-anchor="middle" '
        f'dominant-baseline="middle" fill="{ink}">{text}</text></g>'
    )


def heatmap_svg(
    cells: Sequence[tuple[str, str, float]],
    movies: Sequence[str],
    models: Sequence[str],
    color_title: str,
    movie_word: str,
) -> str:
    """A movie × model heatmap of `cells` ((movie, model, value) each): Viridis, each cell's value written in it with
    as many decimals as tell the values apart (`decimals_for`: never 0.000 for a value that is not 0), dark text on
    the bright half of the scale, "—" where undefined; the colour scale at the top titled `color_title`, every
    movie's name at the left under `movie_word` (the data's word), the models across; the tooltip says all three."""
    finite = [v for _m, _model, v in cells if _finite(v) is not None]
    places = decimals_for(finite)
    low, high = (min(finite), max(finite)) if finite else (0.0, 1.0)
    names, columns = [str(m) for m in movies], {str(m): i for i, m in enumerate(models)}
    rows = {n: i for i, n in enumerate(names)}
    label_w = min(LABEL_LIMIT, max([len(n) for n in names] + [len(movie_word)]) * CHAR_WIDTH) + 12
    top, grid_top = 64, 84  # the legend above `top`, the header row between
    drawn = [(str(movie), str(model), _finite(v)) for movie, model, v in cells if str(movie) in rows]
    drawn = [cell for cell in drawn if cell[1] in columns]
    fills = iter(_colors([v for *_, v in drawn if v is not None], low, high))
    squares = "".join(
        _cell(
            movie_word,
            movie,
            model,
            value,
            "—" if value is None else f"{value:.{places}f}",
            "none" if value is None else next(fills),
            "currentColor" if value is None else ("#111111" if value > (low + high) / 2 else "#ffffff"),
            label_w + CELL_WIDTH * columns[model],
            grid_top + CELL_HEIGHT * rows[movie],
        )
        for movie, model, value in drawn
    )
    width = max(label_w + CELL_WIDTH * len(columns), LEGEND_WIDTH + 10, len(color_title) * CHAR_WIDTH)
    label = (
        f"Heatmap of {color_title}: one row per {movie_word} ({len(names)}), "
        f"one column per model ({', '.join(columns)})"
    )
    body = _legend(color_title, low, high, places) + _axes(names, list(columns), movie_word, label_w, top) + squares
    return _wrap(body, _text(label), width, grid_top + CELL_HEIGHT * len(names) + 4)


STACK_WIDTH, STACK_HEIGHT, STACK_GAP = 420, 26, 12  # px of 100%; a model's bar, and the space below it
SWATCH = 10  # a legend entry's colour square


def _segment(row: dict, x: float, y: float, width: float, unit: str) -> str:
    """One segment of a stacked bar: its share's rectangle with a tooltip, a link to its rows when it has one."""
    tip = _title([f"{row['model']} · {row['label']}: {row['percent']:.1f}% ({int(row['count']):,} {unit})"])
    mark = (
        f'<g class="kw-bar kw-segment" data-model="{_text(row["model"])}" data-category="{_text(row["category"])}" '
        f'data-count="{int(row["count"])}" data-percent="{float(row["percent"])!r}">{tip}'
        f'<rect x="{_num(x)}" y="{_num(y)}" width="{_num(width)}" height="{STACK_HEIGHT}" fill="{row["color"]}"/></g>'
    )
    href = row.get("href")
    return f'<a href="{_text(href)}">{mark}</a>' if href else mark


def _stack_legend(entries: Sequence[tuple[str, str]], width: float, top: float) -> tuple[str, float]:
    """The legend of (label, colour) entries, in rows that fit `width` from `top`: (its SVG, its bottom)."""
    parts, x, y = [], 0.0, top
    for label, color in entries:
        w = SWATCH + 6 + len(label) * CHAR_WIDTH + 14
        if x and x + w > width - 30:  # slack for a font wider than CHAR_WIDTH estimates
            x, y = 0.0, y + 18
        parts.append(
            f'<rect x="{_num(x)}" y="{_num(y)}" width="{SWATCH}" height="{SWATCH}" fill="{color}"/>'
            f'<text x="{_num(x + SWATCH + 6)}" y="{_num(y + 9)}" fill="currentColor">{_text(label)}</text>'
        )
        x += w
    return f'<g class="kw-legend">{"".join(parts)}</g>', y + 14


def stacked_bars_svg(rows: Sequence[dict], models: Sequence[str], title: str, unit: str) -> str:
    """Horizontal stacked bars, one per model of `models` (top to bottom), one segment per row (model, category,
    label, percent, count, color, and href: the link a click follows, or None), in the rows' order; percent of the
    model's `unit` on the x-axis (0-100), the legend under the axis title (each category once, in order of first
    appearance); a segment's tooltip says its model, category, share and count."""
    names = [str(m) for m in models]
    label_w = min(NAME_LIMIT + 40, max([len(n) for n in names] + [1]) * CHAR_WIDTH) + 10
    width = label_w + STACK_WIDTH + 24
    top = 28  # the title above
    bar_y = {n: top + i * (STACK_HEIGHT + STACK_GAP) for i, n in enumerate(names)}  # each model's bar's top

    def x_of(percent: float) -> float:
        return label_w + percent / 100 * STACK_WIDTH

    ends = dict.fromkeys(names, 0.0)
    marks = []
    legend_entries: dict[str, str] = {}  # label -> colour of each drawn category, in order of first appearance
    for row in rows:
        model = str(row["model"])
        share = _finite(row["percent"])
        if model not in bar_y or share is None or share <= 0:
            continue
        marks.append(_segment(row, x_of(ends[model]), bar_y[model], share / 100 * STACK_WIDTH, unit))
        ends[model] += share
        legend_entries.setdefault(str(row["label"]), str(row["color"]))
    bottom = top + len(names) * (STACK_HEIGHT + STACK_GAP) - STACK_GAP
    labels = "".join(
        f'<text x="{_num(label_w - 8)}" y="{_num(y + STACK_HEIGHT / 2 + 4)}" text-anchor="end" fill="currentColor">'
        f"{_title([n])}{_text(_fit(n, label_w - 10))}</text>"
        for n, y in bar_y.items()
    )
    ticks = "".join(
        f'<text x="{_num(x_of(t))}" y="{_num(bottom + 16)}" text-anchor="middle" fill="currentColor" font-size="11">'
        f'{t}</text><line x1="{_num(x_of(t))}" x2="{_num(x_of(t))}" y1="{_num(top - 4)}" y2="{_num(bottom + 4)}" '
        f'stroke="{ERROR_BAR_COLOR}" stroke-opacity="0.3"/>'
        for t in (0, 25, 50, 75, 100)
    )
    axis = (
        f'<text class="kw-axis-title" x="{_num(x_of(50))}" y="{_num(bottom + 34)}" '
        f'text-anchor="middle" fill="currentColor">{_text(f"% of {unit}")}</text>'
    )
    legend, height = _stack_legend(list(legend_entries.items()), width, bottom + 50)
    head = f'<text x="0" y="16" font-weight="bold" font-size="14" fill="currentColor">{_text(title)}</text>'
    label = f"{title}: stacked bars, one per model ({', '.join(names)}), the share of its {unit} in each category"
    return _wrap(head + ticks + "".join(marks) + labels + axis + legend, _text(label), width, height + 4)
