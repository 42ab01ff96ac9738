"""The Summary's and the Failures page's charts as SVG drawn by the server (dashboard/svg_charts.py): well-formed,
every user string escaped (hostile names stay text: no element, no attribute of theirs), the numbers exact in the data
and formatted in the tooltips and cells, undefined values and their panels left out, a tooltip and an accessible name
on each chart, a Failures segment a link to its rows."""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET

from dashboard.escape import visible
from dashboard.svg_charts import STACK_WIDTH, bar_rows, bars_svg, heatmap_svg, nice_ticks, stacked_bars_svg, tick_label

HOSTILE = "<script>alert(1)</script> & \"x\" 'y' \x01\n<b onmouseover=alert(2)>"
SVG = "{http://www.w3.org/2000/svg}"


def _parse(svg: str, links: bool = False) -> ET.Element:
    """The chart as XML: it parses (well-formed), and no element or attribute came from a user string (`links`: the
    chart may hold `<a>` elements, whose targets the caller checks)."""
    root = ET.fromstring(svg)
    tags = {el.tag.removeprefix(SVG) for el in root.iter()}
    assert tags <= {"div", "svg", "g", "rect", "line", "text", "title", *(["a"] if links else [])}, tags
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


def test_stacked_bars_link_each_segment_to_its_rows_and_escape_names():
    href = './explorer?category=hit&model=%3Cb%3E&x="y"'
    rows = [
        {"model": HOSTILE, "category": "hit", "label": "hit", "percent": 30.0, "count": 3, "color": "#2e7d32"},
        {"model": HOSTILE, "category": "off_reference", "label": "off <ref>", "percent": 70.0, "count": 7},
        {"model": "b", "category": "hit", "label": "hit", "percent": 0.0, "count": 0, "color": "#2e7d32"},
        {"model": "b", "category": "invalid", "label": "invalid", "percent": 100.0, "count": 5, "color": "#e53935"},
    ]
    rows[0]["href"], rows[1]["color"], rows[3]["href"] = href, "#9e9e9e", None
    svg = stacked_bars_svg(rows, [HOSTILE, "b"], "Where <the> keywords go", "predicted keywords")
    assert "<script" not in svg and "<b " not in svg and "\x01" not in svg and HOSTILE not in svg
    root = _parse(svg, links=True)
    name = visible(HOSTILE)
    segments = [g for g in root.iter(f"{SVG}g") if g.get("class") == "kw-bar kw-segment"]
    got = [
        (g.get("data-model"), g.get("data-category"), int(g.get("data-count")), float(g.get("data-percent")))
        for g in segments
    ]
    assert got == [(name, "hit", 3, 30.0), (name, "off_reference", 7, 70.0), ("b", "invalid", 5, 100.0)]  # no empty one
    rects = [g.find(f"{SVG}rect") for g in segments]
    widths = [float(r.get("width")) for r in rects]
    assert widths == [0.3 * STACK_WIDTH, 0.7 * STACK_WIDTH, STACK_WIDTH]  # the share of the bar's 100%
    assert float(rects[1].get("x")) == float(rects[0].get("x")) + widths[0]  # stacked: each after the one before
    assert float(rects[2].get("y")) > float(rects[0].get("y"))  # the second model's bar under the first's
    links = [(a.get("href"), [g.get("data-category") for g in a.iter(f"{SVG}g")]) for a in root.iter(f"{SVG}a")]
    assert links == [(href, ["hit"])]  # a segment with a link is one (its href as given), one without is none
    assert segments[0].find(f"{SVG}title").text == f"{name} · hit: 30.0% (3 predicted keywords)"
    legend = next(g for g in root.iter(f"{SVG}g") if g.get("class") == "kw-legend")
    assert [t.text for t in legend.iter(f"{SVG}text")] == ["hit", "off <ref>", "invalid"]  # each once, in order
    axis = next(t for t in root.iter(f"{SVG}text") if t.get("class") == "kw-axis-title")
    assert axis.text == "% of predicted keywords"
    assert min(float(r.get("y")) for r in legend.iter(f"{SVG}rect")) > float(axis.get("y"))  # below the axis title
    chart = root.find(f"{SVG}svg")
    assert chart.get("aria-label").startswith("Where <the> keywords go: stacked bars") and name in chart.get(
        "aria-label"
    )
