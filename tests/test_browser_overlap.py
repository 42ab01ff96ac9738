"""In headless Debian chromium (issue 28, item 8): no text of a chart over another panel's text or bars, no
legend over an axis title and no axis label hidden for want of room, at 400 px (a phone) and at 1,400 px: the
Summary's small multiples and heatmap (Vega-Lite; the demo, and a keyphrase collection's ~25 panels) and the Failures
page's bars (plotly)."""

from __future__ import annotations

import pytest
from selenium.webdriver.common.by import By

from tests.browser import wait_until
from tests.test_browser import ERROR, _chromium, _server, _settled
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
// Vega-Lite (the Summary's small multiples and heatmap): each facet panel is a "cell" group holding its axes and title
for (const [c, svg] of [...document.querySelectorAll('[data-testid="stVegaLiteChart"] svg.marks')].entries()) {
  // a label Vega left out because it would overlap the next (opacity 0): a row or bar nobody can name
  for (const e of svg.querySelectorAll('.role-axis-label text[opacity="0"]'))
    bad.push(`vega chart ${c}: label "${e.textContent.slice(0, 30)}" hidden (no room)`);
  const cells = [...svg.querySelectorAll('g.role-scope.cell')];
  const part = (e) => e.closest('.role-title') ? 'title ' + Math.random() : e.closest('.role-legend') ? 'legend'
    : e.closest('.role-axis-title') ? 'axis title ' + Math.random()
    : e.closest('g.role-scope.cell') ? 'panel ' + cells.indexOf(e.closest('g.role-scope.cell')) : 'none';
  const items = [];
  for (const e of svg.querySelectorAll('text, g.mark-rect.role-mark path')) {
    const r = e.getBoundingClientRect();
    const text = (e.textContent || 'bar').slice(0, 30);
    if (r.width && r.height) items.push({r, part: part(e), text, bar: e.tagName === 'path'});
  }
  for (let i = 0; i < items.length; i++) for (let j = i + 1; j < items.length; j++) {
    const a = items[i], b = items[j];
    if (a.part === b.part || (a.bar && b.bar)) continue;
    if (a.r.left < b.r.right - 1 && b.r.left < a.r.right - 1 && a.r.top < b.r.bottom - 1 && b.r.top < a.r.bottom - 1)
      bad.push(`vega chart ${c}: "${a.text}" (${a.part}) over "${b.text}" (${b.part})`);
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
    drawn = ".js-plotly-plot .point path, [data-testid='stVegaLiteChart'] svg.marks g.role-mark path"
    charts = "[data-testid='stPlotlyChart'], [data-testid='stVegaLiteChart']"
    wait_until(
        lambda: _drawn(driver, drawn) >= len(driver.find_elements(By.CSS_SELECTOR, charts)) > 0, "no chart drawn"
    )
    bad = driver.execute_script(OVERLAPS)
    assert bad == [], f"{page} at {width} px:\n" + "\n".join(bad[:20])


def _drawn(driver, marks: str) -> int:
    """How many charts on the page have marks drawn (`marks`: a selector of their bars or cells)."""
    return driver.execute_script(
        "return [...document.querySelectorAll(\"[data-testid='stPlotlyChart'], [data-testid='stVegaLiteChart']\")]"
        ".filter(c => c.querySelector(arguments[0])).length;",
        marks,
    )


def test_charts_overlap_nothing_at_400_and_1400_px(tmp_path):
    with _server(tmp_path) as url, _chromium() as driver:
        for width in (400, 1400):
            _check(driver, url, "summary", ["At a glance", "Per metric, with bootstrap"], width)
            _check(driver, url, "failures", ["Why did my model fail", "What happens to the GT"], width)


def test_a_collections_many_panels_at_400_px(tmp_path):
    with _server(tmp_path, _collection(tmp_path)) as url, _chromium() as driver:
        _check(driver, url, "summary", ["At a glance", "Per metric, with bootstrap"], 400)
