"""What the History page reads, cached: the run store's runs and summaries (reloaded when the database changes), the
reference hash of the data on screen, the paired comparison of two runs (`kweval.runs.compare_runs`, the function
`kweval runs compare` calls), and explorer links at a run's settings."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import pandas as pd
import streamlit as st

from dashboard.links import page_links
from dashboard.selection import K_MAX, TAU_MAX, TAU_MIN
from dashboard.state import Ctx
from kweval.runs import RunComparison, RunInfo, RunStore, compare_runs, evaluation_reference


def _stamp(path: Path) -> tuple:
    """Sizes and modification times of the database and its WAL: reload when a run is recorded or deleted."""
    out = []
    for part in (path, path.with_name(path.name + "-wal")):
        try:
            info = part.stat()
            out.append((info.st_size, info.st_mtime_ns))
        except OSError:
            out.append(None)
    return tuple(out)


@st.cache_data(show_spinner="Reading the run history…", max_entries=4)
def _load(path: str, stamp: tuple) -> tuple[list[RunInfo], pd.DataFrame]:
    store = RunStore(path)
    return store.runs(), store.summary()


def load_history() -> tuple[RunStore, list[RunInfo], pd.DataFrame]:
    """(the store, its runs oldest first, their recorded ALL summaries); a RunsError when it cannot be read."""
    store = RunStore()
    runs, summary = _load(str(store.path), _stamp(store.path))
    return store, runs, summary


@st.cache_data(show_spinner=False, max_entries=8)
def _reference(key: tuple, _evaluation) -> str:
    return evaluation_reference(_evaluation)


def data_reference(ctx: Ctx) -> str:
    """The reference hash of the data on screen: the dataset_sha256 its runs carry."""
    return _reference(ctx.tau_free_key, ctx.evaluation)


@st.cache_data(show_spinner="Comparing the two runs (paired bootstrap, randomization test)…", max_entries=16)
def _comparison(path: str, a: str, b: str, model: str | None, metrics: tuple | None) -> RunComparison:
    store = RunStore(path)
    return compare_runs(store, store.get(a), store.get(b), None if metrics is None else list(metrics), model)


def comparison(store: RunStore, a: RunInfo, b: RunInfo, model: str | None) -> RunComparison:
    """Run B against run A on every metric both hold: `kweval runs compare A B [--model M]` (a recorded run never
    changes, so the result is kept by the runs' ids)."""
    return _comparison(str(store.path), a.id, b.id, model, None)


def run_links(ctx: Ctx, info: RunInfo, models: Sequence[str], units: pd.DataFrame) -> list[str]:
    """Links opening each unit (movie, review_id) of `units` in the explorer at the run's settings (k, match,
    aggregation, semantic τ and backend, sentiment, present/absent) with `models` (those the data on screen has)."""
    o = info.options
    sel = ctx.selection
    shown = tuple(m for m in dict.fromkeys(models) if m in ctx.dataset.model_names) or sel.models
    at_run = replace(
        sel,
        models=shown,
        k=min(int(o.get("k", sel.k)), K_MAX),
        agg=info.aggregate if info.aggregate in ("macro", "micro") else sel.agg,
        match=str(o.get("match", sel.match)),
        semantic=bool(o.get("semantic", False)),
        threshold=min(max(float(o.get("threshold", sel.threshold)), TAU_MIN), TAU_MAX),
        sentiment=bool(o.get("sentiment", False)),
        present=bool(o.get("present", sel.present)),
        backend=str(o.get("embedding_backend", sel.backend)),
    )
    return page_links(
        "explorer",
        at_run,
        movie=units["movie"].tolist(),
        review=units["review_id"].tolist(),
        hl=[shown[-1]] * len(units),
    )
