"""GT loading and cleaning on integer codes equal their plain pandas definitions.

The tidy reader reads ground_truth.parquet through Arrow (codes, one Python
string per distinct value) and `evaluate.clean_ground_truth` sorts by codes,
skipping the sort when rows come in order and finding repeats by a sort.
Each fast path is checked here against the plain definition it replaces:
pandas `sort_values` / `groupby` on the strings themselves, `duplicated`,
`np.lexsort` and `pd.factorize(sort=True)` — on hostile tables (missing,
empty and non-text cells, numeric ids, fractional, negative and boolean
ranks, unsorted rows), from Parquet and from CSV.
"""

from __future__ import annotations

import functools
import io
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kweval._arrays import repeated, sort_key, stable_order
from kweval.data.dataset import Dataset
from kweval.data.tidy import read_tidy_tables
from kweval.data.tidy_tables import unranked_movies
from kweval.evaluation.clean import clean_ground_truth, clean_stage
from kweval.text.normalize import normalize

# ---- the plain definitions -------------------------------------------------------------------------------


def _plain_keys(column: pd.Series) -> pd.Series:
    """A key column as text: NA and the empty string are no value (None)."""
    return pd.Series(
        [v if isinstance(v, str) and v != "" else None for v in column.astype("string").tolist()], dtype=object
    )


def plain_tidy_ground_truth(frame: pd.DataFrame) -> tuple[pd.DataFrame, int, int]:
    """The tidy reader's GT rule on pandas' reading of the file: (table, rows dropped, non-text keyword cells)."""
    out = pd.DataFrame(
        {
            "movie": _plain_keys(frame["movie"]),
            "rank": pd.to_numeric(frame["rank"], errors="coerce"),
            "keyword": pd.Series([v if isinstance(v, str) else None for v in frame["keyword"].tolist()], dtype=object),
            "helpful": pd.to_numeric(frame["helpful"], errors="coerce") if "helpful" in frame else np.nan,
            "not_helpful": pd.to_numeric(frame["not_helpful"], errors="coerce") if "not_helpful" in frame else np.nan,
        }
    )
    lists = ["movie"]
    if "review_id" in frame:
        out["review_id"] = _plain_keys(frame["review_id"])
        out["_doc"] = out["review_id"].fillna("")
        lists = ["movie", "_doc"]
    bad = out["movie"].isna() | out["rank"].isna()
    not_text = frame["keyword"].map(
        lambda v: not (isinstance(v, str) or v is None or v is pd.NA or (isinstance(v, float) and math.isnan(v)))
    )
    out = out[~bad].sort_values(lists + ["rank"], kind="stable")
    out["rank"] = out.groupby(lists, sort=False).cumcount().astype("int64")
    return out.drop(columns=["_doc"], errors="ignore").reset_index(drop=True), int(bad.sum()), int(not_text.sum())


def plain_unranked(frame: pd.DataFrame) -> set[str]:
    """Movies whose every GT list has at most one distinct rank (rows with a movie, before any is dropped)."""
    rank = pd.to_numeric(frame["rank"], errors="coerce")
    keys = [frame["movie"].astype("string")] + (
        [frame["review_id"].astype("string").fillna("")] if "review_id" in frame else []
    )
    per_movie = rank.groupby(keys, sort=False).nunique(dropna=True).groupby(level=0, sort=False).max()
    return {str(m) for m, n in per_movie.items() if n <= 1}


def plain_clean_ground_truth(gt: pd.DataFrame, order: str = "file") -> pd.DataFrame:
    """docs/metrics.md §1 on the strings, in plain Python: sort each list (stable), normalize, drop empty and repeated
    keywords, re-rank."""
    n = len(gt)
    ids = gt["review_id"].tolist() if "review_id" in gt else [None] * n
    doc = [None if v is None or v is pd.NA or (isinstance(v, float) and v != v) or v == "" else str(v) for v in ids]
    movie, keyword, rank = gt["movie"].tolist(), gt["keyword"].tolist(), gt["rank"].tolist()
    if order == "helpful":  # most helpful first, then least unhelpful; a missing count reads as 0
        helpful = (-pd.to_numeric(gt["helpful"], errors="coerce").fillna(0.0)).tolist()
        not_helpful = pd.to_numeric(gt["not_helpful"], errors="coerce").fillna(0.0).tolist()
        votes = [(helpful[i], not_helpful[i]) for i in range(n)]
    else:
        votes = [()] * n
    rows = sorted(range(n), key=lambda i: (movie[i], doc[i] or "", *votes[i], rank[i]))
    seen: set[tuple] = set()
    size: dict[tuple, int] = {}
    out = []
    for i in rows:
        norm = normalize(keyword[i]) if isinstance(keyword[i], str) else ""
        key = (movie[i], doc[i] or "")
        if norm == "" or (*key, norm) in seen:
            continue
        seen.add((*key, norm))
        size[key] = size.get(key, 0) + 1
        out.append((movie[i], size[key] - 1, keyword[i], norm, doc[i]))
    columns = list(zip(*out)) if out else [()] * 5
    return pd.DataFrame(
        {
            "movie": list(columns[0]),
            "rank": np.array(columns[1], dtype="int64"),
            "keyword": list(columns[2]),
            "norm": list(columns[3]),
            "review_id": list(columns[4]),
        }
    )


# ---- hostile GT tables --------------------------------------------------------------------------------------

_TEXTS = ["a", "b", "", "B", "é", "a b", "A!", "10", "9", None]


@st.composite
def gt_tables(draw) -> pd.DataFrame:
    n = draw(st.integers(1, 14))  # an empty table is skipped whole (tests/test_data_and_cli.py)
    texts = st.lists(st.sampled_from(_TEXTS), min_size=n, max_size=n)
    columns: dict[str, object] = {}
    movie_kind = draw(st.sampled_from(["text", "text", "int"]))
    columns["movie"] = (
        draw(texts) if movie_kind == "text" else draw(st.lists(st.integers(0, 2), min_size=n, max_size=n))
    )
    rank_kind = draw(st.sampled_from(["int", "float", "nullable", "bool"]))
    if rank_kind == "int":
        columns["rank"] = draw(st.lists(st.integers(-1, 3), min_size=n, max_size=n))
    elif rank_kind == "float":
        columns["rank"] = draw(st.lists(st.sampled_from([0.0, 0.5, 1.0, 2.0, -1.0, math.nan]), min_size=n, max_size=n))
    elif rank_kind == "nullable":
        columns["rank"] = pd.array(
            draw(st.lists(st.sampled_from([0, 1, 2, None]), min_size=n, max_size=n)), dtype="Int64"
        )
    else:
        columns["rank"] = draw(st.lists(st.booleans(), min_size=n, max_size=n))
    keyword_kind = draw(st.sampled_from(["text", "text", "number", "list"]))
    if keyword_kind == "text":
        columns["keyword"] = draw(texts)
    elif keyword_kind == "number":
        columns["keyword"] = draw(st.lists(st.sampled_from([1.0, 2.5, math.nan]), min_size=n, max_size=n))
    else:
        columns["keyword"] = pd.Series(
            draw(st.lists(st.sampled_from([None, ("x",)]), min_size=n, max_size=n)), dtype=object
        ).map(lambda v: list(v) if v else None)
    if draw(st.booleans()):
        review_kind = draw(st.sampled_from(["text", "text", "int"]))
        columns["review_id"] = (
            draw(texts)
            if review_kind == "text"
            else draw(st.lists(st.sampled_from([1, 2, None]), min_size=n, max_size=n))
        )
    if draw(st.booleans()):
        columns["helpful"] = draw(st.lists(st.sampled_from([0, 1, 2, math.nan]), min_size=n, max_size=n))
        columns["not_helpful"] = draw(st.lists(st.sampled_from([0, 1, math.nan]), min_size=n, max_size=n))
    return pd.DataFrame(columns)


def _tidy_files(gt: pd.DataFrame, fmt: str) -> dict[str, bytes] | None:
    buffer = io.BytesIO()
    try:
        gt.to_parquet(buffer) if fmt == "parquet" else gt.to_csv(buffer, index=False)
    except Exception:  # a mix pyarrow cannot store: no such file exists
        return None
    return {f"ground_truth.{fmt}": buffer.getvalue(), "predictions.parquet": _one_prediction()}


@functools.cache
def _one_prediction() -> bytes:
    """A predictions file of one row (the same bytes beside every GT table: written once)."""
    predictions = io.BytesIO()
    pd.DataFrame(
        {"movie": ["b"], "review_id": ["r"], "model": ["m"], "rank": [0], "keyword": ["k"], "score": [1.0]}
    ).to_parquet(predictions)
    return predictions.getvalue()


def _ids(column: pd.Series) -> list:
    return [None if v is None or v != v else v for v in column]  # missing: None or NaN, by the column's dtype


# ---- the tests ------------------------------------------------------------------------------------------------


@pytest.mark.slow  # 200 tables written and read back (~10 s)
@settings(max_examples=200, deadline=None)
@given(gt=gt_tables(), fmt=st.sampled_from(["parquet", "csv"]))
def test_tidy_ground_truth_read_as_codes_equals_the_pandas_rule(gt: pd.DataFrame, fmt: str):
    files = _tidy_files(gt, fmt)
    if files is None:
        return
    as_pandas = (
        pd.read_parquet(io.BytesIO(files["ground_truth.parquet"]))
        if fmt == "parquet"
        else pd.read_csv(
            io.BytesIO(files["ground_truth.csv"]), dtype={c: "string" for c in ("movie", "review_id", "keyword")}
        )
    )
    expected, n_dropped, n_not_text = plain_tidy_ground_truth(as_pandas)
    dataset = read_tidy_tables(files)
    pd.testing.assert_frame_equal(dataset.ground_truth, expected, check_exact=True)
    for column in ("movie", "keyword", "review_id"):
        if column in expected:  # text stays Python str (one object per distinct value), no value stays None
            assert [type(v) for v in dataset.ground_truth[column]] == [type(v) for v in expected[column]]
    reasons = [p.reason for p in dataset.problems if p.source == "ground_truth"]
    assert (f"{n_dropped} row(s) without movie or rank; dropped" in reasons) == (n_dropped > 0)
    assert any(f"{n_not_text} keyword cell(s) are not text" in r for r in reasons) == (n_not_text > 0)
    unranked = plain_unranked(as_pandas)
    assert unranked_movies(as_pandas) == unranked
    ranked = dict(zip(dataset.movies["movie"], dataset.movies["ranked"])) if "ranked" in dataset.movies else {}
    assert ranked == ({m: m not in unranked for m in dataset.movies["movie"]} if unranked else {})


def test_pandas_index_columns_stay_out_of_the_ground_truth():
    """A GT table saved with review_id as its pandas index is read as pd.read_parquet reads it: movie-level lists."""
    gt = pd.DataFrame(
        {"movie": ["a", "a"], "rank": [0, 1], "keyword": ["x", "y"]}, index=pd.Index(["r1", "r2"], name="review_id")
    )
    dataset = read_tidy_tables(_tidy_files(gt, "parquet"))
    assert "review_id" not in dataset.ground_truth and dataset.ground_truth["keyword"].tolist() == ["x", "y"]


@pytest.mark.slow  # 200 tables (~10 s)
@settings(max_examples=200, deadline=None)
@given(gt=gt_tables(), order=st.sampled_from(["file", "helpful"]), shuffle=st.randoms(use_true_random=False))
def test_clean_ground_truth_on_codes_equals_the_plain_definition(gt: pd.DataFrame, order: str, shuffle):
    # as the readers give GT: each row a movie and a rank, keywords text or None
    gt = gt[gt["movie"].notna().to_numpy() & pd.to_numeric(gt["rank"], errors="coerce").notna().to_numpy()].astype(
        {"rank": "float64"}
    )
    gt = gt.assign(keyword=[k if isinstance(k, str) else None for k in gt["keyword"]])
    if order == "helpful" and "helpful" not in gt:
        gt = gt.assign(helpful=1.0, not_helpful=0.0)
    rows = list(range(len(gt)))
    shuffle.shuffle(rows)
    for table in (gt, gt.iloc[rows], gt.sort_values(["movie", "rank"], kind="stable", key=lambda c: c.astype(str))):
        got = clean_ground_truth(table, order)
        expected = plain_clean_ground_truth(table, order)
        assert got["movie"].tolist() == expected["movie"].tolist()
        assert got["rank"].tolist() == expected["rank"].tolist() and got["rank"].dtype == "int64"
        assert got["keyword"].tolist() == expected["keyword"].tolist()
        assert got["norm"].tolist() == expected["norm"].tolist()
        assert _ids(got["review_id"]) == _ids(expected["review_id"])
        if len(got):  # the str columns as pandas infers them from the rows
            assert got["norm"].dtype == pd.Series(expected["norm"].tolist()).dtype
            assert got["review_id"].dtype == pd.Series(expected["review_id"].to_numpy(dtype=object)).dtype


def test_clean_stage_splits_the_cleaned_rows_by_movie_and_list():
    """norms/keywords/sizes per movie are the groupby of the cleaned table; each review's list is where its rows are."""
    gt = pd.DataFrame(
        {
            "movie": ["m2", "m1", "m1", "m1", "m2", "m1", "m2"],
            "rank": [0, 1, 0, 0, 1, 1, 0],
            "keyword": ["Zeta", "b", "a", "c", "y", "A!", "x"],
            "review_id": [None, "r1", "r1", "r2", None, None, "r9"],
        }
    )
    movies = pd.DataFrame({"movie": ["m1", "m2", "m3"], "title": ["m1", "m2", "m3"]})
    reviews = pd.DataFrame(
        {
            "movie": ["m1", "m3"],
            "review_id": ["r1", "r1"],
            "text": [None, None],
            "title": [None, None],
            "rating": [np.nan, np.nan],
        }
    )
    predictions = pd.DataFrame(columns=["movie", "review_id", "model", "rank", "keyword", "score"])
    dataset = Dataset(
        movies, reviews, predictions, gt, pd.DataFrame({"model": ["x"], "score_direction": ["higher"]}), []
    )
    problems: dict[str, list] = {m: [] for m in movies["movie"]}
    clean = clean_stage(dataset, "file", problems)
    table = clean.table
    assert clean.movies == ["m1", "m2"]
    assert [p.reason for p in problems["m3"]] == ["no ground-truth keywords; its 1 review(s) are skipped"]
    pd.testing.assert_series_equal(clean.sizes, table.groupby("movie", sort=False).size())
    assert clean.norms == {m: f["norm"].tolist() for m, f in table.groupby("movie", sort=False)}
    assert {m: k.tolist() for m, k in clean.keywords.items()} == {
        m: f["keyword"].tolist() for m, f in table.groupby("movie", sort=False)
    }
    assert clean.norms["m1"] == ["a", "a", "b", "c"]  # m1's own list ("A!" -> "a"), then r1's (rank order), then r2's
    m1 = clean.lists["m1"]
    assert m1.movie_level == (0, 1) and m1.review_ids.tolist() == ["r1", "r2"]
    assert m1.review_start.tolist() == [1, 3] and m1.review_size.tolist() == [2, 1]
    m2 = clean.lists["m2"]
    assert m2.movie_level == (0, 2) and m2.review_ids.tolist() == ["r9"] and m2.review_start.tolist() == [2]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 6), max_size=40))
def test_repeated_is_duplicated(keys: list[int]):
    values = np.asarray(keys, dtype=np.int64)
    assert repeated(values).tolist() == pd.Series(values).duplicated(keep="first").tolist()


@settings(max_examples=300, deadline=None)
@given(
    st.one_of(
        st.lists(st.integers(0, 5), max_size=30),
        st.lists(st.integers(-5, 5), max_size=30),
        st.lists(st.sampled_from([0.5, -1.0, 2.0, math.nan, 0.0]), max_size=30),
        st.lists(st.sampled_from(["b", "a", "", "B", None]), max_size=30),
    )
)
def test_sort_key_orders_as_sort_values(values: list):
    array = np.asarray(values, dtype=object if values and isinstance(values[0], str) or None in values else None)
    if array.dtype == object and any(isinstance(v, float) for v in values):
        array = array.astype(float)
    key = sort_key(array)
    assert key.dtype.kind in "iu" and (len(key) == 0 or key.min() >= 0)
    expected = pd.Series(array).sort_values(kind="stable", na_position="last").index.to_numpy()
    assert np.argsort(key, kind="stable").tolist() == expected.tolist()


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 3), st.integers(0, 2**40)), max_size=30), st.booleans())
def test_stable_order_is_lexsort(rows: list[tuple[int, int, int]], huge: bool):
    a, b, c = (np.asarray(col, dtype=np.int64) for col in zip(*rows)) if rows else (np.zeros(0, np.int64),) * 3
    if not huge:
        c = c % 5
    expected = np.lexsort((c, b, a))
    got = stable_order(None, len(a), a, b, c)
    assert (np.arange(len(a)) if got is None else got).tolist() == expected.tolist()


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
def test_loaded_per_document_ground_truth_needs_no_second_sort(tmp_path, fmt):
    """The reader's order is the one clean_ground_truth sorts into: the cleaning finds it in order (and re-ranks
    nothing)."""
    gt = pd.DataFrame(
        {
            "movie": ["b", "a", "a", "b", "a"],
            "review_id": ["r2", "r1", None, "r1", "r1"],
            "rank": [0, 1, 5, 0, 0],
            "keyword": list("vwxyz"),
        }
    )
    dataset = read_tidy_tables(_tidy_files(gt, fmt))
    loaded = dataset.ground_truth
    movie, doc = sort_key(loaded["movie"].to_numpy()), sort_key(loaded["review_id"].fillna("").to_numpy(dtype=object))
    assert stable_order(None, len(loaded), movie, doc, sort_key(loaded["rank"].to_numpy())) is None
    assert clean_ground_truth(loaded)["keyword"].tolist() == ["x", "z", "w", "y", "v"]


@pytest.mark.parametrize("content", [b"garbage", b"", b"PAR1" + b"x" * 100 + b"PAR1"])
def test_unreadable_ground_truth_is_reported_as_before(content: bytes):
    """Read through Arrow, an unreadable ground_truth.parquet still gets pd.read_parquet's reason (which names the
    source)."""
    with pytest.raises(Exception) as raised:
        pd.read_parquet(io.BytesIO(content))
    files = _tidy_files(pd.DataFrame({"movie": ["a"], "rank": [0], "keyword": ["x"]}), "parquet")
    files["ground_truth.parquet"] = content
    reasons = [p.reason for p in read_tidy_tables(files).problems if p.source == "ground_truth.parquet"]
    assert reasons == [f"unreadable ({raised.type.__name__}: {str(raised.value)[:200]}); skipped"]
