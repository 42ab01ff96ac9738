"""The History page's chart: each model's value of a metric over its recorded runs, its intervals as a band, and a
dotted line where a setting changed from the previous run (plain plotly, no streamlit)."""

from __future__ import annotations

import html

import pandas as pd
import plotly.graph_objects as go

from dashboard.style import metric_label


def _band(rows: pd.DataFrame, color: str) -> go.Scatter | None:
    """The interval band of one model's runs that have one (the key metrics'), None without any."""
    known = rows.dropna(subset=["ci_low", "ci_high"])
    if known.empty:
        return None
    x = [*known["time"], *known["time"][::-1]]
    y = [*known["ci_high"], *known["ci_low"][::-1]]
    return go.Scatter(
        x=x, y=y, fill="toself", fillcolor=color, opacity=0.18, line={"width": 0}, hoverinfo="skip", showlegend=False
    )


def history_figure(history: pd.DataFrame, marks: pd.DataFrame, metric: str, colors: dict[str, str]) -> go.Figure:
    """`history` (kweval.runs.metric_history: run_id, name, time, model, value, ci_low, ci_high) as a line per model
    with its 95% interval band; `marks` (kweval.runs.change_marks) as dotted lines saying what changed on hover."""
    fig = go.Figure()
    for model, rows in history.groupby("model", sort=False):
        color = colors.get(str(model), "#888888")
        band = _band(rows, color)
        if band is not None:
            fig.add_trace(band)
        hover = [
            f"{html.escape(str(n))} [{html.escape(str(i))}]<br>{html.escape(str(model))}: {v:.4f}"
            + ("" if pd.isna(lo) else f" (95% CI {lo:.4f}–{hi:.4f})")
            for n, i, v, lo, hi in zip(rows["name"], rows["run_id"], rows["value"], rows["ci_low"], rows["ci_high"])
        ]
        fig.add_trace(
            go.Scatter(
                x=rows["time"],
                y=rows["value"],
                mode="lines+markers",
                name=html.escape(str(model)),
                line={"color": color},
                text=hover,
                hovertemplate="%{text}<extra></extra>",
            )
        )
    for time, changes in zip(marks["time"], marks["changes"]):
        fig.add_shape(type="line", x0=time, x1=time, y0=0, y1=1, yref="paper", line={"dash": "dot", "color": "#888"})
        fig.add_annotation(
            x=time, y=1, yref="paper", text="⚙", hovertext=html.escape(f"settings changed: {changes}"), showarrow=False
        )
    fig.update_layout(
        xaxis_title="run time (UTC)",
        yaxis_title=metric_label(metric),
        margin={"l": 10, "r": 10, "t": 30, "b": 10},
        legend_title_text="model",
        height=380,
    )
    return fig
