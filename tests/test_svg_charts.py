"""The Summary's charts as SVG drawn by the server (dashboard/svg_charts.py): well-formed, every user string escaped
(hostile names stay text: no element, no attribute of theirs), the numbers exact in the data and formatted in the
tooltips and cells, undefined values and their panels left out, a tooltip and an accessible name on each chart."""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET

from dashboard.escape import visible
from dashboard.svg_charts import bar_rows, bars_svg, heatmap_svg, nice_ticks, tick_label

HOSTILE = "<script>alert(1)</script> & \"x\" 'y' \x01\n<b onmouseover=alert(2)>"
SVG = "{http://www.w3.org/2000/svg}"


def _parse(svg: str) -> ET.Element:
    """The chart as XML: it parses (well-formed), and no element or attribute came from a user string."""
    root = ET.fromstring(svg)
    tags = {el.tag.removeprefix(SVG) for el in root.iter()}
    assert tags <= {"div", "svg", "g", "rect", "line", "text", "title"}, tags
    assert not [k for el in root.iter() for k in el.attrib if k.lower().startswith("on")]
    return root


def _groups(root: ET.Element, kind: str) -> list[ET.Element]:
    return [g for g in root.iter(f"{SVG}g") if g.get("class") == kind]


def test_bars_escape_names_keep_numbers_and_leave_undefined_out():
    values = {"precision": {HOSTILE: 0.4, "b": 0.2}, "recall_absent": {HOSTILE: math.nan, "b": math.nan}}
    values["gt_coverage"] = {HOSTILE: 0.5, "b": 0.25}
    intervals = {"precision": {HOSTILE: (0.3, 0.5), "b": (math.nan, 0.25)}}
    labels = {"precision": "Precision", "recall_absent": "Recall (absent)", "gt_coverage": "GT coverage <&>"}
    svg = bars_svg(values, intervals, labels, [HOSTILE, "b"], {HOSTILE: "#111111", "b": "#222222"})
    assert "<script" not in svg and "<b " not in svg and "\x01" not in svg
    root = _parse(svg)
    chart = root.find(f"{SVG}svg")
    assert chart.get("role") == "img" and "Precision" in chart.get("aria-label") and HOSTILE not in svg
    titles = [t.text for t in root.iter(f"{SVG}text") if t.get("class") == "kw-panel-title"]
    assert titles == ["Precision", "GT coverage <&>"]  # the undefined metric has no panel; the rest in order
    bars = _groups(root, "kw-bar")
    name = visible(HOSTILE)  # controls and newlines written visibly, the rest as typed
    got = [
        (g.get("data-metric"), g.get("data-model"), *(float(g.get(f"data-{k}")) for k in ("value", "low", "high")))
        for g in bars
    ]
    assert got == [
        ("Precision", name, 0.4, 0.3, 0.5),
        ("Precision", "b", 0.2, 0.2, 0.25),  # a missing end: the value (no whisker on that side)
        ("GT coverage <&>", name, 0.5, 0.5, 0.5),
        ("GT coverage <&>", "b", 0.25, 0.25, 0.25),
    ]
    tip = bars[0].find(f"{SVG}title").text
    assert tip == f"{name} · Precision\nvalue: 0.4\n95% CI: 0.3 – 0.5"  # VALUE_FORMAT, the metric and the model
    fills = [r.get("fill") for g in bars for r in g.iter(f"{SVG}rect") if r.get("fill-opacity") is None]
    assert fills == ["#111111", "#222222", "#111111", "#222222"]  # each model in its colour
    whiskers = [len(list(g.iter(f"{SVG}line"))) for g in bars]
    assert whiskers == [3, 3, 0, 0]  # a CI whisker with its two ends; none for gt_coverage (no interval)
    texts = [t.get("fill") for t in root.iter(f"{SVG}text")]
    assert set(texts) == {"currentColor"}  # legible on the light and the dark theme
    assert bar_rows({"m": {"a": math.inf}}, {}, {}, ["a"]) == []


def test_each_panel_has_its_own_scale_from_zero():
    values = {"precision": {"a": 0.4, "b": 0.2}, "recall": {"a": 0.004, "b": 0.002}}
    root = _parse(bars_svg(values, {}, {"precision": "P", "recall": "R"}, ["a", "b"], {}))
    scales = []
    for panel in _groups(root, "kw-panel"):
        ticks = [float(t.text) for t in panel.iter(f"{SVG}text") if t.get("font-size") == "10"]
        heights = [float(r.get("height")) for r in panel.iter(f"{SVG}rect") if r.get("fill-opacity") is None]
        scales.append(ticks)
        assert ticks[0] == 0 and heights[0] == 2 * heights[1] > 60  # 0.004 is not flat beside 0.4
    assert scales[0][-1] == 0.4 and scales[1][-1] == 0.004
    assert nice_ticks(0, 0.5) == [0, 0.2, 0.4, 0.6] and nice_ticks(0, 0) == [0, 0.5, 1.0]
    assert [tick_label(t) for t in (0.0, 0.004, 0.25, 12.0)] == ["0", "0.004", "0.25", "12"]


def test_heatmap_writes_each_value_names_every_movie_and_escapes():
    cells = [("m.1", HOSTILE, 0.0031), ("m.1", "b", 0.0012), (HOSTILE, HOSTILE, math.nan), (HOSTILE, "b", 0.005)]
    svg = heatmap_svg(cells, ["m.1", HOSTILE], [HOSTILE, "b"], "nDCG@5 (mean over documents) <i>", "document")
    assert "<script" not in svg and "<i>" not in svg
    root = _parse(svg)
    name = visible(HOSTILE)
    found = [
        (g.get("data-movie"), g.get("data-model"), g.get("data-value"), g.get("data-text"))
        for g in _groups(root, "kw-cell")
    ]
    assert found == [
        ("m.1", name, "0.0031", "0.0031"),
        ("m.1", "b", "0.0012", "0.0012"),  # decimals_for: never 0.000
        (name, name, "", "—"),  # undefined: a dash, no colour
        (name, "b", "0.005", "0.0050"),
    ]
    cells_text = [g.findall(f"{SVG}text")[0].text for g in _groups(root, "kw-cell")]
    assert cells_text == ["0.0031", "0.0012", "—", "0.0050"]
    rects = [g.find(f"{SVG}rect").get("fill") for g in _groups(root, "kw-cell")]
    assert rects[2] == "none" and len(set(rects)) == 4
    tip = _groups(root, "kw-cell")[0].find(f"{SVG}title").text
    assert tip == f"document: m.1\nmodel: {name}\nvalue: 0.0031"
    labels = [t.text for t in root.iter(f"{SVG}text") if t.get("class") == "kw-axis-label"]
    assert labels[2:] == ["m.1", name[: int(260 // 7) - 1] + "…"]  # every movie named (a long one cut, whole in title)
    legend = _groups(root, "kw-legend")[0]
    assert next(legend.iter(f"{SVG}text")).text == "nDCG@5 (mean over documents) <i>"
    assert [t.text for t in legend.iter(f"{SVG}text")][1:] == ["0.0012", "0.0050"]  # the scale's ends
    inks = [g.findall(f"{SVG}text")[0].get("fill") for g in _groups(root, "kw-cell")]
    assert inks == ["#ffffff", "#ffffff", "currentColor", "#111111"]  # dark text on the bright half only
    label = root.find(f"{SVG}svg").get("aria-label")
    assert label.startswith("Heatmap of nDCG@5") and "one row per document (2)" in label


def test_only_the_svg_charts_bypass_st_html():
    """`st.html` sanitises with DOMPurify's HTML profile, which drops SVG: the charts go through Markdown's HTML
    (`charts.show_svg`), which does not sanitise: that is the one place it is used (everything in it escaped here)."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    sources = [*root.glob("dashboard/*.py"), *root.glob("pages/*.py"), root / "app.py"]
    using = {p.name for p in sources if "unsafe_allow_html=True" in p.read_text(encoding="utf-8")}
    assert using == {"charts.py"}
    assert (root / "dashboard" / "charts.py").read_text(encoding="utf-8").count("unsafe_allow_html=True") == 1
