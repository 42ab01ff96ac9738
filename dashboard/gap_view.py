"""The Protocols page's plain parts (no streamlit): the presets' table, the gap's waterfall, its conventions and
documents as table rows, the reported-number matches as rows.  Every number is `kweval.lattice.explain`'s (the
numbers `kweval gap` prints); strings from the data are escaped where plotly renders them."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import pandas as pd
import plotly.graph_objects as go

from dashboard.escape import esc
from kweval.keyphrase.conventions import BY_NAME, preset_label
from kweval.lattice.gap import metric_label, signed


def key_metrics(k: int) -> list[str]:
    """The metrics the page shows: F1 at 5, k, 10, M and O, their present forms, R@50 absent."""
    plain = list(dict.fromkeys(["f1@5", f"f1@{k}", "f1@10", "f1@M", "f1@O"]))
    return plain + [f"{m}_present" for m in plain] + ["r@50_absent"]


def preset_table(values: Mapping[str, Mapping[str, float]], match: str) -> pd.DataFrame:
    """One row per preset (the kweval preset named with its match mode), one column per metric (None: the preset
    does not report it)."""
    rows = []
    for preset, by_metric in values.items():
        row: dict[str, object] = {"protocol": preset_label(preset, match)}
        row.update({metric_label(m): None if math.isnan(v) else v for m, v in by_metric.items()})
        rows.append(row)
    return pd.DataFrame(rows)


def waterfall(gap: Mapping) -> go.Figure:
    """The gap as a waterfall: the metric under `from`, one step per convention that moves it (largest first), the
    metric under `to` (the end bar equals `to`'s value: the steps sum to the gap)."""
    steps = sorted((f for f in gap["factors"] if f["contribution"]), key=lambda f: -abs(f["contribution"]))
    start, end = gap["from"], gap["to"]
    labels = [esc(start["protocol"]), *(esc(BY_NAME[f["factor"]].label) for f in steps), esc(end["protocol"])]
    values = [start["value"], *(f["contribution"] for f in steps), end["value"]]
    texts = [f"{start['value']:.4f}", *(signed(f["contribution"]) for f in steps), f"{end['value']:.4f}"]
    figure = go.Figure(
        go.Waterfall(
            x=labels,
            y=values,
            measure=["absolute", *(["relative"] * len(steps)), "total"],
            text=texts,
            textposition="outside",
            connector={"line": {"color": "#9e9e9e"}},
            increasing={"marker": {"color": "#2e7d32"}},
            decreasing={"marker": {"color": "#c62828"}},
            totals={"marker": {"color": "#546e7a"}},
        )
    )
    low = min(0.0, *(v for v in values if v == v))
    figure.update_layout(
        showlegend=False,
        margin={"l": 10, "r": 10, "t": 30, "b": 10},
        height=360,
        yaxis={"title": esc(metric_label(gap["metric"])), "rangemode": "tozero" if low >= 0 else "normal"},
    )
    return figure


def factor_rows(gap: Mapping) -> pd.DataFrame:
    """One row per convention the two protocols set differently: both settings, the contribution, what they mean."""
    rows = []
    for f in gap["factors"]:
        convention = BY_NAME[f["factor"]]
        rows.append(
            {
                "convention": convention.label,
                gap["from"]["protocol"]: f["from"],
                gap["to"]["protocol"]: f["to"],
                "contribution": f["contribution"],
                "what the settings mean": f"{f['from']}: {convention.settings[f['from']]} · "
                f"{f['to']}: {convention.settings[f['to']]}",
            }
        )
    return pd.DataFrame(rows)


def document_rows(gap: Mapping, links: Sequence[str]) -> pd.DataFrame:
    """The documents that move most, each with its explorer link (`links`, one per document)."""
    return pd.DataFrame(
        {
            "document": [d["id"] for d in gap["documents"]],
            "from": [d["from"] for d in gap["documents"]],
            "to": [d["to"] for d in gap["documents"]],
            "change": [d["change"] for d in gap["documents"]],
            "moved most by": [BY_NAME[d["convention"]].label if d["convention"] else "" for d in gap["documents"]],
            "open": list(links),
        }
    )


def match_rows(result: Mapping) -> pd.DataFrame:
    """The reported-number search's matches grouped by value (or the nearest values when none matches)."""
    groups = result["groups"] or result["closest"]
    return pd.DataFrame(
        {
            "metric": [metric_label(g["metric"]) for g in groups],
            "value": [g["value"] for g in groups],
            "presets": [", ".join(g["presets"]) for g in groups],
            "settings": [", ".join(f"{n}={v}" for n, v in g["fixed"].items()) for g in groups],
            "also any of": ["; ".join(f"{n}={'/'.join(v)}" for n, v in g["free"].items()) for g in groups],
            "combinations": [g["n"] for g in groups],
        }
    )
