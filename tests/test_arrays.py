"""Every speed idiom of kweval._arrays against its plain definition (hypothesis draws the shapes).

The idioms live once, in `_arrays`; the stages and readers call them by name,
so each is checked here (or, for the older ones, where the stage that first
needed it is tested: the list below names the test of each).
"""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kweval import _arrays
from kweval._arrays import (
    concat_or_empty,
    empty_as_missing,
    factorize_runs,
    group_sum,
    index_dtype,
    mapped_codes,
    object_array,
    object_column,
    position_in_run,
    positions,
    run_heads,
    take_codes,
    text_rank,
    with_missing,
)

_texts = st.lists(st.one_of(st.none(), st.just(""), st.text(alphabet="abC ", max_size=4)), max_size=30)


@settings(max_examples=200, deadline=None)
@given(values=_texts)
def test_mapped_codes_is_factorizing_the_mapped_values(values):
    values = object_array(values)
    codes, results = mapped_codes(values, lambda distinct: [v.strip().lower() for v in distinct])
    expected = [None if v is None else v.strip().lower() for v in values.tolist()]
    assert [None if c < 0 else results[c] for c in codes.tolist()] == expected
    want_codes, want_uniques = pd.factorize(object_array(expected))
    assert codes.tolist() == want_codes.tolist() and results.tolist() == want_uniques.tolist()


@settings(max_examples=200, deadline=None)
@given(values=_texts, fill=st.one_of(st.none(), st.just(""), st.integers(-1, 0)))
def test_codes_with_a_fill_value_read_the_fill_for_code_minus_one(values, fill):
    codes, uniques = pd.factorize(object_array(values))
    got = take_codes(np.asarray(uniques, dtype=object), codes, fill)
    assert got.tolist() == [fill if v is None else v for v in values]
    assert len(with_missing(np.asarray(uniques, dtype=object), fill)) == len(uniques) + 1


@settings(max_examples=200, deadline=None)
@given(values=_texts)
def test_empty_as_missing_makes_the_empty_string_no_value(values):
    codes, uniques = pd.factorize(object_array(values))
    codes, uniques = empty_as_missing(codes.astype(np.int64), np.asarray(uniques, dtype=object))
    assert [None if c < 0 else uniques[c] for c in codes.tolist()] == [None if v in (None, "") else v for v in values]


@settings(max_examples=200, deadline=None)
@given(values=st.lists(st.text(alphabet="aBc\u00e9", max_size=3), unique=True, max_size=12), first=st.booleans())
def test_text_rank_sorts_as_sorted_does(values, first):
    uniques = object_array(values)
    rank = text_rank(uniques, missing_first=first)
    codes = np.arange(-1, len(values))
    keyed = sorted(codes.tolist(), key=lambda c: rank[c])
    order = sorted(values)  # code-point order
    missing_at = 0 if first else len(values)
    assert keyed.index(-1) == missing_at
    assert [values[c] for c in keyed if c >= 0] == order


@settings(max_examples=200, deadline=None)
@given(values=_texts)
def test_factorize_runs_and_positions_are_pd_factorize_and_dict_lookups(values):
    values = object_array(sorted(values, key=lambda v: (v is None, v or "")))  # long runs, as readers give them
    codes, uniques = factorize_runs(values)
    want_codes, want_uniques = pd.factorize(values)
    assert codes.tolist() == want_codes.tolist() and list(uniques) == list(want_uniques)
    pos = {v: i for i, v in enumerate(dict.fromkeys(v for v in values.tolist() if v is not None and len(v) % 2 == 0))}
    assert positions(values, pos).tolist() == [pos.get(v, -1) if v is not None else -1 for v in values.tolist()]


@settings(max_examples=200, deadline=None)
@given(groups=st.lists(st.integers(0, 3), max_size=25))
def test_runs_group_sums_and_building_blocks(groups):
    keys = np.array(sorted(groups), dtype=np.int64)
    heads = run_heads(keys)
    assert heads.tolist() == [i == 0 or keys[i] != keys[i - 1] for i in range(len(keys))]
    assert position_in_run(heads).tolist() == [keys[:i].tolist().count(k) for i, k in enumerate(keys.tolist())]
    values = np.arange(len(keys), dtype="float64")
    assert group_sum(keys, values, 4).tolist() == [float(values[keys == g].sum()) for g in range(4)]
    assert group_sum(keys, None, 4).tolist() == [float((keys == g).sum()) for g in range(4)]
    assert concat_or_empty([keys[:2], keys[2:]], np.int64).tolist() == keys.tolist()
    assert concat_or_empty([], np.int64).dtype == np.int64
    assert object_array([(1, 2), (3, 4)]).shape == (2,)  # tuples stay elements, not a second dimension
    column = object_column(object_array(["a", None]))
    assert column.dtype == object and column.tolist() == pd.Series(["a", None], dtype=object).tolist()


def test_index_dtype_is_int32_while_it_holds_every_row():
    assert index_dtype(0) is np.int32 and index_dtype(2**31 - 1) is np.int32 and index_dtype(2**31) is np.int64
    assert np.iinfo(index_dtype(2**31 - 1)).max >= 2**31 - 1 and np.iinfo(index_dtype(2**40)).max >= 2**40


def test_every_idiom_is_checked_against_its_definition():
    """Each public function of _arrays is called by a test (here, or where its first stage is tested)."""
    tree = ast.parse(Path(_arrays.__file__).read_text(encoding="utf-8"))
    idioms = {n.name for n in tree.body if isinstance(n, ast.FunctionDef) and not n.name.startswith("_")}
    tests = Path(__file__).parent
    source = "\n".join(p.read_text(encoding="utf-8") for p in tests.glob("test_*.py"))
    unchecked = sorted(name for name in idioms if f"{name}(" not in source.replace(f"def {name}(", ""))
    assert unchecked == []


@settings(max_examples=100, deadline=None)
@given(
    sizes=st.lists(st.integers(1, 6), min_size=1, max_size=12),
    width=st.integers(1, 5),
    seed=st.integers(0, 2**16),
)
def test_segment_max_rows_is_maximum_reduceat_of_the_gathered_rows(sizes, width, seed):
    """The semantic metrics' best cosine per GT keyword and review: position by position against the plain
    ``np.maximum.reduceat(values[rows], starts, axis=0)`` (equal: a maximum does not round)."""
    rng = np.random.default_rng(seed)
    values = rng.standard_normal((7, width)).astype(np.float32)
    rows = rng.integers(0, 7, size=sum(sizes))
    starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))
    want = np.maximum.reduceat(values[rows], starts, axis=0)
    got = _arrays.segment_max_rows(values, rows, starts)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
    into = np.full((len(sizes) + 2) * width, np.nan, dtype=np.float32)  # a caller's array: a slice of it filled
    part = into[width : width + len(sizes) * width].reshape(len(sizes), width)
    assert _arrays.segment_max_rows(values, rows, starts, out=part) is part
    np.testing.assert_array_equal(part, want)
    assert np.isnan(into[:width]).all() and np.isnan(into[width + part.size :]).all()  # nothing else written


@settings(max_examples=100, deadline=None)
@given(
    lengths=st.lists(st.integers(0, 9), min_size=1, max_size=5),
    columns=st.integers(0, 600),
    seed=st.integers(0, 2**16),
)
def test_stacked_transposed_is_the_transposed_concatenation(lengths, columns, seed):
    """The resample counts one row per review: against ``np.concatenate(chunks).T.copy()``, with more columns
    than a block (`_TRANSPOSE_COLUMNS`) and fewer, and empty chunks."""
    rng = np.random.default_rng(seed)
    chunks = [rng.integers(0, 60000, size=(n, columns)).astype(np.uint16) for n in lengths]
    got = _arrays.stacked_transposed(chunks)
    want = np.concatenate(chunks).T.copy()
    assert got.dtype == want.dtype and got.shape == want.shape and got.flags.c_contiguous
    np.testing.assert_array_equal(got, want)


def test_stacked_transposed_refuses_chunks_it_cannot_stack():
    for chunks in ([], [np.zeros((2, 3)), np.zeros((2, 4))], [np.zeros(3)]):
        with pytest.raises(ValueError, match="same columns"):
            _arrays.stacked_transposed(chunks)
