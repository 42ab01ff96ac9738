"""The dashboard's state: the cached loaders and evaluation, and `Ctx`.

Every page (`pages/*.py`, Streamlit's classic multipage mode) calls
`dashboard.sidebar.open_page`, which draws the shared sidebar and builds one
`Ctx` per script run from what is cached here.  Every widget whose value
lives in the URL goes through `dashboard.url_state.url_widget` (query parameter
↔ session state), the sidebar's selection included.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sys
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import Generic, TypeVar

import numpy as np
import pandas as pd
import streamlit as st

from dashboard.gt_lists import gt_lists
from dashboard.links import page_links, page_params
from dashboard.selection import Selection
from dashboard.url_state import drop_unknown_params, url_widget
from kweval.data import load_dataset
from kweval.data.dataset import Dataset
from kweval.data.tidy import read_tidy_tables
from kweval.data.vocabulary import Vocabulary, vocabulary
from kweval.evaluation.aggregate import MICRO_F1, MICRO_RATIOS, aggregate, summary_at_threshold
from kweval.evaluation.options import match_reason
from kweval.evaluation.pipeline import (
    SENTIMENT_OPTIONS,
    EvalOptions,
    Evaluation,
    Matched,
    Progress,
    SentimentScores,
    evaluate,
    match_dataset,
    matching_key,
    ranked_movies,
    sentiment_scores,
    with_semantic,
    with_sentiment,
    with_threshold,
)
from kweval.io.card import MATCH_RULES
from kweval.metrics import registry
from kweval.metrics.registry import column

# ---------------------------------------------------------------------------------------------
# data: loaded once per source (cache_resource), identified by a content hash


def cli_data_path() -> str | None:
    """`--data PATH` after `streamlit run app.py --`, else KWEVAL_DATA."""
    parser = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    parser.add_argument("--data")
    args, _ = parser.parse_known_args(sys.argv[1:])
    return args.data or os.environ.get("KWEVAL_DATA") or None


def cli_prediction_files() -> tuple[tuple[str, str], ...]:
    """The models added to the data: `--predictions NAME=PATH` (repeatable) after `streamlit run app.py --`, else
    KWEVAL_PREDICTIONS (NAME=PATH,NAME=PATH); a JSONL file of raw responses is read through the parser
    (docs/llm.md), and the explorer shows each response beside its list."""
    parser = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    parser.add_argument("--predictions", action="append", default=[])
    args, _ = parser.parse_known_args(sys.argv[1:])
    given = args.predictions or [s for s in os.environ.get("KWEVAL_PREDICTIONS", "").split(",") if s.strip()]
    return tuple(tuple(spec.partition("=")[::2]) for spec in given)  # type: ignore[misc]


def _stamp(path: str | None) -> tuple:
    """Names, sizes and modification times of the files under `path`: reload when they change."""
    from kweval.data import demo_path

    root = Path(path) if path else demo_path()
    if not root.is_dir():
        return ()
    files = [p for p in root.iterdir() if p.is_file()]
    files += [
        q for p in root.iterdir() if p.is_dir() for q in list(p.iterdir())[:500] if q.is_file()
    ]  # the layouts nest one level
    return tuple(sorted((str(p.relative_to(root)), p.stat().st_size, p.stat().st_mtime_ns) for p in files[:2000]))


@st.cache_resource(show_spinner="Loading the dataset…", max_entries=4)
def _load(path: str | None, stamp: tuple, predictions: tuple[tuple[str, str], ...] = ()) -> tuple[Dataset, str]:
    from kweval.data import DatasetError
    from kweval.data.predictions import parse_spec

    try:
        files = dict(parse_spec("=".join(spec)) for spec in predictions)
    except ValueError as exc:
        raise DatasetError(f"--predictions: {exc}") from None
    dataset = load_dataset(path, predictions=files or None)
    return dataset, dataset.content_hash()


def load_path(path: str | None) -> tuple[Dataset, str]:
    """The dataset at `path` (None: the embedded demo) with the `cli_prediction_files` models, and its content hash;
    reloaded when its files change."""
    predictions = cli_prediction_files()
    stamps = tuple(_file_stamp(p) for _, p in predictions)
    return _load(path, (_stamp(path), stamps), predictions)


def _file_stamp(path: str) -> tuple:
    try:
        found = Path(path).stat()
    except OSError:
        return (path,)
    return (path, found.st_size, found.st_mtime_ns)


@st.cache_resource(show_spinner="Reading the uploaded tables…", max_entries=4)
def _load_upload(digest: str, _files: tuple[tuple[str, bytes], ...]) -> tuple[Dataset, str]:
    dataset = read_tidy_tables(dict(_files), origin="upload")
    return dataset, dataset.content_hash()


def load_upload(digest: str, files: tuple[tuple[str, bytes], ...]) -> tuple[Dataset, str]:
    """The dataset of uploaded tidy tables (name, bytes), cached by `digest` of their contents."""
    return _load_upload(digest, files)


T = TypeVar("T")


class _Lru(Generic[T]):
    """Evaluations (or what they are built from) shared by every session (not copied: pages only read them,
    tests/test_app.py checks it), most recent last, at most `size`.  Explicit rather than st.cache_resource: a miss
    must be known before building, to show progress outside any cached function, and evictions must be seen."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.items: OrderedDict[tuple, T] = OrderedDict()
        self.lock = threading.Lock()

    def get(self, key: tuple) -> T | None:
        with self.lock:
            found = self.items.get(key)
            if found is not None:
                self.items.move_to_end(key)
            return found

    def put(self, key: tuple, evaluation: T) -> T:
        with self.lock:
            self.items[key] = evaluation
            while len(self.items) > self.size:
                self.items.popitem(last=False)
        return evaluation


@st.cache_resource
def _held() -> tuple[_Lru[Evaluation], _Lru[Evaluation]]:
    """(the evaluations by options, the first semantic evaluation of each τ-free setting): the second is kept
    apart so that a τ step always re-thresholds it and never evaluates again, however many τ steps evicted."""
    return _Lru(8), _Lru(4)


# One table per dataset: the sentiment columns depend on no sidebar setting (`SENTIMENT_OPTIONS`), so turning
# sentiment on again, after any change of k, match mode or τ, only joins them to the cached evaluation.
@st.cache_resource(show_spinner="Scoring sentiment (VADER; the scores are cached on disk)…", max_entries=4)
def _sentiment(data_hash: str, sentiment_options: tuple, _evaluation: Evaluation, _dataset: Dataset) -> SentimentScores:
    return sentiment_scores(_evaluation, _dataset)


def get_evaluation(dataset: Dataset, data_hash: str, options: EvalOptions) -> Evaluation:
    """The evaluation of `dataset` under `options`, shared by every session; a first run shows progress.

    Built from what is held where it can be: sentiment on is the evaluation without it plus the
    dataset's sentiment columns; another τ re-thresholds the setting's first semantic evaluation.
    """
    (held, bases), key = _held(), (data_hash, _digest(options.as_dict()))
    found = held.get(key) or _ahead().get(key)  # made ahead by the τ look-ahead: held from now on
    if found is not None:
        return held.put(key, found)
    if options.sentiment:
        base = get_evaluation(dataset, data_hash, replace(options, sentiment=False))
        sas = _sentiment(data_hash, tuple(getattr(options, name) for name in SENTIMENT_OPTIONS), base, dataset)
        return held.put(key, with_sentiment(base, sas))
    if not options.semantic:
        return held.put(key, _evaluate_with_progress(dataset, data_hash, options))
    free = (data_hash, _digest({k: v for k, v in options.as_dict().items() if k != "threshold"}))
    base = bases.get(free) or bases.put(free, _first_semantic(dataset, data_hash, options))
    return held.put(key, base if base.options == options else with_threshold(base, options.threshold))


@st.cache_resource
def _ahead() -> _Lru[Evaluation]:
    """Evaluations made by the τ look-ahead (`evaluation_ahead`), apart from `_held` until a page asks for one, so
    that looking ahead never evicts an evaluation a page used."""
    return _Lru(4)


def evaluation_ahead(dataset: Dataset, data_hash: str, options: EvalOptions) -> Evaluation | None:
    """`get_evaluation`'s evaluation under `options` when it needs no evaluating (held, or a held setting's first
    semantic evaluation re-thresholded, with the held sentiment columns joined), else None: what the τ look-ahead
    (`dashboard.look_ahead`) may make in the background; nothing is drawn."""
    (held, bases), key = _held(), (data_hash, _digest(options.as_dict()))
    found = held.get(key) or _ahead().get(key)
    if found is not None or not options.semantic:
        return found
    if options.sentiment:
        base = evaluation_ahead(dataset, data_hash, replace(options, sentiment=False))
        if base is None:
            return None
        sas = _sentiment(data_hash, tuple(getattr(options, name) for name in SENTIMENT_OPTIONS), base, dataset)
        return _ahead().put(key, with_sentiment(base, sas))
    first = bases.get((data_hash, _digest({k: v for k, v in options.as_dict().items() if k != "threshold"})))
    return None if first is None else _ahead().put(key, with_threshold(first, options.threshold))


def _first_semantic(dataset: Dataset, data_hash: str, options: EvalOptions) -> Evaluation:
    """A setting's first semantic evaluation: the held lexical one with the semantic columns (`with_semantic`: no
    second matching), or evaluated whole when grounding or diversity columns read the vectors."""
    if options.grounding or options.diversity:
        return _evaluate_with_progress(dataset, data_hash, options)
    lexical = get_evaluation(dataset, data_hash, replace(options, semantic=False))
    return _with_progress(lambda progress: with_semantic(lexical, progress))


def _digest(options: dict) -> str:
    """A short digest of option values (their repr: plain values), as the caches hash their keys on every call."""
    return hashlib.blake2b(repr(options).encode(), digest_size=12).hexdigest()


@st.cache_resource
def _matchings() -> _Lru[Matched]:
    """The cleaning and matching of the last data and match settings (`kweval.evaluation.pipeline.Matched`, speed
    trick "matching shared across k"): a new k or gain counts and scores again, without matching again."""
    return _Lru(2)


def _evaluate_with_progress(dataset: Dataset, data_hash: str, options: EvalOptions) -> Evaluation:
    def work(progress: Progress) -> Evaluation:
        key = (data_hash, matching_key(dataset, options))
        matched = _matchings().get(key) or _matchings().put(key, match_dataset(dataset, options, progress))
        return evaluate(dataset, options, progress=progress, matched=matched)

    return _with_progress(work)


def _with_progress(work: Callable[[Progress], Evaluation]) -> Evaluation:
    """`work(progress)` with its stages shown in a progress bar, removed when it is done."""
    bar = st.progress(0.0, text="Evaluating…")
    notes = {"embedding": "embedding keywords (the first time loads the model; vectors are cached on disk)"}
    try:
        return work(
            lambda stage, f: bar.progress(min(max(float(f), 0.0), 1.0), text=f"Evaluating: {notes.get(stage, stage)}…")
        )
    finally:
        bar.empty()


def row_identity(scores: pd.DataFrame) -> str:
    """A digest of which (movie, review_id, model) each row of `scores` is, in order: a cache key for what
    depends on the rows but not on their metric values (unchanged by a τ change or sentiment on)."""
    hashed = pd.util.hash_pandas_object(scores[["movie", "review_id", "model"]], index=False).to_numpy()
    return hashlib.blake2b(hashed.tobytes(), digest_size=16).hexdigest()


def ci_groups(names: list[str]) -> list[list[str]]:
    """The metrics bootstrapped together: those cut off at k apart, as a k change alters only them, and the
    semantic ones apart, as a τ change alters only them."""

    def part(name: str) -> int:
        entry = registry.info(name)
        return 0 if entry is None else 2 if entry.group == "semantic" else 1 if registry.at_k(name) else 0

    return [group for group in ([m for m in names if part(m) == i] for i in range(3)) if group]


def ci_columns(group: Sequence[str]) -> set[str]:
    """The columns the CIs of `group` read: its own and, under micro, their counts."""
    return set(group) | {c for m in group for part in (m, *MICRO_F1.get(m, ())) for c in MICRO_RATIOS.get(part, ())}


def ci_digest(rows: pd.DataFrame, group: list[str], how: str) -> str:
    """A digest of the values the CIs of `group` read (`ci_columns`)."""
    needed = ci_columns(group)
    columns = [c for c in rows.columns if c in needed]
    digest = hashlib.blake2b(repr((how, columns, len(rows))).encode(), digest_size=16)
    for c in columns:  # column by column: no frame of mixed columns made into one array
        digest.update(np.ascontiguousarray(rows[c].to_numpy(dtype="float64")))
    return digest.hexdigest()


@st.cache_data(show_spinner=False, max_entries=32)
def _summary(data_hash: str, options: str, how: str, tau_free: str, _evaluation: Evaluation) -> pd.DataFrame:
    if not _evaluation.options.semantic:
        return aggregate(_evaluation, how)
    threshold, table = _tau_free_summary(data_hash, tau_free, how, _evaluation)
    return table if threshold == _evaluation.options.threshold else summary_at_threshold(table, _evaluation, how)


@st.cache_data(show_spinner=False, max_entries=16)
def _tau_free_summary(data_hash: str, tau_free: str, how: str, _evaluation: Evaluation) -> tuple[float, pd.DataFrame]:
    """(τ, `aggregate` at τ) of the first τ summarised of a τ-free setting: every other τ's summary is it with the
    semantic metrics aggregated again (`summary_at_threshold`)."""
    return _evaluation.options.threshold, aggregate(_evaluation, how)


# ---------------------------------------------------------------------------------------------
# the context handed to the pages


@dataclass
class Ctx:
    """Everything a page reads: the dataset, its evaluation under the sidebar's selection, the page files by name."""

    dataset: Dataset
    data_hash: str
    evaluation: Evaluation
    selection: Selection
    options: EvalOptions
    pages: dict[str, str]  # page name (its URL path) -> its file, for st.switch_page / st.page_link
    source_label: str
    uploads: dict[str, int] = field(default_factory=dict)  # uploaded file name -> size in bytes (newest copy)
    added: dict[str, str] = field(default_factory=dict)  # model -> the prediction file added for it in the sidebar

    def __post_init__(self) -> None:
        self.options = self.options.for_data(self.dataset.per_document)  # the match mode in force, never "auto"

    @property
    def key(self) -> tuple[str, str]:
        """Cache key of everything derived from this evaluation: (data hash, digest of the options: short to hash)."""
        return (self.data_hash, _digest(self.options.as_dict()))

    @property
    def tau_free_key(self) -> tuple[str, str]:
        """Cache key of what a τ change leaves unchanged: all but the semantic scores (`with_threshold`'s)."""
        return (self.data_hash, _digest({k: v for k, v in self.options.as_dict().items() if k != "threshold"}))

    @property
    def upload_names(self) -> list[str]:
        return list(self.uploads)

    @property
    def preset(self) -> str | None:
        """The keyphrase preset the pages compute under (pke, kpeval, meng: `Selection.protocol`, carried by every
        link), None under kweval and on movie-level data (the evaluation's numbers)."""
        protocol = self.selection.protocol
        return protocol if protocol not in (None, "kweval") and self.dataset.per_document else None

    def match_text(self, protocol: str | None = None) -> str:
        """The matching in force and why, for a caption: the sidebar's mode with `match_reason`, or a preset's own
        rule (`protocol`, default `preset`), under which the sidebar's mode does not apply."""
        protocol = self.preset if protocol is None else protocol
        if protocol not in (None, "kweval"):
            return f"match: the {protocol} preset's, {MATCH_RULES[protocol]} (the sidebar's match mode does not apply)"
        match = self.options.match
        return f"match {match} ({match_reason(match, self.dataset.per_document)})"

    @property
    def ndcg_at_k(self) -> str:
        """The nDCG column at the sidebar's k: the pages' default metric."""
        return column("ndcg@{k}", self.options.k)

    def summary(self, how: str | None = None) -> pd.DataFrame:
        return _summary(*self.key, how or self.selection.agg, self.tau_free_key[1], self.evaluation)

    def scores(self) -> pd.DataFrame:
        """Per-review scores of the selected movie (every movie for ALL) and models."""
        sc = self.evaluation.scores
        sc = sc[sc["model"].isin(self.selection.models)]
        return sc if self.selection.movie == "ALL" else sc[sc["movie"] == self.selection.movie]

    @property
    def words(self) -> Vocabulary:
        """The data's own words (Movie/Review or Collection/Document, ranked GT or not): `kweval.data.vocabulary`."""
        return vocabulary(self.dataset)

    def meta(self, protocol: str = "kweval", **extra: object) -> dict[str, object]:
        """Every setting behind the numbers shown (data, k, match, aggregation, semantic τ and backend, sentiment,
        scope, protocol): the captions, the LaTeX caption and the download names say them (`kweval.io.settings`)."""
        sel = self.selection
        scope = sel.movie if sel.movie in set(self.dataset.movie_ids) else "ALL"
        return {
            "data": self.dataset.source,
            "k": self.options.k,
            "match": self.options.match,
            "aggregate": sel.agg,
            "semantic": self.options.semantic,
            "threshold": self.options.threshold,
            "backend": self.options.embedding_backend,
            "sentiment": self.options.sentiment,
            "grounding": self.options.grounding,
            "grounding_threshold": self.options.grounding_threshold,
            "diversity": self.options.diversity,
            "scope": "ALL" if scope == "ALL" else self.movie_title(scope),
            "scope_id": scope,
            "protocol": protocol,
            **extra,
        }

    @cached_property
    def _titles(self) -> dict:
        """movie id -> title, built once per script run (pages map `movie_title` over thousands of rows)."""
        return dict(zip(self.dataset.movies["movie"], self.dataset.movies["title"]))

    def movie_title(self, movie: str) -> str:
        titles = self._titles
        return f"All {self.words.movies.lower()}" if movie == "ALL" else str(titles.get(movie, movie))

    @cached_property
    def _gt_lists(self) -> dict[tuple[str, object], pd.DataFrame]:
        """`gt_lists` of this evaluation, looked up once per script run (a page asks for many reviews' lists)."""
        return gt_lists(self.tau_free_key, self.evaluation.ground_truth)

    def own_gt(self, movie: str, review: str) -> pd.DataFrame:
        """The cleaned GT rows the review is scored against, in rank order: its own list (per-document GT) or its
        movie's.  Shared (read-only): the lists are split once per evaluation (`gt_lists`), not filtered per call."""
        lists = self._gt_lists
        own = lists.get((movie, review))
        if own is not None and len(own):
            return own
        found = lists.get((movie, None))
        return found if found is not None else self.evaluation.ground_truth.iloc[0:0]

    def gt_ranked(self, movie: str) -> bool:
        """Whether the movie's GT is ranked (graded gains); unranked GT gives every keyword relevance 1."""
        return ranked_movies(self.dataset.movies).get(movie, True)

    def params(self, **extra: object) -> dict[str, str]:
        return page_params(self.selection, **extra)

    def urls(self, page: str, **per_row: Sequence[object]) -> list[str]:
        """Relative links to `page` with the current selection, one per row of `per_row` (for link columns)."""
        return page_links(page, self.selection, **per_row)

    # A page widget whose value lives in the URL query parameter (`dashboard.url_state.url_widget`, the one binding).
    url_widget = staticmethod(url_widget)

    def finish(self) -> None:
        """The page's last call: warn about and drop the URL parameters nothing read (a page that stopped
        early read less, so it never calls this); then, once per server, what a later first view would wait for."""
        drop_unknown_params()
        _slice_search_loaded()


@st.cache_resource(show_spinner=False)
def _slice_search_loaded() -> bool:
    """SliceLine (its imports and compiled kernels, ~2 s of CPU) loaded once per server at the end of its first
    complete page run, in that run's own thread (no import beside a running page): the Failures page's first view
    does not wait for it (`kweval.stats.slices.load_search`)."""
    from kweval.stats.slices import load_search

    return load_search()
