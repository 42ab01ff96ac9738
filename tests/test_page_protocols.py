"""The Protocols page (issue 27 item 4): one model under every preset, a gap's waterfall, the documents that move
most (explorer links carrying the protocol), the reported-number search; its numbers are `kweval gap`'s."""

from __future__ import annotations

import html
import json
import math
from urllib.parse import parse_qs, urlparse

import pytest

from kweval.cli.dispatch import main
from kweval.data import load_dataset
from kweval.lattice.explain import collection_of_dataset, preset_values
from tests.apptest import run, texts
from tests.test_page_headline import _collection


def _gap_json(folder, capsys, *extra: str) -> dict:
    argv = ["gap", str(folder), "--predictions", f"first={folder / 'predictions.csv'}", "--model", "first", *extra]
    assert main([*argv, "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


FRAMES = {  # the page's tables by a column only each has
    "preset_values": "protocol",
    "gap_factors": "contribution",
    "gap_documents": "moved most by",
    "reported_matches": "also any of",
}


def _frame(at, name: str):
    found = [d.value for d in at.dataframe if FRAMES[name] in d.value.columns]
    assert found, f"no dataframe {name}"
    return found[0]


def _plain(at) -> str:
    return html.unescape(texts(at).replace("\\", ""))


def test_the_page_shows_the_numbers_of_kweval_gap(monkeypatch, tmp_path, capsys):
    folder = _collection(tmp_path)
    params = {"movie": "ALL", "models": "first,reversed", "from": "meng", "to": "kpeval", "metric": "f1@M"}
    at = run(monkeypatch, folder, params, page="pages/protocols.py")
    cli = _gap_json(folder, capsys, "--from", "meng", "--to", "kpeval", "--metric", "f1@M")
    assert cli["sentence"] in _plain(at)
    factors = _frame(at, "gap_factors")
    assert factors["contribution"].tolist() == [f["contribution"] for f in cli["factors"]]
    assert math.fsum(factors["contribution"]) == pytest.approx(cli["gap"], abs=1e-12)
    chart = next(c for c in at.get("plotly_chart") if "gap_waterfall" in str(c.proto.id))
    bars = json.loads(chart.proto.spec)["data"][0]
    assert bars["type"] == "waterfall" and bars["y"][0] == cli["from"]["value"] and bars["y"][-1] == cli["to"]["value"]
    documents = _frame(at, "gap_documents")
    assert documents["document"].tolist() == [d["id"] for d in cli["documents"]]
    link = parse_qs(urlparse(documents["open"].iloc[0]).query)
    assert urlparse(documents["open"].iloc[0]).path.endswith("/explorer")
    assert (
        link["review"] == [cli["documents"][0]["id"]] and link["protocol"] == ["kpeval"] and link["movie"] == ["Edge"]
    )
    # the presets' table: each preset's value, `kweval evaluate --protocol P`'s (the lattice's, tested equal to it)
    values = preset_values(collection_of_dataset(load_dataset(str(folder))), "first")
    presets = _frame(at, "preset_values").set_index("protocol")
    assert presets.loc["pke", "F1@5"] == pytest.approx(values["pke"]["f1@5"], abs=1e-12)
    assert presets.loc["kweval (stem)", "F1@M"] == pytest.approx(values["kweval"]["f1@M"], abs=1e-12)
    assert math.isnan(presets.loc["pke", "F1@5 present"])


def test_the_reported_search_and_bad_values(monkeypatch, tmp_path, capsys):
    folder = _collection(tmp_path)
    cli = _gap_json(folder, capsys, "--from", "pke", "--to", "pke", "--metric", "f1@M")
    value = cli["from"]["value"]
    at = run(monkeypatch, folder, {"movie": "ALL", "reported": f"f1@M={value:.4f}"}, page="pages/protocols.py")
    matches = _frame(at, "reported_matches")
    assert any("pke" in p for p in matches["presets"]) and "combinations of the presets' conventions give" in _plain(at)
    bad = run(monkeypatch, folder, {"movie": "ALL", "reported": "f1@M=lots"}, page="pages/protocols.py")
    assert any("not a number" in w.value for w in bad.warning)
    present = run(monkeypatch, folder, {"movie": "ALL", "metric": "f1@5_present"}, page="pages/protocols.py")
    assert any("not reported under pke" in i.value for i in present.info)  # From is pke by default


def test_movie_level_data_says_the_page_needs_per_document_ground_truth(monkeypatch):
    at = run(monkeypatch, None, {"movie": "ALL"}, page="pages/protocols.py")
    assert any("needs per-document ground truth" in i.value.replace("\\", "") for i in at.info)
