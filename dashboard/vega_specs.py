"""Compare's per-review scatter as a Vega-Lite specification: a plain JSON-ready dict, drawn by `st.vega_lite_chart`
(no streamlit here, no altair).

Why Vega-Lite: a click on a point selects its review (a point selection), and Streamlit draws a chart of more than
2,000 points on a canvas, where plotly makes an SVG element of each (issue 28 item 7).  The Summary's charts need no
interaction beyond a tooltip and are static SVG (`dashboard.svg_charts`), so a new visitor's Summary loads no Vega.

The rows have fixed field names (`SCATTER_FIELDS`): a user's string is only ever a value, never a field name (Vega
reads dots and brackets in a field name as a path) nor part of an expression.  Vega draws text as SVG text, not HTML,
so names are not escaped here (an escaped name would show "&amp;").
"""

from __future__ import annotations

SCHEMA = "https://vega.github.io/schema/vega-lite/v5.json"

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
