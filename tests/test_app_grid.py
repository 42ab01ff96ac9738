"""No exception at any reachable setting (issue 11, item 1): every page over a sampled grid of the sidebar.

Each case opens one page with one combination of the sidebar's axes (k, match
mode, aggregation, one movie or ALL, one or several models, semantic and
sentiment) plus that page's own parameters at and beyond their bounds.  The
cases are a fixed covering sample: every value of every axis occurs on every
page (see `test_the_grid_covers_every_value`), not the full product.  Loaded
data and evaluations are shared through Streamlit's process-wide caches.

The Summary opens through the start page (app.py sends a visitor of `/` on to it, the query kept); every other
page opens as a link straight into it, the first request of its session (how a shared link opens it).  Through
the start page, each case would first draw the Summary at its own axes again (the Summary's case at the same
position has the same axes), ~40% of the grid's time; the Summary's own cases carry the other pages' nonsense
parameters instead, which it must ignore.

On the DNLP data, semantic matching and sentiment are turned on over one movie's
first reviews (`dnlp_slice`, written once per module): embedding all 38k DNLP
keywords and scoring every review with VADER would take minutes, and one embedding
store (the module's `embedding_cache`) serves every semantic case.
"""

from __future__ import annotations

import itertools

import pytest
from streamlit.testing.v1 import AppTest

from kweval.data import load_dataset
from kweval.text.matching import MATCH_MODES
from tests.apptest import RUN_TIMEOUT
from tests.helpers import DNLP, REPO

APP = REPO / "app.py"
PAGES = ["summary", "explorer", "ndcg", "compare", "data", "parity"]
KS = [1, 3, 5, 10, 20, 50]
MATCHES = list(MATCH_MODES)
AGGS = ["macro", "micro"]
# each page's own URL parameters: values at and beyond their bounds, and nonsense
PAGE_PARAMS = {
    "summary": [
        {"metric": "ndcg@50"},
        {"metric": "zzz"},
        {"metric": "gt_coverage"},
        {"sort": "zzz", "a": "zzz", "b": "zzz", "ek": "-3", "gain": "zzz", "q": "<b>x</b>", "review": "no such review"},
    ],
    "explorer": [
        {"p": "0"},
        {"p": "99999"},
        {"p": "x"},
        {"sort": "largest disagreement"},
        {"sort": "most matched", "none": "1"},
        {"sort": "zzz", "a": "zzz", "b": "zzz"},
        {"q": "<b>x</b>"},
        {"review": "no such review"},
    ],
    "ndcg": [
        {"ek": "0"},
        {"ek": "51"},
        {"ek": "50"},
        {"ek": "-3"},
        {"ek": "x"},
        {"gain": "exponential", "disc": "jarvelin"},
        {"gain": "zzz", "disc": "zzz", "ex": "zzz", "model": "zzz", "rv": "zzz"},
    ],
    "compare": [{"a": "zzz", "b": "zzz", "metric": "zzz"}, {"metric": "ndcg@50"}, {"metric": "rr"}],
    "data": [{}],
    "parity": [{}],
}


SEMANTIC_AXES = [("0", "0"), ("1", "0"), ("0", "1"), ("1", "1")]  # (sem, sas)


def _cases(
    data: str, movie: str, models: list[str], ks: list[int] = KS, semantic_axes: list[tuple[str, str]] = SEMANTIC_AXES
) -> list[tuple[str, dict[str, str]]]:
    """(page, query) pairs: per page one case per k, the other axes cycled so each of their values occurs."""
    cases = []
    for page in PAGES:
        extra = itertools.cycle(PAGE_PARAMS[page])
        for i, k in enumerate(ks):
            sem, sas = semantic_axes[i % len(semantic_axes)]
            query = {
                "k": str(k),
                "match": MATCHES[i % len(MATCHES)],
                "agg": AGGS[i % 2],
                "movie": movie if (i // 2) % 2 == 0 else "ALL",
                "models": ",".join(models if i % 3 else models[:1]),
                "sem": sem,
                "sas": sas,
                "tau": ["0.75", "0.5", "0.95"][i % 3],
            }
            cases.append((page, {**query, **next(extra)}))
        for params in PAGE_PARAMS[page][len(ks) :]:  # pages with more parameter cases than k values
            cases.append((page, {"k": "50", "movie": "ALL", "models": ",".join(models), **params}))
    return cases


def _axis_values(cases: list[tuple[str, dict[str, str]]], page: str, axis: str) -> set[str]:
    return {q[axis] for p, q in cases if p == page and axis in q}


def _dnlp_cases(movie: str, models: list[str]) -> list[tuple[str, dict[str, str], bool]]:
    """(page, query, on the slice): the whole DNLP data lexically, and semantic / sentiment on `dnlp_slice`."""
    whole = [(page, q, False) for page, q in _cases("dnlp", movie, models, semantic_axes=[("0", "0")])]
    on_slice = [
        (page, q, True)
        for page, q in _cases("dnlp", movie, models, ks=[3, 20, 50], semantic_axes=SEMANTIC_AXES[1:])
        if "sem" in q
    ]  # not the extra page-parameter cases: the whole data runs those
    return whole + on_slice


@pytest.mark.parametrize("data", ["demo", "dnlp"])
def test_the_grid_covers_every_value(data):
    cases = (
        _cases("demo", "m", ["a", "b", "c"])
        if data == "demo"
        else [(p, q) for p, q, _ in _dnlp_cases("m", ["a", "b", "c"])]
    )
    for page in PAGES:
        assert _axis_values(cases, page, "k") == {str(k) for k in KS}
        assert _axis_values(cases, page, "match") == set(MATCHES)
        assert _axis_values(cases, page, "agg") == set(AGGS)
        assert _axis_values(cases, page, "movie") == {"m", "ALL"}
        assert _axis_values(cases, page, "models") == {"a", "a,b,c"}
        assert _axis_values(cases, page, "sem") == {"0", "1"} and _axis_values(cases, page, "sas") == {"0", "1"}
        covered = [params for p, q in cases if p == page for params in PAGE_PARAMS[page] if params.items() <= q.items()]
        assert all(params in covered for params in PAGE_PARAMS[page]), page


@pytest.fixture(scope="module")
def embedding_cache(tmp_path_factory, seed_onnx_export):
    return seed_onnx_export(tmp_path_factory.mktemp("grid_cache"))  # the run's ONNX export, not one of its own


def _run(monkeypatch, data_path, page: str, query: dict[str, str]) -> AppTest:
    monkeypatch.delenv("KWEVAL_ALLOW_LOCAL_PATHS", raising=False)
    if data_path is None:
        monkeypatch.delenv("KWEVAL_DATA", raising=False)
    else:
        monkeypatch.setenv("KWEVAL_DATA", str(data_path))
    at = AppTest.from_file(str(APP), default_timeout=RUN_TIMEOUT)
    if page == "summary":  # through the start page, which keeps only what it is given
        at.query_params.update({k: v for k, v in query.items() if k not in ("p",)})
        at.run()
        assert not at.exception, [e.message for e in at.exception]
    at.query_params.update(query)
    at.switch_page(f"pages/{page}.py").run()  # before a first run: a link straight into the page
    return at


def _check(at: AppTest, page: str, query: dict[str, str]) -> None:
    assert not at.exception, (page, query, [e.message for e in at.exception])
    assert not at.error, (page, query, [e.value for e in at.error])
    assert at.title, (page, query, "no title: the page did not render")


def _grid(monkeypatch, embedding_cache, cases: list[tuple[str, dict[str, str], object]]) -> None:
    """Run every (page, query, data path) case; fail with all the failures listed."""
    monkeypatch.setenv("KWEVAL_CACHE_DIR", str(embedding_cache))
    failures = []
    for page, query, data_path in cases:
        try:
            _check(_run(monkeypatch, data_path, page, query), page, query)
        except AssertionError as exc:
            failures.append(str(exc)[:400])
    assert not failures, "\n".join(failures)


@pytest.fixture(scope="module")
def dnlp_slice(tmp_path_factory):
    """The DNLP data cut to one movie's first 60 reviews (every model, the movie's whole GT), as tidy tables."""
    from kweval.data.dataset import Dataset
    from kweval.data.tidy import write_tidy

    ds = load_dataset(DNLP)
    movie = DNLP_MOVIE
    reviews = ds.reviews[ds.reviews["movie"] == movie].head(60)
    kept = reviews.set_index(["movie", "review_id"]).index
    predictions = ds.predictions[ds.predictions.set_index(["movie", "review_id"]).index.isin(kept)]
    folder = tmp_path_factory.mktemp("dnlp_slice")
    write_tidy(
        Dataset(
            movies=ds.movies[ds.movies["movie"] == movie],
            reviews=reviews,
            predictions=predictions,
            ground_truth=ds.ground_truth[ds.ground_truth["movie"] == movie],
            models=ds.models,
        ),
        folder,
    )
    return folder


@pytest.mark.slow
@pytest.mark.parametrize("page", PAGES)  # a test per page: parallel test runs share them out
def test_grid_on_the_demo(monkeypatch, embedding_cache, demo_dataset, page):
    cases = _cases("demo", demo_dataset.movie_ids[0], demo_dataset.model_names)
    _grid(monkeypatch, embedding_cache, [(p, query, None) for p, query in cases if p == page])


DNLP_MOVIE = "SW_Episode6"
DNLP_MODELS = ["base", "reranker", "sentiment"]


@pytest.mark.slow
@pytest.mark.dnlp
@pytest.mark.parametrize("page", PAGES)
def test_grid_on_dnlp(monkeypatch, embedding_cache, dnlp_slice, page):
    cases = [
        (p, query, dnlp_slice if on_slice else DNLP)
        for p, query, on_slice in _dnlp_cases(DNLP_MOVIE, DNLP_MODELS)
        if p == page
    ]
    _grid(monkeypatch, embedding_cache, cases)
