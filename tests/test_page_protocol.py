"""The protocol selector (Summary and Compare, per-document data) is remembered across pages like the sidebar's
settings (issue 23): a preset chosen on Summary is the one Compare shows after any page in between, links carry it,
a shared link reopens it; movie-level data has neither the selector nor the parameter."""

from __future__ import annotations

from urllib.parse import parse_qsl

import pytest
from streamlit.testing.v1 import AppTest

from kweval.data import load_dataset
from kweval.keyphrase.dataset_protocol import protocol_scores
from tests.apptest import _warnings, run
from tests.helpers import SEMEVAL, run_in_process
from tests.test_page_headline import _collection


def _follow(at: AppTest, page: str) -> AppTest:
    """Click the sidebar's link to `page`: its query replaces the URL's."""
    link = next(e.proto for e in at.get("page_link") if e.proto.page == page)
    at.query_params.clear()
    at.query_params.update(dict(parse_qsl(link.query_string)))
    at.switch_page(f"pages/{page}.py").run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def _protocol_warnings(at: AppTest) -> list[str]:
    return [w for w in _warnings(at) if "protocol" in w]


@pytest.fixture
def collection(tmp_path):
    return _collection(tmp_path)


def test_the_protocol_follows_the_visitor_from_summary_to_compare(monkeypatch, collection):
    at = run(monkeypatch, collection, {"movie": "ALL", "k": "5"})
    at.radio(key="qp_protocol").set_value("pke").run()
    assert at.query_params["protocol"] == "pke"
    for page in ("explorer", "ndcg", "data", "failures"):  # pages it does not apply to keep it, silently
        _follow(at, page)
        assert at.query_params["protocol"] == "pke", page
        assert not _protocol_warnings(at), (page, _warnings(at))
        assert not at.get("radio") or all(r.key != "qp_protocol" for r in at.radio), page
    _follow(at, "compare")
    assert at.radio(key="qp_protocol").value == "pke" and at.query_params["protocol"] == "pke"
    assert any("pke preset" in str(s.value) for s in at.subheader), [s.value for s in at.subheader]
    # the numbers are the preset's: the means of its per-document scores
    scores = protocol_scores(load_dataset(str(collection)), "pke", 5)
    shown = next(df.value for df in at.dataframe if "mean A" in df.value.columns and "metric" in df.value.columns)
    a = at.session_state["ctx"].selection.models[0]
    assert len(shown) >= 3, shown
    for metric, mean_a in zip(shown["metric"], shown["mean A"]):
        assert mean_a == pytest.approx(scores.loc[scores["model"] == a, metric].mean()), metric
    # a page opened without a query keeps it too, and Summary shows the preset's table
    at.query_params.clear()
    at.switch_page("pages/summary.py").run()
    assert at.radio(key="qp_protocol").value == "pke" and at.query_params["protocol"] == "pke"
    assert any("n_documents" in df.value.columns for df in at.dataframe)


def test_a_shared_link_reopens_its_protocol(monkeypatch, collection):
    at = run(monkeypatch, collection, {"movie": "ALL", "k": "5", "protocol": "kpeval"}, page="pages/compare.py")
    assert at.radio(key="qp_protocol").value == "kpeval" and not _protocol_warnings(at)
    links = [e.proto.query_string for e in at.get("page_link")]
    assert links and all("protocol=kpeval" in q for q in links), links  # every page's link carries it
    at = run(monkeypatch, collection, {"protocol": "meng"}, page="pages/explorer.py")
    assert at.query_params["protocol"] == "meng" and not _protocol_warnings(at)
    _follow(at, "summary")
    assert at.radio(key="qp_protocol").value == "meng"
    at = run(monkeypatch, collection, {"protocol": "zzz"})  # a value that cannot be used is named
    assert any("**protocol**" in w and "“zzz”" in w and "used kweval" in w for w in _warnings(at)), _warnings(at)
    assert at.radio(key="qp_protocol").value == "kweval" and at.query_params["protocol"] == "kweval"


def test_movie_level_data_has_no_protocol(monkeypatch):
    at = run(monkeypatch, None, {})
    assert "protocol" not in at.query_params and all(r.key != "qp_protocol" for r in at.radio)
    assert all("protocol" not in e.proto.query_string for e in at.get("page_link"))
    _follow(at, "compare")
    assert "protocol" not in at.query_params and all(r.key != "qp_protocol" for r in at.radio)
    at = run(monkeypatch, None, {"protocol": "pke"})  # not a parameter here: named and dropped
    assert "protocol" not in at.query_params
    assert any("**protocol**" in w and "unknown here" in w for w in _warnings(at)), _warnings(at)


def test_switching_to_movie_level_data_drops_the_protocol_silently(monkeypatch, collection):
    at = run(monkeypatch, collection, {"movie": "ALL"})
    at.radio(key="qp_protocol").set_value("pke").run()
    at.sidebar.radio(key="data_source").set_value("demo").run()
    assert not at.exception and "protocol" not in at.query_params
    assert not _protocol_warnings(at), _warnings(at)


@pytest.fixture(scope="module")
def semeval(tmp_path_factory, semeval_extracted):
    """SemEval2017 with `kweval extract` predictions of two extractors (YAKE's scores lower-is-better), tidy."""
    root = tmp_path_factory.mktemp("semeval")
    extractors = ("firstphrases", "yake")
    args = ["convert", str(SEMEVAL), str(root / "tidy")]
    args += [a for x in extractors for a in ("--predictions", f"{x}={semeval_extracted(x)}")]
    done = run_in_process(*args)  # through kweval.cli.main, in this process
    assert done.returncode == 0, done.stderr
    return root / "tidy"


@pytest.mark.keyphrase
def test_semeval_keeps_the_protocol_through_the_explorer(monkeypatch, semeval):
    at = run(monkeypatch, semeval, {"movie": "ALL", "k": "5"})
    at.radio(key="qp_protocol").set_value("meng").run()
    _follow(at, "explorer")
    assert at.query_params["protocol"] == "meng" and not _protocol_warnings(at)
    _follow(at, "compare")
    assert at.radio(key="qp_protocol").value == "meng"
    scores = protocol_scores(load_dataset(str(semeval)), "meng", 5)
    shown = next(df.value for df in at.dataframe if "mean B" in df.value.columns and "metric" in df.value.columns)
    assert set(shown["model"]) == {"yake"} and len(shown) >= 3, shown
    for model, metric, mean_b in zip(shown["model"], shown["metric"], shown["mean B"]):
        assert mean_b == pytest.approx(scores.loc[scores["model"] == model, metric].mean()), (model, metric)
