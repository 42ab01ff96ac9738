"""`kweval failures`: the per-keyword categories as CSV or Parquet, --summary, and bad input as one line."""

from __future__ import annotations

import csv
from pathlib import Path

import pandas as pd
import pytest

from kweval.cli import main
from kweval.data import load_dataset
from kweval.data.formulas import FORMULA_STARTS
from kweval.evaluation.pipeline import EvalOptions, evaluate
from kweval.explain.failures import COLUMNS, failure_summary, failure_table
from tests.helpers import write_tables


def _run(capsys, *args: str) -> tuple[int, str, str]:
    status = main(["failures", *args])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_demo_csv_equals_the_core_table(capsys, tmp_path: Path):
    out = tmp_path / "f.csv"
    status, stdout, err = _run(capsys, "--out", str(out), "--k", "3", "--match", "word")
    assert status == 0 and stdout == ""
    got = pd.read_csv(out, keep_default_na=False, dtype={"review_id": str})
    ds = load_dataset(None)
    expected = failure_table(ds, evaluate(ds, EvalOptions(k=3, match="word")))[COLUMNS]
    assert list(got.columns) == COLUMNS and len(got) == len(expected)
    assert got["category"].tolist() == expected["category"].astype(str).tolist()
    assert got["position"].tolist() == expected["position"].tolist()
    assert f"wrote {len(expected):,} rows" in err


def test_parquet_by_extension_and_summary(capsys, tmp_path: Path):
    status, _, _ = _run(capsys, "--out", str(tmp_path / "f.parquet"), "--models", "keybert")
    assert status == 0
    table = pd.read_parquet(tmp_path / "f.parquet")
    assert list(table.columns) == COLUMNS and set(table["model"]) == {"keybert"}
    assert isinstance(table["category"].dtype, pd.CategoricalDtype)  # dictionary-encoded: small files
    status, _, _ = _run(capsys, "--out", str(tmp_path / "s.csv"), "--models", "keybert", "--summary")
    assert status == 0
    summary = pd.read_csv(tmp_path / "s.csv")
    expected = failure_summary(table.astype({"movie": "category", "model": "category"}))
    assert summary["count"].tolist() == expected["count"].tolist()
    assert list(summary.columns) == ["movie", "model", "side", "category", "count", "share"]


def test_csv_neutralises_formulas(capsys, tmp_path: Path):
    predictions = pd.DataFrame(
        {
            "movie": ["=m"] * 3,
            "review_id": ["+r"] * 3,
            "model": ["@x"] * 3,
            "rank": [0, 1, 2],
            "keyword": ["=cmd()", "-fraud", "fraud"],
            "score": 0.5,
        }
    )
    gt = pd.DataFrame({"movie": ["=m", "=m"], "rank": [0, 1], "keyword": ["fraud", "=HYPERLINK()"]})
    data = write_tables(tmp_path / "hostile", "parquet", predictions=predictions, ground_truth=gt)
    out = tmp_path / "f.csv"
    assert _run(capsys, str(data), "--out", str(out))[0] == 0
    with open(out, newline="", encoding="utf-8") as handle:
        cells = [cell for row in csv.reader(handle) for cell in row]
    live = [c for c in cells if c.startswith(FORMULA_STARTS) and c.lstrip("-").isdigit() is False]
    assert live == []
    assert "'=HYPERLINK()" in cells and "'=cmd()" in cells and "'@x" in cells


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--models", "nope"], "unknown model(s): nope"),
        (["--threshold", "2"], "threshold must be within [0, 1]"),
        (["/no/such/folder"], "no such file or folder"),
    ],
)
def test_bad_input_is_one_line(capsys, tmp_path: Path, args: list[str], needle: str):
    status, stdout, err = _run(capsys, *args, "--out", str(tmp_path / "f.csv"))
    assert status == 2 and stdout == ""
    (line,) = err.strip().splitlines()
    assert line.startswith("kweval: ") and needle in line
    assert not (tmp_path / "f.csv").exists()


def test_unwritable_output_is_one_line_before_the_work(capsys, tmp_path: Path):
    status, _, err = _run(capsys, "--out", str(tmp_path))
    assert status == 2 and err.strip().splitlines() == [f"kweval: {tmp_path}: is a folder, not a file"]
