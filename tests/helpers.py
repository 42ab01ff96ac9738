"""Where the test data lives, and small builders for datasets made inside tests."""

from __future__ import annotations

import contextlib
import io
import json
import math
import os
import shutil
import subprocess
import threading
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from kweval.data.dataset import Dataset

REPO = Path(__file__).resolve().parents[1]
# Data too big (or not ours) to ship in the repository: CI checks it out as ../shared beside the clone;
# KWEVAL_SHARED points elsewhere.  Tests that read it are marked (see conftest.py).
SHARED = Path(os.environ.get("KWEVAL_SHARED") or REPO.parent / "shared")
DNLP = SHARED / "data" / "dnlp" / "Dataset"
SEMEVAL = SHARED / "data" / "keyphrase" / "SemEval2017"  # docsutf8/ + keys/ (issue 12)
# Inspec (test) in the keyphrase-generation JSON layout: data/inspec/inspec_test.json of the public repository
# EMBEDDIA/tnt_kid, fetched by hand (not ours to ship; not part of ../shared yet): $KWEVAL_INSPEC or beside SemEval2017.
INSPEC = Path(os.environ.get("KWEVAL_INSPEC") or SHARED / "data" / "keyphrase" / "inspec_test.json")


def calls_by_thread(monkeypatch, module, name: str) -> list[str]:
    """The names of the threads that call `module.name` from now on, one item per call (a look-ahead's calls are
    its worker's, "kweval-look-ahead-…")."""
    calls: list[str] = []
    real = getattr(module, name)
    monkeypatch.setattr(module, name, lambda *a, **kw: calls.append(threading.current_thread().name) or real(*a, **kw))
    return calls


def make_dataset(
    gt: dict[str, list[str]],
    preds: dict[tuple[str, str, str], list | None],
    directions: dict[str, str] | None = None,
    texts: dict[tuple[str, str], str] | None = None,
) -> Dataset:
    """A Dataset from plain Python: gt[movie] = ranked keywords; preds[(movie, review, model)] = [(kw, score)] or
    None."""
    rows = []
    for (movie, review, model), entries in preds.items():
        if entries is None:
            continue
        if len(entries) == 0:
            rows.append((movie, review, model, 0, None, math.nan))
        for rank, entry in enumerate(entries):
            kw, score = entry
            rows.append(
                (
                    movie,
                    review,
                    model,
                    rank,
                    kw if isinstance(kw, str) else None,
                    score if isinstance(score, (int, float)) else math.nan,
                )
            )
    predictions = pd.DataFrame(rows, columns=["movie", "review_id", "model", "rank", "keyword", "score"])
    predictions["score"] = predictions["score"].astype("float64")
    gt_rows = [(m, r, kw, np.nan, np.nan) for m, kws in gt.items() for r, kw in enumerate(kws)]
    ground_truth = pd.DataFrame(gt_rows, columns=["movie", "rank", "keyword", "helpful", "not_helpful"])
    movies = list(dict.fromkeys([m for m, _, _ in preds] + list(gt)))
    reviews = pd.DataFrame(
        [(m, r, (texts or {}).get((m, r)), None, np.nan) for m, r in dict.fromkeys((m, r) for m, r, _ in preds)],
        columns=["movie", "review_id", "text", "title", "rating"],
    )
    models = list(dict.fromkeys(md for _, _, md in preds))
    return Dataset(
        movies=pd.DataFrame({"movie": movies, "title": movies}),
        reviews=reviews,
        predictions=predictions,
        ground_truth=ground_truth,
        models=pd.DataFrame(
            {"model": models, "score_direction": [(directions or {}).get(m, "higher") for m in models]}
        ),
    )


def write_bad_dnlp(tmp_path: Path) -> Path:
    """A small DNLP folder with every kind of malformed file and cell; returns its Dataset/ folder."""
    root = tmp_path / "Dataset"
    (root / "Extracted_Keywords").mkdir(parents=True)
    (root / "Reviews_By_Movie").mkdir()
    gt = pd.DataFrame(
        {
            "Movie_ID": ["tt1"] * 3 + ["tt2"] * 2,
            "Keyword": ["fraud", "poverty", "scam", "alpha", "beta"],
            "Helpful": [3, 2, 1, 5, 4],
            "Not_Helpful": [0, 0, 0, 0, 0],
        }
    )
    gt.to_pickle(root / "keywords_ground_truth.pkl")
    good = pd.DataFrame(
        {
            "Movie_ID": ["tt1"] * 6,
            "Review_ID": ["r1", "r2", "r3", "r4", "r5", "r6"],
            "Preprocessed_Review": ["a scam", "poverty", None, "x", "y", "z"],
            "keywords_base": [
                [("scam", 0.9), ("family", 0.5)],  # fine
                [],  # empty: scores 0
                None,  # missing: skipped
                "not a list",  # malformed cell: skipped and named
                [("fraud", "high"), (None, 0.3), ("poverty",), 42],  # bad entries and scores
                [("FRAUD!", np.float32(0.7)), ("fraud", 0.6)],  # duplicate after normalization
            ],
        }
    )
    good.to_pickle(root / "Extracted_Keywords" / "kw_Good.pkl")
    pd.DataFrame({"Movie_ID": ["tt2"], "Review_ID": ["q1"], "keywords_base": [[("alpha", 1.0)]]}).to_pickle(
        root / "Extracted_Keywords" / "kw_Other.pkl"
    )
    (root / "Extracted_Keywords" / "kw_Corrupt.pkl").write_bytes(b"this is not a pickle")
    pd.DataFrame({"Review_ID": ["z"]}).to_pickle(root / "Extracted_Keywords" / "kw_NoModels.pkl")
    pd.DataFrame().to_pickle(root / "Extracted_Keywords" / "kw_Empty.pkl")
    pd.DataFrame({"Movie_ID": ["tt9"], "Review_ID": ["n1"], "keywords_base": [[("x", 1.0)]]}).to_pickle(
        root / "Extracted_Keywords" / "kw_NoGT.pkl"
    )
    (root / "Reviews_By_Movie" / "Good.pkl").write_bytes(b"\x80\x04garbage")
    return root


def write_tables(folder: Path, fmt: str = "csv", **tables: pd.DataFrame) -> Path:
    """Write each table as `<name>.csv` or `<name>.parquet` into `folder` (the tidy layout); returns `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, frame in tables.items():
        if fmt == "csv":
            frame.to_csv(folder / f"{name}.csv", index=False)
        else:
            frame.to_parquet(folder / f"{name}.parquet", index=False)
    return folder


EDGE = Path(__file__).parent / "data" / "keyphrase_edge"  # a small docsutf8/ + keys/ collection (six documents)
EDGE_LISTS = [
    json.loads(line) for line in (EDGE.parent / "keyphrase_edge_predictions.jsonl").read_text().splitlines()
]  # one model's keyphrase lists of EDGE's documents


def edge_jsonl(reverse: bool = False) -> str:
    """EDGE's keyphrase lists as a JSONL file's text (each list reversed: a second model)."""
    lines = [{"id": x["id"], "keyphrases": x["keyphrases"][::-1] if reverse else x["keyphrases"]} for x in EDGE_LISTS]
    return "".join(json.dumps(x) + "\n" for x in lines)


def edge_collection(folder: Path, models: dict[str, bool] | None = None) -> Path:
    """A copy of EDGE at `folder` with one file per model in predictions/ ({model: reversed?}; default "first" and
    "reversed"), as kweval.data.beside reads them."""
    shutil.copytree(EDGE, folder)
    (folder / "predictions").mkdir()
    for name, reverse in (models or {"first": False, "reversed": True}).items():
        (folder / "predictions" / f"{name}.jsonl").write_text(edge_jsonl(reverse), encoding="utf-8")
    return folder


def run_in_process(
    *args: str, env_extra: dict[str, str | None] | None = None, cwd: Path = REPO
) -> subprocess.CompletedProcess:
    """`kweval ARGS` run through `kweval.cli.main` in this process, as `subprocess.run(..., capture_output=True,
    text=True)` would report it: exit status (argparse's SystemExit included), stdout and stderr.

    For tests about what the command says and returns, not about the process itself: a fresh interpreter costs
    2-3 s of CPU (pandas, numpy) per call.  `env_extra` is set for the call (a None value unsets the variable) and
    restored after; the call runs in the folder `cwd`.
    """
    from kweval.cli import main

    out, err = io.TextIOWrapper(io.BytesIO(), encoding="utf-8"), io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
    saved = {name: os.environ.get(name) for name in (env_extra or {})}
    _set_environment(env_extra or {})
    try:
        with contextlib.chdir(cwd), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            with warnings.catch_warnings(record=True) as caught:
                _python_default_warning_filters()
                try:
                    status = main(list(args))
                except SystemExit as exc:  # argparse: --help, a usage error
                    status = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    finally:
        _set_environment(saved)
    for w in caught:  # on stderr, as a process of its own prints them
        err.write(warnings.formatwarning(w.message, w.category, w.filename, w.lineno, w.line))
    texts = []
    for stream in (out, err):
        stream.flush()
        texts.append(stream.buffer.getvalue().decode("utf-8"))  # type: ignore[attr-defined]
    return subprocess.CompletedProcess(["kweval", *args], status, texts[0], texts[1])


def _python_default_warning_filters() -> None:
    """The warning filters of a plain `python` process (pytest's own are replaced for the call)."""
    warnings.resetwarnings()
    warnings.filterwarnings("default", category=DeprecationWarning, module="__main__", append=True)
    for category in (DeprecationWarning, PendingDeprecationWarning, ImportWarning, ResourceWarning):
        warnings.filterwarnings("ignore", category=category, append=True)


def _set_environment(values: dict[str, str | None]) -> None:
    """Set each variable of `values` in os.environ, unsetting those whose value is None."""
    for name, value in values.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value
