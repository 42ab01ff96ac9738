"""The Summary page (AppTest).

Its numbers equal the core's aggregate, every number explained, the best marked, the protocol card.
"""

from __future__ import annotations

import re

import pandas as pd
import pytest

from dashboard.style import axis_title, best_styles, metric_label
from kweval.evaluation.aggregate import aggregate
from kweval.evaluation.pipeline import EvalOptions, evaluate
from tests.apptest import DATA, DATASETS, SVG, _column_help, bar_charts, heatmaps, run, table, texts


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
    raw = next(df.value for df in at.dataframe if "n_skipped" in df.value.columns)  # as shown: ALL first, titles
    assert (raw["movie"].iloc[: len(models)] == "ALL").all()  # the answer first (issue 23)
    titles = dict(zip(ds.movies["movie"], ds.movies["title"]))
    if "title" in raw.columns:  # the sidebar's names beside the ids (issue 23: tables showed only ids)
        assert raw["title"].tolist() == [titles.get(m, m) if m != "ALL" else "All movies" for m in raw["movie"]]
    assert "ndcg@3" in shown.columns
    assert [b.label for b in at.download_button] == [
        "Protocol card (JSON)",
        "CSV",
        "Markdown",
        "LaTeX",
    ]
    assert [b.label for b in at.button if b.key == "build_report"] == ["Build report"]  # the report: built on request


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
    halves = bar_charts(at)  # two SVG charts drawn by the server (issue 28: side by side, stacked at 400 px)
    # small multiples (issue 23): one panel and one y-scale from 0 per metric, no legend (the models are each panel's
    # axis); how the values are aggregated is said in the caption below
    assert len(halves) == 2
    for chart, bars in halves:
        svg = chart.find(f"{SVG}svg")
        assert svg.get("role") == "img" and "one panel per metric" in svg.get("aria-label")
        panels = [p for p in chart.iter(f"{SVG}g") if p.get("class") == "kw-panel"]
        titles = [t.text for t in chart.iter(f"{SVG}text") if t.get("class") == "kw-panel-title"]
        assert len(panels) == len(titles) == bars["metric"].nunique() and titles == list(dict.fromkeys(bars["metric"]))
        for panel in panels:  # its own scale: the lowest tick is 0 (every value here is ≥ 0), the highest ≥ its bars
            ticks = [float(t.text) for t in panel.iter(f"{SVG}text") if t.get("font-size") == "10"]
            ends = [float(g.get("data-high")) for g in panel.iter(f"{SVG}g") if g.get("class") == "kw-bar"]
            assert ticks[0] == 0 and ticks[-1] >= max(ends)
        assert not [g for g in chart.iter(f"{SVG}g") if g.get("class") == "kw-legend"]
    rows = pd.concat([rows for _chart, rows in halves], ignore_index=True)
    assert rows["metric"].nunique() >= 10 and (rows["value"] >= 0).all()
    # every bar is the table's value, its error bar the interval (micro: the ALL row of each model)
    every = summary.value.set_index(["movie", "model"])
    for metric, model, value in rows[["metric", "model", "value"]].itertuples(index=False):
        column = next(c for c in every.columns if metric_label(c) == metric)
        assert value == pytest.approx(float(every.loc[("ALL", model), column]), abs=1e-12), (metric, model)
    assert ((rows["low"] <= rows["value"] + 1e-12) & (rows["value"] <= rows["high"] + 1e-12)).all()
    assert "micro: ratios of counts summed over reviews" in texts(at)
    [(heat, cells)] = heatmaps(at)
    legend = next(g for g in heat.iter(f"{SVG}g") if g.get("class") == "kw-legend")
    assert next(legend.iter(f"{SVG}text")).text == axis_title("ndcg@5", "micro")  # the colour bar's title
    assert next(t for t in heat.iter(f"{SVG}text") if t.get("class") == "kw-axis-title").text == "movie"
    assert len({r.get("fill") for r in legend.iter(f"{SVG}rect")}) > 10  # a colour scale, not one colour
    assert cells["text"].str.fullmatch(r"\d\.\d{3,}").all()  # each cell's value written in it
    shown = every.loc[every.index.get_level_values("movie") != "ALL", "ndcg@5"]
    for movie, model, value in cells[["movie", "model", "value"]].itertuples(index=False):
        assert value == pytest.approx(float(shown.loc[(movie, model)]), abs=1e-12), (movie, model)
    assert len(cells) == len(shown)

    at.switch_page("pages/compare.py").run()
    compare = next(df for df in at.dataframe if "p_ttest_holm" in df.value.columns)
    helps = _column_help(compare)
    for col in ("p_randomization_holm", "p_ttest_holm", "significant"):
        entry = registry.info(col)
        assert helps[col] == f"{entry.label}: {entry.help()}", col


@pytest.mark.parametrize("page", ["pages/summary.py", "pages/data.py"])
def test_summary_and_data_show_the_protocol_card(monkeypatch, cores, page):
    """The card of the numbers shown (issue 12 item 5): the sidebar's k, match and aggregation, the data's hash."""
    at = run(monkeypatch, None, {"k": "3", "agg": "micro", "match": "word"}, page)
    shown = re.sub(r"\\(.)", r"\1", texts(at))  # Markdown escapes undone
    # the match mode in force and why: chosen here, over movie-level data's approx
    assert "| k | 3 |" in shown and "| match | word (docs/metrics.md §2): chosen (the default on movie-level" in shown
    assert "| aggregation | micro (docs/metrics.md §6) |" in shown
    assert cores["demo"].content_hash() in shown and "Dataset.content_hash" in shown
    assert "semantic" not in [line.split("|")[1].strip() for line in shown.splitlines() if line.startswith("| ")]
    assert "Protocol card (JSON)" in [b.label for b in at.download_button]
