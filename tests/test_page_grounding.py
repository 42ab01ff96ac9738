"""Grounding and raw responses in the dashboard (AppTest): the explorer's marks with what supports each keyword,
the raw response beside the parsed list, the Summary's new columns; the marks' HTML without a server."""

from __future__ import annotations

import pandas as pd

from dashboard.grounding_html import grounding_mark, support_html
from tests.apptest import run, texts
from tests.helpers import REPO

EXAMPLE = REPO / "examples" / "llm_responses.jsonl"
ENV = {"KWEVAL_PREDICTIONS": f"llm={EXAMPLE}"}


def test_the_marks_escape_and_say_what_supports_a_keyword():
    rows = pd.DataFrame(
        {
            "model": ["m", "m", "m"],
            "keyword": ["<b>x</b>", "fine cast", "time travel"],
            "grounding": ["present", "supported", "unsupported"],
            "support": ["", "The cast <i>clearly</i> had fun", "ships in the storm"],
            "support_cosine": [float("nan"), 0.6, 0.26],
        }
    )
    records = rows.to_dict("records")
    assert "● present" in grounding_mark(records[0]) and grounding_mark({"keyword": "k"}) == ""
    assert 'title="supported by the text: cosine 0.60 to ‘The cast &lt;i&gt;clearly&lt;/i&gt; had fun’"' in (
        grounding_mark(records[1])
    )
    block = support_html(rows, ["m"])
    assert "● 1 present · ◐ 1 supported · ○ 1 unsupported" in block
    assert "<b>time travel</b>: nearest ‘ships in the storm’, cosine 0.26" in block
    assert "<i>" not in block and "<b>x</b>" not in block
    assert support_html(rows.drop(columns="grounding"), ["m"]) == ""


def test_the_explorer_marks_each_keyword_and_shows_the_raw_response(monkeypatch):
    params = {"movie": "ALL", "models": "llm,yake", "grd": "1", "review": "m2-r01"}
    at = run(monkeypatch, None, params, "pages/explorer.py", env=ENV)
    body = at.html[0].proto.body
    assert 'class="kw-ground kw-ground-present"' in body and 'class="kw-ground kw-ground-unsupported"' in body
    assert "<b>time travel</b>: nearest ‘" in body  # below the card, visible
    assert "<b>seamless effects</b>: its words in ‘The effects are seamless" in body
    (expander,) = [e for e in at.expander if "raw response" in e.label]
    assert "read as **line**" in expander.label
    assert 'Keywords: "dogfight"' in expander.code[0].value
    shown = texts(at)
    assert "time travel" in shown


def test_an_abstention_says_it_scores_zero(monkeypatch):
    params = {"movie": "ALL", "models": "llm", "review": "m2-r02"}
    at = run(monkeypatch, None, params, "pages/explorer.py", env=ENV)
    (expander,) = [e for e in at.expander if "raw response" in e.label]
    assert "abstention" in expander.label
    assert "an empty list (abstention): scores 0" in texts(at)


def test_the_summary_carries_the_grounding_and_diversity_columns(monkeypatch):
    at = run(monkeypatch, None, {"movie": "ALL", "grd": "1"}, "pages/summary.py", env=ENV)
    columns = set().union(*(set(df.value.columns) for df in at.dataframe))
    assert {"grounded_present", "grounded_supported", "unsupported", "dup_token_ratio", "self_similarity"} <= columns


def test_the_failures_page_tells_reference_gaps_from_unsupported_keywords(monkeypatch):
    at = run(monkeypatch, None, {"movie": "ALL", "models": "llm,keybert", "grd": "1"}, "pages/failures.py", env=ENV)
    shown = texts(at)
    assert "keywords off the reference" in shown and "candidate hallucinations" in shown
    plain = run(monkeypatch, None, {"movie": "ALL", "models": "keybert"}, "pages/failures.py")
    assert "candidate hallucinations" not in texts(plain)
