"""The Summary's charts as Vega-Lite specifications: plain JSON-ready dicts, drawn by `st.vega_lite_chart` (no streamlit
here, no altair).

Why Vega-Lite and not plotly: a new visitor's browser loads Streamlit's Vega-Lite chunk (~0.8 MB) much faster than its
plotly chunk (4.7 MB), and Vega lays out a dozen small panels faster than plotly's subplots (issue 28 item 7).  The HTML
report keeps its plotly figures (`kweval.io.charts`).

Data go in as rows with fixed field names (model, metric, value, low, high; movie and text for the heatmap): a user's
string is only ever a value, never a field name (Vega reads dots and brackets in a field name as a path) nor part of an
expression.  Vega draws text as SVG text, not HTML, so names are not escaped here (an escaped name would show "&amp;").
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from kweval.stats.numbers import decimals_for

SCHEMA = "https://vega.github.io/schema/vega-lite/v5.json"
PANEL_WIDTH, PANEL_HEIGHT = 130, 130  # two panels a row fit a phone's 400 px column (each half stacks there)
ERROR_BAR_COLOR = "#888888"  # legible on the light and the dark theme
VALUE_FORMAT = ".4g"


def _finite(x: object) -> float | None:
    try:
        value = float(x)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return value if math.isfinite(value) else None


def bar_rows(
    values: Mapping[str, Mapping[str, float]],
    intervals: Mapping[str, Mapping[str, tuple[float, float]]],
    labels: Mapping[str, str],
    models: Sequence[str],
) -> list[dict]:
    """One row per (metric, model) with a finite value, metrics and models in order: the metric's label (the panel's
    title), the value and its interval; a missing interval end is the value itself (no error bar on that side)."""
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


def bars_spec(
    values: Mapping[str, Mapping[str, float]],
    intervals: Mapping[str, Mapping[str, tuple[float, float]]],
    labels: Mapping[str, str],
    models: Sequence[str],
    colors: Mapping[str, str],
    columns: int = 2,
) -> dict:
    """Small multiples: one bar panel per metric with a value (`values[metric][model]`), its CI as error bars
    (`intervals[metric][model] = (low, high)`), each panel's own y-scale from 0 (a recall of 0.004 is not flat beside
    a precision of 0.4), titled with the metric's label (`labels`); each model in its colour (`colors`), no legend
    (the models are each panel's x-axis) and no axis title to clip."""
    rows = bar_rows(values, intervals, labels, models)
    panels = list(dict.fromkeys(row["metric"] for row in rows))
    shown = list(dict.fromkeys(row["model"] for row in rows))
    x = {
        "field": "model",
        "type": "nominal",
        "sort": shown,
        "title": None,
        # upright names never collide: at -30° Vega hid every other model's name (no room), at every width
        "axis": {"labelAngle": -90, "labelLimit": 90},
    }
    tooltip = [
        {"field": "model", "type": "nominal", "title": "model"},
        {"field": "value", "type": "quantitative", "title": "value", "format": VALUE_FORMAT},
        {"field": "low", "type": "quantitative", "title": "95% CI low", "format": VALUE_FORMAT},
        {"field": "high", "type": "quantitative", "title": "95% CI high", "format": VALUE_FORMAT},
    ]
    bar = {
        "mark": {"type": "bar"},
        "encoding": {
            "x": x,
            "y": {"field": "value", "type": "quantitative", "title": None, "scale": {"zero": True}},
            "color": {
                "field": "model",
                "type": "nominal",
                "scale": {"domain": shown, "range": [colors.get(m, ERROR_BAR_COLOR) for m in shown]},
                "legend": None,
            },
            "tooltip": tooltip,
        },
    }
    error = {
        "mark": {"type": "errorbar", "ticks": {"size": 8}, "color": ERROR_BAR_COLOR},
        "encoding": {
            "x": x,
            "y": {"field": "low", "type": "quantitative", "title": None},
            "y2": {"field": "high"},
            "tooltip": tooltip,
        },
    }
    return {
        "$schema": SCHEMA,
        "data": {"values": rows},
        "facet": {
            "field": "metric",
            "type": "nominal",
            "sort": panels,
            "title": None,
            "header": {"labelFontWeight": "bold", "labelFontSize": 12, "labelLimit": 2 * PANEL_WIDTH},
        },
        "columns": max(1, min(columns, len(panels))),
        "spec": {
            "width": PANEL_WIDTH,
            "height": PANEL_HEIGHT,
            "layer": [bar, error],
        },
        "resolve": {"scale": {"y": "independent", "x": "independent"}},
        "config": {"axisY": {"format": ".2~g", "tickCount": 4}},
    }


def heatmap_spec(
    cells: Sequence[tuple[str, str, float]],
    movies: Sequence[str],
    models: Sequence[str],
    color_title: str,
    movie_word: str,
) -> dict:
    """A movie × model heatmap of `cells` ((movie, model, value) each), Viridis, each cell's value written in it with
    as many decimals as tell the values apart (`decimals_for`: never 0.000 for a value that is not 0), dark text on
    the bright half of the scale; the colour bar titled `color_title`, the y-axis `movie_word` (the data's word).
    The height is the cells' alone (40 px a row, autosize "fit-x": only the width fits the page): as the chart's
    whole height it left rows of 12 px beside the colour bar, and Vega hid every other row's name."""
    finite = [v for _m, _model, v in cells if _finite(v) is not None]
    places = decimals_for(finite)
    rows = [
        {
            "movie": str(movie),
            "model": str(model),
            "value": _finite(v),
            "text": "" if _finite(v) is None else f"{v:.{places}f}",
        }
        for movie, model, v in cells
    ]
    middle = (min(finite) + max(finite)) / 2 if finite else 0.0
    x = {
        "field": "model",
        "type": "nominal",
        "sort": [str(m) for m in models],
        "title": "model",
        "axis": {"labelAngle": 0},
    }
    y = {"field": "movie", "type": "nominal", "sort": [str(m) for m in movies], "title": movie_word}
    tooltip = [
        {"field": "movie", "type": "nominal", "title": movie_word},
        {"field": "model", "type": "nominal", "title": "model"},
        {"field": "value", "type": "quantitative", "title": "value", "format": VALUE_FORMAT},
    ]
    color = {
        "field": "value",
        "type": "quantitative",
        "title": color_title,
        "scale": {"scheme": "viridis"},
        "legend": {"orient": "top", "direction": "horizontal", "gradientLength": 220, "titleLimit": 600},
    }
    return {
        "$schema": SCHEMA,
        "data": {"values": rows},
        "height": max(200, 40 * len(movies)),
        "autosize": {"type": "fit-x", "contains": "padding"},
        "encoding": {"x": x, "y": y},
        "layer": [
            {"mark": {"type": "rect"}, "encoding": {"color": color, "tooltip": tooltip}},
            {
                "mark": {"type": "text", "fontSize": 12},
                "encoding": {
                    "text": {"field": "text", "type": "nominal"},
                    # a literal number, never a user string, in the expression
                    "color": {
                        "condition": {"test": f"datum.value > {middle!r}", "value": "#111111"},
                        "value": "#ffffff",
                    },
                    "tooltip": tooltip,
                },
            },
        ],
    }


# fields of the per-review scatter's rows (`scatter_spec`): fixed names, the user's strings only as values
SCATTER_FIELDS = ("row", "x", "y", "movie", "review", "difference", "a", "b")
SCATTER_PICK = "pick"  # the point selection's name: a click gives [{"row": the point's row}]


def scatter_spec(a: str, b: str, label: str, color: str | None, movie_word: str, review_word: str) -> dict:
    """B's metric (`label`) against A's, one point per review, for rows with `SCATTER_FIELDS` sent beside the spec:
    x, y (jittered values), row (the review's row: a click selects it, `SCATTER_PICK`), movie, review, difference,
    a and b (the exact values, in the tooltip).  The diagonal y = x dotted.  Streamlit draws a chart of more than
    2,000 points on a canvas, not as one SVG element per point: the browser redraws thousands of them quickly."""
    point = {"type": "circle", "size": 40, "opacity": 0.45, "cursor": "pointer"}
    if color is not None:
        point["color"] = color
    tooltip = [
        {"field": "movie", "type": "nominal", "title": movie_word},
        {"field": "review", "type": "nominal", "title": review_word},
        {"field": "difference", "type": "quantitative", "title": "difference", "format": ".4f"},
        {"field": "a", "type": "quantitative", "title": f"{a} (A)", "format": ".4f"},
        {"field": "b", "type": "quantitative", "title": f"{b} (B)", "format": ".4f"},
    ]
    diagonal = {
        "data": {"values": [{"x": 0.0, "y": 0.0, "x2": 1.0, "y2": 1.0}]},
        "mark": {"type": "rule", "strokeDash": [2, 3], "color": "grey"},
        "encoding": {
            "x": {"field": "x", "type": "quantitative"},
            "y": {"field": "y", "type": "quantitative"},
            "x2": {"field": "x2"},
            "y2": {"field": "y2"},
        },
    }
    points = {
        "mark": point,
        "params": [{"name": SCATTER_PICK, "select": {"type": "point", "fields": ["row"], "on": "click"}}],
        "encoding": {
            "x": {"field": "x", "type": "quantitative", "title": f"{label} of {a} (A)"},
            "y": {"field": "y", "type": "quantitative", "title": f"{label} of {b} (B)"},
            "tooltip": tooltip,
        },
    }
    return {"$schema": SCHEMA, "height": 460, "layer": [diagonal, points]}
