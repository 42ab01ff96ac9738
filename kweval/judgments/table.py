"""Judgments as a table: read from a store or a CSV/Parquet file, checked against a dataset (docs/metrics.md §11).

A judgments table has `movie, review_id, keyword, grade, annotator` (and,
from the store, `id, norm, side, time`); an empty `review_id` judges the
keyword for every review of the movie.  `checked` keeps what can be used and
says, one line per kind, what was dropped and why: a grade outside 0–3, an
unknown movie, review or keyword (neither a GT keyword of the movie nor a
prediction for the review).  Nothing is dropped silently.
"""

from __future__ import annotations

import unicodedata
from pathlib import Path

import numpy as np
import pandas as pd

from kweval.data.dataset import Dataset, Problem
from kweval.judgments.store import COLUMNS, GRADES, JudgmentsError, read_store
from kweval.text.normalize import normalize_many

REQUIRED = ("movie", "review_id", "keyword", "grade", "annotator")
SQLITE_SUFFIXES = (".sqlite", ".sqlite3", ".db")


def shown(text: object, limit: int = 60) -> str:
    """`text` quoted, with controls, newlines and bidi/format characters escaped (safe on a terminal), cut at
    `limit`."""
    out = "".join(
        f"\\u{ord(c):04x}" if unicodedata.category(c)[0] in "CZ" and c != " " else c for c in str(text)[:limit]
    )
    return f"'{out}{'…' if len(str(text)) > limit else ''}'"


def load_judgments(path: str | Path, content_hash: str | None = None) -> pd.DataFrame:
    """Every judgment of a store (`.sqlite`, `.db`, or any SQLite file) or a CSV/Parquet table, as `COLUMNS`.

    Raises `JudgmentsError` for a file that cannot be read at all (missing, damaged, locked, of another dataset).
    """
    path = Path(path)
    if not path.is_file():
        raise JudgmentsError(str(path), "no such file")
    if path.suffix.lower() in (".csv", ".parquet"):
        return _read_table(path)
    with open(path, "rb") as handle:
        is_sqlite = handle.read(16) == b"SQLite format 3\x00"
    if not is_sqlite and path.suffix.lower() not in SQLITE_SUFFIXES:
        raise JudgmentsError(str(path), "not a judgments file: expected a SQLite store, .csv or .parquet")
    return read_store(path, content_hash)


def _read_table(path: Path) -> pd.DataFrame:
    try:
        if path.suffix.lower() == ".csv":
            frame = pd.read_csv(path, dtype=str, keep_default_na=False)
        else:
            frame = pd.read_parquet(path)
    except Exception as exc:  # a damaged file: pandas and pyarrow raise many kinds
        raise JudgmentsError(str(path), f"cannot read the table ({type(exc).__name__}: {exc})") from None
    missing = [c for c in REQUIRED if c not in frame.columns]
    if missing:
        raise JudgmentsError(str(path), f"missing column(s) {', '.join(missing)} (needs {', '.join(REQUIRED)})")
    out = pd.DataFrame({"id": np.arange(1, len(frame) + 1)})
    for column in ("movie", "review_id", "keyword", "annotator"):
        values = frame[column].astype(object).where(frame[column].notna(), None).tolist()
        out[column] = pd.Series([None if v is None or str(v) == "" else str(v) for v in values], dtype=object)
    out["norm"] = normalize_many([k if isinstance(k, str) else "" for k in out["keyword"]])
    out["side"] = frame["side"].astype(str).tolist() if "side" in frame.columns else "prediction"
    out["grade"] = frame["grade"].astype(object).tolist()
    out["time"] = frame["time"].astype(str).tolist() if "time" in frame.columns else ""
    return out[COLUMNS]


def _integer_grade(value: object) -> float:
    """The grade as a number if it is a whole number within 0–3, else NaN."""
    try:
        number = float(str(value).strip()) if isinstance(value, str) else float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return float("nan")
    return number if number in GRADES else float("nan")


def checked(judgments: pd.DataFrame, dataset: Dataset, source: str) -> tuple[pd.DataFrame, list[Problem]]:
    """The judgments the dataset can use (grade an int 0–3, a known movie, review and keyword), and one problem per
    kind of judgment dropped."""
    frame = judgments.copy()
    raw_grade = frame["grade"].tolist()
    frame["grade"] = [_integer_grade(g) for g in raw_grade]
    problems: list[Problem] = []
    reasons = [
        ("with a grade outside 0–3 or not a whole number", frame["grade"].isna().to_numpy()),
        ("without a keyword or an annotator", _blank(frame["norm"]) | _blank(frame["annotator"])),
    ]
    movies = set(dataset.movies["movie"].astype(str))
    reasons.append(
        ("for a movie not evaluated (unknown, or not selected)", ~frame["movie"].astype(str).isin(movies).to_numpy())
    )
    known_reviews = set(zip(dataset.reviews["movie"].astype(str), dataset.reviews["review_id"].astype(str)))
    pred = dataset.predictions
    known_reviews |= set(zip(pred["movie"].astype(str), pred["review_id"].astype(str)))
    has_review = frame["review_id"].notna().to_numpy()
    pairs = zip(frame["movie"].astype(str), frame["review_id"].astype(str))
    unknown_review = has_review & ~np.array([p in known_reviews for p in pairs], dtype=bool)
    reasons.append(("for an unknown review", unknown_review))
    unknown_keyword = ~_known_keyword(frame, dataset)
    reasons.append(("for a keyword that is neither a GT keyword nor a prediction there", unknown_keyword))
    dropped = np.zeros(len(frame), dtype=bool)
    for reason, bad in reasons:
        new = bad & ~dropped
        if new.any():
            at = int(np.flatnonzero(new)[0])
            first = frame.iloc[at]
            example = f"movie {shown(first['movie'])}, keyword {shown(first['keyword'])}, grade {shown(raw_grade[at])}"
            if pd.notna(first["review_id"]):
                example = example.replace(", keyword", f", review {shown(first['review_id'])}, keyword")
            problems.append(Problem(source, f"{int(new.sum())} judgment(s) {reason} were ignored (first: {example})"))
        dropped |= bad
    kept = frame[~dropped].copy()
    kept["grade"] = kept["grade"].astype(np.int64)
    return kept.reset_index(drop=True), problems


def _blank(values: pd.Series) -> np.ndarray:
    return np.array([not isinstance(v, str) or not v.strip() for v in values], dtype=bool)


def _known_keyword(frame: pd.DataFrame, dataset: Dataset) -> np.ndarray:
    """Per judgment: its keyword is one of the movie's GT keywords or a prediction for its review (for any review of
    the movie when it judges the whole movie), compared normalized."""
    movies = set(frame["movie"].astype(str))
    gt = dataset.ground_truth
    gt = gt[gt["movie"].astype(str).isin(movies)]
    gt_known = set(zip(gt["movie"].astype(str), normalize_many(gt["keyword"].tolist())))
    pred = dataset.predictions
    pred = pred[pred["movie"].astype(str).isin(movies)]
    pred_norm = normalize_many(pred["keyword"].tolist())
    pred_movie = set(zip(pred["movie"].astype(str), pred_norm))
    pred_review = set(zip(pred["movie"].astype(str), pred["review_id"].astype(str), pred_norm))
    out = []
    for movie, review, norm in zip(frame["movie"].astype(str), frame["review_id"], frame["norm"]):
        seen = (movie, norm) in gt_known
        seen = seen or ((movie, norm) in pred_movie if pd.isna(review) else (movie, str(review), norm) in pred_review)
        out.append(seen)
    return np.array(out, dtype=bool)
