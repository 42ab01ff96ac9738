"""The Summary's "Record this run": the evaluation on screen kept in the run history, as `kweval evaluate --record`
keeps it (`kweval.runs`), then one click away on the History page."""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from dashboard.escape import md
from dashboard.state import Ctx
from kweval.data import DatasetError, demo_path, detect_layout
from kweval.io.card import dataset_hash, evaluation_card
from kweval.messages import line
from kweval.runs import RunsError, RunSource, RunStore, evaluate_arguments, evaluation_tables, record_run

ICON = ":material/history:"


def run_source(ctx: Ctx) -> RunSource:
    """Where the numbers on screen come from: the data's path (its files' hash, the `kweval evaluate` arguments
    that evaluate it again), or the uploaded tables (their content hash; not re-runnable: a link cannot carry them)."""
    dataset, sel = ctx.dataset, ctx.selection
    source = str(dataset.source)
    if source == "upload":
        card = evaluation_card(ctx.options, source, ctx.data_hash, aggregation=sel.agg)
        return RunSource("upload", "tidy", dataset.per_document, ctx.data_hash, None, card)
    path = None if source == "demo" else source
    folder = Path(path) if path else demo_path()
    try:
        layout = detect_layout(folder)
    except DatasetError:
        layout = "unknown"
    inputs = dataset_hash(folder)
    arguments = evaluate_arguments(path, ctx.options, aggregate=sel.agg, models=list(sel.models))
    card = evaluation_card(ctx.options, source, inputs, aggregation=sel.agg)
    return RunSource(
        "demo" if path is None else str(folder.resolve()), layout, dataset.per_document, inputs, arguments, card
    )


def record_button(ctx: Ctx, protocol: str) -> None:
    """A popover: the run's name and "Record this run" (the selected models, every movie, the sidebar's settings)."""
    sel = ctx.selection
    with st.popover("Record this run", icon=ICON):
        if protocol != "kweval":
            st.caption(
                f"Runs under a preset are recorded from the command line: `kweval evaluate DATA --protocol "
                f"{protocol} --predictions NAME=PATH --record`."
            )
            return
        st.caption(
            f"Keeps this evaluation in the run history ({md(str(RunStore().path))}): the per-"
            f"{ctx.words.review.lower()} scores of {md(', '.join(sel.models))} on every {ctx.words.movie.lower()}, "
            f"the summary and every setting, as `kweval evaluate --record` does. Compare runs on the History page."
        )
        name = st.text_input("Name", key="record_name", placeholder="default: the models and the time")
        if not st.button("Record this run", key="record_run", icon=ICON):
            return
        try:
            with st.spinner("Recording…"):
                tables = evaluation_tables(ctx.evaluation, sel.agg, ctx.summary(), models=list(sel.models))
                info = record_run(
                    RunStore(),
                    tables,
                    run_source(ctx),
                    protocol="kweval",
                    aggregate=sel.agg,
                    options=ctx.options.as_dict(),
                    name=name,
                )
        except RunsError as exc:
            st.error(md(line(exc.source, exc.reason)))
            return
        st.success(f"Recorded run {md(info.id)} ({md(info.name)}).")
        st.page_link(ctx.pages["history"], label="Open the History", icon=ICON, query_params=ctx.params(b=info.id))
