"""End to end in headless chromium: a deep link into the explorer with grounding on (the first request to a fresh
server) marks each keyword present / supported / unsupported with what supports it, and opens a model's raw
response beside the list kweval read from it."""

from __future__ import annotations

import pytest
from selenium.webdriver.common.by import By

from tests.browser import click_text
from tests.helpers import REPO
from tests.test_browser import ERROR, _server, _settled

pytestmark = [pytest.mark.browser, pytest.mark.slow]

EXAMPLE = REPO / "examples" / "llm_responses.jsonl"


def test_the_explorer_marks_grounding_and_shows_the_raw_response(tmp_path, seed_onnx_export, browser):
    env = {"KWEVAL_PREDICTIONS": f"llm={EXAMPLE}"}
    cache = seed_onnx_export(tmp_path / "embeddings")  # the run's ONNX export: grounding embeds, nothing exports
    with _server(tmp_path, extra_env=env, cache=cache) as url:
        driver = browser
        driver.get(f"{url}/explorer?movie=ALL&models=llm,yake&grd=1&review=m2-r01")
        text = _settled(driver, ["Review m2-r01", "Grounding in the text", "raw response"], timeout=300)
        assert not driver.find_elements(By.CSS_SELECTOR, ERROR) and "Traceback" not in text
        marks = {g: driver.find_elements(By.CSS_SELECTOR, f"span.kw-ground-{g}") for g in ("present", "unsupported")}
        assert marks["present"] and marks["unsupported"], "no grounding marks drawn"
        title = marks["unsupported"][0].get_attribute("title")
        assert title.startswith("unsupported by the text: nearest ‘"), title
        assert "time travel: nearest ‘" in text  # the support below the card: visible, no hover needed
        click_text(driver, "raw response")
        shown = _settled(driver, ["The response as given", 'Keywords: "dogfight"'])
        assert "Read as" in shown and "time travel" in shown
