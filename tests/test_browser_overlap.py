"""In headless Debian chromium (issue 28, item 8): no text of a chart over another panel's text or bars, no
legend over an axis title and no axis label hidden for want of room, at 400 px (a phone) and at 1,400 px: the
Summary's small multiples and heatmap and the Failures page's bars (SVG drawn by the server; the demo, and a keyphrase
collection's ~25 panels); the Summary's two halves of small multiples side by side at 1,400 px, one under the
other at 400 px, inside the page."""

from __future__ import annotations

import pytest
from selenium.webdriver.common.by import By

from tests.browser import wait_until
from tests.test_browser import ERROR, _server, _settled
from tests.test_page_defects_28 import _collection

pytestmark = [pytest.mark.browser, pytest.mark.slow]

# every pair of texts (panel titles, tick labels, axis titles, legend entries) and bars of a chart that belong to
# different panels (or are a legend and a title), whose boxes intersect
OVERLAPS = """
const bad = [];
for (const [c, plot] of [...document.querySelectorAll('.js-plotly-plot')].entries()) {
  const part = (e) => e.closest('.annotation') ? 'title ' + Math.random() : e.closest('.legend') ? 'legend'
    : e.closest('[class^="g-"][class$="title"]') ? 'axis title ' + Math.random() : e.closest('.gtitle') ? 'chart title'
    : (e.closest('.subplot')?.getAttribute('class') || 'none');
  const items = [];
  const texts = '.annotation-text, g[class*="tick"] > text, [class^="g-"][class$="title"] text, .gtitle, .legendtext';
  for (const e of plot.querySelectorAll(texts + ', .point path')) {
    const r = e.getBoundingClientRect();
    const text = (e.textContent || 'bar').slice(0, 30);
    if (r.width && r.height) items.push({r, part: part(e), text, bar: !e.textContent});
  }
  for (let i = 0; i < items.length; i++) for (let j = i + 1; j < items.length; j++) {
    const a = items[i], b = items[j];
    if (a.part === b.part || (a.bar && b.bar)) continue;
    if (a.r.left < b.r.right - 1 && b.r.left < a.r.right - 1 && a.r.top < b.r.bottom - 1 && b.r.top < a.r.bottom - 1)
      bad.push(`chart ${c}: "${a.text}" (${a.part}) over "${b.text}" (${b.part})`);
  }
}
// the server's SVG (the Summary's small multiples and heatmap, dashboard/svg_charts.py): no text over another text
// or over a bar or cell that is not its own (a cell's value sits on its cell), and no text cut by the chart's edge
for (const [c, svg] of [...document.querySelectorAll('.kw-svg-chart svg')].entries()) {
  const own = (e) => e.closest('g.kw-cell, g.kw-bar');
  const items = [];
  for (const e of svg.querySelectorAll('text, g.kw-bar rect:not([fill-opacity]), g.kw-cell rect')) {
    const r = e.getBoundingClientRect();
    const text = e.tagName === 'text' ? e.textContent.slice(0, 30) : 'mark';
    if (r.width && r.height) items.push({r, own: own(e), text, mark: e.tagName === 'rect'});
  }
  const box = svg.getBoundingClientRect();
  const out = (r) => r.left < box.left - 1 || r.right > box.right + 1 || r.top < box.top - 1
    || r.bottom > box.bottom + 1;
  for (const a of items)
    if (!a.mark && out(a.r))
      bad.push(`svg chart ${c}: "${a.text}" outside its chart`);
  for (let i = 0; i < items.length; i++) for (let j = i + 1; j < items.length; j++) {
    const a = items[i], b = items[j];
    if ((a.mark && b.mark) || (a.own && a.own === b.own)) continue;
    if (a.r.left < b.r.right - 1 && b.r.left < a.r.right - 1 && a.r.top < b.r.bottom - 1 && b.r.top < a.r.bottom - 1)
      bad.push(`svg chart ${c}: "${a.text}" over "${b.text}"`);
  }
}
return bad;"""


def _check(driver, url: str, page: str, texts: list[str], width: int) -> None:
    driver.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride",
        {"width": width, "height": 900, "deviceScaleFactor": 1, "mobile": width < 600},
    )
    driver.get(f"{url}/{page}?movie=ALL")
    text = _settled(driver, texts)
    assert not driver.find_elements(By.CSS_SELECTOR, ERROR) and "Traceback" not in text
    # charts are drawn after the script run ends: wait until every one is (its bars), not for a fixed time
    drawn = ".js-plotly-plot .point path, .kw-svg-chart g.kw-bar, .kw-svg-chart g.kw-cell"
    charts = "[data-testid='stPlotlyChart'], .kw-svg-chart"
    wait_until(
        lambda: _drawn(driver, drawn) >= len(driver.find_elements(By.CSS_SELECTOR, charts)) > 0, "no chart drawn"
    )
    bad = driver.execute_script(OVERLAPS)
    assert bad == [], f"{page} at {width} px:\n" + "\n".join(bad[:20])
    if page == "summary":
        _halves(driver, width)


def _halves(driver, width: int) -> None:
    """The small multiples' two charts: side by side on a wide page, one under the other on a phone; inside the page."""
    boxes = driver.execute_script(
        "return [...document.querySelectorAll('.kw-svg-chart svg')].map(s => s.getBoundingClientRect().toJSON())"
        ".concat([document.documentElement.clientWidth]);"
    )
    first, second, page = boxes[0], boxes[1], boxes[-1]
    assert all(b["right"] <= page + 1 and b["left"] >= -1 and b["width"] > 100 for b in boxes[:-1]), boxes
    if width < 600:
        assert second["top"] >= first["bottom"] - 1, (first, second)  # stacked
    else:
        assert abs(second["top"] - first["top"]) < 2 and second["left"] >= first["right"] - 1, (first, second)


def _drawn(driver, marks: str) -> int:
    """How many charts on the page have marks drawn (`marks`: a selector of their bars or cells)."""
    return driver.execute_script(
        "return [...document.querySelectorAll(\"[data-testid='stPlotlyChart'], .kw-svg-chart\")]"
        ".filter(c => c.querySelector(arguments[0])).length;",
        marks,
    )


def test_charts_overlap_nothing_at_400_and_1400_px(demo_server, browser):
    driver, url = browser, demo_server.url
    for width in (400, 1400):
        _check(driver, url, "summary", ["At a glance", "Per metric, with bootstrap"], width)
        _check(driver, url, "failures", ["Why did my model fail", "What happens to the GT"], width)


def test_a_collections_many_panels_at_400_px(tmp_path, browser):
    with _server(tmp_path, _collection(tmp_path)) as url:
        driver = browser
        _check(driver, url, "summary", ["At a glance", "Per metric, with bootstrap"], 400)
