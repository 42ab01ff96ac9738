"""Helpers of the dashboard tests (streamlit.testing.v1.AppTest): run the app, read what it shows.

Not a test module: `tests/test_page_*.py`, `test_app_*.py` import from here; the `cores` fixture is in conftest.py.
Importing it makes Streamlit's component scan, which every AppTest repeats, run once per process
(`tests.streamlit_scan`).
"""

from __future__ import annotations

import html
import io
import json
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

import tests.streamlit_scan  # noqa: F401 - Streamlit's component scan, which every AppTest repeats, once per process
from kweval.data import load_dataset
from tests.helpers import DNLP

ROOT = Path(__file__).resolve().parents[1]


APP = ROOT / "app.py"
# Seconds one script run may take before AppTest gives up: generous, as a first evaluation (DNLP, embeddings) on a
# machine with both cores busy takes many times an idle one's.  A deadline, never a wait.
RUN_TIMEOUT = 900


PAGES = [
    "pages/summary.py",
    "pages/explorer.py",
    "pages/ndcg.py",
    "pages/compare.py",
    "pages/data.py",
    "pages/failures.py",
    "pages/history.py",
]


TITLES = {
    "summary": "Summary",
    "explorer": "Review explorer",
    "ndcg": "nDCG, step by step",
    "compare": "Compare models",
    "data": "Data",
    "failures": "Why did my model fail?",
    "history": "Run history",
}


XSS = "<img src=x onerror=alert(1)>"


DATASETS = {"demo": None, "dnlp": DNLP}


DATA = [pytest.param("demo"), pytest.param("dnlp", marks=pytest.mark.dnlp)]  # parametrize over DATASETS


# a review of the DNLP data whose predictions are known (see the core's keywords table)
KNOWN = {"movie": "SW_Episode6", "review": "8924035", "model": "base", "keyword": "return jedi", "gt_rank": 0}


class _Cores(dict):
    """Datasets loaded by the core, one per source, on first use."""

    def __missing__(self, name: str):
        self[name] = load_dataset(DATASETS[name])
        return self[name]


def run(monkeypatch, data, params=None, page=None, env=None, direct: bool = False) -> AppTest:
    """The app on `data` with the URL query `params`, at `page` (default the Summary) through the start page, or with
    `direct` as a link straight into `page` (its session's first request, as a shared link opens it: the Summary is not
    drawn first, which on real data is a good part of a page test's time)."""
    monkeypatch.delenv("KWEVAL_DATA", raising=False)
    monkeypatch.delenv("KWEVAL_ALLOW_LOCAL_PATHS", raising=False)
    if data is not None:
        monkeypatch.setenv("KWEVAL_DATA", str(data))
    for k, v in (env or {}).items():
        monkeypatch.setenv(k, v)
    at = AppTest.from_file(str(APP), default_timeout=RUN_TIMEOUT)
    at.query_params.update(params or {})
    if page and direct:
        at.switch_page(page).run()
    else:
        at.run()
    if page and not direct:
        at.query_params.update(
            params or {}
        )  # the page's own parameters: the start page (/summary) dropped them as unknown
        at.switch_page(page).run()
    assert not at.exception, [e.message for e in at.exception]
    return at


SVG = "{http://www.w3.org/2000/svg}"  # the namespace of `svg_charts` elements, as ElementTree names them


def svg_charts(at: AppTest) -> list[ET.Element]:
    """Each of `dashboard.svg_charts`' charts on the page, in order (the Summary's small multiples and heatmap), as
    parsed XML: what the server sends is well-formed (every user string escaped)."""
    from dashboard.svg_charts import CHART_CLASS

    return [ET.fromstring(m.value) for m in at.markdown if m.value.startswith(f'<div class="{CHART_CLASS}">')]


def chart_rows(chart: ET.Element, kind: str) -> pd.DataFrame:
    """The data attributes of a chart's groups of class `kind` ("kw-bar": metric, model, value, low, high; "kw-cell":
    movie, model, value, text), in drawing order, numbers as floats (an undefined cell's value NaN)."""
    rows = [
        {k[5:]: v for k, v in g.attrib.items() if k.startswith("data-")} for g in chart.iter() if g.get("class") == kind
    ]
    frame = pd.DataFrame(rows)
    for column in ("value", "low", "high"):
        if column in frame:
            frame[column] = pd.to_numeric(frame[column].replace("", "nan"))
    return frame


def bar_charts(at: AppTest) -> list[tuple[ET.Element, pd.DataFrame]]:
    """(chart, bars) of each chart of small multiples (`dashboard.svg_charts.bars_svg`: one panel per metric)."""
    charts = [(chart, chart_rows(chart, "kw-bar")) for chart in svg_charts(at)]
    return [(chart, rows) for chart, rows in charts if len(rows)]


def heatmaps(at: AppTest) -> list[tuple[ET.Element, pd.DataFrame]]:
    """(chart, cells) of each heatmap (`dashboard.svg_charts.heatmap_svg`)."""
    charts = [(chart, chart_rows(chart, "kw-cell")) for chart in svg_charts(at)]
    return [(chart, rows) for chart, rows in charts if len(rows)]


def explorer_cards(at: AppTest) -> list[str]:
    """The HTML of the explorer's cards, in order (each begins with its review's bold header; the keyword tables'
    one style block is not a card)."""
    assert not at.exception, [e.message for e in at.exception]
    return [e.proto.body for e in at.html if "font-weight:600" in e.proto.body[:40]]


def texts(at: AppTest) -> str:
    """Everything rendered as Markdown or HTML, joined."""
    parts = []
    for kind in ("markdown", "caption", "title", "header", "subheader", "latex", "info", "warning", "error", "success"):
        parts += [str(e.value) for e in getattr(at, kind)]
    parts += [e.proto.body for e in at.html]
    return "\n".join(parts)


TABLES = {  # dataframes by the columns that identify them
    "summary_table": ["movie", "model", "n_reviews", "n_skipped"],
    "terms": ["position", "keyword", "gt_keyword", "contribution"],
    "seed_table": ["example", "gain", "discount", "nDCG"],
    "compare_table": ["model", "metric", "p_ttest_holm"],
    "per_movie_table": ["movie", "diff", "p_ttest_holm"],
    "review_diffs": ["open", "review_id", "difference"],
    "movies_table": ["movie", "title", "gt_keywords"],
}


def table(at: AppTest, name: str, nth: int = 0) -> pd.DataFrame:
    """The `nth` dataframe shown with the columns of `name`; the Summary's in the core's layout (`core_layout`)."""
    found = [df.value for df in at.dataframe if all(c in df.value.columns for c in TABLES[name])]
    assert len(found) > nth, f"no dataframe {name}"
    return core_layout(found[nth]) if name == "summary_table" else found[nth]


def core_layout(shown: pd.DataFrame) -> pd.DataFrame:
    """The Summary's table as `aggregate` returns it: without the titles shown beside the ids, the ALL rows last
    (the page shows them first)."""
    frame = shown.drop(columns=[c for c in ("title",) if c in shown.columns])
    order = frame["movie"].eq("ALL").to_numpy().argsort(kind="stable")
    return frame.iloc[order].reset_index(drop=True)


def _warnings(at: AppTest) -> list[str]:
    return [w.value.replace("\\", "") for w in at.main.warning]


def _csv(frame: pd.DataFrame) -> bytes:
    return frame.to_csv(index=False).encode()


def xss_files() -> list[tuple[str, bytes, str]]:
    predictions = pd.DataFrame(
        {
            "movie": "m1",
            "review_id": ["r1", "r1", "r2"],
            "model": "base",
            "rank": [0, 1, 0],
            "keyword": [XSS, "fraud", "poverty"],
            "score": [0.9, 0.5, 0.4],
        }
    )
    gt = pd.DataFrame(
        {"movie": "m1", "rank": [0, 1, 2], "keyword": ["fraud", XSS, "poverty"], "helpful": 1, "not_helpful": 0}
    )
    reviews = pd.DataFrame(
        {
            "movie": "m1",
            "review_id": ["r1", "r2"],
            "text": [f"A fraud {XSS} story", "Poverty."],
            "title": [XSS, "fine"],
            "rating": [3, 9],
        }
    )
    movies = pd.DataFrame({"movie": ["m1"], "title": [XSS]})
    parquet = io.BytesIO()
    gt.to_parquet(parquet, index=False)
    return [
        ("predictions.csv", _csv(predictions), "text/csv"),
        ("ground_truth.parquet", parquet.getvalue(), "application/octet-stream"),
        ("reviews.csv", _csv(reviews), "text/csv"),
        ("movies.csv", _csv(movies), "text/csv"),
        (f"{XSS}.csv", b"a,b\n1,2\n", "text/csv"),
    ]


MD_IMAGE = "![t](http://tracker.invalid/t.png)"


def hostile_files() -> list[tuple[str, bytes, str]]:
    """Uploads a stranger might send: huge scores, an empty score_direction, Markdown links and images everywhere."""
    predictions = pd.DataFrame(
        {
            "movie": "m1",
            "review_id": ["r1", "r1", "r2"],
            "model": "base",
            "rank": [0, 1, 0],
            "keyword": [MD_IMAGE, "fraud", "poverty"],
            "score": [1e308, 1e308, 1e308],
        }
    )
    gt = pd.DataFrame(
        {
            "movie": "m1",
            "rank": [0, 1, 2],
            "keyword": ["fraud", MD_IMAGE, "[x](http://phish.invalid)"],
            "helpful": 1,
            "not_helpful": 0,
        }
    )
    reviews = pd.DataFrame(
        {
            "movie": "m1",
            "review_id": ["r1", "r2"],
            "text": [f"A fraud {MD_IMAGE} story", "Poverty."],
            "title": [MD_IMAGE, "fine"],
            "rating": [3, 9],
        }
    )
    return [
        ("predictions.csv", _csv(predictions), "text/csv"),
        ("ground_truth.csv", _csv(gt), "text/csv"),
        ("reviews.csv", _csv(reviews), "text/csv"),
        (f"{MD_IMAGE}.csv", b"a,b\n1,2\n", "text/csv"),
    ]


def _upload(at: AppTest, files) -> AppTest:
    at.sidebar.radio(key="data_source").set_value("upload").run()
    at.sidebar.file_uploader(key="upload").set_value(files).run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def _column_help(frame) -> dict[str, str]:
    """{column: help text} of a rendered dataframe (its column_config)."""
    return {name: c.get("help") for name, c in json.loads(frame.proto.columns or "{}").items() if c.get("help")}


# ---------------------------------------------------------------------------------------------
# Everything a visitor can read on a page: the words-on-every-surface tests (issue 28, item 5)

_NOT_SHOWN = {"id", "key", "form_id", "page", "query_string", "url", "icon", "page_script_hash", "default", "value"}
_LINK = re.compile(r"\]\([^)]*\)|https?://\S+|\./\w+\?\S+")  # a Markdown link's target, a URL: not read


def _html_words(body: str) -> str:
    """An HTML fragment's text and its tooltips (title attributes), without tags or link targets."""
    titles = " ".join(html.unescape(t) for t in re.findall(r'title="([^"]*)"', body))
    return html.unescape(re.sub(r"<[^>]+>", " ", body)) + " " + titles


def _strings(message, where: str) -> Iterator[tuple[str, str]]:
    """(where, text) of every string field of a proto message a visitor may read (labels, help, bodies, options)."""
    for field, value in message.ListFields():
        if field.name in _NOT_SHOWN:
            continue
        here = f"{where}.{field.name}"
        values = value if field.is_repeated else [value]
        for item in values:
            if isinstance(item, str):
                yield here, _LINK.sub(" ", _html_words(item) if field.name == "body" and "<" in item else item)
            elif hasattr(item, "ListFields"):
                yield from _strings(item, here)


def _figure_strings(spec: dict, where: str) -> Iterator[tuple[str, str]]:
    """The texts of a plotly figure: titles, axis titles, annotations, colour bars, legends, trace names, hovers."""

    def walk(node, path: str):
        if isinstance(node, dict):
            for k, v in node.items():
                if k in ("text", "title", "name", "hovertemplate", "hovertext", "texttemplate") and isinstance(v, str):
                    yield f"{path}.{k}", html.unescape(re.sub(r"<[^>]+>", " ", v))
                elif k not in ("x", "y", "z", "customdata", "bdata"):
                    yield from walk(v, f"{path}.{k}")
        elif isinstance(node, list):
            for i, v in enumerate(node):
                if isinstance(v, str) and path.endswith((".text", ".hovertext")):
                    yield f"{path}[{i}]", html.unescape(re.sub(r"<[^>]+>", " ", v))
                else:
                    yield from walk(v, path)

    yield from walk(spec, where)


def visible_text(at: AppTest) -> list[tuple[str, str]]:
    """(where, text) of everything a visitor can read on the page: Markdown, captions, alerts, HTML (its text and
    tooltips), widget labels, help and options, buttons and links, expander and tab labels, table headers (their
    labels) and column help, chart titles, axes, legends and hover templates.  Cell values and URLs are not read."""
    found: list[tuple[str, str]] = []

    def walk(node, where: str) -> None:
        for i, child in enumerate(getattr(node, "children", {}).values()):
            walk(child, f"{where}/{i}")
        proto = getattr(node, "proto", None)
        if proto is None:
            return
        kind = type(node).__name__
        if kind == "Dataframe":
            config = json.loads(proto.columns or "{}")
            frame = node.value
            for name in [*frame.columns, *([frame.index.name] if frame.index.name else [])]:
                shown = config.get(str(name), {})
                found.append((f"{where} header", str(shown.get("label") or name)))
                if shown.get("help"):
                    found.append((f"{where} help", str(shown["help"])))
        elif hasattr(proto, "spec") and isinstance(getattr(proto, "spec", None), str) and proto.spec.startswith("{"):
            found.extend(_figure_strings(json.loads(proto.spec), f"{where} chart"))
        else:
            found.extend(_strings(proto, f"{where} {kind}"))

    walk(at._tree, "")
    return found
