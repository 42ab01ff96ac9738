"""`kweval evaluate --record`, `kweval report --record` and `kweval runs ...` as a user runs them (through
`kweval.cli.main`, in this process: tests.helpers.run_in_process).

Two runs of the demo with different models and options are recorded, listed, compared, gated, exported, re-run
and deleted; every fault is one `kweval:` line with no traceback and leaves the store as it was.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pandas as pd
import pytest

from kweval.data import demo_path
from kweval.runs import RunStore
from tests.helpers import run_in_process


def kweval(*args: str, cache: Path) -> subprocess.CompletedProcess:
    """`kweval ARGS` (in this process: tests.helpers.run_in_process) with the kweval cache (and so the default runs
    store) in `cache` and no other KWEVAL_ setting."""
    env: dict[str, str | None] = {k: None for k in os.environ if k.startswith("KWEVAL_")}
    env |= {"KWEVAL_CACHE_DIR": str(cache), "HF_HUB_OFFLINE": "1"}
    return run_in_process(*args, env_extra=env)


def one_line(result: subprocess.CompletedProcess) -> str:
    """The one `kweval:` line of a refused command (exit 2, no traceback)."""
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("kweval: ") and "Traceback" not in result.stderr, result.stderr
    return lines[0]


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    """The default store (beside the kweval cache) with two demo runs: keybert at k=5, yake at k=3 under micro."""
    cache = tmp_path_factory.mktemp("cache")
    first = kweval("evaluate", "--models", "keybert", "--record", "--run-name", "kb", "--out", os.devnull, cache=cache)
    assert first.returncode == 0 and "recorded run" in first.stderr, first.stderr
    second = kweval(
        "evaluate", "--models", "yake", "--k", "3", "--aggregate", "micro", "--record", "--out", os.devnull, cache=cache
    )
    assert second.returncode == 0, second.stderr
    return cache


def test_runs_are_listed_with_their_identity(recorded):
    listing = kweval("runs", "list", "--format", "json", cache=recorded)
    runs = json.loads(listing.stdout)
    assert [r["name"] for r in runs][0] == "kb" and runs[1]["name"].startswith("yake 20")
    for run in runs:
        assert {"id", "name", "time", "dataset_sha256", "models", "options"} <= set(run)
    assert runs[0]["dataset_sha256"] == runs[1]["dataset_sha256"]  # one dataset, two models
    assert runs[0]["options"]["k"] == 5 and runs[1]["options"]["k"] == 3 and runs[1]["aggregate"] == "micro"
    assert (recorded / "runs" / "runs.sqlite").is_file()  # the default store: beside the cache
    text = kweval("runs", "list", cache=recorded).stdout
    assert "kb" in text and "match approx" in text
    shown = kweval("runs", "show", "kb", "--format", "markdown", cache=recorded)
    assert shown.returncode == 0 and "| field |" in shown.stdout and "f1" in shown.stdout


def test_compare_says_the_change_and_what_differs(recorded):
    result = kweval("runs", "compare", "kb", runs_latest(recorded), "--format", "json", cache=recorded)
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    rows = {r["metric"]: r for r in out["metrics"]}
    assert "f1" in rows and "ndcg@5" not in rows  # k differs: only the metrics both runs hold
    for row in rows.values():
        assert {"metric", "a", "b", "difference", "ci_low", "ci_high", "p_holm"} <= set(row)
        assert row["difference"] == pytest.approx(row["b"] - row["a"])
    assert out["options_differ"]["k"] == {"a": 5, "b": 3}
    assert out["options_differ"]["aggregate"] == {"a": "macro", "b": "micro"}
    assert out["most_worse"] and all(u["difference"] < 0 for u in out["most_worse"])
    text = kweval("runs", "compare", "kb", runs_latest(recorded), cache=recorded).stdout
    assert text.splitlines()[0].startswith("yake") and "settings that differ (A→B): " in text and "k 5→3" in text


def runs_latest(cache: Path) -> str:
    return RunStore(cache / "runs" / "runs.sqlite").runs()[-1].id


def test_the_gate_exits_1_on_a_real_drop_and_0_on_a_rerun(recorded, tmp_path):
    store = str(recorded / "runs" / "runs.sqlite")
    failed = kweval(
        "runs", "gate", "--baseline", "kb", "--candidate", runs_latest(recorded), "--runs", store, cache=recorded
    )
    assert failed.returncode == 1 and failed.stdout.startswith("gate failed:"), failed.stdout + failed.stderr
    again = kweval("runs", "rerun", "kb", "--record", "--format", "json", cache=recorded)
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["identical"] is True
    passed = kweval(
        "runs", "gate", "--baseline", "kb", "--candidate", "rerun of kb", "--metric", "f1,ndcg@5", cache=recorded
    )
    assert passed.returncode == 0 and passed.stdout.startswith("gate passed:"), passed.stdout + passed.stderr


def test_export_writes_the_tidy_table(recorded, tmp_path):
    for name in ("kb.csv", "kb.parquet"):
        result = kweval("runs", "export", "kb", "--out", str(tmp_path / name), cache=recorded)
        assert result.returncode == 0, result.stderr
    csv = pd.read_csv(tmp_path / "kb.csv")
    parquet = pd.read_parquet(tmp_path / "kb.parquet")
    assert list(parquet.columns[:5]) == ["run_id", "run_name", "movie", "review_id", "model"]
    assert len(csv) == len(parquet) and set(parquet["model"]) == {"keybert"} and "ndcg@5" in parquet.columns
    assert csv["f1"].tolist() == pytest.approx(parquet["f1"].tolist())


def test_a_rerun_says_what_changed_before_evaluating(tmp_path):
    data = tmp_path / "data"
    shutil.copytree(demo_path(), data)
    cache = tmp_path / "cache"
    recorded = kweval(
        "evaluate", str(data), "--models", "keybert", "--record", "--run-name", "r", "--out", os.devnull, cache=cache
    )
    assert recorded.returncode == 0, recorded.stderr
    predictions = pd.read_parquet(data / "predictions.parquet")
    predictions = predictions[~((predictions["model"] == "keybert") & (predictions["rank"] == 0))]
    predictions.to_parquet(data / "predictions.parquet", index=False)
    result = kweval("runs", "rerun", "r", cache=cache)
    assert result.returncode == 1
    assert "the data differs from the recorded run's" in result.stderr
    assert "the scores differ" in result.stdout


def test_faults_are_one_line_and_keep_the_store(recorded, tmp_path):
    store = recorded / "runs" / "runs.sqlite"
    before = len(RunStore(store).runs())
    assert "no run with id or name 'nope'" in one_line(kweval("runs", "show", "nope", cache=recorded))
    garbage = tmp_path / "garbage.sqlite"
    garbage.write_bytes(b"no database here" * 64)
    for args in (("runs", "list", "--runs", str(garbage)), ("evaluate", "--record", str(garbage))):
        assert "not a kweval runs database, or damaged" in one_line(kweval(*args, cache=recorded))
    assert garbage.read_bytes() == b"no database here" * 64
    assert "has no sem_f1" in one_line(
        kweval("runs", "compare", "kb", runs_latest(recorded), "--metric", "sem_f1", cache=recorded)
    )
    legacy = kweval("evaluate", "--legacy", "--record", cache=recorded)
    assert "legacy mode" in one_line(legacy)
    assert len(RunStore(store).runs()) == before


def test_report_records_its_run(tmp_path):
    cache = tmp_path / "cache"
    result = kweval(
        "report",
        "--models",
        "keybert,yake",
        "--out",
        str(tmp_path / "r.html"),
        "--record",
        "--run-name",
        "report",
        cache=cache,
    )
    assert result.returncode == 0, result.stderr
    (run,) = RunStore(cache / "runs" / "runs.sqlite").runs()
    assert run.name == "report" and run.models == ["keybert", "yake"] and (tmp_path / "r.html").is_file()


def test_a_preset_run_is_recorded_and_not_compared_with_a_kweval_run(tmp_path):
    from tests.test_keyphrase import write_collection, write_jsonl

    docs = {
        f"d{i}": (
            f"neural keyphrase extraction for topic {i} and graph ranking",
            ["keyphrase extraction", f"topic {i}"],
        )
        for i in range(8)
    }
    collection = write_collection(tmp_path / "coll", docs)
    lines = [{"id": d, "keyphrases": ["keyphrase extraction", "graph ranking"]} for d in docs]
    predictions = write_jsonl(tmp_path / "a.jsonl", lines)
    cache = tmp_path / "cache"
    common = (str(collection), "--predictions", f"a={predictions}", "--out", os.devnull)
    pke = kweval("evaluate", *common, "--protocol", "pke", "--record", "--run-name", "pke", cache=cache)
    assert pke.returncode == 0, pke.stderr
    plain = kweval("evaluate", *common, "--record", "--run-name", "kweval", cache=cache)
    assert plain.returncode == 0, plain.stderr
    runs = {r.name: r for r in RunStore(cache / "runs" / "runs.sqlite").runs()}
    assert runs["pke"].protocol == "pke" and runs["pke"].per_document and "f1@5" in runs["pke"].metrics
    assert runs["pke"].dataset_sha256 == runs["kweval"].dataset_sha256  # the same documents and gold
    assert "under the pke protocol" in one_line(kweval("runs", "compare", "pke", "kweval", cache=cache))
    again = kweval("runs", "rerun", "pke", cache=cache)
    assert again.returncode == 0 and "identical scores" in again.stdout, again.stdout + again.stderr
    html = str(tmp_path / "r.html")
    second = write_jsonl(tmp_path / "b.jsonl", [{"id": d, "keyphrases": [f"topic {d[1:]}"]} for d in docs])
    report = kweval(
        "report",
        str(collection),
        "--protocol",
        "pke",
        "--predictions",
        f"a={predictions}",
        "--predictions",
        f"b={second}",
        "--out",
        html,
        "--record",
        "--run-name",
        "report",
        cache=cache,
    )
    assert report.returncode == 0, report.stderr
    reported = RunStore(cache / "runs" / "runs.sqlite").get("report")
    assert reported.protocol == "pke" and reported.models == ["a", "b"]
    assert RunStore(cache / "runs" / "runs.sqlite").scores(reported)["f1@5"].tolist()[:8] == pytest.approx(
        RunStore(cache / "runs" / "runs.sqlite").scores(runs["pke"])["f1@5"].tolist()
    )
    gate = kweval("runs", "gate", "--baseline", "pke", "--candidate", "report", "--model", "a", cache=cache)
    assert gate.returncode == 0 and "no gated metric got worse" in gate.stdout, gate.stdout + gate.stderr
