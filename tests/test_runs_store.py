"""The run store (kweval.runs.store): runs kept whole, their tables checked, every fault one reason and nothing lost.

Real SQLite files and real Parquet files; several writers are separate interpreters recording at once.
"""

from __future__ import annotations

import errno
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

import kweval
from kweval.runs import RunsError, RunSource, RunStore, evaluation_tables, record_run
from kweval.runs import store as store_module

REPO = Path(__file__).resolve().parents[1]
SOURCE = RunSource(data="demo", layout="tidy", per_document=False, inputs_sha256="0" * 64)


@pytest.fixture(scope="module")
def demo_tables():
    """The demo's tables per model (keybert, yake), as `kweval evaluate --models M --record` stores them."""
    dataset = kweval.load_dataset(None)
    out = {}
    for model in ("keybert", "yake"):
        evaluation = kweval.evaluate(dataset.subset(models=[model]), kweval.EvalOptions())
        out[model] = evaluation_tables(evaluation, "macro", n_boot=200)
    return out


def record(store: RunStore, tables, name: str | None = None):
    return record_run(store, tables, SOURCE, protocol="kweval", aggregate="macro", options={"k": 5}, name=name)


def files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_a_run_is_kept_whole_and_read_back(tmp_path, demo_tables, monkeypatch):
    store = RunStore(tmp_path / "runs.sqlite")
    assert store.runs() == []  # no file yet: an empty history, nothing made
    assert not store.path.exists()
    small = record(store, demo_tables["keybert"], "baseline")
    monkeypatch.setattr(store_module, "INLINE_ROWS", 10)  # a large table: a Parquet file beside the database
    large = record(store, demo_tables["yake"])
    assert [r.id for r in store.runs()] == [small.id, large.id]
    assert (store.scores_dir / f"{large.id}.parquet").is_file()
    assert not (store.scores_dir / f"{small.id}.parquet").exists()
    for info, model in ((small, "keybert"), (large, "yake")):
        expected = demo_tables[model].scores
        pd.testing.assert_frame_equal(store.scores(info), expected)
        assert info.models == [model] and info.n_rows == len(expected)
    assert large.name.startswith("yake 20")  # the default name: the models and the time
    assert store.get("baseline").id == small.id and store.get(large.id[:6]).id == large.id
    summary = store.summary([small.id])
    assert set(summary["model"]) == {"keybert"} and "f1" in set(summary["metric"])
    f1 = summary.set_index("metric").loc["f1"]
    assert f1["ci_low"] <= f1["value"] <= f1["ci_high"]  # the key metrics carry their interval
    store.delete(large)
    assert [r.id for r in store.runs()] == [small.id]
    assert not (store.scores_dir / f"{large.id}.parquet").exists()
    assert store.summary([large.id]).empty


def test_an_unknown_or_ambiguous_run_is_one_reason(tmp_path, demo_tables):
    store = RunStore(tmp_path / "runs.sqlite")
    with pytest.raises(RunsError, match="no run is recorded"):
        store.get("nope")
    first = record(store, demo_tables["keybert"], "same")
    second = record(store, demo_tables["keybert"], "same")
    assert store.get("same").id == second.id  # a name names its latest run
    with pytest.raises(RunsError, match="no run with id or name 'nope'"):
        store.get("nope")
    assert store.get(first.id).id == first.id


@pytest.mark.parametrize("damage", ["missing", "altered"])
def test_a_missing_or_altered_table_is_refused_and_the_rest_stays(tmp_path, demo_tables, monkeypatch, damage):
    monkeypatch.setattr(store_module, "INLINE_ROWS", 10)
    store = RunStore(tmp_path / "runs.sqlite")
    kept, broken = record(store, demo_tables["keybert"]), record(store, demo_tables["yake"])
    table = store.scores_dir / f"{broken.id}.parquet"
    if damage == "missing":
        table.unlink()
    else:
        data = bytearray(table.read_bytes())
        data[len(data) // 2] ^= 0xFF
        table.write_bytes(bytes(data))
    with pytest.raises(RunsError, match="cannot be read" if damage == "missing" else "was altered") as info:
        store.scores(broken)
    assert "\n" not in str(info.value)
    assert [r.id for r in store.runs()] == [kept.id, broken.id]  # listed still, the other run intact
    pd.testing.assert_frame_equal(store.scores(kept), demo_tables["keybert"].scores)


def test_damaged_and_foreign_files_are_one_reason_and_left_as_they_were(tmp_path, demo_tables):
    garbage = tmp_path / "garbage.sqlite"
    garbage.write_bytes(b"this is no database" * 100)
    foreign = tmp_path / "foreign.sqlite"
    con = sqlite3.connect(foreign)
    con.execute("CREATE TABLE judgments (id INTEGER)")
    con.commit()
    con.close()
    for path, reason in ((garbage, "not a kweval runs database, or damaged"), (foreign, "not a kweval runs database")):
        before = path.read_bytes()
        for action in (lambda s: s.runs(), lambda s: record(s, demo_tables["keybert"])):
            with pytest.raises(RunsError, match=reason):
                action(RunStore(path))
        assert path.read_bytes() == before
    with pytest.raises(RunsError, match="is a folder"):
        RunStore(tmp_path)


def test_a_read_only_store_refuses_writes_and_loses_nothing(tmp_path, demo_tables, monkeypatch):
    store = RunStore(tmp_path / "runs.sqlite")
    kept = record(store, demo_tables["keybert"])
    real = store_module.sqlite.connect

    def read_only(path: Path, read_only: bool = False, busy: float = 30.0) -> sqlite3.Connection:
        return sqlite3.connect(f"{Path(path).resolve().as_uri()}?mode=ro", uri=True, isolation_level=None)

    monkeypatch.setattr(store_module.sqlite, "connect", read_only)
    with pytest.raises(RunsError, match="read-only; nothing was written"):
        record(store, demo_tables["yake"])
    with pytest.raises(RunsError, match="read-only"):
        store.delete(kept)
    monkeypatch.setattr(store_module.sqlite, "connect", real)
    assert [r.id for r in store.runs()] == [kept.id]
    assert not store.scores_dir.exists() or not any(store.scores_dir.iterdir())


def test_a_full_disk_leaves_the_store_as_it_was(tmp_path, demo_tables, monkeypatch):
    """The Parquet file cannot be written (ENOSPC), or SQLite's own file is full: one reason each, no file left."""
    monkeypatch.setattr(store_module, "INLINE_ROWS", 10)
    store = RunStore(tmp_path / "runs.sqlite")
    kept = record(store, demo_tables["keybert"])
    before = files(tmp_path)

    def no_space(path: Path, data: bytes) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))

    monkeypatch.setattr(store_module, "replace_file", no_space)
    with pytest.raises(RunsError, match="No space left on device"):
        record(store, demo_tables["yake"])
    monkeypatch.undo()
    assert files(tmp_path) == before
    real = store_module.sqlite.connect

    def tiny(path: Path, read_only: bool = False, busy: float = 30.0) -> sqlite3.Connection:
        con = real(path, read_only, busy)
        pages = con.execute("PRAGMA page_count").fetchone()[0]
        con.execute(f"PRAGMA max_page_count = {pages}")  # the database may not grow: SQLITE_FULL
        return con

    monkeypatch.setattr(store_module.sqlite, "connect", tiny)
    monkeypatch.setattr(store_module, "INLINE_ROWS", 10**9)  # the table in the database: it must grow
    with pytest.raises(RunsError, match="is full; nothing was written"):
        record(store, demo_tables["yake"])
    monkeypatch.undo()
    assert [r.id for r in store.runs()] == [kept.id]
    assert sorted(p.name for p in store.scores_dir.iterdir()) == [f"{kept.id}.parquet"]


RUNS_EACH = 6


def _record_many(path: str, who: str) -> None:
    dataset = kweval.load_dataset(None)
    tables = evaluation_tables(
        kweval.evaluate(dataset.subset(models=["yake"]), kweval.EvalOptions()), "macro", n_boot=50
    )
    store_module.INLINE_ROWS = 10 if who in ("p1", "p3") else 2000  # two writers with Parquet files, two without
    store = RunStore(path)
    for i in range(RUNS_EACH):
        record(store, tables, f"{who}-{i}")


def test_four_processes_recording_at_once_lose_nothing(tmp_path, monkeypatch):
    path = str(tmp_path / "runs.sqlite")
    code = "import sys; from tests.test_runs_store import _record_many; _record_many(sys.argv[1], sys.argv[2])"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    workers = [
        subprocess.Popen([sys.executable, "-c", code, path, f"p{w}"], cwd=REPO, env=env, stderr=subprocess.PIPE)
        for w in range(4)
    ]
    for w in workers:
        assert w.wait(300) == 0, w.stderr.read().decode() if w.stderr else ""
    store = RunStore(path)
    runs = store.runs()
    assert sorted(r.name for r in runs) == sorted(f"p{w}-{i}" for w in range(4) for i in range(RUNS_EACH))
    assert len({r.id for r in runs}) == 4 * RUNS_EACH
    for info in runs:  # every table whole and as recorded
        assert len(store.scores(info)) == info.n_rows
    assert len(list(store.scores_dir.iterdir())) == 2 * RUNS_EACH
    assert len(store.summary()) == sum(len(store.summary([r.id])) for r in runs)
