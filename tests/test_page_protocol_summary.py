"""Summary under a keyphrase preset leads as the kweval view does: the headline card of the preset's per-document
scores and the small multiples of its table, their numbers the CLI's (`kweval evaluate --protocol P`)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from dashboard.style import metric_label
from kweval.data import load_dataset
from kweval.data.vocabulary import DOCUMENT_WORDS
from kweval.io.report_protocol import protocol_headline, protocol_intervals
from kweval.keyphrase.dataset_protocol import protocol_scores
from tests.apptest import SVG, bar_charts, run, texts
from tests.test_page_headline import _collection, _headline_lines


def _cli(folder, protocol: str, capsys, *extra: str) -> list[dict]:
    from kweval.cli import main

    argv = ["evaluate", str(folder), "--protocol", protocol, "--k", "5", "--format", "json", *extra]
    for model in ("first", "reversed"):
        argv += ["--predictions", f"{model}={folder / 'predictions.csv'}"]
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)["rows"]


@pytest.mark.parametrize("protocol", ["pke", "kpeval", "meng"])
def test_preset_view_has_the_headline_and_charts_of_the_cli_numbers(monkeypatch, tmp_path, capsys, protocol):
    folder = _collection(tmp_path)
    at = run(monkeypatch, folder, {"movie": "ALL", "k": "5"})
    at.radio(key="qp_protocol").set_value(protocol).run()
    assert not at.exception
    # the card leads, before the table, and its sentences are the core's, from the preset's per-document scores
    shown = texts(at)
    assert shown.index("At a glance") < shown.index(f"Every metric under the {protocol} preset")
    scores = protocol_scores(load_dataset(str(folder)), protocol, 5)
    core = protocol_headline(scores, protocol, 5, DOCUMENT_WORDS)
    assert len(core) == 2  # f1@5 and f1@M
    lines = _headline_lines(at)
    assert [line.split(" ", 1)[1] for line in lines] == core["sentence"].tolist()
    assert [line.startswith("✅") for line in lines] == core["significant"].tolist()
    cli = {row["model"]: row for row in _cli(folder, protocol, capsys)}
    for row in core.to_dict("records"):
        best, runner, metric = row["best"], row["runner_up"], row["metric"]
        if protocol == "kpeval":  # the table's F1 is the F1 of mean P and R: the card says it compares the means
            assert row["label"].startswith("mean per-document") and "mean per-document" in row["sentence"]
            assert "F1 of mean P and mean R" in shown
        else:  # the margin is the difference of the CLI's two numbers, the best the CLI's best
            assert row["margin"] == pytest.approx(cli[best][metric] - cli[runner][metric], abs=1e-12)
            assert cli[best][metric] >= cli[runner][metric]
    # the small multiples: one panel per metric of the table, each bar the CLI's number, inside its interval
    figures = bar_charts(at)
    assert len(figures) == 2  # the small multiples in two charts (side by side, stacked at 400 px)
    metrics = [c for c in cli["first"] if c not in ("movie", "model", "n_documents")]
    bars = pd.concat([rows for _chart, rows in figures], ignore_index=True)
    panels = [
        t.text for chart, _rows in figures for t in chart.iter(f"{SVG}text") if t.get("class") == "kw-panel-title"
    ]
    assert panels == list(dict.fromkeys(bars["metric"])) == [metric_label(m) for m in metrics]  # in the table's order
    cis = protocol_intervals(scores, protocol, metrics).set_index(["model", "metric"])
    by_label = {metric_label(m): m for m in metrics}
    for label, model, value, low, high in bars[["metric", "model", "value", "low", "high"]].itertuples(index=False):
        metric = by_label[label]
        assert value == pytest.approx(cli[model][metric], abs=1e-12), (metric, model)
        ci_low, ci_high = cis.loc[(model, metric), ["ci_low", "ci_high"]]  # the error bars: the preset's intervals
        want = (value if np.isnan(ci_low) else ci_low, value if np.isnan(ci_high) else ci_high)
        assert (low, high) == pytest.approx(want, abs=1e-12), metric
    assert len(bars) == 2 * len(metrics)  # both models in every panel
    assert f"Per metric, with bootstrap 95% CIs — Edge, {protocol} preset" in shown


def test_kpeval_f1_interval_is_about_the_f1_of_means(tmp_path):
    """KPEval's table F1 is the F1 of mean P and R: its interval resamples that statistic and holds the number."""
    from kweval.keyphrase.dataset_protocol import protocol_summary

    dataset = load_dataset(str(_collection(tmp_path)))
    scores = protocol_scores(dataset, "kpeval", 5)
    table = protocol_summary(dataset, "kpeval", 5).set_index("model")
    cis = protocol_intervals(scores, "kpeval", ["f1@5", "p@5"], n_boot=500).set_index(["model", "metric"])
    for model in table.index:
        low, high = cis.loc[(model, "f1@5"), ["ci_low", "ci_high"]]
        assert low <= table.loc[model, "f1@5"] <= high
        per_doc = scores[scores["model"] == model]
        p, r = per_doc["p@5"].mean(), per_doc["r@5"].mean()
        assert table.loc[model, "f1@5"] == pytest.approx(2 * p * r / (p + r))
    mean_f1 = protocol_intervals(scores, "pke", ["f1@5"], n_boot=500).set_index(["model", "metric"])
    assert (
        not cis.loc[:, ["ci_low", "ci_high"]]
        .xs("f1@5", level="metric")
        .equals(mean_f1.loc[:, ["ci_low", "ci_high"]].xs("f1@5", level="metric"))
    )


def test_one_model_selected_says_so_under_a_preset(monkeypatch, tmp_path):
    folder = _collection(tmp_path)
    at = run(monkeypatch, folder, {"movie": "ALL", "k": "5", "models": "first", "protocol": "pke"})
    assert not at.exception
    assert "One model selected: nothing to compare" in texts(at)
    assert pd.Series([b.label for b in at.download_button]).eq("CSV").any()


@pytest.mark.parametrize("protocol", ["pke", "kpeval"])
def test_preset_report_is_kweval_report_protocol_of_the_collection(tmp_path, protocol):
    """The dashboard's preset report (lists from the dataset's tables) is the page `kweval report --protocol` writes
    from the files (`read_per_document`, `prediction_lists`), given the same card."""
    from pathlib import Path

    from dashboard.report_view import protocol_report_html
    from kweval.data import read_per_document
    from kweval.data.predictions import prediction_lists
    from kweval.io.card import protocol_card
    from kweval.io.html_report import plotly_js, render_html
    from kweval.io.preset_headlines import report_with_presets
    from kweval.io.report_protocol import protocol_report_data
    from kweval.keyphrase.dataset_protocol import cutoffs_for

    folder = _collection(tmp_path)
    card = protocol_card(protocol, "Edge", "0", k=5, aggregation="macro", cutoffs=cutoffs_for(5))
    ours = protocol_report_html(load_dataset(str(folder)), protocol, 5, ["first", "reversed"], "Edge", card)
    problems: list = []
    documents = read_per_document(folder, problems)
    predictions = {m: prediction_lists(Path(folder / "predictions.csv"), m, problems) for m in ("first", "reversed")}
    cli = protocol_report_data(documents, predictions, protocol, 5, card, cutoffs=cutoffs_for(5))
    cli = report_with_presets(cli, protocol, load_dataset(str(folder)), 5)  # as `kweval report --protocol` adds it
    assert ours == render_html(cli, plotly_js())
    assert f"under the {protocol} preset" in ours and 'id="headline"' in ours


def test_preset_view_builds_its_report_with_the_stages_shown(monkeypatch, tmp_path):
    from kweval.io.report_data import REPORT_STAGES

    folder = _collection(tmp_path)
    at = run(monkeypatch, folder, {"movie": "ALL", "k": "5", "protocol": "pke"})
    assert [b.label for b in at.download_button] == ["CSV"]
    at.button(key="build_report").click().run()
    assert not at.exception
    (status,) = at.status
    assert status.state == "complete" and status.label.startswith("Report ready: ")
    assert [m.value for m in status.markdown] == [f"{i}/5 · {s}…" for i, s in enumerate(REPORT_STAGES, 1)]
    page = at.session_state["summary_report"][1].decode("utf-8")
    assert "kweval report: Edge under the pke preset" in page and "<script" in page
    (button,) = [b for b in at.download_button if b.label == "Download report"]
    assert "_pke" in texts(at) and "Report ready: " in texts(at)
    at.radio(key="qp_protocol").set_value("meng").run()  # another preset: another build
    assert not at.exception and [b.label for b in at.download_button] == ["CSV"]
