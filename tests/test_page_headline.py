"""Summary's headline card, the data's words on a per-document collection, the Download report, settings in names
(issue 23, AppTest)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pandas as pd
import pytest

from dashboard import report_view
from dashboard.headline_card import ACROSS_MARKS, MARKS
from dashboard.protocol import page_card
from dashboard.report_view import report_html
from kweval.data import load_dataset
from kweval.data.vocabulary import vocabulary
from kweval.evaluation.pipeline import EvalOptions, evaluate
from kweval.io import report
from kweval.io.report_data import REPORT_STAGES
from kweval.io.settings import setting_slugs, setting_texts
from kweval.stats.headline import headline, key_metrics
from kweval.stats.story import story_lines
from tests.apptest import run, texts

EDGE = Path(__file__).parent / "data" / "keyphrase_edge"


def _collection(tmp_path: Path) -> Path:
    """A small per-document collection (tests/data/keyphrase_edge) with two models' predictions beside docsutf8/."""
    folder = tmp_path / "Edge"
    shutil.copytree(EDGE, folder)
    lists = [json.loads(line) for line in (EDGE.parent / "keyphrase_edge_predictions.jsonl").read_text().splitlines()]
    rows = []
    for item in lists:
        for model, phrases in (("first", item["keyphrases"]), ("reversed", item["keyphrases"][::-1])):
            rows += [(item["id"], model, i, p, 1.0 / (i + 1)) for i, p in enumerate(phrases)]
    frame = pd.DataFrame(rows, columns=["review_id", "model", "rank", "keyword", "score"])
    frame.insert(0, "movie", "Edge")
    frame.to_csv(folder / "predictions.csv", index=False)
    return folder


def _marked(block: str) -> list[tuple[bool, str]]:
    """(significant, text) of each line "- MARK text" of a Markdown list the card shows (escapes removed); the
    lines saying whether a verdict holds under every preset (their own marks, tested with the presets) left out."""
    out = []
    for line in block.splitlines():
        mark, text = line[2:].split(" ", 1)
        if mark in ACROSS_MARKS.values():
            continue
        assert mark in MARKS.values(), line
        out.append((mark == MARKS[True], text.replace("\\", "")))
    return out


def _card(at) -> tuple[list[tuple[bool, str]], list[tuple[bool, str]]]:
    """The headline card's plain lines and, in its expander, the statistical sentences: (significant, text) each."""
    blocks = [m.value for m in at.markdown if m.value.startswith(tuple(f"- {mark}" for mark in MARKS.values()))]
    assert len(blocks) >= 2, "no headline card"
    return _marked(blocks[0]), _marked(blocks[1])


def _headline_lines(at) -> list[str]:
    """The statistical sentences under the card (its expander), each with its marker's significance first."""
    return [("✅ " if sig else "▫️ ") + text for sig, text in _card(at)[1]]


def test_summary_opens_with_the_headline_card_equal_to_the_core(monkeypatch, demo_dataset):
    at = run(monkeypatch, None, {"movie": "ALL", "agg": "macro"})
    ev = evaluate(demo_dataset, EvalOptions())
    scores = ev.scores[ev.scores["model"].isin(demo_dataset.model_names)]
    compared = [m for m in ev.metric_names if m != "gt_coverage"]
    core = headline(scores, key_metrics(ev.metric_names, 5), "macro", vocabulary(demo_dataset), compared=compared)
    plain, statistics = _card(at)
    assert plain == [(line["significant"], line["text"]) for line in story_lines(core.to_dict("records"))]
    assert statistics == list(zip(core["significant"], core["sentence"]))
    # the plain lines name no confidence level and no correction; yake, clearly worse, is named as such
    assert not re.search(r"\d%\s*CI|Holm", "\n".join(t for _, t in plain))
    assert any(t.startswith("yake is clearly behind keybert on every key metric") for _, t in plain), plain
    lines = [t for _, t in statistics]
    # the card comes before the full table
    shown = texts(at)
    assert shown.index("At a glance") < shown.index("Every metric")
    assert not re.search(r"\b0\.000\b(?!\d)", "\n".join(lines))  # never "by 0.000"


def test_per_document_collection_speaks_its_own_words(monkeypatch, tmp_path):
    folder = _collection(tmp_path)
    at = run(monkeypatch, folder, {"movie": "ALL"})
    shown = texts(at)
    assert "At a glance" in shown and re.search(r"On \d+ documents, first leads", shown)
    heads = [str(h.value) for h in at.subheader] + [str(t.value) for t in at.title]
    assert not any(re.search(r"\b(movies?|reviews?)\b", h, re.I) for h in heads), heads
    assert any("collections × models" in h for h in heads)
    summary = next(df for df in at.dataframe if "n_skipped" in df.value.columns)
    assert "movie" in summary.value.columns  # the stable schema underneath ...
    labels = json.loads(summary.proto.columns)
    assert labels["movie"]["label"] == "collection" and labels["n_reviews"]["label"] == "n_documents"  # ... shown so
    at.switch_page("pages/explorer.py").run()
    assert not at.exception
    page = texts(at)
    assert "Document explorer" in page and "GT rank" not in page and "Top 5 GT keywords" not in page
    assert "evaluated documents" in page and "in the GT" in page


def test_download_report_is_kweval_report_of_the_view(monkeypatch, tmp_path, demo_dataset):
    at = run(monkeypatch, None, {"movie": "ALL", "models": ",".join(demo_dataset.model_names[:2]), "sem": "0"})
    assert "Download report" not in [b.label for b in at.download_button]  # built when asked, not on every run
    assert not at.status
    ctx = at.session_state["ctx"]
    meta = ctx.meta()
    name = report.download_name("report", meta, "html")
    assert name.endswith("_nosem_nosas_ALL_kweval.html") and "k5_approx_macro" in name
    at.button(key="build_report").click().run()
    assert not at.exception
    # the build showed each stage in a status box, which ends saying the file's size
    (status,) = at.status
    built = at.session_state["summary_report"][1]
    size = report_view.file_size(len(built))
    assert status.state == "complete" and status.label == f"Report ready: {size}"
    stages = [m.value for m in status.markdown]
    assert stages == [f"{i}/5 · {stage}…" for i, stage in enumerate(REPORT_STAGES, 1)]
    (button,) = [b for b in at.download_button if b.label == "Download report"]
    assert size in button.help and f"Report ready: {name} ({size})" in texts(at)
    # the page offered is the view's `kweval report` page (the models on screen only)
    card = page_card(ctx)
    title = f"kweval report: {report.dataset_name(meta)} ({'; '.join(setting_texts(meta, ctx.words))})"
    page = report_html(ctx.dataset, ctx.evaluation, list(ctx.selection.models), "ALL", "macro", card, title)
    assert built == page.encode("utf-8")
    assert 'id="headline"' in page and 'id="verdicts"' in page and "<script" in page
    for model in demo_dataset.model_names[2:]:  # the view's models only
        assert f'<td class="t">{model}</td>' not in page
    at.run()  # the same view: offered again without a build
    assert not at.status and [b.label for b in at.download_button][-1] == "Download report"
    at.sidebar.radio(key="sel_agg").set_value("micro").run()  # another view: another build
    assert not at.exception and "Download report" not in [b.label for b in at.download_button]
    assert [b.label for b in at.button if b.key == "build_report"] == ["Build report"]


@pytest.mark.parametrize(
    ("meta", "said", "slugs"),
    [
        (
            {"semantic": True, "threshold": 0.8, "backend": "onnx-int8", "sentiment": True, "scope": "ALL"},
            ["semantic matching τ = 0.80 (backend onnx-int8)", "sentiment on", "all movies"],
            ["sem0.80-onnx-int8", "sas", "ALL"],
        ),
        (
            {"semantic": False, "sentiment": False, "scope": "Star Wars", "scope_id": "SW 6", "protocol": "pke"},
            ["semantic matching off", "sentiment off", "movie Star Wars", "protocol pke"],
            ["nosem", "nosas", "SW-6", "pke"],
        ),
    ],
)
def test_every_setting_is_named_in_captions_and_file_names(meta, said, slugs):
    assert setting_texts(meta) == said and setting_slugs(meta) == slugs
    full = {"data": "x/demo", "k": 5, "match": "approx", "aggregate": "micro", **meta}
    assert all(s in report.latex_caption(full) for s in said)
    assert (
        report.download_name("summary", full, "tex")
        == "_".join(["kweval_summary_demo_k5_approx_micro", *slugs]) + ".tex"
    )


def test_latex_download_caption_names_the_backend(monkeypatch):
    at = run(monkeypatch, None, {"movie": "ALL", "sem": "1", "backend": "onnx-int8", "tau": "0.80"})
    if at.session_state["ctx"].options.semantic is False:  # no embedding model here: the sidebar said so
        pytest.skip("semantic metrics unavailable")
    assert "semantic matching τ = 0.80 (backend onnx-int8) · sentiment off · all movies" in texts(at).replace("\\", "")
    tex = at.session_state["ctx"].meta()
    assert report.download_name("summary", tex, "tex").endswith("_sem0.80-onnx-int8_nosas_ALL_kweval.tex")


def test_collection_loads_for_the_core_too(tmp_path):
    ds = load_dataset(str(_collection(tmp_path)))
    assert ds.per_document and sorted(ds.model_names) == ["first", "reversed"]


def test_compare_shows_a_verdict_matrix_with_holm_intervals_and_honours_micro(monkeypatch, demo_dataset):
    from kweval.stats import compare_aggregated, verdict

    models = demo_dataset.model_names
    at = run(monkeypatch, None, {"movie": "ALL", "agg": "micro"}, page="pages/compare.py")
    ev = evaluate(demo_dataset, EvalOptions())
    metrics = [m for m in ev.metric_names if m != "gt_coverage"]
    core = pd.concat(
        [compare_aggregated(ev.scores, models[0], b, metrics, "micro").assign(model=b) for b in models[1:]],
        ignore_index=True,
    )
    expected = verdict.verdict_matrix(verdict.verdict_table(core, models[0]), "cell")
    matrix = next(df for df in at.dataframe if list(df.value.columns) == list(expected.columns))
    pd.testing.assert_frame_equal(matrix.value, expected, check_names=False)
    styles = matrix.proto.arrow_data.styler.styles
    assert "background-color" in styles
    shown = next(df for df in at.dataframe if "p_ttest_holm" in df.value.columns).value
    f1 = shown[(shown["metric"] == "f1") & (shown["model"] == models[1])].iloc[0]
    row = core[(core["metric"] == "f1") & (core["model"] == models[1])].iloc[0]
    assert f1["basis"] == "ratio of sums (micro)" and f1["diff"] == pytest.approx(row["diff"])  # micro, not means
    assert f1["ci_low_holm"] == pytest.approx(row["ci_low_holm"]) and "ci_level_holm" in shown.columns
    labels = json.loads(next(df for df in at.dataframe if "p_ttest_holm" in df.value.columns).proto.columns)
    assert "unadjusted" in labels["ci_low"]["label"] and "unadjusted" in labels["ci_high"]["label"]
    words = "\n".join(e.proto.body for e in at.markdown if "beats" in e.proto.body or "No significant" in e.proto.body)
    assert words.count("- ") == len(core)  # the sentences, on demand in the expander


@pytest.mark.parametrize("protocol", ["pke", "kpeval", "meng"])
def test_protocol_selector_gives_the_cli_numbers(monkeypatch, tmp_path, capsys, protocol):
    from kweval.cli import main
    from kweval.keyphrase.dataset_protocol import protocol_summary

    folder = _collection(tmp_path)
    at = run(monkeypatch, folder, {"movie": "ALL", "k": "5"})
    at.radio(key="qp_protocol").set_value(protocol).run()
    assert not at.exception and at.query_params.get("protocol") in ([protocol], protocol)
    shown = next(df for df in at.dataframe if "n_documents" in df.value.columns).value
    argv = ["evaluate", str(folder), "--protocol", protocol, "--k", "5", "--format", "json"]
    for model in ("first", "reversed"):
        argv += ["--predictions", f"{model}={folder / 'predictions.csv'}"]
    assert main(argv) == 0
    cli = json.loads(capsys.readouterr().out)["rows"]
    assert len(cli) == len(shown) == 2
    for row, mine in zip(cli, shown.to_dict("records")):
        for column, value in row.items():
            if column not in ("movie", "model"):
                assert mine[column] == pytest.approx(value, abs=1e-12), column
    pd.testing.assert_frame_equal(shown, protocol_summary(load_dataset(str(folder)), protocol, 5), check_dtype=False)
    assert [b.label for b in at.download_button] == ["CSV"]
    at.switch_page("pages/compare.py").run()
    assert not at.exception
    assert any("preset" in str(s.value) for s in at.subheader)


def test_data_page_shows_direction_describe_card_and_unusable_predictions(monkeypatch, tmp_path):
    from kweval.keyphrase.describe import describe_dataset

    folder = _collection(tmp_path)
    at = run(monkeypatch, folder, {"movie": "ALL"}, page="pages/data.py")
    page = texts(at).replace("\\", "")
    models = next(df for df in at.dataframe if "score_direction" in df.value.columns).value
    assert set(models["score_direction"]) == {"higher"} and "lower for YAKE" in page
    card = describe_dataset(load_dataset(str(folder)), "kweval", "stem")[0]  # the data default
    assert "Dataset card (kweval describe)" in page and f"| documents | {card.documents:,} |" in page
    assert "movies" not in page.split("Source:")[1].split("\n")[0]  # the data's words: collections, documents
    # a predictions table beside docsutf8/ that cannot be used: one line at the top says so
    (folder / "predictions.csv").write_text("movie,review_id\nEdge,d1\n")
    at = run(monkeypatch, folder, {"movie": "ALL"}, page="pages/data.py")
    shown = texts(at).replace("\\", "")
    assert "predictions.csv" in shown and "Traceback" not in shown, shown
