"""In headless Debian chromium: the Summary's charts, SVG drawn by the server (dashboard/svg_charts.py), reach the page
whole through Streamlit's Markdown (bars, whiskers, cells, texts and tooltips, an accessible name), while hostile
model and collection names stay text: no element, no event attribute and no script of theirs (issue 28 item 7)."""

from __future__ import annotations

import pytest
from selenium.webdriver.common.by import By

from tests.browser import ERROR, SUMMARY_CHARTS, server, settled
from tests.helpers import edge_collection

pytestmark = [pytest.mark.browser, pytest.mark.slow]

MODEL = '<img src=x onerror=window.PWNED=1> & "q" \'s *b* _i_ $x$ :red[r] `c`'  # HTML and Markdown both stay text
COLLECTION = "<svg onload=window.PWNED=2> & Co"

# per chart: its tags' counts, its accessible name, what came from a name (elements, on* attributes), its texts
CHARTS = """
return [...document.querySelectorAll('.kw-svg-chart')].map(chart => {
  const svg = chart.querySelector('svg'), all = [...chart.querySelectorAll('*')];
  const count = (tag) => chart.getElementsByTagName(tag).length;
  return {
    tags: {title: count('title'), text: count('text'), rect: count('rect'), line: count('line'), g: count('g')},
    role: svg.getAttribute('role'), label: svg.getAttribute('aria-label'),
    foreign: all.filter(e => !['svg', 'g', 'rect', 'line', 'text', 'title'].includes(e.tagName.toLowerCase())).length,
    handlers: all.flatMap(e => [...e.attributes].map(a => a.name)).filter(n => n.toLowerCase().startsWith('on')),
    texts: [...chart.querySelectorAll('text, title')].map(e => e.textContent),
    width: svg.getBoundingClientRect().width,
  };
}).concat([{pwned: window.PWNED === undefined ? null : String(window.PWNED)}]);"""


def test_summary_svg_charts_survive_and_hostile_names_stay_text(tmp_path, browser):
    folder = edge_collection(tmp_path / COLLECTION, {MODEL: False, "first": True})
    with server(tmp_path, folder) as running:
        driver = browser
        driver.get(f"{running.url}/summary?movie=ALL")
        text = settled(driver, ["At a glance", "Per metric, with bootstrap"], present=list(SUMMARY_CHARTS))
        assert not driver.find_elements(By.CSS_SELECTOR, ERROR) and "Traceback" not in text
        *charts, page = driver.execute_script(CHARTS)
        assert page == {"pwned": None}  # no handler ran, no script
        assert len(charts) == 3  # the small multiples' two halves and the heatmap
        for chart in charts[:2]:  # bars: a rect, a whisker (line) and a tooltip per bar, texts for titles and names
            assert all(chart["tags"][t] > 0 for t in ("title", "text", "rect", "line")), chart["tags"]
        assert all(charts[2]["tags"][t] > 0 for t in ("title", "text", "rect")), charts[2]["tags"]
        for chart in charts:
            assert chart["role"] == "img" and chart["label"] and chart["width"] > 100
            assert chart["foreign"] == 0 and chart["handlers"] == []  # nothing but the SVG's own elements
            assert any(MODEL in t for t in chart["texts"])  # the hostile name shown as text (in a tooltip at least)
        assert any(COLLECTION in t for t in charts[2]["texts"])  # the collection's name on the heatmap's axis
        assert MODEL in charts[0]["label"]  # the accessible name names the models
