"""In headless Debian chromium (issue 28 item 7): Compare's per-review scatter, a Vega-Lite chart, opens the clicked
point's review in the explorer (the point selection's payload is the point's row) and names it in its tooltip."""

from __future__ import annotations

from urllib.parse import parse_qs, urlparse

import pytest
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By

from tests.browser import act_when_drawn, settled, wait_until

pytestmark = [pytest.mark.browser, pytest.mark.slow]

POINTS = '[data-testid="stVegaLiteChart"] svg.marks g.mark-symbol path'  # the demo's few points: drawn as SVG
TOOLTIP = "#vg-tooltip-element"


def test_a_clicked_point_opens_its_review(demo_server, browser):
    driver = browser
    driver.get(f"{demo_server.url}/compare?movie=ALL")
    settled(driver, ["Reviews by difference"], present=[POINTS])

    def last_point():  # drawn last: on top of any point under it
        return next(reversed(driver.find_elements(By.CSS_SELECTOR, POINTS)), None)

    def tooltip_shown() -> str | None:  # point at the point until Vega-Lite shows its tooltip
        point = last_point()
        shown = next((e.text for e in driver.find_elements(By.CSS_SELECTOR, TOOLTIP) if e.text.strip()), None)
        if point is not None and not shown:
            driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", point)
            ActionChains(driver).move_to_element(point).perform()
        return shown

    tooltip = wait_until(tooltip_shown, "no tooltip over the point")
    cells = dict(line.split(maxsplit=1) for line in tooltip.splitlines() if " " in line.strip())
    act_when_drawn(
        driver, last_point, lambda point: ActionChains(driver).move_to_element(point).click().perform(), "no point"
    )
    wait_until(lambda: "/explorer" in driver.current_url, lambda: f"the click opened {driver.current_url}")
    query = parse_qs(urlparse(driver.current_url).query)
    assert (query["movie"], query["review"]) == ([cells["movie"]], [cells["review"]]), (tooltip, driver.current_url)
    settled(driver, ["Review explorer"])
