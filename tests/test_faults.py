"""Fault injection (issue 15): hostile files, paths and devices built here; every case ends in one
`kweval: SOURCE: REASON` line (or a usage error, exit 2), never a traceback, and the rest is evaluated."""

from __future__ import annotations

import csv
import io
import os
import re
import resource
import subprocess
import sys
import tracemalloc
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kweval.cli import main
from kweval.data import load_dataset
from kweval.evaluation.aggregate import aggregate
from kweval.evaluation.pipeline import EvalOptions, combine_evaluations, evaluate
from kweval.io import report
from kweval.metrics import ranking
from kweval.text.matching import candidate_table, keywords_match
from kweval.text.normalize import normalize, normalize_many
from tests.helpers import make_dataset, write_bad_dnlp, write_tables

REPO = Path(__file__).resolve().parents[1]
IS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
GT = ["fraud", "poverty", "scam"]


def run_cli(*args: str, preexec_fn=None, stdout=subprocess.PIPE) -> subprocess.CompletedProcess:
    env = dict(os.environ, HF_HUB_OFFLINE="1", PYTHONPATH=str(REPO))
    return subprocess.run(
        [sys.executable, "-m", "kweval", *args],
        stdout=stdout,
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO,
        env=env,
        preexec_fn=preexec_fn,
    )


def one_kweval_line(stderr: str, *needles: str) -> str:
    """The single stderr line, asserted to be a `kweval:` line naming every needle (no traceback)."""
    assert "Traceback" not in stderr, stderr
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1, stderr
    assert lines[0].startswith("kweval: "), lines[0]
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])
    return lines[0]


def cli(capsys, *args: str) -> tuple[int, str, str]:
    status = main(list(args))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


# --- output paths: checked before the work, written whole or not at all ---------------------------------------


@pytest.fixture()
def a_file(tmp_path: Path) -> Path:
    path = tmp_path / "plain.txt"
    path.write_text("x")
    return path


@pytest.mark.parametrize("flag", ["--out", "--per-review"])
def test_output_under_a_regular_file_is_refused_before_any_work(capsys, a_file: Path, flag: str):
    status, out, err = cli(capsys, "evaluate", flag, str(a_file / "sub" / "o.csv"))
    assert status == 2 and out == ""  # nothing evaluated or printed: the check comes first
    one_kweval_line(err, str(a_file / "sub" / "o.csv"), "folder")
    assert a_file.read_text() == "x"


def test_output_that_is_a_folder_or_too_long_is_refused(capsys, tmp_path: Path):
    status, out, err = cli(capsys, "evaluate", "--out", str(tmp_path))
    assert status == 2 and out == ""
    one_kweval_line(err, "is a folder")
    long_name = str(tmp_path / ("a" * 300 + ".csv"))
    status, out, err = cli(capsys, "evaluate", "--out", long_name)
    assert status == 2 and out == ""
    one_kweval_line(err, "cannot be written")


def test_output_onto_a_full_device_is_one_line(capsys):
    status, _, err = cli(capsys, "evaluate", "--out", "/dev/full")
    assert status == 2
    one_kweval_line(err, "/dev/full", "No space left")


def test_stdout_on_a_full_device_is_one_line():
    with open("/dev/full", "w") as full:
        proc = run_cli("evaluate", stdout=full)
    assert proc.returncode == 2
    one_kweval_line(proc.stderr, "stdout", "No space left")


def test_file_size_limit_leaves_no_truncated_file(tmp_path: Path):
    def limit_to_16_kb():
        resource.setrlimit(resource.RLIMIT_FSIZE, (16384, 16384))

    out, per_review = tmp_path / "summary.csv", tmp_path / "reviews.csv"
    per_review.write_text("the previous file\n")
    proc = run_cli("evaluate", "--out", str(out), "--per-review", str(per_review), preexec_fn=limit_to_16_kb)
    assert proc.returncode == 2
    one_kweval_line(proc.stderr, str(per_review), "File too large")
    assert out.is_file() and out.read_text().startswith("movie,model")  # the small summary was written whole
    assert per_review.read_text() == "the previous file\n"  # replaced whole or not at all
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no temporary file left


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
def test_convert_under_a_file_size_limit_leaves_no_truncated_table(tmp_path: Path, fmt: str):
    def limit_to_16_kb():
        resource.setrlimit(resource.RLIMIT_FSIZE, (16384, 16384))

    dst = tmp_path / "tidy"
    proc = run_cli(
        "convert", str(REPO / "kweval" / "data" / "demo"), str(dst), "--format", fmt, preexec_fn=limit_to_16_kb
    )
    assert proc.returncode == 2
    one_kweval_line(proc.stderr, str(dst), "File too large")
    assert list(dst.iterdir()) == []  # no truncated table, no temporary file


@pytest.mark.skipif(
    IS_ROOT, reason="root writes into read-only folders; the path-under-a-file and /dev/full cases cover root"
)
def test_read_only_folder_is_refused(capsys, tmp_path: Path):
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o555)
    try:
        status, out, err = cli(capsys, "evaluate", "--out", str(folder / "o.csv"))
        assert status == 2 and out == ""
        one_kweval_line(err, str(folder / "o.csv"))
    finally:
        folder.chmod(0o755)


def test_written_file_keeps_usual_permissions(capsys, tmp_path: Path):
    out = tmp_path / "o.csv"
    assert cli(capsys, "evaluate", "--out", str(out))[0] == 0
    assert out.stat().st_mode & 0o777 == 0o666 & ~_umask()


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def test_convert_into_a_path_under_a_file_is_refused(capsys, a_file: Path):
    status, out, err = cli(capsys, "convert", str(REPO / "kweval" / "data" / "demo"), str(a_file / "tidy"))
    assert status == 2 and out == ""
    one_kweval_line(err, str(a_file / "tidy"))


def test_over_long_data_path_is_one_line(capsys, tmp_path: Path):
    status, out, err = cli(capsys, "evaluate", str(tmp_path / ("d" * 300)))
    assert status == 2 and out == ""
    one_kweval_line(err, "longer than the system allows")


# --- command-line values ---------------------------------------------------------------------------------


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "2", "-1", "1.0000001"])
def test_fail_under_outside_0_1_is_a_usage_error(capsys, value: str):
    with pytest.raises(SystemExit) as exit_:
        main(["evaluate", "--fail-under", f"f1={value}"])
    assert exit_.value.code == 2
    assert "outside [0, 1]" in capsys.readouterr().err


@pytest.mark.parametrize("value", ["0", "1", "0.25"])
def test_fail_under_inside_0_1_is_accepted(capsys, value: str):
    status, out, _ = cli(capsys, "evaluate", "--fail-under", f"rr={value}")
    assert status in (0, 1) and out.startswith("movie,model")


@pytest.mark.parametrize("k", [True, False, np.bool_(True), 2.0, "5", 0, -3, None])
def test_eval_options_rejects_non_integer_k(k):
    with pytest.raises(ValueError, match="k must be a positive integer"):
        EvalOptions(k=k)


def test_eval_options_accepts_numpy_integers():
    assert EvalOptions(k=np.int64(7)).k == 7


def test_huge_k_costs_memory_of_the_lists_not_of_k():
    demo = load_dataset()
    small = evaluate(demo, EvalOptions(k=1000)).scores
    tracemalloc.start()
    try:
        huge = evaluate(demo, EvalOptions(k=10**9)).scores
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 100 * 2**20, f"peak {peak / 2**20:.0f} MiB"
    longest = int(small["n_pred"].max())
    assert longest < 1000  # both cut-offs lie past every list: the same ranking metrics
    for name in ("ndcg", "ap"):
        np.testing.assert_array_equal(huge[f"{name}@{10**9}"], small[f"{name}@1000"])
    np.testing.assert_array_equal(huge["rr"], small["rr"])
    np.testing.assert_allclose(huge[f"p@{10**9}"] * 10**9, small["p@1000"] * 1000)


def test_ndcg_walkthrough_at_a_huge_k_equals_the_evaluation():
    from kweval.explain import ndcg as explain

    ds = make_dataset({"m": GT}, {("m", "r1", "a"): [("scam", 0.9), ("x", 0.5), ("fraud", 0.1)]})
    k = 10**9
    ev = evaluate(ds, EvalOptions(k=k))
    tracemalloc.start()
    try:
        steps = explain.keyword_steps(ev.keywords, ev.ground_truth["keyword"].tolist(), k=k)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 20 * 2**20
    assert steps.ndcg == pytest.approx(ev.scores[f"ndcg@{k}"].iloc[0])


def test_cli_k_one_billion_runs(capsys):
    status, out, err = cli(capsys, "evaluate", "--k", "1000000000")
    assert status == 0 and "ndcg@1000000000" in out.splitlines()[0] and "Traceback" not in err


# --- ranking overflow, huge scores ----------------------------------------------------------------------


def test_exponential_gain_overflow_raises_a_clear_value_error():
    with pytest.raises(ValueError, match="overflow"):
        ranking.apply_gain([1024.0], "exponential")
    with pytest.raises(ValueError, match="overflow"):  # each gain finite, their discounted sum not
        ranking.ndcg([1023.0, 1023.0, 1023.0], gain="exponential")
    with pytest.raises(ValueError, match="overflow"):
        ranking.dcg([1e308, 1e308, 1e308])
    assert ranking.dcg([1023.0], gain="exponential") == pytest.approx(2.0**1023 - 1)


def test_huge_finite_scores_give_finite_weighted_metrics_without_warnings():
    huge = {
        ("m", "r1", "a"): [("fraud", 1e308), ("x", 1e308), ("scam", 1e308)],
        ("m", "r2", "a"): [("poverty", 1.7e308)],
    }
    plain = {key: [(kw, score / 1e300) for kw, score in entries] for key, entries in huge.items()}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with np.errstate(all="raise"):
            ev_huge = evaluate(make_dataset({"m": GT}, huge))
            ev_plain = evaluate(make_dataset({"m": GT}, plain))
            for agg in ("macro", "micro"):
                got = aggregate(ev_huge, agg)
                want = aggregate(ev_plain, agg)
                assert np.isfinite(got["w_precision"]).all() and np.isfinite(got["w_f1"]).all()
                np.testing.assert_allclose(got["w_precision"], want["w_precision"], rtol=1e-12)
    assert ev_huge.scores["w_precision"].tolist() == pytest.approx([2 / 3, 1.0])


def test_parts_scaled_differently_combine_to_the_whole_evaluation():
    """--jobs and --scheduler evaluate movies apart: a part whose score sums would overflow is scaled, a part just below
    that is not (1e300 scores sum finitely); micro w_precision over both must still be the whole evaluation's."""
    preds = {
        ("big", "r1", "a"): [("fraud", 1e308), ("x", 1e308)],
        ("big", "r2", "a"): [("poverty", 1.7e308)],
        ("small", "r1", "a"): [("fraud", 9e299), ("x", 1e299)],
        ("small", "r2", "a"): [("y", 5e299), ("scam", 5e299)],
    }
    ds = make_dataset({"big": GT, "small": GT}, preds)
    whole = evaluate(ds)
    parts = [evaluate(ds.subset(movies=[m])) for m in ("big", "small")]
    assert parts[0].score_exponent > 0 == parts[1].score_exponent  # the two parts' score sums are in different units
    combined = combine_evaluations(parts)
    for agg in ("macro", "micro"):
        got, want = aggregate(combined, agg), aggregate(whole, agg)
        np.testing.assert_allclose(got["w_precision"], want["w_precision"], rtol=1e-12)
        assert np.isfinite(got["w_precision"]).all()


def test_cli_huge_scores_print_no_numpy_warning(tmp_path: Path):
    write_tables(
        tmp_path / "t",
        predictions=pd.DataFrame(
            {
                "movie": "m",
                "review_id": "r",
                "model": "a",
                "rank": [0, 1],
                "keyword": ["fraud", "x"],
                "score": [1e308, 1e308],
            }
        ),
        ground_truth=gt_table(),
    )
    proc = run_cli("evaluate", str(tmp_path / "t"))
    assert proc.returncode == 0 and proc.stderr == ""
    table = pd.read_csv(io.StringIO(proc.stdout))
    assert table["w_precision"].tolist() == [0.5, 0.5]


# --- normalization (METRICS.md §1 revised: categories L, N, M kept) ---------------------------------------


@pytest.mark.parametrize(
    "text, expected",
    [
        ("काला", "काला"),  # Devanagari: the vowel signs (Mc) stay
        ("कल", "कल"),
        ("गुड़िया!", "गुड़िया"),  # nukta and vowel signs kept, punctuation dropped
        ("กิน", "กิน"),  # Thai: the vowel mark above (Mn) stays
        ("ภาษาไทย", "ภาษาไทย"),
        ("مَدْرَسَة", "مَدْرَسَة"),  # Arabic: the harakat (Mn) stay
        ("مدرسة.", "مدرسة"),
        ("Darth-Vader's  FALL!", "darthvaders fall"),
    ],
)
def test_normalize_keeps_marks(text: str, expected: str):
    assert normalize(text) == expected
    assert normalize_many([text, "plain ascii", text]) == [expected, "plain ascii", expected]


def test_words_differing_by_marks_never_match():
    assert normalize("काला") != normalize("कल")
    assert normalize("กิน") != normalize("กน")
    for mode in ("exact", "approx", "word", "stem"):
        if mode == "stem":
            pytest.importorskip("nltk")
        ev = evaluate(
            make_dataset({"m": ["काला", "กิน"]}, {("m", "r", "a"): [("कल", 1.0), ("กน", 1.0)]}), EvalOptions(match=mode)
        )
        assert ev.scores["n_matched"].tolist() == [0], mode
    ev = evaluate(make_dataset({"m": ["काला"]}, {("m", "r", "a"): [("काला!", 1.0)]}))
    assert ev.scores["n_matched"].tolist() == [1]


# --- matching memory: linear in keyword length ----------------------------------------------------------


def test_long_gt_keyword_costs_kilobytes_not_gigabytes():
    long_gt = " ".join(f"word{i}" for i in range(400))[:2500]
    preds = ["word1", "word399", "nothing", long_gt, long_gt[:1000], "x" * 3000]
    tracemalloc.start()
    try:
        bounds, flat = candidate_table(preds, ["short", long_gt], "approx")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 2 * 2**20, f"peak {peak / 2**20:.1f} MiB"
    got = [flat[bounds[i] : bounds[i + 1]].tolist() for i in range(len(preds))]
    assert got == [[j for j, g in enumerate(["short", long_gt]) if keywords_match(p, g)] for p in preds]


_words = st.text(alphabet="ab", min_size=1, max_size=30)
_keywords = st.lists(_words, min_size=1, max_size=4).map(" ".join)  # normalized: single spaces, no edges


@settings(max_examples=150, deadline=None)
@given(
    preds=st.lists(_keywords, min_size=1, max_size=12, unique=True),
    gt=st.lists(_keywords, min_size=1, max_size=8, unique=True),
)
def test_candidate_table_equals_pairwise_rule_on_long_keywords(preds, gt):
    for mode in ("approx", "word", "exact"):
        bounds, flat = candidate_table(preds, gt, mode)
        for i, p in enumerate(preds):
            want = [j for j, g in enumerate(gt) if keywords_match(p, g, mode)]
            assert flat[bounds[i] : bounds[i + 1]].tolist() == want, (mode, p)


# --- DNLP folder: links, loops, folders ------------------------------------------------------------------


def test_symlink_loops_dangling_links_and_folders_are_named_and_skipped(capsys, tmp_path: Path):
    clean = write_bad_dnlp(tmp_path / "clean")
    hostile = write_bad_dnlp(tmp_path / "hostile")
    kw = hostile / "Extracted_Keywords"
    os.symlink("kw_Loop.pkl", kw / "kw_Loop.pkl")
    os.symlink(str(tmp_path / "gone.pkl"), kw / "kw_Dangling.pkl")
    (kw / "kw_Folder.pkl").mkdir()
    for jobs in ("1", "2"):
        status, out, err = cli(capsys, "evaluate", str(hostile), "--jobs", jobs)
        assert status == 0 and "Traceback" not in err
        lines = err.splitlines()
        assert all(line.startswith("kweval: ") for line in lines)
        for name, reason in (
            ("kw_Loop.pkl", "symbolic link loop"),
            ("kw_Dangling.pkl", "dangling symbolic link"),
            ("kw_Folder.pkl", "a folder"),
        ):
            assert sum(name in line and reason in line for line in lines) == 1, (name, err)
        status, want, _ = cli(capsys, "evaluate", str(clean), "--jobs", jobs)
        assert out == want  # the rest evaluated exactly as without the hostile entries


def test_linked_ground_truth_and_reviews_files_are_named(tmp_path: Path):
    root = write_bad_dnlp(tmp_path)
    (root / "keywords_ground_truth.pkl").unlink()
    os.symlink("keywords_ground_truth.pkl", root / "keywords_ground_truth.pkl")
    os.symlink(str(tmp_path / "nowhere.pkl"), root / "Reviews_By_Movie" / "Other.pkl")
    reasons = {str(p) for p in load_dataset(root).problems}
    assert "keywords_ground_truth.pkl: unreadable ground-truth file: a symbolic link loop; skipped" in reasons
    assert (
        f"Other.pkl: unreadable reviews file: a dangling symbolic link (to {tmp_path / 'nowhere.pkl'}); skipped"
        in reasons
    )


# --- the same rules in both layouts ----------------------------------------------------------------------


def gt_table() -> pd.DataFrame:
    return pd.DataFrame({"movie": "m", "rank": range(3), "keyword": GT, "helpful": 1.0, "not_helpful": 0.0})


def write_dnlp(folder: Path, cells: dict[str, list]) -> Path:
    """A DNLP folder for movie m (imdb tt1) with GT `GT` and one model `a`: review id -> list of (keyword, score)."""
    root = folder / "Dataset"
    (root / "Extracted_Keywords").mkdir(parents=True)
    pd.DataFrame({"Movie_ID": "tt1", "Keyword": GT, "Helpful": 1, "Not_Helpful": 0}).to_pickle(
        root / "keywords_ground_truth.pkl"
    )
    pd.DataFrame({"Movie_ID": "tt1", "Review_ID": list(cells), "keywords_a": list(cells.values())}).to_pickle(
        root / "Extracted_Keywords" / "kw_m.pkl"
    )
    return root


def write_tidy_lists(folder: Path, lists: list[tuple[str, list]], fmt: str) -> Path:
    rows = [("m", rid, "a", rank, kw, score) for rid, entries in lists for rank, (kw, score) in enumerate(entries)]
    predictions = pd.DataFrame(rows, columns=["movie", "review_id", "model", "rank", "keyword", "score"])
    return write_tables(folder, fmt, predictions=predictions, ground_truth=gt_table())


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_duplicate_lists_first_wins_identically_in_both_layouts(tmp_path: Path, fmt: str):
    first = [("fraud", 0.9), ("x", 0.1)]
    second = [("scam", 0.5), ("poverty", 0.5), ("y", 0.5)]
    lists = [("r1", first), ("r2", [("scam", 1.0)]), ("r1", second)]
    dnlp_rows = pd.DataFrame(
        {"Movie_ID": "tt1", "Review_ID": [r for r, _ in lists], "keywords_a": [e for _, e in lists]}
    )
    dnlp = write_dnlp(tmp_path / "d", {"r0": []})
    dnlp_rows.to_pickle(dnlp / "Extracted_Keywords" / "kw_m.pkl")
    tidy = write_tidy_lists(tmp_path / "t", lists, fmt)
    results = {}
    for name, folder in (("dnlp", dnlp), ("tidy", tidy)):
        ds = load_dataset(folder)
        reasons = [p.reason for p in ds.problems]
        assert reasons == [
            "1 review × model list(s) given more than once: the first of each kept, the later one(s) (3 row(s)) dropped"
        ], name
        results[name] = evaluate(ds).scores.set_index("review_id")
    for table in results.values():
        assert table.loc["r1", "n_pred"] == 2 and table.loc["r1", "n_matched"] == 1  # the first list: fraud, x
    cols = ["n_pred", "n_matched", "precision", "w_precision", "ndcg@5"]
    pd.testing.assert_frame_equal(results["dnlp"][cols], results["tidy"][cols])


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_boolean_scores_are_invalid_identically_in_both_layouts(tmp_path: Path, fmt: str):
    entries = [("fraud", True), ("x", False)]
    results = {}
    for name, folder in (
        ("dnlp", write_dnlp(tmp_path / "d", {"r1": entries})),
        ("tidy", write_tidy_lists(tmp_path / "t", [("r1", entries)], fmt)),
    ):
        ev = evaluate(load_dataset(folder))
        assert any("2 score(s) missing, non-numeric" in p.reason for p in ev.problems), name
        results[name] = ev.scores.iloc[0]
        assert results[name]["n_bad_scores"] == 2 and results[name]["w_precision"] == 0.0, name
    assert results["dnlp"]["w_precision"] == results["tidy"]["w_precision"]


def test_list_cells_in_a_tidy_table_are_reported(tmp_path: Path):
    predictions = pd.DataFrame(
        {
            "movie": "m",
            "review_id": ["r1", "r2"],
            "model": "a",
            "rank": 0,
            "keyword": [["fraud", "scam"], ["x"]],
            "score": 1.0,
        }
    )
    ds = load_dataset(write_tables(tmp_path / "t", "parquet", predictions=predictions, ground_truth=gt_table()))
    assert [p.reason for p in ds.problems] == [
        "2 keyword cell(s) hold lists, not one keyword per row; those rows have no keyword"
    ]


def test_list_cells_in_keys_and_ground_truth_are_reported(tmp_path: Path):
    predictions = pd.DataFrame(
        {"movie": "m", "review_id": [["r1"], ["r2"]], "model": "a", "rank": 0, "keyword": "fraud", "score": 1.0}
    )
    ev = evaluate(
        load_dataset(write_tables(tmp_path / "t", "parquet", predictions=predictions, ground_truth=gt_table()))
    )
    assert [p.reason for p in ev.problems] == [
        "2 review_id cell(s) hold list<element: string>, not one value per row; read as their text"
    ]
    assert ev.scores["n_matched"].tolist() == [1, 1]  # the rest evaluated
    gt = gt_table().assign(keyword=[[k] for k in GT])
    ev = evaluate(load_dataset(write_tables(tmp_path / "g", "parquet", predictions=predictions, ground_truth=gt)))
    assert "3 keyword cell(s) are not text (e.g. lists); those GT rows are dropped" in [p.reason for p in ev.problems]


@pytest.mark.parametrize("direction", ["", None])
def test_empty_score_direction_means_higher_with_a_note(capsys, tmp_path: Path, direction):
    folder = write_tidy_lists(tmp_path / "t", [("r1", [("fraud", 0.9), ("x", 0.1)])], "csv")
    pd.DataFrame({"model": ["a"], "score_direction": [direction]}).to_csv(folder / "models.csv", index=False)
    ds = load_dataset(folder)
    assert ds.models["score_direction"].tolist() == ["higher"]
    status, out, err = cli(capsys, "evaluate", str(folder))
    assert status == 0
    one_kweval_line(err, "models", "no score_direction; using higher")
    assert pd.read_csv(io.StringIO(out))["w_precision"].tolist() == [0.9, 0.9]


# --- exports safe to open -----------------------------------------------------------------------------------

HOSTILE = ['=HYPERLINK("http://evil/x","y")', "+1+2", "-cmd", "@SUM(A1)", "\tx", "\rx"]


@pytest.fixture()
def hostile_tidy(tmp_path: Path) -> Path:
    rows = []
    for i, name in enumerate(HOSTILE):
        rows += [
            (f"=movie{i}", name, f"@model{i % 2}", 0, name, 0.5),
            (f"=movie{i}", name, f"@model{i % 2}", 1, "fraud", 0.5),
        ]
    predictions = pd.DataFrame(rows, columns=["movie", "review_id", "model", "rank", "keyword", "score"])
    gt = pd.concat([gt_table().assign(movie=f"=movie{i}") for i in range(len(HOSTILE))], ignore_index=True)
    return write_tables(tmp_path / "hostile", "parquet", predictions=predictions, ground_truth=gt)


def text_cells(path: Path) -> list[str]:
    with open(path, newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    return [cell for row in rows for cell in row]


def is_number(cell: str) -> bool:
    try:
        float(cell)
        return True
    except ValueError:
        return False


def test_csv_exports_neutralise_formulas(capsys, tmp_path: Path, hostile_tidy: Path):
    out, per_review = tmp_path / "s.csv", tmp_path / "r.csv"
    status, _, _ = cli(capsys, "evaluate", str(hostile_tidy), "--out", str(out), "--per-review", str(per_review))
    assert status == 0
    for path in (out, per_review):
        cells = text_cells(path)
        live = [c for c in cells if c.startswith(FORMULA_STARTS) and not is_number(c)]
        assert live == [], (path.name, live)
        assert any(c.startswith("'=movie") for c in cells) and any(c.startswith("'@model") for c in cells)
    reviews = pd.read_csv(per_review, keep_default_na=False)
    assert sorted(reviews["review_id"]) == sorted("'" + h for h in HOSTILE)


def test_raw_csv_keeps_cells_verbatim(capsys, tmp_path: Path, hostile_tidy: Path):
    per_review = tmp_path / "r.csv"
    status, out, _ = cli(capsys, "evaluate", str(hostile_tidy), "--raw-csv", "--per-review", str(per_review))
    assert status == 0
    assert "=movie0" in pd.read_csv(io.StringIO(out))["movie"].tolist()
    assert sorted(pd.read_csv(per_review, keep_default_na=False)["review_id"]) == sorted(HOSTILE)


def test_convert_to_csv_neutralises_unless_raw(capsys, tmp_path: Path, hostile_tidy: Path):
    assert cli(capsys, "convert", str(hostile_tidy), str(tmp_path / "safe"), "--format", "csv")[0] == 0
    assert cli(capsys, "convert", str(hostile_tidy), str(tmp_path / "raw"), "--format", "csv", "--raw-csv")[0] == 0
    safe = [
        c
        for c in text_cells(tmp_path / "safe" / "predictions.csv")
        if c.startswith(FORMULA_STARTS) and not is_number(c)
    ]
    assert safe == []
    raw = pd.read_csv(tmp_path / "raw" / "predictions.csv", keep_default_na=False)
    assert set(HOSTILE) <= set(raw["keyword"])


def test_negative_numbers_are_not_neutralised():
    table = pd.DataFrame({"name": ["-x", "ok"], "delta": [-0.5, 0.25], "n": [-1, 2]})
    assert report.to_csv(table) == "name,delta,n\n'-x,-0.500000,-1\nok,0.250000,2\n"


def test_markdown_escapes_html_pipes_links_and_images(capsys, tmp_path: Path):
    predictions = pd.DataFrame(
        {
            "movie": ['<img src="http://t/p.png">', "![t](http://t/p.png)"],
            "review_id": "r",
            "model": ["a|b", "[l](http://t)"],
            "rank": 0,
            "keyword": "fraud",
            "score": 1.0,
        }
    )
    gt = pd.concat([gt_table().assign(movie=m) for m in predictions["movie"]], ignore_index=True)
    folder = write_tables(tmp_path / "t", "parquet", predictions=predictions, ground_truth=gt)
    status, out, _ = cli(capsys, "evaluate", str(folder), "--format", "markdown")
    assert status == 0
    body = re.sub(r"^> ", "", out, flags=re.M)  # the protocol card is a Markdown quote block
    assert re.search(r"(?<!\\)[\[\]!<>]", body) is None  # every bracket and bang escaped, no tag left
    assert "&lt;img" in out and "a\\|b" in out
    header = next(line for line in out.splitlines() if line.startswith("| "))
    body = [line for line in out.splitlines() if "fraud" in line or "a\\|b" in line]
    assert all(line.count(" | ") == header.count(" | ") for line in body)  # no extra column from a pipe


def test_latex_escapes_its_specials():
    assert report.escape_latex("50% of #1 & $x_{i}$ ~ ^ \\ <|>") == (
        "50\\% of \\#1 \\& \\$x\\_\\{i\\}\\$ \\textasciitilde{} \\textasciicircum{} \\textbackslash{} "
        "\\textless{}\\textbar{}\\textgreater{}"
    )
    table = pd.DataFrame({"movie": ["a_b&c"], "model": ["m%"], "n_reviews": [1], "f1": [0.5]})
    latex = report.to_latex(table)
    assert "a\\_b\\&c" in latex and "m\\%" in latex


# --- keyphrase commands: the same output rules --------------------------------------------------------------

EDGE = REPO / "tests" / "data" / "keyphrase_edge"


def test_extract_and_protocol_outputs_are_checked_before_the_work(capsys, a_file: Path):
    status, out, err = cli(capsys, "extract", str(EDGE), "--extractor", "firstphrases", "--out", str(a_file / "p.csv"))
    assert status == 2 and out == ""
    one_kweval_line(err, str(a_file / "p.csv"))
    status, out, err = cli(
        capsys,
        "evaluate",
        str(EDGE),
        "--protocol",
        "pke",
        "--predictions",
        f"fp={a_file}",
        "--out",
        str(a_file / "s.csv"),
    )
    assert status == 2 and out == ""
    one_kweval_line(err, str(a_file / "s.csv"))


@pytest.mark.parametrize("suffix", [".csv", ".parquet", ".jsonl"])
def test_extract_writes_each_format_whole(capsys, tmp_path: Path, suffix: str):
    out = tmp_path / f"p{suffix}"
    status, _, _ = cli(capsys, "extract", str(EDGE), "--extractor", "firstphrases", "--out", str(out))
    assert status == 0
    summary = tmp_path / "s.csv"
    status, _, err = cli(
        capsys, "evaluate", str(EDGE), "--protocol", "pke", "--predictions", f"fp={out}", "--out", str(summary)
    )
    assert status == 0, err
    assert pd.read_csv(summary)["model"].tolist() == ["fp"]
    assert (tmp_path / "s.csv.protocol.json").is_file()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []
