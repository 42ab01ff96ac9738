"""The presets on a loaded per-document Dataset give `kweval evaluate --protocol P`'s numbers (issue 23 item 2:
the dashboard's protocol selector calls `kweval.keyphrase.dataset_protocol`)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from kweval.data import load_dataset
from kweval.keyphrase.dataset_protocol import protocol_scores, protocol_summary
from tests.helpers import SEMEVAL

DATA = Path(__file__).parent / "data"


def _cli_rows(data: Path, predictions: dict[str, Path], protocol: str, k: int, capsys) -> list[dict]:
    from kweval.cli import main

    argv = ["evaluate", str(data), "--protocol", protocol, "--k", str(k), "--format", "json", "--quiet"]
    for name, path in predictions.items():
        argv += ["--predictions", f"{name}={path}"]
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)["rows"]


def _assert_rows_equal(ours, theirs) -> None:
    assert len(ours) == len(theirs)
    for mine, cli in zip(ours.to_dict("records"), theirs):
        assert {k for k in cli if k != "n_documents"} <= set(mine), set(cli) - set(mine)
        for column, value in cli.items():
            if column in ("movie", "model"):
                continue
            assert mine[column] == pytest.approx(value, abs=1e-12), column


@pytest.mark.parametrize("protocol", ["pke", "kpeval", "meng"])
@pytest.mark.parametrize("k", [5, 7])
def test_edge_collection_equals_the_cli(tmp_path, capsys, protocol, k):
    folder = tmp_path / "keyphrase_edge"
    shutil.copytree(DATA / "keyphrase_edge", folder)
    jsonl = DATA / "keyphrase_edge_predictions.jsonl"
    rows = ["movie,review_id,model,rank,keyword,score"]
    for obj in map(json.loads, jsonl.read_text().splitlines()):
        rows += [
            f'keyphrase_edge,{obj["id"]},edge,{r},"{kw}",1' for r, kw in enumerate(obj["keyphrases"]) if '"' not in kw
        ]
    (folder / "predictions.csv").write_text("\n".join(rows) + "\n")
    dataset = load_dataset(str(folder))
    cli = _cli_rows(DATA / "keyphrase_edge", {"edge": folder / "predictions.csv"}, protocol, k, capsys)
    ours = protocol_summary(dataset, protocol, k)
    _assert_rows_equal(ours, cli)
    per_doc = protocol_scores(dataset, protocol, k)
    assert set(per_doc["review_id"]) == set(dataset.reviews["review_id"])
    assert per_doc[f"f1@{k}"].mean() == pytest.approx(ours[f"f1@{k}"].iloc[0]) or protocol == "kpeval"


@pytest.mark.keyphrase
@pytest.mark.parametrize("protocol", ["pke", "kpeval", "meng"])
def test_semeval2017_firstphrases_equals_the_cli(tmp_path, capsys, protocol):
    from kweval.cli import main

    jsonl = tmp_path / "firstphrases.jsonl"
    assert main(["extract", str(SEMEVAL), "--extractor", "firstphrases", "--out", str(jsonl)]) == 0
    capsys.readouterr()
    cli = _cli_rows(SEMEVAL, {"firstphrases": jsonl}, protocol, 5, capsys)
    dataset = load_dataset(str(SEMEVAL), predictions={"firstphrases": str(jsonl)})
    _assert_rows_equal(protocol_summary(dataset, protocol, 5), cli)
