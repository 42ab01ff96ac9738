"""Prediction files given on their own (`--predictions NAME=PATH`): JSONL, or a tidy predictions table.

JSONL, one object per document, as KPEval and keyphrase-generation tools write::

    {"id": "<doc id>", "keyphrases": ["...", ...], "scores": [0.9, ...]}

`doc_id` is accepted for `id` and `predictions` for `keyphrases`; a line may
give the model's raw ``"response"`` instead, read into a list by
`kweval.data.responses` (kweval.data.response_lines: counts per decision said
in one line; abstentions, empty and unparseable responses score 0); `scores` is
optional (list order is the ranking either way); an optional `movie` (or
`collection`) names the movie when document ids alone are ambiguous.  A tidy
table (`.parquet`/`.csv`) needs `review_id` (or `doc_id`/`id`) and `keyword`;
`movie`, `rank` (default: file order) and `score` are optional.  A null
keyword is a document given with no prediction; an empty string is a
prediction "" (as in JSONL: pke and KPEval count it, docs/protocols.md) in
Parquet, while CSV cannot tell the two apart and reads an empty cell as
null.  Cells of a CSV guarded against formulas (`'=...`) are read as they
were before the guard (kweval.data.formulas).  Every bad
line, cell or file is one `Problem`; the rest is read.

Score direction travels with the predictions: a JSONL line may say
``"score_direction": "lower"`` (or ``"higher"``, the default), a table may
have a ``score_direction`` column; `kweval extract` writes it (YAKE's scores
are costs: lower).  The first value a file gives for a model is used; a line
or row that contradicts it, or a value other than higher/lower, is a problem.
The direction decides the order of the weighted metrics' scores
(`kweval.evaluation.count`), never the ranking (list order is the ranking).
"""

from __future__ import annotations

import json
import math
import numbers
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from kweval.data.dataset import (
    MODEL_COLUMNS,
    PREDICTION_COLUMNS,
    Dataset,
    Problem,
    has_surrogates,
    text_of,
)
from kweval.data.formulas import unguard_column
from kweval.data.response_lines import RESPONSE_KEY, ResponseTally, parse_value, responses_frame
from kweval.data.score_direction import DIRECTION_KEY, declared_direction, table_directions

if TYPE_CHECKING:  # pandas is imported where a table is made: `jsonl_rows` alone stays light (the --protocol path)
    import pandas as pd

JSONL_SUFFIXES = (".jsonl", ".json", ".ndjson")
TABLE_SUFFIXES = (".parquet", ".csv")
ID_KEYS = ("id", "doc_id")
KEYPHRASE_KEYS = ("keyphrases", "predictions")
MOVIE_KEYS = ("movie", "collection")
_MAX_LINE_PROBLEMS = 20  # bad lines named one by one per file; the rest are counted


def parse_spec(spec: str) -> tuple[str, Path]:
    """`NAME=PATH` -> (name, path); ValueError with a usage message otherwise."""
    name, sep, path = spec.partition("=")
    if not sep or not name.strip() or not path.strip():
        raise ValueError(f"expected NAME=PATH, got {spec!r}")
    if has_surrogates(name):
        raise ValueError(f"NAME {name.strip()!r} is not UTF-8 text")
    return name.strip(), Path(path.strip())


def _score(value) -> float:
    """A score cell as a float; NaN for anything that is not a real number (booleans included)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return math.nan
    return float(value)


def _first(obj: dict, keys: tuple[str, ...]):
    for key in keys:
        if key in obj:
            return obj[key]
    return None


def jsonl_rows(path: Path, model: str, problems: list[Problem], default_movie: str | None = None) -> list[tuple]:
    """Prediction rows (PREDICTION_COLUMNS tuples, rank order) of a JSONL file; plain Python (`jsonl_read`)."""
    return jsonl_read(path, model, problems, default_movie)[0]


def jsonl_read(
    path: Path, model: str, problems: list[Problem], default_movie: str | None = None, responses: list | None = None
) -> tuple[list[tuple], str | None]:
    """(prediction rows, declared score direction or None) of a JSONL file; plain Python.

    Rows are PREDICTION_COLUMNS tuples in rank order.  Movie is
    `default_movie` unless a line names one (None: resolved later).  An empty
    keyphrase list is one row with keyword None (a real, empty prediction);
    an empty string in a list is a keyword "" (pke and KPEval count it in |P|;
    docs/protocols.md).  The direction is the first line's ``score_direction``.
    `responses`, when given, receives each raw response's record (`RESPONSE_COLUMNS`).
    """
    rows: list[tuple] = []
    bad: list[str] = []
    seen: set[tuple] = set()
    tally = ResponseTally(keep=responses is not None)
    state: dict = {"direction": None, "replaced": [0], "non_text": [0], "tally": tally}
    try:
        handle = path.open("rb")
    except OSError as exc:
        problems.append(
            Problem(str(path), f"unreadable ({exc.strerror or type(exc).__name__}); no predictions for {model}")
        )
        return [], None
    with handle:
        for number, raw in enumerate(handle, start=1):
            line = raw.strip()
            if line:
                _jsonl_line(line, number, model, default_movie, rows, bad, seen, state)
    _report_lines(path, bad, problems)
    problems.extend(tally.problems(str(path), model))
    if responses is not None:
        responses.extend(tally.records)
    if state["non_text"][0]:
        problems.append(Problem(str(path), f"{state['non_text'][0]} keyphrase(s) that are not strings; dropped"))
    if state["replaced"][0]:
        problems.append(
            Problem(str(path), f"{state['replaced'][0]} string(s) with lone surrogates (not text); replaced by U+FFFD")
        )
    return rows, state["direction"]


def _jsonl_line(
    line: bytes,
    number: int,
    model: str,
    default_movie: str | None,
    rows: list[tuple],
    bad: list[str],
    seen: set[tuple],
    state: dict,
) -> None:
    """Append one JSONL line's rows to `rows`, or its reason to `bad`; `state`: the file's direction and counts."""
    try:
        obj = json.loads(line)
    except (ValueError, RecursionError) as exc:
        bad.append(f"line {number}: not JSON ({str(exc)[:80]}); skipped")
        return
    if not isinstance(obj, dict):
        bad.append(f"line {number}: not a JSON object; skipped")
        return
    doc = _first(obj, ID_KEYS)
    if isinstance(doc, bool) or not isinstance(doc, (str, int)) or doc == "":
        bad.append(f"line {number}: no document id (`id` or `doc_id`); skipped")
        return
    phrases = _first(obj, KEYPHRASE_KEYS)
    parsed = parse_value(obj[RESPONSE_KEY]) if phrases is None and RESPONSE_KEY in obj else None
    phrases = list(parsed.keyphrases) if parsed is not None else phrases
    if not isinstance(phrases, list):
        bad.append(f"line {number}: `keyphrases` (or `predictions`) is not a list, and no `response`; skipped")
        return
    if DIRECTION_KEY in obj:
        first = state["direction"]
        state["direction"] = declared_direction(obj[DIRECTION_KEY], f"line {number}", first, bad) or first
    scores = obj.get("scores")
    if scores is not None and (not isinstance(scores, list) or len(scores) != len(phrases)):
        bad.append(f"line {number}: `scores` is not a list as long as the keyphrases; scores ignored")
        scores = None
    movie = _first(obj, MOVIE_KEYS)
    movie = text_of(movie, state["replaced"]) if isinstance(movie, str) and movie else default_movie
    doc = text_of(str(doc), state["replaced"])
    key = (movie, doc)
    if key in seen:
        bad.append(f"line {number}: document {doc} again; the first line wins")
        return
    seen.add(key)
    if parsed is not None:
        state["tally"].add(parsed, obj[RESPONSE_KEY], number, movie, doc, model)
    before = len(rows)
    for rank, phrase in enumerate(phrases):
        if not isinstance(phrase, str):
            state["non_text"][0] += 1
            continue
        keyword = text_of(phrase, state["replaced"])  # "" is a prediction (pke, KPEval count it)
        rows.append((movie, doc, model, rank, keyword, _score(scores[rank]) if scores is not None else math.nan))
    if len(rows) == before:
        rows.append((movie, doc, model, 0, None, math.nan))  # a real, empty prediction


def read_jsonl(path: Path, model: str, problems: list[Problem], default_movie: str | None = None) -> pd.DataFrame:
    """Prediction rows of a JSONL file as a table (`jsonl_rows`)."""
    return _jsonl_frame(jsonl_read(path, model, problems, default_movie)[0])


def _jsonl_frame(rows: list[tuple]) -> pd.DataFrame:
    import pandas as pd

    frame = pd.DataFrame(rows, columns=PREDICTION_COLUMNS)
    frame["score"] = frame["score"].astype("float64")
    frame["rank"] = frame["rank"].astype("int64")
    return frame


def _report_lines(path: Path, bad: list[str], problems: list[Problem]) -> None:
    """One problem per bad line (`"line N: reason"`), the first few by name and the rest counted."""
    for message in bad[:_MAX_LINE_PROBLEMS]:
        where, reason = message.split(": ", 1)
        problems.append(Problem(f"{path}: {where}", reason))
    if len(bad) > _MAX_LINE_PROBLEMS:
        problems.append(Problem(str(path), f"{len(bad) - _MAX_LINE_PROBLEMS} more bad line(s) skipped"))


def read_table(
    path: Path, model: str | None, problems: list[Problem], default_movie: str | None = None
) -> pd.DataFrame:
    """Prediction rows of a tidy table; `model` (when given) names every row's model (`table_read`)."""
    return table_read(path, model, problems, default_movie)[0]


def table_read(
    path: Path, model: str | None, problems: list[Problem], default_movie: str | None = None
) -> tuple[pd.DataFrame, dict[str, str]]:
    """(prediction rows, {model: declared score direction}) of a tidy table.

    `model` (when given) names every row's model.  The directions come from
    an optional ``score_direction`` column: each model's first value.
    """
    import numpy as np
    import pandas as pd

    try:
        frame = pd.read_csv(path, dtype=str, keep_default_na=False) if path.suffix == ".csv" else pd.read_parquet(path)
    except Exception as exc:  # an unreadable table is a data problem
        problems.append(Problem(str(path), f"unreadable ({type(exc).__name__}: {str(exc)[:200]}); skipped"))
        return _empty(), {}
    csv = path.suffix == ".csv"
    if csv:  # cells kweval's CSV writers guarded against formulas read as they were written
        frame = frame.apply(unguard_column)
    doc_col = next((c for c in ("review_id", "doc_id", "id") if c in frame.columns), None)
    if doc_col is None or "keyword" not in frame.columns or (model is None and "model" not in frame.columns):
        needs = "review_id (or doc_id/id), keyword" + ("" if model is not None else ", model")
        problems.append(Problem(str(path), f"lacks column(s) among {needs}; skipped"))
        return _empty(), {}
    n = len(frame)
    movie = frame["movie"].astype(object) if "movie" in frame.columns else pd.Series([default_movie] * n, dtype=object)
    rank = (
        pd.to_numeric(frame["rank"], errors="coerce")
        if "rank" in frame.columns
        else pd.Series(np.arange(n), dtype="float64")
    )
    score = (
        pd.to_numeric(frame["score"], errors="coerce") if "score" in frame.columns else pd.Series(np.full(n, math.nan))
    )
    out = pd.DataFrame(
        {
            "movie": movie.where(movie.map(lambda v: isinstance(v, str) and v != ""), default_movie).astype(object),
            "review_id": frame[doc_col]
            .map(lambda v: None if v is None or (isinstance(v, float) and math.isnan(v)) or v == "" else str(v))
            .astype(object),
            "model": model if model is not None else frame["model"].astype(object),
            "rank": rank,
            "keyword": frame["keyword"]
            .map(lambda v: v if isinstance(v, str) and (v or not csv) else None)
            .astype(object),
            "score": score.astype("float64"),
        }
    )
    directions = table_directions(out["model"], frame.get(DIRECTION_KEY), path, problems)
    bad = (
        out["review_id"].isna()
        | out["rank"].isna()
        | (out["rank"] < 0)
        | out["model"].map(lambda v: not isinstance(v, str) or v == "")
    )
    if bad.any():
        problems.append(
            Problem(str(path), f"{int(bad.sum())} row(s) without a document id, model or valid rank; dropped")
        )
        out = out[~bad]
    out["rank"] = out["rank"].astype("int64")
    out = out.sort_values(["movie", "review_id", "model", "rank"], kind="stable", na_position="first")
    return out.reset_index(drop=True), directions


def read_predictions(
    path: Path, model: str | None, problems: list[Problem], default_movie: str | None = None
) -> pd.DataFrame:
    """Prediction rows of one file, JSONL or tidy table by its suffix (`read_prediction_file`)."""
    return read_prediction_file(path, model, problems, default_movie)[0]


def read_prediction_file(
    path: Path,
    model: str | None,
    problems: list[Problem],
    default_movie: str | None = None,
    responses: list | None = None,
) -> tuple[pd.DataFrame, dict[str, str]]:
    """(prediction rows, {model: the score direction the file declares}) of one file, JSONL or tidy table by its
    suffix; a problem (and no rows) for anything else.  A model the file says nothing about is not in the dict.
    `responses` receives the records of a JSONL file's raw responses (`jsonl_read`)."""
    suffix = path.suffix.lower()
    if not path.exists():
        problems.append(Problem(str(path), "no such file; no predictions read from it"))
        return _empty(), {}
    if suffix in JSONL_SUFFIXES:
        name = path.stem if model is None else model
        rows, direction = jsonl_read(path, name, problems, default_movie, responses)
        return _jsonl_frame(rows), ({name: direction} if direction is not None else {})
    if suffix in TABLE_SUFFIXES:
        return table_read(path, model, problems, default_movie)
    problems.append(
        Problem(str(path), f"not a predictions file (expected {', '.join(JSONL_SUFFIXES + TABLE_SUFFIXES)}); ignored")
    )
    return _empty(), {}


def _empty() -> pd.DataFrame:
    import pandas as pd

    frame = pd.DataFrame({c: pd.Series(dtype="object") for c in PREDICTION_COLUMNS})
    frame["rank"] = frame["rank"].astype("int64")
    frame["score"] = frame["score"].astype("float64")
    return frame


def _resolve_movies(rows: pd.DataFrame, reviews: pd.DataFrame, source: str, problems: list[Problem]) -> pd.DataFrame:
    """Rows without a movie get the movie of the review with that id, when exactly one has it; others are dropped,
    reported."""
    missing = rows["movie"].isna()
    if not missing.any():
        return rows
    counts = reviews.groupby("review_id", sort=False)["movie"].agg(["first", "size"])
    unique = counts[counts["size"] == 1]["first"]
    movie = rows.loc[missing, "review_id"].map(unique)
    rows = rows.copy()
    rows.loc[missing, "movie"] = movie
    unresolved = rows["movie"].isna()
    if unresolved.any():
        ids = rows.loc[unresolved, "review_id"].drop_duplicates()
        problems.append(
            Problem(
                source,
                f"{len(ids)} document id(s) not found in the dataset, or in several of its collections (e.g. "
                f"{ids.iloc[0]}); their predictions are skipped",
            )
        )
        rows = rows[~unresolved]
    return rows


def attach_predictions(dataset: Dataset, files: Mapping[str, Path]) -> Dataset:
    """`dataset` with each model's predictions read from its file ({model name: path}), in that order.

    Each model's score direction is the one its file declares (else the
    replaced model's, else higher).  A model the dataset already has is replaced (noted).  Documents the
    dataset does not know are reported and skipped.
    """
    import pandas as pd

    problems = list(dataset.problems)
    movies = dataset.movies["movie"].tolist()
    default_movie = movies[0] if len(movies) == 1 else None
    frames = [dataset.predictions]
    unusable: set[str] = set()
    replaced = [m for m in files if m in set(dataset.models["model"])]
    for name in replaced:
        problems.append(Problem(f"--predictions {name}", "replaces the model of the same name in the dataset"))
    if replaced:
        frames = [dataset.predictions[~dataset.predictions["model"].isin(replaced)]]
    directions = dict(zip(dataset.models["model"], dataset.models["score_direction"]))
    responses = [] if dataset.responses is None else [dataset.responses[~dataset.responses["model"].isin(files)]]
    for name, path in files.items():
        records: list[tuple] = []
        rows, declared = read_prediction_file(Path(path), name, problems, default_movie, records)
        directions[name] = declared.get(name, directions.get(name, "higher"))
        rows = rows.assign(model=name)
        rows = _resolve_movies(rows, dataset.reviews, str(path), problems)
        known = set(zip(dataset.reviews["movie"], dataset.reviews["review_id"]))
        if known and len(rows):
            inside = pd.Series([pair in known for pair in zip(rows["movie"], rows["review_id"])], index=rows.index)
            if not inside.all():
                ids = rows.loc[~inside, "review_id"].drop_duplicates()
                problems.append(
                    Problem(str(path), f"{len(ids)} document id(s) not in the dataset (e.g. {ids.iloc[0]}); skipped")
                )
                rows = rows[inside]
        if rows.empty:  # not a model that predicted nothing: nothing was read for it
            problems.append(Problem(str(path), f"no usable predictions; model {name} not evaluated"))
            unusable.add(name)
        frames.append(rows)
        responses += [responses_frame(records, rows)] if records else []
    predictions = pd.concat([f for f in frames if len(f)] or frames[:1], ignore_index=True)
    model_order = [m for m in dataset.models["model"] if m not in files] + [m for m in files if m not in unusable]
    models = pd.DataFrame(
        {"model": model_order, "score_direction": [directions.get(m, "higher") for m in model_order]},
        columns=MODEL_COLUMNS,
    )
    return Dataset(
        dataset.movies,
        dataset.reviews,
        predictions[PREDICTION_COLUMNS].reset_index(drop=True),
        dataset.ground_truth,
        models,
        problems,
        dataset.source,
        pd.concat(responses, ignore_index=True) if responses else None,
    )


def prediction_lists(path: Path, model: str, problems: list[Problem]) -> dict[str, list[str]]:
    """{document id: keyphrases in rank order} of one model's file, as the `--protocol` presets take them.

    The rows are `read_predictions`'s (same rules and messages); a JSONL file
    is read without pandas.  In a table that names several models, the rows of
    `model` are kept when it is one of them.  An empty string in a JSONL list
    is kept (each preset decides, as its tool does: pke and KPEval count it);
    a document given with none has an empty list.
    """
    if path.suffix.lower() in JSONL_SUFFIXES and path.exists():
        rows = jsonl_rows(path, model, problems)
    else:
        attempt: list[Problem] = []
        table = read_predictions(path, None, attempt)
        if not len(table) or model not in set(table["model"]):
            table = read_predictions(path, model, problems)
        else:
            problems.extend(attempt)
            table = table[table["model"] == model]
        table = table.sort_values(["review_id", "rank"], kind="stable")
        rows = list(table[PREDICTION_COLUMNS].itertuples(index=False, name=None))
    out: dict[str, list[str]] = {}
    for _movie, doc, _model, _rank, keyword, _score in rows:
        phrases = out.setdefault(doc, [])
        if isinstance(keyword, str):
            phrases.append(keyword)
    return out
