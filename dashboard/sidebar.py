"""The shared sidebar every page draws first: links to the pages (from `PAGES`), the dataset, the selection.

Streamlit's classic multipage mode: `pages/NAME.py` is served at `/NAME` and runs on its own (a deep link is
a fresh run of that file alone), so each page calls `open_page(__file__)`, which draws this sidebar, evaluates
through the caches of `dashboard.state` and returns the page's `Ctx`.  Streamlit's own page list is hidden
(`client.showSidebarNavigation = false`); the links here carry the selection in their query.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import streamlit as st

from dashboard.escape import md, visible
from dashboard.prediction_uploads import added_predictions
from dashboard.selection import (
    K_MAX,
    PROTOCOL_DEFAULT,
    PROTOCOLS,
    SELECTION_KEYS,
    TAU_MAX,
    TAU_MIN,
    TAU_STEP,
    Selection,
    format_tau,
    param_parsers,
    parse_protocol,
    resolve_selection,
    selection_defaults,
)
from dashboard.state import Ctx, cli_data_path, get_evaluation, load_path, load_upload
from dashboard.uploads import format_size, kept_uploads, newest_by_name, one_per_table
from dashboard.url_state import (
    invalid_param_message,
    one_url_update,
    remember_source,
    session_widget,
    start_url_checks,
    switch_source,
    url_notice,
    url_value,
    url_widget,
    written_by_us,
)
from kweval.data import DatasetError
from kweval.data.dataset import Dataset
from kweval.data.vocabulary import vocabulary
from kweval.embeddings.semantic import BACKENDS as EMBEDDING_BACKENDS
from kweval.evaluation.options import match_reason
from kweval.evaluation.pipeline import AGGREGATIONS, EvalOptions
from kweval.lattice.explain import NEEDS_PER_DOCUMENT
from kweval.text.matching import MATCH_MODES


@dataclass(frozen=True)
class Page:
    """A page of the dashboard: `pages/{name}.py`, served at `/{name}`."""

    name: str
    label: str
    icon: str
    movie_level_only: bool = False  # applies to the DNLP layout only (movie-level GT shared by the reviews)
    per_document_only: bool = False  # applies to per-document GT only (keyphrase benchmarks)

    def applies(self, dataset: Dataset) -> bool:
        """Whether the page has something to show for `dataset`."""
        return not (
            self.movie_level_only and dataset.per_document or self.per_document_only and not dataset.per_document
        )

    @property
    def file(self) -> str:
        return f"pages/{self.name}.py"


PAGES = (
    Page("summary", "Summary", ":material/leaderboard:"),
    Page("explorer", "Review explorer", ":material/manage_search:"),
    Page("ndcg", "nDCG worked example", ":material/calculate:"),
    Page("compare", "Compare models", ":material/compare_arrows:"),
    Page("history", "Run history", ":material/history:"),
    Page("failures", "Why models fail", ":material/troubleshoot:"),
    Page("data", "Data", ":material/database:"),
    Page("parity", "Notebook parity", ":material/difference:", movie_level_only=True),
    Page("protocols", "Protocols", ":material/balance:", per_document_only=True),
)
PAGE_FILES = {page.name: page.file for page in PAGES}
SOURCE_LABELS = {
    "configured": "--data / KWEVAL_DATA",
    "demo": "Embedded demo",
    "upload": "Upload tidy tables",
    "local": "Local path",
}


def open_page(file: str) -> Ctx:
    """Start the page `file` (its `__file__`): page config, the sidebar, the evaluation; stop with a message
    when there is nothing to show."""
    name = Path(file).stem
    page = next((p for p in PAGES if p.name == name), Page(name, name, ":material/key:"))
    st.set_page_config(page_title=f"{page.label} · kweval", page_icon=":material/key:", layout="wide")
    start_url_checks(name)
    st.sidebar.title("kweval")
    links = st.sidebar.container()  # filled once the selection is known: the links carry it
    chosen = _choose_dataset(name)
    if chosen is None:
        st.info("Choose a dataset in the sidebar (Dataset).")
        st.stop()
    dataset, data_hash, source_label, uploads, added = chosen
    label = vocabulary(dataset).say(page.label)  # "Document explorer" on per-document data, in the browser's tab too
    st.set_page_config(page_title=f"{label} · kweval", page_icon=":material/key:", layout="wide")
    _mark_upload_links(source_label, bool(uploads))
    if dataset.predictions.empty or not dataset.model_names:
        st.error("This dataset has no predictions to evaluate; see the problems below.")
        for p in dataset.problems:
            st.markdown(f"- {md(p)}")
        st.stop()
    with one_url_update():  # its ten settings written to the URL at once
        selection = _selection(dataset, data_hash, source_label)
    _page_links(links, selection.params(), dataset)
    if not page.applies(dataset):
        st.title(page.label)
        if page.movie_level_only:
            st.info(
                f"{page.label} applies only to the DNLP layout (one ranked GT list shared by a group of texts, the "
                "notebooks' data); this data has a GT list per document."
            )
        else:
            st.info(f"{page.label}: {md(NEEDS_PER_DOCUMENT)}.")
        st.stop()
    if not selection.models:
        st.info("Choose at least one model in the sidebar (Models).")
        st.stop()
    options = _options(dataset, selection)
    try:
        evaluation = get_evaluation(dataset, data_hash, options)
    except (ImportError, OSError, RuntimeError) as exc:  # no sentence-transformers / model / VADER: without them
        if not (options.semantic or options.sentiment or options.grounding):
            raise
        st.sidebar.error(f"Semantic/sentiment/grounding metrics unavailable: {md(exc)}")
        options = EvalOptions(
            k=selection.k, match=selection.match, keyphrase=dataset.per_document, present=selection.present
        )
        evaluation = get_evaluation(dataset, data_hash, options)
    movie_name, review_name = dataset.unit_names()
    st.sidebar.caption(
        f"Data: {md(source_label)} · {len(dataset.movie_ids)} {movie_name.lower()}(s) · {len(dataset.reviews)} "
        f"{review_name.lower()}(s) · {len(dataset.model_names)} models"
    )
    ctx = Ctx(dataset, data_hash, evaluation, selection, options, PAGE_FILES, source_label, uploads, added)
    st.session_state["ctx"] = ctx  # the latest run's, for tests and tools (pages use the returned one)
    return ctx


def _page_links(where, query: dict[str, str], dataset: Dataset) -> None:
    """A link to every page of `PAGES` that applies to `dataset`, each carrying the selection `query`."""
    words = vocabulary(dataset)
    for page in PAGES:
        if not page.applies(dataset):
            continue
        where.page_link(page.file, label=words.say(page.label), icon=page.icon, query_params=query)


def _options(dataset: Dataset, selection: Selection) -> EvalOptions:
    """The evaluation options of the selection (τ and the backend change nothing without semantic matching)."""
    return EvalOptions(
        k=selection.k,
        match=selection.match,
        semantic=selection.semantic,
        sentiment=selection.sentiment,
        threshold=round(selection.threshold, 2) if selection.semantic else EvalOptions.threshold,  # the slider's grid
        embedding_backend=selection.backend if selection.semantic else EvalOptions.embedding_backend,
        keyphrase=dataset.per_document,
        present=selection.present,
        grounding=selection.grounding,
        diversity=selection.grounding,
    )


Chosen = tuple[Dataset, str, str, dict[str, int], dict[str, str]]


def _choose_dataset(page: str) -> Chosen | None:
    """The dataset chosen in the sidebar: (dataset, content hash, label, uploaded file sizes by name, {model: the
    prediction file added for it in the sidebar})."""
    with st.sidebar.expander("Dataset", expanded=False):
        chosen = _source_dataset(page)
        if chosen is None:
            return None
        dataset, data_hash, label, uploads = chosen
        dataset, data_hash, added = added_predictions(dataset, data_hash, page)  # one file per model
        return dataset, data_hash, label, uploads, added


def _source_dataset(page: str) -> tuple[Dataset, str, str, dict[str, int]] | None:
    """The data of the source chosen in the Dataset expander: (dataset, content hash, label, uploaded sizes)."""
    configured = cli_data_path()
    allow_local = os.environ.get("KWEVAL_ALLOW_LOCAL_PATHS") == "1"
    sources = (["configured"] if configured else []) + ["demo", "upload"] + (["local"] if allow_local else [])
    source = session_widget(st.radio, "Source", "data_source", options=sources, format_func=SOURCE_LABELS.get)
    try:
        if source == "configured":
            st.caption(f"Path: {md(configured)}")
            ds, h = load_path(configured)
            return ds, h, Path(str(configured)).name, {}
        if source == "demo":
            ds, h = load_path(None)
            return ds, h, "embedded demo", {}
        if source == "upload":
            return _uploaded(page)
        path = session_widget(st.text_input, "Folder on this server", "local_path")
        if not path:
            return None
        if not path.isprintable():  # a NUL byte (which no file name holds), a newline, a bidi mark
            st.error(
                f"kweval: local path “{md(visible(path))}”: holds an unprintable character "
                "(shown as an escape); type the folder's path again."
            )
            return None
        ds, h = load_path(path)
        return ds, h, Path(path).name, {}
    except (DatasetError, OSError) as exc:  # OSError: a typed path the OS refuses (too long, unreadable)
        st.error(md(str(exc)))
        return None


def _uploaded(page: str) -> tuple[Dataset, str, str, dict[str, int]] | None:
    """The uploaded tidy tables: this page's uploader plus what was uploaded on other pages (a widget's
    state is per page, the uploads are the session's), the newest copy of each file name."""
    files = st.file_uploader(
        "predictions, ground_truth (required), reviews, movies, models — .parquet or .csv",
        type=["parquet", "csv"],
        accept_multiple_files=True,
        key="upload",
    )
    kept = _kept_uploads(page, [(f.file_id, f.name, f.getvalue()) for f in files or []])
    if not kept:
        st.info("Upload at least predictions and ground_truth tables.")
        return None
    if len(kept) > len(files or []):
        st.caption("Tables uploaded on another page are still in use.")
        if st.button("Forget the uploaded tables", key="forget_uploads"):
            st.session_state.pop(UPLOADS, None)
            st.rerun()
    uploads = newest_by_name(kept, st.session_state.setdefault("upload_first_seen", {}))
    for name, n in uploads.replaced.items():
        st.info(
            f"{md(name)} was uploaded {n + 1} times: the newest copy is used (remove the older one with its ×).",
            icon=":material/swap_horiz:",
        )
    files, same_table = one_per_table(uploads.files)  # predictions.csv and .parquet together: say which is used
    for note in same_table:
        st.info(md(note), icon=":material/rule:")
    uploads = replace(uploads, files=files)
    st.caption("Using: " + ", ".join(f"{md(n)} ({format_size(b)})" for n, b in uploads.sizes.items()))
    digest = hashlib.sha256(
        b"".join(hashlib.sha256(n.encode() + b"\0" + b).digest() for n, b in uploads.files)
    ).hexdigest()
    ds, h = load_upload(digest, uploads.files)
    return ds, h, "upload", uploads.sizes


UPLOADS = "uploads__remembered"  # session state: {"files": {file id: (name, bytes)}, "page": str, "shown": set}


def _kept_uploads(page: str, current: list[tuple[str, str, bytes]]) -> list[tuple[str, str, bytes]]:
    """The session's uploaded tables (`dashboard.uploads.kept_uploads`)."""
    return kept_uploads(st.session_state.setdefault(UPLOADS, {}), page, current)


def _flag(value: bool) -> str:
    return "1" if value else "0"


def _selection(dataset: Dataset, data_hash: str, source_label: str) -> Selection:
    """The sidebar's selection widgets, each bound to its URL parameter (`url_widget`, kept in the URL); the movie and
    the models are remembered per data source (`switch_source`): another source's names are not carried over."""
    movies, models = dataset.movie_ids, dataset.model_names
    before = switch_source(data_hash, DATA_BOUND)
    url = {k: st.query_params.get(k) for k in SELECTION_KEYS}  # as the visitor gave them, before any rewrite
    parse = param_parsers(movies, models)
    default = selection_defaults(movies, models, present_default=dataset.per_document)
    titles = dict(zip(dataset.movies["movie"], dataset.movies["title"]))
    movie_name, _ = dataset.unit_names()  # "Collection" where each document has its own GT

    words = vocabulary(dataset)

    def bind(widget: Callable[..., Any], label: str, param: str, fmt: Callable[[Any], str] = str, **kwargs: Any) -> Any:
        key = f"sel_{param}"
        if "help" in kwargs:
            kwargs["help"] = words.say(kwargs["help"])  # the data's words: documents, not reviews
        return url_widget(widget, label, param, default[param], parse[param], fmt, key, keep=True, warn=False, **kwargs)

    sb = st.sidebar
    movie = bind(
        sb.selectbox,
        movie_name,
        "movie",
        options=["ALL", *movies],
        format_func=lambda m: (
            f"All {movie_name.lower()}s"
            if m == "ALL"
            else f"{titles.get(m, m)}" + ("" if titles.get(m, m) == m else f" ({m})")
        ),
    )
    chosen = bind(sb.multiselect, "Models", "models", fmt=",".join, options=models)
    remember_source(data_hash, {"movie": movie, "models": list(chosen)})
    if before is not None:
        _say_switch(before, list(chosen), models, source_label)
    # the nDCG page's own k (`ek`) starts from the sidebar's: a change here resets it
    k = bind(
        sb.number_input, "k (cut-off of the @k metrics)", "k", min_value=1, max_value=K_MAX, step=1, resets=("ek",)
    )
    agg = bind(
        sb.radio,
        "Aggregation",
        "agg",
        options=list(AGGREGATIONS),
        horizontal=True,
        help="macro: mean over reviews; micro: ratios of sums (set-based and weighted metrics).",
    )
    match = bind(
        sb.selectbox,
        "Match mode",
        "match",
        options=list(MATCH_MODES),
        help="approx: equal or substring; exact; word: whole tokens; stem: Porter stems equal. Default here: "
        f"{default['match']}, {match_reason(default['match'], dataset.per_document)}.",
    )
    semantic, tau, backend = _semantic_controls(bind)  # in Selection's order: sem, tau, then sas, present, backend
    sentiment, present, grounding = _toggles(bind)
    protocol = _carried_protocol(dataset)
    sel = Selection(
        movie, tuple(chosen), int(k), agg, match, semantic, tau, sentiment, present, str(backend), grounding, protocol
    )
    for message in selection_warnings(url, sel, movies, models):
        url_notice(message)
    return sel


def _toggles(bind: Callable[..., Any]) -> tuple[bool, bool, bool]:
    """The add-ons' toggles: (sentiment, the present/absent split, grounding and diversity)."""
    sb = st.sidebar
    sentiment = bind(
        sb.toggle,
        "Sentiment (VADER)",
        "sas",
        fmt=_flag,
        help="sas_keywords / sas_text (docs/metrics.md §5): 1 − |mean v(keywords) − mean v(GT)| and − v(review text).",
    )
    present = bind(
        sb.toggle,
        "Present / absent split",
        "present",
        fmt=_flag,
        help="recall_present, f1@k_present, recall_absent (docs/metrics.md §9): GT keywords split by "
        "whether they occur in the review's own text under the match mode.",
    )
    grounding = bind(
        sb.toggle,
        "Grounding & diversity",
        "grd",
        fmt=_flag,
        help="grounded_present / grounded_supported / unsupported and dup_token_ratio / self_similarity "
        "(docs/metrics.md §12): each keyword graded against its own text (present, supported by a sentence, or "
        "unsupported), and each list's repetition. The first run embeds and caches the sentences.",
    )
    return bool(sentiment), bool(present), bool(grounding)


DATA_BOUND = ("movie", "models")  # parameters naming one dataset's movies and models: remembered per source


def _say_switch(before: dict, chosen: list[str], models: Sequence[str], source_label: str) -> None:
    """After a change of data source: say which models of the other data this one lacks and what is shown instead
    (this data's last selection in the session, or all its models)."""
    missing = [m for m in before.get("models") or () if m not in models]
    if not missing:
        return
    url_notice(
        f"Data source changed to {md(source_label)}: model(s) {md(', '.join(missing))} of the previous data are not "
        f"in it; showing {md(', '.join(chosen))} (this data's own selection; all its models the first time)."
    )


def _carried_protocol(dataset: Dataset) -> str | None:
    """The keyphrase preset on per-document data (``protocol``), None on movie-level data (no such parameter).

    Only Summary and Compare show its selector (`dashboard.protocol_select`), but every page reads it, remembers it
    and keeps it in the URL and its links, as the sidebar's settings: Summary (pke) → Explorer → Compare shows pke.
    """
    if not dataset.per_document:
        return None
    raw = st.query_params.get("protocol")
    value = url_value("protocol", PROTOCOL_DEFAULT, parse_protocol, options=list(PROTOCOLS))
    if raw and not written_by_us("protocol", raw) and parse_protocol(raw) is None:
        url_notice(invalid_param_message("protocol", raw, value))
    return value


def _semantic_controls(bind: Callable[..., Any]) -> tuple[bool, float, str]:
    """The semantic matching toggle, its threshold τ and the embedding backend: (semantic, τ, backend)."""
    sb = st.sidebar
    semantic = bind(
        sb.toggle,
        "Semantic matching",
        "sem",
        fmt=_flag,
        help="sem_precision / sem_recall / sem_f1 (docs/metrics.md §4): a keyword counts when its cosine to some "
        "GT keyword (sentence embeddings, all-MiniLM-L6-v2) is above the threshold. The first run embeds and "
        "caches the keywords.",
    )
    tau = bind(
        sb.slider,
        "Cosine threshold τ",
        "tau",
        fmt=format_tau,
        min_value=TAU_MIN,
        max_value=TAU_MAX,
        step=TAU_STEP,
        format="%.2f",
        disabled=not semantic,
        help="Strict: a cosine must exceed τ.",
    )
    backend = bind(
        sb.selectbox,
        "Embedding backend",
        "backend",
        options=list(EMBEDDING_BACKENDS),
        disabled=not semantic,
        help="auto: onnx on the CPU, torch on a GPU. onnx gives torch's vectors (faster on CPU); onnx-int8 is "
        "quantized (faster, approximate). Each backend keeps its own cache.",
    )
    return bool(semantic), float(tau), backend


def selection_warnings(
    url: dict[str, str | None], selection: Selection, movies: Sequence[str], models: Sequence[str]
) -> list[str]:
    """A warning per sidebar URL parameter whose value (or part of it, for `models`) was not used; none for a value
    the dashboard wrote itself (e.g. the models of the data source the visitor just left)."""
    used = selection.params()
    out = []
    for name in SELECTION_KEYS:
        raw = url.get(name)
        if raw is None or raw == "" or written_by_us(name, raw):
            continue
        alone = resolve_selection([{name: raw}], movies, models)
        if alone.notes:
            out.append(invalid_param_message(name, raw, used[name]))
        elif name == "models":
            unknown = [m for m in dict.fromkeys(s.strip() for s in raw.split(",")) if m not in models]
            if unknown:
                out.append(
                    f"URL parameter **models**: unknown model(s) {md(', '.join(unknown))} ignored; "
                    f"used {md(used['models'])}."
                )
    return out


def _mark_upload_links(source_label: str, uploaded: bool) -> None:
    """Links made from uploaded data say so (`data=upload`); opened where no upload is loaded, warn."""
    if uploaded:
        st.query_params["data"] = "upload"
    elif st.query_params.get("data") is not None:
        if st.query_params.get("data") == "upload":
            url_notice(
                f"This link was made with **uploaded** data, which a link cannot carry: showing {md(source_label)} "
                "instead. Upload the same files (sidebar ▸ Dataset ▸ Upload tidy tables) to see what the link showed."
            )
        else:
            url_notice(f"URL parameter **data**: “{md(st.query_params.get('data'))}” is not a valid value; ignored.")
        st.query_params.pop("data", None)
