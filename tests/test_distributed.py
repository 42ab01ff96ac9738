"""kweval.scale.distributed: `kweval evaluate --scheduler` gives byte-identical outputs to one process."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from kweval.data import load_dataset
from kweval.data.synth import synthesize
from kweval.evaluation.aggregate import aggregate
from kweval.evaluation.pipeline import EvalOptions, evaluate
from kweval.io import report
from kweval.scale import distributed

ROOT = Path(__file__).resolve().parents[1]


def kweval_cli(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "HOME": str(cwd), **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "kweval", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300
    )


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
    assert bad.returncode == 2 and bad.stderr.strip().splitlines() == [
        "kweval: error: --scheduler local:0: N in local:N must be a positive whole number"
    ]
    legacy = kweval_cli("evaluate", "--scheduler", "local:2", "--legacy", cwd=tmp_path)
    assert legacy.returncode == 2 and "Traceback" not in legacy.stderr
    assert "run --legacy, --grounding and --diversity without it" in legacy.stderr


@pytest.mark.slow
def test_cli_demo_on_local_cluster_is_byte_identical(tmp_path: Path):
    pytest.importorskip("distributed")
    outputs = {}
    for name, extra in (("one", ()), ("dask", ("--scheduler", "local:2"))):
        res = kweval_cli(
            "evaluate",
            "--k",
            "3",
            "--aggregate",
            "micro",
            "--sentiment",
            "--out",
            f"{name}.csv",
            "--per-review",
            f"{name}_reviews.csv",
            *extra,
            cwd=tmp_path,
        )
        assert res.returncode == 0, res.stderr
        outputs[name] = (
            (tmp_path / f"{name}.csv").read_bytes(),
            (tmp_path / f"{name}_reviews.csv").read_bytes(),
            res.stderr,
        )
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


@pytest.fixture(scope="module")
def dnlp_folder(tmp_path_factory) -> Path:
    """A synthetic DNLP-layout folder (a file per movie): 6 movies × 500 reviews × 3 models."""
    from kweval.data.synth import write_synthetic

    folder = tmp_path_factory.mktemp("data") / "dnlp"
    write_synthetic(synthesize(movies=6, reviews_per_movie=500, models=3, seed=7), folder, layout="dnlp")
    return folder


@pytest.mark.slow
def test_workers_read_their_own_movie_files_and_equal_one_process(client, dnlp_folder: Path):
    from kweval.data import movie_file_sizes

    options = EvalOptions(k=5, match="approx", sentiment=False)
    here = evaluate(load_dataset(dnlp_folder), options)
    source, there = distributed.evaluate_files_on_cluster(client, dnlp_folder, options, partitions=4)
    assert source == load_dataset(dnlp_folder).source and len(there.scores) == len(here.scores) > 8000
    for table in ("scores", "keywords", "ground_truth", "coverage", "skipped"):
        pd.testing.assert_frame_equal(getattr(there, table), getattr(here, table), check_exact=True)
    assert there.problems == here.problems

    movies, models = (
        list(movie_file_sizes(dnlp_folder))[1:4],
        ["reranker", "sentiment"],
    )  # the users' --movies / --models
    want = evaluate(load_dataset(dnlp_folder, movies=movies).subset(models=models), options)
    _, got = distributed.evaluate_files_on_cluster(
        client, dnlp_folder, options, movies=movies, models=models, keywords=False
    )
    pd.testing.assert_frame_equal(got.scores, want.scores, check_exact=True)
    assert got.keywords.empty and list(got.keywords.columns) == list(want.keywords.columns)  # asked not to send it back


@pytest.mark.slow
def test_files_path_declines_what_it_cannot_do_alike(client, dnlp_folder: Path):
    options = EvalOptions()
    from kweval.data import demo_path

    assert distributed.evaluate_files_on_cluster(client, demo_path(), options) is None  # tidy: no file per movie
    assert distributed.evaluate_files_on_cluster(client, dnlp_folder, options, models=["no_such_model"]) is None
    sizes = distributed.file_groups.movie_file_sizes(dnlp_folder)
    folder = str(dnlp_folder.resolve())
    assert distributed.workers_see_files(client, folder, None, sizes)
    assert not distributed.workers_see_files(
        client, folder, None, {**sizes, "movie000": sizes["movie000"] + 1}
    )  # a different copy
    assert not distributed.workers_see_files(
        client, folder + "-elsewhere", None, sizes
    )  # not there at all on the workers


@pytest.mark.slow
def test_cli_dnlp_layout_on_local_cluster_is_byte_identical(dnlp_folder: Path):
    pytest.importorskip("distributed")
    outputs = {}
    for name, extra in (("one", ("--jobs", "1")), ("dask", ("--scheduler", "local:2"))):
        res = kweval_cli(
            "evaluate",
            "dnlp",
            "--aggregate",
            "micro",
            "--models",
            "base,sentiment",
            "--format",
            "json",
            "--out",
            f"{name}.json",
            "--per-review",
            f"{name}_reviews.csv",
            *extra,
            cwd=dnlp_folder.parent,
        )
        assert res.returncode == 0, (
            res.stderr
        )  # the data named relative to the working folder: workers get its absolute path
        outputs[name] = [(dnlp_folder.parent / f"{name}{suffix}").read_bytes() for suffix in (".json", "_reviews.csv")]
        outputs[name].append(res.stderr)
    assert outputs["dask"] == outputs["one"]


@pytest.mark.slow
def test_keywords_embedded_on_workers_go_into_the_store_here(client, tmp_path: Path, monkeypatch):
    pytest.importorskip("sentence_transformers")
    import numpy as np

    from kweval.embeddings import semantic
    from kweval.embeddings.store import EmbeddingStore
    from kweval.evaluation.pipeline import semantic_texts

    monkeypatch.setenv("KWEVAL_CACHE_DIR", str(tmp_path))
    # every 6th of the demo's 1,791 keywords (short and long alike, still shared out to both workers): the property
    # is per text, and embedding all of them three times with torch (two workers, then here) took ~45 s of CPU
    texts = semantic_texts(evaluate(load_dataset(), EvalOptions()))[::6]
    assert len(texts) > 250
    store = EmbeddingStore(semantic.DEFAULT_MODEL, backend="torch", precision="fp32")
    assert distributed.embed_on_cluster(client, texts + texts[:5], semantic.DEFAULT_MODEL, "torch", store) == len(texts)
    vectors, found = store.get_many(texts)
    assert found.all()
    here = semantic.embed_texts(texts, store=False, device="cpu")
    assert np.abs(vectors - here).max() < 1e-5  # the same model and variant, only the thread count differs
    assert (
        distributed.embed_on_cluster(client, texts, semantic.DEFAULT_MODEL, "torch", store) == 0
    )  # all in the store now


@pytest.mark.slow
def test_cli_semantic_on_local_cluster_is_byte_identical(tmp_path: Path, seed_onnx_export):
    pytest.importorskip("distributed")
    pytest.importorskip("sentence_transformers")
    outputs = {}
    seed_onnx_export(tmp_path / "cache")  # the run's ONNX export: each worker would build its own (~15 s of CPU)
    # the cluster first, with no vector stored: its workers embed every keyword; one process then finds them all stored
    for name, extra in (("dask", ("--scheduler", "local:2")), ("one", ())):
        res = kweval_cli(
            "evaluate",
            "--semantic",
            "--sentiment",
            "--k",
            "3",
            "--out",
            f"{name}.csv",
            "--per-review",
            f"{name}_reviews.csv",
            *extra,
            cwd=tmp_path,
            env={"KWEVAL_CACHE_DIR": str(tmp_path / "cache"), "HF_HUB_OFFLINE": "1"},
        )
        assert res.returncode == 0, res.stderr
        outputs[name] = (
            (tmp_path / f"{name}.csv").read_bytes(),
            (tmp_path / f"{name}_reviews.csv").read_bytes(),
            res.stderr,
        )
    assert b"sem_f1" in outputs["one"][0] and b"sas_text" in outputs["one"][0]
    assert (
        outputs["dask"][:2] == outputs["one"][:2] and "Traceback" not in outputs["dask"][2]
    )  # the workers' model loading may print


def test_local_workers_are_forked_only_where_that_is_safe(monkeypatch):
    """A forked worker inherits kweval and pandas (a spawned one imports them again, ~2 s on 2 cores);
    never after torch or onnxruntime started their thread pools, never where forking is unsafe."""
    import sys

    from kweval.scale import distributed

    monkeypatch.setattr(distributed, "can_fork", lambda: True)
    monkeypatch.delitem(sys.modules, "torch", raising=False)
    monkeypatch.delitem(sys.modules, "onnxruntime", raising=False)
    assert distributed.local_start_method() == "fork"
    monkeypatch.setitem(sys.modules, "onnxruntime", object())
    assert distributed.local_start_method() == "spawn"
    monkeypatch.delitem(sys.modules, "onnxruntime")
    monkeypatch.setattr(distributed, "can_fork", lambda: False)
    assert distributed.local_start_method() == "spawn"
