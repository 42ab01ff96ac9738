"""Prediction files added in the sidebar to the chosen data: one file per model, the file's name the model's name.

What `--predictions NAME=PATH` does on the command line, for people with a keyphrase collection (or any data) and
a few extractors' outputs: each uploaded JSONL, CSV or Parquet file (never a pickle) is read by the core's reader
(`kweval.data.predictions.attach_predictions`) from a temporary copy; a model of the same name is replaced (said
on the Data page, with every other problem, under the uploaded file's name).  The result is cached by the data's
content hash and the files' digest, and gets its own content hash (a new data source for the sidebar's selection).
"""

from __future__ import annotations

import hashlib
import tempfile
from dataclasses import replace
from pathlib import Path

import streamlit as st

from dashboard.escape import md
from dashboard.uploads import format_size, kept_uploads, newest_by_name
from kweval.data.dataset import Dataset
from kweval.data.predictions import JSONL_SUFFIXES, TABLE_SUFFIXES, attach_predictions

TYPES = [s.lstrip(".") for s in (*JSONL_SUFFIXES, *TABLE_SUFFIXES)]
MEMORY = "prediction_uploads__remembered"  # session state: `dashboard.uploads.kept_uploads`'s memory


def model_name(file_name: str) -> str:
    """The model an uploaded file holds: its name without folders and suffix ("yake.jsonl" -> "yake")."""
    return Path(Path(file_name).name).stem


@st.cache_resource(show_spinner="Reading the added predictions…", max_entries=8)
def _attach(
    data_hash: str, digest: str, _dataset: Dataset, _files: tuple[tuple[str, bytes], ...]
) -> tuple[Dataset, str]:
    with tempfile.TemporaryDirectory(prefix="kweval-predictions-") as folder:
        paths, names = {}, {}
        for i, (name, data) in enumerate(_files):
            path = Path(folder) / f"{i}{Path(name).suffix.lower()}"  # no user string in a path
            path.write_bytes(data)
            paths[model_name(name)], names[str(path)] = path, name
        dataset = attach_predictions(_dataset, paths)
    problems = [replace(p, source=names.get(p.source, p.source)) for p in dataset.problems]  # the file's own name
    dataset = replace(dataset, problems=problems)
    return dataset, dataset.content_hash()


def added_predictions(dataset: Dataset, data_hash: str, page: str) -> tuple[Dataset, str, dict[str, str]]:
    """The sidebar's "Add predictions" uploader under the chosen data: (the data with the added models, its content
    hash, {model: uploaded file name}); the data unchanged when nothing is added."""
    files = st.file_uploader(
        "Add predictions: one file per model",
        type=TYPES,
        accept_multiple_files=True,
        key="prediction_upload",
        help="Each file is one model's predictions and its name is the model's name (yake.jsonl is the model yake): "
        'JSONL ({"id": doc, "keyphrases": [...]}) or a tidy .csv/.parquet, as `--predictions NAME=PATH` reads them.',
    )
    kept = kept_uploads(
        st.session_state.setdefault(MEMORY, {}), page, [(f.file_id, f.name, f.getvalue()) for f in files or []]
    )
    if not kept:
        return dataset, data_hash, {}
    newest = newest_by_name(kept, st.session_state.setdefault("prediction_upload_first_seen", {}))
    added = {model_name(name): name for name, _ in newest.files}
    st.caption(
        "Added model(s): "
        + ", ".join(f"{md(m)} ({md(n)}, {format_size(newest.sizes[n])})" for m, n in added.items())
        + ". A link cannot carry them: upload them again where it is opened."
    )
    if len(kept) > len(files or []) and st.button("Forget the added predictions", key="forget_predictions"):
        st.session_state.pop(MEMORY, None)
        st.rerun()
    digest = hashlib.sha256(
        b"".join(hashlib.sha256(n.encode() + b"\0" + b).digest() for n, b in newest.files)
    ).hexdigest()
    with_added, new_hash = _attach(data_hash, digest, dataset, newest.files)
    return with_added, new_hash, added
