"""Issue 11 "Performance": what a sidebar change leaves unchanged is reused, with the same numbers."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import streamlit as st

from kweval import stats
from kweval.data import load_dataset
from kweval.evaluation import slices
from kweval.evaluation.aggregate import aggregate_by
from kweval.evaluation.pipeline import EvalOptions, evaluate
from kweval.io import report
from kweval.metrics import registry
from kweval.stats import bootstrap
from tests.apptest import run, table
from tests.helpers import calls_by_thread


def _best_rows_by_loop(table: pd.DataFrame) -> dict[str, set[int]]:
    """The reference: per column and movie, the rows equal to the movie's best non-NaN value."""
    best = {}
    for col in report.metric_columns(table):
        direction = registry.better(col) if registry.info(col) is not None else registry.HIGHER
        if direction == registry.NEITHER:
            continue
        best[col] = set()
        for _, rows in table.groupby("movie", sort=False):
            if rows[col].notna().any():
                top = rows[col].max() if direction == registry.HIGHER else rows[col].min()
                best[col].update(int(i) for i in rows.index[rows[col] == top])
    return best


def test_best_rows_match_the_per_movie_loop_with_ties_nan_and_any_index():
    rng = np.random.default_rng(1)
    for trial in range(60):
        n = int(rng.integers(0, 10))
        table = pd.DataFrame(
            {
                "movie": rng.choice(["a", "b", "ALL"], n),
                "model": "m",
                "f1": np.where(rng.random(n) < 0.3, np.nan, rng.integers(0, 3, n) / 2),
                "gt_coverage": rng.random(n),
            }
        )
        if trial % 2:
            table.index = rng.permutation(n) + 7
        assert report.best_rows(table) == _best_rows_by_loop(table)


def test_aggregate_by_categorical_labels_equal_string_labels():
    ds = load_dataset(None)
    ev = evaluate(ds, EvalOptions())
    for by in slices.SLICES:
        labels = slices.slice_labels(ev.scores, ds.reviews, by)
        if labels is None:
            continue
        labels = labels.cat.add_categories(["unused"])  # a category no row has: no group
        labels.iloc[0] = np.nan  # a row without a label: in no group
        for how in ("macro", "micro"):
            by_codes = aggregate_by(ev, labels, how)
            as_text = (
                pd.Series(labels.astype(object).where(labels.notna(), None)).astype(str).where(labels.notna(), "\0")
            )
            by_text = aggregate_by(ev, as_text.where(as_text != "\0", "zzz-none"), how)
            by_text = by_text[by_text["slice"] != "zzz-none"].reset_index(drop=True)
            order = {g: i for i, g in enumerate(labels.cat.categories)}
            by_text = by_text.sort_values("slice", key=lambda s: s.map(order), kind="stable").reset_index(drop=True)
            assert "unused" not in set(by_codes["slice"])
            pd.testing.assert_frame_equal(by_codes, by_text, check_exact=True)


def test_summary_slice_labels_are_reused_when_the_rows_stay(monkeypatch):
    """A k change keeps the evaluated rows: the Summary's slice labels are not computed again."""
    st.cache_data.clear()
    calls = []
    original = slices.slice_labels
    monkeypatch.setattr(slices, "slice_labels", lambda *a, **kw: calls.append(a[2]) or original(*a, **kw))
    at = run(monkeypatch, None)
    assert sorted(calls) == ["length", "rating"]
    at.sidebar.number_input(key="sel_k").set_value(7).run()
    assert not at.exception
    assert sorted(calls) == ["length", "rating"]
    assert any(df.value.index.name == "rating" for df in at.dataframe)


def _with_semantic_columns(scores: pd.DataFrame, shift: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(3 + shift)
    n = len(scores)
    out = scores.copy()
    out["sem_n_pred"] = 5.0
    out["sem_n_gt"] = 8.0
    out["sem_pred_matched"] = rng.integers(0, 6, n).astype(float)
    out["sem_gt_matched"] = np.minimum(out["sem_pred_matched"] + rng.integers(0, 3, n), 8).astype(float)
    out["sem_precision"] = out["sem_pred_matched"] / 5
    out["sem_recall"] = out["sem_gt_matched"] / 8
    out["sem_f1"] = (
        2 * out["sem_precision"] * out["sem_recall"] / (out["sem_precision"] + out["sem_recall"]).replace(0, np.nan)
    )
    out["sem_f1"] = out["sem_f1"].fillna(0.0)
    return out


@pytest.mark.parametrize("how", ["macro", "micro"])
def test_ci_groups_give_the_joint_bootstrap_and_a_tau_change_leaves_the_lexical_digest(how):
    """The Summary bootstraps the metrics cut off at k and the semantic metrics apart (dashboard.state.ci_groups),
    cached by the content of what each group reads: a τ change (only sem_* change) finds the lexical groups' CIs in
    the cache, a k change the other groups'."""
    from dashboard.state import ci_digest, ci_groups

    ev = evaluate(load_dataset(None), EvalOptions())
    rows = _with_semantic_columns(ev.scores[ev.scores["model"] == ev.models[0]])
    names = [*ev.metric_names, "sem_precision", "sem_recall", "sem_f1"]
    groups = ci_groups(names)
    at_k = [m for m in ev.metric_names if m.endswith("@5")]
    assert at_k and groups == [
        [m for m in ev.metric_names if m not in at_k],
        at_k,
        ["sem_precision", "sem_recall", "sem_f1"],
    ]
    other_k = rows.assign(**{m: rows[m] * 0.5 for m in at_k})
    assert ci_digest(other_k, groups[0], how) == ci_digest(rows, groups[0], how)
    assert ci_digest(other_k, groups[1], how) != ci_digest(rows, groups[1], how)
    joint = stats.bootstrap_summary_ci(rows, names, how).set_index("metric")
    split = pd.concat([stats.bootstrap_summary_ci(rows, g, how) for g in groups]).set_index("metric").reindex(names)
    np.testing.assert_allclose(
        split.to_numpy(dtype=float), joint.to_numpy(dtype=float), rtol=0, atol=1e-12, equal_nan=True
    )

    other_tau = _with_semantic_columns(ev.scores[ev.scores["model"] == ev.models[0]], shift=1)
    assert ci_digest(other_tau, groups[0], how) == ci_digest(rows, groups[0], how)
    assert ci_digest(other_tau, groups[2], how) != ci_digest(rows, groups[2], how)
    assert ci_digest(rows, groups[0], "macro") != ci_digest(rows, groups[0], "micro")
    changed = rows.assign(**{ev.metric_names[0]: rows[ev.metric_names[0]] + 0.5})
    assert ci_digest(changed, groups[0], how) != ci_digest(rows, groups[0], how)


@pytest.mark.parametrize("n", [1, 7, 2500, 12_000])  # 12,000 × 2000 resamples: over the kept size, drawn each time
def test_kept_resample_draws_equal_fresh_draws(n):
    """kweval.stats.paired keeps the last resample counts (every model of a movie bootstraps the same n): same
    numbers."""
    x = np.random.default_rng(5).random((n, 2))
    first = stats.bootstrap_statistics(n, lambda w: w @ x / n)
    bootstrap._resample_counts.cache_clear()
    fresh = np.concatenate(
        [np.asarray(c, dtype="float64") @ x / n for c in bootstrap._draw_counts(n, stats.N_BOOT, stats.SEED)]
    )
    again = stats.bootstrap_statistics(n, lambda w: w @ x / n)
    assert np.array_equal(first, fresh) and np.array_equal(again, fresh)


def test_explorer_rerun_reuses_its_review_cards(monkeypatch):
    """A warm rerun of the explorer shows the same cards without building them again; another marked model rebuilds
    them.  Counted in the page's thread: the page look-ahead (dashboard.cards_ahead) builds the next page's cards in
    its own, as many as it gets to before the test reads the count."""
    from dashboard import keyword_html

    calls = _count_calls(monkeypatch, keyword_html, "model_grid_start")  # one per card template built

    def built() -> int:
        return sum(not thread.startswith("kweval-look-ahead") for thread in calls)

    at = run(monkeypatch, None, page="pages/explorer.py")
    first = [h.proto.body for h in at.get("html")]
    n_cards = built()
    assert n_cards > 0
    at.run()
    assert built() == n_cards and [h.proto.body for h in at.get("html")] == first
    models = at.radio(key="qp_hl").options
    at.radio(key="qp_hl").set_value(models[1]).run()
    assert not at.exception and built() == 2 * n_cards
    assert [h.proto.body for h in at.get("html")] != first


def _count_calls(monkeypatch, module, name: str) -> list[str]:
    """Empty Streamlit's caches and count the calls of `module.name` from now on (`calls_by_thread`: one item per
    call, the name of the thread that made it)."""
    st.cache_resource.clear()
    st.cache_data.clear()
    return calls_by_thread(monkeypatch, module, name)


def _links(at) -> list[str]:
    return next(df.value for df in at.dataframe if "open" in df.value.columns)["open"].tolist()


def test_compare_rerun_reuses_its_scatter_and_links(monkeypatch):
    """A warm rerun of Compare draws the same per-review scatter (a Vega-Lite spec and its rows) and links without
    building them again; another metric builds them again."""
    from dashboard import vega_specs

    built = _count_calls(monkeypatch, vega_specs, "scatter_spec")

    def shown(at) -> tuple[str, bytes]:
        chart = at.get("vega_lite_chart")[0]
        return chart.proto.spec, chart.proto.data.data

    at = run(monkeypatch, None, page="pages/compare.py")
    scatter = shown(at)
    links = _links(at)
    assert len(built) == 1 and links and all(link.startswith("./explorer?") for link in links)
    assert not at.get("plotly_chart")  # no plotly on Compare: its chunk is not loaded for the scatter
    at.run()
    assert len(built) == 1 and shown(at) == scatter
    assert _links(at) == links
    metric = at.selectbox(key="qp_metric")
    metric.set_value(next(m for m in metric.options if m != metric.value)).run()
    assert not at.exception and len(built) == 2 and shown(at) != scatter


def test_summary_rerun_reuses_its_figures(monkeypatch):
    """A warm rerun of the Summary draws the same bars and heatmap (SVG drawn by the server) without building them
    again; another metric redraws the heatmap only."""
    from dashboard import svg_charts

    heatmaps = _count_calls(monkeypatch, svg_charts, "heatmap_svg")
    bars = _count_calls(monkeypatch, svg_charts, "bars_svg")

    def shown(at) -> list[str]:
        return [m.value for m in at.markdown if m.value.startswith(f'<div class="{svg_charts.CHART_CLASS}">')]

    at = run(monkeypatch, None)
    specs = shown(at)
    assert len(heatmaps) == 1 and len(bars) == 2 and len(specs) == 3  # the small multiples' two charts, the heatmap
    # no chart library on the Summary: a new visitor's browser loads neither plotly's chunk nor Vega's
    assert not at.get("plotly_chart") and not at.get("vega_lite_chart")
    at.run()
    assert len(heatmaps) == 1 and len(bars) == 2 and shown(at) == specs
    metric = at.selectbox(key="qp_metric")
    metric.set_value(next(m for m in metric.options if m != metric.value)).run()
    after = shown(at)
    assert not at.exception and len(heatmaps) == 2 and len(bars) == 2 and after[:2] == specs[:2]
    assert after[2] != specs[2]


def test_scatter_points_carry_their_review_and_plain_tooltip():
    """The per-review scatter's rows: each point's row finds its review again (a click's selection), x and y are the
    values jittered as before (seeded, ±0.012), the tooltip's fields hold the exact values; user strings are values
    or titles only, never a field name or an expression, and not escaped (Vega draws plain text)."""
    import json

    from dashboard import charts, vega_specs
    from dashboard.style import jitter

    both = pd.DataFrame(
        {"movie": ["m<1>", "m2"], "review_id": ["r&1", "r2"], "ndcg@5_a": [0.1, 0.5], "ndcg@5_b": [0.3, 0.25]}
    )
    both["difference"] = both["ndcg@5_b"] - both["ndcg@5_a"]
    points = charts.scatter_points(both, "ndcg@5")
    assert list(points.columns) == list(vega_specs.SCATTER_FIELDS)
    for row in points.to_dict("records"):
        assert charts.clicked_review(both, {"row": row["row"]}) == (row["movie"], row["review"])
    assert points["x"].tolist() == jitter(both["ndcg@5_a"], 0.012, seed=1)
    assert points["y"].tolist() == jitter(both["ndcg@5_b"], 0.012, seed=2)
    assert points[["a", "b", "difference"]].to_numpy().tolist() == [[0.1, 0.3, 0.3 - 0.1], [0.5, 0.25, 0.25 - 0.5]]
    assert points[["movie", "review"]].to_numpy().tolist() == [["m<1>", "r&1"], ["m2", "r2"]]
    spec = vega_specs.scatter_spec("<b>A</b>", "B", "nDCG@5", "red", "movie", "review")
    layer = spec["layer"][-1]
    assert layer["params"] == [
        {"name": vega_specs.SCATTER_PICK, "select": {"type": "point", "fields": ["row"], "on": "click"}}
    ]
    assert layer["encoding"]["x"]["title"] == "nDCG@5 of <b>A</b> (A)"
    fields = {e["field"] for e in layer["encoding"]["tooltip"]} | {layer["encoding"][c]["field"] for c in "xy"}
    assert fields <= set(vega_specs.SCATTER_FIELDS)
    assert "<b>A</b> (A)" in [e["title"] for e in layer["encoding"]["tooltip"]]
    assert "expr" not in json.dumps(spec) and "datum" not in json.dumps(spec)


def test_headline_is_keyed_by_what_it_reads(demo_dataset):
    """Speed: the Summary's headline is cached by the content it reads, so sentiment on (new columns) reuses it; a
    changed key-metric value does not.  Reference: `headline` recomputed on the frame with the new columns."""
    from dashboard import caches
    from kweval.stats.headline import headline, key_metrics

    ev = evaluate(demo_dataset, EvalOptions())
    scores = ev.scores
    keys = tuple(key_metrics([m for m in ev.metric_names if m in scores.columns], 5))
    more = scores.assign(sas_text=0.5, sas_keywords=0.25)  # what sentiment on adds
    rows = lambda opts: ("h", opts, "ALL", ("a",))  # noqa: E731 - the τ-free key decides the rows and their values
    first = caches._headline_content(("h", "opts"), rows("opts"), "macro", "ALL", ("a",), keys, scores)
    assert caches._headline_content(("h", "opts+sas"), rows("opts+sas"), "macro", "ALL", ("a",), keys, more) == first
    changed = scores.copy()
    changed.loc[changed.index[0], keys[0]] = 1.0 - float(changed[keys[0]].iloc[0])
    assert caches._headline_content(("h", "other"), rows("other"), "macro", "ALL", ("a",), keys, changed) != first
    pd.testing.assert_frame_equal(headline(more, list(keys)), headline(scores, list(keys)))


def test_a_tau_step_digests_no_row_again(monkeypatch, demo_dataset):
    """Speed (issue 29): the rows' digest of the headline's and a metric view's cache keys is cached by what decides
    the rows (the τ-free key, scope, models), so the keys of a τ step (a new evaluation key, the same rows) hash no
    row string again; other rows (another scope) are digested.  Reference: `row_identity` itself."""
    from dashboard import caches, state

    ev = evaluate(demo_dataset, EvalOptions())
    scores = ev.scores
    calls = []
    monkeypatch.setattr(caches, "row_identity", lambda frame: calls.append(len(frame)) or state.row_identity(frame))
    rows = ("h", "τ-free options of test_a_tau_step_digests_no_row_again", "ALL", ("a",))
    metrics = ("f1",)
    at_75 = caches._headline_content(("h", "τ=0.75"), rows, "macro", "ALL", ("a",), metrics, scores)
    at_76 = caches._headline_content(("h", "τ=0.76"), rows, "macro", "ALL", ("a",), metrics, scores)
    assert calls == [len(scores)] and at_75 == at_76 and at_75[1] == state.row_identity(scores)
    caches._metric_content(("h", "τ=0.77"), rows, "macro", "f1", scores)
    assert calls == [len(scores)]
    movie = scores[scores["movie"] == scores["movie"].iloc[0]]
    other = caches._headline_content(("h", "τ=0.76"), (*rows[:2], "m", ("a",)), "macro", "m", ("a",), metrics, movie)
    assert calls == [len(scores), len(movie)] and other[1] == state.row_identity(movie) != at_75[1]


@pytest.mark.parametrize("how", ["macro", "micro"])
def test_tau_free_digests_read_back_what_ci_digest_gives(monkeypatch, how):
    """Speed trick "τ-free digests" (`caches.values_digest`): at a τ step (same τ-free key, new semantic values) the
    lexical metrics' digest is read back, not computed, and equals `ci_digest` of the new rows; the semantic part is
    computed and tells the two τ apart.  Reference: `ci_digest` of each part."""
    from dashboard import caches, state
    from kweval.evaluation.semantic_columns import moves_with_tau

    ev = evaluate(load_dataset(None), EvalOptions())
    names = [*ev.metric_names, "sem_precision", "sem_recall", "sem_f1"]
    moving = [m for m in names if moves_with_tau(m)]
    fixed = [m for m in names if m not in moving]
    assert moving == ["sem_precision", "sem_recall", "sem_f1"] and "f1" in fixed
    at_a = _with_semantic_columns(ev.scores)
    at_b = _with_semantic_columns(ev.scores, shift=1)
    calls = []
    monkeypatch.setattr(
        caches, "ci_digest", lambda rows, group, h: calls.append(list(group)) or state.ci_digest(rows, group, h)
    )
    rows_key = ("h", f"τ-free options of test_tau_free_digests_read_back_what_ci_digest_gives {how}", "ALL")
    first = caches.values_digest(rows_key, at_a, names, how)
    assert first == (state.ci_digest(at_a, fixed, how), state.ci_digest(at_a, moving, how))
    assert calls == [fixed, moving]
    second = caches.values_digest(rows_key, at_b, names, how)
    assert calls == [fixed, moving, moving]  # the τ step digests the semantic columns only
    assert second == (state.ci_digest(at_b, fixed, how), state.ci_digest(at_b, moving, how))
    assert second[0] == first[0] and second[1] != first[1]


def test_a_new_k_counts_again_without_matching_again(monkeypatch):
    """Speed trick "matching shared across k" (dashboard.state._matchings): a k change evaluates again on the
    cleaning and matching already done (the numbers: tests/test_shared_matching.py); a match-mode change matches
    again."""
    from dashboard import state

    matched = _count_calls(monkeypatch, state, "match_dataset")
    at = run(monkeypatch, None, {"k": "5"}, page="pages/compare.py")
    assert len(matched) == 1
    at.sidebar.number_input(key="sel_k").set_value(8).run()
    assert not at.exception and "ndcg@8" in table(at, "compare_table")["metric"].tolist()
    assert len(matched) == 1
    match = at.sidebar.selectbox(key="sel_match")
    match.set_value(next(m for m in match.options if m != match.value)).run()
    assert not at.exception and len(matched) == 2
