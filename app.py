"""kweval dashboard: `streamlit run app.py` (embedded demo), `streamlit run app.py -- --data PATH`.

This file is the shell: the sidebar (dataset and selection, kept in the URL
query parameters) and the navigation.  It evaluates through
`dashboard.context` (cached by a content hash of the data and the options)
and hands a `Ctx` to the page `st.navigation` runs; the pages live in
`dashboard/views/` (not a `pages/` folder: no Streamlit auto-discovery).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from pathlib import Path

import streamlit as st

from dashboard.context import (
    Ctx,
    carry_url_warnings,
    cli_data_path,
    drop_unknown_params,
    get_evaluation,
    load_path,
    load_upload,
    selection_warnings,
    start_url_checks,
    url_notice,
)
from dashboard.escape import md
from dashboard.selection import (
    K_MAX,
    SELECTION_KEYS,
    TAU_MAX,
    TAU_MIN,
    TAU_STEP,
    Selection,
    format_tau,
    resolve_selection,
)
from dashboard.uploads import format_size, newest_by_name
from kweval.data import DatasetError
from kweval.data.dataset import Dataset
from kweval.embeddings.semantic import BACKENDS as EMBEDDING_BACKENDS
from kweval.evaluation.pipeline import AGGREGATIONS, EvalOptions
from kweval.text.matching import MATCH_MODES

HERE = Path(__file__).resolve().parent
st.set_page_config(page_title="kweval", page_icon=":material/key:", layout="wide")


# ---------------------------------------------------------------------------------------------
# sidebar: dataset and selection


def _choose_dataset() -> tuple[Dataset, str, str, dict[str, int]] | None:
    """The dataset chosen in the sidebar: (dataset, content hash, label, uploaded file sizes by name)."""
    configured = cli_data_path()
    allow_local = os.environ.get("KWEVAL_ALLOW_LOCAL_PATHS") == "1"
    sources = (["configured"] if configured else []) + ["demo", "upload"] + (["local"] if allow_local else [])
    labels = {
        "configured": "--data / KWEVAL_DATA",
        "demo": "Embedded demo",
        "upload": "Upload tidy tables",
        "local": "Local path",
    }
    with st.sidebar.expander("Dataset", expanded=False):
        source = st.radio("Source", sources, format_func=labels.get, key="data_source")
        try:
            if source == "configured":
                st.caption(f"Path: {md(configured)}")
                ds, h = load_path(configured)
                return ds, h, Path(configured).name, {}
            if source == "demo":
                ds, h = load_path(None)
                return ds, h, "embedded demo", {}
            if source == "upload":
                files = st.file_uploader(
                    "predictions, ground_truth (required), reviews, movies, models — .parquet or .csv",
                    type=["parquet", "csv"],
                    accept_multiple_files=True,
                    key="upload",
                )
                if not files:
                    st.info("Upload at least predictions and ground_truth tables.")
                    return None
                uploads = newest_by_name(
                    [(f.file_id, f.name, f.getvalue()) for f in files],
                    st.session_state.setdefault("upload_first_seen", {}),
                )
                for name, n in uploads.replaced.items():
                    st.info(
                        f"{md(name)} was uploaded {n + 1} times: the newest copy is used "
                        "(remove the older one with its ×).",
                        icon=":material/swap_horiz:",
                    )
                st.caption("Using: " + ", ".join(f"{md(n)} ({format_size(b)})" for n, b in uploads.sizes.items()))
                digest = hashlib.sha256(
                    b"".join(hashlib.sha256(n.encode() + b"\0" + b).digest() for n, b in uploads.files)
                ).hexdigest()
                ds, h = load_upload(digest, uploads.files)
                return ds, h, "upload", uploads.sizes
            path = st.text_input("Folder on this server", key="local_path")
            if not path:
                return None
            ds, h = load_path(path)
            return ds, h, Path(path).name, {}
        except (DatasetError, OSError) as exc:  # OSError: a typed path the OS refuses (too long, unreadable)
            st.error(md(str(exc)))
            return None


def _selection(dataset: Dataset) -> Selection:
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
        "present": None if "sel_present" not in st.session_state else ("1" if st.session_state["sel_present"] else "0"),
    }
    url = {k: st.query_params.get(k) for k in SELECTION_KEYS}
    sel = resolve_selection([url, session], movies, models, present_default=dataset.per_document)
    st.session_state["sel_movie"] = sel.movie
    st.session_state["sel_models"] = list(sel.models)
    st.session_state["sel_k"] = sel.k
    st.session_state["sel_agg"] = sel.agg
    st.session_state["sel_match"] = sel.match
    st.session_state["sel_sem"] = sel.semantic
    st.session_state["sel_tau"] = sel.threshold
    st.session_state["sel_sas"] = sel.sentiment
    st.session_state["sel_present"] = sel.present

    def push(name: str, value: Callable[[], str]) -> Callable[[], None]:
        def sync() -> None:
            st.query_params[name] = value()

        return sync

    titles = dict(zip(dataset.movies["movie"], dataset.movies["title"]))
    movie_name, _ = dataset.unit_names()  # "Collection" where each document has its own GT
    sb = st.sidebar
    sb.selectbox(
        movie_name,
        ["ALL", *movies],
        key="sel_movie",
        on_change=push("movie", lambda: st.session_state["sel_movie"]),
        format_func=lambda m: (
            f"All {movie_name.lower()}s"
            if m == "ALL"
            else f"{titles.get(m, m)}" + ("" if titles.get(m, m) == m else f" ({m})")
        ),
    )
    sb.multiselect(
        "Models", models, key="sel_models", on_change=push("models", lambda: ",".join(st.session_state["sel_models"]))
    )
    sb.number_input(
        "k (cut-off of the @k metrics)",
        min_value=1,
        max_value=K_MAX,
        step=1,
        key="sel_k",
        on_change=push("k", lambda: str(st.session_state["sel_k"])),
    )
    sb.radio(
        "Aggregation",
        list(AGGREGATIONS),
        key="sel_agg",
        horizontal=True,
        on_change=push("agg", lambda: st.session_state["sel_agg"]),
        help="macro: mean over reviews; micro: ratios of sums (set-based and weighted metrics).",
    )
    sb.selectbox(
        "Match mode",
        list(MATCH_MODES),
        key="sel_match",
        on_change=push("match", lambda: st.session_state["sel_match"]),
        help="approx: equal or substring (default); exact; word: whole tokens; stem: Porter stems equal.",
    )
    sb.toggle(
        "Semantic matching",
        key="sel_sem",
        on_change=push("sem", lambda: "1" if st.session_state["sel_sem"] else "0"),
        help="sem_precision / sem_recall / sem_f1 (docs/metrics.md §4): a keyword counts when its cosine to some "
        "GT keyword "
        "(sentence embeddings, all-MiniLM-L6-v2) is above the threshold. The first run embeds and caches the keywords.",
    )
    sb.slider(
        "Cosine threshold τ",
        min_value=TAU_MIN,
        max_value=TAU_MAX,
        step=TAU_STEP,
        format="%.2f",
        key="sel_tau",
        disabled=not sel.semantic,
        on_change=push("tau", lambda: format_tau(st.session_state["sel_tau"])),
        help="Strict: a cosine must exceed τ.",
    )
    sb.selectbox(
        "Embedding backend",
        EMBEDDING_BACKENDS,
        key="sel_backend",
        disabled=not sel.semantic,
        help="auto: onnx on the CPU, torch on a GPU. onnx gives torch's vectors (faster on CPU); onnx-int8 is "
        "quantized (faster, approximate). Each backend keeps its own cache.",
    )
    sb.toggle(
        "Sentiment (VADER)",
        key="sel_sas",
        on_change=push("sas", lambda: "1" if st.session_state["sel_sas"] else "0"),
        help="sas_keywords / sas_text (docs/metrics.md §5): 1 − |mean v(keywords) − mean v(GT)| and − v(review text).",
    )
    sb.toggle(
        "Present / absent split",
        key="sel_present",
        on_change=push("present", lambda: "1" if st.session_state["sel_present"] else "0"),
        help="recall_present, f1@k_present, recall_absent (docs/metrics.md §9): GT keywords split by "
        "whether they occur in the review's own text under the match mode.",
    )
    # the URL always shows the whole selection (also after a page switch cleared it)
    wanted = sel.params()
    if any(st.query_params.get(k) != v for k, v in wanted.items()):
        st.query_params.update(wanted)
    for message in selection_warnings(url, sel, movies, models):
        url_notice(message)
    return sel


VIEWS = HERE / "dashboard" / "views"
PAGES = {  # URL path (= file name) -> title, icon
    "summary": ("Summary", ":material/leaderboard:"),
    "explorer": ("Review explorer", ":material/manage_search:"),
    "ndcg": ("nDCG worked example", ":material/calculate:"),
    "compare": ("Compare models", ":material/compare_arrows:"),
    "data": ("Data", ":material/database:"),
    "parity": ("Notebook parity", ":material/difference:"),
}


def _pages() -> dict[str, st.Page]:
    """Every view at /NAME, plus a hidden start page at / that opens /summary with the same query."""
    pages = {
        name: st.Page(VIEWS / f"{name}.py", title=title, icon=icon, url_path=name)
        for name, (title, icon) in PAGES.items()
    }

    def start() -> None:
        carry_url_warnings()
        st.switch_page(pages["summary"], query_params=st.query_params.to_dict())

    # Streamlit serves its default page at "/" only; a hidden default keeps "/summary" a real address
    pages["start"] = st.Page(start, title="kweval", url_path="start", default=True, visibility="hidden")
    return pages


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


def main() -> None:
    pages = _pages()
    nav = st.navigation(list(pages.values()))
    start_url_checks()
    st.sidebar.title("kweval")
    chosen = _choose_dataset()
    if chosen is None:
        st.info("Choose a dataset in the sidebar (Dataset).")
        st.stop()
    dataset, data_hash, label, uploads = chosen
    _mark_upload_links(label, bool(uploads))
    if dataset.predictions.empty or not dataset.model_names:
        st.error("This dataset has no predictions to evaluate; see the problems below.")
        for p in dataset.problems:
            st.markdown(f"- {md(p)}")
        st.stop()
    selection = _selection(dataset)
    present = selection.present
    options = EvalOptions(
        k=selection.k,
        match=selection.match,
        semantic=selection.semantic,
        sentiment=selection.sentiment,
        threshold=selection.threshold if selection.semantic else EvalOptions.threshold,  # τ changes nothing without sem
        embedding_backend=st.session_state.get("sel_backend", EvalOptions.embedding_backend)
        if selection.semantic
        else EvalOptions.embedding_backend,
        keyphrase=dataset.per_document,
        present=present,
    )
    try:
        evaluation = get_evaluation(dataset, data_hash, options)
    except (
        ImportError,
        OSError,
        RuntimeError,
    ) as exc:  # no sentence-transformers / model / VADER: evaluate without them
        if not (options.semantic or options.sentiment):
            raise
        st.sidebar.error(f"Semantic/sentiment metrics unavailable: {md(exc)}")
        options = EvalOptions(k=selection.k, match=selection.match, keyphrase=dataset.per_document, present=present)
        evaluation = get_evaluation(dataset, data_hash, options)
    movie_name, review_name = dataset.unit_names()
    st.sidebar.caption(
        f"Data: {md(label)} · {len(dataset.movie_ids)} {movie_name.lower()}(s) · {len(dataset.reviews)} "
        f"{review_name.lower()}(s) · {len(dataset.model_names)} models"
    )
    st.session_state["ctx"] = Ctx(dataset, data_hash, evaluation, selection, options, pages, label, uploads)
    nav.run()
    drop_unknown_params()  # only after a page that ran to its end: one that stopped early read less


main()
