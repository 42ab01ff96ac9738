"""kweval dashboard: `streamlit run app.py` (embedded demo), `streamlit run app.py -- --data PATH`.

This file is the shell: it loads the dataset, keeps the sidebar selection in
the URL query parameters, evaluates (cached by a content hash of the data and
the options) and hands a `Ctx` to the page that `st.navigation` runs.  Pages
read `st.session_state["ctx"]`; they hold widgets and layout only.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import pandas as pd
import streamlit as st

from kweval import ui
from kweval.aggregate import aggregate
from kweval.data import DatasetError, load_dataset
from kweval.data.dataset import Dataset
from kweval.data.tidy import read_tidy_tables
from kweval.evaluate import AGGREGATIONS, EvalOptions, Evaluation, evaluate
from kweval.matching import MATCH_MODES

HERE = Path(__file__).resolve().parent
st.set_page_config(page_title="kweval", page_icon=":material/key:", layout="wide")


# ---------------------------------------------------------------------------------------------
# data: loaded once per source (cache_resource), identified by a content hash


def _cli_data_path() -> str | None:
    """`--data PATH` after `streamlit run app.py --`, else KWEVAL_DATA."""
    parser = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    parser.add_argument("--data")
    args, _ = parser.parse_known_args(sys.argv[1:])
    return args.data or os.environ.get("KWEVAL_DATA") or None


def _stamp(path: str | None) -> tuple:
    """Names, sizes and modification times of the files under `path`: reload when they change."""
    from kweval.data import demo_path

    root = Path(path) if path else demo_path()
    if not root.is_dir():
        return ()
    files = [p for p in root.iterdir() if p.is_file()]
    files += [q for p in root.iterdir() if p.is_dir() for q in list(p.iterdir())[:500] if q.is_file()]  # the layouts nest one level
    return tuple(sorted((str(p.relative_to(root)), p.stat().st_size, p.stat().st_mtime_ns) for p in files[:2000]))


@st.cache_resource(show_spinner="Loading the dataset…", max_entries=4)
def _load(path: str | None, stamp: tuple) -> tuple[Dataset, str]:
    dataset = load_dataset(path)
    return dataset, ui.dataset_hash(dataset)


def _load_path(path: str | None) -> tuple[Dataset, str]:
    return _load(path, _stamp(path))


@st.cache_resource(show_spinner="Reading the uploaded tables…", max_entries=4)
def _load_upload(digest: str, _files: tuple[tuple[str, bytes], ...]) -> tuple[Dataset, str]:
    dataset = read_tidy_tables(dict(_files), origin="upload")
    return dataset, ui.dataset_hash(dataset)


@st.cache_resource
def _evaluated_keys() -> set:
    """(data hash, options) already in the evaluation cache, so a miss can show progress."""
    return set()


# cache_resource, not cache_data: every page of every rerun reads the evaluation, and cache_data
# would hand each one a fresh unpickled copy (≈80 ms for the DNLP data).  Pages only read it
# (tests/test_app.py checks that it is shared and left unchanged).
@st.cache_resource(show_spinner=False, max_entries=8)
def _evaluation(data_hash: str, options: tuple, _dataset: Dataset, _ready: Evaluation | None = None) -> Evaluation:
    return _ready if _ready is not None else evaluate(_dataset, EvalOptions(**dict(options)))


def get_evaluation(dataset: Dataset, data_hash: str, options: EvalOptions) -> Evaluation:
    key = (data_hash, tuple(options.as_dict().items()))
    seen = _evaluated_keys()
    if key in seen:
        return _evaluation(*key, dataset)
    bar = st.progress(0.0, text="Evaluating…")
    notes = {"embedding": "embedding keywords (the first time loads the model; vectors are cached on disk)"}
    try:
        ready = evaluate(dataset, options, progress=lambda stage, f: bar.progress(
            min(max(float(f), 0.0), 1.0), text=f"Evaluating: {notes.get(stage, stage)}…"))
    finally:
        bar.empty()
    seen.add(key)
    return _evaluation(*key, dataset, _ready=ready)


@st.cache_data(show_spinner=False, max_entries=32)
def _summary(data_hash: str, options: tuple, how: str, _evaluation: Evaluation) -> pd.DataFrame:
    return aggregate(_evaluation, how)


# ---------------------------------------------------------------------------------------------
# the context handed to the pages


@dataclass
class Ctx:
    dataset: Dataset
    data_hash: str
    evaluation: Evaluation
    selection: ui.Selection
    options: EvalOptions
    pages: dict[str, Any]
    source_label: str
    upload_names: list[str] = field(default_factory=list)

    @property
    def key(self) -> tuple:
        """Cache key of everything derived from this evaluation."""
        return (self.data_hash, tuple(self.options.as_dict().items()))

    @property
    def metric(self) -> str:
        return f"ndcg@{self.options.k}"

    def summary(self, how: str | None = None) -> pd.DataFrame:
        return _summary(*self.key, how or self.selection.agg, self.evaluation)

    def scores(self) -> pd.DataFrame:
        """Per-review scores of the selected movie (every movie for ALL) and models."""
        sc = self.evaluation.scores
        sc = sc[sc["model"].isin(self.selection.models)]
        return sc if self.selection.movie == "ALL" else sc[sc["movie"] == self.selection.movie]

    def movie_title(self, movie: str) -> str:
        titles = dict(zip(self.dataset.movies["movie"], self.dataset.movies["title"]))
        return "All movies" if movie == "ALL" else str(titles.get(movie, movie))

    def params(self, **extra: object) -> dict[str, str]:
        return ui.page_params(self.selection, **extra)

    def urls(self, page: str, **per_row: Sequence[object]) -> list[str]:
        """Relative links to `page` with the current selection, one per row of `per_row` (for link columns)."""
        return ui.page_links(self.pages[page].url_path, self.selection, **per_row)

    def url_widget(self, widget: Callable, label: str, param: str, default: Any, parse: Callable[[str], Any] = str,
                   fmt: Callable[[Any], str] = str, resets: tuple[str, ...] = (), **kwargs: Any) -> Any:
        """A page widget whose value lives in the URL query parameter `param` (and survives reruns).

        `parse` turns the URL text into a value (None or an exception: ignored); changing the
        widget writes `fmt(value)` to the URL (the default removes the parameter) and clears the
        parameters named in `resets` (e.g. the page number when a filter changes).
        """
        return url_widget(widget, label, param, default, parse, fmt, resets=resets, **kwargs)


def url_widget(widget: Callable, label: str, param: str, default: Any, parse: Callable[[str], Any] = str,
               fmt: Callable[[Any], str] = str, key: str | None = None, resets: tuple[str, ...] = (), **kwargs: Any) -> Any:
    key = key or f"qp_{param}"
    raw = st.query_params.get(param)
    value = None
    if raw is not None:
        try:
            value = parse(raw)
        except (TypeError, ValueError):
            value = None
    if value is None:
        value = st.session_state.get(key, default)
    st.session_state[key] = value

    def sync() -> None:
        new = st.session_state[key]
        if new == default or new is None or new == "":
            st.query_params.pop(param, None)
        else:
            st.query_params[param] = fmt(new)
        for other in resets:
            st.query_params.pop(other, None)
            st.session_state.pop(f"qp_{other}", None)

    return widget(label, key=key, on_change=sync, **kwargs)


# ---------------------------------------------------------------------------------------------
# sidebar: dataset and selection


def _choose_dataset() -> tuple[Dataset, str, str, list[str]] | None:
    configured = _cli_data_path()
    allow_local = os.environ.get("KWEVAL_ALLOW_LOCAL_PATHS") == "1"
    sources = (["configured"] if configured else []) + ["demo", "upload"] + (["local"] if allow_local else [])
    labels = {"configured": f"--data / KWEVAL_DATA", "demo": "Embedded demo", "upload": "Upload tidy tables", "local": "Local path"}
    with st.sidebar.expander("Dataset", expanded=False):
        source = st.radio("Source", sources, format_func=labels.get, key="data_source")
        try:
            if source == "configured":
                st.caption(f"Path: {ui.md(configured)}")
                ds, h = _load_path(configured)
                return ds, h, Path(configured).name, []
            if source == "demo":
                ds, h = _load_path(None)
                return ds, h, "embedded demo", []
            if source == "upload":
                files = st.file_uploader(
                    "predictions, ground_truth (required), reviews, movies, models — .parquet or .csv",
                    type=["parquet", "csv"], accept_multiple_files=True, key="upload",
                )
                if not files:
                    st.info("Upload at least predictions and ground_truth tables.")
                    return None
                blobs = tuple(sorted((f.name, f.getvalue()) for f in files))
                digest = hashlib.sha256(b"".join(hashlib.sha256(n.encode() + b"\0" + b).digest() for n, b in blobs)).hexdigest()
                ds, h = _load_upload(digest, blobs)
                return ds, h, "upload", [n for n, _ in blobs]
            path = st.text_input("Folder on this server", key="local_path")
            if not path:
                return None
            ds, h = _load_path(path)
            return ds, h, Path(path).name, []
        except DatasetError as exc:
            st.error(ui.md(str(exc)))
            return None


def _selection(dataset: Dataset) -> ui.Selection:
    movies = dataset.movie_ids
    models = dataset.model_names
    session = {
        "movie": st.session_state.get("sel_movie"),
        "models": ",".join(st.session_state.get("sel_models") or []),
        "k": st.session_state.get("sel_k"),
        "agg": st.session_state.get("sel_agg"),
        "match": st.session_state.get("sel_match"),
        "sem": None if "sel_sem" not in st.session_state else ("1" if st.session_state["sel_sem"] else "0"),
        "tau": st.session_state.get("sel_tau"),
        "sas": None if "sel_sas" not in st.session_state else ("1" if st.session_state["sel_sas"] else "0"),
    }
    url = {k: st.query_params.get(k) for k in ui.SELECTION_KEYS}
    sel = ui.resolve_selection([url, session], movies, models)
    st.session_state["sel_movie"] = sel.movie
    st.session_state["sel_models"] = list(sel.models)
    st.session_state["sel_k"] = sel.k
    st.session_state["sel_agg"] = sel.agg
    st.session_state["sel_match"] = sel.match
    st.session_state["sel_sem"] = sel.semantic
    st.session_state["sel_tau"] = sel.threshold
    st.session_state["sel_sas"] = sel.sentiment

    def push(name: str, value: Callable[[], str]) -> Callable[[], None]:
        def sync() -> None:
            st.query_params[name] = value()
        return sync

    titles = dict(zip(dataset.movies["movie"], dataset.movies["title"]))
    sb = st.sidebar
    sb.selectbox("Movie", ["ALL", *movies], key="sel_movie", on_change=push("movie", lambda: st.session_state["sel_movie"]),
                 format_func=lambda m: "All movies" if m == "ALL" else f"{titles.get(m, m)}" + ("" if titles.get(m, m) == m else f" ({m})"))
    sb.multiselect("Models", models, key="sel_models", on_change=push("models", lambda: ",".join(st.session_state["sel_models"])))
    sb.number_input("k (cut-off of the @k metrics)", min_value=1, max_value=ui.K_MAX, step=1, key="sel_k",
                    on_change=push("k", lambda: str(st.session_state["sel_k"])))
    sb.radio("Aggregation", list(AGGREGATIONS), key="sel_agg", horizontal=True, on_change=push("agg", lambda: st.session_state["sel_agg"]),
             help="macro: mean over reviews; micro: ratios of sums (set-based and weighted metrics).")
    sb.selectbox("Match mode", list(MATCH_MODES), key="sel_match", on_change=push("match", lambda: st.session_state["sel_match"]),
                 help="approx: equal or substring (default); exact; word: whole tokens; stem: Porter stems equal.")
    sb.toggle("Semantic matching", key="sel_sem", on_change=push("sem", lambda: "1" if st.session_state["sel_sem"] else "0"),
              help="sem_precision / sem_recall / sem_f1 (METRICS.md §4): a keyword counts when its cosine to some GT keyword "
                   "(sentence embeddings, all-MiniLM-L6-v2) is above the threshold. The first run embeds and caches the keywords.")
    sb.slider("Cosine threshold τ", min_value=ui.TAU_MIN, max_value=ui.TAU_MAX, step=ui.TAU_STEP, format="%.2f", key="sel_tau",
              disabled=not sel.semantic, on_change=push("tau", lambda: ui.format_tau(st.session_state["sel_tau"])),
              help="Strict: a cosine must exceed τ.")
    sb.toggle("Sentiment (VADER)", key="sel_sas", on_change=push("sas", lambda: "1" if st.session_state["sel_sas"] else "0"),
              help="sas_keywords / sas_text (METRICS.md §5): 1 − |mean v(keywords) − mean v(GT)| and − v(review text).")
    # the URL always shows the whole selection (also after a page switch cleared it)
    wanted = sel.params()
    if any(st.query_params.get(k) != v for k, v in wanted.items()):
        st.query_params.update(wanted)
    for note in sel.notes:
        sb.caption(f"URL: {ui.md(note)}")
    return sel


PAGES = {
    "summary": ("pages/summary.py", "Summary", ":material/leaderboard:"),
    "explorer": ("pages/explorer.py", "Review explorer", ":material/manage_search:"),
    "ndcg": ("pages/ndcg.py", "nDCG worked example", ":material/calculate:"),
    "compare": ("pages/compare.py", "Compare models", ":material/compare_arrows:"),
    "data": ("pages/data.py", "Data", ":material/database:"),
    "parity": ("pages/parity.py", "Notebook parity", ":material/difference:"),  # issue 4's page, when present
}


def main() -> None:
    pages = {
        name: st.Page(str(HERE / path), title=title, icon=icon, url_path=name, default=(name == "summary"))
        for name, (path, title, icon) in PAGES.items()
        if (HERE / path).is_file()
    }
    nav = st.navigation(list(pages.values()))
    st.sidebar.title("kweval")
    chosen = _choose_dataset()
    if chosen is None:
        st.info("Choose a dataset in the sidebar (Dataset).")
        st.stop()
    dataset, data_hash, label, upload_names = chosen
    if dataset.predictions.empty or not dataset.model_names:
        st.error("This dataset has no predictions to evaluate; see the problems below.")
        for p in dataset.problems:
            st.markdown(f"- {ui.md(p)}")
        st.stop()
    selection = _selection(dataset)
    options = EvalOptions(
        k=selection.k, match=selection.match, semantic=selection.semantic, sentiment=selection.sentiment,
        threshold=selection.threshold if selection.semantic else EvalOptions.threshold,  # τ changes nothing without sem
    )
    try:
        evaluation = get_evaluation(dataset, data_hash, options)
    except (ImportError, OSError, RuntimeError) as exc:  # no sentence-transformers / model / VADER: evaluate without them
        if not (options.semantic or options.sentiment):
            raise
        st.sidebar.error(f"Semantic/sentiment metrics unavailable: {ui.md(exc)}")
        options = EvalOptions(k=selection.k, match=selection.match)
        evaluation = get_evaluation(dataset, data_hash, options)
    st.sidebar.caption(f"Data: {ui.md(label)} · {len(dataset.movie_ids)} movies · {len(dataset.reviews)} reviews · {len(dataset.model_names)} models")
    st.session_state["ctx"] = Ctx(dataset, data_hash, evaluation, selection, options, pages, label, upload_names)
    nav.run()


main()
