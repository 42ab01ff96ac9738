"""Every review's prediction list as flat arrays, one entry per (review, keyword), for the scans over all reviews.

Speed trick "flat review lists": seed 001's per-review counts (the legacy summary) and the numbers the parity
finders rank reviews by are computed with numpy over every entry at once, and each movie's matcher is asked once
per distinct (movie, normalized keyword) instead of once per entry.  Reference: the per-review kernels
(`seed001_prf`, `seed000_predictions`, the matcher's `any`/`first`) applied list by list to `review_lists`
(tests/test_legacy_flat.py compares both on the demo and on small hostile shapes).
"""

from __future__ import annotations

import functools
from itertools import chain

import numpy as np
import pandas as pd

from kweval.data.dataset import Dataset
from kweval.legacy.kernels import (
    AnyMatcher,
    group_lists,
    gt_lists,
    legacy_normalize,
    per_dataset,
    review_lists,
    shared_matcher,
)


class FlatLists:
    """`review_lists(dataset)` flattened: entry arrays in list order, row arrays in the table's order.

    Entries: `row` (the entry's row of `lists`), `is_str` (its keyword is a string: the entries every notebook
    reads), `word` (the legacy-normalized keyword's index in `words`, -1 when not a string), `kept` (it is in
    ``seed000_predictions(entries)``: the first entry of its normalized keyword) and `rank` (its position there,
    -1 when not kept).  Rows: `movie` (the movie's GT list in `gts`).  `any_match` and `first_match` (lazy) are
    each entry's matcher answers against its movie's GT list.
    """

    def __init__(self, dataset: Dataset):
        self.lists = review_lists(dataset)
        self.gts = gt_lists(dataset)
        entries = self.lists["entries"].tolist()
        lengths = np.fromiter(map(len, entries), dtype="int64", count=len(entries))
        self.row = np.repeat(np.arange(len(entries), dtype="int64"), lengths)
        keywords = np.empty(int(lengths.sum()), dtype=object)
        keywords[:] = [kw for kw, _ in chain.from_iterable(entries)]
        codes, uniques = pd.factorize(keywords)  # missing keywords: code -1
        normalized = [legacy_normalize(u) if isinstance(u, str) else None for u in uniques.tolist()]
        word_codes, words = pd.factorize(pd.array(normalized, dtype=object))
        self.words: list[str] = words.tolist()
        self.word = np.r_[word_codes, -1].astype("int64")[codes]
        self.is_str = self.word >= 0
        self.kept, self.rank = _first_of_each_word(self.row, self.word)
        self._matchers: dict[str, AnyMatcher] = {}
        self._scans: dict[str | None, np.ndarray] = {}
        movie_codes, movie_names = pd.factorize(self.lists["movie"].to_numpy(dtype=object))
        self.movie = movie_codes.astype("int64")
        self.movie_names: list[str] = movie_names.tolist()

    @functools.cached_property
    def columns(self) -> tuple[list[str], list[str], list[str], list[list]]:
        """The lists' movie, model, review_id and entries columns as Python lists (read-only: shared)."""
        return tuple(self.lists[c].tolist() for c in ("movie", "model", "review_id", "entries"))

    def matcher(self, movie: str) -> AnyMatcher:
        """The movie's shared matcher (the one the per-review kernels ask), looked up once per movie."""
        found = self._matchers.get(movie)
        if found is None:
            found = self._matchers[movie] = shared_matcher(self.gts.get(movie, []))
        return found

    @functools.cached_property
    def any_match(self) -> np.ndarray:
        """Each entry's ``matcher.any(word)`` (False for a non-string keyword), a movie's words in one call."""
        movies, words, inverse = self._distinct(self.is_str)
        answers = np.zeros(len(movies), dtype=bool)
        bounds = np.flatnonzero(np.r_[True, movies[1:] != movies[:-1], True]).tolist() if len(movies) else [0]
        for a, b in zip(bounds[:-1], bounds[1:]):
            matcher = self.matcher(self.movie_names[movies[a]])
            answers[a:b] = matcher.any_of([self.words[w] for w in words[a:b].tolist()])
        out = np.zeros(len(self.row), dtype=bool)
        out[self.is_str] = answers[inverse]
        return out

    @functools.cached_property
    def first_match(self) -> np.ndarray:
        """Each entry's ``matcher.first(word)``: the earliest matching GT index, -1 for none (or no string)."""
        movies, words, inverse = self._distinct(self.any_match)
        matchers = [self.matcher(m) for m in self.movie_names]
        answers = [matchers[m].first(self.words[w]) for m, w in zip(movies.tolist(), words.tolist())]
        out = np.full(len(self.row), -1, dtype="int64")
        out[self.any_match] = np.array(answers, dtype="int64")[inverse]
        return out

    def _distinct(self, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(movie, word) of the distinct pairs of the entries where `mask` holds, sorted by movie, and each such
        entry's pair."""
        pair = self.movie[self.row[mask]] * (len(self.words) + 1) + self.word[mask]
        uniq, inverse = np.unique(pair, return_inverse=True)
        movies, words = np.divmod(uniq, len(self.words) + 1)
        return movies, words, inverse.reshape(-1)

    def scan_rows(self, model: str | None) -> np.ndarray:
        """The rows the finders scan, in their order: movie × model groups as `group_lists` gives them, `model`'s
        only when given, movies with GT keywords only (remembered per model: read-only)."""
        if model not in self._scans:
            parts = [
                frame.index.to_numpy("int64")
                for (movie, md), frame in group_lists(self.lists).items()
                if (model is None or md == model) and self.gts.get(movie)
            ]
            rows = np.concatenate(parts) if parts else np.zeros(0, dtype="int64")
            rows.setflags(write=False)
            self._scans[model] = rows
        return self._scans[model]

    def per_row(self, values: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """The sum of `values` over each row's entries where `mask` holds."""
        return np.bincount(self.row[mask], weights=values[mask], minlength=len(self.lists))


def _first_of_each_word(row: np.ndarray, word: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(kept, rank): the entries `seed000_predictions` keeps (string, first of its word in its row) and their
    positions among their row's kept entries (-1 for the others)."""
    strings = np.flatnonzero(word >= 0)
    key = pd.MultiIndex.from_arrays([row[strings], word[strings]])
    kept_at = strings[~key.duplicated(keep="first")]
    kept = np.zeros(len(row), dtype=bool)
    kept[kept_at] = True
    rank = np.full(len(row), -1, dtype="int64")
    kept_rows = row[kept_at]
    rank[kept_at] = np.arange(len(kept_at)) - np.searchsorted(kept_rows, kept_rows, side="left")
    return kept, rank


def flat_lists(dataset: Dataset) -> FlatLists:
    """The FlatLists of `dataset`, built once per dataset (`per_dataset`) and shared by the summary and the
    finders (with their matcher answers)."""
    return per_dataset(dataset, FlatLists)


def seed001_prf_rows(flat: FlatLists) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """`seed001_prf` of every row's string keywords against its movie's GT list, as (precision, recall, f1) arrays
    (the same IEEE operations as the kernel, so the same numbers)."""
    n_lists = len(flat.lists)
    n_preds = np.bincount(flat.row[flat.is_str], minlength=n_lists).astype("float64")
    matched = np.bincount(flat.row[flat.any_match], minlength=n_lists).astype("float64")
    n_gt = np.array([len(flat.gts.get(m, [])) for m in flat.movie_names], dtype="float64")[flat.movie]
    with np.errstate(divide="ignore", invalid="ignore"):
        precision = np.where(n_preds > 0, matched / n_preds, 0.0)
        recall = np.where(n_gt > 0, matched / n_gt, 0.0)
        f1 = np.where(precision + recall > 0, 2 * precision * recall / (precision + recall), 0.0)
    return precision, recall, f1
