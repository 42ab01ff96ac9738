"""`kweval report`: one self-contained, escaped HTML page (issue 23, item 5).

The page is parsed (html.parser) for what could run or load: scripts, event
handlers, images, and any src/href to a host.  The browser test (tests/test_browser_report.py) opens the file
from disk in chromium and checks the charts drew and no hostile string ran.
"""

from __future__ import annotations

import base64
import hashlib
import re
from html.parser import HTMLParser

import pytest

from kweval.cli.dispatch import main
from kweval.evaluation.pipeline import EvalOptions, evaluate
from kweval.io import html_report
from kweval.io.card import evaluation_card
from kweval.io.report_data import report_data
from tests.helpers import make_dataset

EVIL_MODEL = "<script>window.__xss=1</script>"
EVIL_TITLE = '<img src=x onerror="window.__xss=2">'
EVIL_KEYWORD = "<img src=x onerror=window.__xss=3>"
EVIL_TEXT = "A <script>window.__xss=4</script> film, <img src=x onerror=window.__xss=5> and {kw} and heist."


def hostile_dataset():
    """Two movies, four reviews each, a hostile model name, movie title, keyword and review text."""
    gt = {"m1": [EVIL_KEYWORD, "heist", "film"], "m2": ["heist", EVIL_KEYWORD, "crew"]}
    preds, texts = {}, {}
    for movie in gt:
        for i in range(4):
            review = f"{movie}-r{i}"
            texts[(movie, review)] = EVIL_TEXT.format(kw=EVIL_KEYWORD)
            preds[(movie, review, EVIL_MODEL)] = [(EVIL_KEYWORD, 0.9), ("heist", 0.5), ("noise", 0.1)][: 1 + i % 3]
            preds[(movie, review, "plain")] = [("film", 0.8), ("nothing", 0.4)][: 1 + i % 2]
    ds = make_dataset(gt, preds, texts=texts)
    ds.movies["title"] = [EVIL_TITLE, "Second"]
    return ds


class Tags(HTMLParser):
    """Every start tag with its attributes, and each script's text."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict]] = []
        self.scripts: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        self._in_script = tag == "script"
        if self._in_script:
            self.scripts.append("")

    def handle_endtag(self, tag):
        self._in_script = False

    def handle_data(self, data):
        if self._in_script:
            self.scripts[-1] += data


def parsed(page: str) -> Tags:
    tags = Tags()
    tags.feed(page)
    return tags


def assert_nothing_runs_or_loads(page: str, n_scripts: int = 3) -> None:
    tags = parsed(page)
    assert [t for t, _ in tags.tags].count("script") == n_scripts  # plotly.js and the two charts, nothing injected
    assert not [t for t, _ in tags.tags if t in ("img", "iframe", "object", "embed", "link")]
    for tag, attrs in tags.tags:
        assert not [a for a in attrs if a.startswith("on")], (tag, attrs)
        for name in ("src", "href", "action", "data"):
            assert not re.match(r"\s*(https?:)?//", attrs.get(name) or ""), (tag, attrs)
    csp = next(a["content"] for t, a in tags.tags if t == "meta" and a.get("http-equiv") == "Content-Security-Policy")
    for script in tags.scripts:  # each of the page's scripts is admitted by its hash, and nothing else is
        digest = base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()
        assert f"'sha256-{digest}'" in csp
    assert "unsafe-inline" not in csp.split("script-src")[1].split(";")[0] and "default-src 'none'" in csp


def test_hostile_strings_are_escaped_everywhere():
    ds = hostile_dataset()
    ev = evaluate(ds, EvalOptions(k=3))
    card = evaluation_card(ev.options, "hostile", "0", aggregation="macro")
    data = report_data(ds, ev, "macro", card, n_boot=200, n_perm=500)
    page = html_report.render_html(data, "/* plotly.js */")
    assert_nothing_runs_or_loads(page)
    assert "&lt;script&gt;window.__xss=1&lt;/script&gt;" in page  # the model name, shown as text
    assert "&lt;img src=x onerror=window.__xss=3&gt;" in page and "<mark" in page  # the keyword, highlighted
    text = page.split('class="text">')[1].split("</div>")[0]  # the first example's text, its keyword words marked
    assert text.startswith("A &lt;script&gt;") and "__xss</mark>=4&lt;/script&gt;" in text
    assert "At a glance" in page and 'id="verdicts"' in page and 'id="card"' in page
    assert len(data.examples) == 3 and {e.kind for e in data.examples} == {"Biggest win", "Biggest loss", "Typical"}


def test_cli_report_on_the_demo(tmp_path, capsys):
    out = tmp_path / "report.html"
    assert main(["report", "--out", str(out), "--resamples", "300"]) == 0
    page = out.read_text(encoding="utf-8")
    assert len(page) > 1_000_000  # plotly.js inline
    assert_nothing_runs_or_loads(page)
    assert "On 180 reviews, keybert leads on F1" in page
    assert "Biggest win: Review" in page and "(GT rank " in page  # ranked movie-level GT
    assert main(["report", "--out", str(tmp_path / "report.txt")]) == 2
    assert "--out must end in .html" in capsys.readouterr().err


def test_cli_report_on_per_document_data(tmp_path):
    from tests.test_score_direction import write_collection, write_jsonl

    root = write_collection(tmp_path / "Toy")
    out = tmp_path / "toy.html"
    args = ["report", str(root), "--out", str(out), "--resamples", "200"]
    args += ["--predictions", f"a={write_jsonl(tmp_path / 'a.jsonl', direction='lower')}"]
    args += ["--predictions", f"b={write_jsonl(tmp_path / 'b.jsonl', as_confidence=True)}"]
    assert main(args) == 0
    page = out.read_text(encoding="utf-8")
    assert '<th class="t">Collection</th>' in page and "On 2 documents," in page
    assert "GT rank" not in page.split('id="card"')[0]  # unranked GT is never shown with ranks
    assert "Typical document" in page or "Biggest loss: Document" in page


@pytest.mark.parametrize("preset", ["pke", "kpeval"])
def test_report_under_a_preset_prints_the_presets_numbers(tmp_path, preset):
    """The report's table holds `kweval evaluate --protocol`'s numbers (KPEval's F1: the F1 of mean P and R)."""
    import json

    from kweval.data import read_per_document
    from kweval.data.predictions import prediction_lists
    from kweval.io.card import protocol_card
    from kweval.io.report_protocol import protocol_report_data
    from tests.test_score_direction import write_collection, write_jsonl

    root = write_collection(tmp_path / "Toy")
    files = {"a": write_jsonl(tmp_path / "a.jsonl"), "b": tmp_path / "b.jsonl"}
    files["b"].write_text('{"id": "d1", "keyphrases": ["gamma", "delta"]}\n{"id": "d2", "keyphrases": ["zeta"]}\n')
    specs = [x for m, path in files.items() for x in ("--predictions", f"{m}={path}")]
    json_out = tmp_path / "cli.json"
    assert main(["evaluate", str(root), "--protocol", preset, *specs, "--out", str(json_out)]) == 0
    cli = {r["model"]: r for r in json.loads(json_out.read_text())["rows"]}
    documents = read_per_document(root, [])
    predictions = {m: prediction_lists(path, m, []) for m, path in files.items()}
    data = protocol_report_data(documents, predictions, preset, 5, protocol_card(preset, "toy", "0"), n_boot=100)
    for row in data.summary.to_dict("records"):
        for metric in ("p@5", "r@5", "f1@5", "f1@M", "f1@O"):
            assert row[metric] == pytest.approx(cli[row["model"]][metric]), (row["model"], metric)
    out = tmp_path / "preset.html"
    assert main(["report", str(root), "--protocol", preset, *specs, "--out", str(out), "--resamples", "100"]) == 0
    page = out.read_text(encoding="utf-8")
    assert f"under the {preset} preset" in page and '<td class="t">' + preset + "</td>" in page
    assert_nothing_runs_or_loads(page)


@pytest.mark.dnlp
@pytest.mark.slow
def test_report_on_dnlp(tmp_path):
    """The movie-level data: 9,362 reviews, the headline in stakeholder words, every review's words 'review'."""
    from tests.helpers import DNLP

    out = tmp_path / "dnlp.html"
    args = ["report", str(DNLP), "--models", "base,sentiment", "--out", str(out), "--resamples", "300", "--quiet"]
    assert main(args) == 0
    page = out.read_text(encoding="utf-8")
    assert "On 9,362 reviews, sentiment leads on F1 over base by 0.0020" in page
    assert "Biggest win: Review" in page and "Collection" not in page.split("<h2>Protocol card")[0]
    assert_nothing_runs_or_loads(page)


def test_report_page_for_the_dashboard(demo_dataset):
    """`report_page`: the same page from an evaluation in memory (the dashboard's current view)."""
    ev = evaluate(demo_dataset.subset(movies=["star_tide"]), EvalOptions())
    card = evaluation_card(ev.options, "demo", "0", aggregation="micro")
    page = html_report.report_page(demo_dataset, ev, "micro", card, title="star_tide", n_boot=100)
    assert page.startswith("<!DOCTYPE html>") and "<title>star_tide</title>" in page
    assert "On 30 reviews," in page and "(micro: ratio of sums)" in page
    assert_nothing_runs_or_loads(page)


def test_small_multiples_error_bar_reaches_a_lower_bound_of_zero():
    """An interval [0.0, 0.6] around 0.28 draws its bar down to 0 (0.0 was read as a missing end: no bar below)."""
    from kweval.io.charts import small_multiples

    figure = small_multiples({"f1": {"a": 0.28, "b": 0.5}}, {"f1": {"a": (0.0, 0.6)}}, {"f1": "F1"}, ["a", "b"])
    error = figure["data"][0]["error_y"]
    assert error["arrayminus"] == pytest.approx([0.28, 0.0]) and error["array"] == pytest.approx([0.32, 0.0])


def test_report_page_tells_each_stage_in_order(demo_dataset):
    """`report_page(progress=...)`: each of REPORT_STAGES once as it begins (fractions rising), then done (1.0);
    the page is the same with or without the callback (the CLI passes none)."""
    from kweval.io.report_data import REPORT_STAGES

    ev = evaluate(demo_dataset.subset(movies=["star_tide"]), EvalOptions())
    card = evaluation_card(ev.options, "demo", "0", aggregation="macro")
    calls: list[tuple[str, float]] = []
    page = html_report.report_page(
        demo_dataset, ev, "macro", card, title="t", n_boot=50, progress=lambda *a: calls.append(a)
    )
    assert [stage for stage, _ in calls] == [*REPORT_STAGES, REPORT_STAGES[-1]]
    fractions = [f for _, f in calls]
    assert fractions == sorted(fractions) and fractions[0] == 0.0 and fractions[-1] == 1.0
    assert page == html_report.report_page(demo_dataset, ev, "macro", card, title="t", n_boot=50)
