"""The preset chosen on Summary (``protocol=P`` in every link) is honoured by the pages between: the explorer's
per-document metrics and match marks, the Failures page's categories, the Data page's card compute under it (equal
to `kweval evaluate --protocol P --per-review` and its decisions: `kweval.keyphrase.fates`), and the nDCG page says in
one line what it shows instead.  The pages open as links straight into them (`tests.apptest.run`'s `direct`), the preset
in the link."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pandas as pd
import pytest

from dashboard import failures_view
from dashboard.escape import esc, fmt_num
from kweval.cli.cmd_describe import markdown_card
from kweval.data import load_dataset
from kweval.explain.failures import failure_summary
from kweval.keyphrase.dataset_protocol import protocol_scores
from kweval.keyphrase.describe import describe_dataset
from kweval.keyphrase.fates import preset_failure_table
from tests.apptest import run, texts
from tests.helpers import SEMEVAL
from tests.test_page_headline import _collection

PRESETS = ["pke", "kpeval", "meng"]
CARD_METRICS = ["p@{k}", "r@{k}", "f1@{k}", "f1@M", "f1@O", "f1@{k}_present", "r@50_absent"]


def _explorer(monkeypatch, folder: Path, protocol: str, review: str, k: int = 5):
    params = {"movie": "ALL", "k": str(k), "protocol": protocol, "review": review}
    at = run(monkeypatch, folder, params, "pages/explorer.py", direct=True)
    assert at.session_state["ctx"].preset == protocol
    return at


def _shown(at) -> str:
    """What the page says, as a reader reads it (Markdown escapes and HTML entities undone)."""
    return html.unescape(texts(at).replace("\\", ""))


def _card(at) -> str:
    cards = [h.proto.body for h in at.html if "kw-models" in h.proto.body]
    assert len(cards) == 1
    return cards[0]


def _check_card(body: str, dataset, protocol: str, review: str, k: int) -> None:
    """The card of `review` shows each model's per-document metrics of the preset (the CLI's values) and marks
    exactly the predictions the preset counts as matches, each with the gold phrase it found."""
    scores = protocol_scores(dataset, protocol, k).set_index(["review_id", "model"])
    table = preset_failure_table(dataset, protocol, k)
    for model in dataset.model_names:
        row = scores.loc[(review, model)]
        names = [m.format(k=k) for m in CARD_METRICS if m.format(k=k) in scores.columns]
        names = [m for m in names if scores[m].notna().any()]
        line = " · ".join(f"{esc(m)} {fmt_num(row[m])}" for m in names)
        assert line in body, (model, line)
    mine = table[(table["review_id"] == review) & (table["side"] == "prediction")]
    hits = mine[mine["category"].isin(["hit", "hit_beyond_k"])]
    for keyword, gold in zip(hits["keyword"], hits["other"]):
        assert f"<mark>{esc(keyword)}</mark> → <b>{esc(gold)}</b>" in body
    marked = re.findall(r"<li><mark>([^<]*)</mark> → ", body)
    assert sorted(marked) == sorted(esc(k) for k in hits["keyword"])


@pytest.mark.parametrize("protocol", PRESETS)
def test_explorer_under_a_preset_shows_its_numbers_and_decisions(monkeypatch, tmp_path, protocol):
    folder = _collection(tmp_path)
    dataset = load_dataset(str(folder))
    at = _explorer(monkeypatch, folder, protocol, "d2", k=3)
    body = _card(at)
    _check_card(body, dataset, protocol, "d2", 3)
    shown = _shown(at)
    assert f"match: the {protocol} preset's" in shown and f"--protocol {protocol} --per-review" in shown
    assert "ndcg@" not in body  # the kweval evaluation's metrics are not the card's
    # the list: each document's preset F1@k beside the sort that orders by it (its option says so); every document
    # of the collection on one page (pp=10)
    query = {"movie": "ALL", "k": "3", "protocol": protocol, "pp": "10"}
    at = run(monkeypatch, folder, query, "pages/explorer.py", direct=True)
    assert "lowest F1@3" in at.selectbox(key="qp_sort").options
    scores = protocol_scores(dataset, protocol, 3)
    assert len([h for h in at.html if "kw-models" in h.proto.body]) == scores["review_id"].nunique()


def test_explorer_under_kweval_is_the_evaluations(monkeypatch, tmp_path):
    folder = _collection(tmp_path)
    at = run(
        monkeypatch, folder, {"movie": "ALL", "review": "d2", "protocol": "kweval"}, "pages/explorer.py", direct=True
    )
    assert at.session_state["ctx"].preset is None
    assert "ndcg@5" in _card(at)


@pytest.mark.parametrize("protocol", PRESETS)
def test_failures_under_a_preset_count_its_decisions(monkeypatch, tmp_path, protocol):
    folder = _collection(tmp_path)
    dataset = load_dataset(str(folder))
    at = run(monkeypatch, folder, {"movie": "ALL", "k": "5", "protocol": protocol}, "pages/failures.py", direct=True)
    models = list(at.session_state["ctx"].selection.models)
    counts = failure_summary(preset_failure_table(dataset, protocol, 5), by=["model"])
    shown = texts(at)
    assert failures_view.headline(counts, models, "documents") in shown
    assert f"Under the **{protocol}** preset" in shown
    labels = {str(c) for c in failures_view.bar_frame(counts, "gt", models).query("count > 0")["category"]}
    assert ("missed" in labels) == (protocol == "pke")  # pke has no present rule: its misses are just missed
    # a segment link opens the explorer filtered to the documents of that preset category, the preset kept
    at2 = run(
        monkeypatch,
        folder,
        {"movie": "ALL", "k": "5", "protocol": protocol, "category": "hit", "model": models[0]},
        "pages/explorer.py",
    )
    table = preset_failure_table(dataset, protocol, 5)
    hit_docs = set(table[(table["category"] == "hit") & (table["model"] == models[0])]["review_id"])
    info = " ".join(i.value for i in at2.info)
    assert f"Filtered: {len(hit_docs):,} documents" in info


@pytest.mark.parametrize("protocol", PRESETS)
def test_ndcg_and_data_pages_under_a_preset(monkeypatch, tmp_path, protocol):
    folder = _collection(tmp_path)
    at = run(monkeypatch, folder, {"movie": "ALL", "protocol": protocol}, "pages/ndcg.py", direct=True)
    shown = _shown(at)
    assert f"nDCG is not among the {protocol} preset's metrics" in shown and "match stem" in shown
    at = run(monkeypatch, folder, {"movie": "ALL", "protocol": protocol}, "pages/data.py", direct=True)
    shown = texts(at)
    cards = describe_dataset(load_dataset(str(folder)), protocol)
    assert all(markdown_card(c.as_dict()) in shown for c in cards)
    assert f"| preset | {protocol} |" in shown
    assert f"--protocol {protocol}" in shown.replace("\\", "")


@pytest.mark.keyphrase
@pytest.mark.slow  # each preset on 493 documents (~7 s each)
@pytest.mark.parametrize("protocol", PRESETS)
def test_semeval_explorer_under_a_preset_is_the_clis_per_document_numbers(
    monkeypatch, tmp_path, capsys, semeval_folder, protocol
):
    """SemEval2017 with `kweval extract` YAKE and FirstPhrases beside docsutf8/: the issue's document under each
    preset shows `kweval evaluate --protocol P --per-review`'s values."""
    from kweval.cli import main

    folder = semeval_folder
    dataset = load_dataset(str(folder))
    at = _explorer(monkeypatch, folder, protocol, "S0003491613001516")
    _check_card(_card(at), dataset, protocol, "S0003491613001516", 5)
    out = tmp_path / "per_review.csv"
    argv = ["evaluate", str(folder), "--protocol", protocol, "--per-review", str(out), "--out", "-"]
    assert main(argv) == 0
    capsys.readouterr()
    cli = pd.read_csv(out, dtype={"review_id": str}).set_index(["review_id", "model"])
    body = _card(at)
    for model in ("yake", "firstphrases"):
        assert f"f1@5 {fmt_num(cli.loc[('S0003491613001516', model), 'f1@5'])}" in body


@pytest.fixture(scope="module")
def semeval_folder(tmp_path_factory, semeval_extracted) -> Path:
    """SemEval2017's documents and keys (linked) with `kweval extract` YAKE and FirstPhrases predictions beside them
    in one tidy table (made once for the module)."""
    import json

    tmp_path = tmp_path_factory.mktemp("semeval")
    folder = tmp_path / "SemEval2017"
    folder.mkdir()
    for sub in ("docsutf8", "keys"):
        (folder / sub).symlink_to(SEMEVAL / sub, target_is_directory=True)
    rows = []
    for extractor in ("yake", "firstphrases"):
        out = semeval_extracted(extractor)  # `kweval extract`'s output
        for line in out.read_text().splitlines():
            item = json.loads(line)
            direction = "lower" if extractor == "yake" else "higher"
            rows += [
                (folder.name, item["id"], extractor, i, kw, score, direction)
                for i, (kw, score) in enumerate(zip(item["keyphrases"], item["scores"]))
            ]
    columns = ["movie", "review_id", "model", "rank", "keyword", "score", "score_direction"]
    pd.DataFrame(rows, columns=columns).to_csv(folder / "predictions.csv", index=False)
    return folder


@pytest.mark.keyphrase
def test_semeval_summary_defaults_to_stems_and_names_the_presets_its_verdict_holds_under(monkeypatch, semeval_folder):
    """The issue's view: YAKE and FirstPhrases on SemEval2017 open with stem matching, and the F1@5 headline says
    under which presets its verdict holds (the core's sentence); the Failures page under pke counts pke's
    decisions."""
    from kweval.io.preset_headlines import preset_headlines, with_presets

    at = run(monkeypatch, semeval_folder, {"movie": "ALL", "k": "5"})
    ctx = at.session_state["ctx"]
    assert ctx.selection.match == "stem" and ctx.evaluation.options.match == "stem"
    dataset = load_dataset(str(semeval_folder))
    models = list(ctx.selection.models)
    top = with_presets(preset_headlines(dataset, 5, models)["kweval"], "kweval", dataset, 5, models)
    sentence = top.loc[top["metric"] == "f1@5", "across_presets"].iloc[0]
    assert sentence.startswith("Across presets: significant under kweval; under pke, kpeval and meng")
    assert sentence in _shown(at)
    at = run(
        monkeypatch, semeval_folder, {"movie": "ALL", "k": "5", "protocol": "pke"}, "pages/failures.py", direct=True
    )
    counts = failure_summary(preset_failure_table(dataset, "pke", 5), by=["model"])
    assert failures_view.headline(counts, models, "documents") in texts(at)


def test_hostile_phrases_under_a_preset_are_escaped(monkeypatch, tmp_path):
    """A prediction and a gold phrase that are HTML: shown as text in the card, the GT marks and the Failures page."""
    from tests.apptest import XSS

    folder = _collection(tmp_path)
    with open(folder / "keys" / "d1.key", "a", encoding="utf-8") as handle:
        handle.write(f"{XSS}\n")
    frame = pd.read_csv(folder / "predictions.csv", dtype={"review_id": str})
    extra = pd.DataFrame([["Edge", "d1", m, 99, XSS, 0.01] for m in ("first", "reversed")], columns=frame.columns)
    pd.concat([frame, extra], ignore_index=True).to_csv(folder / "predictions.csv", index=False)
    at = _explorer(monkeypatch, folder, "pke", "d1")
    body = _card(at)
    assert "<img" not in body and esc(XSS) in body
    assert "<img" not in texts(at)
    at = run(monkeypatch, folder, {"movie": "ALL", "protocol": "pke"}, "pages/failures.py", direct=True)
    assert "<img" not in texts(at)
