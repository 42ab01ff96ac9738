"""The judgments store (docs/metrics.md §11): concurrent writers lose nothing; locked, read-only, damaged and
foreign files are one clear reason and nothing lost; `kweval evaluate --judgments` goes on without them."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import pandas as pd
import pytest

from kweval.judgments import JudgmentsError, JudgmentStore, default_path, load_judgments, read_store
from kweval.judgments import store as store_module
from tests.helpers import run_in_process

REPO = Path(__file__).resolve().parents[1]
HASH = "a" * 64
WRITES = 120


def _grade_many(path: str, who: str, n: int) -> None:
    store = JudgmentStore(path, HASH)  # each writer its own store and connections (as two browser sessions)
    for i in range(n):
        store.add("m", f"r{i % 7}", f"keyword {who} {i}", i % 4, who)


def test_concurrent_processes_lose_nothing(tmp_path):
    path = str(tmp_path / "j.sqlite")
    JudgmentStore(path, HASH)
    # separate interpreters (as two servers' sessions), started as plain processes: multiprocessing's spawn
    # would re-run whatever `__main__` an earlier test in this process left behind (AppTest runs app.py)
    code = "import sys; from tests.test_judgments_store import _grade_many; _grade_many(sys.argv[1], sys.argv[2], {})"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    workers = [
        subprocess.Popen([sys.executable, "-c", code.format(WRITES), path, f"p{w}"], cwd=REPO, env=env)
        for w in range(4)
    ]
    for w in workers:
        assert w.wait(120) == 0
    rows = read_store(path, HASH)
    assert len(rows) == 4 * WRITES and rows["id"].is_unique
    for w in range(4):  # every writer's judgments, each once, in its own order
        mine = rows[rows["annotator"] == f"p{w}"]
        assert mine["keyword"].tolist() == [f"keyword p{w} {i}" for i in range(WRITES)]


def test_concurrent_threads_adding_and_undoing_lose_nothing(tmp_path):
    path = tmp_path / "j.sqlite"
    errors: list[BaseException] = []

    def session(who: str) -> None:
        try:
            store = JudgmentStore(path, HASH)
            for i in range(60):
                store.add("m", None, f"{who} {i}", 3, who)
                if i % 3 == 2:
                    assert store.undo(who)["keyword"] == f"{who} {i}"  # undo takes this session's latest only
        except BaseException as exc:  # surfaced below: a thread's failure would pass silently
            errors.append(exc)

    threads = [threading.Thread(target=session, args=(f"t{t}",)) for t in range(5)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert errors == []
    rows = read_store(path, HASH)
    assert len(rows) == 5 * 40
    for t in range(5):
        kept = rows.loc[rows["annotator"] == f"t{t}", "keyword"].tolist()
        assert kept == [f"t{t} {i}" for i in range(60) if i % 3 != 2]


def test_add_undo_list(tmp_path):
    store = JudgmentStore(tmp_path / "j.sqlite", HASH)
    first = store.add("m", "r1", "Family", 3, "ann", side="prediction")
    store.add("m", None, "scam", 0, "ann", side="gt")
    store.add("m", "r2", "fraud", 2, "bob")
    assert store.list("m", "r1")["keyword"].tolist() == ["Family", "scam"]  # its own and the whole movie's
    assert store.list()["norm"].tolist() == ["family", "scam", "fraud"]
    assert store.undo("ann")["keyword"] == "scam"
    assert store.undo(judgment_id=first)["keyword"] == "Family"
    assert store.undo("ann") is None
    assert store.list()["annotator"].tolist() == ["bob"]
    for bad in ({"grade": 4}, {"grade": -1}, {"grade": True}, {"keyword": "!!"}, {"annotator": " "}, {"side": "x"}):
        args = {"movie": "m", "review_id": None, "keyword": "k", "grade": 1, "annotator": "a", **bad}
        with pytest.raises(JudgmentsError):
            store.add(**args)
    assert len(store.list()) == 1


def test_a_store_of_another_dataset_is_refused(tmp_path):
    path = tmp_path / "j.sqlite"
    JudgmentStore(path, HASH).add("m", None, "k", 1, "a")
    with pytest.raises(JudgmentsError, match="another dataset"):
        JudgmentStore(path, "b" * 64)
    with pytest.raises(JudgmentsError, match="another dataset"):
        read_store(path, "b" * 64)
    assert len(read_store(path, HASH)) == 1  # nothing lost


def test_a_locked_store_says_so_and_keeps_everything(tmp_path, monkeypatch):
    path = tmp_path / "j.sqlite"
    store = JudgmentStore(path, HASH)
    store.add("m", None, "k", 1, "a")
    monkeypatch.setattr(store_module, "BUSY_SECONDS", 0.2)
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # another writer holds the lock
    try:
        with pytest.raises(JudgmentsError, match="locked"):
            store.add("m", None, "k2", 2, "a")
        assert len(read_store(path, HASH)) == 1  # readers still read (WAL)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    store.add("m", None, "k2", 2, "a")
    assert read_store(path, HASH)["keyword"].tolist() == ["k", "k2"]


@pytest.mark.skipif(os.name != "posix", reason="file modes")
def test_a_read_only_store_is_read_but_not_written(tmp_path):
    path = tmp_path / "j.sqlite"
    JudgmentStore(path, HASH).add("m", None, "k", 1, "a")
    con = sqlite3.connect(path)  # checkpoint the WAL so the file alone holds everything
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    con.close()
    uri = f"{path.resolve().as_uri()}?mode=ro"
    con = sqlite3.connect(uri, uri=True)
    with pytest.raises(sqlite3.OperationalError) as info:
        con.execute("INSERT INTO judgments VALUES (9, 'm', NULL, 'x', 'x', 'gt', 1, 'a', '')")
    con.close()
    assert "read-only" in store_module.database_reason(info.value)
    path.chmod(0o444)
    try:
        assert load_judgments(path, HASH)["keyword"].tolist() == ["k"]
    finally:
        path.chmod(0o644)


def test_writing_a_read_only_store_is_one_reason_and_nothing_lost(tmp_path, monkeypatch):
    path = tmp_path / "j.sqlite"
    store = JudgmentStore(path, HASH)
    store.add("m", None, "k", 1, "a")

    def read_only(target: Path, read_only: bool = False) -> sqlite3.Connection:  # as a file no one may write
        return sqlite3.connect(f"{Path(target).resolve().as_uri()}?mode=ro", uri=True, isolation_level=None)

    monkeypatch.setattr(store_module, "_connect", read_only)
    with pytest.raises(JudgmentsError, match="read-only; nothing was written"):
        store.add("m", None, "k2", 2, "a")
    with pytest.raises(JudgmentsError, match="read-only"):
        store.undo("a")
    monkeypatch.undo()
    assert read_store(path, HASH)["keyword"].tolist() == ["k"]


def test_damaged_files_are_one_reason(tmp_path):
    garbage = tmp_path / "j.sqlite"
    garbage.write_bytes(b"not a database at all" * 50)
    with pytest.raises(JudgmentsError, match="not a kweval judgments database"):
        load_judgments(garbage)
    with pytest.raises(JudgmentsError):
        JudgmentStore(garbage, HASH)
    assert garbage.read_bytes().startswith(b"not a database")  # left as it was
    table = tmp_path / "j.csv"
    table.write_text("movie,keyword\nm,k\n", encoding="utf-8")
    with pytest.raises(JudgmentsError, match="missing column"):
        load_judgments(table)
    parquet = tmp_path / "j.parquet"
    parquet.write_bytes(b"PAR1 broken")
    with pytest.raises(JudgmentsError, match="cannot read"):
        load_judgments(parquet)


def test_default_path_is_per_dataset_in_the_cache(monkeypatch, tmp_path):
    monkeypatch.delenv("KWEVAL_JUDGMENTS_DIR", raising=False)
    monkeypatch.setenv("KWEVAL_CACHE_DIR", str(tmp_path))
    assert default_path(HASH) == tmp_path / "judgments" / f"{HASH[:32]}.sqlite"
    assert default_path(HASH) != default_path("b" * 64)


def test_a_datasets_store(demo_dataset, monkeypatch, tmp_path):
    monkeypatch.setenv("KWEVAL_JUDGMENTS_DIR", str(tmp_path))
    store = JudgmentStore.for_dataset(demo_dataset)
    assert store.path == default_path(demo_dataset.content_hash()) and store.path.parent == tmp_path
    store.add("night_heist", None, "heist", 0, "ann", side="gt")
    assert len(JudgmentStore.for_dataset(demo_dataset).list("night_heist", "m1-r01")) == 1


def run_cli(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    """`kweval ARGS` in this process (tests.helpers.run_in_process): these tests are about what it says and does."""
    return run_in_process(*args, env_extra=dict(HF_HUB_OFFLINE="1", **(env or {})))


def test_cli_grades_undoes_and_evaluates_with_judgments(tmp_path):
    env = {"KWEVAL_JUDGMENTS_DIR": str(tmp_path)}
    for args in (
        ["--movie", "night_heist", "--keyword", "heist", "--grade", "0", "--annotator", "ann", "--side", "gt"],
        ["--movie", "night_heist", "--keyword", "heist", "--grade", "0", "--annotator", "bob", "--side", "gt"],
        ["--movie", "night_heist", "--keyword", "fraud", "--grade", "1", "--annotator", "bob"],
    ):
        assert run_cli("judgments", "add", *args, env=env).returncode == 0
    assert run_cli("judgments", "undo", "--annotator", "bob", env=env).returncode == 0
    bad = run_cli(
        "judgments", "add", "--movie", "night_heist", "--keyword", "heist", "--grade", "9", "--annotator", "a"
    )
    assert bad.returncode == 2 and "grade outside 0–3" in bad.stderr and "Traceback" not in bad.stderr
    (db,) = tmp_path.glob("*.sqlite")
    out = run_cli("evaluate", "--judgments", str(db), "--out", str(tmp_path / "s.csv"))
    assert out.returncode == 0, out.stderr
    summary = pd.read_csv(tmp_path / "s.csv")
    assert {"ndcg@5_judged", "precision_judged", "n_judgments"} <= set(summary.columns)
    heist = summary[summary["movie"] == "night_heist"]
    assert (heist["n_judgments"] == 1).all() and (heist["recall_judged"] != heist["recall"]).any()
    assert "cohen_kappa (quadratic)" in out.stderr
    agree = run_cli("judgments", "agreement", "--db", str(db))
    assert agree.returncode == 0 and "agreement" in agree.stdout


@pytest.mark.parametrize("kind", ["damaged", "foreign", "missing"])
def test_cli_evaluates_without_an_unusable_judgments_file(tmp_path, kind):
    path = tmp_path / "j.sqlite"
    if kind == "damaged":
        path.write_bytes(b"\x00garbage" * 100)
    elif kind == "foreign":
        JudgmentStore(path, HASH).add("night_heist", None, "heist", 0, "a")
    out = run_cli("evaluate", "--judgments", str(path), "--out", str(tmp_path / "s.csv"))
    assert out.returncode == 0, out.stderr
    lines = [line for line in out.stderr.splitlines() if str(path) in line]
    assert len(lines) == 1 and lines[0].startswith(f"kweval: {path}: ") and "without judgments" in lines[0]
    assert "Traceback" not in out.stderr
    summary = pd.read_csv(tmp_path / "s.csv")
    assert "ndcg@5" in summary.columns and "ndcg@5_judged" not in summary.columns
    if kind == "foreign":
        assert len(read_store(path)) == 1  # nothing lost


def test_cli_judgments_csv_with_bad_rows_uses_the_rest(tmp_path):
    table = tmp_path / "j.csv"
    table.write_text(
        "movie,review_id,keyword,grade,annotator\n"
        "night_heist,,heist,0,ann\n"
        "night_heist,,heist,5,ann\n"
        "ghost_movie,,heist,1,ann\n"
        "night_heist,no-such-review,heist,1,ann\n"
        "night_heist,,=cmd|x,2,ann\n",
        encoding="utf-8",
    )
    out = run_cli("evaluate", "--judgments", str(table), "--out", str(tmp_path / "s.csv"))
    assert out.returncode == 0, out.stderr
    assert out.stderr.count(f"kweval: {table}: ") == 5  # four kinds dropped, and the agreement line
    summary = pd.read_csv(tmp_path / "s.csv")
    assert (summary.loc[summary["movie"] == "night_heist", "n_judgments"] == 1).all()


def test_cli_exports_the_judged_gt(tmp_path):
    table = tmp_path / "j.csv"
    table.write_text(
        "movie,review_id,keyword,grade,annotator\nnight_heist,,heist,0,ann\nnight_heist,m1-r01,fraud,3,ann\n",
        encoding="utf-8",
    )
    out = run_cli(
        "judgments",
        "export",
        "--db",
        str(table),
        "--qrels",
        str(tmp_path / "q"),
        "--ground-truth",
        str(tmp_path / "g.csv"),
    )
    assert out.returncode == 0, out.stderr
    qrels = (tmp_path / "q" / "qrels.txt").read_text(encoding="utf-8").splitlines()
    heist = [line for line in qrels if line.startswith("night_heist/")]
    assert heist and not any(":heist " in line for line in heist)  # judged wrong: no longer relevant
    tidy = pd.read_csv(tmp_path / "g.csv", keep_default_na=False)
    mine = tidy[(tidy["movie"] == "night_heist") & (tidy["review_id"] == "")]
    assert "heist" not in mine["norm"].tolist() and len(mine) > 0
    assert list(tidy.columns) == [
        "movie",
        "review_id",
        "rank",
        "keyword",
        "norm",
        "relevance",
        "judged_grade",
        "source",
    ]
