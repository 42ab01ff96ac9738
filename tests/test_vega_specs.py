"""The Summary's Vega-Lite specs (dashboard/vega_specs.py) as data: user strings only as values, never escaped (Vega
draws SVG text) and never in a field name or an expression; undefined values and their panels left out."""

from __future__ import annotations

import json
import math

from dashboard.vega_specs import bar_rows, bars_spec, heatmap_spec

HOSTILE = '<b>a.b[0]</b> & "x"'
FIELDS = {"metric", "model", "value", "low", "high"}


def _fields(node) -> set[str]:
    """Every `field` a spec's encodings name."""
    if isinstance(node, dict):
        own = {node["field"]} if isinstance(node.get("field"), str) else set()
        return own.union(*(_fields(v) for k, v in node.items() if k != "data"))
    if isinstance(node, list):
        return set().union(*(_fields(v) for v in node))
    return set()


def test_bars_rows_carry_names_as_values_and_leave_undefined_out():
    values = {"precision": {HOSTILE: 0.4, "b": 0.2}, "recall_absent": {HOSTILE: math.nan, "b": math.nan}}
    intervals = {"precision": {HOSTILE: (0.3, 0.5), "b": (math.nan, 0.25)}}
    labels = {"precision": "Precision", "recall_absent": "Recall (absent)"}
    spec = bars_spec(values, intervals, labels, [HOSTILE, "b"], {HOSTILE: "#111111", "b": "#222222"})
    rows = spec["data"]["values"]
    assert rows == [
        {"metric": "Precision", "model": HOSTILE, "value": 0.4, "low": 0.3, "high": 0.5},
        {"metric": "Precision", "model": "b", "value": 0.2, "low": 0.2, "high": 0.25},  # a missing end: no bar there
    ]
    assert spec["facet"]["sort"] == ["Precision"]  # the undefined metric has no panel
    assert _fields(spec) == FIELDS  # fixed field names: a user string is never a field (dots, brackets are paths)
    assert spec["resolve"]["scale"]["y"] == "independent"  # one y-scale per panel, from 0
    bar = spec["spec"]["layer"][0]["encoding"]
    assert bar["y"]["scale"]["zero"] is True and bar["color"]["legend"] is None
    assert bar["color"]["scale"] == {"domain": [HOSTILE, "b"], "range": ["#111111", "#222222"]}
    assert "&amp;" not in json.dumps(spec) and "&lt;" not in json.dumps(spec)  # not escaped: Vega draws plain text
    assert bar_rows({"m": {"a": math.inf}}, {}, {}, ["a"]) == []


def test_heatmap_writes_each_value_and_keeps_names_out_of_expressions():
    cells = [("m.1", HOSTILE, 0.0031), ("m.1", "b", 0.0012), ("m[2]", HOSTILE, math.nan), ("m[2]", "b", 0.005)]
    spec = heatmap_spec(cells, ["m.1", "m[2]"], [HOSTILE, "b"], "nDCG@5 (mean over documents)", "document")
    rows = spec["data"]["values"]
    assert [r["text"] for r in rows] == ["0.0031", "0.0012", "", "0.0050"]  # decimals_for: never 0.000
    assert rows[2]["value"] is None and rows[0]["model"] == HOSTILE and rows[3]["movie"] == "m[2]"
    assert _fields(spec) == {"movie", "model", "value", "text"}
    rect, text = spec["layer"]
    assert rect["encoding"]["color"]["title"] == "nDCG@5 (mean over documents)"
    assert rect["encoding"]["color"]["scale"]["scheme"] == "viridis" and spec["encoding"]["y"]["title"] == "document"
    assert text["encoding"]["color"]["condition"]["test"] == "datum.value > 0.0031"  # a number, no user string
