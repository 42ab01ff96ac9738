"""Chart specifications for the standalone HTML report: plotly figures as plain JSON-ready dicts.

No plotly (Python) import: a figure is the ``{"data": [...], "layout": {...}}``
that plotly.js draws (`Plotly.newPlot`), built here from the summary, so the
core stays free of UI packages (tests/test_imports.py) and the figures are
testable as data.  Small multiples: one panel per metric, each with its own
y-axis starting at 0, so a recall of 0.004 is as readable as a precision of
0.4 (one shared 0–1 axis flattens it).  Every text from the data is
HTML-escaped (plotly renders a subset of HTML in labels).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence

from kweval.io.highlight import escape_html

# plotly's default qualitative colours (its "Plotly" sequence), one per model in order
PALETTE = ("#636efa", "#EF553B", "#00cc96", "#ab63fa", "#FFA15A", "#19d3f3", "#FF6692", "#B6E880", "#FF97FF", "#FECB52")


def model_colors(models: Sequence[str]) -> dict[str, str]:
    """{model: colour}, in order, cycling through PALETTE."""
    return {m: PALETTE[i % len(PALETTE)] for i, m in enumerate(models)}


def _finite(x: float) -> float | None:
    return float(x) if x is not None and math.isfinite(float(x)) else None


def _bound(bound: float, value: float) -> float:
    """An interval's end, or `value` (no error bar on that side) when the end is missing; 0.0 is an end."""
    end = _finite(bound)
    return value if end is None else end


def _domain(low: float, high: float) -> list[float]:
    """An axis domain within [0, 1] (float sums can stray by 1e-17, which plotly's validators refuse)."""
    return [min(max(round(low, 9), 0.0), 1.0), min(max(round(high, 9), 0.0), 1.0)]


PANEL_COLUMNS = 2  # panels a row in each half: readable from a phone's 400 px (the halves stack) to a desktop


def halves(values: Mapping[str, Mapping[str, float]]) -> list[list[str]]:
    """The metrics with a value, in order, split in two halves (the first the larger): two figures of small multiples
    side by side on a wide screen, one under the other on a narrow one, where one figure of four or six panels a row
    would crowd each panel's labels into the next (issue 28)."""
    shown = [m for m in values if any(_finite(v) is not None for v in values[m].values())]
    cut = (len(shown) + 1) // 2
    return [part for part in (shown[:cut], shown[cut:]) if part]


def small_multiples(
    values: Mapping[str, Mapping[str, float]],
    intervals: Mapping[str, Mapping[str, tuple[float, float]]],
    labels: Mapping[str, str],
    models: Sequence[str],
    columns: int = 4,
) -> dict:
    """A figure with one bar panel per metric (`values[metric][model]`), its CI as error bars
    (`intervals[metric][model] = (low, high)`), each panel's y-axis from 0 to its own maximum.

    `labels`: metric -> panel title.  Missing values are left out of their panel.
    """
    metrics = [m for m in values if any(_finite(v) is not None for v in values[m].values())]
    n = max(len(metrics), 1)
    cols = max(1, min(columns, n))
    rows = math.ceil(n / cols)
    gap_x, gap_y = (0.06 if cols > 2 else 0.16), 0.5 / rows if rows > 1 else 0.0  # room for each y-axis's ticks
    width = (1.0 - gap_x * (cols - 1)) / cols
    height = (1.0 - gap_y * (rows - 1)) / rows
    colors = model_colors(models)
    data: list[dict] = []
    layout: dict = {
        "height": 104 + 250 * rows,
        "margin": {"t": 64, "b": 20, "l": 50, "r": 10},  # the toolbar (top right) above the panel titles
        "showlegend": False,
        "annotations": [],
        "font": {"size": 11},
    }
    for i, metric in enumerate(metrics):
        row, col = divmod(i, cols)
        suffix = "" if i == 0 else str(i + 1)
        x0 = col * (width + gap_x)
        y1 = 1.0 - row * (height + gap_y)
        shown = [m for m in models if _finite(values[metric].get(m, math.nan)) is not None]
        ys = [float(values[metric][m]) for m in shown]
        lows = [intervals.get(metric, {}).get(m, (math.nan, math.nan)) for m in shown]
        data.append(
            {
                "type": "bar",
                "x": [escape_html(m) for m in shown],
                "y": ys,
                "marker": {"color": [colors[m] for m in shown]},
                "error_y": {
                    "type": "data",
                    "symmetric": False,
                    "array": [max(0.0, _bound(hi, y) - y) for y, (_lo, hi) in zip(ys, lows)],
                    "arrayminus": [max(0.0, y - _bound(lo, y)) for y, (lo, _hi) in zip(ys, lows)],
                    "thickness": 1.2,
                    "width": 3,
                },
                "hovertemplate": "%{x}: %{y:.4g}<extra></extra>",
                "xaxis": f"x{suffix}",
                "yaxis": f"y{suffix}",
            }
        )
        layout[f"xaxis{suffix}"] = {"domain": _domain(x0, x0 + width), "anchor": f"y{suffix}", "tickangle": -30}
        layout[f"yaxis{suffix}"] = {
            "domain": _domain(y1 - height, y1),
            "anchor": f"x{suffix}",
            "rangemode": "tozero",
            "tickformat": ".2~g",
        }
        layout["annotations"].append(
            {
                "text": f"<b>{escape_html(labels.get(metric, metric))}</b>",
                "x": x0 + width / 2,
                "y": y1,
                "xref": "paper",
                "yref": "paper",
                "xanchor": "center",
                "yanchor": "bottom",
                "showarrow": False,
            }
        )
    return {"data": data, "layout": layout}


def script_json(value: object) -> str:
    """`value` as JSON safe inside a <script> element: no "</script>", no HTML comment or entity can form."""
    text = json.dumps(value, ensure_ascii=False, allow_nan=False)
    return (
        text.replace("<", "\\u003c")
        .replace(">", "\\u003e")
        .replace("&", "\\u0026")
        .replace("\u2028", "\\u2028")
        .replace("\u2029", "\\u2029")
    )
