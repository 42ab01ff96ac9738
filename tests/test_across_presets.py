"""A headline on per-document data says whether its verdict holds under every keyphrase preset
(`kweval.stats.across_presets`), computed once (`kweval.io.preset_headlines`) and shown by the Summary's card and
`kweval report`, with and without `--protocol`."""

from __future__ import annotations

import re

import pandas as pd
import pytest

from kweval.data import load_dataset
from kweval.data.vocabulary import DOCUMENT_WORDS
from kweval.io.preset_headlines import PRESETS, preset_headlines, with_presets
from kweval.io.report_protocol import protocol_headline
from kweval.keyphrase.dataset_protocol import protocol_scores
from kweval.stats.across_presets import across_presets
from tests.apptest import run
from tests.test_page_headline import _collection


def _row(best: str, runner: str, margin: float, significant: bool, metric: str = "f1@5") -> dict:
    return {
        "metric": metric,
        "label": metric.upper(),
        "best": best,
        "runner_up": runner,
        "margin": margin,
        "significant": significant,
    }


def _headlines(best: str, runner: str, **verdicts: tuple[float, bool]) -> dict[str, pd.DataFrame]:
    """{preset: a one-row F1@5 headline of `best` over `runner`} from {preset: (margin, significant)}."""
    return {preset: pd.DataFrame([_row(best, runner, *v)]) for preset, v in verdicts.items()}


def test_a_win_under_one_convention_only_says_so():
    heads = _headlines(
        "yake", "fp", kweval=(0.049, True), pke=(0.01052, False), kpeval=(0.011, False), meng=(0.0101, False)
    )
    top = pd.DataFrame([{**_row("yake", "fp", 0.049, True), "sentence": "…"}])
    out = across_presets(top, "kweval", heads, ["f1@5"])
    assert out["across_presets"].tolist() == [
        "Across presets: significant under kweval; under pke, kpeval and meng by 0.010–0.011, not significant."
    ]
    assert out["holds_under_every_preset"].tolist() == [False]
    assert out["sentence"].tolist() == ["…"]  # additive: the headline's own columns untouched


def test_a_verdict_that_holds_everywhere_and_one_that_flips():
    heads = _headlines("a", "b", kweval=(0.05, True), pke=(0.04, True), kpeval=(0.03, True), meng=(0.045, True))
    out = across_presets(pd.DataFrame([_row("a", "b", 0.04, True)]), "pke", heads, ["f1@5"])
    assert (
        out["across_presets"][0]
        == "Holds under every preset: significant under pke; under kweval, kpeval and meng by 0.030–0.050, significant."
    )
    assert out["holds_under_every_preset"][0]
    heads["meng"] = pd.DataFrame([_row("b", "a", 0.002, False)])  # the other model leads under meng
    heads["kpeval"] = pd.DataFrame([_row("a", "c", 0.01, False)])  # kpeval's headline compares another pair
    out = across_presets(pd.DataFrame([_row("a", "b", 0.04, True)]), "pke", heads, ["f1@5"])
    sentence = out["across_presets"][0]
    assert sentence.startswith("Across presets: significant under pke; under kweval by 0.050, significant")
    assert "under meng b leads by 0.0020, not significant" in sentence and "kpeval has no such comparison" in sentence
    assert not out["holds_under_every_preset"][0]
    other = across_presets(pd.DataFrame([_row("a", "b", 0.04, True, "ndcg@5")]), "pke", heads, ["f1@5"])
    assert other["across_presets"].tolist() == [""] and other["holds_under_every_preset"].tolist() == [False]


def test_with_presets_reads_each_presets_own_headline(tmp_path):
    dataset = load_dataset(str(_collection(tmp_path)))
    models = dataset.model_names
    views = preset_headlines(dataset, 5, models, n_boot=200, n_perm=200)
    assert list(views) == list(PRESETS)
    for preset in PRESETS[1:]:  # each preset's view: its headline of its per-document scores (the CLI's values)
        own = protocol_headline(protocol_scores(dataset, preset, 5, models), preset, 5, DOCUMENT_WORDS, 200, 200)
        pd.testing.assert_frame_equal(views[preset], own)
    for view in PRESETS:
        top = with_presets(views[view], view, dataset, 5, models, n_boot=200, n_perm=200)
        row = top[top["metric"] == "f1@5"].iloc[0]
        sentence = row["across_presets"]
        assert re.match(r"(Holds under every preset|Across presets): (not )?significant under " + view, sentence)
        said = _parse(sentence)
        assert set(said) == set(PRESETS)
        for preset, (low, high, significant) in said.items():  # each preset: its own margin and verdict
            own = views[preset].set_index("metric").loc["f1@5"]
            assert significant == bool(own["significant"]), (preset, sentence)
            if low is not None:
                places = len(str(low).split(".")[1]) if "." in str(low) else 0
                assert low - 10**-places <= abs(float(own["margin"])) <= high + 10**-places, (preset, sentence)
        others = top[top["metric"] != "f1@5"]
        assert (others["across_presets"] == "").all()


def _parse(sentence: str) -> dict[str, tuple[float | None, float | None, bool]]:
    """{preset: (low, high, significant)} of an `across_presets` sentence (the view's own: no range)."""
    body = sentence.split(": ", 1)[1].rstrip(".")
    out: dict[str, tuple[float | None, float | None, bool]] = {}
    for part in body.split("; "):
        own = re.fullmatch(r"(not )?significant under (\w+)", part)
        if own:
            out[own.group(2)] = (None, None, own.group(1) is None)
            continue
        found = re.fullmatch(r"under (.+?) (?:\w+ leads )?by ([0-9.]+)(?:–([0-9.]+))?, (not )?significant", part)
        assert found, part
        names = re.split(r", | and ", found.group(1))
        low = float(found.group(2))
        high = float(found.group(3) or found.group(2))
        for name in names:
            out[name] = (low, high, found.group(4) is None)
    return out


def _report(tmp_path, *extra: str) -> str:
    from kweval.cli import main

    folder = _collection(tmp_path)
    out = tmp_path / "report.html"
    argv = ["report", str(folder), "--out", str(out), "--resamples", "200", *extra]
    if extra:
        argv += [a for m in ("first", "reversed") for a in ("--predictions", f"{m}={folder / 'predictions.csv'}")]
    assert main(argv) == 0
    return out.read_text()


@pytest.mark.parametrize("protocol", [None, "pke"])
def test_the_report_says_whether_its_verdict_holds_under_every_preset(tmp_path, capsys, protocol):
    html = _report(tmp_path, *(["--protocol", protocol] if protocol else []))
    capsys.readouterr()
    view = protocol or "kweval"
    found = re.findall(r'<span class="note across-presets">([^<]*)</span>', html)
    assert len(found) == 1, found
    assert re.match(r"(Holds under every preset|Across presets): (not )?significant under " + view, found[0])


def test_the_summary_card_shows_the_cores_sentence(monkeypatch, tmp_path):
    folder = _collection(tmp_path)
    at = run(monkeypatch, folder, {"movie": "ALL", "k": "5"})
    dataset = load_dataset(str(folder))
    ctx = at.session_state["ctx"]
    models = list(ctx.selection.models)
    top = with_presets(preset_headlines(dataset, 5, models)["kweval"], "kweval", dataset, 5, models)
    expected = top.loc[top["metric"] == "f1@5", "across_presets"].iloc[0]
    shown = [
        m.value.replace("\\", "") for m in at.markdown if "under every preset" in m.value or "Across presets" in m.value
    ]
    assert len(shown) == 1 and expected in shown[0], (shown, expected)
    for protocol in ("pke", "meng"):
        at.radio(key="qp_protocol").set_value(protocol).run()
        assert not at.exception
        shown = [
            m.value.replace("\\", "")
            for m in at.markdown
            if "under every preset" in m.value or "Across presets" in m.value
        ]
        assert len(shown) == 1 and f"significant under {protocol};" in shown[0]
