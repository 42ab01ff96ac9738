"""kweval.scale.parallel and the CLI's evaluation in worker processes: the same numbers and messages as one process."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pandas as pd
import pytest

from kweval.cli import build_parser
from kweval.data import load_dataset, movie_file_sizes
from kweval.evaluation.pipeline import EvalOptions, combine_evaluations, evaluate
from kweval.scale import parallel
from tests.helpers import DNLP, REPO, make_dataset, write_bad_dnlp

TABLES = ("scores", "keywords", "ground_truth", "coverage", "skipped")


def run_cli(*args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, HF_HUB_OFFLINE="1")
    return subprocess.run([sys.executable, "-m", "kweval", *args], capture_output=True, text=True, cwd=REPO, env=env)


# --- sharing out work ------------------------------------------------------------------------------


def test_contiguous_groups_keep_order_cover_everything_and_balance():
    sizes = [2.76, 3.96, 2.32, 4.18, 2.87, 2.15]  # the DNLP files, MB
    groups = parallel.contiguous_groups(sizes, 2)
    assert groups == [[0, 1, 2], [3, 4, 5]]
    assert parallel.contiguous_groups(sizes, 1) == [list(range(6))]
    three = parallel.contiguous_groups(sizes, 3)
    assert [i for g in three for i in g] == list(range(6)) and len(three) == 3
    assert parallel.contiguous_groups([1, 1], 5) == [[0], [1]]
    assert parallel.contiguous_groups([], 2) == [[]]


def test_auto_jobs_needs_enough_input_per_process():
    assert parallel.auto_jobs([1_000_000] * 6) == 1  # 6 MB: one process
    assert parallel.auto_jobs([10_000_000]) == 1  # one file
    assert parallel.auto_jobs([10_000_000] * 6) == min(parallel.usable_cores(), 6)


def in_fresh_python(code: str) -> object:
    """Run `code` in a new interpreter (no other threads, unlike this test process) and return what it prints as
    JSON."""
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, env=dict(os.environ, HF_HUB_OFFLINE="1")
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def _pid_and_square(x: int) -> tuple[int, int]:
    return os.getpid(), x * x


def test_fork_map_returns_item_order_and_uses_other_processes():
    parent, results = in_fresh_python(
        "import json, os, time; from kweval.scale import parallel\n"
        "def work(x):\n"
        "    time.sleep(0.5)  # real items take seconds: each waiting worker takes one\n"
        "    return os.getpid(), x * x\n"
        "print(json.dumps([os.getpid(), parallel.fork_map(work, [1, 2, 3])]))"
    )
    assert [sq for _, sq in results] == [1, 4, 9]
    pids = [pid for pid, _ in results]
    assert pids[0] == parent
    assert len(set(pids)) == 3, "items after the first run in forked children"


def test_fork_map_recomputes_the_item_of_a_child_that_dies(tmp_path: Path):
    marker = tmp_path / "child_ran"
    results = in_fresh_python(
        "import json, os; from kweval.scale import parallel\n"
        "parent = os.getpid()\n"
        "def dies_in_child(x):\n"
        "    if os.getpid() != parent:\n"
        f"        open({str(marker)!r}, 'w').close()\n"
        "        os._exit(3)\n"
        "    return x + 100\n"
        "print(json.dumps(parallel.fork_map(dies_in_child, [1, 2])))"
    )
    assert marker.exists(), "the second item went to a child"
    assert results == [101, 102]


def test_fork_map_raises_a_childs_error_here():
    message = in_fresh_python(
        "import json, os; from kweval.scale import parallel\n"
        "parent = os.getpid()\n"
        "def fails_on_two(x):\n"
        "    if x == 2:\n"
        '        raise KeyError(f\'two in {"child" if os.getpid() != parent else "parent"}\')\n'
        "    return x\n"
        "try:\n"
        "    parallel.fork_map(fails_on_two, [1, 2])\n"
        "except KeyError as exc:\n"
        "    print(json.dumps(str(exc)))"
    )
    assert message == "'two in parent'"  # the child failed, the item was computed again here, and raised here


def test_fork_map_stops_the_children_when_its_own_item_fails():
    out = in_fresh_python(
        "import json, os, time; from kweval.scale import parallel\n"
        "parent = os.getpid()\n"
        "def slow_in_child(x):\n"
        "    if os.getpid() != parent:\n"
        "        time.sleep(60)\n"
        "    if x == 1:\n"
        "        raise ValueError('first')\n"
        "    return x\n"
        "start = time.time()\n"
        "try:\n"
        "    parallel.fork_map(slow_in_child, [1, 2])\n"
        "except ValueError as exc:\n"
        "    elapsed = time.time() - start\n"
        "    try:\n"
        "        os.waitpid(-1, os.WNOHANG)\n"
        "        left = True\n"
        "    except ChildProcessError:\n"
        "        left = False\n"
        "    print(json.dumps([str(exc), elapsed, left]))"
    )
    assert out[0] == "first"
    assert out[1] < 30, "the sleeping child was stopped, not waited for"
    assert out[2] is False, "no child process is left behind"


def test_fork_map_is_a_plain_loop_while_other_threads_run():
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        assert not parallel.can_fork()
        pids = {pid for pid, _ in parallel.fork_map(_pid_and_square, [1, 2, 3])}
    finally:
        stop.set()
        thread.join()
    assert pids == {os.getpid()}


# --- combining evaluations ---------------------------------------------------------------------


def _assert_same_evaluation(a, b):
    for table in TABLES:
        pd.testing.assert_frame_equal(getattr(a, table), getattr(b, table), check_dtype=True)
    assert a.movies == b.movies and a.models == b.models
    assert a.problems == b.problems


def test_combined_groups_equal_one_evaluation_with_every_kind_of_problem(tmp_path: Path):
    root = write_bad_dnlp(tmp_path)
    whole = evaluate(load_dataset(root))
    movies = list(movie_file_sizes(root))
    assert movies == ["Corrupt", "Empty", "Good", "NoGT", "NoModels", "Other"]
    for groups in ([movies[:3], movies[3:]], [movies[:1], movies[1:4], movies[4:]]):
        parts = [evaluate(load_dataset(root, movies=g)) for g in groups]
        _assert_same_evaluation(combine_evaluations(parts), whole)
    assert any(p.stage == "evaluate" for p in whole.problems) and any(p.stage == "load" for p in whole.problems)


def test_a_problem_every_group_reports_is_kept_once(tmp_path: Path):
    root = write_bad_dnlp(tmp_path)
    (root / "keywords_ground_truth.pkl").write_bytes(b"not a pickle")
    whole = evaluate(load_dataset(root))
    parts = [
        evaluate(load_dataset(root, movies=g)) for g in (["Corrupt", "Empty", "Good"], ["NoGT", "NoModels", "Other"])
    ]
    assert all("keywords_ground_truth.pkl" in str(part.problems[0]) for part in parts)
    combined = combine_evaluations(parts)
    _assert_same_evaluation(combined, whole)
    assert sum("keywords_ground_truth.pkl" in str(p) for p in combined.problems) == 1


@pytest.mark.dnlp
def test_combined_groups_equal_one_evaluation_on_the_dnlp_data():
    options = EvalOptions(k=3, match="word", gain="exponential")
    movies = ["IndianaJones", "SW_Episode5", "SW_Episode6"]
    whole = evaluate(load_dataset(DNLP, movies=movies), options)
    parts = [evaluate(load_dataset(DNLP, movies=g), options) for g in (movies[:1], movies[1:])]
    _assert_same_evaluation(combine_evaluations(parts), whole)


def test_combine_refuses_different_models():
    a = evaluate(make_dataset({"m1": ["x"]}, {("m1", "r", "A"): [("x", 1.0)]}))
    b = evaluate(make_dataset({"m2": ["y"]}, {("m2", "r", "B"): [("y", 1.0)]}))
    with pytest.raises(ValueError, match="models"):
        combine_evaluations([a, b])
    with pytest.raises(ValueError):
        combine_evaluations([])


# --- the CLI -----------------------------------------------------------------------------------------


def test_cli_groups_are_used_for_dnlp_with_jobs_and_not_for_one_job(tmp_path: Path):
    root = write_bad_dnlp(tmp_path)
    code = (
        "import json, os; from kweval.cli import build_parser; from kweval.cli.cmd_evaluate import "
        "_evaluate_in_groups; from kweval.evaluation.pipeline import EvalOptions\n"
        "out = {}\n"
        f"for jobs in ('1', '2'):\n"
        f"    got = _evaluate_in_groups(build_parser().parse_args(['evaluate', {str(root)!r}, '--jobs', jobs]), "
        f"EvalOptions())\n"
        "    out[jobs] = None if got is None else [got[0], sorted(set(got[1].scores['movie']))]\n"
        "out['tidy'] = _evaluate_in_groups(build_parser().parse_args(['evaluate', '--jobs', '2']), EvalOptions())\n"
        "print(json.dumps(out))"
    )
    out = in_fresh_python(code)
    assert out["2"] == [str(root), ["Good", "Other"]]
    assert out["1"] is None  # one process: the caller evaluates the loaded dataset
    assert out["tidy"] is None  # the demo: one tidy file for all movies


@pytest.mark.parametrize(
    "extra",
    [
        [],
        ["--aggregate", "micro", "--k", "3"],
        ["--movies", "Other,Good,NoGT", "--models", "base"],
        ["--movies", "Good,Missing"],  # a usage error: the same message
        ["--models", "nope"],
    ],
)
def test_cli_jobs_2_prints_exactly_what_jobs_1_prints(tmp_path: Path, extra: list[str]):
    root = write_bad_dnlp(tmp_path)
    runs = []
    for jobs in ("1", "2"):
        per_review = tmp_path / f"per_review_{jobs}.csv"
        proc = run_cli("evaluate", str(root), "--jobs", jobs, "--per-review", str(per_review), *extra)
        runs.append(
            (proc.returncode, proc.stdout, proc.stderr, per_review.read_text() if per_review.exists() else None)
        )
    assert runs[0] == runs[1]
    assert "Traceback" not in runs[0][2]


@pytest.mark.dnlp
def test_cli_jobs_on_the_dnlp_data_gives_the_one_process_numbers(tmp_path: Path):
    outs = []
    for jobs in ("1", "2"):
        proc = run_cli(
            "evaluate",
            str(DNLP),
            "--jobs",
            jobs,
            "--movies",
            "SW_Episode6,IndianaJones,HarryPotter",
            "--format",
            "json",
        )
        assert proc.returncode == 0, proc.stderr
        outs.append((proc.stdout, proc.stderr))
    assert outs[0] == outs[1]
    assert outs[0][1].count("score(s) missing") == 3  # reported per movie: HarryPotter, IndianaJones, SW_Episode6


def test_jobs_option_rejects_zero():
    with pytest.raises(SystemExit):
        build_parser().parse_args(["evaluate", "--jobs", "0"])
    assert isinstance(build_parser().parse_args(["evaluate"]), argparse.Namespace)
