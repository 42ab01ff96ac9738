"""Loaders (DNLP, tidy, demo), bad input, and the `kweval` command."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from kweval.cli import main
from kweval.data import load_dataset
from kweval.evaluation.aggregate import aggregate
from kweval.evaluation.pipeline import EvalOptions, evaluate
from tests import reference
from tests.helpers import DNLP, REPO, run_in_process, write_bad_dnlp, write_tables


def run_cli(*args: str, env_extra: dict | None = None) -> subprocess.CompletedProcess:
    """`kweval ARGS` in this process (what the command says and returns); `run_process` for the process itself."""
    return run_in_process(*args, env_extra=dict(HF_HUB_OFFLINE="1", **(env_extra or {})))


def run_process(*args: str, env_extra: dict | None = None) -> subprocess.CompletedProcess:
    """`python -m kweval ARGS` in a process of its own: for tests about the console script itself."""
    env = dict(os.environ, HF_HUB_OFFLINE="1", **(env_extra or {}))
    return subprocess.run([sys.executable, "-m", "kweval", *args], capture_output=True, text=True, cwd=REPO, env=env)


# --- a small DNLP folder with every kind of malformed cell ------------------------------------------


@pytest.fixture()
def bad_dnlp(tmp_path: Path) -> Path:
    return write_bad_dnlp(tmp_path)


def test_malformed_dnlp_is_skipped_named_and_the_rest_evaluated(bad_dnlp: Path):
    ds = load_dataset(bad_dnlp)
    ev = evaluate(ds)
    text = "\n".join(str(p) for p in ev.problems)
    for name in ("kw_Corrupt.pkl", "kw_NoModels.pkl", "kw_Empty.pkl", "Good.pkl", "NoGT"):
        assert name in text, name
    assert "not lists" in text and "without a string keyword" in text
    got = ev.scores.set_index(["movie", "review_id"])
    assert set(got.index) == {("Good", "r1"), ("Good", "r2"), ("Good", "r5"), ("Good", "r6"), ("Other", "q1")}
    assert got.loc[("Good", "r2"), "n_pred"] == 0
    r5 = got.loc[("Good", "r5")]
    assert r5["n_pred"] == 2 and r5["n_matched"] == 2 and r5["n_bad_scores"] == 2 and r5["w_precision"] == 0
    assert got.loc[("Good", "r6"), "n_pred"] == 1
    summary = aggregate(ev)
    good = summary[(summary["movie"] == "Good")].iloc[0]
    assert good["n_reviews"] == 4 and good["n_skipped"] == 2


def test_cli_on_malformed_data_exits_0_with_one_line_per_problem(bad_dnlp: Path):
    proc = run_cli("evaluate", str(bad_dnlp))
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line]
    assert lines and all(line.startswith("kweval: ") for line in lines)
    assert any("kw_Corrupt.pkl" in line for line in lines)
    table = pd.read_csv(pd.io.common.StringIO(proc.stdout))
    assert set(table["movie"]) == {"Good", "Other", "ALL"}


def test_cli_exit_2_when_nothing_can_be_evaluated(tmp_path: Path):
    root = tmp_path / "D"
    (root / "Extracted_Keywords").mkdir(parents=True)
    (root / "Extracted_Keywords" / "kw_A.pkl").write_bytes(b"junk")
    proc = run_cli("evaluate", str(root))
    assert proc.returncode == 2
    assert "nothing could be evaluated" in proc.stderr and "Traceback" not in proc.stderr


def test_cli_usage_errors_exit_2(tmp_path: Path):
    assert run_cli("evaluate", str(tmp_path / "missing")).returncode == 2
    (tmp_path / "empty").mkdir()
    proc = run_cli("evaluate", str(tmp_path / "empty"))
    assert proc.returncode == 2 and "not a dataset folder" in proc.stderr
    proc = run_cli("evaluate", "--models", "nope")
    assert proc.returncode == 2 and "unknown model" in proc.stderr
    assert run_cli("evaluate", "--k", "0").returncode == 2


# --- tidy layout ------------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_tidy_round_trip_and_bad_tables(tmp_path: Path, fmt: str):
    preds = pd.DataFrame(
        {
            "movie": ["m", "m", "m", "m", "m", None],
            "review_id": ["1", "1", "2", "3", "3", "9"],
            "model": ["y", "y", "y", "y", "y", "y"],
            "rank": [0, 1, 0, 0, -1, 0],
            "keyword": ["scam", "fraud", None, "poverty", "bad rank", "x"],
            "score": [0.2, 0.9, np.nan, 0.5, 0.1, 0.3],
        }
    )
    gt = pd.DataFrame(
        {
            "movie": ["m"] * 3,
            "rank": [0, 1, 2],
            "keyword": ["fraud", "poverty", "scam"],
            "helpful": [1, 9, 5],
            "not_helpful": [0, 0, 0],
        }
    )
    models = pd.DataFrame({"model": ["y"], "score_direction": ["lower"]})
    write_tables(tmp_path / "t", fmt, predictions=preds, ground_truth=gt, models=models)
    (tmp_path / "t" / f"reviews.{fmt}").write_bytes(b"\x00\x01 not a table")
    ds = load_dataset(tmp_path / "t")
    text = "\n".join(map(str, ds.problems))
    assert "reviews" in text and "without movie" in text and "negative rank" in text
    ev = evaluate(ds)
    got = ev.scores.set_index("review_id")
    assert got.loc["2", "n_pred"] == 0  # the empty-output marker row
    assert got.loc["1", "w_precision"] == pytest.approx(1.0)
    # lower-is-better: scam 0.2 -> 1/1.2, fraud 0.9 -> 1/1.9, both matched
    assert got.loc["1", "score_sum"] == pytest.approx(1 / 1.2 + 1 / 1.9)
    helpful = evaluate(ds, EvalOptions(gt_order="helpful"))
    assert helpful.ground_truth["norm"].tolist() == ["poverty", "scam", "fraud"]


def test_tidy_missing_required_columns(tmp_path: Path):
    write_tables(
        tmp_path / "t",
        "csv",
        predictions=pd.DataFrame({"movie": ["m"], "kw": ["x"]}),
        ground_truth=pd.DataFrame({"movie": ["m"], "rank": [0], "keyword": ["x"]}),
    )
    proc = run_cli("evaluate", str(tmp_path / "t"))
    assert proc.returncode == 2
    assert "lacks column(s)" in proc.stderr and "Traceback" not in proc.stderr


def test_empty_files(tmp_path: Path):
    folder = tmp_path / "t"
    folder.mkdir()
    (folder / "predictions.csv").write_text("")
    (folder / "ground_truth.csv").write_text("movie,rank,keyword\n")
    proc = run_cli("evaluate", str(folder))
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "predictions.csv" in proc.stderr


# --- the real DNLP data -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def dnlp_eval():
    ds = load_dataset(DNLP)
    return ds, evaluate(ds)


@pytest.mark.dnlp
def test_dnlp_loads_six_movies_four_models(dnlp_eval):
    ds, ev = dnlp_eval
    assert ds.movie_ids == ["GoodBadUgly", "HarryPotter", "IndianaJones", "SW_Episode4", "SW_Episode5", "SW_Episode6"]
    assert ds.model_names == ["base", "reranker", "sentiment", "metadata"]
    assert len(ds.reviews) == 9362
    assert ds.movies.set_index("movie").loc["SW_Episode6", "title"] == "Star Wars: Episode VI - Return of the Jedi"
    assert ds.ground_truth.groupby("movie").size()["SW_Episode6"] == 272
    assert len(ev.scores) == 9362 * 4


@pytest.mark.dnlp
def test_dnlp_matches_the_reference_on_a_sample(dnlp_eval):
    ds, ev = dnlp_eval
    rng = np.random.default_rng(0)
    scores = ev.scores.set_index(["movie", "review_id", "model"])
    preds = ds.predictions
    sample = scores.index[rng.choice(len(scores), 400, replace=False)]
    gt_by_movie = {m: g.sort_values("rank")["keyword"].tolist() for m, g in ds.ground_truth.groupby("movie")}
    # each list's rows looked up once (three masks over all 350k prediction rows per sample took ~20 s)
    where = preds.groupby(["movie", "review_id", "model"], sort=False).indices
    for movie, rid, model in sample:
        rows = preds.iloc[where.get((movie, rid, model), [])].sort_values("rank")
        pairs = [(k if isinstance(k, str) else None, s) for k, s in zip(rows["keyword"], rows["score"])]
        exp = reference.review_metrics(pairs, gt_by_movie[movie])
        got = scores.loc[(movie, rid, model)]
        for name in ("precision", "recall", "f1", "w_precision", "w_recall", "w_f1", "ndcg@5", "p@5", "ap@5", "rr"):
            assert got[name] == pytest.approx(exp[name], abs=1e-9), (movie, rid, model, name)


@pytest.mark.dnlp
def test_cli_csv_columns_and_precision(tmp_path: Path):
    out = tmp_path / "s.csv"
    proc = run_cli("evaluate", str(DNLP), "--movies", "SW_Episode6", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    table = pd.read_csv(out, dtype={"movie": str})
    assert list(table.columns) == [
        "movie",
        "model",
        "n_reviews",
        "n_skipped",
        "precision",
        "recall",
        "f1",
        "w_precision",
        "w_recall",
        "w_f1",
        "ndcg@5",
        "p@5",
        "ap@5",
        "rr",
        "gt_coverage",
    ]
    assert table["movie"].tolist() == ["SW_Episode6"] * 4 + ["ALL"] * 4
    first = out.read_text().splitlines()[1].split(",")
    assert len(first[4].split(".")[1]) >= 6


def test_cli_formats_fail_under_and_per_review(tmp_path: Path):
    md = run_cli("evaluate", "--format", "markdown")
    assert (
        md.returncode == 0
        and md.stdout.startswith("> **Protocol** — preset: kweval")
        and "\n| movie | model |" in md.stdout
    )
    tex = run_cli("evaluate", "--format", "latex")
    assert "\\begin{tabular}" in tex.stdout and "\\textbf{" in tex.stdout
    js = json.loads(run_cli("evaluate", "--format", "json").stdout)
    assert js["meta"]["k"] == 5 and js["rows"][0]["movie"]
    per = tmp_path / "per.csv"
    ok = run_cli("evaluate", "--fail-under", "precision=0.0", "--per-review", str(per))
    assert ok.returncode == 0
    assert "matches" in pd.read_csv(per).columns
    bad = run_cli("evaluate", "--fail-under", "ndcg@5=0.999")
    assert bad.returncode == 1 and "below 0.999" in bad.stderr
    assert run_cli("evaluate", "--fail-under", "nosuch=1").returncode == 2


def test_cli_never_imports_torch_without_semantic():
    code = (
        "import sys; from kweval.cli import main; rc = main(['evaluate', '--quiet', '--out', '/dev/null']);"
        "assert 'torch' not in sys.modules and 'sentence_transformers' not in sys.modules, 'heavy import'; "
        "print('ok', rc)"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO)
    assert proc.stdout.strip() == "ok 0", proc.stderr


def test_help_documents_every_option():
    out = run_cli("evaluate", "--help").stdout
    for flag in (
        "--models",
        "--movies",
        "--k",
        "--aggregate",
        "--match",
        "--gt-order",
        "--gain",
        "--discount",
        "--out",
        "--format",
        "--per-review",
        "--fail-under",
        "--semantic",
        "--sentiment",
        "--legacy",
    ):
        assert flag in out, flag
    assert run_cli("--help").returncode == 0


@pytest.mark.dnlp
def test_convert_dnlp_to_tidy_gives_the_same_numbers(tmp_path: Path):
    proc = run_cli("convert", str(DNLP), str(tmp_path / "tidy"))
    assert proc.returncode == 0, proc.stderr
    a = run_cli("evaluate", str(DNLP), "--movies", "SW_Episode6,IndianaJones")
    b = run_cli("evaluate", str(tmp_path / "tidy"), "--movies", "SW_Episode6,IndianaJones")
    assert a.returncode == 0 and b.returncode == 0, a.stderr + b.stderr
    assert len(a.stdout.splitlines()) == 1 + 2 * 4 + 4
    assert a.stdout == b.stdout


def test_python_m_and_demo_default():
    proc = run_process("evaluate")
    assert proc.returncode == 0, proc.stderr
    table = pd.read_csv(pd.io.common.StringIO(proc.stdout))
    assert table["movie"].nunique() >= 7  # six movies + ALL
    assert not table[table["movie"] == "ALL"]["precision"].isna().any()


BUFFERED = {
    "PYTHONUNBUFFERED": ""
}  # an empty value unsets it: the child's stdout is block-buffered, as in a plain shell


@pytest.mark.dnlp
@pytest.mark.parametrize("extra", [[], ["--per-review", "-"]], ids=["summary", "summary+per-review"])
def test_console_script_ends_with_all_its_output_written(capsys, extra: list[str]):
    """`python -m kweval` skips the interpreter's teardown: what it printed must still all arrive, as main() prints it.

    The summary alone is smaller than the stdout buffer (lost without a flush);
    with the per-review table the output is far more than a pipe holds at once.
    """
    args = ["evaluate", str(DNLP), "--movies", "SW_Episode6", "--jobs", "1", *extra]
    proc = run_process(*args, env_extra=BUFFERED)
    assert main(args) == 0
    in_process = capsys.readouterr()
    assert (
        proc.returncode == 0 and in_process.out.startswith("movie,model,n_reviews") and "SW_Episode6" in in_process.err
    )
    assert proc.stdout == in_process.out and proc.stderr == in_process.err


@pytest.mark.dnlp
def test_console_script_into_a_closed_pipe_is_no_error():
    cmd = [
        sys.executable,
        "-m",
        "kweval",
        "evaluate",
        str(DNLP),
        "--movies",
        "SW_Episode6",
        "--per-review",
        "-",
        "--quiet",
    ]
    env = dict(os.environ, HF_HUB_OFFLINE="1", **BUFFERED)
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=REPO, env=env)
    assert proc.stdout.readline().startswith(b"movie,model,n_reviews")
    proc.stdout.close()  # as `kweval evaluate ... | head -1` does
    assert proc.wait(timeout=600) == 0  # generous: a busy machine; a hang still fails
    assert proc.stderr.read() == b""


def test_public_api_is_the_functions():
    import kweval

    ev = kweval.evaluate(kweval.load_dataset(), kweval.EvalOptions(k=3))
    table = kweval.aggregate(ev, "micro")
    assert "ndcg@3" in table.columns and (table["movie"] == "ALL").sum() == len(ev.models)
    from kweval.evaluation.pipeline import clean_ground_truth  # the module stays importable

    assert callable(clean_ground_truth) and callable(kweval.evaluate)


@pytest.mark.slow  # real embeddings / several processes: tens of seconds
def test_unknown_embedding_model_is_a_usage_error(tmp_path: Path):
    proc = run_cli(
        "evaluate",
        "--semantic",
        "--embedding-model",
        str(tmp_path / "no-such-model"),
        "--quiet",
        env_extra={"KWEVAL_CACHE_DIR": str(tmp_path / "cache")},
    )
    assert proc.returncode == 2, proc.stderr[-500:]
    assert "cannot load the embedding model" in proc.stderr and "Traceback" not in proc.stderr


@pytest.mark.slow  # real embeddings / several processes: tens of seconds
def test_unusable_cache_folder_falls_back_to_uncached_embeddings(tmp_path: Path):
    blocker = tmp_path / "file-not-folder"
    blocker.write_text("x")
    proc = run_cli(
        "evaluate",
        "--semantic",
        "--movies",
        "night_heist",
        "--models",
        "keybert",
        env_extra={"KWEVAL_CACHE_DIR": str(blocker / "sub")},
    )
    assert proc.returncode == 0, proc.stderr[-800:]
    notes = [line for line in proc.stderr.splitlines() if line.startswith("kweval: ")]
    assert len(notes) == 1 and "not usable" in notes[0] and "goes on without the cache" in notes[0], proc.stderr
    table = pd.read_csv(pd.io.common.StringIO(proc.stdout))
    assert table["sem_precision"].notna().all()
