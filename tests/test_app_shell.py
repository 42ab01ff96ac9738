"""The dashboard's shell (AppTest).

Every page renders, the shared sidebar and its selection in the URL, the classic multipage layout.
"""

from __future__ import annotations

import tomllib
from dataclasses import replace
from pathlib import Path
from urllib.parse import parse_qsl

import pandas as pd
import pytest

from dashboard.review_tables import SORTS
from kweval.evaluation.pipeline import EvalOptions, evaluate
from tests.apptest import APP, DATA, DATASETS, KNOWN, PAGES, ROOT, TITLES, _warnings, run, table, texts
from tests.helpers import DNLP


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
def test_selection_lives_in_the_url(monkeypatch, cores):
    assert "SW_Episode5" in cores["dnlp"].movie_ids  # the movie the link below names
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
    assert at.query_params["movie"] == "ALL" and at.query_params["k"] == "5"
    warnings = [w.value.replace("\\", "") for w in at.main.warning]
    assert any("**movie**" in w and "“nope”" in w and "used ALL" in w for w in warnings), warnings
    assert any("**k**" in w and "“zero”" in w and "used 5" in w for w in warnings), warnings


@pytest.mark.dnlp
def test_data_from_the_command_line(monkeypatch):
    monkeypatch.setattr("sys.argv", ["app.py", "--data", str(DNLP)])  # streamlit run app.py -- --data PATH
    at = run(monkeypatch, None, {})
    assert at.query_params["movie"] == "ALL"  # the default scope (issue 23)
    assert at.sidebar.selectbox(key="sel_movie").options[1].endswith("(GoodBadUgly)")  # the DNLP data, not the demo
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


def test_classic_multipage_shell_and_no_private_streamlit_api():
    """The pages are the top-level `pages/` of Streamlit's classic multipage mode: no `st.navigation` anywhere
    (beside `pages/` it breaks a deep link's first visit), a short `app.py`, and no streamlit internals."""
    assert sorted(p.stem for p in (ROOT / "pages").glob("*.py")) == sorted([*TITLES, "parity", "protocols"])
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


def test_bad_page_parameters_warn_at_the_top_and_leave_the_url(monkeypatch):
    at = run(monkeypatch, None, {"k": "20"})
    at.query_params.update({"ek": "51", "gain": "zzz", "zzz": "1"})
    at.switch_page("pages/ndcg.py").run()
    assert not at.exception, [e.message for e in at.exception]
    warnings = _warnings(at)
    assert any("**ek**" in w and "“51”" in w and "used 50" in w for w in warnings), warnings
    assert any("**gain**" in w and "“zzz”" in w and "used linear" in w for w in warnings), warnings
    assert any("**zzz**" in w and "unknown" in w for w in warnings), warnings
    assert at.slider(key="qp_ek").value == 50  # beyond the slider (the sidebar's k range): clamped
    assert at.query_params["ek"] == "50" and "gain" not in at.query_params and "zzz" not in at.query_params
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


@pytest.mark.parametrize("data", DATA)
def test_all_movies_is_the_default_scope(monkeypatch, data):
    """A first visit without a query shows every movie (issue 23: not the first movie's 1,429 of 9,362 reviews)."""
    at = run(monkeypatch, DATASETS[data], {})
    assert at.sidebar.selectbox(key="sel_movie").value == "ALL" and at.query_params["movie"] == "ALL"
    assert any(s.value.endswith("All movies") for s in at.subheader), [s.value for s in at.subheader]
    at.switch_page("pages/explorer.py").run()
    assert at.session_state["ctx"].scores()["movie"].nunique() == len(at.session_state["ctx"].dataset.movie_ids)


def test_the_embedding_backend_lives_in_the_url_and_follows_the_visitor(monkeypatch):
    """Issue 23: a shared link dropped the embedding backend (onnx-int8 reopened as auto, with other numbers)."""
    at = run(monkeypatch, None, {"backend": "onnx-int8"})
    assert at.sidebar.selectbox(key="sel_backend").value == "onnx-int8" and at.query_params["backend"] == "onnx-int8"
    assert at.session_state["ctx"].selection.backend == "onnx-int8"
    links = [e.proto.query_string for e in at.get("page_link")]
    assert links and all("backend=onnx-int8" in q for q in links), links  # every page's link carries it
    at.query_params.clear()  # a page opened without a query keeps the visitor's backend
    at.switch_page("pages/explorer.py").run()
    assert at.sidebar.selectbox(key="sel_backend").value == "onnx-int8" and at.query_params["backend"] == "onnx-int8"
    # the evaluation uses it when semantic matching is on (the options are built from the selection)
    from dashboard.sidebar import _options

    ctx = at.session_state["ctx"]
    assert _options(ctx.dataset, replace(ctx.selection, semantic=True)).embedding_backend == "onnx-int8"
    at = run(monkeypatch, None, {"backend": "zzz"})
    assert any("**backend**" in w and "“zzz”" in w and "used auto" in w for w in _warnings(at)), _warnings(at)


def test_clearing_the_models_asks_for_one_instead_of_restoring_all(monkeypatch):
    """Issue 23: clearing Models silently restored every model."""
    at = run(monkeypatch, None, {})
    at.sidebar.multiselect(key="sel_models").set_value([]).run()
    assert not at.exception
    assert at.sidebar.multiselect(key="sel_models").value == []
    assert [i.value for i in at.main.info] == ["Choose at least one model in the sidebar (Models)."]
    assert not at.dataframe and at.query_params["models"] == ""
    at.run()  # and it stays cleared on the next run
    assert at.sidebar.multiselect(key="sel_models").value == [] and not at.dataframe


def test_a_browser_url_lagging_behind_does_not_undo_a_newer_value(monkeypatch):
    """Issue 23: quick presses of a widget's arrows lost steps.  The browser sends its URL with every rerun; when it
    still holds a value this session wrote before the latest (0.75 -> 0.76 -> 0.77 pressed quickly), the newer
    widget value stands.  The same binding serves every sidebar parameter: k here (τ needs the embedding model)."""
    at = run(monkeypatch, None, {})
    at.sidebar.number_input(key="sel_k").increment().run()
    at.sidebar.number_input(key="sel_k").increment().run()
    assert at.query_params["k"] == "7"
    at.query_params["k"] = "6"  # the browser's URL one step behind, sent with the next rerun (another widget)
    at.sidebar.radio(key="sel_agg").set_value("micro").run()
    assert at.sidebar.number_input(key="sel_k").value == 7 and at.query_params["k"] == "7"
    assert at.session_state["ctx"].selection.k == 7
    # a link into a page is a request, even with a value this session wrote before
    at.query_params["k"] = "6"
    at.switch_page("pages/compare.py").run()
    assert at.sidebar.number_input(key="sel_k").value == 6


def test_switching_the_data_source_warns_about_nothing_the_visitor_did_not_type(monkeypatch):
    """Issue 23: after switching the source, the previous data's models (written to the URL by the dashboard) were
    reported as an unknown URL parameter."""
    from tests.apptest import _upload, xss_files

    at = _upload(run(monkeypatch, None, {}), xss_files())
    assert not [w for w in _warnings(at) if "URL parameter" in w], _warnings(at)
    assert at.query_params["models"] == ",".join(at.session_state["ctx"].dataset.model_names)
    # a typed value is still named
    at = run(monkeypatch, None, {"models": "nope"})
    assert any("**models**" in w and "“nope”" in w for w in _warnings(at)), _warnings(at)


def test_the_component_scan_kept_for_the_process_is_the_real_scan():
    """tests.apptest answers Streamlit's component scan once per process (`scanned_once`); it is the real answer."""
    from streamlit.components.v2 import manifest_scanner

    once = manifest_scanner.scan_component_manifests
    assert once.real is not once  # every AppTest of the run goes through the kept answer
    assert once() == once.real() and once() is not once()  # the same manifests, a list of its own per caller
