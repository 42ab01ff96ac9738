"""kweval.distributed: `kweval evaluate --scheduler` gives byte-identical outputs to one process."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from kweval import distributed, report
from kweval.aggregate import aggregate
from kweval.data import load_dataset
from kweval.evaluate import EvalOptions, evaluate
from kweval.synth import synthesize

ROOT = Path(__file__).resolve().parents[1]


def kweval_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "HOME": str(cwd)}
    return subprocess.run([sys.executable, "-m", "kweval", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def test_parse_scheduler():
    assert distributed.parse_scheduler("local") == ("local", None)
    assert distributed.parse_scheduler("local:3") == ("local", 3)
    assert distributed.parse_scheduler("tcp://10.0.0.5:8786") == ("tcp://10.0.0.5:8786", None)
    for bad in ("", "local:0", "local:two", "local:-1"):
        with pytest.raises(ValueError):
            distributed.parse_scheduler(bad)


def test_movie_partitions_keep_order_and_balance_rows():
    ds = synthesize(movies=7, reviews_per_movie=20, models=2, seed=1)
    parts = distributed.movie_partitions(ds, 3)
    assert len(parts) == 3 and [m for p in parts for m in p] == ds.movie_ids
    assert distributed.movie_partitions(ds, 50) == [[m] for m in ds.movie_ids]  # never an empty partition


def test_missing_extra_is_one_line(monkeypatch):
    from kweval.extras import MissingExtra

    monkeypatch.setitem(sys.modules, "distributed", None)  # as if dask[distributed] were not installed
    with pytest.raises(MissingExtra, match=r"pip install 'kweval\[dask\]'"):
        with distributed.connect("local:1"):
            pass


def test_cli_usage_errors_without_starting_a_cluster(tmp_path: Path):
    bad = kweval_cli("evaluate", "--scheduler", "local:0", cwd=tmp_path)
    assert bad.returncode == 2 and bad.stderr.strip().splitlines() == ["kweval: error: --scheduler local:0: N in local:N must be a positive whole number"]
    sem = kweval_cli("evaluate", "--scheduler", "local:2", "--semantic", cwd=tmp_path)
    assert sem.returncode == 2 and "Traceback" not in sem.stderr and "--semantic without it" in sem.stderr


@pytest.mark.slow
def test_cli_demo_on_local_cluster_is_byte_identical(tmp_path: Path):
    pytest.importorskip("distributed")
    outputs = {}
    for name, extra in (("one", ()), ("dask", ("--scheduler", "local:2"))):
        res = kweval_cli("evaluate", "--k", "3", "--aggregate", "micro", "--sentiment", "--out", f"{name}.csv",
                         "--per-review", f"{name}_reviews.csv", *extra, cwd=tmp_path)
        assert res.returncode == 0, res.stderr
        outputs[name] = ((tmp_path / f"{name}.csv").read_bytes(), (tmp_path / f"{name}_reviews.csv").read_bytes(), res.stderr)
    assert outputs["dask"] == outputs["one"]


@pytest.fixture(scope="module")
def client():
    pytest.importorskip("distributed")
    with distributed.connect("local:2") as c:
        yield c


@pytest.mark.slow
def test_synthetic_50k_reviews_on_two_workers_equal_one_process(client):
    ds = synthesize(movies=10, reviews_per_movie=5000, models=3, seed=4)
    options = EvalOptions(k=5, match="word")
    here = evaluate(ds, options)
    there = distributed.evaluate_on_cluster(client, ds, options)
    assert len(there.scores) == len(here.scores) > 140_000  # 10 movies × 5,000 reviews × 3 models, a few skipped
    for table in ("scores", "keywords", "ground_truth", "coverage", "skipped"):
        pd.testing.assert_frame_equal(getattr(there, table), getattr(here, table), check_exact=True)
    assert there.problems == here.problems
    for how in ("macro", "micro"):
        assert report.to_csv(aggregate(there, how)) == report.to_csv(aggregate(here, how))


@pytest.mark.slow
def test_demo_with_problems_and_more_partitions_than_workers(client):
    ds = load_dataset()
    options = EvalOptions(k=10, match="exact", sentiment=True)
    here = evaluate(ds, options)
    there = distributed.evaluate_on_cluster(client, ds, options, partitions=len(ds.movie_ids))
    pd.testing.assert_frame_equal(there.scores, here.scores, check_exact=True)
    pd.testing.assert_frame_equal(there.keywords, here.keywords, check_exact=True)
    assert there.problems == here.problems
